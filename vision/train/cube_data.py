"""Scenes of The LOOP's board for the cube counter (`vision.board.cubes`): each rendered by the synthetic engine
(`vision.synth.cube_scenes`), cut out as the runtime cuts it (`vision.board.rectify`) along a homography erred as
registration errs, with every cube's place on the cut and what the camera saw of it.

    python -m vision.train.cube_data out/cubes/train --split train --n 1200 --seed 1
    python -m vision.train.cube_data out/cubes/val --split val --n 150 --seed 2

Board designs are split as every other game's designs are (`art.common.design_split`): the test designs are never
rendered here. Resumable: scenes are written in shards (`shards.SHARD`), and a finished shard is kept.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.board.cubes import (
    COLOURS,
    MODEL_FILE,
    PIECES,
    THRESHOLDS_FILE,
    eye_on_cut,
    heat_of,
    reads_upright,
    upright_heat,
)
from vision.board.rectify import CUT_PX, RING_CORNERS, era_masks, rectify, reference_cut, to_cut
from vision.synth.camera import apply_homography
from vision.synth.cube_scenes import render_board_scene
from vision.synth.solids import project_points
from vision.train.shards import load_shards, render_shards

REGISTRATION_PX = 1.0  # the registration's error in frame pixels (sd per corner of the board's ring)


@dataclass
class CubeScene:
    jpeg: bytes  # the cut, JPEG
    design: str  # the piece set's name (`the-loop-design-17`; its folder pads the number: `BoardRefs`)
    cubes: np.ndarray  # (n, 4) float32: x, y on the cut, colour (index in COLOURS), visible share
    eras: dict  # Era code -> {"in_frame": share, "counts": {colour: n}, "least_seen": min visible share}
    # (n, 4) float32: x, y on the cut, piece (index in PIECES), visible share: tokens, tiles and pawns
    pieces: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))
    fine: bytes = b""  # the same cut at the cube checker's finer side (`--fine-px`), JPEG; empty when not asked for
    # (n, 2) float32: each cube's top-face centre on the cut (where the camera's ray through it meets the board), in
    # the order of `cubes`; empty in scenes stored before session 53
    tops: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.float32))
    # board fractions -> frame pixels, the placement the cut was made along (as registration errs), and the frame's
    # (width, height): the camera a reading is moved through (`check.to_footprints`); None before session 53
    frame_from_board: np.ndarray | None = None
    frame_size: tuple[int, int] = (1280, 720)

    def cut(self) -> np.ndarray:
        return cv2.imdecode(np.frombuffer(self.jpeg, np.uint8), cv2.IMREAD_COLOR)

    def fine_cut(self) -> np.ndarray:
        if not self.fine:
            raise ValueError(f"a scene of {self.design} has no fine cut (cube_data --fine-px)")
        return cv2.imdecode(np.frombuffer(self.fine, np.uint8), cv2.IMREAD_COLOR)

    def eye(self, size: int) -> np.ndarray | None:
        """The camera's eye on a cut of the scene `size` wide (`cubes.eye_on_cut`), from the placement its cut was
        made along."""
        if self.frame_from_board is None:
            raise ValueError(f"a scene of {self.design} has no placement stored (cube_data, session 53 or later)")
        return eye_on_cut(self.frame_from_board, self.frame_size, size)


def erred(rng: np.random.Generator, h: np.ndarray, sd_px: float) -> np.ndarray:
    """`h` with the ring's four corners moved by about `sd_px` in the frame, as a registration errs."""
    corners = np.array(RING_CORNERS)
    moved = apply_homography(h, corners) + rng.normal(0, sd_px, (4, 2))
    return cv2.getPerspectiveTransform(corners.astype(np.float32), moved.astype(np.float32))


def jpeg_of(image: np.ndarray) -> bytes:
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok, "JPEG encoding of a cut failed"
    return jpeg.tobytes()


