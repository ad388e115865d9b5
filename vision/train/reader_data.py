"""Rectified corner crops for the reader, with their labels, written once as arrays.

Two sources, both cut by `vision.recognise.corners.corner_crop` (the runtime's own rule) along a jittered true corner
frame, so the reader learns to forgive the corner finder's small errors:

- **flat cards**: a deck directory's pictures warped onto a table patch at a random size, tilt and light, sometimes
  half-covered by another card, blurred, noisy and JPEG-compressed. Cheap (thousands a second), so every deck design,
  procedural ones included, is seen at every index size the camera gives;
- **scenes**: the corners of cards in rendered frames (`corner_data`), which carry the renderer's whole camera model,
  hands and overlapping cards.

Each crop is labelled by rank (A..K, JOKER, none) and suit: the reader's two heads. A corner shows an index only
where the deck prints one: the top-left and its half-turn twin always, the other two corners on four-index decks.

    python -m vision.train.reader_data out/reader_crops/train.npz --decks out/decks out/procdecks --n 150000
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.recognise.corners import Corner, CornerFinder, corner_crop, printed_corner, swapped_edges
from vision.recognise.labels import NONE, NUMBER_CLASSES, RANK_CLASSES, VOCABULARIES, head_parts
from vision.recognise.samples import index_shown, jitter, seen_corners
from vision.synth.backgrounds import load_table_textures
from vision.synth.deckdir import Deck, load_decks
from vision.synth.effects import finish, random_effects
from vision.synth.legibility import (
    INDEX_WHOLE,
    Region,
    corner_region,
    index_legibility,
    is_legible,
    rank_printed,
)
from vision.synth.pieces import PieceSet
from vision.train.corner_data import SceneGeometry, decks_of_split, pieces_of_split, split_decks, stored_scenes
from vision.train.finder_errors import apply_error

NO_SUIT = -1  # the suit head is not taught on jokers and crops with no index
ILLEGIBLE = -2  # rank of a crop whose index is in view but not legible (`vision.synth.legibility`): taught as "an
# index, but no telling which", a flat belief over the index classes, so the reader learns to be unsure there
UNKNOWN_FACE = 255  # the face head is not taught where the side is not known
# `face` of a crop cut where the corner finder fired on no card's corner (a phone's, a tile's, a pip's, a blob on
# the cloth): the reader's card head learns to say "no card" there, and its rank head "no index"
NOT_A_CARD = 2
# A found corner is no card's when every printed corner of every card, seen or hidden, lies further than this many
# card widths from it (nearer, it may be a real corner the camera half hides: neither taught nor punished)
FALSE_CORNER_CLEARANCE = 0.25
# At most this many false corners a frame, the finder's surest first: a patterned cloth fires dozens of easy ones,
# and it is the sure ones that become wrong cards
FALSE_CORNERS_PER_FRAME = 12
_WORKER: dict[str, object] = {}


@dataclass
class CropSet:
    x: np.ndarray  # (n, READ_H, READ_W, 3) uint8 BGR
    rank: np.ndarray  # (n,) int64, RANK_CLASSES order
    suit: np.ndarray  # (n,) int64, SUIT_CLASSES order or NO_SUIT
    source: np.ndarray  # (n,) str: deck name (flat), 'scene' or 'false corner'
    face: np.ndarray  # (n,) uint8: 1 where the corner is a face's (index or not), 0 a back's, NOT_A_CARD no card's

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, x=self.x, rank=self.rank, suit=self.suit, source=self.source, face=self.face)
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> CropSet:
        """A crop file; one written before the face label existed gets it as unknown (255), never taught."""
        with np.load(path) as d:
            face = d["face"] if "face" in d.files else np.full(len(d["rank"]), UNKNOWN_FACE, np.uint8)
            return cls(d["x"], d["rank"], d["suit"], d["source"], face)

    @classmethod
    def concat(cls, parts: Sequence[CropSet]) -> CropSet:
        fields = ("x", "rank", "suit", "source", "face")
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in fields))


def label_of(code: str, has_index: bool, legibility: float = 1.0, vocabulary: str = "cards") -> tuple[int, int]:
    """The two heads' class numbers of a crop (rank and suit of a card, number and colour of a number card, by
    `vocabulary`): none where no index is printed or the side is a back; ILLEGIBLE (and no suit) where an index is
    printed and in view but the camera left it below LEGIBLE."""
    if has_index and not is_legible(legibility) and not code.startswith("BACK"):
        return ILLEGIBLE, NO_SUIT
    first, second = VOCABULARIES[vocabulary]
    rank, suit = head_parts(code, vocabulary) if has_index and not code.startswith("BACK") else (NONE, "")
    return first.index(rank), (second.index(suit) if suit else NO_SUIT)


# Debian decks whose indices differ from the usual two (looked at, card by card): Dondorf prints all four corners;
# KDE's Oxygen decks print a bare rank at the top right and nothing top left, so they cannot teach a standard index;
# Tango Nuevo prints its index (rank, and the suit beside it) at the top left only, and a giant pip reaches the
# bottom right (until session 15 those pips were taught as the card's index).
FOUR_INDEX_DECKS = frozenset({"gnome-dondorf", "kde-dondorf"})
NO_INDEX_DECKS = frozenset({"kde-oxygen-air", "kde-oxygen-white"})
TOP_LEFT_INDEX_DECKS = frozenset({"gnome-tango_nuevo"})


@cache
def index_corners(deck_path: Path) -> tuple[int, ...]:
    """Which printed corners (TL, TR, BR, BL = 0..3) hold an index: deck.json's "index_corners" where it says, else
    the two of most decks (top left and its half-turn twin)."""
    meta = deck_path / "deck.json"
    if meta.is_file():
        data = json.loads(meta.read_text())
        if isinstance(data, dict) and "index_corners" in data:
            return tuple(int(k) for k in data["index_corners"])
    if deck_path.name in NO_INDEX_DECKS:
        return ()
    if deck_path.name in TOP_LEFT_INDEX_DECKS:
        return (0,)
    return (0, 1, 2, 3) if deck_path.name in FOUR_INDEX_DECKS else (0, 2)


# -------------------------------------------------------------------------------------------------- flat cards


class DeckLabels:
    """What flat crops of a standard deck are taught: its faces and its back; an index at the corners the deck
    prints one (`index_corners`), in the standard box; rank and suit."""

    vocabulary = "cards"

    def __init__(self, deck: Deck) -> None:
        self.codes = (*deck.codes, "BACK")
        self.corners = index_corners(deck.path)

    def region(self, code: str, k: int) -> Region | None:
        return corner_region(k) if k in self.corners and code != "BACK" else None

    def label(self, code: str, has_index: bool, legibility: float) -> tuple[int, int]:
        return label_of(code, has_index, legibility, self.vocabulary)


class PieceLabels:
    """What flat crops of a number-card piece set (LOOP, Bag-O-Loot) are taught: every picture, backs and a Rank
    card's Loop side included; an index where the piece set says one is printed (its `index` boxes, each placed at
    the corner it lies in); number and colour (`labels.number_colour`)."""

    vocabulary = "numbers"

    def __init__(self, pieces: PieceSet) -> None:
        self.codes = tuple(pieces.pieces)
        self.boxes = {code: {box_corner(box): box for box in info.index} for code, info in pieces.pieces.items()}

    def region(self, code: str, k: int) -> Region | None:
        return self.boxes[code].get(k)

    def label(self, code: str, has_index: bool, legibility: float) -> tuple[int, int]:
        return label_of(code, has_index, legibility, self.vocabulary)


def box_corner(box: Region) -> int:
    """The printed corner (TL, TR, BR, BL = 0..3) an index box lies in, by its centre."""
    x0, y0, x1, y1 = box
    right, low = x0 + x1 >= 1.0, y0 + y1 >= 1.0
    return (2 if right else 3) if low else (1 if right else 0)


Labels = DeckLabels | PieceLabels


def labels_for(source: Deck | PieceSet) -> Labels:
    return PieceLabels(source) if isinstance(source, PieceSet) else DeckLabels(source)


def flat_crops(
    deck: Deck | PieceSet,
    rng: np.random.Generator,
    n: int,
    backgrounds: Sequence[np.ndarray],
    camera_model: bool = True,
    fanned: bool = False,
    swapped: bool = False,
) -> list[tuple]:
    """n crops of one deck's cards (or one piece set's), each a corner of a card warped onto a table patch and seen
    through a camera: the scene renderer's own camera model (`camera`) by default, else the older, milder `degrade`.
    With `fanned`, three crops in ten have the next card of a fan or a cascade lying over this one (`fanned_over`).
    With `swapped`, every crop is cut along the corner's frame with its short and long edges the other way round
    (`corners.swapped_edges`), as the finder cuts about one corner in seven, and taught as showing no index: the
    index lies on its side there, and a reader that says so lets the runtime try the corner the other way
    (session 20). Until then such crops were left out of training, and the reader read them as anything."""
    labels = labels_for(deck)
    codes = labels.codes
    if not any(labels.region(code, k) for code in codes for k in range(4)):
        return []
    out = []
    for _ in range(n):
        code = str(rng.choice(codes))
        img = deck.image(code)
        h, w = img.shape[:2]
        width = float(np.exp(rng.uniform(np.log(38), np.log(260))))  # the card's width in the frame
        angle = rng.uniform(0, 2 * np.pi)
        tilt = rng.uniform(-0.12, 0.12, size=(4, 2)) * width * rng.uniform(0, 1)
        size = int(width * 2.2) + 8
        centre = np.array([size / 2, size / 2])
        rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        unit = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        quad = ((unit / w * width - [width / 2, width * h / w / 2]) @ rot.T + centre + tilt).astype(np.float32)
        canvas = table_patch(rng, backgrounds, size)
        glossy = paste(canvas, img, unit, quad)
        k = int(rng.integers(4))
        roll = rng.random()
        if roll < 0.3 or (roll < 0.6 and fanned):
            other = deck.image(str(rng.choice(codes)))
            if roll < 0.3:  # another card over part of this one, never over the corner itself
                over = (quad + (quad[(k + 2) % 4] - quad[k]) * rng.uniform(0.35, 0.9)).astype(np.float32)
            else:
                over = fanned_over(rng, quad, k)
            glossy = np.maximum(glossy, paste(canvas, other, unit, over))
        p, a, b = cut_frame(rng, *printed_corner(quad, k))
        if swapped:
            a, b = swapped_edges(a, b)
        # the camera's faults applied where the crop is cut, not everywhere
        before = p
        if camera_model:
            (canvas, glossy), p = around((canvas, glossy), p, width)
            canvas = camera(rng, canvas, glossy)
        else:
            (canvas,), p = around((canvas,), p, width)
            canvas = degrade(rng, canvas, width)
        region = labels.region(code, k)
        if not rank_printed(deck.name, code):
            legible = 0.0
        else:
            legible = index_legibility(canvas, img, quad - (before - p), region) if region else 1.0
        rank, suit = labels.label(code, region is not None and not swapped, legible)
        out.append((corner_crop(canvas, p, a, b), rank, suit, deck.name, int(code != "BACK")))
    return out


def fanned_over(rng: np.random.Generator, quad: np.ndarray, k: int) -> np.ndarray:
    """Where the next card of a fan or a cascade lies over a card: turned a little about the same corner and
    shifted so that its own index sits beside this card's (fan: along the short edge, 0.16-0.3 card widths) or below
    it (cascade: 0.42-0.6 along the long edge), never over it. Session 12 found a third of the reader's misreadings
    of clear scene frames were such crops: the neighbour's index read instead of the card's own."""
    p, a, b = printed_corner(quad, k)
    width = float(np.linalg.norm(a))
    a_unit, b_unit = a / width, b / np.linalg.norm(b)
    if rng.random() < 0.6:  # fan
        s, t, turn = rng.uniform(0.16, 0.3), rng.uniform(-0.05, 0.15), np.radians(rng.uniform(-20, 20))
    else:  # cascade
        s, t, turn = rng.uniform(-0.05, 0.08), rng.uniform(0.42, 0.6), np.radians(rng.uniform(-5, 5))
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    return ((quad - p) @ rot.T + p + (a_unit * s + b_unit * t) * width).astype(np.float32)


def table_patch(rng: np.random.Generator, backgrounds: Sequence[np.ndarray], size: int) -> np.ndarray:
    if backgrounds and rng.random() < 0.8:
        bg = backgrounds[int(rng.integers(len(backgrounds)))]
        s = min(size, bg.shape[0] - 1, bg.shape[1] - 1)
        y, x = int(rng.integers(bg.shape[0] - s)), int(rng.integers(bg.shape[1] - s))
        return cv2.resize(bg[y : y + s, x : x + s], (size, size))
    return np.full((size, size, 3), rng.integers(20, 235, 3), np.uint8)


def paste(canvas: np.ndarray, card: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """A BGRA card picture warped into the canvas through its alpha; returns that alpha (where card stock lies,
    which is where a lamp's glare can fall)."""
    m = cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))
    size = (canvas.shape[1], canvas.shape[0])
    warped = cv2.warpPerspective(card, m, size, flags=cv2.INTER_AREA, borderValue=(0, 0, 0, 0))
    alpha = warped[..., 3:4].astype(np.float32) / 255.0
    canvas[:] = (canvas * (1 - alpha) + warped[..., :3] * alpha).astype(np.uint8)
    return alpha[..., 0]


