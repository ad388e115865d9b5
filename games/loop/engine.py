"""LOOP by Takashi Saito: climb-the-ladder shedding where the cards you used become someone else's next hand.

Why the state is kept per *seat*, not per player: the whole point of the game is that the cards stay where they
were played and the players move. Hands, set-aside cards, played piles and Rank cards therefore belong to seat
positions 0..n-1 (numbered clockwise), and `seat_of` says where each player sits. The next round's hand of a
seat is then literally "everything lying at that seat" - no copying between players, nothing to get wrong.

Card codes are a number 1-15 and a colour letter: `9r`, `15b`. The rule sheet names no colours; r/g/b (red,
green, blue) are this program's choice, not from the document.

Action text (players are 1-based wherever a person types them):

    play 9r 10r 11r      play a single, pair, three of a kind or same-colour sequence (any order of cards)
    pass                 pass (only when someone has played in this trick)
    twist 8g             reveal an 8 you set aside and announce "Twist" (called "donden" in the Japanese edition)
    setaside 3r 15b      put two unwanted cards face down under your Rank card at the start of a round
    seat 3               between rounds, take seat 3 for the next loop round
    reveal               optional rule: show the three 8s you were dealt (+1 point, everything is re-dealt)

Any action may be prefixed with the acting player, `p2 play 9r`, so that a camera which saw *who* moved can
have an out-of-turn move refused with "it is Player 1's turn"; without a prefix the current player is meant.

Rule interpretations
--------------------
Where the rule sheet is silent or ambiguous, this engine chooses (none of this is from the document):

* Seats are numbered clockwise, so "clockwise" turn order is increasing seat number. Player N sits in seat N
  for the first normal round, and Player 1 (seat 1) is the first start player: the table decides who has
  "most recently experienced deja vu" by who it calls Player 1.
* Leading: the leader of a fresh trick must play; passing is only possible once someone has played.
* Followers may play a sequence of any colour; it must have as many cards as the one on the table and its
  lowest number must be stronger than the table's lowest number.
* Trick won: when every other player still in the round has passed since the last play, the last player who
  played leads the next trick. If that player has already gone out, the next player still in (clockwise)
  leads.
* An 8 (alone, in a pair/three of a kind, or inside a sequence) ends the trick at once and its player leads
  again. If that play emptied their hand, the next player still in leads.
* Twist (called "donden" in the Japanese edition - a public fact, not from this rule sheet) does not use up
  the turn: the player reveals the 8, announces it, and then still plays or passes. The revealed 8 stays
  face up in the set-aside place. Each set-aside 8 twists once; a second twist (by anyone) restores the
  normal order. The order resets at the end of a round.
  A twist applies at once to the play already on the table (so it can turn a hopeless trick around).
* The round ends the moment only one player holds cards; that player is last.
* Loop-round seating: players choose in order from the last-placed to the first-placed (the sheet's
  "ascending order of rank, starting with the person who came last"). "Be considerate" is enforced as a rule in
  3-4 player games: nobody may take the seat they sat in last round, nor a seat that would leave a later
  chooser only their own previous seat. In a 2-player game both may keep their seats.
* The start seat never moves within a set: "the player who sits in the seat of the previous start player is
  the new start player". A new set (long game) keeps the seating and the start seat.
* Loop-round score for the player in a seat: basic score by finishing rank + (the seat's Rank card, i.e. the
  previous occupant's rank - your rank). Totals are floored at 0 after each round.
* Game end is checked only at the end of a round. The winner is the highest total; a tie is broken in favour of
  the tied player who finished better in the final round (ranks are always distinct, so there is always exactly
  one winner - which a long game needs to count sets).
* Long game: each game is a set; the set winner scores a set, and the first to 2 sets wins. Every set starts
  with 2 points each and a normal round with a fresh deal.
* Optional three-8s rule: checked right after the deal of a normal round and right after the players pick up
  their seat's cards in a loop round, before anyone sets aside. The holder must `reveal` (it is then the only
  legal action), scores 1 point at once, and all 45 cards are shuffled and dealt again, 11 per seat. In a loop
  round this replaces the seat's cards for that round only; the seating and the seats' Rank cards stay, so the
  round is still scored as a loop round. The new deal is checked again.
* Hidden information: hands and face-down set-aside cards are seen only by their holder; played cards, revealed
  8s, hand sizes and scores are public. While seats are being chosen nobody holds cards, so every face-down
  card is shown only as a count.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import ClassVar

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
    seat_name,
)

COLOURS = ("r", "g", "b")
COLOUR_NAMES = {"r": "red", "g": "green", "b": "blue"}
HIGHEST = 15
ALL_CARDS = tuple(f"{n}{c}" for n in range(1, HIGHEST + 1) for c in COLOURS)
HAND_SIZE = 11
SET_ASIDE_COUNT = 2
START_POINTS = 2
SETS_TO_WIN = 2
STOPPER = 8
BASIC_POINTS = {2: (2, 0), 3: (3, 1, 0), 4: (4, 2, 1, 0)}
TARGET_POINTS = {2: 7, 3: 10, 4: 12}
EIGHTS = frozenset(f"{STOPPER}{c}" for c in COLOURS)
PHASES = ("setaside", "play", "seat", "over")

_CARD_RE = re.compile(r"(\d{1,2})([rgb])")
_PLAYER_RE = re.compile(r"p(\d+)")
GRAMMAR = (
    "expected one of: 'play CARD...', 'pass', 'twist 8X', 'setaside CARD CARD', 'seat N', 'reveal', optionally "
    "prefixed by the player ('p2 play 9r'); a card is a number 1-15 and a colour r/g/b, like 9r or 15b"
)


# ----- cards -----------------------------------------------------------------------------------------------------
def number_of(card: str) -> int:
    return int(card[:-1])


def colour_of(card: str) -> str:
    return card[-1]


def card_key(card: str) -> tuple[int, int]:
    """Sort by number, then r < g < b; unknown codes sort last (they can only come from a hand-built action)."""
    match = _CARD_RE.fullmatch(card)
    if match is None:
        return (99, 99)
    return (int(match.group(1)), COLOURS.index(match.group(2)))


def sort_cards(cards: list[str] | tuple[str, ...]) -> list[str]:
    return sorted(cards, key=card_key)


def parse_card(text: str) -> str:
    match = _CARD_RE.fullmatch(text.strip().lower())
    if match is None or not 1 <= int(match.group(1)) <= HIGHEST:
        raise BadAction(f"'{text}' is not a card: {GRAMMAR}")
    return f"{int(match.group(1))}{match.group(2)}"


def cards_text(cards: list[str] | tuple[str, ...]) -> str:
    return " ".join(cards) if cards else "-"


# ----- combinations ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    """What a play is: same-number set or same-colour sequence, how many cards, and its lowest number.

    Comparing lowest numbers is enough: two sequences of equal length differ by the same amount at every card.
    """

    kind: str  # "set" or "sequence"
    size: int
    low: int

    @property
    def name(self) -> str:
        if self.kind == "sequence":
            return f"sequence of {self.size}"
        return {1: "single", 2: "pair", 3: "three of a kind"}[self.size]


def shape_of(cards: list[str] | tuple[str, ...]) -> Shape | None:
    """The shape of a play, or None if the cards form no legal combination."""
    if not cards:
        return None
    numbers = sorted(number_of(c) for c in cards)
    if len(set(numbers)) == 1:
        return Shape("set", len(cards), numbers[0])
    same_colour = len({colour_of(c) for c in cards}) == 1
    if same_colour and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return Shape("sequence", len(cards), numbers[0])
    return None


def strength(number: int, twisted: bool) -> int:
    """Higher is stronger; a Twist makes 1 the strongest and 15 the weakest."""
    return -number if twisted else number


def beats(play: Shape, table: Shape, twisted: bool) -> bool:
    return (
        play.kind == table.kind
        and play.size == table.size
        and strength(play.low, twisted) > strength(table.low, twisted)
    )


def has_stopper(cards: list[str] | tuple[str, ...]) -> bool:
    return any(number_of(c) == STOPPER for c in cards)


def all_plays(hand: list[str]) -> list[tuple[str, ...]]:
    """Every combination that can be made from `hand`: sets by number, then sequences by colour (stable order)."""
    cards = sort_cards(hand)
    plays: list[tuple[str, ...]] = []
    by_number: dict[int, list[str]] = {}
    for card in cards:
        by_number.setdefault(number_of(card), []).append(card)
    for group in by_number.values():
        for size in range(1, len(group) + 1):
            plays.extend(itertools.combinations(group, size))
    for colour in COLOURS:
        numbers = {number_of(c) for c in cards if colour_of(c) == colour}
        for low in sorted(numbers):
            high = low + 1
            while high in numbers:
                plays.append(tuple(f"{n}{colour}" for n in range(low, high + 1)))
                high += 1
    return plays


def playable(hand: list[str], table: tuple[str, ...], twisted: bool) -> list[tuple[str, ...]]:
    """The plays from `hand` allowed on `table` (anything when leading). Shared by the engine and the policy."""
    if not table:
        return all_plays(hand)
    table_shape = shape_of(table)
    assert table_shape is not None
    return [p for p in all_plays(hand) if beats(_shape(p), table_shape, twisted)]


def _shape(cards: tuple[str, ...]) -> Shape:
    shape = shape_of(cards)
    assert shape is not None
    return shape


# ----- scoring ---------------------------------------------------------------------------------------------------
def basic_points(players: int, rank: int) -> int:
    """The score table: 4 players 4/2/1/0, 3 players 3/1/0, 2 players 2/0 (rank is 1-based)."""
    return BASIC_POINTS[players][rank - 1]


def rank_change(seat_rank_card: int | None, rank: int) -> int:
    """+1 per rank risen, -1 per rank fallen, against the seat's previous occupant (0 in a normal round)."""
    return 0 if seat_rank_card is None else seat_rank_card - rank


