"""How exactly a printed mat calibrates the table: `tabletop bench table` (issue 20).

Each view is the mat (as `tabletop mat` prints it) seen by a pinhole camera placed at a known tilt (0-45 degrees
from straight down), distance and turn, rendered with the camera's faults (defocus, noise, uneven light, JPEG) and,
in some views, hands over one or two markers. The camera's own homography is known exactly, so the plane the
markers give (`vision.table.markers`) is scored in millimetres on the table:
- point error: table points on a grid over the whole mat, seen through the true camera and mapped back through the
  fitted plane;
- corner error: the mat's four corners, the points furthest from the markers' evidence;
- zones: card centres drawn at random inside the game's zones, mapped the same way: the share given the right zone
  (geometry only: the card's true outline, so this is the calibration's share of the zone figure, not the card
  recogniser's);
- time: finding the markers and fitting the plane, per 1280 x 720 frame.
A view where too few markers are found counts as a failure, in its own column.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.recognise.rectified import inside
from vision.synth.camera import apply_homography
from vision.table.markers import MIN_MARKERS, find_markers, fit_plane
from vision.table.mat import MatLayout, mat_layout, render_mat

FRAME = (1280, 720)
FOCAL_PX = 1100.0  # a webcam's ~60 degrees across 1280 px
MAT_PX_PER_MM = 4.0  # the rendered mat's resolution before the camera sees it
TILT_BINS = ((0, 15), (15, 30), (30, 46))
SPAN_BINS = ((0.35, 0.55), (0.55, 0.75), (0.75, 0.95))  # the mat's width across the frame (straight down)
GRID_STEP_MM = 10.0


def camera_homography(
    layout: MatLayout,
    tilt_deg: float,
    span: float,
    yaw_deg: float = 0.0,
    shift: tuple[float, float] = (0.0, 0.0),
    focal: float = FOCAL_PX,
    size: tuple[int, int] = FRAME,
) -> np.ndarray:
    """Table mm -> frame pixels for a pinhole camera aimed at the mat's centre (moved by `shift` mm), tilted by
    `tilt_deg` towards the mat's near edge, turned by `yaw_deg`, at the distance where the mat's width spans `span`
    of the frame's width when seen straight down. The table's axes: x across the sheet, y down it, z into it."""
    w_mm, h_mm = layout.size_mm
    distance = focal * w_mm / (span * size[0])
    target = np.array([w_mm / 2 + shift[0], h_mm / 2 + shift[1], 0.0])
    t = np.deg2rad(tilt_deg)
    centre = target + distance * np.array([0.0, np.sin(t), -np.cos(t)])
    forward = (target - centre) / np.linalg.norm(target - centre)
    right = np.array([1.0, 0.0, 0.0])
    down = np.cross(forward, right)
    y = np.deg2rad(yaw_deg)
    right, down = np.cos(y) * right + np.sin(y) * down, -np.sin(y) * right + np.cos(y) * down
    rotation = np.stack([right, down, forward])
    k = np.array([[focal, 0, size[0] / 2], [0, focal, size[1] / 2], [0, 0, 1.0]])
    return k @ np.column_stack([rotation[:, 0], rotation[:, 1], -rotation @ centre])


SKIN = ((90, 140), (120, 170), (170, 230))  # BGR ranges of the hands' colour


def render_view(
    mat: np.ndarray,
    table_to_frame: np.ndarray,
    rng: np.random.Generator,
    hands: int = 0,
    layout: MatLayout | None = None,
) -> np.ndarray:
    """The mat picture (`render_mat` at MAT_PX_PER_MM, grey) on a table, as the camera sees it, with its faults;
    `hands` skin-coloured blobs laid over that many markers (needs `layout`)."""
    scale = np.diag([1 / MAT_PX_PER_MM, 1 / MAT_PX_PER_MM, 1.0])
    to_frame = table_to_frame @ scale
    table = np.empty((FRAME[1], FRAME[0], 3), np.uint8)
    table[:] = rng.integers(40, 140, 3)
    table = cv2.add(table, rng.normal(0, 6, table.shape).astype(np.int8), dtype=cv2.CV_8U)
    warped = cv2.warpPerspective(mat, to_frame, FRAME, flags=cv2.INTER_AREA)
    inside = cv2.warpPerspective(np.full(mat.shape[:2], 255, np.uint8), to_frame, FRAME, flags=cv2.INTER_NEAREST)
    view = np.where(inside[..., None] > 0, warped, table)
    covered: set[int] = set()
    if hands and layout is not None:
        for k in rng.choice(len(layout.markers), min(hands, len(layout.markers)), replace=False):
            marker = layout.markers[int(k)]
            covered.add(marker.id)
            corners = apply_homography(table_to_frame, np.array(marker.corners_mm))
            centre = corners.mean(axis=0) + rng.normal(0, 4, 2)
            radius = float(np.linalg.norm(corners[0] - corners[2])) * rng.uniform(0.45, 0.8)
            axes = (int(radius * rng.uniform(0.8, 1.6)), int(radius))
            colour = tuple(int(rng.integers(lo, hi)) for lo, hi in SKIN)
            cv2.ellipse(view, (int(centre[0]), int(centre[1])), axes, float(rng.uniform(0, 180)), 0, 360, colour, -1)
    light = np.linspace(rng.uniform(0.7, 1.0), rng.uniform(0.9, 1.15), FRAME[0])[None, :, None]
    view = np.clip(view * light, 0, 255).astype(np.uint8)
    sigma = rng.uniform(0.0, 1.2)
    if sigma > 0.3:
        view = cv2.GaussianBlur(view, (0, 0), sigma)
    view = cv2.add(view, rng.normal(0, 3, view.shape).astype(np.int8), dtype=cv2.CV_8U)
    ok, jpeg = cv2.imencode(".jpg", view, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(70, 95))])
    return (cv2.imdecode(jpeg, cv2.IMREAD_COLOR) if ok else view), covered


def markers_in_view(layout: MatLayout, table_to_frame: np.ndarray, covered: set[int]) -> int:
    """Markers wholly inside the frame and not under a hand: those a detector could find."""
    inside = 0
    for m in layout.markers:
        corners = apply_homography(table_to_frame, np.array(m.corners_mm))
        inside += m.id not in covered and bool(np.all((corners >= 0) & (corners < np.array(FRAME))))
    return inside


@dataclass
class ViewResult:
    tilt: float
    span: float
    hands: int
    in_view: int  # markers wholly in the frame and uncovered
    found: bool
    markers: int
    point_errors: np.ndarray  # mm, over the grid
    corner_errors: np.ndarray  # mm, the mat's four corners
    zones_right: int
    zones_total: int
    seconds: float


CARD_HALF_MM = (31.5, 44.0)  # half a poker card: a card laid in a zone lies inside its outline where it fits


def card_centre_range(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """Where players lay a card's centre in a zone: anywhere the whole card stays inside the outline; in a zone
    narrower than a card, within the middle tenth of it on that axis."""
    x0, y0, x1, y1 = box
    out = []
    for lo, hi, half in ((x0, x1, CARD_HALF_MM[0]), (y0, y1, CARD_HALF_MM[1])):
        margin = half if hi - lo > 2 * half else (hi - lo) * 0.45
        out.append((lo + margin, hi - margin))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def zone_samples(layout: MatLayout, rng: np.random.Generator, per_zone: int) -> tuple[np.ndarray, list[str]]:
    """Card centres as players lay cards in zones (`card_centre_range`)."""
    points, names = [], []
    for zone in layout.zones:
        x0, y0, x1, y1 = card_centre_range(zone.box_mm)
        for _ in range(per_zone):
            points.append((rng.uniform(x0, x1), rng.uniform(y0, y1)))
            names.append(zone.name)
    return np.array(points), names


def score_view(layout: MatLayout, frame: np.ndarray, table_to_frame: np.ndarray, rng: np.random.Generator) -> tuple:
    """(found markers, fit or None, seconds) for one frame, and the errors of that fit."""
    start = time.perf_counter()
    sightings = find_markers(frame)
    fit = fit_plane(sightings, layout)
    seconds = time.perf_counter() - start
    w, h = layout.size_mm
    xs, ys = np.meshgrid(np.arange(0, w + 1e-6, GRID_STEP_MM), np.arange(0, h + 1e-6, GRID_STEP_MM))
    grid = np.column_stack([xs.ravel(), ys.ravel()])
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    centres, names = zone_samples(layout, rng, 20)
    if fit is None:
        return len(sightings), None, seconds, None, None, 0, len(names)

    def error(points: np.ndarray) -> np.ndarray:
        return np.linalg.norm(
            apply_homography(fit.homography, apply_homography(table_to_frame, points)) - points, axis=1
        )

    back = apply_homography(fit.homography, apply_homography(table_to_frame, centres))
    right = sum(layout.zone_at((float(x), float(y))) == n for (x, y), n in zip(back, names, strict=True))
    return len(sightings), fit, seconds, error(grid), error(corners), int(right), len(names)


def run_table_bench(
    game: str = "loot-the-loop",
    paper: str = "a4",
    views: int = 180,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    layout = mat_layout(game, paper)
    mat = cv2.cvtColor(np.array(render_mat(layout, dpi=round(MAT_PX_PER_MM * 25.4))), cv2.COLOR_RGB2BGR)
    mat = cv2.resize(mat, (round(layout.size_mm[0] * MAT_PX_PER_MM), round(layout.size_mm[1] * MAT_PX_PER_MM)))
    rng = np.random.default_rng(seed)
    results = []
    for i in range(views):
        tilt = float(rng.uniform(0, 45))
        span = float(rng.uniform(0.35, 0.95))
        hands = int(rng.choice([0, 0, 1, 2]))
        h = camera_homography(layout, tilt, span, float(rng.uniform(-20, 20)), tuple(rng.normal(0, 10, 2)))
        frame, covered = render_view(mat, h, rng, hands, layout)
        markers, fit, seconds, grid, corners, right, total = score_view(layout, frame, h, rng)
        empty = np.zeros(0)
        grid = grid if grid is not None else empty
        corners = corners if corners is not None else empty
        in_view = markers_in_view(layout, h, covered)
        results.append(
            ViewResult(tilt, span, hands, in_view, fit is not None, markers, grid, corners, right, total, seconds)
        )
        if progress:
            progress(i + 1, views)
    return summarise(results, game, paper, seed)


def _stats(views: Sequence[ViewResult]) -> dict:
    found = [v for v in views if v.found]
    findable = [v for v in views if v.in_view >= MIN_MARKERS]
    points = np.concatenate([v.point_errors for v in found]) if found else np.zeros(0)
    corners = np.concatenate([v.corner_errors for v in found]) if found else np.zeros(0)

    def q(a: np.ndarray, p: float) -> float | None:
        return round(float(np.percentile(a, p)), 2) if len(a) else None

    return {
        "views": len(views),
        "calibrated": len(found),
        "findable": len(findable),  # views with MIN_MARKERS markers wholly in the frame and uncovered
        "calibrated_findable": sum(v.found for v in findable),
        "point_error_mm": {"median": q(points, 50), "p95": q(points, 95), "max": q(points, 100)},
        "corner_error_mm": {"median": q(corners, 50), "p95": q(corners, 95), "max": q(corners, 100)},
        # card centres given their zone: over every view (a view that could not be calibrated gives none), and over
        # the calibrated ones
        "zone_right": sum(v.zones_right for v in found) / max(1, sum(v.zones_total for v in views)),
        "zone_right_calibrated": sum(v.zones_right for v in found) / max(1, sum(v.zones_total for v in found)),
    }


def summarise(results: Sequence[ViewResult], game: str, paper: str, seed: int) -> dict:
    times = np.array([v.seconds for v in results]) * 1000
    return {
        "data": {
            "game": game,
            "paper": paper,
            "views": len(results),
            "seed": seed,
            "frame": list(FRAME),
            "tilt_deg": [0, 45],
            "span": list(SPAN_BINS[0][:1] + SPAN_BINS[-1][1:]),
            "hands": "0 (half the views), 1 or 2 markers covered",
            "min_markers": MIN_MARKERS,
        },
        "all": _stats(results),
        "by_tilt": {f"{lo}-{hi} deg": _stats([v for v in results if lo <= v.tilt < hi]) for lo, hi in TILT_BINS},
        "by_span": {
            f"{lo:.0%}-{hi:.0%} of the frame": _stats([v for v in results if lo <= v.span < hi]) for lo, hi in SPAN_BINS
        },
        "by_hands": {f"{n} markers covered": _stats([v for v in results if v.hands == n]) for n in (0, 1, 2)},
        "time_ms": {"median": round(float(np.median(times)), 2), "p95": round(float(np.percentile(times, 95)), 2)},
    }


def format_table(result: dict) -> str:
    d = result["data"]
    lines = [
        f"Table calibration from the {d['game']} mat ({d['paper']}), {d['views']} rendered views (seed {d['seed']}), "
        f"tilt 0-45 deg, the mat {d['span'][0]:.0%}-{d['span'][1]:.0%} of the frame wide, {d['hands']}",
        "fitted: views calibrated (of all; of those with 2 markers wholly in view and uncovered); zone: card centres "
        "given the right zone (of all views; of the calibrated ones)",
        f"{'views':24s} {'n':>4s} {'fitted':>7s} {'findable':>9s} {'point mm med/p95':>17s} "
        f"{'corner mm med/p95':>18s} {'zone':>8s} {'calibrated':>10s}",
    ]

    def row(name: str, s: dict) -> str:
        p, c = s["point_error_mm"], s["corner_error_mm"]
        findable = s["calibrated_findable"] / max(1, s["findable"])
        zones = f"{s['zone_right']:8.2%} {s['zone_right_calibrated']:10.2%}"
        return (f"{name:24s} {s['views']:4d} {s['calibrated'] / max(1, s['views']):7.1%} {findable:9.1%} "
                f"{_pair(p):>17s} {_pair(c):>18s} {zones}")  # fmt: skip

    lines.append(row("all", result["all"]))
    for group in ("by_tilt", "by_span", "by_hands"):
        lines += [row(name, s) for name, s in result[group].items()]
    t = result["time_ms"]
    lines.append(f"finding the markers and fitting the plane: median {t['median']:.1f} ms, p95 {t['p95']:.1f} ms")
    return "\n".join(lines)


def _pair(s: dict) -> str:
    return "-" if s["median"] is None else f"{s['median']:.2f} / {s['p95']:.2f}"


# ----- zones, end to end: cards laid in a mat's zones, rendered, read and placed -----------------------------------
ZONE_PAD_MM = 150.0  # plain table around the mat's texture, so the renderer's mirrored border never shows a marker


@dataclass
class ZoneScene:
    frame: np.ndarray
    centres_mm: np.ndarray  # (n, 2) the cards' centres on the mat
    zones: list[str]  # the zone each card was laid in
    quads: np.ndarray  # (n, 4, 2) the cards' true outlines in the frame
    zone_quads: dict[str, np.ndarray]  # each zone's outline in the frame: zones drawn on the page, for no mat
    face_up: list[bool]
    codes: list[str]


def mat_texture(layout: MatLayout) -> Any:
    """The printed mat as a table texture (the renderer's table runs y away from the player, a sheet's y down it,
    hence the flip), with plain table around it."""
    from vision.synth.backgrounds import TableTexture

    mat = cv2.cvtColor(np.array(render_mat(layout, dpi=round(MAT_PX_PER_MM * 25.4))), cv2.COLOR_RGB2BGR)
    mat = cv2.resize(mat, (round(layout.size_mm[0] * MAT_PX_PER_MM), round(layout.size_mm[1] * MAT_PX_PER_MM)))
    pad = round(ZONE_PAD_MM * MAT_PX_PER_MM)
    padded = cv2.copyMakeBorder(np.flipud(mat), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=(70, 95, 120))
    return TableTexture(padded, padded.shape[1] / MAT_PX_PER_MM, grey=False)


def mat_to_table(layout: MatLayout, points: np.ndarray) -> np.ndarray:
    """Mat millimetres (y down the sheet) to the renderer's table millimetres (origin at the mat's centre, y away)."""
    w, h = layout.size_mm
    p = np.asarray(points, np.float64).reshape(-1, 2)
    return np.column_stack([p[:, 0] - w / 2, h / 2 - p[:, 1]])


def zone_scene(layout: MatLayout, deck: Any, texture: Any, seed: int) -> ZoneScene:
    """One or two cards in each zone (laid inside its outline where they fit, turned a little, mostly face up),
    under a camera that frames the mat at 50-85% of its width, tilted 0-35 degrees, turned up to 30."""
    from vision.synth.backgrounds import BackgroundSpec
    from vision.synth.camera import CARD_W_MM, Camera, card_to_table
    from vision.synth.effects import random_effects
    from vision.synth.scene import CardSpec, fixed_spec, render_scene

    rng = np.random.default_rng(seed)
    hfov = float(rng.uniform(55, 75))
    span = float(rng.uniform(0.5, 0.85))
    height = layout.size_mm[0] / span / (2 * np.tan(np.deg2rad(hfov) / 2))
    camera = Camera(height, float(rng.uniform(0, 35)), float(rng.uniform(-30, 30)), hfov)
    codes = [str(c) for c in rng.permutation(np.array([c for c in deck.codes if c != "BACK" and "JOKER" not in c]))]
    specs, centres, names = [], [], []
    for zone in layout.zones:
        x0, y0, x1, y1 = card_centre_range(zone.box_mm)
        for _ in range(int(rng.integers(1, 3))):
            centre = np.array([rng.uniform(x0, x1), rng.uniform(y0, y1)])
            if any(np.linalg.norm(centre - c) < 0.6 * CARD_W_MM for c in centres):
                continue  # players spread a zone's cards; a pile is read as its top card
            table = mat_to_table(layout, centre)[0]
            code = codes[len(specs)]
            specs.append(CardSpec(code, bool(rng.random() < 0.85), table[0], table[1], float(rng.normal(0, 8)), False))
            centres.append(centre)
            names.append(zone.name)
    effects = random_effects(rng)
    effects = type(effects)(**{**effects.__dict__, "motion": (0.0, 0.0)})  # a still table: the camera is waited on
    background = BackgroundSpec("photo", 0, seed, 0.0, (0.0, 0.0), 1.0, (1.0, 1.0, 1.0))
    spec = fixed_spec(specs, camera, background=background, effects=effects, seed=seed)
    scene = render_scene(spec, [deck], [texture])
    to_frame = camera.table_to_image()
    printed = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float64)  # a card's picture, TL, TR, BR, BL
    quads = [apply_homography(to_frame @ card_to_table(c.x_mm, c.y_mm, c.rotation_deg, 1, 1), printed) for c in specs]
    zone_quads = {}
    for zone in layout.zones:
        x0, y0, x1, y1 = zone.box_mm
        corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64)
        zone_quads[zone.name] = apply_homography(to_frame, mat_to_table(layout, corners))
    return ZoneScene(
        scene.image, np.array(centres), names, np.array(quads), zone_quads, [c.face_up for c in specs],
        [c.code for c in specs],
    )  # fmt: skip


def drawn_zone(zone_quads: dict[str, np.ndarray], point: np.ndarray) -> str | None:
    """The zone drawn on the page (an outline in frame pixels) that a frame point lies in."""
    return next((name for name, quad in zone_quads.items() if inside(point, quad)), None)


def run_zone_bench(
    deck_path: Any,
    game: str = "loot-roll",
    paper: str = "a3",
    scenes: int = 40,
    seed: int = 100,
    models: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Cards of one deck laid in a game's zones on its mat, rendered; each card the recogniser reports on a card is
    placed by the mat's markers (`MatTracker`) and, for the figure without a mat, by the zones' outlines as drawn on
    the page (the frame's own pixels: no calibration). Reported: cards, the share reported, and of those the share
    given the zone they lie in; the same for the cards' true outlines (what the geometry alone allows)."""
    from vision.recognise.load import load_recogniser
    from vision.synth.components import load_component
    from vision.table.markers import MatTracker

    layout = mat_layout(game, paper)
    deck = load_component(deck_path)
    texture = mat_texture(layout)
    recogniser = load_recogniser(models, "rectified")
    counts = dict.fromkeys(("cards", "reported", "mat_right", "drawn_right", "true_mat_right", "calibrated"), 0)
    scene_ms = []
    for i in range(scenes):
        scene = zone_scene(layout, deck, texture, seed + i)
        start = time.perf_counter()
        tracker = MatTracker(layout)
        tracker.update(scene.frame)
        detections = recogniser.recognise(scene.frame)
        if tracker.calibration is not None:
            detections = [tracker.calibration.place(d) for d in detections]
        scene_ms.append((time.perf_counter() - start) * 1000)
        counts["calibrated"] += tracker.calibration is not None
        for quad, zone in zip(scene.quads, scene.zones, strict=True):
            counts["cards"] += 1
            on = [d for d in detections if inside(d.quad.mean(axis=0), quad)]
            if tracker.calibration is not None:
                true_centre = tracker.calibration.to_table(quad).mean(axis=0)
                counts["true_mat_right"] += layout.zone_at((float(true_centre[0]), float(true_centre[1]))) == zone
            if not on:
                continue
            best = max(on, key=lambda d: d.confidence)
            counts["reported"] += 1
            counts["mat_right"] += best.zone == zone
            counts["drawn_right"] += drawn_zone(scene.zone_quads, best.quad.mean(axis=0)) == zone
        if progress:
            progress(i + 1, scenes)
    n, reported = counts["cards"], max(1, counts["reported"])
    return {
        "data": {"game": game, "paper": paper, "deck": str(deck_path), "scenes": scenes, "seed": seed},
        "cards": n,
        "calibrated_scenes": counts["calibrated"],
        "reported": counts["reported"] / max(1, n),
        "zone_right_with_mat": counts["mat_right"] / reported,
        "zone_right_drawn_on_page": counts["drawn_right"] / reported,
        "zone_right_true_outlines_with_mat": counts["true_mat_right"] / max(1, n),
        "time_ms": {
            "median": round(float(np.median(scene_ms)), 1),
            "p95": round(float(np.percentile(scene_ms, 95)), 1),
        },
    }


def format_zones(result: dict) -> str:
    d = result["data"]
    return "\n".join(
        [
            f"Zones, end to end: {result['cards']} cards of {Path(d['deck']).name} laid in the {d['game']} mat's zones "
            f"({d['paper']}), {d['scenes']} rendered scenes (seed {d['seed']}); {result['calibrated_scenes']} scenes "
            "calibrated by the markers",
            f"  cards the recogniser reports (on the card): {result['reported']:.1%}",
            f"  ... in the right zone, with the mat: {result['zone_right_with_mat']:.2%}; with the zones drawn on the "
            f"page instead (no calibration): {result['zone_right_drawn_on_page']:.2%}",
            f"  the cards' true outlines placed by the mat: {result['zone_right_true_outlines_with_mat']:.2%} in the "
            "right zone (the geometry's share)",
            f"  markers, recogniser and placing: median {result['time_ms']['median']:.1f} ms, p95 "
            f"{result['time_ms']['p95']:.1f} ms a frame",
        ]
    )
