"""Bag-O-Loot's physical table (seeds/003): where every card lies, without any rules.

Bag-O-Loot has five copies of every coin card (and five looters), so a code does not say which physical card is
meant. Cards here are *card ids*, the code and a copy number (`7#2`); `keep_identities` carries the ids from one
table to the next the way the cards physically move (a card that stays in its zone keeps its id; the others take
the ids freed elsewhere, in table order), and the layout reports each card by its code with the id as
`PlacedCard.uid`, so the video follows each copy.

What lies where (table millimetres; seats placed as in loop_table: seat 0 is the camera player's, at the bottom,
the others clockwise; each seat's things are laid out in its own frame and turned to it; every number is a choice
of this module, the rule sheet only says "in front of you"):

* Draw deck: a squared face-down stack at DECK_POS in the middle, top card first in `deck`.
* Junk pile: a loose face-up pile at JUNK_POS beside it, the latest discard on top.
* Stash, in front of each seat (the rule sheet's "stash"): each open collection is an overlapping row of its
  cards, looters included ("keep collections fanned out", as the sheet asks), each card COLLECTION_STEP_MM right
  of the one before so the corner indices show. A collection keeps its slot while it stays open (a stable slot,
  kept by the caller, like Loot the Loop's note slots): three slots in the row nearer the centre, then slots in
  the row nearer the player, which lies over the lower half of the first row.
* Bags-O-Loot: small squared piles in the row nearer the player, from its right end: the four cards face up under
  the fifth, which is face down for a made Bag-O-Loot (`down`) and face up for one whose card was shown or that was
  completed in the open.
* Hands are held at the seat's edge (PlacedCard.held): not drawn, but where a drawn card is carried to and a
  played card comes from. Cards removed for fewer players stay in the box (they are in no layout).

Card size comes from the piece set (the published cards look standard, 63 x 88 mm: a guess).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vision.synth.loop_table import SeatPlace, held_cards, seat_card, table_extent
from vision.synth.ltl_table import jitter
from vision.synth.video import PlacedCard, buried_in_stack

ID_SEP = "#"
DECK_POS = (-55.0, 0.0)
JUNK_POS = (55.0, 0.0)
STACK_STEP_MM = 0.35
ROW_V_MM = (-235.0, -282.0)  # the stash's two rows: nearer the centre, nearer the player
SLOTS_PER_ROW = 3
SLOT_PITCH_MM = 122.0
COLLECTION_STEP_MM = 16.0
BAG_PITCH_MM = 70.0
BAG_STEP_MM = 0.8  # a bag's cards are squared, each a little off the one under it
CAMERA_HEIGHT_MM = (700.0, 1200.0)
ZONE_DECK = "deck"
ZONE_JUNK = "junk"


def card_id(code: str, copy: int) -> str:
    return f"{code}{ID_SEP}{copy}"


def code_of(card: str) -> str:
    """A card id's code (`7#2` -> `7`); a plain code is its own."""
    return card.split(ID_SEP, 1)[0]


@dataclass(frozen=True)
class Bag:
    cards: tuple[str, ...]  # the five card ids, bottom first: the last is the top card
    down: bool  # the top card lies face down


@dataclass(frozen=True)
class Stash:
    collections: tuple[tuple[str, ...] | None, ...] = ()  # slot -> the collection's card ids, or an empty slot
    bags: tuple[Bag, ...] = ()


