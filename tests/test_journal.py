"""The game journal (issue 19): entries on disk before they take effect, a crash at any byte costs nothing, undo is
an entry, a full disk refuses the entry and leaves the file whole, and a bad journal is named, never half-used."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from companion_ui.journal import JournalError, read_entries
from companion_ui.session import Refused, new_manual
from games import GameError
from tests.servers import ROOT
from tests.test_companion import PLAYERS, page_actions

CUTS_PER_GAME = 50  # 250 crash moments across the five games


def _journalled_game(game: str, path: Path, seed: int, entries: int) -> list[dict]:
    """Plays `entries` entries (about one undo in six) and returns the state after each, the start first."""
    rng = random.Random(seed)
    session = new_manual(game, PLAYERS[game], seed=seed, options={}, save=path)
    states = [session.state.to_dict()]
    while len(states) <= entries and not session.state.is_over:
        try:
            if rng.random() < 0.16:
                session.undo()
            else:
                offered = page_actions(session) or [str(a) for a in session.state.legal_actions()]
                session.act(rng.choice(offered))
        except Refused:
            continue
        states.append(session.state.to_dict())
    session.journal.close()
    return states


@pytest.mark.parametrize("game", list(PLAYERS))
def test_a_crash_at_any_byte_of_the_journal_resumes_the_game_exactly_as_it_was(game: str, tmp_path: Path) -> None:
    """kill -9 leaves a prefix of what was written (each entry is one append, forced to disk): the game resumes at
    the last whole entry, and carries on being journalled."""
    path = tmp_path / "game.jsonl"
    states = _journalled_game(game, path, seed=7, entries=40)
    data = path.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    assert len(ends) == len(states), "one line per entry, the start included"
    rng = random.Random(game)
    cuts = sorted(rng.sample(range(ends[0], len(data) + 1), min(CUTS_PER_GAME, len(data) - ends[0] + 1)))
    for cut in cuts:
        crashed = tmp_path / f"cut-{cut}.jsonl"
        crashed.write_bytes(data[:cut])
        whole = sum(1 for e in ends if e <= cut)
        resumed = new_manual(game, None, 0, {}, resume=crashed)
        assert resumed.state.to_dict() == states[whole - 1], f"cut at byte {cut} of {len(data)}"
        assert crashed.stat().st_size == ends[whole - 1], "the torn tail is cut off before carrying on"
        try:
            resumed.undo()
            undone = 1
        except Refused:
            undone = 0
        resumed.journal.close()
        assert len(read_entries(crashed)[0]) == whole + undone, "the resumed game is journalled in the same file"


def test_undo_is_an_entry_and_a_resumed_game_goes_on_in_the_same_journal(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    first = new_manual("loop", 3, seed=2, options={}, save=path)
    first.act(str(first.state.legal_actions()[0]))
    first.undo()
    kinds = [e.get("kind") for e in read_entries(path)[0]]
    assert kinds == [None, "act", "undo"]
    first.journal.close()
    again = new_manual("loop", None, 0, {}, resume=path)
    again.act(str(again.state.legal_actions()[0]))
    again.journal.close()
    assert [e.get("kind") for e in read_entries(path)[0]] == [None, "act", "undo", "act"]
    with pytest.raises(JournalError, match="already holds a game"):
        new_manual("loop", 3, seed=2, options={}, save=path)


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda lines: [b"{not json", *lines[1:]], "neither a journal nor a JSON save"),
        (lambda lines: [b'{"format":"other"}', *lines[1:]], "neither a journal nor a JSON save"),
        (lambda lines: [lines[0], b"{not json", *lines[2:]], "line 2 is not a journal entry"),
        (lambda lines: [lines[0], b'{"kind":"fly","seq":1}', *lines[2:]], "kind 'fly'"),
        (lambda lines: [lines[0], lines[2], lines[1], *lines[3:]], "entries missing or out of order"),
        (lambda lines: [lines[0], b'{"kind":"act","seq":1,"text":"teleport"}', *lines[2:]], "entry 1 cannot be"),
        (lambda lines: [], "neither a journal nor a JSON save"),
    ],
)
def test_a_spoilt_journal_is_refused_by_name_and_left_as_it_was(tmp_path: Path, spoil, said: str) -> None:
    path = tmp_path / "g.jsonl"
    _journalled_game("bag-o-loot", path, seed=3, entries=4)
    lines = path.read_bytes().split(b"\n")[:-1]
    spoilt = b"".join(line + b"\n" for line in spoil(lines))
    path.write_bytes(spoilt)
    with pytest.raises(GameError, match=said) as refused:  # a JournalError, or the JSON save's own refusal
        new_manual("bag-o-loot", None, 0, {}, resume=path)
    assert str(path) in str(refused.value)
    assert path.read_bytes() == spoilt


def test_a_journal_of_another_game_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    _journalled_game("loop", path, seed=1, entries=2)
    with pytest.raises(JournalError, match="a journal of a loop game, not loot-roll"):
        new_manual("loot-roll", None, 0, {}, resume=path)


FULL_DISK = r"""
import json, resource, signal, sys
from pathlib import Path
from companion_ui.journal import JournalError
from companion_ui.session import new_manual
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails (EFBIG), as on a full disk
path = Path(sys.argv[1])
session = new_manual("loop", 3, seed=4, options={}, save=path)
resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 300, resource.RLIM_INFINITY))
taken = 0
while True:
    before = session.state.to_dict()
    try:
        session.act(str(session.state.legal_actions()[0]))
        taken += 1
    except JournalError as err:
        assert session.state.to_dict() == before, "a refused entry changed the game"
        print(json.dumps({"taken": taken, "error": str(err), "state": before}))
        break
