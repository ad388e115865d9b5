"""Table calibration and zones set up on the page, for a table without a printed mat (issue 20).

The player clicks four corners of something of known size lying on the table (a sheet of paper, a board, the mat's
own outline) on a still of the camera's picture and gives its size: that fixes the table plane, a homography from
the camera's pixels to millimetres. The page then shows the table seen from straight above, where a zone is a
rectangle in millimetres: the player drags one out and names it from the game's zones. Both are written to files
that `tabletop detect --calibration FILE --layout FILE` reads as well, and read back when the companion starts
again, so a table is set up once.

Why a top-down view for the zones: a rectangle dragged on the camera's slanted picture is not a rectangle on the
table; on the rectified view it is exactly the `box_mm` a layout file holds.

With a printed mat (`tabletop run --mat LAYOUT.json`, the layout `tabletop mat` wrote beside the picture) there is
nothing to click: the mat's markers give the plane in the frames the live loop hands to `follow`, and its zones are
the mat's. A bumped camera is found again at the next look; markers under a hand leave the plane as it was.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.recognise.calibration import CalibrationError, TableCalibration, calibration_from, read_json
from vision.table.markers import MatTracker
from vision.table.mat import LayoutError, MatLayout, layout_from_dict, load_layout, zone_names

CALIBRATION_FILE = "table-calibration.json"
LAYOUT_FILE = "table-layout.json"
VIEW_MAX_PX = 900  # the top-down view's longer side
VIEW_MARGIN = 1.0  # the view shows the clicked rectangle and this many times its size around it (within the frame)
MIN_SIDE_MM = 20.0


def default_folder() -> Path:
    base = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
    return base / "tabletop-companion" / "table"


class SetupError(ValueError):
    """What the player entered cannot set up the table; the message says what and why, and nothing changed."""


@dataclass
class TableView:
    """The top-down picture's place on the table: pixel (u, v) shows table point (x0 + u * mm_per_px, ...)."""

    x0: float
    y0: float
    mm_per_px: float
    width: int
    height: int

    def to_dict(self) -> dict[str, float]:
        return {"x0": self.x0, "y0": self.y0, "mm_per_px": self.mm_per_px, "width": self.width, "height": self.height}


def clicked_quad(points: Any, frame_size: tuple[int, int], picture: str) -> np.ndarray:
    """Four corners clicked on a picture `frame_size` (w, h) large, in order TL, TR, BR, BL, as a (4, 2) array; a
    SetupError names what is wrong with them (too few, outside the picture, crossed, mirrored)."""
    try:
        src = np.array(points, np.float64) if isinstance(points, list) else np.zeros(0)
    except (TypeError, ValueError):
        src = np.zeros(0)
    if src.shape != (4, 2) or not np.isfinite(src).all():
        raise SetupError(f"points: expected four [x, y] points in the {picture} (TL, TR, BR, BL)")
    w, h = frame_size
    if (src < 0).any() or (src[:, 0] > w).any() or (src[:, 1] > h).any():
        raise SetupError(f"points: every point must lie inside the {picture} ({w} x {h} px)")
    # in picture terms (y down) TL, TR, BR, BL go clockwise: a positive area; the other way round is a mirror
    area = cv2.contourArea(src.astype(np.float32), oriented=True)
    if not cv2.isContourConvex(src.astype(np.float32)) or abs(area) < 100:
        raise SetupError("points: the four points must outline the rectangle in order (TL, TR, BR, BL), none "
                         "inside the others and not in a line")  # fmt: skip
    if area < 0:
        raise SetupError("points: click the corners clockwise (top left, top right, bottom right, bottom left): "
                         "these go the other way, which would mirror it")  # fmt: skip
    return src


