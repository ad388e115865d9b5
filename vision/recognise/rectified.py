"""Frame in, cards out, by corners: the corner finder's corners, grouped into cards by geometry, read upright.

Why corners: a corner and its card's edges give the exact frame the index is printed in, so every index is read
at one scale and angle (`corners.corner_crop`) whatever the deck, the zoom or the tilt; and two corners belong to
one card exactly when each lies where the other's edges say a corner of its card must be, which separates the
strips of a cascade and the cards of a fan that a box would merge. A standard deck holds each card once, so groups
reading the same label are one card. A card whose every reading is below the confidence threshold is UNKNOWN with
its candidates; corners that read as no index at all (pips, court art, a back's pattern) never make a face-up card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.recognise.calibration import TableCalibration
from vision.recognise.corner_reader import CornerFrame, CornerReader
from vision.recognise.corner_refiner import CornerRefiner
from vision.recognise.corners import Corner, CornerFinder, handedness, printed_corner, swapped_edges
from vision.recognise.crops import CORNER_INDEX
from vision.recognise.finder import quad_bounds
from vision.recognise.labels import BACK, GAME_LABELS, JOKER, NONE, ONE_OF_EACH, READER_CLASSES
from vision.recognise.models import ThresholdFile, models_dir
from vision.recognise.reader import Reading
from vision.recognise.recogniser import UNKNOWN, CardDetection, group_probs

if TYPE_CHECKING:
    from vision.recognise.enrol_rectified import RectifiedDeckHead

CORNERS_FILE = "cards-corners.onnx"
CORNER_READER_FILE = "cards-corner-reader.onnx"
CORNER_REFINER_FILE = "cards-corner-refiner.onnx"  # optional: without it, corners are read along the finder's edges
RECTIFIED_THRESHOLDS_FILE = "cards-corners-thresholds.json"
# Number cards (LOOP, Bag-O-Loot; issue 20): the same refiner and grouping, a reader of numbers and colours, and each
# game's own cut-offs (its cards, layouts and decks differ)
NUMBER_READER_FILE = "numbers-corner-reader.onnx"
READER_FILES = {"cards": CORNER_READER_FILE, "numbers": NUMBER_READER_FILE}
# ... and the card finder fine-tuned on number cards beside playing cards (session 18), where the models have it
NUMBER_CORNERS_FILE = "numbers-corners.onnx"
FINDER_FILES = {"cards": CORNERS_FILE, "numbers": NUMBER_CORNERS_FILE}


def thresholds_file(game: str) -> str:
    """The cut-offs file of a game's recogniser, beside its models."""
    return RECTIFIED_THRESHOLDS_FILE if game == "loot-the-loop" else f"{game}-corners-thresholds.json"


SAME_CARD = 0.18  # two corners are one card's when each lies this many card widths from where the other puts one
WIDTH_RATIO = 1.35  # ...and their cards' widths agree within this ratio
ASPECT = 88 / 63  # a poker card's height over its width, where only a region says where a card is


