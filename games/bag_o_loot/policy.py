"""A greedy Bag-O-Loot player: grab every card it can get onto the table, bluff now and then, and challenge
when the visible cards make a bluff likely.

It reads only `state.view(player)` (asked only when a challenge or a holdup needs it) and the player's own legal
actions (which depend on nothing but its own hand and the open table), so it never peeks at hidden cards.
"""

from __future__ import annotations

import random

from games.bag_o_loot.engine import (
    LOOTER,
    BagOLoot,
    Build,
    Challenge,
    Claim,
    Draw,
    Holdup,
    Junk,
    Knock,
    MakeBag,
    Open,
    Rob,
    Steal,
    full_set,
    matches,
)
from games.core import JSON, Action, GameState
from games.hints import DEFAULT_BUDGET, Budget, Hint, redeal, reseed, rollout_hint, seat_action

BLUFF_RATE = 0.15
CHALLENGE_RATE = 0.1
SUSPICIOUS_CHALLENGE_RATE = 0.6
HOLDUP_KEEP = 8


def greedy_policy(state: GameState, player: int, rng: random.Random) -> Action | None:
    """Out of turn: claim splits, maybe challenge. In turn: draw, holdup a fat hand, then play greedily."""
    legal = state.legal_actions(player)
    if not legal:
        return None
    claim = _first(legal, Claim)
    if claim is not None:
        return claim
    challenge = _first(legal, Challenge)
    if challenge is not None and rng.random() < _challenge_rate(state.view(player), state.num_players):
        return challenge
    if player != state.current_player:
        return None
    return _first(legal, Rob) or _first(legal, Draw) or _turn_play(state, player, legal, rng)


def _turn_play(state: GameState, player: int, legal: list[Action], rng: random.Random) -> Action:
    """The view is read only when a holdup is possible: the hint's rollouts ask this at every turn."""
    holdups = [a for a in legal if isinstance(a, Holdup)]
    sizes = state.view(player)["hand_sizes"] if holdups else []
    fat = [a for a in holdups if sizes[a.target] > HOLDUP_KEEP]
    if fat:
        return fat[0]
    steals = [a for a in legal if isinstance(a, Steal)]
    if steals:
        return min(steals, key=lambda a: a.using != "set")
    for kind in (Open, Build, Junk):
        action = _first(legal, kind)
        if action is not None:
            return action
    bags = [a for a in legal if isinstance(a, MakeBag)]
    genuine = [a for a in bags if matches(a.card, a.number)]
    if genuine:
        return min(genuine, key=lambda a: a.card == LOOTER)  # keep looters for later
    if bags and rng.random() < BLUFF_RATE:
        return rng.choice(bags)
    return Knock()


def _first(legal: list[Action], kind: type) -> Action | None:
    return next((a for a in legal if isinstance(a, kind)), None)


def _challenge_rate(view: JSON, players: int) -> float:
    """If every copy of the bag's number and every looter is visible elsewhere, the face-down card is a bluff."""
    info = view["last_bag"]
    bag = view["stashes"][info["owner"]]["bags"][info["index"]]
    number = str(bag["number"])
    seen = list(view["hand"] or []) + list(view["junk"])
    for stash in view["stashes"]:
        for part in (*stash["collections"], *stash["bags"]):
            seen += part["cards"]
    seen.remove("?")
    kept, _ = full_set(players)
    if seen.count(number) >= kept.count(number) and seen.count(LOOTER) >= kept.count(LOOTER):
        return 1.0
    if seen.count(number) >= kept.count(number):
        return SUSPICIOUS_CHALLENGE_RATE
    return CHALLENGE_RATE


# ----- hints: the greedy policy's determinised rollouts (games/hints.py) ---------------------------------------
def determinize(state: GameState, player: int, rng: random.Random) -> GameState:
    """Every card `player` cannot see (the deck, other hands, the face-down top card of each other player's bag)
    dealt again among those places, and future chance reseeded. A penalty in a rollout restores the table as it
    is now rather than at the start of the turn (the start holds the real hidden cards)."""
    assert isinstance(state, BagOLoot)
    world = state.search_copy()
    others = [q for q in range(world.num_players) if q != player]
    tops = [b for q in others for b in world.stashes[q]["bags"] if b.get("down")]
    zones = [world.deck] + [world.hands[q] for q in others] + [[b["cards"][-1]] for b in tops]
    dealt = iter(redeal(zones, rng))
    world.deck = next(dealt)
    for q in others:
        world.hands[q] = next(dealt)
    for bag in tops:
        bag["cards"][-1] = next(dealt)[0]
    if world.turn_start is not None:
        world.turn_start = world._table()
    return reseed(world, rng)


def hint(state: GameState, player: int, rng: random.Random, budget: Budget = DEFAULT_BUDGET) -> Hint:
    return rollout_hint(state, player, rng, determinize, greedy_policy, budget, _round_over)


def _round_over(start: GameState, now: GameState) -> bool:
    """Rollouts stop when the round ends: the totals (the scores) change only then."""
    assert isinstance(start, BagOLoot) and isinstance(now, BagOLoot)
    return now.round != start.round


def hint_policy(state: GameState, player: int, rng: random.Random) -> Action | None:
    return seat_action(hint, state, player, rng)
