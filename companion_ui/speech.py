"""Spoken announcements: pyttsx3 + espeak-ng, never blocking the caller.

Why it is built this way:

* pyttsx3 has traps ("run loop already started", hangs after the first utterance, files left empty when driven
  from a thread, and it prints "Audio saved to ..." on stdout). So it runs alone in a worker *process* that
  only turns text into WAV files: its stdout is silenced, and a hung synthesis is killed and restarted
  instead of freezing the game.
* A player thread in this process takes announcements from a priority queue and plays each WAV with `aplay`,
  so `say()` only enqueues and returns at once: the frame loop is never held up by speech.
* A more urgent announcement cuts short the one playing (a loss cuts a move; a move cuts a question about an
  older move), and the cut one is said again after it, once.
* News that is out of date before it is heard is not said: a newer announcement on the same topic (the tracker
  correcting a move, or asking about it) replaces one still waiting in the queue.
* Speech never falls far behind the table: an announcement that has waited STALE_S to be heard is dropped
  unsaid (the page still shows it), unless it is urgent. A move heard that late comes after the players have
  moved on, and a backlog would make every later one late too.
* The same notice said again within a few seconds is dropped; a move made twice is not a duplicate (the caller
  gives each fact its own key).
* With no speech engine or no sound card the product says so once and carries on with text.
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import wave
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SYNTH_TIMEOUT_S = 10.0
DEDUPE_WINDOW_S = 5.0
STALE_S = 3.0  # a non-urgent announcement not begun this long after it was asked for is dropped unsaid


class Priority(enum.IntEnum):
    """Lower is more urgent (queue order): URGENT cuts short whatever less urgent is playing; CHATTER (remarks,
    questions about an older move) waits until every move queued has been said."""

    URGENT = 0
    NORMAL = 1
    CHATTER = 2


@dataclass(frozen=True, order=True)
class Announcement:
    priority: Priority
    order: int
    text: str = field(compare=False)
    queued: float = field(compare=False, default=0.0)  # time.monotonic() when `say` was called
    again: bool = field(compare=False, default=False)  # cut short once already: not repeated a second time
    topic: str | None = field(compare=False, default=None)  # what it is about (a newer word on it replaces it)
    key: str | None = field(compare=False, default=None)  # the fact it tells (`say`'s key), to trace it when heard


class Silence:
    """Stands in for `aplay` where no sound goes out (`Speaker(pace=True)`): it takes as long as the sound would
    and is cut short the same way, so the order and timing of what is said are the same as at a real table."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._cut = threading.Event()

    def terminate(self) -> None:
        self._cut.set()

    def wait(self) -> bool:
        """True if it ran to its end, False if cut short."""
        return not self._cut.wait(self.seconds)


@dataclass(frozen=True)
class Spoken:
    """A record of one announcement that was synthesised (for the page, the log and tests)."""

    text: str
    priority: Priority
    wav: str | None
    seconds: float
    played: bool
    interrupted: bool
    queued: float = 0.0  # time.monotonic() when it was asked for
    started: float = 0.0  # when its sound began (no sound out: when it would have, if the speaker paces itself)
    key: str | None = None  # the fact it told, as given to `say`


def wav_seconds(path: str | os.PathLike[str]) -> float:
    """Duration of a WAV file; 0.0 for an empty or unreadable one (espeak sometimes writes only a header)."""
    try:
        with wave.open(str(path), "rb") as fh:
            rate = fh.getframerate()
            return fh.getnframes() / rate if rate else 0.0
    except (OSError, EOFError, wave.Error):
        return 0.0


