"""Bag-O-Loot rules engine (seeds/003): collect matching coin cards, steal, hold up, bluff and challenge.

A turn is `draw`, an optional `holdup` as the first play, any number of plays (`open`, `build`, `steal`,
`junk`, `claim`), and an end: `knock`, or a Bag-O-Loot (`bag ...`, or a steal that completes five cards).
Out of turn, other players may `challenge` the newest Bag-O-Loot (until the next `draw`) and any player may
`claim` a split.

How the game ends is agreed before it starts. The document (seeds/003, "Before You Begin"): "Determine when and
how the game will end. It can be after a number of rounds, at a certain time, or when an agreed upon score has been
reached. (A typical game is four rounds.)" The options say which: `rounds` (default 4; 0 for no round limit),
`target` (a score: the game ends with the round in which a player's total reaches it) and `minutes` (a time: when
the agreed time has passed, `time` makes the round in progress the last). Any of them may be combined; the first
one reached ends the game, always at the end of a round, since scores are only recorded then.

Cards are written as their number (`1`-`16`) or `L` for a looter (wild). Players are typed 1-based.

Action text grammar (`parse_action(str(a)) == a`)::

    draw                          start the turn (with an empty deck: start it without a card)
    holdup P                      first play only: take P's cards beyond eight, else the turn ends
    open N N | open N L           open a collection (a coin card first; `open L N` is accepted too)
    build N | build L on N        add a card to your collection of Ns (up to four cards)
    steal N from P [with L|set]   take P's collection of Ns showing an N (default), a looter, or merging
                                  it into your own collection of Ns (`with set`)
    bag N with C                  your four Ns plus C face down: a Bag-O-Loot (a bluff unless C is N or L)
    bag N from P with C           steal P's four Ns, C face down: a Bag-O-Loot
    junk N                        exchange an N matching any Bag-O-Loot for the top card of the deck
    knock                         end the turn
    challenge by P                "Show me the loot!" on the newest Bag-O-Loot
    claim N of P and Q by R       R combines the split collections of Ns of P (who opened) and Q
    rob N from P                  after a robbery: take P's Bag-O-Loot of Ns
    penalty                       referee: undo the current player's plays this turn and skip the turn
    time                          with the `minutes` option: the agreed time is up, this round is the last

The cards (five each of the numbers 1-16 plus five looters, 85 in all) are a public fact about the
published game, not from the document, whose "sixteen numbered coin cards (five of each number)" is unclear.

Rule interpretations (where the rule text is silent or ambiguous; none of these are from the document):

* Card removal: a two-player game removes the sets of 13-16 and two looters, a three-player game the sets of
  15 and 16 and one looter (the document only says "four sets" / "two sets"; the highest numbers are
  removed so the numbers left are a plain range). Removed cards are public.
* Advanced play uses the same cards: each player gets one of the looters before the deal (7 more cards),
  and the one looter left over is shuffled into the deck (4 players: 4 + 1 = all 5 looters; fewer players
  have exactly one looter more than players after removal, so the text fits every player count).
* A turn always starts with `draw`; when the deck is empty `draw` starts the turn without a card, so the
  moment a turn begins (and the challenge window closes) is always explicit.
* A player has at most one open collection of each number: opening a number you already collect is refused
  ("build instead"), and stealing a number you already collect merges into your collection (`with set`).
  A merge that reaches five cards is a Bag-O-Loot (the FAQ: a pair plus a stolen three); one that would
  exceed five cards is refused. A merged Bag-O-Loot has all five cards face up, so it cannot be challenged.
* Building stops at four cards: the fifth card of a collection always goes face down (`bag`). A stolen
  collection of four can only be taken as a Bag-O-Loot (`bag N from P with C`), as the rule says.
* A holdup is not a "play" (no card reaches the table). After the deck is out, a turn that ends with no play
  (a knock, or a failed holdup) makes that player done for the round; done players are skipped; when every
  player is done the round ends.
* Junk exchange: only coin cards can be exchanged (a looter is wild; throwing one away is never wanted);
  any player's Bag-O-Loot counts, and the deck must have a replacement card.
* Challenge: only the newest Bag-O-Loot made with a face-down card, once, by a player other than its owner
  with a non-empty stash, before the next `draw`. A genuine bag's challenger with Bags-O-Loot gives their
  newest one to the owner; without one, their open collections go to the junk pile (the text says "lose",
  not "lose to", unlike the Bag-O-Loot case). Either way the face-down card is then shown to everyone.
* A bluff Bag-O-Loot that is never exposed scores like any other (that is the point of bluffing), and a
  bag won by challenging a bluff stays a Bag-O-Loot in the challenger's stash.
* Split: at the end of a turn, every collection the player opened that turn and still holds, matching
  another player's open collection with at most five cards between them, is a split. Any player may claim it,
  the one who made it included, from then until the end of the next player's turn, as long as both collections
  are unchanged: four cards make a collection, five a face-up Bag-O-Loot. The current player must have drawn
  first (it is a play); others may claim at any time. (The document, "Split": "ANY player that notices the
  split gets to combine them into his stash as a four card collection or as a Bag-O-Loot"; until session 26
  the maker was refused.)
* Robbery: a player whose hand is empty after a play ends the round at once and then picks one Bag-O-Loot
  of another player (`rob`); with none on the table the round simply ends. "A robbery cannot end with a
  bluff": a bluff Bag-O-Loot with your last card is illegal.
* Penalty: the engine refuses plays before `draw` and a second `draw` (their messages cite "Forgetting to
  draw" and "Rushing your turn"), so the penalties only matter for a physical table where the play already
  happened. `penalty` is then the referee's correction: accepted at any point of a turn but never listed
  among the legal actions (it is not a move a player chooses). It puts the table back as it stood right
  after the current player's draw (the drawn card is kept: drawing is not a play; split claims made by
  others meanwhile are undone with it) and passes the turn without making the player done. Before the
  draw it simply skips the turn.
* Scoring: hand cards remove collection cards first, then whole bags from as few Bags-O-Loot as possible
  (the scorer's best outcome); a busted bag's remaining cards are worth 1 each. `scores()` are the totals
  of finished rounds; the game ends at the end of a round (above: rounds, target score or time) and the most
  points win (ties share the win).
* Time: the engine keeps no clock (a replayed game must end the same way), so the time end is the players' call:
  `time`, one of the current player's actions once while the `minutes` option is set (the players watch the
  clock; the option records what was agreed).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
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
    parse_seat,
    plural,
    require,
    seat_name,
)

NUMBERS = range(1, 17)
LOOTER = "L"
COPIES = 5
HAND = 7
HOLDUP_KEEP = 8
BAG_SIZE = 5
BAG_POINTS = 10
REMOVED_NUMBERS = {2: (13, 14, 15, 16), 3: (15, 16), 4: ()}
REMOVED_LOOTERS = {2: 2, 3: 1, 4: 0}


# ----- cards -------------------------------------------------------------------------------------------------
def card_key(card: str) -> tuple[int, int]:
    """Sort order: coins by number, looters last."""
    return (1, 0) if card == LOOTER else (0, int(card))


def _digits(word: str) -> bool:
    return word.isascii() and word.isdigit()


def is_card(code: str) -> bool:
    return code == LOOTER or (_digits(code) and str(int(code)) == code and int(code) in NUMBERS)


def matches(card: str, number: int) -> bool:
    """A card fits a set of `number`s if it is that number or a (wild) looter."""
    return card in (LOOTER, str(number))


def full_set(players: int) -> tuple[list[str], list[str]]:
    """(cards in play, removed cards) for a player count: 16 numbers x 5 plus 5 looters, minus the removal."""
    kept, removed = [], []
    for n in NUMBERS:
        (removed if n in REMOVED_NUMBERS[players] else kept).extend([str(n)] * COPIES)
    looters = COPIES - REMOVED_LOOTERS[players]
    return kept + [LOOTER] * looters, removed + [LOOTER] * REMOVED_LOOTERS[players]


def round_points(hand: int, collections: list[int], bags: int) -> tuple[int, int, int]:
    """(stash cards removed, bags left whole, points) for one player at the end of a round.

    Collections go first (every collection card is worth 1, so which collection does not matter), then the
    rest comes out of as few bags as possible: that is the best the scorer can do.
    """
    loose = sum(collections)
    stash = loose + BAG_SIZE * bags
    if hand > stash:
        return stash, 0, 0
    from_bags = max(0, hand - loose)
    busted = -(-from_bags // BAG_SIZE)
    points = (loose - (hand - from_bags)) + BAG_POINTS * (bags - busted) + (BAG_SIZE * busted - from_bags)
    return hand, bags - busted, points


def _p(player: int) -> str:
    """Short for seat_name: these event sentences name several players."""
    return seat_name(player)


# ----- actions -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Draw(Action):
    def __str__(self) -> str:
        return "draw"


@dataclass(frozen=True)
class Holdup(Action):
    target: int

    def __str__(self) -> str:
        return f"holdup {self.target + 1}"


@dataclass(frozen=True)
class Open(Action):
    """Two cards; the parser puts a coin card first so `open L 7` and `open 7 L` are the same action."""

    first: str
    second: str

    def __str__(self) -> str:
        return f"open {self.first} {self.second}"


@dataclass(frozen=True)
class Build(Action):
    number: int
    card: str

    def __str__(self) -> str:
        return f"build {self.number}" if self.card == str(self.number) else f"build {self.card} on {self.number}"


@dataclass(frozen=True)
class Steal(Action):
    """`using` is the shown card (the number or `L`) or `set` to merge into one's own collection."""

    number: int
    victim: int
    using: str

    def __str__(self) -> str:
        base = f"steal {self.number} from {self.victim + 1}"
        return base if self.using == str(self.number) else f"{base} with {self.using}"