def around(
    layers: tuple[np.ndarray, ...], point: np.ndarray, width: float
) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The part of each layer within 0.75 card widths of a corner (the reading region and a margin for blur), and
    the corner's place in it."""
    reach = int(0.75 * width) + 6
    rows, cols = layers[0].shape[:2]
    x0, y0 = (max(int(v) - reach, 0) for v in point)
    x1, y1 = min(int(point[0]) + reach, cols), min(int(point[1]) + reach, rows)
    return tuple(layer[y0:y1, x0:x1].copy() for layer in layers), point - [x0, y0]


FRAME_W, FRAME_H = 1280, 720  # the frame the scene renderer's camera model is drawn for


def camera(rng: np.random.Generator, patch: np.ndarray, glossy: np.ndarray) -> np.ndarray:
    """The scene renderer's whole camera (`effects.finish`: light, lamp glare on card stock, defocus and motion
    blur in frame pixels, sensor noise, noise reduction, sharpening, JPEG) applied to a patch as if the patch were
    cut from a 1280 x 720 frame: the frame-sized fields (light gradient, lamp, glare) are moved into the patch's
    coordinates, and auto exposure, which would meter the patch alone, becomes a plain gain. Session 12 measured the
    shipped reader at 52-82% on 80 px cards smeared by 8-14 px, which flat crops under the older `degrade` never
    showed."""
    params = random_effects(rng)
    rows, cols = patch.shape[:2]
    scale = max(rows, cols)
    ox, oy = rng.uniform(0, FRAME_W - cols), rng.uniform(0, FRAME_H - rows)
    gx, gy, _vignette = params.light_gradient
    cx, cy, radius, strength = params.glare
    lx, ly, lamp_height, share = params.lamp
    params = replace(
        params,
        exposure_target=0.0,
        light_gradient=(gx * cols / FRAME_W, gy * rows / FRAME_H, 0.0),
        glare=((cx * FRAME_W - ox) / cols, (cy * FRAME_H - oy) / rows, radius * FRAME_W / cols, strength),
        lamp=((lx * FRAME_W - ox) / cols, (ly * FRAME_H - oy) / rows, lamp_height * FRAME_W / scale, share),
        chromatic_aberration=params.chromatic_aberration * float(rng.uniform(0, FRAME_W / scale)) / 2,
    )
    image = patch.astype(np.float32) * np.float32(rng.uniform(0.6, 1.1))  # the gain auto exposure settled on
    return np.asarray(finish(image, glossy.astype(np.float32), params, int(rng.integers(2**31))))


