"""Faults the companion survives (issue 19), injected into the real pipeline: the real video reader and tracker,
with frames spoilt as a failing camera spoils them, or held back as a stalled one holds them."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion_ui import speech
from companion_ui.live import Frame, FrameSource, LiveLoop, demo_clip
from companion_ui.session import TrackedSession, new_manual
from companion_ui.speech import Speaker, wav_seconds
from tracker.bench import matched_actions
from tracker.registration import REG_WIDTH, camera_shift, registration_image

SPOILT = (
    np.zeros((0, 0, 3), np.uint8),  # an empty buffer
    np.zeros((720, 1280), np.uint8),  # one channel where three were expected
    np.full((720, 1280, 3), np.nan, np.float32),  # not pixels at all
    np.zeros((3, 5, 3), np.uint8),  # a truncated frame
    np.random.default_rng(0).integers(0, 256, (720, 1280, 3), dtype=np.uint8),  # noise
)


class FailingCamera(FrameSource):
    """The real reader of the demo recording, with a burst of spoilt frames and then a stall of `stall_s`."""

    def __init__(self, burst: range, stall_at: int, stall_s: float) -> None:
        super().__init__(video=demo_clip(), realtime=True)
        self.burst, self.stall_at, self.stall_s = burst, stall_at, stall_s

    def _put(self, frame: Frame) -> None:
        if frame.index in self.burst:
            frame = replace(frame, image=SPOILT[frame.index % len(SPOILT)])
        if frame.index == self.stall_at:
            time.sleep(self.stall_s)  # nothing arrives meanwhile
        super()._put(frame)


def test_a_burst_of_spoilt_frames_and_a_stalled_camera_do_not_end_the_session() -> None:
    session = TrackedSession()
    source = FailingCamera(burst=range(20, 50), stall_at=120, stall_s=2.0)
    live = LiveLoop(source, session)
    statuses: set[str] = set()
    live.start()
    try:
        deadline = time.monotonic() + 60  # on a loaded machine the tracker reads fewer of the frames: give it time
        while time.monotonic() < deadline and (live.processed < 300 or not session.decoder_state().get("actions")):
            statuses.add(session.status)
            time.sleep(0.02)
    finally:
        live.stop()
    assert any(s.startswith("skipped a frame that failed") for s in statuses), statuses
    assert live.processed >= 300, "the loop stopped taking frames after the burst or the stall"
    assert live._thread is not None and not live._thread.is_alive()  # stopped when asked, not by a crash
    assert session.decoder_state().get("actions"), "the tracker went on reading the table after the faults"


def test_the_speech_engine_dying_mid_game_is_restarted_and_the_next_line_is_still_spoken(tmp_path: Path) -> None:
    """The real espeak worker killed between two announcements: the next one starts a new worker."""
    notices: list[str] = []
    with Speaker(play=False, keep_dir=tmp_path, notice=notices.append) as speaker:
        speaker.say("Player one explores three cards.")
        assert speaker.wait_idle(60)
        worker = speaker._synth._proc
        assert worker is not None and worker.poll() is None
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        speaker.say("Player one nabs the ace of spades.")
        assert speaker.wait_idle(60)
        spoken = list(speaker.history)
    assert [s.text for s in spoken] == ["Player one explores three cards.", "Player one nabs the ace of spades."]
    assert all(s.wav is not None and wav_seconds(s.wav) > 0.3 for s in spoken)
    assert speaker.status == "speech on" and notices == []


def test_a_speech_engine_gone_for_good_mid_game_leaves_the_game_in_text(tmp_path: Path, monkeypatch) -> None:
    """The worker dies and cannot be started again (the engine was removed under a running game): one notice, the
    page's status says speech is off, and the game's announcements go on in the log."""
    notices: list[str] = []
    speaker = Speaker(play=False, keep_dir=tmp_path, notice=notices.append)
    session = new_manual("loot-the-loop", None, 3, {}, speaker=speaker)
    try:
        session.announce("The game begins.")
        assert speaker.wait_idle(60) and speaker.history
        worker = speaker._synth._proc
        assert worker is not None
        monkeypatch.setattr(speech.sys, "executable", "/bin/false")  # no engine can start any more
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        before = len(session.log)
        session.act(session.snapshot()["groups"][0]["actions"][0])
        assert speaker.wait_idle(60)
        session.announce("Your turn.")
        assert len(session.log) > before + 1, "the game's lines still reach the page"
        assert session.speech_json()["status"].startswith("speech off"), session.speech_json()
        assert len(notices) == 1 and "Speech is off" in notices[0]
    finally:
        speaker.close()


class UnpluggedCamera(FrameSource):
    """Camera 0 as OpenCV shows it: the demo recording's frames until `unplug_at` and `ready()` (the test's moment:
    a loaded machine reads fewer frames, so a frame count alone may come before any move is read), then reads fail
    and the device cannot be opened `absent_opens` times (the cable is out), then it opens again where the table now
    is."""

    def __init__(self, unplug_at: int, absent_opens: int, ready: Callable[[], bool] = lambda: True) -> None:
        super().__init__(camera=0)
        self.unplug_at, self.absent_opens, self.ready = unplug_at, absent_opens, ready
        self.opens = 0
        self.clip = cv2.VideoCapture(str(demo_clip()))

    def _capture(self) -> Any:
        self.opens += 1
        plugged = not 1 < self.opens <= 1 + self.absent_opens
        unplug = (lambda n: n >= self.unplug_at and self.ready()) if self.opens == 1 else None
        return ClipCamera(self.clip, unplug, plugged)


class ClipCamera:
    """What cv2.VideoCapture gives for a camera: frames in real time, and read() failing once it is unplugged."""

    def __init__(self, clip: Any, unplug: Callable[[int], bool] | None, plugged: bool) -> None:
        self.clip, self.unplug, self.plugged, self.read_count = clip, unplug, plugged, 0
        self.unplugged = False

    def isOpened(self) -> bool:  # OpenCV's name
        return self.plugged

    def get(self, prop: int) -> float:
        return 30.0 if prop == cv2.CAP_PROP_FPS else 0.0

    def read(self) -> tuple[bool, np.ndarray | None]:
        self.unplugged = self.unplugged or (self.unplug is not None and self.unplug(self.read_count))
        if self.unplugged:
            return False, None
        time.sleep(1 / 30)
        ok, image = self.clip.read()
        self.read_count += 1
        return ok, image

    def release(self) -> None:
        pass


def test_a_camera_unplugged_mid_game_and_plugged_back_carries_on_with_the_same_game() -> None:
    session = TrackedSession()
    source = UnpluggedCamera(unplug_at=100, absent_opens=1, ready=lambda: bool(session.decoder_state().get("actions")))
    live = LiveLoop(source, session)
    statuses: list[str] = []
    live.start()
    try:
        deadline = time.monotonic() + 60
        moves_before = 0
        while time.monotonic() < deadline and (source.opens < 3 or live.processed < 200):
            if session.status and (not statuses or statuses[-1] != session.status):
                statuses.append(session.status)
            if source.opens <= 1:
                moves_before = len(session.decoder_state().get("actions", []))
            time.sleep(0.02)
    finally:
        live.stop()
    lost = [i for i, s in enumerate(statuses) if s.startswith("Lost camera 0")]
    absent = [i for i, s in enumerate(statuses) if s.startswith("No camera 0 found")]
    back = [i for i, s in enumerate(statuses) if s.startswith("reading camera 0")]
    assert lost and absent and back and lost[0] < absent[0] < back[-1], statuses
    assert live.processed >= 200, "frames were taken again after the camera came back"
    assert moves_before > 0, "the tracker had read moves before the unplug"
    assert len(session.decoder_state().get("actions", [])) >= moves_before, "the game from before the unplug was kept"


def bumped(image: np.ndarray, k: float) -> np.ndarray:
    """The picture a camera knocked `k` of the way (0-1) through a jolt of 60 px, 30 px and 3 degrees shows."""
    h, w = image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), 3.0 * k, 1.0)
    m[:, 2] += (60 * k, 30 * k)
    return cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_REPLICATE)


def follow(frames: list[np.ndarray], bump_at: int | None) -> tuple[TrackedSession, LiveLoop]:
    """The demo's frames through the real frame loop (no threads, no pacing), the camera knocked at `bump_at`."""
    session = TrackedSession()
    live = LiveLoop(FrameSource(video=demo_clip(), realtime=False), session)
    for i, image in enumerate(frames):
        if bump_at is not None and i >= bump_at:
            image = bumped(image, min((i - bump_at + 1) / 4, 1.0))  # the jolt takes four frames
        live.step(Frame(i, image, time.monotonic()))
    return session, live


