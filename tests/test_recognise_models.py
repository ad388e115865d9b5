"""The trained recogniser (models/cards-*.onnx through ONNX Runtime) on generated pictures of a deck from a family
held out of training: it finds the right cards, reports none twice, reads backs, and `tabletop detect` keeps its
JSON contract and its per-file errors."""

import itertools
import json
import shutil

import cv2
import numpy as np
import pytest

from companion_ui.cli import main
from vision.recognise.layout import LayoutError, layout_deck
from vision.recognise.recogniser import UNKNOWN, Recogniser
from vision.synth.camera import Camera
from vision.synth.deckdir import FACE_CODES, load_deck
from vision.synth.decks import render_debian_decks
from vision.synth.effects import random_effects
from vision.synth.scene import CardSpec, fixed_spec, render_scene

HELD_OUT_DECK = "gnome-plastic"  # family 'plastic' is in the test split (decks.split_families, seed 0)


@pytest.fixture(scope="module")
def recogniser():
    return Recogniser()


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    return render_debian_decks(tmp_path_factory.mktemp("decks"), only=[HELD_OUT_DECK], progress=False)[0]


def _scene(deck, cards, seed, tilt=15.0, height=620.0):
    rng = np.random.default_rng(seed)
    effects = random_effects(rng)
    effects = type(effects)(**{**effects.__dict__, "motion": (0.0, 0.0), "defocus_sigma": 0.0})
    spec = fixed_spec(
        cards, Camera(height_mm=height, tilt_deg=tilt, yaw_deg=0.0, hfov_deg=60.0), effects=effects, seed=seed
    )
    return render_scene(spec, [deck], [])


ROW = [
    CardSpec(code, True, -200 + 80 * i, 0.0, (-1) ** i * 12.0 * i, False)
    for i, code in enumerate(["AS", "10H", "QD", "7C", "KS", "2H"])
]
FAN = [CardSpec(code, True, -60 + 18 * i, 30.0, -20 + 8 * i, False) for i, code in enumerate(["3S", "8H", "JC", "6D"])]
MIXED = [
    CardSpec("9S", True, -150, -60, 35.0, False),
    CardSpec("4D", False, 0, -60, -10.0, False),
    CardSpec("JOKER", True, 150, -60, 80.0, False),
    CardSpec("5H", False, -80, 80, 100.0, False),
    CardSpec("KC", True, 90, 80, 190.0, False),
]


# A regression floor, not the bar: the shipped models read 8 of these 13 readable cards right and find 1 of the 2
# backs (models/cards.md); the bar (99% on held-out families) is measured by `tabletop bench vision`, not
# by a unit test.
MIN_RIGHT_OF_13 = 7


def test_finds_cards_in_clean_scenes_and_never_reports_one_twice(recogniser, deck):
    right = readable = backs_found = 0
    for cards, seed in ((ROW, 1), (FAN, 2), (MIXED, 3)):
        scene = _scene(deck, cards, seed)
        truth = {o.code for o in scene.cards() if o.face_up and any(c.visible for c in o.corners)}
        backs = sum(not o.face_up and o.visible_fraction > 0.3 for o in scene.cards())
        found = recogniser.recognise(scene.image)
        labels = [d.label for d in found if d.face_up and d.label != UNKNOWN]
        assert len(labels) == len(set(labels)), f"a card reported twice: {labels}"
        assert sum(not d.face_up for d in found) <= backs, "a back reported where no card lies face down"
        backs_found += sum(not d.face_up for d in found)
        assert all(0.0 <= d.confidence <= 1.0 and d.quad.shape == (4, 2) for d in found)
        right += len(truth & set(labels))
        readable += len(truth)
    assert readable == 13
    assert backs_found >= 1
    assert right >= MIN_RIGHT_OF_13, f"read {right} of {readable} cards right"


def test_detect_json_contract_and_bad_files(deck, tmp_path, capsys):
    good = tmp_path / "table.jpg"
    cv2.imwrite(str(good), _scene(deck, ROW, 1).image)
    text = tmp_path / "notes.jpg"
    text.write_text("not a picture")
    annotated = tmp_path / "annotated"
    assert main(["detect", str(good), str(text), "--json", "--annotate", str(annotated)]) == 1
    out = capsys.readouterr()
    results = json.loads(out.out)
    assert [r["image"] for r in results] == [str(good), str(text)]
    first = results[0]
    assert (first["width"], first["height"]) == (1280, 720)
    for det in first["detections"]:
        assert set(det) >= {"label", "face_up", "confidence", "quad", "box"}
        assert len(det["quad"]) == 4 and all(len(p) == 2 for p in det["quad"]) and len(det["box"]) == 4
        assert 0.0 <= det["confidence"] <= 1.0
    assert {d["label"] for d in first["detections"]} & {"AS", "10H", "QD", "7C", "KS", "2H"}
    assert "not a picture" in results[1]["error"] and "notes.jpg" in out.err
    assert (annotated / "table-cards.jpg").is_file()


