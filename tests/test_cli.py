"""The `tabletop` command as a person uses it: real subprocesses, real stdin/stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import games

CLI = [sys.executable, "-m", "companion_ui.cli"]
ROOT = Path(__file__).resolve().parent.parent


def tabletop(*args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
    )


def test_console_script_is_installed_and_lists_subcommands() -> None:
    script = Path(sys.executable).parent / "tabletop"
    assert script.exists(), "pip install -e . must install the 'tabletop' console script"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True).stdout
    for command in ("games", "play", "hint", "bench"):
        assert command in out


def test_games_lists_every_registered_game() -> None:
    out = tabletop("games").stdout
    for name in games.GAMES:
        assert name in out


@pytest.mark.parametrize(
    ("game", "players"), [("loot-the-loop", 1), ("loop", 3), ("bag-o-loot", 2), ("loot-roll", 3), ("the-loop", 2)]
)
def test_auto_json_plays_a_whole_game_and_replays_exactly(game: str, players: int) -> None:
    first = tabletop("play", game, "--players", str(players), "--seed", "11", "--auto", "--json")
    assert first.returncode == 0, first.stderr
    record = json.loads(first.stdout)
    state = games.load(record["final_state"])
    assert state.is_over
    assert record["scores"] == state.scores()
    assert record["winners"] == [p + 1 for p in state.winners()]
    assert record["actions"] and record["actions"][-1]["events"][-1]["type"] == "GameOver"
    again = tabletop("play", game, "--players", str(players), "--seed", "11", "--auto", "--json")
    assert again.stdout == first.stdout, "the same seed must replay the same game"


def test_auto_with_the_solver_seat() -> None:
    done = tabletop("play", "loot-the-loop", "--seats", "solver", "--seed", "3", "--auto")
    assert done.returncode == 0, done.stderr
    assert "Scores: Player 1:" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "chess"], "unknown game 'chess'"),
        (["play", "loop", "--players", "9"], "players must be 2-4, got 9"),
        (["play", "bag-o-loot", "--option", "colour=red"], "unknown option(s) colour"),
        (["play", "bag-o-loot", "--option", "rounds"], "expected KEY=VALUE"),
        (["play", "loop", "--seats", "human,alien"], "unknown policy 'alien'"),
        (["play", "loop", "--auto", "--seats", "human"], "no seat may be 'human'"),
        (["play", "loop", "--json"], "--json needs --auto"),
        (["play", "loop", "--resume", "/nonexistent/save.json"], "no such file"),
        (["bench", "chess"], "unknown benchmark 'chess'"),
        (["bench", "loot-the-loop", "--games", "0"], "--games must be at least 1"),
        (["bench", "companion", "--videos", "/nonexistent/games"], "no such folder of rendered games"),
    ],
)
def test_bad_requests_get_one_clear_line(args: list[str], message: str) -> None:
    done = tabletop(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_interactive_game_explains_illegal_moves_and_stops_at_end_of_input() -> None:
    script = "help\nfly away\n99\nexplore 99\nundo\nquit\n"
    done = tabletop("play", "loot-the-loop", "--seed", "4", stdin=script)
    out = done.stdout
    assert "undo   take back the last action" in out
    assert "Not an action:" in out
    assert "No action number 99" in out
    assert "Illegal:" in out
    assert "nothing to undo" in out
    assert "Stopped. The game was not finished." in out
    assert done.returncode == 0, "typing quit is the player's choice, not a failure"
    closed = tabletop("play", "loop", "--players", "2", "--seed", "4", stdin="")
    assert closed.returncode == 1 and "Traceback" not in closed.stderr, "input ran out before the game did"


def test_help_lists_hint_and_undo_lists_the_actions_again() -> None:
    """After an undo the actions are those of the table before it, listed again with their numbers, and a number
    typed then means the new list's action (session 13: the old list stayed, its numbers stale)."""
    done = tabletop("play", "loot-the-loop", "--seed", "4", stdin="help\nhint\n4\nundo\nquit\n")
    out = done.stdout
    assert "hint   a suggested move and why" in out
    assert "Hint: order 2 3 1" in out and "Player 1: order 2 3 1" in out
    first_listing = out.index("Player 1 to act: [1]")
    after_undo = out.index("Undone.")
    assert out.index("Player 1 to act: [1]", after_undo) > after_undo > first_listing
    assert done.returncode == 0


