import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.synth.deckdir import FACE_CODES, Deck, load_deck
from vision.synth.decks import (
    FAMILIES_FILE,
    MissingPackageError,
    deck_sheet,
    discover_sources,
    render_debian_decks,
    split_families,
)

SMALL = ["gnome-simplistic", "kde-oxygen-air"]


@pytest.fixture(scope="module")
def small_decks(tmp_path_factory):
    out = tmp_path_factory.mktemp("decks")
    return out, render_debian_decks(out, card_height=100, only=SMALL, progress=False)


def _red_fraction(image):
    b, g, r, a = (image[:, :, i].astype(int) for i in range(4))
    return float(np.mean((r > 150) & (r > g + 60) & (r > b + 60) & (a > 128)))


def test_small_decks_validate_and_cards_differ(small_decks):
    out, decks = small_decks
    assert sorted(deck.name for deck in decks) == SMALL
    for deck in decks:
        again = load_deck(out / deck.name)
        assert len(again.codes) >= 53 and again.size[1] == 100
        assert not np.array_equal(deck.image("AS"), deck.image("KS"))
        assert _red_fraction(deck.image("QH")) > 0.005 and _red_fraction(deck.image("8D")) > 0.005
        assert _red_fraction(deck.image("QS")) < 0.001 and _red_fraction(deck.image("8C")) < 0.001
        corner = deck.image("AS")[0, 0, 3]
        assert corner < 128, "rounded corners stay transparent"
        meta = json.loads((out / deck.name / "deck.json").read_text())
        assert meta["source"].startswith("debian:") and meta["family"] == deck.family


def test_cached_decks_are_not_rendered_again(small_decks):
    out, _ = small_decks
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.png")}
    render_debian_decks(out, card_height=100, only=SMALL, progress=False)
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.png")} == before


def test_deck_sheet_shows_every_card(small_decks, tmp_path):
    _, decks = small_decks
    sheet = deck_sheet(decks[0], tmp_path / "sheet.png")
    assert sheet.stat().st_size > 10_000


def test_families_cover_every_renderable_deck():
    sources, skipped = discover_sources()
    families = json.loads(FAMILIES_FILE.read_text())["families"]
    assert {source.name for source in sources} | {skip.name for skip in skipped} <= set(families)


def test_missing_package_names_apt_get(tmp_path):
    with pytest.raises(MissingPackageError, match="apt-get install -y gnome-cards-data"):
        render_debian_decks(tmp_path, gnome_dir=tmp_path / "nowhere")


def _fake_decks(families):
    return [
        Deck(name=f"{family}-{i}", family=family, path=Path("."), files={}, size=(70, 100))
        for family, count in families
        for i in range(count)
    ]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=15),
    weights=st.tuples(st.floats(0.05, 1), st.floats(0.05, 1), st.floats(0.05, 1)),
)
def test_split_keeps_families_whole(seed, sizes, weights):
    decks = _fake_decks([(f"f{i}", n) for i, n in enumerate(sizes)])
    fractions = dict(zip(("train", "val", "test"), weights, strict=True))
    splits = split_families(decks, fractions, seed)
    seen = {}
    for split, members in splits.items():
        for deck in members:
            assert seen.setdefault(deck.family, split) == split
    assert sorted(d.name for members in splits.values() for d in members) == sorted(d.name for d in decks)
    if len(sizes) >= 3:
        assert all(splits.values())
    assert split_families(decks, fractions, seed) == splits


@pytest.mark.slow
def test_render_all_decks(tmp_path):
    decks = render_debian_decks(tmp_path, card_height=120, progress=False)
    assert len(decks) >= 28
    for deck in decks:
        assert set(FACE_CODES) <= set(deck.codes)
