"""Printed play mats: ArUco markers at known places and each game's zones, outlined and named (issue 20).

A mat is one sheet (A4, Letter or A3, landscape) or several side by side for a large table. Everything on it is laid
out in millimetres of the sheet, so the markers a camera sees give the table plane exactly, and every zone is a
rectangle in the same millimetres: a card's table position says which zone it lies in. The layout is written beside
the picture as JSON (`MatLayout.to_dict`), which calibration reads back.

    tabletop mat --game loot-the-loop --paper a4 -o mat.pdf     (mat.pdf and mat.json)

Zones are fractions of the sheet's printable area, so one game's layout fits every paper size. Markers are OpenCV's
4x4 ArUco dictionary, six per sheet (ids 6k..6k+5 on sheet k: the four corners, MARGIN_MM in, then the middles of
the top and bottom edges), MARKER_MM wide. Two in view calibrate the table (`vision.table.markers`); six let hands
cover some and a camera that frames the mat tightly lose the corners (session 16: with four, a tight frame lost
two in three views).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vision.recognise.calibration import read_json

PAPERS: dict[str, tuple[float, float]] = {"a4": (297.0, 210.0), "letter": (279.4, 215.9), "a3": (420.0, 297.0)}
MARKER_MM = 30.0
MARGIN_MM = 8.0
ARUCO_DICTIONARY = cv2.aruco.DICT_4X4_50
MARKERS_PER_SHEET = 6
MAX_SHEETS = 8  # 48 marker ids: the dictionary holds 50
FORMATS = (".pdf", ".png")

# A seat per player along the near and far edges, as LOOP and Bag-O-Loot seat up to four
FOUR_SEATS = (
    ("seat 1", 0.02, 0.62, 0.48, 0.98),
    ("seat 2", 0.52, 0.62, 0.98, 0.98),
    ("seat 3", 0.02, 0.02, 0.48, 0.30),
    ("seat 4", 0.52, 0.02, 0.98, 0.30),
)
# Each game's zones as (name, x0, y0, x1, y1) in fractions of the sheet's area inside the marker band, for a table
# of one sheet. The names are the ones the game engines and the tracker use for places on the table.
ZONES: dict[str, tuple[tuple[str, float, float, float, float], ...]] = {
    "loot-the-loop": (
        ("deck", 0.02, 0.05, 0.36, 0.95),
        ("note 1", 0.40, 0.05, 0.58, 0.45),
        ("note 2", 0.61, 0.05, 0.79, 0.45),
        ("note 3", 0.82, 0.05, 0.98, 0.45),
        ("score pile", 0.40, 0.55, 0.98, 0.95),
    ),
    "loop": (
        *FOUR_SEATS,
        ("centre", 0.10, 0.33, 0.90, 0.59),
    ),
    "bag-o-loot": (
        *FOUR_SEATS,
        ("deck", 0.10, 0.33, 0.36, 0.59),
        ("junk", 0.40, 0.33, 0.64, 0.59),
        ("centre", 0.68, 0.33, 0.90, 0.59),
    ),
    "loot-roll": (
        ("player 1 equipment", 0.02, 0.62, 0.48, 0.98),
        ("player 2 equipment", 0.52, 0.62, 0.98, 0.98),
        ("monster pile", 0.02, 0.05, 0.20, 0.55),
        ("loot pile", 0.22, 0.05, 0.40, 0.55),
        ("bag", 0.42, 0.05, 0.58, 0.55),
        ("bank", 0.60, 0.05, 0.76, 0.55),
        ("dice tray", 0.78, 0.05, 0.98, 0.55),
    ),
    "the-loop": (
        ("board", 0.02, 0.05, 0.60, 0.95),
        ("agent 1", 0.63, 0.05, 0.80, 0.45),
        ("agent 2", 0.82, 0.05, 0.98, 0.45),
        ("agent 3", 0.63, 0.50, 0.80, 0.75),
        ("agent 4", 0.82, 0.50, 0.98, 0.75),
        ("HQ", 0.63, 0.78, 0.98, 0.95),
    ),
}


class MatError(ValueError):
    """A mat request that cannot be drawn: an unknown game or paper, a bad sheet count or output name."""


class LayoutError(ValueError):
    """A layout file that cannot be used: unreadable, malformed, or naming a zone its game does not have."""


@dataclass(frozen=True)
class Zone:
    name: str
    box_mm: tuple[float, float, float, float]  # x0, y0, x1, y1 on the table (sheet 0's top-left corner is 0, 0)

    def contains(self, point_mm: tuple[float, float]) -> bool:
        x, y = point_mm
        x0, y0, x1, y1 = self.box_mm
        return x0 <= x <= x1 and y0 <= y <= y1


@dataclass(frozen=True)
class Marker:
    id: int
    corners_mm: tuple[tuple[float, float], ...]  # TL, TR, BR, BL as ArUco lists them, table mm


@dataclass(frozen=True)
class MatLayout:
    game: str
    paper: str
    sheets: int
    size_mm: tuple[float, float]  # the whole mat: sheets side by side
    markers: tuple[Marker, ...]
    zones: tuple[Zone, ...]

    def zone_at(self, point_mm: tuple[float, float]) -> str | None:
        """The zone a table point lies in (the first listed, where zones touch), or None."""
        return next((z.name for z in self.zones if z.contains(point_mm)), None)

    def to_dict(self) -> dict:
        return {
            "format": 1,
            "game": self.game,
            "paper": self.paper,
            "sheets": self.sheets,
            "size_mm": list(self.size_mm),
            "aruco": "DICT_4X4_50",
            "markers": [{"id": m.id, "corners_mm": [list(c) for c in m.corners_mm]} for m in self.markers],
            "zones": [{"name": z.name, "box_mm": list(z.box_mm)} for z in self.zones],
        }


def zone_names(game: str) -> tuple[str, ...]:
    """The places a game's engine and tracker know by name: the only names a layout may give its zones."""
    return tuple(name for name, *_ in ZONES[game])


