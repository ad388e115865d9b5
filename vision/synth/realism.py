"""How far synthetic scenes are from real photographs, measured on simple image statistics.

No labelled photos of our games exist, so this cannot measure detection accuracy on real tables. What it can
measure is whether the engine's frames are *trivially* told apart from camera frames: if a logistic regression on
a dozen global statistics (brightness, contrast, colour, sharpness, noise, JPEG blockiness) separates them, a
deep network certainly can, and will learn shortcuts that do not exist on a real table. A cross-validated AUC
near 0.5 is necessary for realism, not sufficient; the report says which statistics drive the separation so the
effects can be tuned where it matters.

Statistics are taken on images shrunk to ANALYSIS_WIDTH (about what a 640-pixel detector sees), so a 1280-pixel
render is not "sharper" than a 640-pixel photo merely by having more pixels; JPEG blockiness is the exception and
is measured at native resolution, where the 8x8 grid is. Greyscale real sets (ViSP's camera frames) are compared
with greyscale versions of the synthetic frames on the luminance statistics only, since saturation 0 would
separate them perfectly and say nothing about the engine.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.synth.backgrounds import load_table_textures
from vision.synth.camera import DEFAULT_IMAGE_SIZE
from vision.synth.components import load_components
from vision.synth.effects import frame_jpeg
from vision.synth.export import JPEG_QUALITY, scene_for

ANALYSIS_WIDTH = 640
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".pgm", ".ppm", ".bmp")
GREY_SPREAD = 8  # max channel spread (0-255) below which an image counts as greyscale
HUE_BINS = 18
HUE_MIN_SATURATION = 40  # pixels this grey have no meaningful hue
CANNY_THRESHOLDS = (100, 200)
ABLATION_DEPTH = 3
MAX_REAL_PER_DIR = 40  # camera sequences are hundreds of near-identical frames; spread a sample over each

OPENCV_DATA = Path("/usr/share/doc/opencv-doc/examples/data")
OPENCV_TEXT = Path("/usr/share/doc/opencv-doc/examples/text")
VISP = Path("/usr/share/visp-images-data/ViSP-images")
# Curated by eye: camera photographs only (no logos, paintings, renders, drawn shapes or scanned charts).
REAL_SETS: dict[str, tuple[Path, ...]] = {
    "opencv-photos": (
        *(
            OPENCV_DATA / name
            for name in (
                "aero1.jpg", "aero3.jpg", "aloeL.jpg", "apple.jpg", "baboon.jpg", "board.jpg", "building.jpg",
                "butterfly.jpg", "ela_original.jpg", "fruits.jpg", "graf1.png", "home.jpg", "left.jpg",
                "leuvenA.jpg", "licenseplate_motion.jpg", "messi5.jpg", "orange.jpg", "pca_test1.jpg",
                "rubberwhale1.png", "squirrel_cls.jpg", "stuff.jpg", "sudoku.png", "text_defocus.jpg",
                "text_motion.jpg",
            )
        ),
        *(OPENCV_TEXT / f"scenetext0{i}.jpg" for i in range(1, 7)),
    ),
    "visp-desk": (VISP / "mbt" / "cube", VISP / "cube", VISP / "mbt-depth" / "castel" / "castel", VISP / "mire-2"),
}  # fmt: skip

# ----------------------------------------------------------------------------------------------------- statistics


def is_grey(image: np.ndarray) -> bool:
    return image.ndim == 2 or int(np.ptp(image.astype(np.int16), axis=2).max()) < GREY_SPREAD


def to_bgr(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR) if image.ndim == 2 else image[..., :3]


def analysis_size(image: np.ndarray, width: int = ANALYSIS_WIDTH) -> np.ndarray:
    if image.shape[1] <= width:
        return image
    height = round(image.shape[0] * width / image.shape[1])
    return cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)


def edge_density(grey: np.ndarray) -> float:
    """Share of pixels on a Canny edge: clutter and texture, the cue a detector's background statistics rest on."""
    return float(np.count_nonzero(cv2.Canny(grey, *CANNY_THRESHOLDS))) / grey.size


def laplacian_variance(grey: np.ndarray) -> float:
    """The classic focus measure: renders are often sharper than any webcam."""
    return float(cv2.Laplacian(grey.astype(np.float32), cv2.CV_32F).var())


def noise_sigma(grey: np.ndarray) -> float:
    """Immerkaer's second-difference residual (zero on any linear shading, gain 6 on white noise), averaged over
    the flatter half of the image by Sobel gradient, as Tai and Yang do, so edges and texture are not counted as
    noise. A mean, not a median, because 8-bit residuals are integers and a median would come in steps."""
    img = grey.astype(np.float32)
    kernel = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)
    residual = np.abs(cv2.filter2D(img, -1, kernel))[1:-1, 1:-1]
    gradient = (np.abs(cv2.Sobel(img, cv2.CV_32F, 1, 0)) + np.abs(cv2.Sobel(img, cv2.CV_32F, 0, 1)))[1:-1, 1:-1]
    flat = gradient <= np.median(gradient)
    return float(np.sqrt(np.pi / 2) * residual[flat].mean() / 6.0)


