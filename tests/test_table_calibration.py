"""The table plane from a printed mat's markers (issue 20): fitted from the markers in view to a fraction of a
millimetre, refitted when hands cover some, held when too few show, refitted after the camera is bumped; cards
placed in millimetres and zones; layout files read back or refused with the field named."""

from __future__ import annotations

import json
from functools import cache

import cv2
import numpy as np
import pytest

from companion_ui.cli import main
from vision.recognise.calibration import TableCalibration, load_calibration
from vision.recognise.recogniser import CardDetection
from vision.synth.camera import apply_homography
from vision.table.bench import MAT_PX_PER_MM, camera_homography, format_table, run_table_bench
from vision.table.markers import MatTracker, find_markers, fit_plane
from vision.table.mat import LayoutError, layout_from_dict, load_layout, mat_layout, render_mat, write_mat

LAYOUT = mat_layout("loot-the-loop", "a4")


@cache
def mat_picture() -> np.ndarray:
    mat = cv2.cvtColor(np.array(render_mat(LAYOUT, dpi=round(MAT_PX_PER_MM * 25.4))), cv2.COLOR_RGB2BGR)
    return cv2.resize(mat, (round(LAYOUT.size_mm[0] * MAT_PX_PER_MM), round(LAYOUT.size_mm[1] * MAT_PX_PER_MM)))


def view(table_to_frame: np.ndarray, cover: tuple[int, ...] = ()) -> np.ndarray:
    """The mat on a grey table, as a camera with this homography sees it, sharp; the markers `cover` painted over."""
    to_frame = table_to_frame @ np.diag([1 / MAT_PX_PER_MM, 1 / MAT_PX_PER_MM, 1.0])
    frame = cv2.warpPerspective(mat_picture(), to_frame, (1280, 720), borderValue=(90, 100, 110))
    for marker in LAYOUT.markers:
        if marker.id in cover:
            corners = apply_homography(table_to_frame, np.array(marker.corners_mm)).astype(np.int32)
            cv2.fillConvexPoly(frame, cv2.convexHull(corners), (120, 150, 200))
    return frame


def error_mm(calibration: TableCalibration, table_to_frame: np.ndarray) -> float:
    """The largest error over a grid of the whole mat, table mm."""
    xs, ys = np.meshgrid(np.linspace(0, LAYOUT.size_mm[0], 12), np.linspace(0, LAYOUT.size_mm[1], 9))
    grid = np.column_stack([xs.ravel(), ys.ravel()])
    return float(np.linalg.norm(calibration.to_table(apply_homography(table_to_frame, grid)) - grid, axis=1).max())


def test_the_markers_in_view_give_the_table_plane_to_a_fraction_of_a_millimetre_at_any_tilt():
    for tilt in (0, 25, 45):
        h = camera_homography(LAYOUT, tilt, 0.6, yaw_deg=10)
        tracker = MatTracker(LAYOUT)
        status = tracker.update(view(h))
        assert status.state == "fitted" and status.markers == len(LAYOUT.markers)
        assert tracker.calibration is not None and error_mm(tracker.calibration, h) < 1.0, tilt


def test_hands_over_markers_bumps_and_a_covered_mat_keep_or_drop_the_plane_as_they_should():
    h = camera_homography(LAYOUT, 20, 0.6)
    tracker = MatTracker(LAYOUT)
    assert tracker.update(view(h)).state == "fitted"
    # hands over four of the six markers: refitted from the two left, still exact
    status = tracker.update(view(h, cover=(0, 1, 2, 4)))
    assert (status.state, status.markers) == ("refitted", 2)
    assert error_mm(tracker.calibration, h) < 1.5
    # all but one covered: the plane is held (the one in view agrees with it)
    assert tracker.update(view(h, cover=(0, 1, 2, 3, 4))).state == "held"
    assert error_mm(tracker.calibration, h) < 1.5
    # the camera bumped: the markers moved, the plane is refitted to the new view
    bumped = camera_homography(LAYOUT, 24, 0.62, yaw_deg=3, shift=(12.0, -8.0))
    assert tracker.update(view(bumped)).state == "moved"
    assert error_mm(tracker.calibration, bumped) < 1.0
    # bumped again while one marker shows: it disagrees with the plane and cannot fit a new one, so no plane
    again = camera_homography(LAYOUT, 20, 0.6, yaw_deg=-6)
    assert tracker.update(view(again, cover=(0, 1, 2, 3, 4))).state == "lost"
    assert tracker.calibration is None
    assert tracker.update(view(again, cover=(0, 1, 2, 3, 4, 5))).state == "none"
    assert tracker.update(view(again)).state == "fitted" and error_mm(tracker.calibration, again) < 1.0


