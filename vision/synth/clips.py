"""Short clips of the physical chance events the assistant must read, with exact per-frame ground truth: dice thrown
onto a Loot Roll table (the d20 a fighter rolls for loot), and Dr. Foo's red rift cubes dropping out of his machine
onto The LOOP's ring board (the landing that the engine waits for as ``rifts P F N``).

A clip is one static table (`game_scenes.random_game_spec`, hands removed: nobody reaches in, the camera is fixed)
and a few solids moving over it along `solids.tumble` paths. Speed comes from painting the table once, before the
camera's effects, with the same operations `scene.render_scene` uses (its card, solid and clutter pastes, in its
order), keeping that canvas and its id map, and per frame only copying them, painting the moving solids on top
(shadow first) and running the camera's effects (`effects.finish`) on the result. Labels are counted in the frame's
id map by `scene`'s own labeller, so occlusion by and of the moving pieces is exact; frames whose moving pieces are
all still (before the throw, after the last one settles) are composed once and repeated with fresh sensor noise
(`video.noise_bank`, as the full-game videos do). Measured on the 2-core dev machine at 1280x720: 35-70 ms a frame, a
3 s clip in 3-6 s, single process.

Motion blur: a webcam in room light exposes for a good part of each frame, and a die in flight crosses its own
size in that time, so every path is sampled `SAMPLE_HZ` times a second and a moving piece is drawn as the average of
its renders over the clip's shutter time (a fraction of the frame interval drawn per clip). Its labels belong to the
middle of the exposure: pose, value on top and top-face polygon from that instant, box and visibility from the
blurred silhouette (alpha > 0.5) that is actually in the picture.

Timing (guesses, marked as such): 0.3-0.7 s of still table, then `tumble` paths of 1.0-1.7 s (dice) or 0.7-1.2 s
(cubes), 60-85 % of them in motion, cubes leaving the machine 0.1-0.35 s apart, then at least a second of
stillness. Dice leave the hand 60-140 mm above the table, beyond the bottom edge of the frame (the player's side: the
camera stands there), and come to rest in a cluster in the middle of the view. Dr. Foo's machine is not modelled (a
guess: a chute outlet 50-90 mm above the board, a quarter of the ring's inner radius from the centre); each cube
takes the previous Era's, Dr. Foo's Era's or the next Era's chute with the scenario's probabilities (`games.the_loop`
basic: 0.25/0.5/0.25) and rolls to rest in that Era. The Era a cube lands in is then read back from where it
settled, by the board's Era polygons, never assumed; clutter lying over the landing Eras is taken off the board.
Sizes are `solids.py`'s: d20 18 mm, d6 16 mm, cubes 8-10 mm.

Files in the clip folder: video.mp4 (`video.open_video`: H.264, or 'mp4v'), states.jsonl.gz (`video.read_states`)
with one line per frame: {"frame", "t", "moving" (any piece in motion), "solids", "objects"}. "solids" has one entry
per thrown piece: "index", "kind", "code", "label" ('d20-17', 'cube-red'; a die's value is only meaningful once
settled), "value", "state" ('waiting' in the hand or the machine, 'moving', 'settled'), "moving", "settled", "pose"
(x_mm, y_mm, z_mm of its lowest point, rotation: 3x3 row-major, local to table; null while waiting), "z" (its paint
order, the "z" of its entry in "objects"; null when not drawn), "box", "visible", "top_face" (dice: the region that
shows the value, with quad, box, visible_fraction, visible) and "era" (cubes: the Era under it). "objects" holds
every label of the frame as `scene.Scene.to_dict` writes them: table pieces, clutter and the moving pieces.
events.json: [{"event": "roll", "die", "value", "start_frame", "settle_frame"}] or [{"event": "land", "cube", "era",
"frame", "start_frame"}]; meta.json: seed, sizes, camera, timing and, for a drop, Dr. Foo's Era, the three chutes'
Eras and the engine action the landing amounts to.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from games.the_loop.catalogue import load_scenario
from games.the_loop.eras import CODES as ERA_CODES
from games.the_loop.foo import landing_eras
from vision.synth.backgrounds import TableTexture, load_table_textures
from vision.synth.camera import Camera, apply_homography, card_to_table
from vision.synth.dice_scenes import frame_for_dice
from vision.synth.effects import EffectParams, cast_shadow, finish
from vision.synth.game_scenes import era_polygons, random_game_spec
from vision.synth.occluders import OccluderSpec, Patch, random_occluder
from vision.synth.pieces import PieceSet
from vision.synth.scene import (
    VISIBLE_THRESHOLD,
    ObjectLabel,
    Painted,
    SceneSpec,
    camera_distance,
    glossiness,
    label_objects,
    light_direction,
    paint_scene,
    paste_object,
    rounded_json,
    solid_label,
)
from vision.synth.solids import (
    DEFAULT_SIZE_MM,
    DIE_SIDES,
    SolidPose,
    SolidRender,
    SolidSpec,
    mask_box,
    project_points,
    random_solid,
    render_shadow,
    render_solid,
    top_value,
    tumble,
)
from vision.synth.video import STATES_FILE, VideoLook, frame_count, noise_bank, open_states, open_video, sensor_frame

SAMPLE_HZ = 240  # path samples per second: a die in flight moves a few millimetres between two
MAX_BLUR_RENDERS = 5  # renders averaged into one motion-blurred piece
SHUTTER = (0.25, 0.9)  # exposure as a share of the frame interval (webcams in room light expose long)
LEAD_S = (0.3, 0.7)
HOLD_S = (1.0, 1.3)
ROLL_S = (1.0, 1.7)
DROP_S = (0.7, 1.2)
DROP_GAP_S = (0.1, 0.35)
THROW_HEIGHT_MM = (60.0, 140.0)
OUTLET_HEIGHT_MM = (50.0, 90.0)
MAX_DICE = 4
MAX_CUBES = 3
VIEW_MARGIN = 0.04  # share of the frame kept clear at its edges where pieces come to rest
PLACEMENT_TRIES = 80
CAMERA_TRIES = 30
EVENTS_FILE = "events.json"
META_FILE = "meta.json"
VIDEO_FILE = "video.mp4"


class ClipError(ValueError):
    """A clip was asked for with arguments it cannot have; the message names the argument and what was expected."""


# ----------------------------------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Thrown:
    """One piece set in motion: its look (`spec`, posed at rest), its path sampled `samples_per_frame` times per
    frame from the moment it leaves the hand or the machine, and the frame of that moment."""

    spec: SolidSpec
    poses: tuple[SolidPose, ...]
    start_frame: int

    @property
    def rest(self) -> SolidPose:
        return self.poses[-1]

    @property
    def settle_sample(self) -> int:
        """First path sample from which the piece never moves again."""
        index = len(self.poses) - 1
        while index > 0 and self.poses[index - 1] == self.rest:
            index -= 1
        return index

    def pose_at(self, sample: int) -> SolidPose | None:
        """Pose at a path sample; None before release, the rest pose after the path ends."""
        if sample < 0:
            return None
        return self.poses[min(sample, len(self.poses) - 1)]


@dataclass
class StaticLayer:
    """What never moves in a clip, painted once before the camera's effects: canvas, id map and the painted
    objects in `scene.render_scene`'s order (cards, resting solids far to near, clutter)."""

    canvas: np.ndarray  # float32 BGR, display values
    ids: np.ndarray  # int16: 0 = table, i + 1 = painted[i]
    painted: list[Painted]
    obstacles: np.ndarray  # bool: pixels of resting solids and clutter, where a thrown piece must not stop


