"""Procedural art for The LOOP's flat components: artifact cards, Dr. Foo (Faux) cards, mission (Sabotage) tiles,
vortex tiles, clone (Duplicate) tokens and the 7-Era ring board, in many unlike designs.

Each design number is one printing family: a theme (light, dark, parchment, blueprint), an Era palette (seven
distinct hues, their order and saturation shifting between designs), fonts, border style, card layout, badge
shapes, background motif (gears, clocks, spirals, circuits, orbits), token style, board shape and wear. Every
choice comes from the design number, so a set is the same on every run; the art of one piece also depends on its
code, so two cards of one design differ in their illustration as printed cards do.

Codes are the engine's: artifacts `A01`.. and missions `M01`.. from the catalogue, Faux cards `F-daw`..`F-end`
(engine FAUX), clones `daw1`..`end4` (engine ALL_CLONES), `VORTEX` and `BOARD`. Agent pawns are 3-D figures, not
flat art, so they are not drawn here.

Sizes (none is in the rules summary; all are guesses unless marked):
- artifact and Faux cards 63 x 88 mm: guess (the common standard card size);
- mission tiles 60 x 60 mm: guess (square-ish tiles that sit beside an Era on the board);
- vortex tiles: round, 50 mm: guess;
- clone tokens: round, 28 mm: guess (a cardboard token that a finger can push, a monocled face on it);
- the board: 420 x 420 mm: guess (a large folding board); some designs cut it round (alpha outside the disc).
Mission tiles lie face down in every Era at setup (engine docstring), so they have a back (`BACK_MISSION`); the
artifact cards share `BACK_ARTIFACT` and the Faux cards `BACK_FAUX`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np

from games.the_loop.catalogue import Artifact, Catalogue, Mission, load_catalogue
from games.the_loop.engine import ALL_CLONES, FAUX
from games.the_loop.eras import CODES, COUNT, ERAS
from vision.synth.art.common import (
    BGR,
    Box,
    Shape,
    Surface,
    box_mask,
    card_surface,
    circle_points,
    draw_icon,
    draw_paragraph,
    draw_text,
    ellipse_points,
    fill_circle,
    fill_polygons,
    fit_height,
    hsv_bgr,
    ink_on,
    linear_ramp,
    luma,
    mix,
    paint,
    paint_box,
    paint_frame,
    pattern_mask,
    pick_body_font,
    pick_text_font,
    print_finish,
    print_pattern,
    region_fraction,
    rotate_about,
    rounded_mask,
    stable_seed,
    star_points,
    stroke_circle,
    stroke_polygons,
    sub_surface,
    text_box_size,
)
from vision.synth.pieces import PieceInfo, PieceSet, write_piece_set

GAME = "the-loop"
CARD_MM = (63.0, 88.0)  # guess: standard card size
MISSION_MM = (60.0, 60.0)  # guess
VORTEX_MM = 50.0  # guess: round tile diameter
CLONE_MM = 28.0  # guess: round token diameter
BOARD_MM = 420.0  # guess: square board side (or diameter when cut round)
BACK_ARTIFACT = "BACK_ARTIFACT"
BACK_FAUX = "BACK_FAUX"
BACK_MISSION = "BACK_MISSION"
VORTEX = "VORTEX"
BOARD = "BOARD"

THEMES = ("light", "dark", "parchment", "blueprint")
THEME_WEIGHTS = (0.35, 0.25, 0.22, 0.18)  # most printed cards are light; blueprint-blue faces are the rarest
BORDERS = ("margin", "bleed", "double", "frame", "notched")
LAYOUTS = ("header", "footer", "side")
MOTIFS = ("gears", "clocks", "spirals", "circuits", "orbits")
BADGES = ("circle", "diamond", "hexagon", "shield")
BACK_PATTERNS = ("rings", "rays", "hatch", "dots", "waves", "stripes", "mosaic", "checks")
MISSION_STYLES = ("hazard", "blueprint", "plate")
TOKEN_STYLES = ("portrait", "emblem")
BACK_STYLES = ("ring", "stripes", "swirl")
# Hues a printer can tell apart (red, orange, yellow, green, teal, blue, violet, magenta); a design drops one and
# turns the rest a little, so Era colours differ between designs but never two look alike.
ERA_HUES = np.array([355.0, 30.0, 57.0, 115.0, 175.0, 220.0, 272.0, 318.0])
WHITE: BGR = (250, 250, 250)
BLACK: BGR = (18, 18, 18)
GREEN_CUBE: BGR = (70, 160, 40)
RED_CUBE: BGR = (40, 40, 200)
FOO_LENS = (0.62, 0.47)  # centre of Dr. Foo's monocle in his portrait's unit box

Pictures = dict[str, np.ndarray]
Regions = tuple[Box, ...]


# ----------------------------------------------------------------------------------------------------- designs


@dataclass(frozen=True)
class Palette:
    stock: BGR  # the card stock outside the printed panel
    panel: BGR  # the printed background of a face
    ink: BGR  # text on the panel
    muted: BGR  # rules, lines and faint motifs
    accent: BGR  # backs, plates and highlights
    metal: BGR  # brass and steel of the gadgets and the machine
    skin: BGR  # Dr. Foo's face
    eras: tuple[BGR, ...]  # seven, in Era order
    dark: bool


@dataclass(frozen=True)
class BoardLayout:
    """Where the Eras lie on the board, in fractions of its side; angles in image coordinates (y down), so
    increasing angle runs clockwise on the printed board, the engine's next-Era direction."""

    round_cut: bool
    start_deg: float  # where the Dawn of Time sector begins
    inner: float  # ring radii, fractions of the board's side
    outer: float
    gap_deg: float  # unprinted gap between two Era sectors

    def sector(self, era: int) -> tuple[float, float]:
        step = 360.0 / COUNT
        a0 = self.start_deg + era * step + self.gap_deg / 2
        return a0, a0 + step - self.gap_deg

    def mid_angle(self, era: int) -> float:
        a0, a1 = self.sector(era)
        return (a0 + a1) / 2

    def polygon(self, era: int, inner: float | None = None, outer: float | None = None) -> np.ndarray:
        """The Era's ring sector as a polygon (N x 2 fractions): outer arc clockwise, inner arc back."""
        a0, a1 = self.sector(era)
        t = np.deg2rad(np.linspace(a0, a1, 24))
        r0, r1 = inner if inner is not None else self.inner, outer if outer is not None else self.outer
        outer_arc = np.stack([0.5 + r1 * np.cos(t), 0.5 + r1 * np.sin(t)], axis=1)
        inner_arc = np.stack([0.5 + r0 * np.cos(t[::-1]), 0.5 + r0 * np.sin(t[::-1])], axis=1)
        return np.concatenate([outer_arc, inner_arc])

    def at(self, era: int, radius: float, offset_deg: float = 0.0) -> tuple[float, float]:
        a = np.deg2rad(self.mid_angle(era) + offset_deg)
        return (0.5 + radius * float(np.cos(a)), 0.5 + radius * float(np.sin(a)))

    def rift_slots(self, era: int) -> tuple[tuple[float, float], ...]:
        """Centres of the Era's three rift-cube slots (an Era holds three rift cubes safely)."""
        r = self.inner + 9.0 / BOARD_MM
        spread = (360.0 / COUNT - self.gap_deg) * 0.27
        return tuple(self.at(era, r, k * spread) for k in (-1, 0, 1))

    def mission_slot(self, era: int) -> tuple[float, float]:
        """Centre of the printed spot outside the ring where the Era's mission tile lies."""
        return self.at(era, self.outer + (MISSION_MM[0] / 2 + 9) / BOARD_MM)


@dataclass(frozen=True)
class Design:
    """One printing of the game: every choice that makes its components look unlike another printing's."""

    number: int
    theme: str
    palette: Palette
    title_font: Path
    body_font: Path
    index_font: Path
    border: str
    layout: str
    motif: str
    badge: str
    emblem_filled: bool
    index_right: bool
    index_twin: bool
    index_prefix: bool  # "A07" or just "07"
    corner_mm: float
    wear: float
    back_pattern: str
    back_style: str
    mission_style: str
    token_style: str
    vortex_hues: tuple[float, float]
    board: BoardLayout

    @property
    def name(self) -> str:
        return f"{GAME}-design-{self.number}"


def _rng(*parts: int | str) -> np.random.Generator:
    return np.random.default_rng(stable_seed(GAME, *parts))


@cache
def design_for(number: int) -> Design:
    """Every look of one printing, drawn from its number."""
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        raise ValueError(f"design is {number!r}; expected a whole number >= 0")
    rng = _rng(number)
    theme = str(rng.choice(THEMES, p=THEME_WEIGHTS))
    return Design(
        number=number,
        theme=theme,
        palette=_palette(rng, theme),
        title_font=pick_text_font(rng, 0.75),
        body_font=pick_body_font(rng),
        index_font=pick_text_font(rng, 0.9),
        border=BORDERS[int(rng.integers(0, len(BORDERS)))],
        layout=LAYOUTS[int(rng.integers(0, len(LAYOUTS)))],
        motif=MOTIFS[int(rng.integers(0, len(MOTIFS)))],
        badge=BADGES[int(rng.integers(0, len(BADGES)))],
        emblem_filled=bool(rng.random() < 0.6),
        index_right=bool(rng.random() < 0.35),
        index_twin=bool(rng.random() < 0.6),
        index_prefix=bool(rng.random() < 0.7),
        corner_mm=float(rng.uniform(2.0, 4.0)),
        wear=float(rng.uniform(0.0, 0.6)),
        back_pattern=BACK_PATTERNS[int(rng.integers(0, len(BACK_PATTERNS)))],
        back_style=BACK_STYLES[int(rng.integers(0, len(BACK_STYLES)))],
        mission_style=MISSION_STYLES[int(rng.integers(0, len(MISSION_STYLES)))],
        token_style=TOKEN_STYLES[int(rng.integers(0, len(TOKEN_STYLES)))],
        vortex_hues=(float(rng.uniform(0, 360)), float(rng.uniform(-70, 70))),
        board=BoardLayout(
            round_cut=bool(rng.random() < 0.4),
            start_deg=float(rng.uniform(0, 360)),
            inner=float(rng.uniform(0.13, 0.16)),
            outer=float(rng.uniform(0.27, 0.29)),
            gap_deg=float(rng.uniform(0.6, 3.0)),
        ),
    )


