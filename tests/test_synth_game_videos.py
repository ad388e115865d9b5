"""LOOP and Bag-O-Loot filmed as whole games: the files agree with the engine, every card is a piece of the set,
resting cards do not move, the video has a frame per state, and the same seed gives the same files. One short
clip per game (6 actions, 320x180, 10 fps) is rendered once per module."""

import itertools
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion_ui.synth_game import (
    collection_slots,
    load_game_components,
    loop_play_stages,
    loop_table_of,
    play_game,
    render_game_video,
)
from games import registry
from vision.synth.bag_table import Bag, BagTable, Stash, code_of, keep_identities
from vision.synth.bag_table import layout as bag_layout
from vision.synth.components import generator
from vision.synth.loop_table import LoopTable, SeatCards, seat_angle
from vision.synth.loop_table import layout as loop_layout
from vision.synth.pieces import PieceSetError
from vision.synth.video import STATES_FILE, TableView, fitting_camera, interpolate, read_states, read_video_frame_count

SEED = 5
ARGS = {"fps": 10, "size": (320, 180), "max_actions": 6, "progress": False}
GAMES = ("loop", "bag-o-loot")


@pytest.fixture(scope="module")
def piece_sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("pieces")
    return {game: generator(game)(root / game, 1, 1.5) for game in GAMES}


@pytest.fixture(scope="module", params=GAMES)
def clip(request, piece_sets, tmp_path_factory):
    game = request.param
    out = tmp_path_factory.mktemp(game)
    meta = render_game_video(game=game, seed=SEED, deck_dir=piece_sets[game].path, out_dir=out, **ARGS)
    actions = json.loads((out / "actions.json").read_text())
    return game, out, meta, actions, list(read_states(out))


def _replayed(game, actions):
    state = registry.create(game, seed=SEED)
    for entry in actions:
        state.apply(entry["action"])
    return state


def test_clip_has_the_files_and_a_frame_per_state(clip):
    game, out, meta, actions, states = clip
    assert {p.name for p in out.iterdir()} >= {"video.mp4", "actions.json", STATES_FILE, "meta.json"}
    assert len(actions) == 6 and all(a["start_frame"] < a["end_frame"] for a in actions)
    assert read_video_frame_count(out / "video.mp4") == meta["frames"] == len(states)
    on_disk = json.loads((out / "meta.json").read_text())
    assert on_disk["game"] == game and on_disk["policy"] == "greedy" and on_disk["players"] >= 2
    fields = {"code", "face_up", "zone", "index", "carried", "pose", "quad", "visible", "flipping"}
    assert all(fields <= set(card) for record in states for card in record["cards"])


def test_actions_replay_on_the_engine_to_the_table_in_the_last_frame(clip):
    game, _, meta, actions, states = clip
    state = _replayed(game, actions)
    assert state.scores() == meta["scores"]
    core = state.to_dict()["state"]
    shown = Counter((c["code"], c["face_up"]) for c in states[-1]["cards"])
    if game == "loop":
        on_table = Counter(c for c in core["aside"].split()) + Counter(
            c for key in ("set_aside", "played") for seat in core[key] for c in seat.split()
        )
        assert Counter(code for code, _ in shown.elements() if not code.startswith("RANK")) == on_table
        assert sum(up for code, up in shown.elements() if not code.startswith("RANK")) == sum(
            len(seat.split()) for seat in core["played"]
        ) + sum(len(seat.split()) for seat in core["revealed"])
    else:
        cards = core["deck"].split() + core["junk"].split()
        for stash in core["stashes"]:
            cards += [c for entry in stash["collections"] + stash["bags"] for c in entry.split(":")[1].split()]
        assert Counter(code for code, _ in shown.elements()) == Counter(cards)
        assert sum(not up for _, up in shown.elements()) == len(core["deck"].split()) + sum(
            sum(stash["down"]) for stash in core["stashes"]
        )


def test_every_card_is_a_piece_of_the_set(clip, piece_sets):
    game, _, _, _, states = clip
    pieces = piece_sets[game]
    seen = {card["code"] for record in states for card in record["cards"]}
    assert seen <= set(pieces.codes)
    backs = {info.back for info in pieces.pieces.values() if info.back}
    assert not seen & (backs - set(pieces.codes))


