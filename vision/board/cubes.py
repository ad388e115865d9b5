"""Rift, energy and blue cubes counted per Era of The LOOP's board, and the pieces on the ring: clone tokens by
their Paradox Era, vortex and mission tiles, agent pawns.

The frame's Era ring is cut out upright (`rectify`), and a small net (`models/the-loop-cubes.onnx`, trained by
`vision.train.cube_net`) reads that cut beside the board's own picture cut the same way, marking each cube's centre
in a heat map per colour, and each piece's in a map per label (`PIECES`). A cube is a local peak of its colour's map
above the cut-off; it belongs to the Era its centre lies in. A piece is a peak of the pieces' maps, the strongest of
any two closer than a piece's radius (one token is read as one Era, not two). ONNX Runtime only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from vision.board.clones import MODEL_FILE as PARADOX_FILE
from vision.board.clones import EraFills, ParadoxReader
from vision.board.layout import ERA_CODES
from vision.board.rectify import CUT_PX, cut_from_fraction, era_masks, px_per_mm, rectify, reference_cut
from vision.heatmap import local_maxima, peaks, sigmoid

if TYPE_CHECKING:
    from vision.board.check import CubeChecker

STRIDE = 4  # cut pixels per heat-map cell
CUBE_MM = 9.0  # a cube's side: 8-10 mm
COLOURS = ("red", "green", "blue")  # the heat maps' order: rift, energy, and the blue cubes of the box
# the flat pieces and pawns that stand on the ring, read by the heat maps after the cubes' (their labels in the JSON):
# a clone token by the Paradox Era it shows, a vortex tile, a mission tile either side up, an agent pawn by its agent
PIECES = (
    *(f"CLONE:{era}" for era in ERA_CODES),
    "VORTEX",
    "MISSION",
    *(f"PAWN:{agent}" for agent in ("chrono", "sweeper", "hunter", "archivist", "courier")),
)
CHANNELS = len(COLOURS) + len(PIECES)
CLONE_MAPS = len(ERA_CODES)  # the pieces' maps begin with the clone tokens', one per Paradox Era
PIECE_APART_MM = 12.25  # two pieces' centres are at least this far apart (a clone token is 28 mm across)
MODEL_FILE = "the-loop-cubes.onnx"
THRESHOLDS_FILE = "the-loop-cubes-thresholds.json"  # {"peak": cut-off, "cut_px": the cut's side, "piece_peak": ...,
# "upright": whether the net reads the cut turned to the camera}
DEFAULT_PEAK = 0.3


def planes(image: np.ndarray) -> np.ndarray:
    """(3, H, W) float32: a BGR image's channels, centred on 0, as the nets read them (channel by channel: a
    whole-image conversion and transpose took 7 times as long, a few ms a frame)."""
    out = np.empty((3, *image.shape[:2]), np.float32)
    for c, plane in enumerate(cv2.split(image)):
        np.multiply(plane, np.float32(1 / 255), out=out[c], casting="unsafe")
    out -= np.float32(0.5)
    return out


def net_input(cut: np.ndarray, reference_planes: np.ndarray) -> np.ndarray:
    """(1, 6, H, W) float32: the cut and the board's reference cut (its `planes`, made once for a board), BGR,
    centred on 0."""
    return np.concatenate([planes(cut), reference_planes])[None]


def heat_of(session: Any, cut: np.ndarray, reference_planes: np.ndarray) -> np.ndarray:
    """The net's heat maps (probabilities, colour x cell) for one cut beside its board's reference cut (`planes`)."""
    return sigmoid(session.run(None, {"x": net_input(cut, reference_planes)})[0][0])


def eye_on_cut(frame_from_board: np.ndarray, frame_size: tuple[int, int], size: int) -> np.ndarray | None:
    """The camera's eye (x, y on a cut `size` wide, height in cut pixels), from the placement alone
    (`level.TableCamera`); None where the placement implies no camera, or one so low that a cube's height is a
    third of its own."""
    from vision.dice.level import LevelFitError, TableCamera

    try:
        eye = TableCamera.from_homography(frame_from_board @ cut_from_fraction(size), frame_size).eye
    except (LevelFitError, np.linalg.LinAlgError):
        return None
    return eye if eye[2] > 2 * CUBE_MM * px_per_mm(size) else None


def eye_resized(eye: np.ndarray | None, size: int, to_size: int) -> np.ndarray | None:
    """The camera's eye on a cut `size` wide (`eye_on_cut`) where it lies on a cut of the same ring `to_size` wide.
    Why: the cuts differ by a scale about their pixels' centres alone (`cut_from_fraction`), so one fit serves both."""
    if eye is None:
        return None
    k = to_size / size
    return np.array([(eye[0] + 0.5) * k - 0.5, (eye[1] + 0.5) * k - 0.5, eye[2] * k])


