"""Loot the Loop solver and benchmark: plays from the view only, beats random, stays fast, always ends."""

from __future__ import annotations

import random

import pytest

import games
from games.loot_the_loop import solver
from games.loot_the_loop.bench import format_table, play_many, run_bench
from games.loot_the_loop.engine import LootTheLoop
from games.policies import random_policy
from games.registry import info


def shuffled_hidden(state: LootTheLoop, seed: int) -> LootTheLoop:
    """The same table with its face-down cards dealt differently (what the player cannot tell apart)."""
    other = state.clone()
    slots = [i for i, up in enumerate(other.up) if not up]
    hidden = [other.deck[i] for i in slots]
    random.Random(seed).shuffle(hidden)
    for i, card in zip(slots, hidden, strict=True):
        other.deck[i] = card
    return other


def test_solver_never_peeks_at_face_down_cards():
    for seed in range(25):
        state = LootTheLoop(seed=seed)
        rng = random.Random(seed)
        while not state.is_over and state.history_length < 30:
            if state.phase == "play":
                twin = shuffled_hidden(state, seed)
                assert twin.view(0) == state.view(0)
                a = solver.suggest(state.view(0), random.Random(7))
                b = solver.suggest(twin.view(0), random.Random(7))
                assert a == b
            state.apply(rng.choice(state.legal_actions()))


def test_solver_same_suggestion_for_two_determinisations_of_an_observed_table():
    deck = ["5H", "KS", None, None, "AS", None, "9C", *[None] * 39]
    one = LootTheLoop.from_table(deck, ("2C",), ("AD", "3S", "4S", "6S", "7S", "8S"), seed=1)
    two = LootTheLoop.from_table(deck, ("2C",), ("AD", "3S", "4S", "6S", "7S", "8S"), seed=2)
    assert one.deck != two.deck
    assert solver.suggest(one.view(0), random.Random(0)) == solver.suggest(two.view(0), random.Random(0))


def test_solver_takes_a_jewel_in_reach():
    state = LootTheLoop.from_table(["2H", "5S", "AS", *[None] * 50])
    hint = solver.suggest(state.view(0), random.Random(0))
    assert hint.action == "explore 2" and "jewel" in hint.reason


def test_solver_escapes_when_it_can():
    state = LootTheLoop.from_table(["2H", "5S", "JOKER", *[None] * 45], score_pile=("AS", "AH", "AD", "AC", "7C"))
    assert solver.suggest(state.view(0), random.Random(0)).action == "explore 2"


def test_solver_avoids_a_trap():
    state = LootTheLoop.from_table(["2H", "5S", "KS", None, None, "3D", *[None] * 47])
    assert solver.suggest(state.view(0), random.Random(0)).action != "explore 2"


def test_solver_only_makes_progress_after_idling():
    state = LootTheLoop.from_table(["5H", "9S", None, *[None] * 48], notes=("2C", "3C"))
    view = state.view(0)
    view["idle"] = solver.IDLE_LIMIT
    assert solver.suggest(view, random.Random(0)).action.startswith("explore")


def escape_table(seed: int = 0) -> LootTheLoop:
    """Both explores (3 and 5) land on a face-up trap, returning the 4C only leads back here, and one mark leaves a
    3H whose explore lands on the QS: only mark, mark (uncovering a face-down card to look at) avoids a trap."""
    deck = ["5H", "3H", None, "KS", "QS", "JS", *[None] * 46]
    return LootTheLoop.from_table(deck, notes=("4C",), seed=seed)


def test_solver_escapes_a_trap_with_a_two_step_mark_sequence_at_the_idle_limit():
    view = escape_table().view(0)
    view["idle"] = solver.IDLE_LIMIT
    pos = solver.position(view)
    assert not any(solver.is_progress(pos, m) for m in solver.moves(pos))
    assert solver.escape(pos, 1, solver.Search(), 1) is None
    hint = solver.suggest(view, random.Random(0))
    assert hint.action == "mark" and hint.reason == solver.ESCAPE_REASON


def test_solver_escape_never_peeks_at_face_down_cards():
    one, two = escape_table(seed=1), escape_table(seed=2)
    assert one.deck != two.deck
    views = [one.view(0), two.view(0)]
    for view in views:
        view["idle"] = solver.IDLE_LIMIT
    hints = [solver.suggest(view, random.Random(0)) for view in views]
    assert hints[0] == hints[1] and hints[0].reason == solver.ESCAPE_REASON


def test_solver_escape_search_stops_at_the_idle_budget():
    view = escape_table().view(0)
    view["idle"] = solver.IDLE_LIMIT + solver.ESCAPE_DEPTH - 1
    assert solver.suggest(view, random.Random(0)).action.startswith("explore")


def test_solver_picks_a_legal_pile_order_and_moves():
    state = LootTheLoop(seed=11)
    hint = solver.suggest(state.view(0), random.Random(0))
    assert hint.action in state.view(0)["legal"] and hint.reason
    action = solver.solver_policy(state, 0, random.Random(0))
    assert state.is_legal(action)
    assert info("loot-the-loop").policy("solver") is solver.solver_policy


@pytest.mark.slow  # about a minute of games
def test_solver_beats_random_on_seeded_games():
    smart = play_many(solver.solver_policy, 150, seed=500)
    rand = play_many(random_policy, 150, seed=500)
    assert smart["win_rate"] > rand["win_rate"] and smart["win_rate"] >= 0.05
    assert smart["avg_score"] > 2 * rand["avg_score"]


@pytest.mark.slow  # about a minute: the bench's games
def test_bench_table():
    result = run_bench(games=4, seed=3, progress=False)
    assert list(result["policies"]) == ["planner", "solver", "random"]
    for stats in result["policies"].values():
        assert sum(stats["results"].values()) == 4 and stats["seconds"] >= 0
    table = format_table(result)
    assert "| Win rate |" in table and "| Average score |" in table and "| planner | solver | random |" in table
    assert "| Seconds per game |" in table
    with pytest.raises(ValueError, match="unknown policy"):
        run_bench(games=1, policies=("oracle",))


def test_games_with_the_solver_replay_exactly():
    def play(seed: int) -> LootTheLoop:
        state = games.create("loot-the-loop", seed=seed)
        rng = random.Random(seed)
        while not state.is_over:
            state.apply(solver.solver_policy(state, 0, rng))
        return state

    assert play(42) == play(42)
