"""Events of The LOOP: data plus one English sentence each, for the table's spoken announcements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from games.core import Event, plural, seat_name
from games.the_loop.eras import CODES, era_title

NUMBER_WORDS = ("No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten")


def _e(code: str) -> str:
    return era_title(CODES.index(code))


def clone_name(code: str) -> str:
    """ren2 -> "clone ren2 (Paradox Era: the Renaissance Era)"."""
    return f"clone {code} (Paradox Era: {_e(code[:3])})"


@dataclass(frozen=True)
class AgentTurn(Event):
    player: int
    agent: str

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)}, the {self.agent}: your turn begins with Dr. Foo's phase."


@dataclass(frozen=True)
class CycleStarted(Event):
    cycle: int

    @property
    def text(self) -> str:
        return f"Cycle {self.cycle} of 3 begins: the seven Faux cards are shuffled."


@dataclass(frozen=True)
class CloneAdded(Event):
    clone: str
    era: str

    @property
    def text(self) -> str:
        return f"Dr. Foo adds {clone_name(self.clone)} to {_e(self.era)}."


@dataclass(frozen=True)
class NoCloneLeft(Event):
    @property
    def text(self) -> str:
        return "The clone bag is empty, so no clone is added."


@dataclass(frozen=True)
class CloneMoved(Event):
    clone: str
    source: str
    era: str

    @property
    def text(self) -> str:
        return f"Clone {self.clone} moves from {_e(self.source)} to {_e(self.era)}."


@dataclass(frozen=True)
class CloneDestroyed(Event):
    clone: str
    era: str
    paradox: bool

    @property
    def text(self) -> str:
        why = "enters its Paradox Era and is destroyed" if self.paradox else "is destroyed"
        return f"Clone {self.clone} {why} in {_e(self.era)}; it goes back to the bag."


@dataclass(frozen=True)
class ArtifactRevealed(Event):
    card: str
    name: str
    era: str
    destroyed: bool

    @property
    def text(self) -> str:
        if self.destroyed:
            return f"{self.name} ({self.card}) is revealed, but {_e(self.era)} is a vortex, so it is destroyed."
        return f"{self.name} ({self.card}) is now available in {_e(self.era)}."


@dataclass(frozen=True)
class RevealInstruction(Event):
    """Physical table: the engine does not know the physical Huge Deck, so it tells the table what to do.

    `purpose` is "origin" (Dr. Foo's reveal) or "reward" (the attendance reward)."""

    count: int
    purpose: str

    @property
    def text(self) -> str:
        cards = plural(self.count, "artifact")
        if self.purpose == "reward":
            return f"Attendance reward: reveal {cards} from the Huge Deck; each agent keeps one, destroy the rest."
        where = "its Origin Era" if self.count == 1 else "their Origin Eras"
        return f"Reveal {cards} from the Huge Deck into {where}."


@dataclass(frozen=True)
class HugeDeckReshuffled(Event):
    cards: int

    @property
    def text(self) -> str:
        return f"The Huge Deck ran out: {plural(self.cards, 'destroyed artifact')} are shuffled into a new Huge Deck."


@dataclass(frozen=True)
class FooTravels(Event):
    era: str
    drop: int
    clones: int

    @property
    def text(self) -> str:
        return f"Dr. Foo travels to {_e(self.era)}. Drop {plural(self.drop, 'rift cube')}."


@dataclass(frozen=True)
class RiftsLanded(Event):
    eras: tuple[str, ...]
    counts: tuple[int, ...]
    simulated: bool

    @property
    def text(self) -> str:
        parts = [f"{c} in {_e(e)}" for e, c in zip(self.eras, self.counts, strict=True) if c]
        how = "The simulated rift cubes land" if self.simulated else "Rift cubes landed"
        return f"{how}: {', '.join(parts) or 'none'}."


@dataclass(frozen=True)
class VortexOpened(Event):
    urgent: ClassVar[bool] = True  # may interrupt other announcements
    era: str
    mission: str
    artifacts: int

    @property
    def text(self) -> str:
        lost = "the mission there is lost" if self.mission else "its rift cubes are cleared"
        return f"Vortex in {_e(self.era)}: {lost}."


@dataclass(frozen=True)
class VortexesRemain(Event):
    urgent: ClassVar[bool] = True
    remaining: int

    @property
    def text(self) -> str:
        if self.remaining == 0:
            return "No vortexes remain before defeat: the next one loses the game."
        verb = "remains" if self.remaining == 1 else "remain"
        return f"{NUMBER_WORDS[self.remaining]} {'vortex' if self.remaining == 1 else 'vortexes'} {verb} before defeat."


@dataclass(frozen=True)
class MissionRevealed(Event):
    mission: str
    name: str
    era: str

    @property
    def text(self) -> str:
        return f"New mission in {_e(self.era)}: {self.name}."


@dataclass(frozen=True)
class MissionProgress(Event):
    era: str
    colour: str
    filled: int
    slots: int

    @property
    def text(self) -> str:
        where = _e(self.era)
        return f"A {self.colour} cube goes on the mission in {where}: {self.filled} of {self.slots} slots filled."


@dataclass(frozen=True)
class MissionCompleted(Event):
    mission: str
    name: str
    era: str
    completed: int

    @property
    def text(self) -> str:
        return f"Mission completed in {_e(self.era)}: {self.name}. That makes {self.completed} of 4."


@dataclass(frozen=True)
class RewardRevealed(Event):
    cards: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"Attendance reward: {', '.join(self.cards)} revealed; each agent chooses one, in turn order."


@dataclass(frozen=True)
class RewardTaken(Event):
    player: int
    card: str
    name: str

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)} takes {self.name} ({self.card}) onto their draw pile."


