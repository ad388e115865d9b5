"""Rendered training scenes kept in shards on disk: what every scene-based dataset here (cubes, dice) shares. A
shard is written whole or not at all, and a finished one is kept, so generation resumes after an interruption."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from multiprocessing import Pool
from pathlib import Path
from typing import Any

from tqdm import tqdm

SHARD = 100  # scenes per shard


def render_shards(
    out: Path, n: int, job: Callable[[int], tuple], render: Callable[[Any], Any], workers: int, desc: str
) -> None:
    """Scenes 0..n-1 (`render(job(i))`, in `workers` processes) into out/shard-NNNN.pkl, as plain dicts of their
    fields so any module can load them."""
    out.mkdir(parents=True, exist_ok=True)
    with Pool(workers) as pool, tqdm(total=n, desc=desc) as bar:
        for start in range(0, n, SHARD):
            path = out / f"shard-{start // SHARD:04d}.pkl"
            count = min(SHARD, n - start)
            if not path.exists():
                shard = [vars(scene) for scene in pool.imap(render, [job(i) for i in range(start, start + count)])]
                tmp = path.with_suffix(".tmp")
                tmp.write_bytes(pickle.dumps(shard))
                tmp.replace(path)
            bar.update(count)


def load_shards(folder: Path, make: Callable[..., Any]) -> Sequence[Any]:
    """Every scene of a folder's shards, in order, rebuilt by `make(**fields)`."""
    scenes: list[Any] = []
    for shard in sorted(folder.glob("shard-*.pkl")):
        scenes += [make(**fields) for fields in pickle.loads(shard.read_bytes())]
    return scenes
