"""Photometric effects: what a cheap camera in room light does to a perfect composite.

Everything here changes pixels, never geometry, so labels computed before these effects stay exact. The order
follows the physics: light falls on the scene (shadows, lighting gradient, glare), the sensor sees it (white
balance, exposure, blur, noise), the encoder compresses it (JPEG).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np


@dataclass(frozen=True)
class EffectParams:
    """Every random photometric choice for one frame; `none()` gives a clean render for label tests."""

    light_gradient: tuple[float, float, float]  # gain slope in x, slope in y, vignette strength
    light_level: float  # overall exposure gain
    white_balance: tuple[float, float, float]  # BGR gains
    gamma: float
    shadow_strength: float  # 0 = no shadows
    shadow_offset: tuple[float, float]  # light direction: shadow shift per unit of height, pixels
    glare: tuple[float, float, float, float]  # centre x, y (fraction of frame), radius (fraction of width), strength
    defocus_sigma: float
    motion: tuple[float, float]  # length in pixels, angle in degrees
    noise_sigma: float  # read noise at 0-255; shot noise scales with sqrt(signal)
    jpeg_quality: int  # 0 = no JPEG round trip

    @classmethod
    def none(cls) -> EffectParams:
        return cls(
            light_gradient=(0.0, 0.0, 0.0),
            light_level=1.0,
            white_balance=(1.0, 1.0, 1.0),
            gamma=1.0,
            shadow_strength=0.0,
            shadow_offset=(0.0, 0.0),
            glare=(0.5, 0.5, 0.1, 0.0),
            defocus_sigma=0.0,
            motion=(0.0, 0.0),
            noise_sigma=0.0,
            jpeg_quality=0,
        )

    def without_shadows(self) -> EffectParams:
        return replace(self, shadow_strength=0.0)


def random_effects(rng: np.random.Generator) -> EffectParams:
    """Ranges chosen from what webcams under lamps and daylight produce; blur and glare are present only in a
    minority of frames, as in a real session where most frames are taken while nothing moves."""
    angle = rng.uniform(0, 2 * np.pi)
    shadow_len = rng.uniform(0.5, 2.5)
    glare_on = rng.random() < 0.35
    moving = rng.random() < 0.2
    return EffectParams(
        light_gradient=(float(rng.normal(0, 0.25)), float(rng.normal(0, 0.25)), float(rng.uniform(0.0, 0.45))),
        light_level=float(rng.uniform(0.6, 1.25)),
        white_balance=tuple(float(g) for g in rng.normal(1.0, 0.07, 3)),
        gamma=float(rng.uniform(0.8, 1.2)),
        shadow_strength=float(rng.uniform(0.15, 0.5)),
        shadow_offset=(float(np.cos(angle) * shadow_len), float(np.sin(angle) * shadow_len)),
        glare=(
            float(rng.uniform(0.1, 0.9)),
            float(rng.uniform(0.1, 0.9)),
            float(rng.uniform(0.05, 0.2)),
            float(rng.uniform(0.3, 0.9)) if glare_on else 0.0,
        ),
        defocus_sigma=float(rng.choice([0.0, rng.uniform(0.3, 1.0), rng.uniform(1.0, 2.2)], p=[0.45, 0.4, 0.15])),
        motion=(float(rng.uniform(3, 14)) if moving else 0.0, float(rng.uniform(0, 180))),
        noise_sigma=float(rng.uniform(1.0, 6.0)),
        jpeg_quality=int(rng.integers(45, 96)),
    )


def cast_shadow(
    canvas: np.ndarray,
    alpha: np.ndarray,
    origin: tuple[int, int],
    shift: tuple[float, float],
    blur: float,
    strength: float,
) -> None:
    """Darken the canvas under an object's soft, shifted silhouette (in place) before the object is pasted; a card
    lying flat casts a thin rim, a hand held above the table a wide, soft, displaced one."""
    if strength <= 0.0:
        return
    pad = int(np.ceil(3 * blur + max(abs(shift[0]), abs(shift[1])))) + 1
    padded = cv2.copyMakeBorder(alpha, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    moved = cv2.warpAffine(padded, np.float32([[1, 0, shift[0]], [0, 1, shift[1]]]), padded.shape[::-1])
    if blur > 0:
        moved = cv2.GaussianBlur(moved, (0, 0), blur)
    region = _clip_region(canvas.shape, origin[0] - pad, origin[1] - pad, moved.shape[1], moved.shape[0])
    if region is None:
        return
    (cy0, cy1, cx0, cx1), (py0, py1, px0, px1) = region
    canvas[cy0:cy1, cx0:cx1] *= (1.0 - strength * moved[py0:py1, px0:px1])[..., None]


def _clip_region(
    shape: tuple[int, ...], x0: int, y0: int, w: int, h: int
) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]] | None:
    """Canvas and patch slices where a patch placed at (x0, y0) overlaps the canvas; None if it does not."""
    cx0, cy0 = max(x0, 0), max(y0, 0)
    cx1, cy1 = min(x0 + w, shape[1]), min(y0 + h, shape[0])
    if cx0 >= cx1 or cy0 >= cy1:
        return None
    return (cy0, cy1, cx0, cx1), (cy0 - y0, cy1 - y0, cx0 - x0, cx1 - x0)


def lighting_field(params: EffectParams, width: int, height: int) -> np.ndarray:
    """Smooth gain field (gradient plus vignette) built on a coarse grid: light varies slowly, so 32 x 18 samples
    resized up cost nothing."""
    gx, gy, vignette = params.light_gradient
    xs = np.linspace(-1, 1, 32, dtype=np.float32)[None, :]
    ys = np.linspace(-1, 1, 18, dtype=np.float32)[:, None]
    field = params.light_level * (1.0 + 0.5 * gx * xs + 0.5 * gy * ys) * (1.0 - vignette * 0.5 * (xs**2 + ys**2))
    return cv2.resize(np.clip(field, 0.05, 3.0), (width, height), interpolation=cv2.INTER_LINEAR)


def add_glare(image: np.ndarray, glossy: np.ndarray, params: EffectParams) -> None:
    """Specular highlight of the lamp on glossy card stock (in place); a soft blob, saturating towards white."""
    cx, cy, radius, strength = params.glare
    if strength <= 0.0:
        return
    h, w = image.shape[:2]
    sigma = radius * w
    x0, x1 = int(max(cx * w - 3 * sigma, 0)), int(min(cx * w + 3 * sigma, w))
    y0, y1 = int(max(cy * h - 3 * sigma, 0)), int(min(cy * h + 3 * sigma, h))
    if x0 >= x1 or y0 >= y1:
        return
    xs = (np.arange(x0, x1, dtype=np.float32) - cx * w)[None, :]
    ys = (np.arange(y0, y1, dtype=np.float32) - cy * h)[:, None]
    blob = strength * np.exp(-(xs**2 + ys**2) / (2 * sigma**2)) * glossy[y0:y1, x0:x1]
    region = image[y0:y1, x0:x1]
    region += (255.0 - region) * blob[..., None]


def finish(image: np.ndarray, glossy: np.ndarray, params: EffectParams, seed: int) -> np.ndarray:
    """Float BGR composite (0-255) to the uint8 frame a camera would deliver."""
    h, w = image.shape[:2]
    image *= lighting_field(params, w, h)[..., None]
    add_glare(image, glossy, params)
    image *= np.array(params.white_balance, np.float32)
    if params.gamma != 1.0:
        np.clip(image, 0, 255, out=image)
        image = 255.0 * (image / 255.0) ** np.float32(1.0 / params.gamma)
    image = _blur(image, params)
    if params.noise_sigma > 0:
        image = add_noise(image, params.noise_sigma, seed)
    frame = np.clip(image + 0.5, 0, 255).astype(np.uint8)
    if params.jpeg_quality > 0:
        ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, params.jpeg_quality])
        assert ok
        frame = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return frame


def _blur(image: np.ndarray, params: EffectParams) -> np.ndarray:
    if params.defocus_sigma > 0:
        image = cv2.GaussianBlur(image, (0, 0), params.defocus_sigma)
    length, angle = params.motion
    if length >= 2:
        size = int(np.ceil(length)) | 1
        kernel = np.zeros((size, size), np.float32)
        kernel[size // 2, :] = 1.0
        rot = cv2.getRotationMatrix2D((size / 2 - 0.5, size / 2 - 0.5), angle, 1.0)
        kernel = cv2.warpAffine(kernel, rot, (size, size))
        image = cv2.filter2D(image, -1, kernel / max(float(kernel.sum()), 1e-6))
    return image


def add_noise(image: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    """Read noise plus shot noise, drawn at half resolution and upsampled: demosaicing correlates neighbouring
    pixels, so real sensor noise is blotchy rather than per-pixel, and this is four times cheaper."""
    h, w = image.shape[:2]
    rng = np.random.default_rng(seed)
    small = rng.standard_normal(((h + 1) // 2, (w + 1) // 2, 3), dtype=np.float32)
    noise = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    scale = sigma * (0.5 + np.sqrt(np.clip(image, 0, 255) / 255.0))
    return image + noise * scale * 1.4