def test_missing_models_are_a_clear_error(tmp_path, capsys):
    assert main(["detect", str(tmp_path), "--models", str(tmp_path)]) == 2  # no pictures there either
    picture = tmp_path / "a.png"
    cv2.imwrite(str(picture), np.zeros((10, 10, 3), np.uint8))
    assert main(["detect", str(picture), "--models", str(tmp_path / "none")]) == 2
    assert "model file not found" in capsys.readouterr().err


def _layout_photos(deck):
    """The layout the enrol command asks for, over two photographs: spades and hearts, then the rest."""
    order = [*FACE_CODES, "JOKER"]
    rows = [order[i : i + 13] for i in range(0, 53, 13)]
    photos = []
    for part, seed in ((rows[:2], 11), (rows[2:], 12)):
        cards = []
        for r, row in enumerate(part):
            cards += [CardSpec(code, True, -432 + 72 * c, 140 - 100 * r, 0.0, False) for c, code in enumerate(row)]
        if len(part) == 3:
            cards.append(CardSpec("AS", False, -432 + 72 * 2, 140 - 100 * 2, 0.0, False))
        photos.append((f"photo{seed}", _scene(deck, cards, seed, tilt=0.0, height=820.0).image))
    return photos


@pytest.mark.xfail(
    strict=True,
    reason="the shipped finder now outlines every laid-out card, but its outlines are loose: only 35 of the 53 "
    "warped pictures match their card (50 asked); the layout path needs a better-trained finder (issue 5 is open)",
)
def test_a_laid_out_deck_becomes_a_deck_directory(recogniser, deck, tmp_path):
    result = layout_deck(_layout_photos(deck), recogniser.finder, tmp_path / "mine", "mine")
    mine = load_deck(result.deck_dir)
    assert "JOKER" in mine.codes

    def small(image):
        grey = cv2.cvtColor(image[..., :3], cv2.COLOR_BGR2GRAY)
        return cv2.resize(grey, (40, 56), interpolation=cv2.INTER_AREA).astype(np.float32).ravel()

    truth = {code: small(deck.image(code)) for code in mine.codes}
    right = 0
    for code in truth:
        got = small(mine.image(code))
        turned = got.reshape(56, 40)[::-1, ::-1].ravel()
        best = max(truth, key=lambda c: max(np.corrcoef(truth[c], got)[0, 1], np.corrcoef(truth[c], turned)[0, 1]))
        right += best == code
    assert right >= 50, f"only {right} of 53 layout pictures match their card"


def test_a_layout_with_cards_missing_is_refused(recogniser, deck, tmp_path):
    photos = _layout_photos(deck)[:1]
    with pytest.raises(LayoutError, match="expected 52"):
        layout_deck(photos, recogniser.finder, tmp_path / "mine", "mine")
    assert not (tmp_path / "mine").exists()


def test_enrol_writes_a_deck_head_that_detect_uses(deck, tmp_path, capsys):
    head = tmp_path / "plastic.npz"
    assert main(["enrol", str(deck.path), "--scenes", "10", "--out", str(head), "--recogniser", "previous"]) == 0
    said = capsys.readouterr().out
    assert head.is_file() and "index crops from 10 scenes" in said and "held-out" in said
    assert "for the previous recogniser" in said
    picture = tmp_path / "row.png"
    cv2.imwrite(str(picture), _scene(deck, ROW, 3).image)
    assert main(["detect", str(picture), "--json", "--deck", str(head)]) == 0
    assert json.loads(capsys.readouterr().out)[0]["detections"]


def test_enrol_refuses_too_few_scenes_and_a_missing_deck(deck, tmp_path, capsys):
    assert main(["enrol", str(deck.path), "--scenes", "2"]) == 2
    assert "at least 5 scenes" in capsys.readouterr().err
    assert main(["enrol", str(tmp_path / "nope")]) == 2
    assert "nope" in capsys.readouterr().err


def _copy(deck, where):
    return shutil.copytree(deck.path, where)


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda d: (d / "QH.png").unlink(), ["missing QH (each card needs a file named by its code"]),
        (
            lambda d: (d / "QH.png").rename(d / "IMG_1234.png"),
            ["missing QH", "IMG_1234.png is not named by a card code; expected pictures named AS..KS"],
        ),
    ],
    ids=["missing-card", "stray-picture"],
)
def test_enrol_names_a_missing_card_or_a_stray_picture_without_a_traceback(deck, tmp_path, capsys, spoil, said):
    mine = _copy(deck, tmp_path / "mine")
    spoil(mine)
    (mine / "notes.txt").write_text("not a picture, and not a problem")
    assert main(["enrol", str(mine), "--scenes", "5", "--out", str(tmp_path / "mine.npz")]) == 2
    err = capsys.readouterr().err
    assert err.count("tabletop enrol: error: deck '") == 1 and "Traceback" not in err
    for text in said:
        assert text in err
    assert not (tmp_path / "mine.npz").exists()


