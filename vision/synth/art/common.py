"""Drawing tools shared by every game's art generator: fonts, palettes, paper, silhouettes, text and wear.

Text goes through Pillow with the system's TrueType/OpenType fonts, because printed components use real typefaces
and a recogniser trained on one Hershey font would learn the font, not the number. Fonts come from Debian packages
(fonts-dejavu-core, fonts-liberation2, fonts-freefont-ttf, fonts-urw-base35; installed by scripts/setup.sh).
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT_DIRS = (Path("/usr/share/fonts/truetype"), Path("/usr/share/fonts/opentype"))
BGR = tuple[int, int, int]


class ArtError(RuntimeError):
    """The machine lacks something the art needs (fonts); the message says which package provides it."""


@cache
def font_files() -> tuple[Path, ...]:
    """Every usable font file, sorted so a design seed picks the same font on every machine with the same fonts."""
    files = sorted(
        f
        for root in FONT_DIRS
        if root.is_dir()
        for f in root.rglob("*")
        if f.suffix.lower() in (".ttf", ".otf") and "math" not in f.name.lower()
    )
    if not files:
        raise ArtError(
            f"no TrueType/OpenType fonts under {', '.join(map(str, FONT_DIRS))}: install the Debian packages "
            "fonts-dejavu-core fonts-liberation2 fonts-freefont-ttf fonts-urw-base35 (scripts/setup.sh does)"
        )
    return tuple(files)


def pick_font(rng: np.random.Generator, bold_bias: float = 0.6) -> Path:
    """Bold faces are likelier: components print their numbers heavy so they read across a table."""
    files = font_files()
    bold = [f for f in files if any(w in f.stem.lower() for w in ("bold", "bd", "demi", "black"))]
    pool = bold if bold and rng.random() < bold_bias else files
    return pool[int(rng.integers(0, len(pool)))]


@cache
def _font(path: Path, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(path), size)


def random_hue_colour(rng: np.random.Generator, saturation: tuple[float, float], value: tuple[float, float]) -> BGR:
    r, g, b = colorsys.hsv_to_rgb(rng.random(), rng.uniform(*saturation), rng.uniform(*value))
    return (int(b * 255), int(g * 255), int(r * 255))


def jitter_colour(rng: np.random.Generator, colour: BGR, amount: float = 18.0) -> BGR:
    """A printing's version of a named colour: a red card is never exactly (0, 0, 255)."""
    return tuple(int(np.clip(c + rng.normal(0, amount), 0, 255)) for c in colour)  # type: ignore[return-value]


@dataclass(frozen=True)
class Surface:
    """A picture being drawn: BGR float32 0-255 plus an alpha silhouette."""

    bgr: np.ndarray
    alpha: np.ndarray

    def to_bgra(self) -> np.ndarray:
        out = np.dstack([np.clip(self.bgr, 0, 255), np.clip(self.alpha, 0, 1) * 255])
        return out.astype(np.uint8)


