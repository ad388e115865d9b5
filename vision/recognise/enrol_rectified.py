"""Enrolling a deck for the rectified reader: its corners read by matching them against the deck's own pictures.

We have the exact pictures of an enrolled deck, so the enrolment keeps templates cut from them (`matcher`): every
face's index corners, cut as the runtime cuts a corner. Which corners of the deck print an index is not written
anywhere in a player's deck directory, so it is read off the pictures first: each face's four corners cut flat and
read by the shipped reader (`deck_index_corners`).

How far to trust the matcher against the reader is measured on the deck itself: scenes of it are rendered by the
synthetic engine and every well-seen corner is cut along the card's true corner frame jittered by the corner
finder's typical errors (`samples.jitter`), as the reader was trained. The matcher learns nothing from those scenes,
so the matcher's weight and the temperature of the combined reading are chosen on four fifths of them, card by card
as the recogniser reads cards (`choose_weight`), and the fifth held out (`enrol.held_out_scene`) reports the gain;
a choice that does not read the cards clearly better than the reader alone is not taken, so enrolling never makes a
deck read worse. (Refitting the reader's last layers on the same crops, this module's first design, gained under a
point on held-out enrolment crops and lost one on fresh scenes.)

The deck head file (.npz) holds the templates, the deck's index corners, the weight and temperature, and a stamp of
the reader they were weighed against (its ONNX file's SHA-256): a retrained reader's probabilities mean something
else, so a head weighed for another reader is refused rather than read, as is one enrolled before the matcher.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from vision.recognise.corner_reader import CornerReader
from vision.recognise.corners import corner_crop, printed_corner
from vision.recognise.enrol import (
    RECTIFIED_KIND,
    TEMPERATURES,
    DeckHead,
    EnrolError,
    check_scene_count,
    clearly_better,
    enrolment_scenes,
    head_kind,
    held_out_scene,
    load_head,
    read_deck_head,
    read_head_file,
)
from vision.recognise.labels import BACK, FACE_CODES, NONE, READER_CLASSES
from vision.recognise.matcher import (
    FACES,
    MATCH_BELOW_NONE,
    DeckMatcher,
    card_aspects,
    combine,
    cut_flat,
    cut_templates,
)
from vision.recognise.rectified import RECTIFIED_THRESHOLDS_FILE, RectifiedThresholds
from vision.recognise.samples import corner_label, jitter, seen_corners

MATCH_ARRAYS = ("templates", "opaque")  # a deck head's arrays: the matcher's templates and their card-face mask
MATCHER_FORMAT = 1  # the meta's "matcher": heads enrolled before the matcher (refitted heads) have none
CORNER_NAMES = ("top-left", "top-right", "bottom-right", "bottom-left")  # printed corners 0..3 (`printed_corner`)
SEES_INDEX = 0.5  # the shipped reader sees an index in a flat corner when "none" is less likely than this...
MOST_CARDS = 0.5  # ...and a corner is an index corner when it does so on more than this share of the faces
WEIGHTS = (5.0, 10.0, 20.0, 40.0)  # candidate weights of the matcher's scores against the reader's log-probabilities
FACE_LABELS = [label for label in READER_CLASSES if label != NONE]  # the columns `card_outcomes` reads
AGAIN = "enrol the deck again (tabletop enrol DECK_DIR)"


@dataclass(frozen=True)
class RectifiedDeckHead:
    """An enrolled deck: its matcher, the corners its cards print an index in, how the matcher is weighed against
    the reader, and the reader it was weighed against."""

    name: str
    matcher: DeckMatcher
    index_corners: tuple[int, ...]  # printed corners (0..3: TL, TR, BR, BL) that hold an index on this deck
    weight: float  # the matcher's scores against the reader's log-probabilities (0: the reader's reading is kept)
    temperature: float  # how soft the combined reading is, chosen with the weight card by card (`choose_weight`)
    reader_sha256: str  # the ONNX file whose probabilities the weight was chosen against
    source: str = ""  # the file it was loaded from, for messages ("" when made in memory)
    reader_graph: bytes = b""  # the reader adapted to this deck (`tabletop enrol --adapt`), read instead; b"": none

    def read(self, crops: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """The reader's (n, READER_CLASSES) probabilities for upright crops, with this deck's matcher weighed in.
        Crops the reader sees no index in are not matched: the recogniser does not read their faces."""
        scores = np.full(probs.shape, -1.0, np.float32)
        match = matched(probs)
        if self.weight > 0 and match.any():
            scores[match] = self.matcher.scores(crops[match], probs[match])
        return self.weigh(probs, scores)

    def weigh(self, probs: np.ndarray, scores: np.ndarray) -> np.ndarray:
        return weigh(probs, scores, self.weight, self.temperature)

    def check_fits(self, reader_path: Path) -> None:
        """An EnrolError unless this head was weighed against this very reader (its ONNX file), or against the
        adapted reader it carries, intact."""
        if self.reader_graph:
            if hashlib.sha256(self.reader_graph).hexdigest() != self.reader_sha256:
                raise EnrolError(f"{self.source or f'deck head {self.name!r}'}: its adapted reader is damaged; {AGAIN}")
            return
        digest = file_sha256(reader_path)
        if digest != self.reader_sha256:
            raise EnrolError(
                f"{self.source or f'deck head {self.name!r}'}: enrolled for another corner reader (ONNX sha256 "
                f"{self.reader_sha256[:12]}...), not {reader_path} ({digest[:12]}...): a retrained reader reads "
                f"differently; {AGAIN}"
            )

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "kind": RECTIFIED_KIND,
            "matcher": MATCHER_FORMAT,
            "name": self.name,
            "index_corners": list(self.index_corners),
            "labels": [str(label) for label in self.matcher.labels],
            "weight": self.weight,
            "temperature": self.temperature,
            "reader_sha256": self.reader_sha256,
        }
        m = self.matcher
        graph = {"reader": np.frombuffer(self.reader_graph, np.uint8)} if self.reader_graph else {}
        np.savez_compressed(path, meta=np.array(json.dumps(meta)), templates=m.templates, opaque=m.opaque, **graph)
        return path


def weigh(probs: np.ndarray, scores: np.ndarray, weight: float, temperature: float) -> np.ndarray:
    """The reader's probabilities with the matcher's scores (`DeckMatcher.scores`) weighed in (`matcher.combine`)
    where a deck head matches a crop (`matched`); the others as the reader gave them."""
    out = probs.copy()
    match = matched(probs)
    if weight > 0 and match.any():
        out[match] = combine(probs[match], scores[match], weight, temperature)
    return out


def matched(probs: np.ndarray) -> np.ndarray:
    """Which crops a deck head matches: those the reader may see an index in (`matcher.MATCH_BELOW_NONE`)."""
    return probs[:, READER_CLASSES.index(NONE)] < MATCH_BELOW_NONE


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_rectified_head(path: str | Path) -> RectifiedDeckHead:
    """A rectified deck head from `tabletop enrol`; one for the previous reader is refused with the option that
    reads it, and one enrolled before the matcher with a request to enrol again."""
    path = Path(path)
    info, _ = read_deck_head(path, RECTIFIED_KIND, ())
    if info.get("matcher") != MATCHER_FORMAT:
        raise EnrolError(
            f"{path}: enrolled by an earlier version (refitted reader heads, no templates of the deck's pictures): "
            f"{AGAIN}"
        )
    _, arrays = read_head_file(path, MATCH_ARRAYS)
    missing = [k for k in ("reader_sha256", "index_corners", "labels", "weight", "temperature") if k not in info]
    if missing:
        raise EnrolError(f"{path}: a rectified deck head without {', '.join(missing)} in its meta")
    templates, labels = arrays["templates"].astype(np.uint8), np.array(info["labels"])
    if templates.ndim != 5 or templates.shape[1] != len(labels) or not set(labels) <= set(READER_CLASSES) - {NONE}:
        raise EnrolError(f"{path}: templates {templates.shape} do not fit its {len(labels)} labels")
    matcher = DeckMatcher(templates, labels, arrays["opaque"].astype(np.uint8))
    corners = tuple(int(k) for k in info["index_corners"])
    name = str(info.get("name", path.stem))
    weight, temperature = float(info["weight"]), float(info["temperature"])
    with np.load(path, allow_pickle=False) as data:  # read_head_file has checked it is an .npz
        graph = data["reader"].astype(np.uint8).tobytes() if "reader" in data.files else b""
    return RectifiedDeckHead(name, matcher, corners, weight, temperature, str(info["reader_sha256"]), str(path), graph)


def load_deck_head(path: str | Path) -> DeckHead | RectifiedDeckHead:
    """Whichever deck head the file holds: `tabletop detect --deck` picks the recogniser by it."""
    return load_rectified_head(path) if head_kind(path) == RECTIFIED_KIND else load_head(path)


# ----- which corners print an index ---------------------------------------------------------------------------------


def flat_corners(picture: np.ndarray) -> np.ndarray:
    """The four printed corners (TL, TR, BR, BL) of a card picture, cut as the runtime cuts a corner: (4, READ_H,
    READ_W, 3) BGR. A transparent picture's rounded corners are laid on grey, as on a plain table."""
    return np.stack([cut_flat(picture, k)[0] for k in range(4)])


