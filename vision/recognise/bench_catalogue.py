"""The camera's naming of catalogue cards (issue 20: Loot Roll, The LOOP) on scenes of procedural designs held out of
training, each design enrolled from its own pictures as a player would enrol theirs.

What is scored (the issue's acceptance):
- every card at least half visible, face up or face down (a face-down card is named by its back: BACK_MONSTER),
  must be named right at its place: recall; every report must name the card under it: precision;
- cards outside the catalogue must not be named: a fifth of each design's cards (`OUTSIDERS`, fixed by the design's
  name) are left out of its enrolment, and every one of them at least half visible that gets any report is an
  outsider accepted;
- the matcher alone, on the true outlines of the same cards: what the corner finder's proposals cost.
The baseline in the same run is the standard-deck recogniser, which knows no catalogue card.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.recognise.bench import BenchScene, busy_frames, latency_stats, pct, render_scenes, warm_up
from vision.recognise.catalogue import CATALOGUE_GAMES, Catalogue, CatalogueRecogniser, catalogue_of_piece_set
from vision.recognise.recogniser import CardDetection
from vision.recognise.rectified import inside

HALF_VISIBLE = 0.5  # the bar is on cards at least this visible
OUTSIDERS = 0.2  # the share of each design's cards left out of its enrolment (a fifth: enough of them to measure 1%)


def outsiders(catalogue: Catalogue) -> list[str]:
    """The cards of a design left out of its enrolment: fixed by the design's name, so every run leaves out the same."""
    rng = np.random.default_rng(zlib.crc32(catalogue.name.encode()))
    count = max(1, round(OUTSIDERS * len(catalogue.codes)))
    return sorted(str(c) for c in rng.choice(list(catalogue.codes), count, replace=False))


@dataclass
class CatalogueScore:
    cards: int = 0  # in-catalogue cards at least half visible
    named: int = 0  # ... named right at their place
    reports: int = 0
    right: int = 0
    duplicates: int = 0
    outsiders: int = 0  # outside-catalogue cards at least half visible
    outsiders_named: int = 0  # ... that got a report
    true_outline_cards: int = 0
    true_outline_right: int = 0


def card_under(cards: Sequence[dict], det: CardDetection) -> int | None:
    """The top-most card of the scene whose outline holds the report's centre."""
    centre = det.quad.mean(axis=0)
    under = [k for k, c in enumerate(cards) if inside(centre, np.asarray(c["quad"], np.float32))]
    return under[-1] if under else None


def score_catalogue_scene(
    scene: BenchScene, detections: Sequence[CardDetection], left_out: set[str], score: CatalogueScore
) -> None:
    """Adds one scene's reports to `score` (cards are listed bottom to top, as the renderer paints them)."""
    cards = [c for c in scene.cards if c.get("kind", "card") == "card"]
    right_at: dict[int, int] = {}
    reported_at: set[int] = set()
    for det in detections:
        score.reports += 1
        k = card_under(cards, det)
        if k is None:
            continue
        reported_at.add(k)
        if det.label == cards[k]["code"]:
            score.right += 1
            right_at[k] = right_at.get(k, 0) + 1
    for k, c in enumerate(cards):
        if c["visible_fraction"] < HALF_VISIBLE:
            continue
        if c["code"] in left_out:
            score.outsiders += 1
            score.outsiders_named += k in reported_at
            continue
        score.cards += 1
        score.named += k in right_at
        score.duplicates += max(right_at.get(k, 0) - 1, 0)


def true_outline_reading(
    frame: np.ndarray, scene: BenchScene, recogniser: CatalogueRecogniser, score: CatalogueScore
) -> None:
    """The matcher alone: every in-catalogue card at least half visible, cut along its true outline."""
    codes = recogniser.catalogue.codes
    cards = [
        c
        for c in scene.cards
        if c.get("kind", "card") == "card" and c["visible_fraction"] >= HALF_VISIBLE and c["code"] in codes
    ]
    if not cards:
        return
    best = recogniser.match(frame, [np.asarray(c["quad"], np.float32) for c in cards]).argmax(axis=1)
    score.true_outline_cards += len(cards)
    score.true_outline_right += sum(codes[int(b)] == c["code"] for b, c in zip(best, cards, strict=True))


def ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def summary(score: CatalogueScore) -> dict:
    return {
        "cards": score.cards,
        "recall": ratio(score.named, score.cards),
        "reports": score.reports,
        "precision": ratio(score.right, score.reports),
        "duplicates": score.duplicates,
        "outsiders": score.outsiders,
        "outsiders_accepted": ratio(score.outsiders_named, score.outsiders),
        "true_outline_cards": score.true_outline_cards,
        "true_outline_top1": ratio(score.true_outline_right, score.true_outline_cards),
    }


