"""Ctrl-C (or SIGTERM) stops `tabletop demo` at once, without a traceback, whatever pages are open or were open
and closed (issue 19: the push socket never read, so a closed tab went unnoticed and shutdown waited on it)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from tests.servers import launch, stop, when_up

STOP_WITHIN_S = 2.0


def _demo() -> tuple[subprocess.Popen[str], int]:
    proc, port = launch(["demo", "--no-speech", "--host", "127.0.0.1"])
    when_up(f"http://127.0.0.1:{port}/api/state", proc)
    return proc, port


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_server_stops_at_once_with_a_page_and_its_video_still_open(sig: int) -> None:
    proc, port = _demo()
    with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        assert ws.recv(timeout=10)  # the page's state, pushed as it connects
        with httpx.stream("GET", f"http://127.0.0.1:{port}/video.mjpg", timeout=10) as video:
            assert next(video.iter_bytes()).startswith(b"--frame")
            took, err = stop(proc, sig)
    assert took < STOP_WITHIN_S, f"took {took:.1f} s"
    assert proc.returncode == 0 and "Traceback" not in err and "CancelledError" not in err, err[-2000:]


def test_the_server_stops_at_once_after_pages_were_opened_and_closed() -> None:
    proc, port = _demo()
    for _ in range(3):
        with connect(f"ws://127.0.0.1:{port}/ws") as ws:
            ws.recv(timeout=10)
        with httpx.stream("GET", f"http://127.0.0.1:{port}/video.mjpg", timeout=10) as video:
            next(video.iter_bytes())
    time.sleep(0.5)
    took, err = stop(proc, signal.SIGINT)
    assert took < STOP_WITHIN_S, f"took {took:.1f} s"
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
    assert "Final:" in proc.stdout.read()  # the run's summary is printed, not lost to the interrupt


def test_the_demo_loops_unless_asked_once() -> None:
    from companion_ui.cli import build_parser, demo_loops

    parse = build_parser().parse_args
    assert demo_loops(parse(["demo"]))
    assert not demo_loops(parse(["demo", "--once"]))
    assert not demo_loops(parse(["demo", "--exit-at-end"]))
    assert demo_loops(parse(["demo", "--loop"]))  # the old flag is still taken


def test_a_page_opened_after_the_recording_ended_still_gets_its_last_picture(tmp_path: Path) -> None:
    """A browser shows an MJPEG part once the next begins: the last picture of an ended recording is sent again,
    or a page opened later shows a broken image (issue 19)."""
    import cv2
    import numpy as np

    clip = tmp_path / "short.mp4"
    writer = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*"mp4v"), 10, (320, 240))
    for k in range(10):
        writer.write(np.full((240, 320, 3), 60 + 10 * k, np.uint8))
    writer.release()
    proc, port = launch(
        ["run", "--video", str(clip), "--no-speech", "--host", "127.0.0.1", "--duration", "60"],
        stdout=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        status = ""
        while "ended" not in status and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                status = httpx.get(url + "/api/state", timeout=2).json().get("status", "")
            time.sleep(0.3)
        assert "ended" in status, status
        parts, started = [], time.monotonic()
        with httpx.stream("GET", url + "/video.mjpg", timeout=10) as video:
            buffer = b""
            for chunk in video.iter_bytes():
                buffer += chunk
                parts = [p for p in buffer.split(b"--frame") if b"\r\n\r\n" in p]
                if len(parts) >= 3 or time.monotonic() - started > 5:
                    break
        assert len(parts) >= 3, f"{len(parts)} pictures in 5 s from an ended recording"
        assert all(p.split(b"\r\n\r\n", 1)[1].startswith(b"\xff\xd8") for p in parts[:2]), "not JPEG pictures"
    finally:
        _took, err = stop(proc, signal.SIGINT)
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