def test_a_camera_bumped_mid_game_goes_on_reading_the_same_game_where_the_table_now_lies() -> None:
    capture = cv2.VideoCapture(str(demo_clip()))
    frames = []
    while len(frames) < 440:  # through two moves after the bump
        ok, image = capture.read()
        assert ok
        frames.append(image)
    capture.release()
    still, _ = follow(frames, None)
    knocked, live = follow(frames, 300)  # between two moves, while the table is still
    truth = recorded_actions()
    steady, moved = still.decoder_state()["actions"], knocked.decoder_state()["actions"]
    # the knock loses no move, and reads as many of the recording's moves right (aligned in the game's order, as the
    # tracker bench aligns them) as the still camera. Not the same list: the frames after the jolt differ, so the
    # reader may read one move right that the still camera misreads.
    assert len(moved) == len(steady), (steady, moved)
    right, right_still = len(matched_actions(truth, moved)), len(matched_actions(truth, steady))
    assert right >= right_still >= 4, (truth, steady, moved)
    assert len(live.tracker.camera_moves) == 1 and "moved" in live.tracker.camera_moves[0]
    assert any("The camera moved" in e.text for e in knocked.log)
    assert not any("camera moved" in e.text for e in still.log)


def recorded_actions() -> list[str]:
    """The demo recording's moves in order, as it was rendered (companion_ui/demo/actions.json)."""
    return [move["action"] for move in json.loads((demo_clip().parent / "actions.json").read_text())]


