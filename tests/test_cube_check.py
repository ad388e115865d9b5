"""The cube checker (`vision.board.check`): candidates from the cube net's maps, windows of the fine cut, the second
look's verdicts settled into cubes, and how its training windows are labelled and turned."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision.board.check import (
    APART_SIDES,
    CLASSES,
    CONTEXT,
    CUBE_SIDES_PX,
    MERGE_SIDES,
    REACH_SIDES,
    VIEWS,
    candidates,
    context_of,
    context_windows,
    offsets_back,
    on_footprints,
    patches,
    settle,
    to_footprints,
    turned_offset,
    windows,
)
from vision.board.cubes import COLOURS, STRIDE, counts_of, planes
from vision.heatmap import turned
from vision.train.cube_check import label_candidates


def _heat(points: list[tuple[int, int, int, float]], cells: int = 100) -> np.ndarray:
    heat = np.zeros((len(COLOURS), cells, cells), np.float32)
    for c, cx, cy, v in points:
        heat[c, cy, cx] = v
    return heat


def test_candidates_are_peaks_on_the_fine_cut_one_per_spot_surest_first() -> None:
    # a red and a blue peak in the same cell (one spot), a green one three cells off, a faint one below the floor
    heat = _heat([(0, 10, 10, 0.9), (2, 10, 10, 0.4), (1, 13, 10, 0.6), (0, 50, 50, 0.04)])
    found = candidates(heat, 0.05, 400, 600)
    scale = 600 / 400
    x0 = (10 * STRIDE + (STRIDE - 1) / 2 + 0.5) * scale - 0.5
    x1 = (13 * STRIDE + (STRIDE - 1) / 2 + 0.5) * scale - 0.5
    assert [(x, y) for x, y, _ in found] == [(round(x0), round(x0)), (round(x1), round(x0))]
    assert [s for *_, s in found] == pytest.approx([0.9, 0.6])
    assert all(float(v).is_integer() for x, y, _ in found for v in (x, y))  # whole pixels: a window's centre
    assert (x1 - x0) > MERGE_SIDES * CUBE_SIDES_PX  # so the green one is a spot of its own
    assert candidates(heat, 0.95, 400, 600) == []


def test_windows_centre_the_point_and_are_black_beyond_the_cut() -> None:
    cut = np.full((60, 60, 3), 200, np.uint8)
    reference = np.full((60, 60, 3), 100, np.uint8)
    cut[20, 30] = (0, 0, 255)
    (p,) = patches(cut, reference, [(30.0, 20.0)], 9)
    assert tuple(p[4, 4, :3]) == (0, 0, 255) and tuple(p[4, 4, 3:]) == (100, 100, 100)
    (edge,) = patches(cut, reference, [(0.0, 0.0)], 9)
    assert (edge[:4, :4] == 0).all() and (edge[4:, 4:, :3] == 200).all()
    x = windows(cut, planes(reference), [(30.0, 20.0), (0.0, 0.0)], 9)
    assert x.shape == (2, 6, 9, 9) and x.dtype == np.float32 and x.min() >= -0.5 and x.max() <= 0.5
    # read as the checker was taught: its training patches scaled as the cube net's input
    taught = patches(cut, reference, [(30.0, 20.0), (0.0, 0.0)], 9).astype(np.float32) / 255.0 - 0.5
    assert np.allclose(x, taught.transpose(0, 3, 1, 2), atol=1e-6)
    assert windows(cut, planes(reference), [], 9).shape == (0, 6, 9, 9)


def test_context_windows_put_the_cube_nets_marks_where_its_candidates_are() -> None:
    """The cube net's maps, cut around a candidate as the checker's window is: its peak at the window's centre for
    the candidate it made, moved with the window, -0.5 (no mark) beyond the maps."""
    heat = _heat([(1, 21, 37, 1.0)])
    ((x, y, _),) = candidates(heat, 0.5, 400, 600)
    (w,) = context_windows(context_of(heat), 400, 600, [(x, y)], 63)
    assert w.shape == (CONTEXT, 63, 63) and w.dtype == np.float32
    assert np.unravel_index(int(w[1].argmax()), w[1].shape) == (31, 31) and w[1].max() > 0
    assert w[0].max() == w[2].max() == pytest.approx(-0.5)
    (moved,) = context_windows(context_of(heat), 400, 600, [(x + 12, y - 6)], 63)
    row, col = np.unravel_index(int(moved[1].argmax()), moved[1].shape)
    assert abs(row - 37) <= 1 and abs(col - 19) <= 1
    (beyond,) = context_windows(context_of(heat), 400, 600, [(0.0, 0.0)], 63)
    assert beyond[:, :20, :20].max() == pytest.approx(-0.5)


def test_settle_moves_each_cube_to_its_centre_and_reads_one_cube_once() -> None:
    side = CUBE_SIDES_PX
    points = [(100.0, 100.0), (108.0, 100.0), (100.0 + 1.2 * side, 100.0), (300.0, 300.0)]
    # the first two look at one red cube (at 104, 100), the third at a green one beside it, the last at nothing
    probs = np.array([[0.1, 0.8, 0.05, 0.05], [0.3, 0.6, 0.05, 0.05], [0.2, 0.1, 0.7, 0.0], [0.9, 0.05, 0.05, 0.0]])
    offsets = np.array([[4.0, 0.0], [-4.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    cubes = settle(points, probs, offsets, 0.5, APART_SIDES * side)
    assert [(c, round(x), round(y)) for c, x, y, _ in cubes] == [
        ("red", 104, 100),
        ("green", round(100 + 1.2 * side), 101),
    ]
    assert cubes[0][3] == pytest.approx(0.9)
    assert len(settle(points, probs, offsets, 0.85, APART_SIDES * side)) == 1  # only the surest
    assert len(settle(points, probs, offsets, 0.5, 1.3 * side)) == 1  # read as one where cubes a side apart are one
    assert APART_SIDES < 1.2  # two touching cubes (a side apart) stay two
    masks = {"daw": np.zeros((400, 400), bool), "med": np.zeros((400, 400), bool)}
    masks["daw"][:, :110] = True  # the red cube in it, the green one beyond
    masks["med"][:, 110:] = True
    assert counts_of(cubes, masks) == {
        "daw": {"red": 1, "green": 0, "blue": 0},
        "med": {"red": 0, "green": 1, "blue": 0},
    }


def test_candidates_are_taught_the_nearest_cube_in_reach_and_nothing_for_a_hidden_one() -> None:
    reach = REACH_SIDES * CUBE_SIDES_PX
    cubes = np.array([[100, 100, 0, 1.0], [130, 100, 2, 0.9], [300, 300, 1, 0.2]], np.float32)
    points = np.array([[104, 100], [126, 103], [100, 100 + reach + 1], [301, 300]], np.float32)
    classes, offsets = label_candidates(points, cubes, reach)
    assert classes.tolist() == [1 + 0, 1 + 2, 0, -1]
    assert offsets[0] * reach == pytest.approx([-4, 0]) and offsets[1] * reach == pytest.approx([4, -3])
    assert offsets[2].tolist() == [0, 0]
    assert ("none", *COLOURS) == CLASSES
    none, _ = label_candidates(points, np.zeros((0, 4), np.float32), reach)
    assert none.tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("k", range(4))
@pytest.mark.parametrize("flip", [False, True])
def test_a_turned_window_turns_its_offset_alike(k: int, flip: bool) -> None:
    side, centre = 63, 31
    a = np.zeros((1, side, side), np.float32)
    a[0, centre + 5, centre + 9] = 1.0  # dx 9, dy 5
    y, x = np.unravel_index(int(turned(a, k, flip)[0].argmax()), (side, side))
    assert turned_offset(np.array([9.0, 5.0]), k, flip).tolist() == [x - centre, y - centre]


@pytest.mark.parametrize(("k", "flip"), VIEWS)
def test_an_offset_read_on_a_turned_window_comes_back_to_the_window_as_it_came(k: int, flip: bool) -> None:
    side, centre = 63, 31
    crops = np.zeros((1, 6, side, side), np.float32)
    crops[0, :, centre + 5, centre - 9] = 1.0  # dx -9, dy 5
    # what the net would read on the turned window: where the cube lies there; training turned its windows alike
    y, x = np.unravel_index(int(turned(crops, k, flip)[0, 0].argmax()), (side, side))
    assert turned_offset(np.array([-9.0, 5.0]), k, flip).tolist() == [x - centre, y - centre]
    assert offsets_back(np.array([[x - centre, y - centre]], np.float32), k, flip).tolist() == [[-9.0, 5.0]]


def test_a_checker_without_its_settings_is_refused_naming_the_file(tmp_path: Path) -> None:
    from vision.board.check import CHECK_MODEL_FILE, CHECK_THRESHOLDS_FILE, CubeChecker
    from vision.board.layout import load_board
    from vision.recognise.models import ModelError, models_dir

    if not (models_dir() / CHECK_MODEL_FILE).is_file():
        pytest.skip("no cube checker shipped")
    board = load_board(models_dir() / "the-loop-board")
    settings = tmp_path / CHECK_THRESHOLDS_FILE

    def load(tuned: dict) -> CubeChecker:
        settings.write_text(json.dumps(tuned))
        return CubeChecker.load(models_dir() / CHECK_MODEL_FILE, settings, board.picture, board.eras)

    with pytest.raises(ModelError, match=f"{CHECK_THRESHOLDS_FILE}: expected JSON"):
        load({"fine_px": 600})
    shipped = json.loads((models_dir() / CHECK_THRESHOLDS_FILE).read_text())
    with pytest.raises(ModelError, match=r"expected JSON with .*reach_sides"):  # an older file without the net's reach
        load({k: v for k, v in shipped.items() if k != "reach_sides"})
    with pytest.raises(ModelError, match=r"window 31, but .* reads windows of 63 px"):
        load({**shipped, "window": 31})
    with pytest.raises(ModelError, match=r"apart_sides -1\.0 out of range"):
        load({**shipped, "apart_sides": -1})
    with pytest.raises(ModelError, match=r"views 9 out of range \(1-8\)"):
        load({**shipped, "views": 9})
    with pytest.raises(ModelError, match=r"target 'base', expected one of footprint, top"):
        load({**shipped, "target": "base"})
    assert load({**shipped, "target": "top"}).target == "top"
    assert load({k: v for k, v in shipped.items() if k != "target"}).target == "footprint"  # before session 53
    checker = load({**shipped, "fine_px": 900})  # another fine side: the distances follow it
    assert checker.side_px == pytest.approx(1.5 * CUBE_SIDES_PX) and checker.masks["daw"].shape == (900, 900)


def test_a_wider_checker_is_exported_at_its_own_width_and_read_as_the_runtime_reads_it(tmp_path: Path) -> None:
    """`cube_check train --width 2` (session 46) keeps every layer's channels doubled in its checkpoint; the export
    rebuilds the net at that width from the weights alone, and the graph reads windows as the runtime does."""
    torch = pytest.importorskip("torch")  # the training environment's test (scripts/setup-train.sh)
    import onnxruntime as ort

    from vision.board.check import CLASSES, IMAGE_PLANES, WINDOW, read_windows
    from vision.train.cube_check_net import WIDTHS, CheckNet, export

    torch.manual_seed(0)
    model = CheckNet(width=2.0)
    assert model.features[0][0].out_channels == 2 * WIDTHS[0]
    assert model.features[-1][0].out_channels == 2 * WIDTHS[-1]
    torch.save({"model": model.state_dict()}, tmp_path / "last.pt")
    export(tmp_path, tmp_path / "check.onnx")
    session = ort.InferenceSession(str(tmp_path / "check.onnx"), providers=["CPUExecutionProvider"])
    crops = np.random.default_rng(0).uniform(-0.5, 0.5, (3, IMAGE_PLANES, WINDOW, WINDOW)).astype(np.float32)
    probs, offsets = read_windows(session, crops, reach_px=10.0)
    with torch.no_grad():
        logits, expected = model.eval()(torch.from_numpy(crops))
    assert probs.shape == (3, len(CLASSES)) and np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert np.allclose(probs, torch.softmax(logits, 1).numpy(), atol=1e-4)
    assert np.allclose(offsets, 10.0 * expected.numpy(), atol=1e-3)


def test_the_loss_diagnostic_puts_each_missed_cube_in_one_place_and_its_oracles_use_the_truth() -> None:
    from vision.train.cube_losses import perfect_checker, perfect_pairs, row_place, why_missed

    side = 20.0
    cubes = np.array([[100, 100, 0, 1.0], [120, 100, 1, 1.0], [300, 300, 0, 0.2]], np.float32)  # a touching pair
    points = np.array([[103.0, 100.0], [112.0, 100.0], [300.0, 300.0], [500.0, 500.0]])
    # a perfect checker reads each cube owed a reading once, at its true place, and nothing for the hidden one
    read = perfect_checker(points, cubes, reach=15.0)
    assert [(c, x, y) for c, x, y, _ in read] == [(COLOURS[0], 100.0, 100.0), (COLOURS[1], 120.0, 100.0)]
    # a perfect pair reading keeps one reading per cube of a close pair and drops one between; alone, kept
    kept = [("red", 101.0, 100.0, 0.9), ("red", 104.0, 101.0, 0.8), ("red", 500.0, 500.0, 0.7)]
    assert [(x, y) for _, x, y, _ in perfect_pairs(kept, cubes, near=30.0, match=10.0)] == [(101, 100), (500, 500)]
    probs = np.array([0.9, 0.2, 0.9, 0.9])
    moved = points + np.array([[0, 0], [8, 0], [0, 0], [0, 0]])  # the second candidate's offset: onto the second cube
    assert why_missed(cubes[1], points, moved, probs, accept=0.5, side=side) == "judged none"
    assert why_missed(cubes[1], points, moved, probs * 0 + 0.9, accept=0.5, side=side) == "merged with another"
    away = points - np.array([[0, 0], [8, 0], [0, 0], [0, 0]])  # its offset takes it to the first cube instead
    assert why_missed(cubes[1], points, away, probs * 0 + 0.9, accept=0.5, side=side) == "moved away"
    assert why_missed(cubes[1], points[2:], points[2:], probs[2:], accept=0.5, side=side) == "no candidate"
    row = np.array([[100, 100, 0, 1], [120, 100, 0, 1], [140, 100, 1, 1], [400, 100, 0, 1]], np.float32)
    places = [row_place(row, j, side) for j in range(len(row))]
    assert places == ["at a row's end", "inside a row", "at a row's end", "alone"]


@pytest.mark.parametrize(("tilt", "yaw"), [(0.0, 0.0), (25.0, 40.0), (40.0, 200.0)])
def test_a_top_face_read_on_the_cut_is_moved_onto_its_footprint(tilt: float, yaw: float) -> None:
    """A cube's top face, shown on the cut where the camera's ray through it meets the board, is moved back onto the
    cube's footprint by the camera the placement alone implies (`to_footprints`), whichever way the camera looks."""
    from vision.board.rectify import to_cut
    from vision.synth.camera import Camera, apply_homography, card_to_table
    from vision.synth.solids import project_points

    camera = Camera(height_mm=650.0, tilt_deg=tilt, yaw_deg=yaw, hfov_deg=60.0)
    frame_from_board = camera.table_to_image() @ card_to_table(0.0, 0.0, 0.0, 1, 1, (420.0, 420.0))
    board_from_frame = np.linalg.inv(frame_from_board)
    size, side = 600, 9.0
    feet_mm = [(-60.0, 40.0), (80.0, -90.0), (0.0, 120.0)]
    tops, feet = [], []
    for x, y in feet_mm:
        top = project_points(camera, np.array([[x, y, side]]))[0]
        tops.append(to_cut(apply_homography(board_from_frame, top), size)[0])
        feet.append(
            to_cut(apply_homography(board_from_frame, apply_homography(camera.table_to_image(), [[x, y]])), size)[0]
        )
    readings = [("red", float(x), float(y), 0.9) for x, y in tops]
    moved = to_footprints(readings, frame_from_board, (camera.width, camera.height), size)
    assert on_footprints(readings, "top", frame_from_board, (camera.width, camera.height), size) == moved
    assert on_footprints(readings, "footprint", frame_from_board, (camera.width, camera.height), size) == readings
    shift = np.linalg.norm(np.array(tops) - np.array(feet), axis=1)
    error = np.linalg.norm(np.array([(x, y) for _, x, y, _ in moved]) - np.array(feet), axis=1)
    assert error.max() < 0.25 * CUBE_SIDES_PX  # a cube of 9 mm read as one of CUBE_MM: within a fraction of a side
    if tilt > 0:
        assert shift.max() > 0.2 * CUBE_SIDES_PX and error.max() < 0.3 * shift.max()
    assert [r[0] for r in moved] == ["red"] * 3 and [r[3] for r in moved] == [0.9] * 3


