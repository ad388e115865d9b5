"""`tabletop bench soak`: the companion serving pages while its pipeline runs at 30 fps (issue 19's load bar).

The demo recording loops in real time through the frame thread, the tracker, speech (synthesised, not played) and
the page's server: a real uvicorn on a free local port, as `tabletop demo` runs it. Phases alternate: no page open,
then `clients` pages, then none again, and so on, so a drift of the machine over the run falls on both alike. Each
page does what the companion page does in a browser: it holds the push WebSocket and reads every message, reads the
MJPEG video as it streams, and fetches the state every few seconds.

The pages run in a process of their own at the lowest CPU priority: on a game night they are phones, and here they
must not take the two cores from the frame loop they are meant to load only through the server.

Measured per phase: the frame loop's mean cost per frame (what serving the pages slows it by; the mean, because a
few frames the tracker recognises cost far more than the many its motion gate passes over), the frames it processed
per second of video, and frames dropped. Over the whole run: resident memory of the companion and its
speech worker every 10 s, its growth from the tenth minute (or the first phase) to the end and its slope.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import psutil

STATE_EVERY_S = 2.0  # how often a page fetches the state (beside what the socket pushes)
MEMORY_EVERY_S = 10.0


@dataclass
class PageCounts:
    """What one simulated page received."""

    pushes: int = 0  # WebSocket messages
    pictures: int = 0  # MJPEG parts
    states: int = 0  # /api/state answers
    errors: int = 0
    last_error: str = ""

    def failed(self, what: str) -> None:
        self.errors += 1
        self.last_error = what


def _page(base: str, stop: threading.Event, counts: PageCounts) -> list[threading.Thread]:
    """One page's three connections, each in its own thread until `stop`."""
    import httpx
    from websockets.sync.client import connect

    def failed(err: Exception) -> None:
        counts.failed(f"{type(err).__name__}: {err}")

    def push() -> None:
        try:
            with connect(base.replace("http", "ws", 1) + "/ws") as ws:
                while not stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        ws.recv(timeout=0.5)
                        counts.pushes += 1
        except Exception as err:  # counted: the bench reports every failed connection
            if not stop.is_set():
                failed(err)

    def video() -> None:
        try:
            with httpx.stream("GET", base + "/video.mjpg", timeout=None) as reply:
                for chunk in reply.iter_bytes():
                    counts.pictures += chunk.count(b"--frame")
                    if stop.is_set():
                        break
        except Exception as err:
            if not stop.is_set():
                failed(err)

    def state() -> None:
        with httpx.Client(base_url=base, timeout=10) as client:
            while not stop.wait(STATE_EVERY_S):
                try:
                    client.get("/api/state").raise_for_status()
                    counts.states += 1
                except Exception as err:
                    failed(err)

    threads = [threading.Thread(target=f, daemon=True) for f in (push, video, state)]
    for t in threads:
        t.start()
    return threads


def _browser_pages(base: str, clients: int, ready: Any, stop: Any, out: Any) -> None:
    """`clients` tabs of headless Chromium (Debian's, driven by Playwright) on the companion page itself."""
    import shutil

    from playwright import sync_api

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise RuntimeError("--browsers needs Debian's chromium (apt-get install chromium)")
    counts = [PageCounts() for _ in range(clients)]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        pages = []
        for c in counts:
            page = browser.new_page()

            def on_socket(ws: Any, c: PageCounts = c) -> None:
                ws.on("framereceived", lambda _frame, c=c: setattr(c, "pushes", c.pushes + 1))

            page.on("websocket", on_socket)
            page.on("pageerror", lambda err, c=c: c.failed(str(err)))
            page.goto(base + "/")
            pages.append(page)
        ready.set()
        while not stop.is_set():
            pages[0].wait_for_timeout(500)  # Playwright delivers its events while it waits
        for page, c in zip(pages, counts, strict=True):
            c.pictures = int(page.evaluate("() => document.getElementById('video').naturalWidth > 0"))
            c.states = 1  # the page loaded its state
        browser.close()
    out.put([asdict(c) for c in counts])


def _pages_process(base: str, clients: int, ready: Any, stop: Any, out: Any, browsers: bool = False) -> None:
    """The pages of one phase, in their own process at the lowest priority: `ready` once all are connected, counts
    back through `out` after `stop`. `browsers`: real Chromium tabs instead of clients that do what a page does."""
    with contextlib.suppress(OSError):
        os.nice(19)
    if browsers:
        _browser_pages(base, clients, ready, stop, out)
        return
    halt = threading.Event()
    counts = [PageCounts() for _ in range(clients)]
    threads = [t for c in counts for t in _page(base, halt, c)]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(c.pushes and c.pictures for c in counts):
        time.sleep(0.05)
    ready.set()
    stop.wait()
    halt.set()
    for t in threads:
        t.join(timeout=5)
    out.put([asdict(c) for c in counts])


