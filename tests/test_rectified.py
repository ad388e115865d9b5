"""The rectified recogniser's geometry and bookkeeping, without its trained weights: corner crops, heat-map
decoding, grouping corners into cards, reading regions the tracker names, and turning readings into cards."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from vision.recognise.corner_reader import card_probs
from vision.recognise.corners import (
    CORNER_KINDS,
    N_OUTPUTS,
    READ_H,
    READ_W,
    REG_SCALE,
    STRIDE,
    Corner,
    corner_crop,
    decode,
    finder_blob,
    handedness,
    printed_corner,
)
from vision.recognise.crops import corner_quads
from vision.recognise.finder import quad_bounds
from vision.recognise.labels import NONE, RANK_CLASSES, READER_CLASSES, SUIT_CLASSES, rank_suit
from vision.recognise.recogniser import UNKNOWN, CardDetection
from vision.recognise.rectified import (
    RectifiedThresholds,
    assemble_corners,
    assemble_read,
    card_outline,
    group_corners,
    region_frames,
    same_card,
    turn_sideways,
    turned_corner,
    with_close_ups,
)


def card_corners(quad: np.ndarray, kind: str = "up", score: float = 0.9) -> list[Corner]:
    """The four corners a perfect finder reports for a card outlined TL, TR, BR, BL."""
    q = np.asarray(quad, np.float32)
    return [Corner(kind, score, *printed_corner(q, k)) for k in range(4)]


def rect(x: float, y: float, w: float = 100.0, h: float = 140.0, angle: float = 0.0) -> np.ndarray:
    c, s = np.cos(np.deg2rad(angle)), np.sin(np.deg2rad(angle))
    local = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    return (local @ np.array([[c, s], [-s, c]], np.float32) + [x, y]).astype(np.float32)


# ---------------------------------------------------------------------------------------------------- crops


def marked_card(angle: float, x0: float = 6) -> tuple[np.ndarray, np.ndarray]:
    """A white card 120 units wide on grey with a black block where an index is printed (x0..x0+14, 6..40 in card
    units from its top-left), turned by `angle`."""
    import cv2

    frame = np.full((500, 500, 3), 120, np.uint8)
    quad = rect(250, 120, 120, 168, angle)
    cv2.fillConvexPoly(frame, quad.astype(np.int32), (255, 255, 255))
    ux, uy = (quad[1] - quad[0]) / 120, (quad[3] - quad[0]) / 168
    corners = ((x0, 6), (x0 + 14, 6), (x0 + 14, 40), (x0, 40))
    block = np.array([quad[0] + ux * x + uy * y for x, y in corners])
    cv2.fillConvexPoly(frame, block.astype(np.int32), (0, 0, 0))
    return frame, quad


@pytest.mark.parametrize("angle", [0.0, 37.0, 90.0, 180.0, 251.0])
def test_corner_crop_turns_the_index_upright_at_the_top_left(angle):
    frame, quad = marked_card(angle)
    crop = corner_crop(frame, quad[0], quad[1] - quad[0], quad[3] - quad[0])
    assert crop.shape == (READ_H, READ_W, 3)
    dark = crop.mean(axis=2) < 60
    ys, xs = np.nonzero(dark)
    assert len(ys) > 50
    assert xs.mean() < READ_W / 2 and ys.mean() < READ_H / 2  # the index sits at the crop's top left


def test_a_mirrored_corner_is_read_with_its_corner_at_the_top_right():
    """A four-index deck's top-right index, read from that corner's frame (a points back along the top edge),
    comes out upright at the crop's top right rather than mirrored."""
    frame, quad = marked_card(20.0, x0=100)
    crop = corner_crop(frame, quad[1], quad[0] - quad[1], quad[2] - quad[1])
    assert handedness(quad[0] - quad[1], quad[2] - quad[1]) < 0
    ys, xs = np.nonzero(crop.mean(axis=2) < 60)
    assert len(xs) > 50
    assert xs.mean() > READ_W / 2 and ys.mean() < READ_H / 2


def test_a_big_card_is_shrunk_by_area_not_aliased():
    import cv2

    frame = np.zeros((2000, 2000, 3), np.uint8)
    frame[::2, :] = 255  # one-pixel stripes: sampled sparsely they would alias into solid bands
    quad = rect(100, 100, 1200, 1680)
    crop = corner_crop(frame, quad[0], quad[1] - quad[0], quad[3] - quad[0])
    assert 90 < float(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY).mean()) < 165


# --------------------------------------------------------------------------------------------------- decode