def test_enrol_and_synth_take_a_deck_of_pictures_of_different_sizes(deck, tmp_path, capsys):
    """A player's scans: the back and the joker from elsewhere, a few faces scanned at another resolution."""
    mine = _copy(deck, tmp_path / "mine")
    width, height = deck.size
    for code, scale in (("BACK", 1.6), ("JOKER", 0.7), ("AS", 1.3), ("10H", 0.85)):
        picture = cv2.imread(str(mine / f"{code}.png"), cv2.IMREAD_UNCHANGED)
        cv2.imwrite(str(mine / f"{code}.png"), cv2.resize(picture, (round(width * scale), round(height * scale))))
    assert load_deck(mine).size == deck.size
    head = tmp_path / "mine.npz"
    assert main(["enrol", str(mine), "--scenes", "5", "--out", str(head)]) == 0
    assert head.is_file() and "corner crops" in capsys.readouterr().out
    sheet = tmp_path / "sheet.png"
    args = ["synth", "sheet", "--decks", str(mine), "--out", str(sheet), "--n", "2", "--size", "320x240"]
    assert main(args) == 0
    assert sheet.is_file() and json.loads(capsys.readouterr().out.split("\n", 1)[1])["camera_height_mm"]["n"] == 2


def test_the_rectified_recogniser_reads_held_out_cards_and_never_reports_one_twice(deck):
    """The default recogniser (issue 18) on the same clean scenes: a regression floor, not the bar (it read 10 of
    the 13 readable cards when it shipped; `tabletop bench vision` measures the bar)."""
    from vision.recognise.load import load_recogniser
    from vision.recognise.rectified import RectifiedRecogniser

    rectified = load_recogniser()
    assert isinstance(rectified, RectifiedRecogniser)
    right = readable = 0
    for cards, seed in ((ROW, 1), (FAN, 2), (MIXED, 3)):
        scene = _scene(deck, cards, seed)
        truth = {o.code for o in scene.cards() if o.face_up and any(c.visible for c in o.corners)}
        found = rectified.recognise(scene.image)
        labels = [d.label for d in found if d.face_up and d.label != UNKNOWN]
        assert len(labels) == len(set(labels)), f"a card reported twice: {labels}"
        assert all(0.0 <= d.confidence <= 1.0 and d.quad.shape == (4, 2) for d in found)
        right += len(truth & set(labels))
        readable += len(truth)
    assert right >= 8, f"read {right} of {readable} cards right"


CLOSE_UPS = (  # a phone held over the table: cards about 330 and 520 px wide in a 1280 px frame
    ([CardSpec("QD", True, -20, 0, -15, False), CardSpec("4S", True, 25, 10, 20, False)], 200.0),
    ([CardSpec("KH", True, 0, 0, 95, False)], 130.0),
)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_close_up_is_read_as_its_cards_and_nothing_else(deck, seed):
    """Session 23: a card this large is past the finder's trained sizes, and its pips and art read as small cards
    (before it: 4S read at 0.46 among six other reports, KH read as 10C beside a BACK and UNKNOWNs). The coarse
    pass finds it whole, and the fragment rule drops what its face made."""
    from vision.recognise.load import load_recogniser

    rectified = load_recogniser()
    for cards, height in CLOSE_UPS:
        scene = _scene(deck, cards, seed, tilt=10.0, height=height)
        found = sorted(d.label for d in rectified.recognise(scene.image))
        assert found == sorted(c.code for c in cards)


