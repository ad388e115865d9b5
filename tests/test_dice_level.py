"""Level top faces (issue 21): the camera a table calibration implies, and a resting die's top face fitted as the
level polygon its corner marks support (`vision.dice.level`)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from vision.dice.level import FACE_RADIUS, LevelFitError, TableCamera, fit_level_face, level_corners
from vision.synth.camera import Camera

CAMERAS = [
    Camera(height_mm=600, tilt_deg=35, yaw_deg=0, hfov_deg=60),
    Camera(height_mm=450, tilt_deg=55, yaw_deg=20, hfov_deg=70),
    Camera(height_mm=800, tilt_deg=20, yaw_deg=-35, hfov_deg=50),
]


def _true_projection(camera: Camera, points: np.ndarray) -> np.ndarray:
    from vision.synth.solids import project_points

    return project_points(camera, points)[0]


@pytest.mark.parametrize("camera", CAMERAS)
def test_the_calibrations_camera_projects_points_above_the_table_as_the_real_one(camera: Camera) -> None:
    """From the table plane's homography alone (focal length, pose), a point 25 mm up lands where the true camera
    puts it."""
    implied = TableCamera.from_homography(camera.table_to_image(), (camera.width, camera.height))
    rng = np.random.default_rng(0)
    points = np.column_stack([rng.uniform(-150, 150, 20), rng.uniform(-100, 100, 20), rng.choice([0.0, 25.0], 20)])
    assert np.abs(implied.project(points) - _true_projection(camera, points)).max() < 0.5
    assert implied.intrinsics[0, 0] == pytest.approx(camera.focal_px, rel=1e-3)
    raised = np.array([[10.0, 20.0]])
    through = _true_projection(camera, np.array([[10.0, 20.0, 25.0]]))
    assert np.abs(implied.on_plane(through, 25.0) - raised).max() < 0.05


def test_a_calibration_with_table_axes_running_either_way_puts_up_towards_the_camera() -> None:
    """A calibration whose y runs towards the player (as a picture's rows do) still has the table's up pointing at
    the camera: a die's top is drawn above its foot, not under the table."""
    camera = CAMERAS[0]
    flip = np.diag([1.0, -1.0, 1.0])  # table y negated
    implied = TableCamera.from_homography(camera.table_to_image() @ flip, (camera.width, camera.height))
    foot, top = implied.project(np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 30.0]]))
    true_foot, true_top = _true_projection(camera, np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 30.0]]))
    assert np.abs(top - true_top).max() < 0.5 and np.abs(foot - true_foot).max() < 0.5


def test_a_calibration_that_puts_the_table_through_the_camera_is_refused() -> None:
    with pytest.raises(LevelFitError, match="behind the camera"):
        TableCamera.from_homography(np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 0.0]]), (1280, 720))


@pytest.mark.parametrize("kind", ["d20", "d6"])
def test_a_level_face_is_found_among_marks_of_its_leaning_neighbours(kind: str) -> None:
    """The top face's corners marked, and as strongly a neighbour face's (a d20 seen from the side shows one
    nearly as square-on): only the level polygon at the die's height passes through the top face's."""
    camera = CAMERAS[1]
    implied = TableCamera.from_homography(camera.table_to_image(), (camera.width, camera.height))
    rng = np.random.default_rng(3)
    for _ in range(8):
        x, y, turn, height = rng.uniform(-80, 80), rng.uniform(-60, 60), rng.uniform(0, 2 * math.pi), 20.0
        top = level_corners(implied, kind, *(np.array([v]) for v in (x, y, turn, height)))[0]
        # a neighbour: the top face folded down about its first edge, by the solid's angle between faces
        a, b = np.array([[x, y]]) + FACE_RADIUS[kind] * height * np.array(
            [
                [math.cos(turn), math.sin(turn)],
                [math.cos(turn + 2 * math.pi / len(top)), math.sin(turn + 2 * math.pi / len(top))],
            ]
        )
        middle = (a + b) / 2
        outward = (middle - [x, y]) / np.linalg.norm(middle - [x, y])
        fold = math.radians(41.8 if kind == "d20" else 90.0)
        reach = np.linalg.norm(middle - [x, y]) * (3 if kind == "d20" else 2)
        far = middle + outward * reach * math.cos(fold)
        far_z = height - reach * math.sin(fold)
        neighbour = implied.project(np.array([[*far, far_z]]))
        marks = np.concatenate([top, neighbour, neighbour + np.array([3.0, -2.0])])
        weights = np.array([0.7] * len(top) + [0.95, 0.9])
        centre = implied.project(np.array([[x, y, height / 2]]))[0]
        size = float(np.ptp(top, axis=0).max()) * 1.5
        face = fit_level_face(implied, kind, (float(centre[0]), float(centre[1])), size, marks, weights)
        side = float(np.linalg.norm(top[0] - top[1]))
        gaps = np.linalg.norm(top[:, None] - face.corners[None], axis=-1).min(axis=1)
        assert gaps.max() < 0.1 * side, (kind, gaps, side)
        assert math.hypot(face.foot_mm[0] - x, face.foot_mm[1] - y) < 0.15 * height


