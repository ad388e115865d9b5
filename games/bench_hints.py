"""Benchmark: a seat that plays by the game's hint against the same seat playing the greedy policy.

Each seeded deal is played twice: once with the hint in one seat and the greedy policy in the others, once with
the greedy policy everywhere. The hint's seat rotates with the deal (deal `i` puts it in seat `i mod players`), so
no seat's advantage is counted as the hint's. Both runs of a deal share the shuffle, so the comparison is paired.

A deal's result is appended to a JSON-lines file as soon as it is played, and a run that finds the file goes on
where it stopped: 500 deals of rollouts take hours on a 2-core machine, longer than a session.
"""

from __future__ import annotations

import functools
import json
import math
import multiprocessing
import random
import statistics
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from games import registry
from games.core import JSON, GameError, GameState
from games.hints import BENCH_ROLLOUTS, score_margin, seat_action
from games.play import play_out

GREEDY = {"loop": "greedy", "bag-o-loot": "greedy", "loot-roll": "simple", "the-loop": "simple"}
PLAYERS = {"loop": 4, "bag-o-loot": 3, "loot-roll": 3, "the-loop": 2}


def play_deal(game: str, seed: int, players: int, rollouts: int = BENCH_ROLLOUTS) -> JSON:
    """One deal, twice (hint seat, then greedy seat): who won and the seat's score margin in each."""
    info = registry.info(game)
    seat = seed % players
    row: JSON = {"seed": seed, "seat": seat}
    hint = functools.partial(seat_action, info.hinter(), rollouts=rollouts)
    for label, policy in (("hint", hint), ("greedy", info.policy(GREEDY[game]))):
        state = registry.create(game, players, seed=seed)
        seats = dict.fromkeys(range(players), info.policy(GREEDY[game])) | {seat: policy}
        started = time.perf_counter()
        play_out(state, seats, random.Random(seed))
        row[label] = {"won": seat in state.winners(), "margin": _margin(game, state, seat),
                      "seconds": round(time.perf_counter() - started, 3)}  # fmt: skip
    return row


def _margin(game: str, state: GameState, seat: int) -> int:
    """The seat's score less the best other's; in the cooperative The LOOP, the team's missions completed."""
    return state.scores()[seat] if game == "the-loop" else score_margin(state, seat)


def run(
    game: str,
    games: int,
    seed: int,
    out: Path,
    players: int | None = None,
    progress: bool = True,
    workers: int = 1,
    rollouts: int = BENCH_ROLLOUTS,
) -> JSON:
    """Play the deals not yet in `out`, then summarise every deal of the range from the file. With `workers` > 1
    the deals are played in that many processes (each deal is seeded, so the results do not depend on how many)."""
    if game not in GREEDY:
        raise GameError(f"bench hints: expected one of {', '.join(GREEDY)}, got '{game}'")
    if workers < 1:
        raise GameError(f"bench hints: --workers must be at least 1, got {workers}")
    if rollouts < 1:
        raise GameError(f"bench hints: --rollouts must be at least 1, got {rollouts}")
    n = players or PLAYERS[game]
    done = {row["seed"]: row for row in _rows(out) if (row.get("players"), row.get("rollouts")) == (n, rollouts)}
    todo = [s for s in range(seed, seed + games) if s not in done]
    out.parent.mkdir(parents=True, exist_ok=True)
    jobs = [(game, s, n, rollouts) for s in todo]
    with out.open("a") as log, _pool(workers) as pool:
        played = pool.imap_unordered(_play_row, jobs) if pool else map(_play_row, jobs)
        for row in _progress(played, progress, game, len(todo)):
            log.write(json.dumps(row) + "\n")
            log.flush()
            done[row["seed"]] = row
    return summarise(game, n, [done[s] for s in range(seed, seed + games)], seed, rollouts)


def _play_row(job: tuple[str, int, int, int]) -> JSON:
    game, seed, players, rollouts = job
    return {**play_deal(game, seed, players, rollouts), "players": players, "rollouts": rollouts}


@contextmanager
def _pool(workers: int) -> Iterator[Any]:
    """A process pool for `workers` > 1, else None (the deals are played here, in order)."""
    if workers == 1:
        yield None
        return
    with multiprocessing.Pool(workers) as pool:
        yield pool


def summarise(game: str, players: int, rows: list[JSON], seed: int, rollouts: int = BENCH_ROLLOUTS) -> JSON:
    """Win rates and mean margins of the two seats over the same deals, with a 95% interval on the difference."""
    hint = [r["hint"] for r in rows]
    greedy = [r["greedy"] for r in rows]
    diffs = [float(h["won"]) - float(g["won"]) for h, g in zip(hint, greedy, strict=True)]
    spread = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
    return {
        "game": game,
        "players": players,
        "games": len(rows),
        "seeds": [seed, seed + len(rows) - 1],
        "rollouts_per_hint": rollouts,
        "hint": _side(hint),
        "greedy": _side(greedy),
        "win_rate_gain": statistics.fmean(diffs) if diffs else 0.0,
        "win_rate_gain_95": 1.96 * spread / math.sqrt(len(diffs)) if diffs else 0.0,
        "fair_share": 1 / players,
    }


def _side(results: list[JSON]) -> JSON:
    return {
        "win_rate": statistics.fmean(float(r["won"]) for r in results) if results else 0.0,
        "mean_margin": statistics.fmean(r["margin"] for r in results) if results else 0.0,
        "seconds_per_game": statistics.fmean(r["seconds"] for r in results) if results else 0.0,
    }


def format_table(result: JSON) -> str:
    h, g = result["hint"], result["greedy"]
    lines = [
        f"{result['game']}, {result['players']} players, {result['games']} deals (seeds {result['seeds'][0]}.."
        f"{result['seeds'][1]}), the measured seat rotating; {result['rollouts_per_hint']} rollouts per hint",
        "",
        "| the measured seat plays | win rate | mean score margin | seconds per game |",
        "|---|---:|---:|---:|",
        f"| hint | {h['win_rate']:.1%} | {h['mean_margin']:+.2f} | {h['seconds_per_game']:.2f} |",
        f"| greedy | {g['win_rate']:.1%} | {g['mean_margin']:+.2f} | {g['seconds_per_game']:.2f} |",
        "",
        f"Win rate gain of the hint: {result['win_rate_gain']:+.1%} "
        f"(95% interval +/- {result['win_rate_gain_95']:.1%}); a fair share would be {result['fair_share']:.0%}.",
    ]
    return "\n".join(lines)


def _rows(path: Path) -> Iterable[JSON]:
    """The deals already played; a line cut short by a crash is skipped (that deal is played again)."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def _progress(items: Iterable[JSON], progress: bool, label: str, total: int) -> Iterable[JSON]:
    if not progress:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=f"hints {label}", unit="deal", total=total)
