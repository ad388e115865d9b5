"""Where the calibrated runtime loses the resting dice it owes a value: each one put in exactly one place (given
right, given wrong, not found by the finder (with how hot its heat got there, how big it is and how near another
die lies: session 49), or why it went unread: the face finder's kind, doubted as cocked though the reader was right,
under the confidence floor though the reader was right, the level fit's corners, or the face reader itself), with
the reader's figure at the fitted and at the true corners beside them, and, for legible d20s, how far the level fit
put their corners. A diagnostic for choosing what to improve next (models/dice.md, session 44); validation scenes.

    .venv/bin/python -m vision.train.dice_losses --models models --scenes 150
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from vision.dice.bench import BenchFrame, read_calibrated, render_frame
from vision.dice.crops import FRAME_SCALE, STRIDE, class_of, finder_frame
from vision.dice.find import finder_output
from vision.dice.read import KIND_FACES, UNREAD, DiceReader, FacePlace, read_faces
from vision.heatmap import sigmoid
from vision.synth.legibility import LEGIBLE
from vision.train.dice_data import not_found, truth_target

GIVEN_RIGHT, GIVEN_WRONG = "given right", "given wrong"
MISSED = "not found by the finder"
OTHER_KIND = "unread: the face finder took it for the other kind"
DOUBTED = "unread: reader right at the fit, doubted as cocked"
UNDER_FLOOR = "unread: reader right at the fit, under the floor"
CORNERS = "unread: reader wrong at the fit's corners, right at the true ones"
READER = "unread: reader wrong at the true corners too"
PLACES = (GIVEN_RIGHT, GIVEN_WRONG, MISSED, OTHER_KIND, DOUBTED, UNDER_FLOOR, CORNERS, READER)
CORNER_BANDS = (0.05, 0.1, 0.2, 0.4, math.inf)  # the level fit's mean corner error, in sides of the face


def best_face(logits: np.ndarray, kind: str) -> int:
    """The class (`crops.class_of`) of the kind's face the reader's logits favour."""
    faces = KIND_FACES[kind]
    return int(faces[int(np.argmax(logits[faces]))]) + 1


def corner_error(fitted: np.ndarray, truth: np.ndarray) -> float:
    """Mean distance from fitted to true corners over the best pairing that keeps their order round the face (either
    way round), in sides of the true face; infinite for a face not placed."""
    if len(fitted) != len(truth):
        return math.inf
    side = float(np.linalg.norm(truth[0] - truth[1]))
    return min(
        float(np.linalg.norm(np.roll(order, k, 0) - truth, axis=1).mean())
        for order in (fitted, fitted[::-1])
        for k in range(len(truth))
    ) / max(side, 1e-6)


def frame_losses(reader: DiceReader, frame: BenchFrame, rng: np.random.Generator) -> list[dict]:
    """Per resting die owed a value in one frame, found and read calibrated: its kind, legibility, place (PLACES),
    whether the reader was right at the fitted and at the true corners, and the fit's corner error."""
    image, seen, matched = read_calibrated(reader, frame, rng)
    probabilities = reader.calibrated(seen)
    _, floor = reader.settings.cut(True)
    missed = not_found(frame.dice, matched)
    heat = sigmoid(finder_output(reader.finder.session, finder_frame(image))[0]) if missed else None
    out = [missed_die(heat, frame.dice, die) for die in missed]
    for j, die in enumerate(matched):
        if die is None or not truth_target(die):
            continue
        kind, truth = die["kind"], class_of(die["kind"], die["value"])
        label, _, doubted = reader.decide(seen, probabilities[j], j, floor)
        at_fit = best_face(seen.logits[j], kind) == truth
        true_corners = np.array(die["top_face"], np.float32)
        true_look = read_faces(reader.session, image, seen.kinds[j : j + 1], [FacePlace(kind, true_corners)])
        at_truth = best_face(true_look.logits[0], kind) == truth
        if label != UNREAD:
            place = GIVEN_RIGHT if label == f"{kind.upper()}:{die['value']}" else GIVEN_WRONG
        elif seen.face_kinds[j] != kind:
            place = OTHER_KIND
        elif at_fit:
            place = DOUBTED if doubted else UNDER_FLOOR
        else:
            place = CORNERS if at_truth else READER
        fitted = np.asarray(seen.corners[j]) if seen.corners else np.zeros((0, 2))
        out.append(
            {
                "kind": kind,
                "legible": die.get("legibility") is not None and die["legibility"] >= LEGIBLE,
                "place": place,
                "right_at_fit": at_fit,
                "right_at_truth": at_truth,
                "corner_error": corner_error(fitted, true_corners),
            }
        )
    return out


