"""The camera's reading of the other games' number cards (issue 20: LOOP, Bag-O-Loot), on scenes of procedural designs
held out of training, scored as the standard-deck bench scores its decks (`bench.score_scene`).

The designs are `tabletop synth pieces` output; which of them is held out is fixed by its number
(`art.common.design_split`), and its numerals are set in font families that split never trained on. The baseline in
the same run is the standard-deck recogniser, which knows no number card: what the camera read of these games before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vision.recognise.bench import (
    accuracy_lines,
    busy_frames,
    comparison_lines,
    pct,
    recogniser_report,
    render_scenes,
    stage_lines,
)
from vision.recognise.labels import GAME_LABELS
from vision.synth.components import design_folders

NUMBER_GAMES = tuple(game for game, (vocabulary, _labels) in GAME_LABELS.items() if vocabulary == "numbers")


def game_designs(root: Path, game: str, split: str = "test") -> list[Path]:
    """The piece sets of `game` under `root` (a folder of `<game>-design-NNN` folders) whose design is in `split`."""
    if not root.is_dir():
        raise FileNotFoundError(
            f"{root}: no such folder of {game} designs (make them: tabletop synth pieces --game {game} --out {root})"
        )
    found = design_folders(root, split, game)
    if not found:
        raise FileNotFoundError(
            f"{root}: no {split} designs of {game} (design numbers {split} holds: art.common.design_split; "
            f"render at least 20: tabletop synth pieces --game {game} --designs 20 --out {root})"
        )
    return found


def run_game_bench(
    game: str,
    pieces_root: Path,
    scenes: int = 150,
    seed: int = 3,
    models: Path | None = None,
    workers: int = 2,
    progress: Callable[[str, int, int], None] | None = None,
    split: str = "test",
) -> dict:
    """Renders scenes of the split's designs of `game`, reads them with the number-card recogniser and, as the
    baseline, the standard-deck one; accuracy, breakdowns, per-design recall and latency on frames of 10-20 cards."""
    from vision.recognise.rectified import RectifiedRecogniser

    if game not in NUMBER_GAMES:
        raise ValueError(f"no number-card bench for '{game}' (games: {', '.join(NUMBER_GAMES)})")
    designs = game_designs(pieces_root, game, split)
    tick = (lambda i, n: progress("render", i, n)) if progress else None
    bench = render_scenes(designs, scenes, seed, workers, tick)
    recognisers = {
        "numbers": RectifiedRecogniser(models, game=game),
        "standard deck (baseline)": RectifiedRecogniser(models),
    }
    busy = busy_frames(bench)
    reports: dict[str, dict] = {}
    for name, rec in recognisers.items():
        report, _scores, _times = recogniser_report(rec, bench, busy)
        report["per_design_recall"] = report.pop("per_deck_recall")  # each design is its own family here
        reports[name] = report
    from vision.recognise.bench_stages import stage_bench

    return {
        "stages": stage_bench(recognisers["numbers"], bench),
        "data": {
            "game": game,
            "designs": [p.name for p in designs],
            "split": f"{split} (designs and numeral font families held out of training: art.common.design_split)",
            "scenes": scenes,
            "seed": seed,
            "size": [1280, 720],
        },
        "recogniser": "numbers",
        **reports["numbers"],
        "compared": {name: report for name, report in reports.items() if name != "numbers"},
    }


def format_game_table(result: dict) -> str:
    """The number-card bench as a table: accuracy, conditions, per design, and the baseline beside it."""
    data = result["data"]
    lat = result["latency"]["onnxruntime"]
    lines = [
        f"{data['game']} cards on {data['scenes']} synthetic 1280x720 scenes (seed {data['seed']}) of "
        f"{len(data['designs'])} held-out designs ({data['split'].split()[0]} split)",
        *accuracy_lines(result, "number"),
    ]
    recalls = result["per_design_recall"]
    lines += ["", "Face-up recall per design: " + ", ".join(f"{d} {pct(r)}" for d, r in recalls.items())]
    if lat.get("frames"):
        lines.append(
            f"Latency, frames of 10-20 cards: {lat['frames']} frames, median {lat['median_ms']:.1f} ms, "
            f"p95 {lat['p95_ms']:.1f} ms"
        )
    return "\n".join(lines + comparison_lines(result) + stage_lines(result))
