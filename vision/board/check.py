"""A second look at every cube the cube net might have seen: a small classifier over a window of a finer cut around
each candidate peak, which says whether a cube stands there, of which colour, and where its centre lies.

Why: the cube net is cheap because it reads the whole ring at 1.6 px/mm; its misses and double counts are local (a
red cube on a red Era in shadow, a tall cube in a near view marked twice, a cube in a touching row), and a frame
holds up to 2.6 px/mm at the board. The checker spends its work only at the candidates (peaks of the cube net's maps
above a low floor, so it sees the net's doubtful ones too) and at the finer cut's resolution. Candidates that the
checker places on the same cube are read once.

    candidates (cube net, low floor) -> window of the fine cut and the board's picture -> cube? colour, offset
    -> the surest of any two closer than `APART_SIDES` of a cube's side -> counted in the Era the centre lies in
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.board.cubes import COLOURS, CUBE_MM, STRIDE, eye_on_cut, planes, view_axes
from vision.board.rectify import era_masks, px_per_mm, rectify, reference_cut, resized
from vision.heatmap import peaks, turned

CHECK_MODEL_FILE = "the-loop-cube-check.onnx"
# {"fine_px", "window", "floor", "accept", "reach_sides", "apart_sides", "views" (optional, 1)}: the net's geometry,
# its tuned cut-offs, and how many views of each window it reads
CHECK_THRESHOLDS_FILE = "the-loop-cube-check.json"
FINE_PX = 600  # the fine cut's side: 2.4 px/mm on a 420 mm board, a 9 mm cube 21 px
WINDOW = 63  # the window's side, fine-cut pixels (27 mm: a cube and half of each neighbour); odd, so a quarter turn
# keeps its centre
CUBE_SIDES_PX = CUBE_MM * px_per_mm(FINE_PX)  # a cube's side on the fine cut
MERGE_SIDES = 0.3  # candidates (any colour) closer than this many sides are one spot: the surest is kept
# A candidate this near a cube's centre is that cube's (taught so, and the offset found). A cube seen at a slant shows
# its top face up to a side from its base's centre, where the cube net may peak; but a checker taught at 1.25 sides
# counted fewer validation Eras exactly (86.2% against 87.1%, session 39)
REACH_SIDES = 0.75
APART_SIDES = 0.6  # two cubes read closer than this are one (the default; the shipped one is tuned)
# what a checker's offsets point at: the cube's footprint centre (sessions 38-52), or its top face's centre as the cut
# shows it (session 53), moved to the footprint through the camera afterwards (`to_footprints`)
TARGETS = ("footprint", "top")
CLASSES = ("none", *COLOURS)


def candidates(heat: np.ndarray, floor: float, size: int, fine: int) -> list[tuple[float, float, float]]:
    """(x, y on the fine cut, whole pixels, score) of every peak of the cube maps (on a cut `size` wide) at or above
    `floor`, surest first, each keeping off any weaker one of any colour within `MERGE_SIDES`."""
    found = sorted(peaks(heat[: len(COLOURS)], floor, STRIDE), key=lambda p: -p[3])
    merge = (MERGE_SIDES * CUBE_SIDES_PX * fine / FINE_PX) ** 2
    kept: list[tuple[float, float, float]] = []
    for _, x, y, score in found:
        fx, fy = (float(round(v)) for v in resized(np.array([x, y]), size, fine))
        if all((fx - kx) ** 2 + (fy - ky) ** 2 >= merge for kx, ky, _ in kept):
            kept.append((fx, fy, score))
    return kept


def _spans(
    points: list[tuple[float, float]], side: int, h: int, w: int
) -> Iterator[tuple[int, tuple[slice, slice], tuple[slice, slice]]]:
    """(k, the window's rows and columns, the cut's) for each point's window (the nearest pixel at its centre) that
    overlaps a cut h x w; what lies beyond the cut's edge is left out."""
    for k, (x, y) in enumerate(points):
        x0, y0 = round(x) - side // 2, round(y) - side // 2
        ax, ay, bx, by = max(x0, 0), max(y0, 0), min(x0 + side, w), min(y0 + side, h)
        if ax < bx and ay < by:
            yield k, (slice(ay - y0, by - y0), slice(ax - x0, bx - x0)), (slice(ay, by), slice(ax, bx))


