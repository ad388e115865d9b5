"""Reading a saved Loot Roll state back: typed access to each field that names the field at fault.

Kept apart from the rules so engine.py reads as the game; every check here raises `BadState` with the dotted
path of the field (``state.state.gear[0].head: expected gear for that slot, got 'ruby'``).
"""

from __future__ import annotations

from typing import Any

from games.core import JSON, BadState, require
from games.loot_roll.catalogue import SLOTS, TWO_HANDED, Catalogue


def pile_kind(pile: str) -> str:
    return "ability" if pile == "ability" else "monster" if pile == "monster" else pile


class Loader:
    """Typed reading of a saved core, naming the field at fault."""

    def __init__(self, cat: Catalogue, players: int, where: str) -> None:
        self.cat, self.n, self.w = cat, players, where

    def choice(self, data: JSON, key: str, options: tuple[str, ...]) -> str:
        return self.option(require(data, key, str, self.w), options, f"{self.w}.{key}")

    @staticmethod
    def option(value: Any, options: tuple[str, ...], where: str) -> str:
        if value not in options:
            raise BadState(f"{where}: expected one of {', '.join(repr(o) for o in options)}, got {value!r}")
        return value

    def number(self, data: JSON, key: str, low: int, high: int) -> int:
        value = require(data, key, int, self.w)
        if not low <= value <= high:
            raise BadState(f"{self.w}.{key}: expected {low}-{high}, got {value}")
        return value

    def seat(self, data: JSON, key: str) -> int:
        return self.seat_value(require(data, key, int, self.w), f"{self.w}.{key}")

    def seat_value(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < self.n:
            raise BadState(f"{where}: expected a player 0-{self.n - 1}, got {value!r}")
        return value

    @staticmethod
    def flag(value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise BadState(f"{where}: expected bool, got {type(value).__name__}")
        return value

    def list_of(self, data: JSON, key: str) -> list[Any]:
        value = require(data, key, list, self.w)
        if len(value) != self.n:
            raise BadState(f"{self.w}.{key}: expected one entry per player ({self.n}), got {len(value)}")
        return value

    def cards(self, data: JSON, key: str, kind: str, where: str) -> list[str]:
        text = require(data, key, str, where)
        return self.card_list(text, kind, f"{where}.{key}")

    def card_list(self, text: Any, kind: str, where: str) -> list[str]:
        if not isinstance(text, str):
            raise BadState(f"{where}: expected a string of card ids, got {type(text).__name__}")
        cards = text.split()
        for card in cards:
            if not self._is(card, kind):
                raise BadState(f"{where}: expected {kind} card ids of the catalogue, got {card!r}")
        return cards

    def _is(self, card: str, kind: str) -> bool:
        if kind == "ability":
            return card in self.cat.abilities
        if kind == "monster":
            return card in self.cat.monsters
        item = self.cat.loot.get(card)
        return item is not None and (kind == "loot" or item.rarity == kind)

    def per_player(self, data: JSON, key: str, kind: str) -> list[list[str]]:
        return [self.card_list(t, kind, f"{self.w}.{key}[{i}]") for i, t in enumerate(self.list_of(data, key))]

    def gear(self, data: Any, where: str) -> dict[str, str]:
        if not isinstance(data, dict):
            raise BadState(f"{where}: expected an object of slot: card id, got {type(data).__name__}")
        for slot, card in data.items():
            item = self.cat.loot.get(card) if isinstance(card, str) else None
            if slot not in SLOTS or item is None or item.slots[:1] != (slot,):
                raise BadState(f"{where}.{slot}: expected gear for that slot, got {card!r}")
        main = data.get("main hand")
        if main and self.cat.loot[main].slot == TWO_HANDED and "off hand" in data:
            raise BadState(f"{where}.off hand: a two-handed card in the main hand leaves no off hand")
        return {s: data[s] for s in SLOTS if s in data}

    def town(self, data: JSON) -> JSON:
        where = f"{self.w}.town"
        return {
            "start": self.seat_value(require(data, "start", int, where), f"{where}.start"),
            "turns": require(data, "turns", int, where),
            "mode": self.option(require(data, "mode", str, where), ("", "buy", "deposit"), f"{where}.mode"),
            "bought": require(data, "bought", int, where),
        }

    def mod(self, data: Any, where: str) -> JSON:
        target = self.option(
            require(data, "target", str, where), ("self", "party", "others", "player", "monster"), f"{where}.target"
        )
        return {
            "owner": self.seat_value(require(data, "owner", int, where), f"{where}.owner"),
            "target": target,
            "amount": require(data, "amount", int, where),
            "player": require(data, "player", int, where),
        }

    def roll_mod(self, data: Any, where: str) -> JSON:
        return {
            "player": self.seat_value(require(data, "player", int, where), f"{where}.player"),
            "amount": require(data, "amount", int, where),
        }
