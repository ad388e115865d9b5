"""Session 24 (scratch, kept for the record): index top-1 of reader checkpoints on held-out legible crops, by source.

Usage: PYTHONPATH=<torch> .venv/bin/python evalr.py THREADS CHECKPOINT [CHECKPOINT ...]
"""

import dataclasses
import sys
from pathlib import Path

import numpy as np
import torch

from vision.train import reader_net as rn
from vision.train.reader_data import CropSet
from vision.train.reader_net import CornerReader, to_tensor


def top1(model: CornerReader, crops: CropSet) -> str:
    """Rank and suit both right, on crops of a card's corner whose index is legible."""
    legible = (crops.rank != rn.ILLEGIBLE) & (crops.rank != model.none_rank) & (crops.face != rn.NOT_A_CARD)
    idx = np.nonzero(legible)[0]
    ranks, suits = [], []
    with torch.no_grad():
        for i in range(0, len(idx), 512):
            rank, suit, _, _ = model(to_tensor(crops.x[idx[i : i + 512]]))
            ranks.append(rank.argmax(1).numpy())
            suits.append(suit.argmax(1).numpy())
    rank, suit = np.concatenate(ranks), np.concatenate(suits)
    ok = (rank == crops.rank[idx]) & ((crops.suit[idx] == rn.NO_SUIT) | (suit == crops.suit[idx]))
    scene = crops.source[idx] == "scene"
    on_scene = ok[scene].mean() if scene.any() else float("nan")
    return f"{ok.mean():.4f} (scene {on_scene:.4f} / flat {ok[~scene].mean():.4f}, n={len(ok)})"


def main() -> None:
    torch.set_num_threads(int(sys.argv[1]))
    debian = CropSet.load(Path("out/reader_crops/val-cal.npz"))
    washed = np.clip((debian.x.astype(np.float32) - 127.5) * 0.3 + 127.5 + 25, 0, 255).astype(np.uint8)
    sets = {
        "val_debian": debian,
        "val_proc": CropSet.load(Path("out/gpu/crops/proc-val.npz")),
        "val_debian_faded30": dataclasses.replace(debian, x=washed),
    }
    for checkpoint in sys.argv[2:]:
        saved = torch.load(checkpoint, weights_only=False)
        model = CornerReader(saved.get("arch", "small"), saved.get("vocabulary", "cards"))
        model.load_state_dict(saved["model"])
        model.eval()
        line = [Path(checkpoint).parent.name, f"step {saved['state']['step']}"]
        line += [f"{name} {top1(model, crops)}" for name, crops in sets.items()]
        print(" | ".join(line), flush=True)


if __name__ == "__main__":
    main()
