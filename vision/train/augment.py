"""Training augmentations the board and dice nets share: the light of another camera and another print (quarter turns
and mirrors: `vision.heatmap.turned`, which the runtime's checker reads its views with too)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class Light:
    """One camera's and one print's light, drawn once so that two pictures of one place (a window and its wide
    window, `vision.board.check.wide_windows`) can be shown in it alike."""

    gains: np.ndarray  # the cut's, per channel
    offset: float
    blur: float  # the cut's Gaussian blur in its own pixels (0: none)
    noise: float  # the cut's noise, grey levels (0: none)
    ref_gains: np.ndarray
    ref_blur: float
    noise_seed: int


def draw_light(rng: np.random.Generator) -> Light:
    """The cut's light varied per channel and offset, now and then blurred (a camera less sharp than the renderer's)
    or noised; the reference's light varied less, now and then blurred (a player's own picture of the board is not
    the print)."""
    gains, offset = rng.uniform(0.8, 1.2, 3), float(rng.normal(0, 8))
    blur = float(rng.uniform(0.6, 1.6)) if rng.random() < 0.3 else 0.0
    noise = float(rng.uniform(2, 8)) if rng.random() < 0.3 else 0.0
    ref_gains = rng.uniform(0.9, 1.1, 3)
    ref_blur = float(rng.uniform(0.5, 1.5)) if rng.random() < 0.3 else 0.0
    return Light(gains, offset, blur, noise, ref_gains, ref_blur, int(rng.integers(0, 2**31)))


def relight(light: Light, cut: np.ndarray, ref: np.ndarray, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(cut, reference) float32 in `light`, for pictures `scale` times as many pixels per mm as the ones `light` was
    drawn for: blur that much narrower and noise that much weaker (a 2 x 2 block's mean halves a pixel's noise)."""
    cut = cut.astype(np.float32) * light.gains + light.offset
    if light.blur:
        cut = cv2.GaussianBlur(cut, (0, 0), light.blur * scale)
    if light.noise:
        cut = cut + np.random.default_rng(light.noise_seed).normal(0, light.noise * scale, cut.shape)
    ref = ref.astype(np.float32) * light.ref_gains
    if light.ref_blur:
        ref = cv2.GaussianBlur(ref, (0, 0), light.ref_blur * scale)
    return cut, ref


def vary_light(rng: np.random.Generator, cut: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cut, reference) float32 as another camera and another print would show them (`draw_light`)."""
    return relight(draw_light(rng), cut, ref)


def off_bearing(rng: np.random.Generator, axes: np.ndarray, degrees: float) -> np.ndarray:
    """Upright axes (columns x, y; one (2, 2) or a stack) turned by up to `degrees` either way and, half the time,
    mirrored about their y axis. Why: the camera's bearing comes from a placement that errs by a few degrees, and a
    mirror keeps the camera below what is seen, where a quarter turn would not."""
    turn = np.radians(rng.uniform(-degrees, degrees))
    c, s = np.cos(turn), np.sin(turn)
    out = axes @ np.array([[c, -s], [s, c]], axes.dtype)
    if rng.random() < 0.5:
        out[..., 0] *= -1
    return out
