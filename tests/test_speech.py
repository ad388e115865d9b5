"""Real speech: pyttsx3 driving espeak-ng in the worker process, WAV files checked for plausible sound."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from companion_ui import speech
from companion_ui.speech import Priority, Speaker, wav_seconds

SENTENCES = [
    "Dr. Foo travels to the Renaissance Era. Drop 4 rift cubes.",
    "Player 2 wins the Silver Ring with a roll of 17.",
    "You explore 7 cards and land on the ace of spades: you nab it.",
]


def test_announcements_synthesise_to_plausible_wavs(tmp_path: Path) -> None:
    notices: list[str] = []
    with Speaker(play=False, keep_dir=tmp_path, notice=notices.append) as speaker:
        for sentence in SENTENCES:
            assert speaker.say(sentence)
        assert speaker.wait_idle(60)
        spoken = list(speaker.history)
    assert notices == []
    assert [s.text for s in spoken] == SENTENCES
    for item in spoken:
        assert item.wav is not None and Path(item.wav).stat().st_size > 10_000
        words = len(item.text.split())
        # espeak speaks roughly 2-4 words a second at its default rate
        assert 0.15 * words < item.seconds < 1.0 * words, (item.text, item.seconds)


def test_duplicates_and_muted_announcements_are_dropped(tmp_path: Path) -> None:
    with Speaker(play=False, keep_dir=tmp_path, notice=lambda _: None) as speaker:
        assert speaker.say("Two vortexes remain before defeat.")
        assert not speaker.say("Two  vortexes remain before defeat. "), "the same sentence again is a duplicate"
        speaker.muted = True
        assert not speaker.say("Muted sentence.")
        speaker.muted = False
        assert speaker.say("Unmuted sentence.")
        assert not speaker.say("   ")
        assert speaker.wait_idle(60)
        assert [s.text for s in speaker.history] == ["Two vortexes remain before defeat.", "Unmuted sentence."]


def test_a_fact_is_deduplicated_by_its_key_not_its_words(tmp_path: Path) -> None:
    with Speaker(play=False, keep_dir=tmp_path, notice=lambda _: None) as speaker:
        assert speaker.say("Look.", key="move 4")
        assert speaker.say("Look.", key="move 5"), "a second look is a second move"
        assert not speaker.say("Look again.", key="move 5"), "the same fact told twice"
        assert speaker.wait_idle(60)
        assert [s.text for s in speaker.history] == ["Look.", "Look."]


def test_a_paced_speaker_says_each_announcement_after_the_one_before_is_heard(tmp_path: Path) -> None:
    """The latency benchmark reads `started`: on a machine with no sound card it must still count the time the
    announcements ahead take to hear, or it would flatter the companion."""
    with Speaker(play=False, pace=True, keep_dir=tmp_path, notice=lambda _: None) as speaker:
        speaker.say("Please check: explore eight or seven?")
        speaker.say("Explore ten.")
        assert speaker.wait_idle(60)
        first, second = speaker.history
        assert first.seconds > 1.0
        assert second.started >= first.started + first.seconds - 0.01


def test_a_move_cuts_a_question_short_and_the_question_is_asked_again_after_it(tmp_path: Path) -> None:
    question = "Please check: was the move before last explore eight, seven or ten?"
    with Speaker(play=False, pace=True, keep_dir=tmp_path, notice=lambda _: None) as speaker:
        speaker.say(question, Priority.CHATTER)
        deadline = time.monotonic() + 30
        while speaker._playing is None and time.monotonic() < deadline:  # the question is being heard
            time.sleep(0.01)
        speaker.say("Explore ten.")
        assert speaker.wait_idle(60)
        heard = [(s.text, s.interrupted) for s in speaker.history]
    assert heard == [(question, True), ("Explore ten.", False), (question, False)]


def test_newer_news_on_a_topic_replaces_what_is_still_waiting_to_be_said(tmp_path: Path) -> None:
    busy = "The deck has been shuffled and the first three piles are laid out."
    correction = "Correction: explore 3 rather than explore 2."
    with Speaker(play=False, pace=True, keep_dir=tmp_path, notice=lambda _: None, stale_seconds=60) as speaker:
        speaker.say(busy)
        deadline = time.monotonic() + 30
        while speaker._playing is None and time.monotonic() < deadline:  # the first one is being heard
            time.sleep(0.01)
        speaker.say("Explore 2.", topic="step 5")
        speaker.say(correction, topic="step 5")
        speaker.say("Look.", topic="step 6")
        assert speaker.wait_idle(60)
        heard = [s.text for s in speaker.history]
    assert heard == [busy, correction, "Look."] and speaker.superseded == 1


def test_speech_that_falls_behind_drops_what_is_too_late_but_never_an_urgent_line(tmp_path: Path) -> None:
    busy = "The deck has been shuffled and the first three piles are laid out on the table."
    loss = "Vortex in the Industrial Era: the mission there is lost."
    with Speaker(play=False, pace=True, keep_dir=tmp_path, notice=lambda _: None, stale_seconds=1.0) as speaker:
        speaker.say(busy, Priority.URGENT)
        deadline = time.monotonic() + 30
        while speaker._playing is None and time.monotonic() < deadline:  # the first one is being heard
            time.sleep(0.01)
        speaker.say("Look.", key="move 1")
        speaker.say("Please check: look or mark?", Priority.CHATTER)
        speaker.say(loss, Priority.URGENT)
        assert speaker.wait_idle(60)
        heard = [s.text for s in speaker.history]
        first = speaker.history[0]
    assert first.seconds > 2.0, "the first line must outlast the stale limit for this test to mean anything"
    assert heard == [busy, loss] and speaker.stale == 2


def test_a_speaker_nobody_hears_never_counts_a_line_late(tmp_path: Path) -> None:
    with Speaker(play=False, keep_dir=tmp_path, notice=lambda _: None, stale_seconds=0.0) as speaker:
        for i in range(3):
            speaker.say(f"Line {i}.")
        assert speaker.wait_idle(60)
        assert [s.text for s in speaker.history] == ["Line 0.", "Line 1.", "Line 2."] and speaker.stale == 0


def test_urgent_announcements_jump_the_queue(tmp_path: Path) -> None:
    with Speaker(play=False, keep_dir=tmp_path, notice=lambda _: None) as speaker:
        speaker._ensure_thread()
        with speaker._lock:  # hold the player thread back so all three are queued together
            for i in range(2):
                speaker._queue.put(speech.Announcement(Priority.CHATTER, next(speaker._order), f"Chatter {i}."))
            speaker._busy.set()
        speaker.say("Vortex in the Industrial Era: the mission there is lost.", Priority.URGENT)
        assert speaker.wait_idle(60)
        texts = [s.text for s in speaker.history]
    assert sorted(texts) == sorted(
        ["Chatter 0.", "Chatter 1.", "Vortex in the Industrial Era: the mission there is lost."]
    )
    assert texts.index("Vortex in the Industrial Era: the mission there is lost.") <= 1


def test_without_a_speech_engine_it_says_so_once_and_carries_on(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(speech.sys, "executable", "/bin/false")  # the worker cannot start at all
    notices: list[str] = []
    with Speaker(play=False, keep_dir=tmp_path, notice=notices.append) as speaker:
        speaker.say("First.")
        assert speaker.wait_idle(60)
        assert not speaker.say("Second.")
    assert len(notices) == 1 and "Speech is off" in notices[0]
    assert speaker.status.startswith("speech off")


def test_playing_either_plays_or_reports_no_sound_card_once(tmp_path: Path) -> None:
    notices: list[str] = []
    with Speaker(play=True, keep_dir=tmp_path, notice=notices.append) as speaker:
        speaker.say("Testing one.")
        speaker.say("Testing two.")
        assert speaker.wait_idle(60)
        played = [s.played for s in speaker.history]
    if all(played):
        assert speaker.status == "speech on" and notices == []
    else:
        assert not any(played) and len(notices) == 1 and "text only: no sound output" in notices[0]
        # the page shows the speaker's status: it must not say "speech on" while the terminal says text only
        assert speaker.status.startswith("text only (no sound output"), speaker.status


def test_wav_seconds_of_a_header_only_file_is_zero(tmp_path: Path) -> None:
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"RIFF")
    assert wav_seconds(empty) == 0.0
    assert wav_seconds(tmp_path / "missing.wav") == 0.0


@pytest.mark.parametrize("rate", [120, 260])
def test_rate_setting_changes_the_speed(tmp_path: Path, rate: int) -> None:
    with Speaker(play=False, keep_dir=tmp_path / str(rate), rate=rate, notice=lambda _: None) as speaker:
        speaker.say(SENTENCES[0])
        assert speaker.wait_idle(60)
        seconds = speaker.history[0].seconds
    words = len(SENTENCES[0].split())
    expected = words / (rate / 60)  # espeak's rate is words per minute
    assert 0.5 * expected < seconds < 1.6 * expected, (rate, seconds, expected)


def _announcements_of(game: str, players: int, entries: int = 120) -> list[str]:
    """The first sentence of each kind of event a random game of `game` announces, through a manual session."""
    import random

    from companion_ui.session import new_manual

    session = new_manual(game, players, seed=5, options={})
    rng = random.Random(5)
    for _ in range(entries):
        if session.state.is_over:
            break
        snap = session.snapshot(session.state.current_player)
        session.act(rng.choice([a for g in snap["groups"] for a in g["actions"]]))
    kinds: dict[str, str] = {}
    for entry in session.log:
        if entry.kind == "event":
            kinds.setdefault(entry.text.split()[0] + str(len(entry.text) // 40), entry.text)
    return list(kinds.values())[:8]


@pytest.mark.parametrize(
    ("game", "players"), [("loot-the-loop", 1), ("loop", 3), ("bag-o-loot", 3), ("loot-roll", 2), ("the-loop", 2)]
)
def test_every_games_announcements_synthesise(tmp_path: Path, game: str, players: int) -> None:
    sentences = _announcements_of(game, players)
    assert sentences, f"{game} announced nothing"
    with Speaker(play=False, keep_dir=tmp_path, notice=pytest.fail) as speaker:
        for sentence in sentences:
            speaker.say(sentence)
        assert speaker.wait_idle(120)
        spoken = list(speaker.history)
    assert [s.text for s in spoken] == [" ".join(s.split()) for s in sentences]
    for item in spoken:
        words = len(item.text.split())
        assert item.wav is not None and Path(item.wav).stat().st_size > 5_000, item.text
        assert 0.1 * words < item.seconds < 1.2 * words + 1, (item.text, item.seconds)


def test_say_only_queues_it_never_waits_for_synthesis(tmp_path: Path) -> None:
    with Speaker(play=False, keep_dir=tmp_path, notice=pytest.fail) as speaker:
        said = [speaker.say(f"Announcement number {n} of a busy turn.") for n in range(12)]
        done_when_returned = len(speaker.history)
        assert all(said)
        assert done_when_returned < 12, "say() waited for the synthesis of what it queued"
        assert speaker.wait_idle(120)
        assert len(speaker.history) == 12