def _palette(rng: np.random.Generator, theme: str) -> Palette:
    """The theme's paper and inks, the brass, Dr. Foo's skin tone and the seven Era colours of one printing."""
    paper_hue = rng.uniform(0, 360)
    if theme == "light":
        panel = hsv_bgr(paper_hue, rng.uniform(0.0, 0.1), rng.uniform(0.9, 0.98))
        ink = hsv_bgr(rng.uniform(0, 360), rng.uniform(0.2, 0.6), rng.uniform(0.08, 0.22))
    elif theme == "dark":
        panel = hsv_bgr(rng.uniform(200, 300), rng.uniform(0.2, 0.6), rng.uniform(0.1, 0.22))
        ink = hsv_bgr(rng.uniform(30, 60), rng.uniform(0.0, 0.25), rng.uniform(0.88, 0.98))
    elif theme == "parchment":
        panel = hsv_bgr(rng.uniform(28, 48), rng.uniform(0.18, 0.35), rng.uniform(0.8, 0.92))
        ink = hsv_bgr(rng.uniform(15, 35), rng.uniform(0.5, 0.8), rng.uniform(0.15, 0.3))
    else:
        panel = hsv_bgr(rng.uniform(195, 225), rng.uniform(0.55, 0.85), rng.uniform(0.35, 0.55))
        ink = hsv_bgr(rng.uniform(180, 220), rng.uniform(0.0, 0.15), rng.uniform(0.9, 1.0))
    dark = luma(panel) < 120
    stock = mix(panel, WHITE, 0.85) if rng.random() < 0.4 else panel  # a white core shows at the cut, or not
    eras = _era_colours(rng)
    return Palette(
        stock=stock,
        panel=panel,
        ink=ink,
        muted=mix(panel, ink, 0.35),
        accent=hsv_bgr(rng.uniform(0, 360), rng.uniform(0.4, 0.8), rng.uniform(0.25, 0.6)),
        metal=hsv_bgr(rng.uniform(30, 50), rng.uniform(0.2, 0.6), rng.uniform(0.55, 0.8)),
        skin=hsv_bgr(rng.uniform(18, 35), rng.uniform(0.2, 0.55), rng.uniform(0.55, 0.95)),
        eras=eras,
        dark=dark,
    )


def _era_colours(rng: np.random.Generator, min_gap: float = 22.0) -> tuple[BGR, ...]:
    """Seven Era colours from the printable hues (one dropped, all turned a little, in rainbow order from any
    start or shuffled), drawn again while two lie closer than `min_gap` in 8-bit Lab: players tell Eras apart by
    colour, so a design may move every hue but never make two Eras look alike."""
    best: tuple[float, tuple[BGR, ...]] = (-1.0, ())
    for _ in range(30):
        hues = np.delete(ERA_HUES, int(rng.integers(0, len(ERA_HUES)))) + rng.uniform(-10, 10)
        rainbow = np.roll(np.arange(COUNT)[:: int(rng.choice([-1, 1]))], int(rng.integers(0, COUNT)))
        order = rainbow if rng.random() < 0.5 else rng.permutation(COUNT)
        sat, val = rng.uniform(0.58, 0.9), rng.uniform(0.62, 0.9)
        eras = tuple(
            hsv_bgr(float(hues[k]) + rng.uniform(-3, 3), sat + rng.uniform(-0.05, 0.05), val + rng.uniform(-0.06, 0.05))
            for k in order
        )
        gap = _smallest_gap(eras)
        if gap >= min_gap:
            return eras
        best = max(best, (gap, eras))
    return best[1]


def _smallest_gap(colours: tuple[BGR, ...]) -> float:
    lab = cv2.cvtColor(np.array(colours, np.uint8)[None], cv2.COLOR_BGR2LAB)[0].astype(np.float32)
    gaps = np.linalg.norm(lab[:, None] - lab[None], axis=2) + np.eye(len(colours), dtype=np.float32) * 1e3
    return float(gaps.min())


# -------------------------------------------------------------------------------------------- icons (unit box)


def _arc(cx: float, cy: float, rx: float, ry: float, a0: float, a1: float, n: int = 24) -> list[tuple[float, float]]:
    t = np.deg2rad(np.linspace(a0, a1, n))
    return [(cx + rx * float(np.cos(a)), cy + ry * float(np.sin(a))) for a in t]


def _poly(points: np.ndarray | list[tuple[float, float]], role: str) -> Shape:
    return Shape("poly", tuple((float(x), float(y)) for x, y in points), role)


def _line(points: list[tuple[float, float]], role: str, width: float) -> Shape:
    return Shape("line", tuple(points), role, width)


def _ellipse(cx: float, cy: float, rx: float, ry: float, role: str, angle: float = 0.0) -> Shape:
    return Shape("ellipse", ((cx, cy), (rx, ry), (angle, 0.0)), role)


