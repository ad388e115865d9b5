"""Printed play mats (issue 20): the markers a camera finds where the layout says, every game's zones inside the
sheet and apart from the markers, true paper sizes in the PDF, and clear refusals of a bad request."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from companion_ui.cli import main
from vision.table.mat import ARUCO_DICTIONARY, PAPERS, ZONES, MatError, mat_layout, render_mat, write_mat


@pytest.mark.parametrize("game", sorted(ZONES))
def test_every_games_zones_lie_on_the_sheet_clear_of_the_markers(game):
    layout = mat_layout(game, "letter")
    w, h = layout.size_mm
    for zone in layout.zones:
        x0, y0, x1, y1 = zone.box_mm
        assert 0 < x0 < x1 < w and 0 < y0 < y1 < h, zone
        for marker in layout.markers:
            (mx0, my0), _, (mx1, my1), _ = marker.corners_mm
            assert x1 <= mx0 or x0 >= mx1 or y1 <= my0 or y0 >= my1, (zone, marker.id)
    first = layout.zones[0]
    x0, y0, x1, y1 = first.box_mm
    assert layout.zone_at(((x0 + x1) / 2, (y0 + y1) / 2)) == first.name
    assert layout.zone_at((1.0, 1.0)) is None  # the corner of the sheet is no zone


def test_a_camera_finds_the_markers_where_the_layout_puts_them():
    layout = mat_layout("loot-the-loop", "a4", sheets=2)
    dpi = 100
    picture = np.array(render_mat(layout, dpi).convert("L"))
    view = cv2.copyMakeBorder(picture, 40, 40, 40, 40, cv2.BORDER_CONSTANT, value=255)
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY))
    corners, ids, _ = detector.detectMarkers(view)
    assert ids is not None and sorted(ids.ravel().tolist()) == list(range(12))
    expected = {m.id: np.array(m.corners_mm) * dpi / 25.4 + 40 for m in layout.markers}
    for quad, marker_id in zip(corners, ids.ravel(), strict=True):
        # within 2 px (0.5 mm at 100 dpi) of the layout: ArUco puts a corner on its edge pixels' centres, and the
        # picture rounds each marker to whole pixels
        assert np.abs(quad.reshape(4, 2) - expected[int(marker_id)]).max() < 2.0


def test_the_pdf_has_one_page_per_sheet_at_the_papers_true_size_and_the_layout_beside_it(tmp_path):
    out = tmp_path / "mat.pdf"
    assert main(["mat", "--game", "loot-roll", "--paper", "letter", "--sheets", "2", "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and data.count(b"/Type /Page\n") + data.count(b"/Type /Page ") >= 2
    width_pt, height_pt = (v / 25.4 * 72 for v in PAPERS["letter"])
    assert f"{width_pt:.0f}".encode() in data or f"{width_pt:.2f}".encode() in data  # the MediaBox: 792 x 612 pt
    assert f"{height_pt:.0f}".encode() in data
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["game"] == "loot-roll" and meta["sheets"] == 2 and len(meta["markers"]) == 12
    assert {z["name"] for z in meta["zones"]} >= {"bag", "bank", "dice tray", "monster pile", "loot pile"}


def test_a_png_mat_is_one_picture_of_the_whole_table(tmp_path):
    out = tmp_path / "mat.png"
    write_mat(mat_layout("the-loop", "a3"), out, dpi=50)
    with Image.open(out) as image:
        assert image.size == (round(420 * 50 / 25.4), round(297 * 50 / 25.4))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--game", "chess"], "unknown game 'chess'"),
        (["--game", "loop", "--paper", "a5"], "unknown paper size 'a5' (expected one of a4, letter, a3)"),
        (["--game", "loop", "--sheets", "0"], "sheets must be 1 to 8"),
        (["--game", "loop", "-o", "mat.svg"], "written as .pdf or .png"),
    ],
)
def test_a_bad_mat_request_is_refused_with_a_clear_message(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["mat", *argv]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_missing_output_folder_is_named():
    with pytest.raises(MatError, match="no such folder"):
        write_mat(mat_layout("loop"), Path("/nonexistent/dir/mat.pdf"))
