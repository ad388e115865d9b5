"""LOOP (seeds/002): the 45 number cards (1-15 in red, green and blue), the 4 double-sided Rank cards and the
shared back, printed in many designs so a recogniser learns number and colour, not one printing.

Sizes are guesses (the rule sheet gives none): most designs are 63 x 88 mm (poker size, the commonest card), some
59 x 91 mm (a size many Japanese small-press games use, and LOOP is one). The rule sheet names no colours; the
engine's r/g/b are drawn as a red, a green and a blue whose hue, shade and use (ink on white stock, full-bleed
card colour, bright ink on dark stock) change per design, while staying far apart in hue within one design.

A Rank card has a "Normal Round" side and a "Loop Round" side (rules 1 and 15): the code RANK1.. is the Normal side
and its back picture RANK1_LOOP the Loop side, so a flipped Rank card is still labelled RANK1, face down.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from games.loop.engine import BASIC_POINTS, COLOURS, HIGHEST, STOPPER, ordinal
from vision.synth.art.common import (
    BGR,
    BORDERS,
    PATTERNS,
    Box,
    Surface,
    border_clearance_mm,
    box_mask,
    card_surface,
    corner_anchors,
    design_split,
    draw_border,
    draw_paragraph,
    draw_text,
    fill_circle,
    fill_polygons,
    fit_height,
    frame_mask,
    hsv_bgr,
    ink_on,
    legible_on,
    luma,
    mix,
    paint,
    pick_body_font,
    pick_numeral_font,
    pick_text_font,
    print_finish,
    print_pattern,
    region_fraction,
    rotate_about,
    stable_seed,
    star_points,
    stroke_circle,
    stroke_polygons,
    sub_surface,
    text_box_size,
    union_box,
)
from vision.synth.pieces import PieceInfo, PieceSet, write_piece_set

GAME = "loop"
BACK = "BACK"
RANKS = tuple(range(1, 5))
SIZES_MM = ((63.0, 88.0), (59.0, 91.0))
HUES = {"r": (-12.0, 14.0), "g": (100.0, 150.0), "b": (203.0, 232.0)}  # degrees; far apart so colour stays the cue
THEMES = ("light", "full", "dark")
CENTRES = ("numeral", "disc", "pips", "ring", "band", "panel")
ART_MOTIFS = (None, "bubbles", "shards", "swoosh")
PIP_SHAPES = ("circle", "diamond", "star", "square", "ring")
INDEX_STYLES = ("plain", "badge", "bar", "pip")
EIGHT_MARKS = (None, "twist", "stop", "loop")
BACK_LAYOUTS = ("ring", "band", "tiled")
MEDALS = ((46, 0.75, 0.85), (210, 0.08, 0.78), (24, 0.65, 0.68), (200, 0.35, 0.55))  # hue, sat, value per rank
WHITE: BGR = (246, 246, 244)
INK: BGR = (30, 28, 26)


@dataclass(frozen=True)
class LoopDesign:
    """Every style choice of one printing; a design number always gives the same one."""

    design: int
    size_mm: tuple[float, float]
    radius_mm: float
    theme: str
    paper: BGR
    inks: Mapping[str, BGR]  # engine colour letter -> the printed colour
    number_font: Path
    index_font: Path
    text_font: Path
    body_font: Path
    centre: str
    art: str | None  # translucent shapes behind the numeral, drawn anew on every card
    pip_shape: str
    pattern: str
    pattern_opacity: float
    pattern_scale_mm: float
    border: str
    neutral_border: bool
    index_height_mm: float
    index_margin_mm: float
    index_style: str
    four_corners: bool
    mark_six_nine: bool
    eight_mark: str | None
    numeral_height: float  # fraction of the card height
    numeral_outline: bool
    medal_ranks: bool
    back_colour: BGR
    back_pattern: str
    back_layout: str
    wear: float


def pick_design(design: int) -> LoopDesign:
    rng = np.random.default_rng(stable_seed(GAME, design))
    theme = str(rng.choice(THEMES, p=[0.5, 0.3, 0.2]))
    paper = _paper_colour(rng, theme)
    split = design_split(design)
    number_font = pick_numeral_font(rng, split=split)
    return LoopDesign(
        design=design,
        size_mm=SIZES_MM[int(rng.random() < 0.3)],
        radius_mm=float(rng.choice([rng.uniform(2.5, 4.0), rng.uniform(0.5, 1.5)], p=[0.8, 0.2])),
        theme=theme,
        paper=paper,
        inks={c: _ink(rng, c, theme, paper) for c in COLOURS},
        number_font=number_font,
        index_font=number_font if rng.random() < 0.6 else pick_numeral_font(rng, split=split),
        text_font=pick_text_font(rng, 0.7),
        body_font=pick_body_font(rng),
        centre=str(rng.choice(CENTRES, p=[0.3, 0.15, 0.15, 0.12, 0.14, 0.14])),
        art=ART_MOTIFS[int(rng.choice(4, p=[0.55, 0.15, 0.15, 0.15]))],
        pip_shape=str(rng.choice(PIP_SHAPES)),
        pattern=str(rng.choice(PATTERNS)),
        pattern_opacity=float(rng.uniform(0.05, 0.22)),
        pattern_scale_mm=float(rng.uniform(2.5, 9.0)),
        border=str(rng.choice(BORDERS, p=[0.25, 0.25, 0.2, 0.15, 0.15])),
        neutral_border=bool(rng.random() < 0.35),
        index_height_mm=float(rng.uniform(6.0, 9.5)),
        index_margin_mm=float(rng.uniform(2.8, 5.0)),
        index_style=str(rng.choice(INDEX_STYLES, p=[0.4, 0.25, 0.2, 0.15])),
        four_corners=bool(rng.random() < 0.3),
        mark_six_nine=bool(rng.random() < 0.6),
        eight_mark=EIGHT_MARKS[int(rng.choice(4, p=[0.35, 0.25, 0.2, 0.2]))],
        numeral_height=float(rng.uniform(0.28, 0.45)),
        numeral_outline=bool(rng.random() < 0.35),
        medal_ranks=bool(rng.random() < 0.6),
        back_colour=hsv_bgr(rng.uniform(0, 360), rng.uniform(0.3, 0.85), rng.uniform(0.15, 0.6)),
        back_pattern=str(rng.choice([p for p in PATTERNS if p != "plain"])),
        back_layout=str(rng.choice(BACK_LAYOUTS)),
        wear=float(rng.choice([0.0, rng.uniform(0.05, 0.5)], p=[0.3, 0.7])),
    )


def _paper_colour(rng: np.random.Generator, theme: str) -> BGR:
    if theme == "dark":
        return hsv_bgr(rng.uniform(0, 360), rng.uniform(0.0, 0.5), rng.uniform(0.08, 0.2))
    return hsv_bgr(rng.uniform(30, 60), rng.uniform(0.0, 0.15), rng.uniform(0.9, 0.99))


def _ink(rng: np.random.Generator, colour: str, theme: str, paper: BGR) -> BGR:
    """One design's red, green or blue: green is lighter to the eye, so it is printed darker to keep contrast."""
    hue = rng.uniform(*HUES[colour])
    top = 0.62 if colour == "g" else 0.8
    if theme == "dark":
        return legible_on(hsv_bgr(hue, rng.uniform(0.45, 0.85), rng.uniform(0.85, 1.0)), paper, 90.0)
    if theme == "full":
        return hsv_bgr(hue, rng.uniform(0.55, 0.9), rng.uniform(0.42, top + 0.08))
    return legible_on(hsv_bgr(hue, rng.uniform(0.65, 0.95), rng.uniform(0.45, top)), paper, 100.0)


