"""Choosing the rectified recogniser's thresholds on the validation families (never the test ones), written beside
its models as cards-corners-thresholds.json.

Each validation scene is read once at a low corner score (every corner down to FLOOR, every face-up one read); the
grid then replays the cut-offs on those readings. Face-up settings maximise the smaller of precision and recall (the
issue asks for both); the face-down ones do the same for backs.

    python -m vision.train.tune_rectified --decks out/decks --procedural out/procdecks --scenes 150

`--check DIR ...` tunes nothing: it scores the recognisers whose models (and cut-offs) lie in each folder on the same
fresh validation scenes (pass another `--seed` than the tuning's), which is how a new reader or cut-off is chosen:

    python -m vision.train.tune_rectified --procedural out/procdecks --scenes 300 --seed 21 --check old-models models
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.recognise.bench import (
    SceneScore,
    pct,
    render_scenes,
    run_recogniser,
    score_scene,
    summarise,
    test_decks,
)
from vision.recognise.bench_games import NUMBER_GAMES, game_designs
from vision.recognise.bench_stages import stage_bench
from vision.recognise.corners import Corner
from vision.recognise.labels import ONE_OF_EACH
from vision.recognise.models import models_dir
from vision.recognise.reader import Reading
from vision.recognise.rectified import (
    RectifiedRecogniser,
    RectifiedThresholds,
    assemble_read,
    thresholds_file,
    turn_sideways,
    turned_corner,
)

FLOOR = 0.15  # the lowest corner score in the grid
UP_GRID = {
    # not below 0.2: each corner read costs reader time, and at 0.15 a busy frame holds a third more of them (71
    # against 52; session 16: median 35.0 against 31.3 ms on the same frames, and the bench's 44 ms broke the bar)
    "corner": (0.2, 0.3, 0.4, 0.5),
    "none_reject": (0.3, 0.5, 0.7, 0.85),
    "min_confidence": (0.2, 0.3, 0.5, 0.7),
}
TEMPERATURES = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0)  # chosen first, for calibration: the cut-offs compare its beliefs
# then, given those, how sure a JOKER and a card read by one corner only must be (1.01: a blank face is no joker)
LABEL_GRID = {"joker": (0.0, 0.8, 0.95, 1.01), "lone_up": (0.0, 0.3, 0.5, 0.7)}
# face_up 1.01: a face-or-back head, where the reader has one, is not listened to
DOWN_GRID = {
    "lone_down": (0.3, 0.45, 0.6, 0.8, 1.01),
    "face_up": (0.3, 0.5, 0.7, 0.85, 1.01),
    "backs_under_faces": (False, True),
}


# how clearly the reader must see an index in a no-index corner turned the other way round (0: never turned)
SIDEWAYS_GRID = {"sideways": (0.0, 0.05, 0.1, 0.2, 0.35)}
# how sure the card head must be that a corner is a card's (0: every corner is read, as before it existed)
CARD_GRID = {"min_card": (0.0, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8)}


@dataclass
class Cached:
    corners: list[Corner]
    reading: Reading  # theirs, in order: probabilities, and the face and card heads' where the reader has them
    classes: tuple[str, ...]  # the reader's labels (its game's), naming the probabilities' columns
    one_of_each: bool  # whether its game prints each card once (`labels.ONE_OF_EACH`)
    turned: list[Corner]  # each corner with its edges the other way round (`rectified.turned_corner`)...
    turned_reading: Reading  # ...and what the reader says of it, for `sideways`
    none: int  # the probabilities' "none" column


def read_all(recogniser: RectifiedRecogniser, frame: np.ndarray) -> Cached:
    corners = recogniser.find(frame, FLOOR)
    turned = [turned_corner(c) for c in corners]
    return Cached(
        corners,
        recogniser.read_corners(frame, corners),
        recogniser.classes,
        recogniser.game in ONE_OF_EACH,
        turned,
        recogniser.read_corners(frame, turned),
        recogniser.reader.none_column,
    )


def replay(cached: Cached, t: RectifiedThresholds) -> list:
    rows = np.arange(len(cached.corners))
    corners, reading = turn_sideways(
        cached.corners, cached.reading, rows, cached.turned, cached.turned_reading, t, cached.none
    )
    return assemble_read(corners, reading, t, cached.classes, cached.one_of_each)


def scores(scenes: Sequence, cache: Sequence[Cached], t: RectifiedThresholds) -> list[SceneScore]:
    """Every scene scored as the recogniser with cut-offs `t` reads it, replayed from the cached readings."""
    return [score_scene(sc, replay(c, t)) for sc, c in zip(scenes, cache, strict=True)]


def min_pr(side: str) -> Callable[[dict], tuple[float, ...]]:
    """The key a side's cut-offs are chosen by: the smaller of precision and recall, then recall. Face up, recall is
    over the cards whose index is legible where the scenes measured it (session 15): a smeared index is the
    recogniser's to call UNKNOWN, not to guess."""

    def key(summary: dict) -> tuple[float, ...]:
        s = summary[side]
        recall = s.get("legible_recall") if s.get("legible_cards") else s["recall"]
        return min(s["precision"] or 0, recall or 0), recall or 0

    return key


