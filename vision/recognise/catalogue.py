"""Catalogue cards (Loot Roll, The LOOP): found by their corners, cut out whole, and named by comparing them with
pictures of the catalogue's own cards.

Why not an index reader: a catalogue card prints no index that names it (a monster's corner says "3-8", many cards
share it); what tells two cards apart is the art and the title, spread over the whole face. We have one picture of
every card (a player's enrolment, or the synthetic stand-ins), so naming a card is matching, not learning.

Why cells, and why relative: the card is rectified to a small picture (`CELL_SIZE`) and cut into a grid of cells,
each compared with the same cell of every catalogue picture by normalised correlation (lighting and white balance
cancel). Most cells of a design are alike on every card (frames, text boxes), and a hand or another card covers
some cells of the card in view. So a cell counts only by how much better it matches one picture than it matches
the average picture (`match_scores`): shared cells and covered cells say nothing, the art and the title decide.
Measured (session 19, Loot Roll design 1, 60 scenes, cards at least half visible, the true outline jittered by 2%
of its width): this relative score names 84% of cards, the plain mean of the cells 83%, the best half of the cells
77%. SIFT features with RANSAC found 15-19% of the same cards: a card 50-150 px wide in a 720p frame carries too few
keypoints. Most cards it misses have their art covered and only text showing, which is a few pixels tall.

Every corner the finder finds proposes a card (grouped corners give the outline; a lone corner its own edges),
each tried both ways up and with its short and long edges both ways round; the best-matching proposals are kept,
one per place. A proposal that matches no picture clearly enough (`CatalogueThresholds`) is not reported: a card
from outside the catalogue must not be named as one in it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import cv2
import numpy as np

from vision.recognise.calibration import TableCalibration
from vision.recognise.corner_refiner import CornerRefiner
from vision.recognise.corners import Corner, CornerFinder, Pyramid
from vision.recognise.finder import quad_bounds
from vision.recognise.labels import CATALOGUE_GAMES
from vision.recognise.models import ModelError, ThresholdFile, models_dir
from vision.recognise.recogniser import CardDetection

CELL_SIZE = (32, 45)  # w, h of a rectified card for the cells: a 63 x 88 mm card at about 0.5 px/mm
GRID = (4, 5)  # cells across, down: each 8 x 9 px (CELL_SIZE divides into them exactly)
EMBED_SIZE = (40, 56)  # w, h of a rectified card for the embedder, and of the pictures a catalogue keeps
CATALOGUE_CORNERS_FILE = "catalogue-corners.onnx"  # the card finder fine-tuned on catalogue cards (session 19)
EMBEDDER_FILE = "catalogue-embedder.onnx"  # optional: without it, cards are compared cell by cell
COLOUR_WEIGHT = 1.5  # the a and b channels against lightness: rarity frames and art colours tell cards apart
CARD_ASPECT = 88 / 63  # height / width of both games' cards (seeds: poker size)
FORMAT = 1
MATCHERS = ("auto", "cells", "embedder")
ENROL_AGAIN = "enrol it again (tabletop enrol --game G DIR)"
BACK_PREFIX = "BACK"  # a catalogue picture named BACK... is a back: its card lies face down
MIN_WIDTH = 16.0  # px: a proposal narrower than this is too small to name
SAME_PLACE = 0.5  # two proposals whose centres lie this many card widths apart are one card


CELLS = GRID[0] * GRID[1]


def weighted_lab(cards: np.ndarray) -> np.ndarray:
    """Cards ((n, h, w, 3) BGR uint8) lightly smoothed, in Lab as float32, the colour channels weighed by
    COLOUR_WEIGHT: what both the cell matcher and the post-fit check compare."""
    lab = np.stack([cv2.cvtColor(cv2.GaussianBlur(c, (0, 0), 0.7), cv2.COLOR_BGR2LAB) for c in cards]).astype(
        np.float32
    )
    lab[..., 1:] *= COLOUR_WEIGHT
    return lab


def cards_cells(pictures: np.ndarray) -> np.ndarray:
    """Rectified cards ((n, h, w, 3) at CELL_SIZE, BGR uint8) as unit vectors, one per cell, over each cell's Lab
    pixels less their mean: (n, cells, d)."""
    w, h = CELL_SIZE
    if pictures.shape[1:3] != (h, w):
        raise ValueError(f"a rectified card is {w} x {h} px, not {pictures.shape[2]} x {pictures.shape[1]}")
    lab = weighted_lab(pictures)
    gx, gy = GRID
    n = len(pictures)
    cells = lab.reshape(n, gy, h // gy, gx, w // gx, 3).transpose(0, 1, 3, 2, 4, 5).reshape(n, CELLS, -1, 3)
    cells = cells - cells.mean(axis=2, keepdims=True)
    flat = cells.reshape(n, CELLS, -1)
    return flat / (np.linalg.norm(flat, axis=2, keepdims=True) + 1e-3 * flat.shape[2])


def rectify(frame: np.ndarray | Pyramid, quad: np.ndarray, size: tuple[int, int] = CELL_SIZE) -> np.ndarray:
    """The card inside `quad` (TL, TR, BR, BL as printed) as an upright picture of `size`, read from the level of
    the frame's pyramid (`corners.Pyramid`: halvings by area) where an output pixel spans at most about 1.5 frame
    pixels, so a large card is never read through aliasing; pass one Pyramid for many cards of one frame."""
    pyramid = frame if isinstance(frame, Pyramid) else Pyramid(frame)
    q = np.asarray(quad, np.float32)
    w, h = size
    span = max(float(np.linalg.norm(q[1] - q[0])) / w, float(np.linalg.norm(q[3] - q[0])) / h)
    level = int(np.clip(np.floor(np.log2(max(span, 1e-6) / 1.5)) + 1, 0, Pyramid.MAX_LEVEL)) if span > 1.5 else 0
    image = pyramid.level(level)
    scale = np.float32(image.shape[1] / pyramid.levels[0].shape[1])
    target = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    to_card = cv2.getPerspectiveTransform((q * scale).astype(np.float32), target)
    return cv2.warpPerspective(image, to_card, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


ALIGN_MARGIN = 0.25  # the outline is searched this share of the card beyond itself on every side
ALIGN_STEPS = 30  # ECC iterations
ECC_BLUR = 5  # px: the Gaussian ECC smooths both pictures with
NOT_ALIGNED = -1.0
ALIGN_SCALE = (0.6, 1.6)  # a fit that shrinks or grows the card beyond these has found something else


def align(frame: np.ndarray, quad: np.ndarray, picture: np.ndarray) -> tuple[float, np.ndarray]:
    """The card's own picture laid over the frame where the outline says it lies, and moved (an affine map of the
    rectified view, by ECC: `cv2.findTransformECC`) until it fits best. Returns how well it fits (the correlation
    coefficient, 1 a perfect fit; NOT_ALIGNED where the search fails) and the outline it fits at. A card the
    outline's picture truly shows fits at 0.9 and more; the same picture on the wrong card, or on a shifted outline,
    rarely above 0.7 (session 19)."""
    w, h = EMBED_SIZE
    inner = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32) + np.float32([w, h]) * ALIGN_MARGIN
    size = (round(w * (1 + 2 * ALIGN_MARGIN)), round(h * (1 + 2 * ALIGN_MARGIN)))
    to_view = cv2.getPerspectiveTransform(np.asarray(quad, np.float32), inner)
    view = cv2.cvtColor(cv2.warpPerspective(frame, to_view, size, flags=cv2.INTER_AREA), cv2.COLOR_BGR2GRAY)
    template = cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY).astype(np.float32)
    warp = np.float32([[1, 0, inner[0, 0]], [0, 1, inner[0, 1]]])
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, ALIGN_STEPS, 1e-3)
    try:
        fit, warp = cv2.findTransformECC(
            template, view.astype(np.float32), warp, cv2.MOTION_AFFINE, criteria, None, ECC_BLUR
        )
    except cv2.error:  # the search diverged, or the view holds no texture
        return NOT_ALIGNED, np.asarray(quad, np.float32)
    corners = inner - inner[0]
    in_view = corners @ warp[:, :2].T + warp[:, 2]
    fitted = cv2.perspectiveTransform(in_view[None], np.linalg.inv(to_view))[0].astype(np.float32)
    before, after = float(np.linalg.norm(quad[1] - quad[0])), float(np.linalg.norm(fitted[1] - fitted[0]))
    if not cv2.isContourConvex(fitted) or not ALIGN_SCALE[0] <= after / max(before, 1e-6) <= ALIGN_SCALE[1]:
        return NOT_ALIGNED, np.asarray(quad, np.float32)  # it fitted something else: a neighbour, a pile
    return float(fit), fitted


DISTINCT_SHARE = 0.4  # the share of a picture's pixels, those furthest from the catalogue's mean, its check reads


class DistinctKeys(NamedTuple):
    """A catalogue as the post-fit check keeps it (`distinct_fits`): the pictures' mean, and each picture's own
    departure from it on the pixels where it departs most."""

    mean: np.ndarray  # (h * w * 3,) the normalised pictures' mean
    departures: np.ndarray  # (k, h * w * 3) each normalised picture less the mean, zero off its distinct pixels


def normalised_cards(cards: np.ndarray) -> np.ndarray:
    """Cards at EMBED_SIZE ((n, h, w, 3) BGR uint8) as Lab vectors, colour weighed as the cells weigh it, each less
    its own mean and over its own spread: a change of light or exposure leaves them as they are."""
    flat = weighted_lab(cards).reshape(len(cards), -1, 3)
    flat = flat - flat.mean(axis=1, keepdims=True)
    flat = flat.reshape(len(cards), -1)
    return flat / (flat.std(axis=1, keepdims=True) + 1e-3)


def distinct_keys(pictures: np.ndarray) -> DistinctKeys:
    """`DistinctKeys` of a catalogue's pictures (at EMBED_SIZE, as a `Catalogue` keeps them)."""
    cards = normalised_cards(pictures)
    mean = cards.mean(axis=0)
    departures = cards - mean
    strength = np.abs(departures)
    cut = np.quantile(strength, 1 - DISTINCT_SHARE, axis=1, keepdims=True)
    return DistinctKeys(mean, np.where(strength >= cut, departures, 0.0).astype(np.float32))