def new_total(total: int, gained: int) -> int:
    """Totals never go below 0."""
    return max(0, total + gained)


def ordinal(rank: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(rank, f"{rank}th")


def seating_completes(choosers: list[int], free: set[int], previous: list[int], strict: bool) -> bool:
    """Can `choosers` take the `free` seats so that (when `strict`) nobody gets their previous seat back?"""
    if not strict:
        return True
    return any(
        all(seat != previous[p] for p, seat in zip(choosers, perm, strict=True))
        for perm in itertools.permutations(sorted(free))
    )


def open_seats(players: int, order: list[int], chosen: list[int | None], previous: list[int]) -> list[int]:
    """Seats the next chooser may take: free, not their own (3-4 players), and leaving the rest a fair choice."""
    waiting = [p for p in order if chosen[p] is None]
    if not waiting:
        return []
    chooser, later = waiting[0], waiting[1:]
    free = set(range(players)) - {s for s in chosen if s is not None}
    strict = players >= 3
    return [
        seat
        for seat in sorted(free)
        if not (strict and seat == previous[chooser]) and seating_completes(later, free - {seat}, previous, strict)
    ]


def choosing_order(last_ranks: list[int]) -> list[int]:
    """Players choose seats from the last-placed to the first-placed."""
    return sorted(range(len(last_ranks)), key=lambda p: -last_ranks[p])


# ----- actions ---------------------------------------------------------------------------------------------------
def _prefix(by: int | None) -> str:
    return "" if by is None else f"p{by + 1} "


@dataclass(frozen=True)
class Play(Action):
    """Play cards; the cards are kept sorted so that any typed order gives the same action."""

    cards: tuple[str, ...]
    by: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "cards", tuple(sort_cards(list(self.cards))))

    def __str__(self) -> str:
        return f"{_prefix(self.by)}play {' '.join(self.cards)}"


@dataclass(frozen=True)
class Pass(Action):
    by: int | None = None

    def __str__(self) -> str:
        return f"{_prefix(self.by)}pass"