def test_decode_reads_a_peak_with_its_offset_and_edges():
    out = np.full((1, N_OUTPUTS, 40, 60), -10.0, np.float32)
    y, x = 12, 33
    out[0, 0, y, x] = 3.0  # a face-up corner
    k = len(CORNER_KINDS)
    out[0, k : k + 2, y, x] = [0.25, 0.75]
    out[0, k + 2 :, y, x] = np.array([80.0, 0.0, 0.0, 112.0]) / REG_SCALE
    found = decode(out, 0.5, scale=0.5)
    assert len(found) == 1
    c = found[0]
    assert c.kind == "up"
    assert np.allclose(c.point, np.array([x + 0.25, y + 0.75]) * STRIDE / 0.5)
    assert np.allclose(c.a, [160.0, 0.0]) and np.allclose(c.b, [0.0, 224.0])
    # a second, weaker peak of a narrower card: best first, and left out below a width floor (the coarse pass's)
    out[0, 0, 30, 10] = 1.0
    out[0, k + 2 :, 30, 10] = np.array([40.0, 0.0, 0.0, 56.0]) / REG_SCALE
    assert [round(c.width) for c in decode(out, 0.5, scale=0.5)] == [160, 80]
    assert [round(c.width) for c in decode(out, 0.5, scale=0.5, min_width=100.0)] == [160]


def test_finder_blob_pads_to_a_multiple_of_32_and_shrinks_big_photos():
    blob, scale = finder_blob(np.zeros((720, 1280, 3), np.uint8))
    assert blob.shape == (1, 3, 736, 1280) and scale == 1.0
    blob, scale = finder_blob(np.zeros((3000, 4000, 3), np.uint8))
    assert scale == pytest.approx(0.32)
    assert blob.shape[2] % 32 == 0 and blob.shape[3] == 1280


# --------------------------------------------------------------------------------------------------- groups


def test_the_four_corners_of_a_card_are_one_group_with_its_outline():
    quad = rect(200, 100, angle=25.0)
    corners = card_corners(quad)
    groups = group_corners(corners)
    assert len(groups) == 1 and sorted(groups[0]) == [0, 1, 2, 3]
    outline = card_outline([corners[k] for k in groups[0]])
    assert np.abs(np.sort(outline, axis=0) - np.sort(quad, axis=0)).max() < 1e-3


def test_cascade_strips_stay_separate_cards():
    """A deck laid as a cascade: each card 18% of its height below the one under it. The corners of neighbouring
    strips lie close together but never where the other's edges put a corner of its card."""
    quads = [rect(300, 100 + 25 * i) for i in range(5)]
    corners = [c for q in quads for c in card_corners(q)[:2]]  # only the top edge of each strip shows
    groups = group_corners(corners)
    assert len(groups) == 5
    assert all(len(g) == 2 for g in groups)


def test_corners_of_cards_of_different_sizes_are_not_one_card():
    small = card_corners(rect(0, 0, 60, 84))
    assert not same_card(card_corners(rect(0, 0))[0], small[1])
    assert same_card(card_corners(rect(0, 0))[0], card_corners(rect(0, 0))[1])


def test_a_region_named_by_the_tracker_is_read_from_its_own_card_corner():
    quad = rect(400, 300, 100, 140, angle=-30.0)
    regions = corner_quads(quad)
    for region in regions:
        frames = region_frames(region)
        assert len(frames) == 4
        distances = [min(np.linalg.norm(quad - p, axis=1)) for p, _a, _b in frames]
        assert min(distances) < 1.0  # one hypothesis starts at the card's own corner
        best = frames[int(np.argmin(distances))]
        assert np.linalg.norm(best[1]) == pytest.approx(100.0, rel=0.05)


# -------------------------------------------------------------------------------------------------- readings


def test_card_probs_multiply_rank_and_suit_into_the_readers_classes():
    rank = np.zeros((1, len(RANK_CLASSES)), np.float32)
    suit = np.zeros((1, len(SUIT_CLASSES)), np.float32)
    rank[0, RANK_CLASSES.index("Q")] = 0.8
    rank[0, RANK_CLASSES.index(NONE)] = 0.2
    suit[0, SUIT_CLASSES.index("H")] = 0.9
    suit[0, SUIT_CLASSES.index("D")] = 0.1
    p = card_probs(rank, suit)[0]
    assert p.shape == (len(READER_CLASSES),)
    assert p.sum() == pytest.approx(1.0)
    assert p[READER_CLASSES.index("QH")] == pytest.approx(0.72)
    assert p[READER_CLASSES.index(NONE)] == pytest.approx(0.2)


def test_rank_suit_names_its_problem():
    assert rank_suit("10H") == ("10", "H")
    assert rank_suit("JOKER2") == ("JOKER", "")
    with pytest.raises(ValueError, match="not a standard card code"):
        rank_suit("1X")


def one_hot(label: str, p: float = 0.97) -> np.ndarray:
    row = np.full(len(READER_CLASSES), (1 - p) / (len(READER_CLASSES) - 1), np.float32)
    row[READER_CLASSES.index(label)] = p
    return row