def test_cards_moved_on_a_still_camera_are_not_a_camera_move() -> None:
    capture = cv2.VideoCapture(str(demo_clip()))
    frames = [capture.read()[1] for _ in range(240)]
    capture.release()
    before, after = registration_image(frames[90]), registration_image(frames[235])  # 'explore 8' and 'look' between
    assert camera_shift(before, after) is None
    jolted = registration_image(bumped(frames[90], 1.0))
    shifts = []
    for seed in (1, 2):  # its RANSAC has a generator of its own: what drew from OpenCV's before it does not matter
        cv2.setRNGSeed(seed)
        shifts.append(camera_shift(before, jolted))
    shift = shifts[0]
    assert shift is not None and np.array_equal(shift, shifts[1])
    h, w = frames[90].shape[:2]
    centre = np.array([w / 2, h / 2]) * REG_WIDTH / w  # the jolt turns about the frame's centre: it maps back there
    m = cv2.getRotationMatrix2D((w / 2, h / 2), 3.0, 1.0)
    m[:, 2] += (60, 30)
    back = (m[:, :2] @ (centre * w / REG_WIDTH) + m[:, 2]) * REG_WIDTH / w  # where the centre went
    assert np.allclose(shift[:, :2] @ back + shift[:, 2], centre, atol=2.0)


def test_cards_gathered_into_one_pile_on_a_plain_cloth_are_not_a_camera_move() -> None:
    """Session 14: three piles gathered into one moved most of the picture's features together (the cloth holds
    none) and were taken for a 170 px camera move, which lost the game. Only a move of the whole picture counts."""
    rng = np.random.default_rng(0)
    cloth = np.full((720, 1280, 3), (120, 60, 80), np.uint8)
    pile = rng.integers(0, 256, (300, 170, 3), dtype=np.uint8)  # the gathered cards: the only features in view
    before, after = cloth.copy(), cloth.copy()
    before[360:660, 360:530] = pile
    after[160:460, 800:970] = pile  # carried across the table in one piece
    assert camera_shift(registration_image(before), registration_image(after)) is None
    textured = cv2.GaussianBlur(rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8), (0, 0), 2.0)
    moved = np.roll(textured, (20, 40), axis=(0, 1))
    shift = camera_shift(registration_image(textured), registration_image(moved))
    assert shift is not None and np.allclose(shift[:, 2], (-20, -10), atol=1.5)  # at REG_WIDTH: half the pixels
