"""Procedural card art for LOOP, Bag-O-Loot and Loot Roll: complete code sets, loadable piece sets, determinism,
real variety between designs, and corner-index regions that hold ink."""

from __future__ import annotations

import colorsys
import dataclasses
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.bag_o_loot.engine import LOOTER, NUMBERS
from games.loop.engine import ALL_CARDS
from games.loot_roll.catalogue import load_catalogue
from vision.synth.art import bag_o_loot, loop_cards, loot_roll
from vision.synth.art.common import legible_on, luma, region_fraction, rotate_about
from vision.synth.pieces import PieceSet, load_piece_set

PPM = 2.0  # pixels per mm: small pictures keep the whole file fast
MODULES = {"loop": loop_cards, "bag-o-loot": bag_o_loot, "loot-roll": loot_roll}


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], PieceSet]:
    """Two designs of LOOP and Bag-O-Loot and one of Loot Roll (the big set), rendered once for the whole file."""
    root = tmp_path_factory.mktemp("art")
    wanted = [("loop", 1), ("loop", 2), ("bag-o-loot", 1), ("bag-o-loot", 2), ("loot-roll", 1)]
    return {(game, d): MODULES[game].render_set(root / f"{game}-{d}", d, PPM) for game, d in wanted}


def gray(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image[:, :, :3], cv2.COLOR_BGR2GRAY).astype(np.float32)


def crop(image: np.ndarray, region: tuple[float, float, float, float]) -> np.ndarray:
    h, w = image.shape[:2]
    x0, y0, x1, y1 = region
    return image[int(y0 * h) : int(np.ceil(y1 * h)), int(x0 * w) : int(np.ceil(x1 * w))]


# ---------------------------------------------------------------------------------------------- code sets


def test_loop_set_has_every_engine_card_and_the_ranks(sets):
    pieces = sets["loop", 1]
    assert set(pieces.codes) == set(ALL_CARDS) | {f"RANK{r}" for r in range(1, 5)}
    assert len(pieces.codes) == 45 + 4
    assert all(pieces.pieces[c].back == "BACK" for c in ALL_CARDS)
    assert pieces.pieces["RANK2"].back == "RANK2_LOOP"  # the Loop Round side is the other face
    assert pieces.name == pieces.family == "loop-design-1" and pieces.game == "loop"


def test_bag_o_loot_set_has_coins_and_looter(sets):
    pieces = sets["bag-o-loot", 2]
    assert set(pieces.codes) == {str(n) for n in NUMBERS} | {LOOTER}
    assert {pieces.pieces[c].back for c in pieces.codes} == {"BACK"}
    assert pieces.family == "bag-o-loot-design-2"


def test_loot_roll_set_has_every_catalogue_card_with_its_decks_back(sets):
    pieces = sets["loot-roll", 1]
    catalogue = load_catalogue()
    ids = set(catalogue.abilities) | set(catalogue.loot) | set(catalogue.monsters)
    assert set(pieces.codes) == ids | {"FIGHT", "FLIGHT"}
    assert all(pieces.pieces[a].back == "BACK_ABILITY" for a in catalogue.abilities)
    assert all(pieces.pieces[m].back == "BACK_MONSTER" for m in catalogue.monsters)
    for item in catalogue.loot.values():
        assert pieces.pieces[item.id].back == f"BACK_LOOT_{item.rarity.upper()}"
    assert pieces.pieces["FIGHT"].back == pieces.pieces["FLIGHT"].back == "BACK_CHOICE"  # flipped together


def test_loot_roll_corner_regions_follow_the_card_type(sets):
    pieces = sets["loot-roll", 1]
    catalogue = load_catalogue()
    assert all(len(pieces.pieces[a].index) == 1 for a in catalogue.abilities)  # price, upper right
    assert all(len(pieces.pieces[m].index) == 2 for m in catalogue.monsters)  # swords left, chest right
    for item in catalogue.loot.values():
        regions = pieces.pieces[item.id].index
        assert len(regions) == (2 if item.slot else 1)
        assert regions[-1][0] > 0.5 and regions[-1][3] < 0.3  # value: upper right
        if item.slot:
            assert regions[0][2] < 0.5 and regions[0][3] < 0.3  # slot and survivability: upper left


def test_sets_load_back_identically(sets):
    for pieces in sets.values():
        again = load_piece_set(pieces.path)
        assert again.pieces == pieces.pieces
        assert again.codes == pieces.codes


# ------------------------------------------------------------------------------------ determinism, variety