def distinct_fits(keys: DistinctKeys, crops: np.ndarray, named: np.ndarray) -> np.ndarray:
    """How well each rectified card (crops at EMBED_SIZE, on the outline its picture was fitted to) shows what sets
    its named picture apart from the rest of the catalogue: the correlation, over that picture's most distinct
    pixels, of the card's and the picture's departures from the catalogue's mean (1: the picture itself, about 0: a
    card of the same design with other art). A card outside the catalogue shares its design's frame, text boxes and
    rarity colours with the cards inside, which the fit and the cell scores reward; only its art and its title set
    it apart (session 20: the outsiders named in session 19 were such)."""
    if not len(crops):
        return np.zeros(0, np.float32)
    ours = keys.departures[named]
    seen = (normalised_cards(crops) - keys.mean) * (ours != 0)
    num = (seen * ours).sum(axis=1)
    return num / (np.linalg.norm(seen, axis=1) * np.linalg.norm(ours, axis=1) + 1e-6)


def match_scores(catalogue_cells: np.ndarray, query_cells: np.ndarray) -> np.ndarray:
    """(n, k): how well each of n rectified cards matches each of k catalogue pictures. Each cell's correlation
    counts by how far it stands above that cell's mean over the catalogue, so cells every card shares (frames, text
    boxes) and cells a hand covers weigh nothing."""
    per_cell = np.matmul(query_cells.transpose(1, 0, 2), catalogue_cells.transpose(1, 2, 0))  # (cells, n, k)
    return (per_cell - per_cell.mean(axis=2, keepdims=True)).mean(axis=0)


