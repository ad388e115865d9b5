"""What the tracker takes from vision: each card seen in one frame, as a label distribution and a place.

The tracker never trusts one reading: it keeps the reader's whole distribution (its best candidates and their
probabilities), so evidence from several frames and from the rules can outvote a confident misread. Vision's
`CardDetection` is adapted here, and tests can build sightings directly, without pictures or models.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vision.recognise.labels import BACK, NONE

FLOOR = 1e-3  # the least probability any label keeps: a reader that is sure and wrong must not veto the rules
BACK_SURE = 0.9  # a face-down outline: the finder's back class, whatever its score, is a back far more often than not


@dataclass(frozen=True)
class Sighting:
    """One card in one frame. `probs` holds the labels the reader offered (card codes or BACK) with their
    probabilities; every other label shares what is left. `quad` is the outline in frame pixels (TL TR BR BL)."""

    probs: Mapping[str, float]
    quad: np.ndarray
    face_up: bool = True

    @property
    def centre(self) -> np.ndarray:
        return self.quad.mean(axis=0)

    @property
    def best(self) -> tuple[str, float]:
        if not self.probs:
            return "", 0.0
        label = max(self.probs, key=self.probs.__getitem__)
        return label, self.probs[label]

    def log_probs(self, labels: Iterable[str]) -> dict[str, float]:
        """log q(label) for every label: the offered ones as given, the rest sharing the remaining mass."""
        labels = list(labels)
        rest = max(1.0 - sum(self.probs.values()), 0.0)
        sharing = [label for label in labels if label not in self.probs and (label != BACK or not self.face_up)]
        spread = max(rest / max(len(sharing), 1), FLOOR)
        return {
            label: math.log(max(self.probs.get(label, spread if label in sharing else FLOOR), FLOOR))
            for label in labels
        }


def from_detections(detections: Iterable[object]) -> list[Sighting]:
    """Vision's `CardDetection`s as sightings: a face-up card's candidates become its distribution (an outline
    nobody could read has none: every face-up label equally likely); a face-down card is a BACK."""
    out = []
    for det in detections:
        quad = np.asarray(det.quad, dtype=np.float32)  # type: ignore[attr-defined]
        if not det.face_up:  # type: ignore[attr-defined]
            out.append(Sighting({BACK: BACK_SURE}, quad, face_up=False))
            continue
        probs = {str(label): float(p) for label, p in det.candidates}  # type: ignore[attr-defined]
        out.append(Sighting(probs, quad, face_up=True))
    return out


STRIP_MIN = 0.3  # a strip reading weaker than this says nothing


def strip_sighting(corners: Sequence[Mapping[str, float]], quad: np.ndarray) -> Sighting | None:
    """A covered card read at the corners of its visible end (where the tracker expects its index): each label
    takes its best probability over the corners, since one corner holds the index and the other is blank."""
    labels = {label for reading in corners for label in reading if label != NONE}
    probs = {label: max(reading.get(label, 0.0) for reading in corners) for label in labels}
    total = sum(probs.values())
    if not probs or max(probs.values()) < STRIP_MIN:
        return None
    top = dict(sorted(probs.items(), key=lambda kv: -kv[1])[:3])
    return Sighting({k: v / max(total, 1.0) for k, v in top.items()}, np.asarray(quad, np.float32))
