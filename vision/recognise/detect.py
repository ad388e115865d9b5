"""`tabletop detect`: cards in still pictures, as JSON or text, with annotated copies on request.

Each file is handled on its own: an unreadable file or one that is not a picture becomes an error entry for that
file, and the others still run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.recognise.recogniser import UNKNOWN, CardDetection, Recogniser

if TYPE_CHECKING:
    from vision.recognise.calibration import TableCalibration

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
COLOURS = {"known": (60, 200, 60), UNKNOWN: (0, 165, 255), "BACK": (230, 120, 40)}  # BGR


@dataclass(frozen=True)
class DetectResult:
    path: Path
    width: int = 0
    height: int = 0
    detections: tuple[CardDetection, ...] = ()
    error: str | None = None
    table_note: str | None = None  # why the cards have no table position, where a table layout was asked for
    table: TableCalibration | None = None  # the picture's table, where it was found (for pieces placed after cards)

    def to_json(self) -> dict:
        if self.error is not None:
            return {"image": str(self.path), "error": self.error}
        out = {
            "image": str(self.path),
            "width": self.width,
            "height": self.height,
            "detections": [d.to_json() for d in self.detections],
        }
        if self.table_note is not None:
            out["table_note"] = self.table_note
        return out


def expand_paths(items: Sequence[str | Path]) -> list[Path]:
    """Files as given; directories as the pictures directly inside them, sorted."""
    paths: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            paths += sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        else:
            paths.append(path)
    return paths


def read_image(path: Path) -> np.ndarray:
    """A colour picture, or ValueError naming why not (missing, unreadable, not a picture, empty)."""
    if not path.exists():
        raise ValueError("no such file")
    if path.is_dir():
        raise ValueError("is a directory")
    try:
        data = np.fromfile(path, np.uint8)
    except OSError as err:
        raise ValueError(f"unreadable ({err.strerror or err})") from err
    if data.size == 0:
        raise ValueError("empty file")
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError("not a picture OpenCV can decode (expected JPEG, PNG, BMP, WebP or TIFF)")
    return image


# Where a picture's table lies: its calibration (None where it cannot be had) and a note saying why not
TableSource = Callable[[np.ndarray], tuple["TableCalibration | None", str | None]]


def detect_files(
    paths: Iterable[Path], recogniser: Recogniser, table: TableSource | None = None
) -> Iterator[tuple[DetectResult, np.ndarray | None]]:
    """Each picture read and its cards found; with `table`, each card also placed on the table (mm and zone), from
    that picture's own calibration (a mat's markers are found in every picture anew)."""
    for path in paths:
        try:
            image = read_image(path)
        except ValueError as err:
            yield DetectResult(path, error=f"{path}: {err}"), None
            continue
        found = recogniser.recognise(image)
        note, calibration = None, None
        if table is not None:
            calibration, note = table(image)
            if calibration is not None:
                found = [calibration.place(d) for d in found]
        yield (
            DetectResult(path, image.shape[1], image.shape[0], tuple(found), table_note=note, table=calibration),
            image,
        )


def annotate(image: np.ndarray, detections: Sequence[CardDetection]) -> np.ndarray:
    """The picture with each card's outline and label (green read, orange unknown, blue back)."""
    out = image.copy()
    scale = max(out.shape[1] / 1280, 0.5)
    for det in detections:
        key = det.label if det.label in COLOURS else "known"
        colour = COLOURS[key]
        cv2.polylines(out, [np.round(det.quad).astype(np.int32)], True, colour, max(1, round(2 * scale)), cv2.LINE_AA)
        for box in det.index_boxes:
            x1, y1, x2, y2 = (round(v) for v in box)
            cv2.rectangle(out, (x1, y1), (x2, y2), colour, 1, cv2.LINE_AA)
        text = det.label if det.label != UNKNOWN else "?"
        if det.face_up and det.label != UNKNOWN:
            text += f" {det.confidence:.2f}"
        x, y = int(det.box[0]), int(max(det.box[1] - 4, 12))
        size = 0.5 * scale
        cv2.putText(out, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, size, (0, 0, 0), max(2, round(3 * scale)), cv2.LINE_AA)
        cv2.putText(out, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, size, colour, max(1, round(scale)), cv2.LINE_AA)
    return out


def annotation_path(out: Path, image: Path, many: bool) -> Path:
    """OUT is a folder for several pictures (or when it is one already), else the file to write."""
    if many or out.is_dir() or not out.suffix:
        return out / f"{image.stem}-cards.jpg"
    return out


def format_text(result: DetectResult) -> str:
    if result.error is not None:
        return f"{result.path}: error: {result.error.split(': ', 1)[-1]}"
    lines = [f"{result.path}: {len(result.detections)} cards ({result.width}x{result.height})"]
    if result.table_note:
        lines.append(f"  ({result.table_note})")
    for d in sorted(result.detections, key=lambda d: (d.box[1], d.box[0])):
        where = f" at {d.table_mm[0]:.0f},{d.table_mm[1]:.0f} mm" if d.table_mm else ""
        where += f" in {d.zone}" if d.zone else ""
        maybe = ""
        if d.label == UNKNOWN and d.candidates:
            maybe = " (maybe " + ", ".join(f"{c} {p:.2f}" for c, p in d.candidates[:2]) + ")"
        lines.append(f"  {d.label:7s} {d.confidence:.2f}  box {', '.join(f'{v:.0f}' for v in d.box)}{where}{maybe}")
    return "\n".join(lines)
