"""Loot Roll (seeds/001): every catalogue card (abilities, loot, monsters), one back per deck and the fight/flight
choice cards, in many designs.

What the rules document fixes, every design keeps: an ability's price is the number in its upper right; loot is
coloured by rarity (grey common, blue rare, purple epic) with its treasure value beside a treasure symbol in the
upper right and, for equipment, a slot symbol and survivability in the upper left; a monster shows crossed swords
and its survivability (normal/boss) in the upper left and a chest with how many loot cards it drops, coloured by
rarity, in the upper right. Those corner marks are the recorded index regions. Everything else (fonts, frames,
colours, art, badge shapes, wear) changes per design.

Backs: the setup separates ability, common, rare, epic and monster piles, so each deck has its own back
(BACK_ABILITY, BACK_LOOT_COMMON, BACK_LOOT_RARE, BACK_LOOT_EPIC, BACK_MONSTER). The fight and flight cards are
played face down and flipped together, so they share one back (BACK_CHOICE).

Size: 63 x 88 mm (poker size; a guess - the document gives none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from games.loot_roll.catalogue import Ability, Catalogue, Loot, Monster, load_catalogue
from vision.synth.art.common import (
    BGR,
    PATTERNS,
    Box,
    Shape,
    Surface,
    box_mask,
    card_surface,
    draw_border,
    draw_coin,
    draw_icon,
    draw_paragraph,
    draw_text,
    fill_polygons,
    fit_height,
    hsv_bgr,
    ink_on,
    legible_on,
    linear_ramp,
    luma,
    mix,
    paint,
    paint_box,
    paint_frame,
    pattern_mask,
    pick_body_font,
    pick_numeral_font,
    pick_text_font,
    print_finish,
    print_pattern,
    region_fraction,
    rotate_about,
    stable_seed,
    star_points,
    text_box_size,
    union_box,
)
from vision.synth.pieces import PieceInfo, PieceSet, write_piece_set

GAME = "loot-roll"
SIZE_MM = (63.0, 88.0)
FIGHT, FLIGHT = "FIGHT", "FLIGHT"
BACK_ABILITY, BACK_MONSTER, BACK_CHOICE = "BACK_ABILITY", "BACK_MONSTER", "BACK_CHOICE"
RARITY_BACKS = {"common": "BACK_LOOT_COMMON", "rare": "BACK_LOOT_RARE", "epic": "BACK_LOOT_EPIC"}
FRAMES = ("classic", "modern", "parchment", "dark")
ART_SHAPES = ("window", "medallion", "arch")
TITLE_PLACES = ("row", "banner", "under")
BADGES = ("coin", "circle", "diamond", "hex", "shield", "plain")
WHITE: BGR = (246, 246, 244)
INK: BGR = (30, 28, 26)


@dataclass(frozen=True)
class RollDesign:
    design: int
    radius_mm: float
    frame: str
    ability_colour: BGR
    monster_colour: BGR
    rarity_colours: dict[str, BGR]
    fight_colour: BGR
    flight_colour: BGR
    parchment: BGR
    title_font: Path
    number_font: Path
    body_font: Path
    badge: str
    art_shape: str  # window, medallion or arch
    frame_mm: float
    dark_frame: BGR
    title_place: str  # 'row' under the corners, 'banner' across the art's foot, 'under' the art
    price_colour: BGR
    corner_mm: float  # badge radius
    art_pattern: str
    art_pattern_scale_mm: float
    range_separator: str  # between a monster's normal and boss numbers
    outline_mm: float
    wear: float


def pick_design(design: int) -> RollDesign:
    rng = np.random.default_rng(stable_seed(GAME, design))
    return RollDesign(
        design=design,
        radius_mm=float(rng.uniform(2.0, 4.0)),
        frame=str(rng.choice(FRAMES, p=[0.35, 0.25, 0.25, 0.15])),
        ability_colour=hsv_bgr(
            rng.choice([rng.uniform(20, 45), rng.uniform(150, 185)]), rng.uniform(0.5, 0.85), rng.uniform(0.55, 0.8)
        ),
        monster_colour=hsv_bgr(
            rng.choice([rng.uniform(-10, 15), rng.uniform(80, 120)]), rng.uniform(0.5, 0.85), rng.uniform(0.35, 0.6)
        ),
        rarity_colours={
            "common": hsv_bgr(rng.uniform(0, 360), rng.uniform(0.0, 0.08), rng.uniform(0.55, 0.72)),
            "rare": hsv_bgr(rng.uniform(200, 225), rng.uniform(0.55, 0.85), rng.uniform(0.6, 0.85)),
            "epic": hsv_bgr(rng.uniform(268, 292), rng.uniform(0.5, 0.8), rng.uniform(0.5, 0.75)),
        },
        fight_colour=hsv_bgr(rng.uniform(-8, 12), rng.uniform(0.6, 0.9), rng.uniform(0.55, 0.8)),
        flight_colour=hsv_bgr(rng.uniform(60, 200), rng.uniform(0.4, 0.8), rng.uniform(0.5, 0.75)),
        parchment=hsv_bgr(rng.uniform(35, 48), rng.uniform(0.12, 0.3), rng.uniform(0.86, 0.95)),
        title_font=pick_text_font(rng, 0.75),
        number_font=pick_numeral_font(rng),
        body_font=pick_body_font(rng),
        badge=str(rng.choice(BADGES)),
        title_place=str(rng.choice(TITLE_PLACES)),
        art_shape=str(rng.choice(ART_SHAPES, p=[0.5, 0.25, 0.25])),
        frame_mm=float(rng.uniform(2.0, 4.5)),
        dark_frame=hsv_bgr(rng.uniform(0, 360), rng.uniform(0.1, 0.6), rng.uniform(0.08, 0.2)),
        price_colour=hsv_bgr(rng.uniform(0, 360), rng.uniform(0.3, 0.8), rng.uniform(0.6, 0.9)),
        corner_mm=float(rng.uniform(5.0, 6.5)),
        art_pattern=str(rng.choice(PATTERNS)),
        art_pattern_scale_mm=float(rng.uniform(2.0, 7.0)),
        range_separator=str(rng.choice(["/", " / ", "-"], p=[0.5, 0.25, 0.25])),
        outline_mm=float(rng.uniform(0.25, 0.6)),
        wear=float(rng.choice([0.0, rng.uniform(0.05, 0.55)], p=[0.25, 0.75])),
    )


@dataclass(frozen=True)
class Face:
    """One card type's inks: frame colour, card stock inside, text, and the art window's ground."""

    frame: BGR
    stock: BGR
    text: BGR
    art: BGR


def card_face(design: RollDesign, colour: BGR) -> Face:
    if design.frame == "parchment":
        return Face(mix(colour, INK, 0.15), design.parchment, INK, mix(design.parchment, colour, 0.35))
    if design.frame == "dark":
        return Face(design.dark_frame, mix(colour, (20, 20, 20), 0.6), (235, 235, 235), mix(colour, WHITE, 0.15))
    if design.frame == "modern":
        return Face(colour, (240, 240, 236), INK, mix(colour, WHITE, 0.25))
    return Face(colour, mix(colour, WHITE, 0.82), INK, mix(colour, WHITE, 0.45))


@dataclass(frozen=True)
class Layout:
    """Where things go on a card face, pixels."""

    size: tuple[int, int]
    inner: float
    corner_r: float
    left_corner: tuple[float, float]
    right_corner: tuple[float, float]
    title: Box
    art: Box
    type_line: Box
    text: Box


def card_layout(design: RollDesign, inner: float, px_per_mm: float) -> Layout:
    """The corner row on top (it carries the numbers), then title, art, type line and text box in the order the
    design's title placement says."""
    mm = px_per_mm
    w, h = round(SIZE_MM[0] * mm), round(SIZE_MM[1] * mm)
    r = design.corner_mm * mm
    pad = 1.0 * mm
    left, right = (inner + r + pad, inner + r + pad), (w - inner - r - pad, inner + r + pad)
    row_bottom = inner + 2 * r + 2 * pad
    x0, x1 = inner + pad, w - inner - pad
    if design.title_place == "row":
        title = (x0 + pad, row_bottom, x1 - pad, row_bottom + 7 * mm)
        art = (x0, title[3] + 1 * mm, x1, h * 0.6)
    elif design.title_place == "banner":
        art = (x0, row_bottom + 1 * mm, x1, h * 0.6)
        title = (x0 + 2 * pad, art[3] - 8 * mm, x1 - 2 * pad, art[3] - 1 * mm)
    else:
        art = (x0, row_bottom + 1 * mm, x1, h * 0.53)
        title = (x0 + pad, art[3] + 0.5 * mm, x1 - pad, art[3] + 7.5 * mm)
    top = max(art[3], title[3])
    type_line = (x0, top + 0.5 * mm, x1, top + 4.0 * mm)
    text = (x0 + pad, type_line[3] + 0.6 * mm, x1 - pad, h - inner - pad)
    return Layout((w, h), inner, r, left, right, title, art, type_line, text)