@dataclass(frozen=True)
class RectifiedThresholds(ThresholdFile):
    """Every cut-off between seeing and reporting, chosen together on the validation families."""

    corner: float = 0.35  # corner finder score for a corner to be read
    none_reject: float = 0.5  # a corner read as no index with at least this probability adds no evidence
    min_confidence: float = 0.5  # below this a face-up card is UNKNOWN rather than a guess
    lone_down: float = 0.6  # an indexless card is face down when two corners see it, or one this sure
    face_up: float = 0.5  # ...unless its corners are a face's at least this surely (a reader with a face head)
    # A JOKER needs this much belief, or it is UNKNOWN: two cards in 54, yet the reader's answer for any corner it
    # has never seen the like of (0: no stricter than any other label; above 1: a blank face is never called one)
    joker: float = 0.0
    # A card read by one corner only needs this much belief, or it is UNKNOWN: one glimpse of one index is wrong far
    # more often than two that agree (session 14, validation: half the one-corner cards read wrong)
    lone_up: float = 0.0
    # The card's probabilities are its corners' combined evidence softened by this (p ~ exp(log p / T)), chosen on
    # validation scenes so that a card said at 0.8 is right about 80% of the time (the tracker weighs by them)
    temperature: float = 1.0
    # What a card's top probability p has meant: the share of such reports that were right on validation scenes, at
    # p = 0, 0.1, ..., 1 (a monotone fit), for cards read by one corner and by two or more. The tracker weighs its
    # hypotheses by these beliefs; raw, a card said at 0.98 was right 66-80% of the time (session 14). Empty: raw.
    calibration_lone: tuple[float, ...] = ()
    calibration_multi: tuple[float, ...] = ()
    calibration_blank: tuple[float, ...] = ()  # the same for a face read by no index (a JOKER or UNKNOWN by its face)
    # A corner is read only if the reader's card head (where it has one) gives it at least this: the finder also
    # fires on phones, tiles, dice, pips and blobs on the cloth, which became face-down cards (session 16)
    min_card: float = 0.0
    # A face-down card whose centre lies under a face-up card is reported when its corners show beyond it (True), or
    # taken for the face's own plain corners, as before session 16 (False). On, the bench reads backs far better
    # (test: face down 47 -> 62%); the tracker turns it off (`tracker.replay.make_recognise`)
    backs_under_faces: bool = False
    # Each found corner's edges (and its point) measured again by the corner refiner, where the models have one: the
    # finder's edges cost the reader 14 points (session 13); the refiner's patch sees one corner at 40 px per card
    # width (session 17)
    refine_edges: bool = True
    refine_point: bool = True
    refine_lengths: bool = True
    # A corner read as showing no index is read again with its short and long edges swapped, and taken that way
    # round where the reader then sees an index with "none" below this (0: never; `turn_sideways`)
    sideways: float = 0.0
    # Session 23: the finder also looks at the frame shrunk COARSE times, for cards too large for its one pass (a
    # phone close-up: `with_close_ups`), and an UNKNOWN made of a surer card's corners is dropped (`without_fragments`)
    coarse: bool = True
    fragments: bool = True


def same_card(i: Corner, j: Corner) -> bool:
    """Each corner lies near a corner (not the first) of the card the other one predicts, and the widths agree.
    Which side is up is not asked: the reading decides that for the whole card."""
    return bool(same_card_matrix([i, j])[0, 1])


def same_card_matrix(corners: Sequence[Corner]) -> np.ndarray:
    """`same_card` for every pair at once (n x n booleans): grouping runs on every frame."""
    n = len(corners)
    if n == 0:
        return np.zeros((0, 0), bool)
    points = np.array([c.point for c in corners], np.float32)
    predicted = np.array([c.card_quad()[1:] for c in corners], np.float32)  # (n, 3, 2)
    widths = np.maximum(np.array([c.width for c in corners], np.float32), 1.0)
    # near[i, j]: corner j lies near a corner that i predicts
    near = np.linalg.norm(predicted[:, None, :, :] - points[None, :, None, :], axis=3).min(axis=2)
    tol = SAME_CARD * np.minimum(widths[:, None], widths[None, :])
    ratio = np.maximum(widths[:, None], widths[None, :]) / np.minimum(widths[:, None], widths[None, :])
    mutual = np.maximum(near, near.T)  # each must lie near a corner the other predicts
    linked = (mutual < tol) & (ratio <= WIDTH_RATIO)
    np.fill_diagonal(linked, False)
    return linked