@dataclass(frozen=True)
class Catalogue:
    """One picture per card (shrunk to EMBED_SIZE, upright): what the camera names catalogue cards against."""

    game: str
    name: str
    codes: tuple[str, ...]
    pictures: np.ndarray  # (k, h, w, 3) uint8 BGR
    source: str = ""

    def save(self, path: Path) -> Path:
        meta = {
            "format": FORMAT,
            "game": self.game,
            "name": self.name,
            "source": self.source,
            "codes": list(self.codes),
        }
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, pictures=self.pictures, meta=json.dumps(meta))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path) -> Catalogue:
        """A saved catalogue; a file that is not one, or of another format, is a clear error."""
        if not path.is_file():
            raise ModelError(f"{path}: no such catalogue file (make one: tabletop enrol --game G DIR)")
        try:
            with np.load(path) as data:
                meta = json.loads(str(data["meta"]))
                pictures = data["pictures"]
        except (OSError, KeyError, ValueError) as err:
            raise ModelError(f"{path}: not a catalogue file ({err}); {ENROL_AGAIN}") from err
        w, h = EMBED_SIZE
        if meta.get("format") != FORMAT or pictures.shape[1:] != (h, w, 3) or len(pictures) != len(meta["codes"]):
            raise ModelError(f"{path}: a catalogue of another format; {ENROL_AGAIN}")
        return cls(meta["game"], meta["name"], tuple(meta["codes"]), pictures, meta.get("source", ""))

    def without(self, codes: Sequence[str]) -> Catalogue:
        """The catalogue less some cards: how the bench shows it cards from outside the catalogue."""
        keep = [i for i, c in enumerate(self.codes) if c not in set(codes)]
        return Catalogue(self.game, self.name, tuple(self.codes[i] for i in keep), self.pictures[keep], self.source)