def test_same_design_renders_the_same_pixels(tmp_path, sets):
    again = loop_cards.render_set(tmp_path / "again", 1, PPM)
    first = sets["loop", 1]
    for code in ("1r", "8g", "15b", "RANK3", "RANK3_LOOP", "BACK"):
        assert np.array_equal(again.image(code), first.image(code)), code


@pytest.mark.parametrize("game", MODULES)
def test_two_designs_differ_substantially(sets, game):
    code = {"loop": "7g", "bag-o-loot": "7", "loot-roll": "goblin"}[game]
    a = sets[game, 1].image(code)
    if game == "loot-roll":
        b, _ = loot_roll.draw_monster(loot_roll.pick_design(2), load_catalogue().monsters[code], PPM)
    else:
        b = sets[game, 2].image(code)
    size = (96, 134)
    small_a = cv2.resize(a[:, :, :3], size).astype(np.float32)
    small_b = cv2.resize(b[:, :, :3], size).astype(np.float32)
    diff = np.abs(small_a - small_b).mean()
    assert diff > 20, f"{game} designs 1 and 2 look alike (mean colour difference {diff:.1f})"
    structure = np.corrcoef(
        cv2.Sobel(gray(small_a), cv2.CV_32F, 1, 1).ravel(), cv2.Sobel(gray(small_b), cv2.CV_32F, 1, 1).ravel()
    )[0, 1]
    assert structure < 0.6, f"{game} designs 1 and 2 share their layout's edges (correlation {structure:.2f})"


def test_designs_vary_in_every_style_dimension():
    looks = [loop_cards.pick_design(d) for d in range(40)]
    for field in ("theme", "centre", "pattern", "border", "index_style", "number_font", "size_mm", "four_corners"):
        assert len({getattr(look, field) for look in looks}) > 1, field
    rolls = [loot_roll.pick_design(d) for d in range(40)]
    for field in ("frame", "badge", "title_place", "title_font", "body_font", "range_separator"):
        assert len({getattr(look, field) for look in rolls}) > 1, field
    bags = [bag_o_loot.pick_design(d) for d in range(40)]
    for field in ("theme", "motif", "index_style", "looter_emblem", "number_font"):
        assert len({getattr(look, field) for look in bags}) > 1, field


# ------------------------------------------------------------------------------------------ index regions


def test_every_index_region_holds_ink(sets):
    """A region is not blank: it spans dark and light pixels, so a detector box around it has something in it."""
    for pieces in sets.values():
        for code in pieces.codes:
            info = pieces.pieces[code]
            image = pieces.image(code)
            for region in info.index:
                x0, y0, x1, y1 = region
                assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
                assert (x1 - x0) * (y1 - y0) < 0.2, f"{pieces.name} {code}: region {region} is not a corner mark"
                patch = gray(crop(image, region))
                spread = np.percentile(patch, 95) - np.percentile(patch, 5)
                assert spread > 60, f"{pieces.name} {code}: region {region} has no ink (spread {spread:.0f})"


def test_number_cards_have_indices_in_opposite_corners(sets):
    for game, codes in (("loop", ALL_CARDS), ("bag-o-loot", [str(n) for n in NUMBERS])):
        for design in (1, 2):
            pieces = sets[game, design]
            for code in codes:
                regions = pieces.pieces[code].index
                assert len(regions) in (2, 4)
                top_left, bottom_right = regions[0], regions[1]
                assert top_left[2] < 0.5 and top_left[3] < 0.5
                assert bottom_right[0] > 0.5 and bottom_right[1] > 0.5


def test_index_twin_is_the_same_mark_turned_over(sets):
    """The bottom-right index is the top-left one rotated 180 degrees (same ink, upside down)."""
    for design in (1, 2):
        pieces = sets["loop", design]
        for code in ("3r", "12g", "15b"):
            image = pieces.image(code)
            top, bottom = pieces.pieces[code].index[:2]
            a = gray(crop(image, top))
            b = cv2.rotate(gray(crop(image, bottom)), cv2.ROTATE_180)
            b = cv2.resize(b, (a.shape[1], a.shape[0]))
            corr = np.corrcoef(a.ravel(), b.ravel())[0, 1]
            assert corr > 0.5, f"design {design} {code}: twin index correlation {corr:.2f}"


def test_index_of_15_differs_from_index_of_1(sets):
    for game, low, high in (("loop", "1r", "15r"), ("bag-o-loot", "1", "15")):
        for design in (1, 2):
            pieces = sets[game, design]
            one, fifteen = pieces.pieces[low].index[0], pieces.pieces[high].index[0]
            assert fifteen[2] - fifteen[0] >= one[2] - one[0]  # two digits need at least the room of one
            a = gray(crop(pieces.image(low), one))
            b = cv2.resize(gray(crop(pieces.image(high), fifteen)), (a.shape[1], a.shape[0]))
            assert np.abs(a - b).mean() > 8, f"{game} design {design}: the 1 and 15 indices look alike"