@dataclass
class Clip:
    """Everything a clip's frames are made from; `plan_roll_clip` and `plan_drop_clip` build it from a seed."""

    name: str  # 'roll' or 'drop'
    seed: int
    fps: int
    samples_per_frame: int
    shutter: float  # exposure as a share of the frame interval
    scene: SceneSpec  # the static table; its effects have noise, JPEG and camera shake off (added per frame)
    static: StaticLayer
    thrown: tuple[Thrown, ...]
    n_frames: int
    noise_sigma: float
    eras: dict[str, np.ndarray] = field(default_factory=dict)  # drop: Era code -> polygon, table mm
    info: dict = field(default_factory=dict)  # what the meta file says about the event (kind, Dr. Foo's Era...)

    @property
    def blur_offsets(self) -> tuple[int, ...]:
        """Path-sample offsets, about the frame's instant, that the shutter integrates."""
        half = int(self.shutter * self.samples_per_frame / 2)
        count = min(2 * half + 1, MAX_BLUR_RENDERS)
        return tuple(sorted({round(v) for v in np.linspace(-half, half, count)}))

    def exposure(self, index: int, frame: int) -> tuple[int, ...] | None:
        """Path samples of piece `index` seen in `frame`: the middle one first; None while it waits."""
        piece = self.thrown[index]
        middle = (frame - piece.start_frame) * self.samples_per_frame
        if middle < 0:
            return None
        others = sorted({max(middle + o, 0) for o in self.blur_offsets} - {middle})
        return (middle, *others)

    def state(self, index: int, frame: int) -> str:
        samples = self.exposure(index, frame)
        if samples is None:
            return "waiting"
        return "moving" if min(samples) < self.thrown[index].settle_sample else "settled"

    def settle_frame(self, index: int) -> int:
        """First frame whose whole exposure sees piece `index` at rest."""
        piece = self.thrown[index]
        reach = max(self.blur_offsets) - min(self.blur_offsets)
        frame = piece.start_frame + math.ceil((piece.settle_sample + reach) / self.samples_per_frame)
        while frame > piece.start_frame and self.state(index, frame - 1) == "settled":
            frame -= 1
        while self.state(index, frame) != "settled":
            frame += 1
        return frame


# ----------------------------------------------------------------------------------------------------- static table


def clip_effects(effects: EffectParams) -> EffectParams:
    """The scene's camera without what is added per frame or does not apply to a fixed camera: sensor noise (a
    noise bank adds it), JPEG (the video codec compresses), camera shake."""
    return replace(effects, noise_sigma=0.0, jpeg_quality=0, motion=(0.0, 0.0))


def still_table(scene: SceneSpec) -> SceneSpec:
    """The table without hands: nobody reaches in during these clips, and a hand frozen mid-air would be wrong."""
    return replace(
        scene, occluders=tuple(o for o in scene.occluders if o.kind != "hand"), effects=clip_effects(scene.effects)
    )


def paint_static(scene: SceneSpec, pieces: PieceSet, textures: Sequence[TableTexture]) -> StaticLayer:
    """Paint the table exactly as `scene.render_scene` does (it is the same painter), stopping before the effects."""
    painting = paint_scene(scene, [pieces], textures)
    painted = painting.painted
    blocking = [i + 1 for i, item in enumerate(painted) if isinstance(item.source, SolidSpec | OccluderSpec)]
    return StaticLayer(painting.canvas, painting.ids, painted, np.isin(painting.ids, blocking))