@dataclass(frozen=True)
class BagTable:
    deck: tuple[str, ...]  # top first
    junk: tuple[str, ...] = ()  # first discarded first
    stashes: tuple[Stash, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()


def keep_identities(zones: Mapping[str, Sequence[str]], before: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Card ids for a table given as zone -> codes, continuing `before` (zone -> ids; empty for the first table).
    Each card of a zone keeps an id its zone held before with the same code; the rest take the ids that left
    other zones, by code, in the order of `before`'s zones (so a collection stolen whole keeps its cards in
    order, ahead of the card from a hand); new copies are numbered on from the highest copy seen."""
    staying: dict[tuple[str, str], list[str]] = {}
    for zone, ids in before.items():
        for card in ids:
            staying.setdefault((zone, code_of(card)), []).append(card)
    result: dict[str, list[str]] = {}
    needs: list[tuple[str, int, str]] = []
    for zone, codes in zones.items():
        result[zone] = [""] * len(codes)
        for i, code in enumerate(codes):
            pool = staying.get((zone, code))
            if pool:
                result[zone][i] = pool.pop(0)
            else:
                needs.append((zone, i, code))
    freed: dict[str, list[str]] = {}
    for (_, code), ids in staying.items():
        freed.setdefault(code, []).extend(ids)
    copies: dict[str, int] = {}
    for ids in before.values():
        for card in ids:
            code, _, copy = card.partition(ID_SEP)
            copies[code] = max(copies.get(code, -1), int(copy or 0))
    for zone, i, code in needs:
        if freed.get(code):
            result[zone][i] = freed[code].pop(0)
        else:
            copies[code] = copies.get(code, -1) + 1
            result[zone][i] = card_id(code, copies[code])
    return result


def layout(table: BagTable, seed: int, card_mm: tuple[float, float]) -> list[PlacedCard]:
    """Every card's place, in paint order (bottom to top): deck, junk, each seat's stash, then hands (held).
    `card_mm` is taken for the same call as the other tables; the stash's pitches already fit cards up to 63 mm."""
    players = len(table.stashes)
    if len(table.hands) != players:
        raise ValueError(f"BagTable: {len(table.hands)} hands for {players} stashes; expected one of each per seat")
    placed = _deck_stack(table.deck, seed)
    placed += _junk_pile(table.junk, seed)
    for seat, stash in enumerate(table.stashes):
        placed += _stash_layout(stash, seat, players, seed)
    for seat, hand in enumerate(table.hands):
        placed += held_cards([code_of(c) for c in hand], seat, players, seed, hand)
    return placed


def extent_mm(players: int, card_mm: tuple[float, float], margin_mm: float = 45.0) -> tuple[float, float, float, float]:
    """The table area any Bag-O-Loot layout of this many players can occupy."""
    w, h = card_mm
    half = (SLOTS_PER_ROW - 1) / 2 * SLOT_PITCH_MM + (w + 3 * COLLECTION_STEP_MM) / 2
    seat_box = (-half, ROW_V_MM[1] - h / 2, half, ROW_V_MM[0] + h / 2)
    centre = (DECK_POS[0] - w / 2 - 15, -h / 2 - 15, JUNK_POS[0] + w / 2 + 15, h / 2 + 15)
    return table_extent(seat_box, centre, players, margin_mm)


def _deck_stack(deck: tuple[str, ...], seed: int) -> list[PlacedCard]:
    placed = []
    for i in reversed(range(len(deck))):
        dx, dy, rot = jitter(seed, deck[i], ZONE_DECK, (0.5, 0.8))
        x, y = DECK_POS[0] + dx, DECK_POS[1] + dy + i * STACK_STEP_MM
        buried = buried_in_stack(i, len(deck) - 1, 1)
        placed.append(PlacedCard(code_of(deck[i]), False, ZONE_DECK, i, x, y, rot, buried=buried, uid=deck[i]))
    return placed


def _junk_pile(junk: tuple[str, ...], seed: int) -> list[PlacedCard]:
    placed = []
    for i, card in enumerate(junk):
        dx, dy, rot = jitter(seed, card, ZONE_JUNK, (4.0, 9.0))
        placed.append(PlacedCard(code_of(card), True, ZONE_JUNK, i, JUNK_POS[0] + dx, JUNK_POS[1] + dy, rot, uid=card))
    return placed


def _slot_uv(slot: int) -> tuple[float, float]:
    """A collection slot's first card: three slots in the row nearer the centre, then the row nearer the player."""
    row, col = divmod(slot, SLOTS_PER_ROW)
    u = (col - (SLOTS_PER_ROW - 1) / 2) * SLOT_PITCH_MM - 1.5 * COLLECTION_STEP_MM
    return u, ROW_V_MM[min(row, len(ROW_V_MM) - 1)] - max(row - 1, 0) * (ROW_V_MM[0] - ROW_V_MM[1])


def _bag_uv(index: int) -> tuple[float, float]:
    """Bags lie in the row nearer the player, from its right end leftwards."""
    right = (SLOTS_PER_ROW - 1) / 2 * SLOT_PITCH_MM + 1.5 * COLLECTION_STEP_MM
    return right - index * BAG_PITCH_MM, ROW_V_MM[1]


def _stash_layout(stash: Stash, seat: int, players: int, seed: int) -> list[PlacedCard]:
    name = f"seat {seat + 1}"
    placed = []
    for slot, cards in enumerate(stash.collections):
        if cards is None:
            continue
        u, v = _slot_uv(slot)
        for i, card in enumerate(cards):
            place = SeatPlace(seat, players, u + i * COLLECTION_STEP_MM, v)
            placed.append(seat_card(code_of(card), True, f"{name} collection {slot + 1}", i, place, seed, uid=card))
    for b, bag in enumerate(stash.bags):
        u, v = _bag_uv(b)
        top = len(bag.cards) - 1
        for i, card in enumerate(bag.cards):  # bottom first; index 0 is the top card
            face_up = not (bag.down and i == top)
            place = SeatPlace(seat, players, u + i * BAG_STEP_MM, v + i * BAG_STEP_MM * 0.6)
            placed.append(seat_card(code_of(card), face_up, f"{name} bag {b + 1}", top - i, place, seed, uid=card))
    return placed
