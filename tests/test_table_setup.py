"""The table set up on the page (issue 20): four corners clicked on the camera's picture give the table plane, zones
dragged out on the top-down view give the layout; both are kept in files the CLI reads, read back at the next start,
and every bad entry is refused with its reason and changes nothing."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from companion_ui.live import Frame, FrameSource, LiveLoop, demo_clip
from companion_ui.server import create_app, free_port
from companion_ui.session import TrackedSession
from companion_ui.table_setup import CALIBRATION_FILE, LAYOUT_FILE, SetupError, TableSetup
from tests.servers import ROOT, TABLETOP
from vision.recognise.calibration import load_calibration
from vision.table.bench import MAT_PX_PER_MM, camera_homography, render_view
from vision.table.mat import MatLayout, load_layout, mat_layout, render_mat

# An A4 sheet seen at a slant: its corners (TL, TR, BR, BL) in a 1280 x 720 picture
SHEET_PX = [[400.0, 300.0], [880.0, 310.0], [960.0, 600.0], [330.0, 590.0]]
SHEET_MM = (297.0, 210.0)


@dataclass
class Still:
    """The frame loop's newest picture, as the routes read it (`LiveLoop.image`), without a camera."""

    image: np.ndarray


def table_picture() -> np.ndarray:
    """A grey table with the sheet drawn white where SHEET_PX says."""
    image = np.full((720, 1280, 3), 60, np.uint8)
    cv2.fillConvexPoly(image, np.round(SHEET_PX).astype(np.int32), (240, 240, 240))
    return image


def test_four_points_map_to_the_rectangle_and_are_kept_in_a_file_the_cli_reads(tmp_path: Path) -> None:
    setup = TableSetup("loot-the-loop", tmp_path)
    setup.set_points(SHEET_PX, *SHEET_MM, (1280, 720))
    corners = setup.calibration.to_table(np.array(SHEET_PX))
    assert np.allclose(corners, [[0, 0], [297, 0], [297, 210], [0, 210]], atol=1e-3)
    again = load_calibration(tmp_path / CALIBRATION_FILE)
    assert np.allclose(again.to_table(np.array(SHEET_PX)), corners, atol=1e-3)
    centre = np.mean(SHEET_PX, axis=0)
    assert 0 < setup.calibration.to_table(centre[None])[0, 0] < 297


def test_zones_give_each_card_its_zone_and_survive_a_restart(tmp_path: Path) -> None:
    setup = TableSetup("loot-the-loop", tmp_path)
    setup.set_points(SHEET_PX, *SHEET_MM, (1280, 720))
    setup.set_zones([{"name": "deck", "box_mm": [0, 0, 100, 210]}, {"name": "note 1", "box_mm": [120, 0, 180, 90]}])
    to_camera = np.linalg.inv(setup.calibration.homography)

    def card_at(x_mm: float, y_mm: float) -> np.ndarray:
        box = np.array(
            [[[x_mm - 20, y_mm - 30], [x_mm + 20, y_mm - 30], [x_mm + 20, y_mm + 30], [x_mm - 20, y_mm + 30]]],
            np.float64,
        )
        return cv2.perspectiveTransform(box, to_camera)[0]

    assert setup.zone_of(card_at(50, 105)) == "deck"
    assert setup.zone_of(card_at(150, 45)) == "note 1"
    assert setup.zone_of(card_at(250, 180)) is None
    assert load_layout(tmp_path / LAYOUT_FILE).zone_at((50, 105)) == "deck"
    reopened = TableSetup.open("loot-the-loop", tmp_path)
    assert reopened.zone_of(card_at(50, 105)) == "deck"
    assert reopened.size_mm == SHEET_MM and reopened.frame_size == (1280, 720)
    setup.set_zones([])
    assert setup.zone_of(card_at(50, 105)) is None and not (tmp_path / LAYOUT_FILE).exists()


@pytest.mark.parametrize(
    ("points", "size", "message"),
    [
        (SHEET_PX[:3], SHEET_MM, r"four \[x, y\] points"),
        ([[0, 0], [100, 100], [200, 200], [300, 300]], SHEET_MM, "in order"),
        ([SHEET_PX[0], SHEET_PX[2], SHEET_PX[1], SHEET_PX[3]], SHEET_MM, "in order"),
        ([[x + 1000, y] for x, y in SHEET_PX], SHEET_MM, "inside the camera picture"),
        (SHEET_PX[::-1], SHEET_MM, "clockwise"),
        (SHEET_PX, (5.0, 210.0), "at least 20 mm"),
    ],
)
def test_bad_points_are_refused_with_the_reason_and_change_nothing(
    tmp_path: Path, points: list, size: tuple[float, float], message: str
) -> None:
    setup = TableSetup("loot-the-loop", tmp_path)
    setup.set_points(SHEET_PX, *SHEET_MM, (1280, 720))
    before = (tmp_path / CALIBRATION_FILE).read_text()
    homography = setup.calibration.homography.copy()
    with pytest.raises(SetupError, match=message):
        setup.set_points(points, *size, (1280, 720))
    assert (tmp_path / CALIBRATION_FILE).read_text() == before
    assert np.array_equal(setup.calibration.homography, homography)