@dataclass(frozen=True)
class MakeBag(Action):
    """A Bag-O-Loot from one's own four (victim None) or from another player's stolen four."""

    number: int
    card: str
    victim: int | None = None

    def __str__(self) -> str:
        source = "" if self.victim is None else f" from {self.victim + 1}"
        return f"bag {self.number}{source} with {self.card}"


@dataclass(frozen=True)
class Junk(Action):
    number: int

    def __str__(self) -> str:
        return f"junk {self.number}"


@dataclass(frozen=True)
class Knock(Action):
    def __str__(self) -> str:
        return "knock"


@dataclass(frozen=True)
class Challenge(Action):
    by: int

    def __str__(self) -> str:
        return f"challenge by {self.by + 1}"


@dataclass(frozen=True)
class Claim(Action):
    number: int
    opener: int
    other: int
    by: int

    def __str__(self) -> str:
        return f"claim {self.number} of {self.opener + 1} and {self.other + 1} by {self.by + 1}"


@dataclass(frozen=True)
class Rob(Action):
    number: int
    victim: int

    def __str__(self) -> str:
        return f"rob {self.number} from {self.victim + 1}"


@dataclass(frozen=True)
class Penalty(Action):
    def __str__(self) -> str:
        return "penalty"


@dataclass(frozen=True)
class TimeUp(Action):
    def __str__(self) -> str:
        return "time"


# ----- events ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RoundStarted(Event):
    round: int
    dealer: int
    first: int

    @property
    def text(self) -> str:
        return f"Round {self.round}: {_p(self.dealer)} deals, and {_p(self.first)} goes first."


@dataclass(frozen=True)
class Drew(Event):
    player: int
    drew: bool

    @property
    def text(self) -> str:
        if self.drew:
            return f"{_p(self.player)} draws a card."
        return f"{_p(self.player)} starts the turn without drawing, because the deck is empty."


@dataclass(frozen=True)
class HoldupResult(Event):
    player: int
    target: int
    hand: int
    taken: int

    @property
    def text(self) -> str:
        who = f"{_p(self.player)} holds up {_p(self.target)}, who has {plural(self.hand, 'card')}"
        if self.taken:
            return f"{who}, and takes {self.taken} of them at random."
        return f"{who}, not more than eight, so {_p(self.player)}'s turn is over."


@dataclass(frozen=True)
class Opened(Event):
    player: int
    number: int
    cards: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{_p(self.player)} opens a collection of {self.number}s with {' and '.join(self.cards)}."


@dataclass(frozen=True)
class Built(Event):
    player: int
    number: int
    card: str
    size: int

    @property
    def text(self) -> str:
        return f"{_p(self.player)} builds {self.card} on the {self.number}s, which now hold {self.size} cards."


@dataclass(frozen=True)
class Stole(Event):
    player: int
    victim: int
    number: int
    shown: str  # the card shown, or "set" for a merge
    size: int
    bag: bool

    @property
    def text(self) -> str:
        how = "into their own collection" if self.shown == "set" else f"showing {self.shown}"
        result = "making a Bag-O-Loot" if self.bag else f"now {self.size} cards"
        return f"{_p(self.player)} steals {_p(self.victim)}'s {self.number}s {how}, {result}."


@dataclass(frozen=True)
class BagMade(Event):
    player: int
    number: int
    victim: int  # -1: built on the player's own collection

    @property
    def text(self) -> str:
        source = "" if self.victim < 0 else f" from {_p(self.victim)}'s stolen four"
        return f"{_p(self.player)} makes a Bag-O-Loot of {self.number}s{source} with a face-down card."


@dataclass(frozen=True)
class Challenged(Event):
    challenger: int
    owner: int
    number: int
    card: str
    genuine: bool
    lost_bag: int  # number of the bag the losing challenger gave up, 0 if none
    lost_cards: int  # collection cards the losing challenger junked

    @property
    def text(self) -> str:
        head = f"{_p(self.challenger)} says 'Show me the loot!' to {_p(self.owner)}: the face-down card is {self.card}"
        if not self.genuine:
            return f"{head}, a bluff, so {_p(self.challenger)} takes the Bag-O-Loot of {self.number}s."
        if self.lost_bag:
            return (
                f"{head}, genuine, so {_p(self.challenger)} gives a Bag-O-Loot of {self.lost_bag}s to {_p(self.owner)}."
            )
        return f"{head}, genuine, so {_p(self.challenger)} loses all open collections ({self.lost_cards} cards)."


@dataclass(frozen=True)
class JunkExchanged(Event):
    player: int
    card: str

    @property
    def text(self) -> str:
        return f"{_p(self.player)} junks a {self.card} and draws a replacement."


