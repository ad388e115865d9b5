"""Driving a game with policies: who is asked, in which order, until the game ends."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from games.core import Action, Event, GameError, GameState
from games.registry import Policy


@dataclass(frozen=True)
class Step:
    player: int
    action: Action
    events: tuple[Event, ...]


def choose(state: GameState, policies: Mapping[int, Policy], rng: random.Random) -> tuple[int, Action]:
    """Ask out-of-turn actors first (a challenge must come before the next turn starts), then the current one."""
    actors = state.actors()
    if not actors:
        raise GameError("no player can act: the game is over")
    current, *others = actors
    for player in others:
        action = policies[player](state, player, rng)
        if action is not None:
            return player, action
    action = policies[current](state, current, rng)
    if action is None:
        raise GameError(f"policy for player {current} declined to move on its own turn")
    return current, action


def play_out(
    state: GameState,
    policies: Mapping[int, Policy],
    rng: random.Random,
    max_steps: int = 100_000,
) -> list[Step]:
    """Play until the game is over; `max_steps` guards against a rules bug that never ends."""
    steps: list[Step] = []
    while not state.is_over:
        if len(steps) >= max_steps:
            raise GameError(f"{state.name}: not over after {max_steps} actions")
        player, action = choose(state, policies, rng)
        steps.append(Step(player, action, tuple(state.apply(action))))
    return steps