def render_one(job: tuple[int, int, str, list[str], int, int]) -> CubeScene:
    """Scene `index` of stream `seed` of one of `designs` under `root`, cut `size` pixels wide (and `fine` wide too,
    when not 0)."""
    *scene_job, size, fine = job
    rendered = render_board_scene(*scene_job)
    truth_h = rendered.frame_from_board
    used_h = erred(rendered.rng, truth_h, REGISTRATION_PX)
    to_frame = rendered.scene.spec.camera.table_to_image()
    to_cut_px = np.linalg.inv(used_h)

    def on_cut(x_mm: float, y_mm: float) -> np.ndarray:
        return to_cut(apply_homography(to_cut_px, apply_homography(to_frame, np.array([[x_mm, y_mm]]))), size)[0]

    cube_objects = [o for o in rendered.scene.objects if o.kind == "cube"]
    cubes = [(*on_cut(*o.table_pose[:2]), COLOURS.index(o.subtype), o.visible_fraction) for o in cube_objects]
    camera = rendered.scene.spec.camera
    # each top face's centre, one side above its footprint, through the renderer's own camera and then the cut's
    centres_mm = np.array([(*o.table_pose[:2], o.size_mm[0]) for o in cube_objects], np.float64).reshape(-1, 3)
    tops = to_cut(apply_homography(to_cut_px, project_points(camera, centres_mm)[0]), size) if cube_objects else []
    pieces = [(*on_cut(x, y), PIECES.index(label), seen) for label, x, y, seen in rendered.on_ring]
    cubes_array = np.array(cubes, np.float32).reshape(-1, 4)
    pieces_array = np.array(pieces, np.float32).reshape(-1, 4)
    return CubeScene(
        jpeg_of(rectify(rendered.scene.image, used_h, size)),
        rendered.pieces.name,
        cubes_array,
        rendered.eras,
        pieces_array,
        jpeg_of(rectify(rendered.scene.image, used_h, fine)) if fine else b"",
        np.array(tops, np.float32).reshape(-1, 2),
        used_h,
        (camera.width, camera.height),
    )


class BoardRefs:
    """Each design's reference cut and Era masks at one cut's side, made once (designs named as `CubeScene.design`
    names them)."""

    def __init__(self, pieces_root: Path, size: int = CUT_PX) -> None:
        self.root = pieces_root
        self.size = size
        self._refs: dict[str, np.ndarray] = {}
        self._planes: dict[str, np.ndarray] = {}
        self._masks: dict[str, dict[str, np.ndarray]] = {}

    @staticmethod
    def number(design: str) -> int:
        return int(design.rsplit("-", 1)[1])

    def reference(self, design: str) -> np.ndarray:
        if design not in self._refs:
            from vision.synth.components import load_component

            folder = self.root / f"the-loop-design-{self.number(design):03d}"
            self._refs[design] = reference_cut(load_component(folder).image("BOARD"), self.size)
        return self._refs[design]

    def planes(self, design: str) -> np.ndarray:
        """The reference cut as the nets read it (`cubes.planes`)."""
        if design not in self._planes:
            from vision.board.cubes import planes

            self._planes[design] = planes(self.reference(design))
        return self._planes[design]

    def masks(self, design: str) -> dict[str, np.ndarray]:
        if design not in self._masks:
            from vision.synth.art.the_loop import era_regions

            self._masks[design] = era_masks(era_regions(self.number(design)), self.size)
        return self._masks[design]


@dataclass(frozen=True)
class SceneNet:
    """The shipped cube net (an ONNX session) and whether it reads the cut turned to the camera, so that every
    tool reads a stored scene's heat as the runtime reads a frame's (`cubes.upright_heat`)."""

    session: Any
    upright: bool = False

    @classmethod
    def load(cls, models: Path) -> SceneNet:
        from vision.recognise.models import session

        return cls(session(models / MODEL_FILE), reads_upright(models / THRESHOLDS_FILE))

    def heat(self, scene: CubeScene, boards: BoardRefs) -> np.ndarray:
        """The net's heat maps (probabilities) over the scene's cut, `boards` at the cut's side."""
        if self.upright:
            return upright_heat(self.session, scene.cut(), boards.reference(scene.design), scene.eye(boards.size))
        return heat_of(self.session, scene.cut(), boards.planes(scene.design))


def load_scenes(folder: Path) -> list[CubeScene]:
    return list(load_shards(folder, CubeScene))


def cut_side(scenes: list[CubeScene]) -> int:
    """The side the scenes were cut at (every scene of a folder alike)."""
    return scenes[0].cut().shape[1] if scenes else CUT_PX


def main(argv: list[str] | None = None) -> None:
    from vision.synth.components import design_folders

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    parser.add_argument("--split", choices=("train", "val", "test"), default="train")
    parser.add_argument("--n", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cut-px", type=int, default=CUT_PX, help=f"the cut's side (default {CUT_PX})")
    parser.add_argument("--fine-px", type=int, default=0, help="also store the cut at this side (the cube checker's)")
    args = parser.parse_args(argv)
    designs = [p.name for p in design_folders(args.pieces, args.split, "the-loop")]
    if not designs:
        parser.error(f"{args.pieces}: no {args.split} designs of the-loop (tabletop synth pieces --game the-loop)")
    render_shards(
        args.out,
        args.n,
        lambda i: (i, args.seed, str(args.pieces), designs, args.cut_px, args.fine_px),
        render_one,
        args.workers,
        "cube scenes",
    )


if __name__ == "__main__":
    main()
