"""A camera session's journal (issue 19): the tracker's checkpoint goes to disk after every table it reads and every
correction, before anything is told; `tabletop run --resume` carries the game on from the last whole one, so a crash
mid-game costs nothing the camera had read."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion_ui.journal import JournalError, read_entries
from companion_ui.live import Frame, FrameSource, LiveLoop, demo_clip
from companion_ui.session import TrackedSession, new_manual, new_tracked
from tracker.loot_the_loop import LootTheLoopDecoder

# a still table between two moves of the demo as the tracker's recogniser reads it ('explore 8' told, 'look' not
# begun). A crash while a table is still being read loses that table's frames (the checkpoint holds what was decoded,
# not the frames in flight): with session 15's recogniser frame 450, the previous one's quiet point, is such, and with
# session 17's (the corner refiner) frames 460 and 480, just after 'return 8C' (a resume there reads 'mark').
CRASH_AT = 530
END_AT = 680  # ...and the last frame fed: two more moves read after the crash ('look', 'explore 2')


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    capture = cv2.VideoCapture(str(demo_clip()))
    out = [capture.read()[1] for _ in range(END_AT)]
    capture.release()
    return out


@pytest.fixture(scope="module")
def journalled(frames: list[np.ndarray], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The demo followed up to CRASH_AT with a journal, and what the session held then (the crash)."""
    journal = tmp_path_factory.mktemp("camera") / "camera.jsonl"
    return journal, follow(new_tracked(save=journal), frames[:CRASH_AT], 0).decoder_state()


def follow(session: TrackedSession, frames: list[np.ndarray], start: int) -> TrackedSession:
    """Frames through the real frame loop (no threads, no pacing), numbered from `start`."""
    live = LiveLoop(FrameSource(video=demo_clip(), realtime=False), session)
    for i, image in enumerate(frames):
        live.step(Frame(start + i, image, time.monotonic()))
    return session


def test_a_camera_game_crashed_mid_game_resumes_from_its_journal_and_reads_on_the_same(
    frames: list[np.ndarray], journalled: tuple[Path, dict], tmp_path: Path
) -> None:
    whole = follow(TrackedSession(), frames, 0).decoder_state()
    kept, told = journalled
    journal = tmp_path / "camera.jsonl"
    journal.write_bytes(kept.read_bytes())  # resuming appends: the module's copy stays as the crash left it
    assert len(told["actions"]) >= 4, told["actions"]  # the camera had read moves before the crash
    resumed = new_tracked(resume=journal)
    again = resumed.decoder_state()
    assert again["actions"] == told["actions"] and again["deck"] == told["deck"] and again["notes"] == told["notes"]
    follow(resumed, frames[CRASH_AT:], CRASH_AT)
    after = resumed.decoder_state()
    # The resumed game reads on as if never stopped: the same steps, every one told the same way. Only a step both
    # runs hold unsure may end on another best reading: after a resume the frame loop reads the still table again,
    # which may tip a near-tie of the beam (session 21: the first move's pile order, 'order 3 1 2' at 0.55 against
    # 'order 3 2 1', told as the former with a "please check" in both runs).
    assert after["said_steps"] == whole["said_steps"], "the resumed game told what the uninterrupted one told"
    assert len(after["steps"]) == len(whole["steps"]) > len(told["steps"])
    differ = {k for k, (a, b) in enumerate(zip(after["steps"], whole["steps"], strict=True)) if a != b}
    assert differ <= set(after["unsure_steps"]) & set(whole["unsure_steps"]), (after["steps"], whole["steps"])
    entries, _ = read_entries(journal)
    assert entries[0]["mode"] == "camera" and {e["kind"] for e in entries[1:]} == {"camera"}


def test_a_camera_journal_torn_anywhere_resumes_at_its_last_whole_checkpoint(
    journalled: tuple[Path, dict], tmp_path: Path
) -> None:
    journal = journalled[0]
    data = journal.read_bytes()
    entries, _ = read_entries(journal)
    ends = np.cumsum([len(line) + 1 for line in data.split(b"\n")[:-1]])  # where each whole entry ends
    rng = random.Random(3)
    for cut in sorted(rng.sample(range(int(ends[0]), len(data) + 1), 12)):
        torn = tmp_path / f"torn-{cut}.jsonl"
        torn.write_bytes(data[:cut])
        whole = int(np.searchsorted(ends, cut, side="right"))  # entries (the header first) wholly before the cut
        state = new_tracked(resume=torn).decoder_state()
        expected = LootTheLoopDecoder.restore(entries[whole - 1]["checkpoint"]).state() if whole > 1 else {}
        assert state == expected, cut


def test_a_journal_of_the_other_kind_is_refused_by_name(tmp_path: Path) -> None:
    manual = tmp_path / "manual.jsonl"
    new_manual("loot-the-loop", None, 0, {}, save=manual).journal.close()
    with pytest.raises(JournalError, match="carry it on with --manual"):
        new_tracked(resume=manual)
    camera = tmp_path / "camera.jsonl"
    new_tracked(save=camera).journal.close()
    with pytest.raises(JournalError, match="carry it on with --camera or --video"):
        new_manual("loot-the-loop", None, 0, {}, resume=camera)
    with pytest.raises(JournalError, match="not a journal"):
        new_tracked(resume=Path(__file__))


def test_a_camera_games_report_lists_the_moves_the_tracker_holds(journalled: tuple[Path, dict], tmp_path: Path) -> None:
    from companion_ui.report import write_report

    journal, told = journalled
    as_json, as_html = write_report(journal, tmp_path / "report")
    record = json.loads(as_json.read_text())
    assert [m["action"] for m in record["moves"]] == told["actions"]
    assert record["scores"] == [told["score"]] and not record["over"]
    assert "<svg" in as_html.read_text() and "return 8C" in as_html.read_text()


def test_a_full_disk_is_told_once_leaves_the_journal_whole_and_the_game_goes_on(
    journalled: tuple[Path, dict], tmp_path: Path, monkeypatch
) -> None:
    from companion_ui import journal as journal_module
    from tracker.decoder import TrackerEvent

    copy = tmp_path / "camera.jsonl"
    copy.write_bytes(journalled[0].read_bytes())
    session = new_tracked(resume=copy)
    before = copy.read_bytes()

    def no_space(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal_module.os, "write", no_space)
    for k in range(3):  # three tables read while the disk is full
        session.on_events([TrackerEvent("event", 20.0 + k, 600 + k, f"Table {k}.")])
    told = [e.text for e in session.log if "could not be saved" in e.text]
    assert len(told) == 1 and "No space left on device" in told[0]
    assert copy.read_bytes() == before, "no torn entry left behind"
    assert session.decoder_state()["actions"] == journalled[1]["actions"]  # the game goes on in memory
    monkeypatch.undo()
    session.on_events([TrackerEvent("event", 30.0, 700, "Space again.")])
    entries, size = read_entries(copy)
    assert size == copy.stat().st_size and len(entries) == len(read_entries(journalled[0])[0]) + 1