def test_tuning_doubts_faces_whose_level_fit_is_weak_when_that_saves_wrong_values() -> None:
    """Confident readings of dice whose level face is poorly marked (as a cocked die's is) are wrong here: the
    tuned fit floor leaves those unread and keeps the well-marked ones."""
    from vision.dice.crops import CLASSES, FACES, KINDS
    from vision.dice.level import LevelFace
    from vision.dice.read import Looks
    from vision.train.tune_dice import FITS, calibrate

    n = 40
    truth = np.array([CLASSES.index("D20:7")] * n)
    logits = np.full((n, len(FACES)), -5.0, np.float32)
    logits[: n // 2, FACES.index("D20:7")] = 5.0  # well marked, read right
    logits[n // 2 :, FACES.index("D20:9")] = 5.0  # poorly marked, read wrong
    truth[n // 2 :] = 0  # ... because they lie cocked: no value is owed
    kinds = np.tile(np.eye(len(KINDS))[KINDS.index("d20")], (n, 1)).astype(np.float32)
    corners = np.zeros((3, 2), np.float32)
    levels = tuple(LevelFace(corners, 0.7 if i < n // 2 else 0.3, (0.0, 0.0), 20.0) for i in range(n))
    looks = [Looks(kinds, ["d20"] * n, logits, np.zeros((n, 4), np.float32), levels)]
    tuned = calibrate(looks, truth, FITS)
    assert 0.3 < tuned.fit <= 0.7 and tuned.wrong == 0 and tuned.unread == 0
    free = calibrate(looks, truth)  # faces found free are never doubted for their fit
    assert free.fit == 0.0 and free.wrong == n // 2


def test_tuning_takes_a_die_whose_leaning_face_fits_better_for_a_cocked_one() -> None:
    """Each kind has its own lean cap. Here d6s whose top face is marked better leaning than level (`lean_of`) lie
    cocked and read wrong, while d20s as leaning lie flat and read right: the tuned caps leave the cocked d6s
    unread and read every d20, and the runtime's settings doubt dice as the tuning did."""
    from vision.dice.crops import CLASSES, FACES, KINDS
    from vision.dice.level import LevelFace
    from vision.dice.read import DiceSettings, Looks
    from vision.train.tune_dice import LEANS, calibrate

    n = 40
    face_kinds = ["d6"] * n + ["d20"] * (n // 2)
    truth = np.array([CLASSES.index("D6:2")] * (n // 2) + [0] * (n // 2) + [CLASSES.index("D20:5")] * (n // 2))
    logits = np.full((len(truth), len(FACES)), -5.0, np.float32)
    logits[:n, FACES.index("D6:2")] = 5.0  # every d6 read as a 2; the cocked half owes no value
    logits[n:, FACES.index("D20:5")] = 5.0
    kinds = np.stack([np.eye(len(KINDS))[KINDS.index(k)] for k in face_kinds]).astype(np.float32)
    leans = [0.01] * (n // 2) + [0.09] * n
    levels = tuple(LevelFace(np.zeros((3, 2), np.float32), 0.6, (0.0, 0.0), 16.0, lean, 20.0) for lean in leans)
    looks = [Looks(kinds, face_kinds, logits, np.zeros((len(truth), 4), np.float32), levels)]
    tuned = calibrate(looks, truth, leans=LEANS)
    assert 0.01 <= tuned.lean["d6"] < 0.09 <= tuned.lean["d20"] and tuned.wrong == 0 and tuned.unread == 0
    assert calibrate(looks, truth).wrong == n // 2  # without the caps every cocked die is given a value
    settings = DiceSettings(level_lean=tuned.lean)
    assert [settings.doubted(looks[0], i) for i in (0, n - 1, len(truth) - 1)] == [False, True, False]


@pytest.mark.parametrize("kind", ["d20", "d6"])
def test_a_leaning_top_face_is_told_from_a_level_one(kind: str) -> None:
    """Marks at the corners of a top face tilted 20 degrees (a die cocked on a card's edge): a leaning face fits
    them clearly better than any level one (`LevelFace.lean`), and about as tilted; marks at a level face's corners
    leave no leaning face better."""
    from vision.dice.level import leaning_corners

    camera = CAMERAS[0]
    implied = TableCamera.from_homography(camera.table_to_image(), (camera.width, camera.height))
    rng = np.random.default_rng(5)
    for _ in range(6):
        face = np.array([[rng.uniform(-80, 80)], [rng.uniform(-60, 60)], [rng.uniform(0, 2 * math.pi)], [20.0]])
        way = np.array([rng.uniform(0, 2 * math.pi)])
        centre = implied.project(np.array([[face[0, 0], face[1, 0], 10.0]]))[0]
        for tilt_deg in (0.0, 20.0):
            corners = leaning_corners(implied, kind, face, np.radians([tilt_deg]), way)[0]
            size = float(np.ptp(corners, axis=0).max()) * 1.5
            fitted = fit_level_face(
                implied, kind, (float(centre[0]), float(centre[1])), size, corners, np.full(len(corners), 0.8)
            )
            if tilt_deg:
                assert fitted.lean > 0.1 and 12.0 <= fitted.lean_deg <= 28.0, (fitted.lean, fitted.lean_deg)
            else:
                assert fitted.lean < 0.02, fitted.lean


def test_the_thresholds_file_gives_lean_caps_per_kind_or_one_for_all(tmp_path: Path) -> None:
    import json

    from vision.dice.read import THRESHOLDS_FILE, DiceSettings

    base = {"peak": 0.4, "temperature": 1.2, "confidence": 0.7}
    for lean, caps in (({"d6": None, "d20": 0.04}, {"d6": math.inf, "d20": 0.04}), (0.03, {"d6": 0.03, "d20": 0.03})):
        (tmp_path / THRESHOLDS_FILE).write_text(json.dumps({**base, "level": {"lean": lean}}))
        assert DiceSettings.load(tmp_path).level_lean == caps
    (tmp_path / THRESHOLDS_FILE).write_text(json.dumps(base))
    assert DiceSettings.load(tmp_path).level_lean == {}  # no cap: no die is doubted for leaning
