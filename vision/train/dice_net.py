"""The dice nets (`vision.dice`): the finder, a small fully convolutional net that marks each die's centre in a heat
map of the frame at half size (a cell every 8 frame pixels) and says how big the die is there; and the reader, a
small classifier of the square around one die that names its top face (`D20:17`, `D6:3`) or says there is none to
read (cocked, in the air, hidden, not a die).

Why two nets: a die spans 24-110 frame pixels and its numerals a tenth of that. Finding needs the whole frame at low
resolution; reading needs few pixels at full resolution, turned and scaled alike for every die. Both are cheap.

    PYTHONPATH=<torch> .venv/bin/python -m vision.train.dice_net train --net finder --data out/dice/train \
        --val out/dice/val --out out/runs/dice-finder --minutes 25
    PYTHONPATH=<torch> .venv/bin/python -m vision.train.dice_net train --net reader --data out/dice/train \
        --val out/dice/val --out out/runs/dice-reader --minutes 60
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

from vision.dice.crops import CLASSES, FRAME_SCALE, READ_PX, STRIDE, square
from vision.dice.find import SIZE_UNIT, finder_input, found_dice
from vision.dice.read import reader_input
from vision.train.budget import add_budget_args, export_onnx, resume, train_for_budget, train_or_export
from vision.train.corner_net import conv_bn, focal_loss
from vision.train.cube_net import dilated, turned
from vision.train.dice_data import FACE_SEEN, WINDOW_PX, DiceScene, jittered_square, load_scenes
from vision.train.heatmaps import heat_targets

PATCH = 192  # finder training patches, finder-frame pixels (a multiple of STRIDE)
SIGMA = 1.0  # heat-map peak, cells
SEEN = 0.4  # a die at least this visible is taught as a die
HIDDEN = 0.4  # and taught "none" when less than this shows (between the two it is not taught)


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


class ReaderNet(nn.Module):
    """3 x READ_PX x READ_PX -> len(CLASSES) logits."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            conv_bn(3, 32, stride=2),
            conv_bn(32, 32),
            conv_bn(32, 64, stride=2),
            conv_bn(64, 64),
            conv_bn(64, 96, stride=2),
            conv_bn(96, 96),
            conv_bn(96, 128, stride=2),
            conv_bn(128, 128),
        )
        self.head = nn.Linear(128, len(CLASSES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.trunk(x).mean(dim=(2, 3))


class ReaderExport(nn.Module):
    """The reader as the runtime loads it: its logits and the features they are read from (an enrolled die's faces
    are matched in that space, `vision.dice.enrol`)."""

    def __init__(self, reader: ReaderNet) -> None:
        super().__init__()
        self.reader = reader

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.reader.features(x)
        return self.reader.head(features), features


def reader_target(row: np.ndarray) -> int | None:
    """The class a reader is taught for a die row (`dice_data.die_row`), or None: not taught."""
    _x, _y, _size, cls, state, seen, face_seen = row
    if int(state) != 0 or cls == 0:
        return 0
    if face_seen >= FACE_SEEN and seen >= 0.5:
        return int(cls)
    if face_seen < HIDDEN:
        return 0
    return None


def _light(rng: np.random.Generator, image: np.ndarray) -> np.ndarray:
    """The camera's light and sharpness varied: colour gains, an offset, sometimes blur and noise."""
    out = image.astype(np.float32) * rng.uniform(0.75, 1.25, 3) + rng.normal(0, 10)
    if rng.random() < 0.15:  # the renderer blurs already: a little more, now and then
        out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.4, 0.9)))
    if rng.random() < 0.3:
        out = out + rng.normal(0, float(rng.uniform(2, 8)), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


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
                ix, iy = round((x - (STRIDE - 1) / 2) / STRIDE), round((y - (STRIDE - 1) / 2) / STRIDE)
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


class ReaderBatches:
    """The reader's squares cut from the stored windows: shifted, scaled and turned as a finder's find would be,
    the light varied."""

    def __init__(self, scenes: list[DiceScene], seed: int) -> None:
        self.items: list[tuple[bytes, int]] = []
        for s in scenes:
            for row, window in zip(s.dice, s.windows, strict=False):
                target = reader_target(row)
                if target is not None:
                    self.items.append((window, target))
            self.items += [(w, 0) for w in s.windows[len(s.dice) :]]
        self.windows = [cv2.imdecode(np.frombuffer(w, np.uint8), cv2.IMREAD_COLOR) for w, _ in self.items]
        self.targets = np.array([t for _, t in self.items], np.int64)
        self.rng = np.random.default_rng(seed)

    def sample(self, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        picks = self.rng.integers(0, len(self.items), batch)
        xs = [reader_input(_light(self.rng, jittered_square(self.windows[i], self.rng))[None])[0] for i in picks]
        return torch.from_numpy(np.stack(xs)), torch.from_numpy(self.targets[picks])


def evaluate_finder(model: FinderNet, scenes: list[DiceScene]) -> dict:
    """Dice (at least half seen) found within a third of their size, and false finds per frame, at 0.3."""
    model.eval()
    hit = total = false = 0
    with torch.no_grad():
        for s in scenes:
            out = model(torch.from_numpy(finder_input(s.image()))).numpy()[0]
            found = found_dice(out, 0.3)
            used = set()
            for x, y, size, _cls, _state, seen, _face in s.dice:
                near = [j for j, f in enumerate(found) if math.hypot(f.x - x, f.y - y) < size / 3 and j not in used]
                if near:
                    used.add(near[0])
                if seen >= 0.5:
                    total += 1
                    hit += bool(near)
            false += len(found) - len(used)
    model.train()
    return {"val_found": round(hit / max(total, 1), 4), "val_false_per_frame": round(false / max(len(scenes), 1), 3)}


def evaluate_reader(model: ReaderNet, scenes: list[DiceScene]) -> dict:
    """Squares at the true centre and size: share of taught dice read right (values and "none" apart)."""
    model.eval()
    xs, ys = [], []
    for s in scenes:
        for i, row in enumerate(s.dice):
            target = reader_target(row)
            if target is not None:
                crop = square(s.window(i), (WINDOW_PX / 2,) * 2, WINDOW_PX / 2, READ_PX)
                xs.append(reader_input(crop[None])[0])
                ys.append(target)
    with torch.no_grad():
        pred = model(torch.from_numpy(np.stack(xs))).argmax(1).numpy()
    model.train()
    truth = np.array(ys)
    values = truth > 0
    return {
        "val_value_right": round(float((pred[values] == truth[values]).mean()), 4),
        "val_none_right": round(float((pred[~values] == 0).mean()), 4) if (~values).any() else None,
        "val_read_as_value_when_none": int((pred[~values] > 0).sum()),
    }


def train(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
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
    else:
        model = ReaderNet()
        reader = ReaderBatches(scenes, args.seed)
        print(f"reader: {len(reader.items)} windows")
        loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)

        def next_loss() -> torch.Tensor:
            x, y = reader.sample(args.batch)
            return loss_fn(model(x), y)

        def evaluate() -> dict:
            return evaluate_reader(model, val)  # type: ignore[arg-type]

        seen = ("squares", args.batch)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    state = resume(args.out, model, opt, args.minutes)
    train_for_budget(
        model, opt, state, args.lr, next_loss, evaluate, args.out, seen, extra={"net": args.net}, every_s=args.every
    )


def export(run: Path, onnx_path: Path) -> None:
    checkpoint = torch.load(run / "last.pt", weights_only=False)
    if checkpoint["net"] == "finder":
        finder = FinderNet()
        finder.load_state_dict(checkpoint["model"])
        dynamic = {"x": {2: "h", 3: "w"}, "out": {2: "h4", 3: "w4"}}
        export_onnx(finder, torch.zeros(1, 3, 360, 640), onnx_path, ["x"], ["out"], dynamic)
    else:
        reader = ReaderNet()
        reader.load_state_dict(checkpoint["model"])
        dynamic = {"x": {0: "n"}, "out": {0: "n"}, "features": {0: "n"}}
        dummy = torch.zeros(1, 3, READ_PX, READ_PX)
        export_onnx(ReaderExport(reader), dummy, onnx_path, ["x"], ["out", "features"], dynamic)


def add_train_args(t: argparse.ArgumentParser) -> None:
    t.add_argument("--net", choices=("finder", "reader"), required=True)
    t.add_argument("--data", type=Path, nargs="+", required=True, help="folders of dice_data scenes")
    t.add_argument("--val", type=Path, required=True)
    t.add_argument("--val-scenes", type=int, default=120)
    t.add_argument("--every", type=float, default=300.0, help="seconds between curve rows and checkpoints")
    add_budget_args(t, minutes=40.0, batch=32, lr=3e-3, threads=1)


def main(argv: list[str] | None = None) -> None:
    train_or_export(__doc__.splitlines()[0], add_train_args, train, export, argv)


if __name__ == "__main__":
    main()
