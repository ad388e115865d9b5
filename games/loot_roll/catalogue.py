"""Loading and checking a Loot Roll card catalogue (schema: CATALOGUE.md beside this file).

The game's cards are data, not code, so players can bring the cards of their own printing. Because a typo in a
hand-written file would otherwise surface mid-game as a baffling crash, every entry is checked at load time and
the first fault is reported with the file, the entry and the field, e.g.
``starter.json: loot[12] 'Rusty Sword': field 'slot': expected one of head, ..., got 'hat'``.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from games.core import GameError
from games.loot_roll.effects import (
    CARD_KINDS,
    KINDS,
    MONSTER_KINDS,
    PASSIVE_KINDS,
    PASSIVE_TARGETS,
    PHASES,
    SOLO,
    TARGETS,
    Effect,
    default_when,
)

SLOTS = ("head", "body", "legs", "feet", "main hand", "off hand")
TWO_HANDED = "two-handed"
SLOT_CHOICES = (*SLOTS, TWO_HANDED)
RARITIES = ("common", "rare", "epic")
SOURCES = ("document", "made up")
USES = ("passive", "play")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")
STARTER = "starter.json"


class CatalogueError(GameError):
    """A catalogue file that cannot be used; the message names the file, the entry and the field."""


@dataclass(frozen=True)
class Ability:
    id: str
    name: str
    price: int
    text: str
    when: tuple[str, ...]
    effects: tuple[Effect, ...]
    copies: int
    source: str


@dataclass(frozen=True)
class Loot:
    id: str
    name: str
    rarity: str
    slot: str | None  # None: not equipable
    survivability: int
    value: int
    text: str
    use: str  # "passive" (while equipped) or "play" (used from the bag, then discarded)
    when: tuple[str, ...]
    effects: tuple[Effect, ...]
    copies: int
    source: str

    @property
    def slots(self) -> tuple[str, ...]:
        """The equipment slots the card fills: both hands for a two-handed card."""
        if self.slot is None:
            return ()
        return ("main hand", "off hand") if self.slot == TWO_HANDED else (self.slot,)

    @property
    def playable(self) -> bool:
        return self.use == "play" and bool(self.effects)


@dataclass(frozen=True)
class Monster:
    id: str
    name: str
    survivability: tuple[int, int]  # (normal, boss)
    loot: tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]  # (normal, boss): (rarity, count)
    text: str
    effects: tuple[Effect, ...]
    copies: int
    source: str

    def strength(self, boss: bool) -> int:
        return self.survivability[1 if boss else 0]

    def drops(self, boss: bool) -> tuple[tuple[str, int], ...]:
        return self.loot[1 if boss else 0]

    def drop_count(self, boss: bool) -> int:
        return sum(n for _, n in self.drops(boss))


Card = Ability | Loot | Monster


@dataclass(frozen=True)
class Catalogue:
    name: str
    abilities: dict[str, Ability]
    loot: dict[str, Loot]
    monsters: dict[str, Monster]

    def card(self, card_id: str) -> Card:
        return self.abilities.get(card_id) or self.loot.get(card_id) or self.monsters[card_id]

    def knows(self, card_id: str) -> bool:
        return card_id in self.abilities or card_id in self.loot or card_id in self.monsters

    def name_of(self, card_id: str) -> str:
        return self.card(card_id).name

    @functools.cached_property
    def counts(self) -> Counter[str]:
        """How many copies of each card the set has (conservation checks compare against this)."""
        return Counter(c for pile in self.instances().values() for c in pile)

    def instances(self) -> dict[str, list[str]]:
        """Every physical card, by starting pile: one id per copy."""
        piles: dict[str, list[str]] = {"ability": [], "common": [], "rare": [], "epic": [], "monster": []}
        for a in self.abilities.values():
            piles["ability"] += [a.id] * a.copies
        for item in self.loot.values():
            piles[item.rarity] += [item.id] * item.copies
        for m in self.monsters.values():
            piles["monster"] += [m.id] * m.copies
        return piles


def starter_path() -> str:
    return str(resources.files("games.loot_roll") / "data" / STARTER)


def load_catalogue(path: str | None = None) -> Catalogue:
    """The catalogue at `path` (None: the shipped starter catalogue), checked entry by entry."""
    return _load_cached(path or starter_path())


@functools.lru_cache(maxsize=16)
def _load_cached(path: str) -> Catalogue:
    label = Path(path).name
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise CatalogueError(f"{label}: cannot read the catalogue file ({err.strerror or err})") from err
    except UnicodeDecodeError as err:
        raise CatalogueError(f"{label}: not a text file (a catalogue is JSON in UTF-8; byte {err.start})") from err
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise CatalogueError(f"{label}: not valid JSON (line {err.lineno}: {err.msg})") from err
    return parse_catalogue(data, label)


def parse_catalogue(data: Any, label: str) -> Catalogue:
    """Check and convert catalogue data; `label` (the file name) starts every error message."""
    if not isinstance(data, dict):
        raise CatalogueError(f"{label}: expected a JSON object with abilities, loot and monsters")
    sections = {}
    for key in ("abilities", "loot", "monsters"):
        if key not in data:
            raise CatalogueError(f"{label}: missing section '{key}'")
        if not isinstance(data[key], list) or not data[key]:
            raise CatalogueError(f"{label}: section '{key}': expected a non-empty list of cards")
        sections[key] = data[key]
    name = data.get("name", label)
    if not isinstance(name, str):
        raise CatalogueError(f"{label}: field 'name': expected str, got {type(name).__name__}")
    seen: dict[str, str] = {}
    abilities = _section(sections["abilities"], "abilities", label, seen, _ability)
    loot = _section(sections["loot"], "loot", label, seen, _loot)
    monsters = _section(sections["monsters"], "monsters", label, seen, _monster)
    if not any(item.rarity == "common" for item in loot.values()):
        raise CatalogueError(f"{label}: section 'loot': needs at least one common card (exploring draws them)")
    return Catalogue(name, abilities, loot, monsters)


COMMON_FIELDS = frozenset({"id", "name", "text", "copies", "source", "note", "effects"})
FIELDS = {
    "abilities": COMMON_FIELDS | {"price", "when"},
    "loot": COMMON_FIELDS | {"rarity", "slot", "survivability", "value", "use", "when"},
    "monsters": COMMON_FIELDS | {"survivability", "loot"},
}


def _section(entries: list[Any], section: str, label: str, seen: dict[str, str], build: Any) -> dict[str, Any]:
    cards: dict[str, Any] = {}
    for i, raw in enumerate(entries):
        entry = _Entry(raw, f"{label}: {section}[{i}]", FIELDS[section])
        card = build(entry)
        if card.id in seen:
            raise entry.fail("id", f"duplicate id '{card.id}' (also {seen[card.id]})")
        seen[card.id] = f"{section}[{i}]"
        cards[card.id] = card
    return cards


class _Entry:
    """One catalogue entry with typed field access that reports `file: section[i] 'Name': field 'f': ...`."""

    def __init__(self, raw: Any, where: str, allowed: frozenset[str]) -> None:
        if not isinstance(raw, dict):
            raise CatalogueError(f"{where}: expected an object, got {type(raw).__name__}")
        self.raw = raw
        name = raw.get("name")
        self.where = f"{where} '{name}'" if isinstance(name, str) else where
        unknown = sorted(set(raw) - allowed)
        if unknown:
            raise self.fail(unknown[0], "unknown field (a typo?)")

    def fail(self, field: str, problem: str) -> CatalogueError:
        return CatalogueError(f"{self.where}: field '{field}': {problem}")

    def get(self, field: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if field not in self.raw:
            if default is ...:
                raise self.fail(field, "missing")
            return default
        return _typed(self.raw[field], kind, lambda problem: self.fail(field, problem))

    def choice(self, field: str, options: tuple[str, ...], default: Any = ...) -> Any:
        value = self.get(field, (str, type(None)) if default is None else str, default)
        if value is not default and value not in options:
            raise self.fail(field, f"expected one of {', '.join(options)}, got {value!r}")
        return value

    def count(self, field: str, low: int, default: Any = ...) -> int:
        value = self.get(field, int, default)
        if value < low:
            raise self.fail(field, f"expected a whole number of at least {low}, got {value}")
        return value

    def ident(self) -> str:
        value = self.get("id", str)
        if not ID_PATTERN.match(value):
            raise self.fail("id", f"expected lowercase letters, digits and '-' (typeable in actions), got {value!r}")
        return value

    def effects(self, kinds: tuple[str, ...], passive: bool = False) -> tuple[Effect, ...]:
        raw = self.get("effects", list, [])
        return tuple(self._effect(e, f"effects[{i}]", kinds, passive) for i, e in enumerate(raw))

    def _effect(self, raw: Any, field: str, kinds: tuple[str, ...], passive: bool) -> Effect:
        if not isinstance(raw, dict):
            raise self.fail(field, f"expected an object, got {type(raw).__name__}")
        kind = raw.get("kind")
        allowed = tuple(k for k in kinds if not passive or k in PASSIVE_KINDS)
        if kind not in allowed:
            why = " (passive gear)" if passive else ""
            raise self.fail(f"{field}.kind", f"expected one of {', '.join(allowed)}{why}, got {kind!r}")
        extra = sorted(set(raw) - {"kind", "amount", "target"})
        if extra:
            raise self.fail(f"{field}.{extra[0]}", "unknown field")
        targets = (PASSIVE_TARGETS if passive else TARGETS).get(kind)
        if targets is None:
            if "amount" in raw or "target" in raw:
                raise self.fail(f"{field}.{'amount' if 'amount' in raw else 'target'}", f"not used by '{kind}'")
            return Effect(kind)
        amount = _typed(raw.get("amount"), int, lambda p: self.fail(f"{field}.amount", p))
        target = raw.get("target", "self")
        if target not in targets:
            raise self.fail(f"{field}.target", f"expected one of {', '.join(targets)}, got {target!r}")
        return Effect(kind, amount, target)

    def when(self, effects: tuple[Effect, ...]) -> tuple[str, ...]:
        value = self.get("when", list, None)
        if value is None:
            return default_when(effects)
        if any(e.kind == SOLO for e in effects) and value != ["prep"]:
            raise self.fail("when", "a 'solo' card is played in the preparation phase only: use [\"prep\"]")
        if not value:
            raise self.fail("when", f"expected a non-empty list of {', '.join(PHASES)}")
        for i, phase in enumerate(value):
            if phase not in PHASES:
                raise self.fail(f"when[{i}]", f"expected one of {', '.join(PHASES)}, got {phase!r}")
        return tuple(p for p in PHASES if p in value)


def _typed(value: Any, kind: type | tuple[type, ...], fail: Any) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        got = "null" if value is None else type(value).__name__
        raise fail(f"expected {names}, got {got}")
    return value


def _common(entry: _Entry) -> dict[str, Any]:
    entry.get("note", str, "")  # provenance remarks for people; checked, not used
    return {
        "id": entry.ident(),
        "name": entry.get("name", str),
        "text": entry.get("text", str, ""),
        "copies": entry.count("copies", 1, 1),
        "source": entry.choice("source", SOURCES),
    }


def _ability(entry: _Entry) -> Ability:
    base = _common(entry)
    effects = entry.effects(CARD_KINDS)
    return Ability(**base, price=entry.count("price", 0), when=entry.when(effects), effects=effects)


def _loot(entry: _Entry) -> Loot:
    base = _common(entry)
    rarity = entry.choice("rarity", RARITIES)
    slot = entry.choice("slot", SLOT_CHOICES, None)
    survivability = entry.count("survivability", 0, 0)
    if slot is None and survivability:
        raise entry.fail("survivability", "only equipable loot (with a slot) has a survivability number")
    use = entry.choice("use", USES, "play")
    if use == "passive" and slot is None:
        raise entry.fail("use", "passive effects work while equipped, so the card needs a slot")
    effects = entry.effects(CARD_KINDS, passive=use == "passive")
    when = entry.when(effects) if use == "play" else ()
    return Loot(
        **base,
        rarity=rarity,
        slot=slot,
        survivability=survivability,
        value=entry.count("value", 0),
        use=use,
        when=when,
        effects=effects,
    )


def _monster(entry: _Entry) -> Monster:
    base = _common(entry)
    raw = entry.get("survivability", (int, list))
    pair = [raw, raw] if isinstance(raw, int) else raw
    if len(pair) != 2 or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in pair):
        raise entry.fail("survivability", f"expected a number or [normal, boss] numbers of at least 0, got {raw!r}")
    loot = entry.get("loot", dict)
    normal = _drops(entry, loot, "normal")
    boss = _drops(entry, loot, "boss") if "boss" in loot else normal
    extra = sorted(set(loot) - {"normal", "boss"})
    if extra:
        raise entry.fail(f"loot.{extra[0]}", "expected only 'normal' and 'boss'")
    return Monster(**base, survivability=(pair[0], pair[1]), loot=(normal, boss), effects=entry.effects(MONSTER_KINDS))


def _drops(entry: _Entry, loot: dict[str, Any], outcome: str) -> tuple[tuple[str, int], ...]:
    field = f"loot.{outcome}"
    if outcome not in loot:
        raise entry.fail(field, "missing")
    counts = loot[outcome]
    if not isinstance(counts, dict):
        raise entry.fail(field, f"expected an object of rarity: count, got {type(counts).__name__}")
    drops = []
    for rarity, n in counts.items():
        if rarity not in RARITIES:
            raise entry.fail(f"{field}.{rarity}", f"expected a rarity ({', '.join(RARITIES)})")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise entry.fail(f"{field}.{rarity}", f"expected a count of at least 0, got {n!r}")
        drops.append((rarity, n))
    return tuple(sorted(drops, key=lambda d: RARITIES.index(d[0])))


__all__ = ["KINDS", "Ability", "Catalogue", "CatalogueError", "Loot", "Monster", "load_catalogue"]
