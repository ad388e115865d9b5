"""Enrolling a deck for the rectified reader: its rank head and its suit head refitted on corner crops of that deck.

The crops are the runtime's own (`corners.corner_crop`), cut along each rendered card's true corner frame jittered
by the corner finder's typical errors (`samples.jitter`), the way the reader was trained. Which corners of the deck
print an index is not written anywhere in a player's deck directory, so it is read off the deck's own pictures
first: each face's four corners cut flat and read by the shipped reader (`deck_index_corners`). A corner that
prints an index is taught its card's rank and suit; one that does not, and every corner of a back, is taught
"none", so the refit does not forget that a pip or a back's pattern is not an index.

The two heads are refitted from the reader's features by `enrol.choose_head` (the suit head only on crops that show
a suit), and saved, with the deck's index corners and a stamp of the reader they fit (its feature length and the
ONNX file's SHA-256), as a small .npz: the same features from a retrained reader mean something else, so a head
fitted for another reader is refused rather than read.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vision.recognise.corner_reader import CornerReader, card_probs
from vision.recognise.corners import corner_crop, printed_corner
from vision.recognise.enrol import (
    RECTIFIED_KIND,
    DeckHead,
    EnrolError,
    HeadChoice,
    check_scene_count,
    choose_head,
    enrolment_scenes,
    head_kind,
    held_out_scene,
    load_head,
    read_deck_head,
    read_head_file,
)
from vision.recognise.labels import BACK, FACE_CODES, NONE, RANK_CLASSES, READER_CLASSES, SUIT_CLASSES
from vision.recognise.models import ModelError
from vision.recognise.samples import corner_label, jitter, seen_corners

HEAD_ARRAYS = ("rank_weight", "rank_bias", "suit_weight", "suit_bias")  # the shipped heads' file, and a deck's
CORNER_NAMES = ("top-left", "top-right", "bottom-right", "bottom-left")  # printed corners 0..3 (`printed_corner`)
SEES_INDEX = 0.5  # the shipped reader sees an index in a flat corner when "none" is less likely than this...
MOST_CARDS = 0.5  # ...and a corner is an index corner when it does so on more than this share of the faces
FLAT_TABLE = 128  # the grey a flat card picture's transparent corners are laid on


@dataclass(frozen=True)
class RectifiedDeckHead:
    """A deck's refitted rank and suit heads, the corners its cards print an index in, and the reader they fit."""

    name: str
    rank: DeckHead  # classes: RANK_CLASSES (in any order)
    suit: DeckHead  # classes: SUIT_CLASSES
    index_corners: tuple[int, ...]  # printed corners (0..3: TL, TR, BR, BL) that hold an index on this deck
    reader_sha256: str  # the ONNX file the features came from
    source: str = ""  # the file it was loaded from, for messages ("" when made in memory)

    @property
    def features(self) -> int:
        return int(self.rank.weight.shape[1])

    def probs(self, features: np.ndarray) -> np.ndarray:
        """(n, READER_CLASSES) probabilities from the reader's features, as the ONNX graph's own heads give them."""
        return card_probs(self.rank.probs(features, RANK_CLASSES), self.suit.probs(features, SUIT_CLASSES))

    def check_fits(self, reader_path: Path, features: int | None) -> None:
        """An EnrolError unless this head was fitted on this very reader's features (its length and its file)."""
        where = self.source or f"deck head '{self.name}'"
        again = "enrol the deck again (tabletop enrol DECK_DIR)"
        if features is not None and features != self.features:
            raise EnrolError(
                f"{where}: fitted for a reader with {self.features} features, but {reader_path} gives {features}: "
                f"{again}"
            )
        digest = file_sha256(reader_path)
        if digest != self.reader_sha256:
            raise EnrolError(
                f"{where}: fitted for another corner reader (ONNX sha256 {self.reader_sha256[:12]}...), not "
                f"{reader_path} ({digest[:12]}...): a retrained reader's features mean something else; {again}"
            )

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "kind": RECTIFIED_KIND,
            "name": self.name,
            "index_corners": list(self.index_corners),
            "reader_sha256": self.reader_sha256,
            "features": self.features,
            "rank_classes": list(self.rank.classes),
            "suit_classes": list(self.suit.classes),
        }
        arrays = {
            f"{part}_{k}": getattr(getattr(self, part), k) for part in ("rank", "suit") for k in ("weight", "bias")
        }
        np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)
        return path


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def heads_of(
    arrays: dict[str, np.ndarray], name: str, where: str, classes: dict[str, Any]
) -> tuple[DeckHead, DeckHead]:
    """The rank and suit heads of a head file's arrays, checked against the classes the runtime reads."""
    heads = []
    for part, expected in (("rank", RANK_CLASSES), ("suit", SUIT_CLASSES)):
        order = tuple(classes.get(f"{part}_classes", expected))
        if sorted(order) != sorted(expected):
            raise EnrolError(f"{where}: {part} classes {list(order)}, expected {list(expected)}")
        heads.append(DeckHead(name, order, arrays[f"{part}_weight"], arrays[f"{part}_bias"]).checked(where))
    rank, suit = heads
    if rank.weight.shape[1] != suit.weight.shape[1]:
        raise EnrolError(
            f"{where}: rank and suit heads read {rank.weight.shape[1]} and {suit.weight.shape[1]} features"
        )
    return rank, suit


