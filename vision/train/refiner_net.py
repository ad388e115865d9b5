"""The corner refiner: a small CNN that reads a grey patch around a found corner (`corner_refiner.PatchCutter`)
and says where the card's edges, its size and its corner really are (`corner_refiner.frame_targets`).

Trained on `refiner_data` patches. A tenth of each batch is also turned by a random number of quarter turns (patch
and targets together), so reversed guesses are taught beside the finder's own; the rest keep the patch's one
orientation, which is the finder's guess and right most of the time (turning every patch threw that away: after
4 minutes, 34% of edges grossly off against the finder's own 14%).

    python -m vision.train.refiner_net train --data out/refiner/train --val out/refiner/val --out out/runs/refiner \
        --minutes 60
    python -m vision.train.refiner_net export --run out/runs/refiner --onnx models/cards-corner-refiner.onnx
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from vision.recognise.corner_refiner import N_OUT, PATCH, SURE, frame_terms, ordered_edges, patch_blob
from vision.recognise.corners import right_handed
from vision.train.budget import add_budget_args, add_export_parser, export_onnx, train_for_budget
from vision.train.corner_net import conv_bn
from vision.train.refiner_data import PatchSet, turned_batch

GROSS_DEG = 30.0  # an edge off by more than this cuts a crop no reader can read (the stage bench's rule)
OFFSET_WEIGHT = 5.0  # the point's offset is in card widths: a typical error is a few hundredths
SIDE_WEIGHT = 0.3  # which edge is the short one, beside the geometry


class Refiner(nn.Module):
    """48 x 48 grey patch -> N_OUT numbers. No global pooling: where the edges run is the whole answer."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            conv_bn(1, 16, stride=2),  # 24
            conv_bn(16, 32, stride=2),  # 12
            conv_bn(32, 32),
            conv_bn(32, 64, stride=2),  # 6
            conv_bn(64, 64),
            conv_bn(64, 96, stride=2),  # 3
        )
        self.head = nn.Sequential(
            nn.Flatten(), nn.Linear(96 * 3 * 3, 128), nn.ReLU(inplace=True), nn.Linear(128, N_OUT)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(x))


