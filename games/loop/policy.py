"""A greedy LOOP player that sees only its own view.

Why these choices: a shedding game is won by not wasting strength early. So the policy leads with a long
sequence (three or more cards leave the hand at once) or else its weakest single, follows with the weakest play
that beats the table, keeps its 8s (they stop any trick) out of the set-aside unless it has nothing weaker to
drop, and twists only when that is the one way to beat the table. For seats it takes the seat whose Rank card
shows the worst previous finish: beating that rank is where the loop-round bonus comes from.

Everything is computed from `state.view(player)` with the engine's pure helpers (`playable`, `open_seats`), so
the policy cannot see another player's hidden cards.
"""

from __future__ import annotations

import random
from typing import Any

from games.core import Action, GameState
from games.hints import DEFAULT_BUDGET, Budget, Hint, redeal, reseed, rollout_hint, seat_action
from games.loop.engine import (
    EIGHTS,
    STOPPER,
    Loop,
    Pass,
    Play,
    Reveal,
    SetAside,
    TakeSeat,
    Twist,
    number_of,
    open_seats,
    playable,
    shape_of,
    sort_cards,
    strength,
)

LONG_SEQUENCE = 3


def greedy_policy(state: GameState, player: int, rng: random.Random) -> Action | None:
    view = state.view(player)
    if view["current_player"] != player:
        return None  # LOOP has no out-of-turn actions
    if view["phase"] == "seat":
        return _choose_seat(view)
    own = next(s for s in view["seats"] if s["player"] == player)
    if view["phase"] == "setaside":
        if view["must_reveal"] == player:
            return Reveal()
        return SetAside(_worst_two(own["hand"]))
    return _play_or_pass(view, own)


def _card_value(card: str, hand: list[str]) -> float:
    """How much a card is worth keeping: its number, plus a bonus for partners (pairs, sequences) and for 8s."""
    number = number_of(card)
    partners = sum(1 for c in hand if c != card and (number_of(c) == number or _adjacent(c, card)))
    return number + 4 * partners + (20 if number == STOPPER else 0)


def _adjacent(a: str, b: str) -> bool:
    return a[-1] == b[-1] and abs(number_of(a) - number_of(b)) == 1


def _worst_two(hand: list[str]) -> tuple[str, ...]:
    ranked = sorted(sort_cards(hand), key=lambda c: _card_value(c, hand))
    return tuple(ranked[:2])


def _weakness(play: tuple[str, ...], twisted: bool) -> tuple[int, int]:
    """Sort key: weakest first; among equals, plays without an 8 (keep stoppers for later)."""
    shape = shape_of(play)
    assert shape is not None
    return (strength(shape.low, twisted), int(any(number_of(c) == STOPPER for c in play)))


def _play_or_pass(view: dict[str, Any], own: dict[str, Any]) -> Action:
    hand, table, twisted = own["hand"], tuple(view["table"]["cards"]), view["twisted"]
    options = playable(hand, table, twisted)
    if not table:
        return Play(_lead(options, twisted))
    if options:
        return Play(min(options, key=lambda p: _weakness(p, twisted)))
    twistable = [c for c in own["set_aside"] if c in EIGHTS and c not in own["revealed"]]
    if twistable and playable(hand, table, not twisted):
        return Twist(sort_cards(twistable)[0])
    return Pass()


def _lead(options: list[tuple[str, ...]], twisted: bool) -> tuple[str, ...]:
    sequences = [p for p in options if len(p) >= LONG_SEQUENCE and len({c[-1] for c in p}) == 1]
    if sequences:
        longest = max(len(p) for p in sequences)
        return min((p for p in sequences if len(p) == longest), key=lambda p: _weakness(p, twisted))
    singles = [p for p in options if len(p) == 1]
    return min(singles, key=lambda p: _weakness(p, twisted))


def _choose_seat(view: dict[str, Any]) -> Action:
    previous = [0] * view["players"]
    for s in view["seats"]:
        previous[s["player"]] = s["seat"]
    seats = open_seats(view["players"], view["choosing_order"], view["chosen"], previous)
    rank_card = {s["seat"]: s["rank_card"] or 0 for s in view["seats"]}
    return TakeSeat(max(seats, key=lambda seat: (rank_card[seat], -seat)))


# ----- hints: the greedy policy's determinised rollouts (games/hints.py) ---------------------------------------
def determinize(state: GameState, player: int, rng: random.Random) -> GameState:
    """Every card `player` cannot see (other hands, their set-aside cards not yet revealed, the cards left out of
    the deal) dealt again among those places, and future deals reseeded."""
    assert isinstance(state, Loop)
    world = state.search_copy()
    hidden = [s for s in range(world.num_players) if not world._sees_hidden(player, s)]
    covered = {s: [c for c in world.set_aside[s] if c not in world.revealed[s]] for s in hidden}
    zones = [world.hands[s] for s in hidden] + [covered[s] for s in hidden] + [world.aside]
    dealt = iter(redeal(zones, rng))
    for s in hidden:
        world.hands[s] = sort_cards(next(dealt))
    for s in hidden:
        world.set_aside[s] = sort_cards([*world.revealed[s], *next(dealt)])
    world.aside = sort_cards(next(dealt))
    return reseed(world, rng)


def hint(state: GameState, player: int, rng: random.Random, budget: Budget = DEFAULT_BUDGET) -> Hint:
    return rollout_hint(state, player, rng, determinize, greedy_policy, budget, _round_scored)


def _round_scored(start: GameState, now: GameState) -> bool:
    """Rollouts stop once a round is scored: the points change only then, and a game runs to many rounds, each
    dealt from what the last one left, so a rollout to the game's end costs several times as much and says little
    more about the move made now. What a seat leaves for the next loop round is the part this does not weigh."""
    return _rounds_scored(now) != _rounds_scored(start)


def _rounds_scored(state: GameState) -> tuple[int, int]:
    """(set, rounds scored in it): the round number counts up when a round starts, and "seat" follows its scoring."""
    assert isinstance(state, Loop)
    return state.set_number, state.round_number + (state.phase == "seat")


def hint_policy(state: GameState, player: int, rng: random.Random) -> Action | None:
    return seat_action(hint, state, player, rng)


__all__ = ["determinize", "greedy_policy", "hint", "hint_policy"]
