"""The rectified reader: a small CNN with a rank head and a suit head, trained on corner crops (`reader_data`).

Every crop is already upright and at one scale (the corner frame did that), so the net only has to tell glyphs
apart; a rank head (A..K, JOKER, none) and a suit head share the trunk, each rank learning from four suits' crops.

    python -m vision.train.reader_net train --data out/reader_crops/*.npz --val out/reader_crops/val.npz \
        --out out/runs/reader2 --minutes 30
    python -m vision.train.reader_net export --run out/runs/reader2 --onnx models/cards-corner-reader.onnx
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from vision.recognise.corners import READ_H, READ_W
from vision.recognise.labels import NONE, VOCABULARIES
from vision.train.budget import add_budget_args, add_export_parser, export_onnx, train_for_budget
from vision.train.reader_data import ILLEGIBLE, NO_SUIT, NOT_A_CARD, CropSet

ILLEGIBLE_WEIGHT = 0.3  # a flat belief is a weak lesson: it must not outweigh the crops that can be read
CARD_WEIGHT = 0.5  # the card head's loss beside the others (as the face head's)
FEATURES = 128
WIDE_CHANNELS = 160
ARCHS = {"small": FEATURES, "wide": 2 * WIDE_CHANNELS}  # trunk -> feature length


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
    """60 x 40 crop -> (rank, suit, face, card logits). Global pooling: the index may sit left or right.

    Two trunks, chosen by `arch` and kept in the checkpoint:
    - "small" (issue 18's first reader, 0.29 M parameters): a stride-2 first layer and average pooling;
    - "wide" (0.5 M): the first layer at the crop's full resolution (an index stroke is 1-3 px wide, and a stride-2
      first layer averages it away before anything has looked at it), wider stages, and average and max pooling
      side by side, so a small glyph's strongest response is not diluted by the empty card around it.
    """

    def __init__(self, arch: str = "small", vocabulary: str = "cards") -> None:
        super().__init__()
        if arch not in ARCHS:
            raise ValueError(f"unknown reader architecture '{arch}' (expected one of {', '.join(ARCHS)})")
        if vocabulary not in VOCABULARIES:
            raise ValueError(f"unknown reader vocabulary '{vocabulary}' (expected one of {', '.join(VOCABULARIES)})")
        self.arch = arch
        self.vocabulary = vocabulary
        rank_classes, suit_classes = VOCABULARIES[vocabulary]
        # what an illegible index may be: any index class, none excluded
        self.index_ranks = [i for i, name in enumerate(rank_classes) if name != NONE]
        self.none_rank = rank_classes.index(NONE)
        if arch == "small":
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
        else:
            self.trunk = nn.Sequential(
                nn.Conv2d(3, 24, 3, 1, 1, bias=False),  # 60 x 40, full resolution
                nn.BatchNorm2d(24),
                nn.ReLU(inplace=True),
                nn.Conv2d(24, 48, 3, 2, 1, bias=False),  # 30 x 20
                nn.BatchNorm2d(48),
                nn.ReLU(inplace=True),
                block(48, 96, 2),  # 15 x 10
                block(96, WIDE_CHANNELS, 2),  # 8 x 5
            )
        self.n_features = ARCHS[arch]
        self.rank = nn.Linear(self.n_features, len(rank_classes))
        self.suit = nn.Linear(self.n_features, len(suit_classes))
        self.face = nn.Linear(self.n_features, 1)  # a face's corner (any, indexed or not) against a back's
        # a card's corner (either side) against anything else the finder fires on (session 16)
        self.card = nn.Linear(self.n_features, 1)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        t = self.trunk(x)
        if self.arch == "small":
            return F.adaptive_avg_pool2d(t, 1).flatten(1)
        return torch.cat([F.adaptive_avg_pool2d(t, 1).flatten(1), F.adaptive_max_pool2d(t, 1).flatten(1)], 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        f = self.features(x)
        return self.rank(f), self.suit(f), self.face(f)[:, 0], self.card(f)[:, 0]


class Exported(nn.Module):
    """What ONNX Runtime runs: probabilities from the rank and suit heads, the pooled features (kept in the graph so
    a later enrolment design may use them; the matcher of enrolled decks does not), and the probability that the
    corner is a face's: a face with no index to read (a joker printing none, a blurred index) is not a back; and the
    probability that it is a card's corner at all (`card`), not a phone's, a tile's or a pip's."""

    def __init__(self, net: CornerReader) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        f = self.net.features(x)
        face = torch.sigmoid(self.net.face(f)[:, 0])
        card = torch.sigmoid(self.net.card(f)[:, 0])
        return F.softmax(self.net.rank(f), 1), F.softmax(self.net.suit(f), 1), f, face, card


def to_tensor(x: np.ndarray) -> torch.Tensor:
    """(n, h, w, 3) BGR uint8 -> (n, 3, h, w) RGB float 0-1, as the runtime feeds it."""
    return torch.from_numpy(np.ascontiguousarray(x[..., ::-1].transpose(0, 3, 1, 2))).float() / 255.0


def augment(x: torch.Tensor, gen: torch.Generator, faded: float = 0.0) -> torch.Tensor:
    """Cheap in-batch variety on top of the crops' own: exposure, contrast, a shift of a pixel or two. A share
    `faded` of the crops keeps only 20-50% of its contrast: a lamp's glare or a washed-out print. Session 23
    measured the shipped reader on legible validation corners at about 55% where the index kept under a quarter of
    its printed contrast (9% of them), against about 90% at half or more. Off by default: session 24's continuation
    with 0.15 read faded crops better and validation scenes worse (models/cards-corners.md, "Session 24")."""
    n, dev = x.shape[0], gen.device
    gain = 1 + (torch.rand(n, 1, 1, 1, generator=gen, device=dev) - 0.5) * 0.5
    if faded > 0:  # drawn only when asked, so a run without fading draws what it drew before session 24
        fade = torch.rand(n, 1, 1, 1, generator=gen, device=dev) < faded
        gain = torch.where(fade, 0.2 + 0.3 * torch.rand(n, 1, 1, 1, generator=gen, device=dev), gain)
    bias = (torch.rand(n, 1, 1, 1, generator=gen, device=dev) - 0.5) * 0.3
    x = ((x - 0.5) * gain + 0.5 + bias).clamp(0, 1)
    dx, dy = (int(v) for v in torch.randint(-2, 3, (2,), generator=gen, device=dev))
    return torch.roll(x, shifts=(dy, dx), dims=(2, 3))


def soften(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """The losses of a small or moving card, applied to random parts of the batch: a quarter is shrunk to 35-80%
    and blown up again (a card far from the camera: fewer pixels on the index), a sixth is smeared along a random
    line (motion), a sixth defocused. Most crops are cut from flat cards at a generous size; the camera's frames
    are smaller and softer (issue 18: the reader read 69% of true crops of cards 60-100 px wide, 98% flat).
    Runs where `gen` lives (the GPU probe, `reader_probe`, draws on the GPU)."""
    n, _, h, w = x.shape
    dev = gen.device
    roll = torch.rand(n, generator=gen, device=dev)
    out = x.clone()
    small = roll < 0.25
    if small.any():
        k = float(0.35 + 0.45 * torch.rand(1, generator=gen, device=dev))
        part = F.interpolate(x[small], size=(max(4, round(h * k)), max(3, round(w * k))), mode="area")
        out[small] = F.interpolate(part, size=(h, w), mode="bilinear", align_corners=False)
    moving = (roll >= 0.25) & (roll < 0.42)
    if moving.any():
        length = int(torch.randint(3, 8, (1,), generator=gen, device=dev))
        angle = float(torch.rand(1, generator=gen, device=dev)) * math.pi
        t = torch.linspace(-(length - 1) / 2, (length - 1) / 2, length * 3)
        kernel = torch.zeros(length + 2, length + 2)
        cx = (length + 1) / 2
        kernel[(cx + t * math.sin(angle)).round().long(), (cx + t * math.cos(angle)).round().long()] = 1.0
        kernel = (kernel / kernel.sum()).expand(3, 1, *kernel.shape).to(x.device)
        pad = (length + 2) // 2
        part = F.pad(x[moving], (pad, pad, pad, pad), mode="replicate")
        out[moving] = F.conv2d(part, kernel, groups=3)[..., :h, :w]
    soft = (roll >= 0.42) & (roll < 0.59)
    if soft.any():
        sigma = float(0.6 + 0.9 * torch.rand(1, generator=gen, device=dev))
        r = torch.arange(-3, 4, dtype=torch.float32)
        g = torch.exp(-(r**2) / (2 * sigma * sigma))
        g = (g / g.sum()).to(x.device)
        part = F.pad(x[soft], (3, 3, 3, 3), mode="replicate")
        part = F.conv2d(part, g.view(1, 1, 1, 7).expand(3, 1, 1, 7), groups=3)
        out[soft] = F.conv2d(part, g.view(1, 1, 7, 1).expand(3, 1, 7, 1), groups=3)
    return out


def evaluate(model: CornerReader, data: CropSet, batch: int = 512) -> dict[str, float]:
    """Top-1 of the card (rank and suit both right; rank alone for jokers and none) on held-out crops of cards that
    can be read, the mean top probability the reader gives the crops whose index cannot (lower is more honest),
    and the card head's share of cards' corners kept and of false corners turned away."""
    model.eval()
    right, total, index_right, index_total, face_right, face_total = 0, 0, 0, 0, 0, 0
    card_right, card_total, false_right, false_total = 0, 0, 0, 0
    unsure_sum, unsure_n = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(data.rank), batch):
            rank_logits, suit_logits, face_logits, card_logits = model(to_tensor(data.x[i : i + batch]))
            face, true_face = (face_logits > 0).numpy(), data.face[i : i + batch]
            sided = (true_face == 0) | (true_face == 1)
            face_right += int((face[sided] == true_face[sided].astype(bool)).sum())
            face_total += int(sided.sum())
            card, no_card = (card_logits > 0).numpy(), true_face == NOT_A_CARD
            card_right += int(card[sided].sum())
            card_total += int(sided.sum())
            false_right += int((~card[no_card]).sum())
            false_total += int(no_card.sum())
            rank = rank_logits.argmax(1).numpy()
            suit = suit_logits.argmax(1).numpy()
            true_rank, true_suit = data.rank[i : i + batch], data.suit[i : i + batch]
            illegible = true_rank == ILLEGIBLE
            if illegible.any():
                top_rank = F.softmax(rank_logits[illegible], 1).max(1).values
                top = top_rank * F.softmax(suit_logits[illegible], 1).max(1).values
                unsure_sum += float(top.sum())
                unsure_n += int(illegible.sum())
            card_crop = ~illegible & ~no_card  # a card's corner that can be read
            rank, suit = rank[card_crop], suit[card_crop]
            true_rank, true_suit = true_rank[card_crop], true_suit[card_crop]
            ok = (rank == true_rank) & ((true_suit == NO_SUIT) | (suit == true_suit))
            right += int(ok.sum())
            total += len(ok)
            indexed = true_rank != model.none_rank
            index_right += int(ok[indexed].sum())
            index_total += int(indexed.sum())
    model.train()
    return {
        "top1": right / max(total, 1),
        "index_top1": index_right / max(index_total, 1),
        "face_acc": face_right / max(face_total, 1),
        "card_kept": card_right / max(card_total, 1),  # cards' corners the card head keeps
        "false_dropped": false_right / max(false_total, 1),  # false corners it turns away
        "false_n": false_total,
        "n": total,
        "illegible_belief": unsure_sum / max(unsure_n, 1),
        "illegible_n": unsure_n,
    }


def rank_loss(
    rank_logits: torch.Tensor, suit_logits: torch.Tensor, rank: torch.Tensor, index_ranks: Sequence[int]
) -> torch.Tensor:
    """Cross-entropy on the rank where the crop can be read; where its index is in view but illegible, a flat
    target over the index classes for both heads (none excluded: it is an index, not a blank corner), weighed
    down. Without it the reader learnt to name mush confidently (session 15: a third of the scene crops)."""
    illegible = rank == ILLEGIBLE
    per_crop = F.cross_entropy(rank_logits, rank.clamp(min=0), label_smoothing=0.05, reduction="none")
    if illegible.any():
        flat_rank = -F.log_softmax(rank_logits[illegible], 1)[:, list(index_ranks)].mean(1)
        flat_suit = -F.log_softmax(suit_logits[illegible], 1).mean(1)
        per_crop = per_crop.clone()
        per_crop[illegible] = ILLEGIBLE_WEIGHT * (flat_rank + flat_suit)
    return per_crop.mean()


def side_loss(face_logits: torch.Tensor, card_logits: torch.Tensor, face: torch.Tensor) -> torch.Tensor:
    """The face head on crops whose side is known (a face's or a back's corner), the card head on those and on
    false corners (NOT_A_CARD); crops of unknown side teach neither."""
    loss = face_logits.new_zeros(())
    sided = (face == 0) | (face == 1)
    if sided.any():
        loss = loss + 0.5 * F.binary_cross_entropy_with_logits(face_logits[sided], face[sided].float())
    known = sided | (face == NOT_A_CARD)
    if known.any():
        target = (face[known] != NOT_A_CARD).float()
        loss = loss + CARD_WEIGHT * F.binary_cross_entropy_with_logits(card_logits[known], target)
    return loss


def resume(model: CornerReader, opt: torch.optim.Optimizer, saved: dict) -> bool:
    """Loads a checkpoint into the model and optimiser. A checkpoint from before a head was added (the card head,
    session 16) loads into the trunk and the heads it has; the new head starts fresh, and so does the optimiser
    (its state no longer matches the parameters). Returns whether the optimiser's state was kept."""
    missing, unexpected = model.load_state_dict(saved["model"], strict=False)
    if unexpected or any(not k.startswith("card.") for k in missing):
        raise ValueError(f"checkpoint does not fit the {model.arch} reader: missing {missing}, unexpected {unexpected}")
    if missing:
        print(f"new heads start fresh: {', '.join(missing)}; the optimiser restarts")
        return False
    opt.load_state_dict(saved["opt"])
    return True


