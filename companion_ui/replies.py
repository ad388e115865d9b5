"""The replies every route of the page's API shares: taken, or refused with the reason (the schema says so, and
the API is fuzzed against it)."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict


class Asked(BaseModel):
    """A request body, read strictly: `true` is not the seat number 1 nor "3" the number 3. What the schema does
    not say is refused (422), so a client's mistake is told, not guessed at (and the fuzzing holds the API to it)."""

    model_config = ConfigDict(strict=True)


class Taken(BaseModel):
    ok: bool = True


class Refusal(BaseModel):
    """What a refused entry is answered with: the rules' (or the session's) reason, for the page to show."""

    ok: bool = False
    error: str


REFUSED: dict[int | str, dict[str, Any]] = {400: {"model": Refusal, "description": "refused, with the reason"}}


def refusal(err: Exception | str, status: int = 400, headers: dict[str, str] | None = None) -> JSONResponse:
    """A `Refusal` as the response: `{"ok": false, "error": "..."}` with `status`."""
    return JSONResponse({"ok": False, "error": str(err)}, status_code=status, headers=headers)
