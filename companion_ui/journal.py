"""The game journal of a manual companion session: every entry the players make, written down before it takes
effect, so a crash, a `kill -9` or a pulled plug at any moment costs the table nothing.

A journal is a file of JSON lines. The first holds the game as it started (the engine's whole state, its seed
included); each later line is one entry, `act` (the action's text) or `undo`, numbered. A line is appended with one
write to a file opened for appending and forced to disk (fsync) before the entry is applied, saved or announced.
So at any moment the file is a run of whole entries, perhaps followed by part of one being written when the
machine stopped: reading stops at that torn tail (and resuming cuts it off), and the game is rebuilt by replaying
the entries through the same session code that took them the first time. Undo is an entry, never a rewrite.

A camera session's journal (header `"mode": "camera"`) holds instead, after each table the tracker commits and each
correction or answer a player gives, the tracker's whole checkpoint (`LootTheLoopDecoder.checkpoint`): resuming
takes the last whole one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from games import GameError

FORMAT = "tabletop-journal"
VERSION = 1
KINDS = ("act", "undo", "camera")  # a manual game's entries, and a camera session's checkpoints

JSON = dict[str, Any]


class JournalError(GameError):
    """A journal that cannot be read or written; the message names the file and what is wrong."""


def _line(entry: JSON) -> bytes:
    return (json.dumps(entry, separators=(",", ":"), sort_keys=True) + "\n").encode()


def is_journal(path: Path) -> bool:
    """Whether the file starts like a journal (else it may be a JSON save of the whole game)."""
    try:
        with path.open("rb") as fh:
            return f'"format":"{FORMAT}"'.encode() in fh.readline(4096)
    except OSError:
        return False


def read_entries(path: Path) -> tuple[list[JSON], int]:
    """The journal's whole entries, and how many bytes they fill (a torn last line, cut short by a crash, is left
    out: it never took effect). Anything else wrong is a JournalError naming the line."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise JournalError(f"{path}: cannot read the journal ({err.strerror or err})") from err
    entries: list[JSON] = []
    good = 0
    lines = data.split(b"\n")
    for number, raw in enumerate(lines[:-1], 1):  # the last piece has no newline: empty, or a torn entry
        try:
            entry = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise JournalError(f"{path}: line {number} is not a journal entry ({err})") from err
        problem = _problem(entry, number)
        if problem:
            raise JournalError(f"{path}: line {number}: {problem}")
        entries.append(entry)
        good += len(raw) + 1
    if not entries:
        raise JournalError(f"{path}: an empty journal (no game was started in it)")
    return entries, good


def _problem(entry: Any, number: int) -> str | None:
    if not isinstance(entry, dict):
        return "expected a JSON object"
    if number == 1:
        if entry.get("format") != FORMAT or entry.get("version") != VERSION:
            return f"expected the journal's header (format '{FORMAT}', version {VERSION})"
        if not isinstance(entry.get("state"), dict) or not isinstance(entry.get("game"), str):
            return "the header holds no starting game ('game' and 'state')"
        return None
    if entry.get("kind") not in KINDS:
        return f"kind {entry.get('kind')!r}, expected one of {', '.join(KINDS)}"
    if entry.get("seq") != number - 1:
        return f"entry number {entry.get('seq')!r}, expected {number - 1} (entries missing or out of order)"
    if entry["kind"] == "act" and not isinstance(entry.get("text"), str):
        return "an 'act' entry without its action's text"
    if entry["kind"] == "camera" and not isinstance(entry.get("checkpoint"), dict):
        return "a 'camera' entry without the tracker's checkpoint"
    return None


class Journal:
    """An open journal, appended to entry by entry."""

    def __init__(self, path: Path, fd: int, entries: int) -> None:
        self.path = path
        self._fd = fd
        self.entries = entries  # entries after the header

    @classmethod
    def start(cls, path: Path, game: str, state: JSON, mode: str = "manual") -> Journal:
        """A new journal for a game that starts now (`mode` "camera": a camera session's, whose entries are the
        tracker's checkpoints); an existing file is never overwritten."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError as err:
            raise JournalError(
                f"{path}: already holds a game: carry it on with --resume, or save to another file"
            ) from err
        except OSError as err:
            raise JournalError(f"{path}: cannot create the journal ({err.strerror or err})") from err
        journal = cls(path, fd, 0)
        header = {"format": FORMAT, "version": VERSION, "game": game, "state": state}
        journal._write(header if mode == "manual" else {**header, "mode": mode})
        return journal

    @classmethod
    def resume(cls, path: Path) -> tuple[Journal, list[JSON]]:
        """The journal reopened for appending, its torn tail (if any) cut off, and its entries."""
        entries, good = read_entries(path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.truncate(path, good)
        except OSError as err:
            raise JournalError(f"{path}: cannot reopen the journal to carry on ({err.strerror or err})") from err
        return cls(path, fd, len(entries) - 1), entries

    def append(self, kind: str, **data: Any) -> None:
        """One entry, on disk before this returns. A failed write (a full disk) raises JournalError and leaves the
        file as it was: the entry must then not take effect."""
        self._write({"kind": kind, "seq": self.entries + 1, **data})
        self.entries += 1

    def _write(self, entry: JSON) -> None:
        line = _line(entry)
        size = os.fstat(self._fd).st_size
        try:
            written = os.write(self._fd, line)
            if written != len(line):
                raise OSError(28, "the disk took only part of the entry")
            os.fsync(self._fd)
        except OSError as err:
            os.ftruncate(self._fd, size)  # no torn entry left behind
            raise JournalError(
                f"{self.path}: could not write the journal ({err.strerror or err}): the entry was not taken"
            ) from err

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
