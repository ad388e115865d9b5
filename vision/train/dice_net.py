"""The dice nets (`vision.dice`):
- the finder, a small fully convolutional net that marks each die's centre in a heat map of the frame at half size
  (a cell every 8 frame pixels) and says how big the die is there;
- the face finder, on the square around one die: what lies face up there (no face to read: cocked, in the air,
  hidden, not a die; a d6's face; a d20's) and where the top face's corners are;
- the face reader, on that face warped onto a regular triangle or square (`crops.face_picture`): which face it is.

Why three: a die spans 32-110 frame pixels and a d20's numeral a seventh of that, pointing any way, beside the side
faces' numerals, foreshortened by the camera's tilt. Session 33's single reader of the whole square learnt "die or
not" and a few d6 faces in 55 CPU minutes, no d20 numeral. Rectified first, every numeral comes at one scale in one
of 3 or 4 turns, and the reader learns numerals, not geometry (as the card reader does with its corners).

    PYTHONPATH=<torch> .venv/bin/python -m vision.train.dice_net train --net faces --data out/dice-v3/train \
        --val out/dice-v3/val --out out/runs/dice-faces --minutes 60
    PYTHONPATH=<torch> .venv/bin/python -m vision.train.dice_net train --net reader --data out/dice-v3/train \
        --val out/dice-v3/val --out out/runs/dice-reader --minutes 60 --batch 64
    PYTHONPATH=<torch, onnx> .venv/bin/python -m vision.train.dice_net export --run out/runs/dice-reader \
        --onnx models/dice-reader.onnx
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn

from vision.dice.crops import (
    DIE_SPAN,
    FACE_PX,
    FACES,
    FRAME_SCALE,
    KINDS,
    READ_PX,
    STRIDE,
    face_picture,
    image_from_square,
    normalised_face,
    ordered,
    square,
    square_matrix,
)
from vision.dice.find import SIZE_UNIT, finder_input, found_dice
from vision.dice.level import TableCamera
from vision.dice.read import CELL, READER_INPUT_KEY, corners_from_heat, reader_input
from vision.dice.table_view import carried, to_view, view_of_find, view_picture
from vision.heatmap import cell_of, turned
from vision.synth.legibility import LEGIBLE
from vision.train.budget import add_budget_args, export_onnx, resume, train_for_budget, train_or_export
from vision.train.corner_net import conv_bn, focal_loss
from vision.train.cube_net import dilated
from vision.train.dice_data import (
    STATES,
    WINDOW_PX,
    WINDOW_SPAN,
    DiceScene,
    corners_taught,
    face_corners_of,
    jittered_square,
    kind_target,
    load_scenes,
    placed_as_found,
    to_window,
)
from vision.train.heatmaps import heat_targets

VIEWS = ("upright", "table")  # the face finder's square: upright in the frame, or the table's own view (session 46)

PATCH = 192  # finder training patches, finder-frame pixels (a multiple of STRIDE)
SIGMA = 1.0  # heat-map peak, cells
SEEN = 0.4  # a die at least this visible is taught as a die
CORNER_SIGMA = 0.75  # the face finder's corner peaks, cells
SMEAR = 0.5  # a face the camera left less legible than this is taught as "some face of its kind" (`face_target`)
SMOOTHING = 0.05


class FinderNet(nn.Module):
    """3 x H x W -> 2 x H/4 x W/4: die-centre heat logits, and log(size / SIZE_UNIT) in frame pixels."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            conv_bn(3, 16, stride=2),
            conv_bn(16, 24),
            conv_bn(24, 32, stride=2),
            conv_bn(32, 32),
            dilated(32, 2),
            dilated(32, 4),
            conv_bn(32, 32),
        )
        self.heat = nn.Conv2d(32, 1, 1)
        self.size = nn.Conv2d(32, 1, 1)
        nn.init.constant_(self.heat.bias, -4.0)  # CenterNet's prior: almost every cell holds no die

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.trunk(x)
        return torch.cat([self.heat(features), self.size(features)], 1)