class Pages:
    """`clients` pages open for one phase (none: nothing is started)."""

    def __init__(self, base: str, clients: int, browsers: bool = False) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.clients = clients
        self.ready, self.stop, self.out = ctx.Event(), ctx.Event(), ctx.Queue()
        args = (base, clients, self.ready, self.stop, self.out, browsers)
        self.process = ctx.Process(target=_pages_process, args=args)
        if clients:
            self.process.start()
            self.ready.wait(60)

    def close(self) -> list[dict]:
        if not self.clients:
            return []
        self.stop.set()
        counts = self.out.get(timeout=60)
        self.process.join(timeout=10)
        return counts


def _companion_mb(me: psutil.Process, pages: Pages) -> float:
    """Resident memory of the companion and its speech worker, not of the pages' process and its browser."""
    skip: set[int] = set()
    if pages.clients:
        with contextlib.suppress(psutil.Error):
            holder = psutil.Process(pages.process.pid)
            skip = {holder.pid, *(c.pid for c in holder.children(recursive=True))}
    mb = me.memory_info().rss / 2**20
    for child in me.children(recursive=True):
        if child.pid in skip:
            continue
        with contextlib.suppress(psutil.Error):
            mb += child.memory_info().rss / 2**20
    return mb


@dataclass
class Phase:
    clients: int
    seconds: float
    frames_delivered: int
    frames_processed: int
    median_frame_ms: float | None
    mean_frame_ms: float | None  # the headline: a few recognised frames cost far more than the many gated ones
    pages: list[dict]


def run_soak(
    minutes: float,
    clients: int = 8,
    phase_s: float = 60.0,
    progress: Callable[[float, float], None] | None = None,
    browsers: bool = False,
) -> dict[str, Any]:
    """Serve the looping demo for `minutes`, phases of `phase_s` alternating no pages and `clients` pages (real
    Chromium tabs with `browsers`)."""
    import uvicorn

    from companion_ui.run import build, demo_options
    from companion_ui.server import free_port

    opts = demo_options("loot-the-loop", loop=True, port=free_port())
    companion = build(opts, notice=lambda _: None)
    assert companion.live is not None and companion.speaker is not None
    companion.session.echo = None  # the bench prints its figures, not the game's announcements
    companion.speaker.play = False  # synthesised, not played: no sound card is needed, and none is measured
    config = uvicorn.Config(
        companion.app, host="127.0.0.1", port=opts.port, log_level="warning", access_log=False, ws="websockets-sansio"
    )
    server = uvicorn.Server(config)
    serving = threading.Thread(target=server.run, daemon=True)
    serving.start()
    while not server.started:
        time.sleep(0.05)
    live = companion.live
    live.start()
    me = psutil.Process()
    memory: list[tuple[float, float]] = []
    phases: list[Phase] = []
    start = time.monotonic()
    total = minutes * 60
    try:
        while time.monotonic() - start < total:
            n = clients if len(phases) % 2 else 0
            pages = Pages(f"http://127.0.0.1:{opts.port}", n, browsers)  # connected before the phase is timed
            began, delivered, processed = time.monotonic(), live.source.delivered, live.processed
            phase_end = began + min(phase_s, max(total - (began - start), 1.0))
            while time.monotonic() < phase_end:
                memory.append((round(time.monotonic() - start, 1), round(_companion_mb(me, pages), 1)))
                if progress:
                    progress(time.monotonic() - start, total)
                time.sleep(min(MEMORY_EVERY_S, max(phase_end - time.monotonic(), 0.0)))
            done = live.processed - processed
            costs = list(live.costs)[-done:] if done else []
            seconds = time.monotonic() - began
            phases.append(
                Phase(
                    n,
                    round(seconds, 1),
                    live.source.delivered - delivered,
                    done,
                    round(statistics.median(costs) * 1000, 2) if costs else None,
                    round(statistics.fmean(costs) * 1000, 2) if costs else None,
                    pages.close(),
                )
            )
    finally:
        companion.closing.set()
        server.should_exit = True
        serving.join(timeout=10)
        companion.close()
    return {**summarise(phases, memory, clients, minutes), "pages_were": "Chromium tabs" if browsers else "clients"}