# ----------------------------------------------------------------------------------------------------- faces


def _start_card(rng: np.random.Generator, design: RollDesign, face: Face, px_per_mm: float) -> tuple[Surface, Layout]:
    """Stock, frame and text panel: what every face of a design shares."""
    w, h = round(SIZE_MM[0] * px_per_mm), round(SIZE_MM[1] * px_per_mm)
    radius = design.radius_mm * px_per_mm
    if design.frame == "parchment":
        surface = card_surface(rng, (w, h), face.stock, radius)
        inner = draw_border(surface, "double", face.frame, px_per_mm, radius)
    else:
        surface = card_surface(rng, (w, h), face.frame, radius)
        inner = design.frame_mm * px_per_mm
        paint_box(surface, (inner, inner, w - inner, h - inner), face.stock, 1.6 * px_per_mm)
    layout = card_layout(design, inner, px_per_mm)
    x0, y0, x1, y1 = layout.text
    panel = mix(face.stock, WHITE, 0.45) if luma(face.text) < 128 else mix(face.stock, INK, 0.45)
    paint_box(surface, (x0 - px_per_mm, y0, x1 + px_per_mm, y1), panel, 1.2 * px_per_mm, opacity=0.85)
    return surface, layout


def _art_window(
    surface: Surface, rng: np.random.Generator, design: RollDesign, face: Face, layout: Layout, px_per_mm: float
) -> None:
    """The illustration's ground: a gradient and the design's pattern in the card colour, framed by a rule."""
    (ox, oy), local = _pixel_window(layout.art)
    size = (round(local[2] + 0.5), round(local[3] + 0.5))
    x0, y0, x1, y1 = local
    if design.art_shape == "medallion":
        radius = min(x1 - x0, y1 - y0) / 2
        window = box_mask(size, ((x0 + x1) / 2 - radius, y0, (x0 + x1) / 2 + radius, y0 + 2 * radius), radius)
    elif design.art_shape == "arch":
        window = np.maximum(box_mask(size, local, (x1 - x0) / 2), box_mask(size, (x0, (y0 + y1) / 2, x1, y1)))
    else:
        window = box_mask(size, local, 1.0 * px_per_mm)
    ramp = linear_ramp(size, rng.uniform(60, 120))[:, :, None]
    light, dark = np.array(mix(face.art, WHITE, 0.35), np.float32), np.array(mix(face.art, INK, 0.25), np.float32)
    paint(surface, window, light * (1 - ramp) + dark * ramp, (ox, oy))
    motif = _art_motif(design.design, design.art_pattern, size, design.art_pattern_scale_mm * px_per_mm)
    paint(surface, motif * window, mix(face.art, WHITE, 0.6), (ox, oy), opacity=0.25)
    rule = max(0.35 * px_per_mm, 1.0)
    if design.art_shape == "window":
        paint_frame(surface, layout.art, rule, mix(face.frame, INK, 0.4), 1.0 * px_per_mm)
    else:
        edge = cv2.morphologyEx(window, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) * min(rule / 2, 1.0)
        paint(surface, np.clip(edge, 0, 1), mix(face.frame, INK, 0.4), (ox, oy))


def _pixel_window(box: Box) -> tuple[tuple[int, int], Box]:
    x0, y0 = int(np.floor(box[0])), int(np.floor(box[1]))
    return (x0, y0), (box[0] - x0, box[1] - y0, box[2] - x0, box[3] - y0)


@lru_cache(maxsize=8)
def _art_motif(design: int, kind: str, size: tuple[int, int], scale_px: float) -> np.ndarray:
    """The art windows' pattern: one per design (every card prints the same one), so it is built once."""
    mask = pattern_mask(np.random.default_rng(stable_seed(GAME, design, "art")), kind, size, scale_px)
    mask.setflags(write=False)
    return mask


def _title(surface: Surface, design: RollDesign, face: Face, layout: Layout, name: str, px_per_mm: float) -> None:
    """The card's name, on a plate in the frame colour (or a banner across the art's foot)."""
    x0, y0, x1, y1 = layout.title
    plate = mix(face.frame, INK, 0.15) if design.frame != "parchment" else mix(face.stock, face.frame, 0.25)
    if design.title_place == "banner":
        plate = mix(face.stock, WHITE, 0.3)
    paint_box(surface, (x0, y0 + 0.12 * (y1 - y0), x1, y1 - 0.12 * (y1 - y0)), plate, 1.2 * px_per_mm)
    if design.title_place == "banner":
        paint_frame(
            surface,
            (x0, y0 + 0.12 * (y1 - y0), x1, y1 - 0.12 * (y1 - y0)),
            max(0.3 * px_per_mm, 1.0),
            mix(face.frame, INK, 0.4),
            1.2 * px_per_mm,
        )
    height = fit_height(name, design.title_font, x1 - x0 - 3 * px_per_mm, min((y1 - y0) * 0.5, 4.2 * px_per_mm))
    draw_text(surface, name, ((x0 + x1) / 2, (y0 + y1) / 2), height, ink_on(plate), design.title_font)


def _type_line(surface: Surface, design: RollDesign, face: Face, layout: Layout, text: str) -> None:
    x0, y0, x1, y1 = layout.type_line
    height = fit_height(text, design.title_font, x1 - x0, (y1 - y0) * 0.55)
    draw_text(surface, text, ((x0 + x1) / 2, (y0 + y1) / 2), height, ink_on(face.stock), design.title_font)


