"""Drawing tools shared by every game's art generator: fonts, palettes, paper, silhouettes, text and wear.

Text goes through Pillow with the system's TrueType/OpenType fonts, because printed components use real typefaces
and a recogniser trained on one Hershey font would learn the font, not the number. Fonts come from Debian packages
(fonts-dejavu-core, fonts-liberation2, fonts-freefont-ttf, fonts-urw-base35; installed by scripts/setup.sh).
"""

from __future__ import annotations

import colorsys
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
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
    """Warp the glyph mask into only the window it can cover (not the whole card: that made every label cost a
    full-card warp and blend)."""
    h, w = mask.shape
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), -rotation_deg, scale)
    rot[:, 2] += np.array(centre) - np.array([w / 2, h / 2])
    corners = np.array([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]], np.float64) @ rot.T
    out_h, out_w = surface.alpha.shape
    x0, y0 = (max(int(np.floor(v)) - 1, 0) for v in corners.min(axis=0))
    x1, y1 = min(int(np.ceil(corners[:, 0].max())) + 2, out_w), min(int(np.ceil(corners[:, 1].max())) + 2, out_h)
    if x0 >= x1 or y0 >= y1:
        return (0.0, 0.0, 0.0, 0.0)
    rot[:, 2] -= (x0, y0)
    warped = cv2.warpAffine(mask, rot, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    alpha = warped[:, :, None]
    region = surface.bgr[y0:y1, x0:x1]
    region[:] = region * (1 - alpha) + np.array(colour, np.float32) * alpha
    ys, xs = np.nonzero(warped > 0.3)
    if xs.size == 0:
        return (0.0, 0.0, 0.0, 0.0)
    return (float(xs.min() + x0), float(ys.min() + y0), float(xs.max() + 1 + x0), float(ys.max() + 1 + y0))


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


# ------------------------------------------------------------------------------------- text fonts and paragraphs

SYMBOL_FONTS = ("d050000l", "standardsymbols", "z003")  # dingbats, Greek symbols, a script face: not body text


def text_fonts() -> tuple[Path, ...]:
    """Fonts that print Latin letters legibly: a symbol font would turn a card's name into dingbats."""
    return tuple(f for f in font_files() if not any(s in f.stem.lower() for s in SYMBOL_FONTS))


def pick_text_font(rng: np.random.Generator, bold_bias: float = 0.6) -> Path:
    """A font for names, numbers and rules text: bold faces likelier (components print numbers heavy so they read
    across a table), never a symbol face (it would turn a card's name into dingbats)."""
    files = text_fonts()
    bold = [f for f in files if any(w in f.stem.lower() for w in ("bold", "bd", "demi", "black"))]
    pool = bold if bold and rng.random() < bold_bias else list(files)
    return pool[int(rng.integers(0, len(pool)))]


def wrap_words(text: str, font: Path, size_px: int, max_width_px: float) -> list[str]:
    """Greedy word wrap at a fixed point size; a single word wider than the line stays on its own line."""
    pil_font = _font(font, max(size_px, 4))
    lines: list[str] = []
    for word in text.split():
        trial = f"{lines[-1]} {word}" if lines else word
        if lines and pil_font.getlength(trial) <= max_width_px:
            lines[-1] = trial
        else:
            lines.append(word)
    return lines


def draw_paragraph(
    surface: Surface,
    text: str,
    box: tuple[float, float, float, float],
    font: Path,
    size_px: float,
    colour: BGR,
    align: str = "center",
    line_spacing: float = 1.2,
) -> tuple[float, float, float, float]:
    """Rules text at one point size for every line (draw_text scales each string to its own ink height, which
    would make lines with and without descenders differ), shrunk until it fits `box` (x0, y0, x1, y1) and
    centred in it vertically; align is left, center or right. Returns the ink box."""
    x0, y0, x1, y1 = box
    size = max(int(size_px), 4)
    lines = wrap_words(text, font, size, x1 - x0)
    while size > 4 and (_paragraph_width(lines, font, size) > x1 - x0 or len(lines) * size * line_spacing > y1 - y0):
        size -= 1
        lines = wrap_words(text, font, size, x1 - x0)
    pil_font = _font(font, size)
    step = size * line_spacing
    top = (y0 + y1) / 2 - step * len(lines) / 2
    inked: list[tuple[float, float, float, float]] = []
    for i, line in enumerate(lines):
        width = pil_font.getlength(line)
        left = {"left": x0, "right": x1 - width}.get(align, (x0 + x1 - width) / 2)
        inked.append(_draw_line(surface, line, pil_font, (left, top + i * step), colour))
    inked = [b for b in inked if b[2] > b[0]]
    if not inked:
        return (0.0, 0.0, 0.0, 0.0)
    return (min(b[0] for b in inked), min(b[1] for b in inked), max(b[2] for b in inked), max(b[3] for b in inked))


def _paragraph_width(lines: list[str], font: Path, size: int) -> float:
    pil_font = _font(font, size)
    return max((pil_font.getlength(line) for line in lines), default=0.0)


def _draw_line(
    surface: Surface, line: str, pil_font: ImageFont.FreeTypeFont, top_left: tuple[float, float], colour: BGR
) -> tuple[float, float, float, float]:
    ascent, descent = pil_font.getmetrics()
    width = int(pil_font.getlength(line)) + 4
    ink = Image.new("L", (width, ascent + descent + 4), 0)
    ImageDraw.Draw(ink).text((2, 2), line, font=pil_font, fill=255)
    mask = np.asarray(ink, np.float32) / 255.0
    x, y = round(top_left[0]) - 2, round(top_left[1]) - 2
    paint(surface, mask, colour, (x, y))
    ys, xs = np.nonzero(mask > 0.3)
    if xs.size == 0:
        return (0.0, 0.0, 0.0, 0.0)
    return (float(x + xs.min()), float(y + ys.min()), float(x + xs.max() + 1), float(y + ys.max() + 1))


# ------------------------------------------------------------------------------------------------ shapes and ink

SUBPIXEL_BITS = 3  # cv2 drawing in fixed point: outlines land between pixels, not snapped to them


def paint(
    surface: Surface,
    mask: np.ndarray,
    colour: BGR | np.ndarray,
    origin: tuple[int, int] = (0, 0),
    opacity: float = 1.0,
) -> None:
    """Lay ink of `colour` (a BGR triple, or a picture the size of `mask`) through `mask` (0-1 float or 0-255
    uint8) placed with its top-left at `origin`; only the overlapping part is touched, so small shapes stay cheap
    on a large board."""
    weights = mask.astype(np.float32) / (255.0 if mask.dtype == np.uint8 else 1.0)
    h, w = surface.alpha.shape
    ox, oy = origin
    x0, y0, x1, y1 = max(ox, 0), max(oy, 0), min(ox + weights.shape[1], w), min(oy + weights.shape[0], h)
    if x1 <= x0 or y1 <= y0:
        return
    a = weights[y0 - oy : y1 - oy, x0 - ox : x1 - ox, None] * opacity
    ink = np.asarray(colour, np.float32)
    if ink.ndim == 3:
        ink = ink[y0 - oy : y1 - oy, x0 - ox : x1 - ox]
    region = surface.bgr[y0:y1, x0:x1]
    region[:] = region * (1 - a) + ink * a


def _fixed(points: np.ndarray) -> np.ndarray:
    return np.round(points * (1 << SUBPIXEL_BITS)).astype(np.int32)


def shape_mask(
    surface: Surface, polygons: list[np.ndarray], width: float = 0.0, closed: bool = True
) -> tuple[np.ndarray, tuple[int, int]] | None:
    """An antialiased mask of filled polygons (width 0) or of their outlines, cut to their bounding box; returns
    the mask and its top-left, or None when it misses the surface."""
    pts = [np.asarray(p, np.float64).reshape(-1, 2) for p in polygons if len(p)]
    if not pts:
        return None
    every = np.concatenate(pts)
    pad = width + 3
    h, w = surface.alpha.shape
    x0, y0 = max(int(every[:, 0].min() - pad), 0), max(int(every[:, 1].min() - pad), 0)
    x1, y1 = min(int(every[:, 0].max() + pad) + 1, w), min(int(every[:, 1].max() + pad) + 1, h)
    if x1 <= x0 or y1 <= y0:
        return None
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    local = [_fixed(p - (x0, y0)) for p in pts]
    if width <= 0:
        cv2.fillPoly(mask, local, 255, cv2.LINE_AA, SUBPIXEL_BITS)
    else:
        cv2.polylines(mask, local, closed, 255, max(round(width), 1), cv2.LINE_AA, SUBPIXEL_BITS)
    return mask, (x0, y0)


def fill_polygons(surface: Surface, polygons: list[np.ndarray], colour: BGR, opacity: float = 1.0) -> None:
    found = shape_mask(surface, polygons)
    if found:
        paint(surface, found[0], colour, found[1], opacity)


def stroke_polygons(
    surface: Surface, polygons: list[np.ndarray], colour: BGR, width: float, closed: bool = True, opacity: float = 1.0
) -> None:
    found = shape_mask(surface, polygons, width, closed)
    if found:
        paint(surface, found[0], colour, found[1], opacity)


def circle_points(centre: tuple[float, float], radius: float, count: int = 0) -> np.ndarray:
    """A circle as a polygon, with enough vertices that no facet shows at its size."""
    n = count or max(int(radius * 0.8), 24)
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([centre[0] + radius * np.cos(t), centre[1] + radius * np.sin(t)], axis=1)


def fill_circle(
    surface: Surface, centre: tuple[float, float], radius: float, colour: BGR, opacity: float = 1.0
) -> None:
    fill_polygons(surface, [circle_points(centre, radius)], colour, opacity)


def stroke_circle(
    surface: Surface, centre: tuple[float, float], radius: float, colour: BGR, width: float, opacity: float = 1.0
) -> None:
    stroke_polygons(surface, [circle_points(centre, radius)], colour, width, True, opacity)


# ------------------------------------------------------------------------------------- card design kit (task A)
# General pieces every printed card is made of: colours, masks, patterns, frames, icons and corner indices. Game
# modules combine them with their own layouts; a design seed drives every choice.

PATTERNS = ("plain", "gradient", "stripes", "dots", "checks", "rings", "rays", "waves", "blobs", "hatch", "mosaic")
Box = tuple[float, float, float, float]


def is_bold_font(path: Path) -> bool:
    return any(w in path.stem.lower() for w in ("bold", "bd", "demi", "black", "heavy"))


def pick_body_font(rng: np.random.Generator, italic_chance: float = 0.15) -> Path:
    """A regular-weight, proportional text face for small print: bold, light and typewriter faces clog or fade
    at 2 mm type, and rules text is mostly set upright."""
    regular = [
        f for f in text_fonts() if not is_bold_font(f) and not any(w in f.stem.lower() for w in ("light", "mono"))
    ]
    upright = [f for f in regular if is_upright_font(f)]
    pool = regular if rng.random() < italic_chance or not upright else upright
    return pool[int(rng.integers(0, len(pool)))] if pool else pick_text_font(rng, 0.0)


def is_upright_font(path: Path) -> bool:
    return not any(w in path.stem.lower() for w in ("italic", "oblique", "ita"))


# A procedural design's place in the train / validation / test split, by its number: of every 20 designs, 14 train,
# 3 validation, 3 test. Its numerals are then set only in font families of that split (`procedural.font_split`, the
# standard decks' rule), so a reader measured on held-out designs also meets lettering it never saw.
DESIGN_SPLIT_CYCLE = (("train", 14), ("val", 3), ("test", 3))


def design_split(design: int) -> str:
    """ "train", "val" or "test" for a procedural design number (see DESIGN_SPLIT_CYCLE)."""
    slot = design % sum(n for _, n in DESIGN_SPLIT_CYCLE)
    for split, n in DESIGN_SPLIT_CYCLE:
        if slot < n:
            return split
        slot -= n
    raise AssertionError("unreachable: slot is below the cycle's length")


def designs_of_split(split: str, count: int, start: int = 0) -> list[int]:
    """The first `count` design numbers from `start` on that fall in `split`."""
    if split not in {s for s, _ in DESIGN_SPLIT_CYCLE}:
        raise ValueError(f"unknown split '{split}' (expected one of {', '.join(s for s, _ in DESIGN_SPLIT_CYCLE)})")
    out, design = [], start
    while len(out) < count:
        if design_split(design) == split:
            out.append(design)
        design += 1
    return out


def pick_numeral_font(rng: np.random.Generator, italic_chance: float = 0.15, split: str | None = None) -> Path:
    """A face for big numbers and corner indices: heavy and mostly upright, as printed components use; with `split`,
    only from font families of that split, so held-out designs carry held-out lettering."""
    from vision.synth.procedural import font_split  # the decks' own family split; imported late (it loads fonts)

    pool_all = [f for f in text_fonts() if split is None or font_split(f) == split]
    bold = [f for f in pool_all if is_bold_font(f)]
    upright = [f for f in bold if is_upright_font(f)]
    pool = bold if rng.random() < italic_chance or not upright else upright
    return pool[int(rng.integers(0, len(pool)))] if pool else pick_text_font(rng, 1.0)


def stable_seed(*parts: int | str) -> list[int]:
    """Seed material that is the same in every process (Python's str hash is salted per run)."""
    out: list[int] = []
    for part in parts:
        if isinstance(part, str):
            out.append(zlib.crc32(part.encode()))
        elif part < 0:
            raise ValueError(f"seed part {part} is negative; expected a design number >= 0")
        else:
            out.append(int(part))
    return out


def hsv_bgr(hue_deg: float, saturation: float, value: float) -> BGR:
    r, g, b = colorsys.hsv_to_rgb((hue_deg % 360) / 360, float(np.clip(saturation, 0, 1)), float(np.clip(value, 0, 1)))
    return (round(b * 255), round(g * 255), round(r * 255))


def mix(a: BGR, b: BGR, t: float) -> BGR:
    """`a` moved a fraction `t` towards `b`: tints and shades of a palette colour."""
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b, strict=True))  # type: ignore[return-value]


