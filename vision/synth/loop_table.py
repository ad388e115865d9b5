"""LOOP's physical table (Takashi Saito's shedding game, seeds/002): where every card lies, without any rules.

The camera's player sits at seat 0, at the bottom of the picture (the camera looks at the table's centre, the
origin, from their side); seats are numbered clockwise as seen from above, so with four players seat 1 is on the
left, seat 2 across and seat 3 on the right (three players: upper left and upper right; two: across). Everything
in front of a seat is laid out in that seat's own frame (u to the player's right, v towards the centre, the seat
at negative v) and turned to the seat, so every player's cards face them.

What lies where (table millimetres; every number a choice of this module, since the rule sheet shows no layout):

* Rank card: at the seat's left, RANK_UV; its "Normal Round" side up in a normal round (RANK1 at seat 1, RANK2 at
  seat 2 ...: the sheet gives one to each player without saying which), and the Rank card of the seat's last
  rank with its "Loop Round" side up (face down in piece-set terms: the back picture RANKn_LOOP) afterwards.
* Set-aside cards: face down *under* the Rank card (rule 4), each peeking out SET_ASIDE_PEEK further towards the
  centre, so their backs show above it.
* Twist: a revealed 8 stays in the set-aside place face up, turned sideways (90 degrees) just beyond the Rank card
  towards the centre; an odd number of sideways 8s on the table means the order is twisted (a choice: the sheet
  only says the player reveals it).
* Played cards: the seat's cards of this round as overlapping rows in front of it, in play order, each card
  ROW_STEP_MM right of the one before so its top-left index shows; a row holds ROW_WRAP cards, the next row lies
  ROW_GAP_MM nearer the player, over the lower half of the one before (whose indices stay in view).
* Trick: the play on the table (the one to beat) lies in the shared central trick area as a small overlapping row,
  turned to the seat that played it and pushed TRICK_TOWARD_SEAT_MM towards it. When a play beats it, the earlier
  play is pushed aside to its owner's rows (physically where the sheet says played cards go: in front of their
  player), so the centre only ever shows the play to beat; when a trick ends, the last play goes the same way.
* Unused cards: the deal's leftovers, a squared face-down stack at ASIDE_POS in the centre (rule 3).
* Hands are held, not on the table: held cards (PlacedCard.held) rest at the seat's edge, HAND_V_MM, where the
  video carries a played card in from and a picked-up card back to.

Card sizes come from the piece set (LOOP cards are standard 63 x 88 mm in the published game, a guess from photos;
designs vary them), so spacing follows the cards in use. Every card gets a small fixed nudge and tilt (from the
video seed, the card and its zone; ltl_table.jitter) so the table is not machine-perfect, yet a card that stays
put does not move between stills.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from vision.synth.ltl_table import jitter
from vision.synth.video import PlacedCard, buried_in_stack

ROW_STEP_MM = 19.0  # a little more than a corner index (about 0.22 of a 63 mm card)
ROW_WRAP = 6
ROW_GAP_MM = 34.0
ROW_V_MM = -190.0
ROW_U_MM = -60.0  # the first played card's centre
RANK_UV = (-170.0, -190.0)
SET_ASIDE_PEEK = (7.0, 13.0)  # each set-aside card further right and towards the centre than the one above it
TWIST_GAP_MM = 6.0
HAND_V_MM = -320.0
SIDE_PUSH_MM = 150.0  # seats at the sides sit further out: the picture is wide, the table area fills it
HAND_FAN_MM = 6.0
ASIDE_POS = (-85.0, 70.0)
STACK_STEP_MM = 0.35
TRICK_POS = (35.0, -20.0)
TRICK_TOWARD_SEAT_MM = 30.0
CAMERA_HEIGHT_MM = (650.0, 1100.0)  # the whole table from the camera player's side
ZONE_ASIDE = "aside"
ZONE_TRICK = "trick"


# ----------------------------------------------------------------------------------------------- seats (shared)


def seat_angle(seat: int, players: int) -> float:
    """Where a seat sits, as the heading (degrees) of a hand reaching in from it: 0 is the camera's side, and the
    next seat clockwise (seen from above) is to the camera player's left, -90 with four players."""
    if not 0 <= seat < players:
        raise ValueError(f"seat {seat} is not at a table of {players} players (seats 0-{players - 1})")
    angle = -360.0 * seat / players
    return angle + 360.0 if angle <= -180.0 else angle