def view_axes(points: list[tuple[float, float]], eye: np.ndarray | None) -> np.ndarray:
    """(n, 2, 2): per point, the upright window's x and y axes (columns) on the cut, its y axis pointing from the
    point towards the camera's foot on the board (`eye`; the cut's own axes where there is no eye, or the eye is
    straight above the point). Why: a cube seen at a slant shows its top face displaced away from the camera and
    its near sides towards it; turned so, every cube is seen from "below" in its window, and the checker need not
    learn each of the camera's bearings apart (rectify before you classify)."""
    axes = np.tile(np.eye(2, dtype=np.float32), (len(points), 1, 1))
    if eye is None or not len(points):
        return axes
    d = np.asarray(eye[:2], np.float64) - np.asarray(points, np.float64).reshape(-1, 2)
    n = np.hypot(d[:, 0], d[:, 1])
    far = n >= 1e-6
    ey = d[far] / n[far, None]
    axes[far, :, 0] = np.stack([ey[:, 1], -ey[:, 0]], 1)  # x: the y axis a quarter turn back
    axes[far, :, 1] = ey
    return axes


def cut_axes(eye: np.ndarray | None, size: int) -> np.ndarray | None:
    """(2, 2): the upright cut's x and y axes (columns) on a cut `size` wide, its y axis pointing from the cut's centre
    towards the camera's foot on the board (`view_axes` at the centre); None where there is no eye or it stands over
    the centre (the cut is read as it is). Why the whole cut turned once, not each cube: the net reads the ring in
    one pass, and the bearing from a cube to the camera's foot departs from the centre's little where the slant
    that displaces a cube's top face is large (the camera far off), and much only where it is small (the camera
    over the board)."""
    centre = (size - 1) / 2
    if eye is None or np.hypot(eye[0] - centre, eye[1] - centre) < 1e-6:
        return None
    return view_axes([(centre, centre)], eye)[0].astype(np.float64)


