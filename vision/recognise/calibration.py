"""The table plane: a homography from frame pixels to millimetres on the table, read from a small JSON file.

    {"image_points": [[x, y], x4], "table_mm": [[X, Y], x4]}   (four points, e.g. a sheet's corners)
or  {"homography": [[h11, h12, h13], [h21, h22, h23], [h31, h32, h33]]}   (frame pixels to table mm)
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from vision.synth.camera import apply_homography

if TYPE_CHECKING:
    from vision.table.mat import MatLayout


class CalibrationError(ValueError):
    """The calibration file is missing, malformed, or describes no usable plane."""


@dataclass(frozen=True)
class TableCalibration:
    homography: np.ndarray  # 3x3, frame pixels to table mm
    layout: MatLayout | None = None  # the table's zones, in the same mm: a placed card is given the one it lies in

    def to_table(self, points: np.ndarray) -> np.ndarray:
        return apply_homography(self.homography, points)

    def place(self, detection: Any) -> Any:
        """The detection with its centre on the table (the mean of its mapped corners) and, where the layout has
        zones, the zone that centre lies in (None between zones)."""
        centre = self.to_table(np.asarray(detection.quad, np.float64)).mean(axis=0)
        where, zone = self.where(centre)
        return dataclasses.replace(detection, table_mm=where, zone=zone)

    def where(self, table_point: np.ndarray) -> tuple[tuple[float, float], str | None]:
        point = (float(table_point[0]), float(table_point[1]))
        return point, self.layout.zone_at(point) if self.layout is not None else None


def _matrix(value: object, name: str, shape: tuple[int, int], path: Path) -> np.ndarray:
    try:
        array = np.array(value, np.float64)
    except (TypeError, ValueError) as err:
        raise CalibrationError(f"{path}: '{name}' must be numbers, shape {shape}") from err
    if array.shape != shape or not np.isfinite(array).all():
        raise CalibrationError(f"{path}: '{name}' must be finite numbers of shape {shape}, got {array.shape}")
    return array


def read_json(path: Path, what: str, error: type[ValueError]) -> object:
    """A JSON file's content, or `error` naming the file and why it cannot be read (`what`: "calibration", ...)."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as err:
        raise error(f"{path}: {what} file not found") from err
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise error(f"{path}: not a JSON {what} file ({err})") from err


def load_calibration(path: str | Path) -> TableCalibration:
    path = Path(path)
    return calibration_from(read_json(path, "calibration", CalibrationError), path)


def calibration_from(data: object, path: Path) -> TableCalibration:
    """A calibration file's content (read from `path`, which the errors name) as the table plane it says."""
    if not isinstance(data, dict):
        raise CalibrationError(f"{path}: expected a JSON object with 'homography' or 'image_points' + 'table_mm'")
    if "homography" in data:
        h = _matrix(data["homography"], "homography", (3, 3), path)
    elif "image_points" in data and "table_mm" in data:
        src = _matrix(data["image_points"], "image_points", (4, 2), path).astype(np.float32)
        dst = _matrix(data["table_mm"], "table_mm", (4, 2), path).astype(np.float32)
        if abs(cv2.contourArea(src)) < 1 or abs(cv2.contourArea(dst)) < 1:
            raise CalibrationError(f"{path}: the four points must span an area (three or more are in a line)")
        h = cv2.getPerspectiveTransform(src, dst).astype(np.float64)
    else:
        raise CalibrationError(f"{path}: expected 'homography' (3x3) or 'image_points' and 'table_mm' (4x2 each)")
    if abs(np.linalg.det(h)) < 1e-12:
        raise CalibrationError(f"{path}: the homography is singular (it maps the table to a line)")
    return TableCalibration(h)
