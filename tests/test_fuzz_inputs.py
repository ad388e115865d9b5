"""Bad input is refused, never a crash (issue 19): hypothesis throws arbitrary text at every game's action parser and
at the page's entry, and arbitrary bytes at the journal reader. Each must refuse with its own error type, and a
refused entry must leave the game exactly as it was."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion_ui.journal import JournalError, read_entries
from companion_ui.session import Refused, new_manual
from games import BadAction, registry
from tests.test_companion import PLAYERS

# text that looks like actions (words, numbers, card codes) as well as anything at all
WORDS = st.sampled_from(
    ["explore", "look", "mark", "return", "order", "play", "pass", "bid", "roll", "rifts", "end", "clone", "to",
     "AS", "10H", "JOKER", "daw", "ren2", "A07", "-1", "0", "99", "1e9", "", "\x00", "é", ";"]
)  # fmt: skip
ACTION_TEXT = st.one_of(
    st.lists(WORDS, max_size=6).map(" ".join),
    st.text(alphabet=string.printable, max_size=40),
    st.text(max_size=20),
)


@pytest.mark.parametrize("game", list(PLAYERS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=ACTION_TEXT)
def test_any_text_is_an_action_or_a_bad_action_never_a_crash(game: str, text: str) -> None:
    state_type = type(registry.create(game, PLAYERS[game], 0))
    try:
        action = state_type.parse_action(text)
    except BadAction:
        return
    assert str(state_type.parse_action(str(action))) == str(action), "an action's text must parse back to itself"


@pytest.mark.parametrize("game", list(PLAYERS))
@settings(max_examples=60, deadline=None)
@given(texts=st.lists(ACTION_TEXT, min_size=1, max_size=5))
def test_what_the_page_refuses_changes_nothing(game: str, texts: list[str]) -> None:
    session = new_manual(game, PLAYERS[game], seed=1, options={})
    for text in texts:
        before = session.state.to_dict()
        try:
            session.act(text)
        except Refused:
            assert session.state.to_dict() == before, text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_any_bytes_are_a_journal_or_a_journal_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    try:
        entries, size = read_entries(path)
    except JournalError as err:
        assert str(path) in str(err)
        return
    assert 0 < size <= len(data) and entries[0]["format"] == "tabletop-journal"


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)
BODIES = st.one_of(
    st.fixed_dictionaries({"text": ACTION_TEXT}),
    st.fixed_dictionaries({"actions": st.lists(ACTION_TEXT, max_size=3)}, optional={"step": JSON_VALUES}),
    st.dictionaries(st.sampled_from(["text", "actions", "step", "muted", "rate", "voice", "x"]), JSON_VALUES),
    JSON_VALUES,
)


@settings(max_examples=150, deadline=None)
@given(path=st.sampled_from(["/api/act", "/api/correct", "/api/speech", "/api/undo"]), body=BODIES)
def test_any_request_body_is_answered_never_a_server_error_and_a_refusal_changes_nothing(path: str, body) -> None:
    from fastapi.testclient import TestClient

    from companion_ui.server import create_app

    session = new_manual("loot-roll", 2, seed=1, options={})
    client = TestClient(create_app(session))
    before = session.state.to_dict()
    answer = client.post(path, json=body)
    assert answer.status_code in (200, 400, 422), (path, body, answer.status_code, answer.text[:200])
    if answer.status_code != 200:
        assert session.state.to_dict() == before
        assert answer.json()  # a reason, as JSON


def test_an_oversize_request_is_refused_before_the_game_sees_it() -> None:
    from fastapi.testclient import TestClient

    from companion_ui.access import MAX_BODY
    from companion_ui.server import create_app

    session = new_manual("loot-the-loop", None, seed=1, options={})
    client = TestClient(create_app(session))
    before = session.state.to_dict()
    big = {"text": "look", "pad": "x" * (MAX_BODY + 10)}
    declared = client.post("/api/act", json=big)
    assert declared.status_code == 413 and "too large" in declared.json()["error"]

    def chunks():  # no Content-Length: the body arrives in pieces past the limit
        for _ in range(MAX_BODY // 1000 + 5):
            yield b" " * 1000

    chunked = client.post("/api/act", content=chunks(), headers={"content-type": "application/json"})
    assert chunked.status_code == 413 and "chunks" in chunked.json()["error"]
    assert session.state.to_dict() == before
    assert client.post("/api/act", json={"text": "look"}).status_code in (200, 400)  # a normal entry still served


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/static/..%2f..%2f..%2fpyproject.toml",
        "/static/%2e%2e%2f%2e%2e%2fcompanion_ui/server.py",
        "/..%2f..%2fetc/passwd",
        "/static//etc/passwd",
    ],
)
def test_no_route_serves_a_file_outside_the_pages_own(path: str) -> None:
    from fastapi.testclient import TestClient

    from companion_ui.server import create_app

    client = TestClient(create_app(new_manual("loot-the-loop", None, seed=1, options={})))
    answer = client.get(path)
    assert answer.status_code in (400, 404), (path, answer.status_code)
    assert b"root:" not in answer.content and b"[project]" not in answer.content and b"create_app" not in answer.content
