"""Loot Roll rules engine (rules: seeds/001_e8596d27500e7f8f.txt): a party crawls three dungeons, fights
monsters together and rolls d20s against each other for the loot; the richest adventurer wins.

The cards are data (a catalogue, see CATALOGUE.md; the `catalogue` option names a file, default the shipped
starter catalogue). Cards are written by their catalogue id (`rusty-sword`); copies of a card are
interchangeable, so an id names "one of my copies". Players are typed 1-based.

Action text grammar (`parse_action(str(a)) == a`)::

    explore                      main action: draw a common loot card into your bag
    fight | fight boss           main action: draw a monster and fight it normally / as a boss
    discard ID [ID ...]          main action: discard loot from your bag (legal_actions lists one card at a time)
    equip ID                     put gear from your bag on (what it replaces goes back to the bag)
    dequip ID                    never legal: the rules only allow replacing gear (the message says how)
    play ID [on P]               play an ability card from your hand or use a loot card from your bag
    play ID [on P] by Q          in the roll phase, out of turn: Q plays a roll card
    choose fight | choose flight your face-down choice card in the preparation phase
    done                         end your fight-phase, town or end-of-game turn
    roll P N | roll auto         P's physical d20 showed N (1-20) / roll for the current roller from the seed
    buy ID with ID [ID ...]      town: buy a vendor's ability card, paying with loot from your bag
    deposit ID                   town: put a loot card from your bag into your bank

Phases: `turn` (a dungeon turn: plays and equips, then explore, fight or discard), `found` (the card just found
by exploring may be equipped or used), `prep` (choice cards),
`fight` (one fight-phase turn each), `roll`, `town`, `end` (a last chance to swap gear) and `over`.

Rule interpretations (where the rule text is silent or ambiguous; none of these are from the document)
--------------------------------------------------------------------------------------------------------
* Start: every player draws one ability card and Player 1 starts ("most recently explored a dungeon" is not
  something a program can ask).
* Survivability is 1 + the survivability numbers of equipped gear + effects. A fighter's survivability never
  counts below 0, nor does the monster's. Passive effects of gear work only while it is equipped; loot
  effects that are "used" are played from the bag and the card is discarded, like an ability card.
* Magic Lute: equipable (its "0" is a survivability number), in the off hand (made up); its passive
  "+2 to all other party members in the fight" needs its owner in the fight and never helps the owner.
* Immunity ("immune to any card that lowers your survivability") ignores every negative survivability
  effect on that player for the rest of the fight (played before or after), from ability or loot cards alike.
  It does not protect rolls.
* Equipment: one card per slot; a two-handed card fills main and off hand. Equipping into an occupied slot
  replaces the card there, which goes back to the bag (both, for a two-handed card replacing two). `dequip`
  alone is never legal. Equipping needs room in the bag for what it replaces (7 cards at most).
* Acting: only one player acts at a time (the current player of the phase); on any of their turns, except in
  the roll phase, they may equip gear from the bag.
* Exploring: the card found goes into the bag; when it can be equipped or used at once, the turn waits (phase
  `found`) while its owner equips it, uses it, or keeps it (`done`); either ends the turn. No other card may be
  equipped or played then: exploring was the turn's main action. (The document, "Turn Phase Options": "Choosing
  to explore the dungeon means that the player draws one card from the common loot pile. The player may equip or
  use the loot if possible, or simply place it into their loot bag." Until session 26 exploring ended the turn.)
* Played effects last for the fight they are played in: cards played on a dungeon turn before `fight` count
  in that fight; otherwise they lapse when the turn (or the town) ends. Roll cards count for the current card.
* Bag: 7 loot cards. Exploring with a full bag is refused (discard first); a full bag cannot roll.
  Bags and banks are face down: their contents are hidden from other players (the counts are public);
  equipment, discard piles, the vendor and the loot being rolled for are face up.
* Preparation: the simultaneous face-down choice is taken in seat order starting with the player whose turn
  it is; each player may equip and play preparation cards, then `choose`; choices stay hidden ("?") until the
  last one is made. "Only you fight" (solo) turns every other player's choice into flight and reveals at once.
* Fight phase: every player (fighters or not: "anyone in the party can play cards ... to help or hinder")
  gets one fight turn, in seat order from the player whose turn it is, to play cards and equip, ending it
  with `done`; one pass around the table avoids endless back-and-forth. The fight is won only if the party's
  total EXCEEDS the monster's (equal is a loss).
* A loss costs each fighter as many loot cards as the monster would have dropped, picked at random from
  their bag (a monster does not let you choose), fewer if the bag holds fewer. Lost cards are discarded.
* Roll phase: cards are rolled for from the lowest treasure value up (equal values: by id). Fighters roll in
  seat order from the player whose turn it is; a fighter with a full bag cannot roll. With one eligible roller
  the card is theirs without a roll; with none it is discarded. Roll cards may be played by any player at any
  time of the roll phase (out of turn: `play ID [on P] by Q`), on their own roll when they roll for the current
  card, or on any roller's; they count for that card only (re-rolls included). The highest total wins; a tie at
  the top is re-rolled between the tied players only. (The document, "Roll Phase": "During a roll, players may
  use cards to increase their roll or decrease others roll"; until session 26 only the player about to roll
  could.)
* Monster loot counts: a win draws them; "If defeated, all loot is taken from the discard pile" takes each card
  from the top of that rarity's discard pile, drawing from the deck only when that pile is empty.
* Dungeons: `fight boss` any time on your turn; after 4 regular monsters are defeated in a dungeon only `fight
  boss` is allowed. A boss that everyone flees goes to the bottom of the monster deck like any monster.
  Bosses come from the same monster deck, fought with their boss numbers.
* Town: the 5 face-up vendor cards are drawn from the ability deck. The player after the one who defeated the
  boss starts; each town turn is either buying (1-3 cards) or depositing (any number of cards), ended with
  `done` (a third purchase ends it by itself). Payment is loot from the bag worth at least the price; paying
  more is allowed and there is no change. (The document, "Town Phase": "When buying from the vendor players must
  pay (discard) loot cards equal or higher than the value of the ability card." Until session 26 every card paid
  had to be needed.)
  Unsold vendor cards go to the ability discard pile when the party leaves town. The town's first player
  also starts the next dungeon.
* Reshuffles: a deck that runs out is replaced by its shuffled discard pile when a card is next needed.
* End: after the third boss and its rolls, each player (from the player after the boss-slayer) gets one end
  turn to swap gear (`equip`, then `done`); then the score is the treasure value of bag + bank (equipped
  loot excluded). The highest score wins; tied players share the win (the document names no tie-breaker).
"""

from __future__ import annotations

import itertools
from collections import Counter
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
    parse_seat,
    require,
    seat_name,
)
from games.loot_roll.catalogue import (
    RARITIES,
    SLOTS,
    TWO_HANDED,
    Ability,
    Card,
    Catalogue,
    CatalogueError,
    Loot,
    load_catalogue,
)
from games.loot_roll.effects import (
    IMMUNE,
    LOOT_FROM_DISCARD,
    MANUAL,
    ROLL,
    SOLO,
    SURVIVABILITY,
    Effect,
    contributions,
    has,
)
from games.loot_roll.saved import Loader, pile_kind

BAG_SIZE = 7
DUNGEONS = 3
REGULARS_BEFORE_BOSS = 4
VENDOR_SIZE = 5
TOWN_TURNS_EACH = 2
MAX_BUYS = 3
DIE = 20
PILES = ("ability", *RARITIES, "monster")
PHASES = ("turn", "found", "prep", "fight", "roll", "town", "end", "over")
PHASE_WORDS = {
    "turn": "your dungeon turn",
    "found": "the moment after exploring (equip or use the card found, or 'done' to keep it in the bag)",
    "prep": "the preparation phase",
    "fight": "the fight phase",
    "roll": "the roll phase",
    "town": "town",
    "end": "the end of the game",
    "over": "the end of the game",
}