def catalogue_from_pictures(pictures: dict[str, np.ndarray], game: str, name: str, source: str = "") -> Catalogue:
    """A catalogue from one upright picture per card code (any size, BGR)."""
    codes = tuple(sorted(pictures))
    shrunk = [cv2.resize(pictures[c], EMBED_SIZE, interpolation=cv2.INTER_AREA) for c in codes]
    return Catalogue(game, name, codes, np.stack(shrunk), source)


class CellKeys(NamedTuple):
    """A catalogue as the cell matcher keeps it: each picture's cells, and the relative score it earns against
    itself (what a perfect sight of that card scores)."""

    cells: np.ndarray  # (k, cells, d)
    own: np.ndarray  # (k,)


class CellMatcher:
    """Cards compared cell by cell (`match_scores`): no model, the design that needs nothing but the pictures."""

    name = "cells"
    size = CELL_SIZE  # what the crops are cut at

    def keys(self, pictures: np.ndarray) -> CellKeys:
        cells = cards_cells(np.stack([cv2.resize(p, CELL_SIZE, interpolation=cv2.INTER_AREA) for p in pictures]))
        return CellKeys(cells, np.maximum(np.diagonal(match_scores(cells, cells)), 1e-3))

    def scores(self, catalogue: CellKeys, crops: np.ndarray) -> np.ndarray:
        """Each card's relative score (`match_scores`) as a share of the one its own picture earns: 1 for a perfect
        match whatever the card. A card much like others in its catalogue earns less relative score than a
        distinctive one even when seen perfectly, so one cut-off for raw scores would ask more of some cards than of
        others (session 19: clean, whole cards scored 0.24-0.30)."""
        return match_scores(catalogue.cells, cards_cells(crops)) / catalogue.own[None, :]


class EmbedderMatcher:
    """Cards compared by a learnt embedding (`vision.train.catalogue_net`): cosine similarity of unit vectors."""

    name = "embedder"
    size = EMBED_SIZE

    def __init__(self, path: Path, threads: int = 2) -> None:
        from vision.recognise.models import session

        self.session = session(path, threads)

    def keys(self, pictures: np.ndarray) -> np.ndarray:
        from vision.recognise.reader import bgr_blob

        if not len(pictures):
            return np.zeros((0, 1), np.float32)
        return self.session.run(None, {"images": bgr_blob(pictures)})[0]

    def scores(self, catalogue: np.ndarray, crops: np.ndarray) -> np.ndarray:
        return self.keys(crops) @ catalogue.T


def opaque(picture: np.ndarray) -> np.ndarray:
    """A picture as BGR: a transparent surround (a card's rounded corners) laid on mid grey, as neutral as a table."""
    if picture.ndim == 2:
        return cv2.cvtColor(picture, cv2.COLOR_GRAY2BGR)
    if picture.shape[2] == 3:
        return picture
    alpha = picture[..., 3:].astype(np.float32) / 255.0
    return (picture[..., :3] * alpha + 128.0 * (1.0 - alpha)).astype(np.uint8)


def catalogue_of_piece_set(folder: Path) -> Catalogue:
    """A piece set's catalogue: its cards and their backs."""
    from vision.synth.pieces import load_piece_set

    pieces = load_piece_set(folder)
    cards = [code for code in pieces.codes if pieces.pieces[code].kind == "card"]
    names = sorted({*cards, *(pieces.side(code, False) for code in cards)})
    pictures = {n: opaque(pieces.image(n)) for n in names}
    return catalogue_from_pictures(pictures, pieces.game, pieces.name, str(folder))


@dataclass(frozen=True)
class CatalogueThresholds(ThresholdFile):
    """The cut-offs between a match and a report, chosen on validation designs (`vision.train.tune_catalogue`)."""

    corner: float = 0.2  # finder score for a corner to propose a card
    min_score: float = 0.12  # relative match score below which a proposal names no card
    min_margin: float = 0.0  # ... and how far it must stand above the next-best card
    min_alignment: float = 0.8  # ... and how well its picture must fit the frame once moved onto it (`align`)
    align_floor: float = 0.05  # a proposal matching below this on the finder's outline is not worth fitting
    min_distinct: float = -1.0  # ... and how well it shows what sets its picture apart (`distinct_fits`; -1: off)


def thresholds_file(game: str, matcher: str) -> str:
    """The cut-offs of a game's catalogue cards for one matcher (their scores mean different things)."""
    return f"{game}-catalogue-{matcher}-thresholds.json"


