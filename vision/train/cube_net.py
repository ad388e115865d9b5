"""The cube counter's net (`vision.board.cubes`): a small fully convolutional net that reads the Era ring's cut
beside the board's own picture cut the same way, and marks each cube's centre in a heat map per colour (red, green,
blue), a cell every 4 cut pixels (2.5 mm on a 420 mm board; a cube spans 3-4 cells).

Why the board's picture as input: a red cube on a red Era, or a green one on a green mission spot, differs from the
print under it by its relief and shading only; given what the board shows there with nothing on it, the net need
only learn what a cube adds. Why heat maps and not blobs of colour: cubes touch and hands cover them; a peak per
cube counts touching cubes apart (their centres are a cube's side apart, 3+ cells).

    PYTHONPATH=<torch> .venv/bin/python -m vision.train.cube_net train --data out/cubes/train --val out/cubes/val \
        --pieces out/pieces/the-loop --out out/runs/cubes --minutes 40
    PYTHONPATH=<torch, onnx> .venv/bin/python -m vision.train.cube_net export --run out/runs/cubes \
        --onnx models/the-loop-cubes.onnx
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn

from vision.board.bench import FAMILIES, PieceTally, countable, exact
from vision.board.check import FINE_PX
from vision.board.cubes import (
    CHANNELS,
    COLOURS,
    PIECES,
    STRIDE,
    about_centre,
    count_cut,
    cut_axes,
    find_pieces,
    net_input,
    planes,
    to_upright,
)
from vision.board.rectify import resized
from vision.heatmap import turned
from vision.train.augment import off_bearing, vary_light
from vision.train.budget import TorchSession, add_budget_args, export_onnx, resume, train_for_budget, train_or_export
from vision.train.corner_net import conv_bn, focal_loss
from vision.train.cube_data import BoardRefs, CubeScene, SceneNet, cut_side, load_scenes
from vision.train.heatmaps import heat_targets

PATCH = 192  # training patches, cut pixels (a multiple of STRIDE)
FINE_STRIDE = 2  # arch "fine": cut pixels a cell on the fine cut (a 9 mm cube 21 px: touching ones 10.7 cells apart)
SIGMA = 1.0  # heat-map peak, cells
SEEN = 0.4  # a cube at least this visible is taught as a cube; a less visible one is neither taught nor punished
UPRIGHT_WARP = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
TURN_JITTER = 10.0  # degrees an upright cut is turned off the camera's bearing, at most (as the checker's windows)


def dilated(channels: int, dilation: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(channels, channels, 3, 1, dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(channels),
        nn.ReLU(True),
    )


class CubeNet(nn.Module):
    """(obs, reference) 6 x H x W -> heat logits at H/4 x W/4: the cubes' colours, then (arch "ring") the pieces'
    (`cubes.PIECES`). "small": a plain stride-4 trunk that sees about 43 cut pixels around a cell, cubes only;
    "wide": a stride-8 context path brought back to stride 4, cubes only; "ring": the small trunk and a stride-16
    context path (about 240 cut pixels, 100 mm: a mission tile or a pawn whole, and a cube's neighbours) added back
    at stride 4, every channel (about 1.3 times the small one's work; a concatenation fused by a 3 x 3 layer of 48
    channels at stride 4 took 3 times its time a step, measured at the start of session 37's run)."""

    def __init__(self, arch: str = "ring") -> None:
        super().__init__()
        self.arch = arch
        channels = CHANNELS if arch == "ring" else len(COLOURS)
        if arch in ("small", "ring"):
            self.trunk = nn.Sequential(
                conv_bn(6, 16, stride=2),
                conv_bn(16, 24),
                conv_bn(24, 32, stride=2),
                conv_bn(32, 32),
                dilated(32, 2),
                conv_bn(32, 32),
            )
            width = 32
            if arch == "ring":  # the context comes back as a 1 x 1 projection added to the trunk
                self.context = nn.Sequential(
                    conv_bn(32, 48, stride=2), dilated(48, 2), conv_bn(48, 48, stride=2), dilated(48, 2), dilated(48, 4)
                )
                self.fuse = nn.Conv2d(48, 32, 1)
        elif arch == "fine":  # cubes only, on the checker's fine cut, at 2 cut pixels a cell (session 57)
            self.trunk = nn.Sequential(conv_bn(6, 8, stride=2), conv_bn(8, 12))  # stride 2
            self.body = nn.Sequential(conv_bn(12, 24, stride=2), conv_bn(24, 24), conv_bn(24, 24))  # stride 4
            self.context = nn.Sequential(conv_bn(24, 48, stride=2), conv_bn(48, 48, stride=2), conv_bn(48, 48))
            self.fuse = nn.Conv2d(48, 24, 1)
            self.lateral = nn.Conv2d(12, 24, 1)
            self.up = conv_bn(24, 12)
            width = 12
        elif arch == "wide":
            self.trunk = nn.Sequential(
                conv_bn(6, 16, stride=2), conv_bn(16, 32), conv_bn(32, 48, stride=2), conv_bn(48, 48)
            )
            self.context = nn.Sequential(conv_bn(48, 64, stride=2), dilated(64, 2), conv_bn(64, 64))
            self.fuse = nn.Sequential(conv_bn(48 + 64, 48, k=1), conv_bn(48, 48))
            width = 48
        else:
            raise ValueError(f"unknown arch {arch!r}: expected small, wide, ring or fine")
        self.head = nn.Conv2d(width, channels, 1)
        nn.init.constant_(self.head.bias, -4.0)  # CenterNet's prior: almost every cell holds no cube

    @property
    def stride(self) -> int:
        """Cut pixels per heat-map cell."""
        return FINE_STRIDE if self.arch == "fine" else STRIDE

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.trunk(x)
        if self.arch == "fine":
            body = self.body(features)
            context = nn.functional.interpolate(self.context(body), size=body.shape[2:], mode="nearest")
            body = torch.relu(body + self.fuse(context))
            up = nn.functional.interpolate(body, size=features.shape[2:], mode="nearest")
            features = self.up(torch.relu(up + self.lateral(features)))
        elif self.arch == "ring":
            context = nn.functional.interpolate(self.context(features), size=features.shape[2:], mode="nearest")
            features = torch.relu(features + self.fuse(context))
        elif self.arch == "wide":
            context = nn.functional.interpolate(self.context(features), size=features.shape[2:], mode="nearest")
            features = self.fuse(torch.cat([features, context], 1))
        return self.head(features)


def targets(
    cubes: np.ndarray, pieces: np.ndarray, size: int, channels: int, stride: int = STRIDE
) -> tuple[np.ndarray, np.ndarray]:
    """Heat (channels, size/stride, size/stride) with a peak at each well-seen cube's and piece's cell (the pieces'
    maps after the cubes'), and the loss weight."""
    points = np.concatenate([cubes, pieces + np.array([0, 0, len(COLOURS), 0], np.float32)])
    if channels == len(COLOURS):
        points = cubes
    return heat_targets(points, (size // stride, size // stride), channels, stride, SIGMA, SEEN)


class Batches:
    """Random patches of the stored cuts beside their boards' reference cuts, turned and flipped together (the
    board lies any way round), the camera's light varied on the cut alone. `upright` (session 59): each cut turned
    about its centre to its camera's bearing as the runtime turns it (`cubes.cut_axes`), give or take `TURN_JITTER`
    and mirrored about that bearing half the time, and the patch taken from that; a cut with no camera bearing
    turned and mirrored at random as before."""

    def __init__(
        self,
        scenes: list[CubeScene],
        boards: BoardRefs,
        seed: int,
        channels: int,
        blue_share: float = 0.0,
        stride: int = STRIDE,
        upright: bool = False,
    ) -> None:
        """`blue_share`: the share of patches drawn about a blue cube (a box holds few: one Era in seven has one, and
        the net missed 7% of them on validation against 0.7% of the red, session 57). `boards` at a side other than
        the scenes' cut: their fine cuts are read (`cube_data --fine-px`), the cubes moved onto them, no pieces."""
        self.scenes = scenes
        self.channels = channels
        self.stride = stride
        size = cut_side(scenes)
        self.fine = boards.size != size
        self.cuts = [s.fine_cut() if self.fine else s.cut() for s in scenes]
        self.cubes = [cubes_on(s, size, boards.size) for s in scenes]
        self.boards = boards
        if upright and self.fine:
            raise ValueError("an upright cube net reads the 400 px cut, not the fine one (arch 'fine')")
        # per scene, the upright cut's axes on its cut (None: no bearing, read any way round)
        self.axes = [cut_axes(s.eye(size), size) for s in scenes] if upright else [None] * len(scenes)
        self.rng = np.random.default_rng(seed)
        self.blue_share = blue_share
        blue = COLOURS.index("blue")
        # (scene, x, y) of every blue cube taught as a cube
        self.blues = [(i, float(x), float(y)) for i, cubes in enumerate(self.cubes) for x, y, c, seen in cubes
                      if int(c) == blue and seen >= SEEN]  # fmt: skip

    def corner(self) -> tuple[int, int, int, np.ndarray | None]:
        """(scene, x0, y0, axes) of the next patch: anywhere on any cut, or, `blue_share` of the time, about a blue
        cube (it lies anywhere in the patch but its outer eighth, unless the cut's edge is nearer); on the cut turned
        along `axes` (`cubes.about_centre`) when the scene has a bearing and the batches are upright."""
        blue = bool(self.blues) and self.rng.random() < self.blue_share
        if blue:
            i, x, y = self.blues[int(self.rng.integers(0, len(self.blues)))]
        else:
            i = int(self.rng.integers(0, len(self.scenes)))
        side = self.cuts[i].shape[1]
        axes = self.axes[i]
        if axes is not None:
            axes = off_bearing(self.rng, axes, TURN_JITTER)
        if not blue:
            x0, y0 = (int(v) for v in self.rng.integers(0, side - PATCH + 1, 2))
            return i, x0, y0, axes
        if axes is not None:
            x, y = to_upright(np.array([[x, y]]), axes, side)[0]
        margin = PATCH // 8
        x0, y0 = (int(np.clip(v - self.rng.integers(margin, PATCH - margin), 0, side - PATCH)) for v in (x, y))
        return i, x0, y0, axes

    def sample(self, batch: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        xs, hs, ws = [], [], []
        for _ in range(batch):
            i, x0, y0, axes = self.corner()
            cut, ref = self.cuts[i], self.boards.reference(self.scenes[i].design)
            cubes = self.cubes[i].copy()
            pieces = np.zeros((0, 4), np.float32) if self.fine else self.scenes[i].pieces.copy()
            if axes is None:
                cut, ref = (a[y0 : y0 + PATCH, x0 : x0 + PATCH] for a in (cut, ref))
            else:
                m = about_centre(axes, cut.shape[1], (x0, y0))
                cut, ref = (cv2.warpAffine(a, m, (PATCH, PATCH), flags=UPRIGHT_WARP) for a in (cut, ref))
                for points in (cubes, pieces):
                    points[:, :2] = to_upright(points[:, :2], axes, self.cuts[i].shape[1])
            cut, ref = vary_light(self.rng, cut.astype(np.float32), ref.astype(np.float32))
            for points in (cubes, pieces):
                points[:, 0] -= x0
                points[:, 1] -= y0
            heat, weight = targets(cubes, pieces, PATCH, self.channels, self.stride)
            x = net_input(np.clip(cut, 0, 255).astype(np.uint8), planes(np.clip(ref, 0, 255).astype(np.uint8)))[0]
            if axes is None:
                k = int(self.rng.integers(0, 4))
                flip = bool(self.rng.random() < 0.5)
                x, heat, weight = (turned(a, k, flip) for a in (x, heat, weight))
            xs.append(x)
            hs.append(heat)
            ws.append(weight)
        return torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(hs)), torch.from_numpy(np.stack(ws))


def cubes_on(scene: CubeScene, size: int, side: int) -> np.ndarray:
    """The scene's cubes (x, y, colour, visible share) on its cut (`size` wide), or moved onto a cut `side` wide (its
    fine cut)."""
    cubes = scene.cubes.copy()
    cubes[:, :2] = resized(cubes[:, :2], size, side)
    return cubes


def evaluate(model: CubeNet, scenes: list[CubeScene], boards: BoardRefs, upright: bool = False) -> dict:
    """Eras counted exactly (every colour) on the validation cuts, among the bench's countable Eras; and the pieces
    at least half seen read right (a net that reads them), both at the fixed cut-off 0.3. `upright`: each cut read
    turned to its camera and the maps turned back, as the runtime reads it."""
    model.eval()
    right = total = 0
    pieces = PieceTally()
    fine = boards.size != cut_side(scenes)
    net = SceneNet(TorchSession(model), upright)
    with torch.no_grad():
        for s in scenes:
            if fine:
                x = torch.from_numpy(net_input(s.fine_cut(), boards.planes(s.design)))
                heat = torch.sigmoid(model(x))[0].numpy()
            else:
                heat = net.heat(s, boards)
            right += exact(count_cut(heat, boards.masks(s.design), 0.3, model.stride), s.eras)
            total += sum(countable(info) for info in s.eras.values())
            pieces.add([(PIECES[int(k)], x, y, seen) for x, y, k, seen in s.pieces], find_pieces(heat, 0.3))
    model.train()
    out = {"val_eras_exact": round(right / max(total, 1), 4), "val_eras": total}
    if model.head.out_channels > len(COLOURS):  # a net that reads pieces too
        rows = pieces.summary()
        n = sum(rows[f]["pieces"] for f in FAMILIES)
        out["val_pieces_right"] = round(sum(rows[f]["right"] for f in FAMILIES) / max(n, 1), 4)
        out["val_pieces_false"] = sum(rows[f]["false"] for f in FAMILIES)
    return out


def train(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    scenes = [scene for folder in args.data for scene in load_scenes(folder)]
    model = CubeNet(args.arch)
    boards = BoardRefs(args.pieces, FINE_PX if args.arch == "fine" else cut_side(scenes))
    channels = model.head.out_channels
    data = Batches(scenes, boards, args.seed, channels, args.blue_share, model.stride, args.upright)
    val = load_scenes(args.val)[: args.val_scenes]
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    state = resume(args.out, model, opt, args.minutes)

    def next_loss() -> torch.Tensor:
        x, heat, weight = data.sample(args.batch)
        return focal_loss(model(x), heat, weight)

    train_for_budget(
        model, opt, state, args.lr, next_loss, lambda: evaluate(model, val, boards, args.upright), args.out,
        ("patches", args.batch), extra={"arch": args.arch, "upright": args.upright}, every_s=args.every,
    )  # fmt: skip


def export(run: Path, onnx_path: Path) -> None:
    checkpoint = torch.load(run / "last.pt", weights_only=False)
    model = CubeNet(checkpoint.get("arch", "small"))
    model.load_state_dict(checkpoint["model"])
    dummy = torch.zeros(1, 6, 400, 400)  # any side: the graph's height and width are free
    export_onnx(model, dummy, onnx_path, ["x"], ["heat"], {"x": {2: "h", 3: "w"}, "heat": {2: "h4", 3: "w4"}})


def add_train_args(t: argparse.ArgumentParser) -> None:
    t.add_argument("--data", type=Path, nargs="+", required=True, help="folders of cube_data scenes")
    t.add_argument("--val", type=Path, required=True)
    t.add_argument("--pieces", type=Path, default=Path("out/pieces/the-loop"))
    t.add_argument("--val-scenes", type=int, default=60)
    t.add_argument("--arch", choices=("small", "wide", "ring", "fine"), default="ring")
    t.add_argument("--every", type=float, default=300.0, help="seconds between curve rows and checkpoints")
    t.add_argument("--blue-share", type=float, default=0.0, help="share of patches drawn about a blue cube")
    t.add_argument("--upright", action="store_true", help="read each cut turned to its camera (session 59)")
    add_budget_args(t, minutes=40.0, batch=12, lr=3e-3, threads=2)


def main(argv: list[str] | None = None) -> None:
    train_or_export(__doc__.splitlines()[0], add_train_args, train, export, argv)


if __name__ == "__main__":
    main()
