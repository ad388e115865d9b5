"""Rules engines for the five games: legality, scoring, events. Knows nothing of pixels.

>>> import games
>>> state = games.create("loot-the-loop", seed=7)
>>> state.legal_actions()  # doctest: +SKIP
"""

from games.core import (
    Action,
    BadAction,
    BadState,
    Event,
    GameError,
    GameOver,
    GameState,
    IllegalMove,
    NothingToUndo,
    Violation,
    seat_name,
)
from games.registry import GAMES, GameInfo, create, info, load

__all__ = [
    "GAMES",
    "Action",
    "BadAction",
    "BadState",
    "Event",
    "GameError",
    "GameInfo",
    "GameOver",
    "GameState",
    "IllegalMove",
    "NothingToUndo",
    "Violation",
    "create",
    "info",
    "load",
    "seat_name",
]