@dataclass(frozen=True)
class Proposal:
    quad: np.ndarray  # (4, 2) TL, TR, BR, BL of the card as its best picture is printed
    code: str
    score: float
    margin: float
    candidates: tuple[tuple[str, float], ...]
    alignment: float = NOT_ALIGNED  # how well its picture fits the frame once moved onto it (`align`)
    distinct: float = NOT_ALIGNED  # how well it shows what sets its picture apart, once fitted (`distinct_fits`)


def clockwise(quad: np.ndarray) -> np.ndarray:
    """A card outline whose first edge is its short one, as TL, TR, BR, BL of an unmirrored card: a corner whose
    edges turn the other way is a card's top-right (or bottom-left), so its neighbour along the short edge is the
    top-left."""
    q = np.asarray(quad, np.float32)
    (x1, y1), (x3, y3) = q[1] - q[0], q[3] - q[0]
    return q if x1 * y3 - y1 * x3 >= 0 else q[[1, 0, 3, 2]]


def edge_outline(start: np.ndarray, end: np.ndarray, off: np.ndarray, short_edge: bool) -> np.ndarray:
    """The card with an edge from `start` to `end` and its other two corners `off` beyond them, listed clockwise
    from its short edge (`clockwise`): the given edge first where it is the short one."""
    quad = np.array([start, end, end + off, start + off], np.float32)
    return clockwise(quad if short_edge else np.roll(quad, -1, axis=0))


TRIPLE_TOLERANCE = 0.1  # a third corner confirms a pair when it lies this share of the card's width from its place
MAX_PROPOSALS = 400  # outlines matched in a frame at most (best-scored corners' first)
MAX_CARD_PX = 500.0  # px: no card edge is longer in a 720p frame (the finder is trained on cards up to about 450 px)


def triple_quads(points: np.ndarray) -> list[np.ndarray]:
    """Cards outlined by the corner points alone, which the finder places to about 2% of a card's width, where its
    edge directions are far less sure: two points are one edge of a card (its short or its long one, the card on
    either side), and a third point where that card's next corner must lie confirms it. One card is found from
    several pairs (`distinct_outlines` keeps one); each is listed clockwise from a short edge."""
    p = np.asarray(points, np.float32).reshape(-1, 2)
    n = len(p)
    if n < 3:
        return []
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    edge = p[j] - p[i]
    length = np.linalg.norm(edge, axis=1)
    keep = (length >= MIN_WIDTH * 0.8) & (length <= MAX_CARD_PX)
    i, j, edge, length = i[keep], j[keep], edge[keep], length[keep]
    normal = np.stack([-edge[:, 1], edge[:, 0]], axis=1) / length[:, None]  # the edge turned a quarter clockwise
    found: list[np.ndarray] = []
    for across in (CARD_ASPECT, 1 / CARD_ASPECT):  # the pair is a short edge (the card runs on), or a long one
        other = normal * (length * across)[:, None]
        for corner in (p[j] + other, p[i] + other):
            near = np.linalg.norm(corner[:, None, :] - p[None, :, :], axis=2).min(axis=1)
            width = np.minimum(length, length * across)
            for k in np.nonzero(near < TRIPLE_TOLERANCE * width)[0]:
                found.append(edge_outline(p[i[k]], p[j[k]], other[k], across > 1))
    return found


PAIR_COS = 0.96  # a corner's edge points at another corner when their directions agree this well (about 16 deg)
PAIR_LENGTH = (0.6, 1.6)  # ... and the other corner lies within these shares of that edge's length


def pair_quads(corners: Sequence[Corner]) -> list[np.ndarray]:
    """Cards outlined by two corners along one edge, where no third corner shows (the rest of the card under
    others): an edge of corner i points at corner j, so the two points are that edge's ends, and the card lies on
    the side i's other edge points to. Whether the edge is the short or the long one the finder often has wrong, so
    both are proposed."""
    if len(corners) < 2:
        return []
    p = np.array([c.point for c in corners], np.float32)
    out: list[np.ndarray] = []
    for i, c in enumerate(corners):
        d = p - p[i]
        length = np.linalg.norm(d, axis=1)
        ok = (length >= MIN_WIDTH * 0.8) & (length <= MAX_CARD_PX)
        for along, other in ((c.a, c.b), (c.b, c.a)):
            reach = max(float(np.linalg.norm(along)), 1e-6)
            cos = (d @ (along / reach)) / np.maximum(length, 1e-6)
            agree = (length >= PAIR_LENGTH[0] * reach) & (length <= PAIR_LENGTH[1] * reach)
            for j in np.nonzero(ok & agree & (cos >= PAIR_COS))[0]:
                normal = np.array([-d[j, 1], d[j, 0]], np.float32) / length[j]
                if float(normal @ other) < 0:
                    normal = -normal
                for across in (CARD_ASPECT, 1 / CARD_ASPECT):
                    out.append(edge_outline(p[i], p[j], normal * length[j] * across, across > 1))
    return out


