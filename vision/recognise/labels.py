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


# Number cards (issue 20): LOOP's 1-15 in three colours and its four Rank cards, Bag-O-Loot's coins 1-16 and its
# looters. One reader reads both games' corner indices: the number (or Rank, looter, no index) and, for LOOP, the
# colour. Class names are the engines' own codes (`7r` is 7 and r; Bag-O-Loot's looter is `L`), so a reading is an
# engine identifier once the game says which classes it has.
NUMBERS: tuple[str, ...] = tuple(str(n) for n in range(1, 17))
LOOTER = "L"
RANK_CARDS: tuple[str, ...] = ("RANK1", "RANK2", "RANK3", "RANK4")
NUMBER_CLASSES: tuple[str, ...] = (*NUMBERS, LOOTER, *RANK_CARDS, NONE)
COLOUR_CLASSES: tuple[str, ...] = ("r", "g", "b")


def number_colour(code: str) -> tuple[str, str]:
    """A number card's picture code -> (number class, colour or ''): '7r' -> ('7', 'r'), '12' -> ('12', ''),
    'L' -> ('L', ''), 'RANK3' and its Loop Round side 'RANK3_LOOP' -> ('RANK3', ''), a back -> ('none', '')."""
    if code.startswith(BACK):
        return NONE, ""
    base = code.removesuffix("_LOOP")
    if base in RANK_CARDS or base == LOOTER or base in NUMBERS:
        return base, ""
    if base[:-1] in NUMBERS and base[-1] in COLOUR_CLASSES:
        return base[:-1], base[-1]
    raise ValueError(
        f"{code!r}: not a number card's code (expected 1-16 with an optional colour r g b, L, RANK1-RANK4, or BACK)"
    )


# A corner reader's two heads by what it reads: standard cards (rank, suit) or number cards (number, colour). The
# reader's checkpoint and graph name theirs, so one trainer and one runtime serve both.
VOCABULARIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "cards": (RANK_CLASSES, SUIT_CLASSES),
    "numbers": (NUMBER_CLASSES, COLOUR_CLASSES),
}


def _loop_labels() -> tuple[str, ...]:
    return (*[f"{n}{c}" for n in range(1, 16) for c in COLOUR_CLASSES], *RANK_CARDS)


# What the camera reports, by game: every label a reading can end in (NONE last: no index), and the reader
# vocabulary that reads it. Loot the Loop plays with a standard deck; LOOP and Bag-O-Loot with number cards.
GAME_LABELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "loot-the-loop": ("cards", READER_CLASSES),
    "loop": ("numbers", (*_loop_labels(), NONE)),
    "bag-o-loot": ("numbers", (*NUMBERS, LOOTER, NONE)),
}


# Games whose cards are each printed once, so that two groups of corners reading one label are one card seen twice
# (a standard deck; LOOP's 45 cards); Bag-O-Loot prints each coin five times, so every group is its own card there.
ONE_OF_EACH: frozenset[str] = frozenset({"loot-the-loop", "loop"})


def head_parts(label: str, vocabulary: str) -> tuple[str, str]:
    """The two heads' classes a label is read from: (rank, suit) of a card, (number, colour) of a number card; ''
    where the label has no second part (a joker, a coin, no index)."""
    if label == NONE:
        return NONE, ""
    if vocabulary == "cards":
        return rank_suit(label)
    return number_colour(label)


# Catalogue cards (Loot Roll, The LOOP): no index names them, so they are named by matching pictures of the game's
# cards (`catalogue`), and their labels are the catalogue's codes (dragon-egg, A01, BACK_MONSTER)
CATALOGUE_GAMES = ("loot-roll", "the-loop")
