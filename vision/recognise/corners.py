"""Card corners at the frame's own resolution, and the one rule that turns a corner into the reader's upright crop.

Identity lives in a card's corner index, 15-25 px tall in a 720p frame, so the corner finder looks at the frame at
full size (a small fully-convolutional net, stride 4) rather than a downscaled whole. It finds the printed corners
of cards, face up or face down, class-agnostically, and at each corner the card's two edges: `a` along the short
edge and `b` along the long edge, both pointing into the card, as long as the card's sides. That frame is exact
geometry: it says where the index must be, at which scale and which way up, so the reader sees every deck at one
scale and angle (`corner_crop`), and it says where the rest of the card is, so corners group into cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.recognise.models import ModelError, session

STRIDE = 4  # the finder's output grid, in frame pixels
REG_SCALE = 64.0  # edge vectors are regressed in units of this many pixels
CORNER_KINDS = ("up", "down")  # a face-up card's corner, a face-down card's corner
# output channels: a corner's heat logit, the logit that it is face down, sub-cell offset (x, y), a (x, y), b (x, y)
N_OUTPUTS = 2 + 2 + 4
MAX_SIDE = 1280  # frames are read at most this wide (a phone photo is shrunk): cards then span the trained sizes
# A phone close-up holds cards wider than any table view (the finder was trained on cards about 30-340 px wide), and
# its pips and court art then look like small cards' corners. A second, coarse pass sees the frame COARSE times
# smaller: it finds those cards' corners at a trained scale, for about a sixteenth of the first pass's work.
COARSE = 4
LARGE_CARD = 240.0  # px of the (shrunk) frame: a coarse corner narrower than this (60 px there) is the first pass's

# The reader's crop, in units of the card's width from the corner: along a (across the card) and along b (down it).
# A standard index sits inside x 0.02-0.30, y 0.02-0.48; the margin leaves room for an imprecise corner.
CROP_BOX = (-0.05, -0.05, 0.35, 0.55)
READ_W, READ_H = 40, 60  # the crop's pixels: about 100 px per card width, an index 25-35 px tall


@dataclass(frozen=True)
class Corner:
    kind: str  # "up" or "down", as the finder guesses it; grouping and reading do not rely on it (see rectified.py)
    score: float
    point: np.ndarray  # (2,) frame pixels: the printed corner
    a: np.ndarray  # (2,) to the neighbouring corner along the short edge
    b: np.ndarray  # (2,) to the neighbouring corner along the long edge

    @property
    def width(self) -> float:
        return float(np.linalg.norm(self.a))

    def card_quad(self) -> np.ndarray:
        """The card this corner belongs to, as the corner and its edges place it (a parallelogram)."""
        p, a, b = self.point, self.a, self.b
        return np.array([p, p + a, p + a + b, p + b], np.float32)

    def region_quad(self) -> np.ndarray:
        """The reading region (CROP_BOX) in frame pixels, listed as the upright crop's TL, TR, BR, BL."""
        quad = reading_region(self.point, self.a, self.b).astype(np.float32)
        return quad if handedness(self.a, self.b) > 0 else quad[[1, 0, 3, 2]]


def printed_corner(quad: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Corner k of a card outlined TL, TR, BR, BL as printed: its point, its edge to the neighbour along the short
    side (a) and along the long side (b). The one rule the finder is taught by, the reader's crops are cut by, and
    the benches score against."""
    q = np.asarray(quad, np.float32)
    return q[k], q[(1, 0, 3, 2)[k]] - q[k], q[(3, 2, 1, 0)[k]] - q[k]


def reading_region(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """CROP_BOX's corners in frame pixels, in card order (before any mirroring)."""
    m = reading_map(point, a, b).astype(np.float64)
    x0, y0, x1, y1 = CROP_BOX
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]) @ m[:, :2].T + m[:, 2]


def right_handed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For corners with edges a, b (each (n, 2)): True where (a, b) turn like the image's (x, y), as a card's top-left
    and bottom-right corners do seen from above."""
    a, b = np.asarray(a, np.float64).reshape(-1, 2), np.asarray(b, np.float64).reshape(-1, 2)
    return a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0] >= 0


def handedness(a: np.ndarray, b: np.ndarray) -> float:
    """+1 for one right-handed corner (`right_handed`), -1 for the other hand."""
    return 1.0 if bool(right_handed(a, b)[0]) else -1.0


def swapped_edges(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A corner's frame with its short and long edges the other way round, each keeping its own length's place: the
    new short edge runs along the old long one at the old short one's length (the card's width, which sets the
    reading scale), and the new long edge along the old short one at the old long one's length. How the finder errs
    on about one corner in seven (session 19), and how the reader is taught what such a frame shows (session 20)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    short, long_ = np.linalg.norm(a, axis=-1, keepdims=True), np.linalg.norm(b, axis=-1, keepdims=True)
    return (b / np.maximum(long_, 1e-6) * short).astype(np.float32), (a / np.maximum(short, 1e-6) * long_).astype(
        np.float32
    )


def reading_maps(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, 2, 3) affine maps from card-width units (x across along a, y down along b) to frame pixels, one per corner
    (points, a, b each (n, 2)). Both axes are in units of the card's width, so a tall or short deck is read at one
    scale."""
    points = np.asarray(points, np.float64).reshape(-1, 2)
    a, b = np.asarray(a, np.float64).reshape(-1, 2), np.asarray(b, np.float64).reshape(-1, 2)
    width = np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-3)
    across = a / width * width
    down = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-3) * width
    return np.stack([across, down, points], axis=2).astype(np.float32)


