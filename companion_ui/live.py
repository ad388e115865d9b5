"""The live pipeline: a frame source that keeps only the newest frame, and the loop that feeds the tracker.

Why two threads: a camera delivers frames whether or not we are ready, and a frame that waits in a queue is a
frame from the past. The reader thread overwrites one slot; the tracker thread always takes the newest and the
ones in between are dropped (counted, so the benchmark can say how many). Speech and the web page are fed from
the tracker thread through the session, which only queues: nothing downstream can hold up the frame loop.

A camera that is missing or lost is a status line and a retry every few seconds, not a crash; a video file is
paced at its own frame rate, as a camera would deliver it, and may loop (the demo).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion_ui.session import TrackedSession
from companion_ui.table_setup import TableSetup
from vision.synth.camera import apply_homography

RETRY_S = 2.0
JPEG_EVERY_S = 0.1  # the page's video: ten pictures a second is plenty, and JPEG costs CPU
PREVIEW_WIDTH = 960
MAT_EVERY_S = 0.5  # a printed mat's markers are looked for this often (about 7 ms a look)


@dataclass(frozen=True)
class Frame:
    index: int  # frame number in the source (the video file's own numbering)
    image: np.ndarray
    arrived: float  # time.monotonic() when the source delivered it
    lap: int = 0  # how many times a looping video has restarted


class FrameSource:
    """A camera (`camera=N`) or a video file, read in its own thread; `newest()` returns the latest frame once."""

    def __init__(
        self,
        camera: int | None = None,
        video: Path | None = None,
        realtime: bool = True,
        loop: bool = False,
        notice: Callable[[str], None] = print,
    ) -> None:
        if (camera is None) == (video is None):
            raise ValueError("give a camera number or a video file, not both")
        if video is not None and not Path(video).is_file():
            raise FileNotFoundError(f"{video}: no such video file")
        self.camera, self.video = camera, video
        self.realtime, self.loop = realtime, loop
        self.notice = notice
        self.fps = 30.0
        self.status = "starting"
        self.ended = False
        self.delivered = 0
        self.arrivals: deque[tuple[int, int, float]] = deque(maxlen=20_000)  # (lap, index, arrived): 11 min at 30 fps
        self._slot: Frame | None = None
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="frames", daemon=True)
        self._told: set[str] = set()

    @property
    def name(self) -> str:
        return f"camera {self.camera}" if self.camera is not None else str(self.video)

    def start(self) -> FrameSource:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._thread.join(timeout=5)

    def newest(self, timeout: float = 0.5) -> Frame | None:
        """The latest frame not yet taken (older ones are dropped), or None after `timeout`."""
        with self._cond:
            self._cond.wait_for(lambda: self._slot is not None or self._stop.is_set(), timeout=timeout)
            frame, self._slot = self._slot, None
            return frame

    def _put(self, frame: Frame) -> None:
        with self._cond:
            self._slot = frame
            self.delivered += 1
            self.arrivals.append((frame.lap, frame.index, frame.arrived))
            self._cond.notify_all()

    def _tell(self, key: str, text: str) -> None:
        self.status = text
        if key not in self._told:
            self._told.add(key)
            self.notice(text)

    def _run(self) -> None:
        lap = 0
        while not self._stop.is_set():
            capture = self._open()
            if capture is None:
                self._stop.wait(RETRY_S)
                continue
            self._told.discard("lost")
            finished = self._read_all(capture, lap)
            capture.release()
            if self.video is not None and finished:
                if not self.loop:
                    self.ended = True
                    self.status = f"the recording has ended ({self.delivered} frames)"
                    return
                lap += 1
            elif self.camera is not None and not self._stop.is_set():
                self._tell("lost", f"Lost {self.name}: is it unplugged? Retrying every {RETRY_S:.0f} s.")
                self._stop.wait(RETRY_S)

    def _capture(self) -> Any:
        """OpenCV's reader of the source (the fault tests put an unplugged camera here)."""
        return cv2.VideoCapture(self.camera if self.camera is not None else str(self.video))

    def _open(self) -> Any:
        capture = self._capture()
        if not capture.isOpened():
            capture.release()
            if self.video is not None:
                self._tell("open", f"{self.video}: not a video OpenCV can open (expected MP4/AVI/MKV).")
                self._stop.set()
                self.ended = True
            else:
                self._tell("open", f"No {self.name} found: plug one in or pick another with --camera N. "
                           f"Retrying every {RETRY_S:.0f} s.")  # fmt: skip
            return None
        fps = capture.get(cv2.CAP_PROP_FPS)
        self.fps = float(fps) if fps and fps > 1 else 30.0
        self.status = f"reading {self.name} at {self.fps:.0f} fps"
        return capture

    def _read_all(self, capture: Any, lap: int) -> bool:
        """Deliver frames until the source ends (True) or fails or we are stopped (False)."""
        start = time.monotonic()
        index = 0
        while not self._stop.is_set():
            ok, image = capture.read()
            if not ok:
                return self.video is not None
            if self.realtime and self.video is not None:
                delay = start + index / self.fps - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
            self._put(Frame(index, image, time.monotonic(), lap))
            index += 1
        return False


