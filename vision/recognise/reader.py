"""Stage 2: what each corner index says, from a square crop of the full-resolution frame."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.recognise.crops import CROP_PX, index_crop
from vision.recognise.labels import NONE, READER_CLASSES
from vision.recognise.models import ModelError, class_names, session

FEATURES_OUTPUT = "features"  # added at export: the pooled vector the last layer reads, for enrolment


@dataclass(frozen=True)
class Reading:
    probs: np.ndarray  # (n, classes) softmax, columns in `Reader.classes` order
    features: np.ndarray | None  # (n, d) pooled features when the graph exports them
    face: np.ndarray | None = None  # (n,) probability that each crop is a face's corner, where the graph says
    card: np.ndarray | None = None  # (n,) probability that each crop is a card's corner at all, where the graph says


def crops_blob(frame: np.ndarray, quads: Sequence[np.ndarray], size: int = CROP_PX) -> np.ndarray:
    """(n, 3, size, size) float32 RGB in 0-1: ultralytics' classification input for BGR crops."""
    crops = np.stack([index_crop(frame, q, size) for q in quads]) if len(quads) else np.zeros((0, size, size, 3))
    return bgr_blob(crops)


def bgr_blob(crops: np.ndarray) -> np.ndarray:
    """(n, h, w, 3) BGR uint8 to (n, 3, h, w) float32 RGB in 0-1, as the reader was trained."""
    return np.ascontiguousarray(crops[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32) / 255.0


class Reader:
    """Runs the reader ONNX graph on a batch of index crops."""

    def __init__(self, path: Path, threads: int = 2) -> None:
        self.path = path
        self.session = session(path, threads)
        self.classes = class_names(self.session, path)
        if set(self.classes) != set(READER_CLASSES):
            missing = sorted(set(READER_CLASSES) - set(self.classes))
            raise ModelError(f"{path}: reader classes do not match the standard deck (missing {missing[:5]})")
        self.none_column = self.classes.index(NONE)
        self.input_name = self.session.get_inputs()[0].name
        side = self.session.get_inputs()[0].shape[2]
        self.size = side if isinstance(side, int) else CROP_PX  # exported with dynamic axes: the trained size
        outputs = [o.name for o in self.session.get_outputs()]
        self.outputs = [outputs[0]] + ([FEATURES_OUTPUT] if FEATURES_OUTPUT in outputs else [])

    def read_blob(self, blob: np.ndarray) -> Reading:
        if len(blob) == 0:
            return Reading(np.zeros((0, len(self.classes)), np.float32), None)
        result = self.session.run(self.outputs, {self.input_name: blob})
        features = result[1].reshape(len(blob), -1) if len(result) > 1 else None
        return Reading(result[0], features)

    def read(self, frame: np.ndarray, quads: Sequence[np.ndarray]) -> Reading:
        """Readings of index regions (4x2 quads, long side along the card) in one batch."""
        return self.read_blob(crops_blob(frame, quads, self.size))