def test_assemble_reports_each_label_once_and_drops_cornerless_readings():
    t = RectifiedThresholds()
    left, right = card_corners(rect(100, 100)), card_corners(rect(400, 100))
    corners = [left[0], left[2], right[0], right[1]]
    probs = np.stack([one_hot("QH"), one_hot("QH"), one_hot("7S"), one_hot(NONE)])
    cards = assemble_corners(corners, probs, t)
    assert sorted(c.label for c in cards) == ["7S", "QH"]
    qh = next(c for c in cards if c.label == "QH")
    assert qh.indices == 2 and qh.face_up and qh.confidence > 0.99
    # the same label read on a card elsewhere is still one card (a standard deck holds each card once)
    far = card_corners(rect(700, 400))
    cards = assemble_corners([*corners, far[0]], np.vstack([probs, one_hot("QH")[None]]), t)
    assert [c.label for c in cards].count("QH") == 1


def test_assemble_says_unknown_below_the_confidence_threshold():
    t = RectifiedThresholds(min_confidence=0.6)
    corner = card_corners(rect(100, 100))[:1]
    unsure = np.full((1, len(READER_CLASSES)), 0.01, np.float32)
    unsure[0, READER_CLASSES.index("4C")] = 0.3
    unsure[0, READER_CLASSES.index("4S")] = 0.3
    cards = assemble_corners(corner, unsure, t)
    assert [c.label for c in cards] == [UNKNOWN]
    assert {name for name, _ in cards[0].candidates} >= {"4C", "4S"}


def test_calibration_curves_turn_a_cards_beliefs_into_shares_right_per_number_of_corners(tmp_path):
    curve_lone = tuple(np.linspace(0.0, 0.5, 11))  # one corner: said at p, right p/2 of the time
    t = RectifiedThresholds(calibration_lone=curve_lone, calibration_multi=tuple(np.linspace(0.0, 1.0, 11)))
    left = card_corners(rect(100, 100))
    lone = assemble_corners(left[:1], one_hot("QH", 0.9)[None], t)[0]
    assert lone.label == "QH" and lone.confidence == pytest.approx(0.45, abs=0.01)
    beliefs = [b for _, b in lone.candidates]
    assert beliefs[0] == pytest.approx(0.45, abs=0.01) and beliefs == sorted(beliefs, reverse=True)
    assert sum(beliefs) <= 1.0
    both = assemble_corners([left[0], left[2]], np.stack([one_hot("QH", 0.9)] * 2), t)[0]
    assert both.confidence == pytest.approx(both.candidates[0][1]) and both.confidence > 0.9
    # the curves live in the thresholds file as lists and load back as tuples
    back = RectifiedThresholds.load(t.save(tmp_path / "t.json"))
    assert back.calibration_lone == pytest.approx(curve_lone) and back.min_confidence == t.min_confidence


def test_the_calibration_fit_is_monotone_and_reads_shares_right():
    from vision.train.tune_rectified import monotone_fit

    rng = np.random.default_rng(0)
    p = rng.random(4000)
    right = rng.random(4000) < 0.6 * p  # over-confident: right 60% as often as it says
    curve = monotone_fit(p, right)
    assert len(curve) == 11 and all(a <= b for a, b in itertools.pairwise(curve))
    assert curve[5] == pytest.approx(0.3, abs=0.06) and curve[9] == pytest.approx(0.54, abs=0.06)


def test_a_card_without_an_index_in_any_corner_is_face_down_when_two_corners_or_a_sure_one_see_it():
    t = RectifiedThresholds(lone_down=0.8)
    blank = one_hot(NONE)[None]
    weak = card_corners(rect(400, 100), score=0.5)
    assert assemble_corners(weak[:1], blank, t) == []
    backs = assemble_corners(weak[:2], np.vstack([blank, blank]), t)
    assert [(c.label, c.face_up) for c in backs] == [("BACK", False)]
    sure = card_corners(rect(400, 100), score=0.9)
    assert [c.label for c in assemble_corners(sure[:1], blank, t)] == ["BACK"]
    # a face-up card seen by an indexed and a plain corner is face up, never also a back
    mixed = assemble_corners(sure[:2], np.vstack([one_hot("9D")[None], blank]), t)
    assert [(c.label, c.face_up) for c in mixed] == [("9D", True)]


def test_a_face_with_no_index_is_a_joker_where_an_index_corner_shows_and_unknown_where_only_plain_ones_do():
    t = RectifiedThresholds(lone_down=0.5, face_up=0.6)
    blank = one_hot(NONE)[None]
    card = card_corners(rect(100, 100), score=0.9)  # TL, TR, BR, BL
    # a joker printing no index: its top-left reads as no index, but the face head knows a face from a back
    joker = assemble_corners(card[:2], np.vstack([blank, blank]), t, np.array([0.9, 0.8]))
    # one unsure corner is no card, face or back
    assert assemble_corners([Corner("up", 0.3, *printed_corner(rect(100, 100), 0))], blank, t, np.array([0.9])) == []
    assert [(c.label, c.face_up) for c in joker] == [("JOKER", True)]
    # a face seen only by its plain corners (top right, bottom left): some face, not a joker, not a back
    plain = assemble_corners([card[1], card[3]], np.vstack([blank, blank]), t, np.array([0.9, 0.9]))
    assert [(c.label, c.face_up) for c in plain] == [(UNKNOWN, True)]
    # the head unsure: a back, as without a face head
    unsure = assemble_corners(card[:2], np.vstack([blank, blank]), t, np.array([0.5, 0.4]))
    assert [(c.label, c.face_up) for c in unsure] == [("BACK", False)]
    # an indexed card's plain corner on its own face is that card, whatever the face head says
    read = assemble_corners(card[:2], np.vstack([one_hot("9D")[None], blank]), t, np.array([0.9, 0.9]))
    assert [(c.label, c.face_up) for c in read] == [("9D", True)]