def _paint_solid(
    canvas: np.ndarray,
    ids: np.ndarray,
    object_id: int,
    exposure: Sequence[SolidSpec],
    renders: Sequence[SolidRender | None],
    camera: Camera,
    light: tuple[float, float, float],
    effects: EffectParams,
) -> Painted:
    """Shadow, then the piece, as render_scene pastes a solid. The renders of an exposure (the first is its middle
    and must be in view; the others are None where out of view) are averaged into one motion-blurred piece, their
    shadows likewise. The label keeps the middle's pose, value and top face, and takes its box from the blurred
    silhouette, which is what the picture shows."""
    frame = (camera.width, camera.height)
    middle = renders[0]
    assert middle is not None
    shadows = [render_shadow(s, camera, light, frame) for s in exposure]
    shadow = blend_patches([s for s in shadows if s is not None], len(shadows))
    if shadow is not None:
        cast_shadow(canvas, shadow.alpha, (shadow.x0, shadow.y0), (0.0, 0.0), 0.0, effects.shadow_strength)
    patch = blend_patches([r.patch for r in renders if r is not None], len(renders))
    assert patch is not None
    item = paste_object(canvas, ids, patch, object_id, effects, (0, 0), 0.0, None, exposure[0])
    item.solid = replace(middle, patch=patch, mask=item.mask, box=mask_box(item.mask, patch.x0, patch.y0, frame))
    return item


def blend_patches(patches: Sequence[Patch], count: int) -> Patch | None:
    """The average of `count` exposures of which these patches are the ones in view (the rest add nothing), over
    their union window, with colours averaged by coverage: what a shutter open over all of them records."""
    if not patches:
        return None
    if len(patches) == 1 and count == 1:
        return patches[0]
    x0, y0 = min(p.x0 for p in patches), min(p.y0 for p in patches)
    x1 = max(p.x0 + p.alpha.shape[1] for p in patches)
    y1 = max(p.y0 + p.alpha.shape[0] for p in patches)
    premultiplied = np.zeros((y1 - y0, x1 - x0, 3), np.float32)
    alpha = np.zeros((y1 - y0, x1 - x0), np.float32)
    for p in patches:
        h, w = p.alpha.shape
        window = (slice(p.y0 - y0, p.y0 - y0 + h), slice(p.x0 - x0, p.x0 - x0 + w))
        premultiplied[window] += p.bgr * p.alpha[..., None]
        alpha[window] += p.alpha
    bgr = premultiplied / np.maximum(alpha, 1e-6)[..., None]
    return Patch(bgr=bgr, alpha=alpha / count, x0=x0, y0=y0)


# ----------------------------------------------------------------------------------------------------- geometry


def _image_point(camera: Camera, x_mm: float, y_mm: float, z_mm: float = 0.0) -> np.ndarray:
    return project_points(camera, np.array([[x_mm, y_mm, z_mm]]))[0][0]


def _in_view(camera: Camera, points: np.ndarray, margin: float = VIEW_MARGIN) -> bool:
    """Whether every image point lies inside the frame with `margin` (a share of each side) to spare."""
    w, h = camera.width, camera.height
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    return bool(
        np.all(pts[:, 0] >= margin * w)
        and np.all(pts[:, 0] <= (1 - margin) * w)
        and np.all(pts[:, 1] >= margin * h)
        and np.all(pts[:, 1] <= (1 - margin) * h)
    )


def _px_at(camera: Camera, x_mm: float, y_mm: float) -> float:
    """Image pixels per table millimetre around a point."""
    pts = apply_homography(camera.table_to_image(), np.array([[x_mm, y_mm], [x_mm + 10.0, y_mm]]))
    return float(np.linalg.norm(pts[1] - pts[0])) / 10.0


def _blocked(camera: Camera, obstacles: np.ndarray, x_mm: float, y_mm: float, radius_mm: float) -> bool:
    """Whether a piece resting at (x, y) would touch a resting solid or clutter, judged on the painted pixels."""
    u, v = _image_point(camera, x_mm, y_mm)
    r = max(2, math.ceil(radius_mm * _px_at(camera, x_mm, y_mm)))
    h, w = obstacles.shape
    x0, x1 = max(round(u) - r, 0), min(round(u) + r + 1, w)
    y0, y1 = max(round(v) - r, 0), min(round(v) + r + 1, h)
    return x0 < x1 and y0 < y1 and bool(obstacles[y0:y1, x0:x1].any())


def _path_clear(
    camera: Camera,
    obstacles: np.ndarray,
    start: tuple[float, float],
    end: tuple[float, float],
    radius_mm: float,
    share: float = 0.6,
) -> bool:
    """Whether the last `share` of a straight roll from start to end, where a piece is down on the table, stays
    clear of resting pieces and clutter (it would roll through them, since paths ignore collisions)."""
    a, b = np.asarray(start, np.float64), np.asarray(end, np.float64)
    steps = np.linspace(1.0 - share, 1.0, 24)
    return not any(_blocked(camera, obstacles, *(a + (b - a) * t), radius_mm) for t in steps)


def _far_from(points: Sequence[tuple[float, float]], x_mm: float, y_mm: float, gap_mm: float) -> bool:
    return all(math.hypot(x_mm - px, y_mm - py) >= gap_mm for px, py in points)


