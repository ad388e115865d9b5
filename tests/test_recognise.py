"""The card recogniser's pure parts: crops, box decoding, grouping into cards, calibration, enrolment's head
fitting, the detect command's file handling and the benchmark's scoring. The trained models themselves are
tested in test_recognise_models.py."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.recognise.bench import BenchScene, score_scene, summarise
from vision.recognise.calibration import CalibrationError, load_calibration
from vision.recognise.crops import CROP_PX, CROP_SCALE, corner_quads, index_crop
from vision.recognise.detect import DetectResult, annotate, expand_paths, read_image
from vision.recognise.enrol import DeckHead, EnrolError, choose_head, fit_head, load_head
from vision.recognise.finder import Found, decode, xywhr_quads
from vision.recognise.labels import FINDER_CLASSES, NONE, READER_CLASSES
from vision.recognise.recogniser import UNKNOWN, CardDetection, assemble, with_probes

CLASSES = tuple(sorted(READER_CLASSES))  # ultralytics orders classification classes by folder name


def _quad(x1, y1, x2, y2):
    return np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], np.float32)


def _found(kind, x1, y1, x2, y2, score=0.9):
    return Found(kind, score, _quad(x1, y1, x2, y2), (x1, y1, x2, y2))


def _probs(*rows):
    """One probability row per (label, p) pair: p on the label, the rest spread evenly."""
    out = np.zeros((len(rows), len(CLASSES)), np.float32)
    for r, (label, p) in enumerate(rows):
        out[r, :] = (1 - p) / (len(CLASSES) - 1)
        out[r, CLASSES.index(label)] = p
    return out


# ----------------------------------------------------------------------------------------------- crops, decode


def test_index_crop_centres_the_region_with_a_margin():
    image = np.zeros((200, 300, 3), np.uint8)
    image[80:120, 140:160] = 255  # a 20 x 40 index
    crop = index_crop(image, _quad(140, 80, 160, 120))
    assert crop.shape == (CROP_PX, CROP_PX, 3)
    assert crop[CROP_PX // 2, CROP_PX // 2].min() > 200
    assert crop[:, 0].max() < 50 and crop[:, -1].max() < 50  # the margin beside a tall box is background
    assert (crop[..., 0] > 128).mean() == pytest.approx(20 * 40 / (CROP_SCALE * 40) ** 2, abs=0.03)


@pytest.mark.parametrize("turn", [0, 37, 90, 200])
def test_index_crop_turns_the_index_upright_or_upside_down(turn):
    """A mark at the index's top-left ends at the crop's top-left or bottom-right, whatever the table angle."""
    index = np.zeros((40, 20, 3), np.uint8)
    index[2:10, 2:8] = 255
    canvas = np.zeros((300, 300, 3), np.uint8)
    rot = cv2.getRotationMatrix2D((10, 20), turn, 1.0)
    rot[:, 2] += (140, 130)
    canvas = cv2.warpAffine(index, rot, (300, 300))
    quad = cv2.transform(np.array([[[0, 0], [20, 0], [20, 40], [0, 40]]], np.float32), rot)[0]
    crop = index_crop(canvas, quad, size=56, scale=1.4)
    ys, xs = np.nonzero(crop[..., 0] > 128)
    corner = (xs.mean() < 28, ys.mean() < 28)
    assert corner in ((True, True), (False, False))


def test_large_indices_are_shrunk_without_aliasing():
    stripes = np.zeros((400, 400, 3), np.uint8)
    stripes[:, ::2] = 255  # one-pixel stripes: aliasing would turn them into a pattern, area shrinking to grey
    crop = index_crop(stripes, _quad(100, 100, 200, 300))
    assert 100 < crop.mean() < 155 and crop.std() < 30


def test_xywhr_quads_follow_the_angle():
    flat = xywhr_quads(np.array([[50, 50, 20, 10, 0.0]]))[0]
    assert np.allclose(sorted(flat[:, 0]), [40, 40, 60, 60]) and np.allclose(sorted(flat[:, 1]), [45, 45, 55, 55])
    turned = xywhr_quads(np.array([[50, 50, 20, 10, np.pi / 2]]))[0]
    assert np.allclose(sorted(turned[:, 0]), [45, 45, 55, 55], atol=1e-4)
    assert np.allclose(sorted(turned[:, 1]), [40, 40, 60, 60], atol=1e-4)


def _raw(rows):
    """Finder output rows: cx, cy, w, h, one score per class, angle."""
    out = np.zeros((len(rows), 4 + len(FINDER_CLASSES) + 1), np.float32)
    for r, (cx, cy, w, h, kind, score, angle) in enumerate(rows):
        out[r, :4] = cx, cy, w, h
        out[r, 4 + FINDER_CLASSES.index(kind)] = score
        out[r, -1] = angle
    return out


def test_decode_suppresses_overlaps_per_class_and_rescales():
    raw = _raw(
        [
            (100, 100, 10, 20, "index", 0.9, 0.0),
            (101, 100, 10, 20, "index", 0.8, 0.0),  # the same index again: suppressed
            (100, 100, 60, 90, "card", 0.7, 0.1),  # a card around it: a different class, kept
            (300, 200, 10, 20, "index", 0.1, 0.0),  # too faint
        ]
    )
    found = decode(raw, scale=0.5)
    assert sorted(f.kind for f in found) == ["card", "index"]
    index = next(f for f in found if f.kind == "index")
    assert index.score == pytest.approx(0.9)
    assert np.allclose(index.box, (190, 180, 210, 220), atol=1e-3)  # frame pixels: twice the input's


def test_a_card_boxed_twice_loosely_and_tightly_is_one_card_but_fanned_cards_stay_two():
    raw = _raw(
        [
            (200, 200, 100, 140, "back", 0.7, 0.0),  # loose box
            (195, 205, 66, 96, "back", 0.3, 0.0),  # tight box inside it: IoU 0.45, under the NMS cut
            (500, 200, 60, 90, "card", 0.8, 0.0),
            (530, 215, 60, 90, "back", 0.6, 0.0),  # a fanned neighbour half under it: kept
        ]
    )
    found = decode(raw, scale=1.0)
    assert sorted((f.kind, round(f.score, 1)) for f in found) == [("back", 0.6), ("back", 0.7), ("card", 0.8)]


# ------------------------------------------------------------------------------------------------ assembling


def test_two_indices_of_one_card_make_one_card_with_its_outline():
    card = _found("card", 100, 100, 163, 188)
    found = [card, _found("index", 102, 102, 112, 122), _found("index", 151, 166, 161, 186)]
    cards = assemble(found, _probs(("QH", 0.95), ("QH", 0.9)), CLASSES)
    assert [(c.label, c.indices) for c in cards] == [("QH", 2)]
    assert np.allclose(cards[0].quad, card.quad)
    assert cards[0].confidence > 0.99  # two agreeing readings are surer than either


def test_the_same_label_is_never_reported_twice():
    found = [_found("index", 10, 10, 20, 30), _found("index", 500, 300, 510, 320)]
    cards = assemble(found, _probs(("7S", 0.9), ("7S", 0.8)), CLASSES)
    assert [c.label for c in cards] == ["7S"]


def test_low_confidence_is_unknown_with_candidates():
    cards = assemble([_found("index", 10, 10, 20, 30)], _probs(("8D", 0.3)), CLASSES)
    assert cards[0].label == UNKNOWN and cards[0].candidates[0][0] == "8D"
    assert cards[0].confidence == pytest.approx(0.3, abs=0.01)


def test_none_readings_are_dropped_and_hidden_cards_are_unknown():
    found = [_found("index", 10, 10, 20, 30), _found("card", 300, 300, 363, 388), _found("back", 500, 100, 563, 188)]
    cards = assemble(found, _probs((NONE, 0.9)), CLASSES)
    assert sorted((c.label, c.face_up) for c in cards) == [("BACK", False), (UNKNOWN, True)]


def test_an_index_that_confidently_disagrees_with_its_card_is_its_own_card():
    card = _found("card", 100, 100, 163, 188)
    found = [card, _found("index", 102, 102, 112, 122), _found("index", 151, 166, 161, 186)]
    cards = assemble(found, _probs(("QH", 0.97), ("5C", 0.96)), CLASSES)
    assert sorted(c.label for c in cards) == ["5C", "QH"]


def test_json_contract_of_a_detection():
    det = CardDetection("QH", True, 0.97, _quad(1, 2, 3, 4), (1, 2, 3, 4), 2, (("QH", 0.97),))
    out = det.to_json()
    assert out["label"] == "QH" and out["face_up"] is True and out["confidence"] == 0.97
    assert out["quad"] == [[1, 2], [3, 2], [3, 4], [1, 4]] and out["box"] == [1, 2, 3, 4]
    json.dumps(out)


# ------------------------------------------------------------------------------------------------ calibration


def test_calibration_from_four_points_maps_them(tmp_path):
    path = tmp_path / "cal.json"
    path.write_text(
        json.dumps(
            {
                "image_points": [[0, 0], [100, 0], [100, 50], [0, 50]],
                "table_mm": [[0, 0], [200, 0], [200, 100], [0, 100]],
            }
        )
    )
    cal = load_calibration(path)
    assert np.allclose(cal.to_table(np.array([[50, 25]])), [[100, 50]])
    det = cal.place(CardDetection("AS", True, 1.0, _quad(40, 20, 60, 30), (40, 20, 60, 30)))
    assert det.table_mm == pytest.approx((100, 50))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        ("{not json", "not a JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"homography": [[1, 0], [0, 1]]}', "must be finite numbers of shape"),
        ('{"homography": [[0, 0, 0], [0, 0, 0], [0, 0, 1]]}', "singular"),
        ('{"image_points": [[0, 0], [1, 1], [2, 2], [3, 3]], "table_mm": [[0, 0], [1, 0], [1, 1], [0, 1]]}', "span"),
        ('{"table_mm": []}', "expected 'homography'"),
    ],
)
def test_bad_calibration_files_name_the_problem(tmp_path, content, message):
    path = tmp_path / "cal.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CalibrationError, match=message):
        load_calibration(path)


# ------------------------------------------------------------------------------------------------- enrolment


def _deck_features(seed: int, n: int, spread: float) -> tuple[tuple[str, ...], DeckHead, list[str], np.ndarray]:
    """Features of three cards in clusters of `spread`, and a base layer that knows nothing of them."""
    rng = np.random.default_rng(seed)
    classes = ("AS", "KH", NONE)
    base = DeckHead("base", classes, rng.normal(0, 0.1, (3, 8)).astype(np.float32), np.zeros(3, np.float32))
    centres = rng.normal(0, 3, (3, 8))
    labels = [classes[i % 3] for i in range(n)]
    x = np.array([centres[classes.index(c)] for c in labels]) + rng.normal(0, spread, (n, 8))
    return classes, base, labels, x.astype(np.float32)


def test_fitting_a_head_learns_a_deck_the_base_reads_wrong():
    classes, base, labels, x = _deck_features(0, 300, 0.5)
    head = fit_head(base, x.astype(np.float32), labels, steps=200)
    before = np.mean(np.array(classes)[base.logits(x).argmax(1)] == np.array(labels))
    after = np.mean(np.array(classes)[head.logits(x).argmax(1)] == np.array(labels))
    assert after > 0.95 > before
    probs = head.probs(x[:5].astype(np.float32), ("KH", NONE, "AS"))
    assert probs.shape == (5, 3) and np.allclose(probs.sum(axis=1), 1)


def test_deck_heads_round_trip_and_bad_files_are_named(tmp_path):
    head = DeckHead("mine", ("AS", NONE), np.ones((2, 4), np.float32), np.zeros(2, np.float32))
    loaded = load_head(head.save(tmp_path / "mine.npz"))
    assert loaded.classes == head.classes and np.array_equal(loaded.weight, head.weight)
    with pytest.raises(EnrolError, match="no such deck head"):
        load_head(tmp_path / "missing.npz")
    (tmp_path / "bad.npz").write_text("not a zip")
    with pytest.raises(EnrolError, match="not a deck head"):
        load_head(tmp_path / "bad.npz")


# ---------------------------------------------------------------------------------------------------- detect


def test_detect_file_handling(tmp_path):
    good = tmp_path / "a.png"
    cv2.imwrite(str(good), np.zeros((20, 30, 3), np.uint8))
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "fake.jpg").write_text("hello")
    (tmp_path / "empty.png").write_bytes(b"")
    assert [p.name for p in expand_paths([tmp_path])] == ["a.png", "empty.png", "fake.jpg"]
    assert read_image(good).shape == (20, 30, 3)
    for name, message in (("fake.jpg", "not a picture"), ("empty.png", "empty file"), ("nope.png", "no such file")):
        with pytest.raises(ValueError, match=message):
            read_image(tmp_path / name)
    with pytest.raises(ValueError, match="directory"):
        read_image(tmp_path)
    assert DetectResult(tmp_path / "x.jpg", error="x.jpg: empty file").to_json() == {
        "image": str(tmp_path / "x.jpg"),
        "error": "x.jpg: empty file",
    }


def test_annotation_draws_the_cards():
    image = np.zeros((200, 300, 3), np.uint8)
    det = CardDetection("QH", True, 0.9, _quad(50, 50, 113, 138), (50, 50, 113, 138), 1, (), None, ((52, 52, 60, 70),))
    out = annotate(image, [det])
    assert out.any() and not image.any()


# ---------------------------------------------------------------------------------------------------- scoring


def _scene(*cards):
    return BenchScene(b"", [dict(c) for c in cards], 10.0, 0.0, 0.0, 0.0, "deck")


def _card(code, x, face_up=True, index_visible=True, visible=1.0, legible=True):
    return {
        "code": code,
        "face_up": face_up,
        "quad": _quad(x, 0, x + 63, 88),
        "visible_fraction": visible,
        "index_visible": index_visible,
        "index_legible": index_visible and legible,
        "width_px": 63.0,
    }


def test_scoring_counts_right_wrong_unknown_and_duplicates():
    scene = _scene(_card("QH", 0), _card("7S", 100), _card("2D", 200, index_visible=False), _card("BACK", 300, False))
    dets = [
        CardDetection("QH", True, 0.9, _quad(0, 0, 63, 88), (0, 0, 63, 88), 1, (), None, ((2, 2, 10, 20),)),
        CardDetection("8S", True, 0.9, _quad(100, 0, 163, 88), (100, 0, 163, 88), 1, (), None, ((102, 2, 110, 20),)),
        CardDetection("2D", True, 0.9, _quad(200, 0, 263, 88), (200, 0, 263, 88), 1, (), None, ((202, 2, 210, 20),)),
        CardDetection(UNKNOWN, True, 0.2, _quad(100, 0, 163, 88), (100, 0, 163, 88)),
        CardDetection("BACK", False, 0.9, _quad(300, 0, 363, 88), (300, 0, 363, 88)),
        CardDetection("BACK", False, 0.8, _quad(302, 0, 365, 88), (302, 0, 365, 88)),
    ]
    score = score_scene(scene, dets)
    summary = summarise([score])
    assert summary["face_up"]["cards"] == 2  # the 2D shows no index: it does not count, and reading it is no error
    assert summary["face_up"]["recall"] == 0.5 and summary["face_up"]["precision"] == 0.5
    assert summary["face_up"]["unknown_reports"] == 1
    assert summary["face_down"]["recall"] == 1.0 and summary["duplicates"] == 1


def test_reports_on_no_card_are_counted_unknown_ones_too_but_not_those_on_a_card_that_does_not_count():
    scene = _scene(_card("QH", 0), _card("2D", 200, index_visible=False), _card("BACK", 300, False))
    dets = [
        CardDetection(UNKNOWN, True, 0.2, _quad(500, 0, 563, 88), (500, 0, 563, 88)),  # the cloth
        CardDetection("AS", True, 0.4, _quad(600, 0, 663, 88), (600, 0, 663, 88)),  # the cloth
        CardDetection(UNKNOWN, True, 0.2, _quad(200, 0, 263, 88), (200, 0, 263, 88)),  # a card, index hidden
        CardDetection(UNKNOWN, True, 0.2, _quad(300, 0, 363, 88), (300, 0, 363, 88)),  # a face-down card
    ]
    up = summarise([score_scene(scene, dets)])["face_up"]
    assert up["reports_off_card"] == 2 and up["unknown_reports"] == 3 and up["reported_wrong"] == 1


def test_recall_over_legible_cards_leaves_out_the_smeared_ones_but_precision_still_counts_them():
    scene = _scene(_card("QH", 0), _card("7S", 100, legible=False), _card("2D", 200, legible=False))
    dets = [
        CardDetection("QH", True, 0.9, _quad(0, 0, 63, 88), (0, 0, 63, 88), 1, (), None, ((2, 2, 10, 20),)),
        CardDetection("8S", True, 0.9, _quad(100, 0, 163, 88), (100, 0, 163, 88), 1, (), None, ((102, 2, 110, 20),)),
    ]
    up = summarise([score_scene(scene, dets)])["face_up"]
    assert up["cards"] == 3 and up["recall"] == 1 / 3
    assert up["legible_cards"] == 1 and up["legible_recall"] == 1.0
    assert up["precision"] == 0.5  # naming a smeared card wrongly is still wrong


def test_corner_quads_are_the_labelled_index_regions_whatever_the_corner_order():
    # a card from a rendered scene, and the corner quads the labeller wrote for it
    card = np.array([[520.93, 327.489], [565.443, 281.112], [646.444, 325.922], [603.467, 375.929]], np.float32)
    labelled = [
        [[520.93, 327.489], [529.197, 318.876], [549.179, 330.476], [540.976, 339.253]],
        [[618.065, 322.956], [625.627, 314.406], [646.444, 325.922], [638.957, 334.634]],
    ]
    expected = {tuple(np.round([*np.min(q, axis=0), *np.max(q, axis=0)], 0)) for q in np.array(labelled)}
    for turn in range(4):
        for quad in (np.roll(card, turn, axis=0), np.roll(card[::-1], turn, axis=0)):
            boxes = {tuple(np.round([*q.min(axis=0), *q.max(axis=0)], 0)) for q in corner_quads(quad)}
            assert len(boxes) == 4 and expected <= boxes


def test_cards_without_a_found_index_get_their_corners_probed():
    read = _found("card", 100, 100, 163, 188)
    unread = _found("card", 300, 100, 363, 188)
    found = [read, unread, _found("index", 102, 102, 113, 124)]
    probes = with_probes(found)[len(found) :]
    assert len(probes) == 4 and all(f.kind == "index" and 300 <= f.box[0] < f.box[2] <= 363 for f in probes)
    assert all(f.score < unread.score for f in probes)


def test_choosing_a_head_keeps_the_base_when_refits_do_not_generalise():
    """Labels that are noise: a refit learns the fitting crops by heart and reads held-out ones no better, so the
    base layer is kept and enrolling cannot make the deck read worse."""
    rng = np.random.default_rng(1)
    classes = ("AS", "KH", NONE)
    centres = rng.normal(0, 3, (3, 8))
    truth = [classes[i % 3] for i in range(300)]
    x = (np.array([centres[classes.index(c)] for c in truth]) + rng.normal(0, 0.5, (300, 8))).astype(np.float32)
    base = DeckHead("base", classes, centres.astype(np.float32), -0.5 * (centres**2).sum(1).astype(np.float32))
    noise = [classes[i] for i in rng.integers(0, 3, 300)]
    held_out = np.arange(300) % 5 == 4
    choice = choose_head(base, x, noise, held_out, "mine")
    assert choice.pull is None and choice.head is base
    assert choice.held_out_after == choice.held_out_before


def test_choosing_a_head_refits_and_calibrates_when_held_out_scenes_gain():
    classes, base, labels, x = _deck_features(2, 400, 1.5)
    held_out = np.arange(400) % 5 == 4
    choice = choose_head(base, x, labels, held_out, "mine")
    assert choice.pull is not None and choice.held_out_after > choice.held_out_before + 0.3
    assert choice.head.name == "mine"
    # calibrated: on held-out crops the mean confidence is close to the accuracy, not far above it
    probs = choice.head.probs(x[held_out], classes)
    assert abs(probs.max(axis=1).mean() - choice.held_out_after) < 0.1


def test_the_bench_scores_an_enrolment_with_the_deck_head_in_use_only_after_and_prints_it():
    from types import SimpleNamespace

    from vision.recognise.bench import bench_enrolment, enrolment_lines

    _ok, jpeg = cv2.imencode(".jpg", np.zeros((100, 80, 3), np.uint8))
    scene = BenchScene(jpeg.tobytes(), [_card("QH", 0)], 10.0, 0.0, 0.0, 0.0, "mine")

    class Stub:
        """Reads the queen only with the enrolled deck."""

        deck = None

        def recognise(self, frame):
            seen = CardDetection("QH", True, 0.9, _quad(0, 0, 63, 88), (0, 0, 63, 88))
            return [seen] if self.deck is not None else []

    head = SimpleNamespace(index_corners=(0, 2))
    enrolled = SimpleNamespace(
        head=head, scenes=5, crops=40, seconds=1.0, chosen={"matcher weight": 20.0, "temperature": None},
        held_out_what="corner crops showing an index", held_out_before=0.5, held_out_after=0.75,
    )  # fmt: skip
    stub = Stub()
    report = bench_enrolment(stub, Path("decks/mine"), [scene], lambda deck_dir: enrolled)
    assert report["before"]["recall"] == 0.0 and report["after"]["recall"] == 1.0 and stub.deck is None
    assert report["deck"] == "mine" and report["eval_scenes"] == 1 and report["index_corners"] == [0, 2]
    text = "\n".join(enrolment_lines(report, "rectified recogniser", "corner crops"))
    assert "Enrolment of mine for the rectified recogniser" in text and "index corners [0, 2]" in text
    held_out = "corner crops showing an index of the held-out enrolment scenes read right: 50.00% -> 75.00%"
    assert f"{held_out} (matcher weight 20)" in text
    assert enrolment_lines(None, "previous recogniser", "index crops") == []
