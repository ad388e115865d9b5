"""Frame in, cards out, by corners: the corner finder's corners, grouped into cards by geometry, read upright.

Why corners: a corner and its card's edges give the exact frame the index is printed in, so every index is read
at one scale and angle (`corners.corner_crop`) whatever the deck, the zoom or the tilt; and two corners belong to
one card exactly when each lies where the other's edges say a corner of its card must be, which separates the
strips of a cascade and the cards of a fan that a box would merge. A standard deck holds each card once, so groups
reading the same label are one card. A card whose every reading is below the confidence threshold is UNKNOWN with
its candidates; corners that read as no index at all (pips, court art, a back's pattern) never make a face-up card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.recognise.calibration import TableCalibration
from vision.recognise.corner_reader import CornerFrame, CornerReader
from vision.recognise.corners import Corner, CornerFinder
from vision.recognise.crops import CORNER_INDEX
from vision.recognise.finder import quad_bounds
from vision.recognise.labels import BACK, NONE, READER_CLASSES
from vision.recognise.models import ThresholdFile, models_dir
from vision.recognise.recogniser import UNKNOWN, CardDetection, group_probs

CORNERS_FILE = "cards-corners.onnx"
CORNER_READER_FILE = "cards-corner-reader.onnx"
RECTIFIED_THRESHOLDS_FILE = "cards-corners-thresholds.json"
SAME_CARD = 0.18  # two corners are one card's when each lies this many card widths from where the other puts one
WIDTH_RATIO = 1.35  # ...and their cards' widths agree within this ratio
ASPECT = 88 / 63  # a poker card's height over its width, where only a region says where a card is


@dataclass(frozen=True)
class RectifiedThresholds(ThresholdFile):
    """Every cut-off between seeing and reporting, chosen together on the validation families."""

    up: float = 0.35  # corner finder score for a face-up card's corner
    down: float = 0.4  # for a face-down card's corner
    none_reject: float = 0.5  # a corner read as no index with at least this probability adds no evidence
    min_confidence: float = 0.5  # below this a face-up card is UNKNOWN rather than a guess
    lone_down: float = 0.6  # a face-down card seen by one corner only needs this score


def slots(corner: Corner) -> np.ndarray:
    """Where this corner puts its card's four corners: itself, along a, opposite, along b."""
    p, a, b = corner.point, corner.a, corner.b
    return np.array([p, p + a, p + a + b, p + b], np.float32)


def same_card(i: Corner, j: Corner) -> bool:
    """Each corner lies near a corner (not the first) of the card the other one predicts, and the widths agree."""
    if i.kind != j.kind:
        return False
    wi, wj = max(i.width, 1.0), max(j.width, 1.0)
    if max(wi, wj) / min(wi, wj) > WIDTH_RATIO:
        return False
    tol = SAME_CARD * min(wi, wj)
    near_i = np.linalg.norm(slots(i)[1:] - j.point, axis=1).min() < tol
    near_j = np.linalg.norm(slots(j)[1:] - i.point, axis=1).min() < tol
    return bool(near_i and near_j)