def load_shipped_heads(path: Path) -> tuple[DeckHead, DeckHead]:
    """The rectified reader's own rank and suit heads (written beside its ONNX at export): every enrolment starts
    from them. Their feature length is the file's, whatever the reader was retrained with."""
    if not path.is_file():
        raise ModelError(f"{path}: model file not found (models/README.md says how to train or restore it)")
    _, arrays = read_head_file(path, HEAD_ARRAYS, meta=False, what="corner reader's heads")
    return heads_of(arrays, "shipped", str(path), {})


def load_rectified_head(path: str | Path) -> RectifiedDeckHead:
    """A rectified deck head from `tabletop enrol`; one for the previous reader is refused with the option that
    reads it."""
    path = Path(path)
    info, arrays = read_deck_head(path, RECTIFIED_KIND, HEAD_ARRAYS)
    missing = [k for k in ("reader_sha256", "index_corners") if k not in info]
    if missing:
        raise EnrolError(f"{path}: a rectified deck head without {', '.join(missing)} in its meta")
    name = str(info.get("name", path.stem))
    rank, suit = heads_of(arrays, name, str(path), info)
    corners = tuple(int(k) for k in info["index_corners"])
    return RectifiedDeckHead(name, rank, suit, corners, str(info["reader_sha256"]), str(path))


def load_deck_head(path: str | Path) -> DeckHead | RectifiedDeckHead:
    """Whichever deck head the file holds: `tabletop detect --deck` picks the recogniser by it."""
    return load_rectified_head(path) if head_kind(path) == RECTIFIED_KIND else load_head(path)


# ----- which corners print an index ---------------------------------------------------------------------------------


def flat_corners(picture: np.ndarray) -> np.ndarray:
    """The four printed corners (TL, TR, BR, BL) of a card picture, cut as the runtime cuts a corner: (4, READ_H,
    READ_W, 3) BGR. A transparent picture's rounded corners are laid on grey, as on a plain table."""
    h, w = picture.shape[:2]
    bgr = picture[..., :3].astype(np.float32)
    if picture.shape[2] == 4:
        alpha = picture[..., 3:4].astype(np.float32) / 255.0
        bgr = bgr * alpha + FLAT_TABLE * (1 - alpha)
    image = bgr.astype(np.uint8)
    quad = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    return np.stack([corner_crop(image, *printed_corner(quad, k)) for k in range(4)])


def index_corners_of(none_probs: np.ndarray) -> tuple[int, ...]:
    """The corners (0..3) in which the reader sees an index on most cards, from each card's four corners' "none"
    probabilities (cards x 4). Most, not all: a reader that misses a few corners of a deck it reads poorly (the
    reason to enrol it) must not lose the corner for every card."""
    shows = np.asarray(none_probs) < SEES_INDEX
    return tuple(k for k in range(shows.shape[1]) if shows[:, k].mean() > MOST_CARDS) if len(shows) else ()


def deck_index_corners(deck: Any, reader: CornerReader, rank_head: DeckHead) -> tuple[int, ...]:
    """Which corners of this deck's faces print an index: every face picture's corners read by the shipped rank
    head. A corner without one (pips, court art) is then taught as none, one with one as its card."""
    faces = [code for code in FACE_CODES if code in deck.codes]
    if not faces:
        raise EnrolError(f"{deck.path}: no face pictures (AS.png ... KC.png) to enrol")
    crops = np.concatenate([flat_corners(deck.image(code)) for code in faces])
    none = rank_head.probs(reader.read_crops(crops).features, [NONE])[:, 0]
    corners = index_corners_of(none.reshape(len(faces), 4))
    if not corners:
        raise EnrolError(
            f"{deck.path}: the reader sees no index in any corner of this deck's pictures (on most of its "
            f"{len(faces)} faces every corner reads as 'none'): it reads standard rank and suit indices only"
        )
    return corners


# ----- enrolment ------------------------------------------------------------------------------------------------------


