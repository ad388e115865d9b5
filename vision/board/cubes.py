"""Rift, energy and blue cubes counted per Era of The LOOP's board.

The frame's Era ring is cut out upright (`rectify`), and a small net (`models/the-loop-cubes.onnx`, trained by
`vision.train.cube_net`) reads that cut beside the board's own picture cut the same way, marking each cube's centre
in a heat map per colour. A cube is a local peak of its colour's map above the cut-off; it belongs to the Era its
centre lies in. ONNX Runtime only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vision.board.rectify import cut_from_fraction, era_masks, rectify, reference_cut
from vision.heatmap import peaks, sigmoid

STRIDE = 4  # cut pixels per heat-map cell
COLOURS = ("red", "green", "blue")  # the heat maps' order: rift, energy, and the blue cubes of the box
MODEL_FILE = "the-loop-cubes.onnx"
THRESHOLDS_FILE = "the-loop-cubes-thresholds.json"
DEFAULT_PEAK = 0.3


def net_input(cut: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """(1, 6, H, W) float32: the cut and the board's reference cut, BGR, centred on 0."""
    both = np.concatenate([cut, reference], axis=2).astype(np.float32) / 255.0 - 0.5
    return np.ascontiguousarray(both.transpose(2, 0, 1)[None])


def heat_of(session: Any, cut: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The net's heat maps (probabilities, colour x cell) for one cut beside its board's reference cut."""
    return sigmoid(session.run(None, {"x": net_input(cut, reference)})[0][0])


def era_of(x: float, y: float, masks: Mapping[str, np.ndarray]) -> str | None:
    """The Era whose mask holds the cut pixel (x, y), or None (between Eras, or off the cut)."""
    ix, iy = int(x), int(y)
    for era, mask in masks.items():
        if 0 <= iy < mask.shape[0] and 0 <= ix < mask.shape[1] and mask[iy, ix]:
            return era
    return None


def count_cut(
    heat: np.ndarray, masks: Mapping[str, np.ndarray], threshold: float = DEFAULT_PEAK
) -> dict[str, dict[str, int]]:
    """Cubes per Era and colour from the heat maps (probabilities) of one cut."""
    counts = {era: dict.fromkeys(COLOURS, 0) for era in masks}
    for colour, x, y, _score in peaks(heat, threshold, STRIDE):
        era = era_of(x, y, masks)
        if era is not None:
            counts[era][COLOURS[colour]] += 1
    return counts


@dataclass(frozen=True)
class EraCubes:
    era: str
    counts: dict[str, int]  # colour -> cubes
    cubes: tuple[tuple[str, float, float, float], ...]  # (colour, x, y in frame pixels, score)


class CubeCounter:
    """Counts cubes per Era on one registered board: its picture and its Era sectors (board fractions)."""

    def __init__(
        self,
        board_picture: np.ndarray,
        eras: Mapping[str, np.ndarray],
        models: Path,
    ) -> None:
        from vision.recognise.models import session

        self.session = session(models / MODEL_FILE)
        self.reference = reference_cut(board_picture)
        self.masks = era_masks(eras)
        thresholds = models / THRESHOLDS_FILE
        self.threshold = float(json.loads(thresholds.read_text())["peak"]) if thresholds.is_file() else DEFAULT_PEAK

    def heat(self, cut: np.ndarray) -> np.ndarray:
        return heat_of(self.session, cut, self.reference)

    def count(self, frame: np.ndarray, frame_from_board: np.ndarray) -> list[EraCubes]:
        """Every Era's cubes; `frame_from_board` maps board fractions to frame pixels (`register`)."""
        heat = self.heat(rectify(frame, frame_from_board))
        to_frame = frame_from_board @ cut_from_fraction()
        mine: dict[str, list[tuple[str, float, float, float]]] = {era: [] for era in self.masks}
        for colour, x, y, score in peaks(heat, self.threshold, STRIDE):
            era = era_of(x, y, self.masks)
            if era is not None:
                p = to_frame @ np.array([x, y, 1.0])
                mine[era].append((COLOURS[colour], float(p[0] / p[2]), float(p[1] / p[2]), score))
        return [
            EraCubes(era, {c: sum(1 for m in cubes if m[0] == c) for c in COLOURS}, tuple(cubes))
            for era, cubes in mine.items()
        ]