def both_sides(summary: dict) -> tuple[float, ...]:
    """The mean of the face-up and face-down keys: a corner turned away is lost to both sides."""
    up, down = min_pr("face_up")(summary), min_pr("face_down")(summary)
    return ((up[0] + down[0]) / 2, up[1] + down[1])


def least_calibration_error(summary: dict) -> tuple[float, ...]:
    return (-summary["calibration"]["ece"],)


def best_of(
    grid: dict, base: RectifiedThresholds, scenes: Sequence, cache: Sequence[Cached], key: Callable[[dict], tuple]
) -> tuple[RectifiedThresholds, float]:
    """The setting of the grid whose summary has the greatest key, and the key's first value."""
    best, best_key = base, None
    for values in tqdm(list(itertools.product(*grid.values())), desc=f"grid {', '.join(grid)}", unit="setting"):
        t = dataclasses.replace(base, **dict(zip(grid, values, strict=True)))
        k = key(summarise(scores(scenes, cache, t)))
        if best_key is None or k > best_key:
            best, best_key = t, k
    assert best_key is not None
    return best, best_key[0]


CURVE_POINTS = 11  # the calibration curve's values at p = 0, 0.1, ..., 1


def monotone_fit(p: np.ndarray, right: np.ndarray, points: int = CURVE_POINTS, bins: int = 20) -> tuple[float, ...]:
    """The share right as a non-decreasing function of p, read at evenly spaced p: reports pooled into equal-count
    bins (so no lone report at an extreme sets an end of the curve), then adjacent bins pooled while they violate
    the order (pool-adjacent-violators), then read between the bins' mean p."""
    order = np.argsort(p)
    xs, ys = np.asarray(p, np.float64)[order], np.asarray(right, np.float64)[order]
    if not len(xs):
        return ()
    # [sum of p, sum of right, count] per bin, merged while a bin's share right is above the next one's
    blocks: list[list[float]] = []
    for part in np.array_split(np.arange(len(xs)), min(bins, len(xs))):
        blocks.append([float(xs[part].sum()), float(ys[part].sum()), float(len(part))])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] > blocks[-1][1] / blocks[-1][2]:
            last = blocks.pop()
            blocks[-1] = [a + b for a, b in zip(blocks[-1], last, strict=True)]
    centres = [b[0] / b[2] for b in blocks]
    shares = [b[1] / b[2] for b in blocks]
    grid = np.linspace(0.0, 1.0, points)
    return tuple(round(float(v), 4) for v in np.interp(grid, centres, shares))


def fit_calibration(scenes: Sequence, cache: Sequence[Cached], t: RectifiedThresholds) -> RectifiedThresholds:
    """Calibration curves for cards read by one corner, by more, and by none (a face by its face head), from the
    raw beliefs under cut-offs `t`."""
    raw = dataclasses.replace(t, calibration_lone=(), calibration_multi=(), calibration_blank=())
    rows = [
        (belief, right, corners)
        for score in scores(scenes, cache, raw)
        for (belief, right), corners in zip(score.beliefs, score.belief_corners, strict=True)
    ]
    p = np.array([r[0] for r in rows], np.float64)
    right = np.array([r[1] for r in rows], np.float64)
    corners = np.array([r[2] for r in rows])
    lone, multi, blank = corners == 1, corners > 1, corners == 0
    return dataclasses.replace(
        raw,
        calibration_lone=monotone_fit(p[lone], right[lone]),
        calibration_multi=monotone_fit(p[multi], right[multi]),
        calibration_blank=monotone_fit(p[blank], right[blank]),
    )


def read_scenes(recogniser: RectifiedRecogniser, scenes: Sequence) -> list[Cached]:
    """Every scene read once (`read_all`), for the grids to replay."""
    return [
        read_all(recogniser, cv2.imdecode(np.frombuffer(s.jpeg, np.uint8), cv2.IMREAD_COLOR))
        for s in tqdm(scenes, desc="read", unit="scene")
    ]