def test_hands_are_off_the_table_and_played_cards_are_carried_in(clip):
    states = clip[4]
    first, last = states[0], states[-1]
    to_hand = [(r, c) for r in states for c in r["cards"] if c["zone"].endswith("hand")]
    assert all(r["moving"] and c["carried"] for r, c in to_hand)  # seen only on the way into a hand
    appeared = {c.get("id", c["code"]) for c in last["cards"]} - {c.get("id", c["code"]) for c in first["cards"]}
    assert appeared
    for key in appeared:  # the frame it first shows up in, it is in a hand's grip
        frame = next(r for r in states if any(c.get("id", c["code"]) == key for c in r["cards"]))
        assert frame["moving"] and next(c for c in frame["cards"] if c.get("id", c["code"]) == key)["carried"]


def test_a_card_lying_still_keeps_its_pose(clip):
    _, _, _, actions, states = clip
    bounds = [(-1, actions[0]["start_frame"])]
    bounds += [(a["end_frame"], b["start_frame"]) for a, b in itertools.pairwise(actions)]
    for a, b in bounds:
        still = states[a + 1 : b]
        assert still and not any(r["moving"] for r in still)
        poses = {tuple(c["pose"]) for r in still for c in r["cards"]}
        assert len(poses) == len(still[0]["cards"])  # no pose changes within a still stretch
    for action in actions:
        before, after = states[action["start_frame"] - 1], states[action["end_frame"] + 1]
        moved = {
            c.get("id", c["code"])
            for r in states[action["start_frame"] : action["end_frame"] + 1]
            for c in r["cards"]
            if c["carried"]
        }
        old = {c.get("id", c["code"]): c for c in before["cards"]}
        for card in after["cards"]:
            key = card.get("id", card["code"])
            if key in old and key not in moved and old[key]["zone"] == card["zone"]:
                assert card["pose"] == old[key]["pose"] or card["index"] != old[key]["index"]


def test_hands_reach_in_from_the_acting_players_side(clip):
    game, _, _, actions, states = clip
    boxes = [box for a in actions for r in states[a["start_frame"] : a["end_frame"] + 1] for box in r["hands"]]
    assert boxes  # a hand is seen in the clip
    played = play_game(game, SEED, max_actions=6)
    assert [s.action for s in played.steps] == [a["action"] for a in actions]
    assert len({round(s.reach_from_deg) for s in played.steps}) >= 2  # more than one seat acted


