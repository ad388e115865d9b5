"""A board folder: the board's picture and where its Eras lie on it, as the cube counter needs them.

    board.json   {"picture": "board.jpg", "eras": {"daw": [[x, y], ...], "med": [...], ...},
                  "missions": {"daw": [[x, y], [x, y], [x, y], [x, y]], ...}}
    board.jpg    the board seen from straight above (a scan, a photo squared up, or the synthetic stand-in)

Each Era is a polygon in fractions of the picture (0-1 across, 0-1 down), in any order of its corners; all seven
Era codes must be there. "missions" may be left out (no mission tiles are read then); where given, it names for
some or all Eras the four corners of the spot, outside the ring, where that Era's mission tile lies, in order round
the square (either way, from any corner: a tile is read in all four turns). `models/the-loop-board/` holds the
stand-in (synthetic design 0) that is used until a player gives their own board's folder (`--board DIR`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

ERA_CODES = ("daw", "med", "ren", "ind", "glo", "rob", "end")  # The LOOP's Eras (the vocabulary games/the_loop uses)
BOARD_JSON = "board.json"
MIN_PICTURE_PX = 400  # the ring is cut from 60% of the picture (rectify.CUT_PX): a smaller picture blurs the reference


class BoardLayoutError(ValueError):
    """A board folder that cannot be used; the message names the file, the field and what was expected."""


@dataclass(frozen=True)
class BoardLayout:
    picture: np.ndarray  # BGR
    eras: dict[str, np.ndarray]  # Era code -> (n, 2) polygon in picture fractions
    folder: Path
    missions: dict[str, np.ndarray] = field(default_factory=dict)  # Era code -> (4, 2) mission spot, fractions


def load_board(folder: Path) -> BoardLayout:
    path = Path(folder) / BOARD_JSON
    if not path.is_file():
        raise BoardLayoutError(f"{path}: no board file (a board folder holds board.json and the board's picture)")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BoardLayoutError(f"{path}: not JSON ({err})") from err
    if not isinstance(data, dict):
        raise BoardLayoutError(f"{path}: expected an object with 'picture' and 'eras'")
    name = data.get("picture")
    if not isinstance(name, str) or not name:
        raise BoardLayoutError(f"{path}: 'picture': expected the board picture's file name")
    picture = cv2.imread(str(Path(folder) / name), cv2.IMREAD_COLOR)
    if picture is None:
        raise BoardLayoutError(f"{path}: 'picture': {Path(folder) / name} is missing or not a picture")
    if min(picture.shape[:2]) < MIN_PICTURE_PX:
        raise BoardLayoutError(
            f"{path}: 'picture': {picture.shape[1]}x{picture.shape[0]} px, expected at least {MIN_PICTURE_PX} px a side"
        )
    eras, missions = parse_regions(data, str(path))
    return BoardLayout(picture, eras, Path(folder), missions)


def parse_regions(data: dict, where: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The Eras' polygons and the mission spots of a board.json's object (or of what the page sent), checked;
    `where` names the source in the errors."""
    eras = data.get("eras")
    if not isinstance(eras, dict):
        raise BoardLayoutError(f"{where}: 'eras': expected an object of Era code -> polygon")
    unknown = sorted(set(eras) - set(ERA_CODES))
    if unknown:
        raise BoardLayoutError(f"{where}: 'eras': unknown Era {', '.join(unknown)} (expected {', '.join(ERA_CODES)})")
    missing = [c for c in ERA_CODES if c not in eras]
    if missing:
        raise BoardLayoutError(f"{where}: 'eras': no polygon for {', '.join(missing)}")
    polygons = {code: _polygon(where, f"eras.{code}", eras[code]) for code in ERA_CODES}
    return polygons, _missions(where, data.get("missions", {}))


def _missions(path: str, spots: object) -> dict[str, np.ndarray]:
    if not isinstance(spots, dict):
        raise BoardLayoutError(f"{path}: 'missions': expected an object of Era code -> the spot's four corners")
    unknown = sorted(set(spots) - set(ERA_CODES))
    if unknown:
        raise BoardLayoutError(
            f"{path}: 'missions': unknown Era {', '.join(unknown)} (expected {', '.join(ERA_CODES)})"
        )
    out = {}
    for code in (c for c in ERA_CODES if c in spots):
        square = _polygon(path, f"missions.{code}", spots[code])
        if len(square) != 4 or not cv2.isContourConvex(square.astype(np.float32)):
            raise BoardLayoutError(f"{path}: 'missions.{code}': expected the spot's 4 corners in order round it")
        out[code] = square
    return out


def _polygon(path: str, field_name: str, value: object) -> np.ndarray:
    where = f"{path}: '{field_name}'"
    try:
        polygon = np.asarray(value, np.float64)
    except (TypeError, ValueError) as err:
        raise BoardLayoutError(f"{where}: expected a list of [x, y] points") from err
    if polygon.ndim != 2 or polygon.shape[1] != 2 or len(polygon) < 3:
        raise BoardLayoutError(f"{where}: expected at least 3 [x, y] points")
    if not np.isfinite(polygon).all() or polygon.min() < 0 or polygon.max() > 1:
        raise BoardLayoutError(f"{where}: points are fractions of the picture, expected 0-1")
    if abs(cv2.contourArea(polygon.astype(np.float32))) < 1e-4:
        raise BoardLayoutError(f"{where}: the polygon encloses no area")
    return polygon


def save_board(
    folder: Path,
    picture: np.ndarray,
    eras: dict[str, np.ndarray],
    name: str = "board.jpg",
    missions: dict[str, np.ndarray] | None = None,
) -> None:
    """Writes a board folder (the picture as JPEG, quality 92), with the mission spots when given."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(folder / name), picture[..., :3], [cv2.IMWRITE_JPEG_QUALITY, 92]):
        raise OSError(f"{folder / name}: could not write the board picture")
    text = f'{{\n "picture": {json.dumps(name)},\n "eras": {{\n{_rows(eras)}\n }}'
    if missions:
        text += f',\n "missions": {{\n{_rows(missions)}\n }}'
    (folder / BOARD_JSON).write_text(text + "\n}\n")


def _rows(polygons: dict[str, np.ndarray]) -> str:
    """One Era a line: readable, and a diff names the Era that changed."""
    return ",\n".join(
        f'  "{c}": {json.dumps(np.round(np.asarray(polygons[c]), 5).tolist())}' for c in ERA_CODES if c in polygons
    )