def _worker_main(voice: str | None, rate: int | None) -> int:
    """The worker process: JSON lines in on stdin, JSON lines out on the original stdout.

    pyttsx3 runs on this process's main thread, where it behaves, and its own prints go to /dev/null.
    """
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        import pyttsx3

        engine = pyttsx3.init()
        if voice:
            engine.setProperty("voice", voice)
        if rate:
            engine.setProperty("rate", rate)
    except Exception as err:  # any failure here means: no speech on this machine
        replies.write(json.dumps({"error": f"{type(err).__name__}: {err}"}) + "\n")
        return 1
    replies.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        text, path = request["text"], request["path"]
        for _ in range(2):  # an empty file is retried once
            engine.save_to_file(text, path)
            engine.runAndWait()
            if wav_seconds(path) > 0:
                break
        ok = wav_seconds(path) > 0
        replies.write(json.dumps({"done": path} if ok else {"error": f"espeak wrote no audio for {text!r}"}) + "\n")
    return 0


class Synthesiser:
    """The parent's handle on the worker process; restarts it once if it hangs or dies."""

    def __init__(self, voice: str | None = None, rate: int | None = None) -> None:
        self.voice = voice
        self.rate = rate
        self._proc: subprocess.Popen[str] | None = None
        self._replies: queue.Queue[dict[str, object]] = queue.Queue()

    def start(self) -> None:
        command = [sys.executable, "-m", "companion_ui.speech"]
        if self.voice:
            command += ["--voice", self.voice]
        if self.rate:
            command += ["--rate", str(self.rate)]
        self._proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self._replies = queue.Queue()
        threading.Thread(target=self._read, args=(self._proc, self._replies), daemon=True).start()
        reply = self._receive()
        if "ready" not in reply:
            self.close()
            raise RuntimeError(str(reply.get("error", "speech engine failed to start")))

    @staticmethod
    def _read(proc: subprocess.Popen[str], replies: queue.Queue[dict[str, object]]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with contextlib.suppress(json.JSONDecodeError):
                replies.put(json.loads(line))
        replies.put({"error": "speech engine process ended"})

    def _receive(self) -> dict[str, object]:
        try:
            return self._replies.get(timeout=SYNTH_TIMEOUT_S)
        except queue.Empty as err:
            raise TimeoutError(f"speech engine did not answer within {SYNTH_TIMEOUT_S:.0f} s") from err

    def synthesise(self, text: str, path: str) -> None:
        """Write `text` as speech to `path`, restarting a hung or dead worker once."""
        for attempt in range(2):
            try:
                if self._proc is None or self._proc.poll() is not None:
                    self.start()
                assert self._proc is not None and self._proc.stdin is not None
                self._proc.stdin.write(json.dumps({"text": text, "path": path}) + "\n")
                self._proc.stdin.flush()
                reply = self._receive()
                if "done" in reply:
                    return
                raise RuntimeError(str(reply.get("error")))
            except (TimeoutError, RuntimeError, OSError):
                self.close()
                if attempt == 1:
                    raise

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Speaker:
    """Say things aloud without ever blocking the caller.

    `play=False` synthesises without playing (tests, a machine with no sound card); `pace=True` then waits as
    long as each sound would take, so timing and order are a real table's (the benchmark); `keep_dir` keeps the
    WAV files there instead of deleting them after playing. `notice` receives the one-time messages about missing
    speech or audio (default: print).
    """

    def __init__(
        self,
        *,
        enabled: bool = True,
        voice: str | None = None,
        rate: int | None = None,
        play: bool = True,
        pace: bool = False,
        keep_dir: str | os.PathLike[str] | None = None,
        dedupe_seconds: float = DEDUPE_WINDOW_S,
        stale_seconds: float = STALE_S,
        notice: Callable[[str], None] = print,
    ) -> None:
        self.enabled = enabled
        self.voice = voice
        self.rate = rate
        self.play = play and shutil.which("aplay") is not None
        self.pace = pace
        self.muted = False
        self.dedupe_seconds = dedupe_seconds
        self.stale_seconds = stale_seconds
        self.notice = notice
        self.history: deque[Spoken] = deque(maxlen=200)
        self.status = "speech on" if enabled else "speech off (--no-speech)"
        self._keep = Path(keep_dir) if keep_dir is not None else None
        self._dir = self._keep or Path(tempfile.mkdtemp(prefix="tabletop-speech-"))
        self._dir.mkdir(parents=True, exist_ok=True)
        self._queue: queue.PriorityQueue[Announcement] = queue.PriorityQueue()
        self._order = itertools.count()
        self._last_said: dict[str, float] = {}
        self._lock = threading.Lock()
        self._playing: tuple[Priority, subprocess.Popen[bytes] | Silence] | None = None
        self._busy = threading.Event()
        self._synth = Synthesiser(voice, rate)
        self._retune = False  # set by `configure`; the speech thread swaps the worker between announcements
        self._told: set[str] = set()
        self._topics: dict[str, int] = {}  # topic -> the newest announcement on it
        self.superseded = 0  # announcements dropped unsaid because newer news on their topic came first
        self.stale = 0  # announcements dropped unsaid because they waited too long (STALE_S)
        self._thread: threading.Thread | None = None
        self._closed = False
        if play and not self.play:
            self._text_only("no 'aplay' found (Debian package alsa-utils)")

    def say(
        self, text: str, priority: Priority = Priority.NORMAL, key: str | None = None, topic: str | None = None
    ) -> bool:
        """Queue `text`; True if it will be spoken, False if dropped (muted, off, or said just now).

        `key` names the fact being told, and the same key within the window is the duplicate that is dropped
        (default: the sentence itself). A move made twice is two facts that sound the same ("Look." then
        "Look."), so callers that know that give each its own key. `topic`: what the sentence is about; a
        sentence on the same topic still waiting to be said is dropped for this one."""
        text = " ".join(text.split())
        if not text or not self.enabled or self.muted or self._closed:
            return False
        now = time.monotonic()
        fact = text if key is None else key
        with self._lock:
            last = self._last_said.get(fact)
            if last is not None and now - last < self.dedupe_seconds:
                return False
            if len(self._last_said) > 500:  # a long session must not grow without end
                self._last_said = {k: v for k, v in self._last_said.items() if now - v < self.dedupe_seconds}
            self._last_said[fact] = now
            self._busy.set()
            self._enqueue(priority, text, now, topic, key)
            playing = self._playing
        if playing is not None and priority < playing[0]:
            playing[1].terminate()  # the urgent one goes next; the cut one follows it
        self._ensure_thread()
        return True

    def _enqueue(
        self,
        priority: Priority,
        text: str,
        queued: float,
        topic: str | None,
        key: str | None,
        again: bool = False,
    ) -> None:
        """Queue an announcement as the newest word on its topic (the caller holds the lock)."""
        order = next(self._order)
        if topic is not None:
            if len(self._topics) > 500:  # a long session must not grow without end: keep the newest topics
                self._topics = dict(sorted(self._topics.items(), key=lambda kv: kv[1])[-250:])
            self._topics[topic] = order
        self._queue.put(Announcement(priority, order, text, queued, again, topic, key))

    def configure(self, voice: str | None = None, rate: int | None = None) -> None:
        """New voice or rate: the worker is restarted with them before the next announcement."""
        with self._lock:
            self.voice = voice or self.voice
            self.rate = rate or self.rate
            self._retune = True

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until everything queued has been handled (for tests and shutdown)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._queue.empty() and not self._busy.is_set():
                return True
            time.sleep(0.02)
        return False

    def close(self) -> None:
        self._closed = True
        self._queue.put(Announcement(Priority.CHATTER, next(self._order), ""))
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._synth.close()
        if self._keep is None:
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Speaker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- the player thread ----------------------------------------------------------------------------------
    def _ensure_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="speech", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if self._closed:
                self._busy.clear()
                return
            try:
                if self._current(item) and self._fresh(item):
                    self._speak(item)
            finally:
                if self._queue.empty():
                    self._busy.clear()

    def _current(self, item: Announcement) -> bool:
        """Whether `item` is still the newest word on its topic (if not, it is dropped unsaid)."""
        if item.topic is None:
            return True
        with self._lock:
            if self._topics.get(item.topic, item.order) == item.order:
                return True
            self.superseded += 1
            return False

    def _fresh(self, item: Announcement) -> bool:
        """Whether `item` can still be heard in time (if not, it is dropped). Only where speech is heard or paced
        as if it were: with neither, nobody waits on it and it is never late."""
        if item.priority == Priority.URGENT or not (self.play or self.pace):
            return True
        if time.monotonic() - item.queued <= self.stale_seconds:
            return True
        self.stale += 1
        return False

    def _speak(self, item: Announcement) -> None:
        path = str(self._dir / f"say-{item.order:06d}.wav")
        with self._lock:
            retune, self._retune = self._retune, False
        if retune:
            self._synth.close()
            self._synth = Synthesiser(self.voice, self.rate)
        try:
            self._synth.synthesise(item.text, path)
        except Exception as err:  # no engine, engine crashed twice: text only from now on
            self.enabled = False
            self.status = f"speech off: {err}"
            self._tell_once(
                "engine",
                f"Speech is off ({err}). Install Debian's espeak-ng and the Python package pyttsx3 to hear "
                "announcements; they are shown as text meanwhile.",
            )
            return
        seconds = wav_seconds(path)
        started = time.monotonic()
        played, interrupted = False, False
        if self.play:
            played, interrupted = self._play(item.priority, path)
        if not self.play and self.pace:  # no sound out, or aplay just found there is none
            interrupted = self._hold(item.priority, Silence(seconds))
        self.history.append(
            Spoken(item.text, item.priority, path, seconds, played, interrupted, item.queued, started, item.key)
        )
        if interrupted and not item.again and self._current(item):  # said again after what cut it, unless outdated
            with self._lock:
                self._enqueue(item.priority, item.text, item.queued, item.topic, item.key, again=True)
        if self._keep is None:
            Path(path).unlink(missing_ok=True)

    def _hold(self, priority: Priority, silence: Silence) -> bool:
        """Wait out a silent stand-in for the sound; True if something more urgent cut it short."""
        with self._lock:
            self._playing = (priority, silence)
        done = silence.wait()
        with self._lock:
            self._playing = None
        return not done

    def _play(self, priority: Priority, path: str) -> tuple[bool, bool]:
        proc = subprocess.Popen(["aplay", "-q", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        with self._lock:
            self._playing = (priority, proc)
        _, err = proc.communicate()
        with self._lock:
            self._playing = None
        if proc.returncode == 0:
            return True, False
        if proc.returncode < 0:  # terminated by an urgent announcement
            return False, True
        detail = (err or b"").decode(errors="replace")
        reason = "no sound card found" if "card" in detail else (detail.strip().splitlines() or ["aplay failed"])[-1]
        self.play = False
        self._text_only(f"no sound output: {reason}")
        return False, False

    def _text_only(self, reason: str) -> None:
        """Nothing can be heard: the terminal and the page (`status`) say so alike."""
        if self.enabled:
            self.status = f"text only ({reason})"
        self._tell_once("audio", f"Announcements are text only: {reason}.")

    def _tell_once(self, key: str, message: str) -> None:
        if key not in self._told:
            self._told.add(key)
            self.notice(message)


def main(argv: list[str] | None = None) -> int:
    """Entry of the worker process (`python -m companion_ui.speech`); not a user command."""
    import argparse

    parser = argparse.ArgumentParser(description="speech synthesis worker (internal)")
    parser.add_argument("--voice")
    parser.add_argument("--rate", type=int)
    args = parser.parse_args(argv)
    return _worker_main(args.voice, args.rate)


if __name__ == "__main__":
    sys.exit(main())
