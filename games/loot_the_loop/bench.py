"""Benchmark: the planner and the solver against the uniform random policy on the same seeded deals.

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
from games.loot_the_loop.planner import planner_policy
from games.loot_the_loop.solver import solver_policy
from games.play import play_out
from games.policies import random_policy
from games.registry import Policy

POLICIES: dict[str, Policy] = {"planner": planner_policy, "solver": solver_policy, "random": random_policy}
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


def run_bench(
    games: int = 1000, seed: int = 0, progress: bool = True, policies: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Each policy (default all) on `games` deals (seeds `seed` .. `seed + games - 1`)."""
    names = policies or tuple(POLICIES)
    unknown = [n for n in names if n not in POLICIES]
    if unknown:
        raise ValueError(f"unknown policy {', '.join(unknown)}: expected {', '.join(POLICIES)}")
    played = {name: play_many(POLICIES[name], games, seed, progress, name) for name in names}
    return {"game": LootTheLoop.name, "games": games, "seed": seed, "policies": played}


def format_table(result: dict[str, Any]) -> str:
    """The benchmark as a markdown table, one column per policy."""
    runs = result["policies"]
    names = list(runs)
    rows = [
        ("Win rate", [f"{runs[n]['win_rate']:.1%}" for n in names]),
        ("Average score", [f"{runs[n]['avg_score']:.2f}" for n in names]),
        ("Median score", [f"{runs[n]['median_score']:g}" for n in names]),
    ]
    for why in RESULT_ORDER:
        label = "Escaped (won)" if why == "escaped" else f"Lost: {why}"
        rows.append((label, [str(runs[n]["results"][why]) for n in names]))
    rows.append(("Average actions per game", [f"{runs[n]['avg_actions']:.1f}" for n in names]))
    rows.append(("Seconds per game", [f"{runs[n]['seconds'] / max(runs[n]['games'], 1):.3f}" for n in names]))
    head = f"Loot the Loop, {result['games']} games (seeds {result['seed']}..{result['seed'] + result['games'] - 1})"
    lines = [head, "", "| | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows]
    return "\n".join(lines)


def _progress(items: range, progress: bool, label: str) -> Any:
    if not progress:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=label, unit="game")


if __name__ == "__main__":
    run_bench()
