"""Rendered frames for the corner finder and the rectified reader, stored once and sampled many times.

Each scene is a full-resolution JPEG beside an `.npz` of exact geometry: every card's printed outline, which side
is up, its code, and how much of each printed corner and each corner index shows. The finder trains on random
tiles of these frames at their own resolution (where an index is 15-25 px tall), and the reader on crops cut from
them along the true corner frames, so both learn from the same camera model the synthetic engine draws.

    python -m vision.train.corner_data out/corner_scenes --decks out/decks --split train --n 6000 --seed 10
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.synth.backgrounds import TableTexture, load_table_textures
from vision.synth.camera import DEFAULT_IMAGE_SIZE
from vision.synth.components import design_folders
from vision.synth.deckdir import Deck, load_decks
from vision.synth.decks import split_families
from vision.synth.export import scene_for
from vision.synth.pieces import PieceSet, load_piece_set

JPEG_QUALITY = 93
_WORKER: dict[str, object] = {}


@dataclass(frozen=True)
class SceneGeometry:
    """What a stored scene says about its cards, as arrays (one row per card, bottom to top)."""

    quads: np.ndarray  # (N, 4, 2) float32: printed TL, TR, BR, BL in frame pixels
    face_up: np.ndarray  # (N,) bool
    codes: np.ndarray  # (N,) str: the card's code whichever side is up
    corner_visible: np.ndarray  # (N, 4) float32: how much of each printed corner shows
    index_visible: np.ndarray  # (N, 2) float32: how much of the top-left index and its twin shows
    deck: str = ""  # the deck directory's name (its index layout decides which corners print an index)

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, **{k: np.asarray(getattr(self, k)) for k in self.__dataclass_fields__})
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> SceneGeometry:
        with np.load(path) as data:
            fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        fields["deck"] = str(fields.get("deck", ""))
        return cls(**fields)


def geometry_of(objects: Sequence, deck: str = "") -> SceneGeometry:
    """The cards of a rendered scene (hands, clutter and dice are not cards)."""
    cards = [o for o in objects if o.kind == "card" and o.code not in ("hand", "object")]
    n = len(cards)
    return SceneGeometry(
        quads=np.array([o.quad for o in cards], np.float32).reshape(n, 4, 2),
        face_up=np.array([o.face_up for o in cards], bool),
        codes=np.array([o.subtype or o.code for o in cards], dtype="<U32"),
        corner_visible=np.array([o.corner_visible for o in cards], np.float32).reshape(n, 4),
        index_visible=np.array(
            [[c.visible_fraction for c in o.corners[:2]] + [0.0] * (2 - len(o.corners[:2])) for o in cards],
            np.float32,
        ).reshape(n, 2),
        deck=deck,
    )


def _init(decks: Sequence[Deck], backgrounds: Sequence[TableTexture] | None) -> None:
    _WORKER["decks"] = list(decks)
    _WORKER["backgrounds"] = load_table_textures() if backgrounds is None else list(backgrounds)


def _job(args: tuple[int, int, str]) -> str:
    index, seed, out = args
    stem = Path(out) / f"{seed}_{index:06d}"
    scene = scene_for(index, seed, _WORKER["decks"], _WORKER["backgrounds"], DEFAULT_IMAGE_SIZE)  # type: ignore[arg-type]
    ok, jpeg = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise RuntimeError(f"{stem}.jpg: could not encode")
    tmp = stem.with_suffix(".tmp.jpg")
    tmp.write_bytes(jpeg.tobytes())
    tmp.replace(stem.with_suffix(".jpg"))
    decks: list[Deck] = _WORKER["decks"]  # type: ignore[assignment]
    deck = decks[scene.spec.deck_index % len(decks)]
    # written last: its presence marks a finished scene
    geometry_of(scene.objects, deck.path.name).save(stem.with_suffix(".npz"))
    return str(stem)


def write_scenes(
    out: Path, n: int, seed: int, decks: Sequence[Deck], workers: int = 2, progress: bool = True
) -> list[Path]:
    """n scenes into out (resumable: a scene whose .npz exists is kept). Returns every scene's stem."""
    out.mkdir(parents=True, exist_ok=True)
    stems = [out / f"{seed}_{i:06d}" for i in range(n)]
    todo = [(i, seed, str(out)) for i, stem in enumerate(stems) if not stem.with_suffix(".npz").exists()]
    bar = tqdm(total=len(todo), desc=f"scenes {out.name}", unit="scene", disable=not progress)
    if workers <= 1:
        _init(decks, None)
        for job in todo:
            _job(job)
            bar.update()
    else:
        with Pool(workers, initializer=_init, initargs=(decks, None)) as pool:
            for _ in pool.imap_unordered(_job, todo, chunksize=4):
                bar.update()
    bar.close()
    return stems


def backfill_decks(folder: Path, decks: Sequence[Deck]) -> int:
    """Names the deck of stored scenes written before scenes recorded it: scene_for draws the deck first from the
    scene's own seed, so it is known exactly from the file name and the deck list the scenes were made with."""
    done = 0
    for stem in stored_scenes(folder):
        geometry = SceneGeometry.load(stem.with_suffix(".npz"))
        if geometry.deck:
            continue
        seed, index = (int(part) for part in stem.name.split("_"))
        deck = decks[int(np.random.default_rng([seed, index]).integers(0, len(decks)))]
        dataclasses.replace(geometry, deck=deck.path.name).save(stem.with_suffix(".npz"))
        done += 1
    return done


def stored_scenes(folder: Path) -> list[Path]:
    """The finished scenes of a folder, as stems (image at .jpg, geometry at .npz)."""
    return sorted(p.with_suffix("") for p in folder.glob("*.npz") if not p.name.endswith(".tmp.npz"))


def split_decks(deck_dirs: Sequence[Path], split: str) -> list[Deck]:
    """Debian's decks are split by family (seed 0, as every earlier model was); procedural decks carry their split
    in their name (proc-<split>-...), their lettering having been drawn from that split's fonts."""
    return [d for folder in deck_dirs for d in decks_of_split(load_decks(folder), split)]


def decks_of_split(loaded: Sequence[Deck], split: str) -> list[Deck]:
    """The decks of one folder that belong to the split (see split_decks)."""
    procedural = [d for d in loaded if d.name.startswith(f"proc-{split}-")]
    debian = [d for d in loaded if not d.name.startswith("proc-")]
    return procedural + (split_families(debian, seed=0)[split] if debian else [])


def pieces_of_split(folders: Sequence[str | Path], split: str) -> list[PieceSet]:
    """The procedural piece sets under these folders whose design falls in `split` (`components.design_folders`)."""
    return [load_piece_set(d) for folder in folders for d in design_folders(Path(folder), split)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--decks", type=Path, nargs="+", default=[], help="deck directories or folders of them")
    parser.add_argument(
        "--pieces", type=Path, nargs="+", default=[], help="folders of number-card designs (tabletop synth pieces)"
    )
    parser.add_argument("--split", default="train", choices=("train", "val", "test"))
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    decks = [*split_decks(args.decks, args.split), *pieces_of_split(args.pieces, args.split)]
    if not decks:
        parser.error(f"no {args.split} decks or designs under {', '.join(map(str, [*args.decks, *args.pieces]))}")
    print(f"{len(decks)} {args.split} decks: {', '.join(sorted({d.family for d in decks}))}")
    write_scenes(args.out, args.n, args.seed, decks, args.workers)


if __name__ == "__main__":
    main()
