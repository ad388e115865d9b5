"""`tabletop replay`: the whole pipeline on a video file, the decoded actions with their times, and the end state.

Every frame goes through the motion gate; the recogniser runs only on still frames (see `tracker.pipeline`). The
time each frame costs is kept, so the benchmark can say whether the pipeline keeps up with live video: a camera
delivers a frame every 1/fps seconds, and a frame that arrives while the previous one is still being worked on is
dropped (the camera thread keeps only the newest).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from tracker.decoder import TrackerEvent
from tracker.loot_the_loop import LABELS, LootTheLoopDecoder, Params
from tracker.pipeline import Channel, Tracker, TrackerConfig, video_fps, video_frames
from tracker.sightings import Sighting, from_detections

DECODERS = {"loot-the-loop": (LootTheLoopDecoder, LABELS)}
BASELINE = Params(beam=1, legal_only=False, depth=1)  # frame-wise: one reading, no rules, no beam


@dataclass
class ReplayResult:
    events: list[TrackerEvent]
    state: dict[str, Any]
    baseline_events: list[TrackerEvent] = field(default_factory=list)
    baseline_state: dict[str, Any] = field(default_factory=dict)
    fps: float = 30.0
    frames: int = 0
    wall_s: float = 0.0
    costs: list[float] = field(default_factory=list)  # seconds per frame, gate + recognition + decoding
    lag: dict[int, float] = field(default_factory=dict)  # frame -> seconds its processing took
    reads: int = 0

    def actions_json(self) -> list[dict]:
        return [
            {
                "t": round(e.t + self.lag.get(e.frame, 0.0), 3),
                "frame": e.frame,
                "action": e.action,
                "confidence": round(e.confidence, 4),
                "kind": e.kind,
            }
            for e in self.events
            if e.kind in ("action", "revised")
        ]

    def live(self) -> dict[str, float]:
        """Live-camera simulation: frames arrive every 1/fps s; one that arrives while the worker is busy is
        dropped. Returns frames processed per second of work, dropped frames and the worst backlog."""
        period = 1.0 / self.fps
        clock = 0.0
        dropped = 0
        backlog = 0.0
        for i, cost in enumerate(self.costs):
            arrival = i * period
            if clock > arrival + period:  # a newer frame has arrived meanwhile: this one is skipped
                dropped += 1
                continue
            clock = max(clock, arrival) + cost
            backlog = max(backlog, clock - arrival)
        busy = sum(self.costs)
        return {
            "frames": len(self.costs),
            "work_fps": round(len(self.costs) / busy, 1) if busy else 0.0,
            "dropped": dropped,
            "dropped_share": round(dropped / max(len(self.costs), 1), 4),
            "max_backlog_s": round(backlog, 3),
        }


# The tracker reads with the rectified recogniser since session 15 (issue 18), whose beliefs are calibrated: measured
# with both (`tabletop bench tracker --games 3 --recogniser rectified`, then `previous`, on the same 3 rendered games
# of test-family decks) it decodes 85 of 120 moves right against the previous one's 70 (session 14: 49 against 70).
TRACKER_RECOGNISER = "rectified"


def make_recognise(
    models: Path | None = None, kind: str = TRACKER_RECOGNISER, deck: Any = None
) -> tuple[Callable, Callable]:
    """The recogniser as the tracker calls it: whole frames, and index regions the decoder asks about. `kind` is
    load_recogniser's (the benches measure the tracker with either design); `deck`, an enrolled deck's head
    (`enrol_rectified.load_deck_head`): the players' own deck, read as enrolled (and with its adapted reader)."""
    from vision.recognise.load import load_recogniser

    recogniser = load_recogniser(models, kind, deck)
    thresholds = getattr(recogniser, "thresholds", None)
    if getattr(thresholds, "backs_under_faces", False) or getattr(thresholds, "fragments", False):
        # Reporting the face-down cards that lie under face-up ones cost this decoder moves (session 16: 74 of 120
        # decoded right against 85, the same recogniser otherwise): it reads a table's backs as before. Dropping
        # the UNKNOWNs made of a named card's corners cost it more (session 23: 95 of 120 against 109): a sighting
        # the decoder cannot name still tells it a card is there
        recogniser.thresholds = replace(thresholds, backs_under_faces=False, fragments=False)

    def recognise(frame: Any, index: int) -> list[Sighting]:
        return from_detections(recogniser.recognise(frame))

    return recognise, recogniser.read_regions


def replay(
    video: str | Path,
    game: str = "loot-the-loop",
    recognise: Callable | None = None,
    baseline: bool = False,
    config: TrackerConfig | None = None,
    progress: bool = False,
    recogniser: str = TRACKER_RECOGNISER,
    deck: Any = None,
) -> ReplayResult:
    if game not in DECODERS:
        raise ValueError(f"no tracker for '{game}' yet: replay supports {', '.join(DECODERS)}")
    path = Path(video)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such video file")
    decoder_type, labels = DECODERS[game]
    config = config or TrackerConfig()
    main = Channel(decoder_type(), labels, config.min_reads)
    channels = [main]
    if baseline:
        channels.append(Channel(decoder_type(BASELINE), labels, 1))
    fps = video_fps(path)
    read_regions = None
    if recognise is None:
        recognise, read_regions = make_recognise(kind=recogniser, deck=deck)
    tracker = Tracker(recognise, channels, fps, config, read_regions)
    result = ReplayResult([], {}, fps=fps)
    started = time.perf_counter()
    last = 0
    frames = video_frames(path)
    bar = tqdm(desc="frames", unit="frame", disable=not progress)
    for index, frame in frames:
        t0 = time.perf_counter()
        events = tracker.feed(index, frame)
        cost = time.perf_counter() - t0
        result.costs.append(cost)
        if events:
            result.lag[index] = cost
        last = index
        bar.update(1)
    bar.close()
    tracker.finish(last)
    result.wall_s = time.perf_counter() - started
    result.frames = last + 1
    result.reads = tracker.timing.reads
    result.events, result.state = main.events, main.decoder.state()
    if baseline:
        result.baseline_events, result.baseline_state = channels[1].events, channels[1].decoder.state()
    return result