def survives_two_first_moves(seed: int) -> bool:
    state = games.create("loot-the-loop", seed=seed)
    for _ in range(2):
        state.apply(state.legal_actions()[0])
    return not state.is_over


def test_interactive_moves_take_effect_and_are_saved_for_resume(tmp_path: Path) -> None:
    save = tmp_path / "game.json"
    seed = next(s for s in range(100) if survives_two_first_moves(s))
    done = tabletop("play", "loot-the-loop", "--seed", str(seed), "--save", str(save), stdin="1\n1\nquit\n")
    assert done.returncode == 0
    saved = games.load(json.loads(save.read_text()))
    assert saved.history_length == 2, "both moves must have been applied and saved"
    resumed = tabletop("play", "loot-the-loop", "--resume", str(save), "--seats", "solver", "--auto", "--json")
    assert resumed.returncode == 0, resumed.stderr
    final = games.load(json.loads(resumed.stdout)["final_state"])
    assert final.is_over


def test_resume_refuses_a_save_of_another_game(tmp_path: Path) -> None:
    save = tmp_path / "loop.json"
    save.write_text(json.dumps(games.create("loop", players=2, seed=1).to_dict()))
    done = tabletop("play", "bag-o-loot", "--resume", str(save))
    assert done.returncode == 2 and "holds a loop game, not bag-o-loot" in done.stderr
    save.write_text("{not json")
    done = tabletop("play", "loop", "--resume", str(save))
    assert done.returncode == 2 and "not JSON" in done.stderr


def test_hint_from_an_observed_table_uses_only_the_visible_cards() -> None:
    deck = "AC 8S ?x16 4C QD ?x16 10H 10D ?x15"
    done = tabletop("hint", "--deck", deck, "--json")
    assert done.returncode == 0, done.stderr
    advice = json.loads(done.stdout)
    assert advice["action"] == "explore 8", "8S is the only face-up trinket on top: exploring by 8 is the only move"
    text = tabletop("hint", "--deck", deck).stdout
    assert "Suggested for Player 1: explore 8" in text