def scene_corner_crops(scene: Any, rng: np.random.Generator, index_corners: Sequence[int]) -> list[tuple]:
    """(crop, rank class, suit or '') for every well-seen printed corner of a rendered scene's cards, cut along its
    true frame jittered as the corner finder errs (`samples.seen_corners` says which, as for training)."""
    out = []
    for obj in scene.cards():
        if obj.kind != "card":
            continue
        index_visible = [c.visible_fraction for c in obj.corners[:2]] + [0.0] * (2 - len(obj.corners[:2]))
        quad = np.asarray(obj.quad, np.float32)
        for k, has_index in seen_corners(obj.face_up, obj.corner_visible, index_visible, index_corners):
            p, a, b = jitter(rng, *printed_corner(quad, k))
            rank, suit = corner_label(obj.code if obj.face_up else BACK, has_index)
            out.append((corner_crop(scene.image, p, a, b), rank, suit))
    return out


def reader_labels(ranks: Sequence[str], suits: Sequence[str]) -> np.ndarray:
    """The READER_CLASSES label of each (rank, suit): '7H', 'JOKER' or 'none'."""
    return np.array([rank + suit for rank, suit in zip(ranks, suits, strict=True)])


def top1(probs: np.ndarray, labels: np.ndarray) -> float:
    """Share of crops whose most likely READER_CLASSES label is theirs."""
    return float(np.mean(np.array(READER_CLASSES)[probs.argmax(axis=1)] == labels)) if len(labels) else 0.0


@dataclass(frozen=True)
class RectifiedEnrolResult:
    head: RectifiedDeckHead
    rank: HeadChoice
    suit: HeadChoice
    crops: int
    index_crops: int  # crops showing an index (the rest are taught none)
    scenes: int
    seconds: float
    held_out_before: float  # top-1 over READER_CLASSES on the held-out scenes' crops, shipped heads
    held_out_after: float  # ...and the chosen ones

    @property
    def pulls(self) -> dict[str, float | None]:
        """Each head's chosen pull (None: no refit beat the shipped head, which is kept)."""
        return {"rank": self.rank.pull, "suit": self.suit.pull}


def enrol_rectified(
    deck_dir: str | Path,
    reader: CornerReader,
    base: tuple[DeckHead, DeckHead],
    scenes: int = 200,
    seed: int = 1000,
    progress: Callable[[int, int], None] | None = None,
) -> RectifiedEnrolResult:
    """Finds the deck's index corners, renders `scenes` scenes of it, reads every corner crop's features, and
    fits and chooses the rank and suit heads (`base`: the shipped ones, `load_shipped_heads`)."""
    from vision.synth.components import load_component
    from vision.synth.deckdir import Deck

    check_scene_count(scenes)
    start = time.perf_counter()
    deck = load_component(deck_dir)
    if not isinstance(deck, Deck):
        raise EnrolError(f"{deck_dir}: a piece set, not a deck of playing cards; only a deck can be enrolled")
    base_rank, base_suit = base
    if base_rank.weight.shape[1] != reader.n_features:
        raise EnrolError(
            f"{reader.path}: gives {reader.n_features} features, but its heads read {base_rank.weight.shape[1]}: "
            "the head file beside it is from another export"
        )
    corners = deck_index_corners(deck, reader, base_rank)
    feats, ranks, suits, held_out = [], [], [], []
    for i, scene in enrolment_scenes(deck, scenes, seed, progress):
        rows = scene_corner_crops(scene, np.random.default_rng([seed, i, 2]), corners)
        if rows:
            feats.append(reader.read_crops(np.stack([r[0] for r in rows])).features)
            ranks += [r[1] for r in rows]
            suits += [r[2] for r in rows]
            held_out += [held_out_scene(i)] * len(rows)
    index_crops = sum(r != NONE for r in ranks)
    if not index_crops:
        raise EnrolError(f"{deck_dir}: no readable index in {scenes} rendered scenes of this deck")
    x, held = np.concatenate(feats), np.array(held_out)
    suited = np.array([s != "" for s in suits])
    name = Path(deck_dir).name
    rank = choose_head(base_rank, x, ranks, held, name)
    suit = choose_head(base_suit, x[suited], [s for s in suits if s], held[suited], name)
    stamp = file_sha256(reader.path)
    shipped = RectifiedDeckHead(name, base_rank, base_suit, corners, stamp)
    head = RectifiedDeckHead(name, rank.head, suit.head, corners, stamp)
    truth = reader_labels(ranks, suits)[held]
    before, after = top1(shipped.probs(x[held]), truth), top1(head.probs(x[held]), truth)
    seconds = time.perf_counter() - start
    return RectifiedEnrolResult(head, rank, suit, len(ranks), index_crops, scenes, seconds, before, after)


def corner_names(corners: Sequence[int]) -> str:
    return ", ".join(CORNER_NAMES[k] for k in corners)
