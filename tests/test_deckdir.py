"""Deck directories: the format players use for their own decks; every problem is named with its file."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.synth.deckdir import ASPECT_TOLERANCE, FACE_CODES, REQUIRED, DeckError, load_deck, load_decks
from vision.synth.pieces import as_piece_set


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
    assert "KS.png is 100x300 (height/width 3.00), but the deck's cards are 100x140" in message


def write_card(path: Path, size: tuple[int, int], colour: tuple[int, int, int] = (255, 255, 255)) -> None:
    cv2.imwrite(str(path), np.full((size[1], size[0], 3), colour, np.uint8))


def test_pictures_of_other_sizes_come_back_at_the_decks_size(tmp_path: Path) -> None:
    """Scans and photographs are never one size (the back and the joker least of all): each is scaled to the
    median picture's size, growing or shrinking, and a stretch within the tolerance is taken."""
    root = write_deck(tmp_path / "d", codes=(*REQUIRED, "JOKER"))
    write_card(root / "BACK.png", (300, 420), (200, 40, 40))  # shrinks
    write_card(root / "JOKER.png", (70, 98), (40, 200, 40))  # grows
    write_card(root / "QH.png", (103, 140), (40, 40, 200))  # 3% narrower: scaled, not refused
    deck = load_deck(root)
    assert deck.size == (100, 140)
    pictures = as_piece_set(deck)  # what the scene renderer (and so enrolment and `tabletop synth`) draws from
    for code in ("BACK", "JOKER", "QH", "AS"):
        assert deck.image(code).shape == (140, 100, 4) and deck.image(code).dtype == np.uint8
        assert pictures.image(code).shape == (140, 100, 4)
    assert np.abs(deck.image("BACK")[..., :3].astype(int) - (200, 40, 40)).max() <= 1
    assert np.abs(deck.image("JOKER")[..., :3].astype(int) - (40, 200, 40)).max() <= 1


def test_scaling_keeps_transparent_corners_from_darkening_the_edge(tmp_path: Path) -> None:
    root = write_deck(tmp_path / "d")
    back = np.zeros((280, 200, 4), np.uint8)  # black where transparent, as rendered decks store it
    back[10:-10, 10:-10] = (255, 255, 255, 255)
    cv2.imwrite(str(root / "BACK.png"), back)
    image = load_deck(root).image("BACK")
    assert image.shape == (140, 100, 4)
    seen = image[..., 3] > 0
    assert seen.any() and (~seen).any() and image[..., :3][seen].min() >= 250


def test_a_picture_of_another_shape_is_refused_naming_it(tmp_path: Path) -> None:
    root = write_deck(tmp_path / "d")
    near = round(140 * (1 + 0.8 * ASPECT_TOLERANCE))
    write_card(root / "2C.png", (100, near))  # within the tolerance: taken
    assert load_deck(root).image("2C").shape == (140, 100, 4)
    write_card(root / "2C.png", (200, 312))  # a bridge card (1.56) among poker-shaped ones: refused
    write_card(root / "BACK.png", (280, 200))  # landscape
    with pytest.raises(DeckError) as err:
        load_deck(root)
    message = str(err.value)
    assert "2C.png is 200x312 (height/width 1.56), BACK.png is 280x200 (height/width 0.71)" in message
    assert "the deck's cards are 100x140 (height/width 1.40)" in message and "within 6%" in message


def test_a_picture_too_small_to_read_is_refused_naming_it(tmp_path: Path) -> None:
    root = write_deck(tmp_path / "d")
    write_card(root / "JOKER.png", (40, 56))
    with pytest.raises(DeckError, match=r"JOKER\.png is 40x56: expected at least 60 pixels wide"):
        load_deck(root)


def test_a_stray_picture_is_refused_with_the_card_it_probably_is(tmp_path: Path) -> None:
    root = write_deck(tmp_path / "d")
    (root / "QH.png").rename(root / "queen.png")
    write_card(root / "IMG_1234.JPG", (100, 140))
    with pytest.raises(DeckError) as err:
        load_deck(root)
    message = str(err.value)
    assert "missing QH" in message
    assert "IMG_1234.JPG, queen.png are not named by a card code" in message
    assert "AS..KS" in message and "JOKER, JOKER2, BACK" in message
    (root / "IMG_1234.JPG").unlink()
    with pytest.raises(DeckError, match=r"queen\.png is not named by a card code"):
        load_deck(root)


def test_files_that_are_not_pictures_are_ignored(tmp_path: Path) -> None:
    root = write_deck(tmp_path / "d")
    (root / "deck.json").write_text(json.dumps({"name": "mine"}))
    (root / "notes.txt").write_text("scanned at 300 dpi")
    (root / "Thumbs.db").write_bytes(b"\x00" * 64)
    (root / ".DS_Store").write_bytes(b"\x00" * 64)
    (root / "._AS.png").write_bytes(b"\x00" * 64)  # macOS's resource-fork copy: hidden, not a picture
    (root / "originals").mkdir()
    write_card(root / "originals" / "IMG_0001.jpg", (300, 420))
    deck = load_deck(root)
    assert deck.name == "mine" and len(deck.codes) == 52


def test_a_card_twice_or_in_a_format_not_read_is_named(tmp_path: Path) -> None:
    root = write_deck(tmp_path / "d")
    write_card(root / "qh.jpg", (100, 140))
    (root / "AS.png").rename(root / "AS.webp")
    with pytest.raises(DeckError) as err:
        load_deck(root)
    message = str(err.value)
    assert "missing AS" in message and "AS.webp: not PNG or JPEG (save it as AS.png)" in message
    assert "QH.png and qh.jpg are both QH (keep one)" in message


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


def test_the_vision_bench_names_a_deck_folder_without_its_test_families(tmp_path: Path, capsys) -> None:
    """The bench's test split deals whole families over all of Debian's decks: a folder of a few decks leaves it
    empty, which once ended in numpy's "high <= 0"."""
    from companion_ui.cli import main

    write_deck(tmp_path / "few" / "a")
    write_deck(tmp_path / "few" / "b")
    assert main(["bench", "vision", "--decks", str(tmp_path / "few"), "--scenes", "2", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no deck of the test families" in err and "tabletop synth decks --out" in err and "Traceback" not in err