def distinct_outlines(quads: Sequence[np.ndarray], limit: int | None = None) -> list[np.ndarray]:
    """The first of each set of outlines on the same card (centres and widths within a tenth of the width), in the
    order given, at most `limit` of them."""
    if not len(quads):
        return []
    q = np.asarray(quads, np.float32)
    centres = q.mean(axis=1)
    widths = np.linalg.norm(q[:, 1] - q[:, 0], axis=1)
    kept: list[int] = []
    for k in range(len(q)):
        if kept:
            near = np.linalg.norm(centres[kept] - centres[k], axis=1) <= 0.1 * widths[k]
            if (near & (np.abs(widths[kept] - widths[k]) <= 0.1 * widths[k])).any():
                continue
        kept.append(k)
        if limit is not None and len(kept) >= limit:
            break
    return [q[k] for k in kept]


def corner_outlines(corner: Corner, outline: np.ndarray | None = None) -> list[np.ndarray]:
    """The cards a corner (or its group's outline) may belong to: as its edges say, with the long side stretched to
    the card's shape, and with its short and long edges the other way round."""
    p, a, b = corner.point, corner.a, corner.b
    la, lb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    shapes = []
    if outline is not None:
        shapes.append(clockwise(np.asarray(outline, np.float32)))
    for short, long_, length in ((a, b, la), (b, a, lb)):
        if length < MIN_WIDTH:
            continue
        long_dir = long_ / max(float(np.linalg.norm(long_)), 1e-6)
        tall = long_dir * length * CARD_ASPECT
        shapes.append(clockwise(np.array([p, p + short, p + short + tall, p + tall], np.float32)))
    return shapes


