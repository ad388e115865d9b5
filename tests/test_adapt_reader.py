"""The reader adapted to one deck (`tabletop enrol --adapt`): trained in the training environment, read by the
runtime from the deck head with ONNX Runtime alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.test_deckdir import write_deck
from vision.recognise.corner_reader import CornerReader
from vision.recognise.labels import READER_CLASSES
from vision.recognise.matcher import cut_flat
from vision.synth.deckdir import load_deck


def test_the_reader_adapted_to_a_deck_is_a_reader_graph_the_runtime_loads(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")  # the training environment's test (scripts/setup-train.sh)
    pytest.importorskip("onnx")
    from vision.train.adapt_reader import adapt_reader, start_from_shipped

    deck_dir = write_deck(tmp_path / "mine")
    out = adapt_reader(deck_dir, tmp_path / "adapted.onnx", minutes=0.05, scenes=3, workers=1, flat=400)
    assert out.is_file() and out.with_name("adapted.float.onnx").is_file()
    deck = load_deck(deck_dir)
    crops = np.stack([cut_flat(deck.image(code), 0)[0] for code in deck.codes])
    probs = CornerReader(out).read_crops(crops).probs  # refused unless it is a reader of the standard deck
    assert probs.shape == (len(deck.codes), len(READER_CLASSES))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-3)
    # the run starts from the shipped weights, at step 0 of its own schedule
    start_from_shipped(tmp_path / "run", 2.0)
    saved = torch.load(tmp_path / "run" / "last.pt", weights_only=False)
    assert saved["state"] == {"step": 0, "seconds": 0.0, "budget_s": 120.0}


def test_adapting_to_a_folder_without_a_deck_is_refused_with_the_folder_named(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from vision.train.adapt_reader import adapt_reader

    (tmp_path / "empty").mkdir()
    with pytest.raises(Exception, match="empty"):
        adapt_reader(tmp_path / "empty", tmp_path / "a.onnx", minutes=0.05, scenes=1, workers=1, flat=200)
    assert not (tmp_path / "a.onnx").exists()


def test_the_deck_s_joker_is_left_out_of_what_the_reader_is_adapted_on() -> None:
    """A deck's joker corners are labelled JOKER wherever the deck prints an index, though many jokers print only art
    there: taught on one deck, the reader learnt art to be JOKER (session 25)."""
    pytest.importorskip("torch")
    from vision.recognise.labels import RANK_CLASSES
    from vision.train.adapt_reader import without_jokers
    from vision.train.reader_data import CropSet

    ranks = np.array([RANK_CLASSES.index(r) for r in ("A", "JOKER", "none", "JOKER", "7")])
    crops = CropSet(
        np.zeros((5, 2, 2, 3), np.uint8), ranks, np.zeros(5, np.int64), np.array(["d"] * 5), np.ones(5, np.uint8)
    )
    kept = without_jokers(crops)
    assert [RANK_CLASSES[r] for r in kept.rank] == ["A", "none", "7"] and len(kept.x) == 3
