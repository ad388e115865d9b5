"""Centre heat maps, as the cube counter and the dice finder read them: a small net marks each object's centre with
a peak in a map a cell every `stride` input pixels, and an object is a local maximum above a cut-off."""

from __future__ import annotations

import cv2
import numpy as np

_NEIGHBOURHOOD = np.ones((3, 3), np.uint8)


def sigmoid(logits: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-logits))


def turned(a: np.ndarray, k: int, flip: bool) -> np.ndarray:
    """`a` turned by k quarter turns over its last two axes (rows, columns), then mirrored: an input and its maps
    alike, one (channels, H, W) or a batch (n, channels, H, W). A pixel at (x, y) of a square side s goes to
    (y, s - 1 - x) per turn, then to (s - 1 - x, y) when mirrored."""
    a = np.rot90(a, k, axes=(-2, -1))
    return np.ascontiguousarray(a[..., ::-1] if flip else a)


def cell_of(x: float, y: float, stride: int) -> tuple[float, float]:
    """Input pixels to map cells (fractional: the nearest cell is the rounded value), a cell's centre being its input
    pixels' middle, as `peaks` places it."""
    return (x - (stride - 1) / 2) / stride, (y - (stride - 1) / 2) / stride


def local_maxima(maps: np.ndarray, threshold: float) -> np.ndarray:
    """Where a map (rows, columns) or a stack of maps channels last (rows, columns, channels) is the highest of its
    3 x 3 cells (a dilation: beyond the edge counts as lower) and at or above `threshold`; channels last, one
    dilation serves every map."""
    return (maps >= cv2.dilate(maps, _NEIGHBOURHOOD).reshape(maps.shape)) & (maps >= threshold)


def peaks(heat: np.ndarray, threshold: float, stride: int) -> list[tuple[int, float, float, float]]:
    """(channel, x, y in input pixels, score) of every 3x3 local maximum of a channel's map at or above
    `threshold` (a cell's centre is its input pixels' middle). A map with nothing at the cut-off is skipped, and the
    neighbourhood's maximum is a dilation (beyond the edge counts as lower): most maps of a frame are empty, and this
    runs on every map of every frame."""
    out = []
    for c in range(heat.shape[0]):
        h = np.ascontiguousarray(heat[c], dtype=np.float32)
        if not h.size or h.max() < threshold:
            continue
        top = local_maxima(h, threshold)
        for y, x in zip(*np.nonzero(top), strict=True):
            out.append((c, x * stride + (stride - 1) / 2, y * stride + (stride - 1) / 2, float(h[y, x])))
    return out