def test_a_back_on_a_face_up_card_or_on_a_stronger_back_is_not_another_card():
    t = RectifiedThresholds(lone_down=0.5)
    blank = one_hot(NONE)[None]
    card = card_corners(rect(100, 100), score=0.9)
    # the face-up card's two indexed corners, and its plain top-right corner with a short edge: alone, that corner
    # would be a 'back' lying on the card
    short = Corner("up", 0.9, card[1].point, card[1].a * 0.3, card[1].b * 0.3)
    cards = assemble_corners([card[0], card[2], short], np.vstack([one_hot("5C")[None], one_hot("5C")[None], blank]), t)
    assert [(c.label, c.face_up) for c in cards] == [("5C", True)]
    # a face-down card found twice (two groups of its corners whose outlines overlap): one back
    down = card_corners(rect(500, 100), score=0.9)
    again = [Corner("down", 0.8, c.point + 6.0, c.a, c.b) for c in down[:2]]
    width_breaker = [Corner("down", c.score, c.point, c.a * 1.5, c.b * 1.5) for c in again]  # too wide to join
    backs = assemble_corners([*down[:2], *width_breaker], np.vstack([blank] * 4), t)
    assert [(c.label, c.face_up) for c in backs] == [("BACK", False)]


def test_a_back_under_a_face_up_card_is_reported_where_its_corners_show_beyond_it():
    t = RectifiedThresholds(lone_down=0.5, backs_under_faces=True)
    blank = one_hot(NONE)[None]
    face = card_corners(rect(100, 100), score=0.9)  # a face-up card read by its two index corners
    under = card_corners(rect(130, 150), score=0.9)  # a face-down card beneath it: its centre under the face
    corners = [face[0], face[2], under[1], under[2], under[3]]  # the back's top-left is hidden
    probs = np.vstack([one_hot("QH")[None], one_hot("QH")[None], blank, blank, blank])
    cards = assemble_corners(corners, probs, t)
    assert sorted((c.label, c.face_up) for c in cards) == [("BACK", False), ("QH", True)]
    # the rule before session 16 (the shipped cut-offs' and the tracker's): a back whose centre lies on a face is not
    before = assemble_corners(corners, probs, RectifiedThresholds(lone_down=0.5))
    assert [(c.label, c.face_up) for c in before] == [("QH", True)]
    # corners found on the face itself (its pips, its art) make no back, though they group like one
    pips = [Corner("up", 0.9, c.point * 0.3 + rect(100, 100).mean(axis=0) * 0.7, c.a * 0.3, c.b * 0.3) for c in face]
    cards = assemble_corners([face[0], face[2], *pips[:2]], np.vstack([probs[:2], blank, blank]), t)
    assert [(c.label, c.face_up) for c in cards] == [("QH", True)]


def test_corners_the_card_head_calls_no_cards_are_not_read_and_a_reader_without_one_reads_them_all():
    from vision.recognise.reader import Reading

    t = RectifiedThresholds(min_card=0.5, lone_down=0.5)
    blank = one_hot(NONE)[None]
    down = card_corners(rect(100, 100), score=0.9)[:2]  # a face-down card's two corners
    phone = card_corners(rect(500, 100, 200, 200), score=0.9)[:2]  # and a phone's, which the finder took for one
    corners = [*down, *phone]
    probs = np.vstack([blank] * 4)
    heads = Reading(probs, None, face=np.full(4, 0.1, np.float32), card=np.array([0.9, 0.8, 0.2, 0.1], np.float32))
    assert [(c.label, c.quad.mean(axis=0)[0] < 300) for c in assemble_read(corners, heads, t)] == [("BACK", True)]
    # no card head (a reader from before session 16): every corner is read, the phone becomes a back too
    assert len(assemble_read(corners, Reading(probs, None, face=heads.face), t)) == 2
    # the finder's own score still decides first
    assert assemble_read(corners, heads, RectifiedThresholds(min_card=0.5, corner=0.95)) == []


