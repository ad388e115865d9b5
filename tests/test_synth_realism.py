"""Realism statistics and the separability classifier behave as their definitions say on constructed images, the
throughput bench reports what REALISM.md quotes, and the camera model and tables do what their docstrings claim
(one JPEG, deterministic by seed, labels untouched, seamless textures). Uses a procedural deck, so no Debian package
is needed."""

from __future__ import annotations

import pickle
from dataclasses import replace

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.synth import effects as fx
from vision.synth.backgrounds import (
    PROCEDURAL_KINDS,
    BackgroundSpec,
    FlatItem,
    Surround,
    floor_to_image,
    periodic_noise,
    procedural_texture,
    random_background_spec,
    render_table,
)
from vision.synth.bench import bench_synth
from vision.synth.camera import Camera, apply_homography
from vision.synth.export import generate_dataset, scene_for, write_procedural_deck
from vision.synth.realism import (
    COLOUR_STATS,
    LUMINANCE_STATS,
    compare,
    cross_validated_auc,
    edge_density,
    hue_entropy,
    image_stats,
    jpeg_blockiness,
    ks_statistic,
    laplacian_variance,
    noise_sigma,
    realism_report,
    roc_auc,
)
from vision.synth.scene import CardSpec, fixed_spec, render_scene


def _grey(value=128, shape=(120, 160)):
    return np.full(shape, value, np.uint8)


