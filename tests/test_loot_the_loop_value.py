"""The planner's learnt value (issue 23): features from the player's view, the shipped model, fitting, training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from games.loot_the_loop.engine import LootTheLoop
from games.loot_the_loop.solver import ACE, WIN, Pos, position
from games.loot_the_loop.train_value import Played, fit, main, train
from games.loot_the_loop.value import FEATURES, MODEL_PATH, BadModel, ValueModel, features, shipped


def opening(seed: int) -> Pos:
    state = LootTheLoop(seed=seed)
    state.apply("order 1 2 3")
    return position(state.view(0))


def test_every_feature_is_named_and_read_from_the_view():
    pos = opening(3)
    assert len(features(pos)) == len(FEATURES) == len(set(FEATURES))
    # the same table with other cards face down reads the same: position() only keeps face-up cards and counts
    state = LootTheLoop(seed=3)
    state.apply("order 1 2 3")
    down = [i for i, up in enumerate(state.up) if not up]
    cards = [state.deck[i] for i in down]
    for i, card in zip(down, cards[::-1], strict=True):
        state.deck[i] = card
    assert features(position(state.view(0))) == features(pos)


def test_the_shipped_model_loads_and_values_on_the_scale_of_the_search():
    """A loss is worth its score and an escape WIN plus its score (solver.step): the value lies between."""
    model = shipped()
    assert model.trained.get("rounds"), "the model records its learning curve"
    pos = opening(5)
    score = pos.aces + pos.trinkets
    assert score <= model.value(pos) <= WIN + score + 60
    assert 0.0 < model.escape_chance(pos) < 1.0


def test_more_jewels_in_hand_is_a_better_chance_to_escape():
    """The same table with 0 to 4 of the unseen jewels already nabbed (a jewel in hand is one fewer to find)."""
    pos = opening(8)
    assert pos.aces == 0 and pos.unseen[ACE] == 4
    chances = [shipped().escape_chance(pos._replace(aces=n, unseen=(0, 4 - n, *pos.unseen[2:]))) for n in range(5)]
    assert chances == sorted(chances) and chances[4] > chances[0]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.update(features=d["features"][:-1]), "'features'"),
        (lambda d: d.update(win=d["win"][:-1]), "'win'"),
        (lambda d: d["gain"].__setitem__(0, "x"), "'gain'"),
        (lambda d: d["win"].__setitem__(2, True), "'win'"),
    ],
)
def test_a_bad_model_file_is_refused_naming_the_file_and_field(tmp_path: Path, change, field):
    data = json.loads(MODEL_PATH.read_text())
    change(data)
    path = tmp_path / "value.json"
    path.write_text(json.dumps(data))
    with pytest.raises(BadModel, match=field) as err:
        ValueModel.load(path)
    assert str(path) in str(err.value)


def test_a_missing_or_unreadable_model_file_is_refused(tmp_path: Path):
    with pytest.raises(BadModel, match="no such file"):
        ValueModel.load(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(BadModel, match="not readable as JSON"):
        ValueModel.load(tmp_path / "bad.json")


def test_fitting_learns_what_the_games_show():
    """Games that were won from positions holding three notes: the fit must rate three notes higher."""
    three = FEATURES.index("notes = 3")
    base = features(opening(1))
    games = []
    for i in range(40):
        row = list(base)
        row[three] = float(i % 2)
        games.append(Played(seed=i, rows=[row], points=[0], escaped=bool(i % 2), score=10 + 10 * (i % 2)))
    model, stats = fit(games)
    assert stats["positions"] == 40
    assert model.win[three] > 1.0 and model.gain[three] > 1.0


def test_training_is_resumable_and_writes_a_usable_model(tmp_path: Path, capsys):
    """One round on two deals: the blocks are kept, a second run plays nothing again and fits the same model."""
    work = tmp_path / "work"
    first = train(rounds=1, games=2, seed=20000, work=work, workers=1, progress=False)
    blocks = sorted(work.glob("round0-*.json"))
    assert [b.name for b in blocks] == ["round0-20000.json"]
    stamp = blocks[0].stat().st_mtime_ns
    again = train(rounds=1, games=2, seed=20000, work=work, workers=1, progress=False)
    assert blocks[0].stat().st_mtime_ns == stamp and again.win == first.win
    assert first.trained["rounds"][0]["seeds"] == [20000, 20001]
    out = tmp_path / "model.json"
    out.write_text(json.dumps(first.to_json()))
    assert ValueModel.load(out).win == first.win


def test_the_command_refuses_a_round_count_below_one(capsys):
    with pytest.raises(SystemExit):
        main(["--rounds", "0"])
    assert "--rounds must be at least 1" in capsys.readouterr().err


def test_a_face_up_trinket_in_the_deck_counts_by_kind_not_number():
    """The planner values a look once per kind of flip (planner.shallow_look): that is only right while the
    features read trinkets in the deck by kind. Renumbering them must not change a feature."""
    pos = opening(6)
    renumbered = tuple(2 + (t + 3) % 9 if 2 <= t <= 10 else t for t in pos.deck)
    assert renumbered != pos.deck
    assert features(pos._replace(deck=renumbered)) == features(pos)