def _gear_points(cx: float, cy: float, r: float, teeth: int, depth: float = 0.2, turn: float = 0.0) -> np.ndarray:
    n = teeth * 4
    t = np.deg2rad(turn) + np.arange(n) * 2 * np.pi / n
    radii = np.where((np.arange(n) // 2) % 2 == 0, r, r * (1 - depth))
    return np.stack([cx + radii * np.cos(t), cy + radii * np.sin(t)], axis=1)


def _spiral_points(cx: float, cy: float, r: float, turns: float, n: int = 90) -> list[tuple[float, float]]:
    t = np.linspace(0, turns * 2 * np.pi, n)
    rr = r * (0.08 + 0.92 * t / t[-1])
    return [(cx + float(a * np.cos(b)), cy + float(a * np.sin(b))) for a, b in zip(rr, t, strict=True)]


def era_icon(era: int) -> tuple[Shape, ...]:
    """The Era's emblem in a unit box, role "fg" for ink and "bg" for holes: a sunrise, a castle, a painter's
    palette, a gear, a globe, a robot head, an hourglass."""
    return (_sunrise, _castle, _palette_icon, _gear_icon, _globe, _robot, _hourglass)[era]()


def _sunrise() -> tuple[Shape, ...]:
    rays = tuple(
        _line([*_arc(0.5, 0.64, 0.32, 0.32, a, a, 1), *_arc(0.5, 0.64, 0.47, 0.47, a, a, 1)], "fg", 0.07)
        for a in (195, 225, 255, 285, 315, 345)
    )
    horizon = [(0.06, 0.7), (0.94, 0.7), (0.94, 0.8), (0.06, 0.8)]
    return (_poly(_arc(0.5, 0.66, 0.25, 0.25, 180, 360), "fg"), _poly(horizon, "fg"), *rays)


def _castle() -> tuple[Shape, ...]:
    outline = [
        (0.2, 0.88),
        (0.2, 0.18),
        (0.33, 0.18),
        (0.33, 0.3),
        (0.44, 0.3),
        (0.44, 0.18),
        (0.56, 0.18),
        (0.56, 0.3),
        (0.67, 0.3),
        (0.67, 0.18),
        (0.8, 0.18),
        (0.8, 0.88),
    ]
    door = [(0.41, 0.88), (0.41, 0.68), *_arc(0.5, 0.68, 0.09, 0.09, 180, 360, 10), (0.59, 0.88)]
    return (
        _poly(outline, "fg"),
        _poly(door, "bg"),
        _poly([(0.46, 0.42), (0.54, 0.42), (0.54, 0.54), (0.46, 0.54)], "bg"),
    )


def _palette_icon() -> tuple[Shape, ...]:
    dots = tuple(_ellipse(x, y, 0.065, 0.065, "bg") for x, y in ((0.38, 0.36), (0.56, 0.3), (0.7, 0.44), (0.64, 0.62)))
    return (_ellipse(0.5, 0.5, 0.42, 0.33, "fg", -18.0), _ellipse(0.34, 0.62, 0.08, 0.07, "bg"), *dots)


def _gear_icon() -> tuple[Shape, ...]:
    return (_poly(_gear_points(0.5, 0.5, 0.44, 9, 0.22), "fg"), _ellipse(0.5, 0.5, 0.14, 0.14, "bg"))


def _globe() -> tuple[Shape, ...]:
    lines = (
        _line(_arc(0.5, 0.5, 0.17, 0.39, 0, 360, 40), "bg", 0.05),
        _line([(0.12, 0.5), (0.88, 0.5)], "bg", 0.05),
        _line([(0.2, 0.3), (0.8, 0.3)], "bg", 0.045),
        _line([(0.2, 0.7), (0.8, 0.7)], "bg", 0.045),
        _line([(0.5, 0.1), (0.5, 0.9)], "bg", 0.05),
    )
    return (_ellipse(0.5, 0.5, 0.41, 0.41, "fg"), *lines)


def _robot() -> tuple[Shape, ...]:
    head = [(0.22, 0.32), (0.78, 0.32), (0.78, 0.84), (0.22, 0.84)]
    return (
        _poly(head, "fg"),
        _poly([(0.12, 0.48), (0.22, 0.48), (0.22, 0.68), (0.12, 0.68)], "fg"),
        _poly([(0.78, 0.48), (0.88, 0.48), (0.88, 0.68), (0.78, 0.68)], "fg"),
        _line([(0.5, 0.32), (0.5, 0.16)], "fg", 0.06),
        _ellipse(0.5, 0.13, 0.065, 0.065, "fg"),
        _ellipse(0.37, 0.52, 0.075, 0.075, "bg"),
        _ellipse(0.63, 0.52, 0.075, 0.075, "bg"),
        _poly([(0.34, 0.68), (0.66, 0.68), (0.66, 0.75), (0.34, 0.75)], "bg"),
    )


def _hourglass() -> tuple[Shape, ...]:
    return (
        _poly([(0.18, 0.08), (0.82, 0.08), (0.82, 0.17), (0.18, 0.17)], "fg"),
        _poly([(0.18, 0.83), (0.82, 0.83), (0.82, 0.92), (0.18, 0.92)], "fg"),
        _poly([(0.27, 0.17), (0.73, 0.17), (0.53, 0.5), (0.73, 0.83), (0.27, 0.83), (0.47, 0.5)], "fg"),
        _poly([(0.36, 0.26), (0.64, 0.26), (0.5, 0.45)], "bg"),
    )


def dimension_icon(dimension: str) -> tuple[Shape, ...]:
    """The four Dimension symbols of the rules summary: spiral, star, stripe, black hole."""
    if dimension == "spiral":
        return (_line(_spiral_points(0.5, 0.5, 0.42, 2.3), "fg", 0.1),)
    if dimension == "star":
        return (_poly(star_points((0.5, 0.54), 0.47, 0.2, 5), "fg"),)
    if dimension == "stripe":
        return tuple(
            _poly([(x, 0.86), (x + 0.14, 0.86), (x + 0.34, 0.14), (x + 0.2, 0.14)], "fg") for x in (0.06, 0.3, 0.54)
        )
    return (
        _line(_arc(0.5, 0.5, 0.47, 0.17, 0, 360, 40), "fg", 0.07),
        _ellipse(0.5, 0.5, 0.27, 0.27, "fg"),
        _ellipse(0.5, 0.5, 0.15, 0.15, "bg"),
    )


EFFECT_FAMILY = {
    "energy": "energy",
    "rift": "rift",
    "move": "move",
    "draw": "card",
    "discard": "card",
    "reveal": "card",
    "acquire": "card",
    "destroy_artifact": "card",
    "push": "clone",
    "pull": "clone",
    "carry": "clone",
    "destroy_clone": "clone",
}


def effect_icon(kind: str) -> tuple[Shape, ...]:
    """The icon family of an effect (rules summary: energy, rift, movement, artifact, clone icons)."""
    family = EFFECT_FAMILY.get(kind, "card")
    if family in ("energy", "rift"):
        top = [(0.5, 0.12), (0.88, 0.3), (0.5, 0.48), (0.12, 0.3)]
        left = [(0.12, 0.3), (0.5, 0.48), (0.5, 0.9), (0.12, 0.72)]
        right = [(0.5, 0.48), (0.88, 0.3), (0.88, 0.72), (0.5, 0.9)]
        return (_poly(top, "light"), _poly(left, "mid"), _poly(right, "dark"))
    if family == "move":
        return (
            _poly([(0.08, 0.4), (0.56, 0.4), (0.56, 0.2), (0.94, 0.5), (0.56, 0.8), (0.56, 0.6), (0.08, 0.6)], "mid"),
        )
    if family == "clone":
        return (
            _ellipse(0.5, 0.52, 0.34, 0.4, "light"),
            _line(_arc(0.62, 0.45, 0.13, 0.13, 0, 360, 24), "dark", 0.07),
            _ellipse(0.36, 0.45, 0.05, 0.05, "dark"),
            _line([(0.34, 0.7), (0.66, 0.7)], "dark", 0.06),
        )
    return (
        _poly([(0.16, 0.2), (0.62, 0.12), (0.76, 0.8), (0.3, 0.88)], "dark"),
        _poly([(0.3, 0.16), (0.78, 0.16), (0.78, 0.86), (0.3, 0.86)], "light"),
        _line([(0.42, 0.5), (0.66, 0.5)], "dark", 0.07),
        _line([(0.54, 0.38), (0.54, 0.62)], "dark", 0.07),
    )


def foo_portrait(lens_radius: float = 0.12) -> tuple[Shape, ...]:
    """Dr. Foo: wild hair, a monocle (the lens shows an Era on clones and Faux cards), a curled moustache."""
    lx, ly = FOO_LENS
    hair = star_points((0.5, 0.42), 0.46, 0.3, 11, -80.0)
    return (
        _poly(hair, "hair"),
        _poly([(0.14, 1.0), (0.24, 0.8), (0.5, 0.86), (0.76, 0.8), (0.86, 1.0)], "coat"),
        _poly([(0.42, 0.86), (0.5, 0.9), (0.58, 0.86), (0.58, 0.96), (0.5, 0.92), (0.42, 0.96)], "ink"),
        _ellipse(0.23, 0.55, 0.06, 0.09, "skin"),
        _ellipse(0.77, 0.55, 0.06, 0.09, "skin"),
        _ellipse(0.5, 0.55, 0.27, 0.32, "skin"),
        _line([(0.3, 0.36), (0.45, 0.33)], "ink", 0.035),
        _line([(lx - 0.12, ly - 0.16), (lx + 0.1, ly - 0.18)], "ink", 0.035),
        _ellipse(0.38, 0.47, 0.04, 0.035, "ink"),
        _poly(
            [(0.5, 0.66), (0.3, 0.7), (0.26, 0.64), (0.32, 0.68), (0.5, 0.62), (0.68, 0.68), (0.74, 0.64), (0.7, 0.7)],
            "hair",
        ),
        _line([(0.42, 0.76), (0.5, 0.78), (0.58, 0.75)], "ink", 0.03),
        _line([(lx + lens_radius * 0.7, ly + lens_radius * 0.7), (lx + 0.2, 0.9)], "rim", 0.02),
        _ellipse(lx, ly, lens_radius * 1.18, lens_radius * 1.18, "rim"),
        _ellipse(lx, ly, lens_radius, lens_radius, "lens"),
    )


def _gadget_shapes(rng: np.random.Generator) -> tuple[Shape, ...]:
    """An artifact's illustration: one main contraption and a few small parts, different for every card."""
    parts: list[Shape] = []
    main = ("gear", "clock", "flask", "lens", "coil", "crystal", "orb")[int(rng.integers(0, 7))]
    parts += _part(rng, main, 0.5 + rng.uniform(-0.08, 0.08), 0.52 + rng.uniform(-0.06, 0.06), rng.uniform(0.28, 0.36))
    for _ in range(int(rng.integers(1, 4))):
        kind = ("gear", "orb", "crystal", "coil", "bolt")[int(rng.integers(0, 5))]
        corner = rng.uniform(0.15, 0.3, 2) * rng.choice([-1, 1], 2)
        parts += _part(rng, kind, 0.5 + corner[0] * 1.3, 0.5 + corner[1] * 1.2, rng.uniform(0.09, 0.15))
    return tuple(parts)


def _part(rng: np.random.Generator, kind: str, x: float, y: float, r: float) -> list[Shape]:
    if kind == "gear":
        return [
            _poly(_gear_points(x, y, r, int(rng.integers(7, 13)), 0.2, rng.uniform(0, 30)), "metal"),
            _ellipse(x, y, r * 0.45, r * 0.45, "dark"),
            _ellipse(x, y, r * 0.18, r * 0.18, "metal"),
        ]
    if kind == "clock":
        hands = [
            _line([(x, y), (x + r * 0.6 * np.cos(a), y + r * 0.6 * np.sin(a))], "ink", 0.025)
            for a in rng.uniform(0, 2 * np.pi, 2)
        ]
        ticks = [
            _line(
                [
                    (x + r * 0.78 * np.cos(a), y + r * 0.78 * np.sin(a)),
                    (x + r * 0.9 * np.cos(a), y + r * 0.9 * np.sin(a)),
                ],
                "ink",
                0.015,
            )
            for a in np.arange(12) * np.pi / 6
        ]
        return [_ellipse(x, y, r * 1.08, r * 1.08, "metal"), _ellipse(x, y, r, r, "light"), *ticks, *hands]
    if kind == "flask":
        neck = [
            (x - r * 0.18, y - r * 1.0),
            (x + r * 0.18, y - r * 1.0),
            (x + r * 0.18, y - r * 0.4),
            (x - r * 0.18, y - r * 0.4),
        ]
        return [
            _poly(neck, "glass"),
            _ellipse(x, y + r * 0.15, r * 0.72, r * 0.7, "glass"),
            _poly(_arc(x, y + r * 0.15, r * 0.66, r * 0.64, 10, 170), "mid"),
            _ellipse(x - r * 0.3, y - r * 0.05, r * 0.12, r * 0.2, "hi", 20.0),
        ]
    if kind == "lens":
        handle = [
            (x + r * 0.6, y + r * 0.55),
            (x + r * 0.78, y + r * 0.4),
            (x + r * 1.3, y + r * 1.1),
            (x + r * 1.1, y + r * 1.25),
        ]
        return [
            _poly(handle, "dark"),
            _ellipse(x, y, r * 0.85, r * 0.85, "metal"),
            _ellipse(x, y, r * 0.68, r * 0.68, "glass"),
            _ellipse(x - r * 0.2, y - r * 0.25, r * 0.14, r * 0.2, "hi"),
        ]
    if kind == "coil":
        return [_line(_spiral_points(x, y, r, float(rng.uniform(2.0, 3.5))), "metal", 0.035)]
    if kind == "crystal":
        pts = [
            (x, y - r),
            (x + r * 0.6, y - r * 0.35),
            (x + r * 0.45, y + r * 0.8),
            (x - r * 0.45, y + r * 0.8),
            (x - r * 0.6, y - r * 0.35),
        ]
        return [_poly(pts, "light"), _poly([(x, y - r), (x + r * 0.6, y - r * 0.35), (x, y + r * 0.8)], "mid")]
    if kind == "bolt":
        return [
            _poly(
                [
                    (x + r * 0.2, y - r),
                    (x - r * 0.5, y + r * 0.1),
                    (x, y + r * 0.1),
                    (x - r * 0.2, y + r),
                    (x + r * 0.5, y - r * 0.15),
                    (x, y - r * 0.15),
                ],
                "hi",
            )
        ]
    return [_ellipse(x, y, r, r, "mid"), _ellipse(x - r * 0.3, y - r * 0.3, r * 0.3, r * 0.3, "hi")]


# ------------------------------------------------------------------------------------------- drawing helpers


def _px(box_mm: Box, ppm: float) -> Box:
    return (box_mm[0] * ppm, box_mm[1] * ppm, box_mm[2] * ppm, box_mm[3] * ppm)


def _size(s: Surface) -> tuple[int, int]:
    return (s.alpha.shape[1], s.alpha.shape[0])


def _gradient(size: tuple[int, int], top: BGR, bottom: BGR, angle_deg: float = 90.0) -> np.ndarray:
    """A printed two-colour blend over a box (BGR float image), for art windows and Era bands."""
    t = linear_ramp(size, angle_deg)[:, :, None]
    return np.asarray(top, np.float32) * (1 - t) + np.asarray(bottom, np.float32) * t


def _fill_gradient(s: Surface, box: Box, top: BGR, bottom: BGR, radius: float = 0.0, angle: float = 90.0) -> None:
    window, (ox, oy) = sub_surface(s, box)
    local = (box[0] - ox, box[1] - oy, box[2] - ox, box[3] - oy)
    paint(window, box_mask(_size(window), local, radius), _gradient(_size(window), top, bottom, angle))


def _text(
    s: Surface,
    text: str,
    centre: tuple[float, float],
    height: float,
    colour: BGR,
    font: Path,
    rotation: float = 0.0,
    outline: tuple[BGR, int] | None = None,
) -> Box:
    """draw_text through a window around the text, so a word on the large board costs what it costs on a card."""
    reach = height * (len(text) * 0.8 + 2)
    window, (ox, oy) = sub_surface(s, (centre[0] - reach, centre[1] - reach, centre[0] + reach, centre[1] + reach))
    x0, y0, x1, y1 = draw_text(window, text, (centre[0] - ox, centre[1] - oy), height, colour, font, rotation, outline)
    return (x0 + ox, y0 + oy, x1 + ox, y1 + oy) if x1 > x0 else (0.0, 0.0, 0.0, 0.0)


def _fitted_text(s: Surface, text: str, box: Box, colour: BGR, font: Path, rotation: float = 0.0) -> Box:
    """Text as large as fits in `box` (rotated 90 degrees it fits the box's other way)."""
    w, h = box[2] - box[0], box[3] - box[1]
    if abs(rotation) % 180 == 90:
        w, h = h, w
    height = fit_height(text, font, w, h)
    return _text(s, text, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), height, colour, font, rotation)


def _badge_points(shape: str, box: Box) -> np.ndarray:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    r = min(box[2] - box[0], box[3] - box[1]) / 2
    if shape == "diamond":
        return star_points((cx, cy), r, r, 4, -90.0)[::2]
    if shape == "hexagon":
        return star_points((cx, cy), r, r, 6, 0.0)[::2]
    if shape == "shield":
        top = cy - r * 0.9
        return np.array(
            [
                (cx - r * 0.85, top),
                (cx + r * 0.85, top),
                (cx + r * 0.85, cy + r * 0.1),
                (cx, cy + r),
                (cx - r * 0.85, cy + r * 0.1),
            ]
        )
    return circle_points((cx, cy), r)


def _era_badge(s: Surface, d: Design, era: int, box: Box, rotation: float = 0.0) -> Box:
    """An Era's emblem on its badge: filled in the Era colour with light ink, or outlined with the emblem in the
    Era colour, by design."""
    colour = d.palette.eras[era]
    line = max((box[2] - box[0]) * 0.06, 1.0)
    outline_colour = d.palette.ink if not d.palette.dark else mix(colour, BLACK, 0.5)
    points = _badge_points(d.badge, box)
    if rotation:
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        points = _rotate(points, centre, rotation)
    if d.emblem_filled or abs(luma(colour) - luma(d.palette.panel)) < 70:  # a printer keeps the emblem legible
        fill_polygons(s, [points], colour)
        fg, bg = ink_on(colour), colour
    else:
        fill_polygons(s, [points], d.palette.panel)
        fg, bg = colour, d.palette.panel
    stroke_polygons(s, [points], outline_colour, line)
    inset = (box[2] - box[0]) * 0.22
    icon_box = (box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset)
    draw_icon(s, era_icon(era), icon_box, {"fg": fg, "bg": bg}, rotation_deg=rotation)
    return (min(points[:, 0]), min(points[:, 1]), max(points[:, 0]), max(points[:, 1]))


def _rotate(points: np.ndarray, centre: tuple[float, float], degrees: float) -> np.ndarray:
    return np.array([rotate_about((float(x), float(y)), centre, degrees) for x, y in points])


def _art_colours(d: Design, colour: BGR) -> dict[str, BGR]:
    p = d.palette
    return {
        "light": mix(colour, WHITE, 0.5),
        "mid": colour,
        "dark": mix(colour, BLACK, 0.45),
        "metal": p.metal,
        "glass": mix((235, 225, 200), colour, 0.15),
        "hi": (245, 250, 252),
        "ink": (40, 35, 30),
        "skin": p.skin,
        "hair": (238, 238, 236),
        "coat": mix((240, 240, 236), p.accent, 0.15),
        "rim": p.metal,
        "lens": mix(colour, WHITE, 0.25),
        "fg": p.ink,
        "bg": p.panel,
    }


Stroke = tuple[Surface, BGR, float, float]  # surface, ink, line width, opacity


def _motif(
    s: Surface, rng: np.random.Generator, kind: str, box: Box, colour: BGR, opacity: float, scale: float
) -> None:
    """Background art in faint ink: clockwork, clock faces, spirals, circuit traces or orbits, the time-travel
    imagery of the game's theme, drawn fresh for every piece; `scale` is the size of one element in pixels."""
    x0, y0, x1, y1 = box
    count = max(int((x1 - x0) * (y1 - y0) / (scale * scale) * 0.5), 2)
    pen = (s, colour, max(scale * 0.04, 1.0), opacity)
    draw = {"gears": _motif_gear, "clocks": _motif_clock, "spirals": _motif_spiral, "circuits": _motif_circuit}
    for _ in range(count):
        centre = (float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1)))
        draw.get(kind, _motif_orbit)(pen, rng, centre, scale * float(rng.uniform(0.3, 0.9)))


