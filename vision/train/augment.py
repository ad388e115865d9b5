"""Training augmentations the board and dice nets share: quarter turns and mirrors applied alike to inputs, targets
and offsets, and the light of another camera and another print."""

from __future__ import annotations

import cv2
import numpy as np


def vary_light(rng: np.random.Generator, cut: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cut, reference) float32 as another camera and another print would show them: the cut's light varied per
    channel and offset, now and then blurred or noised; the reference's light varied less, now and then blurred (a
    player's own picture of the board is not the print)."""
    cut = cut.astype(np.float32) * rng.uniform(0.8, 1.2, 3) + rng.normal(0, 8)
    if rng.random() < 0.3:  # a camera less sharp than the renderer's
        cut = cv2.GaussianBlur(cut, (0, 0), float(rng.uniform(0.6, 1.6)))
    if rng.random() < 0.3:
        cut = cut + rng.normal(0, float(rng.uniform(2, 8)), cut.shape)
    ref = ref.astype(np.float32) * rng.uniform(0.9, 1.1, 3)
    if rng.random() < 0.3:
        ref = cv2.GaussianBlur(ref, (0, 0), float(rng.uniform(0.5, 1.5)))
    return cut, ref


def turned(a: np.ndarray, k: int, flip: bool) -> np.ndarray:
    """A (channels, H, W) array turned by k quarter turns and mirrored: inputs and targets alike."""
    a = np.rot90(a, k, axes=(1, 2))
    return np.ascontiguousarray(a[:, :, ::-1] if flip else a)


def turned_offset(offset: np.ndarray, k: int, flip: bool) -> np.ndarray:
    """An offset (dx, dy) in a window turned as `turned` turns it (k quarter turns, then mirrored)."""
    dx, dy = float(offset[0]), float(offset[1])
    for _ in range(k):  # np.rot90 over (y, x): a pixel at (x, y) goes to (y, side - 1 - x)
        dx, dy = dy, -dx
    return np.array([-dx if flip else dx, dy], np.float32)
