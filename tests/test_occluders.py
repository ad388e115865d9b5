"""Hands, arms and clutter: determinism, frame clipping, mirroring, camera parallax, every kind renders."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.synth.camera import Camera
from vision.synth.occluders import (
    FRAME_MARGIN_PX,
    HAND_POSES,
    OBJECT_KINDS,
    SKIN_TONES,
    OccluderSpec,
    hand_model,
    project,
    projection,
    random_occluder,
    render_occluder,
)

FRAME = (1280, 720)
TOP_DOWN = Camera(height_mm=600.0, tilt_deg=0.0, yaw_deg=0.0, hfov_deg=60.0)


def _hand(variant=20, height=80.0, **kw):
    spec = OccluderSpec("hand", 0.0, -40.0, 0.0, 1.0, (120, 150, 200), (90, 60, 40), height, variant)
    return replace(spec, **kw)


def _render(spec, camera=TOP_DOWN, flat=False):
    return render_occluder(spec, camera.table_to_image(), FRAME, camera=None if flat else camera)


def _canvas(patch, frame=FRAME):
    """The patch's alpha pasted into a frame-sized canvas (the margin beyond the frame dropped)."""
    m = FRAME_MARGIN_PX
    canvas = np.zeros((frame[1] + 2 * m, frame[0] + 2 * m), np.float32)
    ph, pw = patch.alpha.shape
    canvas[patch.y0 + m : patch.y0 + m + ph, patch.x0 + m : patch.x0 + m + pw] = patch.alpha
    return canvas[m : m + frame[1], m : m + frame[0]]


def _assert_clipped(patch, frame=FRAME):
    ph, pw = patch.alpha.shape
    assert patch.x0 >= -FRAME_MARGIN_PX and patch.y0 >= -FRAME_MARGIN_PX
    assert patch.x0 + pw <= frame[0] + FRAME_MARGIN_PX and patch.y0 + ph <= frame[1] + FRAME_MARGIN_PX
    assert patch.bgr.shape[:2] == patch.alpha.shape


def test_same_spec_same_pixels_other_variant_other_hand():
    spec = _hand()
    first, again = _render(spec), _render(spec)
    assert (first.x0, first.y0) == (again.x0, again.y0)
    assert first.alpha.tobytes() == again.alpha.tobytes() and first.bgr.tobytes() == again.bgr.tobytes()
    other = _render(_hand(variant=spec.variant + 2))  # same handedness, different hand
    assert other.alpha.shape != first.alpha.shape or not np.array_equal(other.alpha, first.alpha)


def test_random_occluder_is_deterministic_by_rng_and_tones_stay_skin_like():
    a = random_occluder(np.random.default_rng(3), "hand", 1.0, 2.0, 30.0)
    b = random_occluder(np.random.default_rng(3), "hand", 1.0, 2.0, 30.0)
    assert a == b and a.label == "hand" and a.kind == "hand"
    rng = np.random.default_rng(0)
    for _ in range(200):
        blue, green, red = random_occluder(rng, "hand", 0.0, 0.0, 0.0).colour
        assert red >= green >= blue  # skin is never green or blue, whatever the tone and jitter
    assert len(SKIN_TONES) >= 6


def test_arm_leaving_the_frame_is_clipped_to_the_frame_plus_margin():
    # wrist near the bottom edge, pointing up: the 900 mm arm runs far outside the frame
    spec = _hand(y_mm=-120.0, height=60.0)
    patch = _render(spec)
    _assert_clipped(patch)
    canvas = _canvas(patch)
    assert canvas[-1].max() > 0.9  # the arm still reaches the frame edge, so the edge can be counted
    assert patch.alpha.shape[0] < FRAME[1] + 2 * FRAME_MARGIN_PX


@settings(max_examples=25, deadline=None)
@given(
    x=st.floats(-400, 400),
    y=st.floats(-300, 300),
    rotation=st.floats(0, 360),
    height=st.floats(0, 150),
    tilt=st.floats(0, 40),
    yaw=st.floats(-180, 180),
    variant=st.integers(0, 2**31 - 1),
)
def test_hand_alpha_lies_only_inside_the_clipped_window(x, y, rotation, height, tilt, yaw, variant):
    camera = Camera(height_mm=500.0, tilt_deg=tilt, yaw_deg=yaw, hfov_deg=65.0, width=640, height=360)
    spec = replace(_hand(variant=variant, height=height), x_mm=x, y_mm=y, rotation_deg=rotation)
    patch = render_occluder(spec, camera.table_to_image(), (640, 360), camera=camera)
    if patch is None:
        return
    _assert_clipped(patch, (640, 360))
    assert np.isfinite(patch.bgr).all() and patch.alpha.min() >= 0.0 and patch.alpha.max() <= 1.0
    assert patch.alpha.max() > 0.0


def test_left_hand_is_the_right_hand_mirrored():
    right, left = _hand(variant=24), _hand(variant=25)
    assert not hand_model(right).left and hand_model(left).left
    assert hand_model(right).pose == hand_model(left).pose
    a_right, a_left = _canvas(_render(right)), _canvas(_render(left))
    # the camera's axis is at pixel column 640, so column 640 + k mirrors to 640 - k
    assert np.abs(a_right[:, 1:] - a_left[:, 1:][:, ::-1]).max() < 1e-3
    assert np.abs(a_right - a_left).mean() > 0.005  # and it is not symmetric itself
    # the thumb is on the left of a right hand seen from above (fingers pointing away), on the right of a left one
    rows = slice(200, 330)  # thumb rows of this hand (wrist below the frame centre, fingers up)
    assert a_right[rows, :560].sum() > 3 * a_right[rows, 720:].sum()


