"""Fits the clone tokens' Paradox Era reader (`vision.board.clones`): the weights of its colour likenesses, by
maximum likelihood of each training token's true Era among the seven (a conditional logit; numpy, seconds).

Tokens are the clone tokens at least half seen in stored board scenes (`vision.train.cube_data`), each looked at a
few pixels off its true centre, as the net places it. Then the cut-off at which the strongest of the net's
clone maps is a token is chosen on the validation scenes, each token found there read by the fitted weights.

    .venv/bin/python -m vision.train.clone_eras --data out/cubes/train --val out/cubes/val \\
        --pieces out/pieces/the-loop --models models
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from vision.board.clones import FEATURES, MODEL_FILE, EraFills, LitEras, ParadoxReader, era_features
from vision.board.cubes import MODEL_FILE as NET_FILE
from vision.board.cubes import PIECES
from vision.board.cubes import THRESHOLDS_FILE as NET_THRESHOLDS_FILE
from vision.train.cube_data import BoardRefs, CubeScene, SceneNet, cut_side, load_scenes

SEEN = 0.5  # a token less seen than this is not asked for (as the bench)
JITTER_PX = 3.0  # sd of the token's centre, cut pixels: where the pieces net's peak lies about it
L2 = 1e-3
STEPS = 600
RATE = 0.5
CLONE_PEAKS = (0.1, 0.15, 0.2, 0.25, 0.3)


def scene_tokens(
    scene: CubeScene, boards: BoardRefs, rng: np.random.Generator, jitter: float = JITTER_PX
) -> list[tuple[np.ndarray, int]]:
    """(features (Eras, FEATURES), index of the true Era) of every clone token at least `SEEN` shown."""
    tokens = [(x, y, PIECES[int(p)]) for x, y, p, seen in scene.pieces if seen >= SEEN]
    tokens = [(x, y, label.split(":")[1]) for x, y, label in tokens if label.startswith("CLONE:")]
    if not tokens:
        return []
    masks = boards.masks(scene.design)
    fills = EraFills.of(boards.reference(scene.design), masks)
    cut = scene.cut()
    lit = LitEras.of(cut, fills)
    eras = list(masks)
    out = []
    for x, y, era in tokens:
        dx, dy = rng.normal(0.0, jitter, 2) if jitter else (0.0, 0.0)
        out.append((era_features(cut, float(x + dx), float(y + dy), fills, lit), eras.index(era)))
    return out


def tokens_of(folders: list[Path], pieces: Path, seed: int) -> list[tuple[np.ndarray, int]]:
    rng = np.random.default_rng(seed)
    rows: list[tuple[np.ndarray, int]] = []
    for folder in folders:
        scenes = load_scenes(folder)
        boards = BoardRefs(pieces, cut_side(scenes))
        for n, scene in enumerate(scenes):
            rows += scene_tokens(scene, boards, rng)
            if (n + 1) % 500 == 0:
                print(f"{folder}: {n + 1}/{len(scenes)} scenes, {len(rows)} tokens", file=sys.stderr)
    return rows


def fit(rows: list[tuple[np.ndarray, int]], steps: int = STEPS, rate: float = RATE, l2: float = L2) -> np.ndarray:
    """Weights maximising the mean log-probability of each token's true Era under a softmax of the linear scores
    (full-batch gradient descent: the problem is convex and small)."""
    x = np.stack([f for f, _ in rows]).astype(np.float64)
    y = np.array([t for _, t in rows])
    w = np.zeros(x.shape[2])
    for _ in range(steps):
        s = x @ w
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        grad = (x * p[..., None]).sum(axis=1) - x[np.arange(len(y)), y]
        w -= rate * (grad.mean(axis=0) + l2 * w)
    return w


def accuracy(rows: list[tuple[np.ndarray, int]], w: np.ndarray) -> float:
    if not rows:
        return 0.0
    return float(np.mean([int(np.argmax(f @ w)) == t for f, t in rows]))


def tune_clone_peak(
    val: Path, pieces: Path, model: Path, thresholds: Path, reader: ParadoxReader
) -> tuple[float, dict]:
    """The cut-off on the strongest clone map that finds the most tokens read right less false ones, on the
    validation scenes with the net that reads the pieces (`model`, at its own cut-offs as tuned in `thresholds`),
    each found token's Era read."""
    from vision.board.bench import PieceTally
    from vision.board.cubes import find_pieces, reads_upright
    from vision.recognise.models import session

    net = SceneNet(session(model), reads_upright(thresholds))
    piece_peak = float(json.loads(thresholds.read_text())["piece_peak"])
    scenes = load_scenes(val)
    boards = BoardRefs(pieces, cut_side(scenes))
    tallies = {peak: PieceTally(boards.size) for peak in CLONE_PEAKS}
    for scene in scenes:
        cut = scene.cut()
        heat = net.heat(scene, boards)
        truth = [(PIECES[int(p)], float(x), float(y), float(seen)) for x, y, p, seen in scene.pieces]
        fills = EraFills.of(boards.reference(scene.design), boards.masks(scene.design))
        for peak, tally in tallies.items():
            tally.add(truth, reader.relabel(find_pieces(heat, piece_peak, peak), cut, fills))
    rows = {peak: tally.summary()["CLONE"] for peak, tally in tallies.items()}
    best = max(CLONE_PEAKS, key=lambda peak: rows[peak]["right"] - rows[peak]["false"])
    return best, rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", required=True, help="folders of cube_data training scenes")
    parser.add_argument("--val", type=Path, required=True, help="a folder of validation scenes (other boards)")
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default=NET_FILE, help="the net in --models that reads the pieces (its clone maps)")
    parser.add_argument("--thresholds", default=NET_THRESHOLDS_FILE, help="that net's cut-offs in --models")
    args = parser.parse_args(argv)
    train = tokens_of(args.data, args.pieces, args.seed)
    val = tokens_of([args.val], args.pieces, args.seed + 1)
    if not train:
        raise SystemExit(f"no clone token at least {SEEN} seen in {args.data}")
    w = fit(train)
    peak, rows = tune_clone_peak(
        args.val, args.pieces, args.models / args.model, args.models / args.thresholds, ParadoxReader(w, 0.5)
    )
    alone = {name: accuracy(val, np.eye(len(FEATURES))[k]) for k, name in enumerate(FEATURES)}
    out = {
        "features": list(FEATURES),
        "weights": [round(float(v), 5) for v in w],
        "train_tokens": len(train),
        "train_right_pct": round(100 * accuracy(train, w), 2),
        "val_tokens": len(val),
        "val_right_pct": round(100 * accuracy(val, w), 2),
        "val_right_pct_each_alone": {k: round(100 * v, 2) for k, v in alone.items()},
        "clone_peak": peak,
        "val_clones_by_clone_peak": {str(k): v for k, v in rows.items()},
    }
    (args.models / MODEL_FILE).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.models / MODEL_FILE}: {out}")


if __name__ == "__main__":
    main()
