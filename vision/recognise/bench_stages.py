"""The rectified recogniser stage by stage, on the bench's held-out scenes: does the corner finder find every
readable corner, and does the reader read the true corner's crop? Each stage is scored against the renderer's exact
geometry, so a shortfall is placed where it arises instead of being read off the end-to-end figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import cv2
import numpy as np

from vision.recognise.corners import Corner, handedness, printed_corner
from vision.recognise.labels import JOKER, NONE, READER_CLASSES
from vision.recognise.rectified import RectifiedRecogniser
from vision.synth.legibility import is_legible

if TYPE_CHECKING:
    from vision.recognise.bench import BenchScene

FOUND_WITHIN = 0.1  # a corner is found when a detection lies within this many card widths of it
INDEX_SHOWN = 0.6  # an index this visible must be read (the labeller's rule)
CORNER_SHOWN = 0.5  # a corner this visible must be found
# The reader's top-1 is also given by the card's width in the frame: an index is about 0.12-0.2 card widths tall,
# so below about 80 px it is under 10-16 px, the scale at which a glyph stops being legible at all.
# An edge this far off cuts a crop no reader reads (session 13: all 117 such readable corners read wrong)
GROSS_TURN_DEG = 30.0
WIDTH_EDGES = (60, 80, 100, 130)  # px: bins 0-60, 60-80, ..., and 130 and over


class TrueCorner(NamedTuple):
    point: np.ndarray
    a: np.ndarray
    b: np.ndarray
    code: str
    face_up: bool
    readable: bool  # its index is printed and in view, so it must be read
    legible: bool  # ... and the camera left the print legible (`vision.synth.legibility`; False where unmeasured)


def true_corners(cards: Sequence[dict]) -> list[TrueCorner]:
    """Every visible printed corner of the bench's cards."""
    out = []
    for c in cards:
        quad = np.asarray(c["quad"], np.float32)
        vis = c.get("corner_visible") or [0.0] * 4
        index = c.get("index_fraction") or [0.0, 0.0]
        legibility = c.get("index_legibility") or [None, None]
        for k in range(4):
            if vis[k] < CORNER_SHOWN:
                continue
            readable = c["face_up"] and k in (0, 2) and index[k // 2] >= INDEX_SHOWN
            sharp = readable and is_legible(legibility[k // 2], index[k // 2])
            out.append(TrueCorner(*printed_corner(quad, k), c["code"], c["face_up"], readable, sharp))
    return out


def turn_deg(found: np.ndarray, true: np.ndarray) -> float:
    """The angle between a found edge and the true one, in degrees (0-180)."""
    f, t = np.asarray(found, np.float64), np.asarray(true, np.float64)
    return float(np.degrees(abs(np.arctan2(t[0] * f[1] - t[1] * f[0], t @ f))))


def found_points(found: Sequence[Corner]) -> np.ndarray:
    return np.array([c.point for c in found], np.float32).reshape(-1, 2)


def nearest_found(points: np.ndarray, p: np.ndarray, width: float) -> int | None:
    """The found corner (a row of `found_points`) lying on the true corner at `p`: the nearest one, if it is within
    FOUND_WITHIN of the card's width (at least 1 px)."""
    if not len(points):
        return None
    dist = np.linalg.norm(points - np.asarray(p, np.float32), axis=1)
    k = int(dist.argmin())
    return k if dist[k] < FOUND_WITHIN * max(width, 1.0) else None


class StageCounts:
    """Running counts for both stages over many frames."""

    def __init__(self) -> None:
        self.index_corners = 0
        self.index_found = 0
        self.legible_corners = 0
        self.legible_found = 0
        self.down_corners = 0
        self.down_found = 0
        self.point_error: list[float] = []  # found corners: distance to the truth, in card widths
        self.edge_error: list[float] = []  # their short edge's error, in card widths
        self.edge_turn: list[float] = []  # their edges' worse turn from the true edge's direction, degrees
        self.edges_swapped = 0  # found corners whose short and long edges are the other way round
        self.crops = 0
        self.crops_right = 0
        self.found_crops = 0  # readable corners the finder found, read along the finder's own frame
        self.found_right = 0
        self.found_right_true_frame = 0  # the same corners read along their true frame
        self.confusions: dict[str, int] = {}
        self.by_condition: dict[str, list[int]] = {}  # condition -> [crops, right]

    def add_finder(self, cards: Sequence[dict], found: Sequence[Corner]) -> None:
        points = found_points(found)  # corners are found whichever side is up: the reading decides the side
        for p, a, b, _code, face_up, readable, legible in true_corners(cards):
            if face_up and not readable:
                continue
            width = max(float(np.linalg.norm(a)), 1.0)
            k = nearest_found(points, p, width)
            if face_up:
                self.index_corners += 1
                self.index_found += k is not None
                self.legible_corners += legible
                self.legible_found += legible and k is not None
            else:
                self.down_corners += 1
                self.down_found += k is not None
            if k is not None:
                self.point_error.append(float(np.linalg.norm(points[k] - p)) / width)
                self.edge_error.append(float(np.linalg.norm(found[k].a - a)) / width)
                self.edge_turn.append(max(turn_deg(found[k].a, a), turn_deg(found[k].b, b)))
                self.edges_swapped += handedness(found[k].a, found[k].b) != handedness(a, b)

    def add_reader(
        self, frame: np.ndarray, cards: Sequence[dict], recogniser: RectifiedRecogniser, conditions: Sequence[str] = ()
    ) -> None:
        """Reads the crop of every true corner whose index must be read; `conditions` name the frame's own
        (motion blur, glare, ...) for the breakdown, beside each card's width."""
        frames, codes, legible = [], [], []
        for corner in true_corners(cards):
            if corner.readable:
                frames.append((corner.point, corner.a, corner.b))
                codes.append(JOKER if corner.code.startswith(JOKER) else corner.code)
                legible.append("index legible" if corner.legible else "index not legible")
        if not frames:
            return
        probs = recogniser.reader.read(frame, frames).probs
        for row, code, (_p, a, _b), sharp in zip(probs, codes, frames, legible, strict=True):
            said = recogniser.classes[int(row.argmax())]
            self.crops += 1
            self.crops_right += said == code
            for condition in (*conditions, width_bin(float(np.linalg.norm(a))), sharp):
                tally = self.by_condition.setdefault(condition, [0, 0])
                tally[0] += 1
                tally[1] += said == code
            if said != code:
                key = f"{code}->{said}"
                self.confusions[key] = self.confusions.get(key, 0) + 1

    def add_found_reading(
        self, frame: np.ndarray, cards: Sequence[dict], found: Sequence[Corner], recogniser: RectifiedRecogniser
    ) -> None:
        """The readable corners the finder found, read along the frame it found and along the true one: the gap is
        what the finder's imprecision (its edges above all) costs the reader."""
        points = found_points(found)
        pairs, codes = [], []
        for p, a, b, code, _up, readable, _legible in true_corners(cards):
            k = nearest_found(points, p, float(np.linalg.norm(a))) if readable else None
            if k is not None:
                pairs += [(found[k].point, found[k].a, found[k].b), (p, a, b)]
                codes.append(JOKER if code.startswith(JOKER) else code)
        if not codes:
            return
        said = recogniser.reader.read(frame, pairs).probs.argmax(axis=1).reshape(-1, 2)
        for (on_found, on_true), code in zip(said, codes, strict=True):
            self.found_crops += 1
            self.found_right += recogniser.classes[on_found] == code
            self.found_right_true_frame += recogniser.classes[on_true] == code

    def summary(self) -> dict:
        def ratio(a: int, b: int) -> float | None:
            return a / b if b else None

        worst = sorted(self.confusions.items(), key=lambda kv: -kv[1])[:12]
        return {
            "corner_finder": {
                "index_corners": self.index_corners,
                "index_corner_recall": ratio(self.index_found, self.index_corners),
                "legible_corners": self.legible_corners,
                "legible_corner_recall": ratio(self.legible_found, self.legible_corners),
                "face_down_corners": self.down_corners,
                "face_down_corner_recall": ratio(self.down_found, self.down_corners),
                "median_point_error_card_widths": float(np.median(self.point_error)) if self.point_error else None,
                "p95_point_error_card_widths": float(np.percentile(self.point_error, 95)) if self.point_error else None,
                "median_edge_error_card_widths": float(np.median(self.edge_error)) if self.edge_error else None,
                "median_edge_turn_deg": float(np.median(self.edge_turn)) if self.edge_turn else None,
                "gross_edge_share": ratio(sum(t > GROSS_TURN_DEG for t in self.edge_turn), len(self.edge_turn)),
                "swapped_edge_share": ratio(self.edges_swapped, len(self.edge_turn)),
            },
            "reader_found_corners": {
                "crops": self.found_crops,
                "top1": ratio(self.found_right, self.found_crops),
                "top1_true_frame": ratio(self.found_right_true_frame, self.found_crops),
            },
            "reader_true_corners": {
                "crops": self.crops,
                "top1": ratio(self.crops_right, self.crops),
                "most_confused": dict(worst),
                "by_condition": {
                    name: {"crops": n, "top1": ratio(right, n)}
                    for name, (n, right) in sorted(self.by_condition.items())
                },
            },
        }


def width_bin(width: float) -> str:
    """The WIDTH_EDGES bin a card of this width in frame pixels falls in, as a condition name."""
    lo = 0
    for hi in WIDTH_EDGES:
        if width < hi:
            return f"card {lo}-{hi} px wide"
        lo = hi
    return f"card >= {lo} px wide"


def frame_conditions(scene: BenchScene) -> list[str]:
    """The camera's faults in a bench frame: motion blur, defocus, glare, or a clear frame."""
    names = ["motion blur"] * (scene.motion > 0) + ["defocus >= 1 px"] * (scene.defocus >= 1)
    names += ["glare"] * (scene.glare > 0)
    return names or ["clear frame (no motion blur, glare or defocus >= 1 px)"]


# The reader alone on the held-out decks' own pictures, each card laid flat at a known width and seen through one
# known fault at a time (the scene renderer's ranges: defocus up to 2.2 px, motion 3-14 px), its top-left and
# bottom-right corners (printed with an index by every standard deck) cut along the exact frame. Where the scene
# figure mixes every fault, overlap and size at once, this says which of them the reader cannot read through.
SWEEP_WIDTHS = (50, 65, 80, 100, 130, 180)  # card widths in frame pixels
SWEEP_FAULTS = {
    "clear": (0.0, 0),
    "defocus 0.8 px": (0.8, 0),
    "defocus 1.5 px": (1.5, 0),
    "defocus 2.2 px": (2.2, 0),
    "motion 4 px": (0.0, 4),
    "motion 8 px": (0.0, 8),
    "motion 14 px": (0.0, 14),
}


def flat_card_view(card: np.ndarray, width: int, defocus: float, motion: int, angle: float, seed: int) -> tuple:
    """A BGRA card picture at `width` px on a grey table, defocused or smeared along `angle` degrees by the scene
    renderer's own blur, with mild sensor noise: the frame and the card's outline in it (TL, TR, BR, BL)."""
    from dataclasses import replace

    from vision.synth.effects import EffectParams, blur  # the bench renders; the runtime never imports the renderer

    h, w = card.shape[:2]
    small = cv2.resize(card, (width, round(width * h / w)), interpolation=cv2.INTER_AREA)
    margin = 30
    canvas = np.full((small.shape[0] + 2 * margin, width + 2 * margin, 3), 90, np.float32)
    alpha = small[..., 3:4].astype(np.float32) / 255
    region = canvas[margin : margin + small.shape[0], margin : margin + width]
    region[:] = region * (1 - alpha) + small[..., :3] * alpha
    canvas = blur(canvas, replace(EffectParams.none(), defocus_sigma=defocus, motion=(float(motion), angle)))
    canvas += np.random.default_rng(seed).normal(0, 3, canvas.shape).astype(np.float32)
    x0, y0, x1, y1 = margin, margin, margin + width, margin + small.shape[0]
    quad = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
    return np.clip(canvas, 0, 255).astype(np.uint8), quad


def reader_sweep(
    recogniser: RectifiedRecogniser,
    deck_paths: Sequence,
    widths: Sequence[int] = SWEEP_WIDTHS,
    faults: dict[str, tuple[float, int]] = SWEEP_FAULTS,
) -> dict:
    """Reader top-1 on the decks' faces (jokers apart) by card width and fault, and how their jokers' corners read
    when clear, at every width: as JOKER, or as no index on a face (which `rectified.indexless_face` reports as a
    joker) where the reader has a face head."""
    from vision.synth.deckdir import load_deck  # the bench renders; the runtime never imports the renderer

    table: dict[str, dict[str, list[int]]] = {}
    jokers = {"crops": 0, "read_joker": 0, "indexless_face": 0}
    for n, path in enumerate(deck_paths):
        deck = load_deck(path)
        for width in widths:
            for fault, (defocus, motion) in faults.items():
                crops, codes = [], []
                for i, code in enumerate(deck.codes):
                    frame, quad = flat_card_view(deck.image(code), width, defocus, motion, 37.0 * i, n * 1000 + i)
                    crops.extend(recogniser.reader.crops(frame, [printed_corner(quad, k) for k in (0, 2)]))
                    codes += [JOKER if code.startswith(JOKER) else code] * 2
                reading = recogniser.reader.read_crops(np.stack(crops))
                said = [READER_CLASSES[int(i)] for i in reading.probs.argmax(axis=1)]
                tally = table.setdefault(f"{width} px", {}).setdefault(fault, [0, 0])
                for k, (code, label) in enumerate(zip(codes, said, strict=True)):
                    if code == JOKER:
                        if fault == "clear":
                            jokers["crops"] += 1
                            jokers["read_joker"] += label == JOKER
                            face = reading.face is not None and float(reading.face[k]) >= 0.5
                            jokers["indexless_face"] += label == NONE and face
                        continue
                    tally[0] += 1
                    tally[1] += label == code
    return {
        "decks": [Path(p).name for p in deck_paths],
        "top1": {w: {f: right / max(n, 1) for f, (n, right) in row.items()} for w, row in table.items()},
        "crops_per_cell": next(iter(next(iter(table.values())).values()))[0] if table else 0,
        "jokers_clear": jokers,
    }


def stage_bench(recogniser: RectifiedRecogniser, scenes: Sequence) -> dict:
    """Both stages over the bench scenes (objects with .jpeg and .cards, as `bench.BenchScene`)."""
    counts = StageCounts()
    for scene in scenes:
        frame = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
        found = recogniser.find(frame)
        counts.add_finder(scene.cards, found)
        counts.add_found_reading(frame, scene.cards, found, recogniser)
        counts.add_reader(frame, scene.cards, recogniser, frame_conditions(scene))
    return counts.summary()