def test_raised_hand_moves_away_from_the_camera_foot_and_grows():
    camera = Camera(height_mm=600.0, tilt_deg=30.0, yaw_deg=0.0, hfov_deg=60.0)
    spec = _hand(variant=40, height=120.0, y_mm=0.0)  # fingers point away from the camera's foot
    flat, raised = _canvas(_render(spec, camera, flat=True)), _canvas(_render(spec, camera))
    top_flat = np.nonzero(flat.max(axis=1) > 0.5)[0].min()
    top_raised = np.nonzero(raised.max(axis=1) > 0.5)[0].min()
    assert top_raised < top_flat - 10  # 'away from the foot' is up in the image for this camera rig
    fingers_flat = (flat[top_flat : top_flat + 150] > 0.5).sum()
    fingers_raised = (raised[top_raised : top_raised + 150] > 0.5).sum()
    assert fingers_raised > fingers_flat * 1.05  # nearer the camera, so bigger


def test_turned_camera_parallax_follows_the_foot():
    camera = Camera(height_mm=600.0, tilt_deg=30.0, yaw_deg=90.0, hfov_deg=60.0)
    foot = camera.position()[:2]
    assert foot[0] > 100  # camera stands on the +x side
    spec = _hand(variant=40, height=120.0, x_mm=0.0, y_mm=0.0, rotation_deg=90.0)  # fingers towards -x
    p = projection(camera.table_to_image(), camera)
    tip_table, tip_raised = project(p, np.array([[-180.0, 0.0, 0.0], [-180.0, 0.0, 60.0]]))
    away = tip_table - project(p, np.array([[foot[0], foot[1], 0.0]]))[0]
    assert np.dot(tip_raised - tip_table, away) > 0
    flat, raised = _canvas(_render(spec, camera, flat=True)), _canvas(_render(spec, camera))
    assert np.nonzero(raised.max(axis=1) > 0.5)[0].min() < np.nonzero(flat.max(axis=1) > 0.5)[0].min() - 10


def test_hand_at_height_zero_projects_like_the_table_homography():
    camera = Camera(height_mm=600.0, tilt_deg=30.0, yaw_deg=40.0, hfov_deg=60.0)
    spec = _hand(variant=41, height=0.0, x_mm=30.0, y_mm=20.0, rotation_deg=20.0)
    with_camera, flat = _render(spec, camera), _render(spec, camera, flat=True)
    assert (with_camera.x0, with_camera.y0, with_camera.alpha.shape) == (flat.x0, flat.y0, flat.alpha.shape)
    assert np.abs(with_camera.alpha - flat.alpha).max() < 1e-3


@pytest.mark.parametrize("kind", ["hand", *OBJECT_KINDS])
def test_every_kind_renders_with_and_without_a_tilted_camera(kind):
    camera = Camera(height_mm=550.0, tilt_deg=25.0, yaw_deg=-30.0, hfov_deg=65.0)
    rng = np.random.default_rng(sum(map(ord, kind)))
    spec = random_occluder(rng, kind, 20.0, 10.0, 35.0)
    assert spec.label == ("hand" if kind == "hand" else "object")
    for cam in (camera, None):
        patch = render_occluder(spec, camera.table_to_image(), FRAME, camera=cam)
        assert patch is not None
        _assert_clipped(patch)
        assert patch.alpha.max() > 0.95 and np.isfinite(patch.bgr).all()
        solid = patch.alpha > 0.5
        assert patch.bgr[solid].min() >= 0.0 and patch.bgr[solid].max() < 400.0
        assert patch.bgr[solid].std() > 2.0  # shaded, not one flat colour


def test_cup_wall_shows_only_to_a_tilted_camera():
    spec = random_occluder(np.random.default_rng(1), "cup", 0.0, 150.0, 0.0)
    straight, tilted = TOP_DOWN, Camera(height_mm=600.0, tilt_deg=35.0, yaw_deg=0.0, hfov_deg=60.0)
    area_top = (_render(spec, straight).alpha > 0.5).sum() / (_render(spec, straight, flat=True).alpha > 0.5).sum()
    area_tilt = (_render(spec, tilted).alpha > 0.5).sum() / (_render(spec, tilted, flat=True).alpha > 0.5).sum()
    assert area_tilt > area_top + 0.1  # the wall adds to the silhouette, beyond the rim's growth


def test_every_pose_occurs_and_unknown_kinds_are_refused():
    poses = {hand_model(_hand(variant=v)).pose for v in range(0, 200, 2)}
    assert poses == set(HAND_POSES)
    with pytest.raises(ValueError, match="'spoon'"):
        random_occluder(np.random.default_rng(0), "spoon", 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="'spoon'"):
        render_occluder(replace(_hand(), kind="spoon"), TOP_DOWN.table_to_image(), FRAME)


def test_hand_outside_the_frame_gives_no_patch():
    assert _render(_hand(x_mm=5000.0)) is None