def patches(cut: np.ndarray, reference: np.ndarray, points: list[tuple[float, float]], side: int) -> np.ndarray:
    """(n, side, side, 6) uint8: the cut and the reference around each point (the nearest pixel at the window's
    centre), black beyond the cut's edge as a cut is."""
    out = np.zeros((len(points), side, side, 6), np.uint8)
    for k, (wy, wx), (cy, cx) in _spans(points, side, *cut.shape[:2]):
        out[k, wy, wx, :3] = cut[cy, cx]
        out[k, wy, wx, 3:] = reference[cy, cx]
    return out


def windows(cut: np.ndarray, reference_planes: np.ndarray, points: list[tuple[float, float]], side: int) -> np.ndarray:
    """(n, 6, side, side) float32: `patches` as the checker reads them (`cubes.planes`: the cut's window converted
    alone, the board's picture's `reference_planes` made once), -0.5 (black) beyond the cut's edge."""
    out = np.full((len(points), 6, side, side), -0.5, np.float32)
    for k, (wy, wx), (cy, cx) in _spans(points, side, *cut.shape[:2]):
        out[k, :3, wy, wx] = planes(cut[cy, cx])
        out[k, 3:, wy, wx] = reference_planes[:, cy, cx]
    return out


IMAGE_PLANES = 6  # a window's planes: the fine cut's and the board's picture's
CONTEXT = len(COLOURS)  # a checker with context also reads the cube net's colour maps around its candidate
WIDE = IMAGE_PLANES  # a wide checker also reads the same planes at half the resolution, twice as far around
CHECKER_PLANES = (IMAGE_PLANES, IMAGE_PLANES + CONTEXT, IMAGE_PLANES + WIDE)  # the window's planes a checker may read


def context_of(heat: np.ndarray) -> np.ndarray:
    """(h, w, CONTEXT) float32: the cube net's colour maps as `context_windows` cuts them (channels last)."""
    return np.ascontiguousarray(np.moveaxis(heat[:CONTEXT], 0, -1), np.float32)


