"""The dice watcher's rule (`vision.dice.watch.WatchRule`), chosen on validation roll clips.

A thrown die that has come to rest is often read right in only some of its still frames and left unread in the
others (its face under the confidence floor), so "eight frames in a row read the same" gives no value to dice the
reader names right most of the time. This renders roll clips of the validation split (dice designs, fonts, colours
and tables never used to train anything, and never the bench's test ones), reads every frame once with the shipped
nets, with and without the table's calibration, and keeps those readings (`record`); the rules are then replayed
on them (`tune`), and for each way of reading the one of least cost is written under `watch` in the dice
thresholds file: each wrong value costs WRONG_COST, each settled die never given a value 1, and a value given while
a die moves disqualifies a rule. (Letting a frame under the confidence floor vote for its likeliest face was tried
in session 50 and not kept: the clips hold no cocked die and few false finds, which the floor was tuned against.)

    python -m vision.train.tune_watch record --pieces out/pieces/loot-roll --out out/dice-clips-val --clips 60
    python -m vision.train.tune_watch tune --records out/dice-clips-val --models models
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import sys
from dataclasses import asdict
from multiprocessing import Pool
from pathlib import Path

from vision.dice.bench import CLIP_WAYS, ClipRecord, ClipTally, plan_bench_clip, record_clip, replay
from vision.dice.read import THRESHOLDS_FILE, DiceReader
from vision.dice.watch import WatchRule
from vision.train.tune_dice import WRONG_COST  # a wrong value costs as much as three the player must read out

SEED = 2  # the validation clips' seed (the bench's test clips use its own seed, 3 by default)
GRID = {  # in the order ties are broken: the first rule of least cost is kept
    "still_frames": (4, 6, 8),
    "window": (8, 12, 16, 24),
    "votes": (2, 3, 4, 5, 6, 7, 8),
    "rivals": (0, 1),
}


def record_one(job: tuple[str, list[str], int, str, str, str]) -> str:
    """Clip `c` rendered, read and written to the records folder (skipped when already there: resumable)."""
    pieces_root, designs, c, split, models, out = job
    path = Path(out) / f"clip-{c:04d}.json.gz"
    if path.is_file():
        return str(path)
    clip, pieces, calibration = plan_bench_clip(Path(pieces_root), designs, c, SEED, split)
    record = record_clip(clip, pieces, DiceReader(Path(models)), {"runtime": None, "runtime_calibrated": calibration})
    part = path.with_suffix(".part")
    with gzip.open(part, "wt", encoding="utf-8") as f:
        json.dump(record.to_json(), f)
    part.rename(path)
    return str(path)


def load_records(folder: Path) -> list[ClipRecord]:
    paths = sorted(folder.glob("clip-*.json.gz"))
    if not paths:
        raise FileNotFoundError(f"{folder}: no clip-*.json.gz records (expected `tune_watch record --out {folder}`)")
    records = []
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            records.append(ClipRecord.from_json(json.load(f)))
    return records


def score(records: list[ClipRecord], rule: WatchRule, way: str) -> dict:
    """The rule's tally over every clip read one way, and its cost."""
    tally = ClipTally()
    for record in records:
        replay(record, way, rule, tally)
    cost = float("inf") if tally.read_while_moving else WRONG_COST * tally.wrong + tally.never
    return {"cost": cost, **tally.to_json()}


def rules() -> list[WatchRule]:
    """Every rule of the grid that makes sense (no more votes than the window holds)."""
    out = []
    for values in itertools.product(*GRID.values()):
        entry = dict(zip(GRID, values, strict=True))
        if entry["votes"] <= entry["window"]:
            out.append(WatchRule(**entry))
    return out


_RECORDS: list[ClipRecord] = []


def _keep(records: list[ClipRecord]) -> None:
    _RECORDS[:] = records


def _score_kept(rule: WatchRule) -> dict[str, dict]:
    return {way: score(_RECORDS, rule, way) for way in CLIP_WAYS}


def tune(records: list[ClipRecord], models: Path, workers: int = 2) -> dict:
    """Each way's rule of least cost, written into the models' thresholds file; the old rule's figures beside."""
    candidates = rules()
    with Pool(workers, initializer=_keep, initargs=(records,)) as pool:
        results = []
        for n, result in enumerate(pool.imap(_score_kept, candidates, chunksize=8), 1):
            results.append(result)
            print(f"\rrules {n}/{len(candidates)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    chosen = {}
    for name, way in CLIP_WAYS.items():
        best = min(range(len(candidates)), key=lambda i: results[i][name]["cost"])  # the first of least cost
        chosen[way] = {
            **asdict(candidates[best]),
            "val": {"clips": len(records), **results[best][name], "old_rule": score(records, WatchRule(), name)},
        }
    path = models / THRESHOLDS_FILE
    data = json.loads(path.read_text())
    data["watch"] = chosen
    path.write_text(json.dumps(data, indent=1) + "\n")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="render validation roll clips and keep their readings")
    rec.add_argument("--pieces", type=Path, required=True, help="Loot Roll's designs (tabletop synth pieces)")
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--clips", type=int, default=60)
    rec.add_argument("--split", default="val")
    rec.add_argument("--models", type=Path, default=Path("models"))
    rec.add_argument("--workers", type=int, default=2)
    tun = sub.add_parser("tune", help="choose the watcher's rule on the kept readings")
    tun.add_argument("--records", type=Path, required=True)
    tun.add_argument("--models", type=Path, default=Path("models"))
    tun.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.command == "record":
        from vision.synth.components import split_design_names

        args.out.mkdir(parents=True, exist_ok=True)
        designs = split_design_names(args.pieces, args.split, "loot-roll")
        jobs = [(str(args.pieces), designs, c, args.split, str(args.models), str(args.out)) for c in range(args.clips)]
        with Pool(args.workers) as pool:
            for n, _ in enumerate(pool.imap_unordered(record_one, jobs), 1):
                print(f"\rroll clips {n}/{args.clips}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        return 0
    print(json.dumps(tune(load_records(args.records), args.models, args.workers), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
