"""Choosing the catalogue recogniser's cut-offs on validation designs (never the test ones), written beside the models
as `{game}-catalogue-{matcher}-thresholds.json`.

The issue's bar has two sides: cards outside the catalogue accepted at most 1%, and as many cards named as can be.
So the choice is the setting that names the most cards right among those that accept at most `MAX_OUTSIDERS` of
the validation outsiders and keep precision at least `MIN_PRECISION`; the corner cut-off changes which corners
propose cards, so each is run once, and the match cut-offs are replayed on its proposals.

    python -m vision.train.tune_catalogue --game loot-roll --scenes 150
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.recognise.bench_catalogue import (
    CatalogueScore,
    catalogue_scenes,
    outsiders_of,
    score_catalogue_scene,
    summary,
)
from vision.recognise.catalogue import CATALOGUE_GAMES, CatalogueRecogniser, CatalogueThresholds, thresholds_file
from vision.recognise.models import models_dir

MAX_OUTSIDERS = 0.01
MIN_PRECISION = 0.9
CORNERS = (0.2, 0.3, 0.4, 0.5)
ALIGNMENTS = tuple(float(a) for a in np.round(np.arange(0.5, 0.981, 0.04), 2))
DISTINCTS = (-1.0, 0.2, 0.35, 0.5, 0.6, 0.7, 0.8)  # -1: the post-fit check (`catalogue.distinct_fits`) off


def tune(
    recogniser: CatalogueRecogniser, bench: Sequence, enrolled: dict
) -> tuple[CatalogueThresholds, dict, list[dict]]:
    """The chosen cut-offs and their figures, and every setting's figures (the trade-off the choice was made on)."""
    frames = [cv2.imdecode(np.frombuffer(s.jpeg, np.uint8), cv2.IMREAD_COLOR) for s in bench]
    best: tuple[tuple, CatalogueThresholds, dict] | None = None
    tried: list[dict] = []
    for corner in CORNERS:
        proposals = []
        for scene, frame in zip(tqdm(bench, desc=f"corner {corner}", unit="scene"), frames, strict=True):
            recogniser.catalogue = enrolled[scene.deck]
            found = recogniser.propose(frame, recogniser.find(frame, corner))
            fitted = recogniser.aligned(
                frame, [p for p in found if p.score >= CatalogueThresholds.align_floor], distinct=True
            )
            proposals.append([p for p in fitted if p.alignment >= ALIGNMENTS[0]])
        scores = sorted({round(p.score, 3) for ps in proposals for p in ps})
        grid_scores = np.quantile(scores, np.linspace(0, 0.9, 10)) if scores else [0.0]
        grid = itertools.product(grid_scores, (0.0, 0.02), ALIGNMENTS, DISTINCTS)
        for min_score, min_margin, min_alignment, min_distinct in grid:
            t = CatalogueThresholds(corner, float(min_score), min_margin, min_alignment, min_distinct=min_distinct)
            recogniser.thresholds = t
            score = CatalogueScore()
            for scene, found in zip(bench, proposals, strict=True):
                left_out = set(outsiders_of(enrolled[scene.deck], scene))
                score_catalogue_scene(scene, recogniser.report(found), left_out, score)
            s = summary(score)
            tried.append({**dataclasses.asdict(t), **s})
            ok = (s["outsiders_accepted"] or 0.0) <= MAX_OUTSIDERS and (s["precision"] or 0.0) >= MIN_PRECISION
            key = (ok, s["recall"] or 0.0, s["precision"] or 0.0)
            if best is None or key > best[0]:
                best = (key, t, s)
    assert best is not None
    return best[1], best[2], tried


def trade_off(tried: Sequence[dict], floors: Sequence[float] = (0.7, 0.8, 0.9, 0.95)) -> list[str]:
    """The most cards named at each precision floor, whatever the outsiders: what the outsider bar costs."""
    lines = []
    for floor in floors:
        ok = [t for t in tried if (t["precision"] or 0.0) >= floor]
        if ok:
            t = max(ok, key=lambda t: t["recall"] or 0.0)
            lines.append(
                f"precision >= {floor:.0%}: recall {t['recall']:.1%}, outsiders accepted "
                f"{t['outsiders_accepted'] or 0:.1%} of {t['outsiders']} (corner {t['corner']}, "
                f"score {t['min_score']:.3f}, margin {t['min_margin']}, fit {t['min_alignment']}, distinct "
                f"{t['min_distinct']})"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True, choices=CATALOGUE_GAMES)
    parser.add_argument("--pieces", type=Path, help="folder of the game's designs (default out/catcards/GAME)")
    parser.add_argument("--scenes", type=int, default=150)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--matcher", default="auto", choices=("auto", "cells", "embedder"))
    args = parser.parse_args(argv)
    from vision.recognise.bench_games import game_designs

    designs = game_designs(args.pieces or Path("out/catcards") / args.game, args.game, "val")
    bench, enrolled = catalogue_scenes(args.game, designs, args.scenes, args.seed)
    root = args.models or models_dir()
    recogniser = CatalogueRecogniser(next(iter(enrolled.values())), root, matcher=args.matcher)
    chosen, figures, tried = tune(recogniser, bench, enrolled)
    path = chosen.save(root / thresholds_file(args.game, recogniser.matcher.name))
    print(dataclasses.asdict(chosen), figures)
    print("\n".join(trade_off(tried)))
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