def test_detect_can_use_either_recogniser_and_says_which_one_an_enrolled_deck_needs(deck, tmp_path, capsys):
    good = tmp_path / "table.png"
    cv2.imwrite(str(good), _scene(deck, ROW, 1).image)
    assert main(["detect", str(good), "--json", "--recogniser", "previous"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["detections"]
    head = tmp_path / "deck.npz"
    np.savez(
        head, meta=json.dumps({"name": "mine", "classes": ["AS", "none"]}), weight=np.zeros((2, 3)), bias=np.zeros(2)
    )
    assert main(["detect", str(good), "--recogniser", "rectified", "--deck", str(head)]) == 2
    assert "use --recogniser previous" in capsys.readouterr().err


def test_the_stage_bench_breaks_the_readers_top1_down_by_card_width_and_frame(deck):
    from vision.recognise.bench import render_scenes
    from vision.recognise.bench_stages import WIDTH_EDGES, frame_conditions, stage_bench, width_bin
    from vision.recognise.rectified import RectifiedRecogniser

    scenes = render_scenes([deck.path], 3, seed=5, workers=1)
    stages = stage_bench(RectifiedRecogniser(), scenes)
    reader = stages["reader_true_corners"]
    found = stages["reader_found_corners"]  # the found ones among them, read along the finder's frame and the true
    assert 0 < found["crops"] <= reader["crops"]
    assert 0.0 <= found["top1"] <= 1.0 and 0.0 <= found["top1_true_frame"] <= 1.0
    widths = {k: v for k, v in reader["by_condition"].items() if k.startswith("card ")}
    assert reader["crops"] > 0 and sum(v["crops"] for v in widths.values()) == reader["crops"]
    right = sum(round(v["top1"] * v["crops"]) for v in widths.values())
    assert right == round(reader["top1"] * reader["crops"])
    frames = {c for s in scenes for c in frame_conditions(s)}
    assert frames <= set(reader["by_condition"])
    assert width_bin(59.9) == "card 0-60 px wide" and width_bin(60) == "card 60-80 px wide"
    assert width_bin(5000) == f"card >= {WIDTH_EDGES[-1]} px wide" == "card >= 130 px wide"


def test_the_flat_sweep_reads_a_held_out_deck_clear_and_loses_it_to_heavy_blur(deck):
    """The reader alone on gnome-plastic's own pictures (a test family): clear and large it reads them all but a
    few; smeared 14 px on a small card, far fewer. A sweep that could not tell those apart would say nothing."""
    from vision.recognise.bench import sweep_lines
    from vision.recognise.bench_stages import flat_card_view, reader_sweep
    from vision.recognise.rectified import RectifiedRecogniser

    faults = {"clear": (0.0, 0), "motion 14 px": (0.0, 14)}
    sweep = reader_sweep(RectifiedRecogniser(), [deck.path], widths=(65, 130), faults=faults)
    top1 = sweep["top1"]
    assert sweep["crops_per_cell"] == 104  # 52 faces, two index corners each
    assert top1["130 px"]["clear"] >= 0.95
    assert top1["65 px"]["motion 14 px"] < top1["130 px"]["clear"] - 0.2
    jokers = len([c for c in deck.codes if c.startswith("JOKER")])
    assert sweep["jokers_clear"]["crops"] == 2 * jokers * 2  # two corners, at each of the two widths
    lines = sweep_lines(sweep)
    assert "motion 14 px" in lines[1] and lines[2].split()[0] == "65"
    frame, quad = flat_card_view(deck.image("QH"), 80, 0.0, 0, 0.0, 1)
    assert quad[1, 0] - quad[0, 0] == 80 and frame.dtype == np.uint8


def test_the_shipped_8_bit_reader_reads_as_its_float_graph_does(deck):
    """The runtime reads with an 8-bit graph quantised from the float one beside it (for speed): on a held-out
    deck's corners, clear and smeared, the two must give the same top label almost everywhere."""
    from tests.quantised import eight_bit_and_float
    from vision.recognise.models import models_dir
    from vision.recognise.rectified import CORNER_READER_FILE

    a, b = eight_bit_and_float(models_dir() / CORNER_READER_FILE, deck, deck.codes)
    assert len(a) == 2 * len(deck.codes)
    assert (a.argmax(axis=1) == b.argmax(axis=1)).mean() >= 0.97
    assert np.abs(a - b).max() < 0.3  # the same graph, only rounded: no reading turned upside down


def test_quantise_refuses_to_overwrite_its_float_source_and_a_file_that_is_not_a_crop_file(tmp_path, capsys):
    from vision.train.quantise import crop_blobs
    from vision.train.quantise import main as quantise_main

    graph = tmp_path / "reader.onnx"
    with pytest.raises(SystemExit):
        quantise_main(["corner-reader", "--float", str(graph), "--crops", "x.npz", "--out", str(graph)])
    assert "--out must differ from --float" in capsys.readouterr().err
    stray = tmp_path / "stray.npz"
    np.savez(stray, y=np.zeros(3))
    with pytest.raises(ValueError, match="no 'x' array"):
        next(crop_blobs(stray, 10))


# ----- enrolment for the rectified reader -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def corner_reader():
    from vision.recognise.corner_reader import CornerReader
    from vision.recognise.models import models_dir
    from vision.recognise.rectified import CORNER_READER_FILE

    return CornerReader(models_dir() / CORNER_READER_FILE)


def test_the_held_out_deck_is_found_to_print_its_index_top_left_and_bottom_right(deck, corner_reader):
    """gnome-plastic prints an index in the top-left corner and its half-turn twin; the other two hold pips, court
    art or nothing (looked at, card by card). Enrolment reads that off the deck's own pictures."""
    from vision.recognise.enrol_rectified import deck_index_corners

    assert deck_index_corners(deck, corner_reader) == (0, 2)


@pytest.fixture(scope="module")
def deck_matcher(deck):
    from vision.recognise.matcher import DeckMatcher, card_aspects, cut_templates

    return DeckMatcher(*cut_templates({code: deck.image(code) for code in deck.codes}, (0, 2), card_aspects(deck.size)))


def _on_grey(picture, margin):
    """A card picture laid on a grey table `margin` pixels wide all round, and its outline there."""
    from vision.recognise.matcher import FLAT_TABLE

    h, w = picture.shape[:2]
    alpha = picture[..., 3:4].astype(np.float32) / 255
    table = np.full((h + 2 * margin, w + 2 * margin, 3), FLAT_TABLE, np.float32)
    table[margin : margin + h, margin : margin + w] = picture[..., :3] * alpha + FLAT_TABLE * (1 - alpha)
    quad = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32) + margin
    return table.astype(np.uint8), quad


# gnome-plastic's 108 index corners cut along corner frames jittered as the corner finder errs (samples.jitter: 3%
# of the card's width in place, 8% in scale, 3 degrees), twice each: 210 of 216 read right when written (the misses:
# turns of 6-8 degrees, 6D as 8D or 5D, clubs as spades, at the matcher's half resolution).
MIN_JITTERED_RIGHT = 0.95


def test_the_matcher_reads_the_decks_own_corners_right_even_where_the_corner_finder_errs(
    deck, deck_matcher, corner_reader
):
    from vision.recognise.corners import corner_crop, printed_corner
    from vision.recognise.labels import NONE, READER_CLASSES
    from vision.recognise.matcher import cut_flat, label_of
    from vision.recognise.samples import jitter

    names, faces = np.array(READER_CLASSES), np.array(READER_CLASSES) != NONE
    truth = [label_of(code) for code in deck.codes for _ in (0, 2)]
    clean = np.stack([cut_flat(deck.image(code), k)[0] for code in deck.codes for k in (0, 2)])
    scores = deck_matcher.scores(clean, corner_reader.read_crops(clean, enrolled=False).probs)
    assert list(names[np.where(faces, scores, -9).argmax(axis=1)]) == truth
    rng = np.random.default_rng(3)
    jittered, labels = [], []
    for _ in range(2):
        for code in deck.codes:
            table, quad = _on_grey(deck.image(code), 60)
            for k in (0, 2):
                jittered.append(corner_crop(table, *jitter(rng, *printed_corner(quad, k))))
                labels.append(label_of(code))
    crops = np.stack(jittered)
    scores = deck_matcher.scores(crops, corner_reader.read_crops(crops, enrolled=False).probs)
    right = np.mean(names[np.where(faces, scores, -9).argmax(axis=1)] == np.array(labels))
    assert right >= MIN_JITTERED_RIGHT, f"{right:.3f} of {len(labels)} jittered corners read right"


def test_a_stale_deck_head_is_refused(deck, deck_matcher, corner_reader):
    from vision.recognise.enrol import EnrolError
    from vision.recognise.enrol_rectified import RectifiedDeckHead, file_sha256

    corner_reader.deck = RectifiedDeckHead("mine", deck_matcher, (0, 2), 20.0, 1.0, file_sha256(corner_reader.path))
    try:
        with pytest.raises(EnrolError, match="enrolled for another corner reader"):
            corner_reader.deck = RectifiedDeckHead("old", deck_matcher, (0, 2), 20.0, 1.0, "0" * 64)
        assert corner_reader.deck.name == "mine"
    finally:
        corner_reader.deck = None


def test_a_deck_head_carrying_an_adapted_reader_reads_with_it_and_only_while_set(
    deck, deck_matcher, corner_reader, tmp_path
):
    """`tabletop enrol --adapt` puts the reader fine-tuned on the deck inside the deck head (the runtime needs no
    torch to read it). Stood in for here by the shipped reader's float graph, which reads a little differently from
    the 8-bit one: the reader must read with the head's graph while the deck is set, and with its own after."""
    import hashlib

    from vision.recognise.corner_reader import CornerReader
    from vision.recognise.enrol import EnrolError
    from vision.recognise.enrol_rectified import RectifiedDeckHead, load_rectified_head
    from vision.recognise.matcher import cut_flat

    float_file = corner_reader.path.with_name(corner_reader.path.name.replace(".onnx", ".float.onnx"))
    graph = float_file.read_bytes()
    head = RectifiedDeckHead("mine", deck_matcher, (0, 2), 0.0, 1.0, hashlib.sha256(graph).hexdigest(), "", graph)
    loaded = load_rectified_head(head.save(tmp_path / "mine.deck.npz"))
    assert loaded.reader_graph == graph
    crops = np.stack([cut_flat(deck.image(code), 0)[0] for code in deck.codes])
    own = corner_reader.read_crops(crops).probs
    by_float = CornerReader(float_file).read_crops(crops).probs
    assert np.abs(own - by_float).max() > 1e-4  # the two graphs do read differently
    try:
        corner_reader.deck = loaded
        np.testing.assert_allclose(corner_reader.read_crops(crops).probs, by_float, atol=1e-5)
    finally:
        corner_reader.deck = None
    np.testing.assert_allclose(corner_reader.read_crops(crops).probs, own, atol=1e-6)
    damaged = RectifiedDeckHead("bad", deck_matcher, (0, 2), 0.0, 1.0, head.reader_sha256, "", graph[:-9] + b"x" * 9)
    with pytest.raises(EnrolError, match="its adapted reader is damaged"):
        corner_reader.deck = damaged
    assert corner_reader.deck is None


def test_enrol_adapt_is_refused_for_the_previous_recogniser_and_for_negative_minutes(deck, tmp_path, capsys):
    assert main(["enrol", str(deck.path), "--adapt", "-1", "--out", str(tmp_path / "x.npz")]) != 0
    assert "--adapt must be minutes of training" in capsys.readouterr().err
    args = ["enrol", str(deck.path), "--adapt", "5", "--recogniser", "previous", "--out", str(tmp_path / "y.npz")]
    assert main(args) != 0
    assert "--adapt fine-tunes the rectified reader" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.npz"))


def test_enrol_adapt_without_the_training_environment_says_how_to_get_it(deck, tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("the runtime environment's test: torch is installed here")
    assert main(["enrol", str(deck.path), "--adapt", "2", "--out", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err
    assert "needs the training environment" in err and "scripts/setup-train.sh" in err
    assert not (tmp_path / "x.npz").exists()


# Enrolment's gain on fresh scenes of the deck (another seed than enrolment's). With 20 enrolment scenes it was
# 0.851 -> 0.908 on 8 fresh scenes when written; session 15's reader names far fewer cards wrongly to begin with, so 20
# scenes no longer show the matcher's gain beyond chance and enrolment keeps the reader alone: it takes 200.
# Session 21: with session 20's reader (7-bit weights) the matcher chosen from 200 scenes gains 1.9 points of index
# crops over 200 fresh scenes of another seed (77.7 -> 79.6%; cards read right 891 -> 902, wrongly 108 -> 104), and
# 0.5 to 3.5 points on each run of about 27 of them: 8 scenes (87 crops) were too few to show it. On these 48 scenes
# (454 index crops) it was 78.9 -> 81.3%, cards named wrongly 34 -> 20.
ENROL_SCENES = 200  # the default: with fewer, the matcher is not chosen at the shipped cut-offs (session 17)
FRESH_SCENES = 48
MIN_GAIN = 0.01


@pytest.mark.slow  # about 2 minutes: an end-to-end enrolment
def test_a_rectified_enrolment_writes_a_head_that_detect_reads_and_that_reads_the_deck_better(deck, tmp_path, capsys):
    from vision.recognise.enrol import enrolment_scenes
    from vision.recognise.enrol_rectified import (
        RectifiedDeckHead,
        card_outcomes,
        load_deck_head,
        reader_labels,
        scene_corner_crops,
        top1,
    )
    from vision.recognise.labels import NONE
    from vision.recognise.load import load_recogniser
    from vision.recognise.rectified import RectifiedRecogniser

    head = tmp_path / "plastic.npz"
    assert main(["enrol", str(deck.path), "--scenes", str(ENROL_SCENES), "--out", str(head)]) == 0
    said = capsys.readouterr().out
    assert "for the rectified recogniser" in said and f"from {ENROL_SCENES} scenes" in said and "held-out" in said
    assert "index corners: top-left, bottom-right" in said
    enrolled = load_deck_head(head)
    assert isinstance(enrolled, RectifiedDeckHead) and enrolled.index_corners == (0, 2) and enrolled.weight > 0
    picture = tmp_path / "row.png"
    cv2.imwrite(str(picture), _scene(deck, ROW, 3).image)
    assert main(["detect", str(picture), "--json", "--deck", str(head)]) == 0
    labels = {d["label"] for d in json.loads(capsys.readouterr().out)[0]["detections"]}
    assert labels & {"AS", "10H", "QD", "7C", "KS", "2H"}
    recogniser = load_recogniser(deck=enrolled)
    assert isinstance(recogniser, RectifiedRecogniser) and recogniser.deck is enrolled
    # fresh scenes of the deck (another seed than enrolment's), cut as enrolment cuts them: their indices read better,
    # and the cards as the recogniser reads them from their corners are named wrongly less often
    rows, cards = [], 0
    for i, scene in enrolment_scenes(deck, FRESH_SCENES, seed=77):
        rows += [(*r[:3], cards + r[3]) for r in scene_corner_crops(scene, np.random.default_rng([77, i]), (0, 2))]
        cards += len(scene.cards())
    crops = np.stack([r[0] for r in rows])
    truth = reader_labels([r[1] for r in rows], [r[2] for r in rows])
    card = np.unique([r[3] for r in rows], return_inverse=True)[1].ravel()
    after = recogniser.reader.read_crops(crops).probs
    before = recogniser.reader.read_crops(crops, enrolled=False).probs
    index = truth != NONE
    gain = f"{top1(before[index], truth[index]):.3f} -> {top1(after[index], truth[index]):.3f} on {index.sum()} crops"
    assert index.sum() > 300 and top1(after[index], truth[index]) >= top1(before[index], truth[index]) + MIN_GAIN, gain
    confidence = recogniser.thresholds.min_confidence
    wrong_before = np.sum(card_outcomes(before, truth, card, confidence) < 0)
    wrong_after = np.sum(card_outcomes(after, truth, card, confidence) < 0)
    assert wrong_after < wrong_before, f"cards named wrongly {wrong_before} -> {wrong_after}"


def test_a_deck_head_for_the_other_recogniser_or_a_corrupt_one_is_a_clear_error(deck, deck_matcher, tmp_path, capsys):
    from vision.recognise.enrol_rectified import RectifiedDeckHead, file_sha256
    from vision.recognise.models import models_dir
    from vision.recognise.rectified import CORNER_READER_FILE

    picture = tmp_path / "table.png"
    cv2.imwrite(str(picture), _scene(deck, ROW, 1).image)
    stamp = file_sha256(models_dir() / CORNER_READER_FILE)
    rectified = RectifiedDeckHead("mine", deck_matcher, (0, 2), 20.0, 1.0, stamp).save(tmp_path / "mine.npz")
    assert main(["detect", str(picture), "--recogniser", "previous", "--deck", str(rectified)]) == 2
    err = capsys.readouterr().err
    assert "mine.npz" in err and "use --recogniser rectified" in err
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(rectified.read_bytes()[:200])
    assert main(["detect", str(picture), "--deck", str(corrupt)]) == 2
    err = capsys.readouterr().err
    assert "corrupt.npz: not a deck head file" in err and "Traceback" not in err
    stale = RectifiedDeckHead("old", deck_matcher, (0, 2), 20.0, 1.0, "0" * 64).save(tmp_path / "old.npz")
    assert main(["detect", str(picture), "--deck", str(stale)]) == 2
    err = capsys.readouterr().err
    assert "old.npz: enrolled for another corner reader" in err and "enrol the deck again" in err


def test_bench_scenes_rendered_in_one_process_are_of_the_decks_asked_for(deck, tmp_path):
    """The enrolment test renders its deck's fresh scenes after the bench's own, in the same process when
    workers=1: they must not be drawn from the decks loaded first."""
    from vision.recognise.bench import render_scenes

    grey = _copy(deck, tmp_path / "grey-deck")
    for picture in grey.glob("*.png"):
        image = cv2.imread(str(picture), cv2.IMREAD_UNCHANGED)
        image[..., :3] = 128
        cv2.imwrite(str(picture), image)
    first = render_scenes([deck.path], 1, seed=5, workers=1)[0]
    second = render_scenes([grey], 1, seed=5, workers=1)[0]
    assert second.deck == "grey-deck" and second.jpeg != first.jpeg


def test_the_close_up_bench_renders_large_cards_and_reads_them_both_ways(deck):
    """`tabletop bench vision`'s close-ups: a phone held over a few cards, read as shipped and as before session 23
    (one finder pass, no fragment rule) on the same frames, the shipped thresholds left as they were."""
    from vision.recognise.bench import closeup_bench, closeup_lines, render_scenes
    from vision.recognise.load import load_recogniser

    scenes = render_scenes([deck.path], 3, seed=7, workers=1, closeup=True)
    widths = [c["width_px"] for s in scenes for c in s.cards]
    assert np.median(widths) > 200  # the table scenes' median is about 97 px
    rectified = load_recogniser()
    shipped = rectified.thresholds
    result = closeup_bench(rectified, scenes)
    assert rectified.thresholds is shipped and shipped.coarse and shipped.fragments
    assert result["scenes"] == 3 and {"shipped", "one_scale"} <= result.keys()
    assert "one scale" in "\n".join(closeup_lines(result))


def test_the_tuner_picks_every_cut_off_from_its_grid_and_leaves_a_missing_face_head_off(deck):
    """The thresholds are chosen on rendered scenes from the tuner's grid; a reader with no face head (the one
    shipped before session 13) gets `face_up` written as off (1.01), not whichever value the grid listed first."""
    from vision.recognise.bench import render_scenes
    from vision.recognise.rectified import RectifiedRecogniser, RectifiedThresholds
    from vision.train.tune_rectified import CARD_GRID, DOWN_GRID, UP_GRID, tune

    recogniser = RectifiedRecogniser(thresholds=RectifiedThresholds())
    chosen, summary = tune(recogniser, render_scenes([deck.path], 4, seed=9, workers=1))
    for name, values in {**UP_GRID, **DOWN_GRID, **CARD_GRID}.items():
        assert getattr(chosen, name) in values, name
    if "face" not in recogniser.reader.outputs:
        assert chosen.face_up == 1.01
    if "card" not in recogniser.reader.outputs:  # a reader with no card head reads every corner
        assert chosen.min_card == 0.0
    assert 0.0 <= summary["face_up_min_pr"] <= 1.0 and 0.0 <= summary["face_down_min_pr"] <= 1.0
    # calibration curves for one corner, several and none: monotone, within 0-1
    for curve in (chosen.calibration_lone, chosen.calibration_multi, chosen.calibration_blank):
        assert len(curve) in (0, 11) and all(0.0 <= a <= b <= 1.0 for a, b in itertools.pairwise(curve))


def test_the_tuners_check_scores_a_models_folder_on_validation_scenes(deck):
    from vision.recognise.bench import render_scenes
    from vision.recognise.models import models_dir
    from vision.train.tune_rectified import check_line

    line = check_line(models_dir(), render_scenes([deck.path], 2, seed=21, workers=1))
    assert line.startswith(str(models_dir())) and "legible R" in line and "calibration error" in line


def test_the_shipped_refiner_turns_a_found_corners_edges_back_onto_the_card(deck):
    """The corner refiner (session 17) on a held-out deck's flat cards: handed each printed corner with its edges
    turned 25 degrees (both the same way, as the finder errs), it puts them back within a few degrees, and its 8-bit
    graph reads as the float one beside it."""
    from vision.recognise.bench_stages import flat_card_view
    from vision.recognise.corner_refiner import CornerRefiner
    from vision.recognise.corners import Corner, CornerFinder, printed_corner
    from vision.recognise.models import models_dir
    from vision.recognise.rectified import CORNER_REFINER_FILE, CORNERS_FILE

    def turned(v: np.ndarray, deg: float) -> np.ndarray:
        t = np.deg2rad(deg)
        return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]) @ v

    def degrees(u: np.ndarray, v: np.ndarray) -> float:
        return float(np.degrees(np.arccos(np.clip(u @ v / np.linalg.norm(u) / np.linalg.norm(v), -1, 1))))

    int8 = CornerRefiner(models_dir() / CORNER_REFINER_FILE)
    float_graph = CornerRefiner(models_dir() / CORNER_REFINER_FILE.replace(".onnx", ".float.onnx"))
    before, after, agree = [], [], []
    for k, code in enumerate(deck.codes[:24]):
        frame, quad = flat_card_view(deck.image(code), 90 + (k % 3) * 30, 0.0, 0.0, 17.0 * k, k)
        true = [printed_corner(quad, c) for c in (0, 2)]
        found = [Corner("up", 1.0, p, turned(a, 25), turned(b, 25)) for p, a, b in true]
        refined = int8.refine(frame, found)
        for (_, a, b), f, r, g in zip(true, found, refined, float_graph.refine(frame, found), strict=True):
            before.append(max(degrees(f.a, a), degrees(f.b, b)))
            after.append(max(degrees(r.a, a), degrees(r.b, b)))
            agree.append(max(degrees(r.a, g.a), degrees(r.b, g.b)))
    assert min(before) > 24
    assert np.median(after) < 6 and np.mean(np.array(after) < 15) >= 0.9, sorted(after)
    assert np.median(agree) < 2
    # and on the corners the finder finds in a rendered frame: session 21 found the 8-bit graph then read on a CPU
    # without VNNI as it was never trained to (median 9 degrees from the float graph, a quarter of the corners
    # turned by more than 30), until its weights were quantised to 7 bits (`vision.train.quantise`)
    frame = _scene(deck, ROW, 3).image
    found = CornerFinder(models_dir() / CORNERS_FILE).find(frame, 0.3)
    apart = [
        max(degrees(r.a, g.a), degrees(r.b, g.b))
        for r, g in zip(int8.refine(frame, found), float_graph.refine(frame, found), strict=True)
    ]
    assert len(apart) > 20 and np.median(apart) < 2 and np.mean(np.array(apart) > 30) <= 0.05, sorted(apart)


def test_an_unsure_corner_is_read_again_at_other_scales_and_the_readings_averaged(deck, corner_reader):
    """The shipped reader on a held-out card's corner, with every corner counted unsure: its reading is the mean of
    the crop read once and the crops cut at `REREAD_SCALES`, each read alone; a sure corner is read once."""
    from vision.recognise.corner_reader import REREAD_SCALES, rescaled

    card = cv2.resize(deck.image("7H")[:, :, :3], (250, 350))
    frame = np.full((500, 500, 3), 60, np.uint8)
    frame[75:425, 125:375] = card
    corner = (np.array([125.0, 75.0]), np.array([250.0, 0.0]), np.array([0.0, 350.0]))
    kept = corner_reader.reread_below
    corner_reader.reread_below = 0.0
    once = corner_reader.read(frame, [corner])
    views = [corner_reader.read(frame, [rescaled(corner, s)]).probs[0] for s in REREAD_SCALES]
    corner_reader.reread_below = 1.01
    try:
        again = corner_reader.read(frame, [corner, corner])
    finally:
        corner_reader.reread_below = kept
    expected = (once.probs[0] + sum(views)) / (1 + len(REREAD_SCALES))
    assert np.allclose(again.probs, expected, atol=1e-6)
    assert not np.allclose(again.probs[0], once.probs[0])  # the other scales did read differently
    assert np.array_equal(corner_reader.read(frame, [corner]).probs, once.probs)  # by default: read once
    assert corner_reader.read(frame, []).probs.shape == (0, len(corner_reader.classes))
