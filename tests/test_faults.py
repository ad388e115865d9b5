"""Faults the companion survives (issue 19), injected into the real pipeline: the real video reader and tracker,
with frames spoilt as a failing camera spoils them, or held back as a stalled one holds them."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from companion_ui.live import Frame, FrameSource, LiveLoop, demo_clip
from companion_ui.session import TrackedSession

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
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and live.processed < 300:
            statuses.add(session.status)
            time.sleep(0.02)
    finally:
        live.stop()
    assert any(s.startswith("skipped a frame that failed") for s in statuses), statuses
    assert live.processed >= 300, "the loop stopped taking frames after the burst or the stall"
    assert live._thread is not None and not live._thread.is_alive()  # stopped when asked, not by a crash
    assert session.decoder_state().get("actions"), "the tracker went on reading the table after the faults"
