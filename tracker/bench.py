"""`tabletop bench tracker`: the tracker on whole rendered games of Loot the Loop, with the frame-wise baseline
(one reading per still table, no rules, no beam) in the same run.

The games are rendered by the synthetic engine with decks of the test families only (never used to train or
choose anything in the recognisers), half played by the solver and half at random; a game missing from the folder
is rendered first, so the bench can be built up over several sessions. Per game and in total it reports:

* actions decoded correctly: the decoded sequence (after the decoder's own revisions) aligned with the true one;
* silent errors: an announced action that was wrong and was neither revised nor flagged with "please check";
* checks raised and corrections announced: what the player hears when the tracker is unsure or changes its mind;
* final score right: the score pile count of the decoded end state against the engine's;
* delay: from the end of the physical move (the hand gone) to the announcement, including the processing time of
  the frame that produced it;
* speed: frames worked per second and frames a live 30 fps camera would have dropped.
"""

from __future__ import annotations

import difflib
import gzip
import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tracker.decoder import TrackerEvent
from tracker.replay import TRACKER_RECOGNISER, ReplayResult, replay
from tracker.sightings import BACK, BACK_SURE, Sighting
from vision.synth.video import STATES_FILE

TEST_DECKS = ("gnome-dondorf", "gnome-orell", "gnome-plastic", "gnome-rheinland", "kde-dondorf")
POLICIES = ("random", "solver")
FIRST_SEED = 2000
RUNS = ("decoder", "baseline", "perfect_vision")


@dataclass(frozen=True)
class BenchGame:
    policy: str
    seed: int
    deck: str

    @property
    def name(self) -> str:
        return f"{self.policy}-{self.seed}-{self.deck}"


def plan(games: int) -> list[BenchGame]:
    """Half random, half solver play (random first: short games), decks of the test families in turn."""
    per = (games + 1) // 2
    out = [BenchGame(p, FIRST_SEED + i, TEST_DECKS[i % len(TEST_DECKS)]) for p in POLICIES for i in range(per)]
    return sorted(out, key=lambda g: (g.seed, POLICIES.index(g.policy)))[:games]


def ensure_video(game: BenchGame, root: Path, decks: Path, progress: bool) -> Path:
    """The game's folder, rendered now if it is missing (written to a temporary folder, renamed when whole)."""
    from companion_ui.synth_game import render_game_video

    out = root / game.name
    if (out / "meta.json").is_file():
        return out
    tmp = root / (game.name + ".tmp")
    render_game_video(seed=game.seed, deck_dir=decks / game.deck, out_dir=tmp, policy=game.policy, progress=progress)
    tmp.rename(out)
    return out


def step_outcomes(events: list[TrackerEvent]) -> dict[int, dict[str, Any]]:
    """Per step: the first announcement, whether it was revised and whether the player was asked to check."""
    steps: dict[int, dict[str, Any]] = {}
    for e in events:
        if e.step < 0:
            continue
        rec = steps.setdefault(
            e.step, {"first": None, "first_frame": None, "revised": False, "checked": False, "final_frame": None}
        )
        if e.kind == "action":
            if rec["first"] is None:
                rec["first"], rec["first_frame"] = [], e.frame
            if rec["first_frame"] == e.frame:
                rec["first"].append(e.action)
            rec["final_frame"] = rec["final_frame"] or e.frame
        elif e.kind == "revised":
            rec["revised"] = True
            rec["final_frame"] = e.frame
        elif e.kind == "check":
            rec["checked"] = True
    return steps


def matched_actions(true_actions: Sequence[str], decoded: Sequence[str]) -> dict[int, int]:
    """The decoded actions that match the true ones in the game's order (decoded position -> true position): aligned,
    so one missed or extra action does not count every later one as wrong."""
    matcher = difflib.SequenceMatcher(a=list(true_actions), b=list(decoded), autojunk=False)
    return {block.b + n: block.a + n for block in matcher.get_matching_blocks() for n in range(block.size)}


