"""What an Era's count reader learns from: each stored scene read by the shipped cube net and checker, kept per
scene (the net's cube maps, and every candidate's place and colours as the checker reads it), beside the scene's
cut and truth already stored by `cube_data`.

    .venv/bin/python -m vision.train.era_count_data out/era-count/train.npz --data out/cubes/train \
        --pieces out/pieces/the-loop --models models
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from vision.board.check import CHECK_MODEL_FILE, CHECK_THRESHOLDS_FILE, CUBE_SIDES_PX, FINE_PX, candidates
from vision.board.cubes import COLOURS
from vision.board.era_count import moved_places, rows_array
from vision.train.cube_check import read_scene
from vision.train.cube_data import BoardRefs, CubeScene, SceneNet, cut_side, load_scenes


def readings_of(
    net: SceneNet, checker: object, tuned: dict, scene: CubeScene, boards: BoardRefs, fine: BoardRefs
) -> tuple[np.ndarray, np.ndarray]:
    """(the cube net's colour maps (3, h, w) float16; every candidate as the reader draws it, `rows_array`)."""
    heat = net.heat(scene, boards)
    points = [(x, y) for x, y, _ in candidates(heat, tuned["floor"], boards.size, FINE_PX)]
    reach = tuned["reach_sides"] * CUBE_SIDES_PX
    probs, offsets = read_scene(
        checker, scene, scene.fine_cut(), fine, heat, boards.size, points, reach, tuned.get("views", 1),
        tuned.get("upright", False),
    )  # fmt: skip
    return heat[: len(COLOURS)].astype(np.float16), rows_array(
        moved_places(points, offsets), probs, FINE_PX, boards.size
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    parser.add_argument("--models", type=Path, default=Path("models"))
    args = parser.parse_args(argv)
    from vision.recognise.models import session

    net, checker = SceneNet.load(args.models), session(args.models / CHECK_MODEL_FILE)
    tuned = json.loads((args.models / CHECK_THRESHOLDS_FILE).read_text())
    scenes = load_scenes(args.data)
    boards, fine = BoardRefs(args.pieces, cut_side(scenes)), BoardRefs(args.pieces, FINE_PX)
    heats, rows, owner = [], [], []
    start = time.time()
    for n, s in enumerate(scenes):
        heat, found = readings_of(net, checker, tuned, s, boards, fine)
        heats.append(heat)
        rows.append(found)
        owner.append(np.full(len(found), n, np.int32))
        if (n + 1) % 200 == 0:
            print(f"{n + 1}/{len(scenes)} scenes, {time.time() - start:.0f} s", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.out, heat=np.stack(heats), rows=np.concatenate(rows), owner=np.concatenate(owner))
    print(f"wrote {args.out}: {len(scenes)} scenes, {sum(len(r) for r in rows)} candidates")


if __name__ == "__main__":
    main()
