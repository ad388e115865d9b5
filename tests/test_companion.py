"""The companion's sessions and server: manual play of every game through the same calls the page makes, refusals
that change nothing, undo around Dr. Foo's own turns, saving, and the HTTP/WebSocket surface (FastAPI's
TestClient runs the real app in-process)."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from companion_ui.server import create_app
from companion_ui.session import ManualSession, Refused, group_actions, new_manual

PLAYERS = {"loot-the-loop": 1, "loop": 3, "bag-o-loot": 3, "loot-roll": 2, "the-loop": 2}
ENDS = {"the-loop": 0.3}  # chance of ending an agents' turn when 'end' is offered (random edits otherwise go on)


def page_actions(session: ManualSession) -> list[str]:
    """Every action the page offers now, as a player at the acting seat sees it."""
    snap = session.snapshot(session.state.current_player)
    return [a for g in snap["groups"] for a in g["actions"]]


def play_through(session: ManualSession, rng: random.Random, cap: int = 6000) -> int:
    entries = 0
    while not session.state.is_over and entries < cap:
        offered = page_actions(session)
        assert offered, f"{session.game}: nothing offered while the game goes on"
        ending = "end" in offered and rng.random() < ENDS.get(session.game, 0.0)
        session.act("end" if ending else rng.choice(offered))
        entries += 1
    return entries


@pytest.mark.parametrize("game", list(PLAYERS))
def test_a_whole_game_is_played_through_the_page_calls(game, tmp_path):
    save = tmp_path / "game.json"
    session = new_manual(game, PLAYERS[game], seed=4, options={}, save=save)
    entries = play_through(session, random.Random(4))
    assert session.state.is_over, f"{game} did not finish in {entries} entries"
    snap = session.snapshot()
    assert snap["over"] and snap["groups"] == []
    assert [r["score"] for r in snap["scores"]] == session.state.scores()
    assert any(e.text.startswith("Game over") for e in session.log), "the ending was not announced"
    session.journal.close()
    saved = new_manual(game, None, 0, {}, resume=save).state
    assert saved == session.state, "the journal does not rebuild the game as it ended"


def test_a_refused_entry_says_why_and_changes_nothing():
    session = new_manual("loot-the-loop", 1, seed=2, options={})
    before = session.state.to_dict()
    with pytest.raises(Refused, match="Not an action"):
        session.act("fly away")
    illegal = "explore 9" if "explore 9" not in page_actions(session) else "return AS"
    with pytest.raises(Refused, match="Not taken"):
        session.act(illegal)
    assert session.state.to_dict() == before
    assert not session.log


def test_dr_foo_plays_his_own_turn_and_undo_goes_back_past_it():
    session = new_manual("the-loop", 2, seed=1, options={})
    assert session.state.phase == "landing", "Dr. Foo's first turn did not run by itself"
    assert any("Dr. Foo" in e.text for e in session.log)
    prompt = session.snapshot()["prompts"]
    assert prompt and prompt[0]["kind"] == "landing" and len(prompt[0]["eras"]) == 3
    session.act(f"rifts 0 {prompt[0]['drop']} 0")
    assert session.state.phase == "agents"
    session.act("end")  # the agents' turn is over: Dr. Foo's next turn runs by itself, up to the drop
    assert session.state.phase == "landing"
    session.undo()  # back past Dr. Foo's own turn, to the agents' turn
    assert session.state.phase == "agents"
    session.undo()
    assert session.state.phase == "landing"
    before = session.state.to_dict()
    with pytest.raises(Refused, match="Nothing to undo"):
        session.undo()  # only Dr. Foo's first turn is left: it is not the players' to take back
    assert session.state.to_dict() == before


def test_a_landing_that_does_not_add_up_is_refused():
    session = new_manual("the-loop", 2, seed=1, options={})
    drop = session.state.drop
    with pytest.raises(Refused):
        session.act(f"rifts {drop} {drop} {drop}")
    assert session.state.phase == "landing"


def test_hidden_cards_are_offered_only_to_their_seat_but_rolls_to_anyone():
    session = new_manual("loop", 3, seed=0, options={})
    actor = session.state.current_player
    assert session.snapshot(None)["groups"] == []
    assert "view as" in session.snapshot(None)["waiting_for"]
    assert session.snapshot(actor)["groups"]
    groups = group_actions([(1, f"roll 2 {v}") for v in range(1, 21)] + [(1, "roll auto")])
    assert len(groups) == 1 and groups[0]["menu"] is False and len(groups[0]["actions"]) == 21


def test_resume_carries_on_the_saved_game(tmp_path):
    save = tmp_path / "g.json"
    first = new_manual("bag-o-loot", 3, seed=9, options={}, save=save)
    play_through(first, random.Random(1), cap=5)
    again = new_manual("bag-o-loot", None, seed=0, options={}, resume=save)
    assert again.state == first.state
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(Exception, match="cannot read the saved game"):
        new_manual("bag-o-loot", None, 0, {}, resume=bad)


def test_server_entries_replies_and_push():
    session = new_manual("the-loop", 2, seed=3, options={})
    client = TestClient(create_app(session))
    page = client.get("/")
    assert page.status_code == 200 and "app.js" in page.text
    assert client.get("/static/app.js").status_code == 200
    state = client.get("/api/state").json()
    assert state["mode"] == "manual" and state["game"] == "the-loop" and state["video"] is False
    refused = client.post("/api/act", json={"text": "teleport everywhere"})
    assert refused.status_code == 400 and "Not an action" in refused.json()["error"]
    assert client.post("/api/act", json={"text": ""}).status_code == 422
    assert client.get("/video.mjpg").status_code == 404
    with client.websocket_connect("/ws") as ws:
        first = ws.receive_json()
        assert first["moves"] == session.state.history_length
        assert client.post("/api/act", json={"text": "rifts auto"}).json() == {"ok": True}
        assert client.post("/api/act", json={"text": "end"}).json() == {"ok": True}
        last = session.log[-1].seq
        pushed, seen = first, list(first["log"])
        while not seen or seen[-1]["seq"] < last:  # pushes may coalesce; together they carry every new line
            pushed = ws.receive_json()
            seen += pushed["log"]
        assert pushed["moves"] == session.state.history_length > first["moves"]
        assert [e["seq"] for e in seen] == sorted({e["seq"] for e in seen}), "a log line was pushed twice"
        assert any("Dr. Foo" in e["text"] for e in seen if e["seq"] > first["log"][-1]["seq"])
    assert client.post("/api/undo").json()["ok"] is True
    assert client.post("/api/correct", json={"actions": ["look"]}).status_code == 400
    assert client.post("/api/speech", json={"muted": True}).status_code == 400  # no speaker in this session
    assert client.get("/api/state", params={"viewer": 9}).status_code == 422


def test_the_page_is_told_when_speech_turns_text_only(tmp_path):
    """The speaker finds there is no sound card only when it first plays, on its own thread: the page must learn
    it then (it once kept saying "speech on" while the terminal said text only)."""
    from companion_ui.speech import Speaker

    with Speaker(play=False, keep_dir=tmp_path, notice=lambda _: None) as speaker:
        session = new_manual("loop", 3, seed=1, options={}, speaker=speaker)
        client = TestClient(create_app(session))
        with client.websocket_connect("/ws") as ws:
            assert ws.receive_json()["speech"]["status"] == "speech on"
            speaker._text_only("no sound output: no sound card found")  # what a failed first play does
            said = [ws.receive_json()["speech"]["status"] for _ in range(1)]
            while said[-1] == "speech on" and len(said) < 5:  # a push already on its way may come first
                said.append(ws.receive_json()["speech"]["status"])
            assert said[-1] == "text only (no sound output: no sound card found)", said


def test_unknown_game_and_busy_port_are_clear_errors():
    import socket

    from companion_ui.cli import main

    assert main(["run", "--game", "chess", "--manual", "--no-speech", "--duration", "1"]) == 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["run", "--game", "loop", "--manual", "--no-speech", "--host", "127.0.0.1",
                     "--port", str(port), "--duration", "1"]) == 2  # fmt: skip


def test_a_missing_or_damaged_enrolled_deck_is_refused_before_the_camera_starts(tmp_path, capsys):
    from companion_ui.cli import main

    video = Path(__file__).resolve().parents[1] / "companion_ui" / "demo" / "loot-the-loop.mp4"
    args = ["run", "--video", str(video), "--no-speech", "--duration", "1", "--deck"]
    assert main([*args, str(tmp_path / "nope.deck.npz")]) == 2
    assert "no such deck head" in capsys.readouterr().err
    (tmp_path / "junk.deck.npz").write_bytes(b"not a deck head")
    assert main([*args, str(tmp_path / "junk.deck.npz")]) == 2
    assert "junk.deck.npz: not a deck head file" in capsys.readouterr().err


def test_two_moves_in_the_same_words_are_both_spoken_but_a_question_is_not_repeated(tmp_path):
    from companion_ui.session import TrackedSession
    from companion_ui.speech import Speaker
    from tracker.decoder import TrackerEvent

    with Speaker(play=False, keep_dir=tmp_path, notice=lambda _: None) as speaker:
        session = TrackedSession(speaker)
        for step in (4, 5):  # two looks in a row, seconds apart
            session.on_events([TrackerEvent("action", float(step), 30 * step, "look", "look", 0.95, step)])
        ask = TrackerEvent("check", 6.0, 180, "Please check: was it explore 2 or explore 9?", step=6)
        session.on_events([ask])
        session.on_events([ask])
        assert speaker.wait_idle(60)
        assert [s.text for s in speaker.history] == ["Look.", "Look.", ask.text]


def test_the_end_of_a_tracked_game_is_announced_once():
    from companion_ui.session import TrackedSession
    from tests.test_tracker import _play
    from tests.tracker_tables import snapshot
    from tracker.decoder import TrackerEvent

    cores, _ = _play(2, 300)
    assert cores[-1]["result"], "seed 2 should end within 300 moves"
    session = TrackedSession()
    for k, core in enumerate(cores):
        session.on_events(session.decoder.update(snapshot(core, cores[k - 1] if k else None, 30 * k)))
    session.on_events(session.decoder.finish(30.0 * len(cores), 30 * len(cores)))
    session.on_events([TrackerEvent("check", 999.0, 29_970, "Please check: was it look or mark?", step=3)])
    endings = [e.text for e in session.log if e.text.startswith("Game over")]
    assert len(endings) == 1 and cores[-1]["result"] in endings[0]


def test_the_moves_list_never_silently_disagrees_with_what_was_announced():
    """Issue 19: "Explore 8." was heard while "Moves so far" listed explore 7 for the same step."""
    from companion_ui.session import moves_text

    known = {
        "steps": [["look"], ["explore 7"], ["look", "mark"]],
        "said_steps": [["look"], ["explore 8"], ["look", "mark"]],
        "unsure_steps": [1],
    }
    assert moves_text(known) == "look, explore 7 (announced as explore 8) ?, look + mark"
    assert moves_text({"actions": ["look"]}) == "look"  # a decoder that keeps no record of what it said
    assert moves_text({}) == ""
    assert moves_text({"steps": [[], ["look"], []], "said_steps": [None, ["look"], ["mark"]]}) == (
        "look, no move (announced as mark)"
    )


def test_the_demo_recordings_moves_list_names_every_step_read_otherwise_than_announced():
    import cv2

    from companion_ui.live import Frame, FrameSource, LiveLoop, demo_clip
    from companion_ui.session import TrackedSession

    session = TrackedSession()
    live = LiveLoop(FrameSource(video=demo_clip(), realtime=False), session)
    capture = cv2.VideoCapture(str(demo_clip()))
    index = 0
    while (read := capture.read())[0]:  # every frame, as the camera gave them (the threads would drop some)
        live.step(Frame(index, read[1], index / 30.0))
        index += 1
    capture.release()
    session.on_events(session.decoder.finish(index / 30.0, index))
    known = session.decoder_state()
    line = next(i for i in session.snapshot()["panel"]["sections"][0]["items"] if i.startswith("Moves so far"))
    changed = [
        k for k, (now, said) in enumerate(zip(known["steps"], known["said_steps"], strict=True)) if said and now != said
    ]
    for k in changed:
        assert f"(announced as {' + '.join(known['said_steps'][k])})" in line
    assert line.count("announced as") == len(changed)
    assert line.count(" ?") == len(known["unsure_steps"])


def test_the_companion_bench_times_a_move_by_its_own_line_and_never_by_the_same_words_heard_later():
    from companion_ui.bench import median_or_never, told_moves
    from companion_ui.speech import Priority, Spoken
    from tracker.decoder import TrackerEvent

    truth = [{"action": "look", "end_frame": 10}, {"action": "look", "end_frame": 40},
             {"action": "mark", "end_frame": 70}]  # fmt: skip
    arrival = {10: 1.0, 40: 5.0, 70: 9.0}
    decoded = [
        (1.3, TrackerEvent("action", 0.7, 20, "look", "look", 0.6, 0), "log 1"),
        (5.3, TrackerEvent("action", 1.7, 50, "look", "look", 0.6, 1), "log 2"),
        (9.2, TrackerEvent("action", 2.7, 80, "look", "look", 0.6, 2), "log 3"),
        (9.8, TrackerEvent("revised", 3.0, 90, "Correction: mark rather than look.", "mark", 0.95, 2), "log 4"),
    ]

    def heard(key: str, started: float) -> Spoken:
        return Spoken("Look.", Priority.NORMAL, None, 0.5, False, False, started - 0.1, started, key)

    spoken = [heard("log 2", 5.4), heard("log 3", 9.3), heard("log 4", 10.0)]  # "log 1" was dropped unheard
    moves = told_moves(decoded, spoken, truth, arrival)
    assert [(m["move"], m["latency_s"], m["tracker_s"]) for m in moves] == [
        (0, None, 0.3),
        (1, 0.4, 0.3),
        (2, 1.0, 0.8),
    ]
    assert median_or_never([m["latency_s"] for m in moves]) == 1.0, "the unheard move counts as later than any"
    assert median_or_never([0.2, None]) is None and median_or_never([]) is None


@pytest.mark.slow
def test_the_companion_bench_times_each_move_from_the_table_to_its_sound():
    """`tabletop bench companion --hours 0`: the demo recording in real time, each move told right timed from the
    frame where it settled to its sound (paced where there is no sound card)."""
    from companion_ui.bench import format_summary, run_bench

    result = run_bench(hours=0, progress=False)
    live = result["live"]
    assert live["moves_true"] == 14 and live["moves_matched"] >= 5
    heard = [m for m in live["moves"] if m["latency_s"] is not None]  # a line dropped as stale is never heard
    assert live["moves_told_unheard"] == len(live["moves"]) - len(heard) and len(heard) == live["moves_matched"]
    for move in heard:
        assert 0 < move["tracker_s"] <= move["latency_s"] + 1e-3, move  # the sound comes after the handover
    median = statistics.median(m["latency_s"] for m in heard)
    assert live["latency_median_s"] == pytest.approx(median, abs=2e-3)
    assert live["moves_told_within_bar"] == sum(1 for m in heard if m["latency_s"] <= 0.5)
    assert live["stale"] >= 0 and live["superseded"] >= 0
    assert "median" in format_summary(result) and result["memory"] == {}


def test_a_question_is_answered_for_its_own_step_and_a_wrong_answer_is_refused():
    from companion_ui.session import TrackedSession
    from tests.test_tracker import _play
    from tests.tracker_tables import snapshot

    cores, _ = _play(3, 6)
    session = TrackedSession()
    for k, core in enumerate(cores):
        session.on_events(session.decoder.update(snapshot(core, cores[k - 1] if k else None, 30 * k)))
    told = session.decoder.state()["steps"]
    client = TestClient(create_app(session))
    reply = client.post("/api/correct", json={"actions": ["explore 13"], "step": 1})
    assert reply.status_code == 400 and "does not fit" in reply.json()["error"]
    reply = client.post("/api/correct", json={"actions": told[1], "step": 1})  # the reading it already holds
    assert reply.status_code == 200 and session.decoder.state()["steps"] == told
    assert session.log[-1].text.startswith("Answered:")
    assert client.post("/api/correct", json={"actions": [], "step": -1}).status_code == 422


def test_a_question_stays_on_the_page_until_its_step_is_sure_or_the_table_moves_on():
    from companion_ui.session import TrackedSession

    session = TrackedSession()
    session.announce("Please check: explore 8 or 7?", "check", candidates=("explore 8", "explore 7"), step=3)
    session.announce("Look.", "action")
    assert session._open_question({"unsure_steps": [3]})["step"] == 3, "a later move does not hide it"
    assert session._open_question({"unsure_steps": []}) is None, "answered or settled"
    session.announce("Please check: the table looks like 'explore 5', which the rules do not allow.", "check")
    assert session._open_question({"unsure_steps": []})["step"] == -1
    session.announce("Mark.", "action")
    assert session._open_question({"unsure_steps": []}) is None
