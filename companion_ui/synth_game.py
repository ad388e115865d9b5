"""Full-game synthetic videos: a rules engine and a policy play a game, and the vision side films it.

This is the only place that knows both sides: `vision.synth` must stay free of game rules, so the engine's states
are turned here into plain `TableState`s (cards, faces, note slots) and the actions into text. An action that a
player carries out in two physical motions gets two stages (explore moves the block, then the landed card is
nabbed), so the video shows each motion in turn.
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games import registry
from games.core import FORMAT_VERSION, GameState
from vision.synth.deckdir import DeckError, load_deck
from vision.synth.ltl_table import TableState
from vision.synth.video import STATES_FILE, GameStep, render_table_video

SUPPORTED_GAMES = ("loot-the-loop",)
ENGINE_JOKER = "JOKER"


@dataclass(frozen=True)
class PlayedGame:
    initial: TableState
    steps: tuple[GameStep, ...]
    final_score: int
    result: str  # the engine's result ('' if max_actions stopped the game early)
    finished: bool


def table_state(core: dict[str, Any], slots: tuple[str | None, ...]) -> TableState:
    """The engine's saved core (`to_dict()["state"]`) as a table; `slots` is where each note lay before, since
    the engine keeps notes as a list while on the table each note keeps its place until it is returned."""
    notes = [card if card in core["notes"] else None for card in slots]
    for card in core["notes"]:
        if card not in notes:
            notes[notes.index(None)] = card
    return TableState(
        deck=tuple(core["deck"]),
        deck_up=tuple(core["up"]),
        notes=tuple(notes),
        score=tuple(core["score"]),
        piles=tuple(tuple(p) for p in core["piles"]),
        piles_up=tuple(tuple(u) for u in core["piles_up"]),
    )


def _stages(before: TableState, after: TableState, action: str) -> tuple[TableState, ...]:
    """An explore that nabs: first the block goes under (the landed card shows on top), then it travels to the
    score pile."""
    if action.startswith("explore") and len(after.score) > len(before.score):
        landed = after.score[-1]
        rotated = TableState(
            deck=(landed, *after.deck),
            deck_up=(True, *after.deck_up),
            notes=after.notes,
            score=after.score[:-1],
        )
        return rotated, after
    return (after,)


def play_game(game: str, seed: int, policy: str = "solver", max_actions: int | None = None) -> PlayedGame:
    """Play with the named policy (its RNG seeded by `seed` too, so the whole game repeats)."""
    if game not in SUPPORTED_GAMES:
        raise ValueError(
            f"no table layout for '{game}' yet: synthetic game videos support {', '.join(SUPPORTED_GAMES)}"
        )
    state: GameState = registry.create(game, seed=seed)
    choose = registry.info(game).policy(policy)
    rng = random.Random(seed)
    table = table_state(state.to_dict()["state"], (None, None, None))
    initial = table
    steps = []
    while not state.is_over and (max_actions is None or len(steps) < max_actions):
        action = choose(state, 0, rng)
        state.apply(action)
        after = table_state(state.to_dict()["state"], table.notes)
        steps.append(GameStep(str(action), _stages(table, after, str(action))))
        table = after
    return PlayedGame(initial, tuple(steps), state.scores()[0], state.to_dict()["state"]["result"], state.is_over)


def engine_info(game: str) -> dict[str, str]:
    """What produced the moves, so a data set can be traced back to the code that made it."""
    info = registry.info(game)
    commit = ""
    try:
        root = Path(__file__).resolve().parent.parent
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        commit = done.stdout.strip() if done.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        pass
    return {"engine": info.engine, "state_format": str(FORMAT_VERSION), "git_commit": commit}


def render_game_video(
    game: str = "loot-the-loop",
    seed: int = 0,
    deck_dir: str | Path = "",
    out_dir: str | Path = "synth_game",
    policy: str = "solver",
    fps: int = 30,
    size: tuple[int, int] = (1280, 720),
    max_actions: int | None = None,
    progress: bool = True,
    processes: int = 2,
) -> dict:
    """Play a game and film it: video.mp4 (H.264), actions.json, states.jsonl.gz (read it with
    `vision.synth.video.read_states`), meta.json in out_dir; returns the meta. The deck is checked before anything
    is played, since a bad deck is the likeliest mistake."""
    deck = load_deck(deck_dir)
    if ENGINE_JOKER not in deck.codes:
        raise DeckError(
            f"deck '{deck.path}' has no JOKER.png: Loot the Loop needs one joker (the temple exit); "
            "use a deck directory with a joker"
        )
    played = play_game(game, seed, policy, max_actions)
    meta = {
        "game": game,
        "policy": policy,
        "actions": len(played.steps),
        "final_score": played.final_score,
        "result": played.result,
        "finished": played.finished,
        **engine_info(game),
    }
    return render_table_video(played.initial, played.steps, deck, out_dir, seed, fps, size, meta, processes, progress)


def bench_game_video(
    deck_dir: str | Path, out_dir: str | Path, seed: int = 3, max_actions: int | None = 10, fps: int = 30
) -> dict[str, float | str]:
    """Rendering speed at 1280x720 (the product's camera size): frames per second and seconds of video per second
    of rendering, on all cores given to the pool; and what a minute of it costs on disk, video and ground truth."""
    meta = render_game_video(seed=seed, deck_dir=deck_dir, out_dir=out_dir, fps=fps, max_actions=max_actions)
    minutes = meta["duration_s"] / 60.0
    out = Path(out_dir)
    return {
        "actions": meta["actions"],
        "frames": meta["frames"],
        "codec": meta["codec"],
        "render_s": meta["render_s"],
        "frames_per_s": round(meta["frames"] / meta["render_s"], 2),
        "video_s_per_s": round(meta["duration_s"] / meta["render_s"], 3),
        "video_mb_per_min": round((out / "video.mp4").stat().st_size / 1e6 / minutes, 2),
        "states_mb_per_min": round((out / STATES_FILE).stat().st_size / 1e6 / minutes, 2),
    }