class CatalogueRecogniser:
    """Corner finder (and refiner) plus a catalogue: frame in, named catalogue cards out, in the contract of the
    other recognisers (`CardDetection`, labels are the catalogue's codes)."""

    def __init__(
        self,
        catalogue: Catalogue,
        models: Path | None = None,
        threads: int = 2,
        calibration: TableCalibration | None = None,
        thresholds: CatalogueThresholds | None = None,
        matcher: str = "auto",
    ) -> None:
        from vision.recognise.rectified import CORNER_REFINER_FILE, CORNERS_FILE, NUMBER_CORNERS_FILE

        root = models or models_dir()
        # the finder fine-tuned on catalogue cards, else the one that has seen number cards, else the playing cards'
        finder = next(
            (root / f for f in (CATALOGUE_CORNERS_FILE, NUMBER_CORNERS_FILE) if (root / f).is_file()),
            root / CORNERS_FILE,
        )
        self.finder = CornerFinder(finder, threads)
        refiner = root / CORNER_REFINER_FILE
        self.refiner = CornerRefiner(refiner, threads) if refiner.is_file() else None
        embedder = root / EMBEDDER_FILE
        if matcher not in MATCHERS:
            raise ValueError(f"unknown matcher '{matcher}' (expected one of {', '.join(MATCHERS)})")
        if matcher == "embedder" or (matcher == "auto" and embedder.is_file()):
            self.matcher: CellMatcher | EmbedderMatcher = EmbedderMatcher(embedder, threads)
        else:
            self.matcher = CellMatcher()
        # per catalogue (by id; the catalogue is held beside its keys, so no other can take its id meanwhile)
        self._keys: dict[int, tuple[Catalogue, Any, DistinctKeys]] = {}
        self.catalogue = catalogue
        self.calibration = calibration
        self.thresholds = thresholds or CatalogueThresholds.load(
            root / thresholds_file(catalogue.game, self.matcher.name)
        )

    @property
    def catalogue(self) -> Catalogue:
        return self._catalogue

    @catalogue.setter
    def catalogue(self, catalogue: Catalogue) -> None:
        """Another catalogue (a player's enrolment, or a bench design's): its pictures' keys made once and kept."""
        self._catalogue = catalogue
        self.game = catalogue.game
        if id(catalogue) not in self._keys:
            pictures = catalogue.pictures
            self._keys[id(catalogue)] = (catalogue, self.matcher.keys(pictures), distinct_keys(pictures))
        _, self.catalogue_keys, self.distinct_keys = self._keys[id(catalogue)]

    def find(self, frame: np.ndarray, min_score: float | None = None) -> list[Corner]:
        corners = self.finder.find(frame, self.thresholds.corner if min_score is None else min_score)
        if self.refiner is not None:
            corners = self.refiner.refine(frame, corners, True, True)
        return corners

    def match(self, frame: np.ndarray | Pyramid, quads: Sequence[np.ndarray]) -> np.ndarray:
        """(n, k): how well the card inside each outline (TL, TR, BR, BL as printed) matches each catalogue card."""
        pyramid = frame if isinstance(frame, Pyramid) else Pyramid(frame)
        crops = np.stack([rectify(pyramid, q, self.matcher.size) for q in quads])
        return self.matcher.scores(self.catalogue_keys, crops)

    def propose(self, frame: np.ndarray, corners: Sequence[Corner]) -> list[Proposal]:
        """Every outline the corners propose (`distinct_outlines` of them), matched both ways up; the better way
        kept."""
        from vision.recognise.rectified import card_outline, group_corners

        outlines: list[np.ndarray] = []
        for group in group_corners(corners):  # best-scored corners first
            members = [corners[k] for k in group]
            outlines += corner_outlines(members[0], card_outline(members) if len(members) > 1 else None)
        ranked = sorted(corners, key=lambda c: -c.score)
        outlines += triple_quads(np.array([c.point for c in ranked], np.float32))
        outlines += pair_quads(ranked)
        quads: list[np.ndarray] = []
        owner: list[int] = []
        for g, q in enumerate(distinct_outlines(outlines, MAX_PROPOSALS)):
            quads += [q, np.roll(q, 2, axis=0)]
            owner += [g, g]
        if not quads:
            return []
        scores = self.match(frame, quads)
        best: dict[int, Proposal] = {}
        for i, row in enumerate(scores):
            if owner[i] not in best or best[owner[i]].score < float(row.max()):
                best[owner[i]] = self.ranked(row, quads[i])
        return list(best.values())

    def aligned(self, frame: np.ndarray, proposals: Sequence[Proposal], distinct: bool | None = None) -> list[Proposal]:
        """Each proposal's outline made exact, then its card named again on it. The matcher's first picture is laid
        over the frame and moved until it fits (`align`): a design's cards share their layout, so the fit finds
        where the card lies even when the picture is not the card's; the relative cell scores (`match_scores`) on
        the exact outline then say which card it is, far more surely than on the finder's rough outline. With
        `distinct` (by default: where the cut-offs use it) each is also checked for what sets its named picture
        apart (`distinct_fits`); unchecked, its `distinct` stays NOT_ALIGNED."""
        if not proposals:
            return []
        index = {code: k for k, code in enumerate(self.catalogue.codes)}
        fitted = [align(frame, p.quad, self.catalogue.pictures[index[p.code]]) for p in proposals]
        quads = [quad for _fit, quad in fitted]
        pyramid = Pyramid(frame)
        named = [self.ranked(row) for row in self.match(pyramid, quads)]
        if distinct is None:
            distinct = self.thresholds.min_distinct > NOT_ALIGNED
        fits = np.full(len(quads), NOT_ALIGNED, np.float32)
        if distinct:
            crops = np.stack([rectify(pyramid, q, EMBED_SIZE) for q in quads])
            fits = distinct_fits(self.distinct_keys, crops, np.array([index[n.code] for n in named]))
        return [
            dataclasses.replace(n, quad=quad, alignment=fit, distinct=float(d)) if fit > NOT_ALIGNED else p
            for p, (fit, quad), n, d in zip(proposals, fitted, named, fits, strict=True)
        ]

    def ranked(self, row: np.ndarray, quad: np.ndarray | None = None) -> Proposal:
        """A proposal from one outline's match scores: the best card, its margin over the next, the best three."""
        order = np.argsort(-row)[:3]
        top = float(row[order[0]])
        margin = top - float(row[order[1]]) if len(order) > 1 else top
        candidates = tuple((self.catalogue.codes[k], float(row[k])) for k in order)
        outline = np.zeros((4, 2), np.float32) if quad is None else quad
        return Proposal(outline, self.catalogue.codes[int(order[0])], top, margin, candidates)

    def recognise(self, frame: np.ndarray) -> list[CardDetection]:
        t = self.thresholds
        proposals = self.propose(frame, self.find(frame))
        return self.report(self.aligned(frame, [p for p in proposals if p.score >= t.align_floor]))

    def report(self, proposals: Sequence[Proposal]) -> list[CardDetection]:
        """The proposals clear enough to name a card, one per place, best first."""
        t = self.thresholds
        kept: list[Proposal] = []
        for p in sorted(proposals, key=lambda p: (-p.alignment, -p.score)):
            if p.score < t.min_score or p.margin < t.min_margin or p.alignment < t.min_alignment:
                continue
            if p.distinct < t.min_distinct:
                continue
            width = float(np.linalg.norm(p.quad[1] - p.quad[0]))
            centre = p.quad.mean(axis=0)
            if any(np.linalg.norm(k.quad.mean(axis=0) - centre) < SAME_PLACE * width for k in kept):
                continue
            kept.append(p)
        out = [
            CardDetection(
                label=p.code,
                face_up=not p.code.startswith(BACK_PREFIX),
                confidence=float(np.clip(p.alignment, 0.0, 1.0)),
                quad=p.quad,
                box=quad_bounds(p.quad),
                candidates=p.candidates,
            )
            for p in kept
        ]
        if self.calibration is not None:
            out = [self.calibration.place(d) for d in out]
        return out


