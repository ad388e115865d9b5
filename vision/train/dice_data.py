"""Scenes of dice for the dice nets (`vision.dice`): each rendered by the synthetic engine
(`vision.synth.dice_scenes`) and stored as the nets see it: the frame at the finder's scale with every die's centre,
size, truth and top-face corners, and a window around each die (and a few around nothing), WINDOW_SPAN die sizes on
a side at WINDOW_PX, so training can shift, scale and turn the face finder's square within it and warp the face
reader's face out of it at about the resolution the frame had.

    python -m vision.train.dice_data out/dice/train --split train --n 2000 --seed 1
    python -m vision.train.dice_data out/dice/val --split val --n 200 --seed 2
    python -m vision.train.dice_data out/dice-tray/train --split train --n 2400 --seed 4 --tray   # faces alone
    python -m vision.train.dice_data out/dice-cocked/train --split train --n 1000 --seed 6 --tray --cocked 0.5

The dice's designs, fonts, colours and materials are the split's (`solids.random_solid`); the table's cards are Loot
Roll designs of the same split. Resumable: scenes are written in shards (`shards.SHARD`), and a finished shard is kept.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.dice.crops import CLASSES, DIE_SPAN, KINDS, READ_PX, class_of, finder_frame, square, square_matrix
from vision.dice.find import FoundDie
from vision.synth.dice_scenes import DieTruth, RenderedDice, render_dice_scene, render_dice_tray
from vision.synth.solids import LETTERINGS, set_lettered
from vision.train.shards import load_shards, render_shards

WINDOW_SPAN = 2.8  # a stored window spans this many die sizes: room for the face finder's square to move and turn
WINDOW_PX = 224  # a die of 80 pixels: its top face's numeral at about the resolution the face reader reads it
NEGATIVES = 2  # windows around nothing per scene (the reader learns to say "none" to a finder's false find)
STATES = ("rest", "cocked", "air")
ASKEW_DEG = 10.0
FACE_SEEN = 0.8  # a resting die is taught (and tuned on) its value when this much of its top face shows
FACE_HIDDEN = 0.4  # and taught "no face" when less than this shows (between the two it is not taught)


@dataclass
class DiceScene:
    frame: bytes  # JPEG of the frame at FRAME_SCALE
    dice: np.ndarray  # (n, ROW) float32 in full-frame pixels: x, y, size, class (CLASSES), state (STATES), seen,
    # face_seen, legibility (nan: not measured), then the top face's corners x0, y0 .. x3, y3 (`crops.ordered`; nan
    # beyond a d20's three and on a die with no face up)
    windows: list[bytes]  # JPEG per die (same order), then NEGATIVES around nothing: WINDOW_SPAN sizes a side
    negatives: np.ndarray  # (NEGATIVES, 3) float32: x, y, size of the windows around nothing
    # the table plane (mm) to the full frame's pixels, as a player's calibration gives it: what a die's view from the
    # table's own side is cut through (`level.TableCamera.from_homography`); None in scenes stored before session 45
    homography: np.ndarray | None = None

    def image(self) -> np.ndarray:
        return _decode(self.frame)

    def window(self, i: int) -> np.ndarray:
        return _decode(self.windows[i])


def _decode(jpeg: bytes) -> np.ndarray:
    return cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)


def _jpeg(image: np.ndarray, quality: int) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok, "JPEG encoding failed"
    return data.tobytes()


ROW = 16
CORNERS = slice(8, 16)


def die_row(d: DieTruth) -> list[float]:
    corners = [v for point in d.top_face for v in point]
    corners += [math.nan] * (8 - len(corners))
    legibility = math.nan if d.legibility is None else d.legibility
    row = [*d.centre_px, d.size_px, class_of(d.kind, d.value), STATES.index(d.state), d.seen, d.face_seen, legibility]
    return row + corners


def kind_target(row: np.ndarray) -> int | None:
    """What a face finder is taught for a die row (`dice_data.die_row`): its kind's index in KINDS when its top face
    shows, 0 when there is no face to read (cocked, in the air, hidden, a window around nothing), None: not taught
    (a face partly hidden, neither readable nor gone)."""
    cls, state, seen, face_seen = row[3:7]
    if int(state) != 0 or cls == 0:
        return 0
    if face_seen >= FACE_SEEN and seen >= 0.5:
        return KINDS.index(CLASSES[int(cls)].split(":")[0].lower())
    if face_seen < FACE_HIDDEN:
        return 0
    return None


def truth_target(die: dict) -> int | None:
    """`kind_target` of a die as a bench frame's truth holds it (`DieTruth.to_json`)."""
    return kind_target(np.array(die_row(DieTruth.from_json(die)), np.float64))


def not_found(dice: list[dict], matched: list[dict | None]) -> list[dict]:
    """The dice of a bench frame's truth owed a value (`truth_target`: a face up to read) that no find was matched
    to (`bench.matched_truth`): what the finder missed."""
    return [d for d in dice if truth_target(d) and not any(d is m for m in matched)]


def corners_taught(row: np.ndarray, cocked: bool = False) -> np.ndarray | None:
    """The top-face corners a face finder is taught to mark for a die row, (k, 2) frame pixels: a resting die's
    whose face shows (`kind_target`); with `cocked`, a cocked die's leaning face too when as much of it shows,
    though it is taught "no face" (so its marks lie where the face does, and the lean can be weighed on them;
    session 45, not shipped); none for a cocked die otherwise, a die in the air, a hidden face or a window around
    nothing; None: not taught (a face partly hidden)."""
    kind = kind_target(row)
    if kind is None:
        return None
    if kind:
        return face_corners_of(row)
    if not cocked or STATES[int(row[4])] != "cocked":
        return np.zeros((0, 2))
    seen, face_seen = row[5:7]
    if face_seen >= FACE_SEEN and seen >= 0.5:
        return face_corners_of(row)
    return np.zeros((0, 2)) if face_seen < FACE_HIDDEN else None


