"""The cube checker's net (`vision.board.check`): a window of the fine cut and the board's picture around a
candidate peak of the cube net in; whether a cube's centre lies within reach of it, of which colour, and the offset
to that centre out.

Candidates are the shipped cube net's own peaks on the stored scenes (`cube_data --fine-px`), taken at a low floor,
so the checker learns the net's doubtful peaks: double marks of one tall cube, marks between touching cubes, print
that looks like a cube. Each candidate is taught the nearest cube within `check.REACH_SIDES` of a cube's side (its
colour and the offset to it), or "none"; a candidate whose nearest cube is too hidden to count is not taught.

    PYTHONPATH=<torch> .venv/bin/python -m vision.train.cube_check train --data out/cubes/train \
        --val out/cubes/val --pieces out/pieces/the-loop --out out/runs/cube-check --minutes 40
    PYTHONPATH=<torch, onnx> .venv/bin/python -m vision.train.cube_check export --run out/runs/cube-check \
        --onnx models/the-loop-cube-check.onnx
    .venv/bin/python -m vision.train.cube_check tune --val out/cubes/val --models models
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from vision.board.bench import countable, exact
from vision.board.check import (
    APART_SIDES,
    CHECK_MODEL_FILE,
    CHECK_THRESHOLDS_FILE,
    CUBE_SIDES_PX,
    FINE_PX,
    IMAGE_PLANES,
    REACH_SIDES,
    TARGETS,
    VIEWS,
    WIDE,
    WINDOW,
    candidates,
    checker_windows,
    half_planes,
    on_footprints,
    read_upright,
    read_windows,
    settle,
)
from vision.board.cubes import THRESHOLDS_FILE, count_cut, counts_of
from vision.board.rectify import resized
from vision.train.cube_data import BoardRefs, CubeScene, SceneNet, cut_side, load_scenes

SEEN = 0.4  # as the cube net: a cube less visible than this is neither taught nor punished
TRAIN_FLOOR = 0.05  # candidates to learn from: the cube net's peaks down to this heat
FLOORS = (0.05, 0.1, 0.15, 0.2, 0.3)
ACCEPTS = tuple(round(float(v), 2) for v in np.arange(0.2, 0.95, 0.05))
APARTS = (0.5, 0.6, 0.7, 0.8)  # sides: two cubes read closer are one (touching ones stand a side apart)


def label_candidates(points: np.ndarray, cubes: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate (n, 2), its class (0: none, 1 + colour; -1: not taught, its nearest cube too hidden) and the
    offset to that cube's centre in units of `reach`; `cubes` (m, 4): x, y, colour, visible share, same pixels."""
    classes = np.zeros(len(points), np.int64)
    offsets = np.zeros((len(points), 2), np.float32)
    if not len(cubes) or not len(points):
        return classes, offsets
    d = np.linalg.norm(points[:, None, :] - cubes[None, :, :2], axis=2)
    nearest = d.argmin(axis=1)
    for k, j in enumerate(nearest):
        if d[k, j] > reach:
            continue
        classes[k] = -1 if cubes[j, 3] < SEEN else 1 + int(cubes[j, 2])
        offsets[k] = (cubes[j, :2] - points[k]) / reach
    return classes, offsets


def fine_cubes(scene: CubeScene, size: int, fine: int, target: str = "footprint") -> np.ndarray:
    """The scene's cubes (x, y, colour, visible share) moved from its cut `size` wide to the fine cut; with `target`
    "top", each placed at its top face's centre (`CubeScene.tops`) instead of its footprint's."""
    cubes = scene.cubes.copy()
    if target == "top":
        if len(scene.tops) != len(cubes):
            raise ValueError(f"a scene of {scene.design} has no top faces stored (cube_data, session 53 or later)")
        cubes[:, :2] = scene.tops
    cubes[:, :2] = resized(cubes[:, :2], size, fine)
    return cubes


def footprints_of(scene: CubeScene, kept: list[tuple[str, float, float, float]], target: str) -> list:
    """`kept` readings on the fine cut as the runtime places them: top faces moved to their footprints through the
    scene's own placement (`check.to_footprints`), footprints as they are."""
    if target == "top" and scene.frame_from_board is None:
        raise ValueError(f"a scene of {scene.design} has no placement stored (cube_data, session 53 or later)")
    return on_footprints(kept, target, scene.frame_from_board, scene.frame_size, FINE_PX)