"""


def test_a_full_disk_refuses_the_entry_with_a_clear_error_and_leaves_the_journal_whole(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["taken"] >= 1 and "could not write the journal" in result["error"] and str(path) in result["error"]
    entries, size = read_entries(path)
    assert size == path.stat().st_size, "no torn entry left behind"
    assert len(entries) == result["taken"] + 1
    assert new_manual("loop", None, 0, {}, resume=path).state.to_dict() == result["state"]


def test_kill_9_while_the_page_enters_moves_loses_no_move_it_was_told_was_taken() -> None:
    """Real servers killed with SIGKILL at random moments while a page posts moves, one round for each of the five
    games (`tabletop bench crash` runs 200): every move the page got an "ok" for is in the resumed game, and at most
    the one in flight besides."""
    from companion_ui.crash import GAMES, run_crash_bench

    result = run_crash_bench(kills=len(GAMES), seed=5)
    assert result["failures"] == [], result["failures"]
    assert result["intact"] == len(GAMES)
    assert result["moves_acknowledged"] >= 10, "the page entered too few moves to test anything"


@pytest.mark.parametrize("game", ["loop", "bag-o-loot", "the-loop"])
def test_a_finished_games_report_shows_its_scores_over_the_game_and_its_kept_moves(game: str, tmp_path: Path) -> None:
    from companion_ui.report import game_record, write_report

    path = tmp_path / "g.jsonl"
    rng = random.Random(3)
    session = new_manual(game, PLAYERS[game], seed=3, options={}, save=path)
    undone = 0
    while not session.state.is_over:
        offered = page_actions(session)
        if rng.random() < 0.05:
            try:
                session.undo()
                undone += 1
            except Refused:
                pass
        elif offered:
            session.act("end" if "end" in offered and rng.random() < 0.3 else rng.choice(offered))
    session.journal.close()
    record = game_record(path)
    assert record["over"] and record["scores"] == session.state.scores()
    assert record["undos"] == undone and record["entries"] == len(read_entries(path)[0]) - 1
    assert record["moves"][-1]["scores"] == session.state.scores()
    assert all(m["action"] for m in record["moves"])
    as_json, as_html = write_report(path, tmp_path / "out")
    assert json.loads(as_json.read_text()) == record
    page = as_html.read_text()
    assert page.count("<polyline") == PLAYERS[game] and page.count("<li>") == len(record["moves"])
    assert "Game over" in page and "<script" not in page


def test_report_of_a_missing_or_spoilt_journal_is_one_clear_line(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "companion_ui.cli", "report"]
    missing = subprocess.run([*cli, str(tmp_path / "none.jsonl")], cwd=ROOT, capture_output=True, text=True)
    assert missing.returncode == 2 and "no such journal" in missing.stderr and "Traceback" not in missing.stderr
    spoilt = tmp_path / "spoilt.jsonl"
    spoilt.write_text("{}\n")
    done = subprocess.run([*cli, str(spoilt), "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "expected the journal's header" in done.stderr