def _badge(
    surface: Surface, design: RollDesign, centre: tuple[float, float], radius: float, fill: BGR, px_per_mm: float
) -> Box:
    """The shape behind a corner number; 'plain' prints the number on the frame with no shape."""
    x, y = centre
    rim = mix(fill, INK, 0.55)
    line = max(0.45 * px_per_mm, 1.0)
    if design.badge == "coin":
        return draw_coin(surface, centre, radius, fill)
    if design.badge == "plain":
        return (x - radius * 0.7, y - radius * 0.7, x + radius * 0.7, y + radius * 0.7)
    if design.badge == "circle":
        shape = star_points(centre, radius, radius, 24)
    elif design.badge == "diamond":
        shape = star_points(centre, radius * 1.1, radius * 1.1, 2)
    elif design.badge == "hex":
        shape = star_points(centre, radius, radius, 3, 0.0)
    else:
        shape = np.array(
            [
                [x - radius * 0.85, y - radius * 0.9],
                [x + radius * 0.85, y - radius * 0.9],
                [x + radius * 0.85, y + radius * 0.1],
                [x, y + radius],
                [x - radius * 0.85, y + radius * 0.1],
            ]
        )
    fill_polygons(surface, [shape], rim)
    inset = shape * (1 - line / radius) + np.array(centre) * (line / radius)
    fill_polygons(surface, [inset], fill)
    return (float(shape[:, 0].min()), float(shape[:, 1].min()), float(shape[:, 0].max()), float(shape[:, 1].max()))


def _corner_number(
    surface: Surface,
    design: RollDesign,
    centre: tuple[float, float],
    radius: float,
    text: str,
    fill: BGR,
    frame: BGR,
    px_per_mm: float,
) -> Box:
    """A number in a badge; returns the ink box of badge and number."""
    badge = _badge(surface, design, centre, radius, fill, px_per_mm)
    back = fill if design.badge != "plain" else frame
    ink = ink_on(back)
    height = fit_height(text, design.number_font, radius * 1.25, radius * 0.95)
    rim = (mix(back, WHITE if luma(ink) > 128 else INK, 0.3), max(round(0.3 * px_per_mm), 1))
    number = draw_text(
        surface, text, centre, height, ink, design.number_font, outline=rim if design.badge == "plain" else None
    )
    return union_box(badge, number)


def _symbol_number(
    surface: Surface,
    design: RollDesign,
    anchor: tuple[float, float],
    radius: float,
    symbol: Sequence[Shape],
    tokens: Sequence[tuple[str, BGR]],
    plate: BGR,
    px_per_mm: float,
    symbol_left: bool = True,
) -> Box:
    """A small symbol with numbers beside it on a plate (the document's 'symbol with a number next to it'),
    growing inwards from the corner but never past the card's middle (so two plates never meet); returns the
    plate's box."""
    height = radius * 0.95
    widths = [text_box_size(t, design.number_font, height)[0] for t, _ in tokens]
    gap = 0.3 * height
    text_w = sum(widths) + gap * (len(tokens) - 1)
    icon = radius * 1.25
    room = abs(surface.alpha.shape[1] / 2 - (anchor[0] - radius if symbol_left else anchor[0] + radius))
    room -= icon + gap * 1.5 + 2.5 * px_per_mm
    if text_w > room:  # shrink the numbers, not the symbol, until they fit
        shrink = max(room, 1.0) / text_w
        height, gap, widths, text_w = height * shrink, gap * shrink, [w * shrink for w in widths], text_w * shrink
    total = icon + gap * 1.5 + text_w
    x0 = anchor[0] - radius if symbol_left else anchor[0] + radius - total
    plate_box = (x0 - 0.6 * px_per_mm, anchor[1] - radius, x0 + total + 0.9 * px_per_mm, anchor[1] + radius)
    paint_box(surface, plate_box, plate, radius * 0.45)
    paint_frame(surface, plate_box, max(0.3 * px_per_mm, 1.0), mix(plate, INK, 0.6), radius * 0.45)
    icon_box = (x0, anchor[1] - icon / 2, x0 + icon, anchor[1] + icon / 2)
    draw_icon(surface, symbol, icon_box, ICON_COLOURS, (mix(plate, INK, 0.7), max(0.25 * px_per_mm, 1.0)))
    x = x0 + icon + gap * 1.5
    for (text, colour), width in zip(tokens, widths, strict=True):
        draw_text(surface, text, (x + width / 2, anchor[1]), height, colour, design.number_font)
        x += width + gap
    return plate_box


def draw_ability(design: RollDesign, card: Ability, px_per_mm: float) -> tuple[np.ndarray, list[Box]]:
    rng = np.random.default_rng(stable_seed(GAME, design.design, card.id))
    face = card_face(design, design.ability_colour)
    surface, layout = _start_card(rng, design, face, px_per_mm)
    _art_window(surface, rng, design, face, layout, px_per_mm)
    _draw_art(surface, rng, design, layout, ability_icon(card.id, card.name), px_per_mm)
    _title(surface, design, face, layout, card.name, px_per_mm)
    _type_line(surface, design, face, layout, "ABILITY")
    draw_paragraph(surface, card.text, layout.text, design.body_font, 3.0 * px_per_mm, ink_on(_panel(face)))
    fill = (40, 175, 225) if design.badge == "coin" else design.price_colour
    price = _corner_number(
        surface, design, layout.right_corner, layout.corner_r, str(card.price), fill, face.frame, px_per_mm
    )
    return print_finish(rng, surface, design.wear), [region_fraction(price, layout.size, 0.6 * px_per_mm)]


def _panel(face: Face) -> BGR:
    return mix(face.stock, WHITE, 0.45) if luma(face.text) < 128 else mix(face.stock, INK, 0.45)


def draw_loot(design: RollDesign, card: Loot, px_per_mm: float) -> tuple[np.ndarray, list[Box]]:
    rng = np.random.default_rng(stable_seed(GAME, design.design, card.id))
    face = card_face(design, design.rarity_colours[card.rarity])
    surface, layout = _start_card(rng, design, face, px_per_mm)
    _art_window(surface, rng, design, face, layout, px_per_mm)
    _draw_art(surface, rng, design, layout, loot_icon(card), px_per_mm)
    _title(surface, design, face, layout, card.name, px_per_mm)
    slot = f" \u00b7 {card.slot.upper()}" if card.slot else ""
    _type_line(surface, design, face, layout, f"{card.rarity.upper()} LOOT{slot}")
    text = card.text or _loot_filler(card)
    draw_paragraph(surface, text, layout.text, design.body_font, 3.0 * px_per_mm, ink_on(_panel(face)))
    plate = mix(face.stock, WHITE, 0.6)
    regions = []
    value = _symbol_number(
        surface,
        design,
        layout.right_corner,
        layout.corner_r * 0.8,
        CHEST_ICON,
        [(str(card.value), INK)],
        plate,
        px_per_mm,
        symbol_left=False,
    )
    regions.append(region_fraction(value, layout.size, 0.5 * px_per_mm))
    if card.slot:
        survive = _symbol_number(
            surface,
            design,
            layout.left_corner,
            layout.corner_r * 0.8,
            SLOT_ICONS[card.slot],
            [(str(card.survivability), INK)],
            plate,
            px_per_mm,
        )
        regions.insert(0, region_fraction(survive, layout.size, 0.5 * px_per_mm))
    return print_finish(rng, surface, design.wear), regions


