"""3-D dice, cubes and pawns: face maps, poses, rendering through the scene camera, labels and errors."""

from __future__ import annotations

import itertools
from dataclasses import replace

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.synth import solids as S
from vision.synth.camera import Camera

OVERHEAD = Camera(height_mm=150.0, tilt_deg=0.0, yaw_deg=0.0, hfov_deg=60.0)
PIPS_VARIANT = next(v for v in range(S.DESIGNS_PER_KIND) if S.design_of("d6", v).style == "pips")


def _iou(render: S.SolidRender, polygon: np.ndarray) -> float:
    patch = render.patch
    hull = np.zeros(patch.alpha.shape, np.uint8)
    pts = np.round((polygon - [patch.x0, patch.y0]) * 16).astype(np.int32)
    cv2.fillPoly(hull, [pts], 1, cv2.LINE_8, 4)
    hull = hull.astype(bool)
    return float((hull & render.mask).sum() / max((hull | render.mask).sum(), 1))


@pytest.mark.parametrize("kind", ["d6", "d20"])
def test_settled_pose_and_top_value_round_trip_for_every_value(kind):
    rng = np.random.default_rng(1)
    for value in range(1, S.DIE_SIDES[kind] + 1):
        for _ in range(4):
            rotation = S.settled_pose(rng, kind, value)
            assert S.top_value(kind, rotation) == value
            up = rotation @ S.mesh(kind).face_normals[S.mesh(kind).face_values == value][0]
            assert up[2] == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), kind=st.sampled_from(["d6", "d20"]), data=st.data())
def test_round_trip_any_yaw_and_the_top_face_is_the_highest(seed, kind, data):
    value = data.draw(st.integers(1, S.DIE_SIDES[kind]))
    rotation = S.settled_pose(np.random.default_rng(seed), kind, value)
    assert S.top_value(kind, rotation) == value
    world = S.world_vertices(S.SolidSpec(kind, 0.0, 0.0, rotation=rotation))
    assert world[:, 2].min() == pytest.approx(0.0, abs=1e-9)
    assert world[:, 2].max() == pytest.approx(
        S.DEFAULT_SIZE_MM[kind], rel=0.01
    )  # resting height = size (the d20 mesh is 0.3% irregular)


@pytest.mark.parametrize("kind", ["d6", "d20"])
def test_opposite_faces_sum_to_sides_plus_one(kind):
    geometry = S.mesh(kind)
    assert sorted(geometry.face_values.tolist()) == list(range(1, S.DIE_SIDES[kind] + 1))
    for normal, value in zip(geometry.face_normals, geometry.face_values, strict=True):
        opposite = int(np.argmin(geometry.face_normals @ normal))
        assert geometry.face_normals[opposite] @ normal == pytest.approx(-1.0, abs=1e-3)
        assert value + geometry.face_values[opposite] == S.DIE_SIDES[kind] + 1


@pytest.mark.parametrize("value", range(1, 7))
def test_pips_on_the_rendered_top_face_count_the_value(value):
    """The rendered picture, not just the table of normals, shows the labelled value."""
    rotation = S.settled_pose(np.random.default_rng(value), "d6", value)
    spec = S.SolidSpec(
        "d6", 0.0, 0.0, rotation=rotation, colour=(235, 235, 235), ink=(10, 10, 10), variant=PIPS_VARIANT
    )
    render = S.render_solid(spec, OVERHEAD)
    assert render is not None and render.value == value
    face = np.zeros(render.mask.shape, np.uint8)
    cv2.fillPoly(face, [np.round(render.top_face - [render.patch.x0, render.patch.y0]).astype(np.int32)], 1)
    face = cv2.erode(face, np.ones((5, 5), np.uint8))
    dark = ((render.patch.bgr.mean(axis=2) < 100) & (face > 0)).astype(np.uint8)
    _n_labels, _, stats, _ = cv2.connectedComponentsWithStats(dark)
    assert sum(1 for s in stats[1:] if s[cv2.CC_STAT_AREA] >= 4) == value