def tune(recogniser: RectifiedRecogniser, scenes: Sequence) -> tuple[RectifiedThresholds, dict]:
    cache = read_scenes(recogniser, scenes)
    # first the temperature, for calibration: the cut-offs compare its beliefs
    chosen, ece = best_of({"temperature": TEMPERATURES}, RectifiedThresholds(), scenes, cache, least_calibration_error)
    card_head = all(c.reading.card is not None for c in cache)
    if card_head:  # which corners are cards' at all decides what both sides' cut-offs see: first, and again last
        chosen, _ = best_of(CARD_GRID, chosen, scenes, cache, both_sides)
    chosen, up = best_of(UP_GRID, chosen, scenes, cache, min_pr("face_up"))
    chosen, up = best_of(SIDEWAYS_GRID, chosen, scenes, cache, min_pr("face_up"))
    chosen, up = best_of(LABEL_GRID, chosen, scenes, cache, min_pr("face_up"))
    down_grid = DOWN_GRID
    if any(c.reading.face is None for c in cache):  # a reader with no face head: its cut-off is written as off
        down_grid = {**DOWN_GRID, "face_up": (1.01,)}
    chosen, down = best_of(down_grid, chosen, scenes, cache, min_pr("face_down"))
    if card_head:
        chosen, _ = best_of(CARD_GRID, chosen, scenes, cache, both_sides)
        chosen, down = best_of(down_grid, chosen, scenes, cache, min_pr("face_down"))
        up = min_pr("face_up")(summarise(scores(scenes, cache, chosen)))[0]
    chosen = fit_calibration(scenes, cache, chosen)
    fitted = summarise(scores(scenes, cache, chosen))
    return chosen, {
        "face_up_min_pr": up,
        "face_down_min_pr": down,
        "face_up_calibration_error": -ece,
        "calibration_error_after_fit (in sample)": fitted["calibration"]["ece"],
    }


def check_line(folder: Path, scenes: Sequence, stages: bool = False, game: str = "loot-the-loop") -> str:
    """One models folder's recogniser on the scenes, as the tuner's choices are judged; with `stages`, also the
    stage bench's corner frames and readings (`bench_stages.stage_bench`)."""
    recogniser = RectifiedRecogniser(folder, game=game)
    s = summarise(run_recogniser(recogniser, scenes)[0])
    up, down = s["face_up"], s["face_down"]
    ece = s["calibration"]["ece"] if "calibration" in s else None
    line = (
        f"{folder}: face up P {pct(up['precision'])} R {pct(up['recall'])} (of {up['cards']}), legible R "
        f"{pct(up['legible_recall'])} (of {up['legible_cards']}), UNKNOWN {up['unknown_reports']}; face down P "
        f"{pct(down['precision'])} R {pct(down['recall'])}; twice {s['duplicates']}; calibration error "
        + ("n/a" if ece is None else f"{ece:.3f}")
    )
    if not stages:
        return line
    st = stage_bench(recogniser, scenes)
    finder, found = st["corner_finder"], st["reader_found_corners"]
    return line + (
        f"\n  corners: legible found {pct(finder['legible_corner_recall'])}, median edge turn "
        f"{finder['median_edge_turn_deg']:.1f} deg, gross {pct(finder['gross_edge_share'])}, swapped "
        f"{pct(finder['swapped_edge_share'])}; reader on found corners {pct(found['top1'])} (true frame "
        f"{pct(found['top1_true_frame'])}), on true corners {pct(st['reader_true_corners']['top1'])}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decks", type=Path, default=Path("out/decks"))
    parser.add_argument("--procedural", type=Path, help="a folder of procedural decks: its proc-val-* decks join in")
    parser.add_argument("--scenes", type=int, default=150)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--check", type=Path, nargs="+", help="score these model folders instead of tuning")
    parser.add_argument("--stages", action="store_true", help="with --check: the stage bench's figures too")
    parser.add_argument(
        "--calibration-only",
        action="store_true",
        help="keep the models folder's cut-offs and fit only its calibration curves again (after a new reader)",
    )
    parser.add_argument(
        "--game",
        default="loot-the-loop",
        choices=("loot-the-loop", *NUMBER_GAMES),
        help="whose cards: standard decks (--decks, --procedural), or a number-card game's validation designs "
        "(--pieces); its own cut-offs file is written",
    )
    parser.add_argument("--pieces", type=Path, help="--game: folder of its designs (default out/numcards/GAME)")
    args = parser.parse_args(argv)
    root = args.models or models_dir()
    if args.game == "loot-the-loop":
        decks = test_decks(args.decks, "val")
        if args.procedural:
            decks += sorted(p for p in args.procedural.glob("proc-val-*") if (p / "deck.json").is_file())
    else:
        decks = game_designs(args.pieces or Path("out/numcards") / args.game, args.game, "val")
    scenes = render_scenes(decks, args.scenes, args.seed)
    if args.check:
        for folder in args.check:
            print(check_line(folder, scenes, args.stages and args.game == "loot-the-loop", args.game), flush=True)
        return 0
    if args.calibration_only:
        kept = RectifiedThresholds.load(root / thresholds_file(args.game))
        recogniser = RectifiedRecogniser(root, thresholds=kept, game=args.game)
        cache = read_scenes(recogniser, scenes)
        chosen = fit_calibration(scenes, cache, kept)
        print(
            chosen,
            {"calibration_error_after_fit (in sample)": summarise(scores(scenes, cache, chosen))["calibration"]["ece"]},
        )
        print(chosen.save(root / thresholds_file(args.game)))
        return 0
    chosen, summary = tune(RectifiedRecogniser(root, thresholds=RectifiedThresholds(), game=args.game), scenes)
    print(chosen, summary)
    print(chosen.save(root / thresholds_file(args.game)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