class CatalogueError(ValueError):
    """An enrolment folder that cannot become a catalogue; the message names the files and cards at fault."""


STAND_IN_FILE = "{game}-catalogue.npz"  # the shipped catalogue of each game: its synthetic stand-in cards


def stand_in_catalogue(game: str, models: Path | None = None) -> Catalogue:
    """The catalogue a game's cards are named against until a player enrols theirs."""
    path = (models or models_dir()) / STAND_IN_FILE.format(game=game)
    if not path.is_file():
        raise ModelError(
            f"{path}: no catalogue of {game}'s cards (make it: python -m vision.recognise.catalogue stand-in "
            f"--game {game}), or enrol your own cards (tabletop enrol --game {game} DIR)"
        )
    return Catalogue.load(path)


def enrol_catalogue(folder: Path, game: str, expected: Sequence[str]) -> Catalogue:
    """A player's pictures of their cards, one per card named by its code (`dragon-egg.png`, `BACK_MONSTER.jpg`;
    any size, portrait or landscape), checked against the cards the game's catalogue holds. A picture that is
    missing, unreadable, named twice or named for no card is an error naming it, and nothing is written."""
    from vision.recognise.detect import IMAGE_SUFFIXES, read_image

    if not folder.is_dir():
        raise CatalogueError(f"{folder}: no such folder of card pictures")
    files: dict[str, list[Path]] = {}
    stray = []
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in IMAGE_SUFFIXES:
            files.setdefault(path.stem, []).append(path)
        elif path.is_file() and path.name != "pieces.json":
            stray.append(path.name)
    problems = []
    if stray:
        problems.append(f"not pictures: {', '.join(stray)}")
    unknown = sorted(set(files) - set(expected))
    if unknown:
        problems.append(f"pictures of no {game} card: {', '.join(unknown)}")
    twice = sorted(code for code, paths in files.items() if len(paths) > 1)
    if twice:
        problems.append(f"more than one picture of: {', '.join(twice)}")
    missing = sorted(set(expected) - set(files))
    if missing:
        problems.append(f"{len(missing)} cards without a picture: {', '.join(missing)}")
    pictures: dict[str, np.ndarray] = {}
    for code, paths in files.items():
        if code in expected and len(paths) == 1:
            try:
                picture = read_image(paths[0])
            except ValueError as err:
                problems.append(f"{paths[0].name}: {err}")
                continue
            pictures[code] = (
                picture if picture.shape[0] >= picture.shape[1] else cv2.rotate(picture, cv2.ROTATE_90_CLOCKWISE)
            )
    if problems:
        raise CatalogueError(f"{folder}: " + "; ".join(problems))
    return catalogue_from_pictures(pictures, game, folder.name, str(folder))


def main(argv: Sequence[str] | None = None) -> None:
    """`stand-in --game G`: the shipped catalogue of a game, from its procedural design 0 (`tabletop synth pieces`)."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=main.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("stand-in")
    p.add_argument("--game", required=True, choices=CATALOGUE_GAMES)
    p.add_argument("--models", type=Path, default=None)
    args = parser.parse_args(argv)
    from vision.synth.components import design_dir, render_designs

    with tempfile.TemporaryDirectory() as tmp:
        render_designs(args.game, tmp, [0], workers=1, progress=False)
        catalogue = catalogue_of_piece_set(design_dir(Path(tmp), args.game, 0))
    target = (args.models or models_dir()) / STAND_IN_FILE.format(game=args.game)
    stand_in = Catalogue(catalogue.game, f"{args.game} stand-ins", catalogue.codes, catalogue.pictures, "design 0")
    print(stand_in.save(target))


if __name__ == "__main__":
    main()
