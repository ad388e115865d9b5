"""The LOOP: random legal games with conservation and hidden-information checks, undo, the policies, and the
physical-table API (Dr. Foo's turns stepped with observed landings while the agents play off-engine)."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.core import GameOver
from games.play import play_out
from games.policies import random_policy
from games.the_loop import foo
from games.the_loop.catalogue import load_catalogue
from games.the_loop.engine import ALL_CLONES, FAUX, TheLoop
from games.the_loop.eras import CODES
from games.the_loop.policy import simple_policy
from tests.invariants import assert_illegal_unchanged, check_protocol, random_game

CAT = load_catalogue()


def check_state(state: TheLoop) -> None:
    """30 green, 30 red, 28 clones, every card and tile once; views hide the orders; scores = missions done."""
    assert state.supply("green") >= 0 and state.supply("red") >= 0
    on_board_green = sum(state.energy) + sum(p.count("green") for p in state.progress)
    on_board_red = sum(state.rifts) + sum(p.count("red") for p in state.progress)
    assert state.supply("green") + on_board_green == 30 and state.supply("red") + on_board_red == 30
    assert all(r <= 3 for r in state.rifts) or state.is_over, "a fourth rift cube always makes a vortex"
    assert sorted([*state.bag, *(c for era in state.clones for c in era)]) == sorted(ALL_CLONES)
    for era, clones in enumerate(state.clones):
        assert all(c[:3] != CODES[era] for c in clones), "no clone survives in its Paradox Era"
    held = Counter(c for zone in state.card_zones().values() for c in zone)
    assert held == Counter([*CAT.artifacts, *CAT.missions, *FAUX])
    assert sum(state.vortex) <= 3 or state.is_over
    view = state.view(0)
    text = json.dumps(view)
    assert view == state.view(1) or view["you"] == 0
    for e, tile in enumerate(state.tiles):
        if tile and not state.revealed[e]:
            assert tile not in text
    for tile in state.set_aside:
        assert tile not in text
    assert isinstance(view["huge_deck"], int) and isinstance(view["faux_left"], int)
    assert all(isinstance(a["draw"], int) for a in view["agents"])
    assert view["supply"] == {"green": state.supply("green"), "red": state.supply("red")}
    assert state.scores() == [len(state.completed)] * state.num_players
    if state.is_over:
        assert state.current_player is None and state.legal_actions() == []
        assert state.winners() == (list(range(state.num_players)) if state.won else [])


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), players=st.integers(2, 4), difficulty=st.sampled_from(["easy", "normal", "hard"]))
def test_random_games_keep_invariants(seed, players, difficulty):
    state = games.create("the-loop", players=players, seed=seed, difficulty=difficulty)
    random_game(state, random.Random(seed), check_state)


def test_undo_restores_every_step():
    state = games.create("the-loop", players=2, seed=5)
    random_game(state, random.Random(5), check_state, undo_every=1)


def _light_random_game(seed: int, policy=random_policy) -> TheLoop:
    """Random (or policy) play checking the game's own invariants every step, the protocol at the end."""
    rng = random.Random(seed)
    state = games.create("the-loop", players=2 + seed % 3, seed=seed, difficulty=("easy", "normal", "hard")[seed % 3])
    steps = 0
    while not state.is_over:
        steps += 1
        assert steps < 3000
        player = state.current_player
        action = policy(state, player, rng)
        state.apply(action)
        check_state(state)
    check_protocol(state)
    return state


@pytest.mark.parametrize("seed", range(100))
def test_many_random_games(seed):
    _light_random_game(seed)


@pytest.mark.parametrize("seed", range(60))
def test_many_simple_policy_games(seed):
    _light_random_game(1000 + seed, simple_policy)


def test_simple_policy_wins_often_and_beats_random():
    def wins(policy) -> int:
        total = 0
        for seed in range(40):
            state = games.create("the-loop", players=2 + seed % 3, seed=seed)
            steps = play_out(state, dict.fromkeys(range(state.num_players), policy), random.Random(seed))
            assert state.is_over and isinstance(steps[-1].events[-1], GameOver)
            total += state.won
        return total

    simple, rand = wins(simple_policy), wins(random_policy)
    assert simple >= 15 and simple > rand


def test_simple_policy_uses_only_its_view():
    state = games.create("the-loop", players=3, seed=14)
    state.apply("rifts auto")
    twin = state.clone()
    rng = random.Random(2)
    rng.shuffle(twin.huge)
    rng.shuffle(twin.faux)
    for agent in twin.agents:
        rng.shuffle(agent["draw"])
    assert twin.view(0) == state.view(0) and twin.to_dict() != state.to_dict()
    for seed in range(10):
        assert simple_policy(state, 0, random.Random(seed)) == simple_policy(twin, 0, random.Random(seed))


def test_simple_policy_clears_the_most_threatened_era():
    rift = next(c for c, a in CAT.artifacts.items() if a.effect.kind == "rift" and a.effect.range == 1)
    state = games.create("the-loop", players=2, seed=3)
    data = state.to_dict()
    core = data["state"]
    core.update({"phase": "actions", "drop": 0, "rifts": [0, 1, 0, 3, 0, 0, 0], "revealed": [False] * 7})
    agent = core["agents"][0]
    agent["era"] = 2
    for key in ("huge", "destroyed", "out_of_game"):
        if rift in core[key]:
            core[key].remove(rift)
    for other in core["agents"]:
        for pile in ("draw", "hand", "discard"):
            if rift in other[pile]:
                other[pile].remove(rift)
    core["destroyed"] += agent["hand"]
    agent["hand"] = [rift]
    data["history"] = []
    state = TheLoop.from_dict(data)
    assert str(simple_policy(state, 0, random.Random(0))) == f"use {rift} ind"