def index_corners_of(none_probs: np.ndarray) -> tuple[int, ...]:
    """The corners (0..3) in which the reader sees an index on most cards, from each card's four corners' "none"
    probabilities (cards x 4). Most, not all: a reader that misses a few corners of a deck it reads poorly (the
    reason to enrol it) must not lose the corner for every card."""
    shows = np.asarray(none_probs) < SEES_INDEX
    return tuple(k for k in range(shows.shape[1]) if shows[:, k].mean() > MOST_CARDS) if len(shows) else ()


def deck_index_corners(deck: Any, reader: CornerReader) -> tuple[int, ...]:
    """Which corners of this deck's faces print an index: every face picture's corners read by the shipped reader
    (an enrolled deck it holds is not asked). Templates are cut from those corners; the others are left to the
    reader, which tells pips and court art from an index."""
    faces = [code for code in FACE_CODES if code in deck.codes]
    if not faces:
        raise EnrolError(f"{deck.path}: no face pictures (AS.png ... KC.png) to enrol")
    crops = np.concatenate([flat_corners(deck.image(code)) for code in faces])
    none = reader.read_crops(crops, enrolled=False).probs[:, READER_CLASSES.index(NONE)]
    corners = index_corners_of(none.reshape(len(faces), 4))
    if not corners:
        raise EnrolError(
            f"{deck.path}: the reader sees no index in any corner of this deck's pictures (on most of its "
            f"{len(faces)} faces every corner reads as 'none'): it reads standard rank and suit indices only"
        )
    return corners


