"""The cube counter's peak cut-off, chosen on the validation boards' cuts (`cube_data --split val`), never the test
ones: the cut-off that counts the most well-seen Eras exactly, every colour.

    .venv/bin/python -m vision.train.tune_cubes --val out/cubes/val --pieces out/pieces/the-loop --models models
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vision.board.bench import countable, exact
from vision.board.cubes import MODEL_FILE, THRESHOLDS_FILE, count_cut, heat_of
from vision.recognise.models import session
from vision.train.cube_data import BoardRefs, load_scenes

CUTOFFS = tuple(round(float(v), 2) for v in np.arange(0.1, 0.75, 0.05))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--val", type=Path, default=Path("out/cubes/val"))
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    parser.add_argument("--models", type=Path, default=Path("models"))
    args = parser.parse_args(argv)
    net = session(args.models / MODEL_FILE)
    scenes = load_scenes(args.val)
    boards = BoardRefs(args.pieces)
    right = dict.fromkeys(CUTOFFS, 0)
    total = 0
    for s in scenes:
        heat = heat_of(net, s.cut(), boards.reference(s.design))
        total += sum(countable(info) for info in s.eras.values())
        for cutoff in CUTOFFS:
            right[cutoff] += exact(count_cut(heat, boards.masks(s.design), cutoff), s.eras)
    for cutoff in CUTOFFS:
        print(f"peak {cutoff:.2f}: {100 * right[cutoff] / max(total, 1):.2f}% of {total} validation Eras exact")
    best = max(CUTOFFS, key=lambda c: (right[c], -abs(c - 0.3)))
    out = {"peak": best, "val_eras": total, "val_exact_pct": round(100 * right[best] / max(total, 1), 2)}
    (args.models / THRESHOLDS_FILE).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.models / THRESHOLDS_FILE}: {out}")


if __name__ == "__main__":
    main()