def luma(colour: BGR) -> float:
    b, g, r = colour
    return 0.114 * b + 0.587 * g + 0.299 * r


def ink_on(background: BGR, dark: BGR = (28, 26, 24), light: BGR = (246, 246, 242)) -> BGR:
    """The ink a printer would choose on this background so the text reads."""
    return dark if luma(background) > 140 else light


def legible_on(colour: BGR, background: BGR, contrast: float = 95.0) -> BGR:
    """`colour` shaded away from the background's brightness until the two differ by `contrast` (as a designer
    checks a yellow number on white before printing); the other way when that side runs out of room."""
    if abs(luma(colour) - luma(background)) >= contrast:
        return colour
    darker_first = luma(colour) <= luma(background)
    targets: list[BGR] = [(0, 0, 0), (255, 255, 255)] if darker_first else [(255, 255, 255), (0, 0, 0)]
    for target in targets:
        for step in range(1, 13):
            shaded = mix(colour, target, step / 12)
            if abs(luma(shaded) - luma(background)) >= contrast:
                return shaded
    return max(targets, key=lambda t: abs(luma(t) - luma(background)))


def card_surface(rng: np.random.Generator, size: tuple[int, int], colour: BGR, radius_px: float) -> Surface:
    """Blank card stock with its die-cut silhouette (the silhouette is cached: a deck shares one die)."""
    grain = float(rng.uniform(1.5, 4.0))
    return Surface(paper(rng, size, colour, grain=grain), _die_cut(size, round(radius_px, 2)).copy())


