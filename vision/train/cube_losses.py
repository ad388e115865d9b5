"""Where the cube counter loses cubes on stored scenes, and what each stage could give at best: every cube missed
put in one place (no candidate near it, judged "none", or read but moved onto or merged with another), readings where
no cube is, the Eras over and under by how many, and the Eras counted right when one stage is replaced by the truth
(a perfect checker at several floors; a perfect reading of any two readings closer than 1.5 sides, the checker's
readings kept down to `check.MERGE_SIDES` apart so that the truth decides every pair). A diagnostic for
choosing what to improve next (models/the-loop-cubes.md, session 46); validation scenes, never the test boards.

    .venv/bin/python -m vision.train.cube_losses --val out/cubes/val --pieces out/pieces/the-loop --models models
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np

from vision.board.bench import countable, exact
from vision.board.check import (
    CHECK_MODEL_FILE,
    CHECK_THRESHOLDS_FILE,
    COLOURS,
    CUBE_SIDES_PX,
    FINE_PX,
    MERGE_SIDES,
    REACH_SIDES,
    candidates,
    settle,
)
from vision.board.cubes import counts_of
from vision.train.cube_check import fine_cubes, footprints_of, read_scene
from vision.train.cube_data import BoardRefs, CubeScene, SceneNet, cut_side, load_scenes

SEEN = 0.5  # a cube is owed a reading when this much of it shows (as the bench scores Eras)
MATCH_SIDES = 0.5  # a reading this near a cube is that cube's
TOUCH_SIDES = 1.2  # a cube this near another touches it
NEAR_SIDES = 1.5  # readings this near one another are a pair (one cube or two)
ORACLE_FLOORS = (0.02, 0.05, 0.1, 0.2, 0.3)

Reading = tuple[str, float, float, float]


def truth_readings(cubes: np.ndarray, picked: list[int]) -> list[Reading]:
    """The cubes `picked` (rows of `fine_cubes`) as readings at their true places and colours."""
    return [(COLOURS[int(cubes[j, 2])], float(cubes[j, 0]), float(cubes[j, 1]), 1.0) for j in picked]


def _distances(cubes: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Each cube's distance from `point`; one infinite distance when there is no cube, so `min` and `argmin` hold."""
    return np.linalg.norm(cubes[:, :2] - point, axis=1) if len(cubes) else np.array([np.inf])


def perfect_checker(points: np.ndarray, cubes: np.ndarray, reach: float) -> list[Reading]:
    """Every candidate judged by the truth: the cube owed a reading within `reach` of it, read once."""
    picked: set[int] = set()
    for p in points:
        d = _distances(cubes, p)
        j = int(d.argmin())
        if d[j] < reach and cubes[j, 3] >= SEEN:
            picked.add(j)
    return truth_readings(cubes, sorted(picked))


def perfect_pairs(kept: list[Reading], cubes: np.ndarray, near: float, match: float) -> list[Reading]:
    """The checker's readings, but each within `near` of another judged by the truth: kept when it is a cube's
    (within `match`) that no other reading has claimed, dropped otherwise; a reading standing alone is kept."""
    places = np.array([(x, y) for _, x, y, _ in kept]).reshape(-1, 2)
    out, claimed = [], set()
    for k, reading in enumerate(kept):
        apart = np.linalg.norm(places - places[k], axis=1)
        apart[k] = np.inf
        if apart.min(initial=np.inf) >= near:
            out.append(reading)
            continue
        d = _distances(cubes, places[k])
        j = int(d.argmin())
        if d[j] < match and j not in claimed:
            claimed.add(j)
            out.append(reading)
    return out


def row_place(cubes: np.ndarray, j: int, side: float) -> str:
    """Where cube `j` stands: alone, at a touching row's end (one cube touches it) or inside a row (two or more).
    A cube inside a row of like cubes is the one a window a cube and a half wide cannot place along the row: both
    of the row's ends lie outside it."""
    others = np.linalg.norm(cubes[:, :2] - cubes[j, :2], axis=1)
    others[j] = np.inf
    touching = int((others < TOUCH_SIDES * side).sum())
    return ("alone", "at a row's end")[touching] if touching < 2 else "inside a row"


def why_missed(
    cube: np.ndarray,
    points: np.ndarray,
    moved: np.ndarray,
    cube_prob: np.ndarray,
    accept: float,
    side: float,
    reach_sides: float = REACH_SIDES,
) -> str:
    """Why a cube owed a reading got none near it: no candidate within the checker's reach (`reach_sides` of a
    cube's `side`), every near candidate judged "none", or read and then moved away by its offset or merged with a
    surer reading."""
    reach = reach_sides * side
    near = np.flatnonzero(np.linalg.norm(points - cube[:2], axis=1) <= reach) if len(points) else []
    if not len(near):
        return "no candidate"
    if cube_prob[near].max() < accept:
        return "judged none"
    landed = np.linalg.norm(moved[near] - cube[:2], axis=1) < MATCH_SIDES * side
    return "merged with another" if (landed & (cube_prob[near] >= accept)).any() else "moved away"


