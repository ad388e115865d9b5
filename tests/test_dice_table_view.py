"""A die seen from the table's own side (`vision.dice.table_view`, session 46): a resting die's top face is a regular
polygon at one scale in the view, whatever the camera's tilt; a cocked die's is not; the view is never a mirror."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.dice.level import FACE_RADIUS, TableCamera, level_corners
from vision.dice.table_view import TableView, to_view, top_height, view_of_find, view_picture
from vision.synth.camera import Camera

CAMERAS = [
    Camera(height_mm=600, tilt_deg=35, yaw_deg=0, hfov_deg=60),
    Camera(height_mm=450, tilt_deg=55, yaw_deg=20, hfov_deg=70),
    Camera(height_mm=800, tilt_deg=0, yaw_deg=-35, hfov_deg=50),
]
OUT = 96


def _camera(camera: Camera, flip_y: bool = False) -> TableCamera:
    h = camera.table_to_image() @ (np.diag([1.0, -1.0, 1.0]) if flip_y else np.eye(3))
    return TableCamera.from_homography(h, (camera.width, camera.height))


def _sides(points: np.ndarray) -> np.ndarray:
    return np.linalg.norm(points - np.roll(points, 1, axis=0), axis=1)


@pytest.mark.parametrize("camera", CAMERAS)
@pytest.mark.parametrize("kind", ["d20", "d6"])
def test_a_resting_dies_top_face_is_regular_in_its_view_and_its_height_is_found(camera: Camera, kind: str) -> None:
    table = _camera(camera)
    height = 18.0
    corners = level_corners(table, kind, np.array([40.0]), np.array([-25.0]), np.array([0.3]), np.array([height]))[0]
    assert top_height(table, kind, corners) == pytest.approx(height, abs=0.01)
    view = TableView(40.0, -25.0, height, 30.0, turn_deg=17.0)
    seen = to_view(corners, view.frame_from_view(table, OUT))
    radius = FACE_RADIUS[kind] * height * OUT / 30.0  # view pixels
    assert np.allclose(np.linalg.norm(seen - (OUT - 1) / 2, axis=1), radius, atol=0.01)
    assert np.ptp(_sides(seen)) < 0.01


def test_a_cocked_dies_leaning_face_is_not_regular_in_the_view() -> None:
    table = _camera(CAMERAS[1])
    level = np.array([[0.0, 8.0, 18.0], [-6.0, -3.0, 18.0], [6.0, -3.0, 18.0]])
    tilt = math.radians(20)  # the face turned about the table's x axis through its centre
    turn = np.array([[1, 0, 0], [0, math.cos(tilt), -math.sin(tilt)], [0, math.sin(tilt), math.cos(tilt)]])
    leaning = (level - [0, 1, 18]) @ turn.T + [0, 1, 18]
    seen = to_view(table.project(leaning), TableView(0.0, 1.0, 18.0, 30.0).frame_from_view(table, OUT))
    assert np.ptp(_sides(seen)) / _sides(seen).mean() > 0.05  # the tilted triangle's sides differ in the view


@pytest.mark.parametrize("flip_y", [False, True])
def test_the_view_is_never_a_mirror_image_whichever_way_the_tables_axes_run(flip_y: bool) -> None:
    """A frame's clockwise triangle stays clockwise in the view (a numeral read in the view is not mirrored)."""
    table = _camera(CAMERAS[0], flip_y)
    corners = level_corners(table, "d20", np.array([0.0]), np.array([0.0]), np.array([0.0]), np.array([18.0]))[0]
    seen = to_view(corners, TableView(0.0, 0.0, 18.0, 30.0).frame_from_view(table, OUT))

    def clockwise(p: np.ndarray) -> float:
        return float(np.cross(p[1] - p[0], p[2] - p[0]))

    assert np.sign(clockwise(seen)) == np.sign(clockwise(corners))


def test_the_view_cuts_the_frame_where_its_points_map() -> None:
    """A dot drawn in the frame at a point of the plane lands in the view where `to_view` puts that point."""
    table = _camera(CAMERAS[0])
    view = TableView(30.0, 10.0, 18.0, 40.0, turn_deg=30.0)
    matrix = view.frame_from_view(table, OUT)
    spot = table.project(np.array([[36.0, 14.0, 18.0]]))
    frame = np.zeros((720, 1280), np.uint8)
    cv2.circle(frame, (round(spot[0, 0]), round(spot[0, 1])), 3, 255, -1)
    picture = view_picture(frame, matrix, OUT).astype(np.float64)
    ys, xs = np.mgrid[:OUT, :OUT]
    centroid = np.array([(xs * picture).sum(), (ys * picture).sum()]) / picture.sum()
    assert np.abs(centroid - to_view(spot, matrix)[0]).max() < 1.0


def test_a_finds_view_is_centred_on_the_die_at_about_its_height() -> None:
    camera = CAMERAS[1]
    table = _camera(camera)
    height = 18.0
    middle = table.project(np.array([[20.0, -10.0, height / 2]]))[0]
    foot = table.project(np.array([[20.0 - 10.0, -10.0, 0.0], [20.0 + 10.0, -10.0, 0.0]]))
    size_px = float(np.linalg.norm(foot[1] - foot[0])) * 1.35 * height / 20.0  # an outline 1.35 heights across
    view = view_of_find(table, (float(middle[0]), float(middle[1])), size_px)
    assert view.z_mm == pytest.approx(height, rel=0.15)
    assert math.hypot(view.x_mm - 20.0, view.y_mm + 10.0) < 0.1 * height


def test_corners_no_die_could_have_are_refused() -> None:
    table = _camera(CAMERAS[0])
    with pytest.raises(ValueError, match="no height between"):
        top_height(table, "d20", np.array([[600.0, 300.0], [601.0, 300.0], [600.5, 301.0]]))


@pytest.mark.parametrize(("scale", "shift"), [(0.6, (600.0, 300.0)), (2.8, (600.0, 300.0)), (3.5, (-60.0, 20.0))])
def test_the_view_is_cut_from_its_footprint_as_from_the_whole_frame(scale: float, shift: tuple[float, float]) -> None:
    """`view_picture` blurs and warps only the part of the frame the view covers (a whole frame per die would cost
    ten times more): the same picture as the whole frame blurred and warped, at the frame's edge too."""
    rng = np.random.default_rng(3)
    frame = cv2.GaussianBlur(rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8), (0, 0), 1.5)
    matrix = np.array([[scale, 0.3 * scale, shift[0]], [-0.2 * scale, scale, shift[1]], [1e-4, 2e-4, 1.0]])
    blurred = cv2.GaussianBlur(frame, (0, 0), 0.45 * scale) if scale > 1.25 else frame
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    whole = cv2.warpPerspective(blurred, matrix, (OUT, OUT), flags=flags, borderMode=cv2.BORDER_REPLICATE)
    assert np.abs(view_picture(frame, matrix, OUT).astype(int) - whole).max() <= 1
