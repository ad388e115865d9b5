"""The replies every route of the page's API shares: taken, or refused with the reason (the schema says so, and
the API is fuzzed against it)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Taken(BaseModel):
    ok: bool = True


class Refusal(BaseModel):
    """What a refused entry is answered with: the rules' (or the session's) reason, for the page to show."""

    ok: bool = False
    error: str


REFUSED: dict[int | str, dict[str, Any]] = {400: {"model": Refusal, "description": "refused, with the reason"}}