@lru_cache(maxsize=16)
def _die_cut(size: tuple[int, int], radius_px: float) -> np.ndarray:
    return rounded_mask(size, radius_px)


def box_mask(size: tuple[int, int], box: Box, radius: float = 0.0) -> np.ndarray:
    """A filled (rounded) rectangle anywhere on a size-sized picture, antialiased at the edges."""
    w, h = size
    x0, y0, x1, y1 = box
    inner = rounded_mask((max(round(x1 - x0), 1), max(round(y1 - y0), 1)), min(radius, (x1 - x0) / 2, (y1 - y0) / 2))
    out = np.zeros((h, w), np.float32)
    ox, oy = round(x0), round(y0)
    sx0, sy0 = max(ox, 0), max(oy, 0)
    sx1, sy1 = min(ox + inner.shape[1], w), min(oy + inner.shape[0], h)
    if sx1 > sx0 and sy1 > sy0:
        out[sy0:sy1, sx0:sx1] = inner[sy0 - oy : sy1 - oy, sx0 - ox : sx1 - ox]
    return out


def frame_mask(size: tuple[int, int], box: Box, thickness: float, radius: float = 0.0) -> np.ndarray:
    """The outline of a (rounded) rectangle, `thickness` pixels wide, drawn inside `box`."""
    x0, y0, x1, y1 = box
    inner = (x0 + thickness, y0 + thickness, x1 - thickness, y1 - thickness)
    return np.clip(box_mask(size, box, radius) - box_mask(size, inner, max(radius - thickness, 0)), 0, 1)


