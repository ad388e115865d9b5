"""Choosing the recogniser's thresholds on the validation families (never the test ones), written beside the
models as cards-thresholds.json.

Each validation scene is read once with every threshold at its floor (finder boxes down to score 0.05, every card
outline's corners probed); the grid then replays the cut-offs on those readings. Face-up settings maximise the
smaller of precision and recall (the issue asks for both); the back threshold does the same for face-down cards.

    python -m vision.train.tune --decks out/decks --scenes 200
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.recognise.bench import render_scenes, score_scene, summarise, test_decks
from vision.recognise.finder import Found
from vision.recognise.models import models_dir
from vision.recognise.recogniser import THRESHOLDS_FILE, Recogniser, Thresholds, assemble, card_probes, owner

FLOOR = 0.05
GRID = {
    "index": (0.1, 0.2, 0.3, 0.4),
    "card": (0.2, 0.35, 0.5),
    "none_reject": (0.3, 0.5, 0.7),
    "min_confidence": (0.3, 0.5, 0.7, 0.9),
}
BACKS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7)


@dataclass
class Cached:
    found: list[Found]  # every finder box down to FLOOR
    probes: dict[int, list[Found]]  # position in `found` of a card -> its four corner regions
    probs: dict[int, np.ndarray]  # id() of an index Found (box or probe) -> reader probabilities


def read_all(recogniser: Recogniser, frame: np.ndarray) -> Cached:
    found = recogniser.finder.find(frame, {"index": FLOOR, "card": FLOOR, "back": FLOOR})
    probes = {k: card_probes(f) for k, f in enumerate(found) if f.kind == "card"}
    queue = [f for f in found if f.kind == "index"] + [p for ps in probes.values() for p in ps]
    probs = recogniser.read_indices(frame, [f.quad for f in queue])
    return Cached(found, probes, {id(f): probs[i] for i, f in enumerate(queue)})


def replay(cached: Cached, t: Thresholds, classes: Sequence[str]) -> list:
    scores = t.finder_scores()
    kept = [(k, f) for k, f in enumerate(cached.found) if f.score >= scores[f.kind]]
    indices = [f for _, f in kept if f.kind == "index"]
    cards = [(k, f) for k, f in kept if f.kind == "card"]
    read = {owner(i, [f for _, f in cards]) for i in indices}
    probes = [p for j, (k, _) in enumerate(cards) if j not in read for p in cached.probes[k]]
    found = [f for _, f in kept] + probes
    rows = [cached.probs[id(f)] for f in found if f.kind == "index"]
    probs = np.array(rows) if rows else np.zeros((0, len(classes)), np.float32)
    return assemble(found, probs, classes, t)


def tune(recogniser: Recogniser, scenes: Sequence) -> tuple[Thresholds, dict]:
    cache = [
        read_all(recogniser, cv2.imdecode(np.frombuffer(s.jpeg, np.uint8), cv2.IMREAD_COLOR))
        for s in tqdm(scenes, desc="read", unit="scene")
    ]
    best, best_key, table = None, (-1.0, -1.0), []
    for values in tqdm(list(itertools.product(*GRID.values())), desc="grid", unit="setting"):
        t = Thresholds(**dict(zip(GRID, values, strict=True)))
        up = summarise([score_scene(s, replay(c, t, recogniser.classes)) for s, c in zip(scenes, cache, strict=True)])
        up = up["face_up"]
        key = (min(up["precision"] or 0, up["recall"] or 0), up["recall"] or 0)
        table.append({**dict(zip(GRID, values, strict=True)), "precision": up["precision"], "recall": up["recall"]})
        if key > best_key:
            best, best_key = t, key
    assert best is not None
    back_best, back_key = BACKS[0], -1.0
    for b in BACKS:
        t = Thresholds(**{**best.__dict__, "back": b})
        down = summarise([score_scene(s, replay(c, t, recogniser.classes)) for s, c in zip(scenes, cache, strict=True)])
        down = down["face_down"]
        key = min(down["precision"] or 0, down["recall"] or 0)
        if key > back_key:
            back_best, back_key = b, key
    chosen = Thresholds(**{**best.__dict__, "back": back_best})
    return chosen, {"face_up_min_pr": best_key[0], "face_down_min_pr": back_key, "settings_tried": len(table)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Choose the recogniser's thresholds on the validation families.")
    parser.add_argument("--decks", type=Path, default=Path("out/decks"))
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--models", type=Path, default=None)
    args = parser.parse_args(argv)
    root = args.models or models_dir()
    scenes = render_scenes(test_decks(args.decks, "val"), args.scenes, args.seed)
    chosen, summary = tune(Recogniser(root, thresholds=Thresholds()), scenes)
    print(chosen, summary)
    print(chosen.save(root / THRESHOLDS_FILE))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
