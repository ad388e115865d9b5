"""The dice runtime's settings, chosen on the validation dice (`dice_data --split val`), never the test ones: the
finder's peak cut-off (the most dice found for the fewest false finds), the face reader's temperature (the one that
makes the reading's confidence honest: least log-loss), and the confidence floor under which a die is reported
unread (a wrong value costs three unread ones: a player re-reads an unread die, but a wrong one slips by).

Faces fitted level on a calibrated table (`level.fit_level_face`) are placed differently from faces found free, so
their temperature and floor are tuned apart, on whole validation scenes (`dice_scenes`, split val) read with the
calibration their camera implies.

    .venv/bin/python -m vision.train.tune_dice --val out/dice-v3/val --models models --pieces out/pieces/loot-roll
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from vision.dice.crops import class_of
from vision.dice.find import FINDER_FILE, found_in, two_looks
from vision.dice.read import FACE_FINDER_FILE, READER_FILE, THRESHOLDS_FILE, Looks, look
from vision.recognise.models import session
from vision.train.dice_data import kind_target, load_scenes, not_found, placed_as_found, truth_target

PEAKS = tuple(round(float(v), 2) for v in np.arange(0.1, 0.75, 0.05))
TEMPERATURES = tuple(round(float(v), 2) for v in np.arange(0.5, 3.01, 0.1))
FLOORS = tuple(round(float(v), 3) for v in np.arange(0.3, 0.995, 0.01))
FITS = tuple(round(float(v), 2) for v in np.arange(0.0, 0.71, 0.05))
LEANS = (*(round(float(v), 3) for v in np.arange(0.02, 0.161, 0.01)), math.inf)
WRONG_COST = 3.0


def tune_peak(net, scenes) -> tuple[float, dict]:  # noqa: ANN001 - an ONNX session and DiceScenes
    hits = dict.fromkeys(PEAKS, 0)
    false = dict.fromkeys(PEAKS, 0)
    total = 0
    for s in scenes:
        looks = two_looks(net, s.image())
        dice = [d for d in s.dice if d[5] >= 0.5]
        total += len(dice)
        for peak in PEAKS:
            found = found_in(looks, peak)
            used: set[int] = set()
            for x, y, size, *_ in s.dice:
                near = [j for j, f in enumerate(found) if math.hypot(f.x - x, f.y - y) < size / 3 and j not in used]
                if near:
                    used.add(near[0])
            hits[peak] += sum(
                1 for x, y, size, *_rest in dice if any(math.hypot(f.x - x, f.y - y) < size / 3 for f in found)
            )
            false[peak] += len(found) - len(used)
    best = max(PEAKS, key=lambda p: (hits[p] - false[p], -abs(p - 0.3)))
    return best, {"dice": total, "found": hits[best], "false_finds": false[best]}


class Calibration(NamedTuple):
    temperature: float
    floor: float  # the confidence floor
    fit: float  # the level fit's floor
    lean: dict[str, float]  # per kind of face, the most a leaning face may beat the level one by
    wrong: int  # values given wrongly on the validation finds
    unread: int  # values owed and not given


def calibrate(
    looks: list[Looks], truth: np.ndarray, fits: tuple[float, ...] = (0.0,), leans: tuple[float, ...] = (math.inf,)
) -> Calibration:
    """The temperature of least log-loss, then the cut-offs of least cost (WRONG_COST per value given wrongly,
    including to a die that shows none, 1 per value left unread): the confidence floor, and for level faces the fit
    floor under which a face is doubted level and the lean over which it is taken for a cocked die's."""

    def probabilities(t: float) -> np.ndarray:
        return np.concatenate([seen.probabilities(t) for seen in looks])

    def nll(t: float) -> float:
        p = probabilities(t)
        return float(-np.log(np.clip(p[np.arange(len(truth)), truth], 1e-9, 1)).mean())

    temperature = min(TEMPERATURES, key=nll)
    p = probabilities(temperature)
    best_class, best_p = p.argmax(1), p.max(1)
    fit = np.concatenate([[seen.fit(i) for i in range(len(seen.face_kinds))] for seen in looks])
    lean = np.concatenate([[seen.lean(i) for i in range(len(seen.face_kinds))] for seen in looks])
    kinds = np.concatenate([seen.face_kinds for seen in looks]) if looks else np.zeros(0, str)

    def cost(floor: float, fit_floor: float, caps: dict[str, float], pick: np.ndarray) -> tuple[float, int, int]:
        cap = np.full(int(pick.sum()), math.inf)
        for kind, limit in caps.items():
            cap[kinds[pick] == kind] = limit
        given = (best_class[pick] > 0) & (best_p[pick] >= floor) & (fit[pick] >= fit_floor) & (lean[pick] <= cap)
        wrong = int((given & (best_class[pick] != truth[pick])).sum())
        unread = int(((truth[pick] > 0) & ~given).sum())
        return WRONG_COST * wrong + unread, wrong, unread

    def best_caps(floor: float, fit_floor: float) -> dict[str, float]:
        """Each kind's own lean cap: the cost adds up over the kinds, so each is chosen alone."""
        return {k: min(leans, key=lambda c: cost(floor, fit_floor, {k: c}, kinds == k)[0]) for k in sorted(set(kinds))}

    every = np.ones(len(kinds), bool)
    floor, fit_floor = min(itertools.product(FLOORS, fits), key=lambda c: cost(*c, best_caps(*c), every)[0])
    caps = best_caps(floor, fit_floor)
    _, wrong, unread = cost(floor, fit_floor, caps, every)
    return Calibration(temperature, floor, fit_floor, caps, wrong, unread)