def test_same_seed_gives_the_same_files_in_one_process_or_two(clip, piece_sets, tmp_path):
    game = clip[0]
    args = {**ARGS, "max_actions": 3}
    render_game_video(game=game, seed=SEED, deck_dir=piece_sets[game].path, out_dir=tmp_path / "a", **args)
    render_game_video(game=game, seed=SEED, deck_dir=piece_sets[game].path, out_dir=tmp_path / "b", processes=1, **args)
    for name in ("actions.json", STATES_FILE, "video.mp4"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_the_wrong_components_are_refused_clearly(piece_sets, tmp_path):
    with pytest.raises(PieceSetError, match="expected a bag-o-loot piece set"):
        load_game_components("bag-o-loot", piece_sets["loop"].path)
    with pytest.raises(PieceSetError, match=r"no pieces\.json; loop is filmed with a piece set"):
        load_game_components("loop", tmp_path)
    with pytest.raises(ValueError, match="loot-the-loop, loop, bag-o-loot"):
        render_game_video(game="loot-roll", seed=1, deck_dir=tmp_path, out_dir=tmp_path / "x", **ARGS)


# ----------------------------------------------------------------------------------------------- tables


def test_seats_go_clockwise_from_the_camera_player():
    assert [seat_angle(s, 4) for s in range(4)] == [0.0, -90.0, 180.0, 90.0]
    assert [seat_angle(s, 2) for s in range(2)] == [0.0, 180.0]
    with pytest.raises(ValueError, match="seat 4 is not at a table of 4"):
        seat_angle(4, 4)


def test_loop_table_follows_the_engine():
    state = registry.create("loop", players=3, seed=2)
    table = loop_table_of(state.to_dict()["state"])
    assert [s.rank for s in table.seats] == ["RANK1", "RANK2", "RANK3"] and not table.seats[0].rank_loop_side
    assert all(len(s.hand) == 11 for s in table.seats) and len(table.aside) == 45 - 33
    placed = loop_layout(table, 0, (63.0, 88.0))
    assert len({c.code for c in placed}) == len(placed) == 45 + 3
    assert sum(c.held for c in placed) == 33 and all(not c.face_up for c in placed if c.zone == "aside")


def test_a_play_pushes_the_play_to_beat_aside_then_lands_in_the_centre():
    seats = (SeatCards("RANK1", False, hand=("9r", "9g")), SeatCards("RANK2", False, played=("3b",)))
    before = LoopTable(seats, trick=("7b",), trick_seat=1)
    after = LoopTable(
        (SeatCards("RANK1", False, played=()), SeatCards("RANK2", False, played=("3b", "7b"))),
        trick=("9r", "9g"),
        trick_seat=0,
    )
    pushed, laid = loop_play_stages(before, after, ("9r", "9g"), 0)
    assert pushed.trick == () and pushed.seats[1].played == ("3b", "7b")
    assert laid == after
    frames = interpolate(loop_layout(pushed, 0, (63, 88)), loop_layout(laid, 0, (63, 88)), 0.5)
    assert {f.card.code for f in frames if f.carried} == {"9r", "9g"}


def test_twisted_eights_lie_sideways_face_up():
    seat = SeatCards("RANK1", True, set_aside=("3r",), revealed=("8g",))
    table = LoopTable((seat, SeatCards("RANK2", True)))
    placed = {c.code: c for c in loop_layout(table, 0, (63, 88))}
    assert table.twisted and placed["8g"].face_up and not placed["3r"].face_up and not placed["RANK1"].face_up
    assert abs((placed["8g"].rotation_deg - placed["RANK1"].rotation_deg) - 90) < 12


def test_bag_table_shows_bags_face_down_on_top_and_collections_fanned():
    bag = Bag(("5#0", "5#1", "5#2", "5#3", "7#0"), down=True)
    table = BagTable(("1#0", "2#0"), ("3#0",), (Stash((("4#0", "L#0"),), (bag,)), Stash()), (("6#0",), ()))
    placed = {c.uid: c for c in bag_layout(table, 0, (63, 88))}
    assert not placed["7#0"].face_up and placed["7#0"].index == 0 and placed["5#0"].face_up
    assert placed["L#0"].code == "L" and placed["L#0"].zone == "seat 1 collection 1"
    assert placed["6#0"].held and not placed["1#0"].face_up and placed["3#0"].face_up


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["1", "2", "L"]), min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_identities_are_kept_where_cards_stay_and_never_duplicated(cards, rnd):
    first = keep_identities({"deck": cards}, {})
    shuffled = list(first["deck"])
    rnd.shuffle(shuffled)
    cut = rnd.randint(0, len(cards))
    zones = {"deck": [code_of(c) for c in shuffled[:cut]], "hand": [code_of(c) for c in shuffled[cut:]]}
    second = keep_identities(zones, first)
    ids = second["deck"] + second["hand"]
    assert sorted(ids) == sorted(first["deck"])  # the same physical cards, each once
    assert [code_of(c) for c in second["deck"]] == zones["deck"]
    staying = Counter(zones["deck"]) & Counter(cards)
    kept = Counter(code_of(c) for c in second["deck"] if c in first["deck"])
    assert kept == staying


def test_collections_keep_their_slots():
    assert collection_slots((), (7, 3)) == (7, 3)
    assert collection_slots((7, 3), (3,)) == (None, 3)
    assert collection_slots((None, 3), (3, 9, 4)) == (9, 3, 4)


def test_a_big_table_gets_a_camera_that_sees_it_all():
    import numpy as np

    view = TableView((-600.0, -400.0, 600.0, 400.0), (300.0, 320.0))  # too low to fit: the fallback must
    camera = fitting_camera(np.random.default_rng(0), (640, 360), view)
    from vision.synth.camera import apply_homography

    corners = np.array([[-600, -400], [600, -400], [600, 400], [-600, 400]], float)
    pts = apply_homography(camera.table_to_image(), corners)
    assert (pts >= 0).all() and (pts[:, 0] < 640).all() and (pts[:, 1] < 360).all()
