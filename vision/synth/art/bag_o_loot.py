"""Bag-O-Loot (seeds/003): coin cards 1-16, the looter (a wild card) and the shared back, in many designs.

The rules say the numbers have colours that mean nothing ("Do the colors mean anything? No."), so every design
gives each number its own colour, and designs shuffle those colours: a recogniser must read the number, not the
colour. The looter carries no number; its corner index is an emblem (an "L" or a small mask).

Sizes are guesses (the rules give none): 63 x 88 mm (poker size) in most designs, 56 x 87 mm (the "American
standard" size some US party games use) in the rest. Reminder and spare cards are not drawn: the engine has no code
for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from games.bag_o_loot.engine import LOOTER, NUMBERS
from vision.synth.art.common import (
    BGR,
    BORDERS,
    PATTERNS,
    Box,
    Shape,
    Surface,
    border_clearance_mm,
    box_mask,
    card_surface,
    corner_anchors,
    design_split,
    draw_border,
    draw_coin,
    draw_coin_edge_on,
    draw_icon,
    draw_text,
    fit_height,
    hsv_bgr,
    ink_on,
    legible_on,
    luma,
    mix,
    paint,
    pick_numeral_font,
    pick_text_font,
    print_finish,
    print_pattern,
    region_fraction,
    stable_seed,
    text_box_size,
    union_box,
)
from vision.synth.pieces import PieceInfo, PieceSet, write_piece_set

GAME = "bag-o-loot"
BACK = "BACK"
SIZES_MM = ((63.0, 88.0), (56.0, 87.0))
THEMES = ("light", "full", "parchment", "dark")
MOTIFS = ("coin", "pile", "sack", "chest", "gem")
INDEX_STYLES = ("plain", "coin", "tab")
LOOTER_WORDS = ("LOOTER", "LOOTER!", "THE LOOTER", "LOOTER\u2009WILD")
GOLD: BGR = (40, 175, 225)
WHITE: BGR = (246, 246, 244)
INK: BGR = (30, 28, 26)


@dataclass(frozen=True)
class BagDesign:
    design: int
    size_mm: tuple[float, float]
    radius_mm: float
    theme: str
    paper: BGR
    number_colours: tuple[BGR, ...]  # index n - 1
    metal: BGR  # the coins' gold (or silver, copper)
    number_font: Path
    title_font: Path
    motif: str
    pattern: str
    pattern_opacity: float
    pattern_scale_mm: float
    border: str
    index_height_mm: float
    index_margin_mm: float
    index_style: str
    four_corners: bool
    numeral_on_motif: bool
    looter_emblem: str  # "letter" or "mask"
    looter_word: str
    back_colour: BGR
    back_pattern: str
    wear: float


def pick_design(design: int) -> BagDesign:
    rng = np.random.default_rng(stable_seed(GAME, design))
    theme = str(rng.choice(THEMES, p=[0.35, 0.3, 0.2, 0.15]))
    paper = _paper(rng, theme)
    split = design_split(design)
    number_font = pick_numeral_font(rng, split=split)
    return BagDesign(
        design=design,
        size_mm=SIZES_MM[int(rng.random() < 0.25)],
        radius_mm=float(rng.uniform(2.0, 4.0)),
        theme=theme,
        paper=paper,
        number_colours=_number_colours(rng, theme, paper),
        metal=hsv_bgr(
            *[
                (rng.uniform(38, 52), rng.uniform(0.55, 0.85), rng.uniform(0.8, 0.95)),
                (rng.uniform(20, 30), rng.uniform(0.55, 0.75), rng.uniform(0.65, 0.8)),
                (rng.uniform(200, 220), rng.uniform(0.03, 0.12), rng.uniform(0.72, 0.85)),
            ][int(rng.choice(3, p=[0.7, 0.15, 0.15]))]
        ),
        number_font=number_font,
        title_font=pick_text_font(rng, 0.8),
        motif=str(rng.choice(MOTIFS, p=[0.3, 0.2, 0.2, 0.15, 0.15])),
        pattern=str(rng.choice(PATTERNS)),
        pattern_opacity=float(rng.uniform(0.06, 0.2)),
        pattern_scale_mm=float(rng.uniform(3.0, 10.0)),
        border=str(rng.choice(BORDERS)),
        index_height_mm=float(rng.uniform(6.0, 9.0)),
        index_margin_mm=float(rng.uniform(2.8, 4.8)),
        index_style=str(rng.choice(INDEX_STYLES, p=[0.5, 0.3, 0.2])),
        four_corners=bool(rng.random() < 0.35),
        numeral_on_motif=bool(rng.random() < 0.55),
        looter_emblem=str(rng.choice(["letter", "mask"], p=[0.6, 0.4])),
        looter_word=str(rng.choice(LOOTER_WORDS, p=[0.55, 0.2, 0.15, 0.1])),
        back_colour=hsv_bgr(rng.uniform(0, 360), rng.uniform(0.35, 0.85), rng.uniform(0.2, 0.55)),
        back_pattern=str(rng.choice([p for p in PATTERNS if p != "plain"])),
        wear=float(rng.choice([0.0, rng.uniform(0.05, 0.55)], p=[0.25, 0.75])),
    )


def _paper(rng: np.random.Generator, theme: str) -> BGR:
    if theme == "dark":
        return hsv_bgr(rng.uniform(0, 360), rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.22))
    if theme == "parchment":
        return hsv_bgr(rng.uniform(32, 45), rng.uniform(0.2, 0.38), rng.uniform(0.82, 0.93))
    return hsv_bgr(rng.uniform(30, 60), rng.uniform(0.0, 0.12), rng.uniform(0.9, 0.99))


def _number_colours(rng: np.random.Generator, theme: str, paper: BGR) -> tuple[BGR, ...]:
    """Sixteen colours spread round the hue circle, shuffled per design (colour carries no meaning here)."""
    hues = (rng.uniform(0, 360) + np.arange(len(NUMBERS)) * 360 / len(NUMBERS) * rng.choice([1, 3, 5])) % 360
    rng.shuffle(hues)
    value = (0.85, 1.0) if theme == "dark" else (0.45, 0.8)
    colours = [hsv_bgr(h, rng.uniform(0.5, 0.9), rng.uniform(*value)) for h in hues]
    if theme == "full":
        return tuple(colours)
    return tuple(legible_on(c, paper, 90.0) for c in colours)


@dataclass(frozen=True)
class Face:
    bg: BGR
    fg: BGR  # the number's colour as printed on this stock
    text: BGR


def card_face(design: BagDesign, colour: BGR) -> Face:
    if design.theme == "full":
        return Face(colour, ink_on(colour, INK, WHITE), ink_on(colour, INK, WHITE))
    return Face(design.paper, colour, ink_on(design.paper))


# --------------------------------------------------------------------------------------------------- coin cards


def draw_coin_card(design: BagDesign, number: int, px_per_mm: float) -> tuple[np.ndarray, list[Box]]:
    rng = np.random.default_rng(stable_seed(GAME, design.design, str(number)))
    size = _size_px(design, px_per_mm)
    w_img, h_img = size
    face = card_face(design, design.number_colours[number - 1])
    surface = _blank(rng, design, face, px_per_mm)
    inner = draw_border(
        surface,
        design.border,
        face.fg if design.theme != "full" else face.text,
        px_per_mm,
        design.radius_mm * px_per_mm,
    )
    centre = (w_img / 2, h_img * 0.52)
    motif_box = _draw_motif(surface, rng, design, face, number, centre, (w_img - 2 * inner) * 0.8, px_per_mm)
    text = str(number)
    if design.numeral_on_motif and design.motif != "pile":
        numeral_h = fit_height(
            text, design.number_font, (motif_box[2] - motif_box[0]) * 0.55, (motif_box[3] - motif_box[1]) * 0.42
        )
        on_centre = (
            (motif_box[0] + motif_box[2]) / 2,
            (motif_box[1] + motif_box[3]) / 2
            + (motif_box[3] - motif_box[1]) * (0.1 if design.motif == "sack" else 0.0),
        )
        ink = ink_on(design.metal) if design.motif == "coin" else WHITE
        draw_text(
            surface,
            text,
            on_centre,
            numeral_h,
            ink,
            design.number_font,
            outline=(mix(ink, (0, 0, 0) if luma(ink) > 128 else WHITE, 0.6), max(round(0.4 * px_per_mm), 1)),
        )
    else:
        top = 2 * _index_inset(design, px_per_mm)[1] if design.four_corners else inner
        above = motif_box[1] - top  # the room between the top (indices) and the picture
        if above > 8 * px_per_mm:
            numeral_h = fit_height(text, design.number_font, w_img * 0.45, min(h_img * 0.16, above * 0.8))
            y = top + above / 2
        else:
            numeral_h = fit_height(text, design.number_font, w_img * 0.45, h_img * 0.12)
            y = motif_box[3] + numeral_h * 0.8
        draw_text(surface, text, (w_img / 2, y), numeral_h, face.fg, design.number_font)
    inset = _index_inset(design, px_per_mm)
    regions = [
        region_fraction(_draw_index(surface, design, face, text, anchor, rot, px_per_mm), size, 0.6 * px_per_mm)
        for anchor, rot in corner_anchors(size, inset, design.four_corners)
    ]
    return print_finish(rng, surface, design.wear), regions


def _size_px(design: BagDesign, px_per_mm: float) -> tuple[int, int]:
    return round(design.size_mm[0] * px_per_mm), round(design.size_mm[1] * px_per_mm)


def _blank(rng: np.random.Generator, design: BagDesign, face: Face, px_per_mm: float) -> Surface:
    surface = card_surface(rng, _size_px(design, px_per_mm), face.bg, design.radius_mm * px_per_mm)
    ink = mix(face.bg, face.fg if design.theme != "full" else WHITE, 0.5)
    pattern_rng = np.random.default_rng(stable_seed(GAME, design.design, "pattern"))
    print_pattern(
        surface, pattern_rng, design.pattern, ink, design.pattern_opacity, design.pattern_scale_mm * px_per_mm
    )
    return surface


def _index_inset(design: BagDesign, px_per_mm: float) -> tuple[float, float]:
    h = design.index_height_mm * px_per_mm
    width, _ = text_box_size("16", design.number_font, h)
    margin = max(design.index_margin_mm, border_clearance_mm(design.border)) * px_per_mm
    grow = 0.35 * h if design.index_style == "coin" else 0.0
    return margin + max(width, h) / 2 + grow, margin + h / 2 + grow


def _draw_index(
    surface: Surface,
    design: BagDesign,
    face: Face,
    text: str,
    anchor: tuple[float, float],
    rotation: float,
    px_per_mm: float,
) -> Box:
    h = design.index_height_mm * px_per_mm
    boxes: list[Box] = []
    ink = face.fg
    if design.index_style == "coin":
        width, _ = text_box_size(text, design.number_font, h * 0.8)
        boxes.append(draw_coin(surface, anchor, max(width, h) / 2 + 0.3 * h, design.metal))
        ink, h = ink_on(design.metal), h * 0.8
    elif design.index_style == "tab":
        width, _ = text_box_size(text, design.number_font, h)
        half_w, half_h = max(width, h * 0.6) / 2 + 0.25 * h, 0.75 * h
        tab = (anchor[0] - half_w, anchor[1] - half_h, anchor[0] + half_w, anchor[1] + half_h)
        paint(surface, box_mask(_canvas_size(surface), tab, 0.25 * h), face.fg)
        boxes.append(tab)
        ink = ink_on(face.fg)
    boxes.append(draw_text(surface, text, anchor, h, ink, design.number_font, rotation))
    return union_box(*boxes)


def _canvas_size(surface: Surface) -> tuple[int, int]:
    return surface.alpha.shape[1], surface.alpha.shape[0]


def _draw_motif(
    surface: Surface,
    rng: np.random.Generator,
    design: BagDesign,
    face: Face,
    number: int,
    centre: tuple[float, float],
    width: float,
    px_per_mm: float,
) -> Box:
    """The card's treasure picture; returns its box so the numeral can go on or beside it."""
    outline = (mix(face.bg, INK, 0.85) if design.theme != "dark" else (10, 10, 10), max(0.5 * px_per_mm, 1.0))
    if design.motif == "coin":
        return draw_coin(surface, centre, width * 0.42, design.metal)
    if design.motif == "pile":
        return _coin_pile(surface, rng, design, number, centre, width)
    half = width * 0.45
    box = (centre[0] - half, centre[1] - half, centre[0] + half, centre[1] + half)
    colours = {
        "main": face.fg if design.theme != "full" else mix(face.bg, INK, 0.45),
        "dark": mix(face.fg if design.theme != "full" else face.bg, INK, 0.55),
        "light": mix(face.fg if design.theme != "full" else face.bg, WHITE, 0.45),
        "metal": design.metal,
        "cord": mix(design.metal, INK, 0.35),
    }
    shapes = {"sack": SACK, "chest": CHEST, "gem": GEM}[design.motif]
    return draw_icon(surface, shapes, box, colours, outline)


