"""The page's board setup (The LOOP): routes for `board_setup.BoardSetup` (one router, as `table_routes`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from pydantic import Field

from companion_ui.board_setup import BoardSetup
from companion_ui.replies import REFUSED, Asked, Taken, refusal
from companion_ui.table_routes import attempt, jpeg

Point = Annotated[list[float], Field(min_length=2, max_length=2)]
NO_PICTURE: dict[int | str, dict[str, Any]] = {404: {"description": "no photo yet, or the board is not squared up"}}


class Corners(Asked):
    points: list[Point] = Field(min_length=4, max_length=4)  # TL, TR, BR, BL on the photo, its pixels


class Regions(Asked):
    eras: dict[str, list[Point]] = Field(max_length=7)  # Era code -> polygon, fractions of the squared picture
    missions: dict[str, list[Point]] = Field(default_factory=dict, max_length=7)  # Era code -> the spot's corners


def board_router(setup: BoardSetup, live: Any) -> APIRouter:
    """`live` is the frame loop (its newest camera picture is `live.image`), or None: photos come from the page."""
    router = APIRouter(prefix="/api/board")

    @router.get("")
    def status() -> dict[str, Any]:
        return {**setup.status(), "camera": getattr(live, "image", None) is not None}

    @router.post("/photo", response_model=Taken, responses=REFUSED)
    async def photo(request: Request) -> Any:
        """A photo of the board, sent as the file's bytes (any picture format OpenCV reads)."""
        return attempt(setup.set_photo, await request.body())

    @router.post("/camera", response_model=Taken, responses=REFUSED)
    def camera() -> Any:
        """The camera's newest picture as the photo."""
        image = getattr(live, "image", None)
        if image is None:
            return refusal("no camera picture: send a photo of the board instead")
        return attempt(setup.set_photo, image.copy())

    @router.post("/corners", response_model=Taken, responses=REFUSED)
    def corners(body: Corners) -> Any:
        return attempt(setup.set_corners, body.points)

    @router.post("/regions", response_model=Taken, responses=REFUSED)
    def regions(body: Regions) -> Any:
        return attempt(setup.save, body.eras, body.missions)

    def shown(image: Any, what: str) -> Response:
        if image is None:
            raise HTTPException(404, what)
        return jpeg(image)

    @router.get("/photo.jpg", response_class=Response, responses=NO_PICTURE)
    def photo_jpg() -> Response:
        """The photo the corners are clicked on, at its own size."""
        return shown(setup.photo, "no photo yet: take the camera's picture or send one")

    @router.get("/picture.jpg", response_class=Response, responses=NO_PICTURE)
    def picture_jpg() -> Response:
        """The board squared up: what the regions are clicked on."""
        return shown(setup.picture, "the board is not squared up yet: click its four corners on the photo")

    return router
