"""Dice followed from frame to frame, and a value given only to a die that has come to rest.

A die in flight is blurred, tumbles and moves; one that has landed keeps its place and shows the same face frame
after frame. So a die's value is given once it has stayed within STILL_SHARE of its size for `still_frames` frames
in a row and been read the same (and read at all) in each: never while it moves, never while it lies cocked (the
reader then says there is no face to read), never while a hand hides it."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from vision.dice.read import UNREAD, DieReading

STILL_SHARE = 0.04  # a die at rest wobbles in the finder by less than this share of its size
STILL_FRAMES = 8  # about 0.27 s at 30 frames a second (5 and 8% let a die crawling to rest be read: session 33)
MATCH_SHARE = 0.7  # a reading belongs to a die within this share of its size of where it was
LOST_FRAMES = 8  # a die not seen for this many frames is forgotten (a hand may pass over it meanwhile)


@dataclass
class _Track:
    id: int
    history: deque[DieReading]
    missed: int = 0

    @property
    def last(self) -> DieReading:
        return self.history[-1]


@dataclass(frozen=True)
class WatchedDie:
    """A die as the watcher sees it now: its reading's label is a face only when it is `settled`, else UNREAD."""

    id: int
    settled: bool
    reading: DieReading

    @property
    def label(self) -> str:
        return self.reading.label

    @property
    def value(self) -> int | None:
        return self.reading.value

    def to_json(self) -> dict:
        return {"id": self.id, "settled": self.settled, **self.reading.to_json()}


@dataclass
class DiceWatcher:
    still_frames: int = STILL_FRAMES
    tracks: list[_Track] = field(default_factory=list)
    next_id: int = 0

    def update(self, readings: list[DieReading]) -> list[WatchedDie]:
        """Take one frame's readings; every die seen in it, settled or not."""
        unmatched = list(range(len(readings)))
        pairs = sorted(
            (math.hypot(r.x - t.last.x, r.y - t.last.y), ti, ri)
            for ti, t in enumerate(self.tracks)
            for ri, r in enumerate(readings)
        )
        used_tracks: set[int] = set()
        for distance, ti, ri in pairs:
            track = self.tracks[ti]
            if ti in used_tracks or ri not in unmatched or distance > MATCH_SHARE * max(track.last.size, 1.0):
                continue
            used_tracks.add(ti)
            unmatched.remove(ri)
            track.history.append(readings[ri])
            track.missed = 0
        for ti, track in enumerate(self.tracks):
            if ti not in used_tracks:
                track.missed += 1
        seen = [self.tracks[ti] for ti in sorted(used_tracks)]
        for ri in unmatched:
            track = _Track(self.next_id, deque([readings[ri]], maxlen=self.still_frames))
            self.next_id += 1
            self.tracks.append(track)
            seen.append(track)
        self.tracks = [t for t in self.tracks if t.missed <= LOST_FRAMES]
        return [self._state(t) for t in seen]

    def _state(self, track: _Track) -> WatchedDie:
        last = track.last
        history = list(track.history)
        still = len(history) >= self.still_frames and all(
            math.hypot(r.x - last.x, r.y - last.y) <= STILL_SHARE * last.size and r.label == last.label for r in history
        )
        settled = still and last.label != UNREAD
        confidence = min(r.confidence for r in history) if settled else last.confidence
        label = last.label if settled else UNREAD
        return WatchedDie(track.id, settled, DieReading(label, confidence, last.x, last.y, last.size))