def _loot_filler(card: Loot) -> str:
    """What a card with no special text still prints: how it is worn, or that it is only treasure."""
    if card.slot:
        return f"Equip: {card.slot}. +{card.survivability} survivability while equipped."
    return f"Treasure. Worth {card.value} when sold or banked."


def draw_monster(design: RollDesign, card: Monster, px_per_mm: float) -> tuple[np.ndarray, list[Box]]:
    rng = np.random.default_rng(stable_seed(GAME, design.design, card.id))
    face = card_face(design, design.monster_colour)
    surface, layout = _start_card(rng, design, face, px_per_mm)
    _art_window(surface, rng, design, face, layout, px_per_mm)
    creature_rng = np.random.default_rng(stable_seed(GAME, design.design, "creature", card.id))
    _draw_creature(surface, creature_rng, card, layout, design.outline_mm * px_per_mm)
    _title(surface, design, face, layout, card.name, px_per_mm)
    _type_line(surface, design, face, layout, "MONSTER")
    normal, boss = card.survivability
    drops = _drop_lines(card)
    text = card.text or f"Win: {drops[0]}. As a boss: {drops[1]}."
    draw_paragraph(surface, text, layout.text, design.body_font, 3.0 * px_per_mm, ink_on(_panel(face)))
    plate = mix(face.stock, WHITE, 0.7)
    strength = str(normal) if normal == boss else f"{normal}{design.range_separator}{boss}"
    left = _symbol_number(
        surface, design, layout.left_corner, layout.corner_r * 0.8, SWORDS_ICON, [(strength, INK)], plate, px_per_mm
    )
    right = _symbol_number(
        surface,
        design,
        layout.right_corner,
        layout.corner_r * 0.8,
        CHEST_ICON,
        _drop_tokens(design, card, plate),
        plate,
        px_per_mm,
        symbol_left=False,
    )
    regions = [region_fraction(b, layout.size, 0.5 * px_per_mm) for b in (left, right)]
    return print_finish(rng, surface, design.wear), regions


def _drop_lines(card: Monster) -> tuple[str, str]:
    def line(drops: tuple[tuple[str, int], ...]) -> str:
        return ", ".join(f"{n} {rarity}" for rarity, n in drops)

    return line(card.loot[0]), line(card.loot[1])


def _drop_tokens(design: RollDesign, card: Monster, plate: BGR) -> list[tuple[str, BGR]]:
    """How many loot cards a win draws, each count in its rarity's colour; normal / boss when they differ."""

    def tokens(drops: tuple[tuple[str, int], ...]) -> list[tuple[str, BGR]]:
        return [(str(n), legible_on(design.rarity_colours[rarity], plate, 110.0)) for rarity, n in drops]

    normal, boss = card.loot
    if normal == boss:
        return tokens(normal)
    return [*tokens(normal), ("/", INK), *tokens(boss)]


def draw_choice(design: RollDesign, code: str, px_per_mm: float) -> tuple[np.ndarray, list[Box]]:
    """A fight or flight card: the word, a big symbol and the same symbol small in two corners."""
    rng = np.random.default_rng(stable_seed(GAME, design.design, code))
    colour = design.fight_colour if code == FIGHT else design.flight_colour
    w, h = round(SIZE_MM[0] * px_per_mm), round(SIZE_MM[1] * px_per_mm)
    surface = card_surface(rng, (w, h), colour, design.radius_mm * px_per_mm)
    print_pattern(
        surface,
        np.random.default_rng(stable_seed(GAME, design.design, "choice")),
        design.art_pattern,
        mix(colour, WHITE, 0.3),
        0.15,
        design.art_pattern_scale_mm * px_per_mm,
    )
    inner = draw_border(
        surface,
        "inset" if design.frame != "modern" else "thin",
        mix(colour, WHITE, 0.7),
        px_per_mm,
        design.radius_mm * px_per_mm,
    )
    ink = ink_on(colour)
    icon = SWORDS_ICON if code == FIGHT else WING_ICON
    colours = {**ICON_COLOURS, "metal": mix(WHITE, colour, 0.1), "grip": mix(colour, INK, 0.5), "feather": WHITE}
    big = w * 0.3
    draw_icon(
        surface,
        icon,
        (w / 2 - big, h * 0.42 - big, w / 2 + big, h * 0.42 + big),
        colours,
        (mix(colour, INK, 0.6), design.outline_mm * px_per_mm * 1.5),
    )
    word_h = fit_height(code, design.title_font, w - 2 * inner - 6 * px_per_mm, 8 * px_per_mm)
    draw_text(
        surface,
        code,
        (w / 2, h * 0.75),
        word_h,
        ink,
        design.title_font,
        outline=(mix(colour, INK, 0.6), max(round(0.4 * px_per_mm), 1)),
    )
    regions = []
    r = 4.5 * px_per_mm
    for (x, y), rot in (
        ((inner + r + px_per_mm, inner + r + px_per_mm), 0.0),
        ((w - inner - r - px_per_mm, h - inner - r - px_per_mm), 180.0),
    ):
        box = draw_icon(
            surface,
            icon,
            (x - r, y - r, x + r, y + r),
            colours,
            (mix(colour, INK, 0.6), max(0.3 * px_per_mm, 1.0)),
            rot,
        )
        regions.append(region_fraction(box, (w, h), 0.5 * px_per_mm))
    return print_finish(rng, surface, design.wear), regions


def draw_back(design: RollDesign, name: str, colour: BGR, label: str, px_per_mm: float) -> np.ndarray:
    """A deck's back: the game's d20 mark, the deck's name, the deck's colour; the same for every card of it."""
    rng = np.random.default_rng(stable_seed(GAME, design.design, name))
    w, h = round(SIZE_MM[0] * px_per_mm), round(SIZE_MM[1] * px_per_mm)
    bg = mix(colour, INK, 0.35) if design.frame == "dark" else colour
    surface = card_surface(rng, (w, h), bg, design.radius_mm * px_per_mm)
    print_pattern(
        surface,
        np.random.default_rng(stable_seed(GAME, design.design, "back")),
        design.art_pattern,
        mix(bg, WHITE, 0.35),
        0.25,
        design.art_pattern_scale_mm * px_per_mm,
    )
    draw_border(surface, "double", mix(bg, WHITE, 0.6), px_per_mm, design.radius_mm * px_per_mm)
    r = w * 0.26
    centre = (w / 2, h * 0.45)
    d20 = star_points(centre, r, r, 3, -90)
    fill_polygons(surface, [d20], mix(bg, INK, 0.45))
    inner_tri = np.array([rotate_about((centre[0], centre[1] - r * 0.55), centre, a) for a in (0, 120, 240)])
    fill_polygons(surface, [inner_tri], mix(bg, WHITE, 0.55))
    ink = ink_on(bg)
    title_h = fit_height("LOOT ROLL", design.title_font, w * 0.7, 6 * px_per_mm)
    draw_text(surface, "LOOT ROLL", (w / 2, h * 0.16), title_h, ink, design.title_font)
    label_h = fit_height(label, design.title_font, w * 0.7, 4.5 * px_per_mm)
    draw_text(surface, label, (w / 2, h * 0.77), label_h, ink, design.title_font)
    return print_finish(rng, surface, design.wear)


# ---------------------------------------------------------------------------------------------------- clip art


def _poly(points: Sequence[tuple[float, float]], role: str) -> Shape:
    return Shape("poly", tuple(points), role)


