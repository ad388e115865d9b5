"""How the shipped cube counter's exact Eras fall with the frame's conditions: defocus, motion blur, noise, glare and
the board's size in the frame. A diagnostic for telling what the camera loses from what the counter gets wrong
(models/the-loop-cubes.md, session 57); validation boards only, read on each scene's true placement.

    .venv/bin/python -m vision.train.cube_conditions --pieces out/pieces/the-loop --models models --scenes 200
"""

from __future__ import annotations

import argparse
import itertools
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np

# (name, column of `Condition`, bin edges)
BINS: tuple[tuple[str, str, tuple[float, ...]], ...] = (
    ("defocus sigma, px", "defocus", (0, 0.5, 1, 1.5, 2, 3, 9)),
    ("motion blur, px", "motion", (0, 1, 3, 6, 10, 99)),
    ("board width in the frame, px", "board_px", (0, 600, 800, 1000, 1300, 9999)),
    ("noise sigma", "noise", (0, 2, 4, 6, 99)),
    ("glare strength", "glare", (0, 0.01, 0.2, 0.4, 9)),
)
CLEAN = {"defocus": 1.0, "motion": 1.0}  # a clean frame: defocus and motion under these, the board 600 px or wider
CLEAN_BOARD_PX = 600


def render(job: tuple[int, int, str, list[str]]) -> dict:
    """One validation scene as the camera hands it over (JPEG), its truth, placement and camera effects."""
    from vision.synth.cube_scenes import render_board_scene

    rendered = render_board_scene(*job)
    effects = rendered.scene.spec.effects
    ends = cv2.perspectiveTransform(np.array([[[0.0, 0.5]], [[1.0, 0.5]]]), rendered.frame_from_board).reshape(2, 2)
    ok, jpeg = cv2.imencode(".jpg", rendered.scene.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok, "JPEG encoding of a frame failed"
    return {
        "jpeg": jpeg.tobytes(),
        "design": rendered.pieces.path.name,
        "placement": rendered.frame_from_board,
        "eras": rendered.eras,
        "defocus": effects.defocus_sigma,
        "motion": effects.motion[0],
        "noise": effects.noise_sigma,
        "glare": effects.glare[3],
        "board_px": float(np.linalg.norm(ends[1] - ends[0])),
    }


def exact_by_condition(rows: list[tuple[bool, dict]]) -> list[str]:
    """Lines: Eras and the share exact overall, per bin of each condition, and on clean frames."""
    right = np.array([r for r, _ in rows], bool)
    lines = [f"{len(rows)} Eras scored, {100 * right.mean():.2f}% exact"]
    for name, key, edges in BINS:
        values = np.array([c[key] for _, c in rows])
        lines.append(name)
        for lo, hi in itertools.pairwise(edges):
            inside = (values >= lo) & (values < hi)
            if inside.any():
                lines.append(f"  [{lo:g}, {hi:g}): {inside.sum()} Eras, {100 * right[inside].mean():.1f}% exact")
    clean = np.array(
        [all(c[k] < v for k, v in CLEAN.items()) and c["board_px"] >= CLEAN_BOARD_PX for _, c in rows], bool
    )
    if clean.any():
        lines.append(f"clean frames: {clean.sum()} Eras, {100 * right[clean].mean():.1f}% exact")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2, help="the validation scenes' seed (cube_data's)")
    args = parser.parse_args(argv)
    from vision.board.bench import countable, same
    from vision.board.cubes import CubeCounter
    from vision.synth.art.the_loop import era_regions
    from vision.synth.components import load_component, split_design_names
    from vision.threads import one_blas_thread

    designs = split_design_names(args.pieces, "val", "the-loop")
    with Pool(2) as pool:
        scenes = pool.map(render, [(i, args.seed, str(args.pieces), designs) for i in range(args.scenes)])
    one_blas_thread()
    counters: dict[str, CubeCounter] = {}
    rows: list[tuple[bool, dict]] = []
    for scene in scenes:
        design = scene["design"]
        if design not in counters:
            picture = load_component(args.pieces / design).image("BOARD")
            counters[design] = CubeCounter(picture, era_regions(int(design.rsplit("-", 1)[1])), args.models)
        frame = cv2.imdecode(np.frombuffer(scene["jpeg"], np.uint8), cv2.IMREAD_COLOR)
        said = {e.era: e.counts for e in counters[design].count(frame, scene["placement"])[0]}
        rows += [(same(said[era], info["counts"]), scene) for era, info in scene["eras"].items() if countable(info)]
    print("\n".join(exact_by_condition(rows)))


if __name__ == "__main__":
    main()
