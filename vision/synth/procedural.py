"""Procedural standard decks: hundreds of invented deck designs, so a corner-index reader generalises.

About thirty real deck designs are too few for a reader of corner indices to learn what a rank *is* rather than
what those decks' letters look like. This module invents designs: every random choice of one design (index font,
lettering, suit shapes, colours, layout, court art, back) is a `DeckStyle` drawn from a seed, and `render_deck`
writes it as a standard deck directory (`deckdir.py`), so every consumer of real decks takes these unchanged.

Fonts are split into train / val / test by font *family*, so validation and test decks carry lettering the reader
never saw in training. The printed letters vary (a German jack is a `B`, a French king an `R`, a Russian ace a
`Т`) but the file names stay the standard English codes: the reader must learn that `B` on a card means `J`.

Every card is drawn at SUPERSAMPLE times its size and shrunk with area averaging, so edges are antialiased the way
a printed card photographed at that size is. The index is placed by `index_layout`, which the renderer itself uses,
so `index_box` is exactly where the index ink can be (and can label detectors precisely).
"""

from __future__ import annotations

import argparse
import colorsys
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont
from tqdm import tqdm

from vision.synth.deckdir import BACK, RANKS, SUITS, DeckError, load_deck

FONT_ROOT = Path("/usr/share/fonts")
SPLITS = ("train", "val", "test")
SPLIT_SHARES = (0.70, 0.15, 0.15)
# Salts the family hash. Fixed once so that, on Debian's font packages, val and test each get five or more families
# mixing serif, sans and monospaced or script lettering (a bare hash left test three sans families). A family keeps
# its split whatever other fonts are installed.
SPLIT_SALT = "4"
SUPERSAMPLE = 2
# Where the whole index (rank, suit, outline) must lie: x0, y0, x1, y1 as fractions of the card *width*, from the
# top-left corner. A reader crops this region, so nothing of the index may fall outside it.
INDEX_LIMIT = (0.02, 0.02, 0.30, 0.48)
CORNER_CLEARANCE = 0.012  # fraction of the width between the index and the rounded corner's arc

Colour = tuple[int, int, int]
Colours = Sequence[float]  # a colour as drawn: RGB, or one value on a mask canvas
Box = tuple[float, float, float, float]

# What each lettering prints for ace, jack, queen and king (the numbers are the same everywhere).
LETTERINGS: dict[str, tuple[str, str, str, str]] = {
    "english": ("A", "J", "Q", "K"),
    "german": ("A", "B", "D", "K"),
    "french": ("A", "V", "D", "R"),
    "dutch": ("A", "B", "V", "H"),
    "russian": ("Т", "В", "Д", "К"),
    "numeric-ace": ("1", "J", "Q", "K"),
}
# What a joker's index spells where it prints the word, one letter above the next down the index (many real jokers
# do; session 22 found the reader calling such jokers "none", Cyrillic ones above all). Any lettering not named
# spells it in Latin letters.
JOKER_WORDS = {"russian": "ДЖОКЕР"}
JOKER_WORD_SHARE = {"none": 0.5, "J": 0.25}  # of the designs whose joker index is "none" or "J", these print the word
LETTERING_WEIGHTS = {"english": 0.65, "german": 0.10, "french": 0.10, "dutch": 0.05, "russian": 0.05}
LETTERING_WEIGHTS["numeric-ace"] = 0.05
# Characters every index font must draw besides its lettering: the numbers, H (its cap height and stem set the
# font size and emboldening), and the joker's JOKER and J.
ALWAYS_DRAWN = "0123456789HJOKER"
SUIT_GLYPHS = {"filled": "♠♥♦♣", "outline": "♤♡♢♧"}  # S H D C order, as SUITS

# Font files whose "letters" are not Latin letters (dingbats, the Greek of a Symbol font, keyboard keycaps).
_NOT_LETTERS = frozenset({"D050000L", "StandardSymbolsPS", "LinBiolinum_K"})
# Weight, width and style words a font file name appends to its family name (FreeSerifBoldItalic, Lato-Hairline).
_STYLE_SUFFIX = re.compile(
    r"(Bold|Italic|Regular|Oblique|Condensed|Cond|Narrow|Light|Thin|Hairline|Medium|Semibold|SemiBold|Black|Heavy"
    r"|Extra|Semi|Demi|Book|Retina|Smallcaps|Expanded|Inclined|Upright|Tamil|Alt|Std|No\d+|\d+[A-Z]?)$"
)
# Italic and oblique files, however their family spells it (LinLibertine_RZI, Gentium-I, C059-BdIta, PTS56F).
_ITALIC = re.compile(r"(Italic|Oblique|Inclined|Ita$|_R?[BZ]?I$|-I$|^PT[A-Z]\d6F$)")
ITALIC_WEIGHT = 0.25
# Families that are clones or derivatives of one another look alike; they must share a split, or "unseen" test
# lettering would be a training font under another name.
_LOOKALIKES = {
    "LiberationSans": "NimbusSans",
    "FreeSans": "NimbusSans",
    "LiberationSerif": "NimbusRoman",
    "FreeSerif": "NimbusRoman",
    "LiberationMono": "NimbusMonoPS",
    "FreeMono": "NimbusMonoPS",
    "Hack": "DejaVuSans",
    "DejaVuSansMono": "DejaVuSans",
    "DejaVuMathTeXGyre": "DejaVuSerif",
    "PTN": "PTS",
    "PTC": "PTS",
    "PTZ": "PTF",
}

# Pip centres of the number cards: column (-1 left, 0 middle, 1 right) and row (0 top .. 1 bottom of the field).
_THIRD = 1 / 3
_BOTTOM = ((-1, 1.0), (1, 1.0))
_MIDDLE_10 = ((-1, 2 * _THIRD), (1, 2 * _THIRD), (0, 5 / 6))
PIP_LAYOUT: dict[str, tuple[tuple[int, float], ...]] = {
    "2": ((0, 0.0), (0, 1.0)),
    "3": ((0, 0.0), (0, 0.5), (0, 1.0)),
    "4": ((-1, 0.0), (1, 0.0), (-1, 1.0), (1, 1.0)),
    "5": ((-1, 0.0), (1, 0.0), (0, 0.5), (-1, 1.0), (1, 1.0)),
    "6": ((-1, 0.0), (1, 0.0), (-1, 0.5), (1, 0.5), (-1, 1.0), (1, 1.0)),
    "7": ((-1, 0.0), (1, 0.0), (0, 0.25), (-1, 0.5), (1, 0.5), (-1, 1.0), (1, 1.0)),
    "8": ((-1, 0.0), (1, 0.0), (0, 0.25), (-1, 0.5), (1, 0.5), (0, 0.75), (-1, 1.0), (1, 1.0)),
    "9": ((-1, 0.0), (1, 0.0), (-1, _THIRD), (1, _THIRD), (0, 0.5), (-1, 2 * _THIRD), (1, 2 * _THIRD), *_BOTTOM),
    "10": ((-1, 0.0), (1, 0.0), (0, 1 / 6), (-1, _THIRD), (1, _THIRD), *_MIDDLE_10, *_BOTTOM),
}
COURTS = ("J", "Q", "K")
BACK_PATTERNS = ("stripes", "checkers", "lattice", "dots", "concentric", "noise")


@dataclass(frozen=True)
class SuitShapes:
    """Proportions of the four vector suit symbols (aspect = width / height), so no two designs share pips."""

    heart_aspect: float
    heart_lobe: float  # lobe radius, fraction of the width
    heart_bulge: float  # how far the sides bow outwards
    diamond_aspect: float
    diamond_bow: float  # side curvature: negative is concave
    spade_aspect: float
    spade_lobe: float
    spade_stem: float  # stem length, fraction of the height
    spade_flare: float  # stem foot width, fraction of the width
    club_aspect: float
    club_lobe: float
    club_stem: float
    club_flare: float


