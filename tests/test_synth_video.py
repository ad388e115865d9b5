"""Full-game synthetic videos: the files agree with the engine, the still/moving flags with the motion, and the
same seed gives the same bytes. One short game (3 actions, 320x180, 10 fps) is rendered once per module."""

import json
import shutil

import cv2
import pytest

from companion_ui.synth_game import _stages, play_game, render_game_video, table_state
from games import registry
from vision.synth.deckdir import DeckError
from vision.synth.export import write_procedural_deck
from vision.synth.ltl_table import CASCADE_SHOWN, TableState, layout
from vision.synth.video import interpolate, is_carried, read_video_frame_count

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
    states = [json.loads(line) for line in (out / "states.jsonl").read_text().splitlines()]
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
    for name in ("actions.json", "states.jsonl"):
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
