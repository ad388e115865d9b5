"""What the dice benches in this folder share: their command line and the held-out, calibrated dice scenes they
time (the test bench's stream, seed 3, on Loot Roll's test tables)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.dice.bench import calibration_of
from vision.recognise.calibration import TableCalibration
from vision.synth.components import split_design_names
from vision.synth.dice_scenes import RenderedDice, render_dice_scene


def dice_bench_args(description: str, name: str) -> argparse.Namespace:
    """--scenes, --seed, --pieces, --models, --json; a missing pieces folder ends the run with what to do."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scenes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=3, help="the scene stream (3: the test bench's)")
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/loot-roll"))
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args()
    if not args.pieces.is_dir():
        sys.exit(f"{name}: no pieces at {args.pieces}: run `tabletop synth pieces --game loot-roll` first")
    return args


def calibrated_scenes(args: argparse.Namespace) -> Iterator[tuple[RenderedDice, TableCalibration]]:
    """Each held-out scene with the calibration a player would click for its camera (`bench.calibration_of`)."""
    designs = split_design_names(args.pieces, "test", "loot-roll")
    rng = np.random.default_rng(args.seed)
    for i in range(args.scenes):
        rendered = render_dice_scene(i, args.seed, args.pieces, designs, "test")
        yield rendered, calibration_of(rendered.scene.spec.camera, rng)