@dataclass(frozen=True)
class DeckStyle:
    """Every random choice of one deck design; `seed` drives the per-card details (court shapes, textures)."""

    seed: int
    split: str
    aspect: float  # height / width
    # index lettering
    font: str  # the index font file
    lettering: str  # a key of LETTERINGS
    labels: tuple[str, ...]  # what each of RANKS is printed as
    ten: str  # "normal" | "condensed" (x 0.7) | "tight" (1 and 0 kerned together)
    embolden: float  # extra stroke thickness, fraction of the cap height (0 = as the font draws it)
    outlined_index: bool
    # suits
    suit_font: str  # a font whose suit glyphs are the symbols; "" = vector shapes
    suit_glyphs: str  # the four glyphs (S H D C) when suit_font is set
    shapes: SuitShapes
    suit_aspect: float  # the widest suit symbol's width / height: the suit cell's shape
    outlined_suits: bool
    colours: tuple[Colour, Colour, Colour, Colour]  # ink of S H D C
    # index layout, fractions of the card width
    beside: bool  # rank beside the suit instead of above it
    rank_h: float
    rank_w: float  # rank cell width / rank height
    suit_ratio: float  # suit height / rank height
    gap: float  # between rank and suit, fraction of the rank height
    margin_x: float
    margin_y: float
    four_corners: bool
    # face
    paper: Colour
    texture: str  # "none" | "noise" | "paper"
    texture_strength: float
    radius: float  # corner radius, fraction of the width
    border: float  # inset of a thin border line, fraction of the width; 0 = none
    border_width: float
    border_colour: Colour
    pip_scale: float  # pip height, fraction of the width (shrunk to fit the field)
    pip_spread: float  # how far the pip columns sit towards the field's edges
    pip_top: float  # the pip field's top, fraction of the height
    ace: str  # "plain" | "large" | "ornate" (ornate: the ace of spades only)
    ace_scale: float
    big_numbers: bool  # number cards show a big number instead of pips
    # court cards
    court_frame: Colour
    court_tint: Colour
    court_palette: tuple[Colour, ...]
    court_figure: bool
    court_letter: bool
    court_divider: str  # "horizontal" | "diagonal" | "none"
    court_shapes: int
    # joker
    joker_art: str  # "star" | "jester" | "text"
    joker_index: str  # "J" | "star" | "none"
    # back
    back_pattern: str
    back_colours: tuple[Colour, ...]
    back_margin: float  # white margin, fraction of the width; 0 = pattern to the edge
    back_period: float  # pattern period, fraction of the width
    back_angle: float  # degrees, for stripes


# ---------------------------------------------------------------------------------------------------- fonts


@lru_cache(maxsize=1)
def _font_files() -> tuple[Path, ...]:
    found = []
    for path in sorted(FONT_ROOT.rglob("*")) if FONT_ROOT.is_dir() else []:
        if path.suffix.lower() not in (".ttf", ".otf") or not path.is_file():
            continue
        try:
            ImageFont.truetype(str(path), 12)
        except OSError:
            continue
        found.append(path)
    return tuple(found)


def font_files() -> list[Path]:
    """Every font file under /usr/share/fonts that PIL can load (TrueType and OpenType), sorted by path."""
    return list(_font_files())


def font_family(path: Path) -> str:
    """The family a font file belongs to: weights, widths and styles of one design (and its look-alike clones)
    are one family, so a split never separates letters that look the same."""
    name = re.sub(r"\[.*?\]", "", Path(path).stem)
    name = re.split(r"[-_]", name)[0] or name
    while True:
        shorter = _STYLE_SUFFIX.sub("", name)
        if shorter == name or len(shorter) < 3:  # C059, P052: the digits are the name
            break
        name = shorter
    return _LOOKALIKES.get(name, name)


def font_split(path: Path) -> str:
    """ "train", "val" or "test" for a font file, from a stable hash of its family (about 70/15/15), so the val and
    test decks use lettering never seen in training."""
    digest = hashlib.sha256(f"{SPLIT_SALT}:{font_family(path)}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    return SPLITS[0] if u < SPLIT_SHARES[0] else SPLITS[1] if u < SPLIT_SHARES[0] + SPLIT_SHARES[1] else SPLITS[2]


@lru_cache(maxsize=4)
def _split_families(split: str) -> dict[str, tuple[str, ...]]:
    if split not in SPLITS:
        raise ValueError(f"unknown split '{split}' (expected one of {', '.join(SPLITS)})")
    families: dict[str, list[str]] = {}
    for path in _font_files():
        if font_split(path) == split and path.stem not in _NOT_LETTERS:
            families.setdefault(font_family(path), []).append(str(path))
    return {family: tuple(files) for family, files in sorted(families.items())}


@lru_cache(maxsize=512)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


def _glyph_canvas(font: ImageFont.FreeTypeFont, text: str) -> np.ndarray:
    image = Image.new("L", (160, 120), 0)
    ImageDraw.Draw(image).text((30, 20), text, font=font, fill=255)
    return np.asarray(image)


@lru_cache(maxsize=8192)
def renders_chars(path: str, chars: str) -> bool:
    """Whether a font draws every one of `chars` as itself: some ink, and not the missing-glyph box (.notdef)."""
    if Path(path).stem in _NOT_LETTERS:
        return False
    font = _font(path, 48)
    notdef = _glyph_canvas(font, "\uffff")
    for char in chars:
        glyph = _glyph_canvas(font, char)
        if glyph.max() < 128 or np.array_equal(glyph, notdef):
            return False
    return True


@lru_cache(maxsize=512)
def _font_metrics(path: str) -> tuple[float, float]:
    """Cap height per unit of font size, and the stem thickness as a fraction of the cap height (an "H")."""
    mask = _crop(_render_text(_font(path, 200), "H"))
    cap = max(mask.shape[0], 1)
    distance = cv2.distanceTransform((mask > 127).astype(np.uint8), cv2.DIST_L2, 3)
    return cap / 200, float(2 * distance.max()) / cap


def _render_text(font: ImageFont.FreeTypeFont, text: str, spacing: float = 0.0) -> np.ndarray:
    """Text on a black canvas with room to spare; `spacing` (pixels, may be negative) between characters."""
    pad = max(4, font.size // 4)
    if spacing == 0.0 or len(text) < 2:
        left, top, right, bottom = font.getbbox(text)
        image = Image.new("L", (right - left + 2 * pad, bottom - top + 2 * pad), 0)
        ImageDraw.Draw(image).text((pad - left, pad - top), text, font=font, fill=255)
        return np.asarray(image)
    width = int(sum(font.getlength(ch) for ch in text) + 2 * pad + abs(spacing) * len(text) + font.size)
    image = Image.new("L", (width, font.size * 2 + 2 * pad), 0)
    draw = ImageDraw.Draw(image)
    x = float(pad)
    for char in text:
        draw.text((x, pad), char, font=font, fill=255)
        x += font.getlength(char) + spacing
    return np.asarray(image)


def _crop(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask)
    if not len(ys):
        return np.zeros((1, 1), np.uint8)
    return np.ascontiguousarray(mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])


# ---------------------------------------------------------------------------------------------------- style


def _pick(rng: np.random.Generator, weights: dict[str, float]) -> str:
    keys = list(weights)
    p = np.array([weights[k] for k in keys], float)
    return keys[int(rng.choice(len(keys), p=p / p.sum()))]


def _hsv(h: float, s: float, v: float) -> Colour:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, float(np.clip(s, 0, 1)), float(np.clip(v, 0, 1)))
    return round(r * 255), round(g * 255), round(b * 255)


def _red(rng: np.random.Generator) -> Colour:
    return _hsv(rng.uniform(-0.035, 0.02), rng.uniform(0.75, 1.0), rng.uniform(0.62, 0.9))


def _black(rng: np.random.Generator) -> Colour:
    kind = _pick(rng, {"black": 0.7, "navy": 0.15, "grey": 0.15})
    if kind == "navy":
        return _hsv(rng.uniform(0.6, 0.67), rng.uniform(0.5, 0.8), rng.uniform(0.22, 0.35))
    grey = int(rng.integers(0, 30)) if kind == "black" else int(rng.integers(45, 70))
    return grey, grey, grey


def _ink_colours(rng: np.random.Generator) -> tuple[Colour, Colour, Colour, Colour]:
    black, red = _black(rng), _red(rng)
    if rng.random() < 0.8:
        return black, red, red, black
    if rng.random() < 0.6:
        diamond = _hsv(rng.uniform(0.58, 0.64), rng.uniform(0.7, 1.0), rng.uniform(0.6, 0.85))
    else:
        diamond = _hsv(rng.uniform(0.07, 0.12), rng.uniform(0.85, 1.0), rng.uniform(0.85, 0.98))
    club = _hsv(rng.uniform(0.3, 0.38), rng.uniform(0.7, 1.0), rng.uniform(0.4, 0.6))
    return black, red, diamond, club


def _paper(rng: np.random.Generator) -> Colour:
    kind = _pick(rng, {"white": 0.5, "cream": 0.2, "grey": 0.15, "tint": 0.15})
    if kind == "white":
        v = int(rng.integers(245, 256))
        return v, v, v
    if kind == "cream":
        return _hsv(rng.uniform(0.1, 0.15), rng.uniform(0.04, 0.12), rng.uniform(0.96, 1.0))
    if kind == "grey":
        v = int(rng.integers(228, 242))
        return v, v, v
    return _hsv(rng.random(), rng.uniform(0.03, 0.09), rng.uniform(0.95, 1.0))


def _saturated(rng: np.random.Generator, value: tuple[float, float] = (0.4, 0.85)) -> Colour:
    return _hsv(rng.random(), rng.uniform(0.5, 0.9), rng.uniform(*value))


