"""Loot the Loop: a solo temple crawl through a looped deck (rules: seeds/000_8222c7c5b5392494.txt).

The whole game is one deck held in the hand, top first. Aces are jewels, 2-10 trinkets (their number is how far
they let you travel), J/Q/K traps and the joker the exit. Cards are only ever turned face up, never back down,
so "face-down" and "not yet seen" mean the same thing; that is what makes the player's view (and the solver)
simple: the unseen cards are exactly the face-down ones, in an order nobody knows.

Rule interpretations
--------------------
(Choices where the rule text is silent or ambiguous; each is tested in tests/test_loot_the_loop.py.)

* Cutting 53 cards "in 3 equal piles": piles 1 and 2 get 18 cards and pile 3 gets 17, dealt from the top of the
  shuffled deck in that order. The player then stacks them with an action such as ``order 2 1 3``: the pile
  named first ends up on top. The top two cards of every pile are face up before the choice is made.
* Explore wrap-around: the deck is a loop, so exploring by N moves N mod (deck size) cards. In a real game this
  never matters (derived, not from the rules): the 12 traps and the joker never leave the deck, so a deck that
  still holds a trinket has at least 14 cards, more than the largest trinket (10).
* Look around, mark and return are not "movement"; only explores move. The game is lost (and the engine ends it
  at once, with a ``Stuck`` event and then ``GameOver``) when, after an action, the player either has no legal
  action at all ("stuck"), or has only explores and every one of them lands on a face-up trap ("cornered").
  A look, mark or return that is still possible keeps the player alive, even if it only postpones the end.
* Mark/return cycles are legal and the engine does not forbid them: the rules allow them and the engine
  never loops on its own. To let a policy notice that it is going round in circles, the state counts ``idle``:
  actions since the last look or nab (the only irreversible kinds of progress). The count is public (a player
  knows what they did), so it is part of the view.
* Landing on the face-up joker with all four aces wins at once, even if the player would rather keep looting
  (the rules say "you immediately escape"). Flipping the joker with a look is not landing on it.
* Notes are kept in the order they were marked; ``return`` names the card, so the order carries no meaning.
* The score is the number of cards in the score pile, whether the game is won or lost; only an escape is a win
  (``winners() == [0]``), a loss has no winner.
* Building a state from an observed table (the camera case) is only supported once the piles are stacked: the
  table must account for all 53 cards (deck slots, notes, score pile), at most three notes, all trinkets, and no
  trap or joker in the score pile (they can never be nabbed).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from games.core import (
    JSON,
    Action,
    BadAction,
    BadState,
    Event,
    GameError,
    GameOver,
    GameState,
    Violation,
    require,
)

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
JOKER = "JOKER"
ALL_CARDS: tuple[str, ...] = (*(rank + suit for suit in SUITS for rank in RANKS), JOKER)
CARD_INDEX = {card: i for i, card in enumerate(ALL_CARDS)}
PILE_SIZES = (18, 18, 17)
FACE_UP_PER_PILE = 2
MAX_NOTES = 3
ACES_TO_ESCAPE = 4

PHASE_SETUP = "setup"
PHASE_PLAY = "play"
PHASE_OVER = "over"

RESULT_ESCAPED = "escaped"
RESULT_TRAPPED = "trapped"
RESULT_STUCK = "stuck"
RESULT_CORNERED = "cornered"
RESULTS = ("", RESULT_ESCAPED, RESULT_TRAPPED, RESULT_STUCK, RESULT_CORNERED)

LOSS_REASONS = {
    RESULT_TRAPPED: "You landed on a trap",
    RESULT_STUCK: "You are stuck in the temple with no legal action",
    RESULT_CORNERED: "Every explore left would land on a trap",
}


class BadTable(GameError, ValueError):
    """An observed table that cannot be a Loot the Loop position (unknown or duplicate card, too many notes...)."""


# ----- cards -------------------------------------------------------------------------------------------------
def card_code(text: str) -> str | None:
    """The canonical code of a typed card ("7h" -> "7H", "joker" -> "JOKER"), or None if it is no card."""
    code = text.strip().upper()
    return code if code in CARD_INDEX else None


def rank(card: str) -> str:
    return JOKER if card == JOKER else card[:-1]


def trinket_value(card: str) -> int | None:
    """The travel value of a trinket (2-10), None for any other card."""
    r = rank(card)
    return int(r) if r.isdigit() else None


def is_ace(card: str) -> bool:
    return rank(card) == "A"


def is_trap(card: str) -> bool:
    return rank(card) in ("J", "Q", "K")


def kind(card: str) -> str:
    """The card's role in the temple, as the rules name it."""
    if card == JOKER:
        return "exit"
    if is_ace(card):
        return "jewel"
    return "trap" if is_trap(card) else "trinket"