def _ellipse(cx: float, cy: float, rx: float, ry: float, role: str, angle: float = 0.0) -> Shape:
    return Shape("ellipse", ((cx, cy), (rx, ry), (angle, 0.0)), role)


def _line(points: Sequence[tuple[float, float]], role: str, width: float) -> Shape:
    return Shape("line", tuple(points), role, width)


def _arc(cx: float, cy: float, r: float, start: float, end: float, role: str, width: float) -> Shape:
    t = np.deg2rad(np.linspace(start, end, 24))
    return _line([(cx + r * np.cos(a), cy + r * np.sin(a)) for a in t], role, width)


def _turned(shapes: Sequence[Shape], angle_deg: float, scale: float = 0.95) -> tuple[Shape, ...]:
    """Clip art turned about its box centre (to cross two swords), shrunk a little to stay inside the box."""

    def move(p: tuple[float, float]) -> tuple[float, float]:
        x, y = rotate_about(p, (0.5, 0.5), angle_deg)
        return (0.5 + (x - 0.5) * scale, 0.5 + (y - 0.5) * scale)

    out = []
    for shape in shapes:
        if shape.kind == "ellipse":
            (cx, cy), (rx, ry) = shape.points[0], shape.points[1]
            angle = shape.points[2][0] if len(shape.points) > 2 else 0.0
            points = (move((cx, cy)), (rx * scale, ry * scale), (angle + angle_deg, 0.0))
        else:
            points = tuple(move(p) for p in shape.points)
        out.append(Shape(shape.kind, points, shape.role, shape.width * scale))
    return tuple(out)