@pytest.mark.slow
def test_thousands_of_random_games():
    for seed in range(2000):
        _light_random_game(10_000 + seed, random_policy if seed % 2 else simple_policy)


# ----- the physical-table API ----------------------------------------------------------------------------------
def _agents_play(table: TheLoop, rng: random.Random) -> None:
    """What a careful physical table does between Dr. Foo's turns, entered as board changes."""
    for era in range(7):
        if table.rifts[era] >= 2:
            foo.enter(table, f"remove red {CODES[era]} {table.rifts[era] - 1}")
    for era in range(7):
        tile = table.tiles[era]
        if not tile or not table.revealed[era]:
            continue
        slots = list(CAT.missions[tile].slots)
        for colour in table.progress[era]:
            slots.remove(colour)
        for colour in slots[:1]:
            if colour == "green" and table.energy[era] == 0:
                foo.enter(table, f"add green {CODES[era]} 1")
            if colour == "red" and table.rifts[era] == 0:
                continue
            foo.enter(table, f"progress {colour} at {CODES[era]}")
        if not slots[1:] and slots and table.is_legal(f"complete {CODES[era]}"):
            foo.enter(table, f"complete {CODES[era]}")
            return
    clones = [c for era in table.clones for c in era]
    if clones and rng.random() < 0.5:
        clone = rng.choice(clones)
        foo.enter(table, f"clone {clone} to {clone[:3]}")


def test_foo_api_steps_a_whole_physical_game_with_observed_landings():
    table = foo.start("basic", "normal", seed=7, agents=3)
    assert table.phase == "foo" and table.legal_actions() == [games.the_loop.engine.FooTurn()]
    rng = random.Random(7)
    announcements: list[str] = []
    turns = 0
    while not table.is_over:
        assert foo.awaiting_foo(table) and not foo.awaiting_landing(table) and foo.pending_drop(table) == 0
        events = foo.foo_turn(table)
        announcements += [e.text for e in events]
        assert events[-1].kind in ("FooTravels", "RiftsLanded", "GameOver")
        if foo.awaiting_landing(table):
            drop = foo.pending_drop(table)
            assert drop == events[-1].drop
            observed = (drop // 4, drop - drop // 4 - drop // 4, drop // 4)  # what the camera saw
            landed = foo.land(table, observed)
            assert landed[0].counts == observed and not landed[0].simulated
        if table.is_over:
            break
        _agents_play(table, rng)
        if not table.is_over:
            announcements += [e.text for e in foo.end_agents_turn(table)]
        check_state(table)
        turns += 1
    assert table.won and len(table.completed) == 4 and turns <= 21
    assert any(t.startswith("Dr. Foo travels to") for t in announcements)
    assert any(t.startswith("Reveal ") and "Huge Deck" in t for t in announcements)
    check_protocol(table)


def test_foo_api_simulated_landing_and_loss_when_nobody_helps():
    table = foo.start("basic", "hard", seed=1, agents=2)
    while not table.is_over:
        foo.foo_turn(table)
        if table.phase == "landing":
            events = foo.land(table, None)
            assert events[0].simulated
        if not table.is_over:
            foo.end_agents_turn(table)
        check_state(table)
    assert not table.won and "vortex" in table.reason


def test_physical_edits_are_checked_against_the_board():
    table = foo.start(seed=2)
    assert_illegal_unchanged(table, "remove red ren 1", "Dr. Foo's turn")
    foo.foo_turn(table)
    assert_illegal_unchanged(table, "end", "landing of")
    foo.land(table, None)
    era = next(e for e in range(7) if table.rifts[e] == 0)
    assert_illegal_unchanged(table, f"remove red {CODES[era]} 1", "has only 0 red cubes")
    assert_illegal_unchanged(table, "add red ren 1", "only come from Dr. Foo's machine")
    assert_illegal_unchanged(table, "add green ren 30", "supply has only")
    absent = table.bag[0]
    assert_illegal_unchanged(table, f"destroy {absent}", f"no clone {absent}")
    revealed = next(e for e in range(7) if table.revealed[e])
    assert_illegal_unchanged(table, f"complete {CODES[revealed]}", "still has empty progress slots")
    hidden = next(e for e in range(7) if not table.revealed[e])
    assert_illegal_unchanged(table, f"complete {CODES[hidden]}", "no revealed mission")
    assert_illegal_unchanged(table, "use A01", "not now")
    events = foo.enter(table, f"add green {CODES[hidden]} 2")
    assert events[0].text == f"2 energy cubes added to {events[0].text.split(' added to ')[1]}"
    clone = next(c for era in table.clones for c in era)
    home = table.clone_era(clone)
    assert_illegal_unchanged(table, f"clone {clone} to {CODES[home]}", "already in")
    events = foo.enter(table, f"clone {clone} to {clone[:3]}")
    assert events[-1].kind == "CloneDestroyed" and events[-1].paradox and clone in table.bag


def test_physical_edits_refused_in_a_digital_game():
    state = games.create("the-loop", players=2, seed=1)
    state.apply("rifts auto")
    assert_illegal_unchanged(state, "add green ren 1", "not now")
    assert_illegal_unchanged(state, "foo", "not now")