def scene_losses(
    net: object, checker: object, settings: dict, scene: CubeScene, boards: BoardRefs, fine: BoardRefs
) -> tuple[Counter, Counter]:
    """(counts of what went wrong, Eras right per counter and oracle) for one scene. Readings are matched to cubes
    where the checker was taught to point (`settings["target"]`: footprints, or top faces), and counted in the Era
    of their footprints."""
    side = CUBE_SIDES_PX
    target, reach_sides = settings.get("target", "footprint"), float(settings.get("reach_sides", REACH_SIDES))
    reach = reach_sides * side
    heat = net.heat(scene, boards)
    masks = fine.masks(scene.design)
    cubes = fine_cubes(scene, boards.size, FINE_PX, target)

    def counted(readings: list[Reading]) -> dict:
        return counts_of(footprints_of(scene, readings, target), masks)

    found = candidates(heat, settings["floor"], boards.size, FINE_PX)
    listed = [(x, y) for x, y, _ in found]
    points = np.array(listed, np.float64).reshape(-1, 2)
    probs, offsets = read_scene(
        checker, scene, scene.fine_cut(), fine, heat, boards.size, listed, reach, upright=settings.get("upright", False)
    )
    moved, cube_prob = points + offsets, 1.0 - probs[:, 0]
    kept = settle(listed, probs, offsets, settings["accept"], settings["apart_sides"] * side)
    losses, right = Counter(), Counter()
    right["the counter"] += exact(counted(kept), scene.eras)
    loose = settle(listed, probs, offsets, settings["accept"], MERGE_SIDES * side)
    pairs = perfect_pairs(loose, cubes, NEAR_SIDES * side, MATCH_SIDES * side)
    right["a perfect pair reading"] += exact(counted(pairs), scene.eras)
    for floor in ORACLE_FLOORS:
        lower = np.array([(x, y) for x, y, _ in candidates(heat, floor, boards.size, FINE_PX)]).reshape(-1, 2)
        oracle = perfect_checker(lower, cubes, reach)
        right[f"a perfect checker, floor {floor}"] += exact(counted(oracle), scene.eras)
    places = np.array([(x, y) for _, x, y, _ in kept]).reshape(-1, 2)
    matched: set[int] = set()
    for j, cube in enumerate(cubes):
        if cube[3] < SEEN:
            continue
        where = row_place(cubes, j, side)
        losses[f"cubes {where}"] += 1
        d = _distances(places, cube[:2])
        if d.min() < MATCH_SIDES * side:
            matched.add(int(d.argmin()))
            continue
        why = why_missed(cube, points, moved, cube_prob, settings["accept"], side, reach_sides)
        losses[f"missed {where}: {why}"] += 1
    for k in set(range(len(places))) - matched:
        d = _distances(cubes, places[k])
        losses["read where none is: " + ("beside a cube" if d.min() < NEAR_SIDES * side else "elsewhere")] += 1
    said = counted(kept)
    for era, info in scene.eras.items():
        if countable(info):
            error = sum(said[era][c] - info["counts"][c] for c in COLOURS)
            if error or any(said[era][c] != info["counts"][c] for c in COLOURS):
                losses[
                    f"Eras {'over' if error > 0 else 'under' if error < 0 else 'off in colour only'}"
                    + (f" by {abs(error)}" if error else "")
                ] += 1
    return losses, right


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--val", type=Path, default=Path("out/cubes/val"))
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--scenes", type=int, default=200)
    args = parser.parse_args(argv)
    from vision.recognise.models import session

    net, checker = SceneNet.load(args.models), session(args.models / CHECK_MODEL_FILE)
    settings = json.loads((args.models / CHECK_THRESHOLDS_FILE).read_text())
    scenes = load_scenes(args.val)[: args.scenes]
    boards, fine = BoardRefs(args.pieces, cut_side(scenes)), BoardRefs(args.pieces, FINE_PX)
    losses, right = Counter(), Counter()
    for scene in scenes:
        lost, got = scene_losses(net, checker, settings, scene, boards, fine)
        losses.update(lost)
        right.update(got)
    eras = sum(countable(info) for s in scenes for info in s.eras.values())
    print(
        f"{len(scenes)} scenes of {args.val}, {eras} Eras scored; {args.models} at floor {settings['floor']}, "
        f"cut-off {settings['accept']}, apart {settings['apart_sides']}"
    )
    for what, n in right.items():
        print(f"  Eras right, {what}: {n} ({100 * n / max(eras, 1):.2f}%)")
    for what, n in sorted(losses.items()):
        print(f"  {what}: {n}")


if __name__ == "__main__":
    main()