def degrade(rng: np.random.Generator, image: np.ndarray, width: float) -> np.ndarray:
    """A webcam's faults at the card's scale: light, colour cast, defocus or motion blur, noise, glare, JPEG."""
    t = image.astype(np.float32)
    t = (t - 128) * rng.uniform(0.7, 1.15) + 128 + rng.uniform(-45, 25)
    t *= rng.uniform(0.9, 1.08, size=3)
    if rng.random() < 0.15:  # glare: a soft bright spot
        h, w = t.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w]
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.1, 0.5) * w
        t += (np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r)) * rng.uniform(40, 140))[..., None]
    roll = rng.random()
    if roll < 0.35:
        t = cv2.GaussianBlur(t, (0, 0), rng.uniform(0.3, 0.7 + width / 250))
    elif roll < 0.5:  # motion blur along a random direction
        length = int(rng.integers(3, max(4, int(width / 16))))
        kernel = np.zeros((length, length), np.float32)
        kernel[length // 2, :] = 1.0 / length
        rot = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1.0)
        kernel = cv2.warpAffine(kernel, rot, (length, length))
        t = cv2.filter2D(t, -1, kernel / max(kernel.sum(), 1e-6))
    t += rng.normal(0, rng.uniform(0, 9), t.shape)
    out = np.clip(t, 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        _ok, enc = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 95))])
        out = cv2.imdecode(enc, cv2.IMREAD_COLOR)
    return out