class FaceFinderNet(nn.Module):
    """3 x READ_PX x READ_PX -> (len(KINDS),) and (3, READ_PX / CELL, READ_PX / CELL): what lies face up in the
    die's square (no face, a d6's, a d20's), and a heat map of the top face's corners with each cell's offset to
    the corner in it (in cells). Corners as heat-map peaks, not numbers from a dense layer: a face has no first
    corner, and a net asked for corners in an order must guess one and, unsure, shrinks the face (session 34
    measured 10 px median error after 10 minutes that way, against READ_PX / CELL cells a side here)."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            conv_bn(3, 32, stride=2),
            conv_bn(32, 32),
            conv_bn(32, 64, stride=2),
            conv_bn(64, 64),
            conv_bn(64, 96, stride=2),
            conv_bn(96, 96),
            dilated(96, 2),
            dilated(96, 4),
            conv_bn(96, 96),
        )
        self.kind = nn.Linear(96, len(KINDS))
        self.heat = nn.Conv2d(96, 1, 1)
        self.offset = nn.Conv2d(96, 2, 1)
        nn.init.constant_(self.heat.bias, -4.0)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.trunk(x)
        return self.kind(features.mean(dim=(2, 3))), torch.cat([self.heat(features), self.offset(features)], 1)


class FaceReaderNet(nn.Module):
    """3 x FACE_PX x FACE_PX (a top face warped onto the canonical face) -> len(FACES) logits, and the features they
    are read from (an enrolled die's faces are matched in that space, `vision.dice.enrol`)."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            conv_bn(3, 32),
            conv_bn(32, 32),
            conv_bn(32, 64, stride=2),
            conv_bn(64, 64),
            conv_bn(64, 128, stride=2),
            conv_bn(128, 128),
            conv_bn(128, 128, stride=2),
        )
        self.head = nn.Linear(128, len(FACES))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.trunk(x).mean(dim=(2, 3))
        return self.head(features), features


def _light(rng: np.random.Generator, image: np.ndarray) -> np.ndarray:
    """The camera's light and sharpness varied: colour gains, an offset, sometimes blur and noise."""
    out = image.astype(np.float32) * rng.uniform(0.75, 1.25, 3) + rng.normal(0, 10)
    if rng.random() < 0.15:  # the renderer blurs already: a little more, now and then
        out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.4, 0.9)))
    if rng.random() < 0.3:
        out = out + rng.normal(0, float(rng.uniform(2, 8)), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


def _recoloured(rng: np.random.Generator, image: np.ndarray) -> np.ndarray:
    """Half the time the colour channels swapped round, now and then grey: test dice come in body hues no training
    die has (`solids.DIE_HUE_SPLIT`), and a face is read by its numeral's shape, not its colours."""
    if rng.random() < 0.5:
        image = image[..., rng.permutation(3)]
    if rng.random() < 0.15:
        image = np.repeat(cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_BGR2GRAY)[..., None], 3, axis=2)
    return np.ascontiguousarray(image)


class FinderBatches:
    """Random patches of the stored frames, flipped and turned, with their heat, size and weight targets."""

    def __init__(self, scenes: list[DiceScene], seed: int) -> None:
        self.scenes = scenes
        self.frames = [s.image() for s in scenes]
        self.rng = np.random.default_rng(seed)

    def sample(self, batch: int) -> tuple[torch.Tensor, ...]:
        xs, hs, ws, ss, ms = [], [], [], [], []
        n = PATCH // STRIDE
        for _ in range(batch):
            i = int(self.rng.integers(0, len(self.scenes)))
            frame = self.frames[i]
            y0 = int(self.rng.integers(0, frame.shape[0] - PATCH + 1))
            x0 = int(self.rng.integers(0, frame.shape[1] - PATCH + 1))
            patch = _light(self.rng, frame[y0 : y0 + PATCH, x0 : x0 + PATCH])
            dice = self.scenes[i].dice
            points = np.stack(
                [dice[:, 0] * FRAME_SCALE - x0, dice[:, 1] * FRAME_SCALE - y0, np.zeros(len(dice)), dice[:, 5]], 1
            ).reshape(-1, 4)
            heat, weight = heat_targets(points, (n, n), 1, STRIDE, SIGMA, SEEN)
            size = np.zeros((1, n, n), np.float32)
            mask = np.zeros((1, n, n), np.float32)
            for (x, y, _c, seen), d in zip(points, dice, strict=True):
                ix, iy = (round(v) for v in cell_of(x, y, STRIDE))
                if seen >= SEEN and 0 <= ix < n and 0 <= iy < n:
                    size[0, iy, ix] = math.log(d[2] / SIZE_UNIT)
                    mask[0, iy, ix] = 1.0
            x = finder_input(patch)[0]
            k, flip = int(self.rng.integers(0, 4)), bool(self.rng.random() < 0.5)
            x, heat, weight, size, mask = (turned(a, k, flip) for a in (x, heat, weight, size, mask))
            xs.append(x)
            hs.append(heat)
            ws.append(weight)
            ss.append(size)
            ms.append(mask)
        return tuple(torch.from_numpy(np.stack(a)) for a in (xs, hs, ws, ss, ms))


