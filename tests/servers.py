"""Real `tabletop` servers for the tests, started as a user starts them (a subprocess on a free port), waited for,
and stopped by a signal."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx

from companion_ui.server import free_port

ROOT = Path(__file__).resolve().parents[1]
TABLETOP = [sys.executable, "-m", "companion_ui.cli"]


def launch(
    args: list[str], stdout: int = subprocess.PIPE, stderr: int = subprocess.PIPE
) -> tuple[subprocess.Popen[str], int]:
    """`tabletop ARGS --port N` on a free port N (not yet answering: see `when_up`)."""
    port = free_port()
    proc = subprocess.Popen([*TABLETOP, *args, "--port", str(port)], cwd=ROOT, stdout=stdout, stderr=stderr, text=True)
    return proc, port


def when_up(url: str, proc: subprocess.Popen[str] | None = None, within: float = 60.0) -> httpx.Response:
    """The first answer from a server that prints its links just before it starts listening."""
    deadline = time.monotonic() + within
    while True:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the server stopped: {proc.stderr.read()[-2000:] if proc.stderr else ''}")
        try:
            return httpx.get(url, timeout=5)
        except httpx.ConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def stop(proc: subprocess.Popen[str], sig: int) -> tuple[float, str]:
    """Sends `sig`, waits (at most 10 s), returns how long the server took and what it wrote to stderr."""
    started = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("still running 10 s after the signal") from None
    return time.monotonic() - started, proc.stderr.read() if proc.stderr else ""