class LiveLoop:
    """Takes the newest frame, feeds the tracker, hands its events to the session, draws the page's video."""

    def __init__(
        self,
        source: FrameSource,
        session: TrackedSession,
        recognise: Callable | None = None,
        read_regions: Callable | None = None,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self.source = source
        self.session = session
        self.on_end = on_end
        if recognise is None:
            from tracker.replay import make_recognise

            recognise, read_regions = make_recognise()
        self.recognise, self.read_regions = recognise, read_regions
        self.tracker: Any = None
        self.lap = 0
        self.processed = 0
        self.costs: deque[float] = deque(maxlen=10_000)
        self.jpeg: bytes = b""
        self.image: np.ndarray | None = None  # the newest camera picture, as read (the page's table setup clicks on it)
        self.table: TableSetup | None = None  # the table's calibration and zones, set up on the page
        self.jpeg_version = 0
        self._jpeg_at = 0.0
        self._mat_at = 0.0
        self._last_index = 0
        self._moves_told = 0  # the tracker's camera moves already told to the page
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tracker", daemon=True)
        self._new_tracker()

    def _new_tracker(self) -> None:
        from tracker.loot_the_loop import LABELS
        from tracker.pipeline import Channel, Tracker, TrackerConfig

        config = TrackerConfig()
        channel = Channel(self.session.decoder, LABELS, config.min_reads)
        self.tracker = Tracker(self.recognise, [channel], self.source.fps, config, self.read_regions)
        self._moves_told = 0

    def start(self) -> LiveLoop:
        self.source.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.source.stop()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        finished = False
        while not self._stop.is_set():
            frame = self.source.newest(timeout=0.25)
            if frame is None:
                if self.source.ended and not finished:
                    finished = True
                    self._finish()
                self.session.status = self.source.status
                continue
            if frame.lap != self.lap:
                self._finish()
                self.lap = frame.lap
                self.session.reset()
                self._new_tracker()
                self.session.announce("The recording starts again: a new game.", "info", speak=False)
            try:
                self.step(frame)
            except Exception as err:  # a bad frame must not end the session: say so and go on
                self.session.status = f"skipped a frame that failed: {type(err).__name__}: {err}"

    def step(self, frame: Frame) -> None:
        """One frame through the tracker (the benchmark calls this directly, without the threads)."""
        t0 = time.perf_counter()
        session = self.session
        with session.lock:
            if self.tracker.fps != self.source.fps:
                self.tracker.fps = self.source.fps
            events = self.tracker.feed(frame.index, frame.image)
            session.frame, session.t = frame.index, frame.index / self.source.fps
            session.source = self.source.name
            moves = self.tracker.camera_moves[self._moves_told :]
            self._moves_told += len(moves)
        for move in moves:
            session.announce(f"The camera {move}: the table is read in its new place.", "info", speak=False)
        table = self.table
        if table is not None and table.mat is not None and t0 - self._mat_at >= MAT_EVERY_S:
            self._mat_at = t0
            note = table.follow(frame.image)
            if note:
                session.announce(note, "info", speak=False)
        self._last_index = frame.index
        self.image = frame.image
        self.processed += 1
        session.on_events(events)
        self.costs.append(time.perf_counter() - t0)
        now = time.monotonic()
        if events or now - self._jpeg_at >= JPEG_EVERY_S:
            self._jpeg_at = now
            self._draw(frame.image)
        session.status = self.source.status

    def _finish(self) -> None:
        with self.session.lock:
            events = self.tracker.finish(self._last_index)
        self.session.on_events(events)
        if self.source.ended:
            self.session.announce("The recorded game has ended. Corrections are still taken.", "info", speak=False)
        if self.on_end is not None:
            self.on_end()

    def _draw(self, image: np.ndarray) -> None:
        """The frame with what the tracker last read drawn on it: card outlines with their labels, and the places
        the decoder watches for the deck (zones)."""
        picture = image.copy()
        with self.session.lock:
            reads = list(self.tracker.reads[-1]) if self.tracker.reads else []
            zones = self.session.decoder.regions() if hasattr(self.session.decoder, "regions") else []
        to_camera = self.tracker.to_camera  # the tracker reads in the first view; the camera may have moved since
        for quad, _ in zones:
            cv2.polylines(picture, [np.round(to_camera(quad)).astype(np.int32)], True, (255, 200, 0), 1, cv2.LINE_AA)
        table = self.table
        if table is not None:
            draw_table_zones(picture, table)
        for s in reads:
            camera_quad = to_camera(s.quad)
            quad = np.round(camera_quad).astype(np.int32)
            label, p = max(s.probs.items(), key=lambda kv: kv[1]) if s.probs else ("?", 0.0)
            colour = (60, 220, 60) if p >= 0.8 else (0, 200, 255)
            cv2.polylines(picture, [quad], True, colour, 2, cv2.LINE_AA)
            x, y = quad[:, 0].min(), quad[:, 1].min()
            text = f"{label} {p:.0%}" if s.face_up else "back"
            zone = table.zone_of(camera_quad) if table is not None else None
            text += f" @ {zone}" if zone else ""
            cv2.putText(picture, text, (int(x), max(int(y) - 6, 14)), cv2.FONT_HERSHEY_SIMPLEX, 0.6, colour, 2)
        h, w = picture.shape[:2]
        if w > PREVIEW_WIDTH:
            picture = cv2.resize(picture, (PREVIEW_WIDTH, round(h * PREVIEW_WIDTH / w)), interpolation=cv2.INTER_AREA)
        ok, data = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, 75])
        if ok:
            self.jpeg = data.tobytes()
            self.jpeg_version += 1


def draw_table_zones(picture: np.ndarray, table: TableSetup) -> None:
    """The zones set up on the page, outlined and named where the camera sees them."""
    calibration = table.calibration
    if calibration is None or calibration.layout is None:
        return
    to_camera = np.linalg.inv(calibration.homography)
    for zone in calibration.layout.zones:
        x0, y0, x1, y1 = zone.box_mm
        quad = apply_homography(to_camera, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))
        if not np.isfinite(quad).all() or np.abs(quad).max() > 1e5:
            continue  # a zone beyond the horizon
        cv2.polylines(picture, [np.round(quad).astype(np.int32)], True, (255, 120, 0), 2, cv2.LINE_AA)
        x, y = quad.min(axis=0)
        cv2.putText(picture, zone.name, (int(x) + 4, int(y) + 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 120, 0), 2)


def demo_clip() -> Path:
    """The recorded Loot the Loop table shipped with the product (see companion_ui/demo/README.md)."""
    return Path(__file__).parent / "demo" / "loot-the-loop.mp4"