@dataclass(frozen=True)
class SplitClaimed(Event):
    player: int
    number: int
    opener: int
    other: int
    bag: bool

    @property
    def text(self) -> str:
        made = "a Bag-O-Loot" if self.bag else "a collection of four"
        return f"{_p(self.player)} claims the split {self.number}s of {_p(self.opener)} and {_p(self.other)} as {made}."


@dataclass(frozen=True)
class Robbery(Event):
    player: int
    victim: int  # -1: nobody had a Bag-O-Loot to take
    number: int

    @property
    def text(self) -> str:
        if self.victim < 0:
            return f"Robbery! {_p(self.player)} played every card, and there is no Bag-O-Loot to take."
        return (
            f"Robbery! {_p(self.player)} played every card and takes {_p(self.victim)}'s Bag-O-Loot of {self.number}s."
        )


@dataclass(frozen=True)
class Knocked(Event):
    player: int

    @property
    def text(self) -> str:
        return f"{_p(self.player)} knocks: 'I'm done.'"


@dataclass(frozen=True)
class DoneForRound(Event):
    player: int

    @property
    def text(self) -> str:
        return f"{_p(self.player)} ended a turn without a play after the deck ran out and is done for the round."


@dataclass(frozen=True)
class Penalized(Event):
    player: int

    @property
    def text(self) -> str:
        return f"Penalty: {_p(self.player)}'s plays this turn are undone and the turn is skipped."


@dataclass(frozen=True)
class TimeCalled(Event):
    round: int
    minutes: int

    @property
    def text(self) -> str:
        return f"Time is up ({plural(self.minutes, 'minute')}): round {self.round} is the last."


@dataclass(frozen=True)
class RoundScored(Event):
    round: int
    player: int
    hand: int
    removed: int
    bags: int
    points: int
    total: int

    @property
    def text(self) -> str:
        return (
            f"Round {self.round}: {_p(self.player)} holds {plural(self.hand, 'card')}, removes "
            f"{plural(self.removed, 'stash card')}, keeps {plural(self.bags, 'Bag-O-Loot')} and scores "
            f"{self.points} (total {self.total})."
        )


# ----- parsing -----------------------------------------------------------------------------------------------
GRAMMAR = (
    "draw | holdup P | open N N | open N L | build N | build L on N | steal N from P [with L|set] | "
    "bag N with C | bag N from P with C | junk N | knock | challenge by P | claim N of P and P by P | "
    "rob N from P | penalty | time"
)


def _number(word: str, text: str) -> int:
    if not (_digits(word) and int(word) in NUMBERS):
        raise BadAction(f"'{text}': expected a card number 1-16, got '{word}'")
    return int(word)


def _card(word: str, text: str) -> str:
    word = word.upper()
    if not is_card(word):
        raise BadAction(f"'{text}': expected a card (1-16 or L), got '{word}'")
    return word


def _parse_words(words: list[str], text: str) -> Action:
    head, args = words[0], words[1:]
    shape = [w if w in ("on", "from", "with", "of", "and", "by") else "_" for w in args]
    if head in ("draw", "knock", "penalty", "time") and not args:
        return {"draw": Draw(), "knock": Knock(), "penalty": Penalty(), "time": TimeUp()}[head]
    if head == "holdup" and shape == ["_"]:
        return Holdup(parse_seat(args[0], text))
    if head == "open" and shape == ["_", "_"]:
        a, b = _card(args[0], text), _card(args[1], text)
        return Open(b, a) if a == LOOTER and b != LOOTER else Open(a, b)
    if head == "build" and shape == ["_"]:
        n = _number(args[0], text)
        return Build(n, str(n))
    if head == "build" and shape == ["_", "on", "_"]:
        return Build(_number(args[2], text), _card(args[0], text))
    if head == "steal" and shape[:3] == ["_", "from", "_"] and shape[3:] in ([], ["with", "_"]):
        n = _number(args[0], text)
        using = str(n) if len(args) == 3 else args[4].lower() if args[4].lower() == "set" else _card(args[4], text)
        return Steal(n, parse_seat(args[2], text), using)
    if head == "bag" and shape == ["_", "with", "_"]:
        return MakeBag(_number(args[0], text), _card(args[2], text))
    if head == "bag" and shape == ["_", "from", "_", "with", "_"]:
        return MakeBag(_number(args[0], text), _card(args[4], text), parse_seat(args[2], text))
    if head == "junk" and shape == ["_"]:
        return Junk(_number(args[0], text))
    if head == "challenge" and shape == ["by", "_"]:
        return Challenge(parse_seat(args[1], text))
    if head == "claim" and shape == ["_", "of", "_", "and", "_", "by", "_"]:
        n = _number(args[0], text)
        return Claim(n, parse_seat(args[2], text), parse_seat(args[4], text), parse_seat(args[6], text))
    if head == "rob" and shape == ["_", "from", "_"]:
        return Rob(_number(args[0], text), parse_seat(args[2], text))
    raise BadAction(f"'{text}' is not a Bag-O-Loot action; expected one of: {GRAMMAR}")


# ----- the game ----------------------------------------------------------------------------------------------
Stash = dict[str, list[dict[str, Any]]]


@functools.cache
def _seat_fields(kind: type[Action]) -> tuple[str, ...]:
    """The fields of an action kind that name a seat (looked up once per kind: legality asks at every candidate)."""
    return tuple(f.name for f in dataclasses.fields(kind) if f.name in ("target", "victim", "by", "opener", "other"))


