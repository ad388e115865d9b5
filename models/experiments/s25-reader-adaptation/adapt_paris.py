"""Session 25 (scratch, kept for the record): reader9 fine-tuned on one deck's own crops, read on fresh scenes of it.

Usage (after gen.sh): PYTHONPATH=<torch> .venv/bin/python adapt_paris.py DECK MINUTES LR GENERAL_SHARE OUT [--soften]
GENERAL_SHARE: the share of each batch drawn from the recipe's Debian crops (0: the deck's own crops alone).
"""

import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from vision.train import reader_net as rn
from vision.train.reader_data import CropSet


def legible_top1(model: rn.CornerReader, crops: CropSet) -> str:
    """Rank and suit both right, on crops of a card's corner whose index is legible."""
    legible = (crops.rank != rn.ILLEGIBLE) & (crops.rank != model.none_rank) & (crops.face != rn.NOT_A_CARD)
    idx = np.nonzero(legible)[0]
    oks = []
    model.eval()
    with torch.no_grad():
        for i in range(0, len(idx), 512):
            rank, suit, _, _ = model(rn.to_tensor(crops.x[idx[i : i + 512]]))
            true_rank, true_suit = crops.rank[idx[i : i + 512]], crops.suit[idx[i : i + 512]]
            ok_suit = (true_suit == rn.NO_SUIT) | (suit.argmax(1).numpy() == true_suit)
            oks.append((rank.argmax(1).numpy() == true_rank) & ok_suit)
    model.train()
    return f"legible index top1 {np.concatenate(oks).mean():.4f} n={len(idx)}"


def main() -> None:
    deck, minutes, lr, share, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    soft = "--soften" in sys.argv
    torch.set_num_threads(2)
    torch.manual_seed(0)
    gen, rng = torch.Generator().manual_seed(0), np.random.default_rng(0)
    own = CropSet.concat([CropSet.load(Path(f"out/s25/{deck}-{k}.npz")) for k in ("train", "swap")])
    general = CropSet.concat(
        [CropSet.load(Path(p)) for p in ("out/reader_crops/s24-debian-scenes.npz", "out/gpu/crops/debian-swap.npz")]
    )
    held = CropSet.load(Path(f"out/s25/{deck}-eval.npz"))
    saved = torch.load("models/checkpoints/cards-corner-reader.last.pt", weights_only=False)
    model = rn.CornerReader(saved.get("arch", "small"), saved.get("vocabulary", "cards"))
    model.load_state_dict(saved["model"])
    print("before:", legible_top1(model, held), flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    batch, step, start, last = 128, 0, time.time(), time.time()
    while time.time() - start < minutes * 60:
        progress = (time.time() - start) / (minutes * 60)
        for group in opt.param_groups:
            group["lr"] = lr * min(1.0, (step + 1) / 100) * 0.5 * (1 + math.cos(math.pi * progress))
        n_general = round(batch * share)
        a, b = rng.integers(0, len(own.rank), batch - n_general), rng.integers(0, len(general.rank), n_general)
        x = rn.to_tensor(np.concatenate([own.x[a], general.x[b]]))
        x = rn.augment(rn.soften(x, gen) if soft else x, gen)
        rank = torch.from_numpy(np.concatenate([own.rank[a], general.rank[b]]))
        suit = torch.from_numpy(np.concatenate([own.suit[a], general.suit[b]]))
        face = torch.from_numpy(np.concatenate([own.face[a], general.face[b]]).astype(np.int64))
        rank_logits, suit_logits, face_logits, card_logits = model(x)
        loss = rn.rank_loss(rank_logits, suit_logits, rank, model.index_ranks)
        loss = loss + rn.side_loss(face_logits, card_logits, face)
        has_suit = suit != rn.NO_SUIT
        if has_suit.any():
            loss = loss + F.cross_entropy(suit_logits[has_suit], suit[has_suit], label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if time.time() - last > 120:
            print(f"{(time.time() - start) / 60:.1f} min step {step}", legible_top1(model, held), flush=True)
            last = time.time()
    print("after:", legible_top1(model, held), flush=True)
    Path(out).mkdir(parents=True, exist_ok=True)
    state = {"step": step, "seconds": minutes * 60, "budget_s": minutes * 60}
    torch.save({"model": model.state_dict(), "arch": model.arch, "vocabulary": model.vocabulary, "state": state},
               Path(out) / "last.pt")  # fmt: skip


if __name__ == "__main__":
    main()
