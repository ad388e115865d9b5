"""Frame in, cards out: the finder's boxes, the reader's labels, and the grouping that makes one card of a card's
two (or four) corner indices.

Identity comes from indices, because an index survives overlap and fanning where a whole card does not; the
card's quadrilateral comes from the finder's card box when it found one. A standard deck holds each card once,
so indices that read the same label are one card, and no card is ever reported twice. A card whose reading is
below the confidence threshold (`Thresholds.min_confidence`) is reported as UNKNOWN with its candidates: the
tracker can wait for a better frame, which a confident wrong label would not let it do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision.recognise.calibration import TableCalibration
from vision.recognise.crops import corner_quads
from vision.recognise.enrol import DeckHead
from vision.recognise.finder import Finder, Found, quad_bounds
from vision.recognise.labels import BACK, NONE
from vision.recognise.models import FINDER_FILE, READER_FILE, ThresholdFile, models_dir
from vision.recognise.reader import Reader

UNKNOWN = "UNKNOWN"
THRESHOLDS_FILE = "cards-thresholds.json"  # chosen on the validation families by vision.train.tune
SPLIT_CONFIDENCE = 0.9  # an index this sure of a label its card's other indices do not share is its own card
CORNER_REACH = 0.45  # an index belongs to a card when it lies within this many card widths of one of its corners
PROBE_SCORE = 0.5  # a probed corner's finder score, relative to its card's: below any index the finder saw


@dataclass(frozen=True)
class Thresholds(ThresholdFile):
    """Every cut-off between seeing and reporting, in one place so tuning can choose them together."""

    index: float = 0.25  # finder score for a corner index to be read
    card: float = 0.35  # finder score for a face-up card outline
    back: float = 0.35  # finder score for a face-down card, reported as BACK
    none_reject: float = 0.5  # an index the reader calls none with at least this probability is dropped
    min_confidence: float = 0.5  # below this a face-up card is UNKNOWN rather than a guess

    def finder_scores(self) -> dict[str, float]:
        return {"index": self.index, "card": self.card, "back": self.back}


@dataclass(frozen=True)
class CardDetection:
    label: str  # "QH", "JOKER", "BACK" or "UNKNOWN"
    face_up: bool
    confidence: float
    quad: np.ndarray  # (4, 2) frame pixels: the card's outline, or its index's when only an index was found
    box: tuple[float, float, float, float]
    indices: int = 0  # corner indices read for this card
    candidates: tuple[tuple[str, float], ...] = ()  # best labels with their probabilities, best first
    table_mm: tuple[float, float] | None = None  # centre on the table plane, when the table is calibrated
    zone: str | None = None  # the table layout's zone that centre lies in, when a layout is given
    index_boxes: tuple[tuple[float, float, float, float], ...] = field(default=(), repr=False)

    def to_json(self) -> dict:
        out: dict = {
            "label": self.label,
            "face_up": self.face_up,
            "confidence": round(float(self.confidence), 4),
            "quad": [[round(float(x), 1), round(float(y), 1)] for x, y in self.quad],
            "box": [round(float(v), 1) for v in self.box],
        }
        if self.face_up:
            out["indices"] = self.indices
            out["candidates"] = [[label, round(float(p), 4)] for label, p in self.candidates]
        if self.table_mm is not None:
            out["table_mm"] = [round(float(v), 1) for v in self.table_mm]
        if self.zone is not None:
            out["zone"] = self.zone
        return out


def _centre(box: Sequence[float]) -> np.ndarray:
    return np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])


def owner(index: Found, cards: Sequence[Found]) -> int | None:
    """The card an index sits in a corner of: the nearest corner, within CORNER_REACH of the card's short side."""
    centre = _centre(index.box)
    best, best_d = None, CORNER_REACH
    for k, card in enumerate(cards):
        sides = np.linalg.norm(np.roll(card.quad, -1, axis=0) - card.quad, axis=1)
        short = max(float(sides.min()), 1.0)
        d = float(np.linalg.norm(card.quad - centre, axis=1).min()) / short
        if d < best_d:
            best, best_d = k, d
    return best


def group_probs(log_probs: np.ndarray) -> np.ndarray:
    """Several readings of one card combined as independent evidence (a product of their probabilities)."""
    total = log_probs.sum(axis=0)
    total = np.exp(total - total.max())
    return total / total.sum()


