"""Names -> engines. Engines are imported lazily so `tabletop --help` stays instant."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from games.core import JSON, BadState, GameError, GameState, require

Policy = Callable[[GameState, int, Any], Any]
"""A policy picks an action for `player` in `state` using the RNG it is given (or returns None to decline an
out-of-turn action such as a challenge). It must only use what `state.view(player)` shows."""


@dataclass(frozen=True)
class GameInfo:
    """What the registry knows about one game without importing it."""

    name: str
    title: str
    min_players: int
    max_players: int
    default_players: int
    engine: str  # "module:Class"
    options: dict[str, str] = field(default_factory=dict)  # option name -> one-line help
    policies: dict[str, str] = field(default_factory=dict)  # policy name -> "module:function"
    hint: str = ""  # "module:function": (state, player, rng, Budget) -> games.hints.Hint

    def hinter(self) -> Callable[..., Any]:
        """The game's hint: what `tabletop hint` and the page's hint button ask."""
        if not self.hint:
            raise GameError(f"{self.name} has no hints")
        module, fn = self.hint.split(":")
        return getattr(importlib.import_module(module), fn)

    def engine_class(self) -> type[GameState]:
        module, cls = self.engine.split(":")
        return getattr(importlib.import_module(module), cls)

    def policy(self, name: str) -> Policy:
        if name == "random":
            from games.policies import random_policy

            return random_policy
        if name not in self.policies:
            known = ", ".join(["random", *self.policies])
            raise GameError(f"unknown policy '{name}' for {self.name}: expected one of {known}")
        module, fn = self.policies[name].split(":")
        return getattr(importlib.import_module(module), fn)


GAMES: dict[str, GameInfo] = {}


def register(info: GameInfo) -> None:
    GAMES[info.name] = info


def info(name: str) -> GameInfo:
    if name not in GAMES:
        raise GameError(f"unknown game '{name}': expected one of {', '.join(GAMES)}")
    return GAMES[name]


def create(name: str, players: int | None = None, seed: int = 0, **options: Any) -> GameState:
    """Start a new game. Bad player counts and unknown options are refused with a clear message."""
    game = info(name)
    n = game.default_players if players is None else players
    if not isinstance(n, int) or not game.min_players <= n <= game.max_players:
        raise GameError(f"{name}: players must be {game.min_players}-{game.max_players}, got {n}")
    unknown = sorted(set(options) - set(game.options))
    if unknown:
        known = ", ".join(game.options) or "none"
        raise GameError(f"{name}: unknown option(s) {', '.join(unknown)}; known options: {known}")
    return game.engine_class()(players=n, seed=seed, **options)


def load(data: JSON) -> GameState:
    """Rebuild any game's state from its `to_dict` output."""
    name = require(data, "game", str, "state")
    if name not in GAMES:
        raise BadState(f"state.game: expected one of {', '.join(GAMES)}, got '{name}'")
    return GAMES[name].engine_class().from_dict(data)


register(
    GameInfo(
        name="loot-the-loop",
        title="Loot the Loop",
        min_players=1,
        max_players=1,
        default_players=1,
        engine="games.loot_the_loop.engine:LootTheLoop",
        options={},
        policies={
            "solver": "games.loot_the_loop.solver:solver_policy",
            "planner": "games.loot_the_loop.planner:planner_policy",
        },
        hint="games.loot_the_loop.planner:hint",
    )
)
register(
    GameInfo(
        name="loop",
        title="LOOP (Takashi Saito)",
        min_players=2,
        max_players=4,
        default_players=4,
        engine="games.loop.engine:Loop",
        options={
            "long_game": "play sets until someone wins 2 (bool)",
            "three_eights_redeal": "optional rule: three 8s in hand -> reveal, +1 point, redeal (bool)",
        },
        policies={"greedy": "games.loop.policy:greedy_policy", "hint": "games.loop.policy:hint_policy"},
        hint="games.loop.policy:hint",
    )
)
register(
    GameInfo(
        name="bag-o-loot",
        title="Bag-O-Loot",
        min_players=2,
        max_players=4,
        default_players=3,
        engine="games.bag_o_loot.engine:BagOLoot",
        options={
            "rounds": "rounds in the game, dealer rotating (int, default 4; 0: no round limit)",
            "advanced": "advanced play: each player starts every round with a looter (bool)",
            "target": "the game ends with the round in which a player's total reaches this score (int, 0: none)",
            "minutes": "the agreed playing time: 'time' then makes the round in progress the last (int, 0: none)",
        },
        policies={"greedy": "games.bag_o_loot.policy:greedy_policy", "hint": "games.bag_o_loot.policy:hint_policy"},
        hint="games.bag_o_loot.policy:hint",
    )
)
register(
    GameInfo(
        name="loot-roll",
        title="Loot Roll",
        min_players=2,
        max_players=6,
        default_players=3,
        engine="games.loot_roll.engine:LootRoll",
        options={"catalogue": "path of a card catalogue JSON file (default: the shipped starter catalogue)"},
        policies={"simple": "games.loot_roll.policy:simple_policy", "hint": "games.loot_roll.policy:hint_policy"},
        hint="games.loot_roll.policy:hint",
    )
)
register(
    GameInfo(
        name="the-loop",
        title="The LOOP (cooperative; the assistant runs Dr. Foo)",
        min_players=2,
        max_players=4,
        default_players=2,
        engine="games.the_loop.engine:TheLoop",
        options={
            "scenario": "a shipped scenario name (basic) or a scenario JSON file (default basic)",
            "difficulty": "easy, normal or hard (default normal)",
            "catalogue": "path of an agents/artifacts/missions catalogue JSON file (default: the starter set)",
            "table": "digital (the engine deals the agents' cards) or physical (real components; default digital)",
        },
        policies={"simple": "games.the_loop.policy:simple_policy", "hint": "games.the_loop.policy:hint_policy"},
        hint="games.the_loop.policy:hint",
    )
)
