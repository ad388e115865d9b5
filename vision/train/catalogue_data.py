"""Rectified catalogue cards for the card embedder (`catalogue_net`): every card of stored scenes (`corner_data`) of
training designs, cut along its true outline moved by the corner finder's typical error, beside the clean pictures
of its design's catalogue.

Why stored scenes: the embedder must learn what the camera does to a card (blur, glare, white balance, another card
or a hand over part of it), and the scenes already hold it; the pictures are what a player enrols.

    python -m vision.train.catalogue_data out/catalogue_crops/train.npz --scenes out/cat_scenes/train \
        --designs out/catcards/loot-roll out/catcards/the-loop
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.recognise.catalogue import EMBED_SIZE, catalogue_of_piece_set, rectify
from vision.train.corner_data import SceneGeometry, stored_scenes

JITTER = 0.03  # card widths: each outline corner moved by about this much (the finder's median point error is 0.02)
MIN_SEEN = 0.35  # a card whose outline is less than this share visible (above it in the paint order) is skipped


def seen_share(quads: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """How much of each card (listed bottom to top) no later card covers, on a coarse raster of the frame."""
    w, h = size
    scale = 0.25
    owner = np.full((int(h * scale) + 1, int(w * scale) + 1), -1, np.int32)
    for n, quad in enumerate(quads):
        cv2.fillConvexPoly(owner, np.round(quad * scale).astype(np.int32), n)
    out = np.zeros(len(quads))
    for n, quad in enumerate(quads):
        mask = np.zeros_like(owner, np.uint8)
        cv2.fillConvexPoly(mask, np.round(quad * scale).astype(np.int32), 1)
        area = mask.sum()
        out[n] = (owner[mask > 0] == n).sum() / area if area else 0.0
    return out


def scene_crops(
    image: np.ndarray, geometry: SceneGeometry, rng: np.random.Generator, copies: int
) -> list[tuple[np.ndarray, str]]:
    """(rectified crop, code) for every card of a scene seen enough, `copies` jittered cuts each."""
    out = []
    seen = seen_share(geometry.quads, (image.shape[1], image.shape[0]))
    for quad, code, share in zip(geometry.quads, geometry.codes, seen, strict=True):
        width = float(np.linalg.norm(quad[1] - quad[0]))
        if share < MIN_SEEN or width < 12:
            continue
        for _ in range(copies):
            moved = quad + rng.normal(0, JITTER * width, quad.shape).astype(np.float32)
            out.append((rectify(image, moved, EMBED_SIZE), str(code)))
    return out


def build(scene_dirs: Sequence[Path], design_roots: Sequence[Path], out: Path, copies: int, seed: int) -> int:
    """Writes crops, their design and code indices, and each design's pictures, to one npz."""
    rng = np.random.default_rng(seed)
    designs: dict[str, tuple[list[str], np.ndarray]] = {}
    roots = {p.name: p for root in design_roots for p in root.iterdir() if (p / "pieces.json").is_file()}
    crops, design_of, code_of = [], [], []
    scenes = [s for folder in scene_dirs for s in stored_scenes(folder)]
    for stem in tqdm(scenes, desc="crops", unit="scene"):
        geometry = SceneGeometry.load(stem.with_suffix(".npz"))
        if geometry.deck not in roots:
            continue
        if geometry.deck not in designs:
            catalogue = catalogue_of_piece_set(roots[geometry.deck])
            designs[geometry.deck] = (list(catalogue.codes), catalogue.pictures)
        codes = designs[geometry.deck][0]
        image = cv2.imread(str(stem.with_suffix(".jpg")))
        names = list(designs)
        for crop, code in scene_crops(image, geometry, rng, copies):
            if code in codes:
                crops.append(crop)
                design_of.append(names.index(geometry.deck))
                code_of.append(codes.index(code))
    names = list(designs)
    offsets = np.cumsum([0] + [len(designs[n][0]) for n in names])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp.npz")
    np.savez(
        tmp,
        crops=np.stack(crops),
        design=np.array(design_of, np.int32),
        code=np.array(code_of, np.int32),
        pictures=np.concatenate([designs[n][1] for n in names]),
        offsets=offsets.astype(np.int32),
        designs=np.array(names),
    )
    tmp.replace(out)
    return len(crops)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scenes", type=Path, nargs="+", required=True, help="folders of stored scenes")
    parser.add_argument("--designs", type=Path, nargs="+", required=True, help="folders of the scenes' designs")
    parser.add_argument("--copies", type=int, default=2, help="jittered cuts of each card")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n = build(args.scenes, args.designs, args.out, args.copies, args.seed)
    print(f"{n} crops -> {args.out}")


if __name__ == "__main__":
    main()