def _textured(seed=0, shape=(240, 320)):
    """Blocks of random grey with sharp edges: something for edge and sharpness measures to see."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (shape[0] // 16, shape[1] // 16), dtype=np.uint8)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST)


def _noisy(image, sigma, seed=0):
    rng = np.random.default_rng(seed)
    return np.clip(image + rng.normal(0, sigma, image.shape), 0, 255).astype(np.uint8)


def test_flat_grey_has_no_edges_no_sharpness_no_noise():
    flat = _grey()
    assert edge_density(flat) == 0.0
    assert laplacian_variance(flat) < 1e-6
    assert noise_sigma(flat) < 1e-6
    assert jpeg_blockiness(flat) == 0.0


def test_noise_raises_noise_estimate_roughly_to_its_sigma():
    estimates = [noise_sigma(_noisy(_grey(), sigma)) for sigma in (2.0, 5.0, 10.0)]
    assert estimates[0] < estimates[1] < estimates[2]
    assert estimates[2] == pytest.approx(10.0, rel=0.25)


def test_noise_estimate_ignores_edges_and_shading():
    ramp = np.tile(np.linspace(40, 200, 320, dtype=np.float32), (240, 1)).astype(np.uint8)
    assert noise_sigma(_textured()) < 0.5
    assert noise_sigma(ramp) < 0.5


def test_blur_lowers_sharpness_and_edges():
    sharp = _textured()
    blurred = cv2.GaussianBlur(sharp, (0, 0), 3)
    assert laplacian_variance(blurred) < 0.2 * laplacian_variance(sharp)
    assert edge_density(blurred) < edge_density(sharp)
    assert edge_density(sharp) > 0.01


def test_jpeg_raises_blockiness():
    image = cv2.GaussianBlur(_noisy(_grey(), 20, seed=1), (0, 0), 2)
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 30])
    assert ok
    compressed = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE)
    assert jpeg_blockiness(compressed) > jpeg_blockiness(image) + 0.2
    assert abs(jpeg_blockiness(image)) < 0.1


def test_hue_entropy_counts_hues():
    one_hue = np.zeros((40, 60, 3), np.uint8)
    one_hue[:] = (0, 0, 255)
    two_hues = one_hue.copy()
    two_hues[:, 30:] = (255, 0, 0)
    assert hue_entropy(one_hue) == pytest.approx(0.0)
    assert hue_entropy(two_hues) == pytest.approx(1.0)
    assert hue_entropy(cv2.cvtColor(_textured(), cv2.COLOR_GRAY2BGR)) == 0.0


def test_image_stats_names_and_grey_mode():
    colour = cv2.cvtColor(_textured(), cv2.COLOR_GRAY2BGR)
    assert set(image_stats(colour)) == {*LUMINANCE_STATS, *COLOUR_STATS}
    assert set(image_stats(colour, grey_only=True)) == set(LUMINANCE_STATS)
    assert image_stats(_textured()) == image_stats(colour)  # grey and grey-as-BGR agree


def test_ks_statistic():
    assert ks_statistic([1, 2, 3], [1, 2, 3]) == 0.0
    assert ks_statistic([1, 2, 3], [10, 11]) == 1.0
    assert ks_statistic([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(0.5)


def test_roc_auc_orders_and_ties():
    labels = np.array([0, 0, 1, 1])
    assert roc_auc(np.array([0.1, 0.2, 0.8, 0.9]), labels) == 1.0
    assert roc_auc(np.array([0.9, 0.8, 0.2, 0.1]), labels) == 0.0
    assert roc_auc(np.array([0.5, 0.5, 0.5, 0.5]), labels) == 0.5


def _two_sets(shift, seed=0, n=(60, 150), dims=6):
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1, (n[0], dims))
    b = rng.normal(0, 1, (n[1], dims))
    b[:, 0] += shift
    return np.vstack([a, b]), np.array([0] * n[0] + [1] * n[1])


def test_classifier_separates_different_distributions():
    x, y = _two_sets(shift=3.0)
    assert cross_validated_auc(x, y, seed=0) > 0.95


def test_classifier_near_chance_on_identical_distributions():
    aucs = [cross_validated_auc(*_two_sets(shift=0.0, seed=s), seed=s) for s in range(3)]
    assert abs(np.mean(aucs) - 0.5) < 0.1
    assert cross_validated_auc(*_two_sets(0.0, seed=7), seed=7) == cross_validated_auc(*_two_sets(0.0, seed=7), seed=7)


def test_compare_names_the_driving_statistic():
    rng = np.random.default_rng(0)
    names = ("a", "b", "c")
    real = [{"a": rng.normal(), "b": rng.normal(), "c": rng.normal()} for _ in range(30)]
    synth = [{"a": rng.normal(), "b": rng.normal() + 4, "c": rng.normal()} for _ in range(60)]
    report = compare(real, synth, names)
    assert report["drivers"][0] == "b"
    assert report["stats"]["b"]["ks"] > 0.8
    assert report["auc_cv"] > 0.95
    assert report["auc_cv_without"]["b"] < 0.75  # the only real difference removed: close to chance


def test_realism_report_grey_real_set_uses_luminance_only(tmp_path):
    for i in range(6):
        cv2.imwrite(str(tmp_path / f"real{i}.png"), _noisy(_textured(seed=i), 3, seed=i))
    synth = [cv2.cvtColor(cv2.GaussianBlur(_textured(seed=10 + i), (0, 0), 2), cv2.COLOR_GRAY2BGR) for i in range(6)]
    report = realism_report(tmp_path, synth, workers=1)
    assert report["mode"] == "grey"
    assert set(report["stats"]) == set(LUMINANCE_STATS)
    assert report["n_real"] == 6 and report["n_synth"] == 6
    assert report["stats"]["noise_sigma"]["real"]["median"] > report["stats"]["noise_sigma"]["synth"]["median"]


def test_bench_synth_reports_expected_keys(tmp_path):
    write_procedural_deck(tmp_path / "deck")
    threads = cv2.getNumThreads()
    report = bench_synth(n=4, seed=0, size=(192, 108), decks_dir=tmp_path / "deck", cv_threads=1)
    assert cv2.getNumThreads() == threads  # the cap is the bench's, not the caller's
    assert report["cv_threads"] == 1
    assert {
        "n",
        "scenes_per_s_1_workers",
        "scenes_per_s_2_workers",
        "speedup",
        "projected_s_10000",
        "projected_gb_10000",
        "bytes_per_scene",
        "cpu_s_per_scene_1_workers",
        "cpu_utilisation_2_workers",
    } <= set(report)
    assert report["cpu_s_per_scene_2_workers"] > 0  # the pool's workers are counted, not just the parent
    assert report["n"] == 4 and report["scenes_per_s_1_workers"] > 0 and report["bytes_per_scene"] > 0


# ----------------------------------------------------------------------------------------------------- camera model


def _composite(seed=0, shape=(180, 320)):
    """A float composite like the scene renderer hands to finish: smooth table, a white card, a dark mark."""
    rng = np.random.default_rng(seed)
    image = cv2.resize(rng.uniform(60, 160, (9, 16, 3)).astype(np.float32), shape[::-1])
    image[40:120, 100:160] = 240.0
    image[60:80, 110:130] = 20.0
    return image


def _params(seed=0, **changes):
    return replace(fx.random_effects(np.random.default_rng(seed)), **changes)


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    return write_procedural_deck(tmp_path_factory.mktemp("deck"))


def test_finish_is_deterministic_by_seed():
    glossy = np.zeros((180, 320), np.float32)
    params = _params(3)
    first = fx.finish(_composite(), glossy, params, seed=7)
    again = fx.finish(_composite(), glossy, params, seed=7)
    other = fx.finish(_composite(), glossy, params, seed=8)
    assert first.tobytes() == again.tobytes() and first.jpeg == again.jpeg
    assert first.tobytes() != other.tobytes()


def test_finish_compresses_exactly_once_and_keeps_the_bytes():
    params = _params(1, jpeg_quality=80)
    frame = fx.finish(_composite(), np.zeros((180, 320), np.float32), params, seed=1)
    assert isinstance(frame, fx.CameraFrame) and frame.dtype == np.uint8
    decoded = cv2.imdecode(np.frombuffer(frame.jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert np.array_equal(decoded, frame)
    assert fx.frame_jpeg(frame, 95) is frame.jpeg  # stored as those very bytes, not encoded again
    changed = frame.copy()
    changed[0, 0] = 255 - changed[0, 0]
    assert fx.frame_jpeg(changed, 95) != frame.jpeg  # a derived array has no bytes of its own
    frame[0, 0] = 255 - frame[0, 0]  # changed in place after decoding: the checksum notices
    assert fx.frame_jpeg(frame, 95) != frame.jpeg


def test_camera_frame_survives_pickling_with_its_bytes():
    frame = fx.camera_jpeg(np.full((32, 48, 3), 100, np.uint8), 85)
    back = pickle.loads(pickle.dumps(frame))
    assert np.array_equal(back, frame) and back.jpeg == frame.jpeg
    assert fx.frame_jpeg(back, 95) == frame.jpeg
    view = frame[4:20]
    assert view.jpeg is None  # a crop is not the encoded frame


def test_no_jpeg_and_no_effects_give_plain_frames():
    image = _composite()
    clean = fx.finish(image.copy(), np.zeros((180, 320), np.float32), fx.EffectParams.none(), seed=0)
    assert not isinstance(clean, fx.CameraFrame)
    assert np.array_equal(clean, np.clip(image + 0.5, 0, 255).astype(np.uint8))
    raw = fx.finish(image.copy(), np.zeros((180, 320), np.float32), _params(2, jpeg_quality=0), seed=0)
    assert not isinstance(raw, fx.CameraFrame) and raw.dtype == np.uint8


def test_exporter_writes_the_camera_bytes(deck, tmp_path):
    generate_dataset(tmp_path, 2, 5, [deck], "detect", workers=1, progress=False, backgrounds=[], size=(320, 180))
    for index in range(2):
        scene = scene_for(index, 5, [deck], [], (320, 180))
        written = (tmp_path / "images" / "train" / f"5_{index:06d}.jpg").read_bytes()
        assert written == scene.image.jpeg
        assert np.array_equal(cv2.imdecode(np.frombuffer(written, np.uint8), cv2.IMREAD_COLOR), scene.image)


def test_jpeg_quality_range_is_a_webcams():
    qualities = [fx.random_effects(np.random.default_rng(s)).jpeg_quality for s in range(300)]
    assert min(qualities) >= 70 and max(qualities) <= 95
    with pytest.raises(ValueError, match="jpeg_subsampling must be one of"):
        fx.encode_jpeg(np.zeros((8, 8, 3), np.uint8), 90, "411")


def test_effects_keep_labels(deck):
    cards = [CardSpec("AS", True, 0.0, 0.0, 10.0, True), CardSpec("KH", True, 30.0, 20.0, 50.0, False)]
    camera = Camera(height_mm=500.0, tilt_deg=20.0, yaw_deg=30.0, hfov_deg=60.0, width=320, height=180)
    clean = render_scene(fixed_spec(cards, camera=camera), [deck])
    strong = _params(4, chromatic_aberration=0.0015, defocus_sigma=2.0, motion=(9.0, 30.0), sharpen=(1.5, 1.8))
    shot = render_scene(fixed_spec(cards, camera=camera, effects=strong, seed=3), [deck])
    assert [o.quad for o in clean.objects] == [o.quad for o in shot.objects]
    assert [o.visible_fraction for o in clean.objects] == [o.visible_fraction for o in shot.objects]
    assert [c.visible for o in clean.objects for c in o.corners] == [c.visible for o in shot.objects for c in o.corners]


@settings(max_examples=15, deadline=None)
@given(target=st.floats(0.3, 0.6), level=st.floats(0.05, 0.9))
def test_auto_exposure_lands_the_output_mean_near_its_target(target, level):
    """Whatever the scene's own brightness, within the camera's gain range the finished frame's mean luma lands
    near the target."""
    linear = np.full((36, 64, 3), level, np.float32) * np.linspace(0.5, 1.5, 64, dtype=np.float32)[None, :, None]
    params = replace(fx.EffectParams.none(), exposure_target=target)
    gain = fx.auto_exposure_gain(linear, params, np.eye(3, dtype=np.float32))
    out = np.clip(linear * gain, 0, 1) ** (1 / fx.DISPLAY_GAMMA)
    if fx.AE_GAIN_RANGE[0] < gain < fx.AE_GAIN_RANGE[1]:
        assert float(out.mean()) == pytest.approx(target, abs=0.04)


def test_warm_light_is_warm_and_white_balance_removes_it():
    warm, daylight = fx.illuminant_gains(2700), fx.illuminant_gains(6500)
    assert warm[2] > warm[1] > warm[0]  # BGR: red strongest under tungsten
    assert float(warm @ fx.LUMA_BGR) == pytest.approx(1.0, rel=1e-4)
    assert np.allclose(daylight, 1.0, atol=0.1)
    grey_under_lamp = np.full((4, 4, 3), 0.3, np.float32) * warm
    balanced = cv2.transform(grey_under_lamp, fx.colour_matrix(fx.EffectParams.none(), warm))
    assert np.ptp(balanced[0, 0]) < 1e-3  # full white balance: grey again
    partial = replace(fx.EffectParams.none(), awb_strength=0.7)
    left = cv2.transform(grey_under_lamp, fx.colour_matrix(partial, warm))[0, 0]
    assert left[2] > left[1] > left[0]  # a partial balance leaves some of the lamp's warmth


def test_chroma_noise_is_coarser_than_luma_noise():
    noise = fx.noise_field((240, 320), seed=0, chroma_ratio=1.0)
    ycc = cv2.cvtColor(noise, cv2.COLOR_BGR2YCrCb)

    def neighbour_correlation(plane):
        return float(np.corrcoef(plane[:, :-1].ravel(), plane[:, 1:].ravel())[0, 1])

    assert neighbour_correlation(ycc[..., 0]) < 0.5 < neighbour_correlation(ycc[..., 1])
    assert float(np.std(ycc[..., 0])) == pytest.approx(1.0, rel=0.15)


def test_tone_curve_is_monotonic_and_spans_the_range():
    for seed in range(10):
        table = fx.tone_table(_params(seed))
        assert np.all(np.diff(table) >= -1e-6)
        assert table[-1] == pytest.approx(1.0, abs=1e-5) and table[0] <= 0.03


def test_sharpening_draws_halos_beside_edges():
    step = np.zeros((20, 40, 3), np.float32)
    step[:, :20], step[:, 20:] = 0.3, 0.7
    params = replace(fx.EffectParams.none(), sharpen=(1.0, 1.5))
    out = fx.noise_reduce_and_sharpen(step, params)
    assert out[10, 18, 1] < 0.29 and out[10, 21, 1] > 0.71  # under- and overshoot: the halo
    assert out[10, 2, 1] == pytest.approx(0.3, abs=1e-3)  # flat areas untouched


def test_chromatic_aberration_grows_towards_the_corners():
    image = np.zeros((181, 321, 3), np.float32)
    image[:, ::20] = 1.0  # vertical lines every 20 px, one through the centre
    out = fx.chromatic_aberration(image, 0.003)
    assert np.allclose(out[90, 160], image[90, 160], atol=1e-4)  # no shift at the centre
    xs = np.arange(290, 310)

    def centroid(channel):
        return float((out[90, 290:310, channel] * xs).sum() / out[90, 290:310, channel].sum())

    assert centroid(2) - centroid(1) > 0.3 and centroid(1) - centroid(0) > 0.3  # red outward, blue inward


# ----------------------------------------------------------------------------------------------------- tables


@pytest.mark.parametrize("kind", PROCEDURAL_KINDS)
def test_procedural_textures_tile_seamlessly(kind):
    """The step from the last column (row) to the first is no bigger than steps inside the texture: a repeat
    shows no seam (plank joints and pattern bands are inside steps too)."""
    texture = procedural_texture(kind, 11, (0.5, 0.6, 0.7), size=256).image.astype(np.float32)
    assert texture.std() > 2.0
    for axis in (0, 1):
        steps = np.abs(np.diff(texture, axis=axis, append=np.take(texture, [0], axis=axis))).mean(axis=(1 - axis, 2))
        assert steps[-1] <= 1.2 * steps[:-1].max() + 1.0


def test_periodic_noise_checks_its_grid():
    noise = periodic_noise(np.random.default_rng(0), 128, (64, 64))  # cells per 1024 texels: 8 across this tile
    assert noise.shape == (128, 128) and 0.3 < noise.std() < 1.5
    assert np.abs(noise[:, 0] - noise[:, -1]).mean() < 0.5
    with pytest.raises(ValueError, match="must divide the texture size"):
        periodic_noise(np.random.default_rng(0), 1024, (3, 8))
    with pytest.raises(ValueError, match="unknown procedural table 'marble'"):
        procedural_texture("marble", 0, (0.5, 0.5, 0.5))


def test_random_tables_cover_many_hues_edges_and_clutter():
    specs = [random_background_spec(np.random.default_rng(s), n_photos=5) for s in range(300)]
    hues = {
        int(cv2.cvtColor(np.array([[s.tint]], np.float32), cv2.COLOR_BGR2HSV)[0, 0, 0] // 30)
        for s in specs
        if max(s.tint) - min(s.tint) > 0.1
    }
    assert len(hues) >= 10  # of 12 hue sectors
    assert {s.source for s in specs} == {"photo", *PROCEDURAL_KINDS}
    assert 0.2 < np.mean([s.surround is not None for s in specs]) < 0.4
    assert 0.5 < np.mean([len(s.clutter) > 0 for s in specs]) < 0.8


def test_floor_lies_further_away_than_the_table():
    camera = Camera(height_mm=600.0, tilt_deg=25.0, yaw_deg=0.0, hfov_deg=65.0, width=320, height=180)
    foot = camera.position()[:2]
    points = np.array([foot, foot + np.array([200.0, 300.0])])
    on_table = apply_homography(camera.table_to_image(), points)
    on_floor = apply_homography(floor_to_image(camera, 700.0), points)
    assert np.allclose(on_table[0], on_floor[0], atol=1e-6)  # straight below the camera: same ray
    centre = np.array([160.0, 90.0])
    assert np.linalg.norm(on_floor[1] - centre) < np.linalg.norm(on_table[1] - centre)  # further: nearer the centre


def test_surround_and_clutter_change_the_table_where_they_are():
    camera = Camera(height_mm=700.0, tilt_deg=20.0, yaw_deg=0.0, hfov_deg=65.0, width=320, height=180)
    plain = BackgroundSpec("painted", 0, 3, 0.0, (0.0, 0.0), 1.0, (0.8, 0.8, 0.8))
    edge = Surround(((0.0, 0.2), (1.0, 0.2)), 700.0, "wood", 1, (0.2, 0.3, 0.4), 0.5, 2.0, 1.3)
    paper = FlatItem("paper", (0.8, 0.8), 10.0, (210.0, 297.0), (0.95, 0.95, 0.95), (0.2, 0.1, 0.1), 4)
    base = render_table(plain, camera, [])
    with_edge = render_table(replace(plain, surround=edge), camera, [])
    with_paper = render_table(replace(plain, clutter=(paper,)), camera, [])
    assert with_edge[:30].mean() < 0.7 * base[:30].mean()  # the floor beyond the edge is darker
    assert np.array_equal(with_edge[60:], base[60:])  # the table side is untouched
    changed = np.abs(with_paper - base).max(axis=2) > 10
    assert changed[130:, 230:].mean() > 0.3 and not changed[:60, :100].any()
