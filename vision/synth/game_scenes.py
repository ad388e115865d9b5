"""Scenes of each game's table: the right components, in the right numbers, where players put them.

Standard-deck scenes (Loot the Loop) come from `scene.random_spec` as they always have. The other games add to it
what their tables hold: copies (Bag-O-Loot prints five of each coin), d20s beside Loot Roll's cards, and The LOOP's
ring board with rift and energy cubes, clones, vortexes and pawns dropped onto its Eras. Rules stay in `games/`;
this module only knows what the boxes contain and how a table tends to look mid-game.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import cv2
import numpy as np

from vision.synth.camera import apply_homography, card_to_table
from vision.synth.pieces import PieceSet
from vision.synth.scene import CardSpec, SceneSpec, random_spec
from vision.synth.solids import CUBE_COLOURS, DIE_SIDES, SolidSpec, agent_codes, random_solid

COPIES = {"bag-o-loot": 5}  # coin cards: five of each number, five looters (seeds/README.md)
CHOICE_COPIES = 4  # one FIGHT and one FLIGHT card per player, up to four players
SOLID_GAMES = {"loot-roll": ("d20", "d6"), "the-loop": ("cube", "pawn")}
_DESIGN = re.compile(r"-design-(\d+)$")


def solid_classes(game: str) -> tuple[str, ...]:
    """The class names of the solids a game's scenes contain, in a fixed order (after the flat pieces')."""
    names: list[str] = []
    for kind in SOLID_GAMES.get(game, ()):
        if kind in DIE_SIDES:
            names += [f"{kind}-{v}" for v in range(1, DIE_SIDES[kind] + 1)]
        elif kind == "cube":
            names += [f"cube-{c}" for c in CUBE_COLOURS]
        else:
            names += [f"pawn-{a}" for a in agent_codes()]
    return tuple(names)


def physical_codes(pieces: PieceSet) -> list[str]:
    """Every physical piece in the box (copies repeated), board excluded: scenes draw from these."""
    copies = COPIES.get(pieces.game, 1)
    codes: list[str] = []
    for code in pieces.codes:
        kind = pieces.pieces[code].kind
        if kind == "board":
            continue
        codes += [code] * (CHOICE_COPIES if code in ("FIGHT", "FLIGHT") else copies)
    return codes


def random_game_spec(
    rng: np.random.Generator,
    pieces: PieceSet,
    n_sets: int,
    n_backgrounds: int,
    width: int,
    height: int,
    set_index: int,
) -> SceneSpec:
    """A scene of one game's table. Flat pieces come in the same groups as cards do (piles, fans, rows, scatters),
    spaced for their size; each game then adds its board and solids."""
    codes = physical_codes(pieces)
    cards = [c for c in codes if pieces.pieces[c].kind == "card"] or codes
    size = pieces.pieces[cards[0]].size_mm
    spec = random_spec(rng, n_sets, n_backgrounds, width, height, codes=cards, deck_index=set_index, piece_size_mm=size)
    if pieces.game == "loot-roll":
        return replace(spec, solids=_dice_near_cards(rng, spec))
    if pieces.game == "the-loop":
        return _the_loop_table(rng, spec, pieces, codes)
    return spec


def _dice_near_cards(rng: np.random.Generator, spec: SceneSpec) -> tuple[SolidSpec, ...]:
    """One d20 per player lies by the cards after a loot roll; now and then a d6 someone left on the table."""
    anchors = [(c.x_mm, c.y_mm) for c in spec.cards] or [(0.0, 0.0)]
    dice = []
    for i in range(int(rng.integers(0, 5))):
        x, y = anchors[int(rng.integers(0, len(anchors)))]
        kind = "d6" if rng.random() < 0.2 else "d20"
        offset = rng.normal(0, 60, 2) + (0 if i else rng.normal(0, 20, 2))
        dice.append(random_solid(rng, kind, float(x + offset[0]), float(y + offset[1])))
    return tuple(dice)


def _the_loop_table(rng: np.random.Generator, spec: SceneSpec, pieces: PieceSet, codes: list[str]) -> SceneSpec:
    """The ring board lies under everything near where the camera looks; tokens, tiles, cubes and pawns sit on its
    Eras, cards lie around it (the random card groups), as in a game in progress."""
    board_code = next((c for c in pieces.pieces if pieces.pieces[c].kind == "board"), None)
    if board_code is None:
        return spec
    w_mm, h_mm = pieces.pieces[board_code].size_mm
    bx, by = (float(v) for v in rng.normal(0, 60, 2))
    board = CardSpec(board_code, True, bx, by, float(rng.uniform(0, 360)), bool(rng.random() < 0.5))
    to_table = card_to_table(board.x_mm, board.y_mm, board.rotation_deg, 1, 1, (w_mm, h_mm))
    eras = era_polygons(pieces, to_table, board, (w_mm, h_mm))
    small = [c for c in codes if pieces.pieces[c].kind in ("token", "tile")]
    on_board = []
    for code in rng.permutation(np.array(small, dtype=object))[: int(rng.integers(0, 10))]:
        x, y = _point_in(rng, eras[int(rng.integers(0, len(eras)))])
        on_board.append(CardSpec(str(code), bool(rng.random() < 0.85), x, y, float(rng.uniform(0, 360)), False))
    far = [c for c in spec.cards if math.hypot(c.x_mm - bx, c.y_mm - by) > 0.6 * max(w_mm, h_mm)]
    solids = []
    for polygon in eras:
        for _ in range(int(rng.choice([0, 0, 1, 2, 3, 4]))):
            x, y = _point_in(rng, polygon)
            solids.append(random_solid(rng, "cube", x, y, code=str(rng.choice(["red", "green", "red", "blue"]))))
    for agent in rng.permutation(np.array(agent_codes(), dtype=object))[: int(rng.integers(0, 5))]:
        x, y = _point_in(rng, eras[int(rng.integers(0, len(eras)))])
        solids.append(random_solid(rng, "pawn", x, y, code=str(agent)))
    return replace(
        spec, cards=(board, *far, *on_board), solids=tuple(solids), layout=f"board+{spec.layout}" if far else "board"
    )


def design_number(pieces: PieceSet) -> int | None:
    """The art module's design number of a The LOOP piece set it drew (its name ends -design-N), else None."""
    match = _DESIGN.search(pieces.name)
    return int(match.group(1)) if pieces.game == "the-loop" and match else None


