"""A stable picture of the table from several noisy readings of it.

While the table is still, the recogniser reads a few frames. Sightings of one card in those frames are linked into
a track by where they lie (the table is still, so a card does not move), and the track's label is the vote of all
its readings: the mean log-probability of each label, so one confident misread among agreeing frames loses.
Across still periods a card whose pixels did not change keeps its earlier votes (hysteresis: its label changes
only when new evidence outweighs the old) and is kept even when this period's frames missed it (a short
occlusion, a weak detection). Each physical card exists once: when two objects vote for the same card, the
stronger keeps it and the other must be something else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tracker.motion import REGION_CHANGED, region_changed
from tracker.sightings import BACK, FLOOR, Sighting

LINK_IOU = 0.45  # sightings in two frames overlapping this much are one card
CONTAINED = 0.8  # a small box this much inside a bigger one that reads the same is the same card (index vs card)
SURE = 0.8  # a vote this sure for another label than the earlier object's: a different card, not a misread
CARRY_WEIGHT = 6  # at most this many earlier readings weigh in when a card's pixels did not change
LOG_FLOOR = float(np.log(FLOOR))


def box_of(quad: np.ndarray) -> tuple[float, float, float, float]:
    return float(quad[:, 0].min()), float(quad[:, 1].min()), float(quad[:, 0].max()), float(quad[:, 1].max())


def box_area(box: Sequence[float]) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = box_area(a) + box_area(b) - inter
    return inter / union if union > 0 else 0.0


def containment(small: Sequence[float], big: Sequence[float]) -> float:
    """Share of box `small` inside box `big`."""
    ix = max(0.0, min(small[2], big[2]) - max(small[0], big[0]))
    iy = max(0.0, min(small[3], big[3]) - max(small[1], big[1]))
    area = box_area(small)
    return ix * iy / area if area > 0 else 0.0


@dataclass
class TableObject:
    """One card on the still table: its votes (mean log-probability per label over the readings that saw it),
    its outline, how many readings saw it, and how much of it changed since the last committed snapshot."""

    log_q: dict[str, float]
    quad: np.ndarray
    seen: int
    face_up: bool
    changed: float = 1.0
    carried: bool = False  # not seen this period, kept from the last snapshot because its pixels did not change

    @property
    def centre(self) -> np.ndarray:
        return self.quad.mean(axis=0)

    @property
    def box(self) -> tuple[float, float, float, float]:
        return box_of(self.quad)

    @property
    def best(self) -> tuple[str, float]:
        label = max(self.log_q, key=self.log_q.__getitem__)
        return label, float(np.exp(self.log_q[label]))

    def to_json(self) -> dict:
        label, p = self.best
        return {
            "label": label,
            "p": round(p, 3),
            "face_up": self.face_up,
            "seen": self.seen,
            "changed": round(self.changed, 3),
            "centre": [round(float(v), 1) for v in self.centre],
        }


@dataclass
class Snapshot:
    """The still table as the tracker believes it: objects, with the frame and time of the last reading."""

    objects: list[TableObject]
    frame: int
    t: float
    reads: int
    changed: float = 1.0  # share of the whole picture that changed since the last committed snapshot
    width: int = 0
    height: int = 0

    def labels(self) -> list[str]:
        return [o.best[0] for o in self.objects]


@dataclass
class _Track:
    quad: np.ndarray
    sightings: list[Sighting] = field(default_factory=list)

    @property
    def box(self) -> tuple[float, float, float, float]:
        return box_of(self.quad)


def link(reads: Sequence[Sequence[Sighting]]) -> list[list[Sighting]]:
    """Sightings from several frames of a still table grouped by card: each joins the unclaimed track it overlaps
    most (at least LINK_IOU), else starts one."""
    tracks: list[_Track] = []
    for sightings in reads:
        claimed: set[int] = set()
        for s in sorted(sightings, key=lambda s: -s.best[1]):
            box = box_of(s.quad)
            scores = [(box_iou(box, t.box), k) for k, t in enumerate(tracks) if k not in claimed]
            best = max(scores, default=(0.0, -1))
            if best[0] >= LINK_IOU:
                tracks[best[1]].sightings.append(s)
                claimed.add(best[1])
            else:
                tracks.append(_Track(np.asarray(s.quad, np.float32), [s]))
                claimed.add(len(tracks) - 1)
    return [t.sightings for t in tracks]


def vote(sightings: Sequence[Sighting], labels: Sequence[str]) -> TableObject:
    """One object from a track: mean log-probabilities, the biggest outline (a card's rather than its index's)."""
    logs = [s.log_probs(labels) for s in sightings]
    log_q = {label: float(np.mean([lp[label] for lp in logs])) for label in labels}
    quad = max((s.quad for s in sightings), key=lambda q: box_area(box_of(q)))
    face_up = sum(s.face_up for s in sightings) * 2 >= len(sightings)
    return TableObject(log_q, np.asarray(quad, np.float32), len(sightings), face_up)


def merge_contained(objects: list[TableObject]) -> list[TableObject]:
    """An index box inside a card box that reads the same card is that card, read twice: one object."""
    objects = sorted(objects, key=lambda o: -box_area(o.box))
    kept: list[TableObject] = []
    for obj in objects:
        label = obj.best[0]
        host = next(
            (k for k in kept if k.best[0] == label and label != BACK and containment(obj.box, k.box) >= CONTAINED),
            None,
        )
        if host is None:
            kept.append(obj)
            continue
        total = host.seen + obj.seen
        host.log_q = {lab: (host.log_q[lab] * host.seen + obj.log_q[lab] * obj.seen) / total for lab in host.log_q}
        host.seen = max(host.seen, obj.seen)
    return kept


def unique_cards(objects: list[TableObject]) -> list[TableObject]:
    """Each card code belongs to at most one object: the one voting for it most strongly (over the readings that
    saw it); any other object voting for it has that label pushed to the floor, so its next best shows."""
    changed = True
    while changed:
        changed = False
        owners: dict[str, TableObject] = {}
        for obj in sorted(objects, key=lambda o: -(o.best[1] * min(o.seen, CARRY_WEIGHT))):
            label = obj.best[0]
            if label == BACK or obj.log_q[label] <= LOG_FLOOR:
                continue
            if label in owners:
                obj.log_q[label] = LOG_FLOOR
                changed = True
            else:
                owners[label] = obj
    return objects


def build_snapshot(
    reads: Sequence[Sequence[Sighting]],
    labels: Sequence[str],
    frame: int,
    t: float,
    width: int,
    height: int,
    previous: Snapshot | None = None,
    changes: np.ndarray | None = None,
) -> Snapshot:
    """The still table from its readings; with the previous snapshot and the change map since it, unchanged cards
    keep their earlier votes and missed ones are carried over."""
    objects = merge_contained([vote(track, labels) for track in link(reads)])
    whole = 1.0
    if changes is not None:
        whole = float(changes.mean())
        for obj in objects:
            obj.changed = region_changed(changes, obj.quad, width)
    if previous is not None and changes is not None:
        objects = _carry(previous, objects, changes, width)
    return Snapshot(unique_cards(objects), frame, t, len(reads), whole, width, height)


def _carry(previous: Snapshot, objects: list[TableObject], changes: np.ndarray, width: int) -> list[TableObject]:
    """Hysteresis: an object in an unchanged region pools its votes with the earlier object there, unless this
    period's readings are sure it is another card (two card faces can differ in too few pixels for the change
    map); an earlier object whose region is unchanged and that no reading saw now is kept as it was."""
    matched: set[int] = set()
    for obj in objects:
        if obj.changed >= REGION_CHANGED:
            continue
        scores = [(box_iou(obj.box, old.box), k) for k, old in enumerate(previous.objects) if k not in matched]
        best = max(scores, default=(0.0, -1))
        if best[0] < LINK_IOU:
            continue
        old = previous.objects[best[1]]
        matched.add(best[1])
        if obj.best[0] != old.best[0] and obj.best[1] >= SURE:
            obj.changed = max(obj.changed, REGION_CHANGED)  # another card lies there: too alike for the pixels
            continue
        w_old, w_new = min(old.seen, CARRY_WEIGHT), obj.seen
        obj.log_q = {lab: (old.log_q[lab] * w_old + obj.log_q[lab] * w_new) / (w_old + w_new) for lab in obj.log_q}
        obj.seen = min(old.seen + obj.seen, 4 * CARRY_WEIGHT)
    for k, old in enumerate(previous.objects):
        if k in matched or any(box_iou(old.box, o.box) >= LINK_IOU for o in objects):
            continue
        if region_changed(changes, old.quad, width) < REGION_CHANGED:
            objects.append(TableObject(dict(old.log_q), old.quad, old.seen, old.face_up, 0.0, carried=True))
    return objects
