"""Each found die's top face read: the square around it (`crops.square`, DIE_SPAN sizes a side) goes through a
small classifier (`models/dice-reader.onnx`, trained by `vision.train.dice_net`) that names the face (`D20:17`,
`D6:3`) or says there is none to read: a die cocked on something, still in the air, or hidden. Its confidence is
calibrated (a temperature fitted on validation dice, `vision.train.tune_dice`), and below the tuned floor the die
is reported unread rather than guessed. ONNX Runtime only."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vision.dice.crops import CLASSES, DIE_SPAN, READ_PX, square
from vision.dice.enrol import EnrolledDice
from vision.dice.find import DEFAULT_PEAK, DiceFinder, FoundDie

READER_FILE = "dice-reader.onnx"
THRESHOLDS_FILE = "dice-thresholds.json"  # {"peak", "temperature", "confidence", "turns"}
UNREAD = "DIE"  # the label of a die whose face is not read


@dataclass(frozen=True)
class DieReading:
    """One die in a frame: its label (`D20:17`, or UNREAD), and how sure the reader is of that label."""

    label: str
    confidence: float
    x: float
    y: float
    size: float

    @property
    def value(self) -> int | None:
        return value_of(self.label)

    def to_json(self) -> dict:
        return {
            "label": self.label,
            "value": self.value,
            "confidence": round(self.confidence, 4),
            "center": [round(self.x, 1), round(self.y, 1)],
            "size_px": round(self.size, 1),
        }


def value_of(label: str) -> int | None:
    """The face a die's label names (`D20:17` -> 17), None for UNREAD."""
    return int(label.split(":")[1]) if ":" in label else None


def reader_input(crops: np.ndarray) -> np.ndarray:
    """(n, 3, READ_PX, READ_PX) float32 from (n, READ_PX, READ_PX, 3) BGR squares, centred on 0."""
    return np.ascontiguousarray((crops.astype(np.float32) / 255.0 - 0.5).transpose(0, 3, 1, 2))


def run_reader(session: Any, squares: np.ndarray, turns: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The reader's logits and features for (n, READ_PX, READ_PX, 3) squares, each averaged over `turns` quarter
    turns of the square (a die's face may point any way: looking again, turned, evens out a bad angle)."""
    logits, features = [], []
    for k in range(0, len(squares), 64):
        batch = squares[k : k + 64]
        looks = np.concatenate([np.rot90(batch, t, axes=(1, 2)) for t in range(turns)])
        out = session.run(None, {"x": reader_input(looks)})
        logits.append(out[0].reshape(turns, len(batch), -1).mean(axis=0))
        features.append(out[1].reshape(turns, len(batch), -1).mean(axis=0))
    return np.concatenate(logits), np.concatenate(features)


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def die_squares(frame: np.ndarray, found: list[FoundDie]) -> np.ndarray:
    """The reader's square around each found die, (n, READ_PX, READ_PX, 3)."""
    if not found:
        return np.zeros((0, READ_PX, READ_PX, 3), np.uint8)
    return np.stack([square(frame, (f.x, f.y), DIE_SPAN * f.size, READ_PX) for f in found])


def label_of(probabilities: np.ndarray, floor: float) -> tuple[str, float]:
    """The reading one die's class probabilities amount to: its best face when sure enough, else UNREAD with the
    probability that there is no face to read."""
    best = int(probabilities.argmax())
    if best == 0 or probabilities[best] < floor:
        return UNREAD, float(1.0 - probabilities[1:].max())
    return CLASSES[best], float(probabilities[best])


@dataclass(frozen=True)
class DiceSettings:
    peak: float = DEFAULT_PEAK
    temperature: float = 1.0
    confidence: float = 0.5
    turns: int = 1  # the reader looks at each square this many times, turned by quarter turns, and averages

    @classmethod
    def load(cls, models: Path) -> DiceSettings:
        path = models / THRESHOLDS_FILE
        if not path.is_file():
            return cls()
        data = json.loads(path.read_text())
        return cls(
            float(data["peak"]), float(data["temperature"]), float(data["confidence"]), int(data.get("turns", 1))
        )


class DiceReader:
    """Finds and reads every die of a frame; with `enrolled`, a player's own dice are matched against their
    enrolled faces too (`enrol.EnrolledDice.blend`)."""

    def __init__(self, models: Path, enrolled: EnrolledDice | None = None) -> None:
        from vision.recognise.models import session

        self.settings = DiceSettings.load(models)
        self.finder = DiceFinder(models, self.settings.peak)
        self.session = session(models / READER_FILE)
        self.enrolled = enrolled

    def _run(self, squares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return run_reader(self.session, squares, self.settings.turns)

    def features(self, squares: np.ndarray) -> np.ndarray:
        return self._run(squares)[1]

    def probabilities(self, squares: np.ndarray) -> np.ndarray:
        if len(squares) == 0:
            return np.zeros((0, len(CLASSES)), np.float32)
        logits, features = self._run(squares)
        probabilities = softmax(logits, self.settings.temperature)
        return self.enrolled.blend(probabilities, features) if self.enrolled is not None else probabilities

    def read(self, frame: np.ndarray) -> list[DieReading]:
        found = self.finder.find(frame)
        probabilities = self.probabilities(die_squares(frame, found))
        out = []
        for f, p in zip(found, probabilities, strict=True):
            label, confidence = label_of(p, self.settings.confidence)
            out.append(DieReading(label, confidence, f.x, f.y, f.size))
        return out
