"""Throughput of the data engine as a user runs it: render plus JPEG plus label files on disk, one process and two.

`export.bench_scenes` times rendering in memory; this times `generate_dataset` end to end, because what decides
whether a 10,000-image training set is an overnight job or a coffee break is the whole pipeline, pool start-up,
encoding and file writes included. Both worker counts run in the same call on the same scenes, so the ratio is
not confounded by whatever else the machine was doing on another day.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import cv2

from vision.synth.camera import DEFAULT_IMAGE_SIZE
from vision.synth.components import load_components
from vision.synth.export import generate_dataset

DEFAULT_DECKS_DIR = Path("out/decks")
PROJECTED_SET = 10_000
WORKER_COUNTS = (1, 2)


def directory_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def cpu_seconds() -> float:
    """User plus system time of this process and its reaped children (the pool's workers, once it has closed)."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def time_generation(
    out_dir: Path, n: int, seed: int, decks_dir: Path, workers: int, size: tuple[int, int]
) -> tuple[float, float, int]:
    """Wall seconds and CPU seconds to write n detect scenes, and the bytes they take. Decks are loaded outside
    the clock: a real run loads them once for thousands of scenes. CPU time is what a busy shared machine does not
    distort: wall time there depends on what else runs."""
    decks = load_components(decks_dir)
    start, cpu_start = time.perf_counter(), cpu_seconds()
    result = generate_dataset(out_dir, n, seed, decks, "detect", workers=workers, size=size)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    assert result["written"] == n, f"expected a fresh directory, {result['skipped']} scenes were already there"
    return seconds, cpu, directory_bytes(out_dir)


def bench_synth(
    n: int = 200,
    seed: int = 0,
    size: tuple[int, int] = DEFAULT_IMAGE_SIZE,
    decks_dir: str | Path = DEFAULT_DECKS_DIR,
    worker_counts: Sequence[int] = WORKER_COUNTS,
    cv_threads: int | None = None,
) -> dict[str, float]:
    """Scenes per second writing a YOLO detect set with each worker count, the speed-up of the last over the first,
    and the projected time and disk for a PROJECTED_SET-image training set at the fastest setting. `cv_threads`
    caps OpenCV's own thread pool (forked workers inherit it), to tell process parallelism from OpenCV's."""
    report: dict[str, float] = {"n": float(n), "width": float(size[0]), "height": float(size[1])}
    previous_threads = cv2.getNumThreads()
    if cv_threads is not None:
        cv2.setNumThreads(cv_threads)
        report["cv_threads"] = float(cv_threads)
    rates = {}
    try:
        with tempfile.TemporaryDirectory(prefix="synth_bench_") as tmp:
            for workers in worker_counts:
                seconds, cpu, size_bytes = time_generation(
                    Path(tmp) / f"w{workers}", n, seed, Path(decks_dir), workers, size
                )
                rates[workers] = n / seconds
                report[f"scenes_per_s_{workers}_workers"] = round(rates[workers], 3)
                report[f"cpu_s_per_scene_{workers}_workers"] = round(cpu / n, 4)
                report[f"cpu_utilisation_{workers}_workers"] = round(cpu / seconds, 3)  # cores kept busy
                report["bytes_per_scene"] = round(size_bytes / n, 1)
    finally:
        cv2.setNumThreads(previous_threads)
    first, last = worker_counts[0], worker_counts[-1]
    best = max(rates.values())
    report["speedup"] = round(rates[last] / rates[first], 3)
    report[f"projected_s_{PROJECTED_SET}"] = round(PROJECTED_SET / best, 1)
    report[f"projected_gb_{PROJECTED_SET}"] = round(PROJECTED_SET * report["bytes_per_scene"] / 1e9, 3)
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time synthetic YOLO detect data generation, 1 vs 2 workers.")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, nargs=2, default=DEFAULT_IMAGE_SIZE, metavar=("W", "H"))
    parser.add_argument("--decks", default=str(DEFAULT_DECKS_DIR), help="a deck directory or a folder of them")
    parser.add_argument("--cv-threads", type=int, help="cap OpenCV's thread pool (default: OpenCV's choice)")
    parser.add_argument("--json", help="also write the report here")
    args = parser.parse_args(argv)
    report = bench_synth(args.n, args.seed, (args.size[0], args.size[1]), args.decks, cv_threads=args.cv_threads)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