def test_die_seen_straight_down_fills_its_outline_and_its_top_face_lies_inside():
    rng = np.random.default_rng(3)
    for kind in ("d6", "d20"):
        spec = S.random_solid(rng, kind, 10.0, -5.0)
        render = S.render_solid(spec, OVERHEAD)
        assert render is not None
        outline = render.outline.astype(np.float32)
        centre = render.outline.mean(axis=0)
        local = (centre - [render.patch.x0, render.patch.y0]).round().astype(int)
        assert render.patch.alpha[local[1], local[0]] == pytest.approx(1.0)
        for x, y in render.top_face:
            assert cv2.pointPolygonTest(outline, (float(x), float(y)), True) >= -0.5
        assert cv2.contourArea(render.top_face.astype(np.float32)) > 0.15 * cv2.contourArea(outline)


@pytest.mark.parametrize("kind", ["d6", "d20", "cube"])
def test_silhouette_matches_the_projected_hull(kind):
    rng = np.random.default_rng(5)
    for tilt in (0.0, 25.0, 40.0):
        camera = Camera(
            height_mm=float(rng.uniform(300, 700)), tilt_deg=tilt, yaw_deg=float(rng.uniform(-180, 180)), hfov_deg=60.0
        )
        rotation = S.rotation_about(rng.normal(size=3), float(rng.uniform(0, np.pi)))
        spec = S.SolidSpec(kind, float(rng.uniform(-40, 40)), float(rng.uniform(-40, 40)), 3.0, rotation)
        render = S.render_solid(spec, camera)
        assert render is not None
        assert _iou(render, render.outline) > 0.9


def test_labels_agree_with_pixels_and_frame():
    camera = Camera(height_mm=500.0, tilt_deg=30.0, yaw_deg=20.0, hfov_deg=65.0)
    spec = S.random_solid(np.random.default_rng(8), "d20", 0.0, 0.0)
    render = S.render_solid(spec, camera)
    ys, xs = np.nonzero(render.mask)
    assert render.box == (
        xs.min() + render.patch.x0,
        ys.min() + render.patch.y0,
        xs.max() + render.patch.x0 + 1,
        ys.max() + render.patch.y0 + 1,
    )
    assert render.value == S.top_value("d20", spec.matrix)
    assert render.patch.alpha.min() >= 0.0 and render.patch.alpha.max() <= 1.0
    assert np.isfinite(render.patch.bgr).all()
    assert render.top_z_mm == pytest.approx(spec.size_mm, rel=0.01)
    far = S.SolidSpec("d6", 5000.0, 0.0)
    assert S.render_solid(far, camera) is None


def test_rendering_is_deterministic_and_variants_differ():
    camera = Camera(height_mm=400.0, tilt_deg=20.0, yaw_deg=0.0, hfov_deg=60.0)
    a = S.random_solid(np.random.default_rng(11), "d20", 0.0, 0.0)
    b = S.random_solid(np.random.default_rng(11), "d20", 0.0, 0.0)
    assert a == b
    ra, rb = S.render_solid(a, camera), S.render_solid(b, camera)
    assert np.array_equal(ra.patch.bgr, rb.patch.bgr) and np.array_equal(ra.patch.alpha, rb.patch.alpha)
    styles = {S.design_of("d6", v).style for v in range(S.DESIGNS_PER_KIND)}
    assert styles == {"pips", "dice-box", "font"}
    assert {S.design_of("pawn", v).style for v in range(S.DESIGNS_PER_KIND)} == {"pawn", "meeple"}


@pytest.mark.parametrize("kind", ["cube", "pawn"])
def test_cubes_and_pawns_render_without_value(kind):
    rng = np.random.default_rng(2)
    for _ in range(3):
        spec = S.random_solid(rng, kind, 0.0, 0.0)
        render = S.render_solid(spec, Camera(height_mm=400.0, tilt_deg=30.0, yaw_deg=0.0, hfov_deg=60.0))
        assert render is not None and render.value is None and render.mask.sum() > 50
        assert (render.top_face is None) == (kind == "pawn")
    assert (
        S.random_solid(rng, "pawn", 0.0, 0.0, code="chrono").colour
        != S.random_solid(rng, "pawn", 0.0, 0.0, code="courier").colour
    )
    assert S.random_solid(rng, "cube", 0.0, 0.0, code="red").code == "red"