# ----- enrolment ------------------------------------------------------------------------------------------------------


def scene_corner_crops(scene: Any, rng: np.random.Generator, index_corners: Sequence[int]) -> list[tuple]:
    """(crop, rank class, suit or '', which of the scene's cards) for every well-seen printed corner of a rendered
    scene's cards, cut along its true frame jittered as the corner finder errs (`samples.seen_corners` says which,
    as for training)."""
    out = []
    for card, obj in enumerate(scene.cards()):
        if obj.kind != "card":
            continue
        index_visible = [c.visible_fraction for c in obj.corners[:2]] + [0.0] * (2 - len(obj.corners[:2]))
        quad = np.asarray(obj.quad, np.float32)
        for k, has_index in seen_corners(obj.face_up, obj.corner_visible, index_visible, index_corners):
            p, a, b = jitter(rng, *printed_corner(quad, k))
            rank, suit = corner_label(obj.code if obj.face_up else BACK, has_index)
            out.append((corner_crop(scene.image, p, a, b), rank, suit, card))
    return out


def reader_labels(ranks: Sequence[str], suits: Sequence[str]) -> np.ndarray:
    """The READER_CLASSES label of each (rank, suit): '7H', 'JOKER' or 'none'."""
    return np.array([rank + suit for rank, suit in zip(ranks, suits, strict=True)])


