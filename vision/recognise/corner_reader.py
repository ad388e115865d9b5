"""The rectified reader: what a card's corner says, from the upright crop its corner frame cuts (`corners.py`).

Its two heads (rank with JOKER and none; suit) are multiplied into the one distribution over the standard deck's
labels that the rest of the product reads (`READER_CLASSES`: 52 faces, JOKER, none), so the tracker and the
grouping need not know how the reading was factored. With an enrolled deck (`enrol_rectified`), each crop is also
matched against templates cut from the deck's own pictures (`matcher`) and the two readings are weighed together.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnxruntime as ort

from vision.recognise.corners import READ_H, READ_W, corner_crops
from vision.recognise.labels import GAME_LABELS, NONE, READER_CLASSES, VOCABULARIES, head_parts
from vision.recognise.models import ModelError, session, session_of_bytes
from vision.recognise.reader import Reading, bgr_blob

if TYPE_CHECKING:
    from vision.recognise.enrol_rectified import RectifiedDeckHead

CornerFrame = tuple[np.ndarray, np.ndarray, np.ndarray]  # point, a (short edge), b (long edge), frame pixels

# A corner whose best label the reader gives less than `reread_below` is read again from crops cut at these scales of
# its frame (a smaller or larger share of the card around the same corner) and the readings averaged: where one crop
# cuts an index badly, another may not. Off by default: session 31 measured (`bench/reader_rereads.py`, 300 test
# scenes) face-up precision 80.3% -> 83.9% and the reader on true corners 75.4% -> 76.8% with 0.8, at 1.13x the time,
# but the tracker, whose cut-offs and calibration were fitted to single readings, decoded 66 of 99 moves against 77.
REREAD_BELOW = 0.0  # 0: every corner read once
REREAD_SCALES = (0.9, 1.1)


def label_columns(classes: Sequence[str], vocabulary: str) -> tuple[np.ndarray, np.ndarray]:
    """For every label of `classes`, its column in the first head and in the second (-1: no second part)."""
    first, second = VOCABULARIES[vocabulary]
    ranks, suits = [], []
    for label in classes:
        rank, suit = head_parts(label, vocabulary)
        ranks.append(first.index(rank))
        suits.append(second.index(suit) if suit else -1)
    return np.array(ranks), np.array(suits)


RANK_COLUMN, SUIT_COLUMN = label_columns(READER_CLASSES, "cards")


def card_probs(
    rank: np.ndarray, suit: np.ndarray, columns: tuple[np.ndarray, np.ndarray] = (RANK_COLUMN, SUIT_COLUMN)
) -> np.ndarray:
    """(n, ranks) and (n, suits) probabilities -> (n, labels): a face is its rank's times its suit's (a number
    card, its number's times its colour's); `columns` from `label_columns`, the standard deck's by default."""
    rank_column, suit_column = columns
    suit_part = np.where(suit_column >= 0, suit[:, np.maximum(suit_column, 0)], 1.0)
    return rank[:, rank_column] * suit_part


