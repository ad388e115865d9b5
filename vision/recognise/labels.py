"""The recogniser's class lists, shared by training and runtime so the two cannot drift apart."""

from __future__ import annotations

from vision.synth.export import CLASSES as CARD_CLASSES

BACK = "BACK"
NONE = "none"  # the reader's answer for a crop that holds no index: the finder's mistakes are refused here
FINDER_CLASSES: tuple[str, ...] = ("index", "card", "back")
READER_CLASSES: tuple[str, ...] = (*[c for c in CARD_CLASSES if c != BACK], NONE)
