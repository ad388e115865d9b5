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