def group_corners(corners: Sequence[Corner]) -> list[list[int]]:
    """Corners joined into cards (union of pairwise same-card links), largest score first within a group."""
    parent = list(range(len(corners)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for i in range(len(corners)):
        for j in range(i + 1, len(corners)):
            if same_card(corners[i], corners[j]):
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for k in range(len(corners)):
        groups.setdefault(root(k), []).append(k)
    return [sorted(g, key=lambda k: -corners[k].score) for g in groups.values()]


def card_outline(corners: Sequence[Corner]) -> np.ndarray:
    """A card's outline from its corners: the best corner's four predicted slots, each replaced by the mean of the
    corners seen there (a corner seen is worth more than one predicted from across the card)."""
    best = slots(corners[0])
    seen: list[list[np.ndarray]] = [[] for _ in range(4)]
    for c in corners:
        seen[int(np.linalg.norm(best - c.point, axis=1).argmin())].append(c.point)
    return np.array([np.mean(s, axis=0) if s else best[k] for k, s in enumerate(seen)], np.float32)


def region_frames(quad: np.ndarray, region: tuple[float, float] = CORNER_INDEX) -> list[CornerFrame]:
    """A corner index region (listed as `crops.corner_quads` lists it: its first edge across the card) as the four
    corner frames it could belong to: which of its corners is the card's is not written in the region, so the
    reader is asked all four ways."""
    q = np.asarray(quad, np.float32)
    width = float(np.linalg.norm(q[1] - q[0])) / region[0]
    out: list[CornerFrame] = []
    for k in range(4):
        across = q[(1, 0, 3, 2)[k]] - q[k]
        down = q[(3, 2, 1, 0)[k]] - q[k]
        a = across / max(float(np.linalg.norm(across)), 1e-6) * width
        b = down / max(float(np.linalg.norm(down)), 1e-6) * width * ASPECT
        out.append((q[k], a, b))
    return out


class RectifiedRecogniser:
    """Corner finder plus rectified reader plus grouping; optionally a table calibration."""

    def __init__(
        self,
        models: Path | None = None,
        threads: int = 2,
        calibration: TableCalibration | None = None,
        thresholds: RectifiedThresholds | None = None,
    ) -> None:
        root = models or models_dir()
        self.finder = CornerFinder(root / CORNERS_FILE, threads)
        self.reader = CornerReader(root / CORNER_READER_FILE, threads)
        self.calibration = calibration
        self.thresholds = thresholds or RectifiedThresholds.load(root / RECTIFIED_THRESHOLDS_FILE)
        self.deck = None  # enrolment of a deck is not yet available for the rectified reader

    @property
    def classes(self) -> tuple[str, ...]:
        return READER_CLASSES

    def find(self, frame: np.ndarray) -> list[Corner]:
        t = self.thresholds
        found = self.finder.find(frame, min(t.up, t.down))
        return [c for c in found if c.score >= (t.up if c.kind == "up" else t.down)]

    def read_regions(self, frame: np.ndarray, quads: Sequence[np.ndarray]) -> list[dict[str, float]]:
        """Label probabilities for index regions the caller chose (the tracker knows where a covered card's index
        must lie): each region read all four ways its corner could lie, the most index-like reading kept."""
        frames = [f for q in quads for f in region_frames(q)]
        probs = self.reader.read(frame, frames).probs.reshape(len(quads), 4, -1)
        best = probs[:, :, self.reader.none_column].argmin(axis=1)
        return [dict(zip(self.classes, map(float, probs[i, best[i]]), strict=True)) for i in range(len(quads))]

    def recognise(self, frame: np.ndarray) -> list[CardDetection]:
        corners = self.find(frame)
        up = [c for c in corners if c.kind == "up"]
        reading = self.reader.read(frame, [(c.point, c.a, c.b) for c in up])
        out = assemble_corners(corners, up, reading.probs, self.thresholds)
        if self.calibration is not None:
            out = [self.calibration.place(d) for d in out]
        return out


def assemble_corners(
    corners: Sequence[Corner], up: Sequence[Corner], probs: np.ndarray, t: RectifiedThresholds
) -> list[CardDetection]:
    """Corners and the readings of the face-up ones (rows in `up` order) made into cards: one per label."""
    row = {id(c): k for k, c in enumerate(up)}
    none = READER_CLASSES.index(NONE)
    labels = [c for c in READER_CLASSES if c != NONE]
    columns = [READER_CLASSES.index(c) for c in labels]
    log_p = np.log(np.clip(probs[:, columns], 1e-6, 1.0)) if len(up) else np.zeros((0, len(labels)))
    if len(up):
        log_p -= np.log(np.exp(log_p).sum(axis=1, keepdims=True))
    by_label: dict[str, list[tuple[list[Corner], list[int]]]] = {}
    backs: list[CardDetection] = []
    for members in group_corners(corners):
        group = [corners[k] for k in members]
        quad = card_outline(group)
        if group[0].kind == "down":
            score = max(c.score for c in group)
            if len(group) > 1 or score >= t.lone_down:
                backs.append(CardDetection(BACK, False, score, quad, quad_bounds(quad)))
            continue
        readable = [row[id(c)] for c in group if probs[row[id(c)], none] < t.none_reject]
        if not readable:
            continue  # corners with no index on them: a card in view but unread, or not a card at all
        label = labels[int(group_probs(log_p[readable]).argmax())]
        by_label.setdefault(label, []).append((group, readable))
    out: list[CardDetection] = []
    for parts in by_label.values():
        readable = [r for _, rows in parts for r in rows]
        group = max((g for g, _ in parts), key=lambda g: (len(g), g[0].score))
        p = group_probs(log_p[readable])
        order = np.argsort(-p)[:3]
        quad = card_outline(group)
        best = float(p[order[0]])
        out.append(
            CardDetection(
                label=labels[order[0]] if best >= t.min_confidence else UNKNOWN,
                face_up=True,
                confidence=best,
                quad=quad,
                box=quad_bounds(quad),
                indices=len(readable),
                candidates=tuple((labels[j], float(p[j])) for j in order),
                index_boxes=tuple(quad_bounds(up[r].region_quad()) for r in readable),
            )
        )
    return out + backs