@dataclass(frozen=True)
class Face:
    """The inks of one card face: background stock, the main (coloured) ink, and small-print ink."""

    bg: BGR
    fg: BGR
    text: BGR
    border: BGR


def card_face(design: LoopDesign, colour: str | None) -> Face:
    """How a design uses a card's colour; colour None is a neutral (Rank) card."""
    ink = design.inks[colour] if colour else INK
    if design.theme == "full" and colour:
        fg = ink_on(ink, INK, WHITE)
        return Face(ink, fg, fg, fg if design.neutral_border else mix(ink, (0, 0, 0), 0.35))
    text = ink_on(design.paper)
    if colour is None and design.theme == "dark":
        ink = (220, 220, 220)
    return Face(design.paper, ink, text, text if design.neutral_border else ink)


# ------------------------------------------------------------------------------------------------- number cards


def draw_number_card(design: LoopDesign, number: int, colour: str, px_per_mm: float) -> tuple[np.ndarray, list[Box]]:
    """One number card as BGRA and its corner-index regions (fractions)."""
    rng = np.random.default_rng(stable_seed(GAME, design.design, f"{number}{colour}"))
    size = _size_px(design, px_per_mm)
    face = card_face(design, colour)
    surface = card_surface(rng, size, face.bg, design.radius_mm * px_per_mm)
    pattern_ink = mix(face.bg, face.fg, 0.5) if design.theme != "full" else mix(face.bg, WHITE, 0.35)
    print_pattern(
        surface,
        np.random.default_rng(stable_seed(GAME, design.design, "pattern")),
        design.pattern,
        pattern_ink,
        design.pattern_opacity,
        design.pattern_scale_mm * px_per_mm,
    )
    inner = draw_border(surface, design.border, face.border, px_per_mm, design.radius_mm * px_per_mm)
    _draw_centre(surface, design, face, number, inner, px_per_mm)
    if number == STOPPER and design.eight_mark:
        _draw_eight_mark(surface, design, face, px_per_mm)
    regions = [
        region_fraction(_draw_index(surface, design, face, str(number), anchor, rot, px_per_mm), size, 0.6 * px_per_mm)
        for anchor, rot in corner_anchors(size, _index_inset(design, px_per_mm), design.four_corners)
    ]
    return print_finish(rng, surface, design.wear), regions


