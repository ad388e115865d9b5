"""What a visible Loot the Loop position is worth: a value learnt from the planner's own games.

Why learnt: the planner searches exactly up to the next look, so everything it decides rests on how it scores the
positions a look may leave. A hand-made score (points, a bonus per jewel, a little for each note) rates a
position by what is already won, not by the chance to escape from it: it let the planner spend its last note
or look with nothing in hand, and most of its losses were exactly that (stuck with no note after a bad look).
The value here is the expected end of the game, `WIN` times the chance to escape plus the final score, each
estimated from the position's features by a model fit on positions of the planner's own seeded games (logistic
regression for the escape, least squares for the points still to come). A loss is then worth its score and an
escape `WIN` plus its score, as the solver's `step` already counts them, so searched and estimated endings
compare on one scale.

The features are what a player sees: jewels held and in view, the exit, the notes, how many traps and trinkets
are face up or still unseen, what lies on top. `models/loot-the-loop-value.json` holds the weights and
`models/loot-the-loop-value.md` how they were trained (`python -m games.loot_the_loop.train_value`).
"""

from __future__ import annotations

import functools
import json
import math
import operator
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games.loot_the_loop.engine import ACES_TO_ESCAPE, MAX_NOTES
from games.loot_the_loop.solver import ACE, DOWN, EXIT, TRAP, WIN, Pos

MODEL_FILE = "loot-the-loop-value.json"
MODEL_PATH = Path(__file__).resolve().parents[2] / "models" / MODEL_FILE
TRINKETS = 36  # 2-10 in four suits
TRAPS = 12
FULL_DECK = 50  # scale for deck sizes (53 cards less the three marked at most)
NEAR = 11  # the top card and the ten an explore can reach

FEATURES: tuple[str, ...] = (
    "bias",
    *(f"jewels held = {n}" for n in range(1, ACES_TO_ESCAPE + 1)),
    "jewels face up in the deck",
    "jewels unseen",
    "exit face up",
    "exit face up with all jewels held",
    "jewels held or in view / 4",
    "all jewels held or in view, exit face up",
    *(f"notes = {n}" for n in range(1, MAX_NOTES + 1)),
    "distinct note values / 3",
    "sum of note values / 30",
    "deck size / 50",
    "face-down cards / 50",
    "face-up traps / 12",
    "unseen traps / 12",
    "face-up trinkets / 36",
    "unseen trinkets / 36",
    "trinkets nabbed / 36",
    "face-up traps per card in the deck",
    "face-up traps / 12 with no note",
    "face-up traps within reach / 5",
    "top face down",
    "top a trinket",
    "top a trap",
    "unseen jewels x face-down share",
    "jewels held or in view x face-up traps / 48",
)


def features(pos: Pos) -> list[float]:
    """The position's features, in the order of `FEATURES`."""
    deck = pos.deck
    size = len(deck)
    up_aces = deck.count(ACE)
    up_traps = deck.count(TRAP)
    down = deck.count(DOWN)
    up_trinkets = sum(1 for t in deck if 2 <= t <= 10)
    exit_up = 1.0 if EXIT in deck else 0.0
    unseen = pos.unseen
    notes = len(pos.notes)
    in_hand_or_view = pos.aces + up_aces
    top = deck[0]
    return [
        1.0,
        *(1.0 if pos.aces == n else 0.0 for n in range(1, ACES_TO_ESCAPE + 1)),
        up_aces,
        unseen[ACE],
        exit_up,
        exit_up * (pos.aces >= ACES_TO_ESCAPE),
        in_hand_or_view / ACES_TO_ESCAPE,
        exit_up * (in_hand_or_view == ACES_TO_ESCAPE),
        *(1.0 if notes == n else 0.0 for n in range(1, MAX_NOTES + 1)),
        len(set(pos.notes)) / MAX_NOTES,
        sum(pos.notes) / 30,
        size / FULL_DECK,
        down / FULL_DECK,
        up_traps / TRAPS,
        unseen[TRAP] / TRAPS,
        up_trinkets / TRINKETS,
        sum(unseen[2:11]) / TRINKETS,
        pos.trinkets / TRINKETS,
        up_traps / max(size, 1),
        up_traps * (notes == 0) / TRAPS,
        deck[:NEAR].count(TRAP) / 5,
        1.0 if top == DOWN else 0.0,
        1.0 if 2 <= top <= 10 else 0.0,
        1.0 if top == TRAP else 0.0,
        unseen[ACE] * down / FULL_DECK,
        in_hand_or_view * up_traps / (ACES_TO_ESCAPE * TRAPS),
    ]


class BadModel(ValueError):
    """A value model file that cannot be used (missing, unreadable, or made for other features)."""


@dataclass(frozen=True)
class ValueModel:
    """Weights over `FEATURES`: `win` for the log-odds of escaping, `gain` for the points still to come."""

    win: tuple[float, ...]
    gain: tuple[float, ...]
    trained: dict[str, Any]

    def escape_chance(self, pos: Pos) -> float:
        return self._chance(features(pos))

    def value(self, pos: Pos) -> float:
        """The expected end of the game from here: `WIN` x the escape chance + the final score."""
        x = features(pos)
        gain = sum(map(operator.mul, x, self.gain))
        return WIN * self._chance(x) + pos.aces + pos.trinkets + max(gain, 0.0)

    def _chance(self, x: list[float]) -> float:
        z = sum(map(operator.mul, x, self.win))
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"features": list(FEATURES), "win": list(self.win), "gain": list(self.gain), "trained": self.trained}

    @classmethod
    def from_json(cls, data: Any, source: str = "the model") -> ValueModel:
        if not isinstance(data, dict):
            raise BadModel(f"{source}: expected a JSON object with 'features', 'win' and 'gain'")
        names = data.get("features")
        if names != list(FEATURES):
            raise BadModel(
                f"{source}: field 'features' does not match this version's {len(FEATURES)} features "
                "(retrain with python -m games.loot_the_loop.train_value)"
            )
        weights = {}
        for name in ("win", "gain"):
            row = data.get(name)
            if not isinstance(row, list) or len(row) != len(FEATURES) or not all(_is_number(w) for w in row):
                raise BadModel(f"{source}: field '{name}' must be a list of {len(FEATURES)} numbers")
            weights[name] = tuple(float(w) for w in row)
        trained = data.get("trained", {})
        return cls(weights["win"], weights["gain"], trained if isinstance(trained, dict) else {})

    @classmethod
    def load(cls, path: Path) -> ValueModel:
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise BadModel(f"{path}: no such file (train one with python -m games.loot_the_loop.train_value)") from None
        except (OSError, ValueError) as err:
            raise BadModel(f"{path}: not readable as JSON ({err})") from None
        return cls.from_json(data, str(path))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@functools.cache
def shipped() -> ValueModel:
    """The model shipped in `models/` (or in TABLETOP_MODELS when set, as for the recognisers' weights)."""
    folder = os.environ.get("TABLETOP_MODELS")
    return ValueModel.load(Path(folder) / MODEL_FILE if folder else MODEL_PATH)


def estimate(pos: Pos) -> float:
    """The shipped model's value of `pos`: what the planner scores the positions it cannot search past with."""
    return shipped().value(pos)