def _p(player: int) -> str:
    """Short for seat_name: these event sentences name several players."""
    return seat_name(player)


def _names(names: tuple[str, ...] | list[str]) -> str:
    names = list(names)
    if len(names) <= 1:
        return "".join(names) or "nothing"
    return ", ".join(names[:-1]) + " and " + names[-1]


# ----- actions -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Explore(Action):
    def __str__(self) -> str:
        return "explore"


@dataclass(frozen=True)
class Fight(Action):
    boss: bool = False

    def __str__(self) -> str:
        return "fight boss" if self.boss else "fight"


@dataclass(frozen=True)
class Discard(Action):
    cards: tuple[str, ...]  # sorted, so the text form is canonical

    def __str__(self) -> str:
        return "discard " + " ".join(self.cards)


@dataclass(frozen=True)
class Equip(Action):
    card: str

    def __str__(self) -> str:
        return f"equip {self.card}"


@dataclass(frozen=True)
class Dequip(Action):
    card: str

    def __str__(self) -> str:
        return f"dequip {self.card}"


@dataclass(frozen=True)
class Play(Action):
    card: str
    target: int | None = None
    by: int | None = None  # a player out of turn (the roll phase's roll cards); None: the current player

    def __str__(self) -> str:
        on = "" if self.target is None else f" on {self.target + 1}"
        return f"play {self.card}{on}" + ("" if self.by is None else f" by {self.by + 1}")


@dataclass(frozen=True)
class Choose(Action):
    fight: bool

    def __str__(self) -> str:
        return "choose fight" if self.fight else "choose flight"


@dataclass(frozen=True)
class Done(Action):
    def __str__(self) -> str:
        return "done"


@dataclass(frozen=True)
class Roll(Action):
    """An observed roll (`player`, `value`) or, with both None, `roll auto` for the current roller."""

    player: int | None = None
    value: int | None = None

    def __str__(self) -> str:
        return "roll auto" if self.player is None else f"roll {self.player + 1} {self.value}"


@dataclass(frozen=True)
class Buy(Action):
    card: str
    payment: tuple[str, ...]  # sorted

    def __str__(self) -> str:
        return f"buy {self.card} with {' '.join(self.payment)}"


@dataclass(frozen=True)
class Deposit(Action):
    card: str

    def __str__(self) -> str:
        return f"deposit {self.card}"


# ----- events ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Explored(Event):
    player: int

    @property
    def text(self) -> str:
        return f"{_p(self.player)} explores the dungeon and puts a common loot card in the bag."


@dataclass(frozen=True)
class Discarded(Event):
    player: int
    cards: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{_p(self.player)} discards {_names(self.cards)}."


@dataclass(frozen=True)
class Equipped(Event):
    player: int
    card: str
    slot: str
    replaced: tuple[str, ...]

    @property
    def text(self) -> str:
        back = f", putting {_names(self.replaced)} back in the bag" if self.replaced else ""
        return f"{_p(self.player)} equips {self.card} ({self.slot}){back}."


@dataclass(frozen=True)
class Played(Event):
    player: int
    card: str
    effect: str
    target: int  # -1: no target

    @property
    def text(self) -> str:
        on = f" on {_p(self.target)}" if self.target >= 0 else ""
        return f"{_p(self.player)} plays {self.card}{on}: {self.effect}."


@dataclass(frozen=True)
class ResolveByHand(Event):
    card: str
    card_text: str

    @property
    def text(self) -> str:
        return f"Resolve by hand: {self.card_text.rstrip('.')} ({self.card})."


@dataclass(frozen=True)
class MonsterDrawn(Event):
    player: int
    monster: str
    boss: bool
    survivability: int

    @property
    def text(self) -> str:
        kind = "as a boss " if self.boss else ""
        return (
            f"{_p(self.player)} draws the {self.monster}, to be fought {kind}at {self.survivability} "
            "survivability: prepare and choose fight or flight."
        )


@dataclass(frozen=True)
class ChoiceMade(Event):
    player: int

    @property
    def text(self) -> str:
        return f"{_p(self.player)} plays a choice card face down."


@dataclass(frozen=True)
class ChoicesRevealed(Event):
    fighters: tuple[int, ...]
    fleeing: tuple[int, ...]
    solo: int  # -1 unless "only you fight" was played

    @property
    def text(self) -> str:
        if self.solo >= 0:
            return f"Only {_p(self.solo)} fights this monster."
        if not self.fighters:
            return "The choice cards are turned over: everyone flees."
        fight = f"{_names([_p(p) for p in self.fighters])} {'fights' if len(self.fighters) == 1 else 'fight'}"
        flee = ""
        if self.fleeing:
            flee = f"; {_names([_p(p) for p in self.fleeing])} {'flees' if len(self.fleeing) == 1 else 'flee'}"
        return f"The choice cards are turned over: {fight}{flee}."


@dataclass(frozen=True)
class AllFled(Event):
    monster: str

    @property
    def text(self) -> str:
        return f"Everyone runs; the {self.monster} goes to the bottom of the monster deck."


@dataclass(frozen=True)
class FightResult(Event):
    won: bool
    party: int
    monster: str
    survivability: int

    @property
    def text(self) -> str:
        verb = "wins" if self.won else "is defeated"
        return f"The party {verb} with {self.party} survivability against the {self.monster}'s {self.survivability}."


@dataclass(frozen=True)
class LootLost(Event):
    player: int
    cards: tuple[str, ...]

    @property
    def text(self) -> str:
        if not self.cards:
            return f"{_p(self.player)} has no loot to lose."
        return f"{_p(self.player)} loses {_names(self.cards)} to the monster."


@dataclass(frozen=True)
class LootDropped(Event):
    monster: str
    cards: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"The {self.monster} drops {_names(self.cards)}." if self.cards else f"The {self.monster} drops nothing."


@dataclass(frozen=True)
class Rolled(Event):
    player: int
    value: int
    total: int

    @property
    def text(self) -> str:
        extra = f", {self.total} with modifiers" if self.total != self.value else ""
        return f"{_p(self.player)} rolls {self.value}{extra}."


@dataclass(frozen=True)
class RollTied(Event):
    players: tuple[int, ...]
    total: int
    card: str

    @property
    def text(self) -> str:
        return f"{_names([_p(p) for p in self.players])} tie at {self.total} and roll again for the {self.card}."


@dataclass(frozen=True)
class RollWon(Event):
    player: int
    card: str
    total: int  # -1: taken without a roll

    @property
    def text(self) -> str:
        if self.total < 0:
            return f"{_p(self.player)} takes the {self.card}: nobody else can roll for it."
        return f"{_p(self.player)} wins the {self.card} with a roll of {self.total}."


@dataclass(frozen=True)
class NobodyRolls(Event):
    card: str

    @property
    def text(self) -> str:
        return f"Nobody who fought has room in their bag for the {self.card}; it is discarded."


@dataclass(frozen=True)
class BossForced(Event):
    dungeon: int

    @property
    def text(self) -> str:
        return (
            f"The party has defeated {REGULARS_BEFORE_BOSS} monsters in dungeon {self.dungeon}: "
            "from now on it must fight the boss."
        )


@dataclass(frozen=True)
class DungeonCleared(Event):
    dungeon: int

    @property
    def text(self) -> str:
        return f"The boss is defeated: dungeon {self.dungeon} of {DUNGEONS} is cleared."


@dataclass(frozen=True)
class TownStarted(Event):
    first: int
    vendor: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"The party reaches town; the vendor offers {_names(self.vendor)}, and {_p(self.first)} starts."


