"""Benchmark: the solver against the uniform random policy on the same seeded deals.

Both policies play the very same deals (game `i` uses seed `seed + i` for the shuffle and for the policy's RNG),
so the comparison measures the policy, not the luck of the draw. Each policy also chooses the pile order.
"""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter
from typing import Any

from games.core import JSON
from games.loot_the_loop.engine import LootTheLoop
from games.loot_the_loop.solver import solver_policy
from games.play import play_out
from games.policies import random_policy
from games.registry import Policy

POLICIES: dict[str, Policy] = {"solver": solver_policy, "random": random_policy}
RESULT_ORDER = ("escaped", "trapped", "stuck", "cornered")


def play_many(policy: Policy, games: int, seed: int, progress: bool = False, label: str = "") -> JSON:
    """Play `games` seeded games with one policy and summarise them."""
    started = time.perf_counter()
    scores: list[int] = []
    lengths: list[int] = []
    results: Counter[str] = Counter()
    for i in _progress(range(games), progress, label):
        state = LootTheLoop(seed=seed + i)
        steps = play_out(state, {0: policy}, random.Random(seed + i))
        scores.append(state.scores()[0])
        lengths.append(len(steps))
        results[state.result] += 1
    return {
        "games": games,
        "win_rate": results["escaped"] / games if games else 0.0,
        "avg_score": statistics.fmean(scores) if scores else 0.0,
        "median_score": statistics.median(scores) if scores else 0.0,
        "results": {r: results[r] for r in RESULT_ORDER},
        "avg_actions": statistics.fmean(lengths) if lengths else 0.0,
        "seconds": round(time.perf_counter() - started, 2),
    }


def run_bench(games: int = 1000, seed: int = 0, progress: bool = True) -> dict[str, Any]:
    """Solver vs random on `games` deals (seeds `seed` .. `seed + games - 1`); prints the table if `progress`."""
    policies = {name: play_many(policy, games, seed, progress, name) for name, policy in POLICIES.items()}
    solver, rand = policies["solver"], policies["random"]
    result = {
        "game": LootTheLoop.name,
        "games": games,
        "seed": seed,
        "policies": policies,
        "ratio": {key: _ratio(solver[key], rand[key]) for key in ("win_rate", "avg_score", "median_score")},
    }
    if progress:
        print(format_table(result))
    return result


def format_table(result: dict[str, Any]) -> str:
    """The benchmark as a markdown table (solver, random, and solver/random)."""
    solver, rand = result["policies"]["solver"], result["policies"]["random"]
    ratio = result["ratio"]
    rows = [
        ("Win rate", f"{solver['win_rate']:.1%}", f"{rand['win_rate']:.1%}", _times(ratio["win_rate"])),
        ("Average score", f"{solver['avg_score']:.2f}", f"{rand['avg_score']:.2f}", _times(ratio["avg_score"])),
        ("Median score", f"{solver['median_score']:g}", f"{rand['median_score']:g}", _times(ratio["median_score"])),
    ]
    for reason in RESULT_ORDER:
        label = "Escaped (won)" if reason == "escaped" else f"Lost: {reason}"
        rows.append((label, str(solver["results"][reason]), str(rand["results"][reason]), ""))
    rows.append(("Average actions per game", f"{solver['avg_actions']:.1f}", f"{rand['avg_actions']:.1f}", ""))
    rows.append(("Seconds", f"{solver['seconds']:.1f}", f"{rand['seconds']:.1f}", ""))
    head = f"Loot the Loop, {result['games']} games (seeds {result['seed']}..{result['seed'] + result['games'] - 1})"
    lines = [head, "", "| | solver | random | solver / random |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {a} | {b} | {r} |" for name, a, b, r in rows]
    return "\n".join(lines)


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _times(ratio: float | None) -> str:
    return "n/a (random is 0)" if ratio is None else f"{ratio:.1f}x"


def _progress(items: range, progress: bool, label: str) -> Any:
    if not progress:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=label, unit="game")


if __name__ == "__main__":
    run_bench()
