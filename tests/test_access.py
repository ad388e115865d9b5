"""The page on the table's network: on this machine it is open, served to the network every route needs the run's
access token (query once, then a cookie), the push socket included, and the token is never logged (issue 19)."""

from __future__ import annotations

import signal

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from companion_ui.access import COOKIE, is_local, terminal_qr, with_token
from companion_ui.server import create_app
from companion_ui.session import new_manual
from tests.servers import launch, when_up

TOKEN = "s3cret-token-for-tests"


def _client(token: str | None) -> TestClient:
    return TestClient(create_app(new_manual("loop", 3, seed=1, options={}), token=token))


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.1.1", "localhost", "::1"])
def test_this_machine_is_local(host: str) -> None:
    assert is_local(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "table.local"])
def test_anything_else_is_the_network(host: str) -> None:
    assert not is_local(host)


def test_on_this_machine_every_route_is_open() -> None:
    client = _client(None)
    assert client.get("/").status_code == 200 and client.get("/api/state").status_code == 200
    with client.websocket_connect("/ws") as ws:
        assert ws.receive_json()["game"] == "loop"


@pytest.mark.parametrize(
    "path", ["/", "/api/state", "/static/app.js", "/video.mjpg", "/video.jpg", "/nothing-here", "/static/../run.py"]
)
def test_on_the_network_a_request_without_the_token_is_refused_with_the_reason(path: str) -> None:
    client = _client(TOKEN)
    for tried in (path, f"{path}?token=wrong", f"{path}?token="):
        refused = client.get(tried)
        assert refused.status_code == 401, tried
        assert "access link shown in the terminal" in refused.text and TOKEN not in refused.text
    client.cookies.set(COOKIE, "wrong")
    assert client.get(path).status_code == 401


def test_entries_without_the_token_change_nothing() -> None:
    client = _client(TOKEN)
    before = client.get("/api/state", params={"token": TOKEN}).json()
    client.cookies.clear()
    assert client.post("/api/act", json={"text": "pass"}).status_code == 401
    assert client.post("/api/undo").status_code == 401
    assert client.get("/api/state", params={"token": TOKEN}).json()["moves"] == before["moves"]


def test_the_link_trades_its_token_for_a_cookie_that_opens_everything_after() -> None:
    client = _client(TOKEN)
    first = client.get("/", params={"token": TOKEN})
    assert first.status_code == 200
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}={TOKEN};") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert client.get("/api/state").status_code == 200  # the cookie alone
    assert client.get("/static/app.js").status_code == 200
    with client.websocket_connect("/ws") as ws:
        assert ws.receive_json()["game"] == "loop"


def test_the_push_socket_without_the_token_is_closed_before_it_opens() -> None:
    client = _client(TOKEN)
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect("/ws") as ws:
        ws.receive_json()
    assert closed.value.code == 1008
    with client.websocket_connect(f"/ws?token={TOKEN}") as ws:
        assert ws.receive_json()["game"] == "loop"


def test_the_qr_code_is_drawn_and_the_link_carries_the_token() -> None:
    url = with_token("http://192.168.1.20:8000/", TOKEN)
    assert url == f"http://192.168.1.20:8000/?token={TOKEN}"
    assert with_token("http://localhost:8000/", None) == "http://localhost:8000/"
    drawn = terminal_qr(url).splitlines()
    assert len(drawn) > 10 and len({len(line) for line in drawn}) == 1  # a square block of text


def test_serving_the_network_shows_a_tokened_link_and_never_logs_the_token() -> None:
    proc, port = launch(["run", "--manual", "--game", "loop", "--no-speech", "--host", "0.0.0.0", "--duration", "30"])
    try:
        line = ""
        while "?token=" not in line:
            line = proc.stdout.readline()
            assert line, "the server said nothing about its link"
        url = line.split("open ", 1)[1].strip()
        token = url.split("?token=", 1)[1]
        assert len(token) >= 20
        base = f"http://127.0.0.1:{port}"
        assert when_up(base + "/api/state").status_code == 401
        assert httpx.get(f"{base}/api/state?token={token}", timeout=10).status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert token not in err, "the token was written to the server's log"
    # after the first link: the network link beside it (where this machine has a network address), then never again
    assert all(line.strip().startswith("open http") for line in out.splitlines() if token in line), out


def test_on_this_machine_by_default_there_is_no_token() -> None:
    proc, port = launch(["run", "--manual", "--game", "loop", "--no-speech", "--duration", "30"])
    try:
        first = [proc.stdout.readline() for _ in range(2)]
        assert first[1].strip() == f"open http://localhost:{port}/", first
        assert when_up(f"http://127.0.0.1:{port}/api/state").status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