def jpeg_blockiness(grey: np.ndarray) -> float:
    """Mean step across 8-pixel block boundaries over the mean step elsewhere, minus 1: 0 for an image that never
    saw a JPEG encoder, positive where blocks show. Needs native resolution (the grid is in source pixels)."""
    img = grey.astype(np.float32)
    steps = []
    for diff in (np.abs(np.diff(img, axis=1)), np.abs(np.diff(img, axis=0)).T):
        boundary = np.zeros(diff.shape[1], bool)
        boundary[7::8] = True
        steps.append((diff[:, boundary].mean(), diff[:, ~boundary].mean()))
    across, within = (sum(s[i] for s in steps) for i in (0, 1))
    return float(across / within - 1.0) if within > 0 else 0.0


def hue_entropy(bgr: np.ndarray) -> float:
    """Entropy (bits) of the hue histogram of coloured pixels, weighted by saturation: a felt table with red and
    black cards has few hues, a cluttered room many."""
    hsv = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)
    saturation = hsv[..., 1].astype(np.float32)
    weight = np.where(saturation >= HUE_MIN_SATURATION, saturation, 0.0)
    if weight.sum() == 0:
        return 0.0
    hist, _ = np.histogram(hsv[..., 0], bins=HUE_BINS, range=(0, 180), weights=weight)
    p = hist[hist > 0] / hist.sum()
    return float(-(p * np.log2(p)).sum())


def luminance_stats(grey: np.ndarray) -> dict[str, float]:
    mean = float(grey.mean()) / 255
    std = float(grey.std()) / 255
    return {
        "brightness_mean": mean,
        "brightness_std": std,
        "rms_contrast": std / max(mean, 1e-3),
        "edge_density": edge_density(grey),
        "log_laplacian_var": float(np.log1p(laplacian_variance(grey))),  # spans decades: one blurry photo
        # would otherwise dominate the fit
        "noise_sigma": noise_sigma(grey),
    }


def colour_stats(bgr: np.ndarray) -> dict[str, float]:
    b, g, r = (float(c) / 255 for c in bgr.reshape(-1, 3).mean(axis=0))
    saturation = float(cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)[..., 1].mean()) / 255
    return {"saturation_mean": saturation, "mean_b": b, "mean_g": g, "mean_r": r, "hue_entropy": hue_entropy(bgr)}


LUMINANCE_STATS = (
    "brightness_mean", "brightness_std", "rms_contrast", "edge_density", "log_laplacian_var", "noise_sigma",
    "jpeg_blockiness",
)  # fmt: skip
COLOUR_STATS = ("saturation_mean", "mean_b", "mean_g", "mean_r", "hue_entropy")


def image_stats(image: np.ndarray, grey_only: bool = False) -> dict[str, float]:
    """All statistics of one image (BGR, BGRA or grey uint8); grey_only skips the colour ones."""
    bgr = to_bgr(image)
    native_grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    small = analysis_size(bgr)
    stats = luminance_stats(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY))
    stats["jpeg_blockiness"] = jpeg_blockiness(native_grey)
    if not grey_only:
        stats |= colour_stats(small)
    return stats


# ----------------------------------------------------------------------------------------------------- comparison