def _size_px(design: LoopDesign, px_per_mm: float) -> tuple[int, int]:
    return round(design.size_mm[0] * px_per_mm), round(design.size_mm[1] * px_per_mm)


def _index_inset(design: LoopDesign, px_per_mm: float) -> tuple[float, float]:
    """Centre of the top-left index: wide enough for '15', below the frame line when the border is heavy."""
    h = design.index_height_mm * px_per_mm
    width, _ = text_box_size("15", design.index_font, h)
    margin = max(design.index_margin_mm, border_clearance_mm(design.border)) * px_per_mm
    extra = 1.4 * h if design.index_style in ("bar", "pip") else 1.0 * h
    return margin + max(width, h) / 2 + (0.25 * h if design.index_style == "badge" else 0), margin + extra / 2


def _draw_index(
    surface: Surface,
    design: LoopDesign,
    face: Face,
    text: str,
    anchor: tuple[float, float],
    rotation: float,
    px_per_mm: float,
) -> Box:
    """One corner index turned `rotation` about its anchor; returns its ink box in pixels."""
    h = design.index_height_mm * px_per_mm
    style = design.index_style
    number_centre = (
        anchor if style in ("plain", "badge") else rotate_about((anchor[0], anchor[1] - 0.2 * h), anchor, rotation)
    )
    boxes: list[Box] = []
    ink = face.fg
    if style == "badge":
        width, _ = text_box_size(text, design.index_font, h)
        radius = max(width, h) / 2 + 0.3 * h
        fill_circle(surface, anchor, radius, face.fg)
        boxes.append((anchor[0] - radius, anchor[1] - radius, anchor[0] + radius, anchor[1] + radius))
        ink = face.bg
    boxes.append(draw_text(surface, text, number_centre, h, ink, design.index_font, rotation))
    if design.mark_six_nine and text in ("6", "9"):
        boxes.append(_underline(surface, boxes[-1], rotation, ink, px_per_mm))
    if style == "bar":
        centre = rotate_about((anchor[0], anchor[1] + 0.55 * h), anchor, rotation)
        half = (0.45 * h, 0.09 * h)
        bar = (centre[0] - half[0], centre[1] - half[1], centre[0] + half[0], centre[1] + half[1])
        paint(surface, box_mask((surface.alpha.shape[1], surface.alpha.shape[0]), bar, half[1]), face.fg)
        boxes.append(bar)
    if style == "pip":
        centre = rotate_about((anchor[0], anchor[1] + 0.6 * h), anchor, rotation)
        boxes.append(_pip(surface, design.pip_shape, centre, 0.22 * h, face.fg, rotation))
    return union_box(*boxes)


