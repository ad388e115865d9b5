"""Hints for the games without a solver of their own: determinised rollouts of the game's greedy policy.

Why this design: the four multi-player games differ in everything but one thing, that a player's uncertainty is
hidden cards and future chance. So one search serves them all. For each action the player could take now, play
the rest of the game (or of the round, where a game says so) many times with the greedy policy in every seat,
each time in a fresh *determinisation*: the cards the player cannot see dealt again at random into the places
they could be, and the dice given a new seed. The action whose games end best for the player is the hint. That
is one step of policy improvement over the greedy policy (the rollout algorithm), so in expectation it plays no
worse than greedy, and it reads nothing a player may not see: every determinisation is built only from the view's open
cards and counts (each game's `determinize`, tested by permuting the hidden cards).

Every candidate action is played in the same worlds with the same dice (common random numbers), so the
comparison between actions is far less noisy than the rollouts themselves. A budget caps both the number of
rollouts and the seconds; a hint with the rollout cap reached is deterministic for its seed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from games.core import Action, GameError, GameState
from games.play import choose

Determinizer = Callable[[GameState, int, random.Random], GameState]
Stop = Callable[[GameState, GameState], bool]
"""Where a rollout may stop before the game ends (given the world it started from and where it is now): then the
scores as they stand decide. Whole Bag-O-Loot games take a fifth of a second; a round is enough to tell moves
apart."""
"""A copy of the state in which everything hidden from `player` (other hands, deck orders, face-down cards, the
seed of future chance) is drawn again at random, consistent with what `player` sees."""

BENCH_ROLLOUTS = 64  # a seat that plays by hints in the self-play bench: fixed work, so seeded games replay exactly
FEW_WORLDS = 20  # fewer simulated games than this and the reason says the hint is a rough guess
MAX_CANDIDATES = 8  # the greedy choice and up to 7 others: more candidates than that halve the rollouts each gets
WAIT = "wait"  # the candidate "do nothing now" of a player who may act out of turn
MAX_ROLLOUT_ACTIONS = 5000  # a guard against a rules bug that never ends, as in games/play.py


@dataclass(frozen=True)
class Budget:
    """How much work one hint may do: `rollouts` in all (over every candidate), and at most `seconds`."""

    rollouts: int = 400
    seconds: float | None = 1.0

    def __post_init__(self) -> None:
        if self.rollouts < 1:
            raise GameError(f"hint budget: rollouts must be at least 1, got {self.rollouts}")
        if self.seconds is not None and self.seconds <= 0:
            raise GameError(f"hint budget: seconds must be positive, got {self.seconds}")


DEFAULT_BUDGET = Budget()


@dataclass(frozen=True)
class Hint:
    """A suggested action (its text), one sentence why, and what the search measured."""

    action: str
    reason: str
    value: float = 0.0  # the mean outcome of the action's rollouts (1 = every simulated game won)
    rollouts: int = 0
    baseline: str = ""  # the greedy policy's own choice


def outcome(state: GameState, player: int) -> float:
    """What a finished (or cut-off) rollout is worth to `player`: 1 for a win, 0 for a loss, plus a tie-break of
    at most 0.1 for the score margin over the best other player, so that of two losing lines the closer wins."""
    margin = score_margin(state, player)
    return float(_won(state, player)) + 0.1 * margin / (abs(margin) + 10)


def score_margin(state: GameState, player: int) -> int:
    """The player's score less the best other player's."""
    scores = state.scores()
    return scores[player] - max([s for q, s in enumerate(scores) if q != player] or [0])


def _won(state: GameState, player: int) -> bool:
    """A win; a rollout stopped early counts as won by whoever leads."""
    return player in state.winners() if state.is_over else score_margin(state, player) > 0


def rollout_hint(
    state: GameState,
    player: int,
    rng: random.Random,
    determinize: Determinizer,
    policy: Callable[[GameState, int, Any], Action | None],
    budget: Budget = DEFAULT_BUDGET,
    stop: Stop | None = None,
    value: Callable[[GameState, int], float] | None = None,
) -> Hint:
    """The action whose determinised rollouts end best for `player` (see the module docstring)."""
    if state.is_over:
        return Hint("", "the game is over")
    legal = state.legal_actions(player)
    if not legal:
        return Hint("", "you have nothing to do now")
    greedy = _greedy_choice(state, player, rng, determinize, policy)
    candidates = _candidates(legal, greedy, player != state.current_player, rng)
    if len(candidates) == 1:
        only = candidates[0]
        return Hint(only, "it is your only move", baseline=greedy)
    totals = dict.fromkeys(candidates, 0.0)
    wins = dict.fromkeys(candidates, 0)
    worlds = 0
    started = time.perf_counter()
    while worlds * len(candidates) < budget.rollouts:
        if budget.seconds is not None and worlds >= 2 and time.perf_counter() - started > budget.seconds:
            break
        world = determinize(state, player, random.Random(rng.getrandbits(64)))
        play_seed = rng.getrandbits(64)
        for text in candidates:
            end = _rollout(world, player, text, policy, random.Random(play_seed), stop)
            totals[text] += (value or outcome)(end, player)
            wins[text] += _won(end, player)
        worlds += 1
    means = {text: total / worlds for text, total in totals.items()}
    best = max(candidates, key=lambda t: (means[t], t == greedy))
    rates = {text: won / worlds for text, won in wins.items()}
    return Hint(best, _reason(best, greedy, rates, worlds, len(candidates)), round(means[best], 4), worlds, greedy)


def _greedy_choice(
    state: GameState, player: int, rng: random.Random, determinize: Determinizer, policy: Callable[..., Any]
) -> str:
    """The greedy policy's move, asked in a determinisation so that it, too, sees only the player's view."""
    action = policy(determinize(state, player, random.Random(rng.getrandbits(64))), player, random.Random(0))
    return WAIT if action is None else str(action)


def _candidates(legal: Sequence[Action], greedy: str, may_wait: bool, rng: random.Random) -> list[str]:
    texts = [str(a) for a in legal] + ([WAIT] if may_wait else [])
    if len(texts) <= MAX_CANDIDATES:
        return texts
    others = [t for t in texts if t != greedy]
    return [greedy, *rng.sample(others, MAX_CANDIDATES - 1)]


def _rollout(
    world: GameState,
    player: int,
    first: str,
    policy: Callable[..., Any],
    rng: random.Random,
    stop: Stop | None,
) -> GameState:
    game = world.search_copy()
    if first != WAIT:
        game.apply(first)
    policies = dict.fromkeys(range(game.num_players), policy)
    for _ in range(MAX_ROLLOUT_ACTIONS):
        if game.is_over or (stop is not None and stop(world, game)):
            break
        _, action = choose(game, policies, rng)
        game.apply(action)
    return game


def _reason(best: str, greedy: str, rates: dict[str, float], worlds: int, tried: int) -> str:
    caveat = f"; only {worlds} games, so a rough guess" if worlds < FEW_WORLDS else ""
    if best == greedy or greedy not in rates:
        return (
            f"in {worlds} simulated games from here it did best of the {tried} moves tried "
            f"({rates[best]:.0%} ahead){caveat}"
        )
    return (
        f"in {worlds} simulated games from here you came out ahead in {rates[best]:.0%} after it, against "
        f"{rates[greedy]:.0%} after '{greedy}' (the obvious move){caveat}"
    )


def seat_action(
    hint: Callable[[GameState, int, random.Random, Budget], Hint],
    state: GameState,
    player: int,
    rng: random.Random,
    rollouts: int = BENCH_ROLLOUTS,
) -> Action | None:
    """A game's hint played as a seat: what `tabletop bench hints` measures against the greedy policy. A fixed
    number of rollouts, never a clock, so a seeded game replays exactly on any machine."""
    advice = hint(state, player, rng, Budget(rollouts=rollouts, seconds=None))
    return None if advice.action in ("", WAIT) else state.parse_action(advice.action)


def redeal(zones: Sequence[Sequence[str]], rng: random.Random) -> list[list[str]]:
    """The cards of all `zones` shuffled together and dealt back, each zone keeping its size: what the cards a
    player cannot see might as well be, given only how many lie where. Sorted before the shuffle, so the deal
    depends on the seed and on which cards are hidden, never on where they really lie."""
    pool = sorted(card for zone in zones for card in zone)
    rng.shuffle(pool)
    dealt: list[list[str]] = []
    for zone in zones:
        dealt.append(pool[: len(zone)])
        pool = pool[len(zone) :]
    return dealt


def reseed(world: GameState, rng: random.Random) -> GameState:
    """Future chance (shuffles, dice, random picks) made unknown again: a new seed for the copy."""
    world.seed = rng.getrandbits(62)
    world.chance_draws = 0
    return world