def test_a_placement_that_implies_no_camera_leaves_the_readings_as_they_are() -> None:
    readings = [("green", 100.0, 200.0, 0.8)]
    flat = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])  # no plane in front of any camera
    assert to_footprints(readings, flat, (1280, 720), 600) == readings
    assert to_footprints([], np.eye(3), (1280, 720), 600) == []


def test_a_wide_window_is_the_half_size_cut_around_the_same_point() -> None:
    """`wide_windows` (session 54): twice as far around each point at half the resolution, centred where the fine
    window is, so a cube inside a touching row is seen with the row's ends."""
    from vision.board.check import WINDOW, half_planes, halved, wide_windows

    rng = np.random.default_rng(0)
    cut = rng.integers(0, 256, (600, 600, 3), np.uint8)
    reference = rng.integers(0, 256, (600, 600, 3), np.uint8)
    for point in [(300.0, 301.0), (301.0, 300.0), (40.0, 560.0)]:
        (fine,) = windows(cut, planes(reference), [point], WINDOW)
        (wide,) = wide_windows(cut, half_planes(planes(reference)), [point], WINDOW)
        # the middle of the wide window is the fine window binned 2 x 2, to within the half pixel of its centre
        hx, hy = (round((v - 0.5) / 2) for v in point)
        block = planes(halved(cut))[:, hy - 5 : hy + 6, hx - 5 : hx + 6]
        assert np.allclose(wide[:3, 26:37, 26:37], block, atol=1e-6)
        half = planes(halved(reference))[:, hy - 5 : hy + 6, hx - 5 : hx + 6]  # binned in whole grey levels
        assert np.allclose(wide[3:, 26:37, 26:37], half, atol=0.51 / 255)
        assert (
            abs(
                float(fine[:3, 31, 31].mean())
                - float(planes(cut[round(point[1]), round(point[0])][None, None])[:, 0, 0].mean())
            )
            < 1e-6
        )
    (edge,) = wide_windows(cut, half_planes(planes(reference)), [(5.0, 590.0)], WINDOW)
    assert (edge[:, :, :20] == -0.5).all() and (edge[:, -20:, :] == -0.5).all()  # beyond the cut: black


