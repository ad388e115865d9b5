"""The page's table setup: routes for `table_setup.TableSetup` (FastAPI's "bigger applications": one router)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import cv2
from fastapi import APIRouter, HTTPException
from fastapi.responses import Response
from pydantic import Field

from companion_ui.replies import REFUSED, Asked, Taken, refusal
from companion_ui.table_setup import SetupError, TableSetup

NO_PICTURE: dict[int | str, dict[str, Any]] = {404: {"description": "no camera picture yet, or the table is not set"}}


class Points(Asked):
    # TL, TR, BR, BL in camera pixels
    points: list[Annotated[list[float], Field(min_length=2, max_length=2)]] = Field(min_length=4, max_length=4)
    width_mm: float = Field(gt=0, le=10_000)
    height_mm: float = Field(gt=0, le=10_000)


class ZoneBox(Asked):
    name: str = Field(min_length=1, max_length=40)
    box_mm: list[float] = Field(min_length=4, max_length=4)


class Zones(Asked):
    zones: list[ZoneBox] = Field(default_factory=list, max_length=40)


def table_router(setup: TableSetup, live: Any) -> APIRouter:
    """`live` is the frame loop (its newest camera picture is `live.image`), or None: no picture to click on."""
    router = APIRouter(prefix="/api/table")

    def picture() -> Any:
        image = getattr(live, "image", None)
        if image is None:
            raise HTTPException(404, "no camera picture yet: the table is set up on what the camera sees")
        return image

    @router.get("")
    def status() -> dict[str, Any]:
        image = getattr(live, "image", None)
        return {**setup.status(), "camera_size": [image.shape[1], image.shape[0]] if image is not None else None}

    @router.post("/points", response_model=Taken, responses={**REFUSED, **NO_PICTURE})
    def points(body: Points) -> Any:
        image = picture()
        return attempt(setup.set_points, body.points, body.width_mm, body.height_mm, (image.shape[1], image.shape[0]))

    @router.post("/zones", response_model=Taken, responses=REFUSED)
    def zones(body: Zones) -> Any:
        return attempt(setup.set_zones, [z.model_dump() for z in body.zones])

    @router.get(
        "/camera.jpg",
        response_class=Response,
        responses={200: {"content": {"image/jpeg": {}}, "description": "the camera's picture, as read"}, **NO_PICTURE},
    )
    def camera() -> Response:
        """The camera's own picture at its own size, with nothing drawn on it: what the four points are clicked on."""
        return jpeg(picture())

    @router.get(
        "/view.jpg",
        response_class=Response,
        responses={200: {"content": {"image/jpeg": {}}, "description": "the table from above"}, **NO_PICTURE},
    )
    def view(plain: bool = False) -> Response:
        """The table from straight above; `plain`: without the saved zones (the page draws the ones being edited)."""
        made = setup.top_down(picture(), zones=not plain)
        if made is None:
            raise HTTPException(404, "the table is not set: click four corners of something of known size first")
        return jpeg(made[0])

    return router


def attempt(change: Callable[..., Any], *args: Any) -> Any:
    """Taken, or refused with the SetupError's reason (nothing changed then)."""
    try:
        change(*args)
    except SetupError as err:
        return refusal(err)
    return {"ok": True}


def jpeg(image: Any) -> Response:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    if not ok:
        raise HTTPException(500, "the picture could not be encoded")
    return Response(data.tobytes(), media_type="image/jpeg", headers={"Cache-Control": "no-store"})
