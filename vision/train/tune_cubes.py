"""The cube counter's peak cut-offs, chosen on the validation boards' cuts (`cube_data --split val`), never the test
ones: for cubes, the cut-off that counts the most well-seen Eras exactly, every colour; for pieces (tokens, tiles,
pawns), the one with the most pieces read right less false readings.

    .venv/bin/python -m vision.train.tune_cubes --val out/cubes/val --pieces out/pieces/the-loop --models models
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vision.board.bench import FAMILIES, PieceTally, countable, exact
from vision.board.cubes import COLOURS, MODEL_FILE, PIECES, THRESHOLDS_FILE, count_cut, find_pieces
from vision.recognise.models import session
from vision.train.cube_data import BoardRefs, SceneNet, cut_side, load_scenes

CUTOFFS = tuple(round(float(v), 2) for v in np.arange(0.1, 0.75, 0.05))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--val", type=Path, default=Path("out/cubes/val"))
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--model", default=MODEL_FILE, help=f"the net's file in --models (default {MODEL_FILE})")
    parser.add_argument("--thresholds", default=THRESHOLDS_FILE, help="the file the cut-offs are written to")
    parser.add_argument(
        "--upright", action="store_true", help="the net reads the cut turned to the camera (session 59)"
    )
    args = parser.parse_args(argv)
    net = SceneNet(session(args.models / args.model), args.upright)
    scenes = load_scenes(args.val)
    boards = BoardRefs(args.pieces, cut_side(scenes))
    right = dict.fromkeys(CUTOFFS, 0)
    size = boards.size
    pieces = {c: PieceTally(size) for c in CUTOFFS}
    total = 0
    for s in scenes:
        heat = net.heat(s, boards)
        total += sum(countable(info) for info in s.eras.values())
        truth = [(PIECES[int(k)], float(x), float(y), float(seen)) for x, y, k, seen in s.pieces]
        for cutoff in CUTOFFS:
            right[cutoff] += exact(count_cut(heat, boards.masks(s.design), cutoff), s.eras)
            pieces[cutoff].add(truth, find_pieces(heat, cutoff))
    for cutoff in CUTOFFS:
        print(f"peak {cutoff:.2f}: {100 * right[cutoff] / max(total, 1):.2f}% of {total} validation Eras exact")
    best = max(CUTOFFS, key=lambda c: (right[c], -abs(c - 0.3)))
    out = {
        "peak": best,
        "cut_px": size,
        **({"upright": True} if args.upright else {}),
        "val_eras": total,
        "val_exact_pct": round(100 * right[best] / max(total, 1), 2),
    }
    if net.session.get_outputs()[0].shape[1] > len(COLOURS):  # a net that reads pieces too

        def net_right(c: float) -> int:
            rows = pieces[c].summary()
            return sum(rows[f]["right"] - rows[f]["false"] for f in FAMILIES)

        for cutoff in CUTOFFS:
            rows = pieces[cutoff].summary()
            print(f"piece peak {cutoff:.2f}: " + ", ".join(
                f"{f} {rows[f]['right']}/{rows[f]['pieces']} right, {rows[f]['false']} false"
                for f in FAMILIES
            ))  # fmt: skip
        out["piece_peak"] = max(CUTOFFS, key=lambda c: (net_right(c), -abs(c - 0.3)))
        out["val_pieces"] = pieces[out["piece_peak"]].summary()
    (args.models / args.thresholds).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.models / args.thresholds}: {out}")


if __name__ == "__main__":
    main()
