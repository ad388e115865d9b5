"""The corner reader adapted to one deck: the shipped reader's weights fine-tuned on crops of that deck alone.

Why: the shipped reader reads designs it was never taught worse than designs it was (issue 18: about 85% of the
legible index crops of unseen decks' scenes; session 22 measured on a lent GPU that more capacity does not close the
gap, design variety does). An enrolled deck is no longer unseen: we have its every picture. Matching crops against
templates cut from them (`enrol_rectified`) gained 1-3 points, because a template is one clean view and the crops
that go wrong are small, smeared and overlapped. Teaching the reader itself on the deck, through the same camera
model, fans and finder errors it was trained with, gains more: on a validation deck (gnome-paris), 10 minutes on
this 2-core CPU read fresh scenes' legible index crops 85.1% -> 91.3% (models/cards-corners.md, "Session 25").

Training environment only (torch, onnx): `tabletop enrol --adapt MINUTES` calls this and puts the adapted 8-bit
graph inside the deck head, which the runtime reads with ONNX Runtime alone.

    python -m vision.train.adapt_reader DECK_DIR --out adapted.onnx --minutes 10
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from vision.recognise.labels import JOKER, RANK_CLASSES
from vision.recognise.models import models_dir
from vision.train.corner_data import decks_of_split, write_scenes
from vision.train.reader_data import CropSet, build, false_corner_source
from vision.train.reader_net import CornerReader, export, train

CHECKPOINT = Path("checkpoints") / "cards-corner-reader.last.pt"  # the shipped reader's weights, under models/
FINDER_ERRORS = "cards-corner-finder-errors.npy"  # the shipped finder's error table (`finder_errors`), under models/
SPLIT = "train"  # the family split deals a lone deck's family to train (`decks.split_families`)
LR = 1e-3  # a tenth of the recipe's peak: the reader is adjusted, not taught anew
FLAT_CROPS = 15000  # flat crops of the deck seen through the scene camera, with fans and finder errors, and a fifth
# as many cut with the short and long edges swapped, taught as no index (session 20)
SCENES = 300  # rendered scenes of the deck on its own, their corners cut as the finder errs


def deck_crop_files(
    deck_dir: Path,
    work: Path,
    seed: int,
    workers: int,
    scenes: int = SCENES,
    models: Path | None = None,
    flat: int = FLAT_CROPS,
) -> list[Path]:
    """Crop files of this deck alone (`reader_data`): flat crops and the crops of `scenes` rendered scenes, and
    swapped crops, each cut along frames erred as the shipped finder errs where its error table is shipped."""
    from vision.synth.deckdir import load_decks

    decks = decks_of_split(load_decks(deck_dir), SPLIT)
    if not decks:
        raise ValueError(f"{deck_dir}: no deck of playing cards to adapt the reader to")
    table = (models or models_dir()) / FINDER_ERRORS
    errors = table if table.is_file() else None
    stems = write_scenes(work / "scenes", scenes, seed, decks, workers, progress=False)
    own, swapped, false = work / "deck.npz", work / "deck-swapped.npz", work / "deck-false.npz"
    without_jokers(build(own, [deck_dir], SPLIT, flat, stems, seed + 1, workers, True, True, errors)).save(own)
    build(swapped, [deck_dir], SPLIT, flat // 5, [], seed + 2, workers, True, True, errors, swapped=True)
    # where the shipped finder fires on no card's corner in those scenes (pips, art, cloth): taught as no card.
    # Without them a four-index deck teaches hardly any "none", and the adapted reader read gnome-dondorf's pips and
    # art as lone, unsure indices: UNKNOWN reports in a tracker game 18 -> 115 (session 25)
    build(false, [deck_dir], SPLIT, 0, stems, seed + 3, workers, false_corner_finder=false_corner_source(models))
    return [own, swapped, false]


def without_jokers(crops: CropSet) -> CropSet:
    """The crops less those labelled JOKER. A deck directory does not say whether its joker prints an index: its
    corners are labelled JOKER wherever the deck prints an index, and many jokers print only art there (every test
    deck's). Taught on the deck alone, the reader then learnt art and plain card to be JOKER: on gnome-dondorf it
    read a tracker game's corners as JOKER 15 times more often and the tracker decoded 26 of 92 moves instead of 88
    (session 25). Left out, the joker is read as the shipped reader reads it."""
    keep = crops.rank != RANK_CLASSES.index(JOKER)
    return CropSet(crops.x[keep], crops.rank[keep], crops.suit[keep], crops.source[keep], crops.face[keep])


def start_from_shipped(run: Path, minutes: float, models: Path | None = None) -> None:
    """A run folder holding the shipped reader's weights at step 0 of a fresh cosine of `minutes`: `train` resumes
    it as its own run, keeping the trunk and heads and restarting the schedule and the optimiser's moments."""
    source = (models or models_dir()) / CHECKPOINT
    if not source.is_file():
        raise FileNotFoundError(f"{source}: the shipped reader's checkpoint is missing (models/cards-corners.md)")
    saved = torch.load(source, weights_only=False)
    run.mkdir(parents=True, exist_ok=True)
    state = {"step": 0, "seconds": 0.0, "budget_s": minutes * 60}
    model = CornerReader(saved.get("arch", "small"), saved.get("vocabulary", "cards"))
    model.load_state_dict(saved["model"])
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=5e-4)
    extra = {"arch": model.arch, "vocabulary": model.vocabulary}
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state, **extra}, run / "last.pt")


def adapt_reader(
    deck_dir: str | Path,
    out: str | Path,
    minutes: float = 10.0,
    seed: int = 2500,
    workers: int = 2,
    scenes: int = SCENES,
    progress: Callable[[str], None] | None = None,
    models: Path | None = None,
    flat: int = FLAT_CROPS,
) -> Path:
    """The shipped reader fine-tuned `minutes` on this deck's own crops, written as an 8-bit graph (7-bit weights,
    `quantise`) to `out`, its float graph beside it (`.float.onnx`); `models`: the shipped models' folder (default
    models/). Returns `out`."""
    from vision.train.quantise import quantise_corner_reader

    deck_dir, out = Path(deck_dir), Path(out)
    say = progress or print
    with tempfile.TemporaryDirectory(prefix="adapt-reader-") as tmp:
        work = Path(tmp)
        say(f"cutting crops of {deck_dir.name} ({scenes} scenes and {flat + flat // 5} flat crops)")
        files = deck_crop_files(deck_dir, work, seed, workers, scenes, models, flat)
        run = work / "run"
        start_from_shipped(run, minutes, models)
        say(f"fine-tuning the reader on them for {minutes:g} minutes")
        train(files, None, run, minutes, 128, LR, seed, threads=workers)
        float_graph = out.with_name(out.name.removesuffix(".onnx") + ".float.onnx")
        export(run, float_graph)
        quantise_corner_reader(float_graph, out, files[0])
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("deck", type=Path, help="a deck directory (tabletop enrol's)")
    parser.add_argument("--out", type=Path, required=True, help="the adapted reader's 8-bit graph (.onnx)")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--scenes", type=int, default=SCENES)
    parser.add_argument("--flat", type=int, default=FLAT_CROPS, help="flat crops of the deck (a fifth more swapped)")
    parser.add_argument("--seed", type=int, default=2500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--models", type=Path, help="the shipped models' folder (default: models/)")
    args = parser.parse_args(argv)
    adapt_reader(
        args.deck, args.out, args.minutes, args.seed, args.workers, args.scenes, models=args.models, flat=args.flat
    )


if __name__ == "__main__":
    main()