def ks_statistic(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sample Kolmogorov-Smirnov D: the largest gap between the two empirical CDFs."""
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, side="right") / len(a)
    cdf_b = np.searchsorted(b, grid, side="right") / len(b)
    return float(np.abs(cdf_a - cdf_b).max())


def summary(values: Sequence[float]) -> dict[str, float]:
    q1, median, q3 = np.percentile(np.asarray(values, float), [25, 50, 75])
    return {"median": float(median), "iqr": float(q3 - q1)}


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Mann-Whitney AUC with average ranks for ties: the chance a random positive outscores a random negative."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    start = 0
    for end in range(1, len(scores) + 1):
        if end == len(scores) or sorted_scores[end] != sorted_scores[start]:
            ranks[order[start:end]] = (start + end + 1) / 2
            start = end
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("AUC needs both classes")
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def standardise(train: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale by the training fold only, so the held-out fold leaks nothing into the model."""
    mean, std = train.mean(axis=0), train.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return (train - mean) / std, (other - mean) / std


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 50) -> np.ndarray:
    """Newton's method on the L2-penalised log loss, classes weighted to equal total weight (the real sets are
    several times smaller than the synthetic one). Returns the bias, then one weight per column."""
    design = np.hstack([np.ones((len(x), 1)), x])
    y = np.asarray(y, float)
    sample_w = np.where(y > 0, 0.5 / max(y.sum(), 1), 0.5 / max((1 - y).sum(), 1)) * len(y)
    penalty = np.full(design.shape[1], l2)
    penalty[0] = 0.0
    w = np.zeros(design.shape[1])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(design @ w, -30, 30)))
        gradient = design.T @ (sample_w * (p - y)) + penalty * w
        hessian = (design * (sample_w * p * (1 - p))[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def stratified_folds(y: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """A fold number per sample, each class dealt round-robin after shuffling, so every fold holds both."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(y), int)
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        fold[members] = np.arange(len(members)) % folds
    return fold


def cross_validated_auc(x: np.ndarray, y: np.ndarray, folds: int = 5, seed: int = 0, l2: float = 1.0) -> float:
    """AUC of held-out scores pooled over folds: the separability a classifier finds without seeing the test
    images."""
    fold = stratified_folds(y, min(folds, int(np.bincount(y.astype(int)).min())), seed)
    scores = np.empty(len(y))
    for k in np.unique(fold):
        train, test = fold != k, fold == k
        x_train, x_test = standardise(x[train], x[test])
        w = fit_logistic(x_train, y[train], l2)
        scores[test] = w[0] + x_test @ w[1:]
    return roc_auc(scores, y)


def compare(real: list[dict[str, float]], synth: list[dict[str, float]], names: Sequence[str], seed: int = 0) -> dict:
    """Per-statistic distributions and KS, each statistic's own AUC (synthetic as positive), and the
    cross-validated AUC and standardised weights of the logistic regression on all of them."""
    x = np.array([[s[n] for n in names] for s in (*real, *synth)], float)
    y = np.array([0] * len(real) + [1] * len(synth))
    per_stat = {
        name: {
            "real": summary(x[y == 0, i]),
            "synth": summary(x[y == 1, i]),
            "ks": ks_statistic(x[y == 0, i], x[y == 1, i]),
            "auc": roc_auc(x[:, i], y),
        }
        for i, name in enumerate(names)
    }
    standard, _ = standardise(x, x)
    weights = fit_logistic(standard, y)[1:]
    drivers = sorted(names, key=lambda n: -abs(per_stat[n]["auc"] - 0.5))
    without = {
        "-".join(drivers[:k]): cross_validated_auc(x[:, [n not in drivers[:k] for n in names]], y, seed=seed)
        for k in range(1, min(ABLATION_DEPTH, len(names) - 1) + 1)
    }  # how much separability is left once the worst gaps are closed: one fixable cue, or many
    return {
        "n_real": len(real),
        "n_synth": len(synth),
        "auc_cv": cross_validated_auc(x, y, seed=seed),
        "auc_cv_without": without,
        "weights": {n: float(w) for n, w in zip(names, weights, strict=True)},
        "drivers": drivers[:5],
        "stats": per_stat,
    }


# ----------------------------------------------------------------------------------------------------- inputs


def image_files(source: str | Path, per_dir: int = MAX_REAL_PER_DIR) -> list[Path]:
    """A named REAL_SETS entry, a directory (searched recursively; at most `per_dir` images, evenly spread, from
    each folder) or one image file."""
    roots = REAL_SETS.get(str(source), (Path(source),))
    files: list[Path] = []
    for root in roots:
        if root.is_file():
            files.append(root)
            continue
        by_folder: dict[Path, list[Path]] = {}
        for path in sorted(root.rglob("*")):
            if path.suffix.lower() in IMAGE_EXTENSIONS:
                by_folder.setdefault(path.parent, []).append(path)
        for members in by_folder.values():
            picks = np.unique(np.linspace(0, len(members) - 1, min(per_dir, len(members))).round().astype(int))
            files += [members[i] for i in picks]
    return files


def read_image(path: str | Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise ValueError(f"{path}: not an image")
    if image.dtype != np.uint8:
        image = (image / 257).astype(np.uint8)
    return image


def _stats_of(item: tuple[np.ndarray | str | Path, bool]) -> dict[str, float]:
    image, grey_only = item
    return image_stats(read_image(image) if isinstance(image, str | Path) else image, grey_only)


def stats_of_all(
    images: Sequence[np.ndarray | str | Path], grey_only: bool, workers: int = 2, desc: str = "stats"
) -> list[dict[str, float]]:
    items = [(image, grey_only) for image in images]
    bar = tqdm(total=len(items), desc=desc, unit="img", disable=len(items) < 50)
    if workers <= 1:
        results = [_stats_of(item) for item in items]
        bar.update(len(items))
    else:
        with Pool(workers) as pool:
            results = []
            for stats in pool.imap(_stats_of, items, chunksize=4):
                results.append(stats)
                bar.update()
    bar.close()
    return results


def realism_report(
    real_dir: str | Path, synth_images: Sequence[np.ndarray | str | Path], workers: int = 2, seed: int = 0
) -> dict:
    """Compare real images (a REAL_SETS name or a directory) with synthetic ones (arrays or paths). If most real
    images are greyscale the comparison runs in grey on the luminance statistics; otherwise greyscale real
    images are dropped and every statistic is used."""
    real_images = [read_image(p) for p in image_files(real_dir)]
    grey_flags = [is_grey(image) for image in real_images]
    grey_mode = sum(grey_flags) > len(real_images) / 2
    if not grey_mode:
        real_images = [image for image, grey in zip(real_images, grey_flags, strict=True) if not grey]
    if len(real_images) < 4 or len(synth_images) < 4:
        raise ValueError(f"need at least 4 images a side, have {len(real_images)} real and {len(synth_images)} synth")
    names = LUMINANCE_STATS if grey_mode else (*LUMINANCE_STATS, *COLOUR_STATS)
    real = stats_of_all(real_images, grey_mode, workers, "real stats")
    synth = stats_of_all(synth_images, grey_mode, workers, "synth stats")
    return {"real": str(real_dir), "mode": "grey" if grey_mode else "colour", **compare(real, synth, names, seed)}


def render_synthetic(decks_dir: str | Path, n: int, seed: int, workers: int = 2) -> list[np.ndarray]:
    """Scenes exactly as `generate_dataset` writes them (same per-index seeding, the same JPEG bytes), rendered in
    memory so the check needs no data set on disk."""
    jobs = [(str(decks_dir), seed, i) for i in range(n)]
    with Pool(workers) as pool:
        return list(tqdm(pool.imap(_render_jpeg, jobs), total=n, desc="render synth", unit="img"))


_RENDER_CACHE: dict[str, tuple] = {}


def _render_jpeg(job: tuple[str, int, int]) -> np.ndarray:
    """The scene decoded from the file the exporter would write for it."""
    decks_dir, seed, index = job
    if decks_dir not in _RENDER_CACHE:
        _RENDER_CACHE[decks_dir] = (load_components(decks_dir), load_table_textures())
    decks, backgrounds = _RENDER_CACHE[decks_dir]
    image = scene_for(index, seed, decks, backgrounds, DEFAULT_IMAGE_SIZE).image
    return cv2.imdecode(np.frombuffer(frame_jpeg(image, JPEG_QUALITY), np.uint8), cv2.IMREAD_COLOR)


# ----------------------------------------------------------------------------------------------------- report


def format_table(report: dict, fmt: Callable[[float], str] = lambda v: f"{v:.4g}") -> str:
    """The per-statistic comparison as a markdown table (for REALISM.md)."""
    lines = [
        f"Real: `{report['real']}` ({report['n_real']} images), synthetic: {report['n_synth']}, mode "
        f"{report['mode']}; cross-validated logistic-regression AUC **{report['auc_cv']:.3f}**",
        "",
        "| statistic | real median | real IQR | synth median | synth IQR | KS D | own AUC | LR weight |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ablation = ", ".join(f"without {k.replace('-', ' + ')}: {v:.3f}" for k, v in report["auc_cv_without"].items())
    for name, s in report["stats"].items():
        lines.append(
            f"| {name} | {fmt(s['real']['median'])} | {fmt(s['real']['iqr'])} | {fmt(s['synth']['median'])} | "
            f"{fmt(s['synth']['iqr'])} | {s['ks']:.2f} | {s['auc']:.2f} | {report['weights'][name]:+.2f} |"
        )
    return "\n".join([*lines, "", f"AUC with the strongest single cues left out: {ablation}"])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Compare synthetic scenes with real photos on image statistics.")
    parser.add_argument("--real", action="append", required=True, help=f"directory or one of {sorted(REAL_SETS)}")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--decks", help="render synthetic scenes from these decks")
    source.add_argument("--synth-dir", help="use images already written (e.g. a generate_dataset images/train)")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", help="write the reports here")
    parser.add_argument("--markdown", help="write the tables here")
    args = parser.parse_args(argv)
    if args.decks:
        synth: list = render_synthetic(args.decks, args.n, args.seed, args.workers)
    else:
        synth = sorted(p for p in Path(args.synth_dir).iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS)[: args.n]
    reports = [realism_report(real, synth, args.workers, args.seed) for real in args.real]
    for report in reports:
        print(format_table(report), "\n")
    for path, text in (
        (args.json, json.dumps(reports, indent=2)),
        (args.markdown, "\n\n".join(map(format_table, reports))),
    ):
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text + "\n")


if __name__ == "__main__":
    main()