@dataclass(frozen=True)
class Bought(Event):
    player: int
    card: str
    paid: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{_p(self.player)} buys {self.card}, paying with {_names(self.paid)}."


@dataclass(frozen=True)
class Deposited(Event):
    player: int

    @property
    def text(self) -> str:
        return f"{_p(self.player)} deposits a loot card in the bank."


@dataclass(frozen=True)
class DungeonEntered(Event):
    dungeon: int
    first: int

    @property
    def text(self) -> str:
        return f"The party enters dungeon {self.dungeon} of {DUNGEONS}; {_p(self.first)} goes first."


@dataclass(frozen=True)
class Reshuffled(Event):
    pile: str

    @property
    def text(self) -> str:
        return f"The {self.pile} deck ran out: its discard pile is shuffled into a new deck."


@dataclass(frozen=True)
class EndStarted(Event):
    first: int

    @property
    def text(self) -> str:
        return f"All three dungeons are cleared: last gear swaps, starting with {_p(self.first)}, then the count."


@dataclass(frozen=True)
class FinalRanking(Event):
    players: tuple[int, ...]  # best first
    scores: tuple[int, ...]  # in the same order

    @property
    def text(self) -> str:
        places = []
        for i, (p, s) in enumerate(zip(self.players, self.scores, strict=True)):
            place = 1 + next(j for j in range(i + 1) if self.scores[j] == s)
            places.append(f"{place}. {_p(p)} with {s}")
        return "Final ranking: " + ", ".join(places) + "."


# ----- equipment ---------------------------------------------------------------------------------------------
def replaced_slots(cat: Catalogue, gear: dict[str, str], item: Loot) -> list[str]:
    """The occupied slots that equipping `item` empties: a two-handed card frees both hands, and a card for the
    off hand pushes out a two-handed card (which lies in the main hand slot, turned sideways)."""
    main = gear.get("main hand")
    slots = list(item.slots)
    if "off hand" in slots and main and cat.loot[main].slot == TWO_HANDED:
        slots.append("main hand")
    return [s for s in dict.fromkeys(slots) if s in gear]


# ----- parsing -----------------------------------------------------------------------------------------------
GRAMMAR = (
    "explore | fight | fight boss | discard ID [ID ...] | equip ID | dequip ID | play ID [on P] [by Q] | "
    "choose fight | choose flight | done | roll P N | roll auto | buy ID with ID [ID ...] | deposit ID"
)


def _id(word: str, text: str) -> str:
    if not (word and word.isascii() and all(c.isalnum() or c == "-" for c in word) and word[0] != "-"):
        raise BadAction(f"'{text}': expected a card id (letters, digits and '-'), got '{word}'")
    return word


def _int(word: str, text: str, what: str) -> int:
    if not (word.isascii() and word.isdigit() and len(word) <= 4):
        raise BadAction(f"'{text}': expected {what}, got '{word}'")
    return int(word)


def _parse_words(words: list[str], text: str) -> Action:
    head, args = words[0], words[1:]
    simple = {("explore",): Explore(), ("fight",): Fight(), ("fight", "boss"): Fight(True), ("done",): Done()}
    simple |= {("choose", "fight"): Choose(True), ("choose", "flight"): Choose(False), ("roll", "auto"): Roll()}
    if tuple(words) in simple:
        return simple[tuple(words)]
    if head == "discard" and args:
        return Discard(tuple(sorted(_id(w, text) for w in args)))
    if head in ("equip", "dequip", "deposit") and len(args) == 1:
        kind = {"equip": Equip, "dequip": Dequip, "deposit": Deposit}[head]
        return kind(_id(args[0], text))
    by = None
    if head == "play" and len(args) in (3, 5) and args[-2] == "by":
        by, args = parse_seat(args[-1], text), args[:-2]
    if head == "play" and len(args) == 1:
        return Play(_id(args[0], text), None, by)
    if head == "play" and len(args) == 3 and args[1] == "on":
        return Play(_id(args[0], text), parse_seat(args[2], text), by)
    if head == "roll" and len(args) == 2:
        return Roll(parse_seat(args[0], text), _int(args[1], text, "the number the d20 shows (1-20)"))
    if head == "buy" and len(args) >= 3 and args[1] == "with":
        return Buy(_id(args[0], text), tuple(sorted(_id(w, text) for w in args[2:])))
    raise BadAction(f"'{text}' is not a Loot Roll action; expected one of: {GRAMMAR}")


