"""Patches for the corner refiner (`vision.recognise.corner_refiner`): every true corner the shipped finder finds in
the stored scenes, cut as the runtime cuts it (`PatchCutter`, along the finder's own frame, errors and all), with the
true frame in the patch's terms as the target. (Session 17's refiner was trained on patches each shrunk by area on its
own; it reads the runtime's patches as well: 3.38 against 3.46 degrees median on the validation scenes.)

Why the finder's own frames: the refiner must correct the errors the finder makes, in the proportions it makes
them. Each found corner is also cut once more along a frame turned, zoomed and shifted at random (a quarter of the
time turned any way at all), so rare gross errors are taught as often as they need to be.

    python -m vision.train.refiner_data out/refiner/train --scenes out/corner_scenes/train out/corner_scenes/proc-train
    python -m vision.train.refiner_data out/refiner/val --scenes out/corner_scenes/val

Resumable: scenes are cut in shards of SHARD scenes, and a finished shard is kept.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.recognise.bench_stages import found_points, nearest_found
from vision.recognise.corner_refiner import N_TERMS, PATCH, PatchCutter, frame_targets
from vision.recognise.corners import CornerFinder, printed_corner
from vision.recognise.models import models_dir
from vision.recognise.rectified import CORNERS_FILE, RectifiedThresholds
from vision.train.corner_data import SceneGeometry, stored_scenes

SHARD = 250  # scenes per file
MIN_SHOWN = 0.5  # a true corner at least this visible is a target
WILD_TURN = 0.25  # share of the extra cuts turned any way at all
TURNED_SHARE = 0.1  # of each training batch turned by quarter turns (`turned_batch`)


@dataclass
class PatchSet:
    """Patches with their targets; `found` is 1 for a cut along the finder's own frame, 0 for an extra one, and
    `finder` holds what the finder's frame itself would have said (its own edges in the patch's terms, the
    baseline every refinement is measured against)."""

    x: np.ndarray  # (n, PATCH, PATCH) uint8 grey
    y: np.ndarray  # (n, N_TERMS) float32
    finder: np.ndarray  # (n, N_TERMS) float32
    found: np.ndarray  # (n,) uint8
    width: np.ndarray  # (n,) float32: the true card width in frame pixels

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, **{k: getattr(self, k) for k in self.__dataclass_fields__})
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> PatchSet:
        with np.load(path) as data:
            return cls(**{k: data[k] for k in cls.__dataclass_fields__})

    @classmethod
    def concat(cls, sets: Sequence[PatchSet]) -> PatchSet:
        return cls(**{k: np.concatenate([getattr(s, k) for s in sets]) for k in cls.__dataclass_fields__})


def jittered(
    rng: np.random.Generator, point: np.ndarray, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The frame turned (any way, WILD_TURN of the time; else by a few degrees), zoomed and shifted."""
    turn = rng.uniform(-np.pi, np.pi) if rng.random() < WILD_TURN else rng.normal(0, np.deg2rad(10))
    c, s = np.cos(turn), np.sin(turn)
    rot = np.array([[c, -s], [s, c]])
    zoom = float(np.exp(rng.normal(0, 0.15)))
    width = float(np.linalg.norm(a))
    return point + rng.normal(0, 0.03 * width, 2), rot @ a * zoom, rot @ b * zoom


def cut_scene(
    frame: np.ndarray, geometry: SceneGeometry, found: Sequence, rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int, float]]:
    points = found_points(found)
    cutter = PatchCutter(frame)
    rows = []
    for quad, shown in zip(geometry.quads, geometry.corner_visible, strict=True):
        for k in range(4):
            if shown[k] < MIN_SHOWN:
                continue
            true = printed_corner(quad, k)
            width = float(np.linalg.norm(true[1]))
            j = nearest_found(points, true[0], width) if width >= 1.0 else None
            if j is None:
                continue
            c = found[j]
            own = (c.point, c.a, c.b)
            for frame_, is_found in ((own, 1), (jittered(rng, *own), 0)):
                patch = cutter.cut(*frame_)
                target = frame_targets(frame_, true)
                baseline = frame_targets(frame_, frame_)
                rows.append((patch, target, baseline, is_found, width))
    return rows


def cut_shard(stems: Sequence[Path], finder: CornerFinder, min_score: float, seed: int) -> PatchSet:
    rng = np.random.default_rng(seed)
    rows = []
    for stem in stems:
        frame = cv2.imread(str(stem.with_suffix(".jpg")), cv2.IMREAD_COLOR)
        if frame is None:
            continue
        geometry = SceneGeometry.load(stem.with_suffix(".npz"))
        rows += cut_scene(frame, geometry, finder.find(frame, min_score), rng)
    if not rows:
        empty = np.zeros((0, N_TERMS), np.float32)
        return PatchSet(np.zeros((0, PATCH, PATCH), np.uint8), empty, empty, np.zeros(0, np.uint8), np.zeros(0))
    x, y, base, found, width = zip(*rows, strict=True)
    return PatchSet(np.stack(x), np.stack(y), np.stack(base), np.array(found, np.uint8), np.array(width, np.float32))


def quarter_turn(vectors: np.ndarray, k: int) -> np.ndarray:
    """(..., 2) patch-frame vectors after np.rot90(patch, k): each quarter turn maps (x, y) to (y, -x)."""
    v = np.asarray(vectors)
    for _ in range(k % 4):
        v = np.stack([v[..., 1], -v[..., 0]], axis=-1)
    return v


def turned_batch(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """TURNED_SHARE of the patches (and their targets) turned by a random number of quarter turns."""
    x, y = x.copy(), y.copy()
    ks = np.where(rng.random(len(x)) < TURNED_SHARE, rng.integers(1, 4, len(x)), 0)
    for k in range(1, 4):
        rows = np.flatnonzero(ks == k)
        if not len(rows):
            continue
        x[rows] = np.rot90(x[rows], k, axes=(1, 2))
        for cols in ((0, 1), (2, 3), (6, 7)):
            y[np.ix_(rows, cols)] = quarter_turn(y[np.ix_(rows, cols)], k)
    return x, y


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Patches and targets for the corner refiner, from stored scenes.")
    parser.add_argument("out", type=Path, help="a folder for the shards")
    parser.add_argument("--scenes", type=Path, nargs="+", required=True, help="folders of stored scenes")
    parser.add_argument("--max-scenes", type=int, default=0, help="at most this many scenes (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads for the finder")
    parser.add_argument("--models", type=Path, default=None, help="models directory (default: models/)")
    args = parser.parse_args(argv)
    scenes = [s for folder in args.scenes for s in stored_scenes(folder)]
    if args.max_scenes:
        scenes = scenes[: args.max_scenes]
    if not scenes:
        parser.error(f"no stored scenes (an image .jpg beside its geometry .npz) in {', '.join(map(str, args.scenes))}")
    models = args.models or models_dir()
    finder = CornerFinder(models / CORNERS_FILE, args.threads)
    min_score = RectifiedThresholds.load(models / "cards-corners-thresholds.json").corner
    args.out.mkdir(parents=True, exist_ok=True)
    shards = [scenes[i : i + SHARD] for i in range(0, len(scenes), SHARD)]
    total = 0
    for n, stems in enumerate(tqdm(shards, desc="refiner patches", unit="shard")):
        path = args.out / f"shard-{n:03d}.npz"
        if not path.exists():
            cut_shard(stems, finder, min_score, args.seed * 1000 + n).save(path)
        with np.load(path) as data:
            total += len(data["found"])
    print(f"{total} patches from {len(scenes)} scenes in {len(shards)} shards -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
