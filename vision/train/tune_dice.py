"""The dice runtime's settings, chosen on the validation dice (`dice_data --split val`), never the test ones: the
finder's peak cut-off (the most dice found for the fewest false finds), the reader's temperature (the one that makes
its confidence honest: least log-loss), and the confidence floor under which a die is reported unread (a wrong
value costs three unread ones: a player re-reads an unread die, but a wrong one slips by).

    .venv/bin/python -m vision.train.tune_dice --val out/dice/val --models models
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from vision.dice.find import FINDER_FILE, finder_input, found_dice
from vision.dice.read import READER_FILE, THRESHOLDS_FILE, run_reader, softmax
from vision.recognise.models import session
from vision.train.dice_data import FACE_SEEN, jittered_square, load_scenes

PEAKS = tuple(round(float(v), 2) for v in np.arange(0.1, 0.75, 0.05))
TEMPERATURES = tuple(round(float(v), 2) for v in np.arange(0.5, 3.01, 0.1))
FLOORS = tuple(round(float(v), 3) for v in np.arange(0.3, 0.995, 0.01))
WRONG_COST = 3.0
TURNS = (1, 4)  # one look, or four a quarter turn apart (four times the reader's work)


def tune_peak(net, scenes) -> tuple[float, dict]:  # noqa: ANN001 - an ONNX session and DiceScenes
    hits = dict.fromkeys(PEAKS, 0)
    false = dict.fromkeys(PEAKS, 0)
    total = 0
    for s in scenes:
        out = net.run(None, {"x": finder_input(s.image())})[0][0]
        dice = [d for d in s.dice if d[5] >= 0.5]
        total += len(dice)
        for peak in PEAKS:
            found = found_dice(out, peak)
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


def calibrate(logits: np.ndarray, truth: np.ndarray) -> tuple[float, float, float, int, int]:
    """(cost, temperature, floor, wrong values, unread values): the temperature of least log-loss, then the floor of
    least cost (WRONG_COST per value given wrongly, including to a die that shows none, 1 per value left unread)."""

    def nll(t: float) -> float:
        p = softmax(logits, t)
        return float(-np.log(np.clip(p[np.arange(len(truth)), truth], 1e-9, 1)).mean())

    temperature = min(TEMPERATURES, key=nll)
    p = softmax(logits, temperature)
    best_class, best_p = p.argmax(1), p.max(1)

    def cost(floor: float) -> tuple[float, int, int]:
        given = (best_class > 0) & (best_p >= floor)
        wrong = int((given & (best_class != truth)).sum())
        unread = int(((truth > 0) & ~given).sum())
        return WRONG_COST * wrong + unread, wrong, unread

    floor = min(FLOORS, key=lambda f: cost(f)[0])
    total, wrong, unread = cost(floor)
    return total, temperature, floor, wrong, unread


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--val", type=Path, default=Path("out/dice/val"))
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--looks", type=int, default=3, help="squares cut per validation die (jittered as a find)")
    args = parser.parse_args(argv)
    scenes = load_scenes(args.val)
    peak, finding = tune_peak(session(args.models / FINDER_FILE), scenes)
    print(f"peak {peak}: {finding}")
    reader = session(args.models / READER_FILE)
    rng = np.random.default_rng(0)
    squares, targets = [], []
    for s in scenes:
        for i, (*_xy, _size, cls, state, seen, face_seen) in enumerate(s.dice):
            if state == 0 and cls > 0 and (face_seen < FACE_SEEN or seen < 0.5):
                continue  # a resting die half hidden: neither a value nor "none" is owed
            for _ in range(args.looks):
                squares.append(jittered_square(s.window(i), rng))
                targets.append(int(cls) if state == 0 else 0)
    truth = np.array(targets)
    stack = np.stack(squares)
    fits = {turns: calibrate(run_reader(reader, stack, turns)[0], truth) for turns in TURNS}
    for turns, fit in fits.items():
        print(f"{turns} look(s): temperature {fit[1]}, floor {fit[2]}: {fit[3]} wrong, {fit[4]} unread")
    turns = min(TURNS, key=lambda t: fits[t][0])
    _, temperature, floor, wrong, unread = fits[turns]
    values = int((truth > 0).sum())
    out = {
        "peak": peak,
        "temperature": temperature,
        "confidence": floor,
        "turns": turns,
        "val": {
            **finding,
            "squares": len(truth),
            "value_squares": values,
            "wrong_values": wrong,
            "unread_values": unread,
            "right_pct": round(100 * (1 - (wrong + unread) / max(values, 1)), 2),
        },
    }
    (args.models / THRESHOLDS_FILE).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.models / THRESHOLDS_FILE}: {out}")


if __name__ == "__main__":
    main()