def test_a_corner_read_as_no_index_is_turned_where_the_reader_sees_an_index_the_other_way_round():
    from vision.recognise.reader import Reading

    quad = rect(100, 100)
    true = card_corners(quad)[0]
    swapped = Corner("up", 0.9, true.point, true.b / np.linalg.norm(true.b) * true.width, true.a * 1.4)
    back = card_corners(rect(400, 100))[0]
    corners = [swapped, back]
    reading = Reading(np.vstack([one_hot(NONE)[None], one_hot(NONE)[None]]), None, face=np.array([0.9, 0.1]))
    turned = [turned_corner(c) for c in corners]
    # turned, the first shows the seven of hearts; the back's corner still shows nothing
    other = Reading(np.vstack([one_hot("7H")[None], one_hot(NONE)[None]]), None, face=np.array([0.95, 0.2]))
    none = READER_CLASSES.index(NONE)
    rows = np.arange(2)
    out, read = turn_sideways(corners, reading, rows, turned, other, RectifiedThresholds(sideways=0.2), none)
    np.testing.assert_allclose(out[0].a, true.a, atol=1e-3)  # the card's own short edge, at its width
    np.testing.assert_allclose(np.linalg.norm(out[0].b), np.linalg.norm(true.b), atol=1e-3)
    assert out[1] is back and read.probs[0].argmax() == READER_CLASSES.index("7H") and read.face[0] == 0.95
    assert read.probs[1].argmax() == none and read.face[1] == 0.1
    assert [c.label for c in assemble_read(out, read, RectifiedThresholds(sideways=0.2))] == ["7H", "BACK"]
    # off (the default), or where the first reading already saw an index, nothing is turned
    kept, same = turn_sideways(corners, reading, rows, turned, other, RectifiedThresholds(), none)
    assert kept == corners and same is reading
    seen = Reading(np.vstack([one_hot("2C")[None], one_hot(NONE)[None]]), None)
    kept, _ = turn_sideways(corners, seen, rows, turned, other, RectifiedThresholds(sideways=0.2), none)
    assert kept[0] is swapped


# ----- enrolment for the rectified reader, without its trained weights ------------------------------------------


def test_index_corners_are_the_corners_where_most_faces_show_an_index():
    from vision.recognise.enrol_rectified import index_corners_of

    two = np.array([[0.01, 0.9, 0.02, 0.95]] * 10 + [[0.9, 0.9, 0.02, 0.9]] * 3)  # 3 top-lefts misread as none
    assert index_corners_of(two) == (0, 2)
    assert index_corners_of(np.full((8, 4), 0.1)) == (0, 1, 2, 3)
    assert index_corners_of(np.full((8, 4), 0.7)) == ()
    assert index_corners_of(np.array([[0.1] * 4] * 4 + [[0.9] * 4] * 4)) == ()  # half is not most
    assert index_corners_of(np.zeros((0, 4))) == ()


def test_seen_corners_teach_well_seen_corners_and_leave_partly_hidden_indices_out():
    from vision.recognise.samples import corner_label, seen_corners

    assert seen_corners(True, [1, 1, 1, 1], [1, 1], (0, 2)) == [(0, True), (1, False), (2, True), (3, False)]
    assert [k for k, _ in seen_corners(True, [0.5, 1, 1, 1], [1, 1], (0, 2))] == [1, 2, 3]  # a corner half out
    # the top-left index 30% seen is a guess either way; the bottom-right one 5% seen is gone, its corner is none
    assert seen_corners(True, [1, 1, 1, 1], [0.3, 0.05], (0, 2)) == [(1, False), (2, False), (3, False)]
    assert seen_corners(False, [1, 1, 1, 1], [1, 1], (0, 2)) == [(k, False) for k in range(4)]  # a back
    assert seen_corners(True, [1, 1, 1, 1], [1, 1], (0, 1, 2, 3)) == [(k, True) for k in range(4)]
    assert corner_label("10H", True) == ("10", "H") and corner_label("JOKER2", True) == ("JOKER", "")
    assert corner_label("7S", False) == (NONE, "") and corner_label("BACK", True) == (NONE, "")


def test_jitter_moves_a_corner_frame_by_a_few_percent_of_the_card():
    from vision.recognise.samples import jitter

    rng = np.random.default_rng(0)
    p, a, b = np.array([100.0, 50.0]), np.array([60.0, 0.0]), np.array([0.0, 84.0])
    moved = [jitter(rng, p, a, b) for _ in range(500)]
    shift = np.median([np.linalg.norm(q - p) for q, _, _ in moved]) / 60
    zoom = np.log([np.linalg.norm(a2) / 60 for _, a2, _ in moved])
    assert 0.01 < shift < 0.08 and abs(zoom.mean()) < 0.02 and 0.05 < zoom.std() < 0.12
    assert all(abs(float(a2 @ b2)) < 1e-6 * 60 * 84 for _, a2, b2 in moved)  # turned and scaled, never sheared


def test_flat_corners_cut_each_printed_corner_of_a_picture_upright():
    from vision.recognise.enrol_rectified import flat_corners
    from vision.recognise.matcher import FLAT_TABLE

    card = np.full((350, 250, 4), 255, np.uint8)
    card[12:60, 10:40, :3] = 0  # an index at the top left...
    card[290:338, 210:240, :3] = 0  # ...and its half-turn twin
    card[:3, :3, 3] = 0  # a transparent rounded corner
    crops = flat_corners(card)
    assert crops.shape == (4, READ_H, READ_W, 3)
    dark = (crops.mean(axis=3) < 60).mean(axis=(1, 2))
    assert dark[0] > 0.05 and dark[2] > 0.05 and dark[1] == 0 and dark[3] == 0
    assert abs(int(crops[0, 0, 0, 0]) - FLAT_TABLE) < 30  # laid on grey, not on black