def _underline(surface: Surface, ink_box: Box, rotation: float, colour: BGR, px_per_mm: float) -> Box:
    """The bar printers put under a 6 or 9 so the two read apart upside down."""
    x0, y0, x1, y1 = ink_box
    thick = max(0.45 * px_per_mm, 1.0)
    gap = 0.5 * px_per_mm
    y = y1 + gap if rotation == 0 else y0 - gap - thick
    bar = (x0 + 0.1 * (x1 - x0), y, x1 - 0.1 * (x1 - x0), y + thick)
    paint(surface, box_mask((surface.alpha.shape[1], surface.alpha.shape[0]), bar), colour)
    return bar


def _pip(
    surface: Surface, shape: str, centre: tuple[float, float], radius: float, colour: BGR, rotation: float = 0
) -> Box:
    box = (centre[0] - radius, centre[1] - radius, centre[0] + radius, centre[1] + radius)
    if shape == "circle":
        fill_circle(surface, centre, radius, colour)
    elif shape == "ring":
        stroke_circle(surface, centre, radius * 0.78, colour, radius * 0.42)
    elif shape == "diamond":
        fill_polygons(surface, [_diamond(centre, radius)], colour)
    elif shape == "star":
        fill_polygons(surface, [star_points(centre, radius * 1.15, radius * 0.5, 5, rotation - 90)], colour)
    else:
        fill_polygons(surface, [star_points(centre, radius * 1.1, radius * 1.1, 2, rotation + 45)], colour)
    return box


def _diamond(centre: tuple[float, float], radius: float) -> np.ndarray:
    cx, cy = centre
    return np.array(
        [[cx, cy - radius * 1.15], [cx + radius * 0.8, cy], [cx, cy + radius * 1.15], [cx - radius * 0.8, cy]]
    )


def _draw_centre(surface: Surface, design: LoopDesign, face: Face, number: int, inner: float, px_per_mm: float) -> None:
    """The card's big numeral in the design's layout (pips count the value instead)."""
    h_img, w_img = surface.alpha.shape
    centre = (w_img / 2, h_img / 2)
    if design.art:
        art_rng = np.random.default_rng(stable_seed(GAME, design.design, "art", number))
        top = 2 * _index_inset(design, px_per_mm)[1]
        window, _ = sub_surface(surface, (inner, top, w_img - inner, h_img - top))
        _draw_art(window, art_rng, design.art, face)
    if design.centre == "pips":
        _draw_pips(surface, design, face, number, inner, px_per_mm)
        return
    height = design.numeral_height * h_img
    ink = face.fg
    if design.centre == "disc":
        radius = min(w_img / 2 - inner - 4 * px_per_mm, height * 0.95)
        fill_circle(surface, centre, radius, face.fg)
        stroke_circle(surface, centre, radius * 0.9, face.bg, max(0.4 * px_per_mm, 1.0))
        limit, height, ink = radius * 1.45, radius * 0.95, face.bg
    elif design.centre == "band":
        band = (0.0, centre[1] - height * 0.75, float(w_img), centre[1] + height * 0.75)
        paint(surface, box_mask((w_img, h_img), band), face.fg)
        limit, ink = w_img - 2 * inner - 10 * px_per_mm, face.bg
    elif design.centre == "panel":
        panel = (inner + 5 * px_per_mm, h_img * 0.22, w_img - inner - 5 * px_per_mm, h_img * 0.78)
        paint(surface, box_mask((w_img, h_img), panel, 3 * px_per_mm), mix(face.bg, face.fg, 0.22))
        paint(surface, frame_mask((w_img, h_img), panel, max(0.5 * px_per_mm, 1.0), 3 * px_per_mm), face.fg)
        limit = panel[2] - panel[0] - 6 * px_per_mm
    elif design.centre == "ring":
        _draw_loop_ring(surface, centre, min(w_img / 2 - inner - 3 * px_per_mm, height * 0.9), face.fg, px_per_mm)
        height, limit = height * 0.75, w_img - 2 * inner - 18 * px_per_mm
    else:
        limit = w_img - 2 * inner - 10 * px_per_mm
    text = str(number)
    height = fit_height(text, design.number_font, limit, height)
    rim = mix(ink, (0, 0, 0), 0.55) if luma(ink) > 90 else mix(ink, WHITE, 0.6)
    outline = (rim, max(round(0.5 * px_per_mm), 1)) if design.numeral_outline else None
    box = draw_text(surface, text, centre, height, ink, design.number_font, outline=outline)
    if design.mark_six_nine and number in (6, 9):
        _underline(surface, box, 0, ink, px_per_mm * 2.0)