@dataclass(frozen=True)
class Twist(Action):
    card: str
    by: int | None = None

    def __str__(self) -> str:
        return f"{_prefix(self.by)}twist {self.card}"


@dataclass(frozen=True)
class SetAside(Action):
    cards: tuple[str, ...]
    by: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "cards", tuple(sort_cards(list(self.cards))))

    def __str__(self) -> str:
        return f"{_prefix(self.by)}setaside {' '.join(self.cards)}"


@dataclass(frozen=True)
class TakeSeat(Action):
    seat: int  # 0-based; typed 1-based
    by: int | None = None

    def __str__(self) -> str:
        return f"{_prefix(self.by)}seat {self.seat + 1}"


@dataclass(frozen=True)
class Reveal(Action):
    by: int | None = None

    def __str__(self) -> str:
        return f"{_prefix(self.by)}reveal"


LoopAction = Play | Pass | Twist | SetAside | TakeSeat | Reveal


# ----- events ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RoundStarted(Event):
    set_number: int
    round_number: int
    round_kind: str  # "normal" or "loop"
    start_player: int

    @property
    def text(self) -> str:
        return (
            f"{self.round_kind.capitalize()} round {self.round_number} of set {self.set_number} begins: everyone sets "
            f"aside 2 cards, then {seat_name(self.start_player)} starts."
        )


@dataclass(frozen=True)
class ThreeEights(Event):
    player: int

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)} reveals all three 8s, scores 1 point, and all cards are dealt again."


@dataclass(frozen=True)
class CardsSetAside(Event):
    player: int

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)} sets aside 2 cards face down."


@dataclass(frozen=True)
class Played(Event):
    player: int
    cards: tuple[str, ...]
    shape: str

    @property
    def text(self) -> str:
        what = "" if self.shape == "single" else f"a {self.shape}: "
        return f"{seat_name(self.player)} plays {what}{' '.join(self.cards)}."


@dataclass(frozen=True)
class Passed(Event):
    player: int

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)} passes."


@dataclass(frozen=True)
class Twisted(Event):
    player: int
    card: str
    twisted: bool

    @property
    def text(self) -> str:
        order = "1 is now the strongest and 15 the weakest" if self.twisted else "the normal order is back"
        return f"{seat_name(self.player)} reveals {self.card} and announces Twist: {order}."


@dataclass(frozen=True)
class EightStop(Event):
    player: int
    leader: int

    @property
    def text(self) -> str:
        return f"The 8 stops the trick; {seat_name(self.leader)} leads."


@dataclass(frozen=True)
class TrickWon(Event):
    player: int
    leader: int

    @property
    def text(self) -> str:
        if self.leader == self.player:
            return f"Everyone passed; {seat_name(self.player)} wins the trick and leads."
        return f"Everyone passed on {seat_name(self.player)}, who is out, so {seat_name(self.leader)} leads."


@dataclass(frozen=True)
class WentOut(Event):
    player: int
    rank: int

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)} goes out in {ordinal(self.rank)} place."


@dataclass(frozen=True)
class RoundScored(Event):
    """Per player: finishing rank, basic points, the rank-difference part (0 in a normal round), new total."""

    round_number: int
    ranks: tuple[int, ...]
    basic: tuple[int, ...]
    change: tuple[int, ...]
    totals: tuple[int, ...]

    @property
    def text(self) -> str:
        parts = []
        for p, rank in sorted(enumerate(self.ranks), key=lambda item: item[1]):
            change = f" {self.change[p]:+d}" if self.change[p] else ""
            parts.append(f"{seat_name(p)} {ordinal(rank)} {self.basic[p]}{change} points, total {self.totals[p]}")
        return f"Round {self.round_number} scores: " + "; ".join(parts) + "."


@dataclass(frozen=True)
class SeatTaken(Event):
    player: int
    seat: int

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)} takes seat {self.seat + 1}."


@dataclass(frozen=True)
class SetWon(Event):
    player: int
    set_number: int
    sets: tuple[int, ...]

    @property
    def text(self) -> str:
        won = self.sets[self.player]
        return f"{seat_name(self.player)} wins set {self.set_number} and has {won} set{'s' if won != 1 else ''}."