def rotate(items: list[Any], count: int) -> list[Any]:
    """Move `count` items from the front to the back, keeping their order; the deck is a loop, so it wraps."""
    if not items:
        return []
    k = count % len(items)
    return items[k:] + items[:k]


# ----- actions -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OrderPiles(Action):
    """Setup: stack the three piles; `order` holds 0-based pile numbers, the first ends up on top."""

    order: tuple[int, ...]

    def __str__(self) -> str:
        return "order " + " ".join(str(p + 1) for p in self.order)


@dataclass(frozen=True)
class Look(Action):
    def __str__(self) -> str:
        return "look"


@dataclass(frozen=True)
class Explore(Action):
    count: int

    def __str__(self) -> str:
        return f"explore {self.count}"


@dataclass(frozen=True)
class Mark(Action):
    def __str__(self) -> str:
        return "mark"


@dataclass(frozen=True)
class Return(Action):
    card: str

    def __str__(self) -> str:
        return f"return {self.card}"


ACTION_GRAMMAR = "'order 2 1 3', 'look', 'explore N', 'mark' or 'return CARD' (e.g. 'return 7H')"


# ----- events ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PilesStacked(Event):
    order: tuple[int, ...]

    @property
    def text(self) -> str:
        return f"You stack the piles in the order {', '.join(str(p + 1) for p in self.order)}, first on top."


@dataclass(frozen=True)
class Flipped(Event):
    cards: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"You look around and turn up {' and '.join(self.cards)}."


@dataclass(frozen=True)
class Landed(Event):
    """Where an explore ended: `card` is "?" for a face-down card (its identity stays secret)."""

    count: int
    card: str
    result: str  # "nothing", "nabbed", "trap", "exit-locked", "exit"

    @property
    def text(self) -> str:
        where = "a face-down card" if self.card == "?" else self.card
        outcome = {
            "nothing": "nothing happens",
            "nabbed": f"you nab {self.card}",
            "trap": "it is a trap",
            "exit-locked": "it is the exit, but you do not have all four jewels yet",
            "exit": "it is the exit",
        }[self.result]
        return f"You explore {self.count} cards and land on {where}: {outcome}."


@dataclass(frozen=True)
class Marked(Event):
    card: str

    @property
    def text(self) -> str:
        return f"You mark a path with {self.card}."


@dataclass(frozen=True)
class Returned(Event):
    card: str

    @property
    def text(self) -> str:
        return f"You return to the path marked by {self.card}; it is back on top of the deck."


@dataclass(frozen=True)
class Escaped(Event):
    score: int

    @property
    def text(self) -> str:
        return f"You escape the temple with all four jewels and {self.score} cards in your score pile!"


@dataclass(frozen=True)
class Trapped(Event):
    card: str

    @property
    def text(self) -> str:
        return f"The trap {self.card} springs and you are caught."


@dataclass(frozen=True)
class Stuck(Event):
    result: str  # RESULT_STUCK or RESULT_CORNERED

    @property
    def text(self) -> str:
        return f"{LOSS_REASONS[self.result]}, so you are lost in the temple."


