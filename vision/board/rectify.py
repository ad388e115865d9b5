"""The Era ring cut out of a frame, upright and at one scale, given where the board lies.

Everything on the board is counted on this cut, never on the raw frame: whatever the camera's height, tilt and yaw,
a cube is then about the same number of pixels, and the board's own picture (cut the same way) says what the
camera would see with nothing on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import cv2
import numpy as np

RING = (0.2, 0.8)  # the cut: this span of the board picture's width and height (the ring of Eras lies in 0.22-0.78)
CUT_PX = 576  # the cut's side: about 2.3 px/mm on a 420 mm board (a frame holds 1.2-2.6 at the board), a cube 18-23 px
# (the training scenes' cuts; each net says the side it reads in its thresholds file: `cubes.BoardNet`)
# the corners of the square the ring of Eras fills (board fractions): where registration errors are measured and made
RING_CORNERS = ((0.22, 0.22), (0.78, 0.22), (0.78, 0.78), (0.22, 0.78))


def px_per_mm(size: int) -> float:
    """A cut's pixels per millimetre on a 420 mm board (the stand-in's size; a guess for a real one)."""
    return size / ((RING[1] - RING[0]) * 420.0)


def resized(values: np.ndarray, size: int, side: int) -> np.ndarray:
    """Pixel coordinates on a cut `size` wide moved to the same ring cut `side` wide (pixel centres kept)."""
    return (values + 0.5) * (side / size) - 0.5


def cut_from_fraction(size: int = CUT_PX) -> np.ndarray:
    """Homography from the pixels of a cut `size` pixels wide to board fractions (0-1 across the board picture)."""
    scale = (RING[1] - RING[0]) / size
    return np.array([[scale, 0.0, RING[0] + scale / 2], [0.0, scale, RING[0] + scale / 2], [0.0, 0.0, 1.0]])


def rectify(frame: np.ndarray, frame_from_board: np.ndarray, size: int = CUT_PX) -> np.ndarray:
    """The ring cut out of `frame`, `size` pixels wide; `frame_from_board` maps board fractions to frame pixels."""
    to_frame = frame_from_board @ cut_from_fraction(size)
    return cv2.warpPerspective(
        frame, to_frame, (size, size), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_CONSTANT
    )


def reference_cut(board_picture: np.ndarray, size: int = CUT_PX) -> np.ndarray:
    """The board's own picture (BGR or BGRA, any size) cut as `rectify` cuts a frame: what an empty board shows."""
    picture = board_picture[..., :3]
    h, w = picture.shape[:2]
    x0, x1 = (round(f * w) for f in RING)
    y0, y1 = (round(f * h) for f in RING)
    return cv2.resize(np.ascontiguousarray(picture[y0:y1, x0:x1]), (size, size), interpolation=cv2.INTER_AREA)


def to_cut(points_fraction: np.ndarray, size: int = CUT_PX) -> np.ndarray:
    """Board fractions to the pixels of a cut `size` pixels wide."""
    pts = np.asarray(points_fraction, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, np.linalg.inv(cut_from_fraction(size))).reshape(-1, 2)


def era_masks(regions: Mapping[str, Sequence[Sequence[float]]], size: int = CUT_PX) -> dict[str, np.ndarray]:
    """Each Era's sector (board fractions) as a mask over a cut `size` pixels wide."""
    masks = {}
    for era, polygon in regions.items():
        mask = np.zeros((size, size), np.uint8)
        cv2.fillPoly(mask, [np.round(to_cut(np.asarray(polygon), size)).astype(np.int32)], 1)
        masks[era] = mask.astype(bool)
    return masks


def difference(cut: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Per cut pixel, how far it departs (summed over B, G, R) from the board's picture fitted to the cut's light
    (`in_light`), so that only what the board's print cannot explain stands out."""
    return np.abs(cut.astype(np.float32) - in_light(cut, reference)).sum(axis=2)


def in_light(cut: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The reference picture as the cut's light shows it (float32 BGR): a gain and an offset per channel, fitted
    twice, the second time without the pixels that differed most (whatever stands on the board). The pixels are
    laid out channel by channel: numpy's sums along a row of a few thousand are contiguous then, and a mission
    spot's fit (3,600 pixels) takes 0.5 ms, not 0.8."""
    h, w = cut.shape[:2]
    x = _channels(reference)
    y = _channels(cut)
    residual = np.abs(y - _line_fit(x, y, x)).sum(axis=0)
    keep = residual <= np.percentile(residual, 70)  # (<=: a cut of one colour keeps every pixel)
    return cv2.merge(list(_line_fit(x[:, keep], y[:, keep], x).reshape(3, h, w)))


def _channels(image: np.ndarray) -> np.ndarray:
    """(3, pixels) float32 of a BGR image."""
    return np.stack(cv2.split(np.ascontiguousarray(image[..., :3]))).reshape(3, -1).astype(np.float32)


def _line_fit(x: np.ndarray, y: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Least squares y = gain * x + offset per channel ((3, n) each), evaluated at `at` (a flat channel: gain 0)."""
    n = max(x.shape[1], 1)
    mx, my = x.sum(axis=1) / n, y.sum(axis=1) / n
    var = np.einsum("ij,ij->i", x, x) / n - mx * mx
    cov = np.einsum("ij,ij->i", x, y) / n - mx * my
    gain = np.where(var > 1e-3, cov / np.maximum(var, 1e-3), 0.0).astype(np.float32)
    return at * gain[:, None] + (my - mx * gain).astype(np.float32)[:, None]