def group_corners(corners: Sequence[Corner]) -> list[list[int]]:
    """Corners joined into cards (union of pairwise same-card links), largest score first within a group."""
    parent = list(range(len(corners)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for i, j in zip(*np.nonzero(np.triu(same_card_matrix(corners))), strict=True):
        parent[root(int(j))] = root(int(i))
    groups: dict[int, list[int]] = {}
    for k in range(len(corners)):
        groups.setdefault(root(k), []).append(k)
    return [sorted(g, key=lambda k: -corners[k].score) for g in groups.values()]


def card_outline(corners: Sequence[Corner]) -> np.ndarray:
    """A card's outline from its corners: the best corner's four predicted slots, each replaced by the mean of the
    corners seen there (a corner seen is worth more than one predicted from across the card)."""
    best = corners[0].card_quad()
    seen: list[list[np.ndarray]] = [[] for _ in range(4)]
    for c in corners:
        seen[int(np.linalg.norm(best - c.point, axis=1).argmin())].append(c.point)
    return np.array([np.mean(s, axis=0) if s else best[k] for k, s in enumerate(seen)], np.float32)


SAME_COPY = 0.5  # two groups reading one label lie on one card when their outlines' centres are this many widths apart


def copy_key(
    by_label: dict[tuple[str, int], list[tuple[list[Corner], list[int]]]], label: str, group: Sequence[Corner]
) -> tuple[str, int]:
    """Where a game prints a card several times (Bag-O-Loot's coins), which copy a group reading `label` belongs
    to: the one already seen whose card lies where this group's does (its corners were not grouped: one hidden
    between them, or edges too far off), else a new one."""
    centre = card_outline(group).mean(axis=0)
    width = min(float(np.linalg.norm(c.a)) for c in group)
    for key, parts in by_label.items():
        if key[0] == label and np.linalg.norm(card_outline(parts[0][0]).mean(axis=0) - centre) < SAME_COPY * width:
            return key
    return label, len(by_label)


def region_frames(quad: np.ndarray, region: tuple[float, float] = CORNER_INDEX) -> list[CornerFrame]:
    """A corner index region (listed as `crops.corner_quads` lists it: its first edge across the card) as the four
    corner frames it could belong to: which of its corners is the card's is not written in the region, so the
    reader is asked all four ways."""
    q = np.asarray(quad, np.float32)
    width = float(np.linalg.norm(q[1] - q[0])) / region[0]
    out: list[CornerFrame] = []
    for k in range(4):
        point, across, down = printed_corner(q, k)
        a = across / max(float(np.linalg.norm(across)), 1e-6) * width
        b = down / max(float(np.linalg.norm(down)), 1e-6) * width * ASPECT
        out.append((point, a, b))
    return out


class RectifiedRecogniser:
    """Corner finder plus rectified reader plus grouping; optionally an enrolled deck (`enrol_rectified`: its
    corners also matched against its own pictures) and a table calibration."""

    def __init__(
        self,
        models: Path | None = None,
        threads: int = 2,
        calibration: TableCalibration | None = None,
        thresholds: RectifiedThresholds | None = None,
        deck: RectifiedDeckHead | None = None,
        game: str = "loot-the-loop",
    ) -> None:
        root = models or models_dir()
        if game not in GAME_LABELS:
            raise ValueError(f"the camera reads no cards of '{game}' yet (games read: {', '.join(GAME_LABELS)})")
        self.game = game
        vocabulary = GAME_LABELS[game][0]
        finder = root / FINDER_FILES[vocabulary]
        self.finder = CornerFinder(finder if finder.is_file() else root / CORNERS_FILE, threads)
        self.reader = CornerReader(root / READER_FILES[vocabulary], threads, deck, game)
        refiner = root / CORNER_REFINER_FILE
        self.refiner = CornerRefiner(refiner, threads) if refiner.is_file() else None
        self.calibration = calibration
        self.thresholds = thresholds or RectifiedThresholds.load(root / thresholds_file(game))

    @property
    def deck(self) -> RectifiedDeckHead | None:
        """The enrolled deck the reader reads with (None: the shipped reader alone); set it to change decks."""
        return self.reader.deck

    @deck.setter
    def deck(self, head: RectifiedDeckHead | None) -> None:
        self.reader.deck = head

    @property
    def classes(self) -> tuple[str, ...]:
        return self.reader.classes

    def find(self, frame: np.ndarray, min_score: float | None = None, large: bool = False) -> list[Corner]:
        """The corners the finder scores at least `min_score` (default: the `corner` cut-off), their edges measured
        again by the refiner where there is one; `large`: those of cards too large for the finder's first pass."""
        t = self.thresholds
        score = t.corner if min_score is None else min_score
        corners = self.finder.find_large(frame, score) if large else self.finder.find(frame, score)
        if self.refiner is not None and t.refine_edges:
            corners = self.refiner.refine(frame, corners, bool(t.refine_point), bool(t.refine_lengths))
        return corners

    def read_regions(self, frame: np.ndarray, quads: Sequence[np.ndarray]) -> list[dict[str, float]]:
        """Label probabilities for index regions the caller chose (the tracker knows where a covered card's index
        must lie): each region read all four ways its corner could lie, the most index-like reading kept."""
        frames = [f for q in quads for f in region_frames(q)]
        probs = self.reader.read(frame, frames).probs.reshape(len(quads), 4, -1)
        best = probs[:, :, self.reader.none_column].argmin(axis=1)
        return [dict(zip(self.classes, map(float, probs[i, best[i]]), strict=True)) for i in range(len(quads))]

    def read_corners(self, frame: np.ndarray, corners: Sequence[Corner]) -> Reading:
        """What the reader says of each corner."""
        return self.reader.read(frame, [(c.point, c.a, c.b) for c in corners])

    def turned_where_sideways(
        self, frame: np.ndarray, corners: Sequence[Corner], reading: Reading
    ) -> tuple[list[Corner], Reading]:
        """`turn_sideways` on this frame: only the corners read as showing no index are read again, turned."""
        t = self.thresholds
        if t.sideways <= 0 or not len(corners):
            return list(corners), reading
        rows = np.flatnonzero(reading.probs[:, self.reader.none_column] >= t.none_reject)
        turned = [turned_corner(corners[k]) for k in rows]
        other = self.read_corners(frame, turned)
        return turn_sideways(corners, reading, rows, turned, other, t, self.reader.none_column)

    def cards(self, frame: np.ndarray, corners: Sequence[Corner]) -> list[CardDetection]:
        """The cards these corners make, as read."""
        reading = self.read_corners(frame, corners)
        corners, reading = self.turned_where_sideways(frame, corners, reading)
        return assemble_read(corners, reading, self.thresholds, self.classes, self.game in ONE_OF_EACH)

    def recognise(self, frame: np.ndarray) -> list[CardDetection]:
        out = self.cards(frame, self.find(frame))
        if self.thresholds.coarse:
            large = self.find(frame, large=True)
            if large:
                out = with_close_ups(out, self.cards(frame, large))
        if self.calibration is not None:
            out = [self.calibration.place(d) for d in out]
        return out


def turned_corner(corner: Corner) -> Corner:
    """The corner with its short and long edges the other way round (`corners.swapped_edges`)."""
    a, b = swapped_edges(corner.a, corner.b)
    return replace(corner, a=a, b=b)


def turn_sideways(
    corners: Sequence[Corner],
    reading: Reading,
    rows: np.ndarray,
    turned: Sequence[Corner],
    other: Reading,
    t: RectifiedThresholds,
    none: int,
) -> tuple[list[Corner], Reading]:
    """The corners and their reading, each corner `rows[j]` replaced by `turned[j]` (read as `other`'s row j) where
    it read as showing no index (`none_reject`) and the reader sees an index in it turned, with "none" below
    `t.sideways` (0: never). The finder swaps the short and long edges of about one found corner in seven; a swapped
    corner's crop shows its index on its side, which the reader is taught to call no index (session 20)."""
    out = list(corners)
    if t.sideways <= 0 or not len(rows):
        return out, reading
    take = np.flatnonzero((reading.probs[rows, none] >= t.none_reject) & (other.probs[:, none] < t.sideways))
    for j in take:
        out[rows[j]] = turned[j]
    return out, reading_with_rows(reading, rows[take], other, take)


def reading_with_rows(reading: Reading, rows: np.ndarray, other: Reading, picked: np.ndarray) -> Reading:
    """`reading` with its `rows` replaced by `other`'s rows `picked` (in the same order), every array it has."""
    if not len(rows):
        return reading

    def merged(mine: np.ndarray | None, theirs: np.ndarray | None) -> np.ndarray | None:
        if mine is None or theirs is None:
            return mine
        out = mine.copy()
        out[rows] = theirs[picked]
        return out

    return Reading(
        merged(reading.probs, other.probs),  # type: ignore[arg-type]
        merged(reading.features, other.features),
        merged(reading.face, other.face),
        merged(reading.card, other.card),
    )


def assemble_read(
    corners: Sequence[Corner],
    reading: Reading,
    t: RectifiedThresholds,
    classes: Sequence[str] = READER_CLASSES,
    one_of_each: bool = True,
) -> list[CardDetection]:
    """The found corners (`corners`, as read in `reading`) that score at least `t.corner` and that the card head
    calls a card's at least `t.min_card`, made into cards (`assemble_corners`)."""
    keep = np.array([c.score >= t.corner for c in corners], bool)
    if reading.card is not None and len(corners):
        keep &= reading.card >= t.min_card
    rows = np.flatnonzero(keep)
    face = reading.face[rows] if reading.face is not None else None
    return assemble_corners([corners[k] for k in rows], reading.probs[rows], t, face, classes, one_of_each)


def assemble_corners(
    corners: Sequence[Corner],
    probs: np.ndarray,
    t: RectifiedThresholds,
    face: np.ndarray | None = None,
    classes: Sequence[str] = READER_CLASSES,
    one_of_each: bool = True,
) -> list[CardDetection]:
    """Corners and their readings (rows in `corners` order) made into cards: one per label. A card some corner of
    which shows an index is face up. A card none of whose corners does is there when two corners or one sure one
    say so: face down (a face-up card shows an index in at least one of any two corners), unless the reader's face
    head (`face`, per corner, where the reader has one) says its corners are a face's: then it is a face with no
    index to read (`indexless_face`). `classes` names the columns of `probs` (the reader's labels for its game);
    where a game prints a card more than once (not `one_of_each`), groups reading one label stay apart."""
    none = list(classes).index(NONE)
    labels = [c for c in classes if c != NONE]
    columns = [list(classes).index(c) for c in labels]
    log_p = np.log(np.clip(probs[:, columns], 1e-6, 1.0)) if len(corners) else np.zeros((0, len(labels)))
    if len(corners):
        log_p -= np.log(np.exp(log_p).sum(axis=1, keepdims=True))
    by_label: dict[tuple[str, int], list[tuple[list[Corner], list[int]]]] = {}
    backs: list[CardDetection] = []
    plain_faces: list[CardDetection] = []
    seen: list[np.ndarray] = []  # each back's corner points, in the order of `backs`
    for members in group_corners(corners):
        group = [corners[k] for k in members]
        readable = [k for k in members if probs[k, none] < t.none_reject]
        if readable:
            label = labels[int(group_probs(log_p[readable]).argmax())]
            key = (label, 0) if one_of_each else copy_key(by_label, label, group)
            by_label.setdefault(key, []).append((group, readable))
            continue
        score = max(c.score for c in group)
        if len(group) == 1 and score < t.lone_down:
            continue  # one unsure corner with nothing to read is no card
        face_score = float(np.mean(face[members])) if face is not None else 0.0
        if face is not None and face_score >= t.face_up:
            plain_faces.append(indexless_face(group, face_score, t.joker, t.calibration_blank))
        else:
            quad = card_outline(group)
            backs.append(CardDetection(BACK, False, score, quad, quad_bounds(quad)))
            seen.append(np.array([c.point for c in group]))
    out: list[CardDetection] = []
    points: list[np.ndarray] = []  # the corners each face-up card was read by
    for parts in by_label.values():
        readable = [r for _, rows in parts for r in rows]
        group = max((g for g, _ in parts), key=lambda g: (len(g), g[0].score))
        p = group_probs(log_p[readable] / t.temperature)
        order = np.argsort(-p)[:3]
        quad = card_outline(group)
        best = float(p[order[0]])
        floor = t.min_confidence if len(readable) > 1 else max(t.min_confidence, t.lone_up)
        sure = best >= (max(floor, t.joker) if labels[order[0]] == JOKER else floor)
        beliefs = calibrated(p[order], t.calibration_lone if len(readable) == 1 else t.calibration_multi)
        out.append(
            CardDetection(
                label=labels[order[0]] if sure else UNKNOWN,
                face_up=True,
                confidence=float(beliefs[0]),
                quad=quad,
                box=quad_bounds(quad),
                indices=len(readable),
                candidates=tuple((labels[j], float(b)) for j, b in zip(order, beliefs, strict=True)),
                index_boxes=tuple(quad_bounds(corners[r].region_quad()) for r in readable),
            )
        )
        points.append(np.array([corners[r].point for r in readable]))
    plain = distinct_backs(plain_faces, out)  # a face's plain corners beside its read ones: by its centre
    backs = distinct_backs(backs, out + plain, seen if t.backs_under_faces else None)
    # a fragment is dropped after it has done its part: the corners of backs lying on it are its card's, too
    return (without_fragments(out, points) if t.fragments else out) + plain + backs


def without_fragments(cards: Sequence[CardDetection], points: Sequence[np.ndarray]) -> list[CardDetection]:
    """The face-up cards less the UNKNOWNs every corner of which (`points`: the corners each was read by, in order)
    lies on a surer card's face: their corners were that card's own, misjudged (session 23, validation scenes: 64
    of the 81 UNKNOWNs this drops lay on a card named by another report or on no card). A named card is not dropped
    so: a card under another in a pile shows its index near the top card's edge, and that cost 3 points of recall."""
    faces = [grown(card.quad, ON_FACE_MARGIN) for card in cards]
    kept = []
    for k, card in enumerate(cards):
        if card.label != UNKNOWN or not any(
            j != k and other.confidence >= card.confidence and all(inside(p, faces[j]) for p in points[k])
            for j, other in enumerate(cards)
        ):
            kept.append(card)
    return kept


PIECE_RATIO = 1.6  # a first-pass card this many times narrower than a large card it lies on is a piece of it


def with_close_ups(cards: Sequence[CardDetection], large: Sequence[CardDetection]) -> list[CardDetection]:
    """The first pass's cards (`cards`) with the coarse pass's (`large`: cards too large for the first pass, as in a
    phone close-up) where they explain the frame better. The first pass makes the pips, court art and index of a
    card seen large into small cards on its face ("pieces", PIECE_RATIO times narrower or more), read unsurely; a
    table view seen coarse makes a pile or a hand into one large card (an UNKNOWN, or a back that hid the real ones:
    session 23, the tracker decoded 45 of 120 moves with them). So a large card counts only named (not UNKNOWN, not
    a back) and surer than every piece on it; the pieces are then dropped, and of it and a first-pass card of its
    label (its index, found by the first pass) the surer one is kept. Cards of its size lying across it stay."""
    kept = list(cards)
    for big in sorted(large, key=lambda d: -d.confidence):
        if not big.face_up or big.label in (UNKNOWN, BACK):
            continue
        width = card_width(big.quad)
        face = grown(big.quad, ON_FACE_MARGIN)
        same = [d for d in kept if d.face_up and d.label == big.label]
        pieces = [
            d
            for d in kept
            if not (d.face_up and d.label == big.label)
            and card_width(d.quad) * PIECE_RATIO <= width
            and inside(d.quad.mean(axis=0), face)
        ]
        if any(d.confidence >= big.confidence for d in pieces):
            continue
        sure = all(big.confidence >= d.confidence for d in same)
        gone = {id(d) for d in pieces + (same if sure else [])}
        kept = [d for d in kept if id(d) not in gone] + ([big] if sure else [])
    return kept


def card_width(quad: np.ndarray) -> float:
    """A card outline's shorter side."""
    q = np.asarray(quad, np.float32)
    return float(np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1).min())


def calibrated(ranked: np.ndarray, curve: Sequence[float]) -> np.ndarray:
    """A card's candidate probabilities (best first) as beliefs: the best one through the calibration curve (its
    values at evenly spaced p from 0 to 1), the others sharing what that leaves in their own proportions, none above
    the best. An empty curve leaves them as they are."""
    if not len(curve) or not len(ranked):
        return ranked
    top = float(np.interp(ranked[0], np.linspace(0.0, 1.0, len(curve)), curve))
    rest = ranked[1:] * (1.0 - top) / max(1.0 - float(ranked[0]), 1e-6)
    return np.concatenate([[top], np.minimum(rest, top)])


def indexless_face(
    group: Sequence[Corner], face: float, joker: float = 0.0, curve: Sequence[float] = ()
) -> CardDetection:
    """A face none of whose corners reads as an index. Where one of its corners is a top-left or bottom-right (the
    corners every standard deck prints its index in) the face prints none: in a standard deck, the joker, whose
    corner many designs leave blank or fill with a picture, if the face head is at least `joker` sure. Seen only by
    its plain corners, it is UNKNOWN. Its belief is the face head's, through the calibration `curve` if given."""
    quad = card_outline(group)
    index_corner = any(handedness(c.a, c.b) > 0 for c in group)
    label = JOKER if index_corner and face >= joker else UNKNOWN
    belief = float(calibrated(np.array([face]), curve)[0])
    return CardDetection(label, True, belief, quad, quad_bounds(quad), candidates=((label, belief),))


ON_FACE_MARGIN = 0.1  # a face-up card's outline grown by this share when asking whether a corner lies on it


def distinct_backs(
    backs: Sequence[CardDetection], faces: Sequence[CardDetection], seen: Sequence[np.ndarray] | None = None
) -> list[CardDetection]:
    """Cards that are neither part of a face-up card nor the same card seen again (face-down cards, or faces with no
    index). One every corner of which lies on a face-up card (`seen`: the points of the corners each was found by,
    in the order of `backs`; without them, its centre) is that card's plain corners, or pips and art on its face; a
    card lying under a face-up one shows its corners beyond it (session 16: a face-up card on a face-down pile had
    hidden the pile). Without `seen`, one whose centre lies on a face-up card is dropped (the rule before session
    16). One whose centre lies on a stronger one is the same card (its corners' edges were too short to join them)."""
    kept: list[CardDetection] = []
    for k in sorted(range(len(backs)), key=lambda k: -backs[k].confidence):
        back = backs[k]
        centre = back.quad.mean(axis=0)
        points = seen[k] if seen is not None else None
        if points is None:  # by its centre, on the face's own outline
            on_face = any(inside(centre, face.quad) for face in faces)
        else:  # by every corner it was seen by, on the face's outline grown a little (its corners lie on its edge)
            on_face = any(all(inside(p, grown(face.quad, ON_FACE_MARGIN)) for p in points) for face in faces)
        if on_face:
            continue
        if not any(inside(centre, other.quad) for other in kept):
            kept.append(back)
    return kept


def grown(quad: np.ndarray, share: float) -> np.ndarray:
    centre = quad.mean(axis=0)
    return centre + (quad - centre) * (1 + share)


def inside(point: np.ndarray, quad: np.ndarray) -> bool:
    return cv2.pointPolygonTest(np.asarray(quad, np.float32), (float(point[0]), float(point[1])), False) >= 0
