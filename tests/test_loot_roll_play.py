"""Loot Roll random and policy play: card conservation, scores, hidden information, undo, replay, policies."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.loot_roll.catalogue import SLOTS, TWO_HANDED
from games.loot_roll.engine import BAG_SIZE, PILES, LootRoll
from games.loot_roll.policy import simple_policy
from games.play import play_out
from games.policies import random_policy
from tests.invariants import check_protocol, random_game


def check_state(state: LootRoll, views: bool = True) -> None:
    """Every catalogue card exactly once; bag limit; gear in its slots; scores by the rule text; views hide
    hands, bags, banks, decks and undecided choice cards."""
    cat = state.cat
    held = Counter(c for zone in state.card_zones().values() for c in zone)
    assert held == cat.counts, "every card exactly once"
    scores = state.scores()
    for p in range(state.num_players):
        assert len(state.bags[p]) <= BAG_SIZE
        for slot, card in state.gear[p].items():
            assert cat.loot[card].slots[0] == slot
        main = state.gear[p].get("main hand")
        assert not (main and cat.loot[main].slot == TWO_HANDED and "off hand" in state.gear[p])
        value = sum(cat.loot[c].value for c in state.bags[p] + state.banks[p])
        assert scores[p] == value
    if views:
        check_views(state)
    if state.is_over:
        assert state.current_player is None and state.legal_actions() == []


def check_views(state: LootRoll) -> None:
    hidden_choices = state.phase == "prep"
    for viewer in [None, *range(state.num_players)]:
        view = state.view(viewer)
        assert set(view["decks"]) == set(PILES) and all(isinstance(n, int) for n in view["decks"].values())
        for q, seen in enumerate(view["players"]):
            mine = q == viewer
            assert (seen["hand"] is not None) == mine and (seen["bag"] is not None) == mine
            assert (seen["bank"] is not None) == mine and (seen["score"] is not None) == mine
            assert seen["hand_size"] == len(state.hands[q]) and seen["bag_size"] == len(state.bags[q])
            assert seen["gear"] == state.gear[q] and set(seen["gear"]) <= set(SLOTS)
            if hidden_choices and not mine and state.choices[q]:
                assert seen["choice"] == "?"
            elif mine or not hidden_choices:
                assert seen["choice"] == state.choices[q]


def _light_random_game(seed: int) -> LootRoll:
    """Random play checking the game-specific invariants after every action (the harness's per-step
    serialisation checks run in the hypothesis test)."""
    rng = random.Random(seed)
    state = games.create("loot-roll", players=2 + seed % 5, seed=seed)
    steps = 0
    while not state.is_over:
        steps += 1
        assert steps < 20_000, "a random game must end"
        state.apply(rng.choice(state.legal_actions()))
        check_state(state, views=steps % 10 == 0)
    check_state(state)
    check_protocol(state)
    assert state.winners()
    return state


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), players=st.integers(2, 6))
def test_random_games_keep_invariants(seed, players):
    state = games.create("loot-roll", players=players, seed=seed)
    random_game(state, random.Random(seed), check_state)


@pytest.mark.parametrize("seed", range(100))
def test_many_random_games(seed):
    _light_random_game(seed)


@pytest.mark.slow
def test_thousands_of_random_games():
    for seed in range(2000):
        _light_random_game(100_000 + seed)


def test_undo_restores_every_step():
    state = games.create("loot-roll", players=3, seed=9)
    random_game(state, random.Random(9), check_state, undo_every=1)


def test_a_whole_game_goes_through_three_dungeons_and_two_towns():
    state = games.create("loot-roll", players=3, seed=8)
    steps = play_out(state, dict.fromkeys(range(3), simple_policy), random.Random(8))
    events = [e for s in steps for e in s.events]
    assert [e.dungeon for e in events if e.kind == "DungeonCleared"] == [1, 2, 3]
    assert [e.kind for e in events if e.kind in ("TownStarted", "DungeonEntered", "EndStarted", "GameOver")] == [
        "TownStarted",
        "DungeonEntered",
        "TownStarted",
        "DungeonEntered",
        "EndStarted",
        "GameOver",
    ]
    assert sum(1 for e in events if e.kind == "BossForced") <= 3


def test_whole_seeded_games_replay_exactly():
    def run(seed: int) -> list[str]:
        state = games.create("loot-roll", players=4, seed=seed)
        steps = play_out(state, dict.fromkeys(range(4), random_policy), random.Random(seed))
        return [e.text for s in steps for e in s.events]

    assert run(3) == run(3) and run(3) != run(4)


# ----- policies ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_simple_policies_finish_games(players):
    state = games.create("loot-roll", players=players, seed=players)
    steps = play_out(state, dict.fromkeys(range(players), simple_policy), random.Random(players))
    assert state.is_over and steps[-1].events[-1].kind == "GameOver"
    check_state(state)


def test_simple_policy_beats_random():
    wins = 0
    for seed in range(30):
        state = games.create("loot-roll", players=2, seed=seed)
        play_out(state, {0: simple_policy, 1: random_policy}, random.Random(seed))
        wins += state.winners() == [0]
    assert wins >= 20


def _hide(state: LootRoll, player: int) -> LootRoll:
    """A twin that differs only in what `player` cannot see: deck order, other hands, bags and banks."""
    twin = state.clone()
    rng = random.Random(1)
    for pile in PILES:
        rng.shuffle(twin.decks[pile])
    for kind in ("hands", "bags", "banks"):
        zones = getattr(twin, kind)
        others = [q for q in range(state.num_players) if q != player]
        pool = [c for q in others for c in zones[q]]
        rng.shuffle(pool)
        for q in others:
            zones[q], pool = pool[: len(zones[q])], pool[len(zones[q]) :]
    return twin


def test_simple_policy_uses_only_its_view():
    state = games.create("loot-roll", players=3, seed=21)
    rng = random.Random(2)
    checked = 0
    while not state.is_over and checked < 120:
        player = state.current_player
        twin = _hide(state, player)
        assert twin.view(player) == state.view(player)
        for seed in range(3):
            assert simple_policy(state, player, random.Random(seed)) == simple_policy(twin, player, random.Random(seed))
        state.apply(simple_policy(state, player, rng))
        checked += 1


def test_simple_policy_fights_when_likely_to_win_and_flees_otherwise():
    state = games.create("loot-roll", players=2, seed=1)
    data = state.to_dict()
    core = data["state"]
    core["decks"]["monster"] = " ".join(
        [c for c in core["decks"]["monster"].split() if c != "young-dragon"] + ["young-dragon"]
    )
    core["bags"] = ["", ""]
    strong = LootRoll.from_dict(data)
    strong.apply("fight")
    assert str(simple_policy(strong, 0, random.Random(0))) == "choose fight"  # an empty bag has nothing to lose
    strong.bags[0], strong.decks["common"] = [strong.decks["common"][-1]], strong.decks["common"][:-1]
    assert str(simple_policy(strong, 0, random.Random(0))) == "choose flight"  # 2 against the dragon's 9
