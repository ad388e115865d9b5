"""The fast table of card types (games/loot_the_loop/world.py) plays exactly as the engine does."""

from __future__ import annotations

import random

import pytest

from games.loot_the_loop.engine import LootTheLoop
from games.loot_the_loop.solver import Move, card_type, decide, position, solver_policy
from games.loot_the_loop.world import World


def engine_action(move: Move, state: LootTheLoop) -> str:
    kind, n = move
    if kind == "explore":
        return f"explore {n}"
    if kind == "return":
        return "return " + next(c for c in state.notes if card_type(c) == n)
    return kind


@pytest.mark.parametrize("seed", range(8))
def test_a_world_dealt_as_the_engine_dealt_plays_the_same_game(seed):
    state = LootTheLoop(seed=seed)
    state.apply(solver_policy(state, 0, random.Random(seed)))
    world = World([card_type(c) for c in state.deck], list(state.up), [], 0, 0,
                  _unseen=list(position(state.view(0)).unseen))  # fmt: skip
    rng = random.Random(seed)
    while not state.is_over:
        seen = position(state.view(0))
        assert world.pos() == seen and world.idle == state.idle
        move, _, _ = decide(seen, state.idle, rng)
        state.apply(engine_action(move, state))
        world.apply(move)
        assert world.result == (state.result if state.is_over else "")
    assert world.score == state.scores()[0]


def test_a_deal_fills_only_the_face_down_places_with_the_unseen_cards():
    state = LootTheLoop(seed=11)
    state.apply("order 1 2 3")
    seen = position(state.view(0))
    worlds = [World.deal(seen, 0, random.Random(k)) for k in range(5)]
    for world in worlds:
        assert world.pos() == seen
        assert sorted(world.cards) == sorted(card_type(c) for c in state.deck)
    assert len({tuple(w.cards) for w in worlds}) == 5