def scene_candidates(
    net: object, scene: CubeScene, boards: BoardRefs, fine: int, floor: float
) -> tuple[np.ndarray, np.ndarray]:
    """((n, 2) candidate points on the fine cut: the cube net's peaks on the scene's cut, the net's heat there)."""
    heat = net.heat(scene, boards)
    found = candidates(heat, floor, boards.size, fine)
    return np.array([(x, y) for x, y, _ in found], np.float32).reshape(-1, 2), heat


def scene_windows(
    checker: object, fine_cut: np.ndarray, reference: np.ndarray, heat: np.ndarray, size: int, points: list
) -> np.ndarray:
    """The windows `checker` (an ONNX session, or a torch model behind one) reads at `points`: with the cube net's
    maps, or with the wide windows, when its input has room for them (`check.checker_windows`)."""
    n = checker_planes(checker)
    if n == IMAGE_PLANES + WIDE:
        return checker_windows(fine_cut, reference, points, WINDOW, None, size, half_planes(reference))
    return checker_windows(fine_cut, reference, points, WINDOW, heat if n > IMAGE_PLANES else None, size)


def read_scene(
    checker: object,
    scene: CubeScene,
    fine_cut: np.ndarray,
    fine: BoardRefs,
    heat: np.ndarray,
    size: int,
    points: list,
    reach_px: float,
    views: int = 1,
    upright: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """(the checker's probabilities, its offsets on the fine cut) at `points` of the scene's `fine_cut`, read as the
    runtime reads them (`CubeChecker.read`): upright, each window turned to the scene's camera (`check.view_axes`),
    or as cut, in `views` views."""
    if upright:
        eye = scene.eye(FINE_PX)
        return read_upright(checker, fine_cut, fine.reference(scene.design), points, eye, WINDOW, reach_px)
    crops = scene_windows(checker, fine_cut, fine.planes(scene.design), heat, size, points)
    return read_windows(checker, crops, reach_px, views)


def checker_planes(checker: object) -> int:
    """How many planes a window the checker reads has (`check.CHECKER_PLANES`: the cut and the board's picture; with
    the cube net's maps; or with the wide windows)."""
    inputs = getattr(checker, "get_inputs", None)
    return int(inputs()[0].shape[1]) if inputs is not None else int(getattr(checker, "planes", IMAGE_PLANES))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, nargs="+", required=True, help="folders of cube_data scenes with fine cuts")
    t.add_argument("--val", type=Path, required=True)
    t.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    t.add_argument("--models", type=Path, default=Path("models"), help="where the cube net is")
    t.add_argument("--val-scenes", type=int, default=60)
    t.add_argument("--every", type=float, default=300.0)
    t.add_argument(
        "--context", action="store_true", help="the checker also reads the cube net's maps around each window"
    )
    t.add_argument(
        "--wide", action="store_true", help="the checker also reads its window at half size, twice as far around"
    )
    t.add_argument("--width", type=float, default=1.0, help="the checker's channels, times the shipped one's")
    t.add_argument("--target", choices=TARGETS, default="footprint", help="what the offsets point at")
    t.add_argument("--reach", type=float, default=REACH_SIDES, help="cube sides a candidate is taught within")
    t.add_argument("--upright", action="store_true", help="each window turned to the camera's bearing")
    from vision.train.budget import add_budget_args, add_export_parser

    add_budget_args(t, minutes=40.0, batch=96, lr=3e-3, threads=2)
    add_export_parser(sub)
    u = sub.add_parser("tune")
    u.add_argument("--val", type=Path, required=True)
    u.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    u.add_argument("--models", type=Path, default=Path("models"))
    u.add_argument("--views", type=int, default=1, choices=range(1, len(VIEWS) + 1), help="views read per window")
    u.add_argument("--target", choices=TARGETS, default="footprint", help="what the checker was taught to point at")
    u.add_argument("--reach", type=float, default=REACH_SIDES, help="the reach it was taught in, cube sides")
    u.add_argument("--upright", action="store_true", help="the checker reads windows turned to the camera")
    args = parser.parse_args(argv)
    if args.command == "tune":
        tune(args.val, args.pieces, args.models, args.views, args.target, args.reach, args.upright)
        return
    from vision.train import cube_check_net

    if args.command == "train":
        cube_check_net.train(args)
    else:
        cube_check_net.export(args.run, args.onnx)


