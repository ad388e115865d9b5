"""How the face reader reads each lettering: validation dice's top faces warped from their true corners (every turn
looked at, no cut-off), right per kind, style (pips, the dice-box numerals, a font family), size and legibility, and
the commonest confusions among legible faces. A diagnostic for choosing training variety (models/dice.md, session
43): the stored scenes keep no die's design, so each scene's dice are drawn again from its seed and matched to the
stored rows by where they stand in the frame.

    PYTHONPATH=<onnx> .venv/bin/python -m vision.train.dice_letterings out/dice-v3/val --seed 2 \
        --models models/dice-reader.onnx out/models-new/dice-reader.onnx
"""

from __future__ import annotations

import argparse
import math
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from vision.dice.crops import FACES, face_picture
from vision.dice.read import face_input
from vision.synth.legibility import LEGIBLE
from vision.train.dice_data import face_corners_of, kind_target, load_scenes, to_window


def scene_designs(
    seed: int, index: int, pieces: Path, designs: list[str], split: str
) -> list[tuple[tuple[float, float], str, str]]:
    """(centre in the frame, kind, style) of each die that scene `index` of the stream `seed` placed on one of the
    tables `designs` (Loot Roll piece folders under `pieces`): its spec drawn again as
    `dice_scenes.render_dice_scene` draws it, without rendering."""
    from vision.synth.backgrounds import table_textures
    from vision.synth.components import load_component
    from vision.synth.dice_scenes import _projected, dice_scene_spec
    from vision.synth.solids import DIE_SIDES, design_of

    rng = np.random.default_rng([seed, index, 21])
    table = load_component(pieces / designs[int(rng.integers(0, len(designs)))])
    spec, _ = dice_scene_spec(rng, table, len(table_textures()), 1280, 720, split, None)
    out = []
    for die in (d for d in spec.solids if d.kind in DIE_SIDES):
        design = design_of(die.kind, die.variant)
        style = design.style if design.style != "font" else "font:" + Path(design.font).stem.split("-")[0]
        out.append((_projected(die, spec.camera)[0], die.kind, style))
    return out


def main(argv: list[str] | None = None) -> None:
    from vision.recognise.models import session

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenes", type=Path, help="dice_data scenes (validation: never the test split)")
    parser.add_argument("--seed", type=int, default=2, help="the stream the scenes were rendered from")
    parser.add_argument("--split", default="val")
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/loot-roll"))
    parser.add_argument("--models", type=Path, nargs="+", default=[Path("models/dice-reader.onnx")])
    args = parser.parse_args(argv)
    from vision.synth.components import split_design_names

    designs = split_design_names(args.pieces, args.split, "loot-roll")
    nets = [session(m) for m in args.models]
    right: list[defaultdict[str, list[int]]] = [defaultdict(lambda: [0, 0]) for _ in nets]
    confused: list[Counter[tuple[str, str, str, str]]] = [Counter() for _ in nets]
    for index, scene in enumerate(load_scenes(args.scenes)):
        dice = scene_designs(args.seed, index, args.pieces, designs, args.split)
        for i, row in enumerate(scene.dice):
            if not kind_target(row) or not len(face_corners_of(row)):
                continue
            _, kind, style = min(dice, key=lambda d: math.hypot(d[0][0] - row[0], d[0][1] - row[1]))
            legible = not np.isnan(row[7]) and row[7] >= LEGIBLE
            face = to_window(face_corners_of(row), row)
            pictures = np.stack([face_picture(scene.window(i), face, t) for t in range(len(face))])
            truth = int(row[3]) - 1
            size = "under 50 px" if row[2] < 50 else ("50-80 px" if row[2] < 80 else "over 80 px")
            keys = [kind, f"{kind} {style.split(':')[0]}", f"{kind} {style}", f"{kind} {size}"]
            keys += [f"{kind} legible", f"{kind} {style.split(':')[0]} legible"] if legible else [f"{kind} illegible"]
            for n, net in enumerate(nets):
                read = int(net.run(None, {"x": face_input(net, pictures)})[0].mean(0).argmax())
                for key in keys:
                    right[n][key][0] += read == truth
                    right[n][key][1] += 1
                if read != truth and legible:
                    confused[n][(kind, style.split(":")[0], FACES[truth], FACES[read])] += 1
    print(f"{'':44s}" + "".join(f"{m.name[:22]:>24s}" for m in args.models))
    for key in sorted(right[0]):
        print(f"{key:44s}" + "".join(f"{r[key][0]:>8d}/{r[key][1]:<5d} {r[key][0] / r[key][1]:6.1%}" for r in right))
    for model, counts in zip(args.models, confused, strict=True):
        print(f"{model}: commonest confusions of legible faces:")
        for (kind, style, truth_face, read_face), count in counts.most_common(12):
            print(f"  {kind} {style}: {truth_face} read {read_face}, {count} times")


if __name__ == "__main__":
    main()
