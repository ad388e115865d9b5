"""The LOOP's own board set up on the page (issue 21), once: the board folder the camera then reads it with.

A photo of the board (the camera's picture, or one sent from the page: a phone's photo from above does best) shows
it slanted. The player clicks its four corners, in order; the board is squared up from them into a picture
`BOARD_PX` wide, as if scanned. On that picture they click round each Era's region and name it, and may click the
four corners of each Era's mission spot. Saved, it is a board folder (`vision.board.layout`: board.json and
board.jpg) that `tabletop detect --game the-loop --board DIR` reads, and the companion reads back when it starts.

Why square it up first: the Eras are then drawn where they are printed, not where one camera happened to see them,
and the registration finds the board in any frame from its own picture.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion_ui.table_setup import SetupError, clicked_quad
from vision.board.layout import BOARD_JSON, ERA_CODES, MIN_PICTURE_PX, BoardLayoutError, load_board, parse_regions
from vision.board.layout import save_board as write_board

BOARD_PX = 1000  # the squared-up board picture's side
MIN_PHOTO_PX = 480  # a photo narrower than this cannot give the board picture enough detail


@dataclass
class BoardSetup:
    """The board being set up, and the folder it is saved in."""

    folder: Path
    photo: np.ndarray | None = None  # what the corners are clicked on
    picture: np.ndarray | None = None  # the board squared up (BOARD_PX square)
    eras: dict[str, list[list[float]]] = field(default_factory=dict)  # as saved: fractions of the picture
    missions: dict[str, list[list[float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(cls, folder: Path) -> BoardSetup:
        """The board saved in `folder` before, if any; one that cannot be read is reported, never fatal."""
        setup = cls(Path(folder))
        if not (setup.folder / BOARD_JSON).is_file():
            return setup
        try:
            board = load_board(setup.folder)
        except BoardLayoutError as err:
            setup.notes.append(f"the saved board was not used: {err}")
            return setup
        setup.picture = board.picture
        setup.eras = {c: p.tolist() for c, p in board.eras.items()}
        setup.missions = {c: p.tolist() for c, p in board.missions.items()}
        setup.notes.append(f"board read from {setup.folder}")
        return setup

    def set_photo(self, data: bytes | np.ndarray) -> None:
        """The photo to click the corners on: a picture file's bytes (JPEG, PNG, ...) or a camera frame."""
        photo = data if isinstance(data, np.ndarray) else cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if photo is None or photo.ndim != 3:
            raise SetupError("photo: not a picture this can read (send a JPEG or PNG photo of the board)")
        if min(photo.shape[:2]) < MIN_PHOTO_PX:
            raise SetupError(
                f"photo: {photo.shape[1]} x {photo.shape[0]} px is too small for the board's picture (at least "
                f"{MIN_PHOTO_PX} px a side)"
            )
        with self.lock:
            self.photo = np.ascontiguousarray(photo[..., :3])

    def set_corners(self, points: Any) -> None:
        """The board's four corners clicked on the photo (TL, TR, BR, BL): the board squared up from them. A round
        board: the corners of the square it fits in. Regions drawn before are kept (they are in board fractions)."""
        if self.photo is None:
            raise SetupError("photo: take the camera's picture or send a photo of the board first")
        h, w = self.photo.shape[:2]
        src = clicked_quad(points, (w, h), "photo")
        side = min(np.linalg.norm(np.roll(src, -1, axis=0) - src, axis=1))
        if side < MIN_PICTURE_PX / 2:
            raise SetupError(
                f"points: the board is {side:.0f} px across in the photo; come closer (at least "
                f"{MIN_PICTURE_PX // 2} px a side) so its picture shows the Eras"
            )
        dst = np.float32([[0, 0], [BOARD_PX, 0], [BOARD_PX, BOARD_PX], [0, BOARD_PX]])
        to_board = cv2.getPerspectiveTransform(src.astype(np.float32), dst)
        picture = cv2.warpPerspective(self.photo, to_board, (BOARD_PX, BOARD_PX), flags=cv2.INTER_AREA)
        with self.lock:
            self.picture = picture

    def save(self, eras: Any, missions: Any) -> Path:
        """Every Era's region (all seven) and the mission spots given (any), fractions of the squared picture:
        checked as a board folder's are, then written whole (nothing is written when anything is refused)."""
        if self.picture is None:
            raise SetupError("corners: square the board up first (its four corners on the photo)")
        try:
            polygons, spots = parse_regions({"eras": eras, "missions": missions or {}}, "the board's regions")
        except BoardLayoutError as err:
            raise SetupError(str(err)) from err
        try:
            write_board(self.folder, self.picture, polygons, missions=spots)
        except OSError as err:
            raise SetupError(f"{self.folder}: cannot save the board there ({err})") from err
        with self.lock:
            self.eras = {c: p.tolist() for c, p in polygons.items()}
            self.missions = {c: p.tolist() for c, p in spots.items()}
        return self.folder

    def status(self) -> dict[str, Any]:
        from games.the_loop.eras import ERAS

        saved = (self.folder / BOARD_JSON).is_file() and len(self.eras) == len(ERA_CODES)
        return {
            "eras": [{"code": c, "name": n} for c, n in zip(ERA_CODES, ERAS, strict=True)],
            "photo": None if self.photo is None else [self.photo.shape[1], self.photo.shape[0]],
            "squared": self.picture is not None,
            "regions": {"eras": self.eras, "missions": self.missions},
            "folder": str(self.folder) if saved else None,
            "notes": self.notes,
        }