# ----- the game --------------------------------------------------------------------------------------------------
class Loop(GameState):
    """One game (or, with `long_game`, a match of sets) of LOOP for 2-4 players."""

    name: ClassVar[str] = "loop"

    def __init__(self, players: int, seed: int, long_game: bool = False, three_eights_redeal: bool = False) -> None:
        if not isinstance(players, int) or isinstance(players, bool) or players not in BASIC_POINTS:
            raise GameError(f"loop: players must be 2-4, got {players!r}")
        for option, value in (("long_game", long_game), ("three_eights_redeal", three_eights_redeal)):
            if not isinstance(value, bool):
                raise GameError(f"loop: option {option} must be true or false, got {value!r}")
        super().__init__(players, seed, {"long_game": long_game, "three_eights_redeal": three_eights_redeal})
        n = players
        self.phase = "setaside"
        self.set_number = 1
        self.round_number = 0
        self.points = [START_POINTS] * n
        self.sets_won = [0] * n
        self.seat_of = list(range(n))
        self.start_seat = 0
        self.rank_cards: list[int | None] = [None] * n
        self.last_ranks: list[int] | None = None
        self.aside: list[str] = []
        self.hands: list[list[str]] = [[] for _ in range(n)]
        self.set_aside: list[list[str]] = [[] for _ in range(n)]
        self.revealed: list[list[str]] = [[] for _ in range(n)]
        self.played: list[list[str]] = [[] for _ in range(n)]
        self.must_reveal: int | None = None
        self.turn_seat = 0
        self.table: list[str] = []
        self.table_seat: int | None = None
        self.passed: list[int] = []
        self.eight_stop = False
        self.twisted = False
        self.finished: list[int] = []
        self.chosen: list[int | None] = [None] * n
        self.game_winners: list[int] = []
        self._start_round(fresh_deal=True)

    # ----- seats and turns ---------------------------------------------------------------------------------------
    @property
    def long_game(self) -> bool:
        return bool(self.options.get("long_game", False))

    @property
    def three_eights_rule(self) -> bool:
        return bool(self.options.get("three_eights_redeal", False))

    @property
    def target(self) -> int:
        return TARGET_POINTS[self.num_players]

    def occupant(self, seat: int) -> int:
        return self.seat_of.index(seat)

    def _active(self, seat: int) -> bool:
        return self.occupant(seat) not in self.finished

    def _next_active(self, seat: int) -> int:
        for step in range(1, self.num_players + 1):
            candidate = (seat + step) % self.num_players
            if self._active(candidate):
                return candidate
        raise AssertionError("no player left in the round")  # pragma: no cover - the round ends before this

    def _setaside_seat(self) -> int | None:
        for step in range(self.num_players):
            seat = (self.start_seat + step) % self.num_players
            if len(self.set_aside[seat]) < SET_ASIDE_COUNT:
                return seat
        return None

    def _choosing_order(self) -> list[int]:
        assert self.last_ranks is not None
        return choosing_order(self.last_ranks)

    @property
    def current_player(self) -> int | None:
        if self.phase == "over":
            return None
        if self.phase == "setaside":
            if self.must_reveal is not None:
                return self.must_reveal
            seat = self._setaside_seat()
            assert seat is not None
            return self.occupant(seat)
        if self.phase == "seat":
            return next(p for p in self._choosing_order() if self.chosen[p] is None)
        return self.occupant(self.turn_seat)

    @property
    def is_over(self) -> bool:
        return self.phase == "over"

    def scores(self) -> list[int]:
        """Points in the current set (in a long game the sets won are in `sets_won` and the view)."""
        return list(self.points)

    def winners(self) -> list[int]:
        return list(self.game_winners) if self.is_over else []

    # ----- legality ----------------------------------------------------------------------------------------------
    def legal_actions(self, player: int | None = None) -> list[Action]:
        current = self.current_player
        if current is None or (player is not None and player != current):
            return []
        if self.phase == "setaside":
            if self.must_reveal is not None:
                return [Reveal()]
            hand = self.hands[self.seat_of[current]]
            return [SetAside(pair) for pair in itertools.combinations(sort_cards(hand), SET_ASIDE_COUNT)]
        if self.phase == "seat":
            return [TakeSeat(s) for s in self._open_seats()]
        seat = self.turn_seat
        actions: list[Action] = [Play(p) for p in playable(self.hands[seat], tuple(self.table), self.twisted)]
        if self.table:
            actions.append(Pass())
        actions.extend(Twist(c) for c in self._twistable(seat))
        return actions

    def _open_seats(self) -> list[int]:
        return open_seats(self.num_players, self._choosing_order(), self.chosen, self.seat_of)

    def _twistable(self, seat: int) -> list[str]:
        return [c for c in sort_cards(self.set_aside[seat]) if c in EIGHTS and c not in self.revealed[seat]]

    def _violation(self, action: Action) -> Violation | None:
        if not isinstance(action, LoopAction):
            return Violation("actions", f"'{action}' is not a LOOP action")
        problem = self._turn_violation(action)
        if problem is not None:
            return problem
        if isinstance(action, Reveal):
            return self._reveal_violation()
        if isinstance(action, SetAside):
            return self._setaside_violation(action)
        if isinstance(action, TakeSeat):
            return self._seat_violation(action)
        phase_problem = self._play_phase_violation()
        if phase_problem is not None:
            return phase_problem
        if isinstance(action, Play):
            return self._play_violation(action)
        if isinstance(action, Pass):
            return self._pass_violation()
        return self._twist_violation(action)

    def _turn_violation(self, action: LoopAction) -> Violation | None:
        by, current = action.by, self.current_player
        if by is None or by == current:
            return None
        if not 0 <= by < self.num_players:
            return Violation("players", f"there is no {seat_name(by)} in a {self.num_players}-player game")
        assert current is not None
        if self.eight_stop and isinstance(action, Play):
            return Violation(
                "8 stops the trick",
                f"an 8 was just played, so nobody may play on it; {seat_name(current)} leads again",
            )
        return Violation("turn order", f"it is {seat_name(current)}'s turn, not {seat_name(by)}'s")

    def _play_phase_violation(self) -> Violation | None:
        if self.phase == "setaside":
            return Violation(
                "set aside first", "cards are played only after every player has set aside 2 cards face down"
            )
        if self.phase == "seat":
            return Violation("choose seats", "the round is over; players are choosing seats for the next round")
        return None

    def _reveal_violation(self) -> Violation | None:
        if self.must_reveal is not None:
            return None
        if not self.three_eights_rule:
            return Violation("three 8s", "the optional three-8s rule is not in play in this game")
        return Violation("three 8s", "only a player dealt all three 8s reveals them, right after the deal")

    def _setaside_violation(self, action: SetAside) -> Violation | None:
        if self.phase != "setaside":
            return Violation("set aside", "cards are set aside only at the start of a round, before play")
        if self.must_reveal is not None:
            return Violation("three 8s", f"{seat_name(self.must_reveal)} holds all three 8s and must reveal them first")
        if len(action.cards) != SET_ASIDE_COUNT or len(set(action.cards)) != SET_ASIDE_COUNT:
            return Violation("set aside", "set aside exactly 2 different cards")
        hand = self.hands[self.seat_of[self._actor(action)]]
        missing = [c for c in action.cards if c not in hand]
        if missing:
            verb = "is" if len(missing) == 1 else "are"
            return Violation("set aside", f"{cards_text(missing)} {verb} not in your hand")
        return None

    def _seat_violation(self, action: TakeSeat) -> Violation | None:
        n = self.num_players
        if self.phase != "seat":
            return Violation("choose seats", "seats are chosen only between rounds, before a loop round")
        if not 0 <= action.seat < n:
            return Violation("choose seats", f"there are only {n} seats, numbered 1-{n}")
        if action.seat in self.chosen:
            taker = self.chosen.index(action.seat)
            return Violation("choose seats", f"seat {action.seat + 1} is already taken by {seat_name(taker)}")
        if action.seat in self._open_seats():
            return None
        if n >= 3 and action.seat == self.seat_of[self._actor(action)]:
            return Violation(
                "be considerate",
                f"in a {n}-player game nobody takes the seat they sat in last round (seat {action.seat + 1})",
            )
        return Violation(
            "be considerate",
            f"taking seat {action.seat + 1} would leave a later player only their own seat from last round",
        )

    def _play_violation(self, action: Play) -> Violation | None:
        seat = self.turn_seat
        if not action.cards or len(set(action.cards)) != len(action.cards):
            return Violation("play", "play one or more different cards")
        for card in action.cards:
            if card in self.set_aside[seat]:
                return Violation("play", f"{card} is set aside under your Rank card; set-aside cards are not played")
            if card not in self.hands[seat]:
                return Violation("play", f"{card} is not in your hand")
        shape = shape_of(action.cards)
        if shape is None:
            return Violation(
                "combination",
                "play a single card, a pair or three of a kind of one number, "
                "or a sequence of 2 or more consecutive numbers of one colour",
            )
        if not self.table:
            return None
        table = _shape(tuple(self.table))
        if shape.kind != table.kind or shape.size != table.size:
            return Violation(
                "same shape", f"the table shows a {table.name}, so you must play a {table.name} too, or pass"
            )
        if not beats(shape, table, self.twisted):
            order = "lower" if self.twisted else "higher"
            twist = " (after a Twist, lower numbers are stronger)" if self.twisted else ""
            return Violation(
                "higher",
                f"{cards_text(action.cards)} is not {order} than {cards_text(self.table)}{twist}; play {order} or pass",
            )
        return None

    def _pass_violation(self) -> Violation | None:
        if not self.table:
            return Violation("lead", "you lead this trick, so you must play; pass only after someone has played")
        return None

    def _twist_violation(self, action: Twist) -> Violation | None:
        seat = self.turn_seat
        if action.card in self.revealed[seat]:
            return Violation("twist", f"{action.card} was already revealed; each set-aside 8 twists only once")
        if action.card not in EIGHTS or action.card not in self.set_aside[seat]:
            return Violation("twist", "you can twist only by revealing an 8 you set aside face down")
        return None

    def _actor(self, action: LoopAction) -> int:
        current = self.current_player
        assert current is not None
        return current if action.by is None else action.by

    # ----- carrying out ------------------------------------------------------------------------------------------
    def _do(self, action: Action) -> list[Event]:
        player = self.current_player
        assert player is not None
        if isinstance(action, Reveal):
            return self._do_reveal(player)
        if isinstance(action, SetAside):
            return self._do_setaside(player, action.cards)
        if isinstance(action, TakeSeat):
            return self._do_seat(player, action.seat)
        if isinstance(action, Twist):
            return self._do_twist(player, action.card)
        if isinstance(action, Pass):
            return self._do_pass(player)
        assert isinstance(action, Play)
        return self._do_play(player, action.cards)

    def _do_reveal(self, player: int) -> list[Event]:
        self.points[player] += 1
        self._deal()
        return [ThreeEights(player)]

    def _do_setaside(self, player: int, cards: tuple[str, ...]) -> list[Event]:
        seat = self.seat_of[player]
        for card in cards:
            self.hands[seat].remove(card)
        self.set_aside[seat] = sort_cards(list(cards))
        if self._setaside_seat() is None:
            self.phase = "play"
            self.turn_seat = self.start_seat
        return [CardsSetAside(player)]

    def _do_twist(self, player: int, card: str) -> list[Event]:
        self.revealed[self.turn_seat].append(card)
        self.twisted = not self.twisted
        return [Twisted(player, card, self.twisted)]

    def _do_pass(self, player: int) -> list[Event]:
        seat = self.turn_seat
        self.passed.append(seat)
        events: list[Event] = [Passed(player)]
        assert self.table_seat is not None
        others = [s for s in range(self.num_players) if s != self.table_seat and self._active(s)]
        if all(s in self.passed for s in others):
            winner = self.table_seat
            leader = winner if self._active(winner) else self._next_active(winner)
            self._clear_table(leader)
            events.append(TrickWon(self.occupant(winner), self.occupant(leader)))
        else:
            self.turn_seat = self._next_active(seat)
        return events

    def _do_play(self, player: int, cards: tuple[str, ...]) -> list[Event]:
        seat = self.turn_seat
        for card in cards:
            self.hands[seat].remove(card)
        self.played[seat].extend(cards)
        self.table, self.table_seat, self.passed = list(cards), seat, []
        events: list[Event] = [Played(player, cards, _shape(cards).name)]
        if not self.hands[seat]:
            self.finished.append(player)
            events.append(WentOut(player, len(self.finished)))
        if sum(self._active(s) for s in range(self.num_players)) == 1:
            return events + self._end_round()
        if has_stopper(cards):
            leader = seat if self._active(seat) else self._next_active(seat)
            self._clear_table(leader)
            self.eight_stop = True
            events.append(EightStop(player, self.occupant(leader)))
        else:
            self.eight_stop = False
            self.turn_seat = self._next_active(seat)
        return events

    def _clear_table(self, leader: int) -> None:
        self.table, self.table_seat, self.passed = [], None, []
        self.turn_seat = leader

    def _do_seat(self, player: int, seat: int) -> list[Event]:
        self.chosen[player] = seat
        events: list[Event] = [SeatTaken(player, seat)]
        if all(s is not None for s in self.chosen):
            self.seat_of = [s for s in self.chosen if s is not None]
            self.chosen = [None] * self.num_players
            events += self._start_round(fresh_deal=False)
        return events

    # ----- rounds and sets ---------------------------------------------------------------------------------------
    def _deal(self) -> None:
        """Shuffle all 45 cards and deal 11 to each seat; the rest lie aside, unused, for the rest of the set."""
        deck = list(ALL_CARDS)
        self.chance().shuffle(deck)
        n = self.num_players
        self.hands = [sort_cards(deck[s * HAND_SIZE : (s + 1) * HAND_SIZE]) for s in range(n)]
        self.aside = sort_cards(deck[n * HAND_SIZE :])
        self.set_aside = [[] for _ in range(n)]
        self.revealed = [[] for _ in range(n)]
        self.played = [[] for _ in range(n)]
        self.must_reveal = self._three_eights_holder()

    def _three_eights_holder(self) -> int | None:
        if not self.three_eights_rule:
            return None
        for seat, hand in enumerate(self.hands):
            if set(hand) >= EIGHTS:
                return self.occupant(seat)
        return None

    def _pick_up_seats(self) -> None:
        """Each seat's new hand is exactly what lies there: played cards, set-aside cards, any cards still held."""
        n = self.num_players
        self.hands = [sort_cards(self.hands[s] + self.set_aside[s] + self.played[s]) for s in range(n)]
        self.set_aside = [[] for _ in range(n)]
        self.revealed = [[] for _ in range(n)]
        self.played = [[] for _ in range(n)]
        self.must_reveal = self._three_eights_holder()

    def _start_round(self, fresh_deal: bool) -> list[Event]:
        if fresh_deal:
            self.round_number = 1
            self.rank_cards = [None] * self.num_players
            self._deal()
        else:
            self.round_number += 1
            self._pick_up_seats()
        self.phase = "setaside"
        self.twisted = False
        self.eight_stop = False
        self.finished = []
        self._clear_table(self.start_seat)
        kind = "normal" if fresh_deal else "loop"
        return [RoundStarted(self.set_number, self.round_number, kind, self.occupant(self.start_seat))]

    def _end_round(self) -> list[Event]:
        n = self.num_players
        last = next(p for p in range(n) if p not in self.finished)
        self.finished.append(last)
        ranks = [self.finished.index(p) + 1 for p in range(n)]
        basic = [basic_points(n, ranks[p]) for p in range(n)]
        change = [rank_change(self.rank_cards[self.seat_of[p]], ranks[p]) for p in range(n)]
        self.points = [new_total(self.points[p], basic[p] + change[p]) for p in range(n)]
        for p in range(n):
            self.rank_cards[self.seat_of[p]] = ranks[p]
        self.last_ranks = ranks
        self.eight_stop = False
        self.twisted = False  # a Twist lasts until the end of the round
        self._clear_table(self.turn_seat)
        events: list[Event] = [
            RoundScored(self.round_number, tuple(ranks), tuple(basic), tuple(change), tuple(self.points))
        ]
        if max(self.points) >= self.target:
            return events + self._end_set()
        self.phase = "seat"
        self.chosen = [None] * n
        return events

    def _set_winner(self) -> int:
        """Highest total; a tie goes to the tied player who finished better in the final round."""
        assert self.last_ranks is not None
        ranks = self.last_ranks
        return max(range(self.num_players), key=lambda p: (self.points[p], -ranks[p]))

    def _end_set(self) -> list[Event]:
        winner = self._set_winner()
        reason = f"{seat_name(winner)} reached {self.points[winner]} points (target {self.target})"
        if not self.long_game:
            return [self._game_over(winner, reason)]
        self.sets_won[winner] += 1
        events: list[Event] = [SetWon(winner, self.set_number, tuple(self.sets_won))]
        if self.sets_won[winner] >= SETS_TO_WIN:
            return [*events, self._game_over(winner, f"{seat_name(winner)} won {SETS_TO_WIN} sets")]
        self.set_number += 1
        self.points = [START_POINTS] * self.num_players
        self.last_ranks = None
        return events + self._start_round(fresh_deal=True)

    def _game_over(self, winner: int, reason: str) -> GameOver:
        self.phase = "over"
        self.game_winners = [winner]
        return GameOver(winners=(winner,), scores=tuple(self.points), reason=reason)

    # ----- persistence -------------------------------------------------------------------------------------------
    def _core(self) -> JSON:
        """Card piles are stored as text ("9r 10r 11r"): as readable as a list, and an undo snapshot (copied on
        every save) becomes a few strings instead of 45 separate list items."""
        return {
            "phase": self.phase,
            "set_number": self.set_number,
            "round_number": self.round_number,
            "points": list(self.points),
            "sets_won": list(self.sets_won),
            "seat_of": list(self.seat_of),
            "start_seat": self.start_seat,
            "rank_cards": list(self.rank_cards),
            "last_ranks": None if self.last_ranks is None else list(self.last_ranks),
            "aside": " ".join(self.aside),
            "hands": [" ".join(h) for h in self.hands],
            "set_aside": [" ".join(h) for h in self.set_aside],
            "revealed": [" ".join(h) for h in self.revealed],
            "played": [" ".join(h) for h in self.played],
            "must_reveal": self.must_reveal,
            "turn_seat": self.turn_seat,
            "table": " ".join(self.table),
            "table_seat": self.table_seat,
            "passed": list(self.passed),
            "eight_stop": self.eight_stop,
            "twisted": self.twisted,
            "finished": list(self.finished),
            "chosen": list(self.chosen),
            "game_winners": list(self.game_winners),
        }

    def _load(self, core: JSON) -> None:
        n = self.num_players
        if n not in BASIC_POINTS:
            raise BadState(f"state.players: expected 2-4, got {n}")
        w = "state.state"
        self.phase = require(core, "phase", str, w)
        if self.phase not in PHASES:
            raise BadState(f"{w}.phase: expected one of {', '.join(PHASES)}, got '{self.phase}'")
        self.set_number = _positive(core, "set_number", w)
        self.round_number = _positive(core, "round_number", w)
        self.points = _int_list(core, "points", n, w, low=0)
        self.sets_won = _int_list(core, "sets_won", n, w, low=0)
        self.seat_of = _int_list(core, "seat_of", n, w, low=0, high=n - 1)
        if sorted(self.seat_of) != list(range(n)):
            raise BadState(f"{w}.seat_of: expected each seat 0-{n - 1} exactly once, got {self.seat_of}")
        self.start_seat = _seat(core, "start_seat", n, w)
        self.rank_cards = _optional_int_list(core, "rank_cards", n, w, 1, n)
        last = require(core, "last_ranks", (list, type(None)), w)
        self.last_ranks = None if last is None else _int_list(core, "last_ranks", n, w, low=1, high=n)
        if self.phase == "seat" and self.last_ranks is None:
            raise BadState(f"{w}.last_ranks: choosing seats needs the last round's ranks, got null")
        self.aside = _cards(core, "aside", w)
        self.hands = _card_piles(core, "hands", n, w)
        self.set_aside = _card_piles(core, "set_aside", n, w)
        self.revealed = _card_piles(core, "revealed", n, w)
        self.played = _card_piles(core, "played", n, w)
        self._check_cards(w)
        self.must_reveal = _optional_seat(core, "must_reveal", n, w)
        self.turn_seat = _seat(core, "turn_seat", n, w)
        self.table = _cards(core, "table", w)
        if self.table and shape_of(self.table) is None:
            raise BadState(f"{w}.table: expected a legal combination, got {self.table}")
        self.table_seat = _optional_seat(core, "table_seat", n, w)
        self.passed = _int_list(core, "passed", None, w, low=0, high=n - 1)
        self.eight_stop = require(core, "eight_stop", bool, w)
        self.twisted = require(core, "twisted", bool, w)
        self.finished = _int_list(core, "finished", None, w, low=0, high=n - 1)
        self.chosen = _optional_int_list(core, "chosen", n, w, 0, n - 1)
        self.game_winners = _int_list(core, "game_winners", None, w, low=0, high=n - 1)

    def _check_cards(self, where: str) -> None:
        every = self.aside + [c for zone in (self.hands, self.set_aside, self.played) for pile in zone for c in pile]
        if sorted(every, key=card_key) != sort_cards(list(ALL_CARDS)):
            raise BadState(f"{where}.aside/hands/set_aside/played: the 45 cards must each lie in exactly one place")
        for seat in range(self.num_players):
            if not set(self.revealed[seat]) <= set(self.set_aside[seat]) & EIGHTS:
                raise BadState(f"{where}.revealed: seat {seat + 1} reveals cards that are not its set-aside 8s")

    def card_zones(self) -> dict[str, list[str]]:
        """Every one of the 45 cards in exactly one zone: the unused pile aside, and each seat's three places."""
        zones: dict[str, list[str]] = {"aside": list(self.aside)}
        for seat in range(self.num_players):
            zones[f"seat {seat + 1} hand"] = list(self.hands[seat])
            zones[f"seat {seat + 1} set aside"] = list(self.set_aside[seat])
            zones[f"seat {seat + 1} played"] = list(self.played[seat])
        return zones

    # ----- what players see --------------------------------------------------------------------------------------
    def _sees_hidden(self, player: int | None, seat: int) -> bool:
        return player is not None and self.phase in ("setaside", "play") and self.seat_of[player] == seat

    def view(self, player: int | None) -> JSON:
        seats = []
        for seat in range(self.num_players):
            own = self._sees_hidden(player, seat)
            hidden_aside = [c if own or c in self.revealed[seat] else "?" for c in self.set_aside[seat]]
            seats.append(
                {
                    "seat": seat,
                    "player": self.occupant(seat),
                    "rank_card": self.rank_cards[seat],
                    "hand": list(self.hands[seat]) if own else ["?"] * len(self.hands[seat]),
                    "hand_count": len(self.hands[seat]),
                    "set_aside": hidden_aside,
                    "revealed": list(self.revealed[seat]),
                    "played": list(self.played[seat]),
                }
            )
        table_shape = shape_of(self.table)
        return {
            "game": self.name,
            "you": player,
            "players": self.num_players,
            "phase": self.phase,
            "set": self.set_number,
            "round": self.round_number,
            "round_kind": "normal" if self.round_number == 1 else "loop",
            "points": list(self.points),
            "sets_won": list(self.sets_won),
            "target": self.target,
            "long_game": self.long_game,
            "twisted": self.twisted,
            "current_player": self.current_player,
            "start_player": self.occupant(self.start_seat),
            "must_reveal": self.must_reveal,
            "seats": seats,
            "aside_count": len(self.aside),
            "table": {
                "cards": list(self.table),
                "player": None if self.table_seat is None else self.occupant(self.table_seat),
                "shape": None if table_shape is None else table_shape.name,
            },
            "passed": [self.occupant(s) for s in self.passed],
            "eight_stop": self.eight_stop,
            "finished": list(self.finished),
            "last_ranks": None if self.last_ranks is None else list(self.last_ranks),
            "chosen": list(self.chosen),
            "choosing_order": self._choosing_order() if self.phase == "seat" else [],
            "winners": self.winners(),
        }

    def describe(self, player: int | None = None) -> str:
        v = self.view(player)
        order = "TWISTED: 1 strongest, 15 weakest" if self.twisted else "normal order: 15 strongest"
        lines = [
            f"LOOP - set {self.set_number}, {v['round_kind']} round {self.round_number} ({order}); "
            f"first to {self.target} points" + (", 2 sets wins" if self.long_game else ""),
            "Points: "
            + ", ".join(f"{seat_name(p)} {pts}" for p, pts in enumerate(self.points))
            + (f"   Sets: {self.sets_won}" if self.long_game else ""),
        ]
        for s in v["seats"]:
            rank = "" if s["rank_card"] is None else f" [rank card {ordinal(s['rank_card'])}]"
            start = " (start)" if s["seat"] == self.start_seat else ""
            out = " OUT" if s["player"] in self.finished else ""
            lines.append(
                f"Seat {s['seat'] + 1}{start}: {seat_name(s['player'])}{rank}{out} hand {s['hand_count']}: "
                f"{cards_text(s['hand'])} | set aside: {cards_text(s['set_aside'])} | played: {cards_text(s['played'])}"
            )
        lines.append(self._status_line(v))
        return "\n".join(lines)

    def _status_line(self, v: JSON) -> str:
        current = self.current_player
        if current is None:
            return f"Game over: {' and '.join(seat_name(p) for p in self.winners())} won."
        who = seat_name(current)
        if self.phase == "seat":
            return f"{who} chooses a seat: " + ", ".join(f"seat {s + 1}" for s in self._open_seats())
        if self.phase == "setaside":
            if self.must_reveal is not None:
                return f"{who} holds all three 8s and must 'reveal'."
            return f"{who} sets aside 2 cards ('setaside 3r 15b')."
        if not self.table:
            return f"{who} leads: play anything."
        passed = ", ".join(seat_name(p) for p in v["passed"]) or "nobody"
        return f"Table: {cards_text(self.table)} ({v['table']['shape']}) by {seat_name(v['table']['player'])}; " + (
            f"passed: {passed}. {who} to play or pass."
        )

    # ----- text form ---------------------------------------------------------------------------------------------
    @classmethod
    def parse_action(cls, text: str) -> Action:
        if not isinstance(text, str):
            raise BadAction(f"expected text, got {type(text).__name__}: {GRAMMAR}")
        words = text.strip().lower().split()
        by = None
        if words and _PLAYER_RE.fullmatch(words[0]):
            by = int(words[0][1:]) - 1
            if by < 0:
                raise BadAction(f"'{words[0]}': players are numbered from 1: {GRAMMAR}")
            words = words[1:]
        if not words:
            raise BadAction(f"empty action: {GRAMMAR}")
        verb, args = words[0], words[1:]
        parser = _PARSERS.get(verb)
        if parser is None:
            raise BadAction(f"unknown action '{verb}': {GRAMMAR}")
        return parser(args, by)


