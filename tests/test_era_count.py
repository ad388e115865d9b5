"""Each Era of The LOOP's board read whole (issue 21, session 56): what the count reader is shown, how its count
replaces the checker's, and how the readings are made to agree with it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from vision.board.cubes import COLOURS
from vision.board.era_count import (
    COUNT_CLASSES,
    DOT_SIGMA,
    ERA_COUNT_MODEL_FILE,
    ERA_COUNT_THRESHOLDS_FILE,
    ERA_PLANES,
    ERA_SIDE,
    GIVEN,
    candidate_rows,
    chosen_counts,
    dots,
    era_centres,
    era_input,
    head_probabilities,
    heat_planes,
    moved_places,
    one_hot_counts,
    reconcile,
    rows_array,
)
from vision.recognise.models import models_dir


def _square_mask(x0: int, y0: int, x1: int, y1: int, size: int = 400) -> np.ndarray:
    mask = np.zeros((size, size), bool)
    mask[y0:y1, x0:x1] = True
    return mask


def test_a_count_is_given_one_hot_per_colour_and_a_count_past_the_last_class_is_that_class() -> None:
    hot = one_hot_counts(np.array([[2, 0, 1], [15, 7, 3]]))
    assert hot.shape == (2, GIVEN) and hot.sum(axis=1).tolist() == [3.0, 3.0]
    red, green, blue = np.split(hot, np.cumsum(COUNT_CLASSES)[:-1], axis=1)
    assert red[0].argmax() == 2 and green[0].argmax() == 0 and blue[0].argmax() == 1
    assert red[1].argmax() == COUNT_CLASSES[0] - 1 and green[1].argmax() == COUNT_CLASSES[1] - 1


def test_the_reader_s_count_replaces_the_checker_s_only_when_it_wins_by_the_margin() -> None:
    logits = np.zeros((2, sum(COUNT_CLASSES)), np.float32)
    logits[0, 4] = 5.0  # Era 0: red 4, sure
    logits[1, 3] = 0.4  # Era 1: red 3, barely
    probs = head_probabilities(logits)
    assert all(np.allclose(p.sum(axis=1), 1.0) for p in probs) and len(probs) == len(COLOURS)
    given = np.array([[3, 0, 0], [2, 0, 0]])
    assert chosen_counts(probs, given, 0.0)[:, 0].tolist() == [4, 3]
    assert chosen_counts(probs, given, 0.5)[:, 0].tolist() == [4, 2]  # the barely surer count does not replace
    assert chosen_counts(probs, given, 1.0)[:, 0].tolist() == [3, 2]  # nothing wins by all the probability
    assert chosen_counts(probs, given, 0.0)[:, 1:].tolist() == [[0, 0], [0, 0]]


def test_each_candidate_is_a_spot_as_bright_as_the_checker_is_sure_of_its_colour() -> None:
    rows = np.array([[100.0, 120.0, 0.9, 0.1, 0.0], [500.0, 500.0, 1.0, 0.0, 0.0]], np.float32)
    spots = dots(rows, (110, 110), 40)  # the square spans 90-129: the second candidate lies outside
    assert spots.shape == (3, 40, 40)
    assert spots[0].max() == pytest.approx(0.9, abs=1e-3) and spots[1].max() == pytest.approx(0.1, abs=1e-3)
    y, x = np.unravel_index(spots[0].argmax(), spots[0].shape)
    assert (x, y) == (10, 30) and spots[2].max() == 0.0
    assert spots[0, 30, 10 + int(np.ceil(3 * DOT_SIGMA)) + 1] == 0.0  # the spot ends three sigmas out


def test_an_era_is_shown_in_a_square_around_its_outline_with_every_plane_aligned() -> None:
    size = 400
    mask = _square_mask(200, 220, 300, 300, size)
    assert era_centres({"daw": mask})["daw"] == (250, 260)
    cut_planes = np.full((3, size, size), 0.25, np.float32)
    heat = np.zeros((3, size // 4, size // 4), np.float32)
    heat[1, 65, 62] = 1.0  # a green cell at cut pixel (249.5, 261.5)
    rows = np.array([[250.0, 260.0, 0.0, 0.0, 0.8]], np.float32)
    x = era_input(cut_planes, cut_planes, mask, heat_planes(heat, size), rows, (250, 260), binning=1)
    assert x.shape == (ERA_PLANES, ERA_SIDE, ERA_SIDE)
    half = ERA_SIDE // 2
    assert x[6, half, half] == 0.5 and x[6, 0, 0] == -0.5  # the Era's outline: inside, outside
    assert x[0, half, half] == 0.25 and x[0, 0, 0] == 0.25  # the cut reaches the square's corner here
    assert x[8].max() > 0.0 and abs(np.argwhere(x[8] == x[8].max())[0] - [half + 1.5, half - 0.5]).max() <= 2
    assert x[12, half, half] == pytest.approx(0.3, abs=1e-3)  # the blue candidate: 0.8, centred on 0
    beyond = era_input(cut_planes, cut_planes, mask, heat_planes(heat, size), rows, (20, 20), binning=1)
    assert beyond[0, 0, 0] == -0.5  # beyond the cut's edge: black, as a cut is
    small = era_input(cut_planes, cut_planes, mask, heat_planes(heat, size), rows, (250, 260), binning=2)
    assert small.shape == (ERA_PLANES, ERA_SIDE // 2, ERA_SIDE // 2)
    assert np.allclose(small, x.reshape(ERA_PLANES, ERA_SIDE // 2, 2, ERA_SIDE // 2, 2).mean(axis=(2, 4)))
    assert small[12].sum() == pytest.approx(x[12].sum() / 4, rel=1e-4)  # a spot keeps its weight


def test_readings_are_made_to_agree_with_the_count_surest_kept_nearest_free_candidate_added() -> None:
    masks = {"daw": _square_mask(0, 0, 100, 100, 200), "med": _square_mask(100, 0, 200, 100, 200)}
    kept = [("red", 10.0, 10.0, 0.9), ("red", 30.0, 10.0, 0.5), ("red", 50.0, 10.0, 0.95), ("green", 150.0, 50.0, 0.8)]
    rows = [
        ("red", 31.0, 11.0, 0.7),  # a second reading of a kept cube
        ("red", 70.0, 10.0, 0.4),  # a cube the checker doubted, far from any reading
        ("red", 150.0, 80.0, 0.9),  # in the other Era
    ]
    more = reconcile(kept, rows, masks, {"daw": (4, 0, 0), "med": (0, 1, 0)}, apart_px=12.0)
    assert sorted((c, x) for c, x, _, _ in more if c == "red") == [
        ("red", 10.0),
        ("red", 30.0),
        ("red", 50.0),
        ("red", 70.0),
    ]
    fewer = reconcile(kept, rows, masks, {"daw": (2, 0, 0), "med": (0, 1, 0)}, apart_px=12.0)
    assert sorted(p for c, _, _, p in fewer if c == "red") == [0.9, 0.95]  # the least sure dropped
    short = reconcile(kept, [], masks, {"daw": (5, 0, 0), "med": (0, 1, 0)}, apart_px=12.0)
    assert sum(1 for r in short if r[0] == "red") == 3  # no candidate to place a fourth: the count stays short
    same = reconcile(kept, rows, masks, {"daw": (3, 0, 0)}, apart_px=12.0)  # an Era not counted keeps its readings
    assert sorted(same) == sorted(kept)


def test_candidates_are_offered_in_every_colour_at_the_place_the_checker_moved_them() -> None:
    probs = np.array([[0.1, 0.6, 0.2, 0.1]], np.float32)
    offsets = np.array([[3.0, -6.0]], np.float32)
    moved = moved_places([(60.0, 90.0)], offsets)
    rows = candidate_rows(moved, probs)
    assert rows == [("red", 63.0, 84.0, pytest.approx(0.6)), ("green", 63.0, 84.0, pytest.approx(0.2)),
                    ("blue", 63.0, 84.0, pytest.approx(0.1))]  # fmt: skip
    drawn = rows_array(moved, probs, 600, 400)
    assert drawn.shape == (1, 5) and drawn[0, 2:].tolist() == pytest.approx([0.6, 0.2, 0.1])
    assert abs(drawn[0, 0] - (63.5 * 400 / 600 - 0.5)) < 1e-4  # pixel centres rescaled, as `rectify.resized` does


@pytest.mark.skipif(not (models_dir() / ERA_COUNT_MODEL_FILE).is_file(), reason="no Era count reader shipped")
def test_the_shipped_era_reader_loads_with_its_settings_and_a_bad_settings_file_is_named(tmp_path: Path) -> None:
    from vision.board.era_count import TURN_SIDE, EraCounter
    from vision.board.layout import load_board
    from vision.recognise.models import ModelError

    board = load_board(models_dir() / "the-loop-board")
    counter = EraCounter.load(
        models_dir() / ERA_COUNT_MODEL_FILE, models_dir() / ERA_COUNT_THRESHOLDS_FILE, board.picture, board.eras
    )
    assert counter.size == 400 and counter.side == ERA_SIDE and 0.0 <= counter.margin <= 1.0
    assert len(counter.centres) == 7
    # an empty board with no candidate: nothing to count, whatever the checker said
    empty = np.zeros((3, 100, 100), np.float32)
    cut = np.full((400, 400, 3), 128, np.uint8)
    said = counter.counts(cut, empty, np.zeros((0, 5), np.float32), dict.fromkeys(counter.masks, (0, 0, 0)))
    assert set(said) == set(counter.masks) and all(len(v) == 3 for v in said.values())
    shutil.copy(models_dir() / ERA_COUNT_MODEL_FILE, tmp_path / ERA_COUNT_MODEL_FILE)
    settings = json.loads((models_dir() / ERA_COUNT_THRESHOLDS_FILE).read_text())
    (tmp_path / ERA_COUNT_THRESHOLDS_FILE).write_text(json.dumps(settings | {"upright": True}))
    turned = EraCounter.load(
        tmp_path / ERA_COUNT_MODEL_FILE, tmp_path / ERA_COUNT_THRESHOLDS_FILE, board.picture, board.eras
    )
    assert turned.upright and all(o.shape[-1] == TURN_SIDE // turned.binning for o in turned.outlines.values())
    eye = np.array([200.0, 900.0, 700.0])
    assert turned.counts(cut, empty, np.zeros((0, 5), np.float32), dict.fromkeys(counter.masks, (0, 0, 0)), None, eye)
    (tmp_path / ERA_COUNT_THRESHOLDS_FILE).write_text(json.dumps({"cut_px": 400, "side": ERA_SIDE}))
    with pytest.raises(ModelError, match="margin"):
        EraCounter.load(
            tmp_path / ERA_COUNT_MODEL_FILE, tmp_path / ERA_COUNT_THRESHOLDS_FILE, board.picture, board.eras
        )
    (tmp_path / ERA_COUNT_THRESHOLDS_FILE).write_text(json.dumps({"cut_px": 400, "side": 128, "margin": 0.1}))
    with pytest.raises(ModelError, match="expected 13 of 128 px binned 1"):
        EraCounter.load(
            tmp_path / ERA_COUNT_MODEL_FILE, tmp_path / ERA_COUNT_THRESHOLDS_FILE, board.picture, board.eras
        )


def test_a_frame_s_eras_made_at_once_are_what_each_era_made_alone_shows() -> None:
    from vision.board.era_count import binned, era_inputs, mask_square

    rng = np.random.default_rng(4)
    size = 400
    masks = {"daw": _square_mask(10, 30, 150, 170, size), "med": _square_mask(250, 240, 399, 399, size)}
    centres = era_centres(masks)
    assert all(v % 2 == 0 for c in centres.values() for v in c)  # squares start on even pixels: binning commutes
    cut_planes = rng.uniform(-0.5, 0.5, (3, size, size)).astype(np.float32)
    reference = rng.uniform(-0.5, 0.5, (3, size, size)).astype(np.float32)
    heat_up = heat_planes(rng.uniform(0, 1, (3, size // 4, size // 4)).astype(np.float32), size)
    rows = np.concatenate([rng.uniform(-20, 420, (30, 2)), rng.uniform(0, 0.5, (30, 3))], 1).astype(np.float32)
    eras = list(masks)
    alone = np.stack([era_input(cut_planes, reference, masks[e], heat_up, rows, centres[e]) for e in eras])
    outlines = [mask_square(masks[e], centres[e]) for e in eras]
    together = era_inputs(cut_planes, binned(reference, 2), outlines, heat_up, rows, [centres[e] for e in eras])
    assert together.shape == alone.shape == (2, ERA_PLANES, ERA_SIDE // 2, ERA_SIDE // 2)
    assert np.allclose(together, alone, atol=1e-6)


def test_an_era_square_turned_along_the_cut_s_own_axes_is_the_square_as_it_is() -> None:
    rng = np.random.default_rng(6)
    size = 400
    mask = _square_mask(120, 140, 260, 280, size)
    cut_planes = rng.uniform(-0.5, 0.5, (3, size, size)).astype(np.float32)
    heat_up = heat_planes(rng.uniform(0, 1, (3, size // 4, size // 4)).astype(np.float32), size)
    rows = np.concatenate([rng.uniform(100, 300, (12, 2)), rng.uniform(0, 1, (12, 3))], 1).astype(np.float32)
    plain = era_input(cut_planes, cut_planes, mask, heat_up, rows, (190, 210))
    turned = era_input(cut_planes, cut_planes, mask, heat_up, rows, (190, 210), axes=np.eye(2))
    assert turned.shape == plain.shape and np.allclose(turned, plain, atol=1e-5)


@pytest.mark.parametrize("eye", [(200.0, 900.0, 600.0), (-300.0, 100.0, 500.0), (650.0, -250.0, 800.0)])
def test_an_upright_era_square_shows_what_lies_towards_the_camera_straight_below_its_centre(
    eye: tuple[float, float, float],
) -> None:
    from vision.board.era_count import upright_axes

    size, centre = 400, (190, 210)
    bearing = np.array(eye[:2]) - centre
    bearing /= np.linalg.norm(bearing)
    near = np.array(centre) + 40 * bearing  # 40 cut pixels towards the camera's foot
    rows = np.array([[near[0], near[1], 1.0, 0.0, 0.0]], np.float32)
    blank = np.zeros((3, size, size), np.float32)
    axes = upright_axes([centre], np.array(eye))[0]
    assert np.isclose(np.linalg.det(axes), 1.0)  # a turn, not a mirror
    x = era_input(blank, blank, _square_mask(0, 0, 1, 1, size), blank, rows, centre, axes=axes)
    red = x[10]  # the candidates' red spots
    y, x_ = np.unravel_index(int(red.argmax()), red.shape)
    middle = (ERA_SIDE // 2 - 1) / 2
    assert abs(x_ - middle) <= 1 and abs(y - (middle + 20)) <= 1  # 40 px binned 2 x 2, straight below the centre


def test_a_frame_s_upright_eras_made_at_once_are_what_each_upright_era_made_alone_shows() -> None:
    from vision.board.era_count import TURN_SIDE, binned, era_inputs, mask_square, upright_axes

    rng = np.random.default_rng(5)
    size = 400
    masks = {"daw": _square_mask(10, 30, 150, 170, size), "med": _square_mask(250, 240, 399, 399, size)}
    centres = era_centres(masks)
    eras = list(masks)
    cut_planes = rng.uniform(-0.5, 0.5, (3, size, size)).astype(np.float32)
    reference = rng.uniform(-0.5, 0.5, (3, size, size)).astype(np.float32)
    heat_up = heat_planes(rng.uniform(0, 1, (3, size // 4, size // 4)).astype(np.float32), size)
    rows = np.concatenate([rng.uniform(-20, 420, (30, 2)), rng.uniform(0, 0.5, (30, 3))], 1).astype(np.float32)
    axes = upright_axes([centres[e] for e in eras], np.array([120.0, 700.0, 500.0]))
    alone = np.stack(
        [
            era_input(cut_planes, reference, masks[e], heat_up, rows, centres[e], axes=a)
            for e, a in zip(eras, axes, strict=True)
        ]
    )
    outlines = [mask_square(masks[e], centres[e], TURN_SIDE) for e in eras]
    together = era_inputs(
        cut_planes, binned(reference, 2), outlines, heat_up, rows, [centres[e] for e in eras], axes=axes
    )
    assert together.shape == alone.shape == (2, ERA_PLANES, ERA_SIDE // 2, ERA_SIDE // 2)
    assert np.allclose(together, alone, atol=1e-5)


def test_the_reader_s_net_gives_a_head_per_colour_and_exports_for_the_runtime(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from vision.recognise.models import session
    from vision.train.era_count import build_net, export, split_logits

    net = build_net(4)
    side = ERA_SIDE // 2
    x, counts = torch.zeros(2, ERA_PLANES, side, side), torch.zeros(2, GIVEN)
    parts = split_logits(net(x, counts))
    assert [p.shape[1] for p in parts] == list(COUNT_CLASSES) and all(p.shape[0] == 2 for p in parts)
    (tmp_path / "run").mkdir()
    torch.save({"model": net.state_dict(), "binning": 2}, tmp_path / "run" / "last.pt")
    export(tmp_path / "run", tmp_path / "reader.onnx")
    graph = session(tmp_path / "reader.onnx")
    assert graph.get_inputs()[0].shape[1:] == [ERA_PLANES, side, side]
    logits = graph.run(
        None, {"x": np.zeros((3, ERA_PLANES, side, side), np.float32), "counts": np.zeros((3, GIVEN), np.float32)}
    )
    assert logits[0].shape == (3, sum(COUNT_CLASSES))


def test_only_eras_with_a_doubtful_candidate_or_two_readings_close_are_read_whole() -> None:
    from vision.board.era_count import NEAR_SIDES, eras_in_doubt

    masks = {e: _square_mask(100 * k, 0, 100 * (k + 1), 100, 400) for k, e in enumerate(("daw", "med", "ren", "ind"))}
    side = 10.0
    kept = [
        ("red", 20.0, 50.0, 0.99),  # daw: one sure reading
        ("red", 120.0, 50.0, 0.99),  # med: two readings touching
        ("red", 120.0 + (NEAR_SIDES - 0.1) * side, 50.0, 0.99),
        ("red", 220.0, 50.0, 0.99),  # ren: two readings well apart
        ("red", 220.0 + (NEAR_SIDES + 0.5) * side, 50.0, 0.99),
    ]
    points = np.array([[20.0, 50.0], [320.0, 50.0], [330.0, 80.0]])
    cube = np.array([0.99, 0.01, 0.4])  # ind: a candidate in doubt
    assert eras_in_doubt(kept, points, cube, masks, side) == ["med", "ind"]
    assert eras_in_doubt(kept[:1], points[:2], cube[:2], masks, side) == []


@pytest.mark.parametrize(("tilt", "yaw"), [(25.0, 0.0), (40.0, 130.0), (55.0, 250.0)])
def test_the_camera_s_eye_fitted_on_one_cut_is_where_a_fit_on_the_other_cut_puts_it(tilt: float, yaw: float) -> None:
    """The Era reader turns its squares on the cube net's cut (400 px) by the eye fitted once for the checker's cut
    (600 px, `cubes.eye_resized`); training fits it on the net's cut (`CubeScene.eye`). Both must agree."""
    from vision.board.cubes import eye_on_cut, eye_resized
    from vision.synth.camera import Camera, card_to_table

    camera = Camera(height_mm=650.0, tilt_deg=tilt, yaw_deg=yaw, hfov_deg=60.0)
    placement = camera.table_to_image() @ card_to_table(0.0, 0.0, 0.0, 1, 1, (420.0, 420.0))
    fine, cut = eye_on_cut(placement, (1280, 720), 600), eye_on_cut(placement, (1280, 720), 400)
    assert fine is not None and cut is not None
    assert np.allclose(eye_resized(fine, 600, 400), cut, atol=0.05)
    assert eye_resized(None, 600, 400) is None
