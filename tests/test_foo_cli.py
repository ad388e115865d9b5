"""`tabletop foo`: Dr. Foo run for a physical table, as a person drives it (real stdin, real speech)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import games
from companion_ui.foo_session import FooSession
from companion_ui.speech import Speaker
from games.the_loop import foo

CLI = [sys.executable, "-m", "companion_ui.cli", "foo"]
ROOT = Path(__file__).resolve().parent.parent


def run_foo(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, text=True, timeout=180, cwd=ROOT, check=False
    )


def test_auto_runs_dr_foo_until_the_game_ends() -> None:
    done = run_foo("--seed", "3", "--auto", "--no-speech")
    assert done.returncode == 0, done.stderr
    assert "Dr. Foo travels to the" in done.stdout and "Drop " in done.stdout
    assert "Game over" in done.stdout
    again = run_foo("--seed", "3", "--auto", "--no-speech")
    assert again.stdout == done.stdout, "the same seed must run the same Dr. Foo"


def test_observed_landing_board_changes_undo_and_save(tmp_path: Path) -> None:
    save = tmp_path / "foo.json"
    table = foo.start("basic", "normal", seed=5, agents=2)
    foo.foo_turn(table)
    drop = foo.pending_drop(table)
    script = "\n".join(
        [
            "1 1",  # not three numbers
            f"0 {drop + 1} 0",  # wrong total
            f"0 {drop} 0",  # all in Dr. Foo's Era
            "remove red ind 9",  # more than is there
            "undo",  # back past the landing: asked again
            f"0 {drop} 0",
            "done",
            "quit",
        ]
    )
    done = run_foo("--seed", "5", "--no-speech", "--save", str(save), stdin=script + "\n")
    out = done.stdout
    assert "Type three whole numbers" in out
    assert f"Those add up to {drop + 1}, but {drop} cubes were dropped." in out
    assert "Not taken:" in out
    assert out.count(f"Where did the {drop} rift cubes land?") >= 4
    assert "Stopped. The game was not finished." in out and done.returncode == 0
    saved = games.load(json.loads(save.read_text()))
    assert saved.name == "the-loop" and not saved.is_over
    resumed = run_foo("--resume", str(save), "--auto", "--no-speech")
    assert resumed.returncode == 0 and "Game over" in resumed.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scenario", "nope"], "unknown scenario 'nope'"),
        (["--difficulty", "extreme"], "difficulty must be one of easy, normal, hard"),
        (["--agents", "9"], "2-4 agents, got 9"),
        (["--resume", "/nonexistent.json"], "no such file"),
    ],
)
def test_bad_requests_get_one_clear_line(args: list[str], message: str) -> None:
    done = run_foo(*args, "--auto", "--no-speech")
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_dr_foo_is_spoken_through_pyttsx3(tmp_path: Path) -> None:
    table = foo.start("basic", "normal", seed=11, agents=3)
    out = io.StringIO()
    with Speaker(play=False, keep_dir=tmp_path, notice=lambda _: None, dedupe_seconds=0) as speaker:
        code = FooSession(table, read=input, out=out, speaker=speaker).run(auto=True)
        assert speaker.wait_idle(120)
        spoken = list(speaker.history)
    assert code == 0 and table.is_over
    printed = [line for line in out.getvalue().splitlines() if line.startswith("Dr. Foo travels to the")]
    said = [s.text for s in spoken]
    assert printed and all(line in said for line in printed), "every travel announcement must be spoken"
    assert all(s.seconds > 1.0 for s in spoken if s.text.startswith("Dr. Foo travels"))
    assert said[-1].startswith("Game over") or any(s.startswith("Game over") for s in said)


def test_the_help_names_eras_as_the_engine_reads_them() -> None:
    """The help once said 'dawn med ren ...' while the error for a bad Era said 'daw med ren ...'."""
    from companion_ui.foo_session import HELP
    from games.the_loop.eras import CODES

    assert f"ERA: {' '.join(CODES)}, or 1-7" in HELP
    table = foo.start("basic", "normal", seed=5, agents=2)
    foo.foo_turn(table)
    foo.land(table, None)
    for era in (CODES[3], "4"):
        assert foo.enter(table, f"add green {era} 1"), era
