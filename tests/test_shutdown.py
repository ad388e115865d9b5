"""Ctrl-C (or SIGTERM) stops `tabletop demo` at once, without a traceback, whatever pages are open or were open
and closed (issue 19: the push socket never read, so a closed tab went unnoticed and shutdown waited on it)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parents[1]
STOP_WITHIN_S = 2.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _demo() -> tuple[subprocess.Popen[str], int]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion_ui.cli", "demo", "--no-speech", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/state", timeout=2).status_code == 200:
                return proc, port
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("the demo did not answer within 60 s")


def _stop(proc: subprocess.Popen[str], sig: int) -> tuple[float, str]:
    started = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("still running 10 s after the signal") from None
    took = time.monotonic() - started
    return took, proc.stderr.read() if proc.stderr else ""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_server_stops_at_once_with_a_page_and_its_video_still_open(sig: int) -> None:
    proc, port = _demo()
    with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        assert ws.recv(timeout=10)  # the page's state, pushed as it connects
        with httpx.stream("GET", f"http://127.0.0.1:{port}/video.mjpg", timeout=10) as video:
            assert next(video.iter_bytes()).startswith(b"--frame")
            took, err = _stop(proc, sig)
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
    took, err = _stop(proc, signal.SIGINT)
    assert took < STOP_WITHIN_S, f"took {took:.1f} s"
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
    assert "Final:" in proc.stdout.read()  # the run's summary is printed, not lost to the interrupt
