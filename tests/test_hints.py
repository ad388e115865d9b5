"""Hints for every game (issue 23): the determinised rollouts of games/hints.py read only the player's view, are
legal, and replay exactly for a seed; the hint is asked for from the command line and the page."""

from __future__ import annotations

import importlib
import json
import random
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from companion_ui.server import create_app
from companion_ui.session import new_manual
from games import registry
from games.core import GameError, GameState
from games.hints import Budget, Hint, redeal, rollout_hint
from games.play import choose
from tests.test_cli import tabletop

# game -> (players, greedy policy, actions played before the hint is asked)
GAMES = {"loop": (4, "greedy", 14), "bag-o-loot": (3, "greedy", 25), "loot-roll": (3, "simple", 30),
         "the-loop": (2, "simple", 6)}  # fmt: skip
SMALL = Budget(rollouts=12, seconds=None)


def midgame(game: str, seed: int = 3) -> GameState:
    """A seeded game played some way by its greedy policy, stopped where a player has a real choice."""
    players, policy, steps = GAMES[game]
    state = registry.create(game, players, seed=seed)
    seats = dict.fromkeys(range(players), registry.info(game).policy(policy))
    rng = random.Random(seed)
    for done in range(400):
        if done >= steps and len(state.legal_actions(state.current_player)) > 1:
            return state
        _, action = choose(state, seats, rng)
        state.apply(action)
    raise AssertionError(f"{game}: no choice after 400 actions")


def policy_module(game: str) -> object:
    return importlib.import_module(registry.info(game).hint.split(":")[0])


@pytest.mark.parametrize("game", list(GAMES))
def test_a_determinisation_shows_the_player_exactly_what_they_saw(game):
    """The worlds the rollouts play in differ from the table only in what the player cannot see."""
    state = midgame(game)
    player = state.current_player
    module = policy_module(game)
    worlds = [module.determinize(state, player, random.Random(k)) for k in range(4)]
    for world in worlds:
        assert world.view(player) == state.view(player)
    assert any(w.to_dict()["state"] != state.to_dict()["state"] for w in worlds) or game == "the-loop"


@pytest.mark.parametrize("game", list(GAMES))
def test_the_hint_is_legal_replays_for_its_seed_and_ignores_the_hidden_cards(game):
    state = midgame(game)
    player = state.current_player
    hint = registry.info(game).hinter()
    first = hint(state, player, random.Random(7), SMALL)
    assert isinstance(first, Hint) and first.reason
    assert state.is_legal(first.action), first
    assert hint(state, player, random.Random(7), SMALL) == first
    other_table = policy_module(game).determinize(state, player, random.Random(99))  # same view, other hidden cards
    assert hint(other_table, player, random.Random(7), SMALL) == first


def test_a_forced_move_is_named_without_a_search_and_a_finished_game_has_no_hint():
    state = midgame("loop")
    module = policy_module("loop")
    only = state.legal_actions(state.current_player)[:1]
    state.legal_actions = lambda player=None: only  # type: ignore[method-assign]
    advice = rollout_hint(state, state.current_player, random.Random(0), module.determinize, module.greedy_policy)
    assert advice.action == str(only[0]) and advice.rollouts == 0
    over = registry.create("loop", 2, seed=1)
    over.phase = "over"  # type: ignore[attr-defined]
    assert rollout_hint(over, 0, random.Random(0), module.determinize, module.greedy_policy).action == ""


def test_the_budget_is_checked_and_the_rollout_cap_holds():
    with pytest.raises(GameError, match="rollouts must be at least 1"):
        Budget(rollouts=0)
    with pytest.raises(GameError, match="seconds must be positive"):
        Budget(seconds=0)
    state = midgame("loop")
    advice = registry.info("loop").hinter()(state, state.current_player, random.Random(1), SMALL)
    tried = len(state.legal_actions(state.current_player))
    assert advice.rollouts * min(tried, 8) >= SMALL.rollouts > (advice.rollouts - 1) * min(tried, 8)


def test_redeal_keeps_every_card_and_every_zone_size():
    zones = [["a", "b", "c"], [], ["d"], ["e", "f"]]
    dealt = redeal(zones, random.Random(3))
    assert [len(z) for z in dealt] == [3, 0, 1, 2]
    assert sorted(c for z in dealt for c in z) == list("abcdef")


