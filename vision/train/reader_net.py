"""The rectified reader: a small CNN with a rank head and a suit head, trained on corner crops (`reader_data`).

Every crop is already upright and at one scale (the corner frame did that), so the net only has to tell glyphs
apart; a rank head (A..K, JOKER, none) and a suit head share the trunk, each rank learning from four suits' crops.

    python -m vision.train.reader_net train --data out/reader_crops/*.npz --val out/reader_crops/val.npz \
        --out out/runs/reader2 --minutes 30
    python -m vision.train.reader_net export --run out/runs/reader2 --onnx models/cards-corner-reader.onnx
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from vision.recognise.corners import READ_H, READ_W
from vision.recognise.labels import RANK_CLASSES, SUIT_CLASSES
from vision.train.reader_data import NO_SUIT, CropSet

FEATURES = 128


def block(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class CornerReader(nn.Module):
    """60 x 40 crop -> (rank logits, suit logits, features). Global pooling: the index may sit left or right."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Conv2d(3, 24, 3, 2, 1, bias=False),  # 30 x 20: an index stroke is still 1-3 px wide here
            nn.BatchNorm2d(24),
            nn.ReLU(inplace=True),
            nn.Conv2d(24, 32, 3, 1, 1, bias=False),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            block(32, 64, 2),  # 15 x 10
            block(64, FEATURES, 2),  # 8 x 5
        )
        self.rank = nn.Linear(FEATURES, len(RANK_CLASSES))
        self.suit = nn.Linear(FEATURES, len(SUIT_CLASSES))

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_avg_pool2d(self.trunk(x), 1).flatten(1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f = self.features(x)
        return self.rank(f), self.suit(f)


class Exported(nn.Module):
    """What ONNX Runtime runs: probabilities from both heads and the features enrolment refits."""

    def __init__(self, net: CornerReader) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        f = self.net.features(x)
        return F.softmax(self.net.rank(f), 1), F.softmax(self.net.suit(f), 1), f


def to_tensor(x: np.ndarray) -> torch.Tensor:
    """(n, h, w, 3) BGR uint8 -> (n, 3, h, w) RGB float 0-1, as the runtime feeds it."""
    return torch.from_numpy(np.ascontiguousarray(x[..., ::-1].transpose(0, 3, 1, 2))).float() / 255.0


def augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Cheap in-batch variety on top of the crops' own: exposure, contrast, a shift of a pixel or two."""
    n = x.shape[0]
    gain = 1 + (torch.rand(n, 1, 1, 1, generator=gen) - 0.5) * 0.5
    bias = (torch.rand(n, 1, 1, 1, generator=gen) - 0.5) * 0.3
    x = ((x - 0.5) * gain + 0.5 + bias).clamp(0, 1)
    dx, dy = (int(v) for v in torch.randint(-2, 3, (2,), generator=gen))
    return torch.roll(x, shifts=(dy, dx), dims=(2, 3))


def evaluate(model: CornerReader, data: CropSet, batch: int = 512) -> dict[str, float]:
    """Top-1 of the card (rank and suit both right; rank alone for jokers and none) on held-out crops."""
    model.eval()
    right, total, index_right, index_total = 0, 0, 0, 0
    with torch.no_grad():
        for i in range(0, len(data.rank), batch):
            rank_logits, suit_logits = model(to_tensor(data.x[i : i + batch]))
            rank = rank_logits.argmax(1).numpy()
            suit = suit_logits.argmax(1).numpy()
            true_rank, true_suit = data.rank[i : i + batch], data.suit[i : i + batch]
            ok = (rank == true_rank) & ((true_suit == NO_SUIT) | (suit == true_suit))
            right += int(ok.sum())
            total += len(ok)
            indexed = true_rank != RANK_CLASSES.index("none")
            index_right += int(ok[indexed].sum())
            index_total += int(indexed.sum())
    model.train()
    return {"top1": right / max(total, 1), "index_top1": index_right / max(index_total, 1), "n": total}


def train(
    data: Sequence[Path],
    val: Path | None,
    run: Path,
    minutes: float,
    batch: int,
    lr: float,
    seed: int,
    threads: int = 2,
) -> None:
    """Cosine schedule over a time budget, resumable from run/last.pt; validation every few minutes into the curve."""
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    sets = CropSet.concat([CropSet.load(p) for p in data])
    held = CropSet.load(val) if val else None
    print(f"{len(sets.rank)} training crops from {len(data)} files; {len(held.rank) if held else 0} validation")
    run.mkdir(parents=True, exist_ok=True)
    model = CornerReader()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    state = {"step": 0, "seconds": 0.0, "budget_s": minutes * 60}
    if (run / "last.pt").exists():
        saved = torch.load(run / "last.pt", weights_only=False)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        state = saved["state"]
        state["budget_s"] = max(state["budget_s"], minutes * 60)
    rng = np.random.default_rng(seed + state["step"])
    suit_target = torch.from_numpy(sets.suit)
    log = (run / "curve.jsonl").open("a")
    last_eval = time.time()
    running = 0.0
    while state["seconds"] < state["budget_s"]:
        t0 = time.time()
        frac = state["seconds"] / state["budget_s"]
        for group in opt.param_groups:
            group["lr"] = lr * min(1.0, (state["step"] + 1) / 300) * 0.5 * (1 + math.cos(math.pi * frac))
        idx = rng.integers(0, len(sets.rank), batch)
        x = augment(to_tensor(sets.x[idx]), gen)
        rank_logits, suit_logits = model(x)
        loss = F.cross_entropy(rank_logits, torch.from_numpy(sets.rank[idx]), label_smoothing=0.05)
        has_suit = suit_target[idx] != NO_SUIT
        if has_suit.any():
            loss = loss + F.cross_entropy(suit_logits[has_suit], suit_target[idx][has_suit], label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        state["step"] += 1
        state["seconds"] += time.time() - t0
        running = 0.98 * running + 0.02 * float(loss.detach()) if state["step"] > 1 else float(loss.detach())
        finished = state["seconds"] >= state["budget_s"]
        if time.time() - last_eval > 240 or finished:
            row = {"step": state["step"], "minutes": round(state["seconds"] / 60, 2), "crops": state["step"] * batch}
            row["loss"] = round(running, 4)
            if held is not None:
                row |= {f"val_{k}": v for k, v in evaluate(model, held).items()}
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(row, flush=True)
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state}, run / "tmp.pt")
            (run / "tmp.pt").replace(run / "last.pt")
            last_eval = time.time()
    log.close()