def face_corners_of(row: np.ndarray) -> np.ndarray:
    """A die row's top-face corners, (3 | 4, 2) frame pixels; (0, 2) when it has no face up."""
    points = row[CORNERS].reshape(4, 2)
    return points[~np.isnan(points[:, 0])]


def to_window(points: np.ndarray, row: np.ndarray) -> np.ndarray:
    """Frame pixels to the pixels of the die's stored window."""
    return (points - row[:2]) * (WINDOW_PX / (WINDOW_SPAN * row[2])) + WINDOW_PX / 2


def render_one(job: tuple[int, int, str, list[str], str, tuple[float, str]]) -> DiceScene:
    set_lettered(*job[-1])  # each worker process letters training dice as the command asked
    return stored(render_dice_scene(*job[:-1]))


def render_tray(job: tuple[int, int, str, str, float, tuple[float, str]]) -> DiceScene:
    set_lettered(*job[-1])
    return stored(render_dice_tray(*job[:-1]))


def stored(rendered: RenderedDice) -> DiceScene:
    """A rendered scene as the nets' data keeps it."""
    image = rendered.scene.image
    rows = [die_row(d) for d in rendered.dice]
    windows = [_jpeg(square(image, d.centre_px, WINDOW_SPAN * d.size_px, WINDOW_PX), 95) for d in rendered.dice]
    negatives = []
    h, w = image.shape[:2]
    while len(negatives) < NEGATIVES:
        x, y = rendered.rng.uniform([0, 0], [w, h])
        size = float(np.exp(rendered.rng.uniform(math.log(20), math.log(110))))
        if all(math.hypot(x - d.centre_px[0], y - d.centre_px[1]) > 0.9 * (d.size_px + size) for d in rendered.dice):
            negatives.append((float(x), float(y), size))
            windows.append(_jpeg(square(image, (x, y), WINDOW_SPAN * size, WINDOW_PX), 95))
    return DiceScene(
        _jpeg(finder_frame(image), 92),
        np.array(rows, np.float32).reshape(-1, ROW),
        windows,
        np.array(negatives, np.float32).reshape(-1, 3),
        rendered.scene.spec.camera.table_to_image().astype(np.float64),
    )


def placed_as_found(rng: np.random.Generator) -> FoundDie:
    """The die at the middle of its stored window, placed as a finder's find would place it: its centre off by up
    to an eighth of its size, its size off by up to 18%."""
    die_px = WINDOW_PX / WINDOW_SPAN  # a die's size in window pixels
    dx, dy = rng.uniform(-0.12, 0.12, 2) * die_px
    size = die_px * float(np.exp(rng.uniform(math.log(0.85), math.log(1.18))))
    return FoundDie(WINDOW_PX / 2 + dx, WINDOW_PX / 2 + dy, size, 1.0)


def jittered_square(window: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The face finder's square cut from a stored window around a die `placed_as_found`, turned a little (a camera
    held slightly askew), and the 2 x 3 map from window pixels to the square's. Never turned further: the frame's
    up is the table's up, and that is what tells a d20's top face (the one with the value) from the face that looks
    at a tilted camera (session 34: turned any way, the face finder put a third of the d20s' corners on the wrong
    face, in the frame's middle)."""
    die = placed_as_found(rng)
    where, side, angle = (die.x, die.y), DIE_SPAN * die.size, float(rng.uniform(-ASKEW_DEG, ASKEW_DEG))
    return square(window, where, side, READ_PX, angle), square_matrix(where, side, READ_PX, angle)


def load_scenes(folder: Path) -> list[DiceScene]:
    return list(load_shards(folder, DiceScene))


def main(argv: list[str] | None = None) -> None:
    from vision.synth.components import design_folders

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pieces", type=Path, default=Path("out/pieces/loot-roll"))
    parser.add_argument("--split", choices=("train", "val", "test"), default="train")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--tray", action="store_true", help="dice alone on a bare table (`dice_tray_spec`): faces for the reader"
    )
    parser.add_argument(
        "--cocked", type=float, default=0.0, help="with --tray: share of its dice cocked (leaning faces, 0-1)"
    )
    parser.add_argument(
        "--lettered",
        type=float,
        default=0.0,
        help="share of training dice designs whose numerals are lettered beyond their fonts (solids.Lettering; 0-1)",
    )
    parser.add_argument(
        "--lettering", choices=LETTERINGS, default="reshaped", help="how lettered numerals depart from their fonts"
    )
    args = parser.parse_args(argv)
    designs = [p.name for p in design_folders(args.pieces, args.split, "loot-roll")]
    if not designs:
        parser.error(f"{args.pieces}: no {args.split} designs of loot-roll (tabletop synth pieces --game loot-roll)")
    if args.tray:
        table = str(args.pieces / designs[0])
        render_shards(
            args.out,
            args.n,
            lambda i: (i, args.seed, table, args.split, args.cocked, (args.lettered, args.lettering)),
            render_tray,
            args.workers,
            "dice trays",
        )
        return
    render_shards(
        args.out,
        args.n,
        lambda i: (i, args.seed, str(args.pieces), designs, args.split, (args.lettered, args.lettering)),
        render_one,
        args.workers,
        "dice scenes",
    )


if __name__ == "__main__":
    main()
