"""Fits the mission slots' model (`vision.board.missions.SlotModel`): whether a printed cube slot on a face-up
mission tile holds a progress cube, a logistic regression on `SLOT_FEATURES` (numpy, seconds).

Slots come from rendered board scenes with tiles on their spots (`cube_scenes.spot_tiles`) of the training designs,
each face-up tile at least half seen, every cube on it at least half seen, fitted by the reader on the true
placement and named right (what the reader then asks of its slots). The validation designs' scenes measure it
beside the hand-set rule it replaced (a slot holds a cube when its core's mean colour departs 0.9 x (the face's
contrast + 80) from the print).

    .venv/bin/python -m vision.train.mission_slots --pieces out/pieces/the-loop --models models
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

import cv2
import numpy as np

from vision.board.missions import (
    BACK,
    SLOT_FEATURES,
    SLOTS_FILE,
    MissionReader,
    SlotModel,
    mission_tiles_of_piece_set,
    slot_features,
)

SEEN = 0.5
L2 = 1e-3
STEPS = 4000
RATE = 0.2


def slot_rows(pieces_root: Path, split: str, scenes: int, seed: int, workers: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """(features (slots, SLOT_FEATURES), whether each holds a cube) from `scenes` scenes of `split`'s designs."""
    from vision.board.bench import render_bench_scenes
    from vision.board.mission_bench import render_mission_frame
    from vision.synth.art.the_loop import mission_regions
    from vision.synth.components import load_component

    def shown(stage: str, done: int, total: int) -> None:
        print(f"\r{split}: {stage} {done}/{total}", end="", file=sys.stderr)

    _, rendered = render_bench_scenes(render_mission_frame, pieces_root, scenes, seed, split, workers, shown, "mission")
    print(file=sys.stderr)
    blank = SlotModel(*(np.zeros(len(SLOT_FEATURES)) + v for v in (0.0, 1.0, 0.0)), 0.0)  # features only
    readers: dict[str, MissionReader] = {}
    features, filled = [], []
    for scene in rendered:
        if scene.design not in readers:
            number = int(scene.design.rsplit("-", 1)[1])
            picture = load_component(pieces_root / scene.design).image("BOARD")
            tiles = mission_tiles_of_piece_set(pieces_root / scene.design)
            readers[scene.design] = MissionReader(picture, mission_regions(number), tiles, blank)
        reader = readers[scene.design]
        frame = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
        for truth in scene.spots:
            if truth.tile in (None, BACK) or truth.spot_in_frame < 1:
                continue
            if truth.tile_seen < SEEN or truth.least_seen < SEEN:
                continue
            view = reader.view(frame, scene.truth_h, truth.era)
            fit = reader.candidates(view)[0]
            if fit.tile != truth.tile:
                continue
            rows, _ = slot_features(*reader.fitted_face(view, fit))
            features.append(rows)
            filled += [j in truth.filled for j in range(len(rows))]
    print(f"{split}: {len(filled)} slots", file=sys.stderr)
    return np.concatenate(features), np.array(filled, bool)


def fit(features: np.ndarray, filled: np.ndarray) -> SlotModel:
    """Logistic regression by gradient descent on standardised features, with a little L2."""
    mean, scale = features.mean(axis=0), features.std(axis=0) + 1e-6
    x = (features - mean) / scale
    y = filled.astype(np.float64)
    weights, bias = np.zeros(x.shape[1]), 0.0
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ weights + bias)))
        weights -= RATE * (x.T @ (p - y) / len(y) + L2 * weights)
        bias -= RATE * float((p - y).mean())
    return SlotModel(mean, scale, weights, bias)


def rule(features: np.ndarray) -> np.ndarray:
    """The hand-set rule the model replaced (session 51's first reader), measured beside it."""
    departure, contrast = features[:, SLOT_FEATURES.index("departure")], features[:, SLOT_FEATURES.index("contrast")]
    return departure >= 0.9 * (contrast + 80.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pieces", default="out/pieces/the-loop", help="The LOOP's rendered designs")
    parser.add_argument("--models", default="models")
    parser.add_argument("--scenes", type=int, default=200, help="training designs' scenes")
    parser.add_argument("--val-scenes", type=int, default=150, help="validation designs' scenes")
    parser.add_argument("--seed", type=int, default=77)
    args = parser.parse_args(argv)
    root = Path(args.pieces)
    x, y = slot_rows(root, "train", args.scenes, args.seed)
    vx, vy = slot_rows(root, "val", args.val_scenes, args.seed + 1)
    model = fit(x, y)

    def errors(said: np.ndarray, truth: np.ndarray) -> dict:
        return {"slots": len(truth), "wrong": int((said != truth).sum()), "missed": int((~said & truth).sum())}

    report = {
        **model.to_json(),
        "trained": {
            "date": date.today().isoformat(),
            "data": f"{root}: train designs, {args.scenes} scenes, seed {args.seed} (vision.synth.cube_scenes)",
            "train": errors(model.filled(x), y),
            "val": errors(model.filled(vx), vy),
            "val_hand_rule": errors(rule(vx), vy),
            "val_data": f"val designs, {args.val_scenes} scenes, seed {args.seed + 1}",
        },
    }
    out = Path(args.models) / SLOTS_FILE
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["trained"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