def score_game(
    truth: list[dict],
    result: ReplayResult,
    events: list[TrackerEvent],
    state: dict,
    final_score: int,
    steps_of: list[tuple[str, ...]],
) -> dict[str, Any]:
    """Compare decoded actions with the truth (see the module docstring)."""
    true_actions = [a["action"] for a in truth]
    decoded = [(k, a) for k, step in enumerate(steps_of) for a in step]
    matched = matched_actions(true_actions, [a for _, a in decoded])
    correct = len(matched)
    outcomes = step_outcomes(events)
    silent = 0
    delays = []
    for pos, (k, _action) in enumerate(decoded):
        rec = outcomes.get(k)
        if rec is None:
            continue
        wrong_at_first = rec["first"] is not None and tuple(rec["first"]) != steps_of[k]
        said_so = rec["checked"] or rec["revised"]
        if not said_so and (pos not in matched or wrong_at_first):
            silent += 1
        if pos in matched and rec["final_frame"] is not None:
            t_end = truth[matched[pos]]["t_end"]
            announced = rec["final_frame"] / result.fps + result.lag.get(rec["final_frame"], 0.0)
            delays.append(announced - t_end)
    return {
        "true_actions": len(true_actions),
        "decoded_actions": len(decoded),
        "correct": correct,
        "accuracy": round(correct / max(len(true_actions), 1), 4),
        "silent_errors": silent,
        "checks": sum(1 for e in events if e.kind == "check"),
        "revisions": sum(1 for e in events if e.kind == "revised"),
        "score": state.get("score"),
        "true_score": final_score,
        "score_right": state.get("score") == final_score,
        "median_delay_s": round(statistics.median(delays), 3) if delays else None,
        "delays": [round(d, 3) for d in delays],
    }


TRUE_SEEN = 0.15  # a cascade strip shows ~0.25 of its card, and its corner index is legible there
TRUE_P = 0.98  # how sure the perfect reader is of a face-up card (kept below 1: the tracker's floor still applies)


def truth_reader(folder: Path) -> Callable[[np.ndarray, int], list[Sighting]]:
    """A perfect reader for a rendered game: each card whose index shows, reported the way the finder reports a
    card (its whole outline), with its true label, from the game's states file. Run through the same gate,
    snapshots and decoder, it says how far the decoder gets when vision makes no mistakes, which separates the
    decoder's errors from vision's. (The shipped finder was taught to skip cards less than 30% visible, which
    drops cascade strips: a vision limit this reader does not share.)"""
    with gzip.open(folder / STATES_FILE, "rt") as fh:
        frames = {int(row["frame"]): row for row in map(json.loads, fh)}

    def read(frame: np.ndarray, index: int) -> list[Sighting]:
        row = frames.get(index)
        out = []
        for card in row["cards"] if row is not None else []:
            if card["visible"] < TRUE_SEEN:
                continue
            quad = np.asarray(card["quad"], np.float32)
            if card["face_up"]:
                out.append(Sighting({card["code"]: TRUE_P}, quad, face_up=True))
            else:
                out.append(Sighting({BACK: BACK_SURE}, quad, face_up=False))
        return out

    return read


def evaluate(
    folder: Path, recognise: Any = None, truth: bool = True, recogniser: str = TRACKER_RECOGNISER, deck: Any = None
) -> dict[str, Any]:
    """One rendered game: the decoder and the baseline on the recogniser's readings (one pass, so the speed is
    the product's), and, with `truth`, the decoder again on the perfect reader's; `deck`: an enrolled deck's head,
    read with as `replay --deck` reads."""
    meta = json.loads((folder / "meta.json").read_text())
    actions = json.loads((folder / "actions.json").read_text())
    result = replay(folder / "video.mp4", meta["game"], recognise, baseline=True, recogniser=recogniser, deck=deck)
    out: dict[str, Any] = {"game": folder.name, "frames": result.frames, "duration_s": meta["duration_s"]}
    runs = [
        ("decoder", result, result.events, result.state),
        ("baseline", result, result.baseline_events, result.baseline_state),
    ]
    if truth:
        perfect = replay(folder / "video.mp4", meta["game"], truth_reader(folder))
        runs.append(("perfect_vision", perfect, perfect.events, perfect.state))
    for name, run, events, state in runs:
        steps = [tuple(s) for s in state.get("steps", [])]
        out[name] = score_game(actions, run, events, state, meta["final_score"], steps)
    out["speed"] = {
        **result.live(),
        "wall_s": round(result.wall_s, 1),
        "reads": result.reads,
        "realtime_factor": round(meta["duration_s"] / result.wall_s, 2),
    }
    return out


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"games": len(rows)}
    for name in RUNS:
        parts = [r[name] for r in rows if name in r]
        if not parts:
            continue
        true = sum(p["true_actions"] for p in parts)
        delays = [d for p in parts for d in p["delays"]]
        out[name] = {
            "actions": true,
            "correct": sum(p["correct"] for p in parts),
            "accuracy": round(sum(p["correct"] for p in parts) / max(true, 1), 4),
            "silent_errors": sum(p["silent_errors"] for p in parts),
            "checks": sum(p["checks"] for p in parts),
            "revisions": sum(p["revisions"] for p in parts),
            "scores_right": sum(p["score_right"] for p in parts),
            "score_rate": round(sum(p["score_right"] for p in parts) / max(len(parts), 1), 4),
            "median_delay_s": round(statistics.median(delays), 3) if delays else None,
        }
    speeds = [r["speed"] for r in rows]
    frames = sum(s["frames"] for s in speeds)
    out["speed"] = {
        "frames": frames,
        "dropped": sum(s["dropped"] for s in speeds),
        "work_fps": round(frames / sum(s["frames"] / max(s["work_fps"], 1e-9) for s in speeds), 1) if speeds else 0,
        "realtime_factor_min": min((s["realtime_factor"] for s in speeds), default=0),
    }
    if out["decoder"]["accuracy"] and out["baseline"]["accuracy"]:
        out["accuracy_ratio"] = round(out["decoder"]["accuracy"] / out["baseline"]["accuracy"], 2)
    return out