# ----- the game ----------------------------------------------------------------------------------------------
class LootRoll(GameState):
    """Three dungeons and two towns. Card zones are lists of catalogue ids (the top of a deck is its end)."""

    name: ClassVar[str] = "loot-roll"

    def __init__(self, players: int, seed: int, catalogue: str | None = None) -> None:
        if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 6:
            raise GameError(f"loot-roll: players must be 2-6, got {players!r}")
        if catalogue is not None and not isinstance(catalogue, str):
            raise GameError(f"loot-roll: option catalogue must be a file path, got {catalogue!r}")
        super().__init__(players, seed, {"catalogue": catalogue})
        self.cat = load_catalogue(catalogue)
        piles = self.cat.instances()
        self.decks: dict[str, list[str]] = {}
        for pile in PILES:
            cards = sorted(piles[pile])
            self.chance().shuffle(cards)
            self.decks[pile] = cards
        self.discards: dict[str, list[str]] = {pile: [] for pile in PILES}
        self.hands: list[list[str]] = [[] for _ in range(players)]
        self.bags: list[list[str]] = [[] for _ in range(players)]
        self.banks: list[list[str]] = [[] for _ in range(players)]
        self.gear: list[dict[str, str]] = [{} for _ in range(players)]
        self.dungeon, self.defeated, self.turn, self.current, self.phase = 1, 0, 0, 0, "turn"
        self.vendor: list[str] = []
        self.found = ""  # phase `found`: the card just found by exploring
        self.town = {"start": 0, "turns": 0, "mode": "", "bought": 0}
        self._clear_fight()
        for p in range(players):
            card, _ = self._draw("ability")
            if card is not None:
                self.hands[p].append(card)

    def _clear_fight(self) -> None:
        n = self.num_players
        self.monster, self.boss, self.solo, self.fight_turns = "", False, -1, 0
        self.choices = [""] * n
        self.immune = [False] * n
        self.mods: list[JSON] = []  # played survivability effects: owner, target, amount, player
        self.table: list[str] = []  # loot still to be rolled for, lowest treasure value first
        self.rollers: list[int] = []
        self.rolls: list[int | None] = []
        self.roll_mods: list[JSON] = []

    # ----- protocol ------------------------------------------------------------------------------------------
    @property
    def current_player(self) -> int | None:
        return None if self.phase == "over" else self.current

    @property
    def is_over(self) -> bool:
        return self.phase == "over"

    def scores(self) -> list[int]:
        """Treasure value of bag + bank; equipped loot does not count (document: End of Game)."""
        return [sum(self.cat.loot[c].value for c in self.bags[p] + self.banks[p]) for p in range(self.num_players)]

    @classmethod
    def parse_action(cls, text: str) -> Action:
        if not isinstance(text, str) or not text.split():
            raise BadAction(f"empty action; expected one of: {GRAMMAR}")
        return _parse_words(text.lower().split(), text)

    def legal_actions(self, player: int | None = None) -> list[Action]:
        if self.is_over:
            return []
        others = [q for q in range(self.num_players) if q != self.current and player in (None, q)]
        mine = self._candidates() if player in (None, self.current) else []
        return [a for a in mine + self._roll_card_candidates(others) if self._violation(a) is None]

    def _roll_card_candidates(self, players: list[int]) -> list[Action]:
        """Out of turn, in the roll phase: each player's plays (the rules keep their roll cards)."""
        return [a for q in players for a in self._plays(q, by=q)] if self.phase == "roll" else []

    def _plays(self, player: int, by: int | None = None) -> list[Action]:
        """Every card `player` could play, on every target a card takes: ability cards and usable loot."""
        cards = sorted(set(self.hands[player])) + sorted({c for c in self.bags[player] if self.cat.loot[c].playable})
        acts: list[Action] = []
        for card in cards:
            targets = range(self.num_players) if any(e.needs_target for e in self._effects(card)) else [None]
            acts += [Play(card, t, by) for t in targets]
        return acts

    def _candidates(self) -> list[Action]:
        """A superset of the legal actions in a stable order; `legal_actions` filters it by the rules."""
        p = self.current
        bag = sorted(set(self.bags[p]))
        acts: list[Action] = []
        if self.phase == "turn":
            acts += [Explore(), Fight(), Fight(True), *[Discard((c,)) for c in bag]]
        if self.phase == "prep":
            acts += [Choose(True), Choose(False)]
        if self.phase == "town":
            acts += self._buy_candidates() + [Deposit(c) for c in bag]
        if self.phase == "roll":
            acts += [Roll(), *[Roll(p, v) for v in range(1, DIE + 1)]]
        acts += [Equip(c) for c in bag if self.cat.loot[c].slot]
        acts += self._plays(p)
        if self.phase in ("found", "fight", "town", "end"):
            acts.append(Done())
        return acts

    def _buy_candidates(self) -> list[Action]:
        bag = self.bags[self.current]
        payments = {
            tuple(sorted(bag[i] for i in idx))
            for r in range(1, len(bag) + 1)
            for idx in itertools.combinations(range(len(bag)), r)
        }
        return [Buy(card, pay) for card in sorted(set(self.vendor)) for pay in sorted(payments)]

    # ----- lookups -------------------------------------------------------------------------------------------
    def _order(self, start: int) -> list[int]:
        return [(start + i) % self.num_players for i in range(self.num_players)]

    def _effects(self, card: str) -> tuple[Effect, ...]:
        return self.cat.card(card).effects

    def _equipped(self, player: int) -> list[Loot]:
        return [self.cat.loot[c] for c in self.gear[player].values()]

    def fighters(self) -> frozenset[int]:
        """Who is in the fight: those who chose fight (while choices are hidden, the view assumes everyone)."""
        return frozenset(p for p, c in enumerate(self.choices) if c == "fight")

    def is_immune(self, player: int) -> bool:
        return self.immune[player] or any(has(g.effects, IMMUNE) for g in self._passive(player))

    def _passive(self, player: int) -> list[Loot]:
        return [g for g in self._equipped(player) if g.use == "passive"]

    def _passive_effects(self) -> list[tuple[int, tuple[Effect, ...]]]:
        loot = self.cat.loot
        return [
            (owner, loot[c].effects)
            for owner, gear in enumerate(self.gear)
            for c in gear.values()
            if loot[c].effects and loot[c].use == "passive"
        ]

    def survivability(self, player: int, fighters: frozenset[int] | None = None) -> int:
        """1 + gear numbers + effects (of gear and of cards played this fight); immunity drops the negative
        effects; never below 0."""
        fighters = self.fighters() if fighters is None else fighters
        base = 1 + sum(g.survivability for g in self._equipped(player))
        found: list[int] = []
        for owner, effects in self._passive_effects():
            found += contributions(effects, SURVIVABILITY, owner, player, fighters)
        for mod in self.mods:
            if mod["target"] == "player":
                found += [mod["amount"]] if mod["player"] == player else []
            elif mod["target"] != "monster":
                effect = Effect(SURVIVABILITY, mod["amount"], mod["target"])
                found += contributions((effect,), SURVIVABILITY, mod["owner"], player, fighters)
        immune = self.is_immune(player)
        return max(0, base + sum(x for x in found if x >= 0 or not immune))

    def party_total(self, fighters: frozenset[int] | None = None) -> int:
        fighters = self.fighters() if fighters is None else fighters
        return sum(self.survivability(p, fighters) for p in sorted(fighters))

    def monster_total(self, fighters: frozenset[int] | None = None) -> int:
        if not self.monster:
            return 0
        fighters = self.fighters() if fighters is None else fighters
        total = self.cat.monsters[self.monster].strength(self.boss)
        total += sum(m["amount"] for m in self.mods if m["target"] == "monster")
        for owner in sorted(fighters):
            total += sum(e.amount for g in self._passive(owner) for e in g.effects if e.target == "monster")
        return max(0, total)

    def roll_bonus(self, player: int) -> int:
        bonus = sum(
            x for g in self._passive(player) for x in contributions(g.effects, ROLL, player, player, frozenset())
        )
        return bonus + sum(m["amount"] for m in self.roll_mods if m["player"] == player)

    # ----- legality ------------------------------------------------------------------------------------------
    def _violation(self, action: Action) -> Violation | None:
        for field in ("target", "player", "by"):
            who = getattr(action, field, None)
            if who is not None and not 0 <= who < self.num_players:
                return Violation("players", f"there is no {_p(who)} in a {self.num_players}-player game")
        for card in self._cards_named(action):
            if not self.cat.knows(card):
                return Violation("cards", f"there is no card '{card}' in the catalogue ({self.cat.name})")
        checks = {
            Explore: self._explore_violation,
            Fight: self._fight_violation,
            Discard: self._discard_violation,
            Equip: self._equip_violation,
            Dequip: self._dequip_violation,
            Play: self._play_violation,
            Choose: self._choose_violation,
            Done: self._done_violation,
            Roll: self._roll_violation,
            Buy: self._buy_violation,
            Deposit: self._deposit_violation,
        }
        return checks[type(action)](action)

    @staticmethod
    def _cards_named(action: Action) -> list[str]:
        cards = list(getattr(action, "cards", ())) + list(getattr(action, "payment", ()))
        single = getattr(action, "card", None)
        return [*cards, single] if single else cards

    def _main_action(self, what: str) -> Violation | None:
        if self.phase == "found":
            return Violation("turn", f"{what} is a main action, and this turn's was exploring ({PHASE_WORDS['found']})")
        if self.phase != "turn":
            return Violation(
                "turn",
                f"{what} is a main action of a dungeon turn (explore, fight or discard); "
                f"now is {PHASE_WORDS[self.phase]}",
            )
        return None

    def _explore_violation(self, _: Explore) -> Violation | None:
        problem = self._main_action("exploring")
        if problem:
            return problem
        if len(self.bags[self.current]) >= BAG_SIZE:
            return Violation(
                "bag", "your bag is full (7 loot cards): discard loot first (a main action) or equip some of it"
            )
        if not self.decks["common"] and not self.discards["common"]:
            return Violation("explore", "there are no common loot cards left to find (deck and discard pile empty)")
        return None

    def _fight_violation(self, action: Fight) -> Violation | None:
        problem = self._main_action("fighting a monster")
        if problem:
            return problem
        if not action.boss and self.defeated >= REGULARS_BEFORE_BOSS:
            return Violation(
                "dungeon progression",
                f"after the party has defeated {REGULARS_BEFORE_BOSS} regular monsters in a dungeon it must fight "
                "the boss ('fight boss')",
            )
        return None

    def _missing(
        self, cards: tuple[str, ...] | list[str], zone: list[str], where: str, who: str = "you have"
    ) -> Violation | None:
        short = Counter(cards) - Counter(zone)
        if short:
            card = sorted(short)[0]
            return Violation("cards", f"{who} no {self.cat.name_of(card)} ({card}) {where}")
        return None

    def _discard_violation(self, action: Discard) -> Violation | None:
        problem = self._main_action("discarding loot")
        if problem:
            return problem
        if any(c not in self.cat.loot for c in action.cards):
            return Violation("discard", "only loot cards from your bag can be discarded")
        return self._missing(action.cards, self.bags[self.current], "in your bag")

    def _found_only(self, card: str) -> Violation | None:
        """After exploring only the card found may be equipped or used."""
        if self.phase == "found" and card != self.found:
            return Violation(
                "explore",
                f"after exploring only the card found ({self.cat.name_of(self.found)}) may be equipped or used; "
                "'done' keeps it in the bag",
            )
        return None

    def _equip_violation(self, action: Equip) -> Violation | None:
        if self.phase == "roll":
            return Violation("equip", "gear cannot be changed during the roll phase")
        found = self._found_only(action.card)
        if found:
            return found
        item = self.cat.loot.get(action.card)
        if item is None or item.slot is None:
            return Violation("equip", f"{self.cat.name_of(action.card)} cannot be equipped: it has no gear slot")
        missing = self._missing([action.card], self.bags[self.current], "in your bag")
        if missing:
            return missing
        replaced = self._replaced(self.current, item)
        if len(self.bags[self.current]) - 1 + len(replaced) > BAG_SIZE:
            return Violation(
                "bag",
                f"no room in your bag for {_names([self.cat.name_of(c) for c in replaced])} (7 loot cards at most)",
            )
        return None

    def _replaced_slots(self, player: int, item: Loot) -> list[str]:
        return replaced_slots(self.cat, self.gear[player], item)

    def _replaced(self, player: int, item: Loot) -> list[str]:
        return [self.gear[player][s] for s in self._replaced_slots(player, item)]

    def _dequip_violation(self, action: Dequip) -> Violation:
        worn = action.card in self.gear[self.current].values()
        what = "" if worn else f" (and you have no {action.card} equipped)"
        return Violation(
            "equipment",
            "to dequip a card you must have an equipment card to replace it: equip the replacement "
            f"('equip ID') and the old card goes back to your bag{what}",
        )

    def _play_violation(self, action: Play) -> Violation | None:
        p, card = self.current if action.by is None else action.by, action.card
        info = self.cat.card(card)
        if p != self.current:
            out_of_turn = self._out_of_turn_violation(info, p)
            if out_of_turn:
                return out_of_turn
        if isinstance(info, Loot) and not info.playable:
            why = "its effect works while it is equipped" if info.use == "passive" else "it has no effect to use"
            return Violation("play", f"{info.name} cannot be played: {why}")
        if not isinstance(info, Ability | Loot):
            return Violation("play", f"{info.name} is a monster, not a card you can play")
        found = self._found_only(card)
        if found:
            return found
        zone = self.hands[p] if isinstance(info, Ability) else self.bags[p]
        who = "you have" if p == self.current else f"{_p(p)} has"
        missing = self._missing([card], zone, "in your hand" if isinstance(info, Ability) else "in your bag", who)
        if missing:
            return missing
        if ("turn" if self.phase == "found" else self.phase) not in info.when:  # found: still the dungeon turn
            allowed = _names([PHASE_WORDS[w] for w in info.when])
            return Violation(
                "timing", f"{info.name} can be played during {allowed}, not during {PHASE_WORDS[self.phase]}"
            )
        return self._target_violation(info.name, info.effects, action.target)

    def _out_of_turn_violation(self, info: Card, player: int) -> Violation | None:
        """What only a card played by a player whose turn it is not must pass: it is a roll card, in the roll
        phase, and one that raises its player's own roll needs that player in the roll. The rest is as on a turn."""
        rolls = isinstance(info, Ability | Loot) and any(e.kind == ROLL for e in info.effects)
        if self.phase != "roll" or not rolls:
            return Violation(
                "turn",
                f"it is {_p(self.current)}'s turn: out of turn only roll cards may be played, during the roll phase",
            )
        assert isinstance(info, Ability | Loot)
        own = any(e.kind == ROLL and e.target == "self" for e in info.effects)
        if own and player not in self.rollers:
            return Violation("roll", f"{_p(player)} is not rolling for the {self.cat.name_of(self.table[0])}")
        return None

    def _target_violation(self, name: str, effects: tuple[Effect, ...], target: int | None) -> Violation | None:
        needs = any(e.needs_target for e in effects)
        if needs and target is None:
            return Violation("play", f"{name} needs a target player ('play ID on P')")
        if not needs and target is not None:
            return Violation("play", f"{name} does not take a target player")
        rolling = self.phase == "roll" and any(e.kind == ROLL for e in effects)
        if rolling and target is not None and target not in self.rollers:
            return Violation("roll", f"{_p(target)} is not rolling for the {self.cat.name_of(self.table[0])}")
        return None

    def _choose_violation(self, _: Choose) -> Violation | None:
        if self.phase != "prep":
            return Violation("choice cards", "choice cards are played face down in the preparation phase of a fight")
        return None

    def _done_violation(self, _: Done) -> Violation | None:
        if self.phase not in ("found", "fight", "town", "end"):
            return Violation(
                "turn",
                "'done' ends a fight-phase, town or end-of-game turn; now is "
                f"{PHASE_WORDS[self.phase]}" + (" (explore, fight or discard)" if self.phase == "turn" else ""),
            )
        return None

    def _roll_violation(self, action: Roll) -> Violation | None:
        if self.phase != "roll":
            return Violation("roll", "there is nothing to roll for: loot is rolled for after a won fight")
        who = self.current if action.player is None else action.player
        card = self.cat.name_of(self.table[0])
        if self.choices[who] != "fight":
            return Violation("roll", f"only players who fought roll for loot; {_p(who)} did not fight")
        if len(self.bags[who]) >= BAG_SIZE:
            return Violation("bag", f"{_p(who)}'s bag is full (7 loot cards), so they cannot roll for loot")
        if who not in self.rollers:
            return Violation(
                "roll", f"{_p(who)} is not in the roll for the {card} (a re-roll is between the tied players)"
            )
        if who != self.current:
            done = self.rolls[self.rollers.index(who)] is not None
            if done:
                return Violation("roll", f"{_p(who)} has already rolled for the {card}")
            return Violation("roll", f"{_p(self.current)} rolls for the {card} first")
        if action.value is not None and not 1 <= action.value <= DIE:
            return Violation("roll", f"a d20 shows 1 to 20, not {action.value}")
        return None

    def _town_violation(self, mode: str) -> Violation | None:
        if self.phase != "town":
            return Violation("town", "buying and depositing happen in town, between dungeons")
        other = {"buy": "deposit", "deposit": "buy"}[mode]
        if self.town["mode"] == other:
            return Violation("town", f"a town turn is either buying or depositing; you already chose to {other}")
        return None

    def _buy_violation(self, action: Buy) -> Violation | None:
        problem = self._town_violation("buy")
        if problem:
            return problem
        if action.card not in self.vendor:
            return Violation("vendor", f"the vendor does not offer {self.cat.name_of(action.card)}")
        if any(c not in self.cat.loot for c in action.payment):
            return Violation("vendor", "pay with loot cards; ability cards cannot be sold")
        missing = self._missing(action.payment, self.bags[self.current], "in your bag")
        if missing:
            return missing
        price = self.cat.abilities[action.card].price
        values = [self.cat.loot[c].value for c in action.payment]
        if sum(values) < price:
            return Violation(
                "vendor",
                f"the loot paid is worth {sum(values)}, less than the price of "
                f"{self.cat.name_of(action.card)} ({price}): pay loot worth the price or more",
            )
        return None

    def _deposit_violation(self, action: Deposit) -> Violation | None:
        return self._town_violation("deposit") or self._missing([action.card], self.bags[self.current], "in your bag")

    # ----- effects -------------------------------------------------------------------------------------------
    def _do(self, action: Action) -> list[Event]:
        handlers = {
            Explore: self._do_explore,
            Fight: self._do_fight,
            Discard: self._do_discard,
            Equip: self._do_equip,
            Play: self._do_play,
            Choose: self._do_choose,
            Done: self._do_done,
            Roll: self._do_roll,
            Buy: self._do_buy,
            Deposit: self._do_deposit,
        }
        return handlers[type(action)](action)

    def _pile(self, card: str) -> str:
        if card in self.cat.abilities:
            return "ability"
        return self.cat.loot[card].rarity if card in self.cat.loot else "monster"

    def _to_discard(self, cards: list[str] | tuple[str, ...]) -> None:
        for card in cards:
            self.discards[self._pile(card)].append(card)

    def _draw(self, pile: str) -> tuple[str | None, list[Event]]:
        """The top card of a deck, reshuffling its discard pile in when it runs out."""
        events: list[Event] = []
        if not self.decks[pile] and self.discards[pile]:
            cards = sorted(self.discards[pile])
            self.chance().shuffle(cards)
            self.decks[pile], self.discards[pile] = cards, []
            events.append(Reshuffled("ability" if pile == "ability" else f"{pile} loot" if pile in RARITIES else pile))
        return (self.decks[pile].pop() if self.decks[pile] else None), events

    def _take(self, zone: list[str], cards: list[str] | tuple[str, ...]) -> None:
        for card in cards:
            zone.remove(card)

    def _next_turn(self) -> list[Event]:
        self._clear_fight()
        self.phase, self.found = "turn", ""
        self.turn = self.current = (self.turn + 1) % self.num_players
        return []

    def _do_explore(self, _: Explore) -> list[Event]:
        p = self.current
        card, events = self._draw("common")
        assert card is not None
        self.bags[p].append(card)
        self.phase, self.found = "found", card
        if not any(isinstance(a, Equip | Play) for a in self.legal_actions()):  # nothing to do with it now
            return [*events, Explored(p), *self._next_turn()]
        return [*events, Explored(p)]

    def _do_discard(self, action: Discard) -> list[Event]:
        p = self.current
        self._take(self.bags[p], action.cards)
        self._to_discard(action.cards)
        return [Discarded(p, tuple(self.cat.name_of(c) for c in action.cards)), *self._next_turn()]

    def _do_equip(self, action: Equip) -> list[Event]:
        p, item = self.current, self.cat.loot[action.card]
        replaced = self._replaced(p, item)
        for slot in self._replaced_slots(p, item):
            del self.gear[p][slot]
        self.bags[p].remove(item.id)
        self.bags[p].extend(replaced)
        self.gear[p][item.slots[0]] = item.id
        self.gear[p] = {s: self.gear[p][s] for s in SLOTS if s in self.gear[p]}
        names = tuple(self.cat.name_of(c) for c in replaced)
        return [Equipped(p, item.name, item.slot or "", names), *(self._next_turn() if self.phase == "found" else [])]

    def _do_fight(self, action: Fight) -> list[Event]:
        monster, events = self._draw("monster")
        assert monster is not None
        self.monster, self.boss, self.phase = monster, action.boss, "prep"
        info = self.cat.monsters[monster]
        self.current = self.turn
        events.append(MonsterDrawn(self.turn, info.name, action.boss, info.strength(action.boss)))
        if has(info.effects, MANUAL):
            events.append(ResolveByHand(info.name, info.text))
        return events

    def _do_play(self, action: Play) -> list[Event]:
        p, info = self.current if action.by is None else action.by, self.cat.card(action.card)
        assert isinstance(info, Ability | Loot)
        self._take(self.hands[p] if isinstance(info, Ability) else self.bags[p], [info.id])
        self._to_discard([info.id])
        target = -1 if action.target is None else action.target
        effect = "; ".join(e.describe() for e in info.effects if e.kind != MANUAL) or "see the card"
        events: list[Event] = [Played(p, info.name, effect, target)]
        for e in info.effects:
            events += self._apply_effect(e, p, target, info)
        return events + (self._next_turn() if self.phase == "found" else [])

    def _apply_effect(self, effect: Effect, owner: int, target: int, info: Ability | Loot) -> list[Event]:
        if effect.kind == SURVIVABILITY:
            self.mods.append({"owner": owner, "target": effect.target, "amount": effect.amount, "player": target})
        elif effect.kind == ROLL:
            self.roll_mods.append({"player": owner if effect.target == "self" else target, "amount": effect.amount})
        elif effect.kind == IMMUNE:
            self.immune[owner] = True
        elif effect.kind == SOLO:
            self.solo = owner
            self.choices = ["fight" if q == owner else "flight" for q in range(self.num_players)]
            return self._reveal()
        elif effect.kind == MANUAL:
            return [ResolveByHand(info.name, info.text)]
        return []

    def _do_choose(self, action: Choose) -> list[Event]:
        p = self.current
        self.choices[p] = "fight" if action.fight else "flight"
        events: list[Event] = [ChoiceMade(p)]
        pending = [q for q in self._order(self.turn) if not self.choices[q]]
        if pending:
            self.current = pending[0]
            return events
        return events + self._reveal()

    def _reveal(self) -> list[Event]:
        order = self._order(self.turn)
        fighters = tuple(q for q in order if self.choices[q] == "fight")
        fleeing = tuple(q for q in order if self.choices[q] == "flight")
        events: list[Event] = [ChoicesRevealed(fighters, fleeing, self.solo)]
        if not fighters:
            name = self.cat.name_of(self.monster)
            self.decks["monster"].insert(0, self.monster)
            self.monster = ""
            return [*events, AllFled(name), *self._next_turn()]
        self.phase, self.fight_turns, self.current = "fight", 0, self.turn
        return events

    def _do_done(self, _: Done) -> list[Event]:
        if self.phase == "found":
            return self._next_turn()
        if self.phase == "fight":
            self.fight_turns += 1
            if self.fight_turns < self.num_players:
                self.current = (self.turn + self.fight_turns) % self.num_players
                return []
            return self._resolve_fight()
        if self.phase == "town":
            return self._end_town_turn()
        return self._end_turn_done()

    def _resolve_fight(self) -> list[Event]:
        info = self.cat.monsters[self.monster]
        party, strength = self.party_total(), self.monster_total()
        won = party > strength
        events: list[Event] = [FightResult(won, party, info.name, strength)]
        self.discards["monster"].append(self.monster)  # "Regardless of the outcome ... the monster card is discarded"
        self.monster = ""
        if not won:
            for p in self._order(self.turn):
                if self.choices[p] == "fight":
                    events.append(self._lose_loot(p, info.drop_count(self.boss)))
            return events + self._next_turn()
        if not self.boss:
            self.defeated += 1
            if self.defeated == REGULARS_BEFORE_BOSS:
                events.append(BossForced(self.dungeon))
        events += self._drop_loot(info.drops(self.boss), has(info.effects, LOOT_FROM_DISCARD))
        self.table.sort(key=lambda c: (self.cat.loot[c].value, c))
        events.append(LootDropped(info.name, tuple(self.cat.name_of(c) for c in self.table)))
        self.phase = "roll"
        return events + self._next_card()

    def _lose_loot(self, player: int, count: int) -> LootLost:
        bag = self.bags[player]
        lost = self.chance().sample(sorted(bag), min(count, len(bag))) if bag else []
        self._take(bag, lost)
        self._to_discard(lost)
        return LootLost(player, tuple(self.cat.name_of(c) for c in lost))

    def _drop_loot(self, drops: tuple[tuple[str, int], ...], from_discard: bool) -> list[Event]:
        events: list[Event] = []
        for rarity, count in drops:
            for _ in range(count):
                if from_discard and self.discards[rarity]:
                    self.table.append(self.discards[rarity].pop())
                    continue
                card, drawn = self._draw(rarity)
                events += drawn
                if card is not None:
                    self.table.append(card)
        return events

    def _next_card(self) -> list[Event]:
        """Set up the roll for the cheapest card left, giving it away when fewer than two can roll."""
        events: list[Event] = []
        while self.table:
            card = self.table[0]
            name = self.cat.name_of(card)
            eligible = [
                q for q in self._order(self.turn) if self.choices[q] == "fight" and len(self.bags[q]) < BAG_SIZE
            ]
            if len(eligible) >= 2:
                self.rollers, self.rolls, self.roll_mods = eligible, [None] * len(eligible), []
                self.current = eligible[0]
                return events
            self.table.pop(0)
            if eligible:
                self.bags[eligible[0]].append(card)
                events.append(RollWon(eligible[0], name, -1))
            else:
                self._to_discard([card])
                events.append(NobodyRolls(name))
        return events + self._after_rolls()

    def _do_roll(self, action: Roll) -> list[Event]:
        p = self.current
        value = self.chance().randint(1, DIE) if action.value is None else action.value
        self.rolls[self.rollers.index(p)] = value
        events: list[Event] = [Rolled(p, value, value + self.roll_bonus(p))]
        pending = [q for q, r in zip(self.rollers, self.rolls, strict=True) if r is None]
        if pending:
            self.current = pending[0]
            return events
        totals = {q: r + self.roll_bonus(q) for q, r in zip(self.rollers, self.rolls, strict=True) if r is not None}
        best = max(totals.values())
        top = [q for q in self.rollers if totals[q] == best]
        card = self.table[0]
        if len(top) > 1:
            self.rollers, self.rolls, self.current = top, [None] * len(top), top[0]
            return [*events, RollTied(tuple(top), best, self.cat.name_of(card))]
        self.table.pop(0)
        self.bags[top[0]].append(card)
        self.rollers, self.rolls, self.roll_mods = [], [], []
        return [*events, RollWon(top[0], self.cat.name_of(card), best), *self._next_card()]

    def _after_rolls(self) -> list[Event]:
        if not self.boss:
            return self._next_turn()
        events: list[Event] = [DungeonCleared(self.dungeon)]
        first = (self.turn + 1) % self.num_players
        self._clear_fight()
        self.turn = self.current = first
        if self.dungeon >= DUNGEONS:
            # The end phase is a round of turns like a town's, so it reuses the town's turn counter.
            self.phase, self.town = "end", {"start": first, "turns": 0, "mode": "", "bought": 0}
            return [*events, EndStarted(first)]
        self.phase, self.town = "town", {"start": first, "turns": 0, "mode": "", "bought": 0}
        for _ in range(VENDOR_SIZE):
            card, drawn = self._draw("ability")
            events += drawn
            if card is not None:
                self.vendor.append(card)
        return [*events, TownStarted(first, tuple(self.cat.name_of(c) for c in self.vendor))]

    def _do_buy(self, action: Buy) -> list[Event]:
        p = self.current
        self._take(self.bags[p], action.payment)
        self._to_discard(action.payment)
        self.vendor.remove(action.card)
        self.hands[p].append(action.card)
        card, events = self._draw("ability")
        if card is not None:
            self.vendor.append(card)
        self.town["mode"], self.town["bought"] = "buy", self.town["bought"] + 1
        names = tuple(self.cat.name_of(c) for c in action.payment)
        events = [Bought(p, self.cat.name_of(action.card), names), *events]
        return events + (self._end_town_turn() if self.town["bought"] >= MAX_BUYS else [])

    def _do_deposit(self, action: Deposit) -> list[Event]:
        p = self.current
        self.bags[p].remove(action.card)
        self.banks[p].append(action.card)
        self.town["mode"] = "deposit"
        return [Deposited(p)]

    def _end_town_turn(self) -> list[Event]:
        town = self.town
        town["turns"], town["mode"], town["bought"] = town["turns"] + 1, "", 0
        if town["turns"] < TOWN_TURNS_EACH * self.num_players:
            self.current = (town["start"] + town["turns"]) % self.num_players
            return []
        self._to_discard(self.vendor)
        self.vendor = []
        self._clear_fight()  # cards played in town do not carry into the next dungeon
        self.dungeon, self.defeated, self.phase = self.dungeon + 1, 0, "turn"
        self.turn = self.current = town["start"]
        return [DungeonEntered(self.dungeon, self.turn)]

    def _end_turn_done(self) -> list[Event]:
        self.town["turns"] += 1
        if self.town["turns"] < self.num_players:
            self.current = (self.town["start"] + self.town["turns"]) % self.num_players
            return []
        self.phase = "over"
        scores = self.scores()
        ranking = tuple(sorted(range(self.num_players), key=lambda q: (-scores[q], q)))
        best = max(scores)
        winners = tuple(q for q in range(self.num_players) if scores[q] == best)
        return [
            FinalRanking(ranking, tuple(scores[q] for q in ranking)),
            GameOver(winners, tuple(scores), "Three dungeons cleared; the richest adventurer wins"),
        ]

    # ----- data ----------------------------------------------------------------------------------------------
    def _core(self) -> JSON:
        """Card zones are space-separated id strings: undo keeps a snapshot per action, so it must be cheap."""
        return {
            "phase": self.phase,
            "dungeon": self.dungeon,
            "defeated": self.defeated,
            "turn": self.turn,
            "current": self.current,
            "decks": {pile: " ".join(cards) for pile, cards in self.decks.items()},
            "discards": {pile: " ".join(cards) for pile, cards in self.discards.items()},
            "hands": [" ".join(h) for h in self.hands],
            "bags": [" ".join(b) for b in self.bags],
            "banks": [" ".join(b) for b in self.banks],
            "gear": [dict(g) for g in self.gear],
            "vendor": " ".join(self.vendor),
            "town": dict(self.town),
            "monster": self.monster,
            "boss": self.boss,
            "solo": self.solo,
            "fight_turns": self.fight_turns,
            "choices": list(self.choices),
            "immune": list(self.immune),
            "mods": [dict(m) for m in self.mods],
            "table": " ".join(self.table),
            "rollers": list(self.rollers),
            "rolls": list(self.rolls),
            "roll_mods": [dict(m) for m in self.roll_mods],
            "found": self.found,
        }

    def _load(self, core: JSON) -> None:
        w, n = "state.state", self.num_players
        if isinstance(n, bool) or not 2 <= n <= 6:
            raise BadState(f"state.players: expected 2-6, got {n}")
        path = require(self.options, "catalogue", (str, type(None)), "state.options")
        try:
            self.cat = load_catalogue(path)
        except CatalogueError as err:
            raise BadState(f"state.options.catalogue: {err}") from err
        loader = Loader(self.cat, n, w)
        self.phase = loader.choice(core, "phase", PHASES)
        self.dungeon = loader.number(core, "dungeon", 1, DUNGEONS)
        self.defeated = loader.number(core, "defeated", 0, REGULARS_BEFORE_BOSS)
        self.turn = loader.seat(core, "turn")
        self.current = loader.seat(core, "current")
        decks, discards = require(core, "decks", dict, w), require(core, "discards", dict, w)
        self.decks = {p: loader.cards(decks, p, pile_kind(p), f"{w}.decks") for p in PILES}
        self.discards = {p: loader.cards(discards, p, pile_kind(p), f"{w}.discards") for p in PILES}
        self.hands = loader.per_player(core, "hands", "ability")
        self.bags = loader.per_player(core, "bags", "loot")
        self.banks = loader.per_player(core, "banks", "loot")
        for p, bag in enumerate(self.bags):
            if len(bag) > BAG_SIZE:
                raise BadState(f"{w}.bags[{p}]: expected at most {BAG_SIZE} loot cards, got {len(bag)}")
        self.gear = [loader.gear(g, f"{w}.gear[{i}]") for i, g in enumerate(loader.list_of(core, "gear"))]
        self.vendor = loader.cards(core, "vendor", "ability", w)
        self.town = loader.town(require(core, "town", dict, w))
        self.monster = require(core, "monster", str, w)
        if self.monster and self.monster not in self.cat.monsters:
            raise BadState(f"{w}.monster: expected a monster id of the catalogue, got {self.monster!r}")
        self.boss = require(core, "boss", bool, w)
        self.solo = require(core, "solo", int, w)
        self.fight_turns = loader.number(core, "fight_turns", 0, n)
        self.choices = [
            loader.option(c, ("", "fight", "flight"), f"{w}.choices[{i}]")
            for i, c in enumerate(loader.list_of(core, "choices"))
        ]
        self.immune = [loader.flag(x, f"{w}.immune[{i}]") for i, x in enumerate(loader.list_of(core, "immune"))]
        self.mods = [loader.mod(m, f"{w}.mods[{i}]") for i, m in enumerate(require(core, "mods", list, w))]
        self.table = loader.cards(core, "table", "loot", w)
        self.rollers = [
            loader.seat_value(x, f"{w}.rollers[{i}]") for i, x in enumerate(require(core, "rollers", list, w))
        ]
        self.rolls = require(core, "rolls", list, w)
        if len(self.rolls) != len(self.rollers) or any(
            r is not None and (isinstance(r, bool) or not isinstance(r, int)) for r in self.rolls
        ):
            raise BadState(f"{w}.rolls: expected one roll (a number or null) per roller")
        self.roll_mods = [
            loader.roll_mod(m, f"{w}.roll_mods[{i}]") for i, m in enumerate(require(core, "roll_mods", list, w))
        ]
        if self.phase == "roll" and not (self.table and self.rollers):
            raise BadState(f"{w}.table: the roll phase needs a card to roll for and its rollers")
        self.found = require(core, "found", str, w) if "found" in core else ""  # (saved before session 26: none)
        if (self.phase == "found") != bool(self.found) or (self.found and self.found not in self.bags[self.current]):
            raise BadState(f"{w}.found: expected the card just found (in the current player's bag) in phase found only")
        self._check_cards(w)

    def _check_cards(self, where: str) -> None:
        """Every catalogue card exactly once: a saved state that gained or lost a card is refused."""
        held = Counter(c for zone in self.card_zones().values() for c in zone)
        expected = self.cat.counts
        if held != expected:
            extra, lost = held - expected, expected - held
            detail = f"extra {sorted(extra)[0]!r}" if extra else f"missing {sorted(lost)[0]!r}"
            raise BadState(f"{where}: the card zones must hold every catalogue card exactly once ({detail})")

    def card_zones(self) -> dict[str, list[str]]:
        zones: dict[str, list[str]] = {}
        for pile in PILES:
            zones[f"{pile} deck"] = list(self.decks[pile])
            zones[f"{pile} discard"] = list(self.discards[pile])
        zones["vendor"] = list(self.vendor)
        zones["table"] = ([self.monster] if self.monster else []) + list(self.table)
        for p in range(self.num_players):
            zones[f"hand {p + 1}"] = list(self.hands[p])
            zones[f"bag {p + 1}"] = list(self.bags[p])
            zones[f"bank {p + 1}"] = list(self.banks[p])
            zones[f"gear {p + 1}"] = list(self.gear[p].values())
        return zones

    # ----- views ---------------------------------------------------------------------------------------------
    def _revealed(self) -> bool:
        return self.phase in ("fight", "roll")

    def view(self, player: int | None) -> JSON:
        """The open table plus `player`'s own hand, bag, bank and choice card. While choices are hidden the
        survivability numbers assume everyone fights, so they reveal nothing."""
        fighters = self.fighters() if self._revealed() else frozenset(range(self.num_players))
        players = []
        for q in range(self.num_players):
            mine = q == player
            choice = self.choices[q]
            shown = choice if (mine or self._revealed() or not choice) else "?"
            players.append(
                {
                    "hand": list(self.hands[q]) if mine else None,
                    "hand_size": len(self.hands[q]),
                    "bag": list(self.bags[q]) if mine else None,
                    "bag_size": len(self.bags[q]),
                    "bank": list(self.banks[q]) if mine else None,
                    "bank_size": len(self.banks[q]),
                    "gear": dict(self.gear[q]),
                    "survivability": self.survivability(q, fighters),
                    "immune": self.is_immune(q),
                    "choice": shown,
                    "score": self.scores()[q] if mine else None,
                }
            )
        return {
            "game": self.name,
            "catalogue": self.options["catalogue"],
            "phase": self.phase,
            "dungeon": self.dungeon,
            "defeated": self.defeated,
            "turn": self.turn,
            "current": self.current_player,
            "decks": {pile: len(cards) for pile, cards in self.decks.items()},
            "discards": {pile: list(cards) for pile, cards in self.discards.items()},
            "players": players,
            "monster": self._monster_view(fighters),
            "table": list(self.table),
            "rollers": list(self.rollers),
            "rolls": list(self.rolls),
            "roll_bonus": [self.roll_bonus(q) for q in range(self.num_players)],
            "vendor": list(self.vendor),
            "town": dict(self.town),
            "found": self.found if player == self.current else "?" if self.found else "",  # the bag is face down
        }

    def _monster_view(self, fighters: frozenset[int]) -> JSON | None:
        if not self.monster:
            return None
        return {
            "id": self.monster,
            "boss": self.boss,
            "survivability": self.monster_total(fighters),
            "party": self.party_total(fighters),
            "solo": self.solo,
            "fight_turns": self.fight_turns,
        }

    def describe(self, player: int | None = None) -> str:
        v, name = self.view(player), self.cat.name_of
        head = f"Loot Roll, dungeon {v['dungeon']}/{DUNGEONS}, {v['defeated']} monsters defeated, phase: {v['phase']}"
        lines = [head + f"; decks: {', '.join(f'{k} {n}' for k, n in v['decks'].items())}"]
        for q, pv in enumerate(v["players"]):
            gear = ", ".join(f"{s}: {name(c)}" for s, c in pv["gear"].items()) or "no gear"
            choice = f", choice {pv['choice']}" if pv["choice"] else ""
            mark = " <- to act" if q == v["current"] else ""
            lines.append(
                f"{_p(q)}: survivability {pv['survivability']}, {pv['hand_size']} abilities, bag {pv['bag_size']}/7, "
                f"bank {pv['bank_size']}{choice} | {gear}{mark}"
            )
        if player is not None:
            mine = v["players"][player]
            lines.append(f"Your hand: {', '.join(f'{name(c)} [{c}]' for c in mine['hand']) or '(empty)'}")
            bag = ", ".join(f"{name(c)} [{c}] ({self.cat.loot[c].value})" for c in mine["bag"])
            lines.append(f"Your bag: {bag or '(empty)'}; bank worth {mine['score'] - self._bag_value(player)}")
        if v["monster"]:
            m = v["monster"]
            boss = " (boss)" if m["boss"] else ""
            lines.append(f"Monster: {name(m['id'])}{boss} at {m['survivability']}; party {m['party']}")
        if v["table"]:
            rollers = ", ".join(_p(q) for q in v["rollers"])
            lines.append(f"To roll for: {', '.join(name(c) for c in v['table'])}; rollers {rollers}")
        if v["found"] and v["found"] != "?":
            lines.append(
                f"Found: {name(v['found'])} [{v['found']}]: equip or use it now, or 'done' keeps it in the bag"
            )
        if v["vendor"]:
            offers = ", ".join(f"{name(c)} [{c}] ({self.cat.abilities[c].price})" for c in v["vendor"])
            lines.append(f"Vendor: {offers}")
        if self.is_over:
            lines.append(f"Game over. Winners: {', '.join(_p(q) for q in self.winners())}")
        return "\n".join(lines)

    def _bag_value(self, player: int) -> int:
        return sum(self.cat.loot[c].value for c in self.bags[player])
