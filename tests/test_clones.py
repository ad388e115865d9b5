"""The clone tokens' Paradox Era, read from colour (`vision.board.clones`), and clone tokens found on their strongest
map (`cubes.find_pieces`)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.board.clones import FEATURES, MODEL_FILE, TOKEN_MM, EraFills, ParadoxReader
from vision.board.cubes import COLOURS, PIECES, STRIDE, find_pieces
from vision.board.rectify import px_per_mm
from vision.recognise.models import ModelError, models_dir

SIDE = 288
# seven Era colours (BGR) as a board might print them: unlike hues, one dark, one pale
ERA_BGR = {
    "daw": (40, 120, 230),
    "med": (60, 60, 170),
    "ren": (40, 170, 60),
    "ind": (150, 110, 40),
    "glo": (170, 60, 150),
    "rob": (200, 200, 60),
    "end": (60, 200, 220),
}


def board() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A reference cut of seven wedge sectors, each its Era's colour with a paler hatching, and their masks."""
    reference = np.full((SIDE, SIDE, 3), 90, np.uint8)
    yy, xx = np.mgrid[:SIDE, :SIDE]
    angle = (np.degrees(np.arctan2(yy - SIDE / 2, xx - SIDE / 2)) + 360) % 360
    radius = np.hypot(xx - SIDE / 2, yy - SIDE / 2)
    masks = {}
    for k, (era, bgr) in enumerate(ERA_BGR.items()):
        mask = (angle >= k * 360 / 7) & (angle < (k + 1) * 360 / 7) & (radius > 40) & (radius < 140)
        reference[mask] = bgr
        hatch = mask & ((xx + yy) % 9 == 0)
        reference[hatch] = (np.array(bgr) * 0.7 + 255 * 0.3).astype(np.uint8)
        masks[era] = mask
    return reference, masks


def token(cut: np.ndarray, x: float, y: float, bgr: tuple[int, int, int], dark: bool) -> None:
    """A clone token at (x, y): its back in the Era's colour (darkened in a portrait design), a rim and a face of
    the colour, a pale number plate."""
    r = TOKEN_MM / 2 * px_per_mm(cut.shape[1])
    back = tuple(int(v * 0.45) for v in bgr) if dark else bgr
    cv2.circle(cut, (round(x), round(y)), round(r), back, -1)
    cv2.circle(cut, (round(x), round(y)), round(r), bgr, 2)
    cv2.circle(cut, (round(x), round(y - 0.1 * r)), round(0.45 * r), bgr, -1)
    cv2.circle(cut, (round(x), round(y + 0.6 * r)), round(0.2 * r), (236, 240, 240), -1)


def shipped_reader() -> ParadoxReader:
    if not (models_dir() / MODEL_FILE).is_file():
        pytest.skip("no Paradox Era reader shipped")
    return ParadoxReader.load(models_dir() / MODEL_FILE)


def test_a_sectors_fill_is_its_most_common_colour_not_its_hatching() -> None:
    reference, masks = board()
    fills = EraFills.of(reference, masks)
    assert list(fills.printed) == list(ERA_BGR)
    for era, bgr in ERA_BGR.items():
        expected = cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2LAB)[0, 0].astype(float)
        assert np.abs(fills.printed[era] - expected).max() < 2, era
        hatched = (np.arange(SIDE * SIDE) % SIDE + np.arange(SIDE * SIDE) // SIDE) % 9 == 0
        assert (
            not hatched[fills.sector[era][fills.fill[era]]].any() and hatched[fills.sector[era]].any()
        )  # the hatching is not fill
    with pytest.raises(ValueError, match="'daw' has no pixels"):
        EraFills.of(reference, {"daw": np.zeros((SIDE, SIDE), bool)})


@pytest.mark.parametrize("cast", [(1.0, 1.0, 1.0), (0.75, 0.9, 1.15), (0.6, 0.6, 0.6)])
def test_each_token_is_read_as_the_era_of_its_colour_under_a_colour_cast(cast: tuple[float, float, float]) -> None:
    """Every Era's token, on a sector of another Era, in a plain and a portrait design; the whole frame under a
    warm, a cool or a dim light (board and tokens alike)."""
    reader = shipped_reader()
    reference, masks = board()
    fills = EraFills.of(reference, masks)
    eras = list(ERA_BGR)
    for dark in (False, True):
        cut = reference.copy()
        places = []
        for k, era in enumerate(eras):
            a = np.radians((k + 3.5) * 360 / 7)  # the middle of the sector three Eras on
            x, y = SIDE / 2 + 95 * np.cos(a), SIDE / 2 + 95 * np.sin(a)
            token(cut, x, y, ERA_BGR[era], dark)
            places.append((x, y))
        lit = np.clip(cut.astype(np.float32) * np.array(cast, np.float32), 0, 255).astype(np.uint8)
        read = reader.read(lit, fills, places)
        assert [era for era, _ in read] == eras, (dark, cast)
        assert all(0 < p <= 1 for _, p in read)
    assert reader.read(reference, fills, []) == []


def test_a_reader_without_its_settings_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / MODEL_FILE
    good = {"features": list(FEATURES), "weights": [1.0] * len(FEATURES), "clone_peak": 0.2}
    assert ParadoxReader.load(_write(path, good)).clone_peak == 0.2
    with pytest.raises(ModelError, match=f"{MODEL_FILE}: expected JSON with features, weights and clone_peak"):
        ParadoxReader.load(_write(path, {k: v for k, v in good.items() if k != "clone_peak"}))
    with pytest.raises(ModelError, match="are not this build's"):
        ParadoxReader.load(_write(path, {**good, "features": ["hue"], "weights": [1.0]}))
    with pytest.raises(ModelError, match=r"clone_peak 1\.5 is not a probability"):
        ParadoxReader.load(_write(path, {**good, "clone_peak": 1.5}))
    path.write_text("{not json")
    with pytest.raises(ModelError, match=MODEL_FILE):
        ParadoxReader.load(path)


def _write(path: Path, content: dict) -> Path:
    path.write_text(json.dumps(content))
    return path


def test_a_token_the_net_splits_among_eras_is_found_on_its_strongest_map() -> None:
    """A clone token whose heat is shared among three Era maps (none at the pieces' cut-off) is found once with a
    clone cut-off, labelled by its strongest map; a vortex tile beside it is found as before."""
    heat = np.zeros((len(COLOURS) + len(PIECES), 40, 40), np.float32)
    first = len(COLOURS)
    heat[first + 1, 10, 10], heat[first + 4, 10, 10], heat[first + 5, 10, 11] = 0.2, 0.22, 0.18
    heat[first + PIECES.index("VORTEX"), 30, 30] = 0.9
    assert [label for label, *_ in find_pieces(heat, 0.25)] == ["VORTEX"]
    found = find_pieces(heat, 0.25, clone_peak=0.15)
    assert [label for label, *_ in found] == ["VORTEX", PIECES[4]]
    assert found[1][1:3] == (10 * STRIDE + 1.5, 10 * STRIDE + 1.5)


def test_the_shipped_counter_reads_clone_eras_from_colour() -> None:
    from vision.board.cubes import CubeCounter
    from vision.board.layout import load_board

    shipped_reader()
    layout = load_board(models_dir() / "the-loop-board")
    counter = CubeCounter(layout.picture, layout.eras, models_dir())
    assert counter.paradox is not None and counter.fills is not None and counter.pieces is not None
    assert counter.fills.sector["daw"].max() < counter.pieces.size**2  # on the pieces' cut
