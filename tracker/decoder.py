"""Decoding snapshots into game actions: the interface every game's decoder follows, the events the tracker
emits, and the bookkeeping that turns a weighted set of beliefs into announcements.

A decoder keeps a beam of hypotheses: each is an engine state the table could be in, with the actions that led
there (one tuple per committed snapshot: several actions when a fast player made them between two still
tables, none when nothing changed) and the log-likelihood of everything the camera saw under it. The beam is
what lets one misread be outvoted later, and what lets the tracker say "I don't know" instead of guessing.

`Emitter` decides what to say: a snapshot's actions are announced once the hypotheses that agree on them hold
EMIT of the posterior; an announced step that the evidence later overturns is announced again as a revision;
a step still split after PATIENCE more snapshots (or at the end) is announced with a "please check" naming the
candidates, so no error is ever silent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tracker.snapshot import Snapshot

EMIT = 0.9  # posterior share that must agree on a step before it is announced
PATIENCE = 3  # snapshots a split step may wait for evidence before the player is asked


@dataclass(frozen=True)
class TrackerEvent:
    """Something the tracker tells the game side: `kind` is 'action', 'revised', 'check' or 'event'."""

    kind: str
    t: float
    frame: int
    text: str
    action: str = ""
    confidence: float = 1.0
    step: int = -1  # which committed snapshot it is about
    candidates: tuple[str, ...] = ()

    def to_json(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind, "t": round(self.t, 3), "frame": self.frame, "text": self.text}
        if self.action:
            out["action"] = self.action
            out["confidence"] = round(self.confidence, 4)
        if self.step >= 0:
            out["step"] = self.step
        if self.candidates:
            out["candidates"] = list(self.candidates)
        return out


@dataclass
class Hypothesis:
    """One way the game could have gone: its state (the engine's JSON core), the log-likelihood of all that was
    seen under it, and the actions per committed snapshot. `info` holds the game's own beliefs (such as which
    face-up cards were never read)."""

    core: dict[str, Any]
    log_p: float
    steps: tuple[tuple[str, ...], ...] = ()
    info: dict[str, Any] = field(default_factory=dict)


class Decoder(Protocol):
    """A game's decoder. `update` takes each new snapshot of a still table; `correct` applies a player's word
    (the actions they say they made since the last announced state) and resumes."""

    game: str

    def update(self, snapshot: Snapshot) -> list[TrackerEvent]: ...

    def correct(self, actions: Sequence[str], t: float, frame: int, replace: bool = True) -> list[TrackerEvent]: ...

    def finish(self, t: float, frame: int) -> list[TrackerEvent]: ...

    def state(self) -> dict[str, Any]: ...


def posterior(beam: Sequence[Hypothesis]) -> list[float]:
    top = max(h.log_p for h in beam)
    weights = [math.exp(h.log_p - top) for h in beam]
    total = sum(weights)
    return [w / total for w in weights]


def step_votes(beam: Sequence[Hypothesis], step: int) -> list[tuple[tuple[str, ...], float]]:
    """The distinct action tuples the beam holds for a step, with their posterior shares, best first."""
    shares: dict[tuple[str, ...], float] = {}
    for h, w in zip(beam, posterior(beam), strict=True):
        if step < len(h.steps):
            shares[h.steps[step]] = shares.get(h.steps[step], 0.0) + w
    return sorted(shares.items(), key=lambda kv: -kv[1])


@dataclass
class StepRecord:
    """What was said about one committed snapshot."""

    t: float
    frame: int
    said: tuple[str, ...] | None = None  # the actions announced (None: not yet)
    checked: bool = False  # a "please check" was raised for it


@dataclass
class Emitter:
    """Turns the beam into events (see the module docstring)."""

    records: list[StepRecord] = field(default_factory=list)

    def add_step(self, t: float, frame: int) -> None:
        self.records.append(StepRecord(t, frame))

    def emit(self, beam: Sequence[Hypothesis], t: float, frame: int, final: bool = False) -> list[TrackerEvent]:
        events: list[TrackerEvent] = []
        newest = len(self.records) - 1
        for k, record in enumerate(self.records):
            votes = step_votes(beam, k)
            if not votes:
                continue
            best, share = votes[0]
            if record.said is None:
                if share >= EMIT:
                    events += self._say(k, best, share, t, frame)
                elif (final or newest - k >= PATIENCE) and not record.checked:
                    events += self._say(k, best, share, t, frame)
                    events.append(self._check(k, votes, t, frame))
            elif best != record.said and share >= EMIT:
                events.append(
                    TrackerEvent(
                        "revised",
                        t,
                        frame,
                        f"Correction: {_said(best)} rather than {_said(record.said)}.",
                        " ; ".join(best),
                        share,
                        k,
                    )
                )
                record.said = best
        return events

    def _say(self, k: int, actions: tuple[str, ...], share: float, t: float, frame: int) -> list[TrackerEvent]:
        self.records[k].said = actions
        return [TrackerEvent("action", t, frame, a, a, share, k) for a in actions]

    def _check(self, k: int, votes: list[tuple[tuple[str, ...], float]], t: float, frame: int) -> TrackerEvent:
        self.records[k].checked = True
        names = tuple(_said(v) for v, _ in votes[:3])
        return TrackerEvent(
            "check",
            t,
            frame,
            f"Please check: was it {' or '.join(names)}?",
            step=k,
            candidates=names,
            confidence=votes[0][1],
        )


def _said(actions: tuple[str, ...]) -> str:
    return " then ".join(actions) if actions else "nothing"
