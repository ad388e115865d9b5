"""Dice followed from frame to frame, and a value given only to a die that has come to rest.

A die in flight is blurred, tumbles and moves; one that has landed keeps its place and shows the same face frame
after frame. So a die's value is given only once it has stayed within STILL_SHARE of its size for `still_frames`
frames, and then by a vote of its still frames (`WatchRule`): enough of them read as one face and hardly any as
another, so that a die read right in most still frames and left unread (under the confidence floor) in a few is
given its value. Never while it moves; never while it lies cocked (the reader then says there is no face to read);
never while a hand hides it. The rule's numbers are tuned on validation roll clips, one rule for a calibrated table
and one without (`vision.train.tune_watch`), and kept in the dice thresholds file; without them the watcher asks for
STILL_FRAMES frames in a row read the same, as it always did."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter, deque
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from vision.dice.read import THRESHOLDS_FILE, UNREAD, DieReading

STILL_SHARE = 0.04  # a die at rest wobbles in the finder by less than this share of its size
STILL_FRAMES = 8  # about 0.27 s at 30 frames a second (5 and 8% let a die crawling to rest be read: session 33)
MATCH_SHARE = 0.7  # a reading belongs to a die within this share of its size of where it was
LOST_FRAMES = 8  # a die not seen for this many frames is forgotten (a hand may pass over it meanwhile)
WAY_FREE, WAY_CALIBRATED = "free", "calibrated"  # the thresholds file's rules: without a calibration, and with one


class WatchRuleError(ValueError):
    """A watch rule in a thresholds file that cannot be used."""


@dataclass(frozen=True)
class WatchRule:
    """When a still die's frames amount to a value: once it has been still `still_frames` frames, of its last
    `window` still frames (fewer while it has not been still that long) at least `votes` must be read as one face
    and at most `rivals` as another. The default is the old rule: eight frames in a row, each read the same."""

    still_frames: int = STILL_FRAMES
    window: int = STILL_FRAMES
    votes: int = STILL_FRAMES
    rivals: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.votes <= self.window or self.still_frames < 1 or self.rivals < 0:
            raise WatchRuleError(
                f"watch rule: expected 1 <= votes <= window, still_frames >= 1 and rivals >= 0, got {asdict(self)}"
            )

    @property
    def memory(self) -> int:
        """How many of a die's last frames the rule looks at."""
        return max(self.window, self.still_frames)

    def vote(self, still: list[DieReading]) -> tuple[str, float]:
        """The value a still die's frames amount to (the median confidence of the frames read so), or UNREAD."""
        read = [r for r in still[-self.window :] if r.label != UNREAD]
        tally = Counter(r.label for r in read)
        if not tally:
            return UNREAD, 0.0
        (best, count), *others = tally.most_common()
        if count < self.votes or sum(n for _, n in others) > self.rivals:
            return UNREAD, 0.0
        sure = sorted(r.confidence for r in read if r.label == best)
        return best, sure[len(sure) // 2]

    @classmethod
    def load(cls, models: Path, calibrated: bool) -> WatchRule:
        """The rule tuned into `models`' dice thresholds file for a calibrated table or for none (its `watch` entry's
        "calibrated" or "free"), else the default."""
        path = models / THRESHOLDS_FILE
        if not path.is_file():
            return cls()
        way = WAY_CALIBRATED if calibrated else WAY_FREE
        watch = json.loads(path.read_text()).get("watch", {})
        if not isinstance(watch, dict):
            raise WatchRuleError(f"{path}: 'watch': expected an object with a rule per way, got {watch!r}")
        entry = watch.get(way)
        if entry is None:
            return cls()
        known = {f.name for f in fields(cls)}
        if not isinstance(entry, dict) or set(entry) - known - {"val"}:
            raise WatchRuleError(
                f"{path}: 'watch' → {way!r}: expected an object with keys among {sorted(known)}, got {entry!r}"
            )
        return cls(**{k: v for k, v in entry.items() if k in known})


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
    rule: WatchRule = field(default_factory=WatchRule)
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
            track = _Track(self.next_id, deque([readings[ri]], maxlen=self.rule.memory))
            self.next_id += 1
            self.tracks.append(track)
            seen.append(track)
        self.tracks = [t for t in self.tracks if t.missed <= LOST_FRAMES]
        return [self._state(t) for t in seen]

    def _state(self, track: _Track) -> WatchedDie:
        last = track.last
        still = list(itertools.takewhile(lambda r: _near(r, last), reversed(track.history)))[::-1]
        label, confidence = self.rule.vote(still) if len(still) >= self.rule.still_frames else (UNREAD, 0.0)
        settled = label != UNREAD
        return WatchedDie(
            track.id,
            settled,
            DieReading(label, confidence if settled else last.confidence, last.x, last.y, last.size),
        )


def _near(reading: DieReading, last: DieReading) -> bool:
    """Whether a die's earlier reading lies where it lies now, within STILL_SHARE of its size."""
    return math.hypot(reading.x - last.x, reading.y - last.y) <= STILL_SHARE * last.size
