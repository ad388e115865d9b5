"""Bad files are refused by name, never a crash (issue 19): hypothesis writes arbitrary bytes and arbitrary JSON where
the product reads a file: a Loot Roll catalogue, a saved game of each of the five games, a deck directory's deck.json
and card pictures, and a video. Each reader must answer with its own error type (which the command line prints as
one line) or with a valid result."""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion_ui.cli import main
from games import GameError, registry
from games.loot_roll.catalogue import CatalogueError, load_catalogue, parse_catalogue, starter_path
from tests.test_companion import PLAYERS
from tracker.pipeline import video_frames
from vision.synth.deckdir import REQUIRED, DeckError, load_deck

FILES = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
UNIQUE = itertools.count()  # a fresh file name per example (the catalogue reader caches by path)

LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True), st.text(max_size=8))
JSONISH = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
SPOILT_BYTES = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=60).map(str.encode),
    st.binary(min_size=1, max_size=8).map(lambda b: b"\xff\xfe" + b),  # not UTF-8 at all
)


def mutated(data: Any, rng: np.random.Generator, value: Any) -> Any:
    """`data` with one value somewhere inside it replaced by `value` (or a key dropped, when `value` is None)."""
    out = copy.deepcopy(data)
    node = out
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        if not keys:
            return value
        key = keys[int(rng.integers(len(keys)))]
        child = node[key]
        if isinstance(child, dict | list) and child and rng.random() < 0.7:
            node = child
            continue
        if value is None and isinstance(node, dict):
            del node[key]
        else:
            node[key] = value
        return out


@FILES
@given(raw=SPOILT_BYTES)
def test_any_bytes_as_a_catalogue_are_refused_by_name(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / f"catalogue-{next(UNIQUE)}.json"
    path.write_bytes(raw)
    with pytest.raises(CatalogueError, match=path.name):
        load_catalogue(str(path))


@FILES
@given(value=JSONISH, seed=st.integers(0, 2**16))
def test_a_catalogue_with_any_value_changed_is_a_catalogue_or_refused(value: Any, seed: int) -> None:
    starter = json.loads(Path(starter_path()).read_text())
    data = mutated(starter, np.random.default_rng(seed), value)
    try:
        parse_catalogue(data, "fuzz.json")
    except CatalogueError as err:
        assert str(err).startswith("fuzz.json: ")


@pytest.mark.parametrize("game", list(PLAYERS))
@settings(max_examples=60, deadline=None)
@given(value=JSONISH, seed=st.integers(0, 2**16))
def test_a_saved_game_with_any_value_changed_is_a_game_or_refused(game: str, value: Any, seed: int) -> None:
    saved = registry.create(game, PLAYERS[game], 0).to_dict()
    with contextlib.suppress(GameError):  # refused; anything else raised is a crash
        registry.load(mutated(saved, np.random.default_rng(seed), value))


@pytest.fixture(scope="module")
def deck_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small valid deck directory: one plain picture per card."""
    root = tmp_path_factory.mktemp("deck")
    for k, code in enumerate(REQUIRED):
        card = np.full((84, 60, 3), 255, np.uint8)
        cv2.putText(card, code[:2], (2, 20), cv2.FONT_HERSHEY_PLAIN, 1.0, (k % 200, 0, 0), 1)
        cv2.imwrite(str(root / f"{code}.png"), card)
    assert load_deck(root).size == (60, 84)
    return root


@FILES
@given(raw=SPOILT_BYTES)
def test_any_bytes_as_deck_json_are_a_deck_or_refused_by_name(deck_dir: Path, raw: bytes) -> None:
    meta = deck_dir / "deck.json"
    meta.write_bytes(raw)
    try:
        load_deck(deck_dir)
    except DeckError as err:
        assert "deck.json" in str(err)
    finally:
        meta.unlink()


@FILES
@given(raw=SPOILT_BYTES, card=st.sampled_from(sorted(REQUIRED)))
def test_any_bytes_as_a_card_picture_are_refused_naming_that_card(deck_dir: Path, raw: bytes, card: str) -> None:
    picture = deck_dir / f"{card}.png"
    good = picture.read_bytes()
    picture.write_bytes(raw)
    try:
        with pytest.raises(DeckError, match=f"{card}.png"):
            load_deck(deck_dir)
    finally:
        picture.write_bytes(good)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=SPOILT_BYTES)
def test_any_bytes_as_a_video_are_refused_with_one_line(tmp_path: Path, raw: bytes, capsys) -> None:
    video = tmp_path / f"table-{next(UNIQUE)}.mp4"
    video.write_bytes(raw)
    with pytest.raises(ValueError, match="not a video"):
        list(video_frames(video))
    assert main(["replay", str(video), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and video.name in err and "Traceback" not in err