def train(
    data: Sequence[Path],
    val: Path | None,
    run: Path,
    minutes: float,
    batch: int,
    lr: float,
    seed: int,
    threads: int = 2,
    arch: str = "small",
    soft: bool = False,
    vocabulary: str = "cards",
    faded: float = 0.0,
) -> None:
    """Cosine schedule over a time budget, resumable from run/last.pt; validation every few minutes into the curve."""
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    sets = CropSet.concat([CropSet.load(p) for p in data])
    held = CropSet.load(val) if val else None
    print(f"{len(sets.rank)} training crops from {len(data)} files; {len(held.rank) if held else 0} validation")
    run.mkdir(parents=True, exist_ok=True)
    saved = torch.load(run / "last.pt", weights_only=False) if (run / "last.pt").exists() else None
    # a resumed run keeps its own trunk and vocabulary
    if saved:
        arch, vocabulary = saved.get("arch", "small"), saved.get("vocabulary", "cards")
    model = CornerReader(arch, vocabulary)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    state = {"step": 0, "seconds": 0.0, "budget_s": minutes * 60}
    if saved:
        resume(model, opt, saved)
        state = saved["state"]
        state["budget_s"] = max(state["budget_s"], minutes * 60)
    rng = np.random.default_rng(seed + state["step"])
    suit_target = torch.from_numpy(sets.suit)
    face_target = torch.from_numpy(sets.face.astype(np.int64))

    def next_loss() -> torch.Tensor:
        idx = rng.integers(0, len(sets.rank), batch)
        x = to_tensor(sets.x[idx])
        x = augment(soften(x, gen) if soft else x, gen, faded)
        rank_logits, suit_logits, face_logits, card_logits = model(x)
        loss = rank_loss(rank_logits, suit_logits, torch.from_numpy(sets.rank[idx]), model.index_ranks)
        loss = loss + side_loss(face_logits, card_logits, face_target[idx])
        has_suit = suit_target[idx] != NO_SUIT
        if has_suit.any():
            loss = loss + F.cross_entropy(suit_logits[has_suit], suit_target[idx][has_suit], label_smoothing=0.05)
        return loss

    def held_out() -> dict:
        return {f"val_{k}": v for k, v in evaluate(model, held).items()} if held is not None else {}

    names = {"arch": model.arch, "vocabulary": model.vocabulary}
    train_for_budget(model, opt, state, lr, next_loss, held_out, run, ("crops", batch), names)