def test_a_marker_the_layout_does_not_list_or_one_misplaced_does_not_bend_the_plane():
    h = camera_homography(LAYOUT, 15, 0.6)
    sightings = find_markers(view(h))
    moved = [s if s.id != 2 else type(s)(s.id, s.corners + 25.0) for s in sightings]  # one marker read 25 px off
    fit = fit_plane(moved, LAYOUT)
    assert fit is not None and 2 not in fit.markers and fit.error_mm < 0.5
    assert fit_plane(sightings[:1], LAYOUT) is None  # one marker is too few


def test_the_plane_fit_does_not_hang_on_what_drew_from_opencvs_generator_before_it():
    """OpenCV's classic RANSAC draws from a generator of its own, seeded alike on every call; USAC's methods draw from
    the process-wide one (session 52: the board's registration moved with what ran before it). The markers' plane must
    stay the first kind: the same sightings, the same plane, whatever was drawn before."""
    sightings = find_markers(view(camera_homography(LAYOUT, 30, 0.6)))
    moved = [s if s.id != 2 else type(s)(s.id, s.corners + 25.0) for s in sightings]
    fits = []
    for seed in (1, 2, 3):
        cv2.setRNGSeed(seed)
        fits.append(fit_plane(moved, LAYOUT))
    assert all(f is not None and np.array_equal(f.homography, fits[0].homography) for f in fits)


def test_a_card_is_placed_in_millimetres_and_in_the_zone_it_lies_in():
    h = camera_homography(LAYOUT, 30, 0.6)
    tracker = MatTracker(LAYOUT)
    tracker.update(view(h))
    deck = next(z for z in LAYOUT.zones if z.name == "deck")
    x0, y0, x1, y1 = deck.box_mm
    centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
    card_mm = centre + np.array([[-31.5, -44], [31.5, -44], [31.5, 44], [-31.5, 44]])
    quad = apply_homography(h, card_mm).astype(np.float32)
    card = tracker.calibration.place(CardDetection("7S", True, 0.9, quad, (0, 0, 1, 1)))
    assert card.zone == "deck" and np.allclose(card.table_mm, centre, atol=1.0)
    assert card.to_json()["zone"] == "deck"
    outside = tracker.calibration.place(
        CardDetection("7S", True, 0.9, apply_homography(h, card_mm - [0, 120]), (0, 0, 1, 1))
    )
    assert outside.zone is None and "zone" not in outside.to_json()


def test_a_mats_layout_file_reads_back_as_the_same_layout(tmp_path):
    _, meta = write_mat(LAYOUT, tmp_path / "mat.png", dpi=30)
    back = load_layout(meta)
    assert back.zones == LAYOUT.zones and back.markers == LAYOUT.markers and back.size_mm == LAYOUT.size_mm


