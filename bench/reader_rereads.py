"""The rectified recogniser with and without rereads of unsure corners (`CornerReader.reread_below`, off by
default), on the same rendered scenes in one run: face-up and face-down precision and recall, the reader on true
corners, and the latency of both on the 10-20 card frames, frame by frame in turn (a ratio: these machines are noisy).

    .venv/bin/python bench/reader_rereads.py --split val --procedural out/procdecks   # choosing (session 31)
    .venv/bin/python bench/reader_rereads.py --split test                            # the held-out test families

Needs the rendered Debian decks (`tabletop synth decks --out out/decks`) and, for `--procedural`, procedural decks
(`python -m vision.synth.procedural out/procdecks --n 40 --seed 1 --split val`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.recognise.bench import (
    busy_frames,
    render_scenes,
    run_recogniser,
    side_by_side_latency,
    summarise,
    test_decks,
)
from vision.recognise.bench_stages import stage_bench
from vision.recognise.models import models_dir
from vision.recognise.rectified import RectifiedRecogniser


def figures(recogniser: RectifiedRecogniser, scenes: list) -> dict:
    up_down = summarise(run_recogniser(recogniser, scenes)[0])
    reader = stage_bench(recogniser, scenes)["reader_true_corners"]
    return {
        "face_up": {k: up_down["face_up"][k] for k in ("cards", "precision", "recall", "legible_recall")},
        "face_down": {k: up_down["face_down"][k] for k in ("cards", "precision", "recall")},
        "duplicates": up_down["duplicates"],
        "reader_true_corners": {"crops": reader["crops"], "top1": reader["top1"]},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decks", type=Path, default=Path("out/decks"))
    parser.add_argument("--procedural", type=Path, help="its proc-val-* decks join the validation split")
    parser.add_argument("--split", choices=("val", "test"), default="test")
    parser.add_argument("--scenes", type=int, default=300)
    parser.add_argument("--seed", type=int, help="default: 21 for val (the tuner's check), 3 for test (bench vision)")
    parser.add_argument("--below", type=float, default=0.8, help="reread below this (session 31: 0.8)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else (21 if args.split == "val" else 3)
    decks = test_decks(args.decks, args.split)
    if args.procedural and args.split == "val":
        decks += sorted(p for p in args.procedural.glob("proc-val-*") if (p / "deck.json").is_file())
    scenes = render_scenes(decks, args.scenes, seed)
    once = RectifiedRecogniser(models_dir())
    once.reader.reread_below = 0.0
    rereads = RectifiedRecogniser(models_dir())
    rereads.reader.reread_below = args.below
    result = {
        "data": {"split": args.split, "decks": [d.name for d in decks], "scenes": args.scenes, "seed": seed},
        "reread_below": args.below,
        "read_once": figures(once, scenes),
        "rereads": figures(rereads, scenes),
        "latency_busy_frames": side_by_side_latency(
            {"read_once": once, "rereads": rereads}, [scenes[i] for i in busy_frames(scenes)]
        ),
    }
    rows = [("face-up precision", "face_up", "precision"), ("face-up recall", "face_up", "recall"),
            ("face-up recall, legible index", "face_up", "legible_recall"),
            ("face-down precision", "face_down", "precision"), ("face-down recall", "face_down", "recall"),
            ("reader on true corners", "reader_true_corners", "top1")]  # fmt: skip
    print(f"{args.scenes} scenes, {args.split} families, seed {seed}; rereads below {args.below}")
    print("| | read once | rereads |\n|---|---:|---:|")
    for label, part, key in rows:
        a, b = result["read_once"][part][key], result["rereads"][part][key]
        print(f"| {label} | {100 * a:.2f}% | {100 * b:.2f}% |")
    lat = result["latency_busy_frames"]
    if lat["read_once"]["frames"]:
        print(
            f"| latency, {lat['read_once']['frames']} frames of 10-20 cards, median / p95 ms | "
            f"{lat['read_once']['median_ms']:.1f} / {lat['read_once']['p95_ms']:.1f} | "
            f"{lat['rereads']['median_ms']:.1f} / {lat['rereads']['p95_ms']:.1f} "
            f"({lat['rereads_over_read_once_median']:.2f}x) |"
        )
    else:
        print("(no frame of 10-20 cards among these scenes: no latency measured)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