def _motif_gear(pen: Stroke, rng: np.random.Generator, c: tuple[float, float], r: float) -> None:
    s, colour, line, opacity = pen
    gear = _gear_points(c[0], c[1], r, int(rng.integers(8, 16)), 0.15)
    stroke_polygons(s, [gear, circle_points(c, r * 0.35)], colour, line, True, opacity)


def _motif_clock(pen: Stroke, rng: np.random.Generator, c: tuple[float, float], r: float) -> None:
    s, colour, line, opacity = pen
    a = np.arange(12) * np.pi / 6
    ticks = [
        np.array([(c[0] + r * 0.82 * x, c[1] + r * 0.82 * y), (c[0] + r * x, c[1] + r * y)])
        for x, y in zip(np.cos(a), np.sin(a), strict=True)
    ]
    rim = circle_points(c, r)
    stroke_polygons(s, [np.vstack([rim, rim[:1]]), *ticks], colour, line, False, opacity)
    hands = [
        np.array([c, (c[0] + r * k * np.cos(h), c[1] + r * k * np.sin(h))])
        for h, k in ((rng.uniform(0, 2 * np.pi), 0.7), (rng.uniform(0, 2 * np.pi), 0.45))
    ]
    stroke_polygons(s, hands, colour, line * 1.5, False, opacity)


def _motif_spiral(pen: Stroke, rng: np.random.Generator, c: tuple[float, float], r: float) -> None:
    s, colour, line, opacity = pen
    stroke_polygons(
        s, [np.array(_spiral_points(c[0], c[1], r, float(rng.uniform(1.5, 3.0))))], colour, line, False, opacity
    )


def _motif_circuit(pen: Stroke, rng: np.random.Generator, c: tuple[float, float], r: float) -> None:
    s, colour, line, opacity = pen
    pts = [c]
    for _ in range(int(rng.integers(2, 5))):
        x, y = pts[-1]
        step = r * float(rng.uniform(0.5, 1.3))
        pts.append((x + step, y) if rng.random() < 0.5 else (x, y + step * float(rng.choice([-1, 1]))))
    stroke_polygons(s, [np.array(pts)], colour, line, False, opacity)
    fill_circle(s, pts[-1], line * 2.2, colour, opacity)


def _motif_orbit(pen: Stroke, rng: np.random.Generator, c: tuple[float, float], r: float) -> None:
    s, colour, line, opacity = pen
    tilt = float(rng.uniform(0, 180))
    stroke_polygons(s, [ellipse_points(c, (r * 1.6, r * 0.6), tilt, 64)], colour, line, True, opacity)
    planet = rotate_about((c[0] + r * 1.6, c[1]), c, tilt)
    fill_circle(s, planet, line * 3, colour, opacity)


def _finish(s: Surface, rng: np.random.Generator, d: Design, ppm: float) -> np.ndarray:
    """Printed and handled: the print sits slightly off-centre on the cut (die-cutting is never exact), ink
    edges are soft, the edges and face carry the design's wear."""
    shift = rng.normal(0, 0.35, 2) * ppm
    matrix = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
    h, w = s.alpha.shape
    s.bgr[:] = cv2.warpAffine(s.bgr, matrix, (w, h), borderMode=cv2.BORDER_REPLICATE)
    return print_finish(rng, s, d.wear * float(rng.uniform(0.5, 1.4)), softness=0.35 + 0.1 * ppm / 4)


# ------------------------------------------------------------------------------------------------------ cards


@dataclass(frozen=True)
class CardBoxes:
    """A card layout in millimetres."""

    inner: Box
    index: Box
    name: Box
    band: Box
    emblem: Box
    art: Box
    dimension: Box
    text: Box
    footer: Box
    stripe: Box | None


def card_boxes(d: Design, w: float = CARD_MM[0], h: float = CARD_MM[1]) -> CardBoxes:
    """Where everything sits on a card face: header (name band on top), footer (art on top, name below it) or side
    (an Era stripe down one edge), mirrored when the design puts its index on the right."""
    m = {"margin": 3.5, "bleed": 2.5, "double": 4.0, "frame": 4.5, "notched": 4.0}[d.border]
    low = 10.5 if d.index_twin else 6.5  # the text box ends above a twin index in the bottom corner
    if d.layout == "header":
        boxes = CardBoxes(
            inner=(m, m, w - m, h - m),
            index=(m + 0.8, m + 0.8, m + 12, m + 9.5),
            name=(m + 13, m + 1.5, w - m - 13, m + 8.8),
            band=(m, m, w - m, m + 10.3),
            emblem=(w - m - 11.5, m + 0.2, w - m - 0.5, m + 11.2),
            art=(m + 1.5, m + 12, w - m - 1.5, m + 47),
            dimension=(w - m - 11, m + 42, w - m - 2, m + 51),
            text=(m + 1.5, m + 52.5, w - m - 1.5, h - m - low),
            footer=(m + 2, h - m - 6, w - m - 2, h - m - 1.5),
            stripe=None,
        )
    elif d.layout == "footer":
        boxes = CardBoxes(
            inner=(m, m, w - m, h - m),
            index=(m + 0.8, m + 0.8, m + 12, m + 9.5),
            name=(m + 2, m + 40.5, w - m - 14, m + 47.5),
            band=(m, m + 39, w - m, m + 49),
            emblem=(w - m - 12.5, m + 38.3, w - m - 1.5, m + 49.3),
            art=(m, m, w - m, m + 39),
            dimension=(w - m - 11, m + 1, w - m - 2, m + 10),
            text=(m + 1.5, m + 51, w - m - 1.5, h - m - low),
            footer=(m + 2, h - m - 6, w - m - 2, h - m - 1.5),
            stripe=None,
        )
    else:
        boxes = CardBoxes(
            inner=(m, m, w - m, h - m),
            index=(w - m - 12.5, m + 0.8, w - m - 0.8, m + 9.5),
            name=(m + 13, m + 1.5, w - m - 13.5, m + 9),
            band=(m + 11, m, w - m, m + 10.3),
            emblem=(m + 0.5, m + 0.8, m + 10.5, m + 10.8),
            art=(m + 12.5, m + 11.5, w - m - 1.5, m + 46),
            dimension=(m + 13.5, m + 41, m + 22.5, m + 50),
            text=(m + 12.5, m + 51.5, w - m - 1.5, h - m - 6.5),
            footer=(m + 12.5, h - m - 6, w - m - 2, h - m - 1.5),
            stripe=(m, m, m + 11, h - m),
        )
    return _mirror(boxes, w) if d.index_right and d.layout != "side" else boxes


