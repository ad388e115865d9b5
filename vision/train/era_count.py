"""The Era count reader (`vision.board.era_count`): trained on stored scenes read by the shipped cube net and checker
(`era_count_data`), each countable Era taught its true count per colour, given the checker's own.

    .venv/bin/python -m vision.train.era_count_data out/era-count/train.npz --data out/cubes/train
    .venv/bin/python -m vision.train.era_count_data out/era-count/val.npz --data out/cubes/val
    PYTHONPATH=<torch> .venv/bin/python -m vision.train.era_count train --data out/cubes/train \
        --readings out/era-count/train.npz --val out/cubes/val --val-readings out/era-count/val.npz \
        --out out/runs/era-count --minutes 45
    PYTHONPATH=<torch, onnx> .venv/bin/python -m vision.train.era_count export --run out/runs/era-count \
        --onnx models/the-loop-era-count.onnx
    .venv/bin/python -m vision.train.era_count tune --val out/cubes/val --val-readings out/era-count/val.npz
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vision.board.bench import countable
from vision.board.check import CHECK_THRESHOLDS_FILE, settle
from vision.board.cubes import COLOURS, CUBE_MM, counts_of, planes
from vision.board.era_count import (
    COUNT_CLASSES,
    ERA_BIN,
    ERA_COUNT_MODEL_FILE,
    ERA_COUNT_THRESHOLDS_FILE,
    ERA_PLANES,
    ERA_SIDE,
    GIVEN,
    chosen_counts,
    era_centres,
    era_input,
    head_probabilities,
    heat_planes,
    one_hot_counts,
    upright_axes,
)
from vision.board.rectify import px_per_mm
from vision.train.augment import off_bearing
from vision.train.cube_data import BoardRefs, cut_side, load_scenes

if TYPE_CHECKING:
    import torch

MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
TURN_JITTER = 10.0  # degrees an upright square is turned off the camera's bearing in training, at most (as the nets')


class EraSet:
    """Every countable Era of a folder of scenes (`cube_data`), with the shipped counter's readings there
    (`era_count_data`): the truth per colour, and what the checker alone counts; `upright`: each Era's square turned
    to its scene's camera (`era_count.era_inputs`)."""

    def __init__(
        self, folder: Path, readings: Path, pieces: Path, checker: dict, binning: int = ERA_BIN, upright: bool = False
    ) -> None:
        self.binning = binning
        scenes = load_scenes(folder)
        self.boards = BoardRefs(pieces, cut_side(scenes))
        self.size = self.boards.size
        data = np.load(readings)
        if len(data["heat"]) != len(scenes):
            raise ValueError(f"{readings}: {len(data['heat'])} scenes' readings, but {folder} holds {len(scenes)}")
        self.cuts = [s.cut() for s in scenes]
        self.heat = data["heat"]
        self.rows = [data["rows"][data["owner"] == n] for n in range(len(scenes))]
        self.design = [s.design for s in scenes]
        self.centres = {d: era_centres(self.boards.masks(d)) for d in set(self.design)}  # once per board
        self.eyes = [s.eye(self.size) for s in scenes] if upright else None
        apart = checker["apart_sides"] * CUBE_MM * px_per_mm(self.size)
        self.items: list[tuple[int, str]] = []
        truth, shipped = [], []
        for n, s in enumerate(scenes):
            got = counts_of(settled(self.rows[n], checker["accept"], apart), self.boards.masks(s.design))
            for era, info in s.eras.items():
                if countable(info):
                    self.items.append((n, era))
                    truth.append([int(info["counts"][c]) for c in COLOURS])
                    shipped.append([got[era][c] for c in COLOURS])
        self.truth = np.array(truth, np.int64).reshape(-1, len(COLOURS))
        self.shipped = np.array(shipped, np.int64).reshape(-1, len(COLOURS))

    def sample(self, k: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """What the reader reads of Era `k` (`era_count.era_input`); upright, turned off the camera's bearing by up to
        `TURN_JITTER` and mirrored about it half the time when given `rng` (training)."""
        n, era = self.items[k]
        masks = self.boards.masks(self.design[n])
        centre = self.centres[self.design[n]][era]
        axes = None
        if self.eyes is not None:
            axes = upright_axes([centre], self.eyes[n])[0]
            if rng is not None:
                axes = off_bearing(rng, axes, TURN_JITTER)
        return era_input(
            planes(self.cuts[n]),
            self.boards.planes(self.design[n]),
            masks[era],
            heat_planes(self.heat[n], self.size),
            self.rows[n],
            centre,
            ERA_SIDE,
            self.binning,
            axes,
        )


def settled(rows: np.ndarray, accept: float, apart_px: float) -> list[tuple[str, float, float, float]]:
    """The checker's readings among stored candidates (`era_count_data` rows, already moved by their offsets)."""
    probs = np.concatenate([1 - rows[:, 2:].sum(1, keepdims=True), rows[:, 2:]], 1)
    return settle([(float(x), float(y)) for x, y in rows[:, :2]], probs, np.zeros((len(rows), 2)), accept, apart_px)


def build_net(width: int = 16) -> torch.nn.Module:
    """A plain strided trunk over the Era's square (a cell every 16 cut pixels at its end), pooled by mean and max,
    then the checker's count beside it, and a head per colour."""
    import torch
    from torch import nn

    from vision.train.corner_net import conv_bn

    class EraNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            w = width
            self.trunk = nn.Sequential(
                conv_bn(ERA_PLANES, w, stride=2),
                conv_bn(w, 2 * w, stride=2),
                conv_bn(2 * w, 2 * w),
                conv_bn(2 * w, 4 * w, stride=2),
                conv_bn(4 * w, 4 * w),
                conv_bn(4 * w, 6 * w, stride=2),
                conv_bn(6 * w, 6 * w),
            )
            self.fc = nn.Sequential(nn.Linear(12 * w + GIVEN, 128), nn.ReLU(inplace=True))
            self.heads = nn.Linear(128, sum(COUNT_CLASSES))

        def forward(self, x: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
            f = self.trunk(x)
            return self.heads(self.fc(torch.cat([f.mean((2, 3)), f.amax((2, 3)), counts], 1)))

    return EraNet()


def split_logits(logits: torch.Tensor) -> list[torch.Tensor]:
    return list(logits.split(list(COUNT_CLASSES), dim=1))


def augment(x: np.ndarray, rng: np.random.Generator, turn: bool = True) -> np.ndarray:
    """The square turned by quarter turns and mirrored (every plane alike; not when `turn` is False: an upright
    square keeps the camera below it, `EraSet.sample` varies it), the cut's light varied per channel."""
    if turn:
        x = np.rot90(x, int(rng.integers(4)), axes=(1, 2))
        if rng.random() < 0.5:
            x = x[:, :, ::-1]
    x = np.ascontiguousarray(x)
    gain = rng.uniform(0.85, 1.15, 3).astype(np.float32)
    x[:3] = (x[:3] + 0.5) * gain[:, None, None] - 0.5 + np.float32(rng.uniform(-0.05, 0.05))
    return x


def read_all(run: Any, val: EraSet, batch: int = 64) -> list[np.ndarray]:
    """Per colour, the reader's probabilities (n, classes) for every Era of `val`; `run(x, counts)` gives logits."""
    parts = []
    for at in range(0, len(val.items), batch):
        ks = range(at, min(at + batch, len(val.items)))
        x = np.stack([val.sample(k) for k in ks])
        parts.append(run(x, one_hot_counts(val.shipped[list(ks)])))
    return head_probabilities(np.concatenate(parts))


def exact_share(chosen: np.ndarray, truth: np.ndarray) -> float:
    return round(float((chosen == truth).all(1).mean()), 4) if len(truth) else 0.0


def train(args: argparse.Namespace) -> None:
    import torch
    import torch.nn.functional as F

    from vision.train.budget import resume, train_for_budget

    torch.set_num_threads(args.threads)
    checker = json.loads((args.models / CHECK_THRESHOLDS_FILE).read_text())
    data = EraSet(args.data, args.readings, args.pieces, checker, args.bin, args.upright)
    val = EraSet(args.val, args.val_readings, args.pieces, checker, args.bin, args.upright)
    print(f"{len(data.items)} training Eras, {len(val.items)} validation Eras", file=sys.stderr)
    print(
        f"the checker alone counts {100 * exact_share(data.shipped, data.truth):.2f}% of training Eras", file=sys.stderr
    )
    net = build_net(args.width)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    state = resume(args.out, net, opt, args.minutes)
    rng = np.random.default_rng(args.seed + state["step"])
    classes = np.array(COUNT_CLASSES) - 1

    def next_loss() -> torch.Tensor:
        picks = rng.integers(0, len(data.items), args.batch)
        x = torch.from_numpy(np.stack([augment(data.sample(int(k), rng), rng, not args.upright) for k in picks]))
        y = torch.from_numpy(np.minimum(data.truth[picks], classes))
        logits = split_logits(net(x, torch.from_numpy(one_hot_counts(data.shipped[picks]))))
        return sum(F.cross_entropy(lg, y[:, c], label_smoothing=0.02) for c, lg in enumerate(logits))

    def evaluate() -> dict:
        net.eval()
        with torch.no_grad():
            probs = read_all(lambda x, c: net(torch.from_numpy(x), torch.from_numpy(c)).numpy(), val)
        net.train()
        said = np.stack([p.argmax(1) for p in probs], 1)
        return {
            "val_eras": len(val.items),
            "exact": exact_share(said, val.truth),
            "checker": exact_share(val.shipped, val.truth),
        }

    train_for_budget(
        net,
        opt,
        state,
        args.lr,
        next_loss,
        evaluate,
        args.out,
        ("eras", args.batch),
        {"binning": args.bin, "upright": args.upright},
        warmup=200,
        every_s=args.every,
    )


def export(run: Path, onnx: Path) -> None:
    import torch

    from vision.train.budget import export_onnx

    checkpoint = torch.load(run / "last.pt", weights_only=False)
    weights, side = checkpoint["model"], ERA_SIDE // int(checkpoint.get("binning", 1))
    net = build_net(int(weights["trunk.0.0.weight"].shape[0]))
    net.load_state_dict(weights)
    dummy = (torch.zeros(2, ERA_PLANES, side, side), torch.zeros(2, GIVEN))
    export_onnx(net, dummy, onnx, ["x", "counts"], ["logits"], {"x": {0: "n"}, "counts": {0: "n"}, "logits": {0: "n"}})


def tune(val_folder: Path, readings: Path, pieces: Path, models: Path, upright: bool = False) -> dict:
    """The margin by which the reader's count must beat the checker's to replace it, chosen on validation Eras; an
    `upright` reader (trained so) reads each square turned to the camera."""
    from vision.recognise.models import session

    checker = json.loads((models / CHECK_THRESHOLDS_FILE).read_text())
    net = session(models / ERA_COUNT_MODEL_FILE)
    binning = ERA_SIDE // int(net.get_inputs()[0].shape[-1])
    val = EraSet(val_folder, readings, pieces, checker, binning, upright)
    probs = read_all(lambda x, c: net.run(None, {"x": x, "counts": c})[0], val)
    scores = {m: exact_share(chosen_counts(probs, val.shipped, m), val.truth) for m in MARGINS}
    best = max(MARGINS, key=lambda m: (scores[m], m))
    out = {
        "cut_px": val.size,
        "side": ERA_SIDE,
        "bin": binning,
        "margin": best,
        "upright": upright,
        "val_eras": len(val.items),
        "val_exact_pct": round(100 * scores[best], 2),
        "val_checker_alone_pct": round(100 * exact_share(val.shipped, val.truth), 2),
        "val_by_margin_pct": {str(m): round(100 * v, 2) for m, v in scores.items()},
    }
    (models / ERA_COUNT_THRESHOLDS_FILE).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {models / ERA_COUNT_THRESHOLDS_FILE}: {out}")
    return out


def main(argv: list[str] | None = None) -> None:
    from vision.train.budget import add_budget_args, add_export_parser

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, required=True, help="cube_data scenes")
    t.add_argument("--readings", type=Path, required=True, help="era_count_data's readings of those scenes")
    t.add_argument("--val", type=Path, required=True)
    t.add_argument("--val-readings", type=Path, required=True)
    t.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    t.add_argument("--models", type=Path, default=Path("models"), help="where the checker's settings are")
    t.add_argument("--every", type=float, default=450.0, help="seconds between validation rows")
    t.add_argument("--width", type=int, default=16)
    t.add_argument("--bin", type=int, default=ERA_BIN, choices=(1, 2, 4), help="the Era's square read binned so")
    t.add_argument("--upright", action="store_true", help="each Era's square turned to the camera (session 60)")
    add_budget_args(t, minutes=45.0, batch=32, lr=2e-3, threads=2)
    add_export_parser(sub)
    u = sub.add_parser("tune")
    u.add_argument("--val", type=Path, required=True)
    u.add_argument("--val-readings", type=Path, required=True)
    u.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    u.add_argument("--models", type=Path, default=Path("models"))
    u.add_argument("--upright", action="store_true", help="the reader was trained with --upright")
    args = parser.parse_args(argv)
    if args.command == "train":
        train(args)
    elif args.command == "export":
        export(args.run, args.onnx)
    else:
        tune(args.val, args.val_readings, args.pieces, args.models, args.upright)


if __name__ == "__main__":
    main()
