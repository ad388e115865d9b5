"""Rift, energy and blue cubes counted per Era of The LOOP's board, and the pieces on the ring: clone tokens by
their Paradox Era, vortex and mission tiles, agent pawns.

The frame's Era ring is cut out upright (`rectify`), and a small net (`models/the-loop-cubes.onnx`, trained by
`vision.train.cube_net`) reads that cut beside the board's own picture cut the same way, marking each cube's centre
in a heat map per colour, and each piece's in a map per label (`PIECES`). A cube is a local peak of its colour's map
above the cut-off; it belongs to the Era its centre lies in. A piece is a peak of the pieces' maps, the strongest of
any two closer than a piece's radius (one token is read as one Era, not two). ONNX Runtime only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vision.board.layout import ERA_CODES
from vision.board.rectify import cut_from_fraction, era_masks, rectify, reference_cut
from vision.heatmap import peaks, sigmoid

STRIDE = 4  # cut pixels per heat-map cell
COLOURS = ("red", "green", "blue")  # the heat maps' order: rift, energy, and the blue cubes of the box
# the flat pieces and pawns that stand on the ring, read by the heat maps after the cubes' (their labels in the JSON):
# a clone token by the Paradox Era it shows, a vortex tile, a mission tile either side up, an agent pawn by its agent
PIECES = (
    *(f"CLONE:{era}" for era in ERA_CODES),
    "VORTEX",
    "MISSION",
    *(f"PAWN:{agent}" for agent in ("chrono", "sweeper", "hunter", "archivist", "courier")),
)
CHANNELS = len(COLOURS) + len(PIECES)
PIECE_APART_PX = 28  # two pieces' centres are at least this far apart on the cut (a clone token is 28 mm, 64 px)
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
    for colour, x, y, _score in peaks(heat[: len(COLOURS)], threshold, STRIDE):
        era = era_of(x, y, masks)
        if era is not None:
            counts[era][COLOURS[colour]] += 1
    return counts


def find_pieces(heat: np.ndarray, threshold: float) -> list[tuple[str, float, float, float]]:
    """(label, x, y on the cut, score) of every piece the heat maps mark (none from a cubes-only net): peaks of the
    pieces' maps, strongest first, each keeping off any weaker one within `PIECE_APART_PX`."""
    found = sorted(peaks(heat[len(COLOURS) :], threshold, STRIDE), key=lambda p: -p[3])
    kept: list[tuple[str, float, float, float]] = []
    for channel, x, y, score in found:
        if all((x - kx) ** 2 + (y - ky) ** 2 >= PIECE_APART_PX**2 for _, kx, ky, _ in kept):
            kept.append((PIECES[channel], x, y, score))
    return kept


@dataclass(frozen=True)
class BoardPiece:
    label: str  # a `PIECES` label: CLONE:<Paradox Era>, VORTEX, MISSION, PAWN:<agent>
    era: str | None  # the Era it lies in (None: between Eras or off the ring)
    x: float  # frame pixels
    y: float
    score: float


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
        tuned = json.loads(thresholds.read_text()) if thresholds.is_file() else {}
        self.threshold = float(tuned.get("peak", DEFAULT_PEAK))
        self.piece_threshold = float(tuned.get("piece_peak", DEFAULT_PEAK))

    def heat(self, cut: np.ndarray) -> np.ndarray:
        return heat_of(self.session, cut, self.reference)

    def count(self, frame: np.ndarray, frame_from_board: np.ndarray) -> tuple[list[EraCubes], list[BoardPiece]]:
        """Every Era's cubes, and the pieces on the ring; `frame_from_board` maps board fractions to frame pixels
        (`register`)."""
        heat = self.heat(rectify(frame, frame_from_board))
        to_frame = frame_from_board @ cut_from_fraction()

        def in_frame(x: float, y: float) -> tuple[float, float]:
            p = to_frame @ np.array([x, y, 1.0])
            return float(p[0] / p[2]), float(p[1] / p[2])

        mine: dict[str, list[tuple[str, float, float, float]]] = {era: [] for era in self.masks}
        for colour, x, y, score in peaks(heat[: len(COLOURS)], self.threshold, STRIDE):
            era = era_of(x, y, self.masks)
            if era is not None:
                mine[era].append((COLOURS[colour], *in_frame(x, y), score))
        eras = [
            EraCubes(era, {c: sum(1 for m in cubes if m[0] == c) for c in COLOURS}, tuple(cubes))
            for era, cubes in mine.items()
        ]
        pieces = [
            BoardPiece(label, era_of(x, y, self.masks), *in_frame(x, y), score)
            for label, x, y, score in find_pieces(heat, self.piece_threshold)
        ]
        return eras, pieces
