"""Where the corner reader's limit lies, measured on a lent GPU: capacity, compute, or the data.

Not a recipe step and not shipped. The reader reads about 85% of held-out legible index crops and does not fit its own
(models/cards-corners.md, "Limits"). On the CPU a bigger trunk costs 2.5x a step, so the question "would a bigger
reader, or more steps, read better?" costs hours there and minutes on a GPU. This trains several readers from nothing
on the same crops, each to the same number of crops seen (or a wall-clock cap; the cosine ends at either), and logs
each one's learning curve: index top-1 on held-out Debian families (flat and scene crops apart), held-out procedural
fonts, and a training subset (does it fit what it sees?).

A lent machine takes at most 64 MiB of working tree a call, so crops travel as JPEG mosaics (`pack`, quality 90:
the shipped reader reads them as it reads the raw crops, 82.19% against 82.26% on the Debian validation crops).

    python -m vision.train.reader_probe pack out/gpu/p1/train_debian.npz out/reader_crops/debian-train.npz
    python -m vision.train.reader_probe run out/gpu/data --arms small:8000:100 big:8000:160
(session 22, models/cards-corners.md "Session 22"; curves in models/experiments/s22-reader-probe/).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from vision.recognise.corners import READ_H, READ_W
from vision.train.budget import cosine_lr
from vision.train.reader_data import NO_SUIT, NOT_A_CARD, CropSet
from vision.train.reader_net import CornerReader, augment, block, rank_loss, side_loss, soften

COLS, ROWS = 64, 32  # crops per mosaic row and column: one JPEG header for 2,048 crops
BIG_CHANNELS = (32, 64, 128, 256)  # "big": 2.7 M parameters, every stage with a residual block


def pack(out: Path, files: Sequence[Path], quality: int = 90) -> int:
    """Crop files -> one file of JPEG mosaics and the labels; returns the number of crops."""
    crops = CropSet.concat([CropSet.load(f) for f in files])
    per, blobs = COLS * ROWS, []
    for i in range(0, len(crops.rank), per):
        part = np.zeros((per, READ_H, READ_W, 3), np.uint8)
        part[: min(per, len(crops.rank) - i)] = crops.x[i : i + per]
        mosaic = part.reshape(ROWS, COLS, READ_H, READ_W, 3).transpose(0, 2, 1, 3, 4).reshape(ROWS * READ_H, -1, 3)
        blobs.append(cv2.imencode(".jpg", mosaic, [cv2.IMWRITE_JPEG_QUALITY, quality])[1].ravel())
    scene = np.array([s == "scene" for s in crops.source])
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        out,
        jpeg=np.concatenate(blobs),
        lengths=np.array([len(b) for b in blobs]),
        n=len(crops.rank),
        rank=crops.rank.astype(np.int8),
        suit=crops.suit.astype(np.int8),
        face=crops.face,
        scene=scene,
    )
    return len(crops.rank)


def unpack(path: Path, device: str) -> dict[str, torch.Tensor]:
    """A packed file as tensors on `device`: x (n, 3, H, W) uint8 RGB, the labels int64, `scene` bool."""
    d = np.load(path)
    parts, start = [], 0
    for length in d["lengths"]:
        mosaic = cv2.imdecode(d["jpeg"][start : start + length], cv2.IMREAD_COLOR)
        start += length
        parts.append(
            mosaic.reshape(ROWS, READ_H, COLS, READ_W, 3).transpose(0, 2, 1, 3, 4).reshape(-1, READ_H, READ_W, 3)
        )
    x = np.concatenate(parts)[: int(d["n"])]
    out = {"x": torch.from_numpy(np.ascontiguousarray(x[..., ::-1].transpose(0, 3, 1, 2))).to(device)}
    out |= {k: torch.from_numpy(d[k].astype(np.int64)).to(device) for k in ("rank", "suit", "face")}
    out["scene"] = torch.from_numpy(d["scene"]).to(device)
    return out


class Residual(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(c, c, 3, 1, 1, bias=False),
            nn.BatchNorm2d(c),
            nn.ReLU(inplace=True),
            nn.Conv2d(c, c, 3, 1, 1, bias=False),
            nn.BatchNorm2d(c),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.body(x))


def make_reader(arch: str) -> CornerReader:
    """The shipped trunks ("small", "wide") or "big": full resolution first, a residual block at every stage, 10x
    the small trunk's parameters; the heads as the reader's, on average and max pooling."""
    if arch != "big":
        return CornerReader(arch)
    net = CornerReader("wide")
    c = BIG_CHANNELS
    net.trunk = nn.Sequential(
        nn.Conv2d(3, c[0], 3, 1, 1, bias=False),
        nn.BatchNorm2d(c[0]),
        nn.ReLU(inplace=True),
        Residual(c[0]),
        *(m for i in range(1, 4) for m in (block(c[i - 1], c[i], 2), Residual(c[i]))),
    )
    net.n_features = 2 * c[3]
    for name in ("rank", "suit", "face", "card"):
        setattr(net, name, nn.Linear(net.n_features, getattr(net, name).out_features))
    return net


@torch.no_grad()
def index_top1(net: CornerReader, d: dict[str, torch.Tensor], mask: torch.Tensor) -> float:
    """Rank and suit both right over the crops in `mask`."""
    net.eval()
    rows, right = torch.nonzero(mask).flatten(), 0
    for i in range(0, len(rows), 4096):
        j = rows[i : i + 4096]
        with torch.autocast("cuda", torch.bfloat16, enabled=d["x"].is_cuda):
            rank, suit, _, _ = net(d["x"][j].float() / 255)
        right += int(
            ((rank.argmax(1) == d["rank"][j]) & ((d["suit"][j] == NO_SUIT) | (suit.argmax(1) == d["suit"][j]))).sum()
        )
    net.train()
    return round(right / max(len(rows), 1), 4)


def held_out(net: CornerReader, sets: dict[str, dict[str, torch.Tensor]]) -> dict[str, float]:
    """Index top-1 on each set's legible index crops (a card's corner, rank readable, not "none")."""
    row = {}
    for name, d in sets.items():
        legible = (d["rank"] >= 0) & (d["rank"] != net.none_rank) & (d["face"] != NOT_A_CARD)
        row[name] = index_top1(net, d, legible)
        if d["scene"].any():
            row[f"{name}_scene"] = index_top1(net, d, legible & d["scene"])
            row[f"{name}_flat"] = index_top1(net, d, legible & ~d["scene"])
    return row


def train_arm(
    arch: str, steps: int, wall_s: float, train: dict[str, torch.Tensor], sets: dict, log: Path, batch: int = 512
) -> None:
    """One reader from nothing: AdamW on the cosine (300 warm-up steps), ended by `steps` or `wall_s` of stepping."""
    device = train["x"].device
    torch.manual_seed(0)
    gen = torch.Generator(device).manual_seed(0)
    net = make_reader(arch).to(device)
    lr = 3e-3
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=5e-4)
    params = sum(p.numel() for p in net.parameters())
    n, start, eval_s, running = len(train["rank"]), time.time(), 0.0, 0.0
    with log.open("w") as out:
        for step in range(1, steps + 1):
            progress = min(1.0, max(step / steps, (time.time() - start - eval_s) / wall_s))
            cosine_lr(opt, lr, step - 1, progress, warmup=300)
            idx = torch.randint(0, n, (batch,), device=device, generator=gen)
            x = augment(soften(train["x"][idx].float() / 255, gen), gen)
            with torch.autocast("cuda", torch.bfloat16, enabled=x.is_cuda):
                rank, suit, face, card = (t.float() for t in net(x))
            loss = rank_loss(rank, suit, train["rank"][idx], net.index_ranks) + side_loss(
                face, card, train["face"][idx]
            )
            has_suit = train["suit"][idx] != NO_SUIT
            loss = loss + F.cross_entropy(suit[has_suit], train["suit"][idx][has_suit], label_smoothing=0.05)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 50 == 0:
                value = float(loss.detach())
                running = value if not running else 0.9 * running + 0.1 * value
            stopped = progress >= 1.0 and step < steps
            if step % max(1, steps // 8) == 0 or step == steps or stopped:
                t0 = time.time()
                row = {"arch": arch, "params": params, "step": step, "crops": step * batch}
                row |= {"seconds": round(t0 - start - eval_s, 1), "loss": round(running, 4), **held_out(net, sets)}
                print(json.dumps(row), flush=True)
                out.write(json.dumps(row) + "\n")
                out.flush()
                eval_s += time.time() - t0
            if stopped:
                break


def run(data: Path, arms: Sequence[str], out: Path) -> None:
    """Every `train*.npz` in `data` trains; `val_debian.npz` and `val_proc.npz` are held out."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    out.mkdir(parents=True, exist_ok=True)
    parts = [unpack(p, device) for p in sorted(data.glob("train*.npz"))]
    train = {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
    sets = {name: unpack(data / f"{name}.npz", device) for name in ("val_debian", "val_proc")}
    pick = torch.randperm(len(train["rank"]), generator=torch.Generator().manual_seed(1))[:6000].to(device)
    sets["train_subset"] = {k: v[pick] for k, v in train.items()} | {"scene": torch.zeros(6000, dtype=torch.bool)}
    print(f"{len(train['rank'])} training crops on {device}", flush=True)
    for arm in arms:
        arch, steps, wall = arm.split(":")
        train_arm(arch, int(steps), float(wall), train, sets, out / f"curve-{arch}-{steps}.jsonl")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="crop files -> one file of JPEG mosaics")
    p.add_argument("out", type=Path)
    p.add_argument("files", type=Path, nargs="+")
    r = sub.add_parser("run", help="train the arms on the packed crops in DATA")
    r.add_argument("data", type=Path)
    r.add_argument("--arms", nargs="+", default=["small:8000:100", "big:8000:160"], help="ARCH:STEPS:WALL_SECONDS")
    r.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "out/reader_probe")))
    args = parser.parse_args(argv)
    if args.command == "pack":
        print(f"{pack(args.out, args.files)} crops -> {args.out}")
    else:
        run(args.data, args.arms, args.out)


if __name__ == "__main__":
    main()
