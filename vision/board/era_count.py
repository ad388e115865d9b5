"""A whole Era read at once: its square of the cut, the board's picture, the Era's own outline, the cube net's maps
and every candidate as the checker read it, in; the number of red, green and blue cubes standing on it, out.

Why: the checker judges one window (a cube and half its neighbours) at a time, so a touching row blurred into one bar
is read by pieces, and two readings of one cube, or one between two, are settled by distance alone. Reading the Era
whole sees the row's length and every reading beside the others (models/the-loop-cubes.md, session 56).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.board.check import softmax
from vision.board.cubes import COLOURS, STRIDE, about_centre, era_of, planes, view_axes
from vision.board.rectify import era_masks, reference_cut, resized

ERA_COUNT_MODEL_FILE = "the-loop-era-count.onnx"
# {"cut_px", "side", "bin", "margin", "upright"}: the cut it reads, its squares' side there and the binning they are
# read at, by how much its likeliest count must beat the checker's own to replace it (tuned), and whether each square
# is turned to the camera (session 60)
ERA_COUNT_THRESHOLDS_FILE = "the-loop-era-count.json"

ERA_SIDE = 176  # the square's side on the 400 px cut (110 mm): the widest Era (160 px) and a margin
# the square read binned 2 x 2 (0.8 px/mm, a cube 7 px): a quarter of the work, so that the whole board stays within
# the 50 ms a frame (at full size the reader took about 15 ms a frame)
ERA_BIN = 2
COUNT_CLASSES = (10, 6, 4)  # counts read per colour: red 0-9, green 0-5, blue 0-3
DOT_SIGMA = 1.5  # cut pixels: each candidate drawn as a spot this wide, as bright as the checker is sure
ERA_PLANES = 13  # the cut, the board's picture, the Era's outline, the cube net's three maps, the candidates' three
# an upright square is turned out of a wider one about the same centre: wide enough for the read square's diagonal
# (249 px) at any turn, its corners on even pixels as the read square's are
TURN_SIDE = 256


def era_centres(masks: Mapping[str, np.ndarray]) -> dict[str, tuple[int, int]]:
    """Each Era's square's centre (x, y): the middle of its outline's bounding box."""
    out = {}
    for era, mask in masks.items():
        ys, xs = np.nonzero(mask)
        out[era] = (2 * round(float(xs.min() + xs.max()) / 4), 2 * round(float(ys.min() + ys.max()) / 4))
    return out