def _suit_shapes(rng: np.random.Generator) -> SuitShapes:
    u = rng.uniform
    return SuitShapes(
        heart_aspect=u(0.92, 1.15),
        heart_lobe=u(0.255, 0.3),
        heart_bulge=u(0.0, 0.14),
        diamond_aspect=u(0.62, 0.85),
        diamond_bow=u(-0.07, 0.05),
        spade_aspect=u(0.8, 1.0),
        spade_lobe=u(0.255, 0.3),
        spade_stem=u(0.16, 0.3),
        spade_flare=u(0.22, 0.45),
        club_aspect=u(0.9, 1.1),
        club_lobe=u(0.22, 0.28),
        club_stem=u(0.18, 0.3),
        club_flare=u(0.22, 0.45),
    )


def _choose_font(rng: np.random.Generator, split: str, chars: str) -> str | None:
    """A font of the split that draws all of `chars`: a family at random (so big families do not dominate), then
    one of its files, italics less often than upright (real indices are seldom italic, yet most families ship
    more italic files than upright ones)."""
    families = _split_families(split)
    names = list(families)
    for _ in range(60):
        if not names:
            return None
        files = families[names[int(rng.integers(len(names)))]]
        weights = np.array([ITALIC_WEIGHT if _ITALIC.search(Path(f).stem) else 1.0 for f in files])
        path = files[int(rng.choice(len(files), p=weights / weights.sum()))]
        if renders_chars(path, chars):
            return path
    return None


def _suit_font(rng: np.random.Generator, split: str, index_font: str, glyphs: str) -> str | None:
    if renders_chars(index_font, glyphs):
        return index_font
    return _choose_font(rng, split, glyphs)


def _glyph_aspects(font: str, glyphs: str) -> float:
    masks = [_crop(_render_text(_font(font, 120), g)) for g in glyphs]
    return max(m.shape[1] / m.shape[0] for m in masks)


def index_layout(style: DeckStyle, width: int) -> tuple[Box, Box]:
    """The top-left index's rank cell and suit cell in card pixels (x0, y0, x1, y1): the renderer fits the rank
    and the suit symbol inside these cells, so nothing of the index is drawn outside them."""
    w = float(width)
    rank_h = style.rank_h * w
    rank_w = style.rank_w * rank_h
    suit_h = style.suit_ratio * rank_h
    suit_w = style.suit_aspect * suit_h
    gap = style.gap * rank_h
    x0, y0 = style.margin_x * w, style.margin_y * w
    if style.beside:
        rank = (x0, y0, x0 + rank_w, y0 + rank_h)
        sy = y0 + (rank_h - suit_h) / 2
        suit = (x0 + rank_w + gap, sy, x0 + rank_w + gap + suit_w, sy + suit_h)
        return rank, suit
    column = max(rank_w, suit_w)
    rx, sx = x0 + (column - rank_w) / 2, x0 + (column - suit_w) / 2
    sy = y0 + rank_h + gap
    return (rx, y0, rx + rank_w, y0 + rank_h), (sx, sy, sx + suit_w, sy + suit_h)


def index_box(style: DeckStyle, width: int, height: int) -> Box:
    """The top-left index's bounding box in card pixels (x0, y0, x1, y1): every index pixel lies inside it."""
    del height  # the index is laid out in units of the card width, as a reader crops it
    rank, suit = index_layout(style, width)
    return min(rank[0], suit[0]), min(rank[1], suit[1]), max(rank[2], suit[2]), max(rank[3], suit[3])


def index_boxes(style: DeckStyle, width: int, height: int) -> list[Box]:
    """Every corner's index box in card pixels: top-left, bottom-right (rotated 180), and for four-index decks
    top-right and bottom-left (mirrored positions, upright at the top and rotated at the bottom)."""
    x0, y0, x1, y1 = index_box(style, width, height)
    boxes = [(x0, y0, x1, y1), (width - x1, height - y1, width - x0, height - y0)]
    if style.four_corners:
        boxes += [(width - x1, y0, width - x0, y1), (x0, height - y1, x1, height - y0)]
    return boxes


def _layout_fits(style: DeckStyle) -> bool:
    x0, y0, x1, y1 = index_box(style, 1000, 1400)
    lx0, ly0, lx1, ly1 = (v * 1000 for v in INDEX_LIMIT)
    if x0 < lx0 - 1e-6 or y0 < ly0 - 1e-6 or x1 > lx1 + 1e-6 or y1 > ly1 + 1e-6:
        return False
    radius = style.radius * 1000
    if x0 < radius and y0 < radius:  # the index's corner must clear the card's rounded corner
        return float(np.hypot(radius - x0, radius - y0)) <= radius - CORNER_CLEARANCE * 1000
    return True


def _fit_layout(rng: np.random.Generator, base: DeckStyle) -> DeckStyle:
    """Draw index layouts until one lies inside INDEX_LIMIT; shrinking the rank height to fit is allowed down to
    the smallest real index (0.10 W), below that the layout is drawn again."""
    for _ in range(200):
        beside = rng.random() < 0.15
        rank_h = rng.uniform(0.10, 0.22)
        style = replace(
            base,
            beside=beside,
            rank_h=rank_h,
            rank_w=rng.uniform(0.78, 1.15),
            suit_ratio=rng.uniform(0.6, 1.0),
            gap=rng.uniform(0.04, 0.22) if beside else rng.uniform(0.06, 0.28),
            margin_x=rng.uniform(0.02, 0.08),
            margin_y=rng.uniform(0.02, 0.08),
        )
        x0, y0, x1, y1 = index_box(style, 1000, 1400)
        lx1, ly1 = INDEX_LIMIT[2] * 1000, INDEX_LIMIT[3] * 1000
        shrink = min(1.0, (lx1 - x0) / (x1 - x0), (ly1 - y0) / (y1 - y0)) * (0.999 if x1 > lx1 or y1 > ly1 else 1)
        style = replace(style, rank_h=rank_h * shrink)
        if style.rank_h >= 0.10 and _layout_fits(style):
            return style
    return replace(base, beside=False, rank_h=0.11, rank_w=0.9, suit_ratio=0.7, gap=0.1, margin_x=0.05, margin_y=0.05)