def test_eights_carry_a_mark_when_the_design_has_one():
    design = next(d for d in range(50) if loop_cards.pick_design(d).eight_mark is not None)
    marked = loop_cards.pick_design(design)
    with_mark, _ = loop_cards.draw_number_card(marked, 8, "r", PPM)
    without, _ = loop_cards.draw_number_card(dataclasses.replace(marked, eight_mark=None), 8, "r", PPM)
    assert np.abs(gray(with_mark) - gray(without)).max() > 60
    seven_marked, _ = loop_cards.draw_number_card(marked, 7, "r", PPM)
    seven_plain, _ = loop_cards.draw_number_card(dataclasses.replace(marked, eight_mark=None), 7, "r", PPM)
    assert np.array_equal(seven_marked, seven_plain)  # only the 8 stops play


# -------------------------------------------------------------------------------------------------- colours


def _hue(colour: tuple[int, int, int]) -> float:
    b, g, r = colour
    return colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)[0] * 360


@given(st.integers(0, 10_000))
@settings(max_examples=60, deadline=None)
def test_loop_colours_stay_far_apart_in_hue(design):
    inks = loop_cards.pick_design(design).inks
    hues = {c: _hue(inks[c]) for c in "rgb"}
    for a, b in (("r", "g"), ("g", "b"), ("r", "b")):
        gap = abs(hues[a] - hues[b]) % 360
        assert min(gap, 360 - gap) > 50, (design, hues)


@given(st.integers(0, 10_000))
@settings(max_examples=60, deadline=None)
def test_bag_o_loot_numbers_read_on_their_stock(design):
    look = bag_o_loot.pick_design(design)
    for colour in look.number_colours:
        face = bag_o_loot.card_face(look, colour)
        assert abs(luma(face.fg) - luma(face.bg)) > 60, (design, colour)


@given(
    st.tuples(*[st.integers(0, 255)] * 3),
    st.tuples(*[st.integers(0, 255)] * 3),
)
def test_legible_on_never_lowers_contrast(colour, background):
    shaded = legible_on(colour, background, 95.0)
    assert abs(luma(shaded) - luma(background)) >= min(abs(luma(colour) - luma(background)), 95.0) - 1e-6


@given(
    st.tuples(*[st.floats(-50, 400) for _ in range(4)]),
    st.floats(0, 10),
)
def test_region_fraction_stays_inside_the_picture(box, pad):
    x0, y0, x1, y1 = box
    region = region_fraction((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)), (200, 300), pad)
    assert all(0.0 <= v <= 1.0 for v in region)


@given(st.floats(-500, 500), st.floats(-500, 500))
def test_turning_an_index_twice_by_180_returns_it(x, y):
    once = rotate_about((x, y), (10.0, 20.0), 180.0)
    back = rotate_about(once, (10.0, 20.0), 180.0)
    assert back == pytest.approx((x, y), abs=1e-6)


# ---------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("module", MODULES.values())
def test_bad_arguments_are_refused_clearly(tmp_path, module):
    with pytest.raises(ValueError, match="px_per_mm"):
        module.render_set(tmp_path / "x", 1, 0.5)
    with pytest.raises(ValueError, match="design"):
        module.render_set(tmp_path / "y", -3, PPM)


def test_written_pictures_match_their_printed_size(sets):
    for pieces in sets.values():
        for name in pieces.pieces:
            image = pieces.image(name)
            w_mm, _ = pieces.pieces[name].size_mm
            assert image.shape[2] == 4
            assert abs(image.shape[1] / w_mm - PPM) < 0.05
            assert image[image.shape[0] // 2, image.shape[1] // 2, 3] == 255  # opaque stock in the middle
            assert image[0, 0, 3] < 255  # rounded die-cut corner


def test_loot_roll_accepts_a_players_catalogue(tmp_path):
    path = Path(loot_roll.__file__).parents[3] / "games" / "loot_roll" / "data" / "starter.json"
    data = json.loads(path.read_text())
    small = {
        "name": "tiny",
        "abilities": data["abilities"][:1],
        "loot": data["loot"][:1],
        "monsters": data["monsters"][:1],
    }
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(small))
    pieces = loot_roll.render_set(tmp_path / "set", 4, PPM, catalogue=str(mine))
    assert set(pieces.codes) == {
        data["abilities"][0]["id"],
        data["loot"][0]["id"],
        data["monsters"][0]["id"],
        "FIGHT",
        "FLIGHT",
    }
