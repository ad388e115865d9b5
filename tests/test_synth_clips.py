"""Dice-roll and cube-drop clips: the settled labels are the values the dice show, moving flags follow the motion,
a cube's Era is the board polygon under it, composited frames are the frames render_scene would paint, the video
holds one frame per state line, and a seed gives the same files. Small clips (320x180, 10 fps, pieces at 1.5 px/mm)
are rendered once per module."""

import json
import math
from dataclasses import replace

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.the_loop.eras import CODES
from vision.synth.art.the_loop import era_regions
from vision.synth.backgrounds import load_table_textures
from vision.synth.camera import apply_homography, card_to_table
from vision.synth.clips import (
    EVENTS_FILE,
    META_FILE,
    VIDEO_FILE,
    ClipError,
    _covering,
    blend_patches,
    compose_frame,
    contact_strip,
    paint_static,
    plan_drop_clip,
    plan_roll_clip,
    render_drop_clip,
    render_roll_clip,
)
from vision.synth.components import generator
from vision.synth.occluders import Patch
from vision.synth.scene import render_scene
from vision.synth.solids import top_value
from vision.synth.video import STATES_FILE, read_states, read_video_frame_count

SMALL = {"fps": 10, "size": (320, 180), "progress": False}
DESIGN = 2


@pytest.fixture(scope="module")
def loot_roll(tmp_path_factory):
    return generator("loot-roll")(tmp_path_factory.mktemp("loot-roll"), DESIGN, 1.5)


@pytest.fixture(scope="module")
def the_loop(tmp_path_factory):
    return generator("the-loop")(tmp_path_factory.mktemp("the-loop"), DESIGN, 1.5)


def _read(out):
    states = list(read_states(out))
    return json.loads((out / META_FILE).read_text()), json.loads((out / EVENTS_FILE).read_text()), states


@pytest.fixture(scope="module")
def roll(loot_roll, tmp_path_factory):
    out = tmp_path_factory.mktemp("roll")
    render_roll_clip(out, 3, loot_roll, kind="d20", n_dice=3, **SMALL)
    return (out, *_read(out))


@pytest.fixture(scope="module")
def drop(the_loop, tmp_path_factory):
    out = tmp_path_factory.mktemp("drop")
    render_drop_clip(out, 5, the_loop, n_cubes=3, **SMALL)
    return (out, *_read(out))


def test_roll_values_are_what_the_dice_show(roll):
    _out, meta, events, states = roll
    assert meta["n_dice"] == 3 and len(events) == 3
    last = states[-1]["solids"]
    for event in events:
        solid = last[event["die"]]
        rotation = solid["pose"]["rotation"]
        assert event["event"] == "roll"
        assert top_value("d20", rotation) == event["value"] == solid["value"]
        assert solid["label"] == f"d20-{event['value']}" and solid["settled"]


def test_moving_flags_follow_the_motion(roll):
    _out, _meta, events, states = roll
    for event in events:
        i, start, settle = event["die"], event["start_frame"], event["settle_frame"]
        assert 0 < start < settle < len(states) - 5  # a still lead-in, and a still hold after
        rows = [record["solids"][i] for record in states]
        assert all(r["state"] == "waiting" and r["pose"] is None for r in rows[:start])
        assert all(r["moving"] and not r["settled"] for r in rows[start:settle])
        assert all(r["settled"] and not r["moving"] for r in rows[settle:])
        assert all(r["pose"] == rows[-1]["pose"] for r in rows[settle:])
        heights = [r["pose"]["z_mm"] for r in rows[start:settle]]
        assert max(heights) > 10.0 and rows[-1]["pose"]["z_mm"] == 0.0  # thrown from above, resting on the table
        assert len({json.dumps(r["pose"]) for r in rows[start:settle]}) > (settle - start) // 2
    assert [r["moving"] for r in states] == [any(s["moving"] for s in r["solids"]) for r in states]


