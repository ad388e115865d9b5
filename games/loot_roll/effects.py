"""The card effects a Loot Roll catalogue can express, and the arithmetic they feed.

Only what a referee can settle without reading minds is automated: survivability modifiers (for yourself, the
whole party, the rest of the party, one chosen player or the monster), roll modifiers, "only you fight",
immunity to survivability-lowering cards and "loot from the discard pile". Anything else a card says is a
`manual` effect: the engine announces the card's text ("Resolve by hand: ...") and logs it, and the players
settle it themselves. That keeps the catalogue honest: a card never silently does less than its text.
"""

from __future__ import annotations

from dataclasses import dataclass

SURVIVABILITY = "survivability"
ROLL = "roll"
SOLO = "solo"
IMMUNE = "immune"
LOOT_FROM_DISCARD = "loot_from_discard"
MANUAL = "manual"

KINDS = (SURVIVABILITY, ROLL, SOLO, IMMUNE, LOOT_FROM_DISCARD, MANUAL)
CARD_KINDS = (SURVIVABILITY, ROLL, SOLO, IMMUNE, MANUAL)  # ability and loot cards
MONSTER_KINDS = (LOOT_FROM_DISCARD, MANUAL)
PASSIVE_KINDS = (SURVIVABILITY, ROLL, IMMUNE)  # what equipped gear can do by itself

# Targets: "self" the card's owner, "party" every fighter (owner included), "others" every fighter but the
# owner, "player" one player named when the card is played, "monster" the monster being fought.
TARGETS = {
    SURVIVABILITY: ("self", "party", "others", "player", "monster"),
    ROLL: ("self", "player"),
}
PASSIVE_TARGETS = {SURVIVABILITY: ("self", "party", "others", "monster"), ROLL: ("self",)}

PHASES = ("turn", "prep", "fight", "roll", "town")
DEFAULT_WHEN = {
    SURVIVABILITY: ("prep", "fight"),
    IMMUNE: ("prep", "fight"),
    SOLO: ("prep",),
    ROLL: ("roll",),
}


@dataclass(frozen=True)
class Effect:
    """One machine-readable effect of a card; `amount` and `target` matter only for modifiers."""

    kind: str
    amount: int = 0
    target: str = "self"

    @property
    def needs_target(self) -> bool:
        return self.kind in TARGETS and self.target == "player"

    def describe(self) -> str:
        """A few words for announcements ("+2 survivability to the rest of the party")."""
        sign = f"{self.amount:+d}"
        whom = {
            "self": "",
            "party": " to the party",
            "others": " to the rest of the party",
            "player": "",
            "monster": " to the monster",
        }[self.target]
        if self.kind == SURVIVABILITY:
            return f"{sign} survivability{whom}"
        if self.kind == ROLL:
            return f"{sign} to the roll"
        if self.kind == SOLO:
            return "only the player fights"
        if self.kind == IMMUNE:
            return "immune to cards that lower survivability"
        return "loot from the discard pile" if self.kind == LOOT_FROM_DISCARD else "resolve by hand"


def default_when(effects: tuple[Effect, ...]) -> tuple[str, ...]:
    """When a card may be played if its entry does not say: where its effects act; text-only cards any time
    (the document: "If an ability card doesn't specify when it may be played, you are free to play it
    whenever you feel like it")."""
    phases = {phase for e in effects for phase in DEFAULT_WHEN.get(e.kind, ())}
    return tuple(p for p in PHASES if p in phases) if phases else PHASES


def contributions(
    effects: tuple[Effect, ...], kind: str, owner: int, player: int, fighters: frozenset[int]
) -> list[int]:
    """What each of `owner`'s effects adds to `player` (survivability or roll modifiers), one entry per effect
    so that immunity can drop the negative ones.

    Survivability effects act only inside the fight: on the party (fighters, owner included), the rest of the
    party (fighters but the owner, and only while the owner fights), or the owner alone.
    """
    found = []
    for e in effects:
        if e.kind != kind:
            continue
        together = owner in fighters and player in fighters
        if (
            (e.target == "self" and player == owner)
            or (e.target == "party" and together)
            or (e.target == "others" and together and player != owner)
        ):
            found.append(e.amount)
    return found


def monster_modifier(effects: tuple[Effect, ...]) -> int:
    return sum(e.amount for e in effects if e.kind == SURVIVABILITY and e.target == "monster")


def has(effects: tuple[Effect, ...], kind: str) -> bool:
    return any(e.kind == kind for e in effects)