def test_zones_drawn_by_hand_need_only_a_game_and_named_boxes(tmp_path):
    path = tmp_path / "table.json"
    path.write_text(json.dumps({"game": "loop", "zones": [{"name": "centre", "box_mm": [0, 0, 400, 300]}]}))
    layout = load_layout(path)
    assert layout.markers == () and layout.zone_at((200, 150)) == "centre" and layout.size_mm == (400, 300)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "expected a JSON object with 'game' and 'zones'"),
        ({"game": "chess", "zones": []}, "'game' 'chess' is not a game"),
        ({"game": "loop", "zones": []}, "'zones' must be a list of at least one"),
        ({"game": "loop", "zones": [{"name": "kitchen", "box_mm": [0, 0, 1, 1]}]}, "zones[0]: unknown zone 'kitchen'"),
        ({"game": "loop", "zones": [{"name": "centre", "box_mm": [0, 0, 1]}]}, "zones[0].box_mm: expected 4 numbers"),
        ({"game": "loop", "zones": [{"name": "centre", "box_mm": [5, 0, 1, 1]}]}, "with x0 < x1 and y0 < y1"),
        ({"game": "loop", "format": 2, "zones": [{"name": "centre", "box_mm": [0, 0, 1, 1]}]}, "'format' 2"),
        (
            {"game": "loop", "zones": [{"name": "centre", "box_mm": [0, 0, 9, 9]}], "markers": [{"id": 99}]},
            "markers[0].id: expected a whole number 0 to 47",
        ),
        (
            {
                "game": "loop",
                "zones": [{"name": "centre", "box_mm": [0, 0, 9, 9]}],
                "markers": [{"id": 1, "corners_mm": [[0, 0], [1, 0], [1, 1], [0, 1]]}] * 2,
            },
            "marker 1 is listed twice",
        ),
    ],
)
def test_a_bad_layout_is_refused_naming_the_field(data, message):
    with pytest.raises(LayoutError) as err:
        layout_from_dict(data, "table.json")
    assert message in str(err.value) and str(err.value).startswith("table.json")