class BagOLoot(GameState):
    """A game of several rounds. Core state is plain lists and dicts so `_core` is a deep copy away."""

    name: ClassVar[str] = "bag-o-loot"

    def __init__(
        self, players: int, seed: int, rounds: int = 4, advanced: bool = False, target: int = 0, minutes: int = 0
    ) -> None:
        if not isinstance(players, int) or players not in REMOVED_NUMBERS:
            raise GameError(f"bag-o-loot: players must be 2-4, got {players}")
        for option, value in (("rounds", rounds), ("target", target), ("minutes", minutes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise GameError(f"bag-o-loot: option {option} must be a whole number, 0 for none, got {value!r}")
        if not (rounds or target or minutes):
            raise GameError(
                "bag-o-loot: the game needs an end: a number of rounds (option rounds), a score (target) or a time "
                "(minutes)"
            )
        if not isinstance(advanced, bool):
            raise GameError(f"bag-o-loot: option advanced must be true or false, got {advanced!r}")
        super().__init__(players, seed, {"rounds": rounds, "advanced": advanced, "target": target, "minutes": minutes})
        self.round = 0
        self.dealer = 0
        self.totals = [0] * players
        self.over = False
        self.time_up = False
        self._start_round(1, 0)

    # ----- setup ---------------------------------------------------------------------------------------------
    def _start_round(self, number: int, dealer: int) -> RoundStarted:
        """Shuffle every card not removed (junk included) and deal; the player left of the dealer starts."""
        n = self.num_players
        cards, self.removed = full_set(n)
        self.hands: list[list[str]] = [[] for _ in range(n)]
        if self.options["advanced"]:
            for hand in self.hands:
                cards.remove(LOOTER)
                hand.append(LOOTER)
        self.chance().shuffle(cards)
        self.deck = cards
        for p in range(n):
            self.hands[p] = sorted(self.hands[p] + [self.deck.pop() for _ in range(HAND)], key=card_key)
        self.stashes: list[Stash] = [{"collections": [], "bags": []} for _ in range(n)]
        self.junk: list[str] = []
        self.round, self.dealer = number, dealer
        self.current = (dealer + 1) % n
        self.done = [False] * n
        self.phase = "turn"
        self.last_bag: JSON | None = None
        self.splits: list[JSON] = []
        self._reset_turn()
        return RoundStarted(number, dealer, self.current)

    def _reset_turn(self) -> None:
        self.drew = False
        self.plays = 0
        self.held_up = False
        self.opened: list[int] = []
        self.turn_start: JSON | None = None

    # ----- protocol ------------------------------------------------------------------------------------------
    @property
    def current_player(self) -> int | None:
        return None if self.over else self.current

    @property
    def is_over(self) -> bool:
        return self.over

    def scores(self) -> list[int]:
        return list(self.totals)

    @classmethod
    def parse_action(cls, text: str) -> Action:
        if not isinstance(text, str) or not text.split():
            raise BadAction(f"empty action; expected one of: {GRAMMAR}")
        words = text.strip().split()
        words[0] = words[0].lower()
        return _parse_words([w if _digits(w) or w.upper() == LOOTER else w.lower() for w in words], text)

    def legal_actions(self, player: int | None = None) -> list[Action]:
        if self.over:
            return []
        candidates = [a for a in self._candidates(player) if self._actor(a) == player or player is None]
        return [a for a in candidates if self._rule_violation(a) is None]  # candidates name only real seats

    def _actor(self, action: Action) -> int:
        return action.by if isinstance(action, Challenge | Claim) else self.current

    def _last_round(self) -> str | None:
        """Why the round just scored ends the game, or None when another round follows."""
        rounds, target = self.options["rounds"], self.options["target"]
        if rounds and self.round >= rounds:
            return f"All {plural(self.round, 'round')} played"
        if target and max(self.totals) >= target:
            return f"A score of {target} reached"
        if self.time_up:
            return "Time is up"
        return None

    def _candidates(self, player: int | None = None) -> list[Action]:
        """A superset of `player`'s legal actions (everyone's for None), in a stable order; `legal_actions` filters
        it by the rules. Only what could be legal is listed: the hint's rollouts ask for it at every step."""
        p, n = self.current, self.num_players
        if self.phase == "rob":
            return [Rob(b["number"], q) for q in range(n) if q != p for b in self.stashes[q]["bags"]]
        by = range(n) if player is None else [player]
        anyone = [Claim(s["number"], s["opener"], s["other"], b) for s in self.splits for b in by]
        anyone += [Challenge(b) for b in by]
        if player is not None and player != p:  # out of turn: a claim or a challenge, nothing else
            return anyone
        if not self.drew:  # a turn starts with its draw ("draw first"): every play before it is refused
            return [Draw(), *anyone, TimeUp()]
        held = self.hands[p]
        hand = sorted(set(held), key=card_key)
        coins = [c for c in hand if c != LOOTER]
        looter = LOOTER in held
        first = not (self.held_up or self.plays)
        acts: list[Action] = [Draw(), *[Holdup(q) for q in range(n) if q != p and first]]
        mine = {c["number"]: len(c["cards"]) for c in self.stashes[p]["collections"]}
        acts += [Open(c, c) for c in coins if int(c) not in mine and held.count(c) > 1]
        acts += [Open(c, LOOTER) for c in coins if int(c) not in mine and looter]
        acts += [Build(m, c) for m, size in mine.items() if size < BAG_SIZE - 1 for c in (str(m), LOOTER) if c in held]
        for q in range(n):
            for col in self.stashes[q]["collections"] if q != p and mine else []:
                m, size = col["number"], len(col["cards"])
                if size < BAG_SIZE - 1:
                    acts += [Steal(m, q, u) for u in (str(m), LOOTER, "set") if (u == "set") == (m in mine)]
                elif size == BAG_SIZE - 1:
                    acts += [MakeBag(m, c, q) for c in hand]
        acts += [MakeBag(m, c) for m, size in mine.items() if size == BAG_SIZE - 1 for c in hand]
        bagged = self._bags_on_table() if self.deck else set()
        acts += [Junk(int(c)) for c in coins if int(c) in bagged] + [Knock()]
        return [*acts, *anyone, TimeUp()]

    # ----- lookups -------------------------------------------------------------------------------------------
    def _collection(self, player: int, number: int) -> dict[str, Any] | None:
        return next((c for c in self.stashes[player]["collections"] if c["number"] == number), None)

    def _stash_cards(self, player: int) -> list[str]:
        stash = self.stashes[player]
        return [card for part in (*stash["collections"], *stash["bags"]) for card in part["cards"]]

    def _bags_on_table(self) -> set[int]:
        return {b["number"] for s in self.stashes for b in s["bags"]}

    def _split_live(self, split: JSON) -> bool:
        """A split can be claimed only while both collections are exactly as they were when it was made."""
        for who, cards in zip((split["opener"], split["other"]), split["cards"], strict=True):
            col = self._collection(who, split["number"])
            if col is None or _enc(sorted(col["cards"], key=card_key)) != cards:
                return False
        return True

    def _find_split(self, action: Claim) -> JSON | None:
        key = (action.number, action.opener, action.other)
        return next((s for s in self.splits if (s["number"], s["opener"], s["other"]) == key), None)

    def _next_player(self) -> int | None:
        n = self.num_players
        return next((q % n for q in range(self.current + 1, self.current + n + 1) if not self.done[q % n]), None)

    # ----- legality ------------------------------------------------------------------------------------------
    def _violation(self, action: Action) -> Violation | None:
        for player in self._players_named(action):
            if not 0 <= player < self.num_players:
                return Violation("players", f"there is no {_p(player)} in a {self.num_players}-player game")
        return self._rule_violation(action)

    def _rule_violation(self, action: Action) -> Violation | None:
        if self.phase == "rob":
            if isinstance(action, Rob):
                return self._rob_violation(action)
            return Violation(
                "robbery",
                f"{_p(self.current)} played every card: the round is over once they take a Bag-O-Loot "
                "from another player ('rob N from P')",
            )
        if isinstance(action, Rob):
            return Violation("robbery", "only a player who has just played all their cards may rob a Bag-O-Loot")
        if isinstance(action, Challenge):
            return self._challenge_violation(action)
        if isinstance(action, Claim) and action.by != self.current:
            return self._claim_violation(action)
        if isinstance(action, Penalty):
            return None
        if isinstance(action, TimeUp):
            return self._time_violation()
        if isinstance(action, Draw):
            return self._draw_violation()
        if not self.drew:
            return self._forgot_to_draw(action)
        return self._play_violation(action)

    @staticmethod
    def _players_named(action: Action) -> list[int]:
        return [v for v in (getattr(action, f) for f in _seat_fields(type(action))) if isinstance(v, int)]

    def _draw_violation(self) -> Violation | None:
        if self.drew:
            return Violation(
                "draw once, in turn",
                f"{_p(self.current)} has already drawn this turn; a turn has one draw, and the next player "
                f"waits until {_p(self.current)} is finished (Rushing your turn: plays made before the previous "
                "player is finished are undone and the turn is skipped)",
            )
        return None

    def _forgot_to_draw(self, action: Action) -> Violation:
        extra = " Only one Bag-O-Loot per turn, and making one ends the turn." if isinstance(action, MakeBag) else ""
        return Violation(
            "draw first",
            f"{_p(self.current)} must start the turn by drawing a card ('draw'); Forgetting to draw: plays made "
            f"without drawing are undone and the turn is skipped.{extra}",
        )

    def _play_violation(self, action: Action) -> Violation | None:
        if isinstance(action, Holdup):
            return self._holdup_violation(action)
        if isinstance(action, Knock):
            return None
        checks = {
            Open: self._open_violation,
            Build: self._build_violation,
            Steal: self._steal_violation,
            MakeBag: self._bag_violation,
            Junk: self._junk_violation,
            Claim: self._claim_violation,
        }
        return checks[type(action)](action)

    def _need_cards(self, cards: list[str]) -> Violation | None:
        hand = list(self.hands[self.current])
        for card in cards:
            if card not in hand:
                have = " ".join(self.hands[self.current]) or "nothing"
                return Violation("cards in hand", f"{_p(self.current)} has no {card} to play (hand: {have})")
            hand.remove(card)
        return None

    def _not_locked_out(self) -> Violation | None:
        if not self.stashes[self.current]["collections"]:
            return Violation(
                "locked out",
                f"{_p(self.current)} is locked out: with no open collection in your stash you cannot steal "
                "(a Bag-O-Loot is not an open collection)",
            )
        return None

    def _holdup_violation(self, action: Holdup) -> Violation | None:
        if action.target == self.current:
            return Violation("holdup", "a holdup is of one other player, not yourself")
        if self.held_up or self.plays:
            return Violation("holdup", "a holdup must be the first play of your turn, right after drawing")
        return None

    def _open_violation(self, action: Open) -> Violation | None:
        if action.first == LOOTER:
            return Violation("open", "you cannot create a collection using just looter cards")
        number = int(action.first)
        if not matches(action.second, number):
            return Violation("open", f"open with two matching cards: {action.second} does not match {number}")
        if self._collection(self.current, number):
            return Violation("open", f"you already have a collection of {number}s: build on it instead")
        return self._need_cards([action.first, action.second])

    def _build_violation(self, action: Build) -> Violation | None:
        col = self._collection(self.current, action.number)
        if col is None:
            return Violation("build", f"you have no collection of {action.number}s to build on")
        if not matches(action.card, action.number):
            return Violation("build", f"only a {action.number} or a looter can be built on your {action.number}s")
        if len(col["cards"]) >= BAG_SIZE - 1:
            return Violation(
                "build",
                f"your {action.number}s already hold four cards: the fifth goes face down as a Bag-O-Loot "
                f"('bag {action.number} with CARD')",
            )
        return self._need_cards([action.card])

    def _steal_violation(self, action: Steal) -> Violation | None:
        if action.victim == self.current:
            return Violation("steal", "you cannot steal from yourself")
        locked = self._not_locked_out()
        if locked:
            return locked
        theirs = self._collection(action.victim, action.number)
        if theirs is None:
            return Violation("steal", f"{_p(action.victim)} has no open collection of {action.number}s")
        if len(theirs["cards"]) >= BAG_SIZE - 1:
            return Violation(
                "steal",
                "a stolen collection of four becomes a Bag-O-Loot with your card face down "
                f"('bag {action.number} from {action.victim + 1} with CARD')",
            )
        mine = self._collection(self.current, action.number)
        if action.using == "set":
            if mine is None:
                return Violation("steal", f"you have no collection of {action.number}s to steal with")
            if len(mine["cards"]) + len(theirs["cards"]) > BAG_SIZE:
                return Violation("steal", "the two collections would hold more than five cards")
            return None
        if mine is not None:
            return Violation(
                "steal",
                f"you already have a collection of {action.number}s: steal into it "
                f"('steal {action.number} from {action.victim + 1} with set')",
            )
        if not matches(action.using, action.number):
            return Violation("steal", f"show a matching card to steal: {action.using} does not match {action.number}")
        return self._need_cards([action.using])

    def _bag_violation(self, action: MakeBag) -> Violation | None:
        if action.victim is None:
            col = self._collection(self.current, action.number)
            if col is None or len(col["cards"]) != BAG_SIZE - 1:
                return Violation(
                    "Bag-O-Loot", f"a Bag-O-Loot needs your collection of four {action.number}s (build it first)"
                )
        else:
            if action.victim == self.current:
                return Violation("Bag-O-Loot", "you cannot steal from yourself")
            locked = self._not_locked_out()
            if locked:
                return locked
            col = self._collection(action.victim, action.number)
            if col is None or len(col["cards"]) != BAG_SIZE - 1:
                return Violation(
                    "Bag-O-Loot", f"{_p(action.victim)} has no collection of four {action.number}s to steal"
                )
        missing = self._need_cards([action.card])
        if missing:
            return missing
        if len(self.hands[self.current]) == 1 and not matches(action.card, action.number):
            return Violation("robbery", "a robbery cannot end with a bluff: your last card must match the bag")
        return None

    def _junk_violation(self, action: Junk) -> Violation | None:
        if action.number not in self._bags_on_table():
            return Violation(
                "junk", f"a junk card must match the cards of a Bag-O-Loot on the table; none is {action.number}s"
            )
        if not self.deck:
            return Violation("junk", "the deck is empty: there is no new card to exchange a junk card for")
        return self._need_cards([str(action.number)])

    def _time_violation(self) -> Violation | None:
        if not self.options["minutes"]:
            return Violation(
                "end of the game",
                "this game was not agreed to end at a time (start it with the minutes option to call time)",
            )
        if self.time_up:
            return Violation("end of the game", f"time was already called: round {self.round} is the last")
        return None

    def _claim_violation(self, action: Claim) -> Violation | None:
        split = self._find_split(action)
        if split is None or not self._split_live(split):
            return Violation(
                "split",
                f"there is no split of {action.number}s between {_p(action.opener)} and {_p(action.other)} to claim "
                "(a split lasts until the next player's turn ends, while both collections are unchanged)",
            )
        if action.by not in (action.opener, action.other) and self._collection(action.by, action.number):
            return Violation("split", f"{_p(action.by)} already has a collection of {action.number}s")
        return None

    def _challenge_violation(self, action: Challenge) -> Violation | None:
        bag = self.last_bag
        if bag is None:
            return Violation("challenge", "there is no Bag-O-Loot with a face-down card to challenge")
        if bag["status"] == "challenged":
            return Violation("challenge", "a Bag-O-Loot can be challenged only once")
        if bag["status"] == "closed":
            return Violation(
                "challenge",
                "too late: a Bag-O-Loot must be challenged before the next player begins their turn; "
                "after that it can never be challenged",
            )
        if action.by == bag["owner"]:
            return Violation("challenge", "you cannot challenge your own Bag-O-Loot")
        if not self._stash_cards(action.by):
            return Violation("challenge", "you cannot challenge if your stash is empty")
        return None

    def _rob_violation(self, action: Rob) -> Violation | None:
        if action.victim == self.current:
            return Violation("robbery", "take a Bag-O-Loot from another player, not yourself")
        if not any(b["number"] == action.number for b in self.stashes[action.victim]["bags"]):
            return Violation("robbery", f"{_p(action.victim)} has no Bag-O-Loot of {action.number}s")
        return None

    # ----- effects -------------------------------------------------------------------------------------------
    def _do(self, action: Action) -> list[Event]:
        handlers = {
            Draw: self._do_draw,
            Holdup: self._do_holdup,
            Open: self._do_open,
            Build: self._do_build,
            Steal: self._do_steal,
            MakeBag: self._do_bag,
            Junk: self._do_junk,
            Knock: self._do_knock,
            Challenge: self._do_challenge,
            Claim: self._do_claim,
            Rob: self._do_rob,
            Penalty: self._do_penalty,
            TimeUp: self._do_time,
        }
        return handlers[type(action)](action)

    def _take(self, player: int, cards: list[str]) -> None:
        for card in cards:
            self.hands[player].remove(card)

    def _give(self, player: int, cards: list[str]) -> None:
        self.hands[player] = sorted(self.hands[player] + cards, key=card_key)

    def _table(self) -> JSON:
        """The cards on the table and in hands, compactly encoded (strings deep-copy for free)."""
        return {
            "deck": _enc(self.deck),
            "junk": _enc(self.junk),
            "hands": [_enc(h) for h in self.hands],
            "stashes": [_enc_stash(s) for s in self.stashes],
        }

    def _set_table(self, table: JSON, where: str) -> None:
        n = self.num_players
        self.deck = _dec(require(table, "deck", str, where), f"{where}.deck")
        self.junk = _dec(require(table, "junk", str, where), f"{where}.junk")
        self.hands = [_dec(h, f"{where}.hands[{i}]") for i, h in enumerate(_list_of(table, "hands", n, where))]
        stashes = _list_of(table, "stashes", n, where)
        self.stashes = [_dec_stash(st, f"{where}.stashes[{i}]") for i, st in enumerate(stashes)]

    def _do_draw(self, _: Draw) -> list[Event]:
        p = self.current
        drew = bool(self.deck)
        if drew:
            self._give(p, [self.deck.pop()])
        self.drew = True
        self._close_challenge()
        self.turn_start = self._table()
        return [Drew(p, drew)]

    def _close_challenge(self) -> None:
        if self.last_bag is not None and self.last_bag["status"] == "open":
            self.last_bag["status"] = "closed"

    def _do_holdup(self, action: Holdup) -> list[Event]:
        p, hand = self.current, self.hands[action.target]
        size = len(hand)
        self.held_up = True
        if size <= HOLDUP_KEEP:
            events: list[Event] = [HoldupResult(p, action.target, size, 0)]
            return events + self._end_turn()
        taken = self.chance().sample(hand, size - HOLDUP_KEEP)
        self._take(action.target, taken)
        self._give(p, taken)
        return [HoldupResult(p, action.target, size, len(taken))]

    def _played(self, events: list[Event], ends_turn: bool = False) -> list[Event]:
        """Count a play; a hand emptied by it is a robbery, which ends the round at once (before any turn end)."""
        self.plays += 1
        if self.hands[self.current]:
            return events + self._end_turn() if ends_turn else events
        self._close_challenge()
        if any(self.stashes[q]["bags"] for q in range(self.num_players) if q != self.current):
            self.phase = "rob"
            return events
        return [*events, Robbery(self.current, -1, 0), *self._end_round()]

    def _do_open(self, action: Open) -> list[Event]:
        p, cards = self.current, [action.first, action.second]
        self._take(p, cards)
        number = int(action.first)
        self.stashes[p]["collections"].append({"number": number, "cards": cards})
        self.opened.append(number)
        return self._played([Opened(p, number, tuple(cards))])

    def _do_build(self, action: Build) -> list[Event]:
        p = self.current
        self._take(p, [action.card])
        col = self._collection(p, action.number)
        assert col is not None
        col["cards"].append(action.card)
        return self._played([Built(p, action.number, action.card, len(col["cards"]))])

    def _remove_collection(self, player: int, number: int) -> list[str]:
        cols = self.stashes[player]["collections"]
        col = next(c for c in cols if c["number"] == number)
        cols.remove(col)
        return col["cards"]

    def _do_steal(self, action: Steal) -> list[Event]:
        p, n = self.current, action.number
        stolen = self._remove_collection(action.victim, n)
        if action.using == "set":
            mine = self._remove_collection(p, n)
            cards = mine + stolen
        else:
            self._take(p, [action.using])
            cards = [*stolen, action.using]
        bag = len(cards) == BAG_SIZE
        self.stashes[p]["bags" if bag else "collections"].append(
            {"number": n, "cards": cards, "down": False} if bag else {"number": n, "cards": cards}
        )
        return self._played([Stole(p, action.victim, n, action.using, len(cards), bag)], ends_turn=bag)

    def _do_bag(self, action: MakeBag) -> list[Event]:
        p, n = self.current, action.number
        four = self._remove_collection(p if action.victim is None else action.victim, n)
        self._take(p, [action.card])
        bags = self.stashes[p]["bags"]
        bags.append({"number": n, "cards": [*four, action.card], "down": True})
        self.last_bag = {"owner": p, "index": len(bags) - 1, "status": "open"}
        return self._played([BagMade(p, n, -1 if action.victim is None else action.victim)], ends_turn=True)

    def _do_junk(self, action: Junk) -> list[Event]:
        p, card = self.current, str(action.number)
        self._take(p, [card])
        self.junk.append(card)
        self._give(p, [self.deck.pop()])
        return self._played([JunkExchanged(p, card)])

    def _do_knock(self, _: Knock) -> list[Event]:
        return [Knocked(self.current), *self._end_turn()]

    def _do_challenge(self, action: Challenge) -> list[Event]:
        info = self.last_bag
        assert info is not None
        owner, by = info["owner"], action.by
        bag = self.stashes[owner]["bags"][info["index"]]
        bag["down"] = False
        info["status"] = "challenged"
        card = bag["cards"][-1]
        genuine = matches(card, bag["number"])
        lost_bag = lost_cards = 0
        if not genuine:
            self.stashes[owner]["bags"].remove(bag)
            self.stashes[by]["bags"].append(bag)
        elif self.stashes[by]["bags"]:
            given = self.stashes[by]["bags"].pop()
            self.stashes[owner]["bags"].append(given)
            lost_bag = given["number"]
        else:
            lost = [c for col in self.stashes[by]["collections"] for c in col["cards"]]
            self.junk.extend(lost)
            self.stashes[by]["collections"] = []
            lost_cards = len(lost)
        return [Challenged(by, owner, bag["number"], card, genuine, lost_bag, lost_cards)]

    def _do_claim(self, action: Claim) -> list[Event]:
        n, by = action.number, action.by
        cards = self._remove_collection(action.opener, n) + self._remove_collection(action.other, n)
        bag = len(cards) == BAG_SIZE
        if bag:
            self.stashes[by]["bags"].append({"number": n, "cards": cards, "down": False})
        else:
            self.stashes[by]["collections"].append({"number": n, "cards": cards})
        events: list[Event] = [SplitClaimed(by, n, action.opener, action.other, bag)]
        if by == self.current:
            self.plays += 1
        return events

    def _do_rob(self, action: Rob) -> list[Event]:
        bags = self.stashes[action.victim]["bags"]
        bag = next(b for b in bags if b["number"] == action.number)
        bags.remove(bag)
        self.stashes[self.current]["bags"].append(bag)
        return [Robbery(self.current, action.victim, action.number), *self._end_round()]

    def _do_penalty(self, _: Penalty) -> list[Event]:
        if self.turn_start is not None:
            self._set_table(self.turn_start, "turn_start")
        self._close_challenge()
        self.opened = []
        return [Penalized(self.current), *self._end_turn(skipped=True)]

    def _do_time(self, _: TimeUp) -> list[Event]:
        self.time_up = True
        return [TimeCalled(self.round, self.options["minutes"])]

    def _end_turn(self, skipped: bool = False) -> list[Event]:
        """Record splits and done-ness, then pass the turn left, skipping done players; none left ends the round."""
        p = self.current
        events: list[Event] = []
        if not skipped and not self.deck and self.plays == 0:
            self.done[p] = True
            events.append(DoneForRound(p))
        self.splits = self._new_splits(p)
        self._reset_turn()
        nxt = self._next_player()
        if nxt is None:
            return events + self._end_round()
        self.current = nxt
        return events

    def _new_splits(self, p: int) -> list[JSON]:
        splits = []
        for number in self.opened:
            mine = self._collection(p, number)
            for q in range(self.num_players):
                theirs = self._collection(q, number) if q != p else None
                if mine and theirs and len(mine["cards"]) + len(theirs["cards"]) <= BAG_SIZE:
                    cards = [_enc(sorted(mine["cards"], key=card_key)), _enc(sorted(theirs["cards"], key=card_key))]
                    splits.append({"number": number, "opener": p, "other": q, "cards": cards})
        return splits

    def _end_round(self) -> list[Event]:
        events: list[Event] = []
        for p in range(self.num_players):
            stash = self.stashes[p]
            hand = len(self.hands[p])
            sizes = [len(c["cards"]) for c in stash["collections"]]
            removed, bags, points = round_points(hand, sizes, len(stash["bags"]))
            self.totals[p] += points
            events.append(RoundScored(self.round, p, hand, removed, bags, points, self.totals[p]))
        reason = self._last_round()
        if reason is not None:
            self.over = True
            self.phase = "over"
            self._reset_turn()
            self.last_bag = None
            self.splits = []
            best = max(self.totals)
            winners = tuple(p for p, t in enumerate(self.totals) if t == best)
            return [*events, GameOver(winners, tuple(self.totals), reason)]
        return [*events, self._start_round(self.round + 1, (self.dealer + 1) % self.num_players)]

    # ----- data ----------------------------------------------------------------------------------------------
    def _core(self) -> JSON:
        """Cards are stored as space-separated strings: undo keeps a snapshot per action, so it must be cheap."""
        return {
            **self._table(),
            "removed": _enc(self.removed),
            "round": self.round,
            "dealer": self.dealer,
            "totals": list(self.totals),
            "over": self.over,
            "time_up": self.time_up,
            "current": self.current,
            "done": list(self.done),
            "phase": self.phase,
            "last_bag": dict(self.last_bag) if self.last_bag else None,
            "splits": [dict(sp) for sp in self.splits],
            "drew": self.drew,
            "plays": self.plays,
            "held_up": self.held_up,
            "opened": list(self.opened),
            "turn_start": self.turn_start,
        }

    def _load(self, core: JSON) -> None:
        n, w = self.num_players, "state.state"
        if n not in REMOVED_NUMBERS:
            raise BadState(f"state.players: expected 2-4, got {n}")
        require(self.options, "rounds", int, "state.options")
        require(self.options, "advanced", bool, "state.options")
        for option in ("target", "minutes"):  # (games saved before session 26 have neither: no such end)
            self.options[option] = self.options.get(option, 0)
            require(self.options, option, int, "state.options")
        self._set_table(core, w)
        self.removed = _dec(require(core, "removed", str, w), f"{w}.removed")
        self.round = require(core, "round", int, w)
        self.dealer = _seat_field(core, "dealer", n, w)
        self.totals = _int_list(core, "totals", n, w)
        self.over = require(core, "over", bool, w)
        self.time_up = require(core, "time_up", bool, w) if "time_up" in core else False
        self.current = _seat_field(core, "current", n, w)
        self.done = [_bool(d, f"{w}.done[{i}]") for i, d in enumerate(_list_of(core, "done", n, w))]
        self.phase = _choice(core, "phase", ("turn", "rob", "over"), w)
        self.last_bag = _last_bag(require(core, "last_bag", (dict, type(None)), w), n, f"{w}.last_bag")
        if self.last_bag and self.last_bag["status"] == "open":
            owned = self.stashes[self.last_bag["owner"]]["bags"]
            if not 0 <= self.last_bag["index"] < len(owned) or not owned[self.last_bag["index"]]["down"]:
                raise BadState(f"{w}.last_bag.index: expected a face-down Bag-O-Loot of its owner")
        self.splits = [_split(sp, n, f"{w}.splits[{i}]") for i, sp in enumerate(require(core, "splits", list, w))]
        self.drew = require(core, "drew", bool, w)
        self.plays = require(core, "plays", int, w)
        self.held_up = require(core, "held_up", bool, w)
        self.opened = [_num(x, f"{w}.opened[{i}]") for i, x in enumerate(require(core, "opened", list, w))]
        self.turn_start = require(core, "turn_start", (dict, type(None)), w)
        if self.turn_start is not None:
            self._set_table(self.turn_start, f"{w}.turn_start")  # validates it; the live table is set again below
            self._set_table(core, w)
        self._check_cards(w)

    def _check_cards(self, where: str) -> None:
        """Every card exactly once: a saved state that gained or lost a card is refused."""
        held = sorted((c for zone in self.card_zones().values() for c in zone), key=card_key)
        kept, removed = full_set(self.num_players)
        if held != sorted(kept + removed, key=card_key):
            raise BadState(
                f"{where}: deck, hands, stashes, junk and removed must hold exactly one set of the game's cards"
            )

    def card_zones(self) -> dict[str, list[str]]:
        zones = {"deck": list(self.deck), "junk": list(self.junk), "removed": list(self.removed)}
        for p in range(self.num_players):
            zones[f"hand {p + 1}"] = list(self.hands[p])
            zones[f"stash {p + 1}"] = self._stash_cards(p)
        return zones

    # ----- views ---------------------------------------------------------------------------------------------
    def view(self, player: int | None) -> JSON:
        """The open table plus `player`'s own hand and own face-down cards; hand sizes are public."""
        stashes = []
        for q, stash in enumerate(self.stashes):
            bags = [
                {
                    "number": b["number"],
                    "cards": b["cards"] if not b["down"] or q == player else [*b["cards"][:-1], "?"],
                    "face_down": b["down"],
                }
                for b in stash["bags"]
            ]
            collections = [{"number": c["number"], "cards": list(c["cards"])} for c in stash["collections"]]
            stashes.append({"collections": collections, "bags": bags})
        return {
            "game": self.name,
            "round": self.round,
            "rounds": self.options["rounds"],
            "target": self.options["target"],
            "minutes": self.options["minutes"],
            "time_up": self.time_up,
            "dealer": self.dealer,
            "current": self.current_player,
            "phase": self.phase,
            "drew": self.drew,
            "plays": self.plays,
            "held_up": self.held_up,
            "deck": len(self.deck),
            "junk": sorted(self.junk, key=card_key),
            "removed": sorted(self.removed, key=card_key),
            "hand": list(self.hands[player]) if player is not None else None,
            "hand_sizes": [len(h) for h in self.hands],
            "stashes": stashes,
            "done": list(self.done),
            "last_bag": copy.deepcopy(self.last_bag),
            "splits": [s for s in copy.deepcopy(self.splits) if self._split_live(s)],
            "totals": list(self.totals),
        }

    def describe(self, player: int | None = None) -> str:
        v = self.view(player)
        lines = [
            f"Bag-O-Loot round {v['round']}{_end_words(v)}, dealer {_p(v['dealer'])}; deck {v['deck']}, "
            f"junk {len(v['junk'])}"
        ]
        for q, stash in enumerate(v["stashes"]):
            cols = " ".join("[" + " ".join(c["cards"]) + "]" for c in stash["collections"]) or "-"
            bags = " ".join("{" + " ".join(b["cards"]) + "}" for b in stash["bags"]) or "-"
            marks = (" <- to play" if q == v["current"] else "") + (" (done)" if v["done"][q] else "")
            lines.append(
                f"{_p(q)}: {v['hand_sizes'][q]} in hand, {v['totals'][q]} pts | collections {cols} | bags {bags}{marks}"
            )
        if v["hand"] is not None:
            lines.append(f"Your hand: {' '.join(v['hand']) or '(empty)'}")
        if v["last_bag"] and v["last_bag"]["status"] == "open":
            lines.append(f"{_p(v['last_bag']['owner'])}'s new Bag-O-Loot may be challenged until the next draw.")
        for s in v["splits"]:
            lines.append(f"Split {s['number']}s: {_p(s['opener'])} and {_p(s['other'])} (claim it!)")
        if self.over:
            lines.append(f"Game over. Winners: {', '.join(_p(w) for w in self.winners())}")
        return "\n".join(lines)


# ----- loading helpers ---------------------------------------------------------------------------------------
def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise BadState(f"{where}: expected bool, got {type(value).__name__}")
    return value


def _num(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in NUMBERS:
        raise BadState(f"{where}: expected a card number 1-16, got {value!r}")
    return value


def _seat_field(data: JSON, key: str, players: int, where: str) -> int:
    value = require(data, key, int, where)
    if not 0 <= value < players:
        raise BadState(f"{where}.{key}: expected a player 0-{players - 1}, got {value}")
    return value


def _list_of(data: JSON, key: str, players: int, where: str) -> list[Any]:
    value = require(data, key, list, where)
    if len(value) != players:
        raise BadState(f"{where}.{key}: expected one entry per player ({players}), got {len(value)}")
    return value


def _int_list(data: JSON, key: str, players: int, where: str) -> list[int]:
    values = _list_of(data, key, players, where)
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int):
            raise BadState(f"{where}.{key}[{i}]: expected int, got {type(v).__name__}")
    return values


def _end_words(view: JSON) -> str:
    """How the game ends, for the table's first line: '/4', ' (to 50 points)', ' (last round: time is up)'."""
    if view["time_up"]:
        return " (last round: time is up)"
    ends = [f" to {view['target']} points"] if view["target"] else []
    ends += [f" for {view['minutes']} minutes"] if view["minutes"] else []
    rounds = f"/{view['rounds']}" if view["rounds"] else ""
    if not ends:
        return rounds
    return f"{rounds} ({'or' if rounds else ''}{' or'.join(ends)})".replace("( ", "(")


def _choice(data: JSON, key: str, options: tuple[str, ...], where: str) -> str:
    value = require(data, key, str, where)
    if value not in options:
        raise BadState(f"{where}.{key}: expected one of {', '.join(options)}, got '{value}'")
    return value


def _enc(cards: list[str]) -> str:
    return " ".join(cards)


def _dec(text: Any, where: str) -> list[str]:
    if not isinstance(text, str):
        raise BadState(f"{where}: expected a string of cards, got {type(text).__name__}")
    cards = text.split()
    for i, card in enumerate(cards):
        if not is_card(card):
            raise BadState(f"{where}: card {i + 1} should be 1-16 or L, got {card!r}")
    return cards


def _enc_stash(stash: Stash) -> JSON:
    """A stash as {"collections": ["7: 7 L"], "bags": ["9: 9 9 L 9 3"], "down": [true]}."""
    return {
        "collections": [f"{c['number']}: {_enc(c['cards'])}" for c in stash["collections"]],
        "bags": [f"{b['number']}: {_enc(b['cards'])}" for b in stash["bags"]],
        "down": [b["down"] for b in stash["bags"]],
    }


def _dec_stash(data: Any, where: str) -> Stash:
    cols = [
        _dec_set(c, 2, BAG_SIZE - 1, f"{where}.collections[{i}]")
        for i, c in enumerate(require(data, "collections", list, where))
    ]
    bags = [
        _dec_set(b, BAG_SIZE, BAG_SIZE, f"{where}.bags[{i}]") for i, b in enumerate(require(data, "bags", list, where))
    ]
    down = require(data, "down", list, where)
    if len(down) != len(bags):
        raise BadState(f"{where}.down: expected one flag per bag ({len(bags)}), got {len(down)}")
    for bag, flag in zip(bags, down, strict=True):
        bag["down"] = _bool(flag, f"{where}.down")
    return {"collections": cols, "bags": bags}


def _dec_set(text: Any, low: int, high: int, where: str) -> dict[str, Any]:
    if not isinstance(text, str) or ":" not in text:
        raise BadState(f"{where}: expected 'NUMBER: CARDS', got {text!r}")
    head, tail = text.split(":", 1)
    if not (_digits(head) and int(head) in NUMBERS):
        raise BadState(f"{where}: expected a card number 1-16 before ':', got {head!r}")
    cards = _dec(tail, where)
    if not low <= len(cards) <= high:
        raise BadState(f"{where}: expected {low}-{high} cards, got {len(cards)}")
    return {"number": int(head), "cards": cards}


def _last_bag(data: Any, players: int, where: str) -> JSON | None:
    if data is None:
        return None
    _seat_field(data, "owner", players, where)
    require(data, "index", int, where)
    _choice(data, "status", ("open", "challenged", "closed"), where)
    return data


def _split(data: Any, players: int, where: str) -> JSON:
    _num(require(data, "number", int, where), f"{where}.number")
    _seat_field(data, "opener", players, where)
    _seat_field(data, "other", players, where)
    cards = require(data, "cards", list, where)
    if len(cards) != 2:
        raise BadState(f"{where}.cards: expected the two collections' cards, got {len(cards)} entries")
    for i, c in enumerate(cards):
        _dec(c, f"{where}.cards[{i}]")
    return data