def test_settled_dice_show_their_top_face(roll):
    _out, _meta, _events, states = roll
    for solid in states[-1]["solids"]:
        assert solid["box"] is not None and solid["visible"] > 0.5
        x1, y1, x2, y2 = solid["box"]
        quad = np.array(solid["top_face"]["quad"])
        assert (quad[:, 0] >= x1 - 1).all() and (quad[:, 0] <= x2 + 1).all()
        assert (quad[:, 1] >= y1 - 1).all() and (quad[:, 1] <= y2 + 1).all()
        (obj,) = [o for o in states[-1]["objects"] if o["z"] == solid["z"]]
        assert obj["code"] == solid["label"] and obj["box"] == solid["box"]


def test_video_frames_match_states(roll, drop):
    for out, meta, _events, states in (roll, drop):
        assert [r["frame"] for r in states] == list(range(meta["frames"]))
        assert read_video_frame_count(out / VIDEO_FILE) == len(states) == meta["frames"]
        assert 20 <= meta["frames"] <= 45  # about three seconds at 10 fps


def test_cube_lands_in_the_era_polygon_under_it(drop, the_loop):
    _out, meta, events, states = drop
    clip = plan_drop_clip(5, the_loop, n_cubes=3, fps=10, size=(320, 180))
    board = next(c for c in clip.scene.cards if the_loop.pieces[c.code].kind == "board")
    to_table = card_to_table(board.x_mm, board.y_mm, board.rotation_deg, 1, 1, the_loop.pieces[board.code].size_mm)
    polygons = {code: apply_homography(to_table, np.array(poly)) for code, poly in era_regions(DESIGN).items()}
    assert set(polygons) == set(CODES)
    for event in events:
        pose = states[-1]["solids"][event["cube"]]["pose"]
        inside = [
            code
            for code, poly in polygons.items()
            if cv2.pointPolygonTest(poly.astype(np.float32), (pose["x_mm"], pose["y_mm"]), False) >= 0
        ]
        assert inside == [event["era"]]
        assert event["era"] in meta["chutes"]
        assert states[-1]["solids"][event["cube"]]["era"] == event["era"]
        assert states[event["frame"] - 1]["solids"][event["cube"]]["moving"]
        assert states[event["frame"]]["solids"][event["cube"]]["settled"]
    counts = [int(v) for v in meta["engine_action"].split()[1:]]
    assert meta["engine_action"].startswith("rifts ") and sum(counts) == 3
    assert counts == [sum(e["era"] == code for e in events) for code in meta["chutes"]]


def test_no_clutter_lies_over_the_landing_eras(the_loop):
    for seed in range(4):
        clip = plan_drop_clip(seed, the_loop, fps=10, size=(320, 180))
        landing = [clip.eras[code] for code in clip.info["chutes"]]
        assert _covering(clip.scene.camera, clip.static, landing) == []
        assert all(o.kind != "hand" for o in clip.scene.occluders)
        assert clip.scene.effects.noise_sigma == 0 and clip.scene.effects.jpeg_quality == 0


def test_same_seed_same_files(roll, loot_roll, tmp_path):
    out, _meta, events, _states = roll
    again = tmp_path / "again"
    result = render_roll_clip(again, 3, loot_roll, kind="d20", n_dice=3, **SMALL)
    assert result["events"] == events
    for name in (STATES_FILE, EVENTS_FILE, META_FILE, VIDEO_FILE):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name
    other = plan_roll_clip(4, loot_roll, n_dice=3, fps=10, size=(320, 180))
    assert [t.rest for t in other.thrown] != [
        t.rest for t in plan_roll_clip(3, loot_roll, n_dice=3, fps=10, size=(320, 180)).thrown
    ]