def _no_args(verb: str, args: list[str]) -> None:
    if args:
        raise BadAction(f"'{verb}' takes nothing after it, got '{' '.join(args)}': {GRAMMAR}")


def _distinct_cards(verb: str, args: list[str], count: int | None) -> tuple[str, ...]:
    cards = tuple(parse_card(a) for a in args)
    if count is not None and len(cards) != count:
        raise BadAction(f"'{verb}' needs exactly {count} card(s), got {len(cards)}: {GRAMMAR}")
    if not cards:
        raise BadAction(f"'{verb}' needs at least one card: {GRAMMAR}")
    if len(set(cards)) != len(cards):
        raise BadAction(f"'{verb}' names a card twice: {GRAMMAR}")
    return cards


def _parse_seat(args: list[str], by: int | None) -> Action:
    if len(args) != 1 or not args[0].isdigit() or int(args[0]) < 1:
        raise BadAction(f"'seat' needs one seat number from 1, like 'seat 3': {GRAMMAR}")
    return TakeSeat(int(args[0]) - 1, by)


def _parse_pass(args: list[str], by: int | None) -> Action:
    _no_args("pass", args)
    return Pass(by)


def _parse_reveal(args: list[str], by: int | None) -> Action:
    _no_args("reveal", args)
    return Reveal(by)