ICON_COLOURS: dict[str, BGR] = {
    "metal": (200, 196, 190),
    "dark": (70, 62, 58),
    "grip": (40, 80, 130),
    "wood": (50, 105, 150),
    "gold": (40, 175, 225),
    "cloth": (60, 60, 160),
    "leather": (45, 90, 140),
    "gem": (80, 40, 200),
    "glass": (220, 200, 150),
    "liquid": (60, 170, 60),
    "flame": (30, 150, 250),
    "light": (235, 240, 245),
    "feather": (235, 235, 235),
    "skin": (150, 190, 230),
}
SWORD = (
    _poly([(0.47, 0.05), (0.53, 0.05), (0.55, 0.62), (0.5, 0.68), (0.45, 0.62)], "metal"),
    _poly([(0.3, 0.64), (0.7, 0.64), (0.7, 0.7), (0.3, 0.7)], "gold"),
    _poly([(0.46, 0.7), (0.54, 0.7), (0.54, 0.88), (0.46, 0.88)], "grip"),
    _ellipse(0.5, 0.91, 0.05, 0.05, "gold"),
)
DAGGER = (
    _poly([(0.47, 0.25), (0.53, 0.25), (0.56, 0.62), (0.5, 0.68), (0.44, 0.62)], "metal"),
    _poly([(0.34, 0.64), (0.66, 0.64), (0.66, 0.69), (0.34, 0.69)], "dark"),
    _poly([(0.46, 0.69), (0.54, 0.69), (0.54, 0.84), (0.46, 0.84)], "grip"),
)
AXE = (
    _poly([(0.46, 0.08), (0.54, 0.08), (0.54, 0.95), (0.46, 0.95)], "wood"),
    _poly([(0.54, 0.14), (0.88, 0.05), (0.95, 0.3), (0.88, 0.52), (0.54, 0.42)], "metal"),
    _poly([(0.46, 0.16), (0.28, 0.2), (0.28, 0.36), (0.46, 0.4)], "metal"),
)
HAMMER = (
    _poly([(0.46, 0.25), (0.54, 0.25), (0.54, 0.95), (0.46, 0.95)], "wood"),
    _poly([(0.15, 0.08), (0.85, 0.08), (0.85, 0.34), (0.15, 0.34)], "metal"),
    _poly([(0.15, 0.18), (0.85, 0.18), (0.85, 0.22), (0.15, 0.22)], "dark"),
)
CLUB = (_poly([(0.44, 0.95), (0.52, 0.95), (0.68, 0.12), (0.52, 0.04), (0.36, 0.14)], "wood"),)
BOW = (_arc(0.2, 0.5, 0.48, -72, 72, "wood", 0.08), _line([(0.35, 0.05), (0.35, 0.95)], "light", 0.02))
STAFF = (_line([(0.5, 0.22), (0.5, 0.96)], "wood", 0.08), _ellipse(0.5, 0.15, 0.13, 0.13, "gem"))
ROD = (_line([(0.2, 0.95), (0.75, 0.08)], "wood", 0.05), _line([(0.75, 0.08), (0.85, 0.6)], "light", 0.015))
SHIELD = (
    _poly([(0.15, 0.1), (0.85, 0.1), (0.85, 0.5), (0.5, 0.95), (0.15, 0.5)], "metal"),
    _poly([(0.25, 0.2), (0.75, 0.2), (0.75, 0.48), (0.5, 0.82), (0.25, 0.48)], "cloth"),
    _ellipse(0.5, 0.4, 0.08, 0.08, "gold"),
)
BUCKLER = (
    _ellipse(0.5, 0.5, 0.42, 0.42, "wood"),
    _ellipse(0.5, 0.5, 0.3, 0.3, "metal"),
    _ellipse(0.5, 0.5, 0.1, 0.1, "gold"),
)
HELMET = (
    _poly(
        [(0.15, 0.55), (0.2, 0.3), (0.35, 0.14), (0.65, 0.14), (0.8, 0.3), (0.85, 0.55), (0.85, 0.8), (0.15, 0.8)],
        "metal",
    ),
    _poly([(0.28, 0.5), (0.72, 0.5), (0.72, 0.58), (0.28, 0.58)], "dark"),
    _poly([(0.46, 0.5), (0.54, 0.5), (0.54, 0.78), (0.46, 0.78)], "metal"),
)
HAT = (
    _ellipse(0.5, 0.68, 0.45, 0.12, "leather"),
    _poly([(0.3, 0.68), (0.34, 0.28), (0.66, 0.28), (0.7, 0.68)], "leather"),
    _poly([(0.32, 0.55), (0.68, 0.55), (0.69, 0.62), (0.31, 0.62)], "dark"),
)
CROWN = (
    _poly([(0.12, 0.8), (0.12, 0.3), (0.3, 0.52), (0.5, 0.22), (0.7, 0.52), (0.88, 0.3), (0.88, 0.8)], "gold"),
    _ellipse(0.3, 0.68, 0.05, 0.05, "gem"),
    _ellipse(0.5, 0.66, 0.06, 0.06, "liquid"),
    _ellipse(0.7, 0.68, 0.05, 0.05, "gem"),
)
CIRCLET = (_arc(0.5, 0.55, 0.35, 180, 360, "gold", 0.08), _ellipse(0.5, 0.22, 0.08, 0.08, "gem"))
ARMOUR = (
    _poly(
        [
            (0.3, 0.1),
            (0.42, 0.16),
            (0.58, 0.16),
            (0.7, 0.1),
            (0.92, 0.3),
            (0.8, 0.45),
            (0.74, 0.38),
            (0.74, 0.92),
            (0.26, 0.92),
            (0.26, 0.38),
            (0.2, 0.45),
            (0.08, 0.3),
        ],
        "cloth",
    ),
    _poly([(0.42, 0.16), (0.5, 0.3), (0.58, 0.16)], "dark"),
    _poly([(0.26, 0.7), (0.74, 0.7), (0.74, 0.76), (0.26, 0.76)], "leather"),
)
LEGS = (
    _poly([(0.25, 0.08), (0.75, 0.08), (0.8, 0.92), (0.56, 0.92), (0.5, 0.35), (0.44, 0.92), (0.2, 0.92)], "cloth"),
    _poly([(0.25, 0.08), (0.75, 0.08), (0.75, 0.15), (0.25, 0.15)], "leather"),
)
BOOTS = (
    _poly([(0.12, 0.2), (0.36, 0.2), (0.36, 0.7), (0.5, 0.76), (0.5, 0.88), (0.12, 0.88)], "leather"),
    _poly([(0.55, 0.2), (0.78, 0.2), (0.78, 0.7), (0.94, 0.76), (0.94, 0.88), (0.55, 0.88)], "leather"),
    _poly([(0.12, 0.2), (0.36, 0.2), (0.36, 0.28), (0.12, 0.28)], "dark"),
    _poly([(0.55, 0.2), (0.78, 0.2), (0.78, 0.28), (0.55, 0.28)], "dark"),
)
COINS = tuple(
    _ellipse(0.5 + dx, 0.78 - k * 0.1, 0.3, 0.1, "gold" if k % 2 == 0 else "dark")
    for k, dx in enumerate((0, 0.02, -0.01, 0.01, 0.0))
)
JEWEL = (
    _poly([(0.3, 0.2), (0.7, 0.2), (0.9, 0.45), (0.5, 0.9), (0.1, 0.45)], "gem"),
    _poly([(0.3, 0.2), (0.7, 0.2), (0.62, 0.45), (0.38, 0.45)], "light"),
    _poly([(0.1, 0.45), (0.38, 0.45), (0.5, 0.9)], "dark"),
)
RING = (
    _ellipse(0.5, 0.6, 0.3, 0.3, "gold"),
    _ellipse(0.5, 0.6, 0.2, 0.2, "light"),
    _poly([(0.4, 0.18), (0.6, 0.18), (0.66, 0.3), (0.5, 0.4), (0.34, 0.3)], "gem"),
)
NECKLACE = (
    *(
        _ellipse(0.5 + 0.36 * np.cos(a), 0.35 + 0.36 * np.sin(a), 0.05, 0.05, "light")
        for a in np.deg2rad(np.linspace(10, 170, 9))
    ),
    _ellipse(0.5, 0.8, 0.1, 0.1, "gem"),
)
CHALICE = (
    _poly(
        [
            (0.2, 0.12),
            (0.8, 0.12),
            (0.7, 0.45),
            (0.56, 0.52),
            (0.56, 0.75),
            (0.72, 0.88),
            (0.28, 0.88),
            (0.44, 0.75),
            (0.44, 0.52),
            (0.3, 0.45),
        ],
        "gold",
    ),
    _ellipse(0.5, 0.3, 0.06, 0.06, "gem"),
)
CUP = (
    _poly([(0.22, 0.2), (0.7, 0.2), (0.66, 0.85), (0.26, 0.85)], "metal"),
    _arc(0.7, 0.5, 0.16, -80, 80, "metal", 0.06),
)
POTION = (
    _ellipse(0.5, 0.64, 0.3, 0.3, "glass"),
    _ellipse(0.5, 0.7, 0.24, 0.2, "liquid"),
    _poly([(0.42, 0.12), (0.58, 0.12), (0.58, 0.38), (0.42, 0.38)], "glass"),
    _poly([(0.4, 0.06), (0.6, 0.06), (0.6, 0.16), (0.4, 0.16)], "wood"),
    _ellipse(0.4, 0.58, 0.05, 0.1, "light", 20.0),
)
SCROLL = (
    _poly([(0.18, 0.18), (0.82, 0.18), (0.82, 0.82), (0.18, 0.82)], "light"),
    _ellipse(0.18, 0.5, 0.07, 0.34, "leather"),
    _ellipse(0.82, 0.5, 0.07, 0.34, "leather"),
    _line([(0.3, 0.35), (0.45, 0.5), (0.58, 0.4), (0.7, 0.62)], "flame", 0.03),
)
FLAME_STICK = (
    _poly([(0.44, 0.4), (0.56, 0.4), (0.54, 0.95), (0.46, 0.95)], "wood"),
    _poly([(0.5, 0.05), (0.66, 0.28), (0.6, 0.42), (0.4, 0.42), (0.34, 0.28)], "flame"),
    _ellipse(0.5, 0.33, 0.06, 0.07, "light"),
)
DICE = (
    _poly([(0.15, 0.15), (0.85, 0.15), (0.85, 0.85), (0.15, 0.85)], "light"),
    *(
        _ellipse(x, y, 0.07, 0.07, "dark")
        for x, y in ((0.32, 0.32), (0.5, 0.5), (0.68, 0.68), (0.68, 0.32), (0.32, 0.68))
    ),
)
ORB = (
    _ellipse(0.5, 0.45, 0.36, 0.36, "glass"),
    _ellipse(0.4, 0.35, 0.08, 0.1, "light"),
    _poly([(0.25, 0.78), (0.75, 0.78), (0.85, 0.92), (0.15, 0.92)], "wood"),
)
EGG = (
    _ellipse(0.5, 0.55, 0.3, 0.38, "liquid"),
    _ellipse(0.42, 0.45, 0.06, 0.05, "dark"),
    _ellipse(0.6, 0.66, 0.07, 0.05, "dark"),
)
FEATHER = (
    _poly([(0.2, 0.92), (0.3, 0.55), (0.55, 0.2), (0.85, 0.06), (0.72, 0.4), (0.45, 0.7)], "flame"),
    _line([(0.2, 0.92), (0.78, 0.18)], "gold", 0.025),
)
LOAF = (
    _ellipse(0.5, 0.58, 0.4, 0.24, "leather"),
    *(_line([(x, 0.45), (x + 0.08, 0.62)], "light", 0.03) for x in (0.3, 0.45, 0.6)),
)
ROPE = tuple(_arc(0.5, 0.5, r, 0, 330, "leather", 0.07) for r in (0.38, 0.27, 0.16))
LUTE = (
    _ellipse(0.4, 0.64, 0.26, 0.3, "wood"),
    _ellipse(0.4, 0.62, 0.07, 0.07, "dark"),
    _line([(0.48, 0.45), (0.85, 0.08)], "leather", 0.07),
)
BANNER = (
    _line([(0.25, 0.05), (0.25, 0.95)], "wood", 0.05),
    _poly([(0.27, 0.1), (0.85, 0.1), (0.72, 0.3), (0.85, 0.5), (0.27, 0.5)], "cloth"),
)
POUCH = (
    _ellipse(0.5, 0.62, 0.32, 0.3, "leather"),
    _poly([(0.36, 0.3), (0.64, 0.3), (0.58, 0.4), (0.42, 0.4)], "leather"),
    _line([(0.36, 0.38), (0.64, 0.38)], "gold", 0.04),
)
PEBBLE = (_ellipse(0.5, 0.55, 0.36, 0.26, "metal"), _ellipse(0.4, 0.48, 0.1, 0.06, "light"))
HERB = (
    _line([(0.5, 0.95), (0.5, 0.3)], "liquid", 0.04),
    *(
        _ellipse(0.5 + s * 0.14, y, 0.14, 0.06, "liquid", -30 * s)
        for s, y in ((1, 0.4), (-1, 0.52), (1, 0.64), (-1, 0.76))
    ),
)
BURST = (
    _poly([tuple(p) for p in star_points((0.5, 0.5), 0.46, 0.2, 8)], "flame"),
    _ellipse(0.5, 0.5, 0.14, 0.14, "light"),
)
BOLT = (_poly([(0.55, 0.04), (0.22, 0.55), (0.46, 0.55), (0.36, 0.96), (0.8, 0.4), (0.55, 0.4), (0.7, 0.04)], "gold"),)
EYE = (
    _ellipse(0.5, 0.5, 0.44, 0.24, "light"),
    _ellipse(0.5, 0.5, 0.18, 0.18, "gem"),
    _ellipse(0.5, 0.5, 0.08, 0.08, "dark"),
)
CLOVER = (
    *(_ellipse(0.5 + dx, 0.42 + dy, 0.17, 0.17, "liquid") for dx, dy in ((-0.15, 0), (0.15, 0), (0, -0.15), (0, 0.15))),
    _line([(0.5, 0.55), (0.62, 0.95)], "liquid", 0.05),
)
SKULL = (
    _ellipse(0.5, 0.42, 0.32, 0.3, "light"),
    _poly([(0.34, 0.6), (0.66, 0.6), (0.62, 0.85), (0.38, 0.85)], "light"),
    _ellipse(0.38, 0.45, 0.08, 0.09, "dark"),
    _ellipse(0.62, 0.45, 0.08, 0.09, "dark"),
)
BOMB = (
    _ellipse(0.45, 0.6, 0.32, 0.32, "dark"),
    _line([(0.62, 0.32), (0.75, 0.15)], "leather", 0.04),
    _poly([tuple(p) for p in star_points((0.78, 0.12), 0.1, 0.04, 6)], "flame"),
)
DRUM = (
    _poly([(0.18, 0.3), (0.82, 0.3), (0.82, 0.78), (0.18, 0.78)], "cloth"),
    _ellipse(0.5, 0.3, 0.32, 0.1, "light"),
    _line([(0.2, 0.35), (0.35, 0.75), (0.5, 0.35), (0.65, 0.75), (0.8, 0.35)], "gold", 0.025),
)
HAND = (
    _poly(
        [
            (0.3, 0.95),
            (0.3, 0.45),
            (0.22, 0.3),
            (0.3, 0.25),
            (0.38, 0.38),
            (0.38, 0.1),
            (0.46, 0.1),
            (0.48, 0.35),
            (0.52, 0.06),
            (0.6, 0.06),
            (0.6, 0.35),
            (0.66, 0.12),
            (0.74, 0.14),
            (0.72, 0.95),
        ],
        "skin",
    ),
)
SWORDS_ICON = (*_turned(SWORD, -42.0), *_turned(SWORD, 42.0))  # the document's crossed swords
CHEST_ICON = (
    _poly([(0.1, 0.45), (0.9, 0.45), (0.9, 0.9), (0.1, 0.9)], "wood"),
    _ellipse(0.5, 0.45, 0.4, 0.28, "leather"),
    _poly([(0.1, 0.43), (0.9, 0.43), (0.9, 0.52), (0.1, 0.52)], "gold"),
    _poly([(0.42, 0.48), (0.58, 0.48), (0.58, 0.66), (0.42, 0.66)], "gold"),
)
WING_ICON = (
    _poly(
        [
            (0.15, 0.85),
            (0.2, 0.45),
            (0.45, 0.15),
            (0.9, 0.05),
            (0.75, 0.25),
            (0.9, 0.3),
            (0.7, 0.45),
            (0.85, 0.52),
            (0.6, 0.65),
            (0.7, 0.72),
            (0.4, 0.85),
        ],
        "feather",
    ),
    _line([(0.2, 0.8), (0.5, 0.35), (0.85, 0.1)], "dark", 0.03),
)
SLOT_ICONS = {
    "head": HELMET,
    "body": ARMOUR,
    "legs": LEGS,
    "feet": BOOTS,
    "main hand": SWORD,
    "off hand": SHIELD,
    "two-handed": AXE,
}
LOOT_WORDS = (
    (("dagger",), DAGGER),
    (("axe",), AXE),
    (("hammer",), HAMMER),
    (("club",), CLUB),
    (("bow",), BOW),
    (("staff",), STAFF),
    (("rod",), ROD),
    (("sling",), ROPE),
    (("sword", "blade"), SWORD),
    (("buckler",), BUCKLER),
    (("shield", "aegis"), SHIELD),
    (("helm", "cap"), HELMET),
    (("hat",), HAT),
    (("crown",), CROWN),
    (("circlet",), CIRCLET),
    (("boots", "sandals"), BOOTS),
    (("trousers", "leggings", "greaves"), LEGS),
    (("tunic", "vest", "chainmail", "shirt", "cloak"), ARMOUR),
    (("coin",), COINS),
    (("ruby", "sapphire", "quartz", "bead", "brooch"), JEWEL),
    (("ring",), RING),
    (("pearl", "necklace"), NECKLACE),
    (("chalice",), CHALICE),
    (("cup",), CUP),
    (("potion", "elixir", "flask"), POTION),
    (("map",), SCROLL),
    (("candle", "torch"), FLAME_STICK),
    (("dice",), DICE),
    (("crystal",), ORB),
    (("egg",), EGG),
    (("feather",), FEATHER),
    (("bread",), LOAF),
    (("rope",), ROPE),
    (("lute",), LUTE),
    (("banner",), BANNER),
    (("pebble",), PEBBLE),
    (("herb",), HERB),
)
ABILITY_WORDS = (
    (("luck", "die", "fortune", "jinx"), CLOVER),
    (("sixth", "sense"), EYE),
    (("pickpocket", "butterfingers"), HAND),
    (("smoke", "bomb"), BOMB),
    (("drum",), DRUM),
    (("hex", "curse", "sabotage"), SKULL),
    (("shield", "wall", "will", "sanctuary"), SHIELD),
    (("strength", "enrage", "weak"), BOLT),
)