def missed_die(heat: np.ndarray, dice: list[dict], die: dict) -> dict:
    """A die owed a value that no find matched: the hottest cell of the finder's heat (its first look's, rows x
    cols) within half the die's size of its centre, its size in frame pixels, and how far the nearest other die's
    centre lies, in this die's sizes."""
    x, y = (v * FRAME_SCALE / STRIDE - 0.5 for v in die["centre_px"])
    r = die["size_px"] * FRAME_SCALE / STRIDE / 2
    rows, cols = heat.shape
    near = heat[max(int(y - r), 0) : min(int(y + r) + 2, rows), max(int(x - r), 0) : min(int(x + r) + 2, cols)]
    others = [math.dist(d["centre_px"], die["centre_px"]) for d in dice if d is not die]
    return {
        "kind": die["kind"],
        "legible": die.get("legibility") is not None and die["legibility"] >= LEGIBLE,
        "place": MISSED,
        "right_at_fit": False,
        "right_at_truth": False,
        "corner_error": math.inf,
        "heat": float(near.max()) if near.size else 0.0,
        "size_px": float(die["size_px"]),
        "neighbour": min(others, default=math.inf) / die["size_px"],
    }


def losses(models: Path, pieces: Path, designs: list[str], split: str, seed: int, scenes: int) -> list[dict]:
    """`frame_losses` over `scenes` whole scenes of the stream `seed` (rendered on 2 processes)."""
    reader = DiceReader(models)
    rng = np.random.default_rng(0)  # the calibration clicks, as tune_dice draws them
    out: list[dict] = []
    with Pool(2) as pool:
        for frame in pool.imap(render_frame, [(i, seed, str(pieces), designs, split) for i in range(scenes)]):
            out += frame_losses(reader, frame, rng)
    return out


def report(dice: list[dict]) -> list[str]:
    lines = []
    for kind in ("d20", "d6"):
        for legible in (True, False):
            group = [d for d in dice if d["kind"] == kind and d["legible"] == legible]
            if not group:
                continue
            n = len(group)
            lines.append(f"{kind} {'legible' if legible else 'illegible'}: {n} resting dice owed a value")
            places = Counter(d["place"] for d in group)
            lines += [f"  {place:66s} {places[place]:4d} {places[place] / n:6.1%}" for place in PLACES]
            for key, name in (("right_at_fit", "fitted"), ("right_at_truth", "true")):
                right = sum(d[key] for d in group)
                lines.append(f"  {'(the reader right at the ' + name + ' corners)':66s} {right:4d} {right / n:6.1%}")
    missed = [d for d in dice if d["place"] == MISSED]
    if missed:
        lines.append(f"not found: {len(missed)}")
        for key, bands in (
            ("heat", (0.1, 0.2, 0.3, 0.4, 1.01)),
            ("size_px", (30, 45, 70, 110, math.inf)),
            ("neighbour", (1.0, 1.5, 2.0, math.inf)),
        ):
            low = -math.inf
            counts = []
            for high in bands:
                counts.append(f"<{high}: {sum(low <= d[key] < high for d in missed)}")
                low = high
            lines.append(f"  by {key}: " + ", ".join(counts))
    legible_d20 = [d for d in dice if d["kind"] == "d20" and d["legible"]]
    low = 0.0
    for high in CORNER_BANDS:
        band = [d for d in legible_d20 if low <= d["corner_error"] < high]
        if band:
            at_fit = np.mean([d["right_at_fit"] for d in band])
            at_truth = np.mean([d["right_at_truth"] for d in band])
            lines.append(
                f"legible d20s fitted {low:.2f}-{high:.2f} sides off: {len(band):4d}, "
                f"read right at the fit {at_fit:.1%}, at the true corners {at_truth:.1%}"
            )
        low = high
    return lines


def main(argv: list[str] | None = None) -> None:
    from vision.synth.components import split_design_names
    from vision.train.tune_dice import LEVEL_SEED

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/loot-roll"))
    parser.add_argument("--scenes", type=int, default=150)
    args = parser.parse_args(argv)
    designs = split_design_names(args.pieces, "val", "loot-roll")
    print("\n".join(report(losses(args.models, args.pieces, designs, "val", LEVEL_SEED, args.scenes))))


if __name__ == "__main__":
    main()
