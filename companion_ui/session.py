"""A companion session: one game on the table, what the page shows of it, and what it says.

Two kinds, one surface, so the page and the server do not care which is running:

* `ManualSession`: the players enter what happens (any of the five games). The engine validates every entry,
  runs Dr. Foo's turns by itself, and its events are announced.
* `TrackedSession`: the camera follows a Loot the Loop game (`tracker`); the page confirms or corrects what the
  tracker flagged, and a correction goes back into the decoder.

Every public method may be called from any thread (the frame loop, the web server): a lock guards the game, and
`Hub` wakes the page's WebSocket handlers when anything changed. A refused entry raises `Refused` with the rule
it breaks and changes nothing; a manual game is saved after every change when a save file is given.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from companion_ui.journal import Journal, JournalError, is_journal
from companion_ui.speech import Priority, Speaker
from games import GameError, GameState, NothingToUndo, seat_name
from games.core import JSON, Action, BadAction, Event

HIDDEN_HANDS = frozenset({"loop", "bag-o-loot", "loot-roll"})  # games where an action can name a hidden card
HINT_SECONDS = 1.0  # the page's hint button: about as long as a player waits for an answer
CAMERA_HINT_SECONDS = 0.3  # the camera page's hint, planned once per new table: the picture must not wait for it
PUBLIC_VERBS = frozenset({"roll", "rifts"})  # physical outcomes anyone at the table may enter, whatever the seat
MOST_SHOWN = 40  # actions of one verb listed as buttons; longer groups become a menu


class Refused(GameError):
    """An entry the rules (or the session) do not take; `str()` says why in a sentence for the page."""


@dataclass(frozen=True)
class LogEntry:
    """One line of the event log; `seq` orders them and lets the page ask only for what is new."""

    seq: int
    wall: float
    kind: str  # "event", "action", "check", "revised", "info", "error"
    text: str
    urgent: bool = False
    candidates: tuple[str, ...] = ()
    step: int = -1  # a tracker question: the step it asks about (-1: the table now)


class Hub:
    """A version number with a condition: writers bump it, each page connection waits for a newer one."""

    def __init__(self) -> None:
        self.version = 0
        self._cond = threading.Condition()

    def bump(self) -> None:
        with self._cond:
            self.version += 1
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> int:
        with self._cond:
            self._cond.wait_for(lambda: self.version != seen, timeout=timeout)
            return self.version


class Session(ABC):
    """What every session shares: the log, the announcements, the lock and the change hub."""

    game: str
    title: str

    def __init__(self, speaker: Speaker | None = None, echo: Callable[[str], None] | None = None) -> None:
        self.speaker = speaker
        self.echo = echo
        self.hub = Hub()
        self.lock = threading.RLock()
        self.log: deque[LogEntry] = deque(maxlen=400)
        self._seq = 0
        self.status = ""

    # ----- announcements ------------------------------------------------------------------------------------
    def announce(
        self,
        text: str,
        kind: str = "event",
        urgent: bool = False,
        candidates: Sequence[str] = (),
        speak: bool = True,
        new_fact: bool = False,
        priority: Priority = Priority.NORMAL,
        step: int = -1,
    ) -> LogEntry:
        """Log, print, speak and push one line. Speech is queued, never waited for. `new_fact`: a move or a game
        event, spoken even if the same words were just said (two looks in a row are two moves); other lines
        (notices, questions) are not repeated within the speaker's window. `priority` orders the speech queue
        (`urgent` overrides it). `step`: the tracker step a line is about; a newer line about the same step
        replaces one not yet spoken."""
        with self.lock:
            self._seq += 1
            entry = LogEntry(self._seq, time.time(), kind, text, urgent, tuple(candidates), step)
            self.log.append(entry)
        if self.echo is not None:
            self.echo(text)
        if speak and self.speaker is not None:
            key = f"log {entry.seq}" if new_fact else None
            topic = f"step {step}" if step >= 0 else None
            self.speaker.say(text, Priority.URGENT if urgent else priority, key, topic)
        self.hub.bump()
        return entry

    def announce_events(self, events: Sequence[Event]) -> None:
        for event in events:
            self.announce(event.text, "event", event.urgent, new_fact=True)

    def log_since(self, seq: int) -> list[JSON]:
        with self.lock:
            return [asdict(e) for e in self.log if e.seq > seq]

    def speech_json(self) -> JSON:
        s = self.speaker
        if s is None:
            return {"enabled": False, "status": "speech off", "muted": False}
        return {"enabled": s.enabled, "status": s.status, "muted": s.muted, "rate": s.rate, "voice": s.voice}

    # ----- what each kind supplies ---------------------------------------------------------------------------
    @abstractmethod
    def snapshot(self, viewer: int | None = None) -> JSON:
        """Everything the page draws, as JSON (`viewer`: the seat whose hidden cards may be shown)."""

    @abstractmethod
    def act(self, text: str) -> None:
        """Enter what happened on the table (an action's text); raise `Refused` if it is not taken."""

    @abstractmethod
    def undo(self) -> None:
        """Take back the last entry (or the tracker's last step); raise `Refused` when there is none."""

    def hint(self, viewer: int | None) -> JSON:
        """What the player whose view is shown might do next, and why; raise `Refused` where no hint can be given."""
        raise Refused("Hints are given in manual mode, where the page holds the whole game.")


# ----- manual mode ----------------------------------------------------------------------------------------------
class ManualSession(Session):
    """A game the players enter on the page; the engine checks, scores and announces."""

    def __init__(
        self,
        state: GameState,
        title: str,
        speaker: Speaker | None = None,
        echo: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(speaker, echo)
        self.state = state
        self.game = state.name
        self.title = title
        self.journal: Journal | None = None  # every entry is written there first (see journal.py)
        self._auto()

    def act(self, text: str) -> int:
        """Takes an entry the rules allow, journalled first; returns the seat that took it."""
        text = " ".join(text.split())
        with self.lock:
            try:
                action = self.state.parse_action(text)
            except BadAction as err:
                raise Refused(f"Not an action of this game: {err}") from err
            player = self._who(action)
            if player is None:
                problem = self.state.violation(action)
                why = f"{problem.reason} [rule: {problem.rule}]" if problem else "nobody may do that now"
                raise Refused(f"Not taken: {why}")
            if self.journal is not None:  # on disk before it takes effect; a failed write refuses the entry
                self.journal.append("act", text=str(action))
            events = self.state.apply(action)
        self.announce(f"{seat_name(player)}: {action}", "action", speak=not events, new_fact=True)
        self.announce_events(events)
        self._auto()
        return player

    def undo(self) -> None:
        with self.lock:
            before = self.state.to_dict()
            try:
                self.state.undo()
                if self._awaiting_foo():  # Dr. Foo's turn runs by itself: take back what started it too
                    self.state.undo()
            except NothingToUndo as err:
                self.state = type(self.state).from_dict(before)
                raise Refused("Nothing to undo yet.") from err
            if self.journal is not None:
                try:
                    self.journal.append("undo")
                except JournalError:
                    self.state = type(self.state).from_dict(before)
                    raise
        self.announce("Undone: the last entry was taken back.", "info", speak=False)

    def hint(self, viewer: int | None) -> JSON:
        """The game's hint for `viewer` (or, in a game without hidden hands, whoever is to act). Searched on a
        copy outside the lock: entries go on being taken while it thinks."""
        from games import info
        from games.hints import Budget

        with self.lock:
            state, seed = self.state.search_copy(), self.state.history_length
        if state.is_over:
            raise Refused("The game is over: no more hints.")
        player = viewer if viewer is not None else state.current_player
        if self.game in HIDDEN_HANDS and viewer is None:
            raise Refused("Choose 'view as' a player first: a hint uses that player's own cards.")
        if player is None or not 0 <= player < state.num_players:
            raise Refused("No player to give a hint to.")
        advice = info(self.game).hinter()(state, player, random.Random(seed), Budget(seconds=HINT_SECONDS))
        return {"player": player + 1, "action": advice.action, "reason": advice.reason}

    def _who(self, action: Action) -> int | None:
        for player in self.state.actors():
            if action in self.state.legal_actions(player):
                return player
        return None

    def _awaiting_foo(self) -> bool:
        from games.the_loop import foo

        return self.game == "the-loop" and foo.awaiting_foo(self.state)  # type: ignore[arg-type]

    def _auto(self) -> None:
        """Dr. Foo plays his own turns: the agents only ever see what he did."""
        from games.the_loop import foo

        while True:
            with self.lock:
                if not self._awaiting_foo():
                    return
                events = foo.foo_turn(self.state)  # type: ignore[arg-type]
            self.announce_events(events)

    def snapshot(self, viewer: int | None = None) -> JSON:
        with self.lock:
            state = self.state
            if viewer is not None and not 0 <= viewer < state.num_players:
                viewer = None
            actors = state.actors()
            hidden = self.game in HIDDEN_HANDS
            offered = [p for p in actors if not hidden or p == viewer]
            actions = [
                (p, str(a))
                for p in actors
                for a in state.legal_actions(p)
                if p in offered or str(a).split()[0] in PUBLIC_VERBS
            ]
            lines = state.describe(viewer).splitlines()
            return {
                "mode": "manual",
                "game": self.game,
                "title": self.title,
                "over": state.is_over,
                "moves": state.history_length,
                "players": state.num_players,
                "viewer": viewer,
                "hidden_hands": hidden,
                "actors": [seat_name(p) for p in actors],
                "waiting_for": _waiting(actors, offered, hidden),
                "panel": panel(self.game, lines),
                "scores": _scores(state),
                "groups": group_actions(actions),
                "prompts": prompts(actions, state),
                "hint": "",
                "hints": True,  # the page offers a hint button (POST /api/hint)
                "speech": self.speech_json(),
                "status": self.status,
            }


def _waiting(actors: list[int], offered: list[int], hidden: bool) -> str:
    if not actors:
        return "The game is over."
    who = seat_name(actors[0])
    if hidden and actors[0] not in offered:
        return f"{who} to act: choose 'view as {who}' to see their cards and actions (the others look away)."
    return f"{who} to act."


def _scores(state: GameState) -> list[JSON]:
    winners = set(state.winners())
    return [{"seat": seat_name(p), "score": s, "winner": p in winners} for p, s in enumerate(state.scores())]


def group_actions(actions: Sequence[tuple[int, str]]) -> list[JSON]:
    """Actions by verb (their first word), in the engine's order: a page can show a few buttons per verb instead
    of a wall of hundreds (a landing of 5 cubes has 21 splits, a d20 has 20 faces)."""
    groups: dict[tuple[int, str], list[str]] = {}
    for player, text in actions:
        groups.setdefault((player, text.split()[0]), []).append(text)
    return [
        {"seat": seat_name(p), "player": p + 1, "verb": verb, "actions": texts, "menu": len(texts) > MOST_SHOWN}
        for (p, verb), texts in groups.items()
    ]


def prompts(actions: Sequence[tuple[int, str]], state: GameState) -> list[JSON]:
    """Physical outcomes the page asks for with a form of their own: a die roll, where rift cubes landed."""
    out: list[JSON] = []
    rolls = sorted({int(t.split()[1]) for _, t in actions if t.startswith("roll ") and t != "roll auto"})
    for seat in rolls:
        out.append({"kind": "roll", "player": seat, "seat": seat_name(seat - 1), "die": 20})
    drops = {sum(map(int, t.split()[1:])) for _, t in actions if t.startswith("rifts ") and t != "rifts auto"}
    if drops:
        from games.the_loop import foo
        from games.the_loop.eras import ERAS

        eras = foo.landing_eras(state.foo_era)  # type: ignore[attr-defined]
        out.append({"kind": "landing", "drop": max(drops), "eras": [ERAS[e] for e in eras]})
    return out


def panel(game: str, lines: Sequence[str]) -> JSON:
    """The engine's own picture of the table, cut into what the page lays out: a headline, the Eras of The LOOP
    as a ring of boxes, and the rest as lines."""
    head, rest = (lines[0], list(lines[1:])) if lines else ("", [])
    if game == "the-loop":
        ring = [line.strip() for line in rest if line.startswith("  ")]
        others = [line for line in rest if not line.startswith("  ")]
        return {"headline": head, "sections": [{"title": "The ring of Eras", "kind": "ring", "items": ring},
                                               {"title": "Agents", "kind": "lines", "items": others}]}  # fmt: skip
    return {"headline": head, "sections": [{"title": "Table", "kind": "lines", "items": rest}]}


# ----- the camera follows Loot the Loop ----------------------------------------------------------------------
class TrackedSession(Session):
    """The tracker's beliefs about a Loot the Loop table, announced, with the player's corrections fed back.

    `correct` is how a player answers "please check" or fixes a misread: the actions they say happened at the
    tracker's last step replace what it decoded; the rules check them first.
    """

    game = "loot-the-loop"
    title = "Loot the Loop"

    def __init__(self, speaker: Speaker | None = None, echo: Callable[[str], None] | None = None) -> None:
        super().__init__(speaker, echo)
        self.decoder: Any = None
        self.journal: Journal | None = None  # the tracker's checkpoint after each change (see journal.py)
        self._save_failed = ""  # the journal's last write error, told once
        self.frame = 0
        self.t = 0.0
        self.source = ""
        self.reset()

    def reset(self) -> None:
        from tracker.loot_the_loop import LootTheLoopDecoder

        with self.lock:
            self.decoder = LootTheLoopDecoder()
            self.frame, self.t = 0, 0.0
            self._ending = ""  # the game-over line last told

    def on_events(self, events: Sequence[Any], journalled: bool = False) -> None:
        """Tracker events from the frame loop: actions, revisions, checks; journalled before they are told."""
        if events and not journalled:
            self._checkpoint()
        for (kind, k), group in itertools.groupby(events, key=lambda e: (e.kind, e.step)):
            said = list(group)
            if kind == "action":  # two moves between still tables are one line: "Look. Mark."
                self.announce(" ".join(spoken_action(e.action) for e in said), "action", new_fact=True, step=k)
                continue
            for e in said:
                if kind == "check":  # asked after any move waiting to be said; the page keeps it with its buttons
                    self.announce(e.text, "check", candidates=e.candidates, priority=Priority.CHATTER, step=k)
                else:
                    self.announce(e.text, kind, new_fact=kind == "revised", step=k)
        if events:
            known = self.decoder_state()
            ending = f"Game over: {known['result']}. Score {known.get('score', 0)}." if known.get("result") else ""
            if ending != self._ending:  # said once, and again only if a correction changes it
                self._ending = ending
                if ending:
                    self.announce(ending, "event", True)

    def decoder_state(self) -> JSON:
        with self.lock:
            return self.decoder.state()

    def act(self, text: str) -> None:
        """A move the camera missed, made after the last one it read."""
        self.correct([part.strip() for part in text.split(";") if part.strip()], replace=False)

    def undo(self) -> None:
        self.correct([])

    def correct(self, actions: Sequence[str], replace: bool = True) -> None:
        """Replace the tracker's last step by what the player says happened (`[]`: nothing happened)."""
        with self.lock:
            if self.decoder.best() is None:
                raise Refused("The camera has not seen the table yet: nothing to correct.")
            events = self.decoder.correct(list(actions), self.t, self.frame, replace)
        self._take(events, "Corrected", actions)

    def answer(self, step: int, actions: Sequence[str]) -> None:
        """The player's reply to a "please check" about an earlier step (`[]`: nothing happened there)."""
        with self.lock:
            events = self.decoder.answer(step, list(actions), self.t, self.frame)
        self._take(events, "Answered", actions)

    def _take(self, events: Sequence[Any], verb: str, actions: Sequence[str]) -> None:
        """Events the decoder gave for a player's word: a refusal raises, anything else is journalled, logged and
        told."""
        refused = [e for e in events if e.kind == "check" and "does not fit" in e.text]
        if refused:
            raise Refused(refused[0].text)
        self._checkpoint()
        self.announce(f"{verb}: {' then '.join(actions) if actions else 'nothing happened'}.", "info", speak=False)
        self.on_events(events, journalled=True)

    def _checkpoint(self) -> None:
        """The tracker's state on disk (a full checkpoint, so a write that fails loses nothing the next one does not
        carry): a failure is said once on the page, and the game goes on in memory."""
        if self.journal is None:
            return
        with self.lock:
            checkpoint = self.decoder.checkpoint()
        try:
            self.journal.append("camera", checkpoint=checkpoint)
            self._save_failed = ""
        except JournalError as err:
            if not self._save_failed:
                self.announce(f"The game could not be saved: {err}", "info", speak=False)
            self._save_failed = str(err)

    def _open_question(self, known: JSON) -> JSON | None:
        """The newest "please check" still waiting for the player: one about an earlier step stays open until
        that step is sure (answered, or settled by what the camera saw since); one about the table now (a move
        the rules forbid) until the next move is told."""
        unsure = set(known.get("unsure_steps", []))
        told = [e for e in self.log if e.kind in ("check", "action", "revised")]
        for entry in reversed(told):
            if entry.kind == "check" and (entry.step in unsure if entry.step >= 0 else entry is told[-1]):
                return {"text": entry.text, "candidates": list(entry.candidates), "step": entry.step}
        return None

    def snapshot(self, viewer: int | None = None) -> JSON:
        from tracker.loot_the_loop import engine

        with self.lock:
            known = self.decoder.state()
            best = self.decoder.best()
            legal = [str(a) for a in engine(best.core).legal_actions()] if best is not None else []
            question = self._open_question(known)
        deck = known.get("deck", [])
        lines = [
            f"Deck, top first ({len(deck)} cards; ? not read yet): " + (deck_text(deck) or "-"),
            f"Notes ({len(known.get('notes', []))}/3): " + (" ".join(known.get("notes", [])) or "-"),
            "Score pile: " + (" ".join(known.get("score_pile", [])) or "-"),
            "Moves so far: " + (moves_text(known) or "-"),
        ]
        phase = known.get("phase", "waiting for the camera")
        confidence = known.get("confidence")
        headline = f"Loot the Loop (camera) - {phase}" + (
            f"; tracker confidence {confidence:.0%}" if confidence is not None else ""
        )
        return {
            "mode": "camera",
            "game": self.game,
            "title": self.title,
            "over": bool(known.get("result")),
            "moves": len(known.get("actions", [])),
            "players": 1,
            "viewer": None,
            "hidden_hands": False,
            "actors": [] if known.get("result") else ["Player 1"],
            "waiting_for": f"Game over: {known['result']}." if known.get("result") else "Watching the table.",
            "panel": {"headline": headline, "sections": [{"title": "Table", "kind": "lines", "items": lines}]},
            "scores": [{"seat": "Player 1", "score": known.get("score", 0), "winner": False}],
            "groups": group_actions([(0, a) for a in legal]),
            "prompts": [],
            "check": question,
            "last_step": (known.get("steps") or [[]])[-1],
            "hint": _tracked_hint(known),
            "speech": self.speech_json(),
            "status": self.status,
            "source": self.source,
            "frame": self.frame,
        }


def deck_text(deck: Sequence[str | None]) -> str:
    """`8D ? [51 face down]`: runs of face-down cards counted, as a player would say them."""
    words: list[str] = []
    run = 0
    for card in [*deck, ""]:
        if card is None:
            run += 1
            continue
        if run:
            words.append(f"[{run} face down]")
            run = 0
        if card:
            words.append(card)
    return " ".join(words)


def moves_text(known: JSON) -> str:
    """The moves as the camera believes them now, step by step; a step now read otherwise than it was announced
    says so, and one still unsure is marked, so the list never silently disagrees with what was heard."""
    steps = known.get("steps") or [[a] for a in known.get("actions", [])]
    said = known.get("said_steps", [])
    unsure = set(known.get("unsure_steps", []))
    out = []
    for k, step in enumerate(steps):
        told = said[k] if k < len(said) else None
        if not step and not told:
            continue  # a still table with no move between it and the one before
        text = " + ".join(step) or "no move"
        if told is not None and list(told) != list(step):
            text += f" (announced as {' + '.join(told)})"
        if k in unsure:
            text += " ?"
        out.append(text)
    return ", ".join(out)


def spoken_action(action: str) -> str:
    """How a tracked move is said aloud ("explore 8" -> "Explore 8.")."""
    words = action.split()
    return " ".join([words[0].capitalize(), *words[1:]]) + "." if words else ""


def _tracked_hint(known: JSON) -> str:
    """The game's hint (the planner) on the table as the camera knows it: unread cards count as unknown. Shown with
    every picture of the table, so planned within `CAMERA_HINT_SECONDS`; the planner keeps its plan, so the same
    table asks again for nothing."""
    if known.get("phase") != "play" or known.get("result"):
        return ""
    notes, score = known.get("notes", []), known.get("score_pile", [])
    if "?" in notes or "?" in score:
        return ""
    from games import info
    from games.hints import Budget
    from games.loot_the_loop.engine import LootTheLoop

    try:
        table = LootTheLoop.from_table(deck=[c or "?" for c in known["deck"]], notes=notes, score_pile=score)
        advice = info("loot-the-loop").hinter()(table, 0, random.Random(0), Budget(seconds=CAMERA_HINT_SECONDS))
    except GameError:
        return ""
    return f"{advice.action}: {advice.reason}" if advice.action else ""


def new_manual(
    game: str,
    players: int | None,
    seed: int,
    options: JSON,
    speaker: Speaker | None = None,
    save: Path | None = None,
    resume: Path | None = None,
    echo: Callable[[str], None] | None = None,
) -> ManualSession:
    """A manual session for `tabletop run --manual`: a new game, or one saved earlier. The LOOP is played on a
    physical table (the agents use the real components; the assistant keeps the board and runs Dr. Foo)."""
    from games import registry

    info = registry.info(game)
    if resume is not None and is_journal(resume):
        return resume_journal(resume, game, info.title, speaker, save, echo)
    if resume is not None:
        try:
            data = json.loads(resume.read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise GameError(f"{resume}: cannot read the saved game: neither a journal nor a JSON save ({err})") from err
        state = registry.load(data)
        if state.name != game:
            raise GameError(f"{resume}: a saved {state.name} game, not {game}")
    else:
        if game == "the-loop":
            options = {"table": "physical", **options}
        state = registry.create(game, players, seed, **options)
    session = ManualSession(state, info.title, speaker, echo)
    if save is not None:
        session.journal = Journal.start(save, game, state.to_dict())
    return session


def new_tracked(
    speaker: Speaker | None = None,
    echo: Callable[[str], None] | None = None,
    save: Path | None = None,
    resume: Path | None = None,
) -> TrackedSession:
    """A camera session for `tabletop run`: a new game journalled in `save`, or the game a camera session's journal
    holds, carried on from its last checkpoint (in the same file, or in `save`)."""
    from tracker.loot_the_loop import LootTheLoopDecoder

    session = TrackedSession(speaker, echo)
    if resume is None:
        if save is not None:
            session.journal = Journal.start(save, session.game, {}, mode="camera")
        return session
    if not is_journal(resume):
        raise JournalError(f"{resume}: not a journal (a camera session is carried on from the file its --save wrote)")
    journal, entries = Journal.resume(resume)
    if entries[0].get("mode") != "camera" or entries[0]["game"] != session.game:
        journal.close()
        raise JournalError(f"{resume}: the journal of a manual {entries[0]['game']} game: carry it on with --manual")
    lines = [n for n, e in enumerate(entries, 1) if e.get("kind") == "camera"]  # (the header has no kind)
    if lines:
        try:
            session.decoder = LootTheLoopDecoder.restore(entries[lines[-1] - 1]["checkpoint"])
        except ValueError as err:
            journal.close()
            raise JournalError(f"{resume}: line {lines[-1]}: {err}") from err
    session.journal = journal
    if save is not None and save.resolve() != resume.resolve():
        journal.close()
        session.journal = Journal.start(save, session.game, {}, mode="camera")
        session._checkpoint()  # the new file starts from the game as it stands
    return session


def resume_journal(
    path: Path,
    game: str,
    title: str,
    speaker: Speaker | None = None,
    save: Path | None = None,
    echo: Callable[[str], None] | None = None,
) -> ManualSession:
    """The game a journal holds, rebuilt in silence (`replay_journal`); it goes on being journalled in the same
    file (or in `save`, a new journal from the state reached)."""
    journal, entries = Journal.resume(path)
    if entries[0]["game"] != game:
        journal.close()
        raise JournalError(f"{path}: a journal of a {entries[0]['game']} game, not {game}")
    try:
        session = replay_journal(path, entries, title)
    except JournalError:
        journal.close()
        raise
    session.log.clear()  # the replay's lines were never news; the page starts from the game as it stands
    session.speaker, session.echo = speaker, echo
    if save is not None and save.resolve() != path.resolve():
        journal.close()
        journal = Journal.start(save, game, session.state.to_dict())
    session.journal = journal
    return session


def replay_journal(
    path: Path,
    entries: Sequence[JSON],
    title: str,
    after: Callable[[JSON, ManualSession, int | None], None] | None = None,
) -> ManualSession:
    """A journal's game rebuilt by replaying its entries (`journal.read_entries`) through the session's own act and
    undo, with no speaker. `after(entry, session, seat)` is told of the starting game (the header entry) and of each
    entry once it took effect (seat: who took an act; None for the header and an undo). An entry the engine cannot
    take is a JournalError naming it."""
    from games import registry

    if entries[0].get("mode") == "camera":
        raise JournalError(
            f"{path}: a camera session's journal (the tracker's checkpoints, not entries to replay): carry it on with "
            "--camera or --video, not --manual"
        )
    at = 0  # the entry being replayed (0: the header's starting game)
    try:
        session = ManualSession(registry.load(entries[0]["state"]), title)
        if after is not None:
            after(entries[0], session, None)
        for entry in entries[1:]:
            at = entry["seq"]
            seat = session.act(entry["text"]) if entry["kind"] == "act" else session.undo()
            if after is not None:
                after(entry, session, seat)
    except (GameError, KeyError, TypeError, ValueError) as err:  # a state or an entry the engine cannot take
        what = f"entry {at}" if at else "its starting game"
        raise JournalError(f"{path}: {what} cannot be replayed ({err}); the file is left as it was") from err
    return session
