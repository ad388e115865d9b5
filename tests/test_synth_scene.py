"""Scene compositor: labels agree with pixels, occlusion and frame edges are counted, output is reproducible, and
the YOLO export is well-formed. Uses a procedural deck so no Debian card package is needed."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from vision.synth.backgrounds import PROCEDURAL_KINDS, BackgroundSpec, render_table
from vision.synth.camera import Camera, apply_homography
from vision.synth.deckdir import load_deck
from vision.synth.export import CLASSES, bench_scenes, generate_dataset, write_procedural_deck
from vision.synth.occluders import OccluderSpec
from vision.synth.scene import CardSpec, fixed_spec, random_spec, render_scene
from vision.synth.sheet import contact_sheet, distribution_report

MARK = (255, 0, 0)  # pure blue patch in the printed top-left corner of the ace of spades


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    root = tmp_path_factory.mktemp("deck")
    write_procedural_deck(root)
    ace = cv2.imread(str(root / "AS.png"))
    ace[4:20, 4:16] = MARK
    cv2.imwrite(str(root / "AS.png"), ace)
    return load_deck(root)


def _card(x=0.0, y=0.0, rot=0.0, code="AS", face_up=True):
    return CardSpec(code=code, face_up=face_up, x_mm=x, y_mm=y, rotation_deg=rot, glossy=False)


def _polygon_mask(quad, shape, grow):
    """Quad mask grown (grow > 0) or shrunk (grow < 0) by |grow| pixels."""
    mask = np.zeros(shape, np.uint8)
    cv2.fillPoly(mask, [np.round(np.array(quad) * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
    kernel = np.ones((2 * abs(grow) + 1, 2 * abs(grow) + 1), np.uint8)
    return (cv2.dilate(mask, kernel) if grow > 0 else cv2.erode(mask, kernel)).astype(bool)


@pytest.mark.parametrize(("tilt", "yaw", "rot"), [(0.0, 0.0, 0.0), (32.0, 40.0, 37.0)])
def test_quad_covers_exactly_the_card_pixels(deck, tilt, yaw, rot):
    camera = Camera(height_mm=500.0, tilt_deg=tilt, yaw_deg=yaw, hfov_deg=60.0)
    empty = render_scene(fixed_spec([], camera=camera), [deck])
    scene = render_scene(fixed_spec([_card(10.0, -5.0, rot)], camera=camera), [deck])
    diff = np.abs(scene.image.astype(int) - empty.image.astype(int)).max(axis=2) > 25
    (card,) = scene.objects
    inside = _polygon_mask(card.quad, diff.shape, -2)
    outside = ~_polygon_mask(card.quad, diff.shape, 2)
    assert diff[inside].mean() > 0.97
    assert not diff[outside].any()
    assert card.visible_fraction == 1.0 and card.code == "AS" and card.face_up
    # orientation: the blue mark printed at the card's top-left sits next to quad[0]
    tl, br = np.array(card.quad[0]), np.array(card.quad[2])
    probe = np.round(tl + (br - tl) * 0.06).astype(int)
    b, g, r = scene.image[probe[1], probe[0]].astype(int)
    assert b > 180 and g < 80 and r < 80


def test_straight_down_camera_sees_the_table_upright():
    camera = Camera(height_mm=800.0, tilt_deg=0.0, yaw_deg=0.0, hfov_deg=70.0)
    centre, right, away = apply_homography(camera.table_to_image(), np.array([[0, 0], [100, 0], [0, 100]], float))
    assert np.allclose(centre, [640, 360])
    assert right[0] > centre[0] and abs(right[1] - centre[1]) < 1e-6
    assert away[1] < centre[1] and abs(away[0] - centre[0]) < 1e-6


def test_tilted_camera_foreshortens_the_far_side():
    camera = Camera(height_mm=800.0, tilt_deg=35.0, yaw_deg=0.0, hfov_deg=70.0)
    near, far = (
        np.ptp(apply_homography(camera.table_to_image(), np.array([[-50, y], [50, y]], float))[:, 0])
        for y in (-200, 200)
    )
    assert far < near * 0.9


def test_hand_over_a_corner_hides_that_corner_only(deck):
    # Card at the origin, upright: its top-left index is near (-26, 33) mm; the palm centre is 45 mm past the wrist.
    hand = OccluderSpec("hand", -26.0, -12.0, 0.0, 1.0, (120, 150, 200), (90, 60, 40), 80.0, 7)
    scene = render_scene(fixed_spec([_card()], occluders=[hand]), [deck])
    card, hand_label = scene.objects
    assert hand_label.code == "hand" and hand_label.subtype == "hand" and hand_label.z == 1
    assert not card.corners[0].visible and card.corners[0].visible_fraction < 0.2
    assert card.corners[1].visible and card.corners[1].visible_fraction == 1.0
    assert card.visible_fraction < 0.9


def test_card_across_the_frame_edge_is_clipped(deck):
    camera = Camera(height_mm=600.0, tilt_deg=0.0, yaw_deg=0.0, hfov_deg=60.0)
    left_edge_x, _ = apply_homography(camera.image_to_table(), np.array([[0.0, 360.0]]))[0]
    scene = render_scene(fixed_spec([_card(left_edge_x, 0.0)], camera=camera), [deck])
    (card,) = scene.objects
    assert 0.4 < card.visible_fraction < 0.6
    assert card.box[0] == 0.0 and min(p[0] for p in card.quad) < 0
    assert not card.corners[0].visible and card.corners[1].visible


def test_lower_card_reports_the_overlap(deck):
    scene = render_scene(fixed_spec([_card(0.0, 0.0, code="2H"), _card(31.5, 0.0, code="3H")]), [deck])
    below, above = scene.objects
    assert (below.z, above.z) == (0, 1)
    assert above.visible_fraction == 1.0
    assert below.visible_fraction == pytest.approx(0.5, abs=0.05)
    assert below.corners[0].visible and not below.corners[1].visible


def test_face_down_card_is_labelled_back(deck):
    scene = render_scene(fixed_spec([_card(code="KD", face_up=False)]), [deck])
    (card,) = scene.objects
    assert (card.code, card.face_up, card.subtype) == ("BACK", False, "KD")


def test_same_seed_same_bytes_other_seed_other_scene(deck):
    def make(seed):
        return render_scene(random_spec(np.random.default_rng(seed)), [deck])

    first, again, other = make(11), make(11), make(12)
    assert first.image.tobytes() == again.image.tobytes()
    assert first.to_json() == again.to_json()
    assert first.image.tobytes() != other.image.tobytes()
    data = json.loads(first.to_json())
    assert data["width"] == 1280 and data["height"] == 720 and isinstance(data["objects"], list)


def test_random_specs_cover_the_brief():
    rng = np.random.default_rng(3)
    specs = [random_spec(rng, width=640, height=360) for _ in range(300)]
    counts = [len(s.cards) for s in specs]
    assert min(counts) == 1 and max(counts) == 25
    assert all(len({c.code for c in s.cards}) == len(s.cards) for s in specs)
    layouts = {part for s in specs for part in s.layout.split("+")}
    assert layouts == {"scatter", "pile", "fan", "row"}
    assert any(o.kind == "hand" for s in specs for o in s.occluders)
    assert {o.kind for s in specs for o in s.occluders} >= {"phone", "cup", "coin", "pen"}
    report = distribution_report(specs)
    assert report["camera_height_mm"]["min"] >= 280 and report["camera_height_mm"]["max"] <= 1200
    assert 500 <= report["camera_height_mm"]["median"] <= 700  # weighted to where webcams stand over a table
    assert report["camera_tilt_deg"]["max"] <= 40 and report["camera_hfov_deg"]["min"] >= 55


@pytest.mark.parametrize("kind", PROCEDURAL_KINDS)
def test_procedural_tables_have_texture_and_perspective(kind):
    spec = BackgroundSpec(kind, 0, 5, 10.0, (0.0, 0.0), 1.0, (0.5, 0.6, 0.7))
    camera = Camera(height_mm=700.0, tilt_deg=30.0, yaw_deg=0.0, hfov_deg=65.0, width=320, height=180)
    table = render_table(spec, camera, [])
    assert table.shape == (180, 320, 3) and table.dtype == np.float32
    assert table.std() > 2.0
    photo_spec = BackgroundSpec("photo", 3, 5, 0.0, (0.0, 0.0), 1.0, (0.5, 0.6, 0.7))
    assert render_table(photo_spec, camera, []).std() > 2.0  # falls back to procedural wood


def test_effects_change_pixels_not_labels(deck):
    cards = [_card(0.0, 0.0), _card(40.0, 10.0, 20.0, "QC")]
    clean = render_scene(fixed_spec(cards), [deck])
    spec = random_spec(np.random.default_rng(0))
    noisy = render_scene(fixed_spec(cards, effects=spec.effects, seed=1), [deck])
    assert clean.image.tobytes() != noisy.image.tobytes()
    assert [o.quad for o in clean.objects] == [o.quad for o in noisy.objects]
    assert [o.visible_fraction for o in clean.objects] == [o.visible_fraction for o in noisy.objects]


def _read_labels(path):
    return [line.split() for line in path.read_text().splitlines()]


def test_detect_export_is_well_formed_resumable_and_worker_independent(deck, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    result = generate_dataset(one, 3, 9, [deck], "detect", workers=1, progress=False, backgrounds=[])
    assert result["written"] == 3 and result["samples"] > 0
    assert generate_dataset(one, 3, 9, [deck], "detect", workers=1, progress=False, backgrounds=[])["skipped"] == 3
    generate_dataset(two, 3, 9, [deck], "detect", workers=2, progress=False, backgrounds=[])
    images = sorted((one / "images" / "train").glob("*.jpg"))
    labels = sorted((one / "labels" / "train").glob("*.txt"))
    assert [p.stem for p in images] == [p.stem for p in labels] and len(images) == 3
    for label in labels:
        assert label.read_bytes() == (two / "labels" / "train" / label.name).read_bytes()
        for row in _read_labels(label):
            assert len(row) == 5 and 0 <= int(row[0]) < len(CLASSES)
            assert all(0.0 <= float(v) <= 1.0 for v in row[1:])
    meta = json.loads((one / "meta" / "train" / f"{images[0].stem}.json").read_text())
    assert "objects" in meta
    yaml = (one / "data.yaml").read_text()
    assert "train: images/train" in yaml and f"  {len(CLASSES) - 1}: BACK" in yaml


def test_obb_and_cls_exports_are_well_formed(deck, tmp_path):
    generate_dataset(tmp_path / "obb", 3, 4, [deck], "obb", workers=1, progress=False, backgrounds=[])
    rows = [r for p in (tmp_path / "obb" / "labels" / "train").glob("*.txt") for r in _read_labels(p)]
    assert rows and all(len(r) == 9 and 0 <= int(r[0]) < len(CLASSES) for r in rows)
    assert all(0.0 <= float(v) <= 1.0 for r in rows for v in r[1:])
    generate_dataset(tmp_path / "cls", 4, 4, [deck], "cls", workers=1, progress=False, backgrounds=[])
    crops = list((tmp_path / "cls" / "train").glob("*/*.png"))
    assert crops and all(p.parent.name in CLASSES and p.parent.name != "BACK" for p in crops)
    assert cv2.imread(str(crops[0])).shape[:2] == (132, 94)


def test_contact_sheet_draws_a_grid(deck, tmp_path):
    rng = np.random.default_rng(2)
    scenes = [render_scene(random_spec(rng, width=640, height=360), [deck]) for _ in range(3)]
    out = contact_sheet(scenes, tmp_path / "sheet.png", cols=2, tile_width=320)
    sheet = cv2.imread(str(out))
    assert sheet.shape == (2 * 180 + 4, 2 * 320 + 4, 3)
    report = distribution_report(scenes)
    assert report["card_visible_fraction"]["max"] <= 1.0 and report["card_width_px"]["n"] > 0


@pytest.mark.slow
def test_bench_scenes_reports_rates(deck):
    report = bench_scenes(6, 0, decks=[deck])
    assert report["scenes_per_s_1_worker"] > 0 and report["scenes_per_s_2_workers"] > 0


def test_decks_without_a_joker_never_get_one_drawn(tmp_path) -> None:
    write_procedural_deck(tmp_path / "deck")
    (tmp_path / "deck" / "JOKER.png").unlink()
    jokerless = load_deck(tmp_path / "deck")
    assert "JOKER" not in jokerless.codes
    out = tmp_path / "ds"
    generate_dataset(out, 12, 3, [jokerless], "detect", workers=1, progress=False, backgrounds=[])
    codes = [
        obj["code"]
        for meta in (out / "meta" / "train").glob("*.json")
        for obj in json.loads(meta.read_text())["objects"]
    ]
    assert len(codes) > 12, "the scenes must hold cards"
    assert "JOKER" not in codes


def test_a_court_of_a_deck_that_prints_no_rank_in_its_corners_is_labelled_illegible(deck):
    """Guyenne's courts show a suit pip in the corner and no rank letter (session 22): no reader can name them from
    there, so the labeller measures their indices as illegible; its number cards, and another deck's courts, stay
    legible."""
    from dataclasses import replace

    from vision.synth.legibility import COURTS_WITHOUT_RANK, is_legible
    from vision.synth.pieces import from_deck

    cards = [_card(-40.0, 0.0, code="KD"), _card(40.0, 0.0, code="7D")]
    for name, court_legible in ((deck.name, True), (next(iter(COURTS_WITHOUT_RANK)), False)):
        scene = render_scene(fixed_spec(cards), [replace(from_deck(deck), name=name)])
        legible = {o.code: any(is_legible(c.legibility) for c in o.corners if c.visible) for o in scene.cards()}
        assert legible == {"KD": court_legible, "7D": True}