def load_layout(path: str | Path) -> MatLayout:
    """A table layout from JSON: a printed mat's (written beside it by `tabletop mat`) or one written by hand for
    zones drawn on the table, in the same format. Only "game" and "zones" are required:

        {"format": 1, "game": "loop",
         "zones": [{"name": "seat 1", "box_mm": [x0, y0, x1, y1]}, ...],
         "markers": [{"id": 0, "corners_mm": [[x, y], x4]}, ...]}     (optional: the mat's ArUco markers)

    Every error names the file and the field, and what was expected."""
    path = Path(path)
    return layout_from_dict(read_json(path, "layout", LayoutError), str(path))


def layout_from_dict(data: object, source: str = "layout") -> MatLayout:
    if not isinstance(data, dict):
        raise LayoutError(f"{source}: expected a JSON object with 'game' and 'zones'")
    if data.get("format", 1) != 1:
        raise LayoutError(f"{source}: 'format' {data.get('format')!r} is not one this version reads (expected 1)")
    game = data.get("game")
    if game not in ZONES:
        raise LayoutError(f"{source}: 'game' {game!r} is not a game (expected one of {', '.join(ZONES)})")
    zones_in = data.get("zones")
    if not isinstance(zones_in, list) or not zones_in:
        raise LayoutError(f"{source}: 'zones' must be a list of at least one {{'name', 'box_mm'}}")
    known = zone_names(game)
    zones = []
    for k, item in enumerate(zones_in):
        where = f"{source}: zones[{k}]"
        if not isinstance(item, dict):
            raise LayoutError(f"{where}: expected an object with 'name' and 'box_mm'")
        name = item.get("name")
        if name not in known:
            raise LayoutError(f"{where}: unknown zone {name!r} for {game} (expected one of {', '.join(known)})")
        box = _numbers(item.get("box_mm"), 4, f"{where}.box_mm")
        if not (box[0] < box[2] and box[1] < box[3]):
            raise LayoutError(f"{where}.box_mm: expected [x0, y0, x1, y1] with x0 < x1 and y0 < y1, got {box}")
        zones.append(Zone(name, (box[0], box[1], box[2], box[3])))
    markers = []
    for k, item in enumerate(data.get("markers") or []):
        where = f"{source}: markers[{k}]"
        marker_id = item.get("id") if isinstance(item, dict) else None
        top = MARKERS_PER_SHEET * MAX_SHEETS
        if not isinstance(marker_id, int) or isinstance(marker_id, bool) or not 0 <= marker_id < top:
            raise LayoutError(f"{where}.id: expected a whole number 0 to {top - 1}, got {marker_id!r}")
        if any(m.id == marker_id for m in markers):
            raise LayoutError(f"{where}.id: marker {marker_id} is listed twice")
        corners = item.get("corners_mm")
        if not isinstance(corners, list) or len(corners) != 4:
            raise LayoutError(f"{where}.corners_mm: expected four [x, y] points (TL, TR, BR, BL)")
        points = tuple(tuple(_numbers(c, 2, f"{where}.corners_mm")) for c in corners)
        markers.append(Marker(marker_id, points))  # type: ignore[arg-type]
    extent = [z.box_mm for z in zones] + [(*m.corners_mm[0], *m.corners_mm[2]) for m in markers]
    size = data.get("size_mm") or [max(b[2] for b in extent), max(b[3] for b in extent)]
    width, height = _numbers(size, 2, f"{source}: size_mm")
    paper = data.get("paper", "custom")
    return MatLayout(game, str(paper), int(data.get("sheets", 1)), (width, height), tuple(markers), tuple(zones))


def _numbers(value: object, count: int, where: str) -> list[float]:
    """`count` finite numbers, or a LayoutError naming `where`."""
    ok = isinstance(value, list) and len(value) == count
    ok = ok and all(isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v) for v in value)  # type: ignore[union-attr]
    if not ok:
        raise LayoutError(f"{where}: expected {count} numbers, got {value!r}")
    return [float(v) for v in value]  # type: ignore[union-attr]


