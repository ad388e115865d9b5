"""The Loot the Loop decoder on perfectly placed tables of seeded random games (no pictures, no models): how many
actions it decodes and how many final scores it gets right, and where it goes wrong.

    .venv/bin/python scripts/decoder_perfect_tables.py 0 100     # seeds 0..99, at most 60 actions each
"""

from __future__ import annotations

import difflib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_tracker import _decode, _matched, _play


def main(first: int, last: int, actions_max: int = 60) -> None:
    right = total = scores = 0
    started = time.perf_counter()
    for seed in range(first, last):
        cores, actions = _play(seed, actions_max)
        decoder, events = _decode(cores)
        state = decoder.state()
        matched = _matched(actions, state["actions"])
        right, total = right + matched, total + len(actions)
        scores += state["score"] == len(cores[-1]["score"])
        if matched < len(actions):
            ops = difflib.SequenceMatcher(a=actions, b=state["actions"], autojunk=False).get_opcodes()
            diffs = [(tag, actions[i1:i2], state["actions"][j1:j2]) for tag, i1, i2, j1, j2 in ops if tag != "equal"]
            checks = sum(e.kind == "check" for e in events)
            print(f"seed {seed}: {matched}/{len(actions)} {diffs} checks {checks}", flush=True)
    games = last - first
    print(
        f"actions {right}/{total} = {right / max(total, 1):.4f}; scores {scores}/{games}; "
        f"{time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