def test_bad_zones_are_refused_with_the_reason_and_change_nothing(tmp_path: Path) -> None:
    setup = TableSetup("loot-the-loop", tmp_path)
    with pytest.raises(SetupError, match="set the table first"):
        setup.set_zones([{"name": "deck", "box_mm": [0, 0, 10, 10]}])
    setup.set_points(SHEET_PX, *SHEET_MM, (1280, 720))
    setup.set_zones([{"name": "deck", "box_mm": [0, 0, 100, 210]}])
    with pytest.raises(SetupError, match="unknown zone 'bank' for loot-the-loop"):
        setup.set_zones([{"name": "bank", "box_mm": [0, 0, 10, 10]}])
    with pytest.raises(SetupError, match="x0 < x1"):
        setup.set_zones([{"name": "deck", "box_mm": [50, 0, 10, 10]}])
    assert [z.name for z in load_layout(tmp_path / LAYOUT_FILE).zones] == ["deck"]
    assert setup.calibration.layout.zone_at((50, 100)) == "deck"


def test_a_broken_saved_setup_is_set_aside_with_a_note_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / CALIBRATION_FILE).write_text("{not json")
    setup = TableSetup.open("loot-the-loop", tmp_path)
    assert setup.calibration is None
    assert any(CALIBRATION_FILE in note for note in setup.notes)
    TableSetup("loop", tmp_path).set_points(SHEET_PX, *SHEET_MM, (1280, 720))
    TableSetup.open("loop", tmp_path).set_zones([{"name": "centre", "box_mm": [10, 10, 200, 100]}])
    other = TableSetup.open("loot-the-loop", tmp_path)  # another game's zones are not this game's
    assert other.calibration is not None and other.calibration.layout is None
    assert any("zones for loop" in note for note in other.notes)


