"""Full-game synthetic videos: the files agree with the engine, the still/moving flags with the motion, a card
turned over is drawn edge-on at the moment its label switches, the video is H.264 that OpenCV reads back, and the
same seed gives the same bytes. One short game (3 actions, 320x180, 10 fps) is rendered once per module."""

import gzip
import itertools
import json
import math
import shutil

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion_ui.synth_game import _stages, play_game, render_game_video, table_state
from games import registry
from vision.synth import video
from vision.synth.camera import Camera, apply_homography
from vision.synth.deckdir import DeckError
from vision.synth.export import write_procedural_deck
from vision.synth.ltl_table import CASCADE_SHOWN, PlacedCard, TableState, layout
from vision.synth.video import (
    MIN_SQUASH,
    STATES_FILE,
    interpolate,
    is_carried,
    lift_homothety,
    read_states,
    read_video_frame_count,
)

SEED = 4  # order, explore 10, look: a stacking, an explore block and a flip
ARGS = {"fps": 10, "size": (320, 180), "max_actions": 3, "progress": False}


@pytest.fixture(scope="module")
def deck_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("deck")
    write_procedural_deck(root, width=126)
    return root


@pytest.fixture(scope="module")
def game(deck_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("video")
    meta = render_game_video(seed=SEED, deck_dir=deck_dir, out_dir=out, **ARGS)
    actions = json.loads((out / "actions.json").read_text())
    states = list(read_states(out))
    return out, meta, actions, states


def _replayed(actions, upto):
    state = registry.create("loot-the-loop", seed=SEED)
    for entry in actions[:upto]:
        state.apply(entry["action"])
    return state


def test_video_plays_back_with_the_frame_count_in_meta(game):
    out, meta, _, states = game
    capture = cv2.VideoCapture(str(out / "video.mp4"))
    assert capture.isOpened()
    assert (capture.get(cv2.CAP_PROP_FRAME_WIDTH), capture.get(cv2.CAP_PROP_FRAME_HEIGHT)) == (320, 180)
    capture.release()
    assert read_video_frame_count(out / "video.mp4") == meta["frames"] == len(states)
    on_disk = json.loads((out / "meta.json").read_text())
    assert on_disk["game"] == "loot-the-loop" and on_disk["frames"] == meta["frames"]
    assert {"camera", "final_score", "policy", "engine", "deck", "fps", "size"} <= set(on_disk)


def test_actions_are_the_engines_and_replay_to_the_final_score(game):
    _, meta, actions, _ = game
    played = play_game("loot-the-loop", SEED, max_actions=3)
    assert [a["action"] for a in actions] == [s.action for s in played.steps] == ["order 2 3 1", "explore 10", "look"]
    assert _replayed(actions, len(actions)).scores()[0] == meta["final_score"]


def test_only_frames_inside_action_spans_move(game):
    _, _, actions, states = game
    inside = {f for a in actions for f in range(a["start_frame"], a["end_frame"] + 1)}
    starts = [a["start_frame"] for a in actions]
    assert starts == sorted(starts) and len(inside) == sum(a["end_frame"] - a["start_frame"] + 1 for a in actions)
    for record in states:
        assert record["moving"] == (record["frame"] in inside)
        if not record["moving"]:
            assert not record["hand_visible"] and not any(card["carried"] for card in record["cards"])
    assert any(record["hand_visible"] for record in states)
    assert states[0]["moving"] is False and states[-1]["moving"] is False


def test_top_card_at_the_end_of_each_still_matches_the_engine(game):
    _, meta, actions, states = game
    ends = [a["start_frame"] - 1 for a in actions[1:]] + [meta["frames"] - 1]
    for k, end in enumerate(ends):
        engine = _replayed(actions, k + 1).to_dict()["state"]
        top = next(c for c in states[end]["cards"] if c["zone"] == "deck" and c["index"] == 0)
        assert (top["code"], top["face_up"]) == (engine["deck"][0], engine["up"][0])
        assert sum(c["zone"] == "deck" for c in states[end]["cards"]) == len(engine["deck"])
        assert states[end]["cards"][-1] == top  # the top card is painted last: nothing lies on it


def test_deck_without_a_joker_is_refused_clearly(deck_dir, tmp_path):
    jokerless = tmp_path / "jokerless"
    shutil.copytree(deck_dir, jokerless)
    (jokerless / "JOKER.png").unlink()
    with pytest.raises(DeckError, match="JOKER"):
        render_game_video(seed=SEED, deck_dir=jokerless, out_dir=tmp_path / "out", **ARGS)
    assert not (tmp_path / "out").exists()


def test_unknown_game_is_refused(deck_dir, tmp_path):
    with pytest.raises(ValueError, match="loot-the-loop"):
        render_game_video(game="the-loop", seed=1, deck_dir=deck_dir, out_dir=tmp_path, **ARGS)


def test_same_seed_gives_the_same_files_in_one_process_or_two(game, deck_dir, tmp_path):
    out = game[0]
    render_game_video(seed=SEED, deck_dir=deck_dir, out_dir=tmp_path, processes=1, **ARGS)
    for name in ("actions.json", STATES_FILE):
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes()


def test_explore_block_is_carried_and_the_rest_slides():
    deck = tuple(f"{r}S" for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10"))
    before = TableState(deck=deck, deck_up=(True,) * 10)
    after = TableState(deck=deck[3:] + deck[:3], deck_up=(True,) * 10)
    a, b = layout(before, 0), layout(after, 0)
    new = {c.code: c for c in b}
    carried = {c.code for c in a if is_carried(c, new[c.code])}
    assert carried == {"AS", "2S", "3S"}
    middle = interpolate(a, b, 0.5)
    assert {c.card.code for c in middle[-3:]} == carried  # lifted above the rest
    assert [c.card for c in interpolate(a, b, 1.0)] == b


def test_cascade_shows_the_top_cards_and_stacks_the_rest():
    deck = tuple(f"{r}H" for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10"))
    placed = {c.index: c for c in layout(TableState(deck=deck, deck_up=(False,) * 10), 0)}
    steps = [placed[i + 1].y_mm - placed[i].y_mm for i in range(9)]
    assert all(s > 18 for s in steps[: CASCADE_SHOWN - 1]) and all(s < 3 for s in steps[CASCADE_SHOWN:])


def test_notes_keep_their_table_slots():
    core = {"deck": ["AS"], "up": [True], "notes": ["2H", "5D"], "score": [], "piles": [], "piles_up": []}
    assert table_state(core, ("7C", "2H", "5D")).notes == (None, "2H", "5D")
    assert table_state({**core, "notes": ["2H", "5D", "9S"]}, (None, "2H", "5D")).notes == ("9S", "2H", "5D")


def test_explore_that_nabs_shows_the_landing_before_the_nab():
    before = TableState(deck=("5S", "KH", "3C", "4D", "7H", "JOKER"), deck_up=(True, False, False, False, True, False))
    after = TableState(
        deck=("JOKER", "5S", "KH", "3C", "4D"), deck_up=(False, True, False, False, False), score=("7H",)
    )
    landed, nabbed = _stages(before, after, "explore 4")
    assert landed.top_card() == ("7H", True) and landed.score == () and nabbed == after


# ----------------------------------------------------------------------------------------------- ground truth file


def test_states_are_gzipped_and_read_back_from_the_folder_or_the_file(game, tmp_path):
    out, meta, _, states = game
    assert not (out / "states.jsonl").exists()
    with gzip.open(out / STATES_FILE, "rt") as lines:
        assert sum(1 for _ in lines) == meta["frames"]
    assert [r["frame"] for r in states] == list(range(meta["frames"]))
    assert list(read_states(out / STATES_FILE)) == states
    plain = tmp_path / "states.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in states[:3]))
    assert list(read_states(plain)) == states[:3]


def test_reading_a_bad_states_file_names_the_file_and_line(tmp_path):
    with pytest.raises(FileNotFoundError, match=STATES_FILE):
        list(read_states(tmp_path))
    bad = tmp_path / "states.jsonl"
    bad.write_text('{"frame": 0}\nnot json\n')
    with pytest.raises(ValueError, match=r"states.jsonl: line 2 is not JSON"):
        list(read_states(bad))
    bad.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="line 1 is not a frame record"):
        list(read_states(bad))


# ----------------------------------------------------------------------------------------------- encoding


def test_video_is_h264_when_imageio_ffmpeg_is_installed(game):
    pytest.importorskip("imageio_ffmpeg")
    out, meta, _, _ = game
    assert meta["codec"] == "h264"
    capture = cv2.VideoCapture(str(out / "video.mp4"))
    fourcc = int(capture.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").decode(errors="replace")
    capture.release()
    assert fourcc.lower() in ("avc1", "h264")


def test_without_imageio_ffmpeg_it_falls_back_to_mp4v_with_a_notice(deck_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(video, "find_ffmpeg", lambda: None)
    meta = render_game_video(seed=SEED, deck_dir=deck_dir, out_dir=tmp_path, processes=1, **{**ARGS, "max_actions": 1})
    assert meta["codec"] == "mp4v"
    notice = [line for line in capsys.readouterr().err.splitlines() if "imageio-ffmpeg" in line]
    assert len(notice) == 1 and "mp4v" in notice[0]
    assert read_video_frame_count(tmp_path / "video.mp4") == meta["frames"]


def test_h264_refuses_an_odd_frame_size_clearly(deck_dir, tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    with pytest.raises(ValueError, match="even width and height, got size 321x180"):
        render_game_video(seed=SEED, deck_dir=deck_dir, out_dir=tmp_path, **{**ARGS, "size": (321, 180)})


# ----------------------------------------------------------------------------------------------- the flip


def _quad_width(quad):
    (tl, tr, br, bl) = np.array(quad)
    return float(np.linalg.norm(tr - tl) + np.linalg.norm(br - bl)) / 2


def test_look_flips_the_top_card_through_edge_on_and_switches_its_label_once(game):
    _, _, actions, states = game
    look = actions[2]
    assert look["action"] == "look"
    span = states[look["start_frame"] - 1 : look["end_frame"] + 2]  # with a still frame either side
    code = next(c["code"] for c in span[0]["cards"] if c["zone"] == "deck" and c["index"] == 0)
    track = [next(c for c in record["cards"] if c["code"] == code) for record in span]
    faces = [c["face_up"] for c in track]
    assert faces[0] != faces[-1] and sum(a != b for a, b in itertools.pairwise(faces)) == 1
    flipping = [record["frame"] for record, c in zip(span, track, strict=True) if c["flipping"]]
    assert flipping and all(states[f]["moving"] for f in flipping)
    assert not track[0]["flipping"] and not track[-1]["flipping"]
    rest = _quad_width(track[0]["quad"])
    widths = [_quad_width(c["quad"]) for c in track if c["flipping"]]
    assert min(widths) < 0.35 * rest  # seen nearly edge-on
    switch = next(i for i in range(1, len(faces)) if faces[i] != faces[i - 1])
    assert track[switch]["flipping"] and _quad_width(track[switch]["quad"]) < 0.75 * rest


def test_no_card_flips_outside_an_action_or_without_changing_face(game):
    _, _, _, states = game
    for record in states:
        for card in record["cards"]:
            assert not card["flipping"] or (record["moving"] and card["carried"])


@settings(max_examples=60, deadline=None)
@given(s=st.floats(0.0, 1.0), face_a=st.booleans())
def test_interpolated_flip_squashes_and_switches_at_the_midpoint(s, face_a):
    a = PlacedCard("7H", face_a, "deck", 0, -110.0, -75.0, 2.0)
    b = PlacedCard("7H", not face_a, "deck", 0, -110.0, -75.0, 2.0)
    (frame,) = interpolate([a], [b], s, seed=1)
    e = s * s * (3 - 2 * s)
    if s >= 1.0 or e <= 0.0:
        assert frame.squash == 1.0 and not frame.flipping and frame.lift_mm == 0.0
        assert frame.card.face_up == (b.face_up if s >= 1.0 else a.face_up)
        return
    assert frame.flipping and frame.carried
    assert frame.card.face_up == (a.face_up if e < 0.5 else b.face_up)
    assert MIN_SQUASH <= frame.squash <= 1.0
    assert math.isclose(frame.squash, max(abs(math.cos(math.pi * e)), MIN_SQUASH))
    assert frame.lift_mm > 0.0


@settings(max_examples=40, deadline=None)
@given(
    tilt=st.floats(0, 30),
    yaw=st.floats(-20, 20),
    x=st.floats(-200, 200),
    y=st.floats(-150, 150),
    lift=st.floats(0, 60),
)
def test_lifted_points_land_where_the_camera_sees_them(tilt, yaw, x, y, lift):
    camera = Camera(height_mm=500.0, tilt_deg=tilt, yaw_deg=yaw, hfov_deg=65.0, width=640, height=360)
    seen = apply_homography(camera.table_to_image() @ lift_homothety(camera, lift), np.array([[x, y]]))[0]
    rot = camera.rotation()
    in_camera = rot @ (np.array([x, y, lift]) - camera.position())
    projected = (camera.intrinsics() @ in_camera)[:2] / in_camera[2]
    assert np.allclose(seen, projected, atol=1e-6)
