"""Random legal LOOP games: card conservation, hand sizes, scoring by the rule text, hidden information.

Why a local driver beside `tests.invariants.random_game`: a LOOP game runs to hundreds of actions, and the
shared harness serialises the whole undo history on every step (quadratic), so it is used here only for a few
games; the many-game runs use `drive`, which checks the same things with undo and the full protocol sampled.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.core import GameOver
from games.loop.engine import ALL_CARDS, Loop, RoundScored, basic_points
from games.loop.policy import greedy_policy
from tests.invariants import check_protocol, random_game


def check_state(state: Loop) -> None:
    zones = state.card_zones()
    every = Counter(c for cards in zones.values() for c in cards)
    assert every == Counter(ALL_CARDS), "each of the 45 cards must lie in exactly one zone"
    n = state.num_players
    assert len(zones["aside"]) == 45 - 11 * n
    for seat in range(n):
        held = sum(len(zones[f"seat {seat + 1} {part}"]) for part in ("hand", "set aside", "played"))
        assert held == 11, "every seat always holds 11 cards: hand + set aside + played"
        if state.phase == "play":
            assert len(state.set_aside[seat]) == 2 and len(state.hands[seat]) + len(state.played[seat]) == 9
    assert all(p >= 0 for p in state.scores())
    _check_views(state)


def _hidden(state: Loop, player: int | None) -> set[str]:
    hidden = set(state.aside)
    for seat in range(state.num_players):
        if player is not None and state.phase in ("setaside", "play") and state.seat_of[player] == seat:
            continue
        hidden |= set(state.hands[seat]) | (set(state.set_aside[seat]) - set(state.revealed[seat]))
    return hidden


def _check_views(state: Loop) -> None:
    for player in [None, *range(state.num_players)]:
        text = json.dumps(state.view(player))
        leaked = [c for c in _hidden(state, player) if f'"{c}"' in text]
        assert not leaked, f"view of {player} shows hidden cards {leaked}"


def check_events(state: Loop, points_before: list[int], events: list) -> None:
    for event in events:
        assert event.text.endswith(".")
        json.dumps(event.to_dict())
        if isinstance(event, RoundScored):
            n = state.num_players
            assert sorted(event.ranks) == list(range(1, n + 1))
            assert list(event.basic) == [basic_points(n, r) for r in event.ranks]
            if event.round_number == 1:
                assert set(event.change) == {0}
            else:
                assert sum(event.change) == 0  # seats are a permutation of last round's ranks
            assert list(event.totals) == [max(0, points_before[p] + event.basic[p] + event.change[p]) for p in range(n)]
        if isinstance(event, GameOver):
            assert max(event.scores) >= {2: 7, 3: 10, 4: 12}[state.num_players]
            assert state.is_over and list(event.winners) == state.winners()


def check_protocol_now(state: Loop) -> None:
    """`check_protocol` on the state without its undo history, to stay linear in the game's length.

    Saving and loading the history itself is checked by `test_shared_harness_*` and the seeded replay test.
    """
    history = state._history
    state._history = []
    try:
        check_protocol(state)
    finally:
        state._history = history


def drive(state: Loop, rng: random.Random, greedy_seats: frozenset[int] = frozenset(), undo_every: int = 7) -> int:
    """Play random (or greedy) legal actions to the end, checking every step; returns the number of actions."""
    check_protocol(state)
    steps = 0
    while not state.is_over:
        player = state.current_player
        assert player is not None and state.actors() == [player]
        if player in greedy_seats:
            action = greedy_policy(state, player, rng)
        else:
            action = rng.choice(state.legal_actions(player))
        before = (state.chance_draws, state._core())
        points = state.scores()
        events = state.apply(action)
        check_state(state)
        check_events(state, points, events)
        if steps % undo_every == 0:
            state.undo()
            assert (state.chance_draws, state._core()) == before, f"undo of {action} must restore the state"
            assert state.apply(action) == events, "replaying an action must give the same events"
        if steps % 23 == 0 or (events and isinstance(events[-1], RoundScored | GameOver)):
            check_protocol_now(state)
        steps += 1
        assert steps < 20_000, "game does not end"
    check_protocol_now(state)
    assert state.winners() and len(state.winners()) == 1
    return steps


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 4),
    long_game=st.booleans(),
    three_eights=st.booleans(),
    greedy=st.sets(st.integers(0, 3), max_size=2),
)
def test_random_games(seed, players, long_game, three_eights, greedy):
    state = Loop(players, seed, long_game=long_game, three_eights_redeal=three_eights)
    drive(state, random.Random(seed), frozenset(greedy))


@pytest.mark.parametrize("seed", range(3))
def test_shared_harness_on_two_player_games(seed):
    state = Loop(2, seed, three_eights_redeal=True)
    random_game(state, random.Random(seed), check_state)


def test_seeded_random_games_replay():
    a, b = Loop(4, 77, long_game=True), Loop(4, 77, long_game=True)
    drive(a, random.Random(5))
    drive(b, random.Random(5))
    assert a == b
    check_protocol(a)  # the full history of a long game saves and loads


@pytest.mark.slow
def test_many_random_games(request):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("about 5 minutes: run with -m slow")
    for i in range(2000):
        players = 2 + i % 3
        state = Loop(players, i, long_game=i % 5 == 0, three_eights_redeal=i % 2 == 0)
        drive(state, random.Random(i), frozenset({i % players}) if i % 3 == 0 else frozenset(), undo_every=50)