def to_table(seat: int, players: int, u: float, v: float, rotation_deg: float = 0.0) -> tuple[float, float, float]:
    """A point (and a card's rotation) in a seat's own frame, in table millimetres: the seat's frame is the camera
    player's, turned about the centre to the seat and pushed out sideways by SIDE_PUSH_MM times how far the seat
    sits to the side (a 16:9 camera sees a wide table, and side seats have the room)."""
    a = seat_angle(seat, players)
    c, s = math.cos(math.radians(a)), math.sin(math.radians(a))
    push = SIDE_PUSH_MM * abs(s)
    return c * u - s * (v - push), s * u + c * (v - push), rotation_deg + a


def table_extent(
    seat_box: tuple[float, float, float, float],
    centre_box: tuple[float, float, float, float],
    players: int,
    margin_mm: float,
) -> tuple[float, float, float, float]:
    """x0, y0, x1, y1 of a table: each seat's area (u0, v0, u1, v1 in its own frame) turned to every seat, the
    centre area, and a margin (room for cards carried on an arc)."""
    u0, v0, u1, v1 = seat_box
    points = [to_table(s, players, u, v)[:2] for s in range(players) for u in (u0, u1) for v in (v0, v1)]
    cx0, cy0, cx1, cy1 = centre_box
    points += [(cx0, cy0), (cx1, cy1)]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs) - margin_mm, min(ys) - margin_mm, max(xs) + margin_mm, max(ys) + margin_mm


@dataclass(frozen=True)
class SeatPlace:
    """A place in one seat's frame: which seat (of how many), where (u, v mm) and how far turned from upright."""

    seat: int
    players: int
    u: float
    v: float
    turn_deg: float = 0.0


def seat_card(
    code: str, face_up: bool, zone: str, index: int, place: SeatPlace, seed: int, held: bool = False, uid: str = ""
) -> PlacedCard:
    """A card at a place in a seat's frame, upright for that seat, with its fixed nudge."""
    dx, dy, rot = jitter(seed, uid or code, zone, (1.2, 1.8))
    x, y, r = to_table(place.seat, place.players, place.u + dx, place.v + dy, rot + place.turn_deg)
    return PlacedCard(code, face_up, zone, index, x, y, r, held=held, uid=uid)


def held_cards(codes: Sequence[str], seat: int, players: int, seed: int, uids: Sequence[str] = ()) -> list[PlacedCard]:
    """A hand: held at the seat's edge (not on the table), fanned a little so carried cards do not start as one."""
    zone = f"seat {seat + 1} hand"
    mid = (len(codes) - 1) / 2
    return [
        seat_card(
            code, True, zone, i, SeatPlace(seat, players, (i - mid) * HAND_FAN_MM, HAND_V_MM), seed, True,
            uids[i] if uids else "",
        )
        for i, code in enumerate(codes)
    ]  # fmt: skip


# ----------------------------------------------------------------------------------------------- LOOP


@dataclass(frozen=True)
class SeatCards:
    """What lies at one seat. Lists are in the order the cards were put down."""

    rank: str  # the Rank card's code (RANK1..RANK4)
    rank_loop_side: bool  # the "Loop Round" side up (the card's back picture)
    set_aside: tuple[str, ...] = ()  # face down under the Rank card
    revealed: tuple[str, ...] = ()  # set-aside 8s turned face up for a Twist
    played: tuple[str, ...] = ()  # this round's plays lying in front of the seat
    hand: tuple[str, ...] = ()  # held


@dataclass(frozen=True)
class LoopTable:
    seats: tuple[SeatCards, ...]
    aside: tuple[str, ...] = ()  # the deal's unused cards, face down in the centre, top first
    trick: tuple[str, ...] = ()  # the play to beat, in the central trick area
    trick_seat: int | None = None  # who played it

    @property
    def twisted(self) -> bool:
        """What the table shows: an odd number of sideways 8s."""
        return sum(len(s.revealed) for s in self.seats) % 2 == 1


def layout(table: LoopTable, seed: int, card_mm: tuple[float, float]) -> list[PlacedCard]:
    """Every card's place, in paint order (bottom to top): the unused stack, each seat's set-aside cards, Rank
    card, sideways 8s and rows, the trick, then the hands (held, not drawn)."""
    players = len(table.seats)
    if table.trick and table.trick_seat is None:
        raise ValueError("LoopTable.trick_seat: a play in the trick area needs the seat that played it")
    placed = _aside_stack(table.aside, seed)
    for seat, cards in enumerate(table.seats):
        placed += _seat_layout(cards, seat, players, seed, card_mm)
    if table.trick:
        placed += _trick_row(table.trick, table.trick_seat or 0, players, seed)
    for seat, cards in enumerate(table.seats):
        placed += held_cards(cards.hand, seat, players, seed)
    return placed