# ----- the game ----------------------------------------------------------------------------------------------
class LootTheLoop(GameState):
    """One solo game. Decks are lists top first; `up[i]` says whether `deck[i]` is face up."""

    name: ClassVar[str] = "loot-the-loop"
    fresh_core: ClassVar[bool] = True  # `_core` makes new lists and `_load` copies every list it keeps

    def __init__(self, players: int = 1, seed: int = 0, **options: Any) -> None:
        if players != 1:
            raise GameError(f"{self.name} is a solo game: players must be 1, got {players}")
        if options:
            raise GameError(f"{self.name}: unknown option(s) {', '.join(sorted(options))}; it has none")
        super().__init__(players, seed, options)
        cards = list(ALL_CARDS)
        self.chance().shuffle(cards)
        self.piles: list[list[str]] = []
        self.piles_up: list[list[bool]] = []
        start = 0
        for size in PILE_SIZES:
            self.piles.append(cards[start : start + size])
            self.piles_up.append([i < FACE_UP_PER_PILE for i in range(size)])
            start += size
        self.phase = PHASE_SETUP
        self.deck: list[str] = []
        self.up: list[bool] = []
        self.notes: list[str] = []
        self.score: list[str] = []
        self.result = ""
        self.idle = 0

    # ----- observed tables (the camera case) --------------------------------------------------------------
    @classmethod
    def from_table(
        cls,
        deck: Sequence[str | None],
        notes: Sequence[str] = (),
        score_pile: Sequence[str] = (),
        seed: int = 0,
    ) -> LootTheLoop:
        """A playing position from what is seen on the table: the deck top first (a code, or None/"?" for a
        face-down card), the notes and the score pile. Face-down slots get the unseen cards in a seeded random
        order: one determinisation of what the player cannot know. A table already lost is returned over."""
        seen_deck = [None if c is None or c == "?" else _table_card(c, "deck") for c in deck]
        note_cards = [_table_card(c, "notes") for c in notes]
        score_cards = [_table_card(c, "score pile") for c in score_pile]
        known = [c for c in seen_deck if c is not None] + note_cards + score_cards
        dupes = sorted({c for c in known if known.count(c) > 1}, key=CARD_INDEX.__getitem__)
        if dupes:
            raise BadTable(f"card(s) seen twice on the table: {', '.join(dupes)}")
        if len(note_cards) > MAX_NOTES:
            raise BadTable(f"at most {MAX_NOTES} notes, got {len(note_cards)}")
        not_trinkets = [c for c in note_cards if trinket_value(c) is None]
        if not_trinkets:
            raise BadTable(f"notes can only be trinkets (2-10), got {', '.join(not_trinkets)}")
        unnabbable = [c for c in score_cards if kind(c) in ("trap", "exit")]
        if unnabbable:
            raise BadTable(f"traps and the exit can never be in the score pile, got {', '.join(unnabbable)}")
        unseen = [c for c in ALL_CARDS if c not in set(known)]
        slots = seen_deck.count(None)
        if slots != len(unseen):
            raise BadTable(
                f"the table must hold all 53 cards: {len(unseen)} cards are not seen, "
                f"but the deck has {slots} face-down cards"
            )
        state = cls.__new__(cls)
        GameState.__init__(state, 1, seed, {})
        state.chance().shuffle(unseen)
        hidden = iter(unseen)
        state.deck = [c if c is not None else next(hidden) for c in seen_deck]
        state.up = [c is not None for c in seen_deck]
        state.piles, state.piles_up = [], []
        state.notes, state.score = note_cards, score_cards
        state.phase, state.result, state.idle = PHASE_PLAY, "", 0
        end = state.forced_end()
        if end is not None:
            state.phase, state.result = PHASE_OVER, end
        return state

    # ----- protocol ---------------------------------------------------------------------------------------
    @property
    def current_player(self) -> int | None:
        return None if self.is_over else 0

    @property
    def is_over(self) -> bool:
        return self.phase == PHASE_OVER

    def winners(self) -> list[int]:
        return [0] if self.result == RESULT_ESCAPED else []

    def scores(self) -> list[int]:
        return [len(self.score)]

    def legal_actions(self, player: int | None = None) -> list[Action]:
        if player not in (None, 0) or self.is_over:
            return []
        if self.phase == PHASE_SETUP:
            return [OrderPiles(p) for p in itertools.permutations(range(len(PILE_SIZES)))]
        return self._play_actions()

    def _play_actions(self) -> list[Action]:
        actions: list[Action] = []
        if not self.up[0]:
            actions.append(Look())
        actions.extend(Explore(n) for n in self._explore_counts())
        if self._can_mark():
            actions.append(Mark())
        actions.extend(Return(card) for card in self.notes)
        return actions

    def _explore_counts(self) -> list[int]:
        """Distinct values of the face-up trinkets among the top two cards, ascending."""
        values = {trinket_value(c) for c, up in zip(self.deck[:2], self.up[:2], strict=True) if up}
        return sorted(v for v in values if v is not None)

    def _can_mark(self) -> bool:
        return self.up[0] and trinket_value(self.deck[0]) is not None and len(self.notes) < MAX_NOTES

    def _landing(self, count: int) -> tuple[str, bool]:
        """The card an explore by `count` would land on, and whether it is face up."""
        k = count % len(self.deck)
        return self.deck[k], self.up[k]

    def _violation(self, action: Action) -> Violation | None:
        if self.phase == PHASE_SETUP:
            if not isinstance(action, OrderPiles):
                return Violation("setup: stack the piles first", "stack the three piles first, e.g. 'order 1 2 3'")
            if sorted(action.order) != list(range(len(PILE_SIZES))):
                return Violation("setup: name each pile once", "name the piles 1, 2 and 3 once each, top pile first")
            return None
        if isinstance(action, OrderPiles):
            return Violation("setup: stack the piles once", "the piles are already stacked into the deck")
        if isinstance(action, Look):
            return self._look_violation()
        if isinstance(action, Explore):
            return self._explore_violation(action.count)
        if isinstance(action, Mark):
            return self._mark_violation()
        if isinstance(action, Return):
            return self._return_violation(action.card)
        return Violation("unknown action", f"'{action}' is not a Loot the Loop action")

    def _look_violation(self) -> Violation | None:
        if self.up[0]:
            return Violation(
                "look around: the top card must be face down",
                f"the top card ({self.deck[0]}) is already face up; you may only look around when it is face down",
            )
        return None

    def _explore_violation(self, count: int) -> Violation | None:
        counts = self._explore_counts()
        if count in counts:
            return None
        rule = "explore: count by a face-up trinket among the top two cards"
        if not counts:
            return Violation(rule, "neither of the top two cards is a face-up trinket (2-10), so you cannot explore")
        allowed = " or ".join(str(n) for n in counts)
        return Violation(rule, f"you can only explore by the value of a face-up trinket on top: {allowed}")

    def _mark_violation(self) -> Violation | None:
        if not self.up[0] or trinket_value(self.deck[0]) is None:
            top = self.deck[0] if self.up[0] else "face down"
            return Violation(
                "mark a path: the top card must be a face-up trinket",
                f"only a face-up trinket (2-10) on top can be marked; the top card is {top}",
            )
        if len(self.notes) >= MAX_NOTES:
            return Violation(
                "mark a path: at most three notes",
                f"your notes are full ({', '.join(self.notes)}); return one first - marking and returning are "
                "separate actions",
            )
        return None

    def _return_violation(self, card: str) -> Violation | None:
        if not self.notes:
            return Violation("return to a marked path: you need a note", "you have no marked paths in your notes")
        if card not in self.notes:
            return Violation(
                "return to a marked path: pick one of your notes",
                f"{card} is not in your notes; you can return {' or '.join(self.notes)}",
            )
        return None

    # ----- carrying out actions ---------------------------------------------------------------------------
    def _do(self, action: Action) -> list[Event]:
        if isinstance(action, OrderPiles):
            events = self._stack(action.order)
        elif isinstance(action, Look):
            events = self._look()
        elif isinstance(action, Explore):
            events = self._explore(action.count)
        elif isinstance(action, Mark):
            events = self._mark()
        elif isinstance(action, Return):
            events = self._return(action.card)
        else:  # pragma: no cover - _violation refuses anything else
            raise GameError(f"unknown action {action!r}")
        if not self.is_over:
            end = self.forced_end()
            if end is not None:
                events += [Stuck(end), *self._finish(end)]
        return events

    def _stack(self, order: tuple[int, ...]) -> list[Event]:
        self.deck = [c for p in order for c in self.piles[p]]
        self.up = [u for p in order for u in self.piles_up[p]]
        self.piles, self.piles_up = [], []
        self.phase = PHASE_PLAY
        return [PilesStacked(tuple(order))]

    def _look(self) -> list[Event]:
        flip = 1 if self.up[1] else 2
        for i in range(flip):
            self.up[i] = True
        self.idle = 0
        return [Flipped(tuple(self.deck[:flip]))]

    def _explore(self, count: int) -> list[Event]:
        self.deck, self.up = rotate(self.deck, count), rotate(self.up, count)
        card, up = self.deck[0], self.up[0]
        self.idle += 1
        if not up:
            return [Landed(count, "?", "nothing")]
        role = kind(card)
        if role == "trap":
            return [Landed(count, card, "trap"), Trapped(card), *self._finish(RESULT_TRAPPED)]
        if role == "exit":
            if sum(map(is_ace, self.score)) < ACES_TO_ESCAPE:
                return [Landed(count, card, "exit-locked")]
            return [Landed(count, card, "exit"), Escaped(len(self.score)), *self._finish(RESULT_ESCAPED)]
        self.score.append(self.deck.pop(0))
        self.up.pop(0)
        self.idle = 0
        return [Landed(count, card, "nabbed")]

    def _mark(self) -> list[Event]:
        card = self.deck.pop(0)
        self.up.pop(0)
        self.notes.append(card)
        self.idle += 1
        return [Marked(card)]

    def _return(self, card: str) -> list[Event]:
        self.notes.remove(card)
        self.deck.insert(0, card)
        self.up.insert(0, True)
        self.idle += 1
        return [Returned(card)]

    def forced_end(self) -> str | None:
        """RESULT_STUCK / RESULT_CORNERED if the rules declare the game lost now, else None. Public because an
        observer that learns a turned card's identity after the move (the tracker) must ask again then."""
        actions = self._play_actions()
        if not actions:
            return RESULT_STUCK
        if all(isinstance(a, Explore) and self._lands_on_trap(a.count) for a in actions):
            return RESULT_CORNERED
        return None

    def _lands_on_trap(self, count: int) -> bool:
        card, up = self._landing(count)
        return up and is_trap(card)

    def _finish(self, result: str) -> list[Event]:
        self.phase, self.result = PHASE_OVER, result
        reason = "You escaped the temple" if result == RESULT_ESCAPED else LOSS_REASONS[result]
        return [GameOver(tuple(self.winners()), tuple(self.scores()), reason)]

    # ----- views ------------------------------------------------------------------------------------------
    def card_zones(self) -> dict[str, list[str]]:
        zones = {f"pile {i + 1}": list(pile) for i, pile in enumerate(self.piles)}
        zones.update(deck=list(self.deck), notes=list(self.notes), score_pile=list(self.score))
        return zones

    def unseen(self) -> list[str]:
        """The face-down cards, in canonical order (so their order in the deck does not leak)."""
        hidden = {c for c, up in zip(self.deck, self.up, strict=True) if not up}
        for pile, ups in zip(self.piles, self.piles_up, strict=True):
            hidden.update(c for c, up in zip(pile, ups, strict=True) if not up)
        return sorted(hidden, key=CARD_INDEX.__getitem__)

    def view(self, player: int | None) -> JSON:
        """The table as anyone sees it (a solo game: the player and a spectator see the same): face-down cards
        are None, and the unseen cards are given as a set, in canonical order."""
        return {
            "phase": self.phase,
            "piles": [_shown(p, u) for p, u in zip(self.piles, self.piles_up, strict=True)],
            "deck": _shown(self.deck, self.up),
            "notes": list(self.notes),
            "score_pile": list(self.score),
            "aces": sum(map(is_ace, self.score)),
            "unseen": self.unseen(),
            "idle": self.idle,
            "result": self.result,
            "legal": [str(a) for a in self.legal_actions()],
        }

    def describe(self, player: int | None = None) -> str:
        lines = [f"Loot the Loop - {self.phase}" + (f" ({self.result})" if self.result else "")]
        for i, (pile, ups) in enumerate(zip(self.piles, self.piles_up, strict=True)):
            lines.append(f"Pile {i + 1} ({len(pile)} cards, top first): {_compact(_shown(pile, ups))}")
        if self.phase != PHASE_SETUP:
            lines.append(f"Deck ({len(self.deck)} cards, top first): {_compact(_shown(self.deck, self.up))}")
        lines.append(f"Notes ({len(self.notes)}/{MAX_NOTES}): {' '.join(self.notes) or '-'}")
        aces = sum(map(is_ace, self.score))
        lines.append(f"Score pile ({len(self.score)}, jewels {aces}/4): {' '.join(self.score) or '-'}")
        if not self.is_over:
            lines.append(f"You may: {', '.join(str(a) for a in self.legal_actions())}")
        return "\n".join(lines)

    @classmethod
    def parse_action(cls, text: str) -> Action:
        words = text.strip().lower().split()
        if not words:
            raise BadAction(f"empty action: expected {ACTION_GRAMMAR}")
        verb, args = words[0], words[1:]
        if verb in ("look", "mark") and not args:
            return Look() if verb == "look" else Mark()
        if verb == "explore" and len(args) == 1 and args[0].isdigit():
            return Explore(int(args[0]))
        if verb == "return" and len(args) == 1:
            card = card_code(args[0])
            if card is None:
                raise BadAction(f"'{args[0]}' is not a card code: expected e.g. 7H, 10S, AS, KD or JOKER")
            return Return(card)
        if verb == "order" and len(args) == len(PILE_SIZES) and all(a.isdigit() and int(a) >= 1 for a in args):
            return OrderPiles(tuple(int(a) - 1 for a in args))
        raise BadAction(f"'{text}' is not an action: expected {ACTION_GRAMMAR}")

    # ----- saving -----------------------------------------------------------------------------------------
    def _core(self) -> JSON:
        return {
            "phase": self.phase,
            "piles": [list(p) for p in self.piles],
            "piles_up": [list(u) for u in self.piles_up],
            "deck": list(self.deck),
            "up": list(self.up),
            "notes": list(self.notes),
            "score": list(self.score),
            "result": self.result,
            "idle": self.idle,
        }

    def _load(self, core: JSON) -> None:
        where = "state.state"
        phase = require(core, "phase", str, where)
        if phase not in (PHASE_SETUP, PHASE_PLAY, PHASE_OVER):
            raise BadState(f"{where}.phase: expected setup, play or over, got '{phase}'")
        piles = [_cards(p, f"{where}.piles[{i}]") for i, p in enumerate(require(core, "piles", list, where))]
        piles_up = [_flags(u, f"{where}.piles_up[{i}]") for i, u in enumerate(require(core, "piles_up", list, where))]
        if [len(p) for p in piles] != [len(u) for u in piles_up]:
            raise BadState(f"{where}.piles_up: expected one flag per pile card")
        deck = _cards(require(core, "deck", list, where), f"{where}.deck")
        up = _flags(require(core, "up", list, where), f"{where}.up")
        if len(up) != len(deck):
            raise BadState(f"{where}.up: expected one flag per deck card ({len(deck)}), got {len(up)}")
        notes = _cards(require(core, "notes", list, where), f"{where}.notes")
        if len(notes) > MAX_NOTES or any(trinket_value(c) is None for c in notes):
            raise BadState(f"{where}.notes: expected at most {MAX_NOTES} trinkets, got {notes}")
        score = _cards(require(core, "score", list, where), f"{where}.score")
        result = require(core, "result", str, where)
        if result not in RESULTS:
            raise BadState(f"{where}.result: expected one of {', '.join(RESULTS[1:])} or '', got '{result}'")
        idle = require(core, "idle", int, where)
        if idle < 0:
            raise BadState(f"{where}.idle: expected a count >= 0, got {idle}")
        every = [c for p in piles for c in p] + deck + notes + score
        if sorted(every, key=CARD_INDEX.__getitem__) != list(ALL_CARDS):
            raise BadState(f"{where}.deck: expected every one of the 53 cards exactly once across all zones")
        if (phase == PHASE_SETUP) != bool(piles) or (phase != PHASE_SETUP and not deck):
            raise BadState(f"{where}.piles: expected piles during setup only, and a deck afterwards")
        self.phase, self.piles, self.piles_up, self.deck, self.up = phase, piles, piles_up, deck, up
        self.notes, self.score, self.result, self.idle = notes, score, result, idle