def random_style(rng: np.random.Generator, split: str) -> DeckStyle:
    """One deck design drawn from `rng`, lettered only with fonts of `split`."""
    families = _split_families(split)
    if not families:
        raise DeckError(f"no fonts of split '{split}' under {FONT_ROOT} (install Debian font packages)")
    lettering = _pick(rng, LETTERING_WEIGHTS)
    letters = LETTERINGS[lettering]
    font = _choose_font(rng, split, "".join(letters) + ALWAYS_DRAWN)
    if font is None:  # no font of this split has these letters (Cyrillic): fall back to English
        lettering, letters = "english", LETTERINGS["english"]
        font = _choose_font(rng, split, "".join(letters) + ALWAYS_DRAWN)
    if font is None:
        raise DeckError(f"no font of split '{split}' draws the index letters")
    ace = "As" if lettering == "german" and rng.random() < 0.3 else letters[0]
    labels = (ace, *RANKS[1:10], letters[1], letters[2], letters[3])
    _, stroke = _font_metrics(font)
    outlined_index = rng.random() < 0.07
    bold = outlined_index or rng.random() < 0.35
    target = rng.uniform(0.17, 0.24) if bold else max(stroke, rng.uniform(0.08, 0.11))
    shapes = _suit_shapes(rng)
    suit_font, suit_glyphs = "", ""
    if rng.random() < 0.3:
        glyphs = SUIT_GLYPHS["outline" if rng.random() < 0.2 else "filled"]
        found = _suit_font(rng, split, font, glyphs)
        if found is not None:
            suit_font, suit_glyphs = found, glyphs
    if suit_font:
        suit_aspect = _glyph_aspects(suit_font, suit_glyphs)
    else:
        suit_aspect = max(shapes.heart_aspect, shapes.diamond_aspect, shapes.spade_aspect, shapes.club_aspect)
    aspect_kind = _pick(rng, {"poker": 0.65, "bridge": 0.25, "other": 0.10})
    aspect = {"poker": 1.40, "bridge": 1.56}.get(aspect_kind) or float(rng.uniform(1.43, 1.60))
    paper = _paper(rng)
    ink = _ink_colours(rng)
    court_palette = tuple(
        [_red(rng), _hsv(rng.uniform(0.55, 0.66), 0.8, 0.6), _hsv(rng.uniform(0.1, 0.16), 0.85, 0.95), ink[0]]
        if rng.random() < 0.6
        else [_saturated(rng) for _ in range(int(rng.integers(3, 6)))]
    )
    n_back = int(rng.choice([1, 2, 3], p=[0.35, 0.45, 0.2]))
    back_main = _red(rng) if rng.random() < 0.35 else _saturated(rng, (0.3, 0.7))
    back_light = _paper(rng) if rng.random() < 0.7 else _saturated(rng, (0.75, 0.95))
    back_colours: tuple[Colour, ...] = (back_main, (255, 255, 255) if n_back == 1 else back_light)
    if n_back == 3:
        back_colours += (_saturated(rng, (0.7, 0.95)),)
    base = DeckStyle(
        seed=int(rng.integers(2**31)),
        split=split,
        aspect=aspect,
        font=font,
        lettering=lettering,
        labels=labels,
        ten=_pick(rng, {"normal": 0.7, "condensed": 0.15, "tight": 0.15}),
        embolden=max(0.0, target - stroke),
        outlined_index=outlined_index,
        suit_font=suit_font,
        suit_glyphs=suit_glyphs,
        shapes=shapes,
        suit_aspect=float(suit_aspect),
        outlined_suits=rng.random() < 0.08,
        colours=ink,
        beside=False,
        rank_h=0.0,
        rank_w=0.0,
        suit_ratio=0.0,
        gap=0.0,
        margin_x=0.0,
        margin_y=0.0,
        four_corners=rng.random() < 0.2,
        paper=paper,
        texture=_pick(rng, {"none": 0.6, "noise": 0.2, "paper": 0.2}),
        texture_strength=float(rng.uniform(1.0, 3.0)),
        radius=float(rng.uniform(0.03, 0.08)),
        border=float(rng.uniform(0.03, 0.07)) if rng.random() < 0.3 else 0.0,
        border_width=float(rng.uniform(0.004, 0.012)),
        border_colour=ink[0] if rng.random() < 0.5 else _saturated(rng),
        pip_scale=float(rng.uniform(0.14, 0.24)),
        pip_spread=float(rng.uniform(0.85, 1.0)),
        pip_top=float(rng.uniform(0.05, 0.11)),
        ace=_pick(rng, {"plain": 0.45, "large": 0.3, "ornate": 0.25}),
        ace_scale=float(rng.uniform(0.26, 0.38)),
        big_numbers=rng.random() < 0.1,
        court_frame=ink[0] if rng.random() < 0.5 else _saturated(rng, (0.3, 0.7)),
        court_tint=paper if rng.random() < 0.5 else _hsv(rng.random(), rng.uniform(0.05, 0.2), 0.97),
        court_palette=court_palette,
        court_figure=(figure := rng.random() < 0.75),
        court_letter=not figure or rng.random() < 0.3,  # a court always has a large motif, as real ones do
        court_divider=_pick(rng, {"horizontal": 0.4, "diagonal": 0.35, "none": 0.25}),
        court_shapes=int(rng.integers(5, 12)),
        joker_art=_pick(rng, {"star": 0.35, "jester": 0.35, "text": 0.3}),
        joker_index=_pick(rng, {"J": 0.4, "star": 0.3, "none": 0.3}),
        back_pattern=BACK_PATTERNS[int(rng.integers(len(BACK_PATTERNS)))],
        back_colours=back_colours,
        back_margin=float(rng.uniform(0.03, 0.08)) if rng.random() < 0.6 else 0.0,
        back_period=float(rng.uniform(0.04, 0.13)),
        back_angle=float(rng.choice([45.0, -45.0, 30.0, 60.0, 0.0, 90.0])),
    )
    return _fit_layout(rng, base)


# ---------------------------------------------------------------------------------------------------- masks


def _resize(mask: np.ndarray, width: int, height: int) -> np.ndarray:
    width, height = max(1, width), max(1, height)
    grow = width > mask.shape[1] or height > mask.shape[0]
    return cv2.resize(mask, (width, height), interpolation=cv2.INTER_CUBIC if grow else cv2.INTER_AREA)


def _fit(mask: np.ndarray, width: int, height: int, grow: bool = True) -> np.ndarray:
    """The mask scaled (aspect kept) to fit inside width x height; only shrunk unless `grow`."""
    h, w = mask.shape
    scale = min(width / w, height / h)
    if not grow:
        scale = min(scale, 1.0)
    return _resize(mask, min(width, int(w * scale)), min(height, int(h * scale)))


def _fit_rank(mask: np.ndarray, width: int, height: int) -> np.ndarray:
    """A rank glyph into its cell: shrunk to the cell height, then squeezed horizontally if still too wide (a
    wide "10" in a narrow index column is condensed on real cards too)."""
    h, w = mask.shape
    scale = min(1.0, height / h)
    new_h = min(height, max(1, int(h * scale)))
    new_w = min(width, max(1, int(w * scale)))
    return _resize(mask, new_w, new_h)


def _embolden(mask: np.ndarray, radius: float) -> np.ndarray:
    r = round(radius)
    if r < 1:
        return mask
    padded = np.pad(mask, r)
    return cv2.dilate(padded, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1)))


def _outline(mask: np.ndarray, thickness: float) -> np.ndarray:
    t = max(1, round(thickness))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * t + 1, 2 * t + 1))
    return cv2.subtract(mask, cv2.erode(mask, kernel))


def _label_mask(style: DeckStyle, label: str, cap_px: float, index: bool = True) -> np.ndarray:
    """A rank label drawn in the deck's index font with the cap height `cap_px` after emboldening."""
    thicken = style.embolden * cap_px
    size = max(4, round((cap_px - thicken) / _font_metrics(style.font)[0]))
    font = _font(style.font, size)
    if label == "10" and style.ten == "tight":
        mask = _crop(_render_text(font, "10", spacing=-0.07 * size))
    else:
        mask = _crop(_render_text(font, label))
    if label == "10" and style.ten == "condensed":
        mask = _resize(mask, round(mask.shape[1] * 0.7), mask.shape[0])
    mask = _embolden(mask, thicken / 2)
    if style.outlined_index and index:
        mask = _outline(mask, 0.07 * cap_px)
    return mask


Primitive = tuple[str, tuple[float, ...]]


def _bezier(p0: tuple[float, float], p1: tuple[float, float], p2: tuple[float, float], n: int = 24) -> list[float]:
    t = np.linspace(0, 1, n)[:, None]
    points = (1 - t) ** 2 * np.array(p0) + 2 * (1 - t) * t * np.array(p1) + t**2 * np.array(p2)
    return [float(v) for v in points.ravel()]


def _heart(w: float, h: float, lobe: float, bulge: float, flip: bool = False) -> list[Primitive]:
    """A heart in a w x h box (a spade's head when flipped): two lobes and bowed sides meeting at the tip."""
    r = lobe * w

    def y(v: float) -> float:
        return h - v if flip else v

    left = _bezier((0.0, y(r)), (bulge * w, y(r + (h - r) * 0.55)), (w / 2, y(h)))
    right = _bezier((w / 2, y(h)), (w - bulge * w, y(r + (h - r) * 0.55)), (w, y(r)))
    body = [*left, *right, w - r, y(r), w / 2, y(r * 0.9), r, y(r)]
    return [("circle", (r, y(r), r)), ("circle", (w - r, y(r), r)), ("poly", tuple(body))]


def _stem(w: float, h: float, top: float, flare: float) -> Primitive:
    half = flare * w / 2
    neck = 0.035 * w
    left = _bezier((w / 2 - neck, top), (w / 2 - neck, h - 0.04 * h), (w / 2 - half, h))
    right = _bezier((w / 2 + half, h), (w / 2 + neck, h - 0.04 * h), (w / 2 + neck, top))
    return "poly", (*left, *right)


def _club_lobe_radius(w: float, head: float, overlap: float) -> float:
    """The radius of a club's three lobes in a w-wide head: the side lobes touch the sides and the head's foot, the
    top lobe the head's top, and neighbouring lobes' centres lie `overlap` of a diameter apart. Printed clubs sit near
    0.8, which keeps the notches between the lobes deep enough to survive a 10 px index; lobes that overlap further
    round the club into a spade's silhouette (session 20: the earlier fixed lobe size did that at small sizes)."""
    # (w/2 - r)^2 + (head - 2r)^2 = (2 overlap r)^2, the smaller root
    a = 5 - 4 * overlap**2
    b = -(w + 4 * head)
    c = w**2 / 4 + head**2
    return float((-b - np.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * a))


def _suit_primitives(suit: str, s: SuitShapes, h: float) -> tuple[float, list[Primitive]]:
    """Vector pieces of one suit symbol of height h: (width, primitives)."""
    if suit == "H":
        w = s.heart_aspect * h
        return w, _heart(w, h, s.heart_lobe, s.heart_bulge)
    if suit == "D":
        w = s.diamond_aspect * h
        top, right, bottom, left = (w / 2, 0.0), (w, h / 2), (w / 2, h), (0.0, h / 2)
        points: list[float] = []
        for a, b in ((top, right), (right, bottom), (bottom, left), (left, top)):
            mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
            out = (mid[0] - w / 2, mid[1] - h / 2)
            norm = float(np.hypot(*out)) or 1.0
            control = (mid[0] + s.diamond_bow * h * out[0] / norm, mid[1] + s.diamond_bow * h * out[1] / norm)
            points += _bezier(a, control, b, 12)
        return w, [("poly", tuple(points))]
    if suit == "S":
        w = s.spade_aspect * h
        head = h * (1 - s.spade_stem)
        return w, [*_heart(w, head, s.spade_lobe, 0.08, flip=True), _stem(w, h, head * 0.7, s.spade_flare)]
    w = s.club_aspect * h
    head = h * (1 - s.club_stem)
    r = _club_lobe_radius(w, head, overlap=0.8 + (s.club_lobe - 0.22) * 1.5)
    side_y = head - r
    middle = (w / 2, (r + side_y) / 2 + r * 0.2, r * 0.55)
    triangle = (w / 2, r, r, side_y, w - r, side_y)
    return w, [
        ("circle", (w / 2, r, r)),
        ("circle", (r, side_y, r)),
        ("circle", (w - r, side_y, r)),
        ("circle", middle),
        ("poly", triangle),
        _stem(w, h, side_y, s.club_flare),
    ]