def _draw_art(surface: Surface, rng: np.random.Generator, motif: str, face: Face) -> None:
    """Translucent abstract shapes in tints of the card's colour, different on every card like printed art;
    `surface` is the window the art may fill (inside the frame, between the index rows)."""
    h_img, w_img = surface.alpha.shape
    tints = [mix(face.bg, face.fg, t) for t in (0.15, 0.3, 0.45)]
    if motif == "bubbles":
        for _ in range(int(rng.integers(5, 11))):
            centre = (rng.uniform(0, w_img), rng.uniform(0, h_img))
            fill_circle(surface, centre, w_img * rng.uniform(0.05, 0.22), tints[int(rng.integers(0, 3))], 0.6)
    elif motif == "shards":
        for _ in range(int(rng.integers(4, 9))):
            pts = np.stack([rng.uniform(0, w_img, 3), rng.uniform(0, h_img, 3)], axis=1)
            fill_polygons(surface, [pts], tints[int(rng.integers(0, 3))], 0.55)
    else:
        xs = np.linspace(0, w_img, 60)
        for k in range(int(rng.integers(2, 5))):
            y0, amp, period = rng.uniform(0.2, 0.8) * h_img, rng.uniform(0.03, 0.12) * h_img, rng.uniform(0.6, 1.6)
            ys = y0 + amp * np.sin(xs / w_img * 2 * np.pi / period + rng.uniform(0, 6.3))
            width = w_img * rng.uniform(0.03, 0.1)
            stroke_polygons(surface, [np.stack([xs, ys], axis=1)], tints[k % 3], width, False, 0.7)