def test_shadow_falls_away_from_the_light_and_softens_in_the_air():
    light = (-0.5, 0.0, 0.85)  # light on the left: the shadow lies to the right
    spec = S.SolidSpec("d6", 0.0, 0.0)
    piece = S.render_solid(spec, OVERHEAD, light)
    shadow = S.render_shadow(spec, OVERHEAD, light)
    _ys, xs = np.nonzero(shadow.alpha > 0.3)
    assert (xs + shadow.x0).mean() > piece.centre_px[0]
    lifted = S.render_shadow(S.SolidSpec("d6", 0.0, 0.0, z_mm=30.0), OVERHEAD, light)
    assert lifted.alpha.max() < shadow.alpha.max()
    with pytest.raises(S.SolidError, match="above the table"):
        S.render_shadow(spec, OVERHEAD, (1.0, 0.0, 0.0))


@pytest.mark.parametrize("kind,value", [("d6", 4), ("d20", 17), ("cube", None), ("pawn", None)])
def test_tumble_ends_settled_with_the_value_up(kind, value):
    rng = np.random.default_rng(4)
    poses = S.tumble(rng, kind, (-150.0, -80.0), (20.0, 30.0), value, n_frames=40)
    assert len(poses) == 40
    assert all(p.z_mm >= 0 for p in poses)
    assert poses[0].x_mm == pytest.approx(-150.0) and poses[-1].x_mm == pytest.approx(20.0)
    assert poses[-1].z_mm == 0.0 and poses[-1] == poses[-2]
    if value is not None:
        assert S.top_value(kind, poses[-1].matrix) == value
    if kind != "pawn":
        assert max(p.z_mm for p in poses) > 10.0  # it was dropped
        angles = [
            np.degrees(np.arccos(np.clip((np.trace(a.matrix.T @ b.matrix) - 1) / 2, -1, 1)))
            for a, b in itertools.pairwise(poses)
        ]
        moving = [a for a in angles if a > 1e-6]
        assert moving[0] > moving[-1]  # the spin slows down
    else:
        assert all(p.matrix[2, 2] == pytest.approx(1.0) for p in poses)  # carried upright
    spec = S.random_solid(rng, kind, 0.0, 0.0).at(poses[5])
    assert spec.z_mm == poses[5].z_mm


def test_quaternion_and_matrix_rotations_agree():
    q = np.array([0.9, 0.1, -0.3, 0.2])
    m = S.as_rotation(q)
    assert np.allclose(m @ m.T, np.eye(3)) and np.linalg.det(m) == pytest.approx(1.0)
    axis_angle = cv2.Rodrigues(m)[0].ravel()
    assert np.allclose(S.rotation_about(axis_angle, np.linalg.norm(axis_angle)), m)
    assert S.SolidSpec("d6", 0.0, 0.0, rotation=q) == S.SolidSpec("d6", 0.0, 0.0, rotation=m)