def rights(probs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Whether each crop's most likely READER_CLASSES label is its own."""
    return np.array(READER_CLASSES)[probs.argmax(axis=1)] == labels


def top1(probs: np.ndarray, labels: np.ndarray) -> float:
    """Share of crops whose most likely READER_CLASSES label is theirs."""
    return float(np.mean(rights(probs, labels))) if len(labels) else 0.0


def choose_weight(
    probs: np.ndarray, scores: np.ndarray, labels: np.ndarray, cards: np.ndarray, min_confidence: float
) -> tuple[float, float]:
    """(weight, temperature) for `matcher.combine`, chosen on the cards of rendered scenes as the recogniser reads
    them (`card_outcomes`): of the pairs that read at least as many cards right as the reader alone and no more
    wrong, the one with most right less wrong; or the reader alone (0, 1) unless that pair is clearly better card
    by card (`enrol.clearly_better`: right over unknown over wrong). Chosen on cards, not crops: a card's corners
    are evidence multiplied together, so a temperature honest for one crop is too sure for two, and the
    recogniser's confidence threshold then lets wrong readings through instead of reporting UNKNOWN. `labels`:
    each crop's READER_CLASSES label; `cards`: which card each crop is a corner of (0, 1, ...)."""
    base = card_outcomes(probs, labels, cards, min_confidence)
    best, best_net, choice = base, int(np.sum(base)), (0.0, 1.0)
    for weight in WEIGHTS:
        for temperature in TEMPERATURES:
            outcome = card_outcomes(weigh(probs, scores, weight, temperature), labels, cards, min_confidence)
            right, wrong = np.sum(outcome > 0), np.sum(outcome < 0)
            if right >= np.sum(base > 0) and wrong <= np.sum(base < 0) and np.sum(outcome) > best_net:
                best, best_net, choice = outcome, int(np.sum(outcome)), (weight, float(temperature))
    return choice if clearly_better(best, base) else (0.0, 1.0)


def card_outcomes(probs: np.ndarray, labels: np.ndarray, cards: np.ndarray, min_confidence: float) -> np.ndarray:
    """Each card read from its corners as `rectified.assemble_corners` reads a group (the faces' log-probabilities
    of its readable corners summed) and scored: 1 read right, -1 read wrong (a card showing no index read as one
    included), 0 not read (no readable corner, or below `min_confidence`: UNKNOWN)."""
    readable = matched(probs)
    log_faces = np.log(np.clip(probs[:, FACES], 1e-6, 1.0))
    log_faces -= np.log(np.exp(log_faces).sum(axis=1, keepdims=True))
    count = int(cards.max()) + 1 if len(cards) else 0
    total = np.zeros((count, log_faces.shape[1]))
    np.add.at(total, cards[readable], log_faces[readable])
    seen = np.bincount(cards[readable], minlength=count) > 0
    total = np.exp(total - total.max(axis=1, keepdims=True))
    sure = total.max(axis=1) / total.sum(axis=1) >= min_confidence
    truth = np.full(count, -1)
    index = labels != NONE
    truth[cards[index]] = [FACE_LABELS.index(label) for label in labels[index]]
    return np.where(seen & sure, np.where(total.argmax(axis=1) == truth, 1, -1), 0)


@dataclass(frozen=True)
class RectifiedEnrolResult:
    head: RectifiedDeckHead
    crops: int
    index_crops: int  # crops showing an index (the rest show none: backs, pips, court art)
    scenes: int
    seconds: float
    held_out_before: float  # top-1 over READER_CLASSES on the held-out scenes' index crops: the reader alone
    held_out_after: float  # ...and with the deck's matcher weighed in
    held_out_shipped: float | None = None  # ...by the shipped reader, where the reader was adapted to the deck
    adapted_better: bool = False  # ...and the adapted reader alone reads them clearly better (`enrol.clearly_better`)
    held_out_what: ClassVar[str] = "corner crops showing an index"  # as `enrol.EnrolResult` names its own
    tried: ClassVar[str] = "matching the deck's pictures"

    @property
    def adopted(self) -> bool:
        """Whether the deck head reads differently from the shipped reader (an adapted reader or a matcher weight)."""
        return self.head.weight > 0 or bool(self.head.reader_graph)

    @property
    def chosen(self) -> dict[str, float | None]:
        """What enrolment chose (None: the reader's reading kept), for the bench's report."""
        head = self.head
        chosen = {"matcher weight": head.weight or None, "temperature": head.temperature if head.weight else None}
        if self.held_out_shipped is not None:
            chosen["adapted reader"] = 1.0 if head.reader_graph else None
        return chosen


def enrol_rectified(
    deck_dir: str | Path,
    reader: CornerReader,
    scenes: int = 200,
    seed: int = 1000,
    progress: Callable[[int, int], None] | None = None,
    thresholds: RectifiedThresholds | None = None,
    shipped: CornerReader | None = None,
) -> RectifiedEnrolResult:
    """Finds the deck's index corners, cuts its templates, renders `scenes` scenes of it, reads every corner crop
    with the reader and the matcher, and chooses the matcher's weight (`choose_weight`) for a recogniser with
    these `thresholds` (by default the ones beside the reader's graph). With `shipped` (the reader is one adapted
    to this deck), the held-out crops are also read by the shipped reader, and the adapted one is kept only where
    it reads them clearly better (`adapt_and_enrol`)."""
    from vision.synth.components import load_component
    from vision.synth.deckdir import Deck

    check_scene_count(scenes)
    thresholds = thresholds or RectifiedThresholds.load(reader.path.parent / RECTIFIED_THRESHOLDS_FILE)
    start = time.perf_counter()
    deck = load_component(deck_dir)
    if not isinstance(deck, Deck):
        raise EnrolError(f"{deck_dir}: a piece set, not a deck of playing cards; only a deck can be enrolled")
    corners = deck_index_corners(deck, reader)
    pictures = {code: deck.image(code) for code in deck.codes}  # the faces and the jokers
    matcher = DeckMatcher(*cut_templates(pictures, corners, card_aspects(deck.size)))
    probs, scores, truth, cards, held_out, seen, base = [], [], [], [], [], 0, []
    for i, scene in enrolment_scenes(deck, scenes, seed, progress):
        rows = scene_corner_crops(scene, np.random.default_rng([seed, i, 2]), corners)
        if rows:
            crops = np.stack([r[0] for r in rows])
            read = reader.read_crops(crops, enrolled=False).probs
            if shipped is not None:
                base.append(shipped.read_crops(crops, enrolled=False).probs)
            probs.append(read)
            scores.append(matcher.scores(crops, read))
            truth.append(reader_labels([r[1] for r in rows], [r[2] for r in rows]))
            cards.append([seen + r[3] for r in rows])
            held_out += [held_out_scene(i)] * len(rows)
        seen += len(scene.cards())
    labels = np.concatenate(truth) if truth else np.zeros(0, str)
    index_crops = int(np.sum(labels != NONE))
    if not index_crops:
        raise EnrolError(f"{deck_dir}: no readable index in {scenes} rendered scenes of this deck")
    p, s, held = np.concatenate(probs), np.concatenate(scores), np.array(held_out)
    card = np.unique(np.concatenate(cards)[~held], return_inverse=True)[1].ravel()  # numbered 0, 1, ...
    weight, temperature = choose_weight(p[~held], s[~held], labels[~held], card, thresholds.min_confidence)
    head = RectifiedDeckHead(Path(deck_dir).name, matcher, corners, weight, temperature, file_sha256(reader.path))
    check = held & (labels != NONE)
    before, after = top1(p[check], labels[check]), top1(head.weigh(p[check], s[check]), labels[check])
    seconds = time.perf_counter() - start
    if shipped is None:
        return RectifiedEnrolResult(head, len(labels), index_crops, scenes, seconds, before, after)
    # kept on every held-out crop, those showing no index too: a reader taught on one deck may learn to see an index
    # where there is none (session 25: art read as JOKER), which index crops alone would never show
    base_all = np.concatenate(base)
    better = clearly_better(rights(p[held], labels[held]), rights(base_all[held], labels[held]))
    shipped_top1 = top1(base_all[check], labels[check])
    return RectifiedEnrolResult(head, len(labels), index_crops, scenes, seconds, before, after, shipped_top1, better)


def corner_names(corners: Sequence[int]) -> str:
    return ", ".join(CORNER_NAMES[k] for k in corners)


def adapt_and_enrol(
    deck_dir: str | Path,
    models: Path,
    minutes: float,
    scenes: int = 200,
    seed: int = 1000,
    progress: Callable[[int, int], None] | None = None,
    thresholds: RectifiedThresholds | None = None,
    say: Callable[[str], None] = print,
) -> RectifiedEnrolResult:
    """`enrol_rectified` with the reader first fine-tuned `minutes` on the deck's own crops
    (`vision.train.adapt_reader`, the training environment's torch), its graph carried in the deck head. The
    adaptation's crops come from scenes of another seed than these enrolment scenes, whose held-out fifth says whether
    the adapted reader reads the deck clearly better than the shipped one; if not, the deck is enrolled for the
    shipped reader as without adaptation."""
    from vision.recognise.rectified import CORNER_READER_FILE

    try:
        from vision.train.adapt_reader import adapt_reader
    except ImportError as err:
        raise EnrolError(
            f"adapting the reader to a deck trains it, which needs the training environment ({err}): run "
            "bash scripts/setup-train.sh, then .venv-train/bin/tabletop enrol ... --adapt MINUTES"
        ) from err
    start = time.perf_counter()
    shipped = CornerReader(models / CORNER_READER_FILE)
    thresholds = thresholds or RectifiedThresholds.load(models / RECTIFIED_THRESHOLDS_FILE)
    with tempfile.TemporaryDirectory(prefix="adapted-reader-") as tmp:
        graph = adapt_reader(deck_dir, Path(tmp) / "adapted.onnx", minutes, progress=say, models=models)
        result = enrol_rectified(deck_dir, CornerReader(graph), scenes, seed, progress, thresholds, shipped)
        if result.adapted_better:
            head = replace(result.head, reader_graph=graph.read_bytes())
            return replace(result, head=head, seconds=time.perf_counter() - start)
    say(
        f"the adapted reader read the held-out scenes {100 * result.held_out_before:.1f}% against the shipped "
        f"reader's {100 * (result.held_out_shipped or 0):.1f}%, not clearly better: enrolling for the shipped reader"
    )
    again = enrol_rectified(deck_dir, shipped, scenes, seed, progress, thresholds)
    return replace(again, held_out_shipped=result.held_out_shipped, seconds=time.perf_counter() - start)
