"""Training targets for centre heat maps (`vision.heatmap`): CenterNet's Gaussian peaks, and a loss weight that
neither teaches nor punishes around objects too hidden to ask for."""

from __future__ import annotations

import numpy as np

from vision.heatmap import cell_of


def heat_targets(
    points: np.ndarray, cells: tuple[int, int], channels: int, stride: int, sigma: float, seen_min: float
) -> tuple[np.ndarray, np.ndarray]:
    """Heat (channels, rows, cols) with a Gaussian peak (exactly 1 at its cell) at each object seen at least
    `seen_min`, and the weight (0 within 2.5 cells of the less seen ones). `points` rows: x, y in input pixels,
    channel, visible share."""
    rows, cols = cells
    heat = np.zeros((channels, rows, cols), np.float32)
    weight = np.ones((channels, rows, cols), np.float32)
    yy, xx = np.mgrid[0:rows, 0:cols]
    for x, y, channel, seen in points:
        cx, cy = cell_of(x, y, stride)
        if not (-2 <= cx < cols + 2 and -2 <= cy < rows + 2):
            continue
        d2 = (xx - cx) ** 2 + (yy - cy) ** 2
        if seen >= seen_min:
            ix, iy = round(cx), round(cy)
            blob = np.exp(-d2 / (2 * sigma**2))
            if 0 <= ix < cols and 0 <= iy < rows:
                blob[iy, ix] = 1.0
            heat[int(channel)] = np.maximum(heat[int(channel)], blob)
        else:
            weight[:, d2 <= 2.5**2] = 0.0
    return heat, weight