def _table_card(text: object, zone: str) -> str:
    code = card_code(text) if isinstance(text, str) else None
    if code is None:
        raise BadTable(f"{zone}: '{text}' is not a card code (expected e.g. 7H, 10S, AS, KD or JOKER)")
    return code


def _cards(data: list[Any], where: str) -> list[str]:
    if not isinstance(data, list) or not all(isinstance(c, str) and c in CARD_INDEX for c in data):
        raise BadState(f"{where}: expected a list of card codes, got {data!r}")
    return list(data)


def _flags(data: list[Any], where: str) -> list[bool]:
    if not isinstance(data, list) or not all(isinstance(f, bool) for f in data):
        raise BadState(f"{where}: expected a list of true/false face-up flags, got {data!r}")
    return list(data)


def _shown(cards: list[str], up: list[bool]) -> list[str | None]:
    return [c if u else None for c, u in zip(cards, up, strict=True)]


def _compact(cards: list[str | None]) -> str:
    """Cards for the terminal, with runs of face-down cards folded: "7H KS ?x16 AS"."""
    parts: list[str] = []
    for is_hidden, run in itertools.groupby(cards, key=lambda c: c is None):
        group = list(run)
        if is_hidden:
            parts.append("?" if len(group) == 1 else f"?x{len(group)}")
        else:
            parts.extend(c for c in group if c is not None)
    return " ".join(parts)