def catalogue_scenes(
    game: str, designs: Sequence[Path], scenes: int, seed: int, workers: int = 2, progress: Callable | None = None
) -> tuple[list[BenchScene], dict[str, Catalogue]]:
    """The bench's scenes and each design's enrolment (its own pictures, less its outsiders)."""
    if game not in CATALOGUE_GAMES:
        raise ValueError(f"no catalogue-card bench for '{game}' (games: {', '.join(CATALOGUE_GAMES)})")
    bench = render_scenes(designs, scenes, seed, workers, progress)
    enrolled = {}
    for folder in designs:
        full = catalogue_of_piece_set(folder)
        enrolled[folder.name] = full.without(outsiders(full))
    return bench, enrolled


def run_catalogue(
    recogniser: Any, bench: Sequence[BenchScene], enrolled: dict[str, Catalogue]
) -> tuple[dict, list[float]]:
    """One timed pass of a recogniser over the scenes. The catalogue recogniser reads each with its own design's
    enrolment, and its matcher is also scored alone on the cards' true outlines; the baseline reads as it is."""
    catalogued = isinstance(recogniser, CatalogueRecogniser)
    score = CatalogueScore()
    times = []
    for scene in bench:
        if catalogued:
            recogniser.catalogue = enrolled[scene.deck]
        start = time.perf_counter()
        frame = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
        detections = recogniser.recognise(frame)
        times.append(time.perf_counter() - start)
        score_catalogue_scene(scene, detections, set(outsiders_of(enrolled[scene.deck], scene)), score)
        if catalogued:
            true_outline_reading(frame, scene, recogniser, score)
    return summary(score), times


def outsiders_of(catalogue: Catalogue, scene: BenchScene) -> list[str]:
    """The scene's card codes its design's enrolment lacks."""
    return sorted({c["code"] for c in scene.cards if c.get("kind", "card") == "card"} - set(catalogue.codes))


def run_catalogue_bench(
    game: str,
    pieces_root: Path,
    scenes: int = 150,
    seed: int = 3,
    models: Path | None = None,
    workers: int = 2,
    progress: Callable[[str, int, int], None] | None = None,
    split: str = "test",
) -> dict:
    """Scenes of held-out designs, named by the catalogue recogniser and, as the baseline, the standard-deck one."""
    from vision.recognise.bench_games import game_designs
    from vision.recognise.rectified import RectifiedRecogniser

    designs = game_designs(pieces_root, game, split)
    tick = (lambda i, n: progress("render", i, n)) if progress else None
    bench, enrolled = catalogue_scenes(game, designs, scenes, seed, workers, tick)
    recogniser = CatalogueRecogniser(enrolled[bench[0].deck], models)
    warm_up(recogniser, bench[:3])
    accuracy, times = run_catalogue(recogniser, bench, enrolled)
    baseline = RectifiedRecogniser(models)
    warm_up(baseline, bench[:3])
    base_accuracy, base_times = run_catalogue(baseline, bench, enrolled)
    busy = busy_frames(bench)
    return {
        "data": {
            "game": game,
            "designs": [p.name for p in designs],
            "split": f"{split} (designs held out of training: art.common.design_split), each enrolled from its own "
            f"pictures less {OUTSIDERS:.0%} of its cards (the outsiders)",
            "scenes": scenes,
            "seed": seed,
            "size": [1280, 720],
        },
        "recogniser": f"catalogue ({recogniser.matcher.name})",
        "accuracy": accuracy,
        "latency": {
            "onnxruntime": latency_stats([times[i] for i in busy]),
            "all_frames": latency_stats(times),
        },
        "compared": {
            "standard deck (baseline)": {
                "accuracy": base_accuracy,
                "latency": {"onnxruntime": latency_stats([base_times[i] for i in busy])},
            }
        },
    }


def format_catalogue_table(result: dict) -> str:
    data = result["data"]
    rows = [("catalogue", result), *result["compared"].items()]
    lines = [
        f"{data['game']} catalogue cards on {data['scenes']} synthetic 1280x720 scenes (seed {data['seed']}) of "
        f"{len(data['designs'])} held-out designs, each enrolled from its own pictures",
        "",
        f"{'recogniser':<28} {'recall':>8} {'precision':>10} {'outsiders accepted':>19} {'twice':>6} {'median ms':>10}",
    ]
    for name, r in rows:
        a = r["accuracy"]
        lat = r["latency"]["onnxruntime"]
        median = f"{lat['median_ms']:.1f}" if lat.get("frames") else "-"
        lines.append(
            f"{name:<28} {pct(a['recall']):>8} {pct(a['precision']):>10} {pct(a['outsiders_accepted']):>19} "
            f"{a['duplicates']:>6} {median:>10}"
        )
    a = result["accuracy"]
    lines += [
        "",
        f"Cards at least half visible: {a['cards']} in the catalogue, {a['outsiders']} outside it. "
        f"The matcher alone on their true outlines: {pct(a['true_outline_top1'])} named right.",
    ]
    return "\n".join(lines)