def era_polygons(
    pieces: PieceSet, to_table: np.ndarray, board: CardSpec, size_mm: tuple[float, float]
) -> list[np.ndarray]:
    """The Era sectors in table millimetres, from the art module's own board layout when the set is one of its
    designs; otherwise seven sectors of a ring centred on the board, which is where any ring board has them."""
    number = design_number(pieces)
    if number is not None:
        from vision.synth.art.the_loop import era_regions

        regions = era_regions(number)
        return [apply_homography(to_table, np.array(poly, float)) for poly in regions.values()]
    r0, r1 = 0.25 * min(size_mm), 0.45 * min(size_mm)
    sectors = []
    for k in range(7):
        angles = np.linspace(2 * math.pi * k / 7, 2 * math.pi * (k + 1) / 7, 8)
        ring = [(r * math.cos(a), r * math.sin(a)) for r in (r1, r0) for a in (angles if r == r1 else angles[::-1])]
        sectors.append(np.array(ring) + np.array([board.x_mm, board.y_mm]))
    return sectors


def _point_in(rng: np.random.Generator, polygon: np.ndarray) -> tuple[float, float]:
    """A random point inside a (possibly concave) polygon, by rejection from its bounding box."""
    low, high = polygon.min(axis=0), polygon.max(axis=0)
    contour = polygon.astype(np.float32).reshape(-1, 1, 2)
    for _ in range(100):
        x, y = rng.uniform(low, high)
        if cv2.pointPolygonTest(contour, (float(x), float(y)), True) > 4.0:
            return float(x), float(y)
    centre = polygon.mean(axis=0)
    return float(centre[0]), float(centre[1])