_PARSERS = {
    "play": lambda args, by: Play(_distinct_cards("play", args, None), by),
    "pass": _parse_pass,
    "twist": lambda args, by: Twist(_distinct_cards("twist", args, 1)[0], by),
    "setaside": lambda args, by: SetAside(_distinct_cards("setaside", args, SET_ASIDE_COUNT), by),
    "seat": _parse_seat,
    "reveal": _parse_reveal,
}


# ----- loading helpers ---------------------------------------------------------------------------------------------
def _positive(core: JSON, key: str, where: str) -> int:
    value = require(core, key, int, where)
    if value < 1:
        raise BadState(f"{where}.{key}: expected a number from 1, got {value}")
    return value


def _seat(core: JSON, key: str, n: int, where: str) -> int:
    value = require(core, key, int, where)
    if not 0 <= value < n:
        raise BadState(f"{where}.{key}: expected a seat 0-{n - 1}, got {value}")
    return value


def _optional_seat(core: JSON, key: str, n: int, where: str) -> int | None:
    if core.get(key) is None:
        require(core, key, (int, type(None)), where)
        return None
    return _seat(core, key, n, where)


def _int_list(core: JSON, key: str, length: int | None, where: str, low: int = 0, high: int | None = None) -> list[int]:
    values = require(core, key, list, where)
    if length is not None and len(values) != length:
        raise BadState(f"{where}.{key}: expected {length} entries, got {len(values)}")
    for value in values:
        if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
            bounds = f"{low}-{high}" if high is not None else f">= {low}"
            raise BadState(f"{where}.{key}: expected whole numbers {bounds}, got {value!r}")
    return list(values)


