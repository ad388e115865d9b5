"""One call from a frame to what stands on The LOOP's board: registration, then cubes per Era.

The JSON (`BoardReading.to_json`) is what `tabletop detect --game the-loop --json` adds beside the cards under
"board": whether the board was found, every Era's cube counts, and each cube and piece (`CUBE:RED`, `CLONE:med`,
`VORTEX`, `MISSION`, `PAWN:chrono`) with the Era it lies in as its zone, its centre in frame pixels, the net's score.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.board.cubes import BoardPiece, CubeCounter, EraCubes
from vision.board.layout import BoardLayout
from vision.board.register import BoardNotFound, BoardRegistrar


@dataclass(frozen=True)
class BoardReading:
    found: bool
    eras: tuple[EraCubes, ...] = ()
    pieces: tuple[BoardPiece, ...] = ()  # clone tokens, vortex and mission tiles, pawns
    note: str | None = None  # why the board was not read
    frame_from_board: np.ndarray | None = None

    def to_json(self) -> dict:
        if not self.found:
            return {"found": False, "note": self.note}
        return {
            "found": True,
            "eras": {e.era: dict(e.counts) for e in self.eras},
            "pieces": [
                {
                    "label": f"CUBE:{colour.upper()}",
                    "zone": e.era,
                    "center": [round(x, 1), round(y, 1)],
                    "confidence": round(score, 3),
                }
                for e in self.eras
                for colour, x, y, score in e.cubes
            ]
            + [
                {
                    "label": p.label,
                    "zone": p.era,
                    "center": [round(p.x, 1), round(p.y, 1)],
                    "confidence": round(p.score, 3),
                }
                for p in self.pieces
            ],
        }


class BoardReader:
    """The board's registrar and cube counter, set up once for a board folder."""

    def __init__(self, layout: BoardLayout, models: Path) -> None:
        self.registrar = BoardRegistrar(layout.picture)
        self.counter = CubeCounter(layout.picture, layout.eras, models)

    def read(self, frame: np.ndarray, frame_from_board: np.ndarray | None = None) -> BoardReading:
        """Registers the frame unless a placement is given (a live loop holds the last one), then counts."""
        if frame_from_board is None:
            try:
                frame_from_board = self.registrar.register(frame).frame_from_board
            except BoardNotFound as err:
                return BoardReading(False, note=f"board not found: {err}")
        eras, pieces = self.counter.count(frame, frame_from_board)
        return BoardReading(True, tuple(eras), tuple(pieces), None, frame_from_board)
