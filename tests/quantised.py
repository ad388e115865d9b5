"""How an 8-bit reader graph reads against the float graph it was quantised from (used by the readers' tests)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from vision.recognise.bench_stages import flat_card_view
from vision.recognise.corner_reader import CornerReader
from vision.recognise.corners import printed_corner


def eight_bit_and_float(
    path: Path, pieces: Any, codes: Iterable[str], game: str = "loot-the-loop"
) -> tuple[np.ndarray, np.ndarray]:
    """(8-bit probabilities, float probabilities) of the reader at `path` and its `.float.onnx` on the top-left and
    bottom-right corners of each card in `codes` (pictures from `pieces`: a deck or a piece set), laid flat at
    70-130 px, clear or smeared by motion: the same crops through both, so any difference is the rounding's."""
    int8 = CornerReader(path, game=game)
    float_graph = CornerReader(path.with_name(path.name.replace(".onnx", ".float.onnx")), game=game)
    crops = []
    for k, code in enumerate(codes):
        frame, quad = flat_card_view(pieces.image(code), 70 + (k % 4) * 20, 0.0, (k % 3) * 4, 10.0 * k, k)
        crops.append(int8.crops(frame, [printed_corner(quad, 0), printed_corner(quad, 2)]))
    crops = np.concatenate(crops)
    return int8.read_crops(crops).probs, float_graph.read_crops(crops).probs