def _mirror(b: CardBoxes, w: float) -> CardBoxes:
    def flip(box: Box) -> Box:
        return (w - box[2], box[1], w - box[0], box[3])

    return CardBoxes(
        b.inner,
        flip(b.index),
        flip(b.name),
        b.band,
        flip(b.emblem),
        b.art,
        flip(b.dimension),
        b.text,
        b.footer,
        b.stripe,
    )


def _card_face(rng: np.random.Generator, d: Design, ppm: float, colour: BGR) -> tuple[Surface, CardBoxes]:
    """Stock, printed panel and border in the design's style; the Era (or accent) colour frames it."""
    w, h = round(CARD_MM[0] * ppm), round(CARD_MM[1] * ppm)
    p = d.palette
    s = card_surface(rng, (w, h), p.stock if d.border != "bleed" else p.panel, d.corner_mm * ppm)
    boxes = card_boxes(d)
    inner = _px(boxes.inner, ppm)
    radius = max(d.corner_mm - 1.5, 0.5) * ppm
    if d.border == "frame":
        paint_box(s, (0, 0, w, h), mix(colour, BLACK, 0.15), d.corner_mm * ppm)
    if d.border == "notched":
        cut = 3.0 * ppm
        x0, y0, x1, y1 = inner
        octagon = np.array(
            [
                (x0 + cut, y0),
                (x1 - cut, y0),
                (x1, y0 + cut),
                (x1, y1 - cut),
                (x1 - cut, y1),
                (x0 + cut, y1),
                (x0, y1 - cut),
                (x0, y0 + cut),
            ]
        )
        fill_polygons(s, [octagon], p.panel)
        stroke_polygons(s, [octagon], mix(colour, p.ink, 0.3), max(0.5 * ppm, 1))
    elif d.border != "bleed":
        paint_box(s, inner, p.panel, radius)
    _motif(s, rng, d.motif, inner, p.muted, 0.18, 14 * ppm)
    if d.border == "double":
        paint_frame(s, (1.6 * ppm, 1.6 * ppm, w - 1.6 * ppm, h - 1.6 * ppm), max(0.6 * ppm, 1), colour, radius)
        paint_frame(s, inner, max(0.3 * ppm, 1), p.muted, radius)
    elif d.border == "margin":
        paint_frame(s, inner, max(0.35 * ppm, 1), mix(colour, p.ink, 0.2), radius)
    return s, boxes


def _index(s: Surface, d: Design, text: str, box: Box, colour: BGR, plate: BGR | None, rotation: float = 0.0) -> Box:
    """The corner index: the code in heavy type (on a plate in some designs), readable when the card is fanned."""
    if plate is not None:
        paint_box(s, box, plate, (box[3] - box[1]) * 0.25)
        paint_frame(s, box, max((box[3] - box[1]) * 0.05, 1.0), colour, (box[3] - box[1]) * 0.25)
    pad = (box[3] - box[1]) * 0.18
    inner = (box[0] + pad, box[1] + pad, box[2] - pad, box[3] - pad)
    return _fitted_text(s, text, inner, colour, d.index_font, rotation)


def _twin(box: Box, size: tuple[float, float]) -> Box:
    """A box turned 180 degrees about the card centre: where a twin index goes."""
    w, h = size
    return (w - box[2], h - box[3], w - box[0], h - box[1])


def _index_code(d: Design, code: str) -> str:
    """The printed index: the code, or in some designs only its number ("A07" -> "07")."""
    return code if d.index_prefix else re.sub(r"^[A-Za-z]+(?=\d+$)", "", code)


def _draw_card_index(
    s: Surface, d: Design, boxes: CardBoxes, ppm: float, label: str, inks: tuple[BGR, BGR], plate: BGR | None
) -> Regions:
    """Draw the index and, in designs that have one, its upside-down twin (inks: on the index's own background,
    on the panel where the twin lands); return them as index regions in fractions."""
    size = _size(s)
    box = _px(boxes.index, ppm)
    drawn = [_index(s, d, label, box, inks[0], plate)]
    if d.index_twin:
        drawn.append(_index(s, d, label, _twin(box, size), inks[1], plate, 180.0))
    return tuple(region_fraction(ink, size, 0.8 * ppm) for ink in drawn)


def artifact_card(d: Design, artifact: Artifact, ppm: float) -> tuple[np.ndarray, Regions]:
    """An artifact: name on its Origin Era's band, illustration, Era emblem, Dimension symbol, effect icon and
    rules text, the code as corner index. Returns the picture (BGRA) and its index regions."""
    rng = _rng(d.number, artifact.code)
    p = d.palette
    colour = p.eras[artifact.era]
    s, boxes = _card_face(rng, d, ppm, colour)
    _era_band(s, d, boxes, ppm, colour, artifact.era)
    _fitted_text(s, artifact.name, _px(boxes.name, ppm), ink_on(colour), d.title_font)
    _art_window(s, rng, d, _px(boxes.art, ppm), colour, _gadget_shapes(rng))
    _era_badge(s, d, artifact.era, _px(boxes.emblem, ppm))
    _dimension_badge(s, d, artifact.dimension, _px(boxes.dimension, ppm))
    _effect_box(s, d, artifact, _px(boxes.text, ppm), colour)
    footer = f"{ERAS[artifact.era]} \u00b7 {artifact.dimension}".upper()
    _fitted_text(
        s, footer, _footer_box(boxes, ppm, d), p.muted if not p.dark else mix(p.ink, p.panel, 0.3), d.body_font
    )
    plate = p.panel if d.layout != "header" else None
    inks = (_index_ink(d, colour), p.ink)
    regions = _draw_card_index(s, d, boxes, ppm, _index_code(d, artifact.code), inks, plate)
    return _finish(s, rng, d, ppm), regions


def _index_ink(d: Design, colour: BGR) -> BGR:
    """The index prints on the Era band in header layouts (so in the band's ink), else on a plate."""
    return ink_on(colour) if d.layout == "header" else d.palette.ink


def _footer_box(boxes: CardBoxes, ppm: float, d: Design) -> Box:
    x0, y0, x1, y1 = _px(boxes.footer, ppm)
    if d.index_twin:
        x0, x1 = x0 + 11 * ppm, x1 - 11 * ppm
    return (x0, y0 + (y1 - y0) * 0.2, x1, y1 - (y1 - y0) * 0.2)


def _era_band(s: Surface, d: Design, boxes: CardBoxes, ppm: float, colour: BGR, era: int) -> None:
    band = _px(boxes.band, ppm)
    _fill_gradient(s, band, mix(colour, WHITE, 0.12), mix(colour, BLACK, 0.18), 0.8 * ppm)
    if boxes.stripe is not None:
        stripe = _px(boxes.stripe, ppm)
        _fill_gradient(s, stripe, colour, mix(colour, BLACK, 0.3), 0.8 * ppm)
        name_box = (stripe[0], stripe[1] + 13 * ppm, stripe[2], stripe[3] - 13 * ppm)
        _fitted_text(s, ERAS[era].upper(), name_box, ink_on(colour), d.title_font, rotation=-90.0)


def _art_window(
    s: Surface, rng: np.random.Generator, d: Design, box: Box, colour: BGR, shapes: tuple[Shape, ...]
) -> Box:
    """The illustration: an Era-tinted backdrop with the design's motif, the contraption, a thin frame; returns
    the square the picture was drawn into."""
    p = d.palette
    light = rng.random() < 0.5
    top, bottom = (
        (mix(colour, WHITE, 0.55), mix(colour, WHITE, 0.15))
        if light
        else (mix(colour, BLACK, 0.55), mix(colour, BLACK, 0.15))
    )
    _fill_gradient(s, box, top, bottom, 0.0, float(rng.uniform(60, 120)))
    window, _ = sub_surface(s, box)
    _motif(
        window,
        rng,
        MOTIFS[int(rng.integers(0, len(MOTIFS)))],
        (0, 0, *_size(window)),
        mix(colour, WHITE if not light else BLACK, 0.4),
        0.35,
        (box[3] - box[1]) * 0.3,
    )
    w, h = box[2] - box[0], box[3] - box[1]
    side = min(w, h) * 0.95
    art = ((w - side) / 2, (h - side) / 2, (w + side) / 2, (h + side) / 2)
    draw_icon(window, shapes, art, _art_colours(d, colour), outline=((30, 28, 26), max(side * 0.012, 1.0)))
    paint_frame(s, box, max(side * 0.012, 1.0), mix(colour, p.ink, 0.5))
    return (box[0] + art[0], box[1] + art[1], box[0] + art[2], box[1] + art[3])


def _dimension_badge(s: Surface, d: Design, dimension: str, box: Box) -> None:
    p = d.palette
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    r = (box[2] - box[0]) / 2
    back = p.panel if dimension != "black hole" else mix(p.ink, BLACK, 0.6)
    fg = p.ink if dimension != "black hole" else (245, 245, 245)
    fill_circle(s, (cx, cy), r, back)
    stroke_circle(s, (cx, cy), r, mix(p.ink, p.panel, 0.2), max(r * 0.09, 1.0))
    inset = r * 0.45
    draw_icon(
        s,
        dimension_icon(dimension),
        (box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset),
        {"fg": fg, "bg": back},
    )


def _effect_box(s: Surface, d: Design, artifact: Artifact, box: Box, colour: BGR) -> None:
    p = d.palette
    fill = mix(p.panel, colour, 0.12) if not p.dark else mix(p.panel, colour, 0.2)
    radius = (box[3] - box[1]) * 0.12
    paint_box(s, box, fill, radius, 0.92)
    paint_frame(s, box, max((box[3] - box[1]) * 0.02, 1.0), mix(colour, p.ink, 0.4), radius)
    icon_w = (box[3] - box[1]) * 0.52
    icon_box = (box[0] + icon_w * 0.15, box[1] + icon_w * 0.18, box[0] + icon_w * 1.05, box[1] + icon_w * 1.08)
    family = EFFECT_FAMILY.get(artifact.effect.kind, "card")
    tone = GREEN_CUBE if family == "energy" else RED_CUBE if family == "rift" else colour
    draw_icon(
        s,
        effect_icon(artifact.effect.kind),
        icon_box,
        {"light": mix(tone, WHITE, 0.35), "mid": tone, "dark": mix(tone, BLACK, 0.35)},
        outline=(p.ink, max(icon_w * 0.03, 1.0)),
    )
    amount = artifact.effect.amount
    if amount > 1:
        _text(
            s,
            f"\u00d7{amount}",
            ((icon_box[0] + icon_box[2]) / 2, icon_box[3] + icon_w * 0.3),
            icon_w * 0.28,
            p.ink,
            d.index_font,
        )
    text_box = (box[0] + icon_w * 1.2, box[1] + 2, box[2] - icon_w * 0.12, box[3] - 2)
    size_px = (box[3] - box[1]) * 0.2
    draw_paragraph(s, artifact.text, text_box, d.body_font, size_px, p.ink, "left" if d.layout == "side" else "center")


