"""Piece sets: the format's validation, the deck adapter, and scenes rendered from pieces that are not poker cards."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.synth.components import load_components
from vision.synth.export import CLASSES, classes_for, detect_lines, write_procedural_deck
from vision.synth.pieces import (
    PieceInfo,
    PieceSetError,
    as_piece_set,
    from_deck,
    load_piece_set,
    write_piece_set,
)
from vision.synth.scene import CardSpec, fixed_spec, render_scene


def _picture(w: int, h: int, colour: tuple[int, int, int], text: str = "") -> np.ndarray:
    image = np.full((h, w, 3), colour, np.uint8)
    cv2.rectangle(image, (0, 0), (w // 4, h // 4), (20, 20, 20), -1)  # a dark 'index' in the top-left quarter
    if text:
        cv2.putText(image, text, (w // 3, h // 2), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 2)
    return image


def _tile_set(root: Path, name: str = "tiles") -> object:
    pieces = [
        PieceInfo("T1", "tile", (60.0, 40.0), "TBACK", ((0.0, 0.0, 0.25, 0.25),)),
        PieceInfo("T2", "tile", (60.0, 40.0), "TBACK", ((0.0, 0.0, 0.25, 0.25),)),
        PieceInfo("TOKEN", "token", (25.0, 25.0), None, (), "COIN"),
        PieceInfo("TBACK", "tile", (60.0, 40.0), None, ()),
    ]
    pictures = {
        "T1": _picture(240, 160, (200, 220, 240), "1"),
        "T2": _picture(240, 160, (240, 200, 200), "2"),
        "TOKEN": _picture(100, 100, (60, 160, 60)),
        "TBACK": np.full((160, 240, 3), (90, 40, 40), np.uint8),
    }
    return write_piece_set(root / name, "the-loop", name, name, pieces, pictures)


def test_write_and_load_round_trip(tmp_path: Path) -> None:
    tiles = _tile_set(tmp_path)
    loaded = load_piece_set(tmp_path / "tiles")
    assert loaded == tiles
    assert loaded.codes == ("T1", "T2", "TOKEN")  # a picture used only as a back is not a piece on its own
    assert loaded.side("T1", face_up=False) == "TBACK" and loaded.side("TOKEN", face_up=False) == "TOKEN"
    assert loaded.image("T1").shape == (160, 240, 4)
    assert loaded.label("TOKEN") == "COIN" and loaded.label("T1") == "T1"  # labels survive the file


def _break(tmp_path: Path, change: object) -> str:
    _tile_set(tmp_path)
    meta = tmp_path / "tiles" / "pieces.json"
    data = json.loads(meta.read_text())
    change(data)  # type: ignore[operator]
    meta.write_text(json.dumps(data))
    with pytest.raises(PieceSetError) as err:
        load_piece_set(tmp_path / "tiles")
    return str(err.value)


def test_errors_name_the_field_and_what_was_expected(tmp_path: Path) -> None:
    message = _break(tmp_path, lambda d: d["pieces"]["T1"].update(kind="meeple", w_mm=-4))
    assert "pieces.T1.kind is 'meeple'" in message and "pieces.T1.w_mm is -4" in message
    assert "expected one of card, tile, token, board" in message


def test_a_back_must_exist_and_the_game_must_be_known(tmp_path: Path) -> None:
    message = _break(tmp_path, lambda d: (d["pieces"]["T2"].update(back="NOPE"), d.update(game="chess")))
    assert "pieces.T2.back: 'NOPE' is not a piece" in message and "'game' is 'chess'" in message


def test_picture_shape_must_match_the_printed_size(tmp_path: Path) -> None:
    message = _break(tmp_path, lambda d: d["pieces"]["T1"].update(w_mm=40, h_mm=60))
    assert "T1.png is 240x160, but pieces.T1 is 40x60 mm" in message


def test_missing_picture_and_missing_metadata(tmp_path: Path) -> None:
    _tile_set(tmp_path)
    (tmp_path / "tiles" / "TOKEN.png").unlink()
    with pytest.raises(PieceSetError, match=r"pieces.TOKEN: no picture TOKEN.png"):
        load_piece_set(tmp_path / "tiles")
    (tmp_path / "tiles" / "pieces.json").write_text("{not json")
    with pytest.raises(PieceSetError, match="not readable JSON"):
        load_piece_set(tmp_path / "tiles")
    with pytest.raises(PieceSetError, match=r"pieces\.json: missing"):
        load_piece_set(tmp_path)


def test_bad_index_region_is_refused(tmp_path: Path) -> None:
    message = _break(tmp_path, lambda d: d["pieces"]["T1"].update(index=[[0.5, 0.5, 0.2, 0.9]]))
    assert "pieces.T1.index" in message and "x0 < x1" in message


def test_deck_adapter_keeps_standard_labels(tmp_path: Path) -> None:
    deck = write_procedural_deck(tmp_path / "deck")
    pieces = from_deck(deck)
    assert set(pieces.codes) == set(deck.codes)
    assert pieces.label("JOKER") == "JOKER" and pieces.side("QH", face_up=False) == "BACK"
    assert as_piece_set(deck) is as_piece_set(deck)
    assert classes_for([deck]) == CLASSES


def test_scene_of_tiles_uses_their_size_backs_and_index_regions(tmp_path: Path) -> None:
    tiles = _tile_set(tmp_path)
    cards = [
        CardSpec("T1", True, -60.0, 0.0, 0.0, False),
        CardSpec("T2", False, 40.0, 0.0, 90.0, False),
        CardSpec("TOKEN", False, 0.0, 80.0, 0.0, False),
    ]
    scene = render_scene(fixed_spec(cards), [tiles])
    t1, t2, token = scene.cards()
    width = np.linalg.norm(np.subtract(t1.quad[1], t1.quad[0]))
    height = np.linalg.norm(np.subtract(t1.quad[3], t1.quad[0]))
    assert width / height == pytest.approx(60 / 40, rel=0.02)  # printed size, not a poker card's
    assert (t1.code, t1.face_up, len(t1.corners)) == ("T1", True, 1) and t1.corners[0].visible
    assert (t2.code, t2.face_up, t2.subtype, t2.corners) == ("TBACK", False, "T2", [])
    assert (token.code, token.face_up) == ("COIN", True)  # no distinct back: it shows its face either way
    x1, y1, x2, y2 = (round(v) for v in t1.corners[0].box)
    assert scene.image[y1 + 2 : y2 - 2, x1 + 2 : x2 - 2].mean() < 60  # the dark index is where its label says
    ids = {code: i for i, code in enumerate(classes_for([tiles]))}
    assert list(ids)[:4] == ["T1", "T2", "COIN", "TBACK"]  # the set's pieces first, then the game's solids
    assert len(detect_lines(scene, ids)) == 1


def test_one_data_set_needs_one_games_pieces(tmp_path: Path) -> None:
    tiles = _tile_set(tmp_path)
    other = write_piece_set(
        tmp_path / "other",
        "loop",
        "other",
        "other",
        [PieceInfo("X", "card", (63.0, 88.0), None)],
        {"X": _picture(126, 176, (255, 255, 255))},
    )
    with pytest.raises(ValueError, match="one game's components"):
        classes_for([tiles, other])


def test_load_components_reads_piece_sets_and_decks(tmp_path: Path) -> None:
    _tile_set(tmp_path / "sets", "a")
    _tile_set(tmp_path / "sets", "b")
    assert [c.name for c in load_components(tmp_path / "sets")] == ["a", "b"]
    write_procedural_deck(tmp_path / "decks" / "d1")
    assert [c.name for c in load_components(tmp_path / "decks")] == ["d1"]