def test_an_unwritable_folder_is_a_clear_refusal(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    setup = TableSetup("loot-the-loop", blocker / "table")
    with pytest.raises(SetupError, match="cannot save the table setup there"):
        setup.set_points(SHEET_PX, *SHEET_MM, (1280, 720))
    assert setup.calibration is None


def test_the_page_api_sets_the_table_and_its_zones(tmp_path: Path) -> None:
    setup = TableSetup("loot-the-loop", tmp_path)
    client = TestClient(create_app(TrackedSession(), Still(table_picture()), table=setup))
    status = client.get("/api/table").json()
    assert status["calibrated"] is False and "deck" in status["zone_names"] and status["camera_size"] == [1280, 720]
    assert client.get("/api/table/view.jpg").status_code == 404  # nothing to look down on yet
    camera = cv2.imdecode(np.frombuffer(client.get("/api/table/camera.jpg").content, np.uint8), cv2.IMREAD_COLOR)
    assert camera.shape == (720, 1280, 3)
    refused = client.post("/api/table/points", json={"points": [[0, 0], [1, 1], [2, 2], [3, 3]], "width_mm": 297,
                                                      "height_mm": 210})  # fmt: skip
    assert refused.status_code == 400 and "in order" in refused.json()["error"]
    taken = client.post("/api/table/points", json={"points": SHEET_PX, "width_mm": 297, "height_mm": 210})
    assert taken.json() == {"ok": True}
    status = client.get("/api/table").json()
    view = status["view"]
    assert status["calibrated"] and status["files"]["calibration"].endswith(CALIBRATION_FILE)
    top = cv2.imdecode(np.frombuffer(client.get("/api/table/view.jpg").content, np.uint8), cv2.IMREAD_GRAYSCALE)
    assert top.shape == (view["height"], view["width"])

    def at(x_mm: float, y_mm: float) -> int:
        return int(top[round((y_mm - view["y0"]) / view["mm_per_px"]), round((x_mm - view["x0"]) / view["mm_per_px"])])

    assert at(148, 105) > 200 and at(-40, 105) < 100  # the sheet is white where the table says, and only there
    zones = {"zones": [{"name": "deck", "box_mm": [0, 0, 100, 210]}]}
    assert client.post("/api/table/zones", json=zones).json() == {"ok": True}
    assert client.get("/api/table").json()["zones"] == zones["zones"]
    bad = client.post("/api/table/zones", json={"zones": [{"name": "bag", "box_mm": [0, 0, 1, 1]}]})
    assert bad.status_code == 400 and "unknown zone 'bag'" in bad.json()["error"]
    assert json.loads((tmp_path / LAYOUT_FILE).read_text())["zones"] == [{"name": "deck", "box_mm": [0, 0, 100, 210]}]


def test_without_a_camera_picture_the_table_routes_say_so(tmp_path: Path) -> None:
    client = TestClient(create_app(TrackedSession(), None, table=TableSetup("loot-the-loop", tmp_path)))
    reply = client.post("/api/table/points", json={"points": SHEET_PX, "width_mm": 297, "height_mm": 210})
    assert reply.status_code == 404 and "no camera picture yet" in reply.json()["error"]


def mat_frames() -> tuple[MatLayout, list[np.ndarray], list[np.ndarray]]:
    """An A3 Loot the Loop mat seen by a camera (table mm -> frame homographies beside the frames): in view, under
    three hands, the camera bumped, and bumped again while five of its six markers are covered."""
    layout = mat_layout("loot-the-loop", "a3")
    mat = np.asarray(render_mat(layout, dpi=round(MAT_PX_PER_MM * 25.4)))[..., ::-1].copy()
    rng = np.random.default_rng(3)
    first = camera_homography(layout, 30, 0.8)
    bumped = camera_homography(layout, 34, 0.75, yaw_deg=4, shift=(25.0, -10.0))
    again = camera_homography(layout, 30, 0.75, shift=(-10.0, 8.0))
    frames = [
        render_view(mat, first, rng)[0],
        render_view(mat, first, rng, hands=3, layout=layout)[0],
        render_view(mat, bumped, rng)[0],
        render_view(mat, again, rng, hands=5, layout=layout)[0],
    ]
    return layout, frames, [first, first, bumped, again]


def test_a_printed_mat_places_the_table_through_hands_and_a_bumped_camera(tmp_path: Path) -> None:
    layout, frames, homographies = mat_frames()
    setup = TableSetup.with_mat("loot-the-loop", tmp_path, layout)
    deck = next(z for z in layout.zones if z.name == "deck")
    x0, y0, x1, y1 = deck.box_mm
    card_mm = np.array([[x0 + 10, y0 + 10], [x1 - 10, y0 + 10], [x1 - 10, y1 - 10], [x0 + 10, y1 - 10]], np.float64)

    def card_px(k: int) -> np.ndarray:
        return cv2.perspectiveTransform(card_mm[None], homographies[k])[0]

    told = [setup.follow(frames[0])]
    before = setup.calibration
    told += [setup.follow(frame) for frame in frames[1:3]]
    assert told[0] == "The mat is found: each card is placed in its zone." and told[1] is None
    assert "camera moved" in told[2]
    centre = card_mm.mean(axis=0)
    assert np.linalg.norm(setup.calibration.to_table(card_px(2)).mean(axis=0) - centre) < 3  # placed anew...
    assert np.linalg.norm(before.to_table(card_px(2)).mean(axis=0) - centre) > 10  # ...where the old plane misplaces it
    assert setup.zone_of(card_px(2)) == "deck"
    assert "out of sight" in setup.follow(frames[3]) and setup.zone_of(card_px(3)) is None  # one marker: no plane
    with pytest.raises(SetupError, match="printed mat"):
        setup.set_points(SHEET_PX, *SHEET_MM, (1280, 720))
    with pytest.raises(SetupError, match="printed mat"):
        setup.set_zones([])
    with pytest.raises(SetupError, match="the mat is loop's"):
        TableSetup.with_mat("loot-the-loop", tmp_path, mat_layout("loop", "a3"))


def test_the_frame_loop_follows_the_mat_and_tells_the_table(tmp_path: Path) -> None:
    layout, frames, _ = mat_frames()
    session = TrackedSession()
    live = LiveLoop(FrameSource(video=demo_clip(), realtime=False), session)
    live.table = TableSetup.with_mat("loot-the-loop", tmp_path, layout)
    live.step(Frame(0, frames[0], time.monotonic()))
    assert live.table.calibration is not None and live.table.mat_state == "fitted"
    assert any("The mat is found" in line["text"] for line in session.log_since(0))
    assert live.jpeg  # the page's picture, the mat's zones drawn on it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mat", "no-such-layout.json"], "--mat no-such-layout.json: no such file"),
        (["--mat", "{loop_mat}"], "the mat is loop's, but the game on the table is loot-the-loop"),
        (["--mat", "{not_json}"], "not a JSON layout file"),
        (["--table-dir", "{a_file}"], "not a folder"),
    ],
)
def test_run_refuses_a_bad_mat_or_table_folder_with_the_reason(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "loop.json").write_text(json.dumps(mat_layout("loop", "a4").to_dict()))
    (tmp_path / "bad.json").write_text("{nope")
    (tmp_path / "file").write_text("")
    names = {"loop_mat": tmp_path / "loop.json", "not_json": tmp_path / "bad.json", "a_file": tmp_path / "file"}
    argv = [a.format(**names) for a in args]
    done = subprocess.run([*TABLETOP, "demo", "--once", "--no-speech", "--port", str(free_port()), *argv],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)  # fmt: skip
    assert done.returncode != 0 and message in done.stderr, done.stderr[-1500:]
    assert "Traceback" not in done.stderr