def run_bench(
    root: str | Path,
    decks: str | Path,
    games: int = 20,
    progress: bool = True,
    render: bool = True,
    recogniser: str = TRACKER_RECOGNISER,
) -> dict[str, Any]:
    """Render what is missing (unless `render` is off: then only the games already rendered are measured), then
    replay every game with the decoder and the baseline."""
    root, decks = Path(root), Path(decks)
    root.mkdir(parents=True, exist_ok=True)
    missing = [g for g in plan(games) if not (decks / g.deck).is_dir()]
    if missing and render:
        raise FileNotFoundError(
            f"{decks}: no deck directory {missing[0].deck} (render Debian's decks with: tabletop synth decks)"
        )
    rows = []
    for game in plan(games):
        if not render and not (root / game.name / "meta.json").is_file():
            continue
        folder = ensure_video(game, root, decks, progress)
        rows.append(evaluate(folder, recogniser=recogniser))
        if progress:
            r = rows[-1]
            perfect = r.get("perfect_vision")
            also = f", with perfect vision {perfect['correct']}" if perfect else ""
            print(
                f"{game.name}: decoder {r['decoder']['correct']}/{r['decoder']['true_actions']}, baseline "
                f"{r['baseline']['correct']}{also}, score {r['decoder']['score']} vs "
                f"{r['decoder']['true_score']}, speed x{r['speed']['realtime_factor']}",
                flush=True,
            )
    return {
        "rows": rows,
        "summary": {**summary(rows), "recogniser": recogniser} if rows else {},
    }


def format_summary(summary: dict[str, Any]) -> str:
    if not summary:
        return "No games evaluated."
    rows = [
        f"Tracker bench: {summary['games']} Loot the Loop games (test-family decks), decoder vs frame-wise baseline"
        + (f", the {summary['recogniser']} card recogniser" if "recogniser" in summary else "")
    ]
    names = [n for n in RUNS if n in summary]
    heads = {"decoder": "decoder", "baseline": "baseline", "perfect_vision": "perfect vision"}
    rows.append(f"{'':28s}" + "".join(f"{heads[n]:>16s}" for n in names))
    for label, key in (
        ("actions right", "accuracy"),
        ("silent errors", "silent_errors"),
        ("checks raised", "checks"),
        ("corrections announced", "revisions"),
        ("final score right", "score_rate"),
        ("median delay (s)", "median_delay_s"),
    ):
        rows.append(f"{label:28s}" + "".join(f"{summary[n][key]!s:>16s}" for n in names))
    sp = summary["speed"]
    rows.append(
        f"frames {sp['frames']}, worked at {sp['work_fps']} fps, dropped at 30 fps live: {sp['dropped']}, "
        f"slowest game {sp['realtime_factor_min']}x real time"
    )
    if "accuracy_ratio" in summary:
        rows.append(f"decoder / baseline accuracy: {summary['accuracy_ratio']}x")
    if "perfect_vision" in summary:
        rows.append("perfect vision: the same decoder on the renderer's true labels (what vision's errors cost)")
    return "\n".join(rows)
