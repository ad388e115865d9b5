"""What reading each die in the table's own view costs a calibrated frame: the same held-out dice scenes read by the
shipped dice reader twice in turn, once with the table view's face finder (`dice-faces-table.onnx`) and once with
the upright square's (`dice-faces.onnx`), so both see the same machine load (a ratio: these machines are noisy).
Both use the shipped settings; accuracy is `tabletop bench vision --game loot-roll`'s.

    .venv/bin/python bench/dice_table_view.py --scenes 40

Needs Loot Roll's pieces (`tabletop synth pieces --game loot-roll --designs 20 --out out/pieces/loot-roll`).
"""

from __future__ import annotations

import copy
import json
import sys
import time

import numpy as np
from dice_frames import calibrated_scenes, dice_bench_args

from vision.dice.read import DiceReader
from vision.recognise.models import models_dir


def main() -> None:
    args = dice_bench_args(__doc__.splitlines()[0], "dice_table_view")
    table_view = DiceReader(args.models or models_dir())
    if table_view.table_faces is None:
        sys.exit("dice_table_view: the models hold no dice-faces-table.onnx: nothing to compare")
    upright = copy.copy(table_view)
    upright.table_faces = None
    readers = {"upright square": upright, "table view": table_view}
    times: dict[str, list[float]] = {name: [] for name in readers}
    for i, (rendered, table) in enumerate(calibrated_scenes(args)):
        order = list(readers) if i % 2 else list(readers)[::-1]
        for name in order:
            start = time.perf_counter()
            readers[name].read(rendered.scene.image, table)
            times[name].append(time.perf_counter() - start)
    result: dict[str, object] = {
        "scenes": args.scenes,
        "seed": args.seed,
        **{
            name: {"median_ms": 1000 * float(np.median(t)), "p95_ms": 1000 * float(np.percentile(t, 95))}
            for name, t in times.items()
        },
        "table_view_over_upright_median": float(np.median(times["table view"]) / np.median(times["upright square"])),
    }
    for name in readers:
        stats = result[name]
        print(f"{name}: median {stats['median_ms']:.1f} ms, p95 {stats['p95_ms']:.1f} ms over {args.scenes} frames")  # type: ignore[index]
    print(f"table view / upright square (medians): {result['table_view_over_upright_median']:.3f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