@dataclass
class TableSetup:
    """The table's calibration and zones for one companion run, kept in `folder`."""

    game: str
    folder: Path
    calibration: TableCalibration | None = None
    points_px: list[list[float]] = field(default_factory=list)
    size_mm: tuple[float, float] | None = None
    frame_size: tuple[int, int] | None = None  # (w, h) of the camera picture the points were clicked on
    notes: list[str] = field(default_factory=list)  # what was read back at start, or why it was not
    mat: MatTracker | None = None  # a printed mat's markers place the table instead of four clicked points
    mat_state: str = ""  # the mat's last MatStatus.state
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def with_mat(cls, game: str, folder: Path, layout: MatLayout) -> TableSetup:
        """A table placed by a printed mat of this game (its layout as `tabletop mat` wrote it)."""
        if layout.game != game:
            raise SetupError(f"the mat is {layout.game}'s, but the game on the table is {game}")
        try:
            tracker = MatTracker(layout)
        except ValueError as err:
            raise SetupError(f"the mat cannot place the table: {err}") from err
        return cls(
            game, folder, size_mm=layout.size_mm, mat=tracker, notes=[f"a printed {layout.paper} mat places the table"]
        )

    def follow(self, frame: np.ndarray) -> str | None:
        """The mat's plane from this frame's markers. Returns what to tell the players when it changes: found,
        found again after the camera moved, or lost."""
        if self.mat is None:
            return None
        status = self.mat.update(frame)
        with self.lock:
            self.calibration = self.mat.calibration
            self.frame_size = (frame.shape[1], frame.shape[0])
        before, self.mat_state = self.mat_state, status.state
        if status.state == "fitted":
            return "The mat is found: each card is placed in its zone."
        if status.state == "moved":
            return "The camera moved: the mat is found again in its new place."
        if status.state == "lost" and before != "lost":
            return "The mat's markers are out of sight: zones wait until they show again."
        return None

    def _no_mat(self) -> None:
        if self.mat is not None:
            raise SetupError("this table is placed by its printed mat's markers (--mat), and its zones are the mat's")

    @classmethod
    def open(cls, game: str, folder: Path) -> TableSetup:
        """The setup saved in `folder` before, if any. A file that cannot be used is reported and set aside, never
        fatal: the companion starts uncalibrated and the player sets the table again."""
        setup = cls(game, folder)
        calibration_path, layout_path = folder / CALIBRATION_FILE, folder / LAYOUT_FILE
        if not calibration_path.is_file():
            return setup
        try:
            data = read_json(calibration_path, "calibration", CalibrationError)
            calibration = calibration_from(data, calibration_path)  # a dict, or it would have been refused
            layout = load_layout(layout_path) if layout_path.is_file() else None
            if layout is not None and layout.game != game:
                setup.notes.append(f"{layout_path}: zones for {layout.game}, not {game}: not used")
                layout = None
        except (CalibrationError, LayoutError, ValueError) as err:
            setup.notes.append(f"the saved table setup was not used: {err}")
            return setup
        setup.calibration = TableCalibration(calibration.homography, layout)
        assert isinstance(data, dict)
        setup.points_px = data.get("image_points", [])
        size = data.get("size_mm")
        setup.size_mm = (float(size[0]), float(size[1])) if isinstance(size, list) and len(size) == 2 else None
        frame = data.get("frame_size")
        setup.frame_size = (int(frame[0]), int(frame[1])) if isinstance(frame, list) and len(frame) == 2 else None
        setup.notes.append(f"table setup read from {folder}")
        return setup

    def set_points(self, points: Any, width_mm: float, height_mm: float, frame_size: tuple[int, int]) -> None:
        """Four points clicked on the camera's picture (TL, TR, BR, BL of a rectangle lying on the table) and that
        rectangle's size. The zones set before are kept (they are in table millimetres, which this re-defines:
        the same rectangle clicked again keeps them where they were)."""
        self._no_mat()
        src = clicked_quad(points, frame_size, "camera picture")
        if min(width_mm, height_mm) < MIN_SIDE_MM:
            raise SetupError(f"width_mm, height_mm: the rectangle must be at least {MIN_SIDE_MM:.0f} mm a side")
        dst = np.array([[0, 0], [width_mm, 0], [width_mm, height_mm], [0, height_mm]], np.float64)
        homography = cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32)).astype(np.float64)
        with self.lock:
            layout = self.calibration.layout if self.calibration is not None else None
            record = {
                "source": "four points on the page",
                "image_points": src.tolist(),
                "table_mm": dst.tolist(),
                "size_mm": [width_mm, height_mm],
                "frame_size": list(frame_size),
            }
            self._write(CALIBRATION_FILE, record)
            self.calibration = TableCalibration(homography, layout)
            self.points_px, self.size_mm, self.frame_size = src.tolist(), (width_mm, height_mm), frame_size

    def set_zones(self, zones: Any) -> None:
        """The zones drawn on the top-down view, as a layout's `zones` list (each a name of this game's and a
        `box_mm`); an empty list clears them."""
        self._no_mat()
        if self.calibration is None:
            raise SetupError("set the table first: click four corners of something of known size")
        if not isinstance(zones, list):
            raise SetupError("zones: expected a list of {'name', 'box_mm'}")
        layout: MatLayout | None = None
        if zones:
            data = {"format": 1, "game": self.game, "paper": "custom", "zones": zones}
            try:
                layout = layout_from_dict(data, "zones")
            except LayoutError as err:
                raise SetupError(str(err)) from err
        with self.lock:
            if layout is None:
                (self.folder / LAYOUT_FILE).unlink(missing_ok=True)
            else:
                self._write(LAYOUT_FILE, layout.to_dict())
            self.calibration = TableCalibration(self.calibration.homography, layout)

    def _write(self, name: str, data: dict[str, Any]) -> None:
        """Whole or not at all: written beside, then renamed over the old file."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / (name + ".tmp")
            tmp.write_text(json.dumps(data, indent=1) + "\n")
            tmp.replace(self.folder / name)
        except OSError as err:
            raise SetupError(f"{self.folder}: cannot save the table setup there ({err.strerror or err})") from err

    def view(self, frame_size: tuple[int, int]) -> TableView | None:
        """Where the top-down view lies: around the clicked rectangle, clipped to what the camera sees."""
        if self.calibration is None or self.size_mm is None:
            return None
        w, h = frame_size
        seen = self.calibration.to_table(np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64))
        sw, sh = self.size_mm
        lo = np.array([-VIEW_MARGIN * sw, -VIEW_MARGIN * sh])
        hi = np.array([(1 + VIEW_MARGIN) * sw, (1 + VIEW_MARGIN) * sh])
        if np.isfinite(seen).all():
            lo, hi = np.maximum(lo, seen.min(axis=0)), np.minimum(hi, seen.max(axis=0))
        lo, hi = np.minimum(lo, 0), np.maximum(hi, [sw, sh])  # the rectangle itself always shows
        mm_per_px = float(max(hi - lo) / VIEW_MAX_PX)
        size = np.ceil((hi - lo) / mm_per_px).astype(int)
        return TableView(float(lo[0]), float(lo[1]), mm_per_px, int(size[0]), int(size[1]))

    def top_down(self, image: np.ndarray, zones: bool = True) -> tuple[np.ndarray, TableView] | None:
        """The camera picture seen from straight above, with the zones outlined and named (unless not `zones`)."""
        view = self.view((image.shape[1], image.shape[0]))
        if view is None or self.calibration is None:
            return None
        to_view = np.array([[1 / view.mm_per_px, 0, -view.x0 / view.mm_per_px],
                            [0, 1 / view.mm_per_px, -view.y0 / view.mm_per_px], [0, 0, 1]])  # fmt: skip
        picture = cv2.warpPerspective(image, to_view @ self.calibration.homography, (view.width, view.height))
        layout = self.calibration.layout if zones else None
        for zone in layout.zones if layout is not None else ():
            x0, y0, x1, y1 = zone.box_mm
            a = (round((x0 - view.x0) / view.mm_per_px), round((y0 - view.y0) / view.mm_per_px))
            b = (round((x1 - view.x0) / view.mm_per_px), round((y1 - view.y0) / view.mm_per_px))
            cv2.rectangle(picture, a, b, (255, 200, 0), 2, cv2.LINE_AA)
            cv2.putText(picture, zone.name, (a[0] + 4, a[1] + 18), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 200, 0), 2)
        return picture, view

    def status(self) -> dict[str, Any]:
        layout = self.calibration.layout if self.calibration is not None else None
        view = self.view(self.frame_size) if self.frame_size else None
        return {
            "game": self.game,
            "zone_names": list(zone_names(self.game)),
            "calibrated": self.calibration is not None,
            "source": "mat" if self.mat is not None else ("points" if self.calibration is not None else None),
            "mat_state": self.mat_state,
            "points_px": self.points_px,
            "size_mm": list(self.size_mm) if self.size_mm else None,
            "frame_size": list(self.frame_size) if self.frame_size else None,
            "view": view.to_dict() if view else None,
            "zones": [{"name": z.name, "box_mm": list(z.box_mm)} for z in layout.zones] if layout else [],
            "files": {
                "calibration": str(self.folder / CALIBRATION_FILE) if self.calibration is not None else None,
                "layout": str(self.folder / LAYOUT_FILE) if layout is not None else None,
            },
            "notes": self.notes,
        }

    def zone_of(self, quad_px: np.ndarray) -> str | None:
        """The zone a card outlined by `quad_px` (camera pixels) lies in, by its centre; None without zones."""
        calibration = self.calibration
        if calibration is None or calibration.layout is None:
            return None
        centre = calibration.to_table(quad_px).mean(axis=0)
        return calibration.layout.zone_at((float(centre[0]), float(centre[1])))