def tune(
    val: Path,
    pieces: Path,
    models: Path,
    views: int = 1,
    target: str = "footprint",
    reach: float = REACH_SIDES,
    upright: bool = False,
) -> None:
    """The candidates' floor, the checker's cut-off and the distance under which two readings are one cube that
    count the most validation Eras exactly, each window read in `views` views (`check.VIEWS`); the cube net alone at
    its own cut-off beside it (the same scenes). The net is taken as taught at `reach` sides, its offsets pointing at
    `target` (as `train` was told)."""
    from vision.recognise.models import session

    net, checker = SceneNet.load(models), session(models / CHECK_MODEL_FILE)
    peak = float(json.loads((models / THRESHOLDS_FILE).read_text()).get("peak", 0.3))
    scenes = load_scenes(val)
    boards = BoardRefs(pieces, cut_side(scenes))
    fine_boards = BoardRefs(pieces, FINE_PX)
    right = {(f, a, d): 0 for f in FLOORS for a in ACCEPTS for d in APARTS}
    alone = total = 0
    for n, s in enumerate(scenes):
        heat = net.heat(s, boards)
        total += sum(countable(info) for info in s.eras.values())
        alone += exact(count_cut(heat, boards.masks(s.design), peak), s.eras)
        fine_cut = s.fine_cut()
        for floor in FLOORS:
            points = [(x, y) for x, y, _ in candidates(heat, floor, boards.size, FINE_PX)]
            probs, offsets = read_scene(
                checker, s, fine_cut, fine_boards, heat, boards.size, points, reach * CUBE_SIDES_PX, views, upright
            )
            for accept in ACCEPTS:
                for apart in APARTS:
                    kept = footprints_of(s, settle(points, probs, offsets, accept, apart * CUBE_SIDES_PX), target)
                    right[floor, accept, apart] += exact(counts_of(kept, fine_boards.masks(s.design)), s.eras)
        if (n + 1) % 50 == 0:
            print(f"{n + 1}/{len(scenes)} scenes", file=sys.stderr)
    best = max(right, key=lambda k: (right[k], -abs(k[1] - 0.5), -abs(k[2] - APART_SIDES)))
    for floor in FLOORS:
        rows = (f"{a:.2f}:{100 * right[floor, a, best[2]] / total:.1f}" for a in ACCEPTS)
        print(f"floor {floor:.2f}, apart {best[2]}: " + " ".join(rows))
    out = {
        "fine_px": FINE_PX,
        "window": WINDOW,
        "floor": best[0],
        "accept": best[1],
        "reach_sides": reach,
        "apart_sides": best[2],
        "views": views,
        "target": target,
        "upright": upright,
        "val_eras": total,
        "val_exact_pct": round(100 * right[best] / max(total, 1), 2),
        "val_cube_net_alone_pct": round(100 * alone / max(total, 1), 2),
    }
    (models / CHECK_THRESHOLDS_FILE).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {models / CHECK_THRESHOLDS_FILE}: {out}")


def evaluate_scenes(
    net: object,
    checker: object,
    reach_px: float,
    scenes: list[CubeScene],
    boards: BoardRefs,
    fine_boards: BoardRefs,
    target: str = "footprint",
    upright: bool = False,
) -> dict:
    """Validation Eras exact at floor 0.1, cut-off 0.5, read by `checker` (an ONNX session or one's stand-in), its
    offsets pointing at `target`, each window turned to the camera where it reads them `upright`."""
    right = total = 0
    for s in scenes:
        heat = net.heat(s, boards)
        points = [(x, y) for x, y, _ in candidates(heat, 0.1, boards.size, FINE_PX)]
        probs, offsets = read_scene(
            checker, s, s.fine_cut(), fine_boards, heat, boards.size, points, reach_px, upright=upright
        )
        kept = footprints_of(s, settle(points, probs, offsets, 0.5, APART_SIDES * CUBE_SIDES_PX), target)
        right += exact(counts_of(kept, fine_boards.masks(s.design)), s.eras)
        total += sum(countable(info) for info in s.eras.values())
    return {"val_eras_exact": round(right / max(total, 1), 4), "val_eras": total}


if __name__ == "__main__":
    main()