def paper(rng: np.random.Generator, size: tuple[int, int], colour: BGR, grain: float = 4.0) -> np.ndarray:
    """Card stock: a base colour with low-frequency mottling and fine grain, so flat areas are not synthetic-flat."""
    w, h = size
    low = cv2.resize(rng.normal(0, 1, (max(h // 40, 2), max(w // 40, 2))).astype(np.float32), (w, h))
    fine = rng.normal(0, 1, (h, w)).astype(np.float32)
    shade = low * grain * 1.5 + fine * grain
    return np.clip(np.array(colour, np.float32)[None, None, :] + shade[:, :, None], 0, 255)


def rounded_mask(size: tuple[int, int], radius: float, supersample: int = 4) -> np.ndarray:
    """An antialiased rounded-rectangle silhouette (float 0-1); radius in pixels, 0 gives square corners."""
    w, h = size
    s = supersample
    big = np.zeros((h * s, w * s), np.uint8)
    r = round(radius * s)
    if r <= 0:
        big[:] = 255
    else:
        cv2.rectangle(big, (r, 0), (w * s - 1 - r, h * s - 1), 255, -1)
        cv2.rectangle(big, (0, r), (w * s - 1, h * s - 1 - r), 255, -1)
        for cx, cy in ((r, r), (w * s - 1 - r, r), (r, h * s - 1 - r), (w * s - 1 - r, h * s - 1 - r)):
            cv2.circle(big, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def draw_text(
    surface: Surface,
    text: str,
    centre: tuple[float, float],
    height_px: float,
    colour: BGR,
    font: Path,
    rotation_deg: float = 0.0,
    outline: tuple[BGR, int] | None = None,
) -> tuple[float, float, float, float]:
    """Draw text whose ink is `height_px` tall, centred at `centre`, optionally rotated (180 for the twin index)
    and outlined; returns the ink's box (x0, y0, x1, y1) in pixels so callers can record index regions."""
    size = max(int(height_px * 1.45), 6)
    pil_font = _font(font, size)
    x0, y0, x1, y1 = pil_font.getbbox(text)
    stroke = outline[1] if outline else 0
    pad = stroke + 4
    tw, th = x1 - x0 + 2 * pad, y1 - y0 + 2 * pad
    ink = Image.new("L", (tw, th), 0)
    ImageDraw.Draw(ink).text((pad - x0, pad - y0), text, font=pil_font, fill=255)
    rim = None
    if outline:
        rim_img = Image.new("L", (tw, th), 0)
        ImageDraw.Draw(rim_img).text((pad - x0, pad - y0), text, font=pil_font, fill=255, stroke_width=stroke)
        rim = np.asarray(rim_img, np.float32) / 255.0
    glyphs = np.asarray(ink, np.float32) / 255.0
    scale = height_px / max(y1 - y0, 1)
    layers = [(rim, outline[0])] if rim is not None and outline else []
    layers.append((glyphs, colour))
    box = (0.0, 0.0, 0.0, 0.0)
    for mask, col in layers:
        box = _paste_mask(surface, mask, scale, centre, rotation_deg, col)
    return box


def _paste_mask(
    surface: Surface, mask: np.ndarray, scale: float, centre: tuple[float, float], rotation_deg: float, colour: BGR
) -> tuple[float, float, float, float]:
    h, w = mask.shape
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), -rotation_deg, scale)
    rot[:, 2] += np.array(centre) - np.array([w / 2, h / 2])
    out_h, out_w = surface.alpha.shape
    warped = cv2.warpAffine(mask, rot, (out_w, out_h), flags=cv2.INTER_LINEAR)
    alpha = warped[:, :, None]
    surface.bgr[:] = surface.bgr * (1 - alpha) + np.array(colour, np.float32) * alpha
    ys, xs = np.nonzero(warped > 0.3)
    if xs.size == 0:
        return (0.0, 0.0, 0.0, 0.0)
    return (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))


def wear(rng: np.random.Generator, surface: Surface, amount: float) -> None:
    """Handling marks: whitened edges, a few scuffs, slight fading; amount 0 is a new card, 1 a well-played one."""
    if amount <= 0:
        return
    h, w = surface.alpha.shape
    edge = cv2.erode((surface.alpha > 0.5).astype(np.uint8), np.ones((3, 3), np.uint8), iterations=max(w // 150, 1))
    rim = ((surface.alpha > 0.5) & (edge == 0)).astype(np.float32)
    rim *= (rng.random((h, w)) < 0.5 * amount).astype(np.float32)
    surface.bgr[:] = surface.bgr * (1 - rim[:, :, None] * 0.7) + 235 * rim[:, :, None] * 0.7
    for _ in range(int(rng.poisson(4 * amount))):
        p0 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        p1 = (p0[0] + int(rng.normal(0, w / 6)), p0[1] + int(rng.normal(0, h / 6)))
        scratch = np.zeros((h, w), np.float32)
        cv2.line(scratch, p0, p1, 1.0, 1, cv2.LINE_AA)
        surface.bgr[:] += scratch[:, :, None] * rng.uniform(10, 35) * amount
    fade = 1 - 0.12 * amount * rng.random()
    surface.bgr[:] = surface.bgr * fade + 255 * (1 - fade)


def to_png_bgra(surface: Surface) -> np.ndarray:
    return surface.to_bgra()
