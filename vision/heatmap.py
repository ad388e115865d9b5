"""Centre heat maps, as the cube counter and the dice finder read them: a small net marks each object's centre with
a peak in a map a cell every `stride` input pixels, and an object is a local maximum above a cut-off."""

from __future__ import annotations

import numpy as np


def sigmoid(logits: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-logits))


def cell_of(x: float, y: float, stride: int) -> tuple[float, float]:
    """Input pixels to map cells (fractional: the nearest cell is the rounded value), a cell's centre being its input
    pixels' middle, as `peaks` places it."""
    return (x - (stride - 1) / 2) / stride, (y - (stride - 1) / 2) / stride


def peaks(heat: np.ndarray, threshold: float, stride: int) -> list[tuple[int, float, float, float]]:
    """(channel, x, y in input pixels, score) of every 3x3 local maximum of a channel's map at or above
    `threshold` (a cell's centre is its input pixels' middle)."""
    out = []
    for c in range(heat.shape[0]):
        h = heat[c]
        padded = np.pad(h, 1, constant_values=-1.0)
        neighbours = np.stack(
            [
                padded[1 + dy : 1 + dy + h.shape[0], 1 + dx : 1 + dx + h.shape[1]]
                for dy in (-1, 0, 1)
                for dx in (-1, 0, 1)
            ]
        )
        top = (h >= neighbours.max(axis=0)) & (h >= threshold)
        for y, x in zip(*np.nonzero(top), strict=True):
            out.append((c, x * stride + (stride - 1) / 2, y * stride + (stride - 1) / 2, float(h[y, x])))
    return out