def _decoded(scenes: list[DiceScene]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every stored window (dice first, then those around nothing, scene by scene) and its row; a window around
    nothing gets a row of class 0 whose place is the window's."""
    windows, rows = [], []
    for s in scenes:
        for i in range(len(s.windows)):
            windows.append(s.window(i))
            if i < len(s.dice):
                rows.append(s.dice[i])
            else:
                x, y, size = s.negatives[i - len(s.dice)]
                rows.append(np.array([x, y, size, 0, 0, 1, 0, np.nan, *[np.nan] * 8], np.float32))
    return windows, rows


FRAME_SIZE = (1280, 720)  # the scenes' full frames (`dice_scenes`)


def _cameras(scenes: list[DiceScene]) -> list[TableCamera]:
    """Each stored window's camera (`_decoded`'s order), from its scene's calibration."""
    cameras = []
    for s in scenes:
        if s.homography is None:
            raise ValueError("a scene stored before session 45 has no homography: render the data again (dice_data)")
        camera = TableCamera.from_homography(s.homography, FRAME_SIZE)
        cameras += [camera] * len(s.windows)
    return cameras


def table_square(
    window: np.ndarray, row: np.ndarray, camera: TableCamera, rng: np.random.Generator | None
) -> tuple[np.ndarray, np.ndarray]:
    """The die's table view (`table_view.view_of_find`, READ_PX a side) cut from its stored window, and the map from
    the view's pixels to the frame's. With `rng`, the die placed as a finder's find would be (`placed_as_found`'s
    error) and the view turned any way (the table has no up); without, at the truth, unturned."""
    centre, size, turn = row[:2].astype(np.float64), float(row[2]), 0.0
    if rng is not None:
        found = placed_as_found(rng)
        per_px = WINDOW_SPAN * size / WINDOW_PX  # frame pixels per window pixel
        centre = centre + (np.array([found.x, found.y]) - WINDOW_PX / 2) * per_px
        size, turn = found.size * per_px, float(rng.uniform(0, 360))
    to_frame = view_of_find(camera, (float(centre[0]), float(centre[1])), size, turn).frame_from_view(camera, READ_PX)
    window_from_frame = _homogeneous(square_matrix(row[:2], WINDOW_SPAN * float(row[2]), WINDOW_PX))  # `to_window`
    return view_picture(window, window_from_frame @ to_frame, READ_PX), to_frame


def _homogeneous(affine: np.ndarray) -> np.ndarray:
    return np.vstack([affine, [0.0, 0.0, 1.0]])


class FaceFinderBatches:
    """The face finder's squares cut from the stored windows (shifted, scaled and turned as a finder's find would
    be, the light varied), with what lies face up and the heat, offsets and mask of the face's corners."""

    def __init__(self, scenes: list[DiceScene], seed: int, cocked: bool = False, view: str = "upright") -> None:
        windows, rows = _decoded(scenes)
        cameras = _cameras(scenes) if view == "table" else [None] * len(rows)
        taught = [
            (w, r, kind_target(r), corners_taught(r, cocked), c) for w, r, c in zip(windows, rows, cameras, strict=True)
        ]
        self.items = [item for item in taught if item[2] is not None]
        self.rng = np.random.default_rng(seed)

    def sample(self, batch: int) -> tuple[torch.Tensor, ...]:
        """Squares, kinds, then the corners' heat, offsets, offset mask and the heat's weight (0 where a die's
        corners are not taught, `dice_data.corners_taught`)."""
        xs, kinds, heats, offsets, masks, weights = [], [], [], [], [], []
        n = READ_PX // CELL
        for i in self.rng.integers(0, len(self.items), batch):
            window, row, kind, taught, camera = self.items[i]
            face = np.zeros((0, 2)) if taught is None else taught
            if camera is None:
                crop, matrix = jittered_square(window, self.rng)
                moved = to_window(face, row) @ matrix[:, :2].T + matrix[:, 2] if len(face) else np.zeros((0, 2))
            else:
                crop, to_frame = table_square(window, row, camera, self.rng)
                moved = to_view(face, to_frame)
            xs.append(reader_input(_light(self.rng, _recoloured(self.rng, crop))[None])[0])
            kinds.append(kind)
            weights.append(np.full((1, n, n), taught is not None, np.float32))
            points = np.column_stack([moved, np.zeros(len(moved)), np.ones(len(moved))])
            heat, _ = heat_targets(points, (n, n), 1, CELL, CORNER_SIGMA, 0.0)
            offset = np.zeros((2, n, n), np.float32)
            mask = np.zeros((1, n, n), np.float32)
            for x, y in moved:
                cx, cy = cell_of(x, y, CELL)
                ix, iy = round(cx), round(cy)
                if 0 <= ix < n and 0 <= iy < n:
                    offset[:, iy, ix] = (cx - ix, cy - iy)
                    mask[0, iy, ix] = 1.0
            heats.append(heat)
            offsets.append(offset)
            masks.append(mask)
        return (
            torch.from_numpy(np.stack(xs)),
            torch.tensor(kinds),
            *(torch.from_numpy(np.stack(a)) for a in (heats, offsets, masks, weights)),
        )


def face_target(row: np.ndarray) -> np.ndarray:
    """The face reader's target for a die row: its face, sure when the camera left it legible, every face of its
    kind alike when it did not (a smear says "a d20", never which face)."""
    cls = int(row[3]) - 1
    target = np.zeros(len(FACES), np.float32)
    kind = FACES[cls].split(":")[0]
    legibility = row[7]
    if np.isnan(legibility) or legibility >= SMEAR:
        target[cls] = 1.0
    else:
        same = [j for j, f in enumerate(FACES) if f.startswith(kind + ":")]
        target[same] = 1.0 / len(same)
    return target


class FaceBatches:
    """Top faces warped out of the stored windows onto the canonical face from corners as a face finder would give
    them (each off by a few per cent of the face), in any of the face's turns, the light varied. (Every die's
    numerals point at a corner of its face, the held-out dice-box numerals too. Session 34 also showed the reader
    half its d20 faces upside down: on validation dice it read fewer, 75.0% of legible dice through the whole
    runtime against 76.4%, so the shipped reader is not taught that way.)"""

    def __init__(self, scenes: list[DiceScene], seed: int, normalised: bool = False) -> None:
        self.items = [
            (s.window(i), row)
            for s in scenes
            for i, row in enumerate(s.dice)
            if kind_target(row) and len(face_corners_of(row))
        ]  # only the windows read: a tray's dice are tens of thousands
        self.rng = np.random.default_rng(seed)
        self.normalised = normalised

    def sample(self, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        xs, ys = [], []
        for i in self.rng.integers(0, len(self.items), batch):
            window, row = self.items[i]
            picture = _light(self.rng, _recoloured(self.rng, face_picture(window, jittered_face(row, self.rng))))
            xs.append(reader_input((normalised_face(picture) if self.normalised else picture)[None])[0])
            ys.append(face_target(row))
        return torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))