def about_centre(axes: np.ndarray, side: int, corner: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """(2, 3): where pixel q of a picture resampled along `axes` about the centre of a square `side` wide lies on the
    square (`centre + axes @ (q + corner - centre)`), for `cv2.warpAffine`'s inverse map; `corner` places a patch of
    that picture."""
    centre = (side - 1) / 2
    shift = np.array([centre, centre]) + axes @ (np.asarray(corner, np.float64) - centre)
    return np.hstack([axes, shift[:, None]])


def to_upright(points: np.ndarray, axes: np.ndarray, side: int) -> np.ndarray:
    """(n, 2) float32: points (x, y) of a square `side` wide where they lie on it turned along `axes` about its
    centre (`about_centre`'s map inverted: the axes are orthonormal)."""
    centre = (side - 1) / 2
    return ((np.asarray(points, np.float64).reshape(-1, 2) - centre) @ axes + centre).astype(np.float32)


def turned_about_centre(image: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """A square image (rows, columns, channels) resampled along `axes` about its centre (`about_centre`), black
    beyond its edge as a cut is; with `axes.T`, the same turned back."""
    side = image.shape[0]
    return cv2.warpAffine(
        image, about_centre(axes, side), (side, side), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    ).reshape(image.shape)


def upright_heat(session: Any, cut: np.ndarray, reference: np.ndarray, eye: np.ndarray | None) -> np.ndarray:
    """The net's heat maps over `cut`, read with the cut and the board's `reference` turned so that the camera's
    foot lies straight below the centre (`cut_axes`), and turned back onto the cut (a cube's top face, displaced
    away from the camera, then lies above its footprint wherever the camera stood; session 59)."""
    axes = cut_axes(eye, cut.shape[0])
    if axes is None:
        return heat_of(session, cut, planes(reference))
    heat = heat_of(session, turned_about_centre(cut, axes), planes(turned_about_centre(reference, axes)))
    return turned_back(heat, axes)


KEPT_PEAK = 0.05  # a peak of the upright cut's maps at least this high keeps its height when turned back


def turned_back(heat: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Maps (channels, n, n) over a cut turned along `axes` (`turned_about_centre`), turned back onto the cut, each
    peak (a 3 x 3 maximum, `KEPT_PEAK` or more) keeping its height at the cell nearest where it comes back. Why: a
    peak a cell wide, resampled between cells, loses up to half its height, and the cut-offs that find cubes and
    pieces were lost with it (pawns found at 0.4: 42 of 76 validation pawns against 54 from the peaks moved back,
    session 59)."""
    side = heat.shape[-1]
    last = np.ascontiguousarray(np.moveaxis(heat, 0, -1))  # channels last: one warp and one dilation for all
    back = turned_about_centre(last, axes.T).reshape(last.shape)
    top = local_maxima(last, KEPT_PEAK)
    rows, cols, channels = np.unravel_index(np.flatnonzero(top), last.shape)  # flat: a third of `nonzero`'s time
    if len(rows):
        cells = np.rint(to_upright(np.stack([cols, rows], 1), axes.T, side)).astype(int)
        inside = np.all((cells >= 0) & (cells < side), axis=1)
        at = (cells[inside, 1], cells[inside, 0], channels[inside])
        np.maximum.at(back, at, last[rows[inside], cols[inside], channels[inside]])
    return np.ascontiguousarray(np.moveaxis(back, -1, 0))


def reads_upright(thresholds: Path) -> bool:
    """Whether the cube net whose settings are `thresholds` reads the cut turned to the camera (`upright_heat`)."""
    return thresholds.is_file() and bool(json.loads(thresholds.read_text()).get("upright", False))


def era_of(x: float, y: float, masks: Mapping[str, np.ndarray]) -> str | None:
    """The Era whose mask holds the cut pixel (x, y), or None (between Eras, or off the cut)."""
    ix, iy = int(x), int(y)
    for era, mask in masks.items():
        if 0 <= iy < mask.shape[0] and 0 <= ix < mask.shape[1] and mask[iy, ix]:
            return era
    return None


def counts_of(
    cubes: list[tuple[str, float, float, float]], masks: Mapping[str, np.ndarray]
) -> dict[str, dict[str, int]]:
    """Cubes (colour, x, y, score) per Era and colour (Eras as `masks`, over the cubes' cut)."""
    counts = {era: dict.fromkeys(COLOURS, 0) for era in masks}
    for colour, x, y, _score in cubes:
        era = era_of(x, y, masks)
        if era is not None:
            counts[era][colour] += 1
    return counts


def cube_peaks(heat: np.ndarray, threshold: float, stride: int = STRIDE) -> list[tuple[str, float, float, float]]:
    """(colour, x, y on the cut, score) of every peak of the cube maps (a cell every `stride` cut pixels) at or above
    `threshold`."""
    return [(COLOURS[c], x, y, score) for c, x, y, score in peaks(heat[: len(COLOURS)], threshold, stride)]


def count_cut(
    heat: np.ndarray, masks: Mapping[str, np.ndarray], threshold: float = DEFAULT_PEAK, stride: int = STRIDE
) -> dict[str, dict[str, int]]:
    """Cubes per Era and colour from the heat maps (probabilities) of one cut."""
    return counts_of(cube_peaks(heat, threshold, stride), masks)


def piece_apart_px(size: int) -> float:
    """`PIECE_APART_MM` on a cut `size` pixels wide: nets read cuts of different sides (28 px at 576)."""
    return PIECE_APART_MM * px_per_mm(size)


def find_pieces(
    heat: np.ndarray, threshold: float, clone_peak: float | None = None
) -> list[tuple[str, float, float, float]]:
    """(label, x, y on the cut, score) of every piece the heat maps mark (none from a cubes-only net): peaks of the
    pieces' maps, strongest first, each keeping off any weaker one within `piece_apart_px` of the cut the maps read.
    With `clone_peak`, a clone token is a peak of the strongest of its seven maps at that cut-off, labelled by that
    map (until its colour is read, `clones`): the net is often unsure which Era a token shows and splits it among
    them, none of them reaching the pieces' cut-off."""
    maps = heat[len(COLOURS) :]
    if clone_peak is None:
        found = peaks(maps, threshold, STRIDE)
    else:
        clones = maps[:CLONE_MAPS]
        strongest = clones.argmax(axis=0)
        found = [
            (int(strongest[int(y) // STRIDE, int(x) // STRIDE]), x, y, score)
            for _, x, y, score in peaks(clones.max(axis=0)[None], clone_peak, STRIDE)
        ]
        found += [(CLONE_MAPS + c, x, y, score) for c, x, y, score in peaks(maps[CLONE_MAPS:], threshold, STRIDE)]
    apart = piece_apart_px(heat.shape[-1] * STRIDE)
    kept: list[tuple[str, float, float, float]] = []
    for channel, x, y, score in sorted(found, key=lambda p: -p[3]):
        if all((x - kx) ** 2 + (y - ky) ** 2 >= apart**2 for _, kx, ky, _ in kept):
            kept.append((PIECES[channel], x, y, score))
    return kept


@dataclass(frozen=True)
class BoardPiece:
    label: str  # a `PIECES` label: CLONE:<Paradox Era>, VORTEX, MISSION, PAWN:<agent>
    era: str | None  # the Era it lies in (None: between Eras or off the ring)
    x: float  # frame pixels
    y: float
    score: float


@dataclass(frozen=True)
class EraCubes:
    era: str
    counts: dict[str, int]  # colour -> cubes
    cubes: tuple[tuple[str, float, float, float], ...]  # (colour, x, y in frame pixels, score)


@dataclass(frozen=True)
class BoardNet:
    """One heat-map net over the ring's cut, with the cut's side it was trained at and its tuned cut-offs; its maps
    say what it reads (the cubes' colours, and the pieces' maps when it has them)."""

    session: Any
    size: int  # the cut's side, pixels
    reference: np.ndarray  # the board's picture cut the same way
    reference_planes: np.ndarray  # its `planes`, as the net reads it (made once)
    masks: dict[str, np.ndarray]  # each Era's sector on the cut
    peak: float  # the cubes' cut-off
    piece_peak: float  # the pieces' cut-off
    reads_pieces: bool
    upright: bool = False  # whether it reads the cut turned to the camera (`upright_heat`, session 59)

    @classmethod
    def load(cls, model: Path, thresholds: Path, board_picture: np.ndarray, eras: Mapping[str, np.ndarray]) -> BoardNet:
        from vision.recognise.models import ModelError, session

        net = session(model)
        tuned = json.loads(thresholds.read_text()) if thresholds.is_file() else {}
        size = int(tuned.get("cut_px", CUT_PX))
        if not 64 <= size <= 2048 or size % STRIDE:
            raise ModelError(f"{thresholds}: 'cut_px' {size} is not a cut's side (64-2048, a multiple of {STRIDE})")
        channels = net.get_outputs()[0].shape[1]
        if channels not in (len(COLOURS), CHANNELS):
            raise ModelError(f"{model}: {channels} heat maps, expected {len(COLOURS)} (cubes) or {CHANNELS}")
        reference = reference_cut(board_picture, size)
        return cls(
            net,
            size,
            reference,
            planes(reference),
            era_masks(eras, size),
            float(tuned.get("peak", DEFAULT_PEAK)),
            float(tuned.get("piece_peak", DEFAULT_PEAK)),
            channels == CHANNELS,
            bool(tuned.get("upright", False)),
        )

    def cut(self, frame: np.ndarray, frame_from_board: np.ndarray) -> np.ndarray:
        return rectify(frame, frame_from_board, self.size)


class CubeCounter:
    """Counts cubes per Era on one registered board (its picture and its Era sectors, board fractions), and reads
    the pieces on the ring when the net has their maps. With a cube checker (`check.CHECK_MODEL_FILE`) the net's cube
    peaks are only candidates, and the checker's second look on a finer cut says which are cubes.

    Why one net for both: the checker judges every cube, so the net's cube maps need only give candidates, and one
    net over a 400 px cut read the held-out pieces as well as a second net over a 576 px cut did, in half the time
    a frame (session 40)."""

    def __init__(self, board_picture: np.ndarray, eras: Mapping[str, np.ndarray], models: Path) -> None:
        from vision.board.check import CHECK_MODEL_FILE, CHECK_THRESHOLDS_FILE, CubeChecker
        from vision.board.era_count import ERA_COUNT_MODEL_FILE, ERA_COUNT_THRESHOLDS_FILE, EraCounter

        self.cubes = BoardNet.load(models / MODEL_FILE, models / THRESHOLDS_FILE, board_picture, eras)
        self.checker = (
            CubeChecker.load(models / CHECK_MODEL_FILE, models / CHECK_THRESHOLDS_FILE, board_picture, eras)
            if (models / CHECK_MODEL_FILE).is_file()
            else None
        )
        # each Era read whole (session 56), where the checker's count per Era may be corrected
        self.whole = None
        if self.checker is not None and (models / ERA_COUNT_MODEL_FILE).is_file():
            self.whole = EraCounter.load(
                models / ERA_COUNT_MODEL_FILE, models / ERA_COUNT_THRESHOLDS_FILE, board_picture, eras
            )
        # the cut the cubes are placed on (its side and Era masks): the checker's fine cut, else the net's
        self.cube_cut: BoardNet | CubeChecker = self.checker or self.cubes
        # a clone token's Paradox Era read from its colour against the board's Eras, on the net's cut
        self.paradox: ParadoxReader | None = None
        self.fills: EraFills | None = None  # the Eras' fills on the net's cut, for the reader
        if self.pieces is not None and (models / PARADOX_FILE).is_file():
            self.paradox = ParadoxReader.load(models / PARADOX_FILE)
            self.fills = EraFills.of(self.pieces.reference, self.pieces.masks)

    @property
    def pieces(self) -> BoardNet | None:
        """The net when it has the pieces' maps, else None (a cubes-only net reads no pieces)."""
        return self.cubes if self.cubes.reads_pieces else None

    def look(self, frame: np.ndarray, frame_from_board: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the ring cut out of `frame` at the net's side, the net's heat maps over it)."""
        net = self.cubes
        cut = net.cut(frame, frame_from_board)
        if net.upright:
            eye = eye_on_cut(frame_from_board, (frame.shape[1], frame.shape[0]), net.size)
            return cut, upright_heat(net.session, cut, net.reference, eye)
        return cut, heat_of(net.session, cut, net.reference_planes)

    def find_cubes(
        self,
        frame: np.ndarray,
        frame_from_board: np.ndarray,
        heat: np.ndarray,
        cut: np.ndarray | None = None,
        whole_eras: bool = True,
    ) -> list[tuple[str, float, float, float]]:
        """The cubes (colour, x, y on `cube_cut`, score) among the net's `heat` for this frame (over its `cut`, cut
        again when not given): those the checker confirms when there is one, each Era's count then read whole
        (unless `whole_eras` is False, or no Era reader is shipped); else the net's peaks at its cut-off."""
        from vision.board.check import on_footprints, settle
        from vision.board.era_count import candidate_rows, eras_in_doubt, moved_places, reconcile, rows_array

        checker = self.checker
        if checker is None:
            return cube_peaks(heat, self.cubes.peak)
        fine_cut = checker.cut(frame, frame_from_board)
        frame_size = (frame.shape[1], frame.shape[0])
        if self.whole is None or not whole_eras:
            return checker.check(heat, self.cubes.size, fine_cut, frame_from_board, frame_size)
        upright = checker.upright or self.whole.upright
        eye = eye_on_cut(frame_from_board, frame_size, checker.size) if upright else None
        points, probs, offsets = checker.read(heat, self.cubes.size, fine_cut, eye if checker.upright else None)
        apart = checker.apart_sides * checker.side_px
        kept = settle(points, probs, offsets, checker.accept, apart)
        said = counts_of(kept, checker.masks)
        if cut is None:
            cut = self.cubes.cut(frame, frame_from_board)
        moved = moved_places(points, offsets)
        rows = rows_array(moved, probs, checker.size, self.cubes.size)
        spare = candidate_rows(moved, probs)
        doubted = eras_in_doubt(kept, moved, 1.0 - probs[:, 0], checker.masks, checker.side_px)
        given = {e: tuple(said[e][c] for c in COLOURS) for e in said}
        counts = self.whole.counts(cut, heat, rows, given, doubted, eye_resized(eye, checker.size, self.cubes.size))
        settled = reconcile(kept, spare, checker.masks, counts, apart)
        return on_footprints(settled, checker.target, frame_from_board, frame_size, checker.size)

    def read_pieces(self, cut: np.ndarray, heat: np.ndarray) -> list[tuple[str, float, float, float]]:
        """The pieces (label, x, y on the net's `cut`, score) that its `heat` marks; with the Paradox Era reader,
        clone tokens are found on their strongest map and their Era is read from their colour on `cut`."""
        net = self.pieces
        if net is None:
            return []
        if self.paradox is None or self.fills is None:
            return find_pieces(heat, net.piece_peak)
        return self.paradox.relabel(find_pieces(heat, net.piece_peak, self.paradox.clone_peak), cut, self.fills)

    def count(self, frame: np.ndarray, frame_from_board: np.ndarray) -> tuple[list[EraCubes], list[BoardPiece]]:
        """Every Era's cubes, and the pieces on the ring; `frame_from_board` maps board fractions to frame pixels
        (`register`)."""
        cut, heat = self.look(frame, frame_from_board)

        def in_frame(net: BoardNet | CubeChecker, x: float, y: float) -> tuple[float, float]:
            p = frame_from_board @ cut_from_fraction(net.size) @ np.array([x, y, 1.0])
            return float(p[0] / p[2]), float(p[1] / p[2])

        mine: dict[str, list[tuple[str, float, float, float]]] = {era: [] for era in self.cubes.masks}
        for colour, x, y, score in self.find_cubes(frame, frame_from_board, heat, cut):
            era = era_of(x, y, self.cube_cut.masks)
            if era is not None:
                mine[era].append((colour, *in_frame(self.cube_cut, x, y), score))
        eras = [
            EraCubes(era, {c: sum(1 for m in cubes if m[0] == c) for c in COLOURS}, tuple(cubes))
            for era, cubes in mine.items()
        ]
        net = self.pieces
        pieces = (
            [
                BoardPiece(label, era_of(x, y, net.masks), *in_frame(net, x, y), score)
                for label, x, y, score in self.read_pieces(cut, heat)
            ]
            if net is not None
            else []
        )
        return eras, pieces
