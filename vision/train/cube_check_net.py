"""The cube checker's torch side (`vision.train.cube_check` runs it): the net, its training batches and its export.

The windows are drawn at the candidates the shipped cube net finds on the stored scenes, each moved a little (the
net's peaks lie on a grid 6 fine pixels apart), turned and mirrored with its offset, the light varied as the cube
net's patches are. One in ten windows is centred anywhere on the cut instead, so the checker also meets the print
between candidates.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

from vision.board.check import (
    CLASSES,
    CONTEXT,
    CUBE_SIDES_PX,
    FINE_PX,
    IMAGE_PLANES,
    REACH_SIDES,
    WIDE,
    WINDOW,
    context_of,
    context_windows,
    offsets_in_window,
    patches,
    turned_offset,
    upright_patches,
    view_axes,
    wide_centre,
)
from vision.board.cubes import net_input, planes
from vision.heatmap import turned
from vision.train.augment import Light, draw_light, off_bearing, relight
from vision.train.budget import TorchSession, export_onnx, resume, train_for_budget
from vision.train.corner_net import conv_bn
from vision.train.cube_check import (
    TRAIN_FLOOR,
    evaluate_scenes,
    fine_cubes,
    label_candidates,
    scene_candidates,
)
from vision.train.cube_data import BoardRefs, CubeScene, SceneNet, cut_side, load_scenes

ANYWHERE = 0.1  # share of windows centred at random on the cut
JITTER_PX = 3  # a candidate's window moved by up to this many fine pixels
TURN_JITTER = 10.0  # degrees an upright window is turned off the camera's bearing, at most
WIDTHS = (16, 24, 32, 32, 48, 48, 64)  # the layers' channels at width 1 (the shipped checker's)
WIDE_WIDTH = 0.5  # the wide window's trunk, times those channels: a quarter of the window's multiply-adds


class CheckNet(nn.Module):
    """6 x 63 x 63 (the fine cut and the board's picture) -> 4 class logits (none, red, green, blue) and the offset
    to the cube's centre (x, y, in units of the reach). Strided down to 4 x 4 and flattened, not pooled: where the
    cube lies in the window is the question. About 11 million multiply-adds a window at `width` 1 (one of 24 channels
    after the first layer took twice that: 1.5 times the cube net's time a frame at 36 windows); `width` scales every
    layer's channels, and the multiply-adds about as its square (the counter's training Eras read no better than its
    validation ones, session 46: the shipped checker is too small, not short of data)."""

    def __init__(self, planes: int = IMAGE_PLANES, width: float = 1.0, wide_width: float = WIDE_WIDTH) -> None:
        super().__init__()
        self.planes = planes  # `check.CHECKER_PLANES`: the window, with the cube net's maps, or with the wide window
        wide = planes == IMAGE_PLANES + WIDE
        self.features = trunk(IMAGE_PLANES if wide else planes, width)
        # the wide window (`check.wide_windows`) through a trunk of its own: its pixels are twice the window's
        self.wide = trunk(WIDE, wide_width) if wide else None
        flat = round(WIDTHS[-1] * width) * 16 + (round(WIDTHS[-1] * wide_width) * 16 if wide else 0)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(flat, 96), nn.ReLU(True), nn.Linear(96, 6))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.wide is None:
            out = self.head(self.features(x))
        else:
            fine, wide = self.features(x[:, :IMAGE_PLANES]), self.wide(x[:, IMAGE_PLANES:])
            out = self.head(torch.cat([fine.flatten(1), wide.flatten(1)], 1))
        return out[:, : len(CLASSES)], out[:, len(CLASSES) :]


def trunk(planes: int, width: float) -> nn.Sequential:
    """Strided down to 4 x 4 from a 63 x 63 window, `width` times the shipped checker's channels."""
    c = [round(v * width) for v in WIDTHS]
    return nn.Sequential(
        conv_bn(planes, c[0], stride=2),
        conv_bn(c[0], c[1]),
        conv_bn(c[1], c[2], stride=2),
        conv_bn(c[2], c[3]),
        conv_bn(c[3], c[4], stride=2),
        conv_bn(c[4], c[5]),
        conv_bn(c[5], c[6], stride=2),
    )


class Windows:
    """Training windows at the cube net's candidates on the stored scenes (with fine cuts)."""

    def __init__(
        self,
        scenes: list[CubeScene],
        boards: BoardRefs,
        fine: BoardRefs,
        net: object,
        seed: int,
        context: bool,
        target: str = "footprint",
        reach_sides: float = REACH_SIDES,
        wide: bool = False,
        upright: bool = False,
    ) -> None:
        self.scenes = scenes
        self.upright = upright
        self.eyes = [s.eye(FINE_PX) for s in scenes] if upright else []
        self.wide = wide
        self.fine = fine
        self.size = boards.size
        self.contexts: list[np.ndarray] = []  # per scene, the cube net's maps (`check.context_of`), when read
        self.rng = np.random.default_rng(seed)
        self.reach = reach_sides * CUBE_SIDES_PX
        self.cuts, self.cubes, rows = [], [], []
        for i, s in enumerate(scenes):
            self.cuts.append(s.fine_cut())
            self.cubes.append(fine_cubes(s, boards.size, FINE_PX, target))
            points, heat = scene_candidates(net, s, boards, FINE_PX, TRAIN_FLOOR)
            rows.extend((i, x, y) for x, y in points)
            if context:
                self.contexts.append(context_of(heat).astype(np.float16))
            if (i + 1) % 500 == 0 or i + 1 == len(scenes):
                print(f"candidates: {i + 1}/{len(scenes)} scenes, {len(rows)}", file=sys.stderr)
        self.rows = np.array(rows, np.float32)

    def sample(self, batch: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        xs, classes, offsets = [], [], []
        while len(xs) < batch:
            if self.rng.random() < ANYWHERE:
                i = int(self.rng.integers(0, len(self.scenes)))
                point = self.rng.uniform(0, FINE_PX - 1, 2)
            else:
                i, x, y = self.rows[int(self.rng.integers(0, len(self.rows)))]
                i = int(i)
                point = np.array([x, y]) + self.rng.integers(-JITTER_PX, JITTER_PX + 1, 2)
            point = np.round(point).astype(np.float32)
            label, offset = label_candidates(point[None], self.cubes[i], self.reach)
            if label[0] < 0:
                continue
            reference = self.fine.reference(self.scenes[i].design)
            if self.upright:
                x, offset = self.upright_input(i, reference, point, offset[0])
                classes.append(label[0])
                offsets.append(offset)
                xs.append(x)
                continue
            if self.wide:
                x = wide_input(self.cuts[i], reference, (float(point[0]), float(point[1])), draw_light(self.rng))
            else:
                raw = patches(self.cuts[i], reference, [tuple(point)], WINDOW)[0]
                x = as_planes(raw, draw_light(self.rng), 1.0)
            if self.contexts:
                near = context_windows(self.contexts[i].astype(np.float32), self.size, FINE_PX, [tuple(point)], WINDOW)
                x = np.concatenate([x, near[0]])
            k, flip = int(self.rng.integers(0, 4)), bool(self.rng.random() < 0.5)
            xs.append(turned(x, k, flip))
            classes.append(label[0])
            offsets.append(turned_offset(offset[0], k, flip))
        return torch.from_numpy(np.stack(xs)), torch.tensor(classes), torch.from_numpy(np.stack(offsets))

    def upright_input(
        self, i: int, reference: np.ndarray, point: np.ndarray, offset: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(the window at `point` of scene `i`, beside its board's `reference`, turned to its camera's bearing
        (`check.view_axes`) give or take `TURN_JITTER` and now and then mirrored about that bearing, in a varied
        light; the `offset` in it). A mirror keeps the camera below the cube, as the runtime sees it; quarter turns
        would not."""
        axes = off_bearing(self.rng, view_axes([(float(point[0]), float(point[1]))], self.eyes[i]), TURN_JITTER)
        raw = upright_patches(self.cuts[i], reference, [(float(point[0]), float(point[1]))], axes, WINDOW)[0]
        return as_planes(raw, draw_light(self.rng), 1.0), offsets_in_window(offset[None], axes)[0]


def wide_input(
    cut: np.ndarray, reference: np.ndarray, point: tuple[float, float], light: Light | None = None
) -> np.ndarray:
    """(12, WINDOW, WINDOW): the window at `point` and its wide window (`check.wide_windows`) as planes, both cut
    from one raw patch twice as wide (`check.patches`), the wide one binned 2 x 2 as the runtime's half-size cut is,
    and shown in one `light` (none: as they are)."""
    hx, hy = wide_centre(point)
    raw = patches(cut, reference, [(2 * hx + 1, 2 * hy + 1)], 2 * WINDOW)[0]
    x0 = round(point[0]) - WINDOW // 2 - int(2 * hx - WINDOW + 1)
    y0 = round(point[1]) - WINDOW // 2 - int(2 * hy - WINDOW + 1)
    fine = raw[y0 : y0 + WINDOW, x0 : x0 + WINDOW]
    r = raw.astype(np.float32)
    wide = (r[::2, ::2] + r[1::2, ::2] + r[::2, 1::2] + r[1::2, 1::2]) * np.float32(0.25)
    return np.concatenate([as_planes(fine, light, 1.0), as_planes(wide, light, 0.5)])


def as_planes(raw: np.ndarray, light: Light | None, scale: float) -> np.ndarray:
    """(6, h, w): a raw patch of the cut and the board's picture (`check.patches`), in `light` at `scale`
    (`augment.relight`), as the checker reads it."""
    if light is None:
        cut, ref = raw[..., :3], raw[..., 3:]
    else:
        cut, ref = relight(light, raw[..., :3], raw[..., 3:], scale)
    return net_input(grey_levels(cut), planes(grey_levels(ref)))[0]


def grey_levels(image: np.ndarray) -> np.ndarray:
    """Whole grey levels, halves rounded up as the runtime's 2x2 binning (INTER_AREA) rounds them."""
    return np.clip(np.floor(image + 0.5), 0, 255).astype(np.uint8)


class TorchReader(TorchSession):
    """The checker behind ONNX Runtime's `run` call, saying how many planes its windows have (`checker_planes`)."""

    def __init__(self, model: CheckNet) -> None:
        super().__init__(model)
        self.planes = model.planes


def train(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    net = SceneNet.load(args.models)
    scenes = [scene for folder in args.data for scene in load_scenes(folder)]
    boards, fine = BoardRefs(args.pieces, cut_side(scenes)), BoardRefs(args.pieces, FINE_PX)
    data = Windows(scenes, boards, fine, net, args.seed, args.context, args.target, args.reach, args.wide, args.upright)
    val = load_scenes(args.val)[: args.val_scenes]
    extra = CONTEXT if args.context else WIDE if args.wide else 0
    model = CheckNet(IMAGE_PLANES + extra, args.width)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    state = resume(args.out, model, opt, args.minutes)
    reader = TorchReader(model)

    def next_loss() -> torch.Tensor:
        x, classes, offsets = data.sample(args.batch)
        logits, predicted = model(x)
        loss = nn.functional.cross_entropy(logits, classes, label_smoothing=0.02)
        cube = classes > 0
        if cube.any():
            loss = loss + nn.functional.smooth_l1_loss(predicted[cube], offsets[cube], beta=0.1)
        return loss

    def evaluate() -> dict:
        model.eval()
        try:
            reach = args.reach * CUBE_SIDES_PX
            return evaluate_scenes(net, reader, reach, val, boards, fine, args.target, args.upright)
        finally:
            model.train()

    train_for_budget(
        model, opt, state, args.lr, next_loss, evaluate, args.out, ("windows", args.batch), every_s=args.every
    )


def export(run: Path, onnx_path: Path) -> None:
    checkpoint = torch.load(run / "last.pt", weights_only=False)
    weights = checkpoint["model"]
    first = weights["features.0.0.weight"]
    wide = weights.get("wide.0.0.weight")
    planes = int(first.shape[1]) + (WIDE if wide is not None else 0)
    width = int(first.shape[0]) / WIDTHS[0]
    model = CheckNet(planes, width, int(wide.shape[0]) / WIDTHS[0] if wide is not None else WIDE_WIDTH)
    model.load_state_dict(checkpoint["model"])
    dummy = torch.zeros(2, planes, WINDOW, WINDOW)
    export_onnx(
        model, dummy, onnx_path, ["x"], ["logits", "offset"], {"x": {0: "n"}, "logits": {0: "n"}, "offset": {0: "n"}}
    )