def loot_icon(card: Loot) -> tuple[Shape, ...]:
    """Clip art for an item, chosen by what its name says it is, else by its slot."""
    words = f"{card.id} {card.name}".lower()
    for keys, icon in LOOT_WORDS:
        if any(k in words for k in keys):
            return icon
    return SLOT_ICONS.get(card.slot or "", POUCH)


def ability_icon(card_id: str, name: str) -> tuple[Shape, ...]:
    words = f"{card_id} {name}".lower()
    for keys, icon in ABILITY_WORDS:
        if any(k in words for k in keys):
            return icon
    return BURST


def _draw_art(
    surface: Surface,
    rng: np.random.Generator,
    design: RollDesign,
    layout: Layout,
    icon: Sequence[Shape],
    px_per_mm: float,
) -> None:
    """An item or spell picture in the art window, its colours nudged per card so two swords differ a little."""
    x0, y0, x1, y1 = layout.art
    side = min(x1 - x0, y1 - y0) * 0.8
    cx, cy = (x0 + x1) / 2 + rng.uniform(-0.05, 0.05) * side, (y0 + y1) / 2
    box = (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)
    colours = {
        k: mix(v, (int(rng.integers(0, 256)), int(rng.integers(0, 256)), int(rng.integers(0, 256))), 0.2)
        for k, v in ICON_COLOURS.items()
    }
    tilt = float(rng.choice([0.0, rng.uniform(-35, 35)], p=[0.4, 0.6]))
    draw_icon(surface, icon, box, colours, ((25, 22, 20), design.outline_mm * px_per_mm), tilt)