def jittered_face(row: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A die row's top-face corners in its window, turned to a random first corner and moved as a face finder's
    error would move them: the whole face by up to 6% of its size, each corner by about 4% more."""
    face = to_window(face_corners_of(row), row)
    size = float(np.ptp(face, axis=0).max())
    moved = face + rng.normal(0, 0.03 * size, 2) + rng.normal(0, 0.04 * size, face.shape)
    return np.roll(moved, -int(rng.integers(0, len(face))), axis=0)


def evaluate_finder(model: FinderNet, scenes: list[DiceScene]) -> dict:
    """Dice (at least half seen) found within a third of their size, and false finds per frame, at 0.3."""
    model.eval()
    hit = total = false = 0
    with torch.no_grad():
        for s in scenes:
            out = model(torch.from_numpy(finder_input(s.image()))).numpy()[0]
            found = found_dice(out, 0.3)
            used = set()
            for row in s.dice:
                x, y, size, seen = row[0], row[1], row[2], row[5]
                near = [j for j, f in enumerate(found) if math.hypot(f.x - x, f.y - y) < size / 3 and j not in used]
                if near:
                    used.add(near[0])
                if seen >= 0.5:
                    total += 1
                    hit += bool(near)
            false += len(found) - len(used)
    model.train()
    return {"val_found": round(hit / max(total, 1), 4), "val_false_per_frame": round(false / max(len(scenes), 1), 3)}


def evaluate_face_finder(model: FaceFinderNet, scenes: list[DiceScene], view: str = "upright") -> dict:
    """Squares at the true centre and size (upright, or the table's view unturned): what lies face up named right,
    cocked dice taken for a face and resting ones for none, and the corners' median error (frame pixels) on faces
    named right."""
    model.eval()
    windows, rows = _decoded(scenes)
    cameras = _cameras(scenes) if view == "table" else [None] * len(rows)
    xs, kinds, faces, to_frames, cocked = [], [], [], [], []
    for window, row, camera in zip(windows, rows, cameras, strict=True):
        kind = kind_target(row)
        if kind is None:
            continue
        if camera is None:
            centre = (WINDOW_PX / 2, WINDOW_PX / 2)
            side = DIE_SPAN * WINDOW_PX / WINDOW_SPAN
            crop = square(window, centre, side, READ_PX)
            to_frame = image_from_square(row[:2], DIE_SPAN * float(row[2]), READ_PX)
        else:
            crop, to_frame = table_square(window, row, camera, None)
        xs.append(reader_input(crop[None])[0])
        kinds.append(kind)
        faces.append(face_corners_of(row) if kind else np.zeros((0, 2)))
        to_frames.append(to_frame)
        cocked.append(STATES[int(row[4])] == "cocked")
    kinds_out, maps = [], []
    with torch.no_grad():
        for k in range(0, len(xs), 256):
            kind_logits, heat = model(torch.from_numpy(np.stack(xs[k : k + 256])))
            kinds_out.append(kind_logits.numpy())
            maps.append(heat.numpy())
    model.train()
    said = np.concatenate(kinds_out).argmax(1)
    heat_maps = np.concatenate(maps)
    truth, cocked_dice = np.array(kinds), np.array(cocked)
    errors = []
    for m, k, s, face, to_frame in zip(heat_maps, truth, said, faces, to_frames, strict=True):
        if k and s == k and len(face):
            n = len(face)
            p = corners_from_heat(m, n)
            if len(p) == n:
                p = ordered(carried(p, to_frame))
                errors.append(min(float(np.abs(p - np.roll(face, t, axis=0)).mean()) for t in range(n)))
            else:
                errors.append(float("inf"))
    return {
        "val_kind_right": round(float((said == truth).mean()), 4),
        "val_face_as_none": int(((truth > 0) & (said == 0)).sum()),
        "val_none_as_face": int(((truth == 0) & (said > 0)).sum()),
        "val_cocked_as_face": f"{int((cocked_dice & (said > 0)).sum())}/{int(cocked_dice.sum())}",
        "val_corner_error_px": round(float(np.median(errors)), 2) if errors else None,
        "val_corner_error_p90_px": round(float(np.percentile(errors, 90)), 2) if errors else None,
    }


def evaluate_face_reader(model: FaceReaderNet, scenes: list[DiceScene], normalised: bool = False) -> dict:
    """Faces at their true corners, every turn looked at: share read right, of the legible and of all."""
    model.eval()
    windows, rows = _decoded(scenes)
    right, legible_right, legible = [], 0, 0
    with torch.no_grad():
        for window, row in zip(windows, rows, strict=True):
            if not kind_target(row) or not len(face_corners_of(row)):
                continue
            face = to_window(face_corners_of(row), row)
            looks = np.stack([face_picture(window, face, t) for t in range(len(face))])
            if normalised:
                looks = np.stack([normalised_face(look) for look in looks])
            logits = model(torch.from_numpy(reader_input(looks)))[0].mean(0).numpy()
            ok = int(logits.argmax()) == int(row[3]) - 1
            right.append(ok)
            if not np.isnan(row[7]) and row[7] >= LEGIBLE:
                legible += 1
                legible_right += ok
    model.train()
    return {
        "val_right": round(float(np.mean(right)), 4) if right else None,
        "val_legible_right": round(legible_right / max(legible, 1), 4),
        "val_legible": legible,
    }


def train(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    extra: dict[str, str] = {}
    scenes = [scene for folder in args.data for scene in load_scenes(folder)]
    val = load_scenes(args.val)[: args.val_scenes]
    if args.net == "finder":
        model: nn.Module = FinderNet()
        finder = FinderBatches(scenes, args.seed)

        def next_loss() -> torch.Tensor:
            x, heat, weight, size, mask = finder.sample(args.batch)
            out = model(x)
            size_loss = ((out[:, 1:2] - size).abs() * mask).sum() / mask.sum().clamp(min=1.0)
            return focal_loss(out[:, :1], heat, weight) + size_loss

        def evaluate() -> dict:
            return evaluate_finder(model, val)  # type: ignore[arg-type]

        seen = ("patches", args.batch)
    elif args.net == "faces":
        model = FaceFinderNet()
        finder_of_faces = FaceFinderBatches(scenes, args.seed, args.cocked_marks, args.view)
        print(f"face finder: {len(finder_of_faces.items)} windows")
        kind_loss = nn.CrossEntropyLoss(label_smoothing=0.05)

        def next_loss() -> torch.Tensor:
            x, kind, heat, offset, mask, weight = finder_of_faces.sample(args.batch)
            kinds, maps = model(x)
            corner_offsets = ((maps[:, 1:] - offset).abs() * mask).sum() / mask.sum().clamp(min=1.0)
            return kind_loss(kinds, kind) + focal_loss(maps[:, :1], heat, weight) + corner_offsets

        def evaluate() -> dict:
            return evaluate_face_finder(model, val, args.view)  # type: ignore[arg-type]

        seen = ("squares", args.batch)
        extra = {"view": args.view}
    else:
        model = FaceReaderNet()
        faces = FaceBatches(scenes, args.seed, args.normalised)
        print(f"face reader: {len(faces.items)} faces")

        def next_loss() -> torch.Tensor:
            x, target = faces.sample(args.batch)
            target = (1 - SMOOTHING) * target + SMOOTHING / target.shape[1]
            return -(target * torch.log_softmax(model(x)[0], 1)).sum(1).mean()

        def evaluate() -> dict:
            return evaluate_face_reader(model, val, args.normalised)  # type: ignore[arg-type]

        seen = ("faces", args.batch)
        extra = {"normalised": str(args.normalised)}
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    state = resume(args.out, model, opt, args.minutes)
    train_for_budget(
        model,
        opt,
        state,
        args.lr,
        next_loss,
        evaluate,
        args.out,
        seen,
        extra={"net": args.net, **extra},
        every_s=args.every,
    )


def export(run: Path, onnx_path: Path) -> None:
    checkpoint = torch.load(run / "last.pt", weights_only=False)
    if checkpoint["net"] == "finder":
        finder = FinderNet()
        finder.load_state_dict(checkpoint["model"])
        dynamic = {"x": {2: "h", 3: "w"}, "out": {2: "h4", 3: "w4"}}
        export_onnx(finder, torch.zeros(1, 3, 360, 640), onnx_path, ["x"], ["out"], dynamic)
    elif checkpoint["net"] == "faces":
        faces = FaceFinderNet()
        faces.load_state_dict(checkpoint["model"])
        dynamic = {"x": {0: "n"}, "kind": {0: "n"}, "corners": {0: "n"}}
        export_onnx(faces, torch.zeros(1, 3, READ_PX, READ_PX), onnx_path, ["x"], ["kind", "corners"], dynamic)
    else:
        reader = FaceReaderNet()
        reader.load_state_dict(checkpoint["model"])
        dynamic = {"x": {0: "n"}, "out": {0: "n"}, "features": {0: "n"}}
        export_onnx(reader, torch.zeros(1, 3, FACE_PX, FACE_PX), onnx_path, ["x"], ["out", "features"], dynamic)
        if checkpoint.get("normalised") == "True":  # the runtime shows it faces as it learnt them (read.face_input)
            import onnx

            graph = onnx.load(str(onnx_path))
            onnx.helper.set_model_props(graph, {READER_INPUT_KEY: "normalised"})
            onnx.save(graph, str(onnx_path))


def add_train_args(t: argparse.ArgumentParser) -> None:
    t.add_argument("--net", choices=("finder", "faces", "reader"), required=True)
    t.add_argument("--data", type=Path, nargs="+", required=True, help="folders of dice_data scenes")
    t.add_argument("--val", type=Path, required=True)
    t.add_argument("--val-scenes", type=int, default=120)
    t.add_argument("--every", type=float, default=300.0, help="seconds between curve rows and checkpoints")
    t.add_argument(
        "--cocked-marks",
        action="store_true",
        help="faces: teach a cocked die's leaning face as corner marks (`dice_data.corners_taught`; not shipped)",
    )
    t.add_argument("--view", choices=VIEWS, default="upright", help="faces: the square the face finder reads")
    t.add_argument(
        "--normalised", action="store_true", help="reader: faces with their local light taken away (not shipped)"
    )
    add_budget_args(t, minutes=40.0, batch=32, lr=3e-3, threads=1)


def main(argv: list[str] | None = None) -> None:
    train_or_export(__doc__.splitlines()[0], add_train_args, train, export, argv)


if __name__ == "__main__":
    main()