def faux_card(d: Design, era: int, ppm: float) -> tuple[np.ndarray, Regions]:
    """A Dr. Foo (Faux) card: Foo's portrait, the Era he travels to, that Era's emblem in the corners."""
    rng = _rng(d.number, FAUX[era])
    p = d.palette
    colour = p.eras[era]
    s, boxes = _card_face(rng, d, ppm, colour)
    _era_band(s, d, boxes, ppm, colour, era)
    _fitted_text(s, "DR. FOO", _px(boxes.name, ppm), ink_on(colour), d.title_font)
    portrait = _art_window(s, rng, d, _px(boxes.art, ppm), colour, foo_portrait())
    _lens_emblem(s, portrait, 0.12, era, (mix(colour, BLACK, 0.55), mix(colour, WHITE, 0.25)))
    text = _px(boxes.text, ppm)
    paint_box(s, text, mix(p.panel, colour, 0.2), (text[3] - text[1]) * 0.12)
    mid, cx = (text[1] + text[3]) / 2, (text[0] + text[2]) / 2
    small = (cx - 12 * ppm, mid - 7 * ppm, cx + 12 * ppm, mid - 2 * ppm)
    _fitted_text(s, "TRAVELS TO", small, mix(p.ink, p.panel, 0.3), d.body_font)
    _fitted_text(s, ERAS[era].upper(), (text[0] + 2 * ppm, mid, text[2] - 2 * ppm, mid + 6 * ppm), p.ink, d.title_font)
    regions = [_era_badge(s, d, era, _px(boxes.emblem, ppm))]
    index = _px(boxes.index, ppm)
    side = min(index[2] - index[0], index[3] - index[1])
    corner = (index[0], index[1], index[0] + side, index[1] + side)
    regions.append(_era_badge(s, d, era, corner))
    if d.index_twin:
        regions.append(_era_badge(s, d, era, _twin(corner, _size(s)), rotation=180.0))
    size = _size(s)
    return _finish(s, rng, d, ppm), tuple(region_fraction(r, size, 0.6 * ppm) for r in regions[1:])


def _lens_emblem(s: Surface, portrait: Box, lens_radius: float, era: int, inks: tuple[BGR, BGR]) -> Box:
    """The Era emblem seen through Foo's monocle (the rules: a clone's Paradox Era shows in its monocle), for a
    portrait drawn into `portrait`; inks are the emblem's and the lens's. Returns the monocle's box."""
    x0, y0, x1, y1 = portrait
    cx, cy, r = x0 + FOO_LENS[0] * (x1 - x0), y0 + FOO_LENS[1] * (y1 - y0), lens_radius * (x1 - x0)
    k = r * 0.72
    draw_icon(s, era_icon(era), (cx - k, cy - k, cx + k, cy + k), {"fg": inks[0], "bg": inks[1]})
    return (cx - r, cy - r, cx + r, cy + r)


def card_back(d: Design, kind: str, ppm: float) -> tuple[np.ndarray, Regions]:
    """The shared back of the artifact deck (the ring of Eras and the title) or of the Faux deck (Foo's monocle)."""
    rng = _rng(d.number, kind)
    p = d.palette
    w, h = round(CARD_MM[0] * ppm), round(CARD_MM[1] * ppm)
    base = p.accent if kind == BACK_ARTIFACT else mix(p.accent, BLACK, 0.5)
    s = card_surface(rng, (w, h), base, d.corner_mm * ppm)
    second = mix(base, WHITE if luma(base) < 120 else BLACK, 0.25)
    print_pattern(s, rng, d.back_pattern, second, 0.6, 6 * ppm)
    border = 3.0 * ppm
    paint_frame(s, (border, border, w - border, h - border), max(0.8 * ppm, 1), mix(base, WHITE, 0.6), 2 * ppm)
    if kind == BACK_ARTIFACT:
        _artifact_back_art(s, rng, d, ppm)
    else:
        draw_icon(
            s,
            foo_portrait(),
            (w / 2 - 22 * ppm, h / 2 - 24 * ppm, w / 2 + 22 * ppm, h / 2 + 20 * ppm),
            {**_art_colours(d, p.accent), "lens": mix(p.metal, WHITE, 0.5)},
            outline=(BLACK, max(0.5 * ppm, 1)),
        )
        _text(s, "DR. FOO", (w / 2, h - 14 * ppm), 6 * ppm, WHITE, d.title_font, 0.0, (BLACK, max(round(0.5 * ppm), 1)))
    regions = []
    for corner in ((border + 1.5 * ppm, border + 1.5 * ppm), (w - border - 9.5 * ppm, h - border - 9.5 * ppm)):
        box = (corner[0], corner[1], corner[0] + 8 * ppm, corner[1] + 8 * ppm)
        if kind == BACK_ARTIFACT:
            _ring_logo(s, d, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), 4 * ppm)
        else:
            stroke_circle(s, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), 3.2 * ppm, p.metal, max(0.7 * ppm, 1))
            fill_circle(s, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), 2.4 * ppm, mix(p.metal, WHITE, 0.5))
        regions.append(region_fraction(box, (w, h), 0.3 * ppm))
    return _finish(s, rng, d, ppm), tuple(regions)


def _artifact_back_art(s: Surface, rng: np.random.Generator, d: Design, ppm: float) -> None:
    """The deck's face-down look, one of three per design: the ring of Eras, Era-coloured bands, or a vortex."""
    w, h = _size(s)
    outline = (BLACK, max(round(0.5 * ppm), 1))
    if d.back_style == "ring":
        _ring_logo(s, d, (w / 2, h / 2), 22 * ppm)
        _text(s, "THE LOOP", (w / 2, h / 2), 5.5 * ppm, WHITE, d.title_font, 0.0, outline)
        return
    if d.back_style == "stripes":
        band = h / COUNT * 0.55
        slope = w * float(rng.uniform(0.3, 0.7))
        for era in range(COUNT):
            y = h * 0.2 + era * band * 1.15
            quad = np.array([(0, y + slope), (w, y), (w, y + band), (0, y + slope + band)])
            fill_polygons(s, [quad], d.palette.eras[era], 0.9)
    else:
        hue, offset = d.vortex_hues
        field, _ = _swirl(rng, (w, h), hsv_bgr(hue + 180, 0.6, 0.3), hsv_bgr(hue + 180 + offset, 0.5, 0.8))
        paint(s, box_mask((w, h), (3 * ppm, 3 * ppm, w - 3 * ppm, h - 3 * ppm), 2 * ppm), field)
    plate = (w / 2 - 24 * ppm, h * 0.72 - 7 * ppm, w / 2 + 24 * ppm, h * 0.72 + 7 * ppm)
    paint_box(s, plate, d.palette.panel, 3 * ppm)
    paint_frame(s, plate, max(0.6 * ppm, 1), d.palette.metal, 3 * ppm)
    _fitted_text(
        s,
        "THE LOOP",
        (plate[0] + 4 * ppm, plate[1] + 3 * ppm, plate[2] - 4 * ppm, plate[3] - 3 * ppm),
        d.palette.ink,
        d.title_font,
    )


def _ring_logo(s: Surface, d: Design, centre: tuple[float, float], radius: float) -> None:
    """Seven Era arcs closed into a loop: the game's emblem on the backs and the board."""
    width = radius * 0.28
    for era in range(COUNT):
        a0 = -90 + era * 360 / COUNT + 2
        arc = np.array(_arc(centre[0], centre[1], radius, radius, a0, a0 + 360 / COUNT - 4, 16))
        stroke_polygons(s, [arc], d.palette.eras[era], width, False)


# ---------------------------------------------------------------------------------------------------- missions


def mission_tile(d: Design, mission: Mission, ppm: float) -> tuple[np.ndarray, Regions]:
    """A Sabotage tile: the mission's name, a machine to wreck, its cube slots (green energy / red rift)."""
    rng = _rng(d.number, mission.code)
    p = d.palette
    w, h = round(MISSION_MM[0] * ppm), round(MISSION_MM[1] * ppm)
    base, ink = _mission_colours(d)
    s = card_surface(rng, (w, h), base, 1.5 * ppm)
    _mission_backdrop(s, rng, d, base, ppm)
    left, right = (15 if d.index_twin and d.index_right else 5), (15 if d.index_twin and not d.index_right else 5)
    title = (left * ppm, 3.5 * ppm, w - right * ppm, 17 * ppm)
    draw_paragraph(s, mission.name.upper(), title, d.title_font, 4.0 * ppm * 1.2, ink)
    art = (w / 2 - 10 * ppm, 17.5 * ppm, w / 2 + 10 * ppm, 37.5 * ppm)
    colour = p.eras[int(rng.integers(0, COUNT))]
    draw_icon(s, _gadget_shapes(rng), art, _art_colours(d, colour), outline=(BLACK, max(0.3 * ppm, 1)))
    _cube_slots(s, mission.slots, ink)
    label = _index_code(d, mission.code)
    corner = (3 * ppm, h - 10 * ppm, 14 * ppm, h - 3 * ppm)
    corner = (w - corner[2], corner[1], w - corner[0], corner[3]) if d.index_right else corner
    inks = [_fitted_text(s, label, corner, ink, d.index_font)]
    if d.index_twin:
        inks.append(_fitted_text(s, label, _twin(corner, (w, h)), ink, d.index_font, rotation=180.0))
    return _finish(s, rng, d, ppm), tuple(region_fraction(b, (w, h), 0.8 * ppm) for b in inks)


def _mission_colours(d: Design) -> tuple[BGR, BGR]:
    p = d.palette
    if d.mission_style == "hazard":
        base = mix(p.panel, (40, 200, 235), 0.15) if not p.dark else mix(p.panel, BLACK, 0.2)
    elif d.mission_style == "blueprint":
        base = hsv_bgr(210, 0.7, 0.45) if not p.dark else mix(p.accent, (150, 90, 30), 0.5)
    else:
        base = mix(p.metal, (150, 150, 150), 0.5)
    return base, ink_on(base)