def test_bad_input_errors_name_the_field():
    rng = np.random.default_rng(0)
    with pytest.raises(S.SolidError, match=r"unknown solid kind 'd8'.*d6, d20, cube, pawn"):
        S.SolidSpec("d8", 0.0, 0.0)
    with pytest.raises(S.SolidError, match="d6 value: expected an integer 1-6, got 7"):
        S.settled_pose(rng, "d6", 7)
    with pytest.raises(S.SolidError, match="d20 value: expected an integer 1-20, got 0"):
        S.tumble(rng, "d20", (0, 0), (1, 1), 0)
    with pytest.raises(S.SolidError, match="d6 value"):
        S.settled_pose(rng, "d6", True)
    with pytest.raises(S.SolidError, match="pawn value"):
        S.settled_pose(rng, "pawn", 3)
    with pytest.raises(S.SolidError, match="a cube has no value"):
        S.top_value("cube", np.eye(3))
    with pytest.raises(S.SolidError, match="not orthonormal"):
        S.SolidSpec("d6", 0.0, 0.0, rotation=np.eye(3) * 2)
    with pytest.raises(S.SolidError, match="reflection"):
        S.SolidSpec("d6", 0.0, 0.0, rotation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(S.SolidError, match="got shape"):
        S.as_rotation([1.0, 2.0])
    with pytest.raises(S.SolidError, match="size_mm"):
        S.SolidSpec("cube", 0.0, 0.0, size_mm=-3.0)
    with pytest.raises(S.SolidError, match="z_mm"):
        S.SolidSpec("cube", 0.0, 0.0, z_mm=-1.0)
    with pytest.raises(S.SolidError, match="colour: expected a BGR triple"):
        S.SolidSpec("cube", 0.0, 0.0, colour=(0, 0, 300))
    with pytest.raises(S.SolidError, match=r"pawn code .nobody.*chrono"):
        S.random_solid(rng, "pawn", 0.0, 0.0, code="nobody")
    with pytest.raises(S.SolidError, match="n_frames"):
        S.tumble(rng, "d6", (0, 0), (1, 1), 3, n_frames=1)


def test_convex_hull_mesh_of_a_cube_has_six_square_faces():
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T.astype(float)
    triangles, faces = S.convex_hull_mesh(corners)
    assert len(faces) == 6 and all(len(f) == 4 for f in faces) and len(triangles) == 12
    a, b, c = (corners[triangles[:, i]] for i in range(3))
    assert (np.einsum("ij,ij->i", np.cross(b - a, c - a), a + b + c) > 0).all()  # wound outward


def test_asset_builder_swaps_babylon_axes_and_keeps_the_face_map(tmp_path):
    from vision.synth import solids_assets as A

    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T.astype(float)
    triangles, _ = S.convex_hull_mesh(corners)
    a, b, c = (corners[triangles[:, i]] for i in range(3))
    normals = np.cross(b - a, c - a)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    value_of_axis = {(0, 1, 0): 6, (0, -1, 0): 1, (1, 0, 0): 3, (-1, 0, 0): 4, (0, 0, 1): 2, (0, 0, -1): 5}
    values = {str(i): value_of_axis[tuple(np.round(n).astype(int))] for i, n in enumerate(normals)}
    mesh = {"positions": corners.ravel().tolist(), "indices": triangles.ravel().tolist(), "uvs": [0.5] * 16}
    mesh["normals"] = (corners / np.sqrt(3)).ravel().tolist()
    scene = {"meshes": [{"name": "d6", **mesh}, {"name": "d6_collider", **mesh}], "colliderFaceMap": {"d6": values}}
    arrays = A.convert_die(scene, "d6", tmp_path / "scene.json")
    face_normals, face_values = arrays["d6_face_normals"], arrays["d6_face_values"]
    assert face_values.tolist() == [1, 2, 3, 4, 5, 6]
    assert np.allclose(face_normals[face_values.tolist().index(6)], [0, 0, 1], atol=1e-6)  # Babylon +y -> our +z
    assert np.allclose(face_normals[face_values.tolist().index(2)], [0, 1, 0], atol=1e-6)  # Babylon +z -> our +y
    assert arrays["d6_vertices"].max() == pytest.approx(0.5)  # scaled to a resting height of 1
    with pytest.raises(A.AssetError, match="no mesh named 'd20'"):
        A.convert_die(scene, "d20", tmp_path / "scene.json")
    with pytest.raises(A.AssetError, match="not found"):
        A.build(tmp_path / "nothing")


def test_lettering_is_for_training_dice_only_and_moves_no_other_draw() -> None:
    """Lettering is a training die's alone (validation and test dice keep measuring lettering no reader saw), it
    comes from a stream of its own (a design's style, font, colours and material are as they were without it), and
    by default no die is lettered: the shipped recipe renders dice as before."""
    assert all(S.design_of(k, v).lettering is None for v in range(S.DIE_DESIGNS) for k in ("d6", "d20"))
    plain = {(k, v): S.design_of(k, v) for v in range(S.DIE_DESIGNS) for k in ("d6", "d20")}
    try:
        S.set_lettered(0.75)
        lettered = 0
        for (kind, variant), before in plain.items():
            design = S.design_of(kind, variant)
            assert replace(design, lettering=None) == before
            if S.die_design_split(variant) != "train" or design.style != "font":
                assert design.lettering is None
            lettered += design.lettering is not None
        fonts = sum(d.style == "font" and S.die_design_split(d.seed) == "train" for d in plain.values())
        assert 0.6 < lettered / fonts < 0.9
    finally:
        S.set_lettered(0.0)
    assert S.design_of("d20", 0).lettering is None
    with pytest.raises(S.SolidError, match="lettered share"):
        S.set_lettered(1.5)
    with pytest.raises(S.SolidError, match="lettering: expected one of reshaped, marked"):
        S.set_lettered(0.5, "squiggly")


def test_marked_lettering_keeps_the_numerals_size_and_shape() -> None:
    """The "marked" lettering varies only what real dice vary without changing the numeral: the mark on 6 and 9
    (none only where the numeral points at a corner, so a 6 turned half round is never an unmarked 9), a d20's
    numerals pointing at an edge, a little weight; never a stroke font, a slant, a width or a size."""
    try:
        S.set_lettered(1.0, "marked")
        letterings = [S.design_of(k, v).lettering for v in range(S.DIE_DESIGNS) for k in ("d6", "d20")]
        given = [x for x in letterings if x is not None]
        assert len(given) > 50
        assert all(x.stroke_font == -1 and x.slant == 0 and x.width == 1 and x.size == 1 for x in given)
        assert all(abs(x.weight) <= 0.04 for x in given)
        assert not any(x.turned and x.mark == "none" for x in given)
        assert {x.mark for x in given} == {"bar", "dot", "none"} and any(x.turned for x in given)
    finally:
        S.set_lettered(0.0)


def _numeral_ink(lettering: S.Lettering | None, value: int) -> np.ndarray:
    variant = next(v for v in range(S.DIE_DESIGNS) if S.design_of("d20", v).style == "font")
    design = replace(S.design_of("d20", variant), lettering=lettering, ink_scale=1.0)
    cell = np.zeros((128, 128, 3), np.float32)
    S._draw_numeral(cell, value, 56.0, design, triangle=True)
    return cell[..., 0]


def test_lettering_reshapes_the_numeral_as_it_says() -> None:
    plain = S.Lettering(stroke_font=-1, weight=0.0, slant=0.0, width=1.0, size=1.0, turned=False, mark="bar")
    ink = _numeral_ink(plain, 13)
    assert ink.max() > 0.9 and ink.min() >= 0.0

    def weight(lettering: S.Lettering) -> float:
        return float(_numeral_ink(lettering, 13).sum())

    assert weight(replace(plain, weight=0.05)) > 1.3 * weight(plain) > 1.3**2 * weight(replace(plain, weight=-0.03))
    assert weight(replace(plain, size=0.7)) < 0.7 * weight(plain)
    turned = _numeral_ink(replace(plain, turned=True), 13)
    assert np.abs(turned - ink[::-1, ::-1]).mean() < 0.02 * ink.mean() + 1e-3  # half a turn about the face's centre
    wide = _numeral_ink(replace(plain, width=1.3), 13)
    columns = lambda a: np.flatnonzero(a.max(axis=0) > 0.5)  # noqa: E731
    assert np.ptp(columns(wide)) > 1.2 * np.ptp(columns(ink))
    stroke = _numeral_ink(replace(plain, stroke_font=0), 13)
    assert stroke.max() > 0.9 and np.abs(stroke - ink).mean() > 0.01  # another shape of 13
    marks = {m: _numeral_ink(replace(plain, mark=m), 6).sum() for m in ("bar", "dot", "none")}
    assert marks["bar"] > marks["dot"] > marks["none"] > 0
    assert np.array_equal(_numeral_ink(replace(plain, mark="none"), 7), _numeral_ink(plain, 7))  # 6 and 9 only
