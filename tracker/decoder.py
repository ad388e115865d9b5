"""Decoding snapshots into game actions: the interface every game's decoder follows, the events the tracker
emits, and the bookkeeping that turns a weighted set of beliefs into announcements.

A decoder keeps a beam of hypotheses: each is an engine state the table could be in, with the actions that led
there (one tuple per committed snapshot: several actions when a fast player made them between two still
tables, none when nothing changed) and the log-likelihood of everything the camera saw under it. The beam is
what lets one misread be outvoted later, and what lets the tracker say "I don't know" instead of guessing.

`Emitter` decides what to say. A player wants to hear a move the moment it is made, so a snapshot's actions
are announced as soon as one reading of them holds a majority of the posterior (SAY_NOW), usually at the very
snapshot that showed them; they count as sure once they hold EMIT. An announced step that the evidence later
overturns with EMIT is announced again as a revision; a step not sure after PATIENCE more snapshots (or at the
end) gets a "please check" naming the candidates, so no error is ever silent. A step whose reading the evidence
overturns a second time is asked about instead of corrected again: a tracker that has changed its mind twice is
not sure, and saying so beats a third confident sentence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tracker.snapshot import Snapshot

SAY_NOW = 0.5  # posterior share a step's best reading must exceed to be announced at once
EMIT = 0.9  # posterior share that makes a step sure (and that a revision needs)
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
    (the actions they say they made since the last announced state) and resumes; `answer` takes their reply to a
    "please check" about an older step."""

    game: str

    def update(self, snapshot: Snapshot) -> list[TrackerEvent]: ...

    def correct(self, actions: Sequence[str], t: float, frame: int, replace: bool = True) -> list[TrackerEvent]: ...

    def answer(self, step: int, actions: Sequence[str], t: float, frame: int) -> list[TrackerEvent]: ...

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
    sure: bool = False  # what was said has held EMIT of the posterior
    checked: bool = False  # a "please check" was raised for it
    revised: bool = False  # a correction was announced for it
    answered: bool = False  # the player said what happened there (their word is always told back)


@dataclass
class Emitter:
    """Turns the beam into events (see the module docstring)."""

    records: list[StepRecord] = field(default_factory=list)

    def add_step(self, t: float, frame: int) -> None:
        self.records.append(StepRecord(t, frame))

    def emit(self, beam: Sequence[Hypothesis], t: float, frame: int, final: bool = False) -> list[TrackerEvent]:
        """What to say now: moves first, then corrections, then questions (the move just made is heard before
        news about older ones)."""
        events: list[TrackerEvent] = []
        revisions: list[TrackerEvent] = []
        questions: list[TrackerEvent] = []
        newest = len(self.records) - 1
        for k, record in enumerate(self.records):
            votes = step_votes(beam, k)
            if not votes:
                continue
            best, share = votes[0]
            overdue = final or newest - k >= PATIENCE
            if record.said is None and (share > SAY_NOW or overdue):
                events += self._say(k, best, share, t, frame)
            elif record.said is not None and best != record.said and share >= EMIT:
                if record.revised and not record.answered:  # changed its mind before: ask, once, and wait for
                    if not record.checked:  # the player or for the evidence to come back to what was said
                        questions.append(self._check(k, votes, t, frame))
                    record.sure = False
                    continue
                revisions.append(
                    TrackerEvent(
                        "revised",
                        t,
                        frame,
                        f"Correction: {step_text(best)} rather than {step_text(record.said)}.",
                        " ; ".join(best),
                        share,
                        k,
                    )
                )
                record.said, record.revised = best, True
            if record.said == best and share >= EMIT:
                record.sure = True
            elif record.said is not None and not record.sure and overdue and not record.checked:
                questions.append(self._check(k, votes, t, frame))
        return events + revisions + questions

    def _say(self, k: int, actions: tuple[str, ...], share: float, t: float, frame: int) -> list[TrackerEvent]:
        self.records[k].said = actions
        return [TrackerEvent("action", t, frame, a, a, share, k) for a in actions]

    def _check(self, k: int, votes: list[tuple[tuple[str, ...], float]], t: float, frame: int) -> TrackerEvent:
        self.records[k].checked = True
        names = tuple(step_text(v) for v, _ in votes[:3])
        return TrackerEvent(
            "check",
            t,
            frame,
            f"Please check: {alternatives(names)}?",
            step=k,
            candidates=names,
            confidence=votes[0][1],
        )


def step_text(actions: tuple[str, ...]) -> str:
    """A step as it is said and offered as a candidate: "look", "look then mark", "nothing"."""
    return " then ".join(actions) if actions else "nothing"


def alternatives(names: Sequence[str]) -> str:
    """Candidates as short as a question can put them, so it holds up the next announcement as little as it can:
    "explore 8, 7 or 10" where all share the verb, else "look, mark or nothing"."""
    words = [n.split() for n in names]
    if len(names) > 1 and all(len(w) == 2 and w[0] == words[0][0] for w in words):
        parts = [names[0], *(w[1] for w in words[1:])]
    else:
        parts = list(names)
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"
