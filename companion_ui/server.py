"""The companion page's server: FastAPI, one WebSocket that pushes the table, plain HTTP for what players enter.

Why this split: the page must update the moment the table changes (WebSocket push), but an entry must be
answered with "taken" or "refused, because ..." (a request with a reply), and HTTP makes that plain. The video
is a multipart JPEG stream, which every browser shows in an <img> without a line of script.

Layout after FastAPI's "bigger applications": `create_app` wires one `Session` (and, with a camera, the
`LiveLoop`) into routes; the page itself is static files under `static/`.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
from fastapi import FastAPI, HTTPException, Query, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from companion_ui.access import BodyLimit, TokenGate
from companion_ui.board_routes import board_router
from companion_ui.board_setup import BoardSetup
from companion_ui.replies import REFUSED, Asked, Taken, refusal
from companion_ui.session import Refused, Session
from companion_ui.table_routes import table_router
from companion_ui.table_setup import TableSetup
from games import GameError

STATIC = Path(__file__).parent / "static"
PUSH_POLL_S = 0.05
MJPEG_REPEAT_S = 1.0  # an unchanged picture is sent again this often (see _mjpeg)


class Entry(Asked):
    text: str = Field(min_length=1, max_length=500)


class HintRequest(Asked):
    viewer: int | None = Field(default=None, ge=1, le=6)  # the seat whose view the page shows (1-based)


class HintReply(Taken):
    player: int
    action: str
    reason: str


class Correction(Asked):
    actions: list[str] = Field(default_factory=list, max_length=20)
    step: int | None = Field(default=None, ge=0)  # answering a "please check" about this earlier step


class SpeechState(Taken):
    speech: dict[str, Any]


NO_VIDEO: dict[int | str, dict[str, Any]] = {404: {"description": "this session has no camera or recording"}}


class SpeechSettings(Asked):
    muted: bool | None = None
    rate: int | None = Field(default=None, ge=80, le=400)
    voice: str | None = Field(default=None, max_length=40)


def create_app(
    session: Session,
    live: Any = None,
    stopping: Callable[[], bool] = lambda: False,
    token: str | None = None,
    table: TableSetup | None = None,
    board: BoardSetup | None = None,
) -> FastAPI:
    """The page's app. `stopping` turns true when the server begins to shut down: the streams that never end by
    themselves (the push socket, the MJPEG video) end then, so Ctrl-C stops the server at once whatever is open.
    With a `token` (served to the network) every route needs it (`access.TokenGate`). With a `table` setup, the
    page can calibrate the table and draw its zones (`table_routes`); with a `board` setup (The LOOP), square the
    board up from a photo and draw its Eras (`board_routes`)."""
    app = FastAPI(title="Tabletop Companion", docs_url=None, redoc_url=None)
    app.add_middleware(BodyLimit)
    if token:
        app.add_middleware(TokenGate, token=token)  # added last, so it runs first: no token, nothing read
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    if table is not None:
        app.include_router(table_router(table, live))
    if board is not None:
        app.include_router(board_router(board, live))

    @app.exception_handler(StarletteHTTPException)
    async def plain_error(_request: Any, err: StarletteHTTPException) -> JSONResponse:
        """Every error in the one shape the page shows and the schema declares (a body that is not JSON at all
        is refused like a move the rules refuse)."""
        return refusal(err.detail, err.status_code, err.headers)

    def attempt(entry: Callable[..., None], *args: Any) -> Any:
        """Carry out what a player entered: `{"ok": true}`, or 400 with the reason it was refused."""
        try:
            entry(*args)
        except GameError as err:
            return refusal(err)
        return {"ok": True}

    def table(seat: int | None) -> dict[str, Any]:
        snap = session.snapshot(seat)
        snap["video"] = live is not None
        return snap

    def page_state(seat: int | None, since: int) -> dict[str, Any]:
        return {**table(seat), "log": session.log_since(since)}

    pushed: dict[tuple[Any, ...], dict[str, Any]] = {}  # (table version, speech status, seat) -> snapshot
    pushed_lock = threading.Lock()

    def pushed_state(version: tuple[int, str], seat: int | None, since: int) -> dict[str, Any]:
        """What the push socket sends: one snapshot per table version and seat, shared by every page open on it
        (eight phones on one table cost one snapshot, not eight, in the frame loop's process), and each page's
        own new log lines."""
        key = (*version, seat)
        with pushed_lock:
            snap = pushed.get(key)
        if snap is None:
            snap = table(seat)
            with pushed_lock:
                if len(pushed) > 32:
                    pushed.clear()
                pushed[key] = snap
        return {**snap, "log": session.log_since(since)}

    @app.get("/", include_in_schema=False)  # the page, not the API
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/state")
    def state(viewer: int | None = Query(default=None, ge=1, le=6)) -> dict[str, Any]:
        return page_state(None if viewer is None else viewer - 1, 0)

    @app.post("/api/act", response_model=Taken, responses=REFUSED)
    def act(entry: Entry) -> Any:
        return attempt(session.act, entry.text)

    @app.post("/api/undo", response_model=Taken, responses=REFUSED)
    def undo() -> Any:
        return attempt(session.undo)

    @app.post("/api/hint", response_model=HintReply, responses=REFUSED)
    def hint(ask: HintRequest) -> Any:
        """A hint for the player whose view is shown, from what that player may see (games/hints.py)."""
        try:
            return {"ok": True, **session.hint(None if ask.viewer is None else ask.viewer - 1)}
        except GameError as err:
            return refusal(err)

    @app.post("/api/correct", response_model=Taken, responses=REFUSED)
    def correct(fix: Correction) -> Any:
        do = getattr(session, "correct" if fix.step is None else "answer", None)
        if do is None:
            return refusal(Refused("Corrections are for what the camera read; in manual mode use undo."))
        return attempt(do, fix.actions) if fix.step is None else attempt(do, fix.step, fix.actions)

    @app.post("/api/speech", response_model=SpeechState, responses=REFUSED)
    def speech(settings: SpeechSettings) -> Any:
        speaker = session.speaker
        if speaker is None:
            return refusal(Refused("Speech is off (started with --no-speech); announcements are text only."))
        if settings.muted is not None:
            speaker.muted = settings.muted
        if settings.rate is not None or settings.voice is not None:
            speaker.configure(settings.voice, settings.rate)
        session.hub.bump()
        return {"ok": True, "speech": session.speech_json()}

    @app.get(
        "/video.jpg",
        response_class=Response,
        responses={200: {"content": {"image/jpeg": {}}, "description": "the table now"}, **NO_VIDEO},
    )
    def frame() -> Response:
        if live is None or not live.jpeg:
            raise HTTPException(404, "no video: this session has no camera or recording")
        return Response(live.jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    @app.get(
        "/video.mjpg",
        response_class=StreamingResponse,
        responses={
            200: {"content": {"multipart/x-mixed-replace": {}}, "description": "the table, as it changes"},
            **NO_VIDEO,
        },
    )
    def video() -> StreamingResponse:
        if live is None:
            raise HTTPException(404, "no video: this session has no camera or recording")
        return StreamingResponse(_mjpeg(live, stopping), media_type="multipart/x-mixed-replace; boundary=frame")

    @app.websocket("/ws")
    async def push(ws: WebSocket, viewer: int | None = None) -> None:
        await ws.accept()
        seat = None if viewer is None or viewer < 1 else viewer - 1

        async def listen() -> None:
            """A page never sends; reading is how a closed tab (or the server closing the socket) is noticed at
            once, not at the next change the table sends."""
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                while (await ws.receive())["type"] != "websocket.disconnect":
                    pass

        async def send() -> None:
            seen: tuple[int, str] | None = None
            last_seq = 0
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                while not stopping():
                    # the speaker's status changes on its own thread (no sound card found at the first word)
                    version = (session.hub.version, session.speech_json()["status"])
                    if version != seen:
                        seen = version
                        snap = await asyncio.to_thread(pushed_state, version, seat, last_seq)
                        if snap["log"]:
                            last_seq = snap["log"][-1]["seq"]
                        await ws.send_json(snap)
                    await asyncio.sleep(PUSH_POLL_S)

        async with anyio.create_task_group() as both:  # whichever ends first (tab closed, or server stopping) ends both

            async def then_stop(part: Callable[[], Any]) -> None:
                await part()
                both.cancel_scope.cancel()

            both.start_soon(then_stop, listen)
            both.start_soon(then_stop, send)

    return app


async def _mjpeg(live: Any, stopping: Callable[[], bool]) -> AsyncIterator[bytes]:
    """Each new picture as a part; an unchanged one again every MJPEG_REPEAT_S. A browser shows a part only once the
    next one begins, so a table that stopped changing (a recording that has ended, a still table) would otherwise
    never show its last picture to a page opened after it stopped: a broken image."""
    seen, sent_at = -1, 0.0
    while not stopping():
        now = time.monotonic()
        if live.jpeg and (live.jpeg_version != seen or now - sent_at >= MJPEG_REPEAT_S):
            seen, sent_at = live.jpeg_version, now
            data = live.jpeg
            yield b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + str(len(data)).encode() + b"\r\n\r\n"
            yield data + b"\r\n"
        await asyncio.sleep(0.05)


def free_port() -> int:
    """A port on this machine that nothing listens on (the benches start their own servers)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def check_port(host: str, port: int) -> None:
    """A port already in use is a clear message before anything starts, not a traceback from the server."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            raise GameError(f"port {port} is not free ({err.strerror}): choose another with --port") from err


def page_urls(host: str, port: int) -> list[str]:
    """Where to open the page: this machine, and (when serving on every interface) its address on the network,
    for a phone at the table."""
    urls = [f"http://localhost:{port}/"]
    if host in ("0.0.0.0", "::"):
        with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent: this only picks the outgoing interface
            urls.append(f"http://{s.getsockname()[0]}:{port}/")
    return urls
