"""Dice found in a frame: a small net (`models/dice-finder.onnx`, trained by `vision.train.dice_net`) marks each
die's centre in a heat map of the frame at half size and says how big the die is there. A die is a local peak
above the tuned cut-off. The net sees about 35 pixels around a cell well, less than a die close to the camera spans,
and it marks such dice weakly (session 49: at the shipped cut-off it found 397 of 463 validation dice over 100 px,
against 921 of 998 smaller ones); so it looks a second time at the frame shrunk twice more, where those dice have
the sizes it was taught, and a die found only there is added. ONNX Runtime only."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.dice.crops import FRAME_SCALE, STRIDE, finder_frame
from vision.heatmap import cell_of, peaks, sigmoid

FINDER_FILE = "dice-finder.onnx"
SIZE_UNIT = 32.0  # the size map holds log(size / SIZE_UNIT), size in frame pixels
DEFAULT_PEAK = 0.3
COARSE = 2  # the second look: the finder's frame shrunk this many times more
LARGE = 64.0  # the smallest die (frame pixels) taken from the second look, where it spans 16 px: the small end of
# the sizes the net was taught (16-55 px in its frame)


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


def finder_output(session, image: np.ndarray) -> np.ndarray:  # noqa: ANN001 - an ONNX session
    """The finder's heat logits and log sizes (2 x rows x cols) on one image at its scale (`found_dice` reads them)."""
    return session.run(None, {"x": finder_input(image)})[0][0]


def two_looks(session, fine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - an ONNX session
    """The finder's output on its frame (the camera's at FRAME_SCALE, `crops.finder_frame`) and on that shrunk COARSE
    times more (`found_in` reads both)."""
    h, w = fine.shape[:2]
    coarse = cv2.resize(fine, (w // COARSE, h // COARSE), interpolation=cv2.INTER_AREA)
    return finder_output(session, fine), finder_output(session, coarse)


def found_in(looks: tuple[np.ndarray, np.ndarray], threshold: float) -> list[FoundDie]:
    """The dice in both looks (`two_looks`): every die of the first, and each die of the second at least LARGE
    pixels across that no die of the first lies within half its size of (the larger's)."""
    fine = found_dice(looks[0], threshold)
    out = list(fine)
    for d in found_dice(looks[1], threshold):
        die = FoundDie(d.x * COARSE, d.y * COARSE, d.size * COARSE, d.score)
        if die.size >= LARGE and all(math.hypot(die.x - f.x, die.y - f.y) > max(die.size, f.size) / 2 for f in fine):
            out.append(die)
    return out


class DiceFinder:
    """Finds dice in whole frames."""

    def __init__(self, models: Path, threshold: float = DEFAULT_PEAK, second_look: bool = True) -> None:
        from vision.recognise.models import session

        self.session = session(models / FINDER_FILE)
        self.threshold = threshold
        self.second_look = second_look  # off: the first look alone, as before session 49 (for benchmarks)

    def find(self, frame: np.ndarray, threshold: float | None = None) -> list[FoundDie]:
        """The dice whose peaks reach `threshold` (the tuned cut-off by default)."""
        cut = self.threshold if threshold is None else threshold
        fine = finder_frame(frame)
        if not self.second_look:
            return found_dice(finder_output(self.session, fine), cut)
        return found_in(two_looks(self.session, fine), cut)