def drawn_deck(codes: tuple[str, ...] = ("AS", "7H", "10D", "KC", "JOKER")) -> dict[str, np.ndarray]:
    """Card pictures (BGRA, 250 x 350, transparent rounded corners) with each code drawn as its index over a suit
    mark, top left and turned at the bottom right, and a different pip in the middle: a deck to match without any
    rendering."""
    import cv2

    pictures = {}
    for i, code in enumerate(codes):
        card = np.full((350, 250, 4), 255, np.uint8)
        colour = (0, 0, 200, 255) if code[-1] in "HD" else (0, 0, 0, 255)
        cv2.putText(card, code[:2], (8, 45), cv2.FONT_HERSHEY_SIMPLEX, 1.2, colour, 3)
        cv2.circle(card, (30, 80), 8 + 2 * (i % 3), colour, -1)
        cv2.rectangle(card, (90, 120), (90 + 12 * i, 230), colour, -1)
        card[175:] = card[:175][::-1, ::-1]  # the half-turn twin
        card[:4, :4, 3] = card[:4, -4:, 3] = card[-4:, :4, 3] = card[-4:, -4:, 3] = 0
        pictures[code] = card
    return pictures


def drawn_head(reader_file, weight: float = 20.0):
    from vision.recognise.enrol_rectified import RectifiedDeckHead, file_sha256
    from vision.recognise.matcher import DeckMatcher, cut_templates

    matcher = DeckMatcher(*cut_templates(drawn_deck(), (0, 2), (None,)))
    return RectifiedDeckHead("mine", matcher, (0, 2), weight, 1.5, file_sha256(reader_file))


def test_the_matcher_reads_a_decks_own_corners_and_the_deck_head_weighs_it_against_the_reader(tmp_path):
    from vision.recognise.matcher import cut_flat

    reader = tmp_path / "reader.onnx"
    reader.write_bytes(b"a graph")
    head = drawn_head(reader)
    pictures = drawn_deck()
    crops = np.stack([cut_flat(pictures[code], k)[0] for code in pictures for k in (0, 2)])
    truth = [("JOKER" if code == "JOKER" else code) for code in pictures for _ in (0, 2)]
    unsure = np.full((len(crops), len(READER_CLASSES)), 0.5 / (len(READER_CLASSES) - 1), np.float32)
    unsure[:, READER_CLASSES.index("AS")] = 0.5  # a reader that says AS to everything: aligned on the wrong card
    scores = head.matcher.scores(crops, unsure)
    assert scores.shape == (len(crops), len(READER_CLASSES)) and scores[:, READER_CLASSES.index(NONE)].max() == -1
    faces = np.array(READER_CLASSES) != NONE
    assert list(np.array(READER_CLASSES)[np.where(faces, scores, -9).argmax(axis=1)]) == truth
    # a reader with no opinion follows the matcher
    even = np.full_like(unsure, 1 / len(READER_CLASSES))
    read = head.read(crops, even)
    assert np.allclose(read.sum(axis=1), 1, atol=1e-5) and list(np.array(READER_CLASSES)[read.argmax(axis=1)]) == truth
    assert np.allclose(read[:, READER_CLASSES.index(NONE)], even[:, READER_CLASSES.index(NONE)])
    # "none" stays the reader's: a crop it is sure shows no index is left as it is
    sure_none = np.full_like(unsure, 0.1 / (len(READER_CLASSES) - 1))
    sure_none[:, READER_CLASSES.index(NONE)] = 0.9
    assert np.allclose(head.read(crops, sure_none), sure_none)
    # a head whose weight is 0 (the matcher read no better at enrolment) keeps the reader's reading
    assert np.allclose(drawn_head(reader, weight=0.0).read(crops, unsure), unsure)