def summarise(phases: list[Phase], memory: list[tuple[float, float]], clients: int, minutes: float) -> dict[str, Any]:
    def pooled(n: int) -> dict[str, Any]:
        chosen = [p for p in phases if p.clients == n]
        seconds = sum(p.seconds for p in chosen)
        weights = [p.frames_processed for p in chosen if p.mean_frame_ms is not None]
        spent = sum(p.mean_frame_ms * p.frames_processed for p in chosen if p.mean_frame_ms is not None)
        medians = [p.median_frame_ms for p in chosen if p.median_frame_ms is not None]
        return {
            "phases": len(chosen),
            "seconds": round(seconds, 1),
            "mean_frame_ms": round(spent / sum(weights), 2) if sum(weights) else None,
            "median_frame_ms": round(statistics.median(medians), 2) if medians else None,
            "processed_fps": round(sum(p.frames_processed for p in chosen) / seconds, 2) if seconds else None,
            "dropped_share": round(
                1 - sum(p.frames_processed for p in chosen) / max(sum(p.frames_delivered for p in chosen), 1), 4
            ),
        }

    alone, loaded = pooled(0), pooled(clients)
    slowdown = None
    if alone["mean_frame_ms"] and loaded["mean_frame_ms"]:
        slowdown = round(loaded["mean_frame_ms"] / alone["mean_frame_ms"] - 1, 4)
    pages = [page for p in phases for page in p.pages]
    settled = [m for t, m in memory if t >= min(600.0, minutes * 60 / 3)]
    return {
        "minutes": minutes,
        "clients": clients,
        "no_pages": alone,
        "with_pages": loaded,
        "frame_loop_slowdown": slowdown,
        "pages": {
            "opened": len(pages),
            "pushes": sum(p["pushes"] for p in pages),
            "pictures": sum(p["pictures"] for p in pages),
            "states": sum(p["states"] for p in pages),
            "errors": sum(p["errors"] for p in pages),
            "starved": sum(1 for p in pages if not (p["pushes"] and p["pictures"])),
            "last_error": next((p["last_error"] for p in pages if p["last_error"]), ""),
        },
        "memory": {
            "samples": memory,
            "rss_start_mb": memory[0][1] if memory else None,
            "rss_settled_mb": settled[0] if settled else None,
            "rss_end_mb": memory[-1][1] if memory else None,
            "growth_after_settling_mb": round(settled[-1] - settled[0], 1) if settled else None,
            "slope_mb_per_hour": _slope(memory[len(memory) // 3 :]),
        },
        "phases": [asdict(p) | {"pages": len(p.pages)} for p in phases],
    }


def _slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares MB per hour."""
    if len(points) < 3:
        return None
    xs, ys = [t / 3600 for t, _ in points], [m for _, m in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den, 2) if den else None


def format_summary(r: dict[str, Any]) -> str:
    a, b, pages, mem = r["no_pages"], r["with_pages"], r["pages"], r["memory"]
    slow = "n/a" if r["frame_loop_slowdown"] is None else f"{r['frame_loop_slowdown']:+.1%}"
    return "\n".join(
        [
            f"Soak: the demo looping at 30 fps for {r['minutes']} min, phases alternating no page and "
            f"{r['clients']} pages ("
            + (
                "headless Chromium tabs on the page"
                if r.get("pages_were") == "Chromium tabs"
                else f"push socket, MJPEG video, state every {STATE_EVERY_S:.0f} s"
            )
            + ")",
            f"  frame loop, mean per frame: no pages {a['mean_frame_ms']} ms, {r['clients']} pages "
            f"{b['mean_frame_ms']} ms: slowdown {slow} (bar: at most +10%); median {a['median_frame_ms']} / "
            f"{b['median_frame_ms']} ms",
            f"  frames processed per second of video: {a['processed_fps']} / {b['processed_fps']}; dropped "
            f"{a['dropped_share']:.1%} / {b['dropped_share']:.1%}",
            f"  pages: {pages['opened']} opened, {pages['pushes']} pushes, {pages['pictures']} pictures, "
            f"{pages['states']} state fetches, {pages['errors']} errors, {pages['starved']} got no push or no picture"
            + (f" (last error: {pages['last_error']})" if pages["last_error"] else ""),
            f"  memory (companion and speech worker): {mem['rss_start_mb']} MB at the start, {mem['rss_settled_mb']} "
            f"MB once settled, {mem['rss_end_mb']} MB at the end; growth after settling "
            f"{mem['growth_after_settling_mb']} MB, slope {mem['slope_mb_per_hour']} MB/h",
        ]
    )
