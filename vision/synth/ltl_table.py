"""Loot the Loop's physical table: where every card lies for a given table state (the tracker relies on this).
`layout` turns a rules-free `TableState` into the `PlacedCard` list the video engine films.

Layout convention, in table millimetres (x right, y away from the player, camera looking at the origin; card
rotation 0 = printed top pointing away from the player):

* Deck: one cascade at DECK_X. The top card of the deck lies nearest the player at y = DECK_TOP_Y and is painted
  last; each of the next CASCADE_SHOWN - 1 cards lies CASCADE_STEP_MM further away, under the one above it, so
  the upper strip of each shows its top-left corner index (the top two cards decide every move, so they must
  always be readable). The rest of the deck is a squared stack behind the cascade, each card STACK_STEP_MM
  further, so the stack looks like a thick pile rather than one card. Face-down cards show their BACK.
* Notes: three slots in a row right of the deck at y = NOTES_Y, slot i at NOTE_X[i]; a note keeps the slot it
  was marked into until it is returned (slots are table places, not list positions).
* Score pile: a loose face-up pile at SCORE_POS, each nabbed card on top, a few mm and degrees askew.
* Setup: the three dealt piles lie side by side (PILE_X) in the same cascade form, before they are stacked.

Every card gets a small fixed tilt and nudge (from the video seed, the card and its zone) so the layout is not
machine-perfect, yet a card that stays in its place does not jitter from one still to the next. Deck and pile cards
below the cascade are marked `buried` except every few (video.buried_in_stack), so a frame paints the stack's
thickness without painting all of it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from vision.synth.camera import CARD_H_MM, CARD_W_MM
from vision.synth.video import PlacedCard, buried_in_stack

__all__ = ["PlacedCard", "TableState", "extent_mm", "jitter", "layout"]

DECK_X = -110.0
DECK_TOP_Y = -75.0
CASCADE_SHOWN = 6
CASCADE_STEP_MM = 24.0  # a little more than the corner index (25% of 88 mm = 22 mm)
STACK_STEP_MM = 0.35
NOTE_X = (-15.0, 60.0, 135.0)
NOTES_Y = 75.0
SCORE_POS = (135.0, -70.0)
PILE_X = (-110.0, -20.0, 70.0)
PILE_SHOWN = 2  # the two face-up cards of each dealt pile
ZONE_DECK = "deck"
ZONE_NOTES = "notes"
ZONE_SCORE = "score"


@dataclass(frozen=True)
class TableState:
    """What lies on the table, without any rules: lists are top first; `deck_up[i]` is deck[i]'s face.
    `notes` maps slot (0-2) to card or None. `piles` is non-empty only before the deck is stacked."""

    deck: tuple[str, ...]
    deck_up: tuple[bool, ...]
    notes: tuple[str | None, ...] = (None, None, None)
    score: tuple[str, ...] = ()  # first nabbed first
    piles: tuple[tuple[str, ...], ...] = ()
    piles_up: tuple[tuple[bool, ...], ...] = ()

    def top_card(self) -> tuple[str, bool] | None:
        return (self.deck[0], self.deck_up[0]) if self.deck else None


def layout(state: TableState, seed: int) -> list[PlacedCard]:
    """Every card's place, in paint order (bottom to top): score pile, notes, then deck or piles deepest first."""
    placed = [_score_card(card, i, seed) for i, card in enumerate(state.score)]
    placed += [_note_card(card, slot, seed) for slot, card in enumerate(state.notes) if card is not None]
    placed += _cascade(state.deck, state.deck_up, ZONE_DECK, DECK_X, CASCADE_SHOWN, seed)
    for p, (pile, ups) in enumerate(zip(state.piles, state.piles_up, strict=True)):
        placed += _cascade(pile, ups, f"pile {p + 1}", PILE_X[p], PILE_SHOWN, seed)
    return placed


def extent_mm(margin_mm: float = 15.0) -> tuple[float, float, float, float]:
    """x0, y0, x1, y1 of the table area any state can occupy (the camera must see all of it)."""
    half_w, half_h = CARD_W_MM / 2 + margin_mm, CARD_H_MM / 2 + margin_mm
    deck_far = DECK_TOP_Y + (CASCADE_SHOWN - 1) * CASCADE_STEP_MM + 53 * STACK_STEP_MM
    xs = (DECK_X, *NOTE_X, SCORE_POS[0], *PILE_X)
    ys = (DECK_TOP_Y, deck_far, NOTES_Y, SCORE_POS[1])
    return min(xs) - half_w, min(ys) - half_h, max(xs) + half_w, max(ys) + half_h


def jitter(seed: int, code: str, zone: str, spread: tuple[float, float]) -> tuple[float, float, float]:
    """A stable nudge (dx, dy mm, rotation deg; normal with the given spreads): crc32 of the card and zone, since
    Python's hash() of a str changes between runs. Shared by every table module."""
    rng = np.random.default_rng([seed, zlib.crc32(f"{code}/{zone}".encode())])
    dx, dy = rng.normal(0.0, spread[0], 2)
    return float(dx), float(dy), float(rng.normal(0.0, spread[1]))


def _cascade(
    cards: tuple[str, ...], ups: tuple[bool, ...], zone: str, x: float, shown: int, seed: int
) -> list[PlacedCard]:
    placed = []
    for i in reversed(range(len(cards))):
        offset = min(i, shown - 1) * CASCADE_STEP_MM + max(i - shown + 1, 0) * STACK_STEP_MM
        dx, dy, rot = jitter(seed, cards[i], zone, (0.6, 0.8))
        buried = buried_in_stack(i, len(cards) - 1, CASCADE_SHOWN)  # the sampling the video always used
        placed.append(PlacedCard(cards[i], ups[i], zone, i, x + dx, DECK_TOP_Y + offset + dy, rot, buried=buried))
    return placed


def _note_card(card: str, slot: int, seed: int) -> PlacedCard:
    dx, dy, rot = jitter(seed, card, ZONE_NOTES, (2.0, 3.0))
    return PlacedCard(card, True, ZONE_NOTES, slot, NOTE_X[slot] + dx, NOTES_Y + dy, rot)


def _score_card(card: str, order: int, seed: int) -> PlacedCard:
    dx, dy, rot = jitter(seed, card, ZONE_SCORE, (4.0, 7.0))
    return PlacedCard(card, True, ZONE_SCORE, order, SCORE_POS[0] + dx, SCORE_POS[1] + dy, rot)