class CornerReader:
    """Runs the rectified reader's ONNX graph on a batch of corner frames; with an enrolled deck, its matcher reads
    them too."""

    def __init__(
        self, path: Path, threads: int = 2, deck: RectifiedDeckHead | None = None, game: str = "loot-the-loop"
    ) -> None:
        self.path = path
        self.threads = threads
        if game not in GAME_LABELS:
            raise ValueError(f"no reader labels for game '{game}' (games read by corner: {', '.join(GAME_LABELS)})")
        self.vocabulary, self.classes = GAME_LABELS[game]
        self.game = game
        self.shipped = self.checked_session(session(path, threads), str(path))
        self.session = self.shipped
        self.columns = label_columns(self.classes, self.vocabulary)
        self.input_name = self.session.get_inputs()[0].name
        self.none_column = self.classes.index(NONE)
        self.reread_below = REREAD_BELOW
        self._deck: RectifiedDeckHead | None = None
        self.deck = deck

    def checked_session(self, graph: ort.InferenceSession, where: str) -> ort.InferenceSession:
        """The session, or a ModelError naming `where` unless it is a rectified reader of this game's vocabulary."""
        names = [o.name for o in graph.get_outputs()]
        if names[:2] != ["rank", "suit"]:
            raise ModelError(f"{where}: outputs {names}, expected rank, suit and features (a rectified reader)")
        first, second = VOCABULARIES[self.vocabulary]
        shapes = [o.shape[1] for o in graph.get_outputs()[:2]]
        if shapes != [len(first), len(second)]:
            raise ModelError(
                f"{where}: heads of {shapes} classes, expected {len(first)} and {len(second)} "
                f"(a reader of {self.vocabulary}, for {self.game})"
            )
        return graph

    @property
    def outputs(self) -> list[str]:
        """The graph's outputs, in order: the shipped graph's, or the enrolled deck's adapted one's."""
        return [o.name for o in self.session.get_outputs()]

    @property
    def deck(self) -> RectifiedDeckHead | None:
        return self._deck

    @deck.setter
    def deck(self, head: RectifiedDeckHead | None) -> None:
        """An enrolled deck, checked to be weighed against this very graph (an EnrolError if not). A deck the reader
        was adapted to (`tabletop enrol --adapt`) brings its own graph, read instead of the shipped one while the
        deck is set."""
        graph = self.shipped
        if head is not None:
            head.check_fits(self.path)
            if head.reader_graph:
                where = f"{head.source or head.name}: its adapted reader"
                graph = self.checked_session(session_of_bytes(head.reader_graph, self.threads, where), where)
        self.session, self._deck = graph, head

    def crops(self, frame: np.ndarray, frames: Sequence[CornerFrame]) -> np.ndarray:
        if not frames:
            return np.zeros((0, READ_H, READ_W, 3), np.uint8)
        points, a, b = (np.array([f[k] for f in frames], np.float64) for k in range(3))
        return corner_crops(frame, points, a, b)

    def read_crops(self, crops: np.ndarray, enrolled: bool = True) -> Reading:
        """Label probabilities for upright crops (n, READ_H, READ_W, 3) BGR uint8, with the pooled features and
        the face-or-back probability where the graph exports them; with the enrolled deck's matcher weighed in
        unless `enrolled` is False."""
        if len(crops) == 0:
            empty = {name: np.zeros(0, np.float32) for name in ("face", "card") if name in self.outputs}
            probs = np.zeros((0, len(self.classes)), np.float32)
            return Reading(probs, np.zeros((0, 0), np.float32), empty.get("face"), empty.get("card"))
        out = dict(zip(self.outputs, self.session.run(None, {self.input_name: bgr_blob(crops)}), strict=True))
        probs = card_probs(out["rank"], out["suit"], self.columns).astype(np.float32)
        if self._deck is not None and enrolled:
            probs = self._deck.read(crops, probs).astype(np.float32)
        return Reading(probs, out.get("features"), out.get("face"), out.get("card"))

    def read(self, frame: np.ndarray, frames: Sequence[CornerFrame]) -> Reading:
        """Every corner read once; those read below `reread_below` again at `REREAD_SCALES`, averaged."""
        reading = self.read_crops(self.crops(frame, frames))
        unsure = np.flatnonzero(reading.probs.max(axis=1) < self.reread_below)
        if not len(unsure):
            return reading
        again = [rescaled(frames[i], scale) for scale in REREAD_SCALES for i in unsure]
        return averaged(reading, unsure, self.read_crops(self.crops(frame, again)), len(REREAD_SCALES))


def rescaled(frame: CornerFrame, scale: float) -> CornerFrame:
    """The same corner with its edges (and so the crop, which is measured in card widths) `scale` times as long."""
    point, a, b = frame
    return point, np.asarray(a, np.float64) * scale, np.asarray(b, np.float64) * scale


def averaged(reading: Reading, rows: np.ndarray, again: Reading, views: int) -> Reading:
    """`reading` with each of `rows` replaced by the mean of its own and its `views` further readings in `again`
    (view-major: all rows at the first scale, then all at the next)."""

    def mean(first: np.ndarray | None, more: np.ndarray | None) -> np.ndarray | None:
        if first is None or more is None or not len(first):
            return first
        out = first.copy()
        stacked = more.reshape(views, len(rows), *more.shape[1:])
        out[rows] = ((first[rows] + stacked.sum(axis=0)) / (views + 1)).astype(first.dtype)
        return out

    return Reading(
        mean(reading.probs, again.probs),
        mean(reading.features, again.features),
        mean(reading.face, again.face),
        mean(reading.card, again.card),
    )