def _draw_pips(surface: Surface, design: LoopDesign, face: Face, number: int, inner: float, px_per_mm: float) -> None:
    """`number` pips in rows of up to three inside the card's middle, like a pip card: the count is the value."""
    h_img, w_img = surface.alpha.shape
    top, bottom = h_img * 0.2, h_img * 0.8
    left, right = w_img * 0.25, w_img * 0.75
    cols = 2 if number in (2, 4) else (1 if number == 1 else 3)
    rows = -(-number // cols)
    step = min((right - left) / cols, (bottom - top) / rows)
    radius = step * 0.36
    for i in range(number):
        row, col = divmod(i, cols)
        in_row = min(cols, number - row * cols)
        x = w_img / 2 + (col - (in_row - 1) / 2) * step
        y = (top + bottom) / 2 + (row - (rows - 1) / 2) * step
        _pip(surface, design.pip_shape, (x, y), radius, face.fg)


def _draw_loop_ring(
    surface: Surface, centre: tuple[float, float], radius: float, colour: BGR, px_per_mm: float
) -> None:
    """The game's loop motif: an open ring with an arrowhead, round the numeral."""
    t = np.deg2rad(np.linspace(-60, 250, 80))
    arc = np.stack([centre[0] + radius * np.cos(t), centre[1] + radius * np.sin(t)], axis=1)
    width = max(1.4 * px_per_mm, 2.0)
    stroke_polygons(surface, [arc], colour, width, closed=False)
    end = arc[-1]
    tangent = arc[-1] - arc[-2]
    tangent /= np.linalg.norm(tangent)
    normal = np.array([-tangent[1], tangent[0]])
    head = np.array([end + tangent * width * 2.2, end + normal * width * 1.6, end - normal * width * 1.6])
    fill_polygons(surface, [head], colour)


def _draw_eight_mark(surface: Surface, design: LoopDesign, face: Face, px_per_mm: float) -> None:
    """The 8 stops play and is revealed as a Twist (rules 10-11); some printings say so on the card."""
    h_img, w_img = surface.alpha.shape
    y = h_img * 0.84 if design.centre != "pips" else h_img * 0.885
    if design.eight_mark == "twist":
        height = fit_height("TWIST", design.text_font, w_img * 0.36, 3.2 * px_per_mm)
        draw_text(surface, "TWIST", (w_img / 2, y), height, face.text, design.text_font)
    elif design.eight_mark == "stop":
        r = 3.6 * px_per_mm
        fill_polygons(surface, [star_points((w_img / 2, y), r, r, 4, -90 + 22.5)], face.fg)
        paint(
            surface,
            box_mask((w_img, h_img), (w_img / 2 - r * 0.6, y - r * 0.16, w_img / 2 + r * 0.6, y + r * 0.16)),
            face.bg,
        )
    else:
        _draw_loop_ring(surface, (w_img / 2, y), 3.0 * px_per_mm, face.text, px_per_mm * 0.45)


# --------------------------------------------------------------------------------------------------- rank cards


def draw_rank_card(design: LoopDesign, rank: int, loop_side: bool, px_per_mm: float) -> tuple[np.ndarray, list[Box]]:
    """A Rank card side: the big ordinal, which round it is for, and its scoring (rules 14 and 17)."""
    code = f"RANK{rank}{'_LOOP' if loop_side else ''}"
    rng = np.random.default_rng(stable_seed(GAME, design.design, code))
    size = _size_px(design, px_per_mm)
    w_img, h_img = size
    face = card_face(design, None)
    if design.medal_ranks:
        hue, sat, val = MEDALS[rank - 1]
        bg = hsv_bgr(hue + design.design % 7, sat, val if not loop_side else val * 0.82)
        face = Face(bg, ink_on(bg), ink_on(bg), mix(bg, (0, 0, 0), 0.4))
    elif loop_side:
        face = Face(face.fg, face.bg, face.bg, face.bg)
    surface = card_surface(rng, size, face.bg, design.radius_mm * px_per_mm)
    pattern_rng = np.random.default_rng(stable_seed(GAME, design.design, "rank-pattern", int(loop_side)))
    print_pattern(
        surface,
        pattern_rng,
        design.pattern,
        mix(face.bg, face.fg, 0.5),
        design.pattern_opacity,
        design.pattern_scale_mm * px_per_mm,
    )
    inner = draw_border(surface, design.border, face.border, px_per_mm, design.radius_mm * px_per_mm)
    title = "LOOP ROUND" if loop_side else "NORMAL ROUND"
    title_h = fit_height(title, design.text_font, w_img - 2 * inner - 4 * px_per_mm, 3.6 * px_per_mm)
    title_y = 2 * _rank_index_inset(design, px_per_mm)[1] + 4 * px_per_mm
    draw_text(surface, title, (w_img / 2, title_y), title_h, face.text, design.text_font)
    _draw_ordinal(surface, design, face, rank, (w_img / 2, h_img * 0.43), h_img * 0.22)
    lines = [
        f"{players} players: {points[rank - 1]} pt"
        for players, points in sorted(BASIC_POINTS.items(), reverse=True)
        if rank <= players
    ]
    if loop_side:
        lines.append("+1 pt per rank gained, -1 pt per rank lost against this seat's last round")
    top = h_img * 0.62
    for i, line in enumerate(lines):
        line_h = 3.2 * px_per_mm if i < len(lines) - 1 or not loop_side else 2.6 * px_per_mm
        box = (
            inner + 2 * px_per_mm,
            top,
            w_img - inner - 2 * px_per_mm,
            top + line_h * (1.5 if len(line) < 30 else 2.6),
        )
        draw_paragraph(surface, line, box, design.body_font, line_h * 1.3, face.text)
        top = box[3]
    regions = []
    text = ordinal(rank)
    for anchor, rot in corner_anchors(size, _rank_index_inset(design, px_per_mm), design.four_corners):
        box = draw_text(
            surface, text, anchor, design.index_height_mm * px_per_mm * 0.7, face.text, design.index_font, rot
        )
        regions.append(region_fraction(box, size, 0.6 * px_per_mm))
    return print_finish(rng, surface, design.wear), regions


def _rank_index_inset(design: LoopDesign, px_per_mm: float) -> tuple[float, float]:
    h = design.index_height_mm * px_per_mm * 0.7
    width, _ = text_box_size("2nd", design.index_font, h)
    margin = max(design.index_margin_mm, border_clearance_mm(design.border)) * px_per_mm
    return margin + width / 2, margin + h / 2


def _draw_ordinal(
    surface: Surface, design: LoopDesign, face: Face, rank: int, centre: tuple[float, float], height: float
) -> None:
    """'1' big with its 'st' raised and smaller, as ordinals are typeset."""
    digit, suffix = str(rank), ordinal(rank)[1:]
    digit_w, _ = text_box_size(digit, design.number_font, height)
    suffix_h = height * 0.38
    suffix_w, _ = text_box_size(suffix, design.number_font, suffix_h)
    left = centre[0] - (digit_w + suffix_w + height * 0.06) / 2
    draw_text(surface, digit, (left + digit_w / 2, centre[1]), height, face.fg, design.number_font)
    draw_text(
        surface,
        suffix,
        (left + digit_w + height * 0.06 + suffix_w / 2, centre[1] - height / 2 + suffix_h / 2),
        suffix_h,
        face.fg,
        design.number_font,
    )


# --------------------------------------------------------------------------------------------------------- back


def draw_back(design: LoopDesign, px_per_mm: float) -> np.ndarray:
    """The shared back: the game's name over a loop ring on a patterned ground, the same on every card."""
    rng = np.random.default_rng(stable_seed(GAME, design.design, BACK))
    size = _size_px(design, px_per_mm)
    w_img, h_img = size
    bg = design.back_colour
    fg = mix(bg, WHITE, 0.8) if luma(bg) < 140 else mix(bg, INK, 0.8)
    surface = card_surface(rng, size, bg, design.radius_mm * px_per_mm)
    print_pattern(surface, rng, design.back_pattern, mix(bg, fg, 0.5), 0.35, design.pattern_scale_mm * px_per_mm)
    border = design.border if design.border != "none" else "inset"
    draw_border(surface, border, mix(bg, fg, 0.7), px_per_mm, design.radius_mm * px_per_mm)
    centre = (w_img / 2, h_img / 2)
    if design.back_layout == "tiled":
        step = w_img / 4
        tile_h = fit_height("LOOP", design.number_font, step * 0.8, step * 0.3)
        for row, y in enumerate(np.arange(step / 2, h_img, step * 0.7)):
            for x in np.arange(step / 2 + (row % 2) * step / 2, w_img, step):
                draw_text(
                    surface,
                    "LOOP",
                    (float(x), float(y)),
                    tile_h,
                    mix(bg, fg, 0.35),
                    design.number_font,
                    180.0 * (row % 2),
                )
    if design.back_layout == "band":
        band = (0.0, h_img * 0.4, float(w_img), h_img * 0.6)
        paint(surface, box_mask(size, band), fg)
        height = fit_height("LOOP", design.number_font, w_img * 0.7, h_img * 0.13)
        draw_text(surface, "LOOP", centre, height, bg, design.number_font)
    else:
        radius = w_img * 0.3
        fill_circle(surface, centre, radius, bg)
        _draw_loop_ring(surface, centre, radius, fg, px_per_mm)
        height = fit_height("LOOP", design.number_font, radius * 1.5, radius * 0.6)
        draw_text(surface, "LOOP", centre, height, fg, design.number_font)
    return print_finish(rng, surface, design.wear)


# ----------------------------------------------------------------------------------------------------- the set


def render_set(out_dir: str | Path, design: int, px_per_mm: float = 4.0) -> PieceSet:
    """Every LOOP component of one design, written as a piece set named loop-design-<design>."""
    if px_per_mm < 1.0:
        raise ValueError(f"px_per_mm is {px_per_mm}; expected at least 1 (pieces.MIN_PIXELS_PER_MM)")
    look = pick_design(design)
    size_mm = look.size_mm
    pieces: list[PieceInfo] = []
    pictures: dict[str, np.ndarray] = {}
    for number in range(1, HIGHEST + 1):
        for colour in COLOURS:
            code = f"{number}{colour}"
            pictures[code], regions = draw_number_card(look, number, colour, px_per_mm)
            pieces.append(PieceInfo(code, "card", size_mm, BACK, tuple(regions)))
    for rank in RANKS:
        code = f"RANK{rank}"
        pictures[code], regions = draw_rank_card(look, rank, False, px_per_mm)
        pictures[f"{code}_LOOP"], loop_regions = draw_rank_card(look, rank, True, px_per_mm)
        pieces.append(PieceInfo(code, "card", size_mm, f"{code}_LOOP", tuple(regions)))
        pieces.append(PieceInfo(f"{code}_LOOP", "card", size_mm, None, tuple(loop_regions)))
    pictures[BACK] = draw_back(look, px_per_mm)
    pieces.append(PieceInfo(BACK, "card", size_mm, None, ()))
    name = f"{GAME}-design-{design}"
    return write_piece_set(out_dir, GAME, name, name, pieces, pictures)