def _mission_backdrop(s: Surface, rng: np.random.Generator, d: Design, base: BGR, ppm: float) -> None:
    """Hazard stripes round the edge, a blueprint grid or a riveted steel plate."""
    w, h = _size(s)
    line = max(0.25 * ppm, 1.0)
    if d.mission_style == "hazard":
        stripes = pattern_mask(np.random.default_rng(7), "stripes", (w, h), 5 * ppm)
        edge = 1 - box_mask((w, h), (3 * ppm, 3 * ppm, w - 3 * ppm, h - 3 * ppm), 1.0 * ppm)
        paint(s, edge, (30, 200, 240))
        paint(s, edge * stripes, (25, 25, 25))
    elif d.mission_style == "blueprint":
        for x in np.arange(0, w, 5 * ppm):
            stroke_polygons(s, [np.array([(x, 0), (x, h)])], mix(base, WHITE, 0.3), line, False, 0.6)
        for y in np.arange(0, h, 5 * ppm):
            stroke_polygons(s, [np.array([(0, y), (w, y)])], mix(base, WHITE, 0.3), line, False, 0.6)
    else:
        print_pattern(s, rng, "hatch", mix(base, BLACK, 0.15), 0.4, 1.2 * ppm)
        for x, y in ((3, 3), (w / ppm - 3, 3), (3, h / ppm - 3), (w / ppm - 3, h / ppm - 3)):
            fill_circle(s, (x * ppm, y * ppm), 1.1 * ppm, mix(base, BLACK, 0.35))
            fill_circle(s, (x * ppm - 0.3 * ppm, y * ppm - 0.3 * ppm), 0.5 * ppm, mix(base, WHITE, 0.5))


def mission_slot_boxes(n: int, size_px: tuple[float, float] = (1.0, 1.0)) -> tuple[Box, ...]:
    """The printed squares of a mission's `n` cube slots on its tile (x0, y0, x1, y1, as fractions of the tile, or
    pixels of a tile `size_px` wide and high): one row at 44 mm of 60, 9.5 mm squares 0.3 of a side apart, smaller
    when more than five must fit across. Where the progress cubes go, for the art and for the scenes that put them
    there."""
    w, h = size_px
    ppm_x, ppm_y = w / MISSION_MM[0], h / MISSION_MM[1]
    side_mm = min(9.5, MISSION_MM[0] * 0.82 / (n * 1.3 - 0.3))
    gap_mm = side_mm * 0.3
    x_mm = MISSION_MM[0] / 2 - (n * side_mm + (n - 1) * gap_mm) / 2
    boxes = []
    for _ in range(n):
        boxes.append((x_mm * ppm_x, (44 - side_mm / 2) * ppm_y, (x_mm + side_mm) * ppm_x, (44 + side_mm / 2) * ppm_y))
        x_mm += side_mm + gap_mm
    return tuple(boxes)


def _cube_slots(s: Surface, slots: tuple[str, ...], ink: BGR) -> None:
    """One printed square per cube the mission needs, in its cube's colour (`mission_slot_boxes`)."""
    for colour_name, box in zip(slots, mission_slot_boxes(len(slots), _size(s)), strict=True):
        side = box[2] - box[0]
        colour = GREEN_CUBE if colour_name == "green" else RED_CUBE
        paint_box(s, box, mix(colour, WHITE, 0.35), side * 0.12)
        paint_frame(s, box, max(side * 0.08, 1.0), mix(colour, BLACK, 0.35), side * 0.12)
        paint_frame(s, (box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1), 1.0, ink, side * 0.14)


def mission_back(d: Design, ppm: float) -> tuple[np.ndarray, Regions]:
    """The face-down side every mission tile shares (tiles wait face down in the Eras), gears in two corners."""
    rng = _rng(d.number, BACK_MISSION)
    w, h = round(MISSION_MM[0] * ppm), round(MISSION_MM[1] * ppm)
    base = mix(_mission_colours(d)[0], BLACK, 0.25)
    s = card_surface(rng, (w, h), base, 1.5 * ppm)
    _mission_backdrop(s, rng, d, base, ppm)
    gear = (w / 2 - 16 * ppm, h / 2 - 16 * ppm, w / 2 + 16 * ppm, h / 2 + 16 * ppm)
    draw_icon(s, _gear_icon(), gear, {"fg": mix(base, WHITE, 0.25), "bg": base})
    word = "S.A.B.O.T.A.G.E." if rng.random() < 0.5 else "SABOTAGE"
    _fitted_text(s, word, (6 * ppm, h / 2 - 4 * ppm, w - 6 * ppm, h / 2 + 4 * ppm), ink_on(base), d.title_font)
    regions = []
    for x, y in ((5 * ppm, 5 * ppm), (w - 13 * ppm, h - 13 * ppm)):
        box = (x, y, x + 8 * ppm, y + 8 * ppm)
        draw_icon(s, _gear_icon(), box, {"fg": mix(base, WHITE, 0.5), "bg": base})
        regions.append(region_fraction(box, (w, h), 0.3 * ppm))
    return _finish(s, rng, d, ppm), tuple(regions)


# ------------------------------------------------------------------------------------------ vortex and clones


def _swirl(rng: np.random.Generator, size: tuple[int, int], c0: BGR, c1: BGR) -> tuple[np.ndarray, np.ndarray]:
    """Logarithmic spiral arms in two colours falling into a black eye; returns the picture (BGR float) and each
    pixel's distance from the centre (1 at the nearer edge)."""
    w, h = size
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32) + 0.5
    xs, ys = (xs - w / 2) / (min(w, h) / 2), (ys - h / 2) / (min(w, h) / 2)
    r = np.hypot(xs, ys)
    arms, twist = int(rng.integers(3, 6)), float(rng.uniform(4, 8)) * float(rng.choice([-1, 1]))
    swirl = (0.5 + 0.5 * np.sin(arms * np.arctan2(ys, xs) + twist * np.log(r + 0.05)))[..., None]
    colour = np.array(c0, np.float32) * (1 - swirl) + np.array(c1, np.float32) * swirl
    return colour * np.clip(r / 0.35, 0, 1)[..., None] ** 1.5, r


def vortex_tile(d: Design, ppm: float) -> np.ndarray:
    """A round tile with a swirl torn into spacetime: spiral arms in two hues darkening to a black eye."""
    rng = _rng(d.number, VORTEX)
    n = round(VORTEX_MM * ppm)
    hue, offset = d.vortex_hues
    c0, c1 = hsv_bgr(hue, 0.75, 0.35), hsv_bgr(hue + offset, 0.55, 0.95)
    bgr, r = _swirl(rng, (n, n), c0, c1)
    s = Surface(bgr.astype(np.float32), rounded_mask((n, n), n / 2))
    sparkle = (rng.random((n, n)) < 0.004) & (r < 0.9)
    s.bgr[sparkle] = 245
    stroke_circle(s, (n / 2, n / 2), n / 2 - 1.2 * ppm, mix(d.palette.metal, BLACK, 0.2), max(1.6 * ppm, 1))
    return _finish(s, rng, d, ppm)


def clone_token(d: Design, code: str, ppm: float) -> tuple[np.ndarray, Regions]:
    """A round Duplicate token: Dr. Foo's clone with its Paradox Era in the monocle, and its number 1-4."""
    rng = _rng(d.number, code)
    era, number = CODES.index(code[:3]), code[3:]
    p = d.palette
    colour = p.eras[era]
    n = round(CLONE_MM * ppm)
    rim = 1.6 * ppm
    back = mix(colour, BLACK, 0.55) if d.token_style == "portrait" else mix(colour, WHITE, 0.1)
    s = card_surface(rng, (n, n), back, n / 2)  # round token
    stroke_circle(s, (n / 2, n / 2), n / 2 - rim / 2, colour if d.token_style == "portrait" else p.metal, rim)
    if d.token_style == "portrait":
        face = (n * 0.12, n * 0.06, n * 0.88, n * 0.82)
        outline = (BLACK, max(0.25 * ppm, 1.0))
        draw_icon(s, foo_portrait(0.16), face, {**_art_colours(d, colour), "lens": colour}, outline=outline)
        mark = _lens_emblem(s, face, 0.16, era, (ink_on(colour), colour))
        plate_c = (n / 2, n * 0.84)
    else:
        centre, radius = (n / 2, n * 0.44), n * 0.25
        hair = star_points((centre[0], centre[1] - n * 0.02), n * 0.4, n * 0.3, 13, -90.0)
        fill_polygons(s, [hair], mix(colour, WHITE, 0.65), 0.8)
        fill_circle(s, centre, radius, colour)
        stroke_circle(s, centre, radius, p.metal, max(1.0 * ppm, 1))
        draw_icon(
            s,
            era_icon(era),
            (
                centre[0] - radius * 0.62,
                centre[1] - radius * 0.62,
                centre[0] + radius * 0.62,
                centre[1] + radius * 0.62,
            ),
            {"fg": ink_on(colour), "bg": colour},
        )
        chain = np.array(_arc(centre[0] + radius * 1.3, centre[1] + radius * 0.9, radius * 0.5, radius * 0.8, 180, 260))
        stroke_polygons(s, [chain], p.metal, max(0.4 * ppm, 1), False)
        mark = (centre[0] - radius, centre[1] - radius, centre[0] + radius, centre[1] + radius)
        plate_c = (n / 2, n * 0.82)
    plate_r = n * 0.11
    fill_circle(s, plate_c, plate_r, (240, 240, 236))
    stroke_circle(s, plate_c, plate_r, BLACK, max(0.25 * ppm, 1))
    digit = _text(s, number, plate_c, plate_r * 1.15, BLACK, d.index_font)
    regions = (region_fraction(mark, (n, n), 0.4 * ppm), region_fraction(digit, (n, n), 0.6 * ppm))
    return _finish(s, rng, d, ppm), regions


# ------------------------------------------------------------------------------------------------------- board


def era_regions(design: int) -> dict[str, tuple[tuple[float, float], ...]]:
    """Where each Era lies on the board picture: its ring sector as a polygon in board fractions (x, y of the
    picture), keyed by Era code, so a scene can drop cubes or clones into an Era and label which one."""
    layout = design_for(design).board
    return {
        code: tuple((round(float(x), 5), round(float(y), 5)) for x, y in layout.polygon(era))
        for era, code in enumerate(CODES)
    }


def mission_spot(layout: BoardLayout, era: int) -> np.ndarray:
    """The printed square outside the ring where the Era's mission tile lies: (4, 2) board fractions, clockwise on
    the picture, turned with the Era's middle."""
    half = (MISSION_MM[0] / 2 + 1.5) / BOARD_MM
    square = np.array([(-half, -half), (half, -half), (half, half), (-half, half)])
    return _rotate(square, (0, 0), layout.mid_angle(era) + 90) + np.array(layout.mission_slot(era))


