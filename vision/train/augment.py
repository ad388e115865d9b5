"""Training augmentations the board and dice nets share: the light of another camera and another print (quarter turns
and mirrors: `vision.heatmap.turned`, which the runtime's checker reads its views with too)."""

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
