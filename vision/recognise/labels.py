"""The recogniser's vocabulary, shared by training, the synthetic data engine and the runtime so none can drift.

The runtime owns it: the data engine (`vision.synth`) imports the card codes from here, never the other way.
"""

from __future__ import annotations

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
FACE_CODES: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
JOKER = "JOKER"
BACK = "BACK"
NONE = "none"  # the reader's answer for a crop that holds no index: the finder's mistakes are refused here
CARD_CLASSES: tuple[str, ...] = (*FACE_CODES, JOKER, BACK)  # standard cards: the classes every deck shares
FINDER_CLASSES: tuple[str, ...] = ("index", "card", "back")
READER_CLASSES: tuple[str, ...] = (*[c for c in CARD_CLASSES if c != BACK], NONE)
# The rectified reader's two heads: a rank (or the joker, or no index at all) and, for ranks, a suit. Ranks are
# shared by four suits, so each rank is learnt from four times the examples a 54-way class would get.
RANK_CLASSES: tuple[str, ...] = (*RANKS, JOKER, NONE)
SUIT_CLASSES: tuple[str, ...] = SUITS


def rank_suit(code: str) -> tuple[str, str]:
    """'10H' -> ('10', 'H'); a joker (JOKER, JOKER2) -> ('JOKER', '')."""
    if code.startswith(JOKER):
        return JOKER, ""
    if code[:-1] not in RANKS or code[-1] not in SUITS:
        raise ValueError(f"{code!r}: not a standard card code (expected a rank A-K and a suit S H D C, or JOKER)")
    return code[:-1], code[-1]