def mat_layout(game: str, paper: str = "a4", sheets: int = 1) -> MatLayout:
    """Where every marker and zone of a game's mat lies, in table millimetres. With several sheets, they lie side by
    side left to right and each zone spans all of them (a larger table, the same layout)."""
    if game not in ZONES:
        raise MatError(f"unknown game '{game}' (expected one of {', '.join(ZONES)})")
    if paper not in PAPERS:
        raise MatError(f"unknown paper size '{paper}' (expected one of {', '.join(PAPERS)})")
    if not 1 <= sheets <= MAX_SHEETS:
        raise MatError(f"sheets must be 1 to {MAX_SHEETS} (the marker dictionary's ids run out), not {sheets}")
    w, h = PAPERS[paper]
    markers = []
    for k in range(sheets):
        x = k * w
        places = [
            (x + MARGIN_MM, MARGIN_MM),
            (x + w - MARGIN_MM - MARKER_MM, MARGIN_MM),
            (x + w - MARGIN_MM - MARKER_MM, h - MARGIN_MM - MARKER_MM),
            (x + MARGIN_MM, h - MARGIN_MM - MARKER_MM),
            (x + (w - MARKER_MM) / 2, MARGIN_MM),
            (x + (w - MARKER_MM) / 2, h - MARGIN_MM - MARKER_MM),
        ]
        for j, (mx, my) in enumerate(places):
            corners = ((mx, my), (mx + MARKER_MM, my), (mx + MARKER_MM, my + MARKER_MM), (mx, my + MARKER_MM))
            markers.append(Marker(MARKERS_PER_SHEET * k + j, corners))
    band = MARGIN_MM + MARKER_MM + 4.0  # zones keep clear of the markers' band at top and bottom
    area = (MARGIN_MM, band, sheets * w - MARGIN_MM, h - band)
    zones = tuple(
        Zone(
            name,
            (
                _lerp(area[0], area[2], x0),
                _lerp(area[1], area[3], y0),
                _lerp(area[0], area[2], x1),
                _lerp(area[1], area[3], y1),
            ),
        )
        for name, x0, y0, x1, y1 in ZONES[game]
    )
    return MatLayout(game, paper, sheets, (sheets * w, h), tuple(markers), zones)


def _lerp(a: float, b: float, t: float) -> float:
    return round(a + (b - a) * t, 2)


def render_mat(layout: MatLayout, dpi: int = 150) -> Image.Image:
    """The mat as a white RGB picture at `dpi`: markers (with a white quiet zone), zones outlined and named."""
    px = dpi / 25.4
    width, height = (round(v * px) for v in layout.size_mm)
    canvas = np.full((height, width), 255, np.uint8)
    dictionary = cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY)
    side = round(MARKER_MM * px)
    for marker in layout.markers:
        x, y = (round(v * px) for v in marker.corners_mm[0])
        canvas[y : y + side, x : x + side] = cv2.aruco.generateImageMarker(dictionary, marker.id, side)
    image = Image.fromarray(canvas).convert("RGB")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=max(12, round(5 * px)))
    for zone in layout.zones:
        x0, y0, x1, y1 = (round(v * px) for v in zone.box_mm)
        draw.rounded_rectangle((x0, y0, x1, y1), radius=round(3 * px), outline=(70, 110, 170), width=max(2, round(px)))
        draw.text((x0 + round(2 * px), y0 + round(1.5 * px)), zone.name, fill=(70, 110, 170), font=font)
    for k in range(layout.sheets):  # where sheets meet, and which is which
        x = round(k * PAPERS[layout.paper][0] * px)
        draw.text((x + round(MARGIN_MM * px), height - round(6 * px)), f"{layout.game} {k + 1}/{layout.sheets}",
                  fill=(150, 150, 150), font=font)  # fmt: skip
    return image


def write_mat(layout: MatLayout, out: Path, dpi: int = 150) -> tuple[Path, Path]:
    """The mat's picture (PDF pages at the paper's true size, one per sheet, or one PNG of the whole mat) and its
    layout JSON beside it (same name, .json)."""
    if out.suffix.lower() not in FORMATS:
        raise MatError(f"{out}: the mat is written as {' or '.join(FORMATS)} (the name's suffix says which)")
    if not out.parent.is_dir():
        raise MatError(f"{out.parent}: no such folder")
    image = render_mat(layout, dpi)
    if out.suffix.lower() == ".pdf":
        page = round(PAPERS[layout.paper][0] * dpi / 25.4)
        pages = [
            image.crop((k * page, 0, min((k + 1) * page, image.width), image.height)) for k in range(layout.sheets)
        ]
        pages[0].save(out, "PDF", resolution=dpi, save_all=True, append_images=pages[1:])
    else:
        image.save(out, dpi=(dpi, dpi))
    meta = out.with_suffix(".json")
    meta.write_text(json.dumps(layout.to_dict(), indent=1) + "\n")
    return out, meta
