"""Real speech: pyttsx3 driving espeak-ng in the worker process, WAV files checked for plausible sound."""

from __future__ import annotations

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
    assert all(played) or (not any(played) and len(notices) == 1 and "No sound output" in notices[0])


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
