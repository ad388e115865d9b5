"""The LOOP's mission spots from the camera (issue 21): the board folder's "missions", the stand-in tiles, the
reader on frames whose truth is exact (tiles and cubes laid flat on the board's picture), the rendered scenes with
tiles on their spots, and the bench."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.board.layout import ERA_CODES, BoardLayoutError, load_board, save_board
from vision.board.missions import (
    BACK,
    MISSIONS_FILE,
    SLOTS_FILE,
    TILE_PX,
    MissionReader,
    MissionTiles,
    SlotModel,
    SpotReading,
    turned_box,
)
from vision.recognise.models import ModelError, models_dir

STAND_IN = models_dir() / "the-loop-board"
RED, GREEN = (20, 20, 160), (30, 120, 30)


@pytest.fixture(scope="module")
def board():
    return load_board(STAND_IN)


@pytest.fixture(scope="module")
def tiles() -> MissionTiles:
    return MissionTiles.load(models_dir() / MISSIONS_FILE)


def _placement(angle_deg: float, scale_px: float) -> np.ndarray:
    a = math.radians(angle_deg)
    turn = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    centre = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1.0]])
    return np.array([[scale_px, 0, 640], [0, scale_px, 360], [0, 0, 1.0]]) @ turn @ centre


def _lay(frame: np.ndarray, picture: np.ndarray, quad: np.ndarray) -> None:
    """Pastes `picture` into `frame` with its corners (TL, TR, BR, BL) on `quad` (frame pixels)."""
    h, w = picture.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    to_frame = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    size = (frame.shape[1], frame.shape[0])
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), to_frame, size)
    frame[mask > 0] = cv2.warpPerspective(picture, to_frame, size)[mask > 0]


def _table(board, to_frame: np.ndarray, spots: dict[str, tuple]) -> np.ndarray:
    """The board on a grey table; on each named spot: ("front", index, turns, filled slots), ("back", turns) or
    ("cover",) for a hand-grey patch over it."""
    frame = np.full((720, 1280, 3), (90, 100, 110), np.uint8)
    _lay(frame, board.picture, cv2.perspectiveTransform(np.float64([[[0, 0], [1, 0], [1, 1], [0, 1]]]), to_frame)[0])
    tiles = MissionTiles.load(models_dir() / MISSIONS_FILE)
    for era, what in spots.items():
        square = board.missions[era]
        centre = square.mean(axis=0)
        quad_board = centre + (square - centre) * 60 / 63
        if what[0] == "cover":
            quad_board = centre + (square - centre) * 1.3
            _lay(frame, np.full((8, 8, 3), (140, 170, 200), np.uint8), _to(to_frame, quad_board))
            continue
        picture = tiles.fronts[what[1]].copy() if what[0] == "front" else tiles.back.copy()
        if what[0] == "front":
            for slot in what[3]:
                x0, y0, x1, y1 = tiles.slots[what[1]][slot] * picture.shape[0]
                colour = RED if np.argmax(picture[round((y0 + y1) / 2), round((x0 + x1) / 2)]) == 2 else GREEN
                cv2.rectangle(picture, (round(x0), round(y0)), (round(x1) - 1, round(y1) - 1), colour, -1)
        turns = what[2] if what[0] == "front" else what[1]
        # the picture turned `turns` times as np.rot90 turns it: its corners land `turns` places further round
        _lay(frame, picture, np.roll(_to(to_frame, quad_board), -turns, axis=0))
    return frame


def _to(to_frame: np.ndarray, points: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(np.asarray(points, np.float64).reshape(-1, 1, 2), to_frame).reshape(-1, 2)


def test_the_stand_in_board_names_every_mission_spot_and_they_round_trip(board, tmp_path: Path) -> None:
    assert set(board.missions) == set(ERA_CODES)
    for square in board.missions.values():
        sides = np.linalg.norm(np.roll(square, -1, axis=0) - square, axis=1)
        assert np.allclose(sides, sides[0], rtol=1e-3) and 0.1 < sides[0] < 0.2  # 63 mm of 420
    save_board(tmp_path / "b", board.picture, board.eras, missions=board.missions)
    again = load_board(tmp_path / "b")
    assert all(np.allclose(again.missions[c], board.missions[c], atol=1e-5) for c in ERA_CODES)
    save_board(tmp_path / "none", board.picture, board.eras)
    assert load_board(tmp_path / "none").missions == {}  # "missions" may be left out


@pytest.mark.parametrize(
    ("missions", "message"),
    [
        ([1, 2], "'missions': expected an object"),
        ({"xyz": [[0, 0], [0.1, 0], [0.1, 0.1], [0, 0.1]]}, "'missions': unknown Era xyz"),
        ({"daw": [[0, 0], [0.1, 0], [0.1, 0.1]]}, "'missions.daw': expected the spot's 4 corners"),
        ({"daw": [[0, 0], [0.1, 0.05], [0.2, 0], [0.1, 0.2]]}, "'missions.daw': expected the spot's 4 corners"),
        ({"daw": [[0, 0], [1.5, 0], [1.5, 0.1], [0, 0.1]]}, "'missions.daw': points are fractions"),
        ({"daw": "here"}, "'missions.daw'"),
    ],
)
def test_a_bad_missions_field_is_refused_naming_it(board, tmp_path: Path, missions: object, message: str) -> None:
    save_board(tmp_path, board.picture, board.eras)
    data = json.loads((tmp_path / "board.json").read_text())
    data["missions"] = missions
    (tmp_path / "board.json").write_text(json.dumps(data))
    with pytest.raises(BoardLayoutError, match=message):
        load_board(tmp_path)


def test_a_turned_box_lands_where_rot90_puts_its_pixels() -> None:
    image = np.zeros((60, 60), np.uint8)
    box = np.array([0.1, 0.6, 0.3, 0.75])
    x0, y0, x1, y1 = (box * 60).astype(int)
    image[y0:y1, x0:x1] = 1
    for turns in range(5):
        bx0, by0, bx1, by1 = np.round(turned_box(box, turns) * 60).astype(int)
        turned = np.rot90(image, turns)
        assert turned[by0:by1, bx0:bx1].all() and turned.sum() == image.sum() == (by1 - by0) * (bx1 - bx0)


def test_every_face_is_scored_as_opencv_correlates_it_and_a_flat_view_fits_nothing(board, tiles: MissionTiles) -> None:
    """The reader correlates every face at every place in one product, the windows' lengths from integral images;
    each face's best score is OpenCV's normalised correlation coefficient (channels summed) at its best place."""
    from vision.board.missions import MATCH_SCALE, _small

    reader = MissionReader(board.picture, board.missions, tiles, SlotModel.load(models_dir() / SLOTS_FILE))
    rng = np.random.default_rng(5)
    view = cv2.GaussianBlur(rng.integers(0, 255, (reader.view_px, reader.view_px, 3), dtype=np.uint8), (3, 3), 0)
    offset = reader.view_px // 2 - TILE_PX // 2 + 3
    view[offset : offset + TILE_PX, offset - 5 : offset - 5 + TILE_PX] = np.rot90(tiles.fronts[2], 1)
    ranked = reader.candidates(view)
    assert (ranked[0].tile, ranked[0].turns) == (tiles.codes[2], 1) and ranked[0].score > 0.85
    small = _small(view).astype(np.float32)
    for c in ranked[:6]:
        face = next(f for name, k, _, f in reader.faces if name == c.tile and k == c.turns).astype(np.float32)
        expected = float(cv2.matchTemplate(small, face, cv2.TM_CCOEFF_NORMED).max())
        assert c.score == pytest.approx(expected, abs=2e-3)
        assert c.score <= expected + 1e-3  # the reader searches within its reach, OpenCV the whole view
    assert abs(ranked[0].at[0] - (offset - 5)) <= 1 / MATCH_SCALE and abs(ranked[0].at[1] - offset) <= 1 / MATCH_SCALE
    black = np.zeros_like(view)
    assert all(c.score == 0.0 for c in reader.candidates(black))  # not a division by a length of nothing


def test_the_stand_in_tiles_round_trip_and_a_bad_file_is_named(tiles: MissionTiles, tmp_path: Path) -> None:
    assert tiles.codes == tuple(f"M{n:02d}" for n in range(1, 11)) and len(tiles.slots) == 10
    assert all(1 <= len(s) <= 6 and ((s >= 0) & (s <= 1)).all() for s in tiles.slots)
    again = MissionTiles.load(tiles.save(tmp_path / "t.npz"))
    assert again.codes == tiles.codes and np.array_equal(again.fronts, tiles.fronts)
    with pytest.raises(ModelError, match="no mission tiles file"):
        MissionTiles.load(tmp_path / "missing.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ModelError, match="not a mission tiles file"):
        MissionTiles.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("angle", [0.0, 37.0, 200.0])
def test_the_reader_names_every_spot_and_counts_progress_cubes(board, tiles: MissionTiles, angle: float) -> None:
    to_frame = _placement(angle, 680.0)
    index = {code: i for i, code in enumerate(tiles.codes)}
    three = index[next(c for c, s in zip(tiles.codes, tiles.slots, strict=True) if len(s) == 3)]
    spots = {
        "daw": ("front", three, 0, (0, 2)),
        "med": ("back", 1),
        "ren": ("front", index["M05"], 3, ()),
        "ind": ("front", three, 2, (0, 1, 2)),
        "glo": ("cover",),
        "rob": ("back", 3),
    }  # "end": an empty spot
    frame = _table(board, to_frame, spots)
    reader = MissionReader(board.picture, board.missions, tiles, SlotModel.load(models_dir() / SLOTS_FILE))
    got = {r.era: r for r in reader.read(frame, to_frame)}
    assert set(got) == set(ERA_CODES)

    def progress(code_index: int, slots: tuple[int, ...]) -> dict[str, int]:
        picture = tiles.fronts[code_index]
        out = {"red": 0, "green": 0}
        for slot in slots:
            x0, y0, x1, y1 = tiles.slots[code_index][slot] * picture.shape[0]
            out["red" if np.argmax(picture[round((y0 + y1) / 2), round((x0 + x1) / 2)]) == 2 else "green"] += 1
        return out

    assert (got["daw"].tile, got["daw"].progress) == (tiles.codes[three], progress(three, (0, 2)))
    assert (got["ind"].tile, got["ind"].progress) == (tiles.codes[three], progress(three, (0, 1, 2)))
    assert (got["ren"].tile, got["ren"].progress) == ("M05", {"red": 0, "green": 0})
    assert got["med"].tile == BACK and got["rob"].tile == BACK and got["med"].progress == {"red": 0, "green": 0}
    assert got["end"].tile is None and got["end"].seen
    assert not got["glo"].seen and got["glo"].tile is None  # covered: not guessed
    assert all(0.0 <= r.confidence <= 1.0 for r in got.values())
    # the spot's centre in the frame
    centre = _to(to_frame, board.missions["daw"].mean(axis=0)[None])[0]
    assert math.dist((got["daw"].x, got["daw"].y), centre) < 1.0


def test_a_spot_keeps_its_reading_until_its_view_changes(board, tiles: MissionTiles) -> None:
    to_frame = _placement(10.0, 680.0)
    three = next(i for i, s in enumerate(tiles.slots) if len(s) == 3)
    reader = MissionReader(board.picture, board.missions, tiles, SlotModel.load(models_dir() / SLOTS_FILE))
    before = {r.era: r for r in reader.read(_table(board, to_frame, {"daw": ("front", three, 1, ())}), to_frame)}
    assert before["daw"].tile == tiles.codes[three] and sum(before["daw"].progress.values()) == 0
    noisy = _table(board, to_frame, {"daw": ("front", three, 1, ())}).astype(np.int16)
    noisy += np.random.default_rng(0).normal(0, 3, noisy.shape).astype(np.int16)
    again = {r.era: r for r in reader.read(np.clip(noisy, 0, 255).astype(np.uint8), to_frame)}
    assert again == before  # camera noise: the spots are not read again, and say the same
    after = {r.era: r for r in reader.read(_table(board, to_frame, {"daw": ("front", three, 1, (1,))}), to_frame)}
    assert sum(after["daw"].progress.values()) == 1  # a cube put on a slot: that spot is read again
    assert after["med"] == before["med"]
    reader.forget()
    assert reader.read(_table(board, to_frame, {}), to_frame)[0].tile is None  # afresh: the tile was taken away


def test_a_spot_off_the_frame_is_not_read(board, tiles: MissionTiles) -> None:
    to_frame = np.array([[1, 0, 450], [0, 1, 0], [0, 0, 1.0]]) @ _placement(0.0, 700.0)
    frame = _table(board, to_frame, {})
    read = MissionReader(board.picture, board.missions, tiles, SlotModel.load(models_dir() / SLOTS_FILE)).read(
        frame, to_frame
    )
    assert 0 < len(read) < 7 and all(r.tile is None for r in read)


def test_the_board_reader_reports_missions_in_json_and_text(board, tiles: MissionTiles) -> None:
    from companion_ui.cli_cards import format_board
    from vision.board.read import BoardReader

    to_frame = _placement(15.0, 680.0)
    frame = _table(board, to_frame, {"daw": ("front", 4, 1, (0,)), "med": ("back", 0), "glo": ("cover",)})
    reading = BoardReader(board, models_dir()).read(frame, to_frame)
    out = reading.to_json()
    assert out["missions"]["daw"]["tile"] == "M05" and sum(out["missions"]["daw"]["progress"].values()) == 1
    assert out["missions"]["med"]["tile"] == BACK and out["missions"]["end"]["tile"] is None
    assert out["missions"]["glo"]["seen"] is False
    missions = [p for p in out["pieces"] if p["label"] == "MISSION"]
    assert sorted((p["zone"], p["tile"]) for p in missions) == [("daw", "M05"), ("med", BACK)]
    text = format_board(reading)
    assert "daw: no cubes; mission M05 (1 " in text and "med: no cubes; mission face down" in text
    assert "end: no cubes; no mission" in text and "glo: no cubes; mission spot covered" in text


def test_a_reading_as_json() -> None:
    spot = SpotReading("daw", "M03", {"red": 1, "green": 0}, 0.5, 10.0, 20.0)
    assert spot.to_json() == {
        "seen": True,
        "tile": "M03",
        "progress": {"red": 1, "green": 0},
        "confidence": 0.5,
        "center": [10.0, 20.0],
    }


def test_scenes_lay_tiles_on_their_spots_without_changing_the_rest(test_design: Path) -> None:
    from games.the_loop.catalogue import load_catalogue
    from vision.synth.components import load_component
    from vision.synth.cube_scenes import cube_scene_spec

    pieces = load_component(test_design)
    slots = {c: m.slots for c, m in load_catalogue().missions.items()}
    for seed in range(4):
        plain, _, none = cube_scene_spec(np.random.default_rng(seed), pieces, 0, 1280, 720, 0)
        spec, _, spots = cube_scene_spec(
            np.random.default_rng(seed), pieces, 0, 1280, 720, 0, np.random.default_rng([seed, 7])
        )
        assert none == () and [s.era for s in spots] == list(ERA_CODES)
        assert spec.cards[: len(plain.cards)] == plain.cards and spec.solids[: len(plain.solids)] == plain.solids
        codes = [s.code for s in spots if s.code]
        assert len(codes) == len(set(codes))  # each mission once
        for s in spots:
            assert not s.progress or s.face_up
            assert all(slots[s.code][k] == colour for colour, _, _, k in s.progress)
            if s.code:
                assert len(s.progress) <= len(slots[s.code])
                assert math.dist((s.x_mm, s.y_mm), s.centre) < 8.0  # on its spot, a few mm off


@pytest.mark.slow
def test_the_mission_bench_reads_held_out_spots_beside_its_baseline(test_design: Path) -> None:
    """A regression floor on a few rendered frames of a test design (slow: 16 s; the reader's geometry is tested on
    exact frames above, in the default suite)."""
    from vision.board.mission_bench import format_mission_table, run_mission_bench

    result = run_mission_bench(test_design.parent, 6, 3, models_dir(), split="test", workers=1)
    reader, baseline = result["readers"]["reader"], result["readers"]["colour"]
    assert reader["spots"] >= 15 and reader["spots"] == baseline["spots"]
    assert reader["right_pct"] >= 70.0 and reader["right_pct"] > baseline["right_pct"], result
    assert result["latency_ms"]["median"] > 0
    whole = result["latency_ms"]["whole_board"]
    assert whole["median"] > result["latency_ms"]["median"]  # the spots are a part of the whole board
    table = format_mission_table(result)
    assert "pictures and slots" in table and "baseline" in table and "the whole board" in table


def test_bench_vision_refuses_a_negative_mission_count(capsys: pytest.CaptureFixture) -> None:
    from companion_ui.cli import main

    assert main(["bench", "vision", "--game", "the-loop", "--scenes", "0", "--mission-scenes", "-2"]) == 2
    assert "--mission-scenes must be 0 or more" in capsys.readouterr().err