def loss_of(pred: torch.Tensor, target: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """`target`: `ordered_edges`' regression targets; `right`: its class target."""
    directions = F.mse_loss(pred[:, :4], target[:, :4])
    lengths = F.smooth_l1_loss(pred[:, 4:6], target[:, 4:6], beta=0.1)
    offset = F.smooth_l1_loss(pred[:, 6:8], target[:, 6:8], beta=0.05)
    side = F.binary_cross_entropy_with_logits(pred[:, 8], right)
    return directions + lengths + OFFSET_WEIGHT * offset + SIDE_WEIGHT * side


def angles(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Degrees between rows of u and v (each (n, 2))."""
    cos = (u * v).sum(1) / np.maximum(np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1), 1e-9)
    return np.degrees(np.arccos(np.clip(cos, -1, 1)))


def frame_errors(pred: np.ndarray, target: np.ndarray) -> dict[str, float]:
    """How far `pred` (N_OUT numbers a row) is from `target`: the stage bench's terms."""
    turn_a, turn_b = angles(pred[:, 0:2], target[:, 0:2]), angles(pred[:, 2:4], target[:, 2:4])
    worst = np.maximum(turn_a, turn_b)
    return {
        "median_turn_deg": round(float(np.median(np.concatenate([turn_a, turn_b]))), 3),
        "p90_turn_deg": round(float(np.percentile(worst, 90)), 3),
        "gross": round(float(np.mean(worst > GROSS_DEG)), 4),
        "median_length_error": round(float(np.median(np.abs(pred[:, 4] - target[:, 4]))), 4),
        "median_point_error": round(float(np.median(np.linalg.norm(pred[:, 6:] - target[:, 6:], axis=1))), 4),
    }


def predict(model: Refiner, patches: np.ndarray, batch: int = 1024) -> np.ndarray:
    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(patches), batch):
            out.append(model(torch.from_numpy(patch_blob(patches[i : i + batch]))).numpy())
    model.train()
    return np.concatenate(out) if out else np.zeros((0, N_OUT), np.float32)


def evaluate(model: Refiner, held: PatchSet) -> dict[str, float]:
    """On the finder's own frames only (the runtime's case), the refiner's errors beside the finder's; also how often
    it says which edge is the short one at least SURE surely, and is right."""
    own = held.found == 1
    finder = held.finder[own]
    out = predict(model, held.x[own])
    refined = frame_errors(frame_terms(out, right_handed(finder[:, 0:2], finder[:, 2:4])), held.y[own])
    _, right = ordered_edges(held.y[own])
    p = 1 / (1 + np.exp(-out[:, 8]))
    said = (p >= SURE) | (p <= 1 - SURE)
    hit = ((p >= 0.5) == right)[said]
    side = {"side_said": round(float(said.mean()), 4), "side_right": round(float(hit.mean()) if len(hit) else 0.0, 4)}
    return (
        {f"refined_{k}": v for k, v in refined.items()}
        | side
        | {f"finder_{k}": v for k, v in frame_errors(finder, held.y[own]).items()}
    )


def load_folder(folder: Path) -> PatchSet:
    files = sorted(folder.glob("shard-*.npz"))
    files = [f for f in files if not f.name.endswith(".tmp.npz")]
    if not files:
        raise SystemExit(f"{folder}: no shards (run python -m vision.train.refiner_data first)")
    return PatchSet.concat([PatchSet.load(f) for f in files])


def train(
    data: Path, val: Path | None, run: Path, minutes: float, batch: int, lr: float, seed: int, threads: int
) -> None:
    """Cosine schedule over a time budget, resumable from run/last.pt; validation every few minutes into the curve."""
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    sets = load_folder(data)
    held = load_folder(val) if val else None
    print(f"{len(sets.y)} training patches; {len(held.y) if held else 0} validation", flush=True)
    run.mkdir(parents=True, exist_ok=True)
    saved = torch.load(run / "last.pt", weights_only=False) if (run / "last.pt").exists() else None
    model = Refiner()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    state = {"step": 0, "seconds": 0.0, "budget_s": minutes * 60}
    if saved:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        state = saved["state"]
        state["budget_s"] = max(state["budget_s"], minutes * 60)
    rng = np.random.default_rng(seed + state["step"])

    def next_loss() -> torch.Tensor:
        idx = rng.integers(0, len(sets.y), batch)
        x, y = turned_batch(sets.x[idx], sets.y[idx], rng)
        x = patch_blob(x) + rng.normal(0, 0.05, (len(x), 1, PATCH, PATCH)).astype(np.float32)
        target, right = ordered_edges(y)
        return loss_of(model(torch.from_numpy(x)), torch.from_numpy(target), torch.from_numpy(right))

    def held_out() -> dict:
        return evaluate(model, held) if held is not None else {}

    train_for_budget(model, opt, state, lr, next_loss, held_out, run, ("patches", batch))


def export(run: Path, onnx_path: Path) -> None:
    saved = torch.load(run / "last.pt", weights_only=False)
    model = Refiner()
    model.load_state_dict(saved["model"])
    dynamic = {"patches": {0: "n"}, "frame": {0: "n"}}
    export_onnx(model, torch.zeros(4, 1, PATCH, PATCH), onnx_path, ["patches"], ["frame"], dynamic)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, required=True, help="a folder of refiner_data shards")
    t.add_argument("--val", type=Path)
    add_budget_args(t, minutes=40, batch=256, lr=3e-3, threads=1)
    add_export_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "train":
        train(args.data, args.val, args.out, args.minutes, args.batch, args.lr, args.seed, args.threads)
    else:
        export(args.run, args.onnx)


if __name__ == "__main__":
    main()