def _draw_creature(
    surface: Surface, rng: np.random.Generator, card: Monster, layout: Layout, outline_px: float
) -> None:
    """A made-up monster built from a body, a head, eyes and features its name suggests (wings for a bat,
    eight legs for a spider, a blob for a slime): enough for a card to look illustrated, never the same twice."""
    name = f"{card.id} {card.name}".lower()
    pale = any(k in name for k in ("skeleton", "wraith", "zombie", "golem"))
    hue = rng.uniform(0, 360)
    skin = hsv_bgr(hue, rng.uniform(0.05, 0.2) if pale else rng.uniform(0.35, 0.75), rng.uniform(0.55, 0.85))
    colours = {
        "skin": skin,
        "dark": mix(skin, INK, 0.55),
        "light": mix(skin, WHITE, 0.5),
        "eye": (235, 240, 240),
        "pupil": (20, 20, 25),
        "horn": (200, 225, 235),
    }
    shapes: list[Shape] = []
    wings = any(k in name for k in ("bat", "harpy", "dragon"))
    legs = "spider" in name
    blob = any(k in name for k in ("slime", "mimic"))
    if wings:
        for s in (-1, 1):
            shapes.append(
                _poly(
                    [
                        (0.5, 0.45),
                        (0.5 + s * 0.45, 0.12),
                        (0.5 + s * 0.4, 0.35),
                        (0.5 + s * 0.48, 0.45),
                        (0.5 + s * 0.35, 0.55),
                        (0.5 + s * 0.12, 0.6),
                    ],
                    "dark",
                )
            )
    if legs:
        for s in (-1, 1):
            for k in range(4):
                y = 0.5 + k * 0.08
                shapes.append(_line([(0.5, y), (0.5 + s * 0.3, y - 0.15), (0.5 + s * 0.45, y + 0.2)], "dark", 0.035))
    if blob:
        shapes.append(_poly([(0.12, 0.9), (0.18, 0.5), (0.35, 0.25), (0.65, 0.25), (0.82, 0.5), (0.88, 0.9)], "skin"))
    else:
        body_w = rng.uniform(0.22, 0.34)
        shapes.append(_ellipse(0.5, 0.68, body_w, 0.24, "skin"))
        shapes.append(_ellipse(0.5, 0.75, body_w * 0.6, 0.14, "light"))
    head_y, head_r = (0.45, 0.2) if not blob else (0.5, 0.0)
    if not blob:
        if rng.random() < 0.5 or "minotaur" in name or "dragon" in name:
            for s in (-1, 1):
                shapes.append(
                    _poly(
                        [
                            (0.5 + s * 0.12, head_y - 0.12),
                            (0.5 + s * 0.32, head_y - 0.32),
                            (0.5 + s * 0.2, head_y - 0.06),
                        ],
                        "horn",
                    )
                )
        elif "wolf" in name or "rat" in name or "goblin" in name or "kobold" in name:
            for s in (-1, 1):
                shapes.append(
                    _poly(
                        [
                            (0.5 + s * 0.08, head_y - 0.14),
                            (0.5 + s * 0.24, head_y - 0.34),
                            (0.5 + s * 0.22, head_y - 0.04),
                        ],
                        "skin",
                    )
                )
        shapes.append(_ellipse(0.5, head_y, head_r, head_r * rng.uniform(0.8, 1.05), "skin"))
    eyes = 4 if legs else (1 if rng.random() < 0.15 else 2)
    eye_y = head_y - 0.02 if not blob else 0.5
    for k in range(eyes):
        ex = 0.5 + (k - (eyes - 1) / 2) * (0.12 if eyes > 1 else 0)
        shapes.append(_ellipse(ex, eye_y, 0.05, 0.05, "eye"))
        shapes.append(_ellipse(ex, eye_y + 0.01, 0.022, 0.03, "pupil"))
    mouth_y = eye_y + 0.1
    shapes.append(_poly([(0.4, mouth_y), (0.6, mouth_y), (0.55, mouth_y + 0.05), (0.45, mouth_y + 0.05)], "dark"))
    for tx in (0.44, 0.5, 0.56):
        shapes.append(_poly([(tx - 0.02, mouth_y), (tx + 0.02, mouth_y), (tx, mouth_y + 0.035)], "eye"))
    x0, y0, x1, y1 = layout.art
    side = min(x1 - x0, y1 - y0) * 0.92
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    draw_icon(
        surface,
        shapes,
        (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2),
        colours,
        ((20, 18, 16), outline_px),
    )


# ----------------------------------------------------------------------------------------------------- the set


def render_set(out_dir: str | Path, design: int, px_per_mm: float = 4.0, catalogue: str | None = None) -> PieceSet:
    """Every Loot Roll card of a catalogue (default: the starter) in one design, plus the choice cards and one
    back per deck, written as a piece set named loot-roll-design-<design>."""
    if px_per_mm < 1.0:
        raise ValueError(f"px_per_mm is {px_per_mm}; expected at least 1 (pieces.MIN_PIXELS_PER_MM)")
    look = pick_design(design)
    cards: Catalogue = load_catalogue(catalogue)
    pieces: list[PieceInfo] = []
    pictures: dict[str, np.ndarray] = {}

    def add(code: str, drawn: tuple[np.ndarray, list[Box]], back: str | None) -> None:
        pictures[code] = drawn[0]
        pieces.append(PieceInfo(code, "card", SIZE_MM, back, tuple(drawn[1])))

    for ability in cards.abilities.values():
        add(ability.id, draw_ability(look, ability, px_per_mm), BACK_ABILITY)
    for item in cards.loot.values():
        add(item.id, draw_loot(look, item, px_per_mm), RARITY_BACKS[item.rarity])
    for monster in cards.monsters.values():
        add(monster.id, draw_monster(look, monster, px_per_mm), BACK_MONSTER)
    for code in (FIGHT, FLIGHT):
        add(code, draw_choice(look, code, px_per_mm), BACK_CHOICE)
    rarities = [r for r in RARITY_BACKS if any(item.rarity == r for item in cards.loot.values())]
    backs = [
        (BACK_ABILITY, look.ability_colour, "ABILITY"),
        *((RARITY_BACKS[r], look.rarity_colours[r], f"{r.upper()} LOOT") for r in rarities),
        (BACK_MONSTER, look.monster_colour, "MONSTER"),
        (BACK_CHOICE, mix(look.fight_colour, look.flight_colour, 0.5), "FIGHT \u00b7 FLIGHT"),
    ]
    for name, colour, label in backs:
        pictures[name] = draw_back(look, name, colour, label, px_per_mm)
        pieces.append(PieceInfo(name, "card", SIZE_MM, None, ()))
    set_name = f"{GAME}-design-{design}"
    return write_piece_set(out_dir, GAME, set_name, set_name, pieces, pictures)