def test_tabletop_hint_for_a_saved_game_of_another_game(tmp_path: Path):
    state = midgame("bag-o-loot")
    save = tmp_path / "bag.json"
    save.write_text(json.dumps(state.to_dict()))
    done = tabletop("hint", "--game", "bag-o-loot", "--state", str(save), "--rollouts", "16", "--json")
    assert done.returncode == 0, done.stderr
    advice = json.loads(done.stdout)
    assert advice["player"] == state.current_player + 1
    assert state.is_legal(advice["action"]) and advice["reason"]
    missing = tabletop("hint", "--game", "loop")
    assert missing.returncode != 0 and "--state FILE" in missing.stderr
    seat = tabletop("hint", "--game", "bag-o-loot", "--state", str(save), "--player", "7")
    assert seat.returncode != 0 and "--player: expected 1-3" in seat.stderr


def test_the_page_gives_a_hint_for_the_player_whose_view_is_shown():
    session = new_manual("loop", 3, seed=0, options={})
    client = TestClient(create_app(session))
    refused = client.post("/api/hint", json={"viewer": None})
    assert refused.status_code == 400 and "view as" in refused.json()["error"]
    seat = session.state.current_player + 1
    before = session.state.to_dict()
    reply = client.post("/api/hint", json={"viewer": seat})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["ok"] and body["player"] == seat
    assert session.state.is_legal(body["action"]) and body["reason"]
    assert session.state.to_dict() == before  # asking changes nothing
    assert client.get("/api/state", params={"viewer": seat}).json()["hints"] is True
    for wrong in (True, "2", 2.5, 0, 7):  # read strictly: `true` is not seat 1, nor "2" seat 2
        assert client.post("/api/hint", json={"viewer": wrong}).status_code == 422, wrong
    assert session.state.to_dict() == before


def test_a_search_copy_plays_forward_without_undo_and_leaves_the_game_alone():
    state = midgame("loot-roll")
    before = state.to_dict()
    copy = state.search_copy()
    assert copy.history_length == 0 and copy.view(0) == state.view(0)
    copy.apply(copy.legal_actions(copy.current_player)[0])
    assert copy.history_length == 0  # no snapshot kept: a rollout never undoes
    assert state.to_dict() == before


def test_the_terminal_hint_works_in_every_game():
    seats = ["--players", "2", "--seats", "human,simple", "--seed", "1"]
    done = tabletop("play", "loot-roll", *seats, stdin="hint\nquit\n")
    assert "Hint: " in done.stdout and "simulated games" in done.stdout, done.stdout[-800:]


@pytest.mark.slow  # the hints bench, twice
def test_the_hints_bench_plays_the_same_deals_in_parallel_and_resumes(tmp_path: Path):
    from games import bench_hints

    one = bench_hints.run("loot-roll", 3, 40, tmp_path / "one.jsonl", progress=False, rollouts=2)
    two = bench_hints.run("loot-roll", 3, 40, tmp_path / "two.jsonl", progress=False, workers=2, rollouts=2)

    def outcomes(result: dict) -> tuple:
        return tuple((side["win_rate"], side["mean_margin"]) for side in (result["hint"], result["greedy"]))

    assert outcomes(one) == outcomes(two) and one["games"] == 3 and one["seeds"] == [40, 42]
    rows = (tmp_path / "two.jsonl").read_text().splitlines()
    again = bench_hints.run("loot-roll", 3, 40, tmp_path / "two.jsonl", progress=False, workers=2, rollouts=2)
    assert (tmp_path / "two.jsonl").read_text().splitlines() == rows  # every deal was there: none played again
    assert outcomes(again) == outcomes(two) and again["rollouts_per_hint"] == 2
    with pytest.raises(GameError, match="--workers"):
        bench_hints.run("loot-roll", 3, 40, tmp_path / "x.jsonl", progress=False, workers=0)
    zero = tabletop("bench", "hints", "--game", "loop", "--games", "1", "--rollouts", "0", "--results",
                    str(tmp_path / "zero.jsonl"))  # fmt: skip
    assert zero.returncode != 0 and "--rollouts must be at least 1, got 0" in zero.stderr
