"""What the dice finder's second look (session 49: the frame shrunk twice more, for dice close to the camera) costs
a frame: the same held-out dice scenes read by the shipped dice reader twice in turn, with the second look and with
the first alone, so both see the same machine load (a ratio: these machines are noisy); and, on the same frames,
the finder alone both ways, with how many of the resting, wholly seen dice each finds and how many finds are of no
die. Both use the shipped settings; reading accuracy is `tabletop bench vision --game loot-roll`'s.

    .venv/bin/python bench/dice_finder_looks.py --scenes 40

Needs Loot Roll's pieces (`tabletop synth pieces --game loot-roll --designs 20 --out out/pieces/loot-roll`).
"""

from __future__ import annotations

import copy
import json
import time

import numpy as np
from dice_frames import calibrated_scenes, dice_bench_args

from vision.dice.bench import SEEN, matched_truth
from vision.dice.read import DiceReader
from vision.recognise.models import models_dir


def main() -> None:
    args = dice_bench_args(__doc__.splitlines()[0], "dice_finder_looks")
    two = DiceReader(args.models or models_dir())
    one = copy.copy(two)
    one.finder = copy.copy(two.finder)
    one.finder.second_look = False
    readers = {"first look alone": one, "two looks": two}
    times: dict[str, list[float]] = {name: [] for name in readers}
    finder_times: dict[str, list[float]] = {name: [] for name in readers}
    found = dict.fromkeys(readers, 0)
    false = dict.fromkeys(readers, 0)
    owed = 0
    for i, (rendered, table) in enumerate(calibrated_scenes(args)):
        image = rendered.scene.image
        truth = [d.to_json() for d in rendered.dice]
        resting = [d for d in truth if d["state"] == "rest" and d["seen"] >= SEEN and d["face_seen"] >= SEEN]
        owed += len(resting)
        order = list(readers) if i % 2 else list(readers)[::-1]
        for name in order:
            start = time.perf_counter()
            readers[name].read(image, table)
            times[name].append(time.perf_counter() - start)
            start = time.perf_counter()
            finds = readers[name].finder.find(image)
            finder_times[name].append(time.perf_counter() - start)
            matched = matched_truth(truth, [(f.x, f.y) for f in finds])
            found[name] += sum(any(m is d for m in matched) for d in resting)
            false[name] += sum(m is None for m in matched)
    result: dict[str, object] = {
        "scenes": args.scenes,
        "seed": args.seed,
        "resting_dice": owed,
        **{
            name: {
                "frame_median_ms": 1000 * float(np.median(times[name])),
                "frame_p95_ms": 1000 * float(np.percentile(times[name], 95)),
                "finder_median_ms": 1000 * float(np.median(finder_times[name])),
                "resting_found": found[name],
                "false_finds": false[name],
            }
            for name in readers
        },
        "two_looks_over_one_frame_median": float(np.median(times["two looks"]) / np.median(times["first look alone"])),
        "two_looks_over_one_finder_median": float(
            np.median(finder_times["two looks"]) / np.median(finder_times["first look alone"])
        ),
    }
    for name in readers:
        stats = result[name]
        print(
            f"{name}: a calibrated frame {stats['frame_median_ms']:.1f} ms median (p95 {stats['frame_p95_ms']:.1f}), "  # type: ignore[index]
            f"the finder {stats['finder_median_ms']:.1f} ms; resting dice found {stats['resting_found']} of {owed}, "  # type: ignore[index]
            f"false finds {stats['false_finds']} over {args.scenes} frames"  # type: ignore[index]
        )
    print(
        f"two looks / first alone (medians): frame {result['two_looks_over_one_frame_median']:.3f}, "
        f"finder {result['two_looks_over_one_finder_median']:.3f}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