def test_the_wide_checkers_training_windows_are_the_runtimes() -> None:
    """Training cuts the window and the wide window from one patch twice as wide (one light for both); unlit, they
    are exactly what the runtime reads (`check.checker_windows` with the half-size planes)."""
    from vision.board.check import WINDOW, checker_windows, half_planes

    pytest.importorskip("torch")  # the training environment's test (scripts/setup-train.sh)
    from vision.train.cube_check_net import wide_input

    rng = np.random.default_rng(1)
    cut = rng.integers(0, 256, (600, 600, 3), np.uint8)
    reference = rng.integers(0, 256, (600, 600, 3), np.uint8)

    flat = planes(reference)
    for point in [(300.0, 300.0), (301.0, 299.0), (40.0, 560.0), (2.0, 3.0)]:
        taught = wide_input(cut, reference, point)
        (read,) = checker_windows(cut, flat, [point], WINDOW, None, 400, half_planes(flat))
        inside = read > -0.5  # beyond the cut the training windows' black is black as planes, lit or not
        assert taught.shape == read.shape == (12, WINDOW, WINDOW)
        assert np.allclose(taught[inside], read[inside], atol=0.51 / 255)  # the runtime bins whole grey levels


def test_a_wide_checker_is_exported_with_its_second_trunk_and_read_as_the_runtime_reads_it(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    import onnxruntime as ort

    from vision.board.check import CHECKER_PLANES, IMAGE_PLANES, WIDE, WINDOW, read_windows
    from vision.train.cube_check_net import CheckNet, export

    torch.manual_seed(0)
    model = CheckNet(IMAGE_PLANES + WIDE)
    assert IMAGE_PLANES + WIDE in CHECKER_PLANES and model.wide is not None
    torch.save({"model": model.state_dict()}, tmp_path / "last.pt")
    export(tmp_path, tmp_path / "check.onnx")
    session = ort.InferenceSession(str(tmp_path / "check.onnx"), providers=["CPUExecutionProvider"])
    assert session.get_inputs()[0].shape[1] == IMAGE_PLANES + WIDE
    crops = np.random.default_rng(0).uniform(-0.5, 0.5, (3, IMAGE_PLANES + WIDE, WINDOW, WINDOW)).astype(np.float32)
    probs, offsets = read_windows(session, crops, reach_px=10.0)
    with torch.no_grad():
        logits, expected = model.eval()(torch.from_numpy(crops))
        # the wide planes matter: the same windows with other wide planes read otherwise
        other, _ = model(torch.from_numpy(np.concatenate([crops[:, :IMAGE_PLANES], -crops[:, IMAGE_PLANES:]], 1)))
    assert np.allclose(probs, torch.softmax(logits, 1).numpy(), atol=1e-4)
    assert np.allclose(offsets, 10.0 * expected.numpy(), atol=1e-3)
    assert np.abs(logits.numpy() - other.numpy()).max() > 1e-6


def test_one_light_is_shown_alike_on_a_window_and_its_wide_window() -> None:
    """`augment.relight`: a window and its wide window (pixels twice as large) get the same gains and offset, the
    wide one half the blur and half the noise (a 2 x 2 block's mean of independent noise)."""
    from dataclasses import replace

    from vision.train.augment import draw_light, relight

    light = replace(draw_light(np.random.default_rng(3)), blur=0.0, noise=6.0, ref_blur=0.0)
    flat = np.full((200, 200, 3), 120, np.uint8)
    cut, ref = relight(light, flat, flat)
    wide_cut, wide_ref = relight(light, flat, flat, scale=0.5)
    assert np.allclose(cut.mean(axis=(0, 1)), wide_cut.mean(axis=(0, 1)), atol=0.3)
    assert np.allclose(ref, wide_ref) and np.allclose(ref[0, 0], 120 * light.ref_gains)
    assert abs(cut.std(axis=(0, 1)).mean() - 6.0) < 0.3 and abs(wide_cut.std(axis=(0, 1)).mean() - 3.0) < 0.2


def test_the_cube_nets_patches_drawn_about_blue_cubes_hold_one_and_the_rest_fall_anywhere() -> None:
    """`cube_net --blue-share`: that share of training patches holds a blue cube, the rest are drawn anywhere, as
    before."""
    pytest.importorskip("torch")  # the training environment's test (scripts/setup-train.sh)
    import cv2

    from vision.train.cube_data import CubeScene
    from vision.train.cube_net import PATCH, Batches

    jpeg = cv2.imencode(".jpg", np.zeros((400, 400, 3), np.uint8))[1].tobytes()
    blue, red = COLOURS.index("blue"), COLOURS.index("red")
    cubes = np.array([[390, 12, blue, 1.0], [30, 200, red, 1.0], [200, 200, blue, 0.1]], np.float32)
    scene = CubeScene(jpeg, "the-loop-design-000", cubes, {})

    class Boards:  # the boards' references at the scenes' own side, as `BoardRefs` gives them
        size = 400

    data = Batches([scene], Boards(), 0, len(COLOURS), blue_share=1.0)  # type: ignore[arg-type]
    assert data.blues == [(0, 390.0, 12.0)]  # a cube mostly hidden is not taught, so not drawn about
    for _ in range(50):
        _, x0, y0, axes = data.corner()
        assert axes is None  # a scene with no placement is read any way round
        assert 0 <= x0 <= 400 - PATCH and 0 <= y0 <= 400 - PATCH
        assert x0 <= 390 < x0 + PATCH and y0 <= 12 < y0 + PATCH
    anywhere = Batches([scene], Boards(), 0, len(COLOURS))  # type: ignore[arg-type]
    corners = {anywhere.corner()[1:3] for _ in range(50)}
    assert len(corners) > 40 and not all(x0 <= 390 < x0 + PATCH and y0 <= 12 < y0 + PATCH for x0, y0 in corners)


def test_the_conditions_diagnostic_bins_eras_by_each_condition_and_names_the_clean_frames() -> None:
    from vision.train.cube_conditions import exact_by_condition

    sharp = {"defocus": 0.2, "motion": 0.0, "noise": 1.0, "glare": 0.0, "board_px": 900.0}
    smeared = {**sharp, "motion": 12.0}
    lines = exact_by_condition([(True, sharp), (True, sharp), (False, smeared), (True, smeared)])
    assert lines[0] == "4 Eras scored, 75.00% exact"
    assert "  [0, 1): 2 Eras, 100.0% exact" in lines and "  [10, 99): 2 Eras, 50.0% exact" in lines
    assert lines[-1] == "clean frames: 2 Eras, 100.0% exact"


def test_the_fine_cube_net_reads_the_fine_cut_at_two_pixels_a_cell_with_the_cubes_moved_onto_it() -> None:
    """`cube_net --arch fine` (session 57): patches of each scene's fine cut, its cubes moved there (400 to 600 px,
    pixel centres kept), taught at 2 cut pixels a cell, no pieces' maps."""
    torch = pytest.importorskip("torch")  # the training environment's test (scripts/setup-train.sh)
    import cv2

    from vision.train.cube_data import CubeScene
    from vision.train.cube_net import FINE_STRIDE, PATCH, Batches, CubeNet

    class Fine:  # the board's reference at the fine side, as `BoardRefs` gives it
        size = 600

        def reference(self, design: str) -> np.ndarray:
            return np.zeros((600, 600, 3), np.uint8)

    def jpeg(side: int) -> bytes:
        return cv2.imencode(".jpg", np.zeros((side, side, 3), np.uint8))[1].tobytes()

    cubes = np.array([[100, 120, COLOURS.index("green"), 1.0]], np.float32)
    scene = CubeScene(jpeg(400), "the-loop-design-000", cubes, {}, fine=jpeg(600))
    net = CubeNet("fine")
    data = Batches([scene], Fine(), 0, len(COLOURS), stride=net.stride)  # type: ignore[arg-type]
    assert data.cuts[0].shape == (600, 600, 3) and np.allclose(data.cubes[0][0, :2], [150.25, 180.25])
    x, heat, _ = data.sample(2)
    assert x.shape == (2, 6, PATCH, PATCH) and heat.shape == (2, len(COLOURS), PATCH // FINE_STRIDE, PATCH // 2)
    assert net(x).shape == heat.shape and net.stride == FINE_STRIDE
    with torch.no_grad():
        assert net(torch.zeros(1, 6, 600, 600)).shape == (1, len(COLOURS), 300, 300)


@pytest.mark.parametrize(("tilt", "yaw"), [(30.0, 0.0), (35.0, 130.0), (20.0, 250.0)])
def test_an_upright_window_shows_each_cube_from_below_whichever_way_the_camera_looks(tilt: float, yaw: float) -> None:
    """`view_axes` (session 58) turns each window so that the camera's foot on the board lies straight below its
    centre: a cube's top face, which the cut shows displaced away from the camera, then lies straight above its
    footprint in the window, and the window's axes stay a proper turn (no mirror)."""
    from vision.board.check import eye_on_cut, view_axes
    from vision.board.rectify import to_cut
    from vision.synth.camera import Camera, apply_homography, card_to_table
    from vision.synth.solids import project_points

    camera = Camera(height_mm=650.0, tilt_deg=tilt, yaw_deg=yaw, hfov_deg=60.0)
    frame_from_board = camera.table_to_image() @ card_to_table(0.0, 0.0, 0.0, 1, 1, (420.0, 420.0))
    board_from_frame = np.linalg.inv(frame_from_board)
    size = 600
    eye = eye_on_cut(frame_from_board, (camera.width, camera.height), size)
    assert eye is not None
    for x, y in [(-60.0, 40.0), (80.0, -90.0), (0.0, 120.0)]:
        top = to_cut(apply_homography(board_from_frame, project_points(camera, np.array([[x, y, 9.0]]))[0]), size)[0]
        foot = to_cut(apply_homography(board_from_frame, apply_homography(camera.table_to_image(), [[x, y]])), size)[0]
        (axes,) = view_axes([(float(foot[0]), float(foot[1]))], eye)
        assert np.linalg.det(axes) == pytest.approx(1.0, abs=1e-5)
        shown = axes.T @ (np.asarray(top) - np.asarray(foot))  # the top face's place in the window, from the foot
        assert shown[1] < -0.2 * CUBE_SIDES_PX and abs(shown[0]) < 0.05 * abs(shown[1])


def test_upright_windows_sample_the_cut_along_their_axes_and_offsets_come_back() -> None:
    from vision.board.check import (
        WINDOW,
        offsets_in_window,
        offsets_on_cut,
        upright_patches,
        upright_windows,
        view_axes,
    )

    rng = np.random.default_rng(3)
    cut = rng.integers(0, 256, (200, 200, 3), np.uint8)
    reference = rng.integers(0, 256, (200, 200, 3), np.uint8)
    point = (100.0, 100.0)
    (same,) = upright_patches(cut, reference, [point], view_axes([point], None), WINDOW)  # no camera: as `patches`
    assert np.array_equal(same, patches(cut, reference, [point], WINDOW)[0])
    axes = view_axes([point], np.array([100.0, 0.0, 500.0]))  # the camera's foot straight up the cut: a half turn
    (half,) = upright_patches(cut, reference, [point], axes, WINDOW)
    assert np.array_equal(half, same[::-1, ::-1])
    (edge,) = upright_windows(cut, reference, [(3.0, 100.0)], view_axes([(3.0, 100.0)], None), WINDOW)
    assert (edge[:, :, :20] == -0.5).all()  # beyond the cut: black, as `windows` shows it
    turned_axes = view_axes([point, (20.0, 180.0)], np.array([180.0, 40.0, 500.0]))
    offset = np.array([[4.0, -7.0], [-2.0, 5.0]], np.float32)
    assert np.allclose(offsets_on_cut(offsets_in_window(offset, turned_axes), turned_axes), offset, atol=1e-5)
    # a half turn shows the offset reversed
    assert np.allclose(offsets_in_window(offset[:1], axes), -offset[:1], atol=1e-5)


def test_an_upright_checker_reads_one_view_of_the_cut_and_the_boards_picture(tmp_path: Path) -> None:
    from vision.board.check import CHECK_MODEL_FILE, CHECK_THRESHOLDS_FILE, CubeChecker
    from vision.board.layout import load_board
    from vision.recognise.models import ModelError, models_dir

    if not (models_dir() / CHECK_MODEL_FILE).is_file():
        pytest.skip("no cube checker shipped")
    board = load_board(models_dir() / "the-loop-board")
    settings = tmp_path / CHECK_THRESHOLDS_FILE
    shipped = json.loads((models_dir() / CHECK_THRESHOLDS_FILE).read_text())
    settings.write_text(json.dumps({**shipped, "upright": True, "views": 4}))
    with pytest.raises(ModelError, match="an upright checker reads one view"):
        CubeChecker.load(models_dir() / CHECK_MODEL_FILE, settings, board.picture, board.eras)
    settings.write_text(json.dumps({**shipped, "upright": True, "views": 1}))
    checker = CubeChecker.load(models_dir() / CHECK_MODEL_FILE, settings, board.picture, board.eras)
    assert checker.upright
    heat = _heat([(0, 50, 50, 0.9)])
    fine_cut = np.full((checker.size, checker.size, 3), 128, np.uint8)
    points, probs, offsets = checker.read(heat, 400, fine_cut, np.array([300.0, 900.0, 800.0]))
    assert len(points) == 1 and probs.shape == (1, len(CLASSES)) and offsets.shape == (1, 2)


def test_the_upright_checkers_training_windows_are_the_runtimes_or_their_mirror(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Unlit and unjittered, a training window of an upright checker is what the runtime reads at that point
    (`check.upright_windows`), or its mirror about the camera's bearing with the offset's x reversed."""
    pytest.importorskip("torch")  # the training environment's test (scripts/setup-train.sh)
    from vision.board.check import WINDOW, offsets_in_window, upright_windows, view_axes
    from vision.train import cube_check_net
    from vision.train.cube_check_net import Windows

    monkeypatch.setattr(cube_check_net, "TURN_JITTER", 0.0)
    monkeypatch.setattr(cube_check_net, "draw_light", lambda rng: None)
    rng = np.random.default_rng(4)
    cut = rng.integers(0, 256, (600, 600, 3), np.uint8)
    reference = rng.integers(0, 256, (600, 600, 3), np.uint8)
    windows = object.__new__(Windows)
    windows.rng = np.random.default_rng(0)
    windows.cuts, windows.eyes = [cut], [np.array([500.0, 80.0, 900.0])]
    point, offset = np.array([240.0, 310.0], np.float32), np.array([0.3, -0.5], np.float32)
    axes = view_axes([(240.0, 310.0)], windows.eyes[0])
    (read,) = upright_windows(cut, reference, [(240.0, 310.0)], axes, WINDOW)
    shown = offsets_in_window(offset[None], axes)[0]
    seen = set()
    for _ in range(12):
        x, taught = windows.upright_input(0, reference, point, offset)
        mirrored = not np.allclose(x, read, atol=1e-6)
        # a mirrored warp rounds its sampling places apart (OpenCV's fixed point): a grey level at most
        assert np.allclose(x, read[:, :, ::-1] if mirrored else read, atol=1.01 / 255)
        assert np.allclose(taught, shown * np.array([-1.0 if mirrored else 1.0, 1.0]), atol=1e-5)
        seen.add(mirrored)
    assert seen == {True, False}


def test_the_upright_cube_nets_patches_are_the_cut_turned_to_its_camera_with_its_cubes_taught_on_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`cube_net train --upright` (session 59): unlit and unjittered, a training patch is the cut turned to its
    camera as the runtime turns it (`cubes.turned_about_centre`), or its mirror about the bearing, and each cube is
    taught where the turned cut shows it."""
    pytest.importorskip("torch")  # the training environment's test (scripts/setup-train.sh)
    import cv2

    from vision.board.cubes import cut_axes, planes, to_upright, turned_about_centre
    from vision.synth.camera import Camera, card_to_table
    from vision.train import cube_net
    from vision.train.cube_data import CubeScene
    from vision.train.cube_net import PATCH, Batches

    monkeypatch.setattr(cube_net, "TURN_JITTER", 0.0)
    monkeypatch.setattr(cube_net, "vary_light", lambda rng, cut, ref: (cut, ref))
    camera = Camera(height_mm=650.0, tilt_deg=30.0, yaw_deg=110.0, hfov_deg=60.0)
    placement = camera.table_to_image() @ card_to_table(0.0, 0.0, 0.0, 1, 1, (420.0, 420.0))
    red = COLOURS.index("red")
    cubes = np.array([[150, 130, red, 1.0], [250, 260, red, 1.0], [205, 300, red, 1.0]], np.float32)
    image = np.zeros((400, 400, 3), np.uint8)
    for x, y, _, _ in cubes:
        cv2.rectangle(image, (int(x) - 7, int(y) - 7), (int(x) + 7, int(y) + 7), (0, 0, 255), -1)
    jpeg = cv2.imencode(".png", image)[1].tobytes()  # lossless: the patch is compared pixel by pixel
    scene = CubeScene(jpeg, "the-loop-design-000", cubes, {}, frame_from_board=placement)

    class Boards:  # the board's picture at the scenes' own side: black here
        size = 400

        def reference(self, design: str) -> np.ndarray:
            return np.zeros((400, 400, 3), np.uint8)

    data = Batches([scene], Boards(), 0, len(COLOURS), upright=True)  # type: ignore[arg-type]
    axes = cut_axes(scene.eye(400), 400)
    assert axes is not None and np.allclose(data.axes[0], axes)
    whole = planes(turned_about_centre(image, axes))
    mirrored = planes(turned_about_centre(image, axes * np.array([-1.0, 1.0])))
    seen = set()
    for _ in range(16):
        data.rng = np.random.default_rng(_)
        state = data.rng.bit_generator.state
        _, x0, y0, drawn = data.corner()
        data.rng.bit_generator.state = state
        x, heat, _ = (a[0].numpy() for a in data.sample(1))
        mirror = bool(np.linalg.det(drawn) < 0)
        expected = (mirrored if mirror else whole)[:, y0 : y0 + PATCH, x0 : x0 + PATCH]
        assert np.abs(x[:3] - expected).max() < 1.01 / 255  # a mirrored warp rounds its sampling places apart
        for cx, cy in to_upright(cubes[:, :2], drawn, 400) - np.array([x0, y0]):
            if 8 <= cx < PATCH - 8 and 8 <= cy < PATCH - 8:
                assert heat[red, int(cy) // 4, int(cx) // 4] > 0.5
        seen.add(mirror)
    assert seen == {True, False}