def _rasterise(width: float, height: float, primitives: Sequence[Primitive], oversample: int = 4) -> np.ndarray:
    """Vector primitives to an antialiased mask (drawn `oversample` times larger, then area-averaged)."""
    k = oversample
    image = Image.new("L", (max(1, round(width * k)), max(1, round(height * k))), 0)
    draw = ImageDraw.Draw(image)
    for kind, values in primitives:
        if kind == "circle":
            x, y, r = (v * k for v in values)
            draw.ellipse((x - r, y - r, x + r, y + r), fill=255)
        else:
            draw.polygon([v * k for v in values], fill=255)
    return _resize(np.asarray(image), max(1, round(width)), max(1, round(height)))


def _suit_mask(style: DeckStyle, suit: str, height: float) -> np.ndarray:
    """One suit symbol of the given height (pixels), vector or font glyph, outlined where the deck's are."""
    if style.suit_font:
        glyph = style.suit_glyphs[SUITS.index(suit)]
        mask = _crop(_render_text(_font(style.suit_font, max(8, round(height * 1.6))), glyph))
        mask = _fit(mask, round(mask.shape[1] * height / mask.shape[0]), max(1, round(height)))
    else:
        width, primitives = _suit_primitives(suit, style.shapes, height)
        mask = _rasterise(width, height, primitives)
    if style.outlined_suits and style.suit_glyphs != SUIT_GLYPHS["outline"]:
        mask = _outline(mask, max(1.0, 0.07 * height))
    return mask


def _star(cx: float, cy: float, r: float, points: int = 5, inner: float = 0.45, turn: float = 0.0) -> list[float]:
    angles = np.arange(points * 2) * np.pi / points - np.pi / 2 + turn
    radii = np.where(np.arange(points * 2) % 2 == 0, r, r * inner)
    return [float(v) for xy in zip(cx + radii * np.cos(angles), cy + radii * np.sin(angles), strict=True) for v in xy]


# ---------------------------------------------------------------------------------------------------- drawing