def _optional_int_list(core: JSON, key: str, length: int, where: str, low: int, high: int) -> list[int | None]:
    values = require(core, key, list, where)
    if len(values) != length:
        raise BadState(f"{where}.{key}: expected {length} entries, got {len(values)}")
    for value in values:
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high):
            raise BadState(f"{where}.{key}: expected null or a whole number {low}-{high}, got {value!r}")
    return list(values)


def _cards(core: JSON, key: str, where: str) -> list[str]:
    return _split_cards(require(core, key, str, where), f"{where}.{key}")


def _split_cards(text: str, where: str) -> list[str]:
    cards = text.split()
    for card in cards:
        if card not in ALL_CARDS:
            raise BadState(f"{where}: expected card codes like '9r' separated by spaces, got {card!r}")
    return cards


def _card_piles(core: JSON, key: str, n: int, where: str) -> list[list[str]]:
    piles = require(core, key, list, where)
    if len(piles) != n:
        raise BadState(f"{where}.{key}: expected one entry per seat ({n}), got {len(piles)}")
    for pile in piles:
        if not isinstance(pile, str):
            raise BadState(f"{where}.{key}: expected a text of card codes per seat, got {type(pile).__name__}")
    return [_split_cards(pile, f"{where}.{key}") for pile in piles]