def board_eras(scene: SceneSpec, pieces: PieceSet) -> dict[str, np.ndarray]:
    """Era code -> its sector polygon on the table (mm), from the board lying in the scene."""
    boards = [card for card in scene.cards if pieces.pieces[card.code].kind == "board"]
    if not boards:
        raise ClipError(f"pieces '{pieces.name}': the scene has no board (expected a piece of kind 'board')")
    board = boards[0]
    size = pieces.pieces[board.code].size_mm
    to_table = card_to_table(board.x_mm, board.y_mm, board.rotation_deg, 1, 1, size)
    polygons = era_polygons(pieces, to_table, board, size)
    return dict(zip(ERA_CODES, polygons, strict=True))


def era_at(eras: dict[str, np.ndarray], x_mm: float, y_mm: float) -> str | None:
    """The Era whose polygon holds the point (on its edge counts), or None between and outside them."""
    for code, polygon in eras.items():
        contour = polygon.astype(np.float32).reshape(-1, 1, 2)
        if cv2.pointPolygonTest(contour, (float(x_mm), float(y_mm)), False) >= 0:
            return code
    return None


# ----------------------------------------------------------------------------------------------------- planning


def _check_count(name: str, value: int | None, most: int, rng: np.random.Generator) -> int:
    if value is None:
        return int(rng.integers(1, most + 1))
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 1 <= value <= most:
        raise ClipError(f"{name}: expected a whole number 1-{most} (or None to draw it from the seed), got {value!r}")
    return int(value)


def _check_common(fps: int, size: tuple[int, int]) -> None:
    if isinstance(fps, bool) or not isinstance(fps, int) or not 5 <= fps <= 120:
        raise ClipError(f"fps: expected a whole number of frames per second, 5-120, got {fps!r}")
    if len(size) != 2 or not all(isinstance(v, int) and 64 <= v <= 4096 and v % 2 == 0 for v in size):
        raise ClipError(f"size: expected (width, height), even whole pixels 64-4096 (H.264 needs even), got {size!r}")


def _clip(
    name: str,
    seed: int,
    fps: int,
    scene: SceneSpec,
    static: StaticLayer,
    thrown: list[Thrown],
    samples: int,
    shutter: float,
    hold: int,
    noise_sigma: float,
    eras: dict[str, np.ndarray] | None = None,
    info: dict | None = None,
) -> Clip:
    """The clip runs until the last piece has settled, then holds still for `hold` frames."""
    clip = Clip(name, seed, fps, samples, shutter, scene, static, tuple(thrown), 0, noise_sigma, eras or {}, info or {})
    last = max(clip.settle_frame(i) for i in range(len(thrown)))
    return replace(clip, n_frames=last + hold)


def plan_roll_clip(
    seed: int,
    pieces: PieceSet,
    kind: str = "d20",
    n_dice: int | None = None,
    fps: int = 30,
    size: tuple[int, int] = (1280, 720),
    textures: Sequence[TableTexture] | None = None,
    split: str | None = None,
    d20_px: float | None = None,
) -> Clip:
    """A table of `pieces` and 1-4 dice of `kind` thrown onto it from the player's side; values from the seed.
    With `split`, the dice are only that split's designs and colours (`solids.random_solid`); with `d20_px`, the
    camera is framed so a d20 spans that many pixels (`dice_scenes.frame_for_dice`)."""
    if kind not in DIE_SIDES:
        raise ClipError(f"kind: expected one of {', '.join(DIE_SIDES)}, got {kind!r}")
    _check_common(fps, size)
    rng = np.random.default_rng([seed, 5])
    n_dice = _check_count("n_dice", n_dice, MAX_DICE, rng)
    textures = load_table_textures() if textures is None else textures
    drawn = random_game_spec(rng, pieces, 1, len(textures), size[0], size[1], 0)
    if d20_px is not None:
        drawn = replace(drawn, camera=frame_for_dice(drawn.camera, d20_px))
    scene = still_table(drawn)
    static = paint_static(scene, pieces, textures)
    samples = max(1, round(SAMPLE_HZ / fps))
    lead = frame_count(rng, LEAD_S, fps)
    thrown = _throw(rng, scene.camera, static.obstacles, kind, n_dice, fps, samples, lead, split)
    info = {"kind": kind, "n_dice": n_dice}
    shutter, hold = float(rng.uniform(*SHUTTER)), frame_count(rng, HOLD_S, fps)
    return _clip(
        "roll", seed, fps, scene, static, thrown, samples, shutter, hold, drawn.effects.noise_sigma, None, info
    )


