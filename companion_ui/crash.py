"""`tabletop bench crash`: `kill -9` at random moments while a page enters moves, across the five games (issue 19).

Each round starts a real `tabletop run --manual --save` server (or `--resume`s the game the last round of that game
left), lets a page post random legal moves to it, and kills the server with SIGKILL at a random moment. The game is
then rebuilt from its journal exactly as `--resume` rebuilds it. The state is intact when every move the page was
told had been taken is in it, and at most the one move in flight besides: a move acknowledged and then lost, a move
taken twice, or a journal that no longer replays is a failure. A game that ends starts a new journal.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from companion_ui.server import free_port

GAMES = ("loot-the-loop", "loop", "bag-o-loot", "loot-roll", "the-loop")
TABLETOP = [sys.executable, "-m", "companion_ui.cli"]


@dataclass
class Round:
    game: str
    killed_after_s: float
    moves_before: int
    acknowledged: int
    moves_after: int
    intact: bool
    problem: str = ""


def _when_up(base: str, proc: subprocess.Popen[bytes], within: float = 60.0) -> dict[str, Any]:
    import httpx

    deadline = time.monotonic() + within
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the server stopped before it answered (exit {proc.returncode})")
        try:
            return httpx.get(base + "/api/state", timeout=5).json()
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _enter_moves(base: str, players: int, rng: random.Random, stop: threading.Event, acknowledged: list[int]) -> None:
    """A page entering random legal moves as fast as it is answered (seen as each seat in turn, for hidden hands)."""
    import httpx

    with httpx.Client(timeout=5) as client:
        while not stop.is_set():
            try:
                offered: list[str] = []
                for viewer in [None, *range(1, players + 1)]:
                    state = client.get(base + "/api/state", params={} if viewer is None else {"viewer": viewer}).json()
                    offered = [a for g in state["groups"] for a in g["actions"]]
                    if offered or state["over"]:
                        break
                if not offered:
                    return
                if client.post(base + "/api/act", json={"text": rng.choice(offered)}).status_code == 200:
                    acknowledged[0] += 1
            except (httpx.HTTPError, ValueError):
                return  # the server is gone (killed)


def crash_round(game: str, journal: Path, rng: random.Random, seed: int) -> Round:
    """One server, one page, one SIGKILL; the game resumed from the journal and checked."""
    from companion_ui.journal import read_entries
    from companion_ui.session import new_manual

    def entered() -> int:  # moves the journal holds (Dr. Foo's own turns follow from them and are not entries)
        return sum(e.get("kind") == "act" for e in read_entries(journal)[0][1:]) if journal.exists() else 0

    before = entered()
    port = free_port()
    resume = journal.exists()
    args = ["--resume", str(journal)] if resume else ["--save", str(journal), "--seed", str(seed)]
    proc = subprocess.Popen(
        [*TABLETOP, "run", "--manual", "--game", game, "--no-speech", "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        first = _when_up(base, proc)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    acknowledged = [0]
    stop = threading.Event()
    page = threading.Thread(target=_enter_moves, args=(base, first["players"], rng, stop, acknowledged), daemon=True)
    page.start()
    after = rng.uniform(0.05, 1.5)
    time.sleep(after)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    stop.set()
    page.join(timeout=10)
    try:
        resumed = new_manual(game, None, 0, {}, resume=journal)
        moves = entered()
    except Exception as err:  # any failure to rebuild is the one thing this bench exists to catch
        return Round(game, round(after, 2), before, acknowledged[0], -1, False, f"{type(err).__name__}: {err}")
    assert resumed.journal is not None
    resumed.journal.close()
    intact = before + acknowledged[0] <= moves <= before + acknowledged[0] + 1
    problem = "" if intact else f"{acknowledged[0]} moves acknowledged after {before}, {moves} resumed"
    if resumed.state.is_over:
        journal.rename(journal.with_suffix(f".{int(time.time() * 1000)}.done"))  # the next round starts a new game
    return Round(game, round(after, 2), before, acknowledged[0], moves, intact, problem)


def run_crash_bench(
    kills: int, seed: int = 0, folder: Path | None = None, progress: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    """`kills` rounds, the five games in turn."""
    rng = random.Random(seed)
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="tabletop-crash-") as tmp:
        root = folder or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        for k in range(kills):
            game = GAMES[k % len(GAMES)]
            rounds.append(crash_round(game, root / f"{game}.jsonl", rng, seed + k))
            if progress:
                progress(k + 1, kills)
    by_game = {
        g: {
            "kills": sum(r.game == g for r in rounds),
            "intact": sum(r.intact for r in rounds if r.game == g),
            "moves_acknowledged": sum(r.acknowledged for r in rounds if r.game == g),
        }
        for g in GAMES
    }
    return {
        "kills": len(rounds),
        "intact": sum(r.intact for r in rounds),
        "moves_acknowledged": sum(r.acknowledged for r in rounds),
        "by_game": by_game,
        "failures": [asdict(r) for r in rounds if not r.intact],
        "rounds": [asdict(r) for r in rounds],
    }


def format_summary(r: dict[str, Any]) -> str:
    lines = [
        f"kill -9 while a page enters moves: {r['kills']} kills, state intact after {r['intact']} "
        f"({r['moves_acknowledged']} moves acknowledged before the kills)"
    ]
    for game, g in r["by_game"].items():
        lines.append(f"  {game:14s} {g['intact']}/{g['kills']} intact, {g['moves_acknowledged']} moves acknowledged")
    for f in r["failures"][:5]:
        lines.append(f"  FAILED: {f['game']} after {f['killed_after_s']} s: {f['problem']}")
    return "\n".join(lines)