def test_a_rectified_deck_head_round_trips_and_wrong_files_are_named(tmp_path):
    import json

    from vision.recognise.enrol import DeckHead, EnrolError, load_head
    from vision.recognise.enrol_rectified import RectifiedDeckHead, load_deck_head, load_rectified_head

    reader = tmp_path / "reader.onnx"
    reader.write_bytes(b"a graph")
    head = drawn_head(reader)
    loaded = load_deck_head(head.save(tmp_path / "mine.npz"))
    assert isinstance(loaded, RectifiedDeckHead) and loaded.index_corners == (0, 2)
    assert (loaded.weight, loaded.temperature, loaded.reader_sha256) == (20.0, 1.5, head.reader_sha256)
    assert np.array_equal(loaded.matcher.templates, head.matcher.templates)
    assert list(loaded.matcher.labels) == list(head.matcher.labels) and len(head.matcher.labels) == 10
    assert np.array_equal(loaded.matcher.opaque, head.matcher.opaque)
    crops = np.stack([cut_flat_index(code) for code in ("7H", "KC")])
    probs = np.full((2, len(READER_CLASSES)), 1 / len(READER_CLASSES), np.float32)
    assert np.allclose(loaded.read(crops, probs), head.read(crops, probs))
    loaded.check_fits(reader)
    reader.write_bytes(b"a retrained graph")
    with pytest.raises(EnrolError, match=r"mine\.npz: enrolled for another corner reader.*enrol the deck again"):
        loaded.check_fits(reader)
    # a head enrolled before the matcher (refitted heads, no templates) asks to be enrolled again
    heads = {"rank_weight": np.zeros((15, 8)), "rank_bias": np.zeros(15), "suit_weight": np.zeros((4, 8))}
    meta = json.dumps({"kind": "rectified", "reader_sha256": "0" * 64})
    np.savez(tmp_path / "before.npz", meta=meta, suit_bias=np.zeros(4), **heads)
    with pytest.raises(EnrolError, match=r"before\.npz: enrolled by an earlier version.*enrol the deck again"):
        load_deck_head(tmp_path / "before.npz")
    # each recogniser's head, given to the other's loader, names the option that reads it
    old = DeckHead("old", ("AS", NONE), np.ones((2, 8), np.float32), np.zeros(2, np.float32)).save(tmp_path / "o.npz")
    assert isinstance(load_deck_head(old), DeckHead)
    with pytest.raises(EnrolError, match=r"o.npz: a deck head for the previous recogniser.*--recogniser previous"):
        load_rectified_head(old)
    with pytest.raises(EnrolError, match=r"mine.npz: a deck head for the rectified recogniser.*--recogniser rectified"):
        load_head(tmp_path / "mine.npz")
    # damaged files say what they lack
    np.savez(tmp_path / "half.npz", meta=json.dumps({"kind": "rectified", "matcher": 1}), templates=np.zeros(3))
    with pytest.raises(EnrolError, match=r"half.npz: not a deck head file \(it lacks opaque"):
        load_deck_head(tmp_path / "half.npz")
    with open(tmp_path / "one.npz", "wb") as f:
        np.save(f, np.zeros(3))
    with pytest.raises(EnrolError, match=r"one\.npz: not a deck head file .*not an \.npz archive"):
        load_deck_head(tmp_path / "one.npz")


def cut_flat_index(code: str) -> np.ndarray:
    from vision.recognise.matcher import cut_flat

    return cut_flat(drawn_deck()[code], 0)[0]


def test_templates_are_cut_at_the_shapes_a_deck_is_seen_at():
    from vision.recognise.matcher import POKER_ASPECT, ZOOMS, card_aspects, cut_templates

    assert card_aspects((251, 350)) == (None,)  # poker-shaped pictures: their own shape only
    assert card_aspects((210, 350)) == (None, POKER_ASPECT)  # and the shape the synthetic engine draws them at
    templates, labels, opaque = cut_templates(drawn_deck(("2S", "JOKER2")), (0,), (None, POKER_ASPECT))
    assert templates.shape == (2 * len(ZOOMS), 2, READ_H // 2, READ_W // 2, 3) and templates.dtype == np.uint8
    assert list(labels) == ["2S", "JOKER"]
    assert opaque[0, 0] < 100 and opaque[-1, -1] == 255  # the table beyond the rounded corner is masked out


def test_a_joker_needs_the_belief_its_threshold_asks_for_or_it_is_unknown():
    card = card_corners(rect(100, 100), score=0.9)
    blank = one_hot(NONE)[None]
    unsure_joker = 0.7 * one_hot("JOKER") + 0.3 * one_hot("9D")
    lenient, strict = RectifiedThresholds(min_confidence=0.2), RectifiedThresholds(min_confidence=0.2, joker=0.9)
    assert [c.label for c in assemble_corners(card[:1], unsure_joker[None], lenient)] == ["JOKER"]
    assert [c.label for c in assemble_corners(card[:1], unsure_joker[None], strict)] == [UNKNOWN]
    sure_nine = 0.7 * one_hot("9D") + 0.3 * one_hot("JOKER")
    assert [c.label for c in assemble_corners(card[:1], sure_nine[None], strict)] == ["9D"]  # only jokers are held
    # a blank face at an index corner: a joker only if the face head is as sure as the threshold asks
    face = RectifiedThresholds(lone_down=0.5, face_up=0.6, joker=0.95)
    assert [c.label for c in assemble_corners(card[:2], np.vstack([blank, blank]), face, np.array([0.9, 0.8]))] == [
        UNKNOWN
    ]


def test_a_card_read_by_one_corner_needs_the_lone_up_belief_and_two_agreeing_corners_do_not():
    card = card_corners(rect(100, 100), score=0.9)
    unsure = 0.45 * one_hot("9D") + 0.3 * one_hot("8D") + 0.25 * one_hot("6D")
    t = RectifiedThresholds(min_confidence=0.2, lone_up=0.6)
    assert [c.label for c in assemble_corners(card[:1], unsure[None], t)] == [UNKNOWN]
    assert [c.label for c in assemble_corners(card[:1], unsure[None], RectifiedThresholds(min_confidence=0.2))] == [
        "9D"
    ]
    both = assemble_corners([card[0], card[2]], np.vstack([unsure, unsure]), t)  # two index corners that agree
    assert [c.label for c in both] == ["9D"]


def test_calibration_error_is_small_for_honest_probabilities_and_large_for_overconfident_ones():
    from vision.recognise.bench import calibration

    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 20_000)
    honest = calibration(list(zip(p, rng.uniform(0, 1, p.size) < p, strict=True)))
    bold = calibration(list(zip(np.full(p.size, 0.95), rng.uniform(0, 1, p.size) < 0.6, strict=True)))
    assert honest["ece"] < 0.02 and abs(bold["ece"] - 0.35) < 0.02
    assert sum(b["reports"] for b in honest["bins"]) == p.size and len(bold["bins"]) == 1