# the calibrated path's peaks tried beside the free path's (session 49: lower ones found more dice owed a value
# than they added finds of none)
LEVEL_PEAKS = (0.3, 0.35, 0.4, 0.45, 0.5)
LEVEL_SEED = 2  # the validation scenes' stream (the bench's test scenes are seed 3, split test)


def level_looks(
    pieces: Path, scenes: int, models: Path, peak: float, workers: int = 2
) -> tuple[list[Looks], np.ndarray, int]:
    """The runtime over whole validation scenes, each read with its camera's table calibration and the finder's
    peak at `peak`: every found die's looks and what it should be read as (its class; 0 for a die with no face to
    read and for a find of no die; dice partly hidden are left out), and how many dice owed a value were not found."""
    from multiprocessing import Pool

    from vision.dice.bench import read_calibrated, render_frame
    from vision.dice.read import DiceReader
    from vision.synth.components import split_design_names

    designs = split_design_names(pieces, "val", "loot-roll")
    reader = DiceReader(models)
    reader.settings = replace(reader.settings, level_peak=peak)
    looks, targets = [], []
    missed = 0
    rng = np.random.default_rng(0)
    with Pool(workers) as pool:
        jobs = [(i, LEVEL_SEED, str(pieces), designs, "val") for i in range(scenes)]
        for frame in pool.imap(render_frame, jobs):
            _, seen, truth = read_calibrated(reader, frame, rng)
            missed += len(not_found(frame.dice, truth))
            keep = []
            for j, die in enumerate(truth):
                target = 0 if die is None else truth_target(die)
                if target is None:
                    continue
                keep.append(j)
                targets.append(0 if die is None or target == 0 else class_of(die["kind"], die["value"]))
            looks.append(seen.subset(keep))
    return looks, np.array(targets), missed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--val", type=Path, default=Path("out/dice-v3/val"))
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--looks", type=int, default=3, help="placements per validation die (jittered as a find)")
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/loot-roll"), help="Loot Roll piece folders")
    parser.add_argument("--level-scenes", type=int, default=150, help="whole validation scenes for level faces")
    parser.add_argument(
        "--level-only", action="store_true", help="tune only the level faces' cut-offs, keeping the rest of the file"
    )
    args = parser.parse_args(argv)
    path = args.models / THRESHOLDS_FILE
    out = json.loads(path.read_text()) if args.level_only else tune_free(args.val, args.models, args.looks)
    # the calibrated path's own peak (session 49): the cut-offs tuned at each, a die owed a value and not found
    # counted as one left unread; the free path's peak is among them
    best: tuple[float, Calibration, float, int, np.ndarray] | None = None
    for candidate in sorted({*LEVEL_PEAKS, float(out["peak"])}):
        looks, truth, misses = level_looks(args.pieces, args.level_scenes, args.models, candidate)
        at = calibrate(looks, truth, FITS, LEANS)
        cost = WRONG_COST * at.wrong + at.unread + misses
        print(f"level peak {candidate}: {at.wrong} wrong, {at.unread} unread, {misses} not found: cost {cost}")
        if best is None or cost < best[0]:
            best = (cost, at, candidate, misses, truth)
    assert best is not None
    _, tuned, peak, missed, truth = best
    out["level"] = {
        "peak": peak,
        "temperature": tuned.temperature,
        "confidence": tuned.floor,
        "fit": tuned.fit,
        "lean": {kind: cap if math.isfinite(cap) else None for kind, cap in tuned.lean.items()},
        "val": {
            "scenes": args.level_scenes,
            "finds": len(truth),
            "not_found": missed,
            **_outcomes(truth, tuned.wrong, tuned.unread),
        },
    }
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}: {out}")


def tune_free(val: Path, models: Path, placements: int) -> dict:
    """The finder's peak, and the temperature and floor of faces found free, on the validation windows."""
    scenes = load_scenes(val)
    peak, finding = tune_peak(session(models / FINDER_FILE), scenes)
    print(f"peak {peak}: {finding}")
    faces, reader = session(models / FACE_FINDER_FILE), session(models / READER_FILE)
    rng = np.random.default_rng(0)
    looks, targets = [], []
    for s in scenes:
        for i, row in enumerate(s.dice):
            kind = kind_target(row)
            if kind is None:
                continue  # a resting die half hidden: neither a value nor "none" is owed
            window = s.window(i)
            looks.append(look(faces, reader, window, [placed_as_found(rng) for _ in range(placements)]))
            targets += [int(row[3]) if kind else 0] * placements
    truth = np.array(targets)
    temperature, floor, _, _, wrong, unread = calibrate(looks, truth)
    return {
        "peak": peak,
        "temperature": temperature,
        "confidence": floor,
        "val": {**finding, "placements": len(truth), **_outcomes(truth, wrong, unread, "placements")},
    }


def _outcomes(truth: np.ndarray, wrong: int, unread: int, unit: str = "finds") -> dict:
    values = int((truth > 0).sum())
    return {
        f"value_{unit}": values,
        "wrong_values": wrong,
        "unread_values": unread,
        "right_pct": round(100 * (1 - (wrong + unread) / max(values, 1)), 2),
    }


if __name__ == "__main__":
    main()
