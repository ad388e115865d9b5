"""The protocol every rules engine follows.

Every game is a `GameState` subclass. The base class owns what must behave the same in all five games, so
that the tracker, the UI and the tests can treat them alike:

* `apply` validates first and mutates second; if anything goes wrong while mutating, the state is restored,
  so a bad frame or a wrong click can never leave a half-applied move behind.
* undo is a stack of snapshots of the game-specific state, kept in `to_dict` too, so a game saved after a
  crash can still be undone. Snapshots are canonical JSON strings: immutable, so saving a long game copies
  references instead of deep-copying hundreds of nested dicts, and equal states compare equal.
* chance comes from `(seed, number of draws so far)`, never from a live RNG object, so a state is plain data
  and a seeded game replays exactly.

A subclass supplies its game-specific data (`_core` / `_load`), its rules (`_violation`, `_do`,
`legal_actions`), its text form of actions (`parse_action`) and what one player may see (`view`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self

JSON = dict[str, Any]

FORMAT_VERSION = 1


class GameError(Exception):
    """Base of every error a rules engine raises on purpose (never a bug)."""


class IllegalMove(GameError):
    """An action the rules forbid in this state; the state is left unchanged.

    `rule` names the rule broken in a few words (e.g. "explore: count must be a face-up trinket"), so the UI can
    show the player *why*, not just *no*.
    """

    def __init__(self, action: object, rule: str, reason: str) -> None:
        self.action = action
        self.rule = rule
        self.reason = reason
        super().__init__(f"illegal move '{action}': {reason} [rule: {rule}]")


class BadAction(GameError, ValueError):
    """A text that is not any action of this game (a typo, not a rules question)."""


class BadState(GameError, ValueError):
    """A saved state that cannot be loaded; the message names the field at fault and what was expected."""


class NothingToUndo(GameError):
    """Undo asked of a state with no history."""


@dataclass(frozen=True)
class Violation:
    """Why an action is illegal: the rule (short, stable) and a sentence for the player."""

    rule: str
    reason: str


@dataclass(frozen=True)
class Action:
    """Base of all actions: small, frozen, hashable; `str(action)` is its text form and parses back."""

    def __str__(self) -> str:  # pragma: no cover - every concrete action overrides this
        raise NotImplementedError


@dataclass(frozen=True)
class Event:
    """Something that happened, as data, with one English sentence for announcements.

    Subclasses are dataclasses whose fields are JSON-safe; `text` is a property so the sentence always
    matches the data. `urgent` events (a loss, a vortex) may interrupt other announcements.
    """

    urgent: ClassVar[bool] = False

    @property
    def text(self) -> str:  # pragma: no cover - every concrete event overrides this
        raise NotImplementedError

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_dict(self) -> JSON:
        data: JSON = {"type": self.kind}
        for f in fields(self):
            value = getattr(self, f.name)
            data[f.name] = list(value) if isinstance(value, tuple) else value
        data["text"] = self.text
        return data


def chance_rng(game: str, seed: int, draw: int) -> random.Random:
    """A fresh RNG for the `draw`-th chance event of a seeded game.

    Hashing (rather than seeding one long-lived generator) keeps the state free of opaque RNG internals.
    """
    digest = hashlib.sha256(f"{game}:{seed}:{draw}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def require(data: JSON, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """Fetch `data[key]` checking its type, or raise `BadState` naming the field and what was expected."""
    if not isinstance(data, dict):
        raise BadState(f"{where}: expected an object, got {type(data).__name__}")
    if key not in data:
        raise BadState(f"{where}: missing field '{key}'")
    value = data[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise BadState(f"{where}.{key}: expected {_kind_name(kind)}, got bool")
    if not isinstance(value, kind):
        raise BadState(f"{where}.{key}: expected {_kind_name(kind)}, got {type(value).__name__}")
    return value


def _check_snapshot(snapshot: object, where: str) -> None:
    """An undo snapshot must be a JSON string holding `chance_draws` and `core`; checked at load, not at undo."""
    if not isinstance(snapshot, str):
        raise BadState(f"{where}: expected a JSON string (an undo snapshot), got {type(snapshot).__name__}")
    try:
        data = json.loads(snapshot)
    except json.JSONDecodeError as err:
        raise BadState(f"{where}: not valid JSON ({err.msg})") from err
    require(data, "chance_draws", int, where)
    require(data, "core", dict, where)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


class GameState(ABC):
    """One game in progress: rules, hidden information, chance, history.

    Players are numbered from 0. `current_player` is whose turn it is (None once the game is over);
    `actors()` also names players who may act out of turn right now (a challenge, a claim).
    """

    name: ClassVar[str]
    # True where `_core` builds new containers and `_load` copies what it keeps: `to_dict` and `from_dict` then
    # skip their defensive deep copies, which dominate the tracker's time (it rebuilds Loot the Loop states tens
    # of thousands of times per still table).
    fresh_core: ClassVar[bool] = False

    def __init__(self, players: int, seed: int, options: JSON | None = None) -> None:
        self.num_players = players
        self.seed = seed
        self.options: JSON = dict(options or {})
        self.chance_draws = 0
        self._history: list[str] = []
        self._recording = True  # False in a `search_copy`: no undo snapshots

    # ----- what each game supplies -------------------------------------------------------------------------
    @property
    @abstractmethod
    def current_player(self) -> int | None:
        """Whose turn it is, or None when the game is over."""

    @property
    @abstractmethod
    def is_over(self) -> bool: ...

    @abstractmethod
    def legal_actions(self, player: int | None = None) -> list[Action]:
        """Every legal action now (of `player` only, if given), in a stable order."""

    @abstractmethod
    def _violation(self, action: Action) -> Violation | None:
        """Why `action` is illegal now, or None if it is legal. Must not mutate."""

    @abstractmethod
    def _do(self, action: Action) -> list[Event]:
        """Carry out a legal action. May raise; `apply` then restores the state."""

    @abstractmethod
    def _core(self) -> JSON:
        """The game-specific state as JSON-safe data (the base adds seed, players, options, history)."""

    @abstractmethod
    def _load(self, core: JSON) -> None:
        """Set the game-specific state from `_core()` output; raise `BadState` naming the bad field."""

    @abstractmethod
    def scores(self) -> list[int]:
        """Points per player as the rule text counts them now."""

    @abstractmethod
    def view(self, player: int | None) -> JSON:
        """What `player` may see (None: a spectator who sees only the open table), JSON-safe."""

    @classmethod
    @abstractmethod
    def parse_action(cls, text: str) -> Action:
        """Parse an action's text form; raise `BadAction` with what was expected."""

    def winners(self) -> list[int]:
        """Players who won (empty while the game goes on). Default: highest score once over."""
        if not self.is_over:
            return []
        scores = self.scores()
        best = max(scores)
        return [p for p, s in enumerate(scores) if s == best]

    def actors(self) -> list[int]:
        """Players who may act now: the current player first, then anyone with an out-of-turn action."""
        current = self.current_player
        if current is None:
            return []
        others = sorted({p for p in range(self.num_players) if p != current and self.legal_actions(p)})
        return [current, *others]

    def describe(self, player: int | None = None) -> str:
        """A compact text picture of the table for the terminal. Games override for something nicer."""
        return json.dumps(self.view(player), indent=1)

    # ----- shared machinery ----------------------------------------------------------------------------------
    def violation(self, action: Action | str) -> Violation | None:
        """Why an action (or its text) is illegal now, or None if legal."""
        if isinstance(action, str):
            action = self.parse_action(action)
        if self.is_over:
            return Violation("game over", "the game is over; no more actions")
        return self._violation(action)

    def is_legal(self, action: Action | str) -> bool:
        try:
            return self.violation(action) is None
        except BadAction:
            return False

    def apply(self, action: Action | str) -> list[Event]:
        """Validate, then carry out, an action; on any failure the state is exactly as before."""
        if isinstance(action, str):
            action = self.parse_action(action)
        problem = self.violation(action)
        if problem is not None:
            raise IllegalMove(action, problem.rule, problem.reason)
        return self._carry_out(action)

    def force(self, action: Action | str) -> list[Event]:
        """Carry out an action without the legality check: the table as it would be had the player made the move
        against the rules. The tracker uses it to tell an illegal move (which it must flag, naming the rule) from
        a misread. Undoable like any other action; on failure the state is exactly as before."""
        return self._carry_out(self.parse_action(action) if isinstance(action, str) else action)

    def _carry_out(self, action: Action) -> list[Event]:
        if not self._recording:  # a search's copy: nobody undoes it, and the snapshot is most of a move's cost
            return self._do(action)
        snapshot = self._snapshot()
        try:
            events = self._do(action)
        except BaseException:
            self._restore(snapshot)
            raise
        self._history.append(snapshot)
        return events

    def undo(self) -> None:
        """Take back the last action (chance included: its draws are rewound too)."""
        if not self._history:
            raise NothingToUndo("nothing to undo: no action has been applied")
        self._restore(self._history.pop())

    @property
    def history_length(self) -> int:
        return len(self._history)

    def chance(self) -> random.Random:
        """The RNG for the next chance event (shuffle, deal, random pick); each call is a new draw."""
        rng = chance_rng(self.name, self.seed, self.chance_draws)
        self.chance_draws += 1
        return rng

    def _snapshot(self) -> str:
        return json.dumps(
            {"chance_draws": self.chance_draws, "core": self._core()}, sort_keys=True, separators=(",", ":")
        )

    def _restore(self, snapshot: str) -> None:
        data = json.loads(snapshot)
        self.chance_draws = data["chance_draws"]
        self._load(data["core"])

    def to_dict(self) -> JSON:
        """Everything, hidden cards and undo history included, as JSON-safe data."""
        return {
            "game": self.name,
            "format": FORMAT_VERSION,
            "players": self.num_players,
            "seed": self.seed,
            "options": copy.deepcopy(self.options),
            "chance_draws": self.chance_draws,
            "state": self._core() if self.fresh_core else copy.deepcopy(self._core()),
            "history": list(self._history),
        }

    @classmethod
    def from_dict(cls, data: JSON) -> Self:
        """Rebuild a state from `to_dict` output; a malformed dict raises `BadState` naming the field."""
        game = require(data, "game", str, "state")
        if game != cls.name:
            raise BadState(f"state.game: expected '{cls.name}', got '{game}'")
        fmt = require(data, "format", int, "state")
        if fmt != FORMAT_VERSION:
            raise BadState(f"state.format: expected {FORMAT_VERSION}, got {fmt}")
        state = cls.__new__(cls)
        GameState.__init__(
            state,
            players=require(data, "players", int, "state"),
            seed=require(data, "seed", int, "state"),
            options=require(data, "options", dict, "state"),
        )
        state.chance_draws = require(data, "chance_draws", int, "state")
        history = require(data, "history", list, "state")
        for i, snap in enumerate(history):
            _check_snapshot(snap, f"state.history[{i}]")
        core = require(data, "state", dict, "state")
        state._load(core if cls.fresh_core else copy.deepcopy(core))
        state._history = list(history)
        return state

    def clone(self) -> Self:
        return type(self).from_dict(self.to_dict())

    def search_copy(self) -> Self:
        """A copy for a search to play forward: no undo history and none kept (it never undoes; reading back a
        long game's history and snapshotting every move cost more than the moves). Not for a real game: a move
        that fails halfway is not rolled back in it."""
        data = self.to_dict()
        data["history"] = []
        copy_ = type(self).from_dict(data)
        copy_._recording = False
        return copy_

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable: never a dict key

    def __repr__(self) -> str:
        return f"<{type(self).__name__} players={self.num_players} seed={self.seed} moves={len(self._history)}>"