def test_a_temperature_softens_a_cards_probability_but_never_changes_its_label():
    card = card_corners(rect(100, 100), score=0.9)
    reading = 0.7 * one_hot("9D") + 0.2 * one_hot("8D") + 0.1 * one_hot("6D")
    both = np.vstack([reading, reading])
    sure = assemble_corners([card[0], card[2]], both, RectifiedThresholds(min_confidence=0.0))
    soft = assemble_corners([card[0], card[2]], both, RectifiedThresholds(min_confidence=0.0, temperature=3.0))
    assert sure[0].label == soft[0].label == "9D"
    assert soft[0].confidence < sure[0].confidence and soft[0].candidates[1][0] == sure[0].candidates[1][0]


# ---------------------------------------------------------------------------------------------------- close-ups


def test_a_large_card_replaces_the_pieces_its_face_made_and_its_own_index_found_small():
    """The coarse pass's card, read surely, replaces the unsure small "cards" its pips made and the first pass's
    reading of its own index (the surer of the two is kept); a card of its size lying across it stays."""
    big = detection("9C", 0.98, rect(100, 100, 500, 700))
    pip = detection("AS", 0.6, rect(300, 350, 90, 126))
    index = detection("9C", 0.9, rect(100, 100, 120, 168))
    across = detection("4D", 0.99, rect(400, 300, 480, 680))
    kept = with_close_ups([pip, index, across], [big])
    assert sorted(d.label for d in kept) == ["4D", "9C"] and any(d is big for d in kept)
    surer_index = detection("9C", 0.99, rect(100, 100, 120, 168))
    kept = with_close_ups([pip, surer_index], [big])
    assert [d.label for d in kept] == ["9C"] and kept[0] is surer_index


def test_a_table_seen_coarse_does_not_hide_its_cards_under_one_large_card():
    """Seen coarse, a pile of small cards looks like one large one: an UNKNOWN or a back is never taken, and a named
    one is not where a card on it is read as surely."""
    cards = [detection("QH", 0.98, rect(100, 100)), detection("BACK", 0.7, rect(250, 120), face_up=False)]
    for phantom in (
        detection(UNKNOWN, 0.2, rect(80, 80, 400, 560)),
        detection("BACK", 0.9, rect(80, 80, 400, 560), face_up=False),
        detection("7S", 0.98, rect(80, 80, 400, 560)),
    ):
        assert with_close_ups(cards, [phantom]) == cards


def test_an_unknown_made_of_a_surer_cards_own_corners_is_dropped_and_a_named_one_is_not():
    t = RectifiedThresholds(fragments=True)
    big = card_corners(rect(100, 100, 200, 280))
    # an UNKNOWN made of the card's own corners, misjudged (every corner of it on the named card's face)
    ghost = Corner("up", 0.9, big[0].point + np.float32([4, 3]), big[0].a * 0.8, big[0].b * 0.6)
    unsure = np.full(len(READER_CLASSES), 1 / len(READER_CLASSES), np.float32)
    probs = np.stack([one_hot("9C"), one_hot("9C"), unsure])
    assert [c.label for c in assemble_corners([big[0], big[2], ghost], probs, t)] == ["9C"]
    kept = assemble_corners([big[0], big[2], ghost], probs, replace(t, fragments=False))
    assert sorted(c.label for c in kept) == ["9C", UNKNOWN]


def detection(label: str, confidence: float, quad: np.ndarray, face_up: bool = True) -> CardDetection:
    return CardDetection(label, face_up, confidence, quad, quad_bounds(quad))


def test_cards_of_one_size_overlapping_in_a_pile_are_all_kept():
    t = RectifiedThresholds(fragments=True)
    top, under = card_corners(rect(100, 100)), card_corners(rect(130, 60, angle=8))
    corners = [top[0], top[2], under[0]]  # the card under shows its top-left index beyond the top card
    probs = np.stack([one_hot("QH"), one_hot("QH"), one_hot("4D", 0.7)])
    assert sorted(c.label for c in assemble_corners(corners, probs, t)) == ["4D", "QH"]