class Recogniser:
    """Finder plus reader plus grouping; optionally a deck's enrolled reading head and a table calibration."""

    def __init__(
        self,
        models: Path | None = None,
        threads: int = 2,
        deck: DeckHead | None = None,
        calibration: TableCalibration | None = None,
        thresholds: Thresholds | None = None,
    ) -> None:
        root = models or models_dir()
        self.finder = Finder(root / FINDER_FILE, threads)
        self.reader = Reader(root / READER_FILE, threads)
        self.deck = deck
        self.calibration = calibration
        self.thresholds = thresholds or Thresholds.load(root / THRESHOLDS_FILE)

    def read_indices(self, frame: np.ndarray, quads: Sequence[np.ndarray]) -> np.ndarray:
        """Class probabilities (reader order) for index regions, through the enrolled head when there is one."""
        reading = self.reader.read(frame, quads)
        if self.deck is None or len(quads) == 0:
            return reading.probs
        if reading.features is None:
            raise ValueError(f"{self.reader.path}: this reader exports no features, so a deck cannot be enrolled")
        return self.deck.probs(reading.features, self.reader.classes)

    def read_regions(self, frame: np.ndarray, quads: Sequence[np.ndarray]) -> list[dict[str, float]]:
        """Label probabilities (the reader's classes, 'none' included) for index regions the caller chose: the
        tracker knows where a covered card's index must lie even when the finder saw nothing there."""
        probs = self.read_indices(frame, list(quads))
        return [{c: float(p) for c, p in zip(self.classes, row, strict=True)} for row in probs]

    def find(self, frame: np.ndarray) -> list[Found]:
        return self.finder.find(frame, self.thresholds.finder_scores())

    @property
    def classes(self) -> tuple[str, ...]:
        return self.reader.classes

    def recognise(self, frame: np.ndarray) -> list[CardDetection]:
        found = with_probes(self.find(frame))
        probs = self.read_indices(frame, [f.quad for f in found if f.kind == "index"])
        out = assemble(found, probs, self.classes, self.thresholds)
        if self.calibration is not None:
            out = [self.calibration.place(d) for d in out]
        return out


def with_probes(found: list[Found]) -> list[Found]:
    """Adds the four corner regions of every face-up card none of whose indices the finder found, as index
    boxes for the reader: a card outline is easier to find than a small index, and where a card is in view its
    corners say what it is. The reader calls the empty corners none."""
    indices = [f for f in found if f.kind == "index"]
    cards = [f for f in found if f.kind == "card"]
    read = {owner(i, cards) for i in indices}
    return found + [p for k, card in enumerate(cards) if k not in read for p in card_probes(card)]


def card_probes(card: Found) -> list[Found]:
    """A card outline's four corner regions as index boxes, scored below any index the finder saw itself."""
    return [Found("index", card.score * PROBE_SCORE, quad, quad_bounds(quad)) for quad in corner_quads(card.quad)]


def _index_groups(indices: Sequence[Found], cards: Sequence[Found], log_p: np.ndarray, keep: Sequence[int]) -> list:
    """Indices grouped by the card they sit on; an index that confidently disagrees with the rest of its card
    (the corner of a card lying on top, read through the box of the card below) is split off on its own."""
    owned: dict[object, list[int]] = {}
    for i in keep:
        k = owner(indices[i], cards)
        owned.setdefault(("card", k) if k is not None else ("index", i), []).append(i)
    groups = []
    for key, members in owned.items():
        label = int(group_probs(log_p[members]).argmax())
        agree = [i for i in members if log_p[i].argmax() == label or log_p[i].max() < np.log(SPLIT_CONFIDENCE)]
        groups.append((key, agree))
        groups += [(("index", i), [i]) for i in members if i not in agree]
    return groups


def assemble(
    found: Sequence[Found], probs: np.ndarray, classes: Sequence[str], thresholds: Thresholds | None = None
) -> list[CardDetection]:
    """The finder's boxes and the reader's probabilities (rows: the index boxes in `found` order, columns:
    `classes`) made into cards: one per label, UNKNOWN below the confidence threshold, face-down cards as BACK."""
    t = thresholds or Thresholds()
    indices = [f for f in found if f.kind == "index"]
    cards = [f for f in found if f.kind == "card"]
    none = list(classes).index(NONE)
    keep = [i for i in range(len(indices)) if probs[i, none] < t.none_reject]
    labels = [c for c in classes if c != NONE]
    columns = [list(classes).index(c) for c in labels]
    log_p = np.log(np.clip(probs[:, columns], 1e-6, 1.0))
    log_p -= np.log(np.exp(log_p).sum(axis=1, keepdims=True))
    merged: dict[str, list[tuple[object, list[int]]]] = {}
    for key, members in _index_groups(indices, cards, log_p, keep):
        merged.setdefault(labels[int(group_probs(log_p[members]).argmax())], []).append((key, members))
    out: list[CardDetection] = []
    used_cards: set[int] = set()
    for parts in merged.values():
        members = [i for _, m in parts for i in m]
        p = group_probs(log_p[members])
        order = np.argsort(-p)[:3]
        owners = [key[1] for key, _ in parts if key[0] == "card"]
        used_cards.update(owners)
        if owners:
            quad = max((cards[k] for k in owners), key=lambda c: c.score).quad
        else:
            quad = max((indices[i] for i in members), key=lambda f: f.score).quad
        best = float(p[order[0]])
        out.append(
            CardDetection(
                label=labels[order[0]] if best >= t.min_confidence else UNKNOWN,
                face_up=True,
                confidence=best,
                quad=quad,
                box=quad_bounds(quad),
                indices=len(members),
                candidates=tuple((labels[j], float(p[j])) for j in order),
                index_boxes=tuple(indices[i].box for i in members),
            )
        )
    for k, card in enumerate(cards):
        if k not in used_cards:  # a face-up card whose every index is hidden: there, but unread
            out.append(CardDetection(UNKNOWN, True, 0.0, card.quad, card.box))
    out += [CardDetection(BACK, False, f.score, f.quad, f.box) for f in found if f.kind == "back"]
    return out