def export(run: Path, onnx_path: Path) -> None:
    net = CornerReader()
    net.load_state_dict(torch.load(run / "last.pt", weights_only=False)["model"])
    model = Exported(net).eval()
    torch.onnx.export(
        model,
        torch.zeros(4, 3, READ_H, READ_W),
        str(onnx_path),
        input_names=["crops"],
        output_names=["rank", "suit", "features"],
        dynamic_axes={"crops": {0: "n"}, "rank": {0: "n"}, "suit": {0: "n"}, "features": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )
    head = {
        "rank_weight": net.rank.weight.detach().numpy(),
        "rank_bias": net.rank.bias.detach().numpy(),
        "suit_weight": net.suit.weight.detach().numpy(),
        "suit_bias": net.suit.bias.detach().numpy(),
    }
    np.savez(onnx_path.with_name(onnx_path.stem + "-head.npz"), **head)
    print(f"wrote {onnx_path}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, nargs="+", required=True)
    t.add_argument("--val", type=Path)
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--minutes", type=float, default=30)
    t.add_argument("--batch", type=int, default=128)
    t.add_argument("--lr", type=float, default=2e-3)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=2, help="torch threads (1 when another training shares the CPU)")
    e = sub.add_parser("export")
    e.add_argument("--run", type=Path, required=True)
    e.add_argument("--onnx", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "train":
        train(args.data, args.val, args.out, args.minutes, args.batch, args.lr, args.seed, args.threads)
    else:
        export(args.run, args.onnx)


if __name__ == "__main__":
    main()