def context_windows(
    context: np.ndarray, size: int, fine: int, points: list[tuple[float, float]], side: int
) -> np.ndarray:
    """(n, CONTEXT, side, side) float32: the cube net's maps (`context_of`, over a cut `size` wide) resampled onto
    each point's window of the fine cut (`fine` wide), centred on 0 as the cut's planes are (-0.5 beyond the maps).
    Why: the checker's window is a cube and half its neighbours; the net saw the whole ring, and where it marks the
    next cube says whether two candidates are one cube or two."""
    rate = size / fine / STRIDE  # heat cells per fine pixel
    shift = 0.5 * size / fine - 0.5 - (STRIDE - 1) / 2  # a fine pixel's place on the cut, less a cell's centre
    out = np.empty((len(points), CONTEXT, side, side), np.float32)
    for k, (x, y) in enumerate(points):
        x0, y0 = round(x) - side // 2, round(y) - side // 2
        x_at, y_at = ((v * size / fine + shift) / STRIDE for v in (x0, y0))
        matrix = np.array([[rate, 0.0, x_at], [0.0, rate, y_at]])
        cut = cv2.warpAffine(context, matrix, (side, side), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
        out[k] = np.moveaxis(cut.reshape(side, side, CONTEXT), -1, 0)
    return out - np.float32(0.5)


def halved(image: np.ndarray) -> np.ndarray:
    """An image (h, w, c) at half its side, each pixel the mean of a 2 x 2 block (an even side's exact binning)."""
    h, w = image.shape[:2]
    return cv2.resize(image, (w // 2, h // 2), interpolation=cv2.INTER_AREA)


def wide_centre(point: tuple[float, float]) -> tuple[float, float]:
    """The half-size cut's pixel nearest a fine-cut point: fine pixels 2j and 2j + 1 make half pixel j."""
    return tuple(float(round((v - 0.5) / 2)) for v in point)  # type: ignore[return-value]


def wide_windows(
    fine_cut: np.ndarray, half_reference_planes: np.ndarray, points: list[tuple[float, float]], side: int
) -> np.ndarray:
    """(n, WIDE, side, side): `windows` of the fine cut and the board's picture both at half size (`halved`), each
    centred where its fine window is (`wide_centre`). Why: a window a cube and a half wide, centred inside a touching
    row of like cubes, holds neither of the row's ends, so it cannot say where along the row the cubes stand; twice
    as far around it holds a row of four and its ends."""
    centres = [wide_centre(p) for p in points]
    return windows(halved(fine_cut), half_reference_planes, centres, side)


def half_planes(reference_planes: np.ndarray) -> np.ndarray:
    """`cubes.planes` of the board's picture at half size, from its planes at full size (both maps are linear)."""
    return np.ascontiguousarray(np.moveaxis(halved(np.moveaxis(reference_planes, 0, -1)), -1, 0))


def checker_windows(
    fine_cut: np.ndarray,
    reference_planes: np.ndarray,
    points: list[tuple[float, float]],
    side: int,
    heat: np.ndarray | None,
    size: int,
    half_reference_planes: np.ndarray | None = None,
) -> np.ndarray:
    """`windows`, followed by the cube net's maps around each (`context_windows`; its `heat` over a cut `size`
    wide) for a checker that reads them (`heat` None for one that does not), or by the wide windows
    (`wide_windows`) for a checker that reads those (`half_reference_planes` given)."""
    crops = windows(fine_cut, reference_planes, points, side)
    if half_reference_planes is not None:
        return np.concatenate([crops, wide_windows(fine_cut, half_reference_planes, points, side)], 1)
    if heat is None:
        return crops
    near = context_windows(context_of(heat), size, fine_cut.shape[1], points, side)
    return np.concatenate([crops, near], 1)


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# the window's views averaged over (`views` first ones): quarter turns and mirrors, as the checker was taught; each
# prefix mixes turns and mirrors
VIEWS = ((0, False), (2, True), (1, False), (3, True), (2, False), (0, True), (3, False), (1, True))


def turned_offset(offset: np.ndarray, k: int, flip: bool) -> np.ndarray:
    """Offsets (dx, dy), one or (n, 2), in a window `turned` (k quarter turns, then mirrored), as training turns its
    windows."""
    offset = np.asarray(offset, np.float32)
    dx, dy = offset[..., 0], offset[..., 1]
    for _ in range(k):  # a pixel at (x, y) goes to (y, side - 1 - x)
        dx, dy = dy, -dx
    return np.stack([-dx if flip else dx, dy], axis=-1)


def offsets_back(offsets: np.ndarray, k: int, flip: bool) -> np.ndarray:
    """Offsets (n, 2) read on windows `turned` (k, flip), in the window as it came: `turned_offset` undone. A turn
    and a mirror is a reflection, its own inverse; k turns alone are undone by 4 - k more."""
    return turned_offset(offsets, k if flip else (4 - k) % 4, flip)


def read_windows(session: Any, crops: np.ndarray, reach_px: float, views: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(class probabilities (n, 4): none, red, green, blue; offsets to the cube's centre (n, 2), fine-cut pixels).
    The net gives offsets in units of the reach it was taught with (`reach_px` on this cut). With `views` above 1
    each window is also read turned and mirrored (`VIEWS`), and the readings are averaged."""
    if not len(crops):
        return np.zeros((0, len(CLASSES)), np.float32), np.zeros((0, 2), np.float32)
    n, chosen = len(crops), VIEWS[:views]
    batch = np.ascontiguousarray(np.concatenate([turned(crops, k, flip) for k, flip in chosen]))
    logits, offsets = session.run(None, {"x": batch})
    probs = softmax(logits).reshape(len(chosen), n, -1).mean(axis=0)
    back = [offsets_back(offsets[v * n : (v + 1) * n], k, flip) for v, (k, flip) in enumerate(chosen)]
    return probs, np.mean(back, axis=0) * reach_px


def settle(
    points: list[tuple[float, float]], probs: np.ndarray, offsets: np.ndarray, accept: float, apart_px: float
) -> list[tuple[str, float, float, float]]:
    """(colour, x, y on the fine cut, probability) of every candidate the checker calls a cube at `accept` or more,
    moved to the centre it finds; of any two closer than `apart_px` the surer is kept."""
    cube = 1.0 - probs[:, 0]
    order = np.argsort(-cube)
    apart = apart_px**2
    kept: list[tuple[str, float, float, float]] = []
    for k in order:
        if cube[k] < accept:
            break
        x, y = points[k][0] + float(offsets[k, 0]), points[k][1] + float(offsets[k, 1])
        if all((x - kx) ** 2 + (y - ky) ** 2 >= apart for _, kx, ky, _ in kept):
            kept.append((COLOURS[int(np.argmax(probs[k, 1:]))], x, y, float(cube[k])))
    return kept


UPRIGHT_CHUNK = 400  # windows resampled in one `cv2.remap` (its maps stay under 32,767 rows)


def _upright_maps(points: list[tuple[float, float]], axes: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
    """(map x, map y), each (n * side, side) float32: where each upright window's pixels lie on the cut, about the
    point's nearest pixel along its `axes`."""
    steps = np.arange(side, dtype=np.float32) - np.float32((side - 1) / 2)
    centres = np.round(np.asarray(points, np.float32).reshape(-1, 2))
    a = np.asarray(axes, np.float32).reshape(-1, 2, 2)
    # pixel (row v, column u) of window k: centre + u * x axis + v * y axis
    maps = (
        centres[:, :, None, None]
        + a[:, :, 0, None, None] * steps[None, None, None, :]
        + a[:, :, 1, None, None] * steps[None, None, :, None]
    )
    return maps[:, 0].reshape(-1, side), maps[:, 1].reshape(-1, side)


def _remapped(image: np.ndarray, maps: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    return cv2.remap(image, *maps, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)


def _upright_chunks(
    images: tuple[np.ndarray, ...], points: list[tuple[float, float]], axes: np.ndarray, side: int
) -> Iterator[tuple[slice, list[np.ndarray]]]:
    """(the windows' slice, each image's upright windows (n, side, side, 3) there), `UPRIGHT_CHUNK` windows at a time:
    every window's map made at once and each image resampled in one call (a window at a time took about 10 ms for 40
    windows, five times as long)."""
    for k in range(0, len(points), UPRIGHT_CHUNK):
        maps = _upright_maps(points[k : k + UPRIGHT_CHUNK], axes[k : k + UPRIGHT_CHUNK], side)
        n = len(maps[0]) // side
        yield slice(k, k + n), [_remapped(image, maps).reshape(n, side, side, 3) for image in images]


def upright_patches(
    cut: np.ndarray, reference: np.ndarray, points: list[tuple[float, float]], axes: np.ndarray, side: int
) -> np.ndarray:
    """(n, side, side, 6) uint8: as `patches`, each window resampled along its `axes` (`view_axes`) about the
    point's nearest pixel, black beyond the cut's edge."""
    out = np.zeros((len(points), side, side, 6), np.uint8)
    for at, (shown_cut, shown_reference) in _upright_chunks((cut, reference), points, axes, side):
        out[at, :, :, :3], out[at, :, :, 3:] = shown_cut, shown_reference
    return out


def upright_windows(
    cut: np.ndarray, reference: np.ndarray, points: list[tuple[float, float]], axes: np.ndarray, side: int
) -> np.ndarray:
    """(n, 6, side, side) float32: `upright_patches` as the checker reads them (`cubes.planes`), converted straight
    from the resampled images (a pass through the uint8 patches took twice as long)."""
    out = np.empty((len(points), 6, side, side), np.float32)
    for at, shown in _upright_chunks((cut, reference), points, axes, side):
        for image, planes_at in zip(shown, (slice(0, 3), slice(3, 6)), strict=True):
            np.multiply(image.transpose(0, 3, 1, 2), np.float32(1 / 255), out=out[at, planes_at], casting="unsafe")
    out -= np.float32(0.5)
    return out


def read_upright(
    session: Any,
    cut: np.ndarray,
    reference: np.ndarray,
    points: list[tuple[float, float]],
    eye: np.ndarray | None,
    side: int,
    reach_px: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(class probabilities (n, 4), offsets on the cut (n, 2)): `read_windows` on windows turned to the camera's
    `eye` (`view_axes`), their offsets turned back onto the cut."""
    axes = view_axes(points, eye)
    probs, offsets = read_windows(session, upright_windows(cut, reference, points, axes, side), reach_px)
    return probs, offsets_on_cut(offsets, axes)


def offsets_on_cut(offsets: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Offsets (n, 2) read in upright windows, back on the cut."""
    return np.einsum("nij,nj->ni", axes, offsets).astype(np.float32)


def offsets_in_window(offsets: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Offsets (n, 2) on the cut as upright windows along `axes` show them: `offsets_on_cut` undone."""
    return np.einsum("nji,nj->ni", axes, offsets).astype(np.float32)


def shape_of(session: Any) -> list:
    """The shape of an ONNX session's (or its stand-in's) first input."""
    return list(session.get_inputs()[0].shape)


def to_footprints(
    readings: list[tuple[str, float, float, float]],
    frame_from_board: np.ndarray,
    frame_size: tuple[int, int],
    size: int,
) -> list[tuple[str, float, float, float]]:
    """`readings` of top faces (colour, x, y on a cut `size` wide, probability) moved to their cubes' footprint
    centres. Why: a cube's top face is what a slanted camera sees, and of two touching cubes neither hides the other's
    top face, but the cut shows it up to a side from the footprint, away from the camera's foot; the footprint says
    the Era. The camera comes from the placement alone (`level.TableCamera`, cut pixels as its table units): the top
    face's point on the cut lies on the ray from the camera's eye through the top face, which meets the footprint's
    vertical one cube's height up. A placement that implies no camera leaves the readings where they are."""
    if not readings:
        return readings
    eye = eye_on_cut(frame_from_board, frame_size, size)
    if eye is None:
        return readings
    height = CUBE_MM * px_per_mm(size)
    keep = (eye[2] - height) / eye[2]  # the share of the eye's distance the footprint lies at
    return [(c, eye[0] + (x - eye[0]) * keep, eye[1] + (y - eye[1]) * keep, p) for c, x, y, p in readings]


def on_footprints(
    readings: list[tuple[str, float, float, float]],
    target: str,
    frame_from_board: np.ndarray,
    frame_size: tuple[int, int],
    size: int,
) -> list[tuple[str, float, float, float]]:
    """`readings` where their Era is decided, the footprints: a checker taught to point at top faces (`target` "top")
    has its readings moved there (`to_footprints`), one taught footprints has them there already. One place for the
    runtime and the training's scoring to agree on."""
    if target != "top":
        return readings
    return to_footprints(readings, frame_from_board, frame_size, size)


@dataclass(frozen=True)
class CubeChecker:
    """The checker's net with its board's fine cuts and tuned cut-offs. Its distances follow the fine cut's side, so
    a checker trained at another side reads with its own geometry."""

    session: Any
    size: int  # the fine cut's side
    window: int
    floor: float  # the cube net's heat at which a peak is a candidate
    accept: float  # the checker's probability of a cube at which it is counted
    reach_sides: float  # the reach the net was taught its offsets in, cube sides
    apart_sides: float  # two cubes read closer than this many sides are one
    views: int  # views of each window read and averaged (`VIEWS`)
    context: bool  # whether the net also reads the cube net's maps around each window (`context_windows`)
    reference: np.ndarray  # the board's picture cut at the fine side
    reference_planes: np.ndarray  # its `cubes.planes`, as the checker reads it (made once)
    masks: dict[str, np.ndarray]  # each Era's sector on the fine cut
    target: str = "footprint"  # what its offsets point at (`TARGETS`)
    half_reference_planes: np.ndarray | None = None  # for a wide checker (`wide_windows`), the planes at half size
    upright: bool = False  # whether it reads each window turned to the camera's bearing (`view_axes`, session 58)

    @classmethod
    def load(
        cls, model: Path, thresholds: Path, board_picture: np.ndarray, eras: Mapping[str, np.ndarray]
    ) -> CubeChecker:
        from vision.recognise.models import ModelError, session

        net = session(model)
        keys = "fine_px, window, floor, accept, reach_sides and apart_sides"
        try:
            tuned = json.loads(thresholds.read_text())
            fine, window = int(tuned["fine_px"]), int(tuned["window"])
            floor, accept = float(tuned["floor"]), float(tuned["accept"])
            reach, apart = float(tuned["reach_sides"]), float(tuned["apart_sides"])
            views = int(tuned.get("views", 1))
            target = str(tuned.get("target", "footprint"))
            upright = bool(tuned.get("upright", False))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ModelError(f"{thresholds}: expected JSON with {keys} ({e})") from e
        if not 64 <= fine <= 2048 or not 16 <= window <= 256:
            raise ModelError(f"{thresholds}: fine_px {fine} or window {window} out of range (64-2048, 16-256)")
        if not 0 < reach <= 3 or not 0 < apart <= 3:
            raise ModelError(f"{thresholds}: reach_sides {reach} or apart_sides {apart} out of range (0-3 sides)")
        if not 1 <= views <= len(VIEWS):
            raise ModelError(f"{thresholds}: views {views} out of range (1-{len(VIEWS)})")
        if upright and (views != 1 or shape_of(net)[1] != IMAGE_PLANES):
            raise ModelError(f"{thresholds}: an upright checker reads one view of the cut and the board's picture")
        if target not in TARGETS:
            raise ModelError(f"{thresholds}: target {target!r}, expected one of {', '.join(TARGETS)}")
        shape = shape_of(net)
        if shape[1] not in CHECKER_PLANES:
            expected = ", ".join(str(n) for n in CHECKER_PLANES)
            raise ModelError(f"{model}: reads {shape[1]} planes a window, expected {expected}")
        if shape[-1] != window:
            raise ModelError(f"{thresholds}: window {window}, but {model} reads windows of {shape[-1]} px")
        masks = era_masks(eras, fine)
        reference = reference_cut(board_picture, fine)
        context, flat = shape[1] == IMAGE_PLANES + CONTEXT, planes(reference)
        half = half_planes(flat) if shape[1] == IMAGE_PLANES + WIDE else None
        settings = (floor, accept, reach, apart, views, context)
        return cls(net, fine, window, *settings, reference, flat, masks, target, half, upright)

    @property
    def side_px(self) -> float:
        """A cube's side on the fine cut."""
        return CUBE_MM * px_per_mm(self.size)

    def check(
        self,
        heat: np.ndarray,
        size: int,
        fine_cut: np.ndarray,
        frame_from_board: np.ndarray,
        frame_size: tuple[int, int],
    ) -> list[tuple[str, float, float, float]]:
        """The cubes (colour, x, y of their footprints on the fine cut, probability) among the candidates of the cube
        net's `heat` (over a cut `size` wide), read on `fine_cut` (the same ring cut `self.size` wide, along
        `frame_from_board`, out of a frame `frame_size` (width, height))."""
        eye = eye_on_cut(frame_from_board, frame_size, self.size) if self.upright else None
        points, probs, offsets = self.read(heat, size, fine_cut, eye)
        kept = settle(points, probs, offsets, self.accept, self.apart_sides * self.side_px)
        return on_footprints(kept, self.target, frame_from_board, frame_size, self.size)

    def read(
        self, heat: np.ndarray, size: int, fine_cut: np.ndarray, eye: np.ndarray | None = None
    ) -> tuple[list[tuple[float, float]], np.ndarray, np.ndarray]:
        """(the candidates of the cube net's `heat` (over a cut `size` wide) on the fine cut, the checker's
        probabilities of none, red, green, blue at each (n, 4), its offsets to the cube's centre (n, 2)), read on
        `fine_cut`: what `check` settles. An upright checker reads each window turned to the camera's `eye` on the
        fine cut (`eye_on_cut`; None: the cut's own axes)."""
        points = [(x, y) for x, y, _ in candidates(heat, self.floor, size, self.size)]
        if self.upright:
            reach = self.reach_sides * self.side_px
            return points, *read_upright(self.session, fine_cut, self.reference, points, eye, self.window, reach)
        crops = checker_windows(
            fine_cut,
            self.reference_planes,
            points,
            self.window,
            heat if self.context else None,
            size,
            self.half_reference_planes,
        )
        probs, offsets = read_windows(self.session, crops, self.reach_sides * self.side_px, self.views)
        return points, probs, offsets

    def cut(self, frame: np.ndarray, frame_from_board: np.ndarray) -> np.ndarray:
        return rectify(frame, frame_from_board, self.size)
