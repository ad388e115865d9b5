"""`tabletop mat` and `tabletop calibrate`: where the table lies, for the camera (issue 20).

A printed mat gives the table plane from its markers in every frame; without one, `calibrate` writes the plane once
as a calibration file (`vision.recognise.calibration`) from the cards in a picture (their known size and shape) or
from four points of the table given in the picture and in millimetres. `detect --calibration` (and `--layout` for
zones drawn by hand) reads it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from companion_ui.cli_base import CliError


def cmd_mat(args: argparse.Namespace) -> int:
    from vision.table.mat import MatError, mat_layout, write_mat

    try:
        picture, meta = write_mat(mat_layout(args.game, args.paper, args.sheets), Path(args.out), args.dpi)
    except MatError as err:
        raise CliError(str(err)) from err
    print(f"wrote {picture} (print at 100%, no scaling) and its layout {meta}")
    return 0


def parse_points(text: str, name: str) -> np.ndarray:
    """Four points written "x,y x,y x,y x,y" (or separated by semicolons), or a CliError naming the option."""
    parts = text.replace(";", " ").split()
    try:
        points = np.array([[float(v) for v in part.split(",")] for part in parts], np.float64)
    except ValueError as err:
        raise CliError(f"{name} '{text}': expected four points as x,y x,y x,y x,y") from err
    if points.shape != (4, 2) or not np.isfinite(points).all():
        raise CliError(f"{name} '{text}': expected four points as x,y x,y x,y x,y")
    return points


def cmd_calibrate(args: argparse.Namespace) -> int:
    import cv2

    from vision.recognise.detect import read_image

    ways = sum(bool(v) for v in (args.layout, args.cards, args.points))
    if ways != 1:
        raise CliError("calibrate from one of: --layout MAT.json (its markers), --cards, or --points with --mm")
    out: dict[str, Any]
    if args.points:
        src = parse_points(args.points, "--points")
        if not args.mm:
            raise CliError("--points needs --mm: where the four points lie on the table, in millimetres")
        dst = parse_points(args.mm, "--mm")
        if abs(cv2.contourArea(src.astype(np.float32))) < 1 or abs(cv2.contourArea(dst.astype(np.float32))) < 1:
            raise CliError("the four points must span an area (three or more are in a line)")
        h = cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))
        out = {
            "homography": h.tolist(),
            "source": "four points",
            "image_points": src.tolist(),
            "table_mm": dst.tolist(),
        }
    else:
        if not args.image:
            raise CliError("give the picture of the table to calibrate from")
        try:
            image = read_image(Path(args.image))
        except ValueError as err:
            raise CliError(f"{args.image}: {err}") from err
        out = from_mat(args, image) if args.layout else from_cards(args, image)
    target = Path(args.out)
    if not target.parent.is_dir():
        raise CliError(f"{target.parent}: no such folder")
    target.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {target} ({out['source']})")
    return 0


def from_mat(args: argparse.Namespace, image: np.ndarray) -> dict[str, Any]:
    from vision.table.markers import MIN_MARKERS, MatTracker
    from vision.table.mat import LayoutError, load_layout

    try:
        layout = load_layout(args.layout)
    except LayoutError as err:
        raise CliError(str(err)) from err
    if len(layout.markers) < MIN_MARKERS:
        raise CliError(f"{args.layout}: this layout lists no mat markers to calibrate from")
    tracker = MatTracker(layout)
    status = tracker.update(image)
    if tracker.calibration is None:
        raise CliError(f"{args.image}: {status.markers} of the mat's markers in view, {MIN_MARKERS} needed")
    return {
        "homography": tracker.calibration.homography.tolist(),
        "source": f"mat markers ({status.markers} in view)",
        "error_mm": round(float(status.error_mm or 0.0), 3),
    }


def from_cards(args: argparse.Namespace, image: np.ndarray) -> dict[str, Any]:
    """The plane from the outlines of the cards the recogniser is surest of: face-up cards read by two or more
    corners (their outlines join corners seen, not guessed) and face-down ones."""
    from companion_ui.cli_cards import make_recogniser
    from vision.table.from_cards import CardPlaneError, plane_from_cards

    try:
        width, height = (float(v) for v in args.card_mm.lower().split("x"))
    except ValueError as err:
        raise CliError(f"--card-mm '{args.card_mm}': expected WIDTHxHEIGHT in mm, e.g. 63x88") from err
    recogniser = make_recogniser(args)
    cards = [d for d in recogniser.recognise(image) if (d.face_up and d.indices >= 2) or not d.face_up]
    if len(cards) < args.min_cards:
        raise CliError(
            f"{args.image}: {len(cards)} cards seen well enough to measure the table by, {args.min_cards} needed "
            "(lay out a few cards flat, apart, face up or down)"
        )
    try:
        plane = plane_from_cards([d.quad for d in cards], (width, height))
    except CardPlaneError as err:
        raise CliError(f"{args.image}: {err}") from err
    return {
        "homography": plane.homography.tolist(),
        "source": f"{plane.cards} cards of {width:g} x {height:g} mm",
        "error_mm": round(plane.error_mm, 3),
    }


def add_table_commands(sub: Any) -> None:
    """The mat and calibrate subcommands, on the CLI's subparsers."""
    from companion_ui.cli_cards import models_and_recogniser

    p = sub.add_parser(
        "mat",
        help="print a play mat: ArUco markers and the game's zones, so the camera reads table positions",
        description="Writes a play mat (PDF pages at the paper's true size, or one PNG) and its layout as JSON "
        "beside it. Print at 100%% (no 'fit to page'); several sheets lie side by side, left to right.",
    )
    p.add_argument("--game", required=True, help="loot-the-loop, loop, bag-o-loot, loot-roll or the-loop")
    p.add_argument("--paper", default="a4", help="a4, letter or a3 (landscape); default a4")
    p.add_argument("--sheets", type=int, default=1, help="sheets side by side for a larger table (default 1)")
    p.add_argument("--dpi", type=int, default=150, help="resolution of the picture (default 150)")
    p.add_argument("-o", "--out", default="mat.pdf", help="mat.pdf or mat.png (default mat.pdf)")
    p.set_defaults(func=cmd_mat)

    p = sub.add_parser(
        "calibrate",
        help="write a table calibration (frame pixels to table mm) from a mat, the cards, or four points",
        description="Without a printed mat, the table plane can come from the cards in a picture (their known size "
        "and shape) or from four points of the table; with one, from its markers. detect --calibration reads it.",
    )
    p.add_argument("image", nargs="?", help="a picture from the camera, where it will stay")
    p.add_argument("--layout", metavar="MAT_JSON", help="the mat's layout (written by tabletop mat): its markers")
    p.add_argument("--cards", action="store_true", help="from the outlines of the cards in the picture")
    p.add_argument("--card-mm", default="63x88", help="--cards: the cards' size in mm (default 63x88, poker)")
    p.add_argument("--min-cards", type=int, default=3, help="--cards: cards needed (default 3; one is imprecise)")
    p.add_argument("--points", metavar="'x,y x,y x,y x,y'", help="four points of the table in the picture (pixels)")
    p.add_argument("--mm", metavar="'X,Y X,Y X,Y X,Y'", help="--points: where they lie on the table (mm)")
    p.add_argument("-o", "--out", default="calibration.json", help="the calibration file (default calibration.json)")
    models_and_recogniser(p, "--cards: the card recogniser (default: the rectified one)")
    p.set_defaults(func=cmd_calibrate)