def test_an_unreadable_layout_file_is_named(tmp_path):
    with pytest.raises(LayoutError, match="layout file not found"):
        load_layout(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(LayoutError, match="not a JSON layout file"):
        load_layout(tmp_path / "bad.json")


def test_detect_places_cards_with_a_mat_and_says_why_not_without_its_markers(tmp_path, capsys):
    _, meta = write_mat(LAYOUT, tmp_path / "mat.png", dpi=30)
    h = camera_homography(LAYOUT, 20, 0.6)
    cv2.imwrite(str(tmp_path / "seen.png"), view(h))
    cv2.imwrite(str(tmp_path / "covered.png"), view(h, cover=(0, 1, 2, 3, 4)))
    assert (
        main(["detect", str(tmp_path / "seen.png"), str(tmp_path / "covered.png"), "--layout", str(meta), "--json"])
        == 0
    )
    seen, covered = json.loads(capsys.readouterr().out)
    assert "table_note" not in seen
    assert covered["table_note"] == "1 of the mat's markers in view, 2 needed: no table positions"
    # a layout without markers needs a fixed calibration, and says so
    hand = tmp_path / "hand.json"
    hand.write_text(json.dumps({"game": "loop", "zones": [{"name": "centre", "box_mm": [0, 0, 400, 300]}]}))
    assert main(["detect", str(tmp_path / "seen.png"), "--layout", str(hand)]) == 2
    assert "has no mat markers; give --calibration FILE too" in capsys.readouterr().err
    assert main(["detect", str(tmp_path / "seen.png"), "--layout", str(tmp_path / "nope.json")]) == 2
    assert "layout file not found" in capsys.readouterr().err


def test_the_table_bench_reports_errors_by_tilt_distance_and_cover():
    result = run_table_bench(views=6, seed=2)
    assert result["all"]["views"] == 6 and set(result["by_tilt"]) == {"0-15 deg", "15-30 deg", "30-46 deg"}
    assert result["all"]["calibrated"] >= 4 and result["all"]["point_error_mm"]["median"] < 2.0
    assert result["time_ms"]["median"] > 0
    assert "point mm med/p95" in format_table(result)


def test_tabletop_bench_table_prints_the_table_and_writes_its_json(tmp_path, capsys):
    out = tmp_path / "table.json"
    argv = ["bench", "table", "--views", "3", "--paper", "a3", "--json", str(out), "--quiet", "--zone-scenes", "0"]
    assert main(argv) == 0
    assert "finding the markers and fitting the plane" in capsys.readouterr().out
    assert json.loads(out.read_text())["data"]["paper"] == "a3"
    assert main(["bench", "table", "--paper", "a5"]) == 2
    assert "unknown paper size" in capsys.readouterr().err


def test_calibrate_writes_a_calibration_from_four_points_or_a_mat_that_detect_reads(tmp_path, capsys):
    h = camera_homography(LAYOUT, 25, 0.6)
    cv2.imwrite(str(tmp_path / "seen.png"), view(h))
    # four points: the mat's corners as seen, and where they lie
    mm = np.array([[0, 0], [297, 0], [297, 210], [0, 210]], np.float64)
    px = apply_homography(h, mm)
    points = " ".join(f"{x:.2f},{y:.2f}" for x, y in px)
    out = tmp_path / "four.json"
    assert main(["calibrate", "--points", points, "--mm", "0,0 297,0 297,210 0,210", "-o", str(out)]) == 0
    four = load_calibration(out)
    assert np.allclose(four.to_table(px), mm, atol=0.05)
    # the mat's markers in a picture
    _, meta = write_mat(LAYOUT, tmp_path / "mat.png", dpi=30)
    assert main(["calibrate", str(tmp_path / "seen.png"), "--layout", str(meta), "-o", str(tmp_path / "m.json")]) == 0
    assert error_mm(load_calibration(tmp_path / "m.json"), h) < 1.0
    capsys.readouterr()
    # bad requests name what is wrong, and write nothing
    for argv, message in [
        (["--points", "1,2 3,4"], "expected four points"),
        (["--points", points], "--points needs --mm"),
        (["--cards", "--points", points], "calibrate from one of"),
        (["--cards"], "give the picture"),
        ([str(tmp_path / "seen.png"), "--cards"], "cards seen well enough to measure the table by, 3 needed"),
        ([str(tmp_path / "seen.png"), "--cards", "--card-mm", "63by88"], "expected WIDTHxHEIGHT"),
        (["--points", "0,0 1,1 2,2 3,3", "--mm", "0,0 1,0 1,1 0,1"], "must span an area"),
    ]:
        assert main(["calibrate", *argv, "-o", str(tmp_path / "bad.json")]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "bad.json").exists()


def test_the_plane_from_card_outlines_is_within_a_millimetre_or_two_from_three_cards():
    from vision.table.from_cards import CardPlaneError, card_rectangle, plane_from_cards

    rng = np.random.default_rng(4)
    h = camera_homography(mat_layout("loop", "a3"), 35, 0.7, yaw_deg=12)
    quads = []
    for centre, turn in (((100, 80), 0.3), ((300, 200), 2.0), ((220, 90), -1.0), ((80, 230), 0.9)):
        c, s = np.cos(turn), np.sin(turn)
        outline = (card_rectangle() - [31.5, 44]) @ np.array([[c, -s], [s, c]]).T + centre
        quads.append(apply_homography(h, outline) + rng.normal(0, 0.7, (4, 2)))
    plane = plane_from_cards(quads)
    # distances on the table come out right wherever the table's origin was put
    far = np.array([[20.0, 20.0], [400.0, 280.0]])
    seen = plane.homography
    mapped = apply_homography(seen, apply_homography(h, far))
    assert abs(np.linalg.norm(mapped[1] - mapped[0]) - np.linalg.norm(far[1] - far[0])) < 3.0
    assert plane.cards == 4 and plane.error_mm < 1.5
    with pytest.raises(CardPlaneError, match="no card outlines"):
        plane_from_cards([])


def test_cards_laid_in_a_mats_zones_are_read_and_placed_in_them_end_to_end(tmp_path):
    from vision.synth.export import write_procedural_deck
    from vision.table.bench import format_zones, run_zone_bench

    deck = write_procedural_deck(tmp_path / "deck")
    result = run_zone_bench(deck.path, "loop", "a3", scenes=2, seed=5)
    assert result["cards"] >= 5 and result["calibrated_scenes"] == 2
    # the cards' true outlines, placed through the markers, land in their zones: the geometry is exact
    assert result["zone_right_true_outlines_with_mat"] == 1.0
    assert 0.0 <= result["zone_right_with_mat"] <= 1.0 and "with the mat" in format_zones(result)
