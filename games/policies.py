"""Policies shared by every game. Game-specific ones (solver, greedy) live beside their engine."""

from __future__ import annotations

import random

from games.core import Action, GameState


def random_policy(state: GameState, player: int, rng: random.Random) -> Action | None:
    """Uniform over `player`'s legal actions; declines out-of-turn actions half the time.

    Declining matters: an out-of-turn action (a challenge, a claim) is optional, and a policy that always
    took it would make every random game a challenge-fest.
    """
    actions = state.legal_actions(player)
    if not actions:
        return None
    if player != state.current_player and rng.random() < 0.5:
        return None
    return rng.choice(actions)
