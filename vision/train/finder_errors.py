"""The corner finder's own errors, measured on training scenes, so the reader is taught on crops cut as wrongly as
the finder will cut them at run time.

Why: on the validation families the reader read 71.7% of index corners cut along the true corner frame and 57.6% cut
along the frame the finder found (session 13). Its training crops were cut along true frames with a mild Gaussian
wobble (3 degrees, 8% zoom, one turn for both edges), while the finder's edges are off by a median 5.6 degrees, a
quarter of them by more than 12, each edge on its own, and its lengths a quarter of the time by more than 24%.
Sampling whole rows of this table (one found corner's errors together) keeps those errors as they come.

Each row is one found corner against the true corner it lies on, in that corner's own terms, so it applies to any
corner of any card at any size: the point's offset along the card's short and long edges (card widths), each edge's
turn (radians, positive towards the other edge) and each edge's length over the true one. Gross errors (an edge off
by more than GROSS_TURN_DEG, the two edges swapped or one reversed) are left out: no crop cut that way shows an index
a reader could be taught to read.

    python -m vision.train.finder_errors out/finder_errors.npy --scenes out/corner_scenes/train --max-scenes 600
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

# the bench's own rules for "on that corner" and "grossly off"
from vision.recognise.bench_stages import GROSS_TURN_DEG, found_points, nearest_found
from vision.recognise.corners import CornerFinder, handedness, printed_corner
from vision.recognise.models import models_dir
from vision.recognise.rectified import CORNERS_FILE, RectifiedThresholds
from vision.train.corner_data import SceneGeometry, stored_scenes

COLUMNS = ("along_a", "along_b", "turn_a", "turn_b", "scale_a", "scale_b")


def turn_towards(found: np.ndarray, true: np.ndarray, other: np.ndarray) -> float:
    """The signed angle from `true` to `found`, positive when it turns towards `other` (the corner's other edge)."""
    angle = float(np.arctan2(true[0] * found[1] - true[1] * found[0], true @ found))
    side = float(np.sign(true[0] * other[1] - true[1] * other[0])) or 1.0
    return angle * side


def corner_errors(found: Sequence, quads: np.ndarray, visible: np.ndarray) -> list[tuple[float, ...]]:
    """One row per true corner (shown at least half) that a found corner lies on."""
    points = found_points(found)
    rows = []
    for quad, shown in zip(quads, visible, strict=True):
        for k in range(4):
            if shown[k] < 0.5:
                continue
            p, a, b = (np.asarray(v, np.float64) for v in printed_corner(quad, k))
            width = float(np.linalg.norm(a))
            j = nearest_found(points, p, width) if width >= 1.0 else None
            if j is None:
                continue
            c = found[j]
            fa, fb = np.asarray(c.a, np.float64), np.asarray(c.b, np.float64)
            ta, tb = turn_towards(fa, a, b), turn_towards(fb, b, a)
            if max(abs(ta), abs(tb)) > np.deg2rad(GROSS_TURN_DEG) or handedness(fa, fb) != handedness(a, b):
                continue
            ua, ub = a / width, b / float(np.linalg.norm(b))
            off = (np.asarray(c.point, np.float64) - p) / width
            rows.append(
                (
                    float(off @ ua),
                    float(off @ ub),
                    ta,
                    tb,
                    float(np.linalg.norm(fa)) / width,
                    float(np.linalg.norm(fb) / np.linalg.norm(b)),
                )
            )
    return rows


def apply_error(row: np.ndarray, p: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """A true corner frame (p, a, b) as a finder that erred by `row` (a table row) would have found it."""
    p, a, b = (np.asarray(v, np.float64) for v in (p, a, b))
    width = max(float(np.linalg.norm(a)), 1e-6)
    ua, ub = a / width, b / max(float(np.linalg.norm(b)), 1e-6)
    side = handedness(a, b)  # turning a towards b is anticlockwise in image terms for one hand, clockwise for the other

    def turned(v: np.ndarray, angle: float) -> np.ndarray:
        c, s = np.cos(angle), np.sin(angle)
        return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])

    along_a, along_b, turn_a, turn_b, scale_a, scale_b = (float(x) for x in row)
    point = p + (along_a * ua + along_b * ub) * width
    return (
        point.astype(np.float32),
        (turned(a, side * turn_a) * scale_a).astype(np.float32),
        (turned(b, -side * turn_b) * scale_b).astype(np.float32),
    )


def measure(scenes: Sequence[Path], models: Path, min_score: float) -> np.ndarray:
    finder = CornerFinder(models / CORNERS_FILE)
    rows: list[tuple[float, ...]] = []
    for stem in tqdm(scenes, desc="finder errors", unit="scene"):
        frame = cv2.imread(str(stem.with_suffix(".jpg")), cv2.IMREAD_COLOR)
        if frame is None:
            continue
        geometry = SceneGeometry.load(stem.with_suffix(".npz"))
        rows += corner_errors(finder.find(frame, min_score), geometry.quads, geometry.corner_visible)
    return np.array(rows, np.float32).reshape(-1, len(COLUMNS))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The corner finder's errors on stored training scenes, as a table.")
    parser.add_argument("out", type=Path, help="the table (.npy), for reader_data --finder-errors")
    parser.add_argument("--scenes", type=Path, nargs="+", required=True, help="folders of stored training scenes")
    parser.add_argument("--max-scenes", type=int, default=600)
    parser.add_argument("--models", type=Path, default=None, help="models directory (default: models/)")
    args = parser.parse_args(argv)
    scenes = [s for folder in args.scenes for s in stored_scenes(folder)][: args.max_scenes]
    if not scenes:
        parser.error(f"no stored scenes (an image .jpg beside its geometry .npz) in {', '.join(map(str, args.scenes))}")
    models = args.models or models_dir()
    table = measure(scenes, models, RectifiedThresholds.load(models / "cards-corners-thresholds.json").corner)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.save(args.out, table)
    med = np.median(np.abs(table), axis=0)
    print(f"{len(table)} corners from {len(scenes)} scenes -> {args.out}")
    print("median |error|: " + ", ".join(f"{n} {v:.3f}" for n, v in zip(COLUMNS, med, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