def _square(image: np.ndarray, centre: tuple[int, int], side: int, fill: float) -> np.ndarray:
    """(c, side, side): the planes (c, h, w) of `image` in the square around `centre`, `fill` beyond its edge."""
    return _window(image, centre[0] - side // 2, centre[1] - side // 2, side, side, fill)


def _window(image: np.ndarray, x0: int, y0: int, width: int, height: int, fill: float) -> np.ndarray:
    """(c, height, width): the planes (c, h, w) of `image` from pixel (`x0`, `y0`) on, `fill` beyond its edge."""
    c, h, w = image.shape
    out = np.full((c, height, width), fill, np.float32)
    ax, ay, bx, by = max(x0, 0), max(y0, 0), min(x0 + width, w), min(y0 + height, h)
    if ax < bx and ay < by:
        out[:, ay - y0 : by - y0, ax - x0 : bx - x0] = image[:, ay:by, ax:bx]
    return out


def dots(rows: np.ndarray, centre: tuple[int, int], side: int) -> np.ndarray:
    """(3, side, side): each candidate (x, y on the cut, then each colour's probability) a spot per colour, in the
    square around `centre`."""
    return spots(rows, centre[0] - side // 2, centre[1] - side // 2, side, side)


def spots(rows: np.ndarray, x0: int, y0: int, width: int, height: int) -> np.ndarray:
    """(3, height, width): `dots` over the cut's pixels x0.. and y0.., as bright as the checker is sure of each
    colour; where spots overlap, the brighter."""
    out = np.zeros((len(COLOURS), height, width), np.float32)
    reach = int(np.ceil(3 * DOT_SIGMA))
    grid = np.arange(-reach, reach + 1)
    rows = np.asarray(rows, np.float32).reshape(-1, 2 + len(COLOURS))
    if not len(rows):
        return out
    local = rows[:, :2].astype(np.float64) - (x0, y0)
    near = np.array([round(float(v)) for v in local.ravel()], np.int64).reshape(-1, 2)  # as Python rounds
    inside = np.all((near >= -reach) & (near < np.array([width, height]) + reach), axis=1)
    local, near, probs = local[inside], near[inside], rows[inside, 2:]
    gx = np.exp(-((near[:, :1] + grid - local[:, :1]) ** 2) / (2 * DOT_SIGMA**2))
    gy = np.exp(-((near[:, 1:] + grid - local[:, 1:]) ** 2) / (2 * DOT_SIGMA**2))
    every = (probs[:, :, None, None] * (gy[:, :, None] * gx[:, None, :])[:, None]).astype(np.float32)
    for k, (ix, iy) in enumerate(near):
        ax, ay = max(ix - reach, 0), max(iy - reach, 0)
        bx, by = min(ix + reach + 1, width), min(iy + reach + 1, height)
        if ax < bx and ay < by:
            window = out[:, ay:by, ax:bx]
            sub = every[k, :, ay - iy + reach : by - iy + reach, ax - ix + reach : bx - ix + reach]
            np.maximum(window, sub, out=window)
    return out


def heat_planes(heat: np.ndarray, size: int) -> np.ndarray:
    """(3, size, size): the cube net's colour maps (a cell every `STRIDE` cut pixels) at the cut's resolution."""
    maps = np.moveaxis(np.asarray(heat[: len(COLOURS)], np.float32), 0, -1)
    up = cv2.resize(maps, (maps.shape[1] * STRIDE, maps.shape[0] * STRIDE), interpolation=cv2.INTER_LINEAR)
    return np.moveaxis(up, -1, 0)[:, :size, :size]


def era_input(
    cut_planes: np.ndarray,
    reference_planes: np.ndarray,
    mask: np.ndarray,
    heat_up: np.ndarray,
    rows: np.ndarray,
    centre: tuple[int, int],
    side: int = ERA_SIDE,
    binning: int = ERA_BIN,
    axes: np.ndarray | None = None,
) -> np.ndarray:
    """(ERA_PLANES, side / binning, side / binning) float32: what the count reader reads of one Era (planes centred
    on 0), each `binning` x `binning` block of the cut's pixels averaged; with `axes` (2, 2), the square turned along
    them about its centre (`era_inputs`)."""
    if axes is not None:  # only the wide square about the Era: the same values, a fraction of the work
        half = TURN_SIDE // 2
        rows = np.asarray(rows, np.float32).reshape(-1, 2 + len(COLOURS)).copy()
        rows[:, :2] -= (centre[0] - half, centre[1] - half)  # an even shift: `spots` rounds alike
        return era_inputs(
            _square(cut_planes, centre, TURN_SIDE, -0.5),
            binned(_square(reference_planes, centre, TURN_SIDE, -0.5), binning),
            [mask_square(mask, centre, TURN_SIDE, binning)],
            _square(heat_up, centre, TURN_SIDE, 0.0),
            rows,
            [(half, half)],
            side,
            binning,
            axes[None],
        )[0]
    full = np.concatenate(
        [
            _square(cut_planes, centre, side, -0.5),
            _square(reference_planes, centre, side, -0.5),
            _square(mask[None].astype(np.float32), centre, side, 0.0) - 0.5,
            _square(heat_up, centre, side, 0.0) - 0.5,
            dots(rows, centre, side) - 0.5,
        ]
    )
    return binned(full, binning)


def upright_axes(centres: list[tuple[int, int]], eye: np.ndarray | None) -> np.ndarray:
    """(n, 2, 2) float64: per Era's square centre, the axes that turn it so that the camera's foot on the board
    (`eye`, on the cut the squares are cut from) lies straight below it; the cut's own axes where there is no eye."""
    return view_axes([(float(x), float(y)) for x, y in centres], eye).astype(np.float64)


def mask_square(mask: np.ndarray, centre: tuple[int, int], side: int = ERA_SIDE, binning: int = ERA_BIN) -> np.ndarray:
    """(1, side / binning, side / binning): an Era's outline as `era_input` shows it (made once per board)."""
    return binned(_square(mask[None].astype(np.float32), centre, side, 0.0) - 0.5, binning)


def era_inputs(
    cut_planes: np.ndarray,
    reference_binned: np.ndarray,
    outlines: list[np.ndarray],
    heat_up: np.ndarray,
    rows: np.ndarray,
    centres: list[tuple[int, int]],
    side: int = ERA_SIDE,
    binning: int = ERA_BIN,
    axes: np.ndarray | None = None,
) -> np.ndarray:
    """(Eras, ERA_PLANES, side / binning, side / binning): `era_input` of every Era of one frame, the same values
    (the squares' corners on even pixels: `era_centres`), with the cut and the maps binned once for all Eras, and
    the board's picture (`reference_binned`) and the Eras' outlines (`mask_square`) binned once per board. Why: made
    Era by Era, the squares took 40 ms a frame; the issue allows the whole board 50. With `axes` (Eras, 2, 2; columns
    x, y: `upright_axes`) each square is turned along its own about its centre (the outlines then `TURN_SIDE` wide, as
    `era_input` cuts them before turning). Why turn: a cube seen at a slant shows its top face displaced away from the
    camera; a square turned so that the camera's foot lies straight below it shows every cube so, as the checker's
    windows and the cube net's cut are (sessions 58-60)."""
    if axes is not None:  # the planes laid channels last once over the span of the wide squares, then one warp per Era
        wide, small = TURN_SIDE, side // binning
        x0, y0 = (min(c[i] for c in centres) - wide // 2 for i in (0, 1))
        x1, y1 = (max(c[i] for c in centres) - wide // 2 + wide for i in (0, 1))
        span = (x0 // binning, y0 // binning, (x1 - x0) // binning, (y1 - y0) // binning)
        stack = np.empty((span[3], span[2], ERA_PLANES - 1), np.float32)
        stack[:, :, 0:3] = np.moveaxis(_window(binned(cut_planes, binning), *span, -0.5), 0, -1)
        stack[:, :, 3:6] = np.moveaxis(_window(reference_binned, *span, -0.5), 0, -1)
        stack[:, :, 6:9] = np.moveaxis(_window(binned(heat_up, binning), *span, 0.0), 0, -1) - np.float32(0.5)
        stack[:, :, 9:12] = np.moveaxis(binned(spots(rows, x0, y0, x1 - x0, y1 - y0), binning), 0, -1) - np.float32(0.5)
        corner = (wide // binning - small) / 2
        out = np.empty((len(centres), ERA_PLANES, small, small), np.float32)
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        for k, (centre, outline) in enumerate(zip(centres, outlines, strict=True)):
            turn = about_centre(np.asarray(axes[k], np.float64), wide // binning, (corner, corner))
            out[k, 6] = cv2.warpAffine(outline[0], turn, (small, small), flags=flags, borderMode=cv2.BORDER_REPLICATE)
            turn[:, 2] += ((centre[0] - wide // 2 - x0) // binning, (centre[1] - wide // 2 - y0) // binning)
            seen = cv2.warpAffine(stack, turn, (small, small), flags=flags, borderMode=cv2.BORDER_REPLICATE)
            out[k, :6], out[k, 7:] = np.moveaxis(seen[:, :, :6], -1, 0), np.moveaxis(seen[:, :, 6:], -1, 0)
        return out
    cut_b, heat_b = binned(cut_planes, binning), binned(heat_up, binning)
    small = side // binning
    # every square's spots drawn once, on the even-cornered span of all the squares
    x0, y0 = (min(c[i] for c in centres) - side // 2 for i in (0, 1))
    x1, y1 = (max(c[i] for c in centres) - side // 2 + side for i in (0, 1))
    canvas = binned(spots(rows, x0, y0, x1 - x0, y1 - y0), binning) - np.float32(0.5)
    out = np.empty((len(centres), ERA_PLANES, small, small), np.float32)
    for k, (centre, outline) in enumerate(zip(centres, outlines, strict=True)):
        at = (centre[0] // binning, centre[1] // binning)
        out[k, 0:3] = _square(cut_b, at, small, -0.5)
        out[k, 3:6] = _square(reference_binned, at, small, -0.5)
        out[k, 6:7] = outline
        out[k, 7:10] = _square(heat_b, at, small, 0.0) - 0.5
        left, top = (centre[0] - side // 2 - x0) // binning, (centre[1] - side // 2 - y0) // binning
        out[k, 10:13] = canvas[:, top : top + small, left : left + small]
    return out


def binned(planes_: np.ndarray, k: int) -> np.ndarray:
    """(c, h / k, w / k) float32: each k x k block of planes (c, h, w) averaged (h and w multiples of k)."""
    if k == 1:
        return planes_
    c, h, w = planes_.shape
    out = np.empty((c, h // k, w // k), np.float32)
    for i in range(c):  # plane by plane: OpenCV's area resampling of an exact k x k block is its mean
        out[i] = cv2.resize(planes_[i], (w // k, h // k), interpolation=cv2.INTER_AREA)
    return out


GIVEN = sum(COUNT_CLASSES)  # the checker's own count per colour, one-hot, given to the reader beside the picture

Reading = tuple[str, float, float, float]  # colour, x, y on a cut, probability


def one_hot_counts(counts: np.ndarray) -> np.ndarray:
    """(n, GIVEN) float32: each colour's count (n, 3) one-hot over its head's classes (the last one: that or more)."""
    counts = np.asarray(counts, np.int64).reshape(-1, len(COLOURS))
    out = np.zeros((len(counts), GIVEN), np.float32)
    at = 0
    for c, n in enumerate(COUNT_CLASSES):
        out[np.arange(len(counts)), at + np.minimum(counts[:, c], n - 1)] = 1.0
        at += n
    return out


def head_probabilities(logits: np.ndarray) -> list[np.ndarray]:
    """Per colour, (n, its classes) softmax probabilities of the reader's concatenated logits (n, sum of classes)."""
    return [softmax(part) for part in np.split(logits, np.cumsum(COUNT_CLASSES)[:-1], axis=1)]


def chosen_counts(probs: list[np.ndarray], given: np.ndarray, margin: float) -> np.ndarray:
    """(n, 3): per Era and colour, the reader's likeliest count where it beats the checker's own (`given`) by at
    least `margin` of probability, else the checker's."""
    out = np.asarray(given, np.int64).reshape(-1, len(COLOURS)).copy()
    for c, p in enumerate(probs):
        best = p.argmax(axis=1)
        mine = np.minimum(out[:, c], p.shape[1] - 1)
        beats = p[np.arange(len(p)), best] - p[np.arange(len(p)), mine] >= margin
        out[:, c] = np.where(beats & (best != mine), best, out[:, c])
    return out


def reconcile(
    kept: list[Reading],
    rows: list[Reading],
    masks: Mapping[str, np.ndarray],
    counts: Mapping[str, tuple[int, ...]],
    apart_px: float,
) -> list[Reading]:
    """The checker's readings (`kept`) made to agree with a count per Era and colour: the least sure dropped where
    there are too many; where too few, the surest of the other candidates (`rows`: every candidate read, at the
    place the checker moved it, with its probability of that colour) in that Era added, first those not within
    `apart_px` of a reading, then any. A count no candidate can place stays short."""
    kept_era = [era_of(r[1], r[2], masks) for r in kept]
    row_era = [era_of(r[1], r[2], masks) for r in rows]
    out: list[Reading] = []
    for era in masks:
        want = counts.get(era)
        mine = [r for r, e in zip(kept, kept_era, strict=True) if e == era]
        if want is None:
            out += mine
            continue
        spare = [r for r, e in zip(rows, row_era, strict=True) if e == era]
        for c, colour in enumerate(COLOURS):
            have = sorted((r for r in mine if r[0] == colour), key=lambda r: -r[3])[: want[c]]
            if len(have) < want[c]:
                taken = out + have + [r for r in mine if r[0] != colour]
                pool = sorted((r for r in spare if r[0] == colour), key=lambda r: -r[3])
                free = [all((r[1] - t[1]) ** 2 + (r[2] - t[2]) ** 2 >= apart_px**2 for t in taken) for r in pool]
                far = [r for r, f in zip(pool, free, strict=True) if f]
                near = [r for r, f in zip(pool, free, strict=True) if not f]
                have += (far + near)[: want[c] - len(have)]
            out += have
    return out


DOUBT = 0.05  # a candidate the checker calls a cube or not with less sureness than 1 - this is in doubt
NEAR_SIDES = 1.6  # two readings closer than this many cube sides may be one cube, or two touching


def eras_in_doubt(
    kept: list[Reading], points: np.ndarray, cube: np.ndarray, masks: Mapping[str, np.ndarray], side_px: float
) -> list[str]:
    """The Eras worth reading whole: where a candidate (`points`, moved by the checker; `cube` its probability of
    a cube) is in doubt, or two of the checker's readings (`kept`) stand closer than `NEAR_SIDES`. Why: elsewhere the
    reader's count agreed with the checker's on every validation Era it changed nothing in (session 56: 545 of 1,052
    Eras read, every Era it set right still read), and reading half the Eras keeps the whole board within 50 ms."""
    doubtful = {era_of(x, y, masks) for (x, y), p in zip(points, cube, strict=True) if DOUBT <= p <= 1 - DOUBT}
    placed = [(era_of(x, y, masks), x, y) for _, x, y, _ in kept]
    near = (NEAR_SIDES * side_px) ** 2
    crowded = {
        a[0]
        for k, a in enumerate(placed)
        for b in placed[k + 1 :]
        if a[0] == b[0] and (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2 < near
    }
    return [e for e in masks if e in doubtful | crowded]


def moved_places(points: list[tuple[float, float]], offsets: np.ndarray) -> np.ndarray:
    """(n, 2) float64: each candidate at the place the checker's offset moves it to (fine-cut pixels)."""
    return np.asarray(points, np.float64).reshape(-1, 2) + np.asarray(offsets, np.float64).reshape(-1, 2)


def candidate_rows(moved: np.ndarray, probs: np.ndarray) -> list[Reading]:
    """Every candidate as a reading of each colour (colour, x, y where the checker moved it (`moved_places`), that
    colour's probability): what `reconcile` may add."""
    return [
        (colour, float(moved[k, 0]), float(moved[k, 1]), float(probs[k, 1 + c]))
        for k in range(len(moved))
        for c, colour in enumerate(COLOURS)
    ]


def rows_array(moved: np.ndarray, probs: np.ndarray, fine: int, size: int) -> np.ndarray:
    """(n, 5) float32: each candidate where the checker moved it (`moved_places`), on the cut `size` wide (from the
    fine cut `fine` wide), and its probability of each colour: the candidates' spots the reader draws (`dots`)."""
    moved = np.asarray(moved, np.float32).reshape(-1, 2)
    places = resized(moved, fine, size) if len(moved) else moved
    return np.concatenate([np.asarray(places, np.float32).reshape(-1, 2), probs[:, 1:]], 1).astype(np.float32)


@dataclass(frozen=True)
class EraCounter:
    """The Era count reader with its board's cut and outlines, and the margin its count must win by."""

    session: Any
    size: int  # the cut it reads (the cube net's)
    side: int
    binning: int
    margin: float
    reference_binned: np.ndarray  # the board's picture's planes on the cut, binned
    masks: dict[str, np.ndarray]
    centres: dict[str, tuple[int, int]]
    outlines: dict[str, np.ndarray]  # each Era's outline in its square, binned (`mask_square`; `TURN_SIDE` upright)
    upright: bool = False  # whether each Era's square is turned to the camera (`era_inputs`, session 60)

    @classmethod
    def load(
        cls, model: Path, thresholds: Path, board_picture: np.ndarray, eras: Mapping[str, np.ndarray]
    ) -> EraCounter:
        from vision.recognise.models import ModelError, session

        net = session(model)
        try:
            tuned = json.loads(thresholds.read_text())
            size, side, margin = int(tuned["cut_px"]), int(tuned["side"]), float(tuned["margin"])
            binning, upright = int(tuned.get("bin", 1)), bool(tuned.get("upright", False))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ModelError(f"{thresholds}: expected JSON with cut_px, side, bin and margin ({e})") from e
        if not 64 <= size <= 2048 or not 16 <= side <= size or not 0 <= margin <= 1 or binning not in (1, 2, 4):
            raise ModelError(f"{thresholds}: cut_px {size}, side {side}, bin {binning} or margin {margin} out of range")
        shape = net.get_inputs()[0].shape
        if shape[1] != ERA_PLANES or shape[-1] != side // binning or side % binning:
            expected = f"{ERA_PLANES} of {side} px binned {binning}"
            raise ModelError(f"{model}: reads {shape[1]} planes of {shape[-1]} px, expected {expected}")
        masks = era_masks(eras, size)
        reference = binned(planes(reference_cut(board_picture, size)), binning)
        centres = era_centres(masks)
        cut_side = TURN_SIDE if upright else side
        outlines = {e: mask_square(masks[e], centres[e], cut_side, binning) for e in masks}
        return cls(net, size, side, binning, margin, reference, masks, centres, outlines, upright)

    def counts(
        self,
        cut: np.ndarray,
        heat: np.ndarray,
        rows: np.ndarray,
        given: Mapping[str, tuple[int, ...]],
        eras: list[str] | None = None,
        eye: np.ndarray | None = None,
    ) -> dict[str, tuple[int, ...]]:
        """Per Era, the cubes of each colour: the reader's count of the Era's square of `cut` (the cube net's,
        `heat` its maps, `rows` every candidate as `rows_array` gives it) where it beats the checker's (`given`).
        Only `eras` are read when named (an Era no candidate stands in keeps the checker's count: `reconcile` could
        place no cube there). An upright reader turns each square to the camera's `eye` on `cut` (`eye_on_cut`)."""
        out = {e: tuple(int(v) for v in given[e]) for e in self.masks}
        eras = [e for e in self.masks if eras is None or e in eras]
        if not eras:
            return out
        batch = era_inputs(
            planes(cut),
            self.reference_binned,
            [self.outlines[e] for e in eras],
            heat_planes(heat, self.size),
            rows,
            [self.centres[e] for e in eras],
            self.side,
            self.binning,
            upright_axes([self.centres[e] for e in eras], eye) if self.upright else None,
        )
        mine = np.array([given[e] for e in eras])
        logits = self.session.run(None, {"x": batch, "counts": one_hot_counts(mine)})[0]
        chosen = chosen_counts(head_probabilities(logits), mine, self.margin)
        return out | {e: tuple(int(v) for v in chosen[k]) for k, e in enumerate(eras)}