def test_composited_frame_is_the_rendered_scene(loot_roll):
    """Painting the table once and the dice per frame gives the pixels and labels render_scene gives for the same
    table with the dice lying there (clutter and old dice removed so both paint in one order)."""
    textures = load_table_textures()
    clip = plan_roll_clip(7, loot_roll, n_dice=2, fps=10, size=(320, 180), textures=textures)
    scene = replace(clip.scene, solids=(), occluders=())
    clip = replace(clip, scene=scene, static=paint_static(scene, loot_roll, textures))
    frame = clip.n_frames - 1
    composed = compose_frame(clip, loot_roll, frame)
    dice = tuple(t.spec.at(t.rest) for t in clip.thrown)
    reference = render_scene(replace(scene, solids=dice), [loot_roll], textures)
    ordered = sorted(composed.labels, key=lambda o: o.z)
    assert [o.code for o in ordered] == [o.code for o in reference.objects]
    assert ordered == reference.objects
    assert np.array_equal(composed.image, reference.image)


def test_moving_die_is_blurred_and_labelled(loot_roll):
    clip = plan_roll_clip(3, loot_roll, n_dice=1, fps=10, size=(320, 180))
    piece = clip.thrown[0]
    frames = [f for f in range(clip.n_frames) if clip.state(0, f) == "moving" and len(clip.exposure(0, f)) > 1]
    assert frames, "some moving frame integrates several poses"
    for f in frames:
        composed = compose_frame(clip, loot_roll, f)
        if 0 not in composed.z:
            continue
        label = next(o for o in composed.labels if o.z == composed.z[0])
        pose = piece.pose_at(clip.exposure(0, f)[0])
        assert label.code == f"d20-{top_value('d20', pose.rotation)}"
        assert label.table_pose[:2] == (pose.x_mm, pose.y_mm)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 3),
    st.floats(0.05, 1.0),
    st.integers(-5, 5),
    st.integers(-5, 5),
)
def test_blend_patches_averages_exposures(h, w, a, x0, y0):
    rng = np.random.default_rng(h * 10 + w)
    bgr = rng.uniform(0, 255, (h, w, 3)).astype(np.float32)
    patch = Patch(bgr=bgr, alpha=np.full((h, w), a, np.float32), x0=x0, y0=y0)
    same = blend_patches([patch, patch, patch], 3)
    assert same is not None and np.allclose(same.alpha, a) and np.allclose(same.bgr, bgr, atol=1e-3)
    half = blend_patches([patch], 2)
    assert half is not None and np.allclose(half.alpha, a / 2) and np.allclose(half.bgr, bgr, atol=1e-3)
    moved = blend_patches([patch, replace(patch, x0=x0 + w)], 2)
    assert moved is not None and moved.alpha.shape == (h, 2 * w) and np.allclose(moved.alpha, a / 2)
    assert blend_patches([], 3) is None


def test_bad_arguments_are_named(loot_roll, the_loop, tmp_path):
    with pytest.raises(ClipError, match="kind"):
        plan_roll_clip(1, loot_roll, kind="d8")
    with pytest.raises(ClipError, match="n_dice"):
        plan_roll_clip(1, loot_roll, n_dice=5)
    with pytest.raises(ClipError, match="n_cubes"):
        plan_drop_clip(1, the_loop, n_cubes=0)
    with pytest.raises(ClipError, match="the-loop"):
        plan_drop_clip(1, loot_roll)
    with pytest.raises(ClipError, match="size"):
        plan_roll_clip(1, loot_roll, size=(321, 180))
    with pytest.raises(ClipError, match="fps"):
        plan_roll_clip(1, loot_roll, fps=0)


def test_contact_strip_reads_clips_back(roll, drop):
    strip = contact_strip([roll[0], drop[0]], every=5, columns=4, width=160)
    rows = sum(math.ceil(math.ceil(len(d[3]) / 5) / 4) for d in (roll, drop))
    assert strip.shape[1] == 4 * 160 and strip.shape[0] == 2 * 22 + rows * 90
