"""Who may open the page. On this machine (the default, 127.0.0.1) anyone at the keyboard may; served to the
network (`--host 0.0.0.0`, for phones at the table) every request must carry the run's random access token, so
nobody else on the network can read or change the game.

The token travels once in the link the terminal shows (as text and as a QR code); the page's first load trades it
for a cookie (HttpOnly, SameSite=Strict), which every later request, the video and the push socket included, then
carries on its own. Tokens are compared in constant time and never logged (uvicorn's access log is off).
"""

from __future__ import annotations

import hmac
import io
import ipaddress
import secrets
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

COOKIE = "tabletop_token"
REFUSED = (
    "This page needs the access link shown in the terminal where tabletop runs "
    "(it ends with ?token=...): open that link, or scan its QR code."
)


def is_local(host: str) -> bool:
    """Whether serving on `host` reaches this machine only (no token is needed then)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    return secrets.token_urlsafe(18)


def with_token(url: str, token: str | None) -> str:
    return f"{url}?token={token}" if token else url


def terminal_qr(url: str) -> str:
    """The link as a QR code drawn in the terminal (half-height blocks), for a phone's camera."""
    import segno

    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue()


class TokenGate:
    """ASGI middleware: a request without the token (in its query or its cookie) is refused, HTTP with 401 and
    the reason, a WebSocket closed with 1008 before it opens."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token

    def _presented(self, scope: dict[str, Any]) -> tuple[bool, bool]:
        """(allowed, by the query): the query's token, else the cookie's."""
        query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [])
        if query:
            return hmac.compare_digest(query[0].encode(), self.token.encode()), True
        cookies = SimpleCookie()
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                try:
                    cookies.load(value.decode("latin-1"))
                except Exception:  # a malformed cookie header is no token
                    return False, False
        sent = cookies.get(COOKIE)
        return sent is not None and hmac.compare_digest(sent.value.encode(), self.token.encode()), False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        allowed, by_query = self._presented(scope)
        if not allowed:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": "access token needed"})
                return
            body = REFUSED.encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        if not by_query or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cookie = f"{COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode()

        async def send_with_cookie(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


MAX_BODY = 64 * 1024  # bytes: the largest entry the page sends is well under a kilobyte
MAX_PHOTO = 12 * 1024 * 1024  # bytes: a photo sent from the page (a phone's JPEG of a board is 2-6 MB)
UPLOADS = {"/api/board/photo": MAX_PHOTO}  # the routes that take a picture, and their own limit


class BodyLimit:
    """ASGI middleware: a request body over MAX_BODY is refused with 413 before the app sees it (by its
    Content-Length, or, sent in chunks, once it has passed the limit), so no request can make the server hold an
    upload of any size in memory; nothing reaches the game. A body within the limit is read here and handed on. The
    routes in `uploads` (a picture sent from the page) have their own, larger limit."""

    def __init__(self, app: Any, limit: int = MAX_BODY, uploads: dict[str, int] | None = None) -> None:
        self.app = app
        self.limit = limit
        self.uploads = UPLOADS if uploads is None else uploads

    async def _refuse(self, send: Any, size: str, limit: int) -> None:
        body = f'{{"ok": false, "error": "request too large ({size}; at most {limit} bytes)"}}'.encode()
        await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD"):
            await self.app(scope, receive, send)  # (the video stream must not be read ahead)
            return
        limit = self.uploads.get(scope.get("path", ""), self.limit)
        declared = next((v for k, v in scope.get("headers", []) if k == b"content-length"), None)
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await self._refuse(send, f"{declared.decode('latin-1')[:20]} bytes", limit)
            return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > limit:
                await self._refuse(send, f"more than {limit} bytes sent in chunks", limit)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        handed = False

        async def replay() -> dict[str, Any]:
            nonlocal handed
            if handed:
                return await receive()  # after the body: whatever the client does next (a disconnect)
            handed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)
