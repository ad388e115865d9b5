"""The LOOP's board set up on the page (issue 21): a photo squared up from its four corners, its Eras and mission
spots drawn, saved as a board folder; every bad entry refused with the reason and nothing written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion_ui.board_setup import BOARD_PX, BoardSetup
from companion_ui.table_setup import SetupError
from vision.board.layout import ERA_CODES, load_board
from vision.recognise.models import models_dir

STAND_IN = models_dir() / "the-loop-board"


def board_photo(angle_deg: float = 12.0) -> tuple[np.ndarray, np.ndarray]:
    """A 1280 x 720 photo of the stand-in board seen at a slant, and where its corners (TL, TR, BR, BL) lie."""
    picture = load_board(STAND_IN).picture
    h, w = picture.shape[:2]
    a = math.radians(angle_deg)
    centre = np.array([640.0, 360.0])
    square = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float64) * 300
    turned = square @ np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])
    corners = turned * np.array([1.0, 0.8]) + centre  # foreshortened: the camera looks down at a slant
    corners[2:, 0] = centre[0] + (corners[2:, 0] - centre[0]) * 1.15  # ... nearer edge wider
    to_photo = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]), corners.astype(np.float32))
    photo = np.full((720, 1280, 3), (70, 90, 110), np.uint8)
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), to_photo, (1280, 720))
    photo[mask > 0] = cv2.warpPerspective(picture, to_photo, (1280, 720))[mask > 0]
    return photo, corners


def regions() -> tuple[dict, dict]:
    board = load_board(STAND_IN)
    return {c: p.tolist() for c, p in board.eras.items()}, {c: p.tolist() for c, p in board.missions.items()}


def test_a_photo_squared_up_and_its_regions_saved_make_a_board_the_camera_reads(tmp_path: Path) -> None:
    from vision.board.read import BoardReader

    photo, corners = board_photo()
    setup = BoardSetup.open(tmp_path / "board")
    assert setup.status()["folder"] is None and not setup.status()["squared"]
    _, data = cv2.imencode(".jpg", photo)
    setup.set_photo(data.tobytes())
    setup.set_corners(corners.tolist())
    assert setup.picture is not None and setup.picture.shape == (BOARD_PX, BOARD_PX, 3)
    # the squared-up photo is the board's own picture again
    stand_in = cv2.resize(load_board(STAND_IN).picture, (BOARD_PX, BOARD_PX))
    assert np.abs(setup.picture.astype(int) - stand_in.astype(int)).mean() < 12
    eras, missions = regions()
    folder = setup.save(eras, missions)
    board = load_board(folder)
    assert set(board.eras) == set(ERA_CODES) and set(board.missions) == set(ERA_CODES)
    again = BoardSetup.open(folder)
    assert again.status()["folder"] == str(folder) and again.status()["squared"] and "board read from" in again.notes[0]
    # the folder is one the camera reads: the board is found in the photo, and its empty spots read empty
    reading = BoardReader(board, models_dir()).read(photo)
    assert reading.found and len(reading.missions) == 7
    assert all(m.seen and m.tile is None for m in reading.missions)


def test_bad_entries_are_refused_with_the_reason_and_nothing_is_written(tmp_path: Path) -> None:
    setup = BoardSetup(tmp_path / "board")
    with pytest.raises(SetupError, match="send a photo of the board first"):
        setup.set_corners([[0, 0], [10, 0], [10, 10], [0, 10]])
    with pytest.raises(SetupError, match="not a picture"):
        setup.set_photo(b"this is not a photo")
    with pytest.raises(SetupError, match="too small"):
        setup.set_photo(np.zeros((200, 300, 3), np.uint8))
    photo, corners = board_photo()
    setup.set_photo(photo)
    with pytest.raises(SetupError, match="square the board up first"):
        setup.save(*regions())
    with pytest.raises(SetupError, match="clockwise"):
        setup.set_corners(corners[::-1].tolist())
    with pytest.raises(SetupError, match="inside the photo"):
        setup.set_corners((corners + np.array([2000.0, 0.0])).tolist())
    with pytest.raises(SetupError, match="come closer"):
        setup.set_corners([[10, 10], [110, 10], [110, 110], [10, 110]])
    setup.set_corners(corners.tolist())
    eras, missions = regions()
    with pytest.raises(SetupError, match="no polygon for end"):
        setup.save({k: v for k, v in eras.items() if k != "end"}, missions)
    with pytest.raises(SetupError, match=r"'missions\.daw': expected the spot's 4 corners"):
        setup.save(eras, {"daw": missions["daw"][:3]})
    with pytest.raises(SetupError, match="unknown Era xyz"):
        setup.save({**eras, "xyz": eras["daw"]}, {})
    assert not (tmp_path / "board").exists()  # nothing written by any of them
    setup.save(eras, {})  # mission spots are optional
    assert load_board(tmp_path / "board").missions == {}


def test_a_saved_board_that_cannot_be_read_is_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "board.json").write_text(json.dumps({"picture": "nowhere.jpg", "eras": {}}))
    setup = BoardSetup.open(tmp_path)
    assert setup.picture is None and "the saved board was not used" in setup.notes[0]


def test_a_photo_is_taken_up_to_its_own_limit_and_entries_to_theirs(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from companion_ui.access import MAX_BODY
    from companion_ui.server import create_app
    from companion_ui.session import new_manual

    session = new_manual("the-loop", None, 2, {})
    app = create_app(session, board=BoardSetup(tmp_path / "board"))
    client = TestClient(app)
    photo, corners = board_photo()
    _, data = cv2.imencode(".png", photo)
    assert len(data) > MAX_BODY  # larger than any entry may be
    assert client.post("/api/board/photo", content=data.tobytes()).json() == {"ok": True}
    assert client.get("/api/board").json()["photo"] == [1280, 720]
    assert client.post("/api/act", content=b"x" * (MAX_BODY + 1)).status_code == 413
    refused = client.post("/api/board/photo", content=b"not a photo")
    assert refused.status_code == 400 and "not a picture" in refused.json()["error"]
    assert client.post("/api/board/camera").json()["error"].startswith("no camera picture")
    assert client.post("/api/board/corners", json={"points": corners.tolist()}).json() == {"ok": True}
    assert client.get("/api/board/picture.jpg").headers["content-type"] == "image/jpeg"
    eras, missions = regions()
    assert client.post("/api/board/regions", json={"eras": eras, "missions": missions}).json() == {"ok": True}
    assert client.get("/api/board").json()["folder"] == str(tmp_path / "board")