def test_hint_from_a_saved_game(tmp_path: Path) -> None:
    state = games.create("loot-the-loop", seed=2)
    state.apply("order 3 1 2")
    save = tmp_path / "ltl.json"
    save.write_text(json.dumps(state.to_dict()))
    advice = json.loads(tabletop("hint", "--state", str(save), "--json").stdout)
    assert advice["action"] in {str(a) for a in state.legal_actions()}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give the table"),
        (["--deck", "AC 8S ?x0"], "expected ?xN"),
        (["--deck", "AC ZZ ?x51"], "'ZZ' is not a card code"),
        (["--deck", "AC 8S ? ?"], "the table must hold all 53 cards"),
        (["--deck", "AC AC ?x51"], "seen twice"),
        (["--deck", "?x50", "--notes", "5D 6D 7D 8D"], "at most 3 notes"),
    ],
)
def test_hint_bad_tables_are_named(args: list[str], message: str) -> None:
    done = tabletop("hint", *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_machine_seats_hidden_choices_are_not_shown_to_the_human() -> None:
    # Player 1 (random) sets aside two cards face down before the human at seat 2 is asked anything.
    done = tabletop("play", "loop", "--players", "2", "--seats", "random,human", "--seed", "1", stdin="quit\n")
    assert "sets aside 2 cards face down" in done.stdout
    assert "Player 1: setaside" not in done.stdout


def test_bench_prints_the_policies_side_by_side(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    args = ["--games", "5", "--seed", "100", "--quiet", "--json", str(out), "--policies", "solver,random"]
    done = tabletop("bench", "loot-the-loop", *args)
    assert done.returncode == 0, done.stderr
    assert "| solver | random |" in done.stdout
    result = json.loads(out.read_text())
    assert result["games"] == 5 and set(result["policies"]) == {"solver", "random"}
    assert sum(result["policies"]["solver"]["results"].values()) == 5


def test_synth_scenes_and_sheet_from_a_deck_directory(tmp_path: Path) -> None:
    from vision.synth.export import write_procedural_deck

    write_procedural_deck(tmp_path / "decks" / "plain")
    out = tmp_path / "ds"
    args = ["synth", "scenes", "--decks", str(tmp_path / "decks"), "--out", str(out), "--n", "3", "--size", "320x240"]
    done = tabletop(*args, "--quiet")
    assert done.returncode == 0, done.stderr
    assert "wrote 3 scenes" in done.stdout
    assert len(list((out / "images" / "train").glob("*.jpg"))) == 3
    again = tabletop(*args, "--quiet")
    assert "wrote 0 scenes, kept 3 already there" in again.stdout
    sheet = tmp_path / "sheet.png"
    done = tabletop(
        "synth", "sheet", "--decks", str(tmp_path / "decks"), "--out", str(sheet), "--n", "2", "--size", "320x240"
    )
    assert done.returncode == 0 and sheet.stat().st_size > 1000
    assert json.loads(done.stdout.split("\n", 1)[1])["camera_height_mm"]["n"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["synth", "scenes", "--decks", "/nonexistent", "--out", "x"], "not a directory"),
        (["synth", "scenes", "--out", "x", "--size", "12x4"], "expected WIDTHxHEIGHT"),
        (["synth", "scenes", "--out", "x", "--n", "0"], "--n must be at least 1"),
    ],
)
def test_synth_bad_requests(args: list[str], message: str, tmp_path: Path) -> None:
    done = tabletop(*[a if a != "x" else str(tmp_path / "x") for a in args])
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_synth_game_writes_a_clip_with_ground_truth(tmp_path: Path) -> None:
    from vision.synth.export import write_procedural_deck

    write_procedural_deck(tmp_path / "deck")
    out = tmp_path / "clip"
    args = ["synth", "game", "--deck", str(tmp_path / "deck"), "--out", str(out), "--seed", "4"]
    done = tabletop(*args, "--max-actions", "2", "--size", "320x180", "--fps", "10", "--quiet")
    assert done.returncode == 0, done.stderr
    actions = json.loads((out / "actions.json").read_text())
    assert len(actions) == 2 and actions[0]["action"].startswith("order ")
    assert all(a["start_frame"] < a["end_frame"] for a in actions)
    meta = json.loads((out / "meta.json").read_text())
    from vision.synth.video import read_states

    assert len(list(read_states(out))) == meta["frames"]
    bad = tabletop("synth", "game", "--deck", str(tmp_path / "deck"), "--out", str(out), "--game", "loot-roll")
    assert bad.returncode == 2 and "loot-the-loop, loop, bag-o-loot" in bad.stderr
    wrong = tabletop("synth", "game", "--deck", str(tmp_path / "deck"), "--out", str(out), "--game", "loop")
    assert wrong.returncode == 2 and "loop is filmed with a piece set" in wrong.stderr
    from vision.synth.components import generator

    generator("bag-o-loot")(tmp_path / "bag", 0, 1.5)
    args = ["synth", "game", "--game", "bag-o-loot", "--deck", str(tmp_path / "bag"), "--out", str(tmp_path / "b")]
    done = tabletop(*args, "--players", "2", "--max-actions", "2", "--size", "320x180", "--fps", "10", "--quiet")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "b" / "meta.json").read_text())["players"] == 2


def test_synth_clip_films_a_roll_and_refuses_the_wrong_pieces(tmp_path):
    from vision.synth.components import generator

    generator("loot-roll")(tmp_path / "lr", 2, 1.5)
    out = tmp_path / "roll"
    args = ["synth", "clip", "--kind", "roll", "--pieces", str(tmp_path / "lr"), "--out", str(out), "--count", "2"]
    done = tabletop(*args, "--size", "320x180", "--fps", "10", "--quiet")
    assert done.returncode == 0, done.stderr
    events = json.loads((out / "events.json").read_text())
    assert [e["event"] for e in events] == ["roll", "roll"]
    assert f"rolled {events[0]['value']}" in done.stdout
    wrong = tabletop("synth", "clip", "--kind", "drop", "--pieces", str(tmp_path / "lr"), "--out", str(out))
    assert wrong.returncode == 2 and "no the-loop piece set" in wrong.stderr
