"""How strongly a player's enrolled dice sway the reading (`vision.dice.enrol.MATCH_SCALE`), chosen on validation
players.

Each player gets a d20 and a d6 of the validation split's looks (designs, fonts, colours and materials never used to
train, and never the bench's test ones), one rendered picture per face to enrol, and scenes of only those dice. Every
scene is looked at once per way of reading (uncalibrated, and on the table's calibration as a player's clicks give
it); each scale is then blended onto the same looks and scored: right values less WRONG_COST per wrong one, over
every legible resting die (scale 0: the reader alone). It prints the table; the constant in `enrol.py` is set from it
by hand. (Session 50 also matched each face's own picture against the enrolled pictures, band-passed and correlated,
as templates: it read more d20s and fewer d6s, with more wrong values, and was not kept: models/dice.md.)

    python -m vision.train.tune_enrol --pieces out/pieces/loot-roll --players 4 --scenes 30
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from vision.dice.bench import DiceTally, calibration_of, enrolled_player, render_frame
from vision.dice.enrol import DiceEnrolError
from vision.dice.read import DiceReader, table_camera
from vision.train.tune_dice import WRONG_COST

SEED = 2
MATCH_SCALES = (0.0, 2.0, 5.0, 10.0)


def tune(pieces_root: Path, players: int, scenes: int, models: Path, split: str, workers: int) -> dict:
    from vision.synth.components import split_design_names

    designs = split_design_names(pieces_root, split, "loot-roll")
    plain = DiceReader(models)
    tallies = {(way, scale): DiceTally() for way in ("free", "calibrated") for scale in MATCH_SCALES}
    refused = []
    for player in range(players):
        try:
            looks, enrolled = enrolled_player(pieces_root, designs, player, SEED, split, plain)
        except DiceEnrolError as err:
            refused.append(f"player {player}: {err}")
            continue
        jobs = [(10_000 * (player + 1) + i, SEED, str(pieces_root), designs, split, looks) for i in range(scenes)]
        rng = np.random.default_rng([SEED, player, 41])
        with Pool(workers) as pool:
            for done, frame in enumerate(pool.imap(render_frame, jobs), 1):
                image = frame.image()
                for way, calibration in (("free", None), ("calibrated", calibration_of(frame.camera, rng))):
                    camera = table_camera(calibration, image)
                    found = plain.find(image, camera)
                    seen = plain.look(image, found, camera)
                    base = plain.calibrated(seen)
                    _, floor = plain.settings.cut(seen.level)
                    for scale in MATCH_SCALES:
                        p = replace(enrolled, match_scale=scale).blend(base, seen.features) if len(found) else base
                        said = [(f.x, f.y, plain.decide(seen, p[i], i, floor)[0]) for i, f in enumerate(found)]
                        tallies[way, scale].add(frame.dice, said)
                print(f"\rplayer {player + 1}/{players}: scenes {done}/{scenes}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    rows = []
    for (way, scale), tally in tallies.items():
        legible = tally.to_json()["resting_legible"]
        right = sum(k["right"] for k in legible.values())
        wrong = sum(k["wrong"] for k in legible.values())
        rows.append(
            {
                "way": way,
                "match_scale": scale,
                "score": right - WRONG_COST * wrong,
                **{kind: {k: legible[kind][k] for k in ("dice", "right", "wrong", "accuracy")} for kind in legible},
            }
        )
    return {"players": players, "scenes": scenes, "split": split, "refused": refused, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pieces", type=Path, required=True)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--scenes", type=int, default=30)
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--split", default="val")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    result = tune(args.pieces, args.players, args.scenes, args.models, args.split, args.workers)
    for r in result["rows"]:
        print(
            f"{r['way']:<11} match scale {r['match_scale']:>4}: score {r['score']:>6.0f}  "
            + "  ".join(f"{k} {r[k]['right']}/{r[k]['dice']} right, {r[k]['wrong']} wrong" for k in ("d20", "d6"))
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