OUTPUTS = ("rank", "suit", "features", "face", "card")  # the graph's outputs, in order (`Exported.forward`)


def export(run: Path, onnx_path: Path) -> None:
    saved = torch.load(run / "last.pt", weights_only=False)
    net = CornerReader(saved.get("arch", "small"), saved.get("vocabulary", "cards"))
    net.load_state_dict(saved["model"])
    dynamic = {name: {0: "n"} for name in ("crops", *OUTPUTS)}
    export_onnx(Exported(net), torch.zeros(4, 3, READ_H, READ_W), onnx_path, ["crops"], list(OUTPUTS), dynamic)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, nargs="+", required=True)
    t.add_argument("--val", type=Path)
    add_budget_args(t, minutes=30, batch=128, lr=2e-3, threads=2)
    t.add_argument("--arch", default="small", choices=sorted(ARCHS), help="the trunk (a resumed run keeps its own)")
    t.add_argument(
        "--vocabulary", default="cards", choices=sorted(VOCABULARIES), help="standard cards, or number cards (issue 20)"
    )
    t.add_argument("--soften", action="store_true", help="also shrink, smear and defocus parts of each batch")
    t.add_argument("--faded", type=float, default=0.0, help="the share of each batch washed out to 20-50%% contrast")
    add_export_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "train":
        train(
            args.data,
            args.val,
            args.out,
            args.minutes,
            args.batch,
            args.lr,
            args.seed,
            args.threads,
            args.arch,
            args.soften,
            args.vocabulary,
            args.faded,
        )
    else:
        export(args.run, args.onnx)


if __name__ == "__main__":
    main()
