"""Dice found in a frame: a small net (`models/dice-finder.onnx`, trained by `vision.train.dice_net`) marks each
die's centre in a heat map of the frame at half size and says how big the die is there. A die is a local peak
above the tuned cut-off. ONNX Runtime only."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.dice.crops import FRAME_SCALE, STRIDE, finder_frame
from vision.heatmap import cell_of, peaks, sigmoid

FINDER_FILE = "dice-finder.onnx"
SIZE_UNIT = 32.0  # the size map holds log(size / SIZE_UNIT), size in frame pixels
DEFAULT_PEAK = 0.3


@dataclass(frozen=True)
class FoundDie:
    x: float  # centre, frame pixels
    y: float
    size: float  # the longer side of the die's outline, frame pixels
    score: float  # the heat map's peak


def finder_input(image: np.ndarray) -> np.ndarray:
    """(1, 3, H, W) float32: the finder's frame, BGR, centred on 0."""
    return np.ascontiguousarray((image.astype(np.float32) / 255.0 - 0.5).transpose(2, 0, 1)[None])


def found_dice(out: np.ndarray, threshold: float) -> list[FoundDie]:
    """The dice in the finder's output (heat logits and log sizes, 2 x rows x cols), in frame pixels; a peak's
    place is refined to the heat's centroid over its 3 x 3 cells."""
    heat = sigmoid(out[:1])
    rows, cols = heat.shape[1:]
    dice = []
    for _c, x, y, score in peaks(heat, threshold, STRIDE):
        ix, iy = (round(v) for v in cell_of(x, y, STRIDE))
        y0, y1, x0, x1 = max(iy - 1, 0), min(iy + 2, rows), max(ix - 1, 0), min(ix + 2, cols)
        w = heat[0, y0:y1, x0:x1]
        yy, xx = np.mgrid[y0:y1, x0:x1]
        cx = float((w * xx).sum() / w.sum()) * STRIDE + (STRIDE - 1) / 2
        cy = float((w * yy).sum() / w.sum()) * STRIDE + (STRIDE - 1) / 2
        size = SIZE_UNIT * math.exp(float(np.clip(out[1, iy, ix], -3, 3)))
        dice.append(FoundDie(cx / FRAME_SCALE, cy / FRAME_SCALE, size, score))
    return dice


class DiceFinder:
    """Finds dice in whole frames."""

    def __init__(self, models: Path, threshold: float = DEFAULT_PEAK) -> None:
        from vision.recognise.models import session

        self.session = session(models / FINDER_FILE)
        self.threshold = threshold

    def find(self, frame: np.ndarray, threshold: float | None = None) -> list[FoundDie]:
        """The dice whose peaks reach `threshold` (the tuned cut-off by default)."""
        out = self.session.run(None, {"x": finder_input(finder_frame(frame))})[0][0]
        return found_dice(out, self.threshold if threshold is None else threshold)