def paint_box(surface: Surface, box: Box, colour: BGR | np.ndarray, radius: float = 0.0, opacity: float = 1.0) -> None:
    """Print a filled (rounded) rectangle, masking only its own area so it costs its size, not the card's;
    `colour` may be a picture the size of the box's pixel window (floor/ceil of its edges)."""
    (x0, y0), local = _window(box)
    paint(surface, box_mask((round(local[2] + 0.5), round(local[3] + 0.5)), local, radius), colour, (x0, y0), opacity)


def paint_frame(
    surface: Surface, box: Box, thickness: float, colour: BGR, radius: float = 0.0, opacity: float = 1.0
) -> None:
    """Print a (rounded) rectangle's outline `thickness` pixels wide inside `box`, masked over its own area."""
    (x0, y0), local = _window(box)
    size = (round(local[2] + 0.5), round(local[3] + 0.5))
    paint(surface, frame_mask(size, local, thickness, radius), colour, (x0, y0), opacity)


def _window(box: Box) -> tuple[tuple[int, int], Box]:
    x0, y0 = int(np.floor(box[0])), int(np.floor(box[1]))
    return (x0, y0), (box[0] - x0, box[1] - y0, box[2] - x0, box[3] - y0)


def ellipse_points(
    centre: tuple[float, float], axes: tuple[float, float], angle_deg: float = 0.0, count: int = 48
) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, count, endpoint=False)
    a = np.deg2rad(angle_deg)
    x, y = axes[0] * np.cos(t), axes[1] * np.sin(t)
    return np.stack([centre[0] + x * np.cos(a) - y * np.sin(a), centre[1] + x * np.sin(a) + y * np.cos(a)], axis=1)