def _stamp(canvas: np.ndarray, mask: np.ndarray, x: int, y: int, colour: Colours) -> None:
    """Blend `colour` into `canvas` (float, H x W x C) through `mask` placed with its top-left at (x, y)."""
    h, w = mask.shape
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, canvas.shape[1]), min(y + h, canvas.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    alpha = mask[y0 - y : y1 - y, x0 - x : x1 - x, None].astype(np.float32) / 255.0
    region = canvas[y0:y1, x0:x1]
    region *= 1.0 - alpha
    region += alpha * np.asarray(colour, np.float32)


def _stamp_rgba(canvas: np.ndarray, layer: np.ndarray, x: int, y: int) -> None:
    """Composite an RGBA layer (uint8) onto the float RGB canvas at (x, y)."""
    h, w = layer.shape[:2]
    alpha = layer[:, :, 3:].astype(np.float32) / 255.0
    region = canvas[y : y + h, x : x + w]
    region *= 1.0 - alpha
    region += alpha * layer[:, :, :3].astype(np.float32)


@dataclass(frozen=True)
class _Placed:
    """A mask and where its top-left lands on the supersampled card (top-left index position)."""

    mask: np.ndarray
    x: int
    y: int


def _place_in(mask: np.ndarray, box: Box, scale: int) -> _Placed:
    """Centre a mask in a box (card pixels) on the supersampled canvas; the mask must fit the box's inner pixels."""
    x0, y0 = int(np.ceil(box[0] * scale)), int(np.ceil(box[1] * scale))
    x1, y1 = int(np.floor(box[2] * scale)), int(np.floor(box[3] * scale))
    h, w = mask.shape
    assert w <= x1 - x0 and h <= y1 - y0, "index glyph larger than its cell"
    return _Placed(mask, x0 + (x1 - x0 - w) // 2, y0 + (y1 - y0 - h) // 2)


@dataclass
class _Assets:
    """Everything one deck's cards share, drawn once: the blank face, index glyphs, pips, colours."""

    width: int
    height: int
    face: np.ndarray  # float32 RGB, supersampled
    alpha: np.ndarray  # uint8, card size: the rounded corners
    ranks: dict[str, _Placed]
    suits: dict[str, _Placed]
    joker: list[_Placed]
    pips: dict[str, np.ndarray]
    field: tuple[int, int, int, int]  # supersampled pip field
    pip_dx: float
    index_span: tuple[int, int]  # supersampled x extent of the index cells' inner pixels


def _cell_px(box: Box, scale: int) -> tuple[int, int]:
    return int(np.floor(box[2] * scale)) - int(np.ceil(box[0] * scale)), int(np.floor(box[3] * scale)) - int(
        np.ceil(box[1] * scale)
    )


def _rounded_alpha(style: DeckStyle, width: int, height: int) -> np.ndarray:
    """The card's silhouette: opaque inside the rounded rectangle, transparent in the cut corners."""
    s = SUPERSAMPLE * 2
    image = Image.new("L", (width * s, height * s), 0)
    ImageDraw.Draw(image).rounded_rectangle(
        (0, 0, width * s - 1, height * s - 1), radius=style.radius * width * s, fill=255
    )
    alpha = cv2.resize(np.asarray(image), (width, height), interpolation=cv2.INTER_AREA).astype(np.float32)
    alpha = (alpha + alpha[::-1, ::-1] + alpha[::-1] + alpha[:, ::-1]) / 4  # PIL's corners differ by a pixel
    return np.clip(alpha + 0.5, 0, 255).astype(np.uint8)


def _blank_face(style: DeckStyle, width: int, height: int, rng: np.random.Generator) -> np.ndarray:
    s = SUPERSAMPLE
    w2, h2 = width * s, height * s
    face = np.empty((h2, w2, 3), np.float32)
    face[:] = style.paper
    if style.texture == "noise":
        face += rng.normal(0, style.texture_strength, (h2, w2, 1)).astype(np.float32)
    elif style.texture == "paper":
        noise = rng.normal(0, 1, (h2 // 4 + 1, w2 // 4 + 1)).astype(np.float32)
        noise = cv2.resize(cv2.GaussianBlur(noise, (0, 0), 1.2), (w2, h2), interpolation=cv2.INTER_CUBIC)
        face += (noise / (noise.std() + 1e-6) * style.texture_strength)[:, :, None]
    if style.border > 0:
        inset = style.border * width * s
        line = Image.new("L", (w2, h2), 0)
        ImageDraw.Draw(line).rounded_rectangle(
            (inset, inset, w2 - 1 - inset, h2 - 1 - inset),
            radius=max(style.radius * width * s - inset, 2),
            outline=255,
            width=max(1, round(style.border_width * width * s)),
        )
        _stamp(face, np.asarray(line), 0, 0, style.border_colour)
    return np.clip(face, 0, 255)


def joker_word(style: DeckStyle) -> str:
    """The word this design's joker index spells down its column ("" for none), drawn from its own seed stream so
    that every other choice of every design stays as it was (decks drawn before session 22 keep their looks). A
    lettering whose word the index font cannot draw spells it in Latin letters, which every index font draws."""
    share = 0.0 if style.beside else JOKER_WORD_SHARE.get(style.joker_index, 0.0)  # a column needs a tall index
    if np.random.default_rng([style.seed, 7]).random() >= share:
        return ""
    word = JOKER_WORDS.get(style.lettering, "JOKER")
    return word if renders_chars(style.font, word) else "JOKER"


def _word_column(style: DeckStyle, word: str, width: int, height: int, s: int) -> list[_Placed]:
    """`word` one letter above the next down the index box (rank cell over suit cell), each letter fitted to its share
    of the box's height: the joker's word takes the place of its rank and suit, as on real jokers."""
    x0, y0, x1, y1 = index_box(style, width, height)
    step = (y1 - y0) / len(word)
    placed = []
    for k, letter in enumerate(word):
        box = (x0, y0 + k * step, x1, y0 + (k + 0.85) * step)
        cw, ch = _cell_px(box, s)
        placed.append(_place_in(_fit_rank(_label_mask(style, letter, ch), cw, ch), box, s))
    return placed


def _build_assets(style: DeckStyle, card_height: int) -> _Assets:
    s = SUPERSAMPLE
    height = card_height
    width = round(card_height / style.aspect)
    rng = np.random.default_rng([style.seed, 1])
    rank_box, suit_box = index_layout(style, width)
    rank_cw, rank_ch = _cell_px(rank_box, s)
    suit_cw, suit_ch = _cell_px(suit_box, s)
    ranks = {}
    for rank, label in zip(RANKS, style.labels, strict=True):
        ranks[rank] = _place_in(_fit_rank(_label_mask(style, label, rank_ch), rank_cw, rank_ch), rank_box, s)
    suits = {suit: _place_in(_fit(_suit_mask(style, suit, suit_ch), suit_cw, suit_ch), suit_box, s) for suit in SUITS}
    joker: list[_Placed] = []
    if word := joker_word(style):
        joker = _word_column(style, word, width, height, s)
    elif style.joker_index == "J":
        joker.append(_place_in(_fit_rank(_label_mask(style, "J", rank_ch), rank_cw, rank_ch), rank_box, s))
        star = _rasterise(suit_ch, suit_ch, [("poly", tuple(_star(suit_ch / 2, suit_ch / 2 + 1, suit_ch / 2)))])
        joker.append(_place_in(_fit(star, suit_cw, suit_ch), suit_box, s))
    elif style.joker_index == "star":
        size = min(rank_cw, rank_ch)
        star = _rasterise(size, size, [("poly", tuple(_star(size / 2, size / 2 + 1, size / 2)))])
        joker.append(_place_in(_fit(star, rank_cw, rank_ch), rank_box, s))
    # pip field: between the index columns, from pip_top to the mirrored bottom
    ix1 = index_box(style, width, height)[2]
    fx0 = round((ix1 + 0.02 * width) * s)
    fy0 = round(style.pip_top * height * s)
    fx1, fy1 = width * s - fx0, height * s - fy0
    fw, fh = fx1 - fx0, fy1 - fy0
    pw_max = style.pip_spread * fw / (2 + style.pip_spread) * 0.95
    pip_h = min(style.pip_scale * width * s, fh / 4.3, pw_max / style.suit_aspect)
    pip_w = pip_h * style.suit_aspect
    pips = {suit: _suit_mask(style, suit, pip_h) for suit in SUITS}
    return _Assets(
        width=width,
        height=height,
        face=_blank_face(style, width, height, rng),
        alpha=_rounded_alpha(style, width, height),
        ranks=ranks,
        suits=suits,
        joker=joker,
        pips=pips,
        field=(fx0, fy0, fx1, fy1),
        pip_dx=style.pip_spread * (fw / 2 - pip_w / 2),
        index_span=(
            int(np.ceil(min(rank_box[0], suit_box[0]) * s)),
            int(np.floor(max(rank_box[2], suit_box[2]) * s)),
        ),
    )


def _draw_index(
    canvas: np.ndarray, style: DeckStyle, assets: _Assets, parts: Sequence[_Placed], colour: Colours
) -> None:
    """The index in every corner it is printed: top-left, 180 degrees at bottom-right, and for four-index decks
    the same block upright at top-right (moved, not mirrored: rank and suit keep their order) and rotated at
    bottom-left."""
    h2, w2 = canvas.shape[:2]
    shift = w2 - assets.index_span[0] - assets.index_span[1]
    for part in parts:
        mask, x, y = part.mask, part.x, part.y
        mh, mw = mask.shape
        rotated = mask[::-1, ::-1]
        _stamp(canvas, mask, x, y, colour)
        _stamp(canvas, rotated, w2 - x - mw, h2 - y - mh, colour)
        if style.four_corners:
            _stamp(canvas, mask, x + shift, y, colour)
            _stamp(canvas, rotated, w2 - x - shift - mw, h2 - y - mh, colour)


def _centred(canvas: np.ndarray, mask: np.ndarray, cx: float, cy: float, colour: Colours) -> None:
    _stamp(canvas, mask, round(cx - mask.shape[1] / 2), round(cy - mask.shape[0] / 2), colour)


def _draw_pips(canvas: np.ndarray, style: DeckStyle, assets: _Assets, rank: str, suit: str) -> None:
    pip = assets.pips[suit]
    colour = style.colours[SUITS.index(suit)]
    fx0, fy0, fx1, fy1 = assets.field
    cx = (fx0 + fx1) / 2
    ph = pip.shape[0]
    for col, row in PIP_LAYOUT[rank]:
        y = fy0 + ph / 2 + row * (fy1 - fy0 - ph)
        mask = pip[::-1, ::-1] if row > 0.5 else pip
        _centred(canvas, np.ascontiguousarray(mask), cx + col * assets.pip_dx, y, colour)


def _draw_ace(canvas: np.ndarray, style: DeckStyle, assets: _Assets, suit: str) -> None:
    s = SUPERSAMPLE
    colour = style.colours[SUITS.index(suit)]
    fx0, fy0, fx1, fy1 = assets.field
    ornate = style.ace == "ornate" and suit == "S"
    size = style.ace_scale * assets.width * s * (1.6 if style.ace == "large" or ornate else 1.0)
    size = min(size, (fx1 - fx0) * 0.95 / style.suit_aspect, (fy1 - fy0) * 0.6)
    if ornate:
        size *= 0.8
    mask = _suit_mask(style, suit, size)
    cx, cy = (fx0 + fx1) / 2, (fy0 + fy1) / 2
    if ornate:
        ring_r = size * 0.78
        box = round(ring_r * 2.4)
        ring = Image.new("L", (box, box), 0)
        draw = ImageDraw.Draw(ring)
        c = box / 2
        draw.ellipse((c - ring_r, c - ring_r, c + ring_r, c + ring_r), outline=255, width=max(2, round(size * 0.03)))
        for k in range(12):
            a = k * np.pi / 6
            dot = size * 0.035
            px, py = c + 1.1 * ring_r * np.cos(a), c + 1.1 * ring_r * np.sin(a)
            draw.ellipse((px - dot, py - dot, px + dot, py + dot), fill=255)
        _centred(canvas, np.asarray(ring), cx, cy, colour)
    _centred(canvas, mask, cx, cy, colour)


def _draw_big_number(canvas: np.ndarray, style: DeckStyle, assets: _Assets, rank: str, suit: str) -> None:
    colour = style.colours[SUITS.index(suit)]
    fx0, fy0, fx1, fy1 = assets.field
    cap = min((fy1 - fy0) * 0.3, (fx1 - fx0) * 0.6)
    mask = _fit(_label_mask(style, rank, cap, index=False), round((fx1 - fx0) * 0.9), round(cap * 1.2), grow=False)
    cx, cy = (fx0 + fx1) / 2, (fy0 + fy1) / 2
    _centred(canvas, mask, cx, cy - cap * 0.35, colour)
    pip = _suit_mask(style, suit, cap * 0.55)
    _centred(canvas, pip, cx, cy + cap * 0.55, colour)


def _half_plane(style: DeckStyle, w: int, h: int) -> np.ndarray:
    """The part of the frame the court art is drawn in; its 180-degree turn fills the rest, like real courts."""
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    tilt = 0.22 * h if style.court_divider == "diagonal" else 0.0
    line = h / 2 + tilt * (1 - 2 * (xs + 0.5) / w)
    return np.clip(line - (ys + 0.5) + 0.5, 0, 1)


def _court_layer(style: DeckStyle, rank: str, suit: str, w: int, h: int) -> np.ndarray:
    """Procedural court art (RGBA, w x h): shapes, optional figure and letter, point-symmetric like real courts.
    J, Q and K of a deck share the structure and differ in colours, shapes and headgear."""
    rng = np.random.default_rng([style.seed, 2, RANKS.index(rank), SUITS.index(suit)])
    palette = [style.court_palette[i] for i in rng.permutation(len(style.court_palette))]
    layer = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    half = h / 2
    for i in range(style.court_shapes):
        colour = (*palette[i % len(palette)], 255)
        cx, cy = rng.uniform(0, w), rng.uniform(0, half)
        r = rng.uniform(0.06, 0.22) * w
        kind = rng.integers(3)
        if kind == 0:
            draw.ellipse((cx - r, cy - r * rng.uniform(0.5, 1.2), cx + r, cy + r * rng.uniform(0.5, 1.2)), fill=colour)
        elif kind == 1:
            n = int(rng.integers(3, 7))
            angles = np.sort(rng.uniform(0, 2 * np.pi, n))
            draw.polygon([(cx + r * np.cos(a), cy + r * np.sin(a)) for a in angles], fill=colour)
        else:
            stripe = max(2.0, rng.uniform(0.02, 0.05) * w)
            y0 = rng.uniform(0, half)
            for k in range(int(rng.integers(2, 5))):
                yy = y0 + k * stripe * 2
                draw.rectangle((0, yy, w, yy + stripe), fill=colour)
    if style.court_figure:
        cx = w * rng.uniform(0.42, 0.58)
        head_r = 0.12 * w
        cy = half * 0.42
        body = palette[0]
        draw.polygon(
            [(cx - 0.14 * w, cy + head_r), (cx + 0.14 * w, cy + head_r), (cx + 0.36 * w, half), (cx - 0.36 * w, half)],
            fill=(*body, 255),
        )
        draw.rectangle((cx - 0.3 * w, half * 0.8, cx + 0.3 * w, half * 0.86), fill=(*palette[1 % len(palette)], 255))
        draw.ellipse((cx - head_r, cy - head_r, cx + head_r, cy + head_r), fill=(248, 222, 190, 255), outline=(0, 0, 0))
        top = cy - head_r * 0.8
        hat = (*palette[2 % len(palette)], 255)
        if rank == "K":
            points = [(cx - head_r, top), (cx - head_r, top - head_r * 0.5)]
            for k in range(5):
                points.append((cx - head_r + (k + 0.5) * head_r * 0.4, top - head_r * (0.9 if k % 2 == 0 else 0.5)))
            points += [(cx + head_r, top - head_r * 0.5), (cx + head_r, top)]
            draw.polygon(points, fill=hat)
        elif rank == "Q":
            draw.chord((cx - head_r, top - head_r * 0.7, cx + head_r, top + head_r * 0.5), 180, 360, fill=hat)
            for k in range(3):
                x = cx - head_r * 0.6 + k * head_r * 0.6
                draw.ellipse((x - 3, top - head_r * 0.75 - 3, x + 3, top - head_r * 0.75 + 3), fill=hat)
        else:
            draw.rectangle((cx - head_r * 1.1, top - head_r * 0.35, cx + head_r * 1.1, top), fill=hat)
            draw.line((cx + head_r * 0.5, top - head_r * 0.3, cx + head_r * 1.3, top - head_r * 1.2), fill=hat, width=3)
        eye = max(1.0, head_r * 0.1)
        for dx in (-0.35, 0.35):
            ex = cx + dx * head_r
            draw.ellipse((ex - eye, cy - eye, ex + eye, cy + eye), fill=(30, 30, 30, 255))
    if style.court_letter:
        label = style.labels[RANKS.index(rank)]
        mask = _label_mask(style, label, half * 0.32, index=False)
        letter = Image.new("RGBA", (mask.shape[1], mask.shape[0]), (*palette[-1], 255))
        letter.putalpha(Image.fromarray(mask))
        layer.alpha_composite(letter, (round(w * 0.08), round(half * 0.55)))
    pip = _suit_mask(style, suit, 0.14 * w)
    tinted = Image.new("RGBA", (pip.shape[1], pip.shape[0]), (*style.colours[SUITS.index(suit)], 255))
    tinted.putalpha(Image.fromarray(pip))
    layer.alpha_composite(tinted, (round(w * 0.07), round(h * 0.03)))
    array = np.asarray(layer).astype(np.float32)
    array[:, :, 3] *= _half_plane(style, w, h)
    turned = array[::-1, ::-1]
    premultiplied = array[:, :, :3] * array[:, :, 3:] + turned[:, :, :3] * turned[:, :, 3:]
    alpha = np.clip(array[:, :, 3:] + turned[:, :, 3:], 1e-3, 255)
    out = np.concatenate([premultiplied / alpha, alpha], axis=2)
    return np.clip(out, 0, 255).astype(np.uint8)


def _draw_court(canvas: np.ndarray, style: DeckStyle, assets: _Assets, rank: str, suit: str) -> None:
    s = SUPERSAMPLE
    fx0, fy0, fx1, fy1 = assets.field
    w, h = fx1 - fx0, fy1 - fy0
    frame = np.empty((h, w, 3), np.float32)
    frame[:] = style.court_tint
    _stamp_rgba(frame, _court_layer(style, rank, suit, w, h), 0, 0)
    outline = Image.new("L", (w, h), 0)
    draw = ImageDraw.Draw(outline)
    line = max(2, round(0.008 * assets.width * s))
    draw.rectangle((0, 0, w - 1, h - 1), outline=255, width=line)
    if style.court_divider != "none":
        tilt = 0.22 * h if style.court_divider == "diagonal" else 0.0
        draw.line((0, h / 2 + tilt, w, h / 2 - tilt), fill=255, width=max(1, line // 2))
    _stamp(frame, np.asarray(outline), 0, 0, style.court_frame)
    canvas[fy0:fy1, fx0:fx1] = frame


def _draw_joker(canvas: np.ndarray, style: DeckStyle, assets: _Assets) -> None:
    fx0, fy0, fx1, fy1 = assets.field
    w, h = fx1 - fx0, fy1 - fy0
    cx, cy = (fx0 + fx1) / 2, (fy0 + fy1) / 2
    rng = np.random.default_rng([style.seed, 3])
    # strong colours first: a pale yellow JOKER or star on cream paper is barely there
    palette = sorted(style.court_palette, key=lambda c: 0.3 * c[0] + 0.59 * c[1] + 0.11 * c[2] > 170)
    if style.joker_art == "text":
        cap = min(h / 6.2, w * 0.6)
        colour = palette[int(rng.integers(max(1, len(palette) - 1)))]
        for k, letter in enumerate("JOKER"):
            mask = _fit(_label_mask(style, letter, cap, index=False), round(w * 0.8), round(cap * 1.15), grow=False)
            _centred(canvas, mask, cx, cy + (k - 2) * cap * 1.2, colour)
        return
    layer = Image.new("L", (w, h), 0)
    draw = ImageDraw.Draw(layer)
    if style.joker_art == "star":
        r = min(w, h) * 0.42
        draw.polygon(_star(w / 2, h / 2, r, inner=rng.uniform(0.38, 0.5)), fill=255)
        _stamp(canvas, np.asarray(layer), fx0, fy0, palette[0])
        small = Image.new("L", (w, h), 0)
        small_draw = ImageDraw.Draw(small)
        for k in range(int(rng.integers(4, 9))):
            a = k * 2 * np.pi / 8 + 0.3
            small_draw.polygon(_star(w / 2 + 0.9 * r * np.cos(a), h / 2 + 1.2 * r * np.sin(a), r * 0.12), fill=255)
        _stamp(canvas, np.asarray(small), fx0, fy0, palette[1 % len(palette)])
        return
    # jester: a face, a three-pointed hat with bells, a zigzag collar
    head = min(w, h) * 0.2
    hx, hy = w / 2, h * 0.5
    hat = [(hx - head * 1.1, hy - head * 0.6), (hx - head * 2.0, hy - head * 2.4), (hx - head * 0.4, hy - head * 1.3)]
    hat += [(hx, hy - head * 2.8), (hx + head * 0.4, hy - head * 1.3), (hx + head * 2.0, hy - head * 2.4)]
    hat += [(hx + head * 1.1, hy - head * 0.6)]
    draw.polygon(hat, fill=255)
    _stamp(canvas, np.asarray(layer), fx0, fy0, palette[0])
    bells = Image.new("L", (w, h), 0)
    bells_draw = ImageDraw.Draw(bells)
    for bx, by in ((hx - head * 2.0, hy - head * 2.4), (hx, hy - head * 2.8), (hx + head * 2.0, hy - head * 2.4)):
        bells_draw.ellipse((bx - head * 0.25, by - head * 0.25, bx + head * 0.25, by + head * 0.25), fill=255)
    collar = [(hx - head * 1.6, hy + head * 0.8)]
    for k in range(9):
        collar.append((hx - head * 1.6 + (k + 0.5) * head * 3.2 / 9, hy + head * (1.8 if k % 2 == 0 else 1.0)))
    collar.append((hx + head * 1.6, hy + head * 0.8))
    bells_draw.polygon(collar, fill=255)
    _stamp(canvas, np.asarray(bells), fx0, fy0, palette[1 % len(palette)])
    face = Image.new("L", (w, h), 0)
    ImageDraw.Draw(face).ellipse((hx - head, hy - head, hx + head, hy + head), fill=255)
    _stamp(canvas, np.asarray(face), fx0, fy0, (248, 222, 190))
    features = Image.new("L", (w, h), 0)
    fdraw = ImageDraw.Draw(features)
    eye = head * 0.12
    for dx in (-0.4, 0.4):
        fdraw.ellipse((hx + dx * head - eye, hy - head * 0.2 - eye, hx + dx * head + eye, hy - head * 0.2 + eye), 255)
    fdraw.arc((hx - head * 0.5, hy - head * 0.3, hx + head * 0.5, hy + head * 0.55), 20, 160, 255, max(2, round(eye)))
    _stamp(canvas, np.asarray(features), fx0, fy0, (30, 30, 30))


def _back_field(pattern: str, period: float, angle: float, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    """A pattern value in [0, 1] per pixel, point-symmetric about the centre (every term is even in u, v), so the
    back looks the same either way up, as real backs do. `period` is in pixels."""
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    u, v = xs - (w - 1) / 2, ys - (h - 1) / 2
    k = 2 * np.pi / max(4.0, period)
    if pattern == "stripes":
        a = np.deg2rad(angle)
        t = np.cos(k * (u * np.cos(a) + v * np.sin(a)))
        return np.clip(t * 3 + 0.5, 0, 1)
    if pattern == "checkers":
        return np.clip(np.sin(k * u) * np.sin(k * v) * 6 + 0.5, 0, 1)
    if pattern == "lattice":
        lines = np.minimum(np.abs(np.sin(k / 2 * (u + v))), np.abs(np.sin(k / 2 * (u - v))))
        return np.clip((0.18 - lines) * 8 + 0.5, 0, 1)
    if pattern == "dots":
        return np.clip((np.cos(k * u) * np.cos(k * v) - 0.35) * 5 + 0.5, 0, 1)
    if pattern == "concentric":
        d = np.maximum(np.abs(u) / w, np.abs(v) / h) * w
        return np.clip(np.cos(k * d) * 3 + 0.5, 0, 1)
    small = rng.normal(0, 1, (max(2, h // 12), max(2, w // 12))).astype(np.float32)
    small = small + small[::-1, ::-1]
    noise = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    noise = 0.5 * (noise + noise[::-1, ::-1])
    return np.clip(noise / (noise.std() + 1e-6) * 0.8 + 0.5, 0, 1)


def _render_back(style: DeckStyle, width: int, height: int) -> np.ndarray:
    s = SUPERSAMPLE
    w2, h2 = width * s, height * s
    rng = np.random.default_rng([style.seed, 4])
    canvas = np.empty((h2, w2, 3), np.float32)
    canvas[:] = (255, 255, 255) if style.back_margin > 0 else style.back_colours[0]
    margin = round(style.back_margin * width * s)
    iw, ih = w2 - 2 * margin, h2 - 2 * margin
    period = style.back_period * w2
    field = _back_field(style.back_pattern, period, style.back_angle, iw, ih, rng)[:, :, None]
    c0, c1 = (np.asarray(c, np.float32) for c in style.back_colours[:2])
    inner = c1 * (1 - field) + c0 * field
    if len(style.back_colours) > 2:
        accent = _back_field("lattice", period * 2.1, 0.0, iw, ih, rng)[:, :, None]
        inner = inner * (1 - accent * 0.85) + np.asarray(style.back_colours[2], np.float32) * accent * 0.85
    canvas[margin : margin + ih, margin : margin + iw] = inner
    frame = max(2, round(0.012 * width * s))
    if margin > 0:
        outline = Image.new("L", (w2, h2), 0)
        ImageDraw.Draw(outline).rectangle((margin, margin, w2 - 1 - margin, h2 - 1 - margin), outline=255, width=frame)
        _stamp(canvas, np.asarray(outline), 0, 0, style.back_colours[0])
    return canvas


# ---------------------------------------------------------------------------------------------------- cards


def _finish(canvas: np.ndarray, assets: _Assets) -> np.ndarray:
    """Supersampled RGB to a card-size BGRA picture with the rounded corners in alpha."""
    small = cv2.resize(canvas, (assets.width, assets.height), interpolation=cv2.INTER_AREA)
    rgb = np.clip(small + 0.5, 0, 255).astype(np.uint8)
    return np.dstack([rgb[:, :, ::-1], assets.alpha])


def _face_canvas(style: DeckStyle, assets: _Assets, code: str, index_only: bool) -> np.ndarray:
    canvas = np.zeros((*assets.face.shape[:2], 1), np.float32) if index_only else assets.face.copy()
    if code == "JOKER":
        if not index_only:
            _draw_joker(canvas, style, assets)
        colour = (255.0,) if index_only else style.court_palette[0]
        _draw_index(canvas, style, assets, assets.joker, colour)
        return canvas
    rank, suit = code[:-1], code[-1]
    if not index_only:
        if rank == "A":
            _draw_ace(canvas, style, assets, suit)
        elif rank in COURTS:
            _draw_court(canvas, style, assets, rank, suit)
        elif style.big_numbers:
            _draw_big_number(canvas, style, assets, style.labels[RANKS.index(rank)], suit)
        else:
            _draw_pips(canvas, style, assets, rank, suit)
    colour = (255.0,) if index_only else style.colours[SUITS.index(suit)]
    _draw_index(canvas, style, assets, [assets.ranks[rank], assets.suits[suit]], colour)
    return canvas


def render_cards(style: DeckStyle, card_height: int = 350, index_only: bool = False) -> dict[str, np.ndarray]:
    """Every picture of a design as BGRA arrays by code (52 faces, JOKER, BACK). With `index_only`, each face is
    a single-channel uint8 mask of its index ink alone (segmentation labels for an index reader; no back)."""
    assets = _build_assets(style, card_height)
    cards: dict[str, np.ndarray] = {}
    codes = [rank + suit for suit in SUITS for rank in RANKS] + ["JOKER"]
    for code in codes:
        canvas = _face_canvas(style, assets, code, index_only)
        if index_only:
            small = cv2.resize(canvas[:, :, 0], (assets.width, assets.height), interpolation=cv2.INTER_AREA)
            cards[code] = np.clip(small + 0.5, 0, 255).astype(np.uint8)
        else:
            cards[code] = _finish(canvas, assets)
    if not index_only:
        cards[BACK] = _finish(_render_back(style, assets.width, assets.height), assets)
    return cards


def style_json(style: DeckStyle, card_height: int) -> dict[str, object]:
    """The style as JSON-ready data plus the index boxes as fractions of the picture (detection labels)."""
    width = round(card_height / style.aspect)
    data: dict[str, object] = asdict(style)
    data["joker_word"] = joker_word(style)
    data["index_boxes"] = [
        [round(x0 / width, 5), round(y0 / card_height, 5), round(x1 / width, 5), round(y1 / card_height, 5)]
        for x0, y0, x1, y1 in index_boxes(style, width, card_height)
    ]
    return data


def render_deck(style: DeckStyle, out_dir: Path, card_height: int = 350) -> Path:
    """Write a design as a deck directory (54 PNGs, style.json, and deck.json last: a deck whose deck.json exists
    was written completely). The deck is its own family, named after the directory."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "deck.json").unlink(missing_ok=True)
    for code, image in render_cards(style, card_height).items():
        if not cv2.imwrite(str(out_dir / f"{code}.png"), image):
            raise OSError(f"could not write {out_dir / f'{code}.png'}")
    (out_dir / "style.json").write_text(json.dumps(style_json(style, card_height), indent=1))
    corners = [0, 1, 2, 3] if style.four_corners else [0, 2]  # which printed corners (TL, TR, BR, BL) hold an index
    meta = {"name": out_dir.name, "family": out_dir.name, "index_corners": corners}
    (out_dir / "deck.json").write_text(json.dumps(meta))
    return out_dir


def deck_name(split: str, seed: int, i: int) -> str:
    return f"proc-{split}-{seed}-{i:04d}"


def style_for(split: str, seed: int, i: int) -> DeckStyle:
    """Deck i of a run: drawn from (seed, split, i) alone, so any deck can be regenerated on its own."""
    return random_style(np.random.default_rng([seed, SPLITS.index(split), i]), split)


def _complete(path: Path) -> bool:
    if not (path / "deck.json").is_file():
        return False
    try:
        return "JOKER" in load_deck(path).codes
    except DeckError:
        return False


def write_procedural_decks(
    out: Path, n: int, seed: int, split: str = "train", card_height: int = 350, progress: bool = True
) -> list[Path]:
    """Render n designs into `out`, each deck named proc-{split}-{seed}-{i:04d} and its own family. Resumable: a
    deck whose directory already loads completely is skipped."""
    out = Path(out)
    paths = []
    for i in tqdm(range(n), desc=f"{split} decks", unit="deck", disable=not progress):
        path = out / deck_name(split, seed, i)
        if not _complete(path):
            render_deck(style_for(split, seed, i), path, card_height)
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m vision.synth.procedural OUT --n 200 --seed 0 --split train --height 350`."""
    parser = argparse.ArgumentParser(description="Render procedural standard deck designs into deck directories.")
    parser.add_argument("out")
    parser.add_argument("--n", type=int, default=200, help="how many decks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=SPLITS, default="train", help="which fonts letter the indices")
    parser.add_argument("--height", type=int, default=350, help="card height in pixels")
    parser.add_argument("--sheets", help="also write a contact sheet per deck into this directory")
    args = parser.parse_args(argv)
    paths = write_procedural_decks(Path(args.out), args.n, args.seed, args.split, args.height)
    if args.sheets:
        from vision.synth.decks import deck_sheet

        for path in paths:
            deck_sheet(load_deck(path), Path(args.sheets) / f"{path.name}.png")
    print(f"{len(paths)} decks in {args.out}")


if __name__ == "__main__":
    main()