def extent_mm(players: int, card_mm: tuple[float, float], margin_mm: float = 45.0) -> tuple[float, float, float, float]:
    """The table area any LOOP layout of this many players can occupy (two rows of plays at most: 9 cards)."""
    w, h = card_mm
    u0 = RANK_UV[0] - h / 2 - 2 * SET_ASIDE_PEEK[0]
    u1 = ROW_U_MM + (ROW_WRAP - 1) * ROW_STEP_MM + w / 2
    v0 = ROW_V_MM - ROW_GAP_MM - h / 2
    v1 = RANK_UV[1] + h / 2 + TWIST_GAP_MM + h
    cx, cy = TRICK_POS
    reach = TRICK_TOWARD_SEAT_MM + 2 * ROW_STEP_MM + h / 2
    centre = (min(ASIDE_POS[0] - w / 2, cx - reach), min(ASIDE_POS[1] - h / 2, cy - reach))
    centre_box = (*centre, max(ASIDE_POS[0] + w / 2, cx + reach), max(ASIDE_POS[1] + h / 2, cy + reach))
    return table_extent((u0, v0, u1, v1), centre_box, players, margin_mm)


def _aside_stack(cards: tuple[str, ...], seed: int) -> list[PlacedCard]:
    placed = []
    for i in reversed(range(len(cards))):
        dx, dy, rot = jitter(seed, cards[i], ZONE_ASIDE, (0.5, 0.8))
        x, y = ASIDE_POS[0] + dx, ASIDE_POS[1] + dy + i * STACK_STEP_MM
        buried = buried_in_stack(i, len(cards) - 1, 1)
        placed.append(PlacedCard(cards[i], False, ZONE_ASIDE, i, x, y, rot, buried=buried))
    return placed


def _seat_layout(
    cards: SeatCards, seat: int, players: int, seed: int, card_mm: tuple[float, float]
) -> list[PlacedCard]:
    w, h = card_mm
    name = f"seat {seat + 1}"
    ru, rv = RANK_UV
    placed = []
    for i in reversed(range(len(cards.set_aside))):  # deepest first; the first set aside peeks out least
        place = SeatPlace(seat, players, ru + (i + 1) * SET_ASIDE_PEEK[0], rv + (i + 1) * SET_ASIDE_PEEK[1])
        placed.append(seat_card(cards.set_aside[i], False, f"{name} set aside", i, place, seed))
    rank_place = SeatPlace(seat, players, ru, rv)
    placed.append(seat_card(cards.rank, not cards.rank_loop_side, f"{name} rank", 0, rank_place, seed))
    for i, code in enumerate(cards.revealed):
        v = rv + h / 2 + TWIST_GAP_MM + w / 2 + i * TWIST_GAP_MM
        place = SeatPlace(seat, players, ru + i * 2 * TWIST_GAP_MM, v, 90.0)
        placed.append(seat_card(code, True, f"{name} twist", i, place, seed))
    for i, code in enumerate(cards.played):
        row, col = divmod(i, ROW_WRAP)
        place = SeatPlace(seat, players, ROW_U_MM + col * ROW_STEP_MM, ROW_V_MM - row * ROW_GAP_MM)
        placed.append(seat_card(code, True, f"{name} played", i, place, seed))
    return placed


def _trick_row(cards: tuple[str, ...], seat: int, players: int, seed: int) -> list[PlacedCard]:
    """The play to beat, centred on the trick area, pushed towards its player and turned to them."""
    toward = to_table(seat, players, 0.0, -TRICK_TOWARD_SEAT_MM)
    placed = []
    mid = (len(cards) - 1) / 2
    for i, code in enumerate(cards):
        du, dv, rot = to_table(seat, players, (i - mid) * ROW_STEP_MM, 0.0)
        dx, dy, nudge = jitter(seed, code, ZONE_TRICK, (1.5, 3.0))
        x, y = TRICK_POS[0] + toward[0] + du + dx, TRICK_POS[1] + toward[1] + dy + dv
        placed.append(PlacedCard(code, True, ZONE_TRICK, i, x, y, rot + nudge))
    return placed
