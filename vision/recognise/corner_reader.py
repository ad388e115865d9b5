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
        return self.read_crops(self.crops(frame, frames))
