"""One call from a frame to what stands on The LOOP's board: registration, then cubes per Era, then the mission
spots.

The JSON (`BoardReading.to_json`) is what `tabletop detect --game the-loop --json` adds beside the cards under
"board": whether the board was found, every Era's cube counts, and each cube and piece (`CUBE:RED`, `CLONE:med`,
`VORTEX`, `MISSION`, `PAWN:chrono`) with the Era it lies in as its zone, its centre in frame pixels, the net's score.
Where the board folder names its mission spots, "missions" says per Era what lies on its spot (`missions`): a tile
face up by its mission's code with its progress cubes, `BACK_MISSION` face down, null for an empty spot, or
`"seen": false` when something covers it; each tile is also a `MISSION` piece (with its `tile`) zoned in its Era.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.board.cubes import BoardPiece, CubeCounter, EraCubes
from vision.board.layout import BoardLayout
from vision.board.missions import MISSIONS_FILE, SLOTS_FILE, MissionReader, MissionTiles, SlotModel, SpotReading
from vision.board.register import BoardNotFound, BoardRegistrar


@dataclass(frozen=True)
class BoardReading:
    found: bool
    eras: tuple[EraCubes, ...] = ()
    pieces: tuple[BoardPiece, ...] = ()  # clone tokens, vortex and mission tiles, pawns
    note: str | None = None  # why the board was not read
    frame_from_board: np.ndarray | None = None
    missions: tuple[SpotReading, ...] = ()  # the mission spots in view, when the board folder names them

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
            ]
            + [
                {
                    "label": "MISSION",
                    "zone": m.era,
                    "center": [round(m.x, 1), round(m.y, 1)],
                    "confidence": round(m.confidence, 3),
                    "tile": m.tile,
                }
                for m in self.missions
                if m.seen and m.tile is not None
            ],
            "missions": {m.era: m.to_json() for m in self.missions},
        }


class BoardReader:
    """The board's registrar and cube counter, set up once for a board folder."""

    def __init__(self, layout: BoardLayout, models: Path, tiles: MissionTiles | None = None) -> None:
        """`tiles`: the mission tiles to read the spots against (default: the stand-in, when models holds it)."""
        self.registrar = BoardRegistrar(layout.picture)
        self.counter = CubeCounter(layout.picture, layout.eras, models)
        if tiles is None and layout.missions and (Path(models) / MISSIONS_FILE).is_file():
            tiles = MissionTiles.load(Path(models) / MISSIONS_FILE)
        self.missions = None
        if tiles is not None and layout.missions:
            slots = SlotModel.load(Path(models) / SLOTS_FILE)
            self.missions = MissionReader(layout.picture, layout.missions, tiles, slots)

    def read(self, frame: np.ndarray, frame_from_board: np.ndarray | None = None) -> BoardReading:
        """Registers the frame unless a placement is given (a live loop holds the last one), then counts."""
        if frame_from_board is None:
            try:
                frame_from_board = self.registrar.register(frame).frame_from_board
            except BoardNotFound as err:
                return BoardReading(False, note=f"board not found: {err}")
        eras, pieces = self.counter.count(frame, frame_from_board)
        spots: list[SpotReading] = []
        if self.missions is not None:
            spots = self.missions.read(frame, frame_from_board)
            # a tile on its spot is read there; the net's mission pieces on a spot it read say it again
            quads = [self.missions.frame_quad(m.era, frame_from_board) for m in spots if m.seen]
            pieces = [p for p in pieces if p.label != "MISSION" or not any(_inside(q, p.x, p.y) for q in quads)]
        return BoardReading(True, tuple(eras), tuple(pieces), None, frame_from_board, tuple(spots))


def _inside(quad: np.ndarray, x: float, y: float) -> bool:
    return cv2.pointPolygonTest(quad.astype(np.float32).reshape(-1, 1, 2), (x, y), False) >= 0