def reading_map(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`reading_maps` for one corner: 2x3."""
    return reading_maps(point, a, b)[0]


def crop_maps(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, 2, 3) affines from the upright crop's pixels (u, v) to frame pixels, one per corner (points, a, b each
    (n, 2)): crop pixel (u, v) is the card-width point (x0 + (u + 0.5) * per_px, y0 + ...) of CROP_BOX along the
    corner's frame (`reading_map`), before any mirroring."""
    m = reading_maps(points, a, b).astype(np.float64)
    across, down, points = m[:, :, 0], m[:, :, 1], m[:, :, 2]
    x0, y0, x1, y1 = CROP_BOX
    per_u, per_v = (x1 - x0) / READ_W, (y1 - y0) / READ_H  # card-width units per crop pixel
    origin = points + across * (x0 + per_u / 2) + down * (y0 + per_v / 2)
    return np.stack([across * per_u, down * per_v, origin], axis=2)


def corner_crops(image: np.ndarray, points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, READ_H, READ_W, 3) upright crops of n corners' reading regions, each shrunk by area on its own (read from a
    `Pyramid` instead, validation lost 0.4 points of face-up precision to save about 1 ms a busy frame: session 17).
    A corner whose edges turn the other way (a card's top-right or bottom-left) is mirrored back, so a four-index
    deck's other indices read upright too, with the corner at the crop's top right."""
    maps = crop_maps(points, a, b)
    if not len(maps):
        return np.zeros((0, READ_H, READ_W, 3), np.uint8)
    left = ~right_handed(a, b)
    crops = np.stack([warp_area(image, m, (READ_W, READ_H)) for m in maps])
    crops[left] = crops[left, :, ::-1]
    return crops


def corner_crop(image: np.ndarray, point: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`corner_crops` for one corner."""
    return corner_crops(image, point, a, b)[0]


def warp_area(image: np.ndarray, to_frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The image resampled along `to_frame` (2x3, output pixel -> frame pixel) into a `size` (w, h) patch. Where
    one output pixel spans more than 1.5 frame pixels, the region is shrunk by area first, never read through
    aliasing."""
    m = np.asarray(to_frame, np.float64).copy()
    shrink = float(np.linalg.norm(m[:, 0]))  # frame pixels per output pixel
    if shrink > 1.5:
        w, h = size
        edges = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64) - 0.5  # the output's outer pixel edges
        corners = edges @ m[:, :2].T + m[:, 2]
        lo = np.maximum(np.floor(corners.min(axis=0)) - 2, 0).astype(int)
        hi = np.minimum(np.ceil(corners.max(axis=0)) + 2, [image.shape[1], image.shape[0]]).astype(int)
        k = 1.0 / shrink
        if (hi - lo).min() * k >= 2:  # a region mostly off the frame may leave less than a pixel to shrink to
            image = cv2.resize(image[lo[1] : hi[1], lo[0] : hi[0]], None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
            m = m * k
            m[:, 2] -= lo * k
    return cv2.warpAffine(
        image, m, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE
    )


class Pyramid:
    """A frame and its halvings by area, made as they are needed: an output pixel that spans more than 1.5 frame
    pixels is read from the level where it spans at most that, instead of shrinking each region on its own
    (`warp_area`). Close to `warp_area`'s result, and a fraction of its time when many regions are cut from one frame
    (session 17)."""

    MAX_LEVEL = 4

    def __init__(self, image: np.ndarray) -> None:
        self.levels = [image]

    def level(self, k: int) -> np.ndarray:
        while len(self.levels) <= k:
            top = self.levels[-1]
            half = ((top.shape[1] + 1) // 2, (top.shape[0] + 1) // 2)
            self.levels.append(cv2.resize(top, half, interpolation=cv2.INTER_AREA))
        return self.levels[k]

    def warp(self, to_frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        """The frame resampled along `to_frame` (2x3, output pixel -> frame pixel) into a `size` (w, h) picture."""
        m = np.asarray(to_frame, np.float64)
        shrink = float(np.linalg.norm(m[:, 0]))
        k = min(int(np.ceil(np.log2(shrink / 1.5))), self.MAX_LEVEL) if shrink > 1.5 else 0
        if k:
            m = m / 2**k
            m[:, 2] += 0.5 / 2**k - 0.5  # pixel centres: frame pixel x lies at (x + 0.5) / 2^k - 0.5 on level k
        return cv2.warpAffine(
            self.level(k), m, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE
        )


def frame_scale(shape: Sequence[int], max_side: int = MAX_SIDE) -> float:
    """The factor a frame is shrunk by before finding corners: at most MAX_SIDE wide or tall."""
    return min(1.0, max_side / max(shape[0], shape[1]))


def finder_blob(frame: np.ndarray, shrink: float = 1.0) -> tuple[np.ndarray, float]:
    """(1, 3, H, W) float32 RGB 0-1, padded to a multiple of 32, and the scale applied to the frame (`shrink` times
    smaller than the frame's reading size)."""
    scale = frame_scale(frame.shape) / shrink
    if scale < 1.0:
        frame = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    h, w = frame.shape[:2]
    ph, pw = -h % 32, -w % 32
    if ph or pw:
        frame = cv2.copyMakeBorder(frame, 0, ph, 0, pw, cv2.BORDER_CONSTANT, value=(114, 114, 114))
    # RGB planes, each cast and scaled in one pass (half the time of a transpose, a cast and a division; the same
    # values)
    blob = np.empty((1, 3, *frame.shape[:2]), np.float32)
    for plane, channel in zip(cv2.split(frame)[::-1], blob[0], strict=True):
        np.divide(plane, np.float32(255.0), out=channel)
    return blob, scale


def decode(
    output: np.ndarray, min_score: float, scale: float = 1.0, max_corners: int = 400, min_width: float = 0.0
) -> list[Corner]:
    """Peaks of the heat maps (a 3x3 local maximum above min_score) with their offsets and edges, in frame pixels
    of the unscaled frame, best first; `min_width`: only corners of cards at least that wide (frame pixels).
    Vectorised: a busy frame has a hundred peaks or more, and this runs on every frame."""
    out = output[0]
    h = np.ascontiguousarray(1.0 / (1.0 + np.exp(-out[0])), np.float32)
    ys, xs = np.nonzero((h >= min_score) & (h >= cv2.dilate(h, np.ones((3, 3), np.uint8))))
    k = len(CORNER_KINDS)
    points = ((np.stack([xs, ys], axis=1).astype(np.float32) + out[k : k + 2, ys, xs].T) * STRIDE / scale).astype(
        np.float32
    )
    reg = out[k + 2 :, ys, xs].T * REG_SCALE
    a, b = reg[:, :2] / scale, reg[:, 2:] / scale
    scores = h[ys, xs]
    down = out[1, ys, xs] > 0
    rows = np.flatnonzero(np.linalg.norm(a, axis=1) >= min_width) if min_width > 0 else np.arange(len(ys))
    rows = rows[np.argsort(-scores[rows], kind="stable")][:max_corners]
    return [
        Corner(CORNER_KINDS[1] if down[i] else CORNER_KINDS[0], float(scores[i]), points[i], a[i], b[i]) for i in rows
    ]


class CornerFinder:
    """Runs the corner finder's ONNX graph (any frame size: the graph is fully convolutional)."""

    def __init__(self, path: Path, threads: int = 2) -> None:
        self.path = path
        self.session = session(path, threads)
        outputs = self.session.get_outputs()
        channels = outputs[0].shape[1]
        if channels != N_OUTPUTS:
            raise ModelError(f"{path}: {channels} output channels, expected {N_OUTPUTS} (a corner finder)")
        self.input_name = self.session.get_inputs()[0].name

    def raw(self, frame: np.ndarray, shrink: float = 1.0) -> tuple[np.ndarray, float]:
        blob, scale = finder_blob(frame, shrink)
        return self.session.run(None, {self.input_name: blob})[0], scale

    def find(self, frame: np.ndarray, min_score: float = 0.3) -> list[Corner]:
        output, scale = self.raw(frame)
        return decode(output, min_score, scale)

    def find_large(self, frame: np.ndarray, min_score: float = 0.3) -> list[Corner]:
        """The corners of cards too large for `find` (at least LARGE_CARD px wide in the frame it reads), found in
        the frame shrunk COARSE times more; best first."""
        output, scale = self.raw(frame, COARSE)
        return decode(output, min_score, scale, min_width=LARGE_CARD / frame_scale(frame.shape))
