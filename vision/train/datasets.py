"""Two training sets derived from one synthetic detect export (its images and per-scene `meta/*.json`).

Stage 1 (finder, YOLO-OBB): the frame at half size, with oriented boxes for every readable corner index
(`index`), every face-up card (`card`) and every face-down card (`back`). Indices are what survive overlap and
fanning; whole cards give the quadrilateral and group a card's indices; backs have no index at all.

Stage 2 (reader, classification): square crops of corner indices cut from the full-resolution frame and turned
upright, the same rule the runtime uses on the finder's oriented boxes (`vision.recognise.crops.index_crop`),
with the region jittered the way a finder's boxes are, plus `none` crops (card art, pips, backs, hands, table)
so that the reader can refuse what the finder mistook for an index.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.recognise.crops import index_crop
from vision.recognise.labels import FINDER_CLASSES, READER_CLASSES
from vision.recognise.samples import index_samples
from vision.synth.export import obb_quad

CARD_MIN_VISIBLE = 0.3  # as the OBB export: a card mostly under others has no meaningful box to learn
# Decks whose corner-index regions (the labeller's STANDARD_INDEX, top-left and bottom-right) hold no index: KDE's
# Oxygen decks print the rank alone at the top right and a lone pip at the top left, so their "index" labels are
# blank or a bare suit. Their cards still teach the finder card outlines; their indices teach nothing.
NONSTANDARD_INDEX = frozenset({"kde-oxygen-air", "kde-oxygen-white"})
FAMILY_SPLIT = {"train": "train", "val": "val", "test": "test"}  # dataset split -> the family split it was drawn from
STAGE1_SCALE = 0.5
SPLITS = ("train", "val", "test")


def scene_decks(decks_root: Path, split: str) -> list[str]:
    """The deck names in the order `tabletop synth scenes --family-split SPLIT` indexed them."""
    from vision.synth.components import load_components
    from vision.synth.decks import split_families

    return [d.name for d in split_families(load_components(decks_root), seed=0)[FAMILY_SPLIT[split]]]


def deck_of(stem: str, deck_names: Sequence[str]) -> str:
    """The deck a scene was drawn with: `export.scene_for`'s first random draw from the scene's own seed."""
    seed, index = (int(v) for v in stem.split("_"))
    return deck_names[int(np.random.default_rng([seed, index]).integers(0, len(deck_names)))]


def stage1_lines(meta: dict, indices: bool = True) -> list[str]:
    """OBB label lines (class x1 y1 ... x4 y4, normalised) for one scene's metadata; `indices=False` leaves out
    the index boxes (a deck that prints its index elsewhere)."""
    w, h = meta["width"], meta["height"]
    ids = {name: i for i, name in enumerate(FINDER_CLASSES)}
    lines = []
    for obj in meta["objects"]:
        if obj.get("kind", "card") != "card":
            continue
        boxes: list[tuple[str, np.ndarray]] = []
        if obj["face_up"] and indices:
            boxes += [("index", np.array(c["quad"])) for c in obj.get("corners", []) if c["visible"]]
        if obj["visible_fraction"] >= CARD_MIN_VISIBLE:
            boxes.append(("card" if obj["face_up"] else "back", np.array(obj["quad"])))
        for name, quad in boxes:
            norm = obb_quad(quad, w, h)
            if norm is not None:
                lines.append(f"{ids[name]} " + " ".join(f"{v:.6f}" for v in norm.ravel()))
    return lines


def _stage1_one(args: tuple[str, str, str, float, bool]) -> int:
    image_path, meta_path, out_stem, scale, indexed = args
    target = Path(out_stem.replace("/labels/", "/images/") + ".jpg")
    label = Path(out_stem + ".txt")
    if target.exists() and label.exists():
        return 0
    image = cv2.imread(image_path, cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"{image_path}: not a readable image")
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    meta = json.loads(Path(meta_path).read_text())
    target.parent.mkdir(parents=True, exist_ok=True)
    label.parent.mkdir(parents=True, exist_ok=True)
    label.write_text("\n".join(stage1_lines(meta, indexed)) + "\n")
    _, data = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 93])
    tmp = target.with_suffix(".tmp")
    tmp.write_bytes(data.tobytes())
    os.replace(tmp, target)
    return 1


def _scenes(src: Path, split: str, decks_root: Path | None) -> list[tuple[Path, Path, bool]]:
    """(image, meta, whether its deck prints standard corner indices) for each scene of a split."""
    images = sorted((src / "images" / split).glob("*.jpg"))
    names = scene_decks(decks_root, split) if decks_root is not None else None
    return [
        (p, src / "meta" / split / (p.stem + ".json"), names is None or deck_of(p.stem, names) not in NONSTANDARD_INDEX)
        for p in images
    ]


def build_stage1(
    src: Path,
    dst: Path,
    splits: Sequence[str] = SPLITS,
    scale: float = STAGE1_SCALE,
    workers: int = 2,
    limit: int | None = None,
    decks_root: Path | None = None,
) -> Path:
    """Writes dst/{images,labels}/SPLIT and dst/data.yaml; resumable (finished files are skipped). With
    `decks_root` (the decks the scenes were drawn from), decks in NONSTANDARD_INDEX get no index boxes."""
    jobs = []
    for split in splits:
        for image, meta, indexed in _scenes(src, split, decks_root)[:limit]:
            jobs.append((str(image), str(meta), str(dst / "labels" / split / image.stem), scale, indexed))
    with ProcessPoolExecutor(workers) as pool:
        list(tqdm(pool.map(_stage1_one, jobs, chunksize=16), total=len(jobs), desc="stage 1 set", unit="img"))
    names = "\n".join(f"  {i}: {n}" for i, n in enumerate(FINDER_CLASSES))
    present = [s for s in splits if s != "test"]
    yaml = f"path: {dst.resolve()}\n" + "".join(f"{s}: images/{s}\n" for s in present) + f"names:\n{names}\n"
    (dst / "data.yaml").write_text(yaml)
    return dst / "data.yaml"


def _stage2_one(args: tuple[str, str, str, str, int, float]) -> int:
    image_path, meta_path, out_dir, stem, seed, negatives = args
    done = Path(out_dir).parent / ".done" / Path(out_dir).name / stem  # outside the class folders
    if done.exists():
        return 0
    image = cv2.imread(image_path, cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"{image_path}: not a readable image")
    meta = json.loads(Path(meta_path).read_text())
    rng = np.random.default_rng([seed, int(stem.split("_")[-1])])
    crops = [(code, index_crop(image, quad)) for code, quad in index_samples(rng, meta, negatives)]
    for i, (code, crop) in enumerate(crops):
        folder = Path(out_dir) / code
        folder.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(folder / f"{stem}_{i:02d}.png"), crop)
    done.parent.mkdir(parents=True, exist_ok=True)
    done.touch()
    return len(crops)


def build_stage2(
    src: Path,
    dst: Path,
    splits: Sequence[str] = SPLITS,
    negatives: float = 0.25,
    workers: int = 2,
    limit: int | None = None,
    seed: int = 0,
    decks_root: Path | None = None,
) -> Path:
    """Writes dst/SPLIT/CLASS/*.png (ultralytics' classification layout); resumable per scene. With
    `decks_root`, scenes of decks in NONSTANDARD_INDEX are left out (their index labels are blank corners)."""
    jobs = []
    for split in splits:
        for image, meta, indexed in _scenes(src, split, decks_root)[:limit]:
            if not indexed:
                continue
            jobs.append((str(image), str(meta), str(dst / split), image.stem, seed, negatives))
    for split in splits:
        for code in READER_CLASSES:
            (dst / split / code).mkdir(parents=True, exist_ok=True)  # every class present, even if rare
    with ProcessPoolExecutor(workers) as pool:
        list(tqdm(pool.map(_stage2_one, jobs, chunksize=16), total=len(jobs), desc="stage 2 set", unit="scene"))
    return dst


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Derive the finder and reader training sets from a detect export.")
    parser.add_argument("src", type=Path)
    parser.add_argument("--stage", choices=("1", "2"), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--decks", type=Path, help="the decks the scenes were drawn from (leaves out odd indices)")
    args = parser.parse_args(argv)
    if args.stage == "1":
        print(build_stage1(args.src, args.out, workers=args.workers, limit=args.limit, decks_root=args.decks))
    else:
        print(build_stage2(args.src, args.out, workers=args.workers, limit=args.limit, decks_root=args.decks))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