def mission_regions(design: int) -> dict[str, tuple[tuple[float, float], ...]]:
    """Where each Era's mission spot lies on the board picture (`mission_spot`), keyed by Era code: what a board
    folder's "missions" says of a player's board."""
    layout = design_for(design).board
    return {
        code: tuple((round(float(x), 5), round(float(y), 5)) for x, y in mission_spot(layout, era))
        for era, code in enumerate(CODES)
    }


def board(d: Design, ppm: float) -> np.ndarray:
    """The 7-Era ring board: Era sectors clockwise with their names, emblems and rift slots, mission spots outside
    the ring, Dr. Foo's machine base in the middle."""
    rng = _rng(d.number, BOARD)
    p, layout = d.palette, d.board
    n = round(BOARD_MM * ppm)
    base = p.panel if d.theme != "light" else mix(p.panel, p.accent, 0.15)
    s = card_surface(rng, (n, n), base, n / 2 if layout.round_cut else 4 * ppm)
    print_pattern(s, rng, d.back_pattern, mix(base, p.ink, 0.12), 0.5, 18 * ppm)
    _motif(s, rng, d.motif, (0, 0, n, n), p.muted, 0.25, 40 * ppm)
    if layout.round_cut:
        stroke_circle(s, (n / 2, n / 2), n / 2 - 5 * ppm, mix(p.metal, BLACK, 0.2), 2.5 * ppm)
    for era in range(COUNT):
        _era_sector(s, rng, d, era, n, ppm)
    _machine_base(s, d, n, ppm)
    _board_title(s, d, n, ppm)
    return _finish(s, rng, d, ppm)


def _era_sector(s: Surface, rng: np.random.Generator, d: Design, era: int, n: int, ppm: float) -> None:
    p, layout = d.palette, d.board
    colour = p.eras[era]
    polygon = layout.polygon(era) * n
    fill_polygons(s, [polygon], colour)
    box = (polygon[:, 0].min(), polygon[:, 1].min(), polygon[:, 0].max(), polygon[:, 1].max())
    window, (ox, oy) = sub_surface(s, box)
    texture = pattern_mask(rng, ("hatch", "dots", "waves", "rings")[era % 4], _size(window), 5 * ppm)
    inside = np.zeros(window.alpha.shape, np.uint8)
    cv2.fillPoly(inside, [np.round(polygon - (ox, oy)).astype(np.int32)], 1)
    paint(window, texture * inside, mix(colour, WHITE, 0.3), (0, 0), 0.25)
    stroke_polygons(s, [polygon], mix(colour, BLACK, 0.5), max(0.6 * ppm, 1))
    angle = layout.mid_angle(era)
    band_mm = 10.0
    band = layout.polygon(era, layout.outer - band_mm / BOARD_MM, layout.outer) * n
    band_colour = mix(colour, BLACK, 0.35)
    fill_polygons(s, [band], band_colour)
    name_r = (layout.outer - band_mm / 2 / BOARD_MM) * n
    span = layout.sector(era)[1] - layout.sector(era)[0]
    _arc_text(s, ERAS[era].upper(), (n / 2, n / 2), name_r, angle, 5.5 * ppm, span * 0.85, ink_on(band_colour), d)
    for cx, cy in layout.rift_slots(era):
        half = 5.5 * ppm
        slot = np.array([(-half, -half), (half, -half), (half, half), (-half, half)])
        slot = _rotate(slot, (0, 0), angle) + np.array([cx * n, cy * n])
        fill_polygons(s, [slot], mix(RED_CUBE, WHITE, 0.55))
        stroke_polygons(s, [slot], mix(RED_CUBE, BLACK, 0.3), max(0.5 * ppm, 1))
    low, high = layout.inner * BOARD_MM + 15, layout.outer * BOARD_MM - band_mm
    radius = min(12.0, (high - low) / 2 - 1) * ppm
    ex, ey = layout.at(era, (low + high) / 2 / BOARD_MM)
    _era_badge(s, d, era, (ex * n - radius, ey * n - radius, ex * n + radius, ey * n + radius))
    mx, my = layout.mission_slot(era)
    spot = mission_spot(layout, era) * n
    fill_polygons(s, [spot], mix(colour, p.panel, 0.75), 0.9)
    stroke_polygons(s, [spot], colour, max(1.2 * ppm, 1))
    mark = 14 * ppm
    faint, spot_fill = mix(colour, p.panel, 0.45), mix(colour, p.panel, 0.75)
    draw_icon(
        s, era_icon(era), (mx * n - mark, my * n - mark, mx * n + mark, my * n + mark), {"fg": faint, "bg": spot_fill}
    )
    word_r = np.hypot(mx - 0.5, my - 0.5) * n + (MISSION_MM[0] / 2 - 6) * ppm
    _arc_text(s, "MISSION", (n / 2, n / 2), word_r, angle, 3.5 * ppm, 12.0, faint, d)


def _arc_text(
    s: Surface,
    text: str,
    centre: tuple[float, float],
    radius: float,
    mid_deg: float,
    height: float,
    max_span_deg: float,
    colour: BGR,
    d: Design,
) -> None:
    """Letters set along a circle, as ring boards print their labels: reading clockwise with their tops outward on
    the upper half, and left to right with their tops inward on the lower half, so none is upside down."""
    font = d.title_font
    widths = [text_box_size(ch, font, height)[0] if ch != " " else height * 0.45 for ch in text]
    spacing = height * 0.12
    total = sum(widths) + spacing * (len(text) - 1)
    limit = np.deg2rad(max_span_deg) * radius
    if total > limit:
        height, widths, spacing, total = (
            height * limit / total,
            [w * limit / total for w in widths],
            spacing * limit / total,
            limit,
        )
    upper = np.sin(np.deg2rad(mid_deg)) < 0
    sign = 1.0 if upper else -1.0
    along = -total / 2
    for ch, width in zip(text, widths, strict=True):
        a = mid_deg + sign * np.rad2deg((along + width / 2) / radius)
        along += width + spacing
        if ch == " ":
            continue
        x = centre[0] + radius * np.cos(np.deg2rad(a))
        y = centre[1] + radius * np.sin(np.deg2rad(a))
        _text(s, ch, (x, y), height, colour, font, a + 90 if upper else a - 90)


def _machine_base(s: Surface, d: Design, n: int, ppm: float) -> None:
    """The ring Dr. Foo's 3-D machine stands on: a toothed brass wheel with one pointer tick per Era."""
    p, layout = d.palette, d.board
    c = (n / 2, n / 2)
    r = layout.inner * n - 6 * ppm
    fill_polygons(s, [_gear_points(c[0], c[1], r, 28, 0.06)], mix(p.metal, BLACK, 0.25))
    fill_circle(s, c, r * 0.86, p.metal)
    stroke_circle(s, c, r * 0.7, mix(p.metal, BLACK, 0.4), max(0.8 * ppm, 1))
    fill_circle(s, c, r * 0.45, mix(p.metal, BLACK, 0.55))
    for era in range(COUNT):
        x0, y0 = layout.at(era, layout.inner - 0.004)
        x1, y1 = layout.at(era, layout.inner - 0.02)
        stroke_polygons(s, [np.array([(x0 * n, y0 * n), (x1 * n, y1 * n)])], p.eras[era], 3 * ppm, False)


def _board_title(s: Surface, d: Design, n: int, ppm: float) -> None:
    """The game's name curved along the rim, in the gap between two mission spots nearest the top edge."""
    step = 360.0 / COUNT
    boundaries = [d.board.start_deg + k * step for k in range(COUNT)]
    top = min(boundaries, key=lambda a: abs((a + 90 + 180) % 360 - 180))
    _arc_text(s, "THE LOOP", (n / 2, n / 2), 0.462 * n, top, 9 * ppm, 26.0, d.palette.ink, d)


# ------------------------------------------------------------------------------------------------------- a set


def render_set(out_dir: str | Path, design: int, px_per_mm: float = 4.0, catalogue: str | None = None) -> PieceSet:
    """Every flat component of The LOOP in one design, written as a piece set (`the-loop-design-N`); `catalogue`
    is a catalogue file of the engine's format (default: the shipped one)."""
    if not px_per_mm >= 1.0:
        raise ValueError(f"px_per_mm is {px_per_mm!r}; expected at least 1 pixel per millimetre")
    d = design_for(design)
    cat = load_catalogue(catalogue)
    pictures: Pictures = {}
    pieces: list[PieceInfo] = []
    _cards(d, cat, px_per_mm, pictures, pieces)
    _tiles_and_tokens(d, cat, px_per_mm, pictures, pieces)
    pictures[BOARD] = board(d, px_per_mm)
    pieces.append(PieceInfo(BOARD, "board", (BOARD_MM, BOARD_MM), None, ()))
    return write_piece_set(out_dir, GAME, d.name, d.name, pieces, pictures)


def _cards(d: Design, cat: Catalogue, ppm: float, pictures: Pictures, pieces: list[PieceInfo]) -> None:
    for artifact in cat.artifacts.values():
        pictures[artifact.code], index = artifact_card(d, artifact, ppm)
        pieces.append(PieceInfo(artifact.code, "card", CARD_MM, BACK_ARTIFACT, index))
    for era, code in enumerate(FAUX):
        pictures[code], index = faux_card(d, era, ppm)
        pieces.append(PieceInfo(code, "card", CARD_MM, BACK_FAUX, index))
    for back in (BACK_ARTIFACT, BACK_FAUX):
        pictures[back], index = card_back(d, back, ppm)
        pieces.append(PieceInfo(back, "card", CARD_MM, None, index))


def _tiles_and_tokens(d: Design, cat: Catalogue, ppm: float, pictures: Pictures, pieces: list[PieceInfo]) -> None:
    for mission in cat.missions.values():
        pictures[mission.code], index = mission_tile(d, mission, ppm)
        pieces.append(PieceInfo(mission.code, "tile", MISSION_MM, BACK_MISSION, index))
    pictures[BACK_MISSION], index = mission_back(d, ppm)
    pieces.append(PieceInfo(BACK_MISSION, "tile", MISSION_MM, None, index))
    pictures[VORTEX] = vortex_tile(d, ppm)
    pieces.append(PieceInfo(VORTEX, "tile", (VORTEX_MM, VORTEX_MM), None, ()))
    for code in ALL_CLONES:
        pictures[code], index = clone_token(d, code, ppm)
        pieces.append(PieceInfo(code, "token", (CLONE_MM, CLONE_MM), None, index))
