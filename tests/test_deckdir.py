"""Deck directories: the format players use for their own decks; every problem is named with its file."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.synth.deckdir import FACE_CODES, REQUIRED, DeckError, load_deck, load_decks


def write_deck(root: Path, size: tuple[int, int] = (100, 140), codes: tuple[str, ...] = REQUIRED) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i, code in enumerate(codes):
        card = np.full((size[1], size[0], 3), 255, np.uint8)
        cv2.putText(card, code, (5, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, i % 200), 2)
        cv2.imwrite(str(root / f"{code}.png"), card)
    return root


def test_a_complete_deck_loads_with_its_identity(tmp_path: Path) -> None:
    root = write_deck(tmp_path / "my-deck", codes=(*REQUIRED, "JOKER", "JOKER2"))
    (root / "deck.json").write_text(json.dumps({"name": "Grandma's deck", "family": "bicycle"}))
    deck = load_deck(root)
    assert (deck.name, deck.family, deck.size) == ("Grandma's deck", "bicycle", (100, 140))
    assert set(deck.codes) == {*FACE_CODES, "JOKER", "JOKER2"}
    image = deck.image("10H")
    assert image.shape == (140, 100, 4) and image.dtype == np.uint8
    assert not np.array_equal(deck.image("10H"), deck.image("AS"))


def test_lower_case_and_jpeg_files_count(tmp_path: Path) -> None:
    root = write_deck(tmp_path / "d")
    (root / "QH.png").rename(root / "qh.jpg")
    assert "QH" in load_deck(root).codes


def test_every_problem_is_named_at_once(tmp_path: Path) -> None:
    root = write_deck(tmp_path / "d")
    (root / "AS.png").unlink()
    (root / "7D.png").unlink()
    (root / "QH.png").write_text("not a picture")
    cv2.imwrite(str(root / "KS.png"), np.full((300, 100, 3), 255, np.uint8))
    with pytest.raises(DeckError) as err:
        load_deck(root)
    message = str(err.value)
    assert "missing AS, 7D" in message
    assert "QH.png: not an image" in message
    assert "KS.png is 100x300, but the deck's cards are 100x140" in message


@pytest.mark.parametrize(
    ("size", "message"),
    [((140, 100), "expected portrait cards"), ((40, 56), "only 40 pixels wide")],
)
def test_wrong_card_shapes_are_explained(tmp_path: Path, size: tuple[int, int], message: str) -> None:
    with pytest.raises(DeckError, match=message):
        load_deck(write_deck(tmp_path / "d", size=size))


def test_not_a_directory_and_bad_metadata(tmp_path: Path) -> None:
    with pytest.raises(DeckError, match="not a directory"):
        load_deck(tmp_path / "nowhere")
    root = write_deck(tmp_path / "d")
    (root / "deck.json").write_text("{oops")
    with pytest.raises(DeckError, match=r"deck\.json: not readable JSON"):
        load_deck(root)
    (root / "deck.json").write_text(json.dumps({"name": 3}))
    with pytest.raises(DeckError, match="must be strings"):
        load_deck(root)


def test_asking_for_a_card_the_deck_lacks(tmp_path: Path) -> None:
    deck = load_deck(write_deck(tmp_path / "d"))
    assert "JOKER" not in deck.codes, "a deck without a joker is valid; it simply has none"
    with pytest.raises(KeyError, match="no picture for 'JOKER'"):
        deck.image("JOKER")


def test_load_decks_takes_one_deck_or_a_folder_of_them(tmp_path: Path) -> None:
    write_deck(tmp_path / "many" / "b")
    write_deck(tmp_path / "many" / "a")
    (tmp_path / "many" / ".tmp-partial").mkdir()
    assert [d.name for d in load_decks(tmp_path / "many")] == ["a", "b"]
    assert [d.name for d in load_decks(tmp_path / "many" / "a")] == ["a"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(DeckError, match="holds no deck directories"):
        load_decks(tmp_path / "empty")
    (tmp_path / "many" / "broken").mkdir()
    with pytest.raises(DeckError, match="missing AS"):
        load_decks(tmp_path / "many")