def star_points(
    centre: tuple[float, float], outer: float, inner: float, points: int, turn_deg: float = -90.0
) -> np.ndarray:
    """A star (or, with inner == outer, a regular polygon) as a point list: pips, badges and bursts."""
    angles = np.deg2rad(turn_deg + np.arange(points * 2) * 180.0 / points)
    radii = np.where(np.arange(points * 2) % 2 == 0, outer, inner)
    return np.stack([centre[0] + radii * np.cos(angles), centre[1] + radii * np.sin(angles)], axis=1)


def pattern_mask(rng: np.random.Generator, kind: str, size: tuple[int, int], scale_px: float) -> np.ndarray:
    """A background motif as a 0-1 mask (where a second ink goes), one of PATTERNS; `scale_px` sets its period."""
    if kind not in PATTERNS:
        raise ValueError(f"pattern '{kind}' is unknown; expected one of {', '.join(PATTERNS)}")
    w, h = size
    scale = max(scale_px, 2.0)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = np.deg2rad(rng.uniform(0, 180))
    u = xs * np.cos(angle) + ys * np.sin(angle)
    v = -xs * np.sin(angle) + ys * np.cos(angle)
    cx, cy = w * rng.uniform(0.2, 0.8), h * rng.uniform(0.2, 0.8)
    if kind == "plain":
        return np.zeros((h, w), np.float32)
    if kind == "gradient":
        return (u - u.min()) / max(float(u.max() - u.min()), 1.0)
    if kind == "stripes":
        return _soft_step(np.sin(u * 2 * np.pi / scale), 0.2)
    if kind == "dots":
        gx, gy = (xs % scale) - scale / 2, (ys % scale) - scale / 2
        return _soft_step(scale * 0.3 - np.hypot(gx, gy), 0.8)
    if kind == "checks":
        return (((xs // scale) + (ys // scale)) % 2).astype(np.float32)
    if kind == "rings":
        return _soft_step(np.sin(np.hypot(xs - cx, ys - cy) * 2 * np.pi / scale), 0.2)
    if kind == "rays":
        return _soft_step(np.sin(np.arctan2(ys - cy, xs - cx) * int(rng.integers(8, 20))), 0.1)
    if kind == "waves":
        return _soft_step(np.sin((u + np.sin(v * 2 * np.pi / (scale * 3)) * scale * 0.4) * 2 * np.pi / scale), 0.2)
    if kind == "hatch":
        lines = _soft_step(np.sin(u * 2 * np.pi / scale) - 0.85, 0.1)
        return np.maximum(lines, _soft_step(np.sin(v * 2 * np.pi / scale) - 0.85, 0.1))
    if kind == "blobs":
        low = rng.normal(0, 1, (max(int(h / scale), 2), max(int(w / scale), 2))).astype(np.float32)
        return _soft_step(cv2.resize(low, (w, h), interpolation=cv2.INTER_CUBIC), 0.15)
    return _mosaic(rng, size, scale)


def _soft_step(x: np.ndarray, width: float) -> np.ndarray:
    return np.clip(0.5 + x / (2 * width), 0, 1).astype(np.float32)


def _mosaic(rng: np.random.Generator, size: tuple[int, int], scale: float) -> np.ndarray:
    """Low-poly facets: a jittered grid split into triangles, each a random shade."""
    w, h = size
    step = scale * 2
    nx, ny = int(w / step) + 2, int(h / step) + 2
    gx, gy = np.meshgrid(np.arange(nx) * step, np.arange(ny) * step)
    pts = np.stack([gx, gy], axis=-1) + rng.uniform(-0.35, 0.35, (ny, nx, 2)) * step
    out = np.zeros((h, w), np.float32)
    for j in range(ny - 1):
        for i in range(nx - 1):
            a, b, c, d = pts[j, i], pts[j, i + 1], pts[j + 1, i + 1], pts[j + 1, i]
            for tri in ((a, b, c), (a, c, d)):
                cv2.fillPoly(out, [np.round(np.array(tri)).astype(np.int32)], float(rng.random()))
    return out


def linear_ramp(size: tuple[int, int], angle_deg: float) -> np.ndarray:
    """0 at one side of the picture to 1 at the other, along `angle_deg`: printed gradients."""
    w, h = size
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    a = np.deg2rad(angle_deg)
    u = xs * np.cos(a) + ys * np.sin(a)
    return (u - u.min()) / max(float(u.max() - u.min()), 1.0)


def text_box_size(text: str, font: Path, height_px: float) -> tuple[float, float]:
    """The ink width and height draw_text would give `text` at `height_px`, to fit titles before drawing them."""
    size = max(int(height_px * 1.45), 6)
    x0, y0, x1, y1 = _font(font, size).getbbox(text)
    return (x1 - x0) * height_px / max(y1 - y0, 1), height_px


def fit_height(text: str, font: Path, max_width: float, max_height: float) -> float:
    """The largest ink height at which `text` fits in max_width x max_height."""
    width, _ = text_box_size(text, font, max_height)
    return max_height * min(1.0, max_width / max(width, 1.0))


def union_box(*boxes: Box) -> Box:
    real = [b for b in boxes if b[2] > b[0] and b[3] > b[1]]
    if not real:
        return (0.0, 0.0, 0.0, 0.0)
    return (min(b[0] for b in real), min(b[1] for b in real), max(b[2] for b in real), max(b[3] for b in real))


def region_fraction(box: Box, size: tuple[int, int], pad_px: float) -> Box:
    """A pixel box, padded and clipped to the picture, as the [x0, y0, x1, y1] fractions pieces.json records."""
    w, h = size
    x0, y0, x1, y1 = box
    return (
        float(np.clip(x0 - pad_px, 0, w)) / w,
        float(np.clip(y0 - pad_px, 0, h)) / h,
        float(np.clip(x1 + pad_px, 0, w)) / w,
        float(np.clip(y1 + pad_px, 0, h)) / h,
    )


def rotate_about(point: tuple[float, float], centre: tuple[float, float], rotation_deg: float) -> tuple[float, float]:
    """Where `point` lands when its group is turned about `centre`: lays out the 180-degree twin of an index."""
    a = np.deg2rad(rotation_deg)
    dx, dy = point[0] - centre[0], point[1] - centre[1]
    return (
        float(centre[0] + dx * np.cos(a) - dy * np.sin(a)),
        float(centre[1] + dx * np.sin(a) + dy * np.cos(a)),
    )


@dataclass(frozen=True)
class Shape:
    """One part of an icon in a unit box (0-1 both ways), filled with a palette role. kind "poly": points;
    "ellipse": centre, (rx, ry) and optionally (angle_deg, 0); "line": an open polyline `width` (box fractions)."""

    kind: str
    points: tuple[tuple[float, float], ...]
    role: str
    width: float = 0.0


def draw_icon(
    surface: Surface,
    shapes: Sequence[Shape],
    box: Box,
    colours: dict[str, BGR],
    outline: tuple[BGR, float] | None = None,
    rotation_deg: float = 0.0,
) -> Box:
    """Clip art: unit-box shapes scaled into `box` and turned about its centre, with an `outline[1]`-pixel rim
    round the whole silhouette so flat shapes read like printed illustration; returns the ink box."""
    x0, y0, x1, y1 = box
    rim_px = outline[1] if outline else 0.0
    pad = int(max(x1 - x0, y1 - y0) * 0.25 + rim_px + 3)
    ox, oy = int(np.floor(min(x0, x1))) - pad, int(np.floor(min(y0, y1))) - pad
    local_w, local_h = int(abs(x1 - x0)) + 2 * pad + 2, int(abs(y1 - y0)) + 2 * pad + 2
    canvas = Surface(np.zeros((local_h, local_w, 3), np.float32), np.zeros((local_h, local_w), np.float32))
    centre = ((x0 + x1) / 2 - ox, (y0 + y1) / 2 - oy)
    local_box = (x0 - ox, y0 - oy, x1 - ox, y1 - oy)
    masks = [(_icon_part(canvas, s, local_box, centre, rotation_deg), colours[s.role]) for s in shapes]
    silhouette = np.max([m for m, _ in masks], axis=0) if masks else canvas.alpha
    if outline is not None and rim_px > 0:
        k = max(round(rim_px * 2 + 1), 3)
        silhouette = cv2.dilate(silhouette, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
        paint(surface, silhouette, outline[0], (ox, oy))
    for mask, colour in masks:
        paint(surface, mask, colour, (ox, oy))
    ys, xs = np.nonzero(silhouette > 0.3)
    if xs.size == 0:
        return (0.0, 0.0, 0.0, 0.0)
    return (float(ox + xs.min()), float(oy + ys.min()), float(ox + xs.max() + 1), float(oy + ys.max() + 1))


def _icon_part(canvas: Surface, shape: Shape, box: Box, centre: tuple[float, float], rotation: float) -> np.ndarray:
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0

    def place(p: tuple[float, float]) -> tuple[float, float]:
        return rotate_about((x0 + p[0] * bw, y0 + p[1] * bh), centre, rotation)

    if shape.kind == "ellipse":
        (cx, cy), (rx, ry) = shape.points[0], shape.points[1]
        angle = shape.points[2][0] if len(shape.points) > 2 else 0.0
        pts = ellipse_points(place((cx, cy)), (rx * bw, ry * bh), angle + rotation)
    elif shape.kind in ("poly", "line"):
        pts = np.array([place(p) for p in shape.points])
    else:
        raise ValueError(f"shape kind '{shape.kind}' is unknown; expected poly, ellipse or line")
    width = shape.width * bw if shape.kind == "line" else 0.0
    found = shape_mask(canvas, [pts], width, closed=False)
    out = np.zeros(canvas.alpha.shape, np.float32)
    if found:
        mask, (mx, my) = found
        out[my : my + mask.shape[0], mx : mx + mask.shape[1]] = mask.astype(np.float32) / 255.0
    return out


def draw_coin(surface: Surface, centre: tuple[float, float], radius: float, metal: BGR) -> Box:
    """A struck coin seen face on: dark rim, raised inner ring and a highlight, the treasure mark of many games."""
    dark, light = mix(metal, (0, 0, 0), 0.4), mix(metal, (255, 255, 255), 0.5)
    fill_circle(surface, centre, radius, dark)
    fill_circle(surface, centre, radius * 0.9, metal)
    stroke_circle(surface, centre, radius * 0.76, dark, max(radius * 0.05, 1.0))
    t = np.deg2rad(np.linspace(200, 290, 24))
    arc = np.stack([centre[0] + radius * 0.84 * np.cos(t), centre[1] + radius * 0.84 * np.sin(t)], axis=1)
    stroke_polygons(surface, [arc], light, max(radius * 0.07, 1.0), closed=False)
    return (centre[0] - radius, centre[1] - radius, centre[0] + radius, centre[1] + radius)


def draw_coin_edge_on(surface: Surface, centre: tuple[float, float], radius: float, metal: BGR) -> Box:
    """A coin lying flat seen at a slant (an ellipse with its edge showing), for piles and stacks."""
    dark = mix(metal, (0, 0, 0), 0.45)
    thick = radius * 0.16
    squash = 0.38
    fill_polygons(surface, [ellipse_points((centre[0], centre[1] + thick), (radius, radius * squash))], dark)
    paint(
        surface,
        box_mask(_size_of(surface), (centre[0] - radius, centre[1], centre[0] + radius, centre[1] + thick)),
        dark,
    )
    fill_polygons(surface, [ellipse_points(centre, (radius, radius * squash))], metal)
    inner = ellipse_points(centre, (radius * 0.72, radius * squash * 0.72))
    stroke_polygons(surface, [inner], mix(metal, (0, 0, 0), 0.25), max(radius * 0.05, 1.0))
    return (centre[0] - radius, centre[1] - radius * squash, centre[0] + radius, centre[1] + radius * squash + thick)


def _size_of(surface: Surface) -> tuple[int, int]:
    return surface.alpha.shape[1], surface.alpha.shape[0]


def print_finish(rng: np.random.Generator, surface: Surface, wear_amount: float, softness: float = 0.5) -> np.ndarray:
    """The printed look: ink edges slightly soft (offset print and paper spread), then handling wear; BGRA out."""
    if softness > 0:
        surface.bgr[:] = cv2.GaussianBlur(surface.bgr, (0, 0), softness)
    wear(rng, surface, wear_amount)
    return surface.to_bgra()


BORDERS = ("none", "thin", "thick", "double", "inset")


def draw_border(surface: Surface, style: str, colour: BGR, px_per_mm: float, radius_px: float) -> float:
    """A card's printed frame, one of BORDERS; returns how far in (pixels) the content should start."""
    h, w = surface.alpha.shape
    mm = px_per_mm
    whole = (0.0, 0.0, float(w), float(h))
    rings = {
        "none": (),
        "thin": ((2.6, 0.45, max(radius_px - 2.6 * mm, 0.8 * mm)),),
        "thick": ((0.0, 3.2, radius_px),),
        "double": ((2.2, 0.7, max(radius_px - 2.2 * mm, 1.0 * mm)), (3.4, 0.3, max(radius_px - 3.4 * mm, 0.6 * mm))),
        "inset": ((0.0, 1.6, radius_px), (2.6, 0.35, 2.0 * mm)),
    }
    if style not in rings:
        raise ValueError(f"border style '{style}' is unknown; expected one of {', '.join(BORDERS)}")
    for inset_mm, thickness_mm, radius in rings[style]:
        paint(surface, _cached_frame((w, h), _inset(whole, inset_mm * mm), thickness_mm * mm, radius), colour)
    return {"none": 3.0, "thin": 4.0, "thick": 4.6, "double": 4.6, "inset": 4.2}[style] * mm


@lru_cache(maxsize=32)
def _cached_frame(size: tuple[int, int], box: Box, thickness: float, radius: float) -> np.ndarray:
    """Every card of a design has the same frame: build its mask once (read-only, shared)."""
    mask = frame_mask(size, box, thickness, radius)
    mask.setflags(write=False)
    return mask


def border_clearance_mm(style: str) -> float:
    """How far in from the card's edge a border's ink reaches, plus a millimetre of air: corner indices start
    beyond it, so an index never touches (or is read together with) the frame."""
    return {"none": 0.0, "thin": 4.1, "thick": 4.3, "double": 4.7, "inset": 4.0}[style]


def _inset(box: Box, by: float) -> Box:
    return (box[0] + by, box[1] + by, box[2] - by, box[3] - by)


def print_pattern(
    surface: Surface, rng: np.random.Generator, kind: str, colour: BGR, opacity: float, scale_px: float
) -> None:
    """A background motif (PATTERNS) printed in `colour` over the whole face at `opacity`."""
    if kind == "plain" or opacity <= 0:
        return
    h, w = surface.alpha.shape
    paint(surface, pattern_mask(rng, kind, (w, h), scale_px), colour, opacity=opacity)


def corner_anchors(
    size: tuple[int, int], inset: tuple[float, float], four: bool
) -> list[tuple[tuple[float, float], float]]:
    """Where corner indices sit and how they turn: top-left upright and its 180-degree twin bottom-right, then
    (four-corner designs) top-right upright and bottom-left turned, as standard four-index decks print them."""
    w, h = size
    dx, dy = inset
    anchors = [((dx, dy), 0.0), ((w - dx, h - dy), 180.0)]
    if four:
        anchors += [((w - dx, dy), 0.0), ((dx, h - dy), 180.0)]
    return anchors


# ------------------------------------------------------------------------------ end of card design kit (task A)


# ------------------------------------------------------------------------------------------------ windows (task B)


def sub_surface(surface: Surface, box: Box) -> tuple[Surface, tuple[int, int]]:
    """A window onto part of a surface (numpy views, so drawing on it draws on the whole) and its top-left: a
    large board draws each small element through window-sized masks instead of board-sized ones."""
    h, w = surface.alpha.shape
    x0, y0 = max(int(np.floor(box[0])), 0), max(int(np.floor(box[1])), 0)
    x1, y1 = min(int(np.ceil(box[2])), w), min(int(np.ceil(box[3])), h)
    x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)
    return Surface(surface.bgr[y0:y1, x0:x1], surface.alpha[y0:y1, x0:x1]), (x0, y0)