def cut_frame(rng: np.random.Generator, p: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """The frame a crop is cut along: the true corner frame as the corner finder would have found it, drawn from
    its measured errors (`finder_errors`) where the worker has a table of them, else a mild Gaussian wobble."""
    table = _WORKER.get("finder_errors")
    if table is None or not len(table):  # type: ignore[arg-type]
        return jitter(rng, p, a, b)
    return apply_error(table[rng.integers(len(table))], p, a, b)  # type: ignore[index]


# ------------------------------------------------------------------------------------------------------ scenes


def scene_crops(stem: Path, rng: np.random.Generator, decks: Mapping[str, Deck]) -> list[tuple]:
    """Every well-seen corner of a rendered frame's cards; an index partly hidden (10-60%) is left out, neither
    taught as read nor as none; an index in view but not legible, or less than INDEX_WHOLE of its box in view (the
    next card of a cascade over its suit), is taught as ILLEGIBLE."""
    image = cv2.imread(str(stem.with_suffix(".jpg")), cv2.IMREAD_COLOR)
    g = SceneGeometry.load(stem.with_suffix(".npz"))
    deck = decks.get(g.deck)
    four = index_corners(deck.path) if deck is not None else None
    if four == ():
        return []
    out = []
    for n in range(len(g.codes)):
        if g.face_up[n] and four is None:
            continue  # the scene does not say whether its deck prints an index here
        code = str(g.codes[n])
        for k, has_index in seen_corners(bool(g.face_up[n]), g.corner_visible[n], g.index_visible[n], four or (0, 2)):
            p, a, b = cut_frame(rng, *printed_corner(g.quads[n], k))
            legible = 1.0
            if has_index and deck is not None and code in deck.codes:
                shown = index_shown(g.corner_visible[n], g.index_visible[n], k)
                readable = rank_printed(deck.name, code) and shown >= INDEX_WHOLE
                legible = index_legibility(image, deck.image(code), g.quads[n], corner_region(k)) if readable else 0.0
            rank, suit = label_of(code if g.face_up[n] else "BACK", has_index, legible)
            out.append((corner_crop(image, p, a, b), rank, suit, "scene", int(bool(g.face_up[n]))))
    return out


def false_corners(found: Sequence[Corner], quads: np.ndarray) -> list[Corner]:
    """The found corners that lie on no card's corner: every printed corner of every card (hidden ones too) is
    further than FALSE_CORNER_CLEARANCE widths away, measured by the smaller of the two corners' widths."""
    printed = [printed_corner(q, k) for q in np.asarray(quads, np.float32).reshape(-1, 4, 2) for k in range(4)]
    if not printed:
        return list(found)
    points = np.array([p for p, _a, _b in printed], np.float32)
    widths = np.array([float(np.linalg.norm(a)) for _p, a, _b in printed], np.float32)
    out = []
    for c in found:
        scale = np.maximum(np.minimum(widths, max(c.width, 1.0)), 1.0)
        if (np.linalg.norm(points - c.point, axis=1) / scale).min() > FALSE_CORNER_CLEARANCE:
            out.append(c)
    return out


def false_corner_crops(stem: Path, finder: CornerFinder, min_score: float) -> list[tuple]:
    """Crops cut, along the frame the finder found, at the corners it finds in a rendered frame on no card: what
    the card head must learn to turn away (the finder fires on phones, tiles, dice, a pip's tip, blobs on the cloth;
    on 100 validation frames, 62 of 77 wrong face-down reports lay on no card at all, session 16)."""
    image = cv2.imread(str(stem.with_suffix(".jpg")), cv2.IMREAD_COLOR)
    if image is None:
        return []
    g = SceneGeometry.load(stem.with_suffix(".npz"))
    none = RANK_CLASSES.index("none")
    return [
        (corner_crop(image, c.point, c.a, c.b), none, NO_SUIT, "false corner", NOT_A_CARD)
        for c in sorted(false_corners(finder.find(image, min_score), g.quads), key=lambda c: -c.score)[
            :FALSE_CORNERS_PER_FRAME
        ]
    ]


# ------------------------------------------------------------------------------------------------------ driver


def _init(
    deck_dirs: Sequence[str],
    piece_dirs: Sequence[str],
    split: str,
    bg_scenes: Sequence[str],
    finder_errors: str | None = None,
    finder: tuple[str, float] | None = None,
) -> None:
    _WORKER["finder_errors"] = np.load(finder_errors) if finder_errors else None
    _WORKER["finder"] = (CornerFinder(Path(finder[0]), threads=1), finder[1]) if finder else None
    folders = [load_decks(folder) for folder in deck_dirs]
    _WORKER["decks"] = [d for loaded in folders for d in decks_of_split(loaded, split)]
    _WORKER["decks"] += pieces_of_split(piece_dirs, split)
    _WORKER["decks_by_name"] = {d.path.name: d for loaded in folders for d in loaded}
    backgrounds = [b for b in (cv2.imread(s, cv2.IMREAD_COLOR) for s in bg_scenes) if b is not None]
    _WORKER["backgrounds"] = backgrounds or [t.image for t in load_table_textures()]


def _flat_job(args: tuple[int, int, int, bool, bool, bool]) -> list[tuple]:
    seed, index, n, fanned, camera_model, swapped = args
    rng = np.random.default_rng([seed, index])
    decks: list[Deck] = _WORKER["decks"]  # type: ignore[assignment]
    deck = decks[index % len(decks)]
    return flat_crops(deck, rng, n, _WORKER["backgrounds"], camera_model, fanned, swapped)  # type: ignore[arg-type]


def _scene_job(args: tuple[int, str]) -> list[tuple]:
    seed, stem = args
    if _WORKER.get("finder") is not None:
        finder, min_score = _WORKER["finder"]  # type: ignore[misc]
        return false_corner_crops(Path(stem), finder, min_score)
    rng = np.random.default_rng([seed, int(Path(stem).name.replace("_", ""))])
    return scene_crops(Path(stem), rng, _WORKER["decks_by_name"])  # type: ignore[arg-type]


def build(
    out: Path,
    deck_dirs: Sequence[Path],
    split: str,
    n_flat: int,
    scenes: Sequence[Path],
    seed: int,
    workers: int,
    fanned: bool = False,
    camera_model: bool = True,
    finder_errors: Path | None = None,
    false_corner_finder: tuple[Path, float] | None = None,
    piece_dirs: Sequence[Path] = (),
    swapped: bool = False,
) -> CropSet:
    """Flat crops of every deck of the split in equal shares, plus the crops of the given stored scenes, each cut
    along a frame drawn from `finder_errors` (a `finder_errors` table) when given. With `false_corner_finder`
    (a corner finder's graph and its score floor) the scenes give the finder's false corners instead."""
    bg = [str(s.with_suffix(".jpg")) for s in scenes[:40]]
    chunk = 200
    chunks = max(1, n_flat // chunk) if n_flat > 0 else 0
    jobs = [(seed, i, chunk, fanned, camera_model, swapped) for i in range(chunks)]
    rows: list[tuple] = []
    with Pool(
        workers,
        initializer=_init,
        initargs=(
            [str(d) for d in deck_dirs],
            [str(d) for d in piece_dirs],
            split,
            bg,
            str(finder_errors) if finder_errors else None,
            (str(false_corner_finder[0]), false_corner_finder[1]) if false_corner_finder else None,
        ),
    ) as pool:
        for part in tqdm(pool.imap_unordered(_flat_job, jobs), total=len(jobs), desc="flat crops", unit="chunk"):
            rows += part
        for part in tqdm(
            pool.imap_unordered(_scene_job, [(seed, str(s)) for s in scenes], chunksize=8),
            total=len(scenes),
            desc="scene crops",
            unit="scene",
        ):
            rows += part
    crops = CropSet(
        np.stack([r[0] for r in rows]),
        np.array([r[1] for r in rows], np.int64),
        np.array([r[2] for r in rows], np.int64),
        np.array([r[3] for r in rows]),
        np.array([r[4] for r in rows], np.uint8),
    )
    crops.save(out)
    return crops


def false_corner_source(models: Path | None = None) -> tuple[Path, float]:
    """The shipped corner finder (in `models`, default models/) and the lowest score the tuner may choose for it:
    every corner the runtime could read is a candidate."""
    from vision.recognise.models import models_dir
    from vision.recognise.rectified import CORNERS_FILE
    from vision.train.tune_rectified import FLOOR

    return (models or models_dir()) / CORNERS_FILE, FLOOR


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--decks", type=Path, nargs="+", help="deck directories, or folders of them (needed to cut)")
    parser.add_argument(
        "--pieces",
        type=Path,
        nargs="+",
        default=[],
        help="folders of procedural number-card designs (tabletop synth pieces): their designs of the split join in",
    )
    parser.add_argument("--split", default="train", choices=("train", "val", "test"))
    parser.add_argument("--n", type=int, default=100000, help="flat-card crops")
    parser.add_argument("--scenes", type=Path, nargs="*", default=[], help="folders of stored scenes to crop too")
    parser.add_argument("--max-scenes", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--fanned", action="store_true", help="also lay the next card of a fan or cascade over some")
    parser.add_argument(
        "--camera",
        default="scene",
        choices=("scene", "simple"),
        help="flat crops seen through the scene renderer's camera, or the first session's simpler faults",
    )
    parser.add_argument(
        "--finder-errors",
        type=Path,
        default=None,
        help="cut crops along frames erred as in this table (python -m vision.train.finder_errors), not a wobble",
    )
    parser.add_argument(
        "--swapped",
        action="store_true",
        help="cut every flat crop with the corner's short and long edges swapped, taught as showing no index",
    )
    parser.add_argument(
        "--join", type=Path, nargs="+", help="write OUT as these crop files joined (nothing is rendered or cut)"
    )
    parser.add_argument(
        "--false-corners",
        action="store_true",
        help="crop the scenes at the corners the shipped finder finds on no card (NOT_A_CARD), not at the cards'",
    )
    args = parser.parse_args(argv)
    if args.join:
        joined = CropSet.concat([CropSet.load(p) for p in args.join])
        joined.save(args.out)
        print(f"{len(joined.rank)} crops -> {args.out}")
        return
    if not args.decks and not args.pieces:
        parser.error("--decks or --pieces is needed to cut crops (only --join works without)")
    if args.finder_errors is not None and not args.finder_errors.is_file():
        parser.error(
            f"--finder-errors {args.finder_errors}: no such file (python -m vision.train.finder_errors makes it)"
        )
    if args.n > 0 and not [*split_decks(args.decks or [], args.split), *pieces_of_split(args.pieces, args.split)]:
        # the family split (seed 0) deals a lone deck's family to train: a folder of one deck has no val or test
        where = ", ".join(map(str, [*(args.decks or []), *args.pieces]))
        parser.error(f"no {args.split} decks or designs under {where} to cut flat crops from")
    scenes = [s for folder in args.scenes for s in stored_scenes(folder)][: args.max_scenes]
    crops = build(
        args.out,
        args.decks or [],
        args.split,
        args.n,
        scenes,
        args.seed,
        args.workers,
        args.fanned,
        args.camera == "scene",
        args.finder_errors,
        false_corner_source() if args.false_corners else None,
        args.pieces,
        args.swapped,
    )
    classes = NUMBER_CLASSES if args.pieces and not args.decks else RANK_CLASSES
    ranks = np.bincount(crops.rank[crops.rank >= 0], minlength=len(classes))
    by_rank = dict(zip(classes, ranks.tolist(), strict=True)) | {"illegible": int((crops.rank == ILLEGIBLE).sum())}
    print(f"{len(crops.rank)} crops -> {args.out}; by rank: {by_rank}")


if __name__ == "__main__":
    main()
