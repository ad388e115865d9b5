"""The LOOP's procedural component art: the codes the engine uses, deterministic designs that differ, exact
silhouettes, index regions with ink in them, and Era regions that match the board picture."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.the_loop.catalogue import CatalogueError, Mission, load_catalogue
from games.the_loop.engine import ALL_CLONES, FAUX
from games.the_loop.eras import CODES, COUNT
from vision.synth.art import the_loop
from vision.synth.pieces import load_piece_set

PPM = 1.5


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("the_loop_art")
    return {
        "a": the_loop.render_set(root / "a", 0, PPM),
        "b": the_loop.render_set(root / "b", 1, PPM),
    }


def expected_codes():
    catalogue = load_catalogue()
    return {*catalogue.artifacts, *catalogue.missions, *FAUX, *ALL_CLONES, "VORTEX", "BOARD"}


def test_loads_with_the_engine_codes_and_kinds(sets):
    piece_set = load_piece_set(sets["a"].path)
    assert piece_set.game == "the-loop"
    assert piece_set.name == piece_set.family == "the-loop-design-0"
    assert set(piece_set.codes) == expected_codes()
    backs = {"BACK_ARTIFACT", "BACK_FAUX", "BACK_MISSION"}
    assert set(piece_set.pieces) == expected_codes() | backs
    kinds = {code: info.kind for code, info in piece_set.pieces.items()}
    assert {kinds[c] for c in load_catalogue().artifacts} == {"card"}
    assert {kinds[c] for c in FAUX} == {"card"}
    assert {kinds[c] for c in load_catalogue().missions} == {"tile"}
    assert {kinds[c] for c in ALL_CLONES} == {"token"}
    assert (kinds["VORTEX"], kinds["BOARD"]) == ("tile", "board")
    assert piece_set.pieces["A07"].back == "BACK_ARTIFACT"
    assert piece_set.pieces["F-ren"].back == "BACK_FAUX"
    assert piece_set.pieces["M03"].back == "BACK_MISSION"
    assert piece_set.pieces["ren2"].back is None


def test_pictures_have_the_printed_sizes(sets):
    piece_set = sets["a"]
    for code in ("A01", "M01", "VORTEX", "daw1", "BOARD", "F-daw"):
        info = piece_set.pieces[code]
        h, w = piece_set.image(code).shape[:2]
        assert w == pytest.approx(info.size_mm[0] * PPM, abs=1)
        assert h == pytest.approx(info.size_mm[1] * PPM, abs=1)


def test_same_design_same_pixels(sets):
    the_loop.design_for.cache_clear()  # nothing carried over from the first rendering
    design = the_loop.design_for(0)
    catalogue = load_catalogue()
    again = {
        "A01": the_loop.artifact_card(design, catalogue.artifacts["A01"], PPM)[0],
        "F-glo": the_loop.faux_card(design, 4, PPM)[0],
        "M05": the_loop.mission_tile(design, catalogue.missions["M05"], PPM)[0],
        "rob3": the_loop.clone_token(design, "rob3", PPM)[0],
        "VORTEX": the_loop.vortex_tile(design, PPM),
        "BACK_ARTIFACT": the_loop.card_back(design, "BACK_ARTIFACT", PPM)[0],
        "BOARD": the_loop.board(design, PPM),
    }
    for code, image in again.items():
        assert np.array_equal(sets["a"].image(code), image), code


def test_designs_differ(sets):
    for code in ("A01", "A40", "F-med", "M02", "end3", "VORTEX", "BACK_ARTIFACT"):
        a, b = sets["a"].image(code), sets["b"].image(code)
        assert a.shape == b.shape
        diff = np.abs(a[:, :, :3].astype(int) - b[:, :, :3].astype(int)).mean()
        assert diff > 15, (code, diff)


def test_cards_of_one_design_differ_in_their_art(sets):
    a, b = sets["a"].image("A01"), sets["a"].image("A02")
    assert np.abs(a.astype(int) - b.astype(int)).mean() > 5


def test_round_pieces_have_transparent_corners(sets):
    for code in (*ALL_CLONES[:3], "end4", "VORTEX"):
        alpha = sets["a"].image(code)[:, :, 3]
        h, w = alpha.shape
        assert alpha[0, 0] == alpha[0, -1] == alpha[-1, 0] == alpha[-1, -1] == 0, code
        assert alpha[h // 2, w // 2] == 255
        assert alpha[h // 2, 2] > 0  # the disc reaches the edge midpoints: a circle, not a shrunken blob


def test_cards_have_rounded_corners(sets):
    alpha = sets["b"].image("A05")[:, :, 3]
    assert alpha[0, 0] == 0
    assert alpha[alpha.shape[0] // 2, 0] == 255


def test_index_regions_hold_ink(sets):
    for piece_set in (sets["a"], sets["b"]):
        for code, info in piece_set.pieces.items():
            if code in ("VORTEX", "BOARD"):
                assert info.index == ()
                continue
            assert info.index, code
            image = piece_set.image(code)
            h, w = image.shape[:2]
            for x0, y0, x1, y1 in info.index:
                crop = image[int(y0 * h) : int(np.ceil(y1 * h)), int(x0 * w) : int(np.ceil(x1 * w))]
                assert crop.size, (code, info.index)
                grey = cv2.cvtColor(crop[:, :, :3], cv2.COLOR_BGR2GRAY)
                assert grey.std() > 12, (code, grey.std())
                assert (x1 - x0) * (y1 - y0) < 0.3, (code, "an index is a corner, not the whole face")


def test_twin_indices_are_in_opposite_corners(sets):
    for piece_set in (sets["a"], sets["b"]):
        regions = piece_set.pieces["A10"].index
        if len(regions) == 2:
            (a, b) = regions
            assert (a[1] + a[3]) / 2 < 0.5 < (b[1] + b[3]) / 2


def test_clone_index_differs_by_number_and_era(sets):
    images = {code: sets["a"].image(code) for code in ("ren1", "ren2", "ind1")}
    regions = {code: sets["a"].pieces[code].index for code in images}
    assert all(len(r) == 2 for r in regions.values())  # the Era in the monocle and the number

    def change(a, b, which):
        x0, y0, x1, y1 = regions[a][which]
        h, w = images[a].shape[:2]
        crop = (slice(int(y0 * h), int(y1 * h)), slice(int(x0 * w), int(x1 * w)))
        return np.abs(images[a][crop].astype(int) - images[b][crop].astype(int)).mean()

    assert change("ren1", "ind1", 0) > 10  # another Era: another monocle
    assert change("ren1", "ren2", 1) > 5  # another number


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_era_regions_are_seven_disjoint_polygons_inside_the_board(design):
    regions = the_loop.era_regions(design)
    assert list(regions) == list(CODES)
    size = 800
    cover = np.zeros((size, size), np.int32)
    for polygon in regions.values():
        points = np.array(polygon)
        assert points.shape[0] >= 3
        assert (points >= 0).all() and (points <= 1).all()
        assert np.hypot(points[:, 0] - 0.5, points[:, 1] - 0.5).max() < 0.5  # inside a round-cut board too
        mask = np.zeros((size, size), np.uint8)
        cv2.fillPoly(mask, [np.round(points * size).astype(np.int32)], 1)
        assert mask.sum() > size * size * 0.01
        # disjoint as shapes: fillPoly paints both neighbours' boundary pixels where a design's gap between Eras is
        # under about two pixels at this size (design 7105: 0.65 degrees), so each is taken without its outline
        cover += cv2.erode(mask, np.ones((3, 3), np.uint8))
    assert cover.max() == 1


def test_era_regions_run_clockwise_in_engine_order():
    regions = the_loop.era_regions(3)
    angles = []
    for code in CODES:
        points = np.array(regions[code])
        centre = points.mean(axis=0) - 0.5
        angles.append(np.degrees(np.arctan2(centre[1], centre[0])))
    steps = [(angles[(i + 1) % COUNT] - angles[i]) % 360 for i in range(COUNT)]
    assert all(s == pytest.approx(360 / COUNT, abs=3) for s in steps)  # +angle in image coordinates is clockwise


def test_era_regions_match_the_board_picture(sets):
    piece_set = sets["b"]
    design = the_loop.design_for(1)
    board = piece_set.image("BOARD")
    size = board.shape[0]
    palette = np.array(design.palette.eras, np.float32)
    for era, (code, polygon) in enumerate(the_loop.era_regions(1).items()):
        assert code == CODES[era]
        mask = np.zeros(board.shape[:2], np.uint8)
        cv2.fillPoly(mask, [np.round(np.array(polygon) * size).astype(np.int32)], 1)
        assert (board[:, :, 3][mask > 0] == 255).all()
        median = np.median(board[:, :, :3][mask > 0].astype(np.float32), axis=0)
        nearest = int(np.argmin(np.linalg.norm(palette - median, axis=1)))
        assert nearest == era, (code, median)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 100_000))
def test_era_colours_stay_distinct_in_every_design(design):
    colours = np.array(the_loop.design_for(design).palette.eras, np.uint8)[None]
    lab = cv2.cvtColor(colours, cv2.COLOR_BGR2LAB)[0].astype(np.float32)
    gaps = np.linalg.norm(lab[:, None] - lab[None], axis=2) + np.eye(COUNT) * 1e3
    assert gaps.min() > 20  # 8-bit Lab: a clear step between any two Eras


def test_designs_cover_light_and_dark_themes():
    themes = {the_loop.design_for(n).theme for n in range(40)}
    layouts = {the_loop.design_for(n).layout for n in range(40)}
    assert themes == set(the_loop.THEMES)
    assert layouts == set(the_loop.LAYOUTS)


@pytest.mark.parametrize("design", [-1, 1.5, True])
def test_bad_design_is_refused_by_name(design, tmp_path):
    with pytest.raises(ValueError, match="design"):
        the_loop.render_set(tmp_path, design)


def test_too_few_pixels_is_refused(tmp_path):
    with pytest.raises(ValueError, match="px_per_mm"):
        the_loop.render_set(tmp_path, 0, 0.5)


def test_mission_tiles_print_every_cube_slot_in_its_colour():
    slots = ("green", "red", "green", "green", "red", "green")  # six, the catalogue's most
    mission = Mission("M99", "Disassemble the entire overgrown temporal paradox engine before lunch", slots)
    for design in range(4):
        image, index = the_loop.mission_tile(the_loop.design_for(design), mission, 2.0)
        assert image.shape[:2] == (120, 120) and index
        band = cv2.cvtColor(image[80:96, :, :3], cv2.COLOR_BGR2HSV)  # 40-48 mm down: the slot row
        for colour, (low, high) in (("green", (40, 80)), ("red", (0, 8))):
            ink = ((band[:, :, 0] >= low) & (band[:, :, 0] <= high) & (band[:, :, 1] > 60)).astype(np.uint8)
            _, _, stats, _ = cv2.connectedComponentsWithStats(ink)
            assert (stats[1:, 4] > 8).sum() == slots.count(colour), (design, colour)


def test_a_missing_catalogue_is_named(tmp_path):
    with pytest.raises(CatalogueError, match=r"nope\.json"):
        the_loop.render_set(tmp_path, 0, 1.5, catalogue=str(tmp_path / "nope.json"))