def seat_name(player: int) -> str:
    """Players are 0-based in data and 1-based wherever a person reads or types them ("Player 1")."""
    return f"Player {player + 1}"


def plural(n: int, word: str) -> str:
    """ "1 card", "3 cards": announcements are spoken, so counts must read naturally."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def parse_seat(word: str, text: str) -> int:
    """A player number as a person types it ("2") -> the 0-based player; `text` is the whole action, for the error."""
    if not (word.isascii() and word.isdigit() and int(word) >= 1):
        raise BadAction(f"'{text}': expected a player number (1, 2, ...), got '{word}'")
    return int(word) - 1


@dataclass(frozen=True)
class GameOver(Event):
    """The last event of every game. `winners` are 0-based players; `scores` follow the game's own rule text."""

    urgent: ClassVar[bool] = True
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    reason: str = ""

    @property
    def text(self) -> str:
        if not self.winners:
            who = "Nobody wins"
        elif len(self.winners) == 1:
            who = f"{seat_name(self.winners[0])} wins"
        else:
            who = " and ".join(seat_name(p) for p in self.winners) + " share the win"
        score = ", ".join(f"{seat_name(p)} {s}" for p, s in enumerate(self.scores))
        why = f" {self.reason.rstrip('.')}." if self.reason else ""
        return f"Game over.{why} {who}. Scores: {score}."