def _throw(
    rng: np.random.Generator,
    camera: Camera,
    obstacles: np.ndarray,
    kind: str,
    n_dice: int,
    fps: int,
    samples: int,
    lead: int,
    split: str | None = None,
) -> list[Thrown]:
    """Dice leave one hand beyond the bottom of the frame and come to rest in a loose cluster mid-view; half the
    throws use one set of matching dice, the rest a handful of odd ones."""
    size = DEFAULT_SIZE_MM[kind] * 1.12
    for _ in range(PLACEMENT_TRIES // 8):  # the last draw is kept even if a path crosses clutter
        ends = _rest_points(rng, camera, obstacles, n_dice, size)
        hand = _hand_point(rng, camera, ends, THROW_HEIGHT_MM[1] + 2 * size)
        if all(_path_clear(camera, obstacles, hand, end, size / 2) for end in ends):
            break
    matching = rng.random() < 0.5
    thrown, first = [], None
    for x, y in ends:
        value = int(rng.integers(1, DIE_SIDES[kind] + 1))
        spec = random_solid(rng, kind, x, y, value, split=split)
        if matching and first is not None:
            spec = replace(spec, colour=first.colour, ink=first.ink, variant=first.variant, size_mm=first.size_mm)
        first = first or spec
        start = (hand[0] + float(rng.normal(0, 12)), hand[1] + float(rng.normal(0, 12)))
        n = frame_count(rng, ROLL_S, fps) * samples
        drop = float(rng.uniform(*THROW_HEIGHT_MM))
        poses = tumble(rng, kind, start, (x, y), value, n, drop)
        thrown.append(Thrown(spec.at(poses[-1]), tuple(poses), lead + int(rng.integers(0, 2))))
    return thrown


def _rest_points(
    rng: np.random.Generator, camera: Camera, obstacles: np.ndarray, count: int, size_mm: float
) -> list[tuple[float, float]]:
    """Where thrown dice stop: around a point in the middle of the view, apart from each other and from resting
    pieces and clutter; the clutter test is dropped if the table is too crowded to honour it."""
    to_table = camera.image_to_table()
    for attempt in range(PLACEMENT_TRIES):
        u, v = rng.uniform(0.3, 0.7) * camera.width, rng.uniform(0.3, 0.65) * camera.height
        cx, cy = apply_homography(to_table, np.array([[u, v]]))[0]
        points: list[tuple[float, float]] = []
        for _ in range(PLACEMENT_TRIES):
            x, y = (float(c + rng.normal(0, 2.2 * size_mm)) for c in (cx, cy))
            ok = _far_from(points, x, y, 1.7 * size_mm) and _in_view(camera, _image_point(camera, x, y))
            if ok and (attempt > PLACEMENT_TRIES // 2 or not _blocked(camera, obstacles, x, y, size_mm)):
                points.append((x, y))
                if len(points) == count:
                    return points
    raise ClipError(f"cannot find room in view for {count} dice on this table (camera {camera})")


def _hand_point(
    rng: np.random.Generator, camera: Camera, ends: Sequence[tuple[float, float]], height_mm: float
) -> tuple[float, float]:
    """The release point: behind the dice on the player's side, pushed back until a die there at full throw
    height is still below the frame, so dice fly in rather than appear mid-view."""
    yaw = math.radians(camera.yaw_deg)
    toward = np.array([math.sin(yaw), -math.cos(yaw)])  # the camera's foot: image-down on the table, any tilt
    centre = np.mean(np.asarray(ends), axis=0)
    side = np.array([-toward[1], toward[0]]) * float(rng.normal(0, 60))
    reach = 120.0
    while reach < 3000.0:
        x, y = centre + toward * reach + side
        if _image_point(camera, x, y, height_mm)[1] > camera.height * 1.05:
            return float(x), float(y)
        reach += 20.0
    raise ClipError(f"the player's side is not below the frame for camera {camera}")


def plan_drop_clip(
    seed: int,
    pieces: PieceSet,
    n_cubes: int | None = None,
    fps: int = 30,
    size: tuple[int, int] = (1280, 720),
    textures: Sequence[TableTexture] | None = None,
) -> Clip:
    """The LOOP's board with 1-3 red rift cubes dropping out of Dr. Foo's machine at its centre, each rolling into
    the previous Era, Dr. Foo's Era or the next one. The camera is redrawn until those three Eras are in view."""
    if pieces.game != "the-loop":
        raise ClipError(f"pieces '{pieces.name}': game is '{pieces.game}'; a drop clip needs 'the-loop' components")
    _check_common(fps, size)
    rng = np.random.default_rng([seed, 6])
    n_cubes = _check_count("n_cubes", n_cubes, MAX_CUBES, rng)
    textures = load_table_textures() if textures is None else textures
    foo_era = int(rng.integers(0, len(ERA_CODES)))
    chutes = landing_eras(foo_era)
    landing = [ERA_CODES[e] for e in chutes]
    drawn, eras = _board_scene(rng, pieces, len(textures), size, landing)
    scene = still_table(drawn)
    static = paint_static(scene, pieces, textures)
    covering = _covering(scene.camera, static, [eras[code] for code in landing])
    if covering:
        scene = replace(scene, occluders=tuple(o for o in scene.occluders if o not in covering))
        static = paint_static(scene, pieces, textures)
    samples = max(1, round(SAMPLE_HZ / fps))
    lead = frame_count(rng, LEAD_S, fps)
    probabilities = load_scenario("basic").landing
    centre = _board_centre(scene, pieces)
    inner = min(float(np.min(np.linalg.norm(p - centre, axis=1))) for p in eras.values())
    thrown: list[Thrown] = []
    ends: list[tuple[float, float]] = []
    start = lead
    for _ in range(n_cubes):
        era = ERA_CODES[chutes[int(rng.choice(3, p=probabilities))]]
        spec = random_solid(rng, "cube", 0.0, 0.0, code="red")
        x, y = _point_in_era(rng, scene.camera, static.obstacles, eras[era], ends, spec.size_mm, centre)
        ends.append((x, y))
        heading = np.array([x, y]) - centre
        outlet = centre + heading / max(float(np.linalg.norm(heading)), 1e-9) * 0.25 * inner
        n = frame_count(rng, DROP_S, fps) * samples
        poses = tumble(
            rng, "cube", (float(outlet[0]), float(outlet[1])), (x, y), None, n, rng.uniform(*OUTLET_HEIGHT_MM)
        )
        thrown.append(Thrown(spec.at(poses[-1]), tuple(poses), start))
        start += frame_count(rng, DROP_GAP_S, fps)
    info = {"foo_era": ERA_CODES[foo_era], "chutes": [ERA_CODES[e] for e in chutes], "n_cubes": n_cubes}
    hold = frame_count(rng, HOLD_S, fps)
    shutter, noise = float(rng.uniform(*SHUTTER)), drawn.effects.noise_sigma
    return _clip("drop", seed, fps, scene, static, thrown, samples, shutter, hold, noise, eras, info)


def _board_centre(scene: SceneSpec, pieces: PieceSet) -> np.ndarray:
    board = next(card for card in scene.cards if pieces.pieces[card.code].kind == "board")
    return np.array([board.x_mm, board.y_mm])


def _board_scene(
    rng: np.random.Generator, pieces: PieceSet, n_photos: int, size: tuple[int, int], landing: Sequence[str]
) -> tuple[SceneSpec, dict[str, np.ndarray]]:
    """A board table (as drawn: hands and noise still in) whose camera sees the landing Eras; after CAMERA_TRIES
    random tables, the last one seen straight down from as low as shows them all."""
    scene = eras = None
    for _ in range(CAMERA_TRIES):
        scene = random_game_spec(rng, pieces, 1, n_photos, size[0], size[1], 0)
        eras = board_eras(scene, pieces)
        if _sees(scene.camera, eras, landing):
            return scene, eras
    assert scene is not None and eras is not None
    for height in np.arange(400.0, 3000.0, 50.0):
        camera = Camera(float(height), 0.0, float(rng.uniform(-180, 180)), 65.0, size[0], size[1])
        if _sees(camera, eras, landing):
            return replace(scene, camera=camera), eras
    raise ClipError(f"pieces '{pieces.name}': no camera sees the board's Eras {list(landing)}")


def _covering(camera: Camera, static: StaticLayer, polygons: Sequence[np.ndarray]) -> list[OccluderSpec]:
    """Clutter lying over the landing Eras: a book or a phone left on the board would hide the very landing the
    clip is about, so it is taken off the table."""
    area = np.zeros(static.ids.shape, np.uint8)
    table_h = camera.table_to_image()
    for polygon in polygons:
        cv2.fillPoly(area, [np.round(apply_homography(table_h, polygon)).astype(np.int32)], 1)
    present = set(np.unique(static.ids[area > 0]).tolist())
    return [
        item.source
        for i, item in enumerate(static.painted)
        if isinstance(item.source, OccluderSpec) and i + 1 in present
    ]


def _sees(camera: Camera, eras: dict[str, np.ndarray], landing: Sequence[str]) -> bool:
    points = np.vstack([eras[code] for code in landing])
    return _in_view(camera, apply_homography(camera.table_to_image(), points))


def _point_in_era(
    rng: np.random.Generator,
    camera: Camera,
    obstacles: np.ndarray,
    polygon: np.ndarray,
    taken: Sequence[tuple[float, float]],
    size_mm: float,
    origin: np.ndarray,
) -> tuple[float, float]:
    """A resting point inside an Era, a cube's width from its edges, clear of the pieces already there and of
    those on the way out from the machine at `origin` (crowded Eras drop the clearance tests)."""
    contour = polygon.astype(np.float32).reshape(-1, 1, 2)
    low, high = polygon.min(axis=0), polygon.max(axis=0)
    for attempt in range(PLACEMENT_TRIES * 4):
        x, y = (float(v) for v in rng.uniform(low, high))
        if cv2.pointPolygonTest(contour, (x, y), True) < size_mm or not _far_from(taken, x, y, 2.0 * size_mm):
            continue
        relaxed = attempt > PLACEMENT_TRIES * 3
        if relaxed or (
            not _blocked(camera, obstacles, x, y, size_mm)
            and _path_clear(camera, obstacles, (float(origin[0]), float(origin[1])), (x, y), size_mm / 2)
        ):
            return x, y
    raise ClipError(f"cannot find room for a cube in an Era polygon spanning {low.tolist()}-{high.tolist()} mm")


# ----------------------------------------------------------------------------------------------------- frames


def _exposed(clip: Clip, frame: int) -> list[tuple[int, Thrown, tuple[SolidPose, ...]]]:
    """Each released piece with the poses its exposure integrates (middle first); one pose when it is still, so
    a resting piece is drawn exactly as `render_scene` draws it."""
    result = []
    for i, piece in enumerate(clip.thrown):
        samples = clip.exposure(i, frame)
        if samples is None:
            continue
        poses = tuple(piece.pose_at(s) or piece.rest for s in samples)
        result.append((i, piece, poses if any(p != poses[0] for p in poses) else poses[:1]))
    return result


@dataclass
class _Frame:
    image: np.ndarray  # finished, noise-free uint8
    labels: list[ObjectLabel]
    z: dict[int, int]  # thrown piece -> its index in the painted list


def compose_frame(clip: Clip, pieces: PieceSet, frame: int) -> _Frame:
    """The static layer plus the moving pieces at `frame`, far to near, through the camera's effects; labels from
    the frame's id map."""
    camera = clip.scene.camera
    effects = clip.scene.effects
    light = light_direction(effects, camera)
    canvas, ids = clip.static.canvas.copy(), clip.static.ids.copy()
    painted = list(clip.static.painted)
    moving = [(i, [piece.spec.at(p) for p in poses]) for i, piece, poses in _exposed(clip, frame)]
    z_of: dict[int, int] = {}
    for i, specs in sorted(moving, key=lambda item: -camera_distance(camera, item[1][0])):
        renders = [render_solid(s, camera, light) for s in specs]
        if renders[0] is None:  # out of view at the frame's instant: the tail of its blur is left out too
            continue
        z_of[i] = len(painted)
        painted.append(_paint_solid(canvas, ids, len(painted) + 1, specs, renders, camera, light, effects))
    glossy = np.array([0.0, *(glossiness(item.source) for item in painted)], np.float32)
    image = finish(canvas, glossy[ids], effects, clip.seed)
    return _Frame(image, label_objects(clip.scene, painted, ids, pieces, VISIBLE_THRESHOLD, image), z_of)


def _frame_key(clip: Clip, frame: int) -> tuple:
    """Everything that decides a frame's pixels before the noise: equal keys, equal frames."""
    return tuple((i, poses) for i, _piece, poses in _exposed(clip, frame))


def solid_record(clip: Clip, index: int, frame: int, composed: _Frame) -> dict:
    """One thrown piece's ground truth in one frame."""
    piece = clip.thrown[index]
    state = clip.state(index, frame)
    samples = clip.exposure(index, frame)
    pose = piece.pose_at(samples[0]) if samples is not None else None
    z = composed.z.get(index)
    label = next((obj for obj in composed.labels if obj.z == z), None) if z is not None else None
    spec = piece.spec if pose is None else piece.spec.at(pose)
    value = top_value(spec.kind, spec.rotation) if spec.kind in DIE_SIDES else None
    top = label.corners[0] if label is not None and label.corners else None
    return {
        "index": index,
        "kind": spec.kind,
        "code": spec.code or spec.kind,
        "label": solid_label(spec, value),
        "value": value,
        "state": state,
        "moving": state == "moving",
        "settled": state == "settled",
        "pose": None if pose is None else _pose_dict(pose),
        "z": label.z if label is not None else None,
        "box": rounded_json(list(label.box)) if label is not None and label.box is not None else None,
        "visible": round(label.visible_fraction, 3) if label is not None else 0.0,
        "top_face": rounded_json(asdict(top)) if top is not None else None,
        "era": era_at(clip.eras, pose.x_mm, pose.y_mm) if clip.eras and pose is not None else None,
    }


def _pose_dict(pose: SolidPose) -> dict:
    return {
        "x_mm": round(pose.x_mm, 3),
        "y_mm": round(pose.y_mm, 3),
        "z_mm": round(pose.z_mm, 3),
        "rotation": [round(v, 5) for v in pose.rotation],
    }


def frame_record(clip: Clip, frame: int, composed: _Frame) -> dict:
    solids = [solid_record(clip, i, frame, composed) for i in range(len(clip.thrown))]
    return {
        "frame": frame,
        "t": round(frame / clip.fps, 4),
        "moving": any(s["moving"] for s in solids),
        "solids": solids,
        "objects": [rounded_json(asdict(obj)) for obj in composed.labels],
    }


def clip_events(clip: Clip) -> list[dict]:
    """What happened, once per piece: a die's roll and the value it settled on, or a cube's landing Era."""
    events = []
    for i, piece in enumerate(clip.thrown):
        rest = piece.spec.at(piece.rest)
        settle = clip.settle_frame(i)
        if clip.name == "roll":
            value = top_value(rest.kind, rest.rotation)
            events.append(
                {"event": "roll", "die": i, "value": value, "start_frame": piece.start_frame, "settle_frame": settle}
            )
        else:
            era = era_at(clip.eras, rest.x_mm, rest.y_mm)
            events.append({"event": "land", "cube": i, "era": era, "frame": settle, "start_frame": piece.start_frame})
    return events


def engine_action(clip: Clip, events: Sequence[dict]) -> str | None:
    """The landing as The LOOP's engine takes it: ``rifts P F N`` (cubes in the previous, Dr. Foo's, the next
    Era); None for a roll (the engine's ``roll P N`` also needs to know whose die it was)."""
    if clip.name != "drop":
        return None
    chutes = clip.info["chutes"]
    counts = [sum(1 for e in events if e["era"] == code) for code in chutes]
    return "rifts " + " ".join(str(c) for c in counts)


def render_clip(clip: Clip, pieces: PieceSet, out_dir: str | Path, progress: bool = True) -> dict:
    """Write video.mp4, states.jsonl.gz, events.json and meta.json; return the meta with the events and the time
    it took (kept out of meta.json, which must repeat byte for byte)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    camera = clip.scene.camera
    size = (camera.width, camera.height)
    look = VideoLook(clip.seed, camera, clip.scene, _hand(clip.seed), False, clip.noise_sigma, (0.0, 0.0))
    bank = noise_bank(look, size)
    video = open_video(out / VIDEO_FILE, clip.fps, size)
    key, composed = None, None
    bar = tqdm(total=clip.n_frames, desc=f"{clip.name} clip", unit="frame", disable=not progress)
    try:
        with open_states(out / STATES_FILE) as states:
            for frame in range(clip.n_frames):
                frame_key = _frame_key(clip, frame)
                if composed is None or frame_key != key:
                    key, composed = frame_key, compose_frame(clip, pieces, frame)
                video.write(sensor_frame(composed.image, (0.0, 0.0), look, frame, bank))
                states.write(json.dumps(frame_record(clip, frame, composed), separators=(",", ":")) + "\n")
                bar.update()
    finally:
        video.close()
        bar.close()
    events = clip_events(clip)
    (out / EVENTS_FILE).write_text(json.dumps(events, indent=1) + "\n")
    meta = {
        "clip": clip.name,
        "game": pieces.game,
        "pieces": {"name": pieces.name, "family": pieces.family, "path": str(pieces.path)},
        "seed": clip.seed,
        "fps": clip.fps,
        "size": list(size),
        "frames": clip.n_frames,
        "duration_s": round(clip.n_frames / clip.fps, 3),
        "codec": video.codec,
        "camera": asdict(camera),
        "background": clip.scene.background.source,
        "shutter": round(clip.shutter, 4),
        "noise_sigma": round(clip.noise_sigma, 4),
        "samples_per_frame": clip.samples_per_frame,
        **clip.info,
        "engine_action": engine_action(clip, events),
    }
    (out / META_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    return {**meta, "events": events, "render_s": round(time.perf_counter() - started, 2)}


def _hand(seed: int) -> OccluderSpec:
    """The player's hand of the clip's look (unused while clips show no hands; VideoLook carries one)."""
    return random_occluder(np.random.default_rng([seed, 12]), "hand", 0.0, 0.0, 0.0)


def render_roll_clip(
    out_dir: str | Path,
    seed: int,
    pieces: PieceSet,
    kind: str = "d20",
    n_dice: int | None = None,
    fps: int = 30,
    size: tuple[int, int] = (1280, 720),
    progress: bool = True,
) -> dict:
    """Dice thrown onto a table of `pieces` (a Loot Roll set: the d20 roll for loot), see the module docstring."""
    return render_clip(plan_roll_clip(seed, pieces, kind, n_dice, fps, size), pieces, out_dir, progress)


def render_drop_clip(
    out_dir: str | Path,
    seed: int,
    pieces: PieceSet,
    n_cubes: int | None = None,
    fps: int = 30,
    size: tuple[int, int] = (1280, 720),
    progress: bool = True,
) -> dict:
    """Rift cubes dropping onto The LOOP's board (a 'the-loop' set), see the module docstring."""
    return render_clip(plan_drop_clip(seed, pieces, n_cubes, fps, size), pieces, out_dir, progress)


# ----------------------------------------------------------------------------------------------------- viewing


def contact_strip(clip_dirs: Sequence[str | Path], every: int = 5, columns: int = 5, width: int = 384) -> np.ndarray:
    """Every `every`-th frame of each clip, read back from its video, with the per-frame labels drawn on: box
    (orange while moving, green once settled), top face, label and state; one block of rows per clip."""
    from vision.synth.video import read_states

    blocks = []
    for folder in clip_dirs:
        folder = Path(folder)
        states = list(read_states(folder))
        capture = cv2.VideoCapture(str(folder / VIDEO_FILE))
        cells = []
        for record in states:
            ok, image = capture.read()
            if not ok:
                break
            if record["frame"] % every == 0:
                cells.append(_annotated(image, record, width))
        capture.release()
        if not cells:
            continue
        cells += [np.zeros_like(cells[0])] * (-len(cells) % columns)
        rows = [np.hstack(cells[i : i + columns]) for i in range(0, len(cells), columns)]
        title = np.full((22, rows[0].shape[1], 3), 30, np.uint8)
        cv2.putText(title, folder.name, (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
        blocks.append(np.vstack([title, *rows]))
    if not blocks:
        raise ClipError(f"no clip frames found in {[str(d) for d in clip_dirs]}")
    wide = max(b.shape[1] for b in blocks)
    return np.vstack([np.pad(b, ((0, 0), (0, wide - b.shape[1]), (0, 0))) for b in blocks])


def _annotated(image: np.ndarray, record: dict, width: int) -> np.ndarray:
    scale = width / image.shape[1]
    cell = cv2.resize(image, (width, round(image.shape[0] * scale)), interpolation=cv2.INTER_AREA)
    for solid in record["solids"]:
        if solid["box"] is None:
            continue
        colour = (60, 220, 60) if solid["settled"] else (0, 150, 255)
        x1, y1, x2, y2 = (round(v * scale) for v in solid["box"])
        cv2.rectangle(cell, (x1, y1), (x2, y2), colour, 1)
        if solid["top_face"] is not None:
            quad = np.round(np.array(solid["top_face"]["quad"]) * scale * 4).astype(np.int32)
            cv2.polylines(cell, [quad], True, (255, 255, 0), 1, cv2.LINE_AA, 2)
        text = solid["label"] if solid["settled"] else solid["state"]
        text += f" {solid['era']}" if solid["era"] and solid["settled"] else ""
        cv2.putText(cell, text, (x1, max(y1 - 3, 9)), cv2.FONT_HERSHEY_SIMPLEX, 0.33, (0, 0, 0), 2, cv2.LINE_AA)
        cv2.putText(cell, text, (x1, max(y1 - 3, 9)), cv2.FONT_HERSHEY_SIMPLEX, 0.33, colour, 1, cv2.LINE_AA)
    cv2.putText(cell, str(record["frame"]), (4, 12), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1, cv2.LINE_AA)
    return cell


def write_contact_strip(path: str | Path, clip_dirs: Sequence[str | Path], every: int = 5) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), contact_strip(clip_dirs, every)):
        raise ClipError(f"cannot write the contact strip to {out}")
    return out
