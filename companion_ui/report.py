"""`tabletop report`: a game's journal as a record to keep, JSON and a page of its own (the scores over the game
as a line per seat, and the moves as they stand after every undo), readable offline with no script or asset.

The game is rebuilt from the journal exactly as `--resume` rebuilds it; each entry's effect is recorded on the
way, so the report shows the line of play the table kept (a move taken back is gone from it) and counts the undos.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion_ui.journal import read_entries
from games import registry, seat_name
from games.loot_the_loop.engine import RESULT_ESCAPED

COLOURS = ("#2f7ed8", "#d8432f", "#3aa655", "#b8860b", "#8e44ad", "#16a5a5")


@dataclass
class Kept:
    """One move of the line of play: what was entered, and the scores once it (and what it set off) was done."""

    moves: int  # the engine's move count after it
    seat: str
    text: str
    scores: list[int]


def game_record(path: Path) -> dict[str, Any]:
    """The journal's game: its moves as kept, the scores after each, the result."""
    from companion_ui.session import ManualSession, replay_journal

    entries, _ = read_entries(path)
    header = entries[0]
    if header.get("mode") == "camera":
        return camera_record(entries)
    start: list[int] = []
    kept: list[Kept] = []
    undos = 0

    def record(entry: dict[str, Any], session: ManualSession, seat: int | None) -> None:
        nonlocal undos
        if entry is header:
            start.extend(session.state.scores())
        elif entry["kind"] == "act":
            who = seat_name(seat) if seat is not None else ""
            kept.append(Kept(session.state.history_length, who, entry["text"], session.state.scores()))
        else:
            undos += 1
            while kept and kept[-1].moves > session.state.history_length:
                kept.pop()

    session = replay_journal(path, entries, registry.info(header["game"]).title, record)
    state = session.state
    return {
        "game": header["game"],
        "title": session.title,
        "players": [seat_name(p) for p in range(state.num_players)],
        "over": state.is_over,
        "scores": state.scores(),
        "winners": [seat_name(p) for p in state.winners()] if state.is_over else [],
        "start_scores": start,
        "moves": [{"n": k, "seat": m.seat, "action": m.text, "scores": m.scores} for k, m in enumerate(kept, 1)],
        "entries": len(entries) - 1,
        "undos": undos,
    }


def camera_record(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """A camera session's game (Loot the Loop, one player): the moves as the tracker holds them at its last
    checkpoint (corrections included), each with the score the last checkpoint that had read up to it gave."""
    checkpoints = [e["checkpoint"] for e in entries[1:] if e.get("kind") == "camera"]

    def best(checkpoint: dict[str, Any]) -> dict[str, Any] | None:
        return max(checkpoint["beam"], key=lambda h: h["log_p"]) if checkpoint["beam"] else None

    tops = [h for h in map(best, checkpoints) if h is not None]
    final = tops[-1] if tops else None
    score_after = {len(h["steps"]): len(h["core"]["score"]) for h in tops}  # the latest word on each step count
    moves = []
    for k, step in enumerate(final["steps"] if final else [], 1):
        for action in step:
            moves.append({"n": len(moves) + 1, "seat": "", "action": action, "scores": [score_after.get(k, 0)]})
    result = final["core"]["result"] if final else ""
    return {
        "game": entries[0]["game"],
        "title": "Loot the Loop (camera)",
        "players": [seat_name(0)],
        "over": bool(result),
        "scores": [len(final["core"]["score"]) if final else 0],
        "winners": [seat_name(0)] if result == RESULT_ESCAPED else [],
        "start_scores": [0],
        "moves": moves,
        "entries": len(entries) - 1,
        "undos": 0,
    }


def score_plot(record: dict[str, Any], width: int = 720, height: int = 260) -> str:
    """An inline SVG: each seat's score after each kept move."""
    series = [record["start_scores"], *(m["scores"] for m in record["moves"])]
    seats = len(record["players"])
    top = max(1, *(max(s) for s in series if s))
    left, bottom, pad = 44, 28, 10
    span_x = max(1, len(series) - 1)

    def x(i: int) -> float:
        return left + (width - left - pad) * i / span_x

    def y(v: float) -> float:
        return pad + (height - bottom - pad) * (1 - v / top)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="scores over the game">',
        f'<line x1="{left}" y1="{y(0)}" x2="{width - pad}" y2="{y(0)}" stroke="#888"/>',
        f'<line x1="{left}" y1="{pad}" x2="{left}" y2="{y(0)}" stroke="#888"/>',
        f'<text x="{left - 6}" y="{y(top) + 4}" text-anchor="end" font-size="11">{top}</text>',
        f'<text x="{left - 6}" y="{y(0) + 4}" text-anchor="end" font-size="11">0</text>',
        f'<text x="{(left + width) / 2}" y="{height - 6}" text-anchor="middle" font-size="11">move</text>',
    ]
    for p in range(seats):
        points = " ".join(f"{x(i):.1f},{y(s[p]):.1f}" for i, s in enumerate(series) if p < len(s))
        colour = COLOURS[p % len(COLOURS)]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>')
        parts.append(
            f'<text x="{width - pad}" y="{pad + 14 * (p + 1)}" text-anchor="end" font-size="12" fill="{colour}">'
            f"{html.escape(record['players'][p])}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def report_html(record: dict[str, Any]) -> str:
    e = html.escape
    result = (
        f"Game over. Winner{'s' if len(record['winners']) > 1 else ''}: {e(', '.join(record['winners']) or 'nobody')}."
        if record["over"]
        else "The game was not finished."
    )
    scores = ", ".join(f"{e(p)} {s}" for p, s in zip(record["players"], record["scores"], strict=True))
    moves = "\n".join(
        f"<li>{e(m['seat'] + ': ' if m['seat'] else '')}{e(m['action'])} "
        f"<small>({', '.join(map(str, m['scores']))})</small></li>"
        for m in record["moves"]
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{e(record["title"])} - game report</title>
<style>body{{font-family:sans-serif;max-width:48rem;margin:1rem auto;padding:0 1rem}} svg{{width:100%;height:auto}}
ol{{padding-left:3.2rem}} small{{color:#666}}</style></head>
<body><h1>{e(record["title"])}</h1>
<p>{result} Final scores: {scores}.</p>
<p>{len(record["moves"])} moves kept from {record["entries"]} entries ({record["undos"]} undone).</p>
<h2>Scores over the game</h2>
{score_plot(record)}
<h2>Moves</h2>
<ol>
{moves}
</ol></body></html>
"""


def write_report(journal: Path, out: Path) -> tuple[Path, Path]:
    """report.json and report.html of a journal's game, in `out`."""
    record = game_record(journal)
    out.mkdir(parents=True, exist_ok=True)
    as_json, as_html = out / "report.json", out / "report.html"
    as_json.write_text(json.dumps(record, indent=2))
    as_html.write_text(report_html(record))
    return as_json, as_html
