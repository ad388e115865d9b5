"""Realism statistics and the separability classifier behave as their definitions say on constructed images, and
the throughput bench reports what REALISM.md quotes. Uses a procedural deck, so no Debian package is needed."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.synth.bench import bench_synth
from vision.synth.export import write_procedural_deck
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
