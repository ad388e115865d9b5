"""The card embedder: a small CNN that puts a rectified catalogue card from the camera next to its own clean picture
and away from its design's other cards, trained on `catalogue_data` crops of training designs.

Why an embedding and not a classifier: the catalogue is whatever the player enrols (another design, another game's
cards), so the net must compare, not name. Each step draws crops of one design and embeds all that design's
pictures with the same net; the loss is the cross-entropy of each crop's cosine similarities to the pictures
(prototypes, one picture each), so a card is learnt against exactly the cards it must be told from.

    python -m vision.train.catalogue_net train --data out/catalogue_crops/train.npz \
        --val out/catalogue_crops/val.npz --out out/runs/embedder --minutes 30
    python -m vision.train.catalogue_net export --run out/runs/embedder --onnx models/catalogue-embedder.onnx
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from vision.recognise.catalogue import EMBED_SIZE
from vision.train.budget import add_budget_args, export_onnx, resume, train_for_budget, train_or_export
from vision.train.reader_net import to_tensor

DIM = 96
SCALE = 16.0  # cosine similarities times this are the logits


class Embedder(nn.Module):
    """(n, 3, 56, 40) RGB 0-1 -> (n, DIM) unit vectors. Average and max pooling side by side: a card's telling art
    may fill a small part of it."""

    def __init__(self) -> None:
        super().__init__()

        def conv(cin: int, cout: int, stride: int) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        self.trunk = nn.Sequential(
            *conv(3, 24, 1),
            *conv(24, 48, 2),  # 28 x 20
            *conv(48, 48, 1),
            *conv(48, 96, 2),  # 14 x 10
            *conv(96, 96, 1),
            *conv(96, 128, 2),  # 7 x 5
        )
        self.head = nn.Linear(256, DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.trunk(x)
        f = torch.cat([F.adaptive_avg_pool2d(t, 1).flatten(1), F.adaptive_max_pool2d(t, 1).flatten(1)], 1)
        return F.normalize(self.head(f), dim=1)


def augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Exposure, contrast and colour cast per crop: what a room's light does beyond the scenes' own."""
    n = x.shape[0]
    gain = 1 + (torch.rand(n, 1, 1, 1, generator=gen) - 0.5) * 0.4
    bias = (torch.rand(n, 1, 1, 1, generator=gen) - 0.5) * 0.2
    cast = 1 + (torch.rand(n, 3, 1, 1, generator=gen) - 0.5) * 0.15
    return ((x - 0.5) * gain * cast + 0.5 + bias).clamp(0, 1)


class CropSet:
    """Crops grouped by design, with each design's pictures."""

    def __init__(self, path: Path) -> None:
        with np.load(path) as data:
            self.crops = data["crops"]
            self.design = data["design"]
            self.code = data["code"]
            self.pictures = data["pictures"]
            self.offsets = data["offsets"]
        self.by_design = [np.nonzero(self.design == d)[0] for d in range(len(self.offsets) - 1)]

    def pictures_of(self, d: int) -> np.ndarray:
        return self.pictures[self.offsets[d] : self.offsets[d + 1]]


def design_loss(
    net: Embedder, crops: np.ndarray, codes: np.ndarray, pictures: np.ndarray, gen: torch.Generator | None
) -> tuple[torch.Tensor, torch.Tensor]:
    x, p = to_tensor(crops), to_tensor(pictures)
    if gen is not None:
        x, p = augment(x, gen), augment(p, gen)
    emb = net(torch.cat([x, p]))
    logits = SCALE * emb[: len(x)] @ emb[len(x) :].T
    target = torch.from_numpy(codes.astype(np.int64))
    return F.cross_entropy(logits, target), (logits.argmax(1) == target).float().mean()


def evaluate(net: Embedder, val: CropSet, limit: int = 400) -> dict:
    net.eval()
    right = total = 0
    with torch.no_grad():
        for d, idx in enumerate(val.by_design):
            idx = idx[:limit]
            if not len(idx):
                continue
            _loss, acc = design_loss(net, val.crops[idx], val.code[idx], val.pictures_of(d), None)
            right += float(acc) * len(idx)
            total += len(idx)
    net.train()
    return {"val_top1": right / max(total, 1), "val_n": total}


def train(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    data, val = CropSet(args.data), CropSet(args.val)
    net = Embedder()
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    state = resume(args.out, net, opt, args.minutes)
    rng = np.random.default_rng(args.seed + state["step"])
    gen = torch.Generator().manual_seed(args.seed + state["step"])
    usable = [d for d, idx in enumerate(data.by_design) if len(idx)]

    def next_loss() -> torch.Tensor:
        d = int(rng.choice(usable))
        idx = rng.choice(data.by_design[d], min(args.batch, len(data.by_design[d])), replace=False)
        loss, _acc = design_loss(net, data.crops[idx], data.code[idx], data.pictures_of(d), gen)
        return loss

    train_for_budget(net, opt, state, args.lr, next_loss, lambda: evaluate(net, val), args.out, ("crops", args.batch))


def export(run: Path, onnx: Path) -> None:
    net = Embedder()
    net.load_state_dict(torch.load(run / "last.pt", weights_only=False)["model"])
    w, h = EMBED_SIZE
    export_onnx(
        net, torch.zeros(1, 3, h, w), onnx, ["images"], ["embeddings"], {"images": {0: "n"}, "embeddings": {0: "n"}}
    )
    print(f"{onnx}")


def add_train_args(t: argparse.ArgumentParser) -> None:
    t.add_argument("--data", type=Path, required=True)
    t.add_argument("--val", type=Path, required=True)
    add_budget_args(t, minutes=30, batch=64, lr=2e-3, threads=1)


def main(argv: Sequence[str] | None = None) -> None:
    train_or_export(__doc__.splitlines()[0], add_train_args, train, export, list(argv) if argv is not None else None)


if __name__ == "__main__":
    main()