def _coin_pile(
    surface: Surface,
    rng: np.random.Generator,
    design: BagDesign,
    number: int,
    centre: tuple[float, float],
    width: float,
) -> Box:
    """`number` coins in short stacks: the count is the value, as on a pip card."""
    stacks = min(max(-(-number // 6), 1), 3)
    radius = width / (stacks * 2 + 0.6)
    per = [number // stacks + (1 if i < number % stacks else 0) for i in range(stacks)]
    boxes = []
    step = radius * 0.32
    for i, count in enumerate(per):
        x = centre[0] + (i - (stacks - 1) / 2) * radius * 2.1
        base = centre[1] + radius * 1.2 + (rng.uniform(-0.15, 0.15) * radius)
        for k in range(count):
            jitter = rng.uniform(-0.06, 0.06) * radius
            boxes.append(draw_coin_edge_on(surface, (x + jitter, base - k * step), radius, design.metal))
    return union_box(*boxes)


# ------------------------------------------------------------------------------------------------------- looter


def draw_looter(design: BagDesign, px_per_mm: float) -> tuple[np.ndarray, list[Box]]:
    """The wild card: a masked thief, the word, and an emblem in the corners instead of a number."""
    rng = np.random.default_rng(stable_seed(GAME, design.design, LOOTER))
    size = _size_px(design, px_per_mm)
    w_img, h_img = size
    colour = hsv_bgr(rng.uniform(0, 360), 0.15, 0.25) if design.theme != "dark" else (200, 200, 200)
    face = Face(design.paper if design.theme != "full" else mix(design.back_colour, INK, 0.2), colour, INK)
    if design.theme == "full":
        face = Face(face.bg, ink_on(face.bg), ink_on(face.bg))
    surface = _blank(rng, design, face, px_per_mm)
    inner = draw_border(surface, design.border, face.fg, px_per_mm, design.radius_mm * px_per_mm)
    inset = _index_inset(design, px_per_mm)
    clear = 2 * inset[1] + 1.0 * px_per_mm  # keep the art and the word between the top and bottom indices
    word_h = fit_height(design.looter_word, design.title_font, w_img - 2 * inset[0] - 4 * px_per_mm, 6 * px_per_mm)
    word_y = h_img - clear - word_h / 2 - 1.5 * px_per_mm
    half = min((w_img - 2 * inner) * 0.4, (word_y - word_h - clear) / 2)
    centre = (w_img / 2, clear + half + 1.0 * px_per_mm)
    colours = {
        "skin": hsv_bgr(rng.uniform(18, 32), rng.uniform(0.25, 0.5), rng.uniform(0.6, 0.95)),
        "mask": (25, 25, 30),
        "hat": mix(design.back_colour, INK, 0.3),
        "eye": WHITE,
        "coat": mix(design.back_colour, WHITE, 0.15),
        "scarf": design.number_colours[0],
        "sack": hsv_bgr(30, 0.45, 0.6),
    }
    art_box = (centre[0] - half, centre[1] - half, centre[0] + half, centre[1] + half)
    rim = mix(face.bg, INK, 0.85) if design.theme != "dark" else (5, 5, 5)
    draw_icon(surface, THIEF, art_box, colours, (rim, max(0.5 * px_per_mm, 1.0)))
    draw_text(surface, design.looter_word, (w_img / 2, word_y), word_h, face.fg, design.title_font)
    regions = []
    h = design.index_height_mm * px_per_mm
    for anchor, rot in corner_anchors(size, inset, design.four_corners):
        if design.looter_emblem == "letter":
            box = draw_text(surface, "L", anchor, h, face.fg, design.number_font, rot)
        else:
            mask_box = (anchor[0] - h * 0.8, anchor[1] - h * 0.8, anchor[0] + h * 0.8, anchor[1] + h * 0.8)
            box = draw_icon(surface, MASK_EMBLEM, mask_box, {"mask": face.fg, "eye": face.bg}, None, rot)
        regions.append(region_fraction(box, size, 0.6 * px_per_mm))
    return print_finish(rng, surface, design.wear), regions


# --------------------------------------------------------------------------------------------------------- back


def draw_back(design: BagDesign, px_per_mm: float) -> np.ndarray:
    rng = np.random.default_rng(stable_seed(GAME, design.design, BACK))
    size = _size_px(design, px_per_mm)
    w_img, h_img = size
    bg = design.back_colour
    fg = mix(bg, WHITE, 0.85) if luma(bg) < 140 else mix(bg, INK, 0.85)
    surface = card_surface(rng, size, bg, design.radius_mm * px_per_mm)
    print_pattern(surface, rng, design.back_pattern, mix(bg, fg, 0.4), 0.3, design.pattern_scale_mm * px_per_mm)
    draw_border(
        surface,
        design.border if design.border != "none" else "thick",
        design.metal,
        px_per_mm,
        design.radius_mm * px_per_mm,
    )
    half = w_img * 0.3
    centre = (w_img / 2, h_img * 0.56)
    colours = {
        "main": hsv_bgr(30, 0.5, 0.55),
        "dark": hsv_bgr(30, 0.6, 0.35),
        "light": hsv_bgr(35, 0.35, 0.8),
        "metal": design.metal,
        "cord": mix(design.metal, INK, 0.4),
    }
    draw_icon(
        surface,
        SACK,
        (centre[0] - half, centre[1] - half, centre[0] + half, centre[1] + half),
        colours,
        ((15, 15, 15), max(0.6 * px_per_mm, 1.0)),
    )
    for text, y in (("BAG", 0.18), ("O", 0.255), ("LOOT", 0.33)):
        height = fit_height(text, design.title_font, w_img * 0.7, h_img * (0.07 if text != "O" else 0.045))
        draw_text(
            surface,
            text,
            (w_img / 2, h_img * y),
            height,
            design.metal,
            design.title_font,
            outline=((15, 15, 15), max(round(0.4 * px_per_mm), 1)),
        )
    return print_finish(rng, surface, design.wear)


# ------------------------------------------------------------------------------------------------------ clip art


def _poly(points: Sequence[tuple[float, float]], role: str) -> Shape:
    return Shape("poly", tuple(points), role)


def _ellipse(cx: float, cy: float, rx: float, ry: float, role: str, angle: float = 0.0) -> Shape:
    return Shape("ellipse", ((cx, cy), (rx, ry), (angle, 0.0)), role)


SACK = (
    _ellipse(0.5, 0.66, 0.36, 0.32, "main"),
    _poly([(0.36, 0.36), (0.64, 0.36), (0.72, 0.5), (0.28, 0.5)], "main"),
    _poly([(0.3, 0.18), (0.42, 0.28), (0.5, 0.2), (0.58, 0.28), (0.7, 0.17), (0.64, 0.36), (0.36, 0.36)], "dark"),
    _poly([(0.34, 0.33), (0.66, 0.33), (0.67, 0.39), (0.33, 0.39)], "cord"),
    _ellipse(0.4, 0.62, 0.08, 0.16, "light", 20.0),
    _ellipse(0.5, 0.7, 0.15, 0.15, "metal"),
)
CHEST = (
    _poly([(0.1, 0.48), (0.9, 0.48), (0.9, 0.88), (0.1, 0.88)], "main"),
    _ellipse(0.5, 0.48, 0.4, 0.26, "dark"),
    _poly([(0.1, 0.48), (0.9, 0.48), (0.9, 0.56), (0.1, 0.56)], "metal"),
    _poly([(0.22, 0.3), (0.3, 0.27), (0.3, 0.88), (0.22, 0.88)], "metal"),
    _poly([(0.7, 0.27), (0.78, 0.3), (0.78, 0.88), (0.7, 0.88)], "metal"),
    _poly([(0.43, 0.5), (0.57, 0.5), (0.57, 0.68), (0.43, 0.68)], "metal"),
    _ellipse(0.5, 0.58, 0.025, 0.04, "dark"),
    _ellipse(0.5, 0.24, 0.3, 0.06, "metal"),
)
GEM = (
    _poly([(0.22, 0.3), (0.78, 0.3), (0.95, 0.48), (0.5, 0.92), (0.05, 0.48)], "main"),
    _poly([(0.22, 0.3), (0.78, 0.3), (0.68, 0.48), (0.32, 0.48)], "light"),
    _poly([(0.05, 0.48), (0.32, 0.48), (0.5, 0.92)], "dark"),
    _poly([(0.68, 0.48), (0.95, 0.48), (0.5, 0.92)], "dark"),
    _poly([(0.32, 0.48), (0.68, 0.48), (0.5, 0.92)], "main"),
)
THIEF = (
    _poly([(0.14, 1.0), (0.24, 0.76), (0.76, 0.76), (0.86, 1.0)], "coat"),
    _ellipse(0.5, 0.5, 0.24, 0.29, "skin"),
    _poly([(0.3, 0.7), (0.7, 0.7), (0.62, 0.86), (0.5, 0.8), (0.38, 0.86)], "scarf"),
    _poly([(0.2, 0.42), (0.8, 0.42), (0.78, 0.54), (0.22, 0.54)], "mask"),
    _ellipse(0.39, 0.48, 0.06, 0.035, "eye"),
    _ellipse(0.61, 0.48, 0.06, 0.035, "eye"),
    _ellipse(0.5, 0.27, 0.4, 0.07, "hat"),
    _poly([(0.28, 0.27), (0.32, 0.06), (0.68, 0.06), (0.72, 0.27)], "hat"),
    _poly([(0.29, 0.22), (0.71, 0.22), (0.71, 0.26), (0.29, 0.26)], "mask"),
    _ellipse(0.85, 0.78, 0.14, 0.16, "sack"),
)
MASK_EMBLEM = (
    _poly([(0.05, 0.35), (0.5, 0.42), (0.95, 0.35), (0.88, 0.65), (0.5, 0.58), (0.12, 0.65)], "mask"),
    _ellipse(0.3, 0.5, 0.1, 0.06, "eye"),
    _ellipse(0.7, 0.5, 0.1, 0.06, "eye"),
)


# ----------------------------------------------------------------------------------------------------- the set


def render_set(out_dir: str | Path, design: int, px_per_mm: float = 4.0) -> PieceSet:
    """Every Bag-O-Loot card of one design, written as a piece set named bag-o-loot-design-<design>."""
    if px_per_mm < 1.0:
        raise ValueError(f"px_per_mm is {px_per_mm}; expected at least 1 (pieces.MIN_PIXELS_PER_MM)")
    look = pick_design(design)
    pieces: list[PieceInfo] = []
    pictures: dict[str, np.ndarray] = {}
    for number in NUMBERS:
        pictures[str(number)], regions = draw_coin_card(look, number, px_per_mm)
        pieces.append(PieceInfo(str(number), "card", look.size_mm, BACK, tuple(regions)))
    pictures[LOOTER], regions = draw_looter(look, px_per_mm)
    pieces.append(PieceInfo(LOOTER, "card", look.size_mm, BACK, tuple(regions)))
    pictures[BACK] = draw_back(look, px_per_mm)
    pieces.append(PieceInfo(BACK, "card", look.size_mm, None, ()))
    name = f"{GAME}-design-{design}"
    return write_piece_set(out_dir, GAME, name, name, pieces, pictures)