@dataclass(frozen=True)
class RewardDestroyed(Event):
    cards: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"The unchosen reward artifacts are destroyed: {', '.join(self.cards)}."


@dataclass(frozen=True)
class AgentMoved(Event):
    player: int
    source: str
    era: str
    cost: int

    @property
    def text(self) -> str:
        how = "using the free move" if self.cost == 0 else f"for {plural(self.cost, 'energy cube')}"
        return f"{seat_name(self.player)} moves from {_e(self.source)} to {_e(self.era)}, {how}."


@dataclass(frozen=True)
class ArtifactUsed(Event):
    player: int
    card: str
    name: str

    @property
    def text(self) -> str:
        what = "their special ability" if not self.card else f"{self.name} ({self.card})"
        return f"{seat_name(self.player)} uses {what}."


@dataclass(frozen=True)
class CubesChanged(Event):
    era: str
    colour: str
    change: int

    @property
    def text(self) -> str:
        kind = "energy cube" if self.colour == "green" else "rift cube"
        verb = "added to" if self.change > 0 else "removed from"
        return f"{plural(abs(self.change), kind)} {verb} {_e(self.era)}."


@dataclass(frozen=True)
class CardsDrawn(Event):
    player: int
    count: int

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)} draws {plural(self.count, 'card')}."


@dataclass(frozen=True)
class CardMoved(Event):
    """An artifact going somewhere because of an effect: discarded, destroyed, acquired."""

    player: int
    card: str
    name: str
    where: str

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)}: {self.name} ({self.card}) {self.where}."


@dataclass(frozen=True)
class Looped(Event):
    player: int
    dimension: str
    cost: int
    readied: tuple[str, ...]

    @property
    def text(self) -> str:
        return (
            f"{seat_name(self.player)} does a LOOP in the {self.dimension} dimension for "
            f"{plural(self.cost, 'energy cube')}, readying {', '.join(self.readied)}."
        )


@dataclass(frozen=True)
class TurnEnded(Event):
    player: int

    @property
    def text(self) -> str:
        return f"{seat_name(self.player)} refreshes: the hand is discarded and every agent draws up to 3 cards."
