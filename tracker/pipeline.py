"""Frames in, events out: the motion gate, the recogniser on still frames, snapshots, and a game's decoder.

Recognition is the expensive step, so it runs only on a still table: once the gate has seen `settle_s` of
stillness, every `read_every`-th frame is read, up to `max_reads` per still period; after `min_reads` the readings
become a snapshot and the decoder commits it. Frames while anything moves (a hand, a card in the air) are never
read, so a hand over the table cannot be mistaken for a move. A still table that differs from the last committed
one only where no card lies (a hand resting on the table, a sleeve) is held back until it clears.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from tracker.decoder import Decoder, TrackerEvent
from tracker.motion import MotionGate, change_map, small_grey
from tracker.registration import camera_shift, compose, describe, registration_image, to_frame_scale
from tracker.sightings import Sighting, strip_sighting
from tracker.snapshot import Snapshot, build_snapshot

NO_CHANGE = 0.0005  # share of the picture: below this, the still table is the one already committed
OCCLUDED_CARDS = 0.6  # changed area outside every card now and before, in card areas: something lies over the table

Recognise = Callable[[np.ndarray, int], list[Sighting]]  # a frame and its index
ReadRegions = Callable[[np.ndarray, list[np.ndarray]], list[dict[str, float]]]


@dataclass
class TrackerConfig:
    settle_s: float = 0.15
    read_every: int = 2
    min_reads: int = 3
    max_reads: int = 6


@dataclass
class Timing:
    """How much work was done, for the benchmark: frames gated and frames read by the recogniser."""

    frames: int = 0
    reads: int = 0


@dataclass
class Channel:
    """One decoder with its own snapshots: the tracker can feed several from the same readings (the frame-wise
    baseline uses only the first reading of each still period)."""

    decoder: Decoder
    labels: Sequence[str]
    reads_needed: int
    committed: Snapshot | None = None
    committed_grey: np.ndarray | None = None
    done: bool = False  # this still period is decided
    events: list[TrackerEvent] = field(default_factory=list)


class Tracker:
    """Feeds frames through the gate and recogniser into one or more decoder channels."""

    def __init__(
        self,
        recognise: Recognise,
        channels: Sequence[Channel],
        fps: float = 30.0,
        config: TrackerConfig | None = None,
        read_regions: ReadRegions | None = None,
    ) -> None:
        self.recognise = recognise
        self.read_regions = read_regions
        self.channels = list(channels)
        self.config = config or TrackerConfig()
        self.gate = MotionGate(fps=fps, settle_s=self.config.settle_s)
        self.fps = fps
        self.reads: list[list[Sighting]] = []
        self.last_read = -(10**9)
        self.timing = Timing()
        # Where the camera has moved since the first still table: this camera's pixels -> the first view's (None:
        # it has not moved). Every frame read is turned back into the first view, so the decoder's memory of where
        # things lie stays true after a bump (tracker.registration).
        self.view: np.ndarray | None = None
        self._back: np.ndarray | None = None  # the first view's pixels -> this camera's (the view's inverse)
        self.camera_moves: list[str] = []  # each move, described for the player
        self._still_image: np.ndarray | None = None  # the last still table, as the camera saw it
        self._in_view: np.ndarray | None = None  # gate-sized: where the turned-back frame still shows the table

    def feed(self, index: int, frame: np.ndarray) -> list[TrackerEvent]:
        settled = self.gate.update(frame)
        self.timing.frames += 1
        if not settled:
            if self.reads:
                self.reads = []
                for ch in self.channels:
                    ch.done = False
            return []
        if len(self.reads) >= self.config.max_reads or index - self.last_read < self.config.read_every:
            return []
        if all(ch.done for ch in self.channels):
            return []
        if not self.reads:  # a new still table: has the camera moved since the last one?
            self._register(frame)
        if self.view is not None:
            frame = cv2.warpAffine(frame, self.view, (frame.shape[1], frame.shape[0]), flags=cv2.INTER_LINEAR)
        self.reads.append(self.recognise(frame, index) + self._attend(frame))
        self.last_read = index
        self.timing.reads += 1
        events = []
        grey = self.gate.previous if self.view is None else small_grey(frame)
        assert grey is not None
        for ch in self.channels:
            if not ch.done and len(self.reads) >= ch.reads_needed:
                events += self._commit(ch, index, frame, grey)
        return events

    def _register(self, frame: np.ndarray) -> None:
        image = registration_image(frame)
        before, self._still_image = self._still_image, image
        step = camera_shift(before, image) if before is not None else None
        if step is None:
            return
        step = to_frame_scale(step, frame.shape[1])
        self.view = step if self.view is None else compose(step, self.view)
        self._back = cv2.invertAffineTransform(self.view)
        self.camera_moves.append(describe(step))
        h, w = frame.shape[:2]
        shown = cv2.warpAffine(np.full((h, w), 255, np.uint8), self.view, (w, h), flags=cv2.INTER_NEAREST)
        gate = small_grey(shown) > 250  # a margin off the edge the camera no longer sees
        self._in_view = cv2.erode(gate.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)

    def to_camera(self, quad: np.ndarray) -> np.ndarray:
        """A quad the tracker read (the first view's pixels) where the camera sees it now (to draw it)."""
        if self._back is None:
            return quad
        return (np.asarray(quad, np.float64) @ self._back[:, :2].T + self._back[:, 2]).astype(np.float32)

    def _attend(self, frame: np.ndarray) -> list[Sighting]:
        """Readings the first channel's decoder asked for: places it expects a card where the finder may miss one."""
        asks = getattr(self.channels[0].decoder, "regions", None)
        if self.read_regions is None or asks is None:
            return []
        wanted = asks()
        if not wanted:
            return []
        readings = self.read_regions(frame, [q for _, corners in wanted for q in corners])
        out = []
        k = 0
        for quad, corners in wanted:
            found = strip_sighting(readings[k : k + len(corners)], quad)
            k += len(corners)
            if found is not None:
                out.append(found)
        return out

    def _commit(self, ch: Channel, index: int, frame: np.ndarray, grey: np.ndarray) -> list[TrackerEvent]:
        ch.done = True
        h, w = frame.shape[:2]
        t = index / self.fps
        reads = self.reads[: ch.reads_needed] if ch.reads_needed == 1 else self.reads
        if ch.committed is None or ch.committed_grey is None:
            snapshot = build_snapshot(reads, ch.labels, index, t, w, h)
        else:
            changes = change_map(ch.committed_grey, grey)
            if self._in_view is not None and self._in_view.shape == changes.shape:
                changes &= self._in_view  # what the camera no longer sees has not changed
            if float(changes.mean()) < NO_CHANGE:
                return []
            snapshot = build_snapshot(reads, ch.labels, index, t, w, h, ch.committed, changes)
            if occluded(snapshot, ch.committed, changes, w):
                ch.done = False  # look again on a later still frame of this period
                return []
        events = ch.decoder.update(snapshot)
        ch.committed, ch.committed_grey = snapshot, grey
        ch.events += events
        return events

    def finish(self, index: int) -> list[TrackerEvent]:
        events = []
        for ch in self.channels:
            done = ch.decoder.finish(index / self.fps, index)
            ch.events += done
            events += done
        return events


def occluded(snapshot: Snapshot, before: Snapshot | None, changes: np.ndarray, width: int) -> bool:
    """Whether much of what changed lies where no card is now and no card was before (a card that left bares the
    table where it lay): then something, a hand most likely, is over the table."""
    objects = snapshot.objects + (before.objects if before is not None else [])
    if not objects:
        return bool(changes.mean() > 0.01)
    scale = changes.shape[1] / width
    cards = np.zeros(changes.shape, np.uint8)
    areas = []
    for obj in objects:
        quad = np.round(obj.quad * scale).astype(np.int32)
        cv2.fillConvexPoly(cards, quad, 1)
        areas.append(abs(cv2.contourArea(quad.astype(np.float32))))
    cards = cv2.dilate(cards, np.ones((5, 5), np.uint8))
    outside = float(np.count_nonzero(changes & (cards == 0)))
    card_area = float(np.median(areas)) if areas else 1.0
    return outside > OCCLUDED_CARDS * max(card_area, 1.0)


def video_frames(path: str | Path) -> Iterator[tuple[int, np.ndarray]]:
    """Decoded frames of a video file, numbered; a file OpenCV cannot open is a clear error."""
    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        raise ValueError(f"{path}: not a video OpenCV can open (expected an MP4/AVI/MKV file)")
    index = 0
    try:
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            yield index, frame
            index += 1
    finally:
        capture.release()


def video_fps(path: str | Path, default: float = 30.0) -> float:
    capture = cv2.VideoCapture(str(path))
    fps = capture.get(cv2.CAP_PROP_FPS) if capture.isOpened() else 0.0
    capture.release()
    return float(fps) if fps and fps > 1 else default


__all__ = ["Channel", "Tracker", "TrackerConfig", "occluded", "video_fps", "video_frames"]
