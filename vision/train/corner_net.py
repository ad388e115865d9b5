"""The corner finder: a small fully-convolutional net trained on full-resolution tiles of rendered scenes.

Why tiles: a corner and its index are local, so a 256 px tile at the frame's own resolution holds all the evidence
one corner needs, at a twentieth of a whole frame's cost per step; every tile is drawn at a random scale and angle,
so one stored scene yields many distinct samples. The net ends at stride 4 with CenterNet-style heat maps (face-up
and face-down corners), a sub-cell offset, and the card's two edge vectors at each corner.

    python -m vision.train.corner_net train --scenes out/corner_scenes/train --out out/runs/corners --minutes 60
    python -m vision.train.corner_net export --run out/runs/corners --onnx models/cards-corners.onnx
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from vision.recognise.corners import CORNER_KINDS, N_OUTPUTS, REG_SCALE, STRIDE, printed_corner
from vision.train.budget import add_budget_args, add_export_parser, cosine_lr, export_onnx, log_row, save_checkpoint
from vision.train.corner_data import SceneGeometry, stored_scenes

TILE = 256
SCALE_RANGE = (0.55, 1.9)  # tiles are drawn at these zooms of the rendered frame: cards 25-450 px wide
POSITIVE = 0.5  # a corner this visible is a target
IGNORED = 0.15  # between this and POSITIVE a corner is neither taught nor punished
SIGMA = 1.0  # heat-map peak width, in output cells


# ------------------------------------------------------------------------------------------------------ model


def conv_bn(cin: int, cout: int, k: int = 3, stride: int = 1, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class Separable(nn.Module):
    """Depthwise 3x3 then pointwise: the cheap block every stage is built from; residual where shapes match."""

    def __init__(self, cin: int, cout: int, stride: int = 1, dilation: int = 1) -> None:
        super().__init__()
        self.dw = nn.Sequential(
            nn.Conv2d(cin, cin, 3, stride, dilation, dilation=dilation, groups=cin, bias=False),
            nn.BatchNorm2d(cin),
            nn.ReLU(inplace=True),
        )
        self.pw = nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pw(self.dw(x))
        return F.relu(y + x if self.residual else y)


class CornerNet(nn.Module):
    """Stride-4 output from a stride-32 context: corners of cards up to a few hundred pixels wide see their edges."""

    def __init__(self, width: int = 1) -> None:
        super().__init__()
        c = [16 * width, 24 * width, 48 * width, 96 * width, 128 * width]
        self.stem = nn.Sequential(conv_bn(3, c[0], 3, 2), Separable(c[0], c[1], 2), Separable(c[1], c[1]))
        self.s8 = nn.Sequential(Separable(c[1], c[2], 2), Separable(c[2], c[2]), Separable(c[2], c[2]))
        self.s16 = nn.Sequential(
            Separable(c[2], c[3], 2), Separable(c[3], c[3]), Separable(c[3], c[3], dilation=2), Separable(c[3], c[3])
        )
        self.s32 = nn.Sequential(Separable(c[3], c[4], 2), Separable(c[4], c[4]), Separable(c[4], c[4], dilation=2))
        self.up32 = conv_bn(c[4], c[3], 1)
        self.up16 = conv_bn(c[3], c[2], 1)
        self.up8 = conv_bn(c[2], c[1], 1)
        self.mix16 = Separable(c[3], c[3])
        self.mix8 = Separable(c[2], c[2])
        self.mix4 = Separable(c[1], c[1])
        self.head = nn.Sequential(Separable(c[1], 32), nn.Conv2d(32, N_OUTPUTS, 1))
        nn.init.constant_(self.head[-1].bias[:2], -4.0)  # CenterNet's prior: corners are rare (and face up)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x4 = self.stem(x)
        x8 = self.s8(x4)
        x16 = self.s16(x8)
        x32 = self.s32(x16)
        y16 = self.mix16(x16 + F.interpolate(self.up32(x32), scale_factor=2.0, mode="nearest"))
        y8 = self.mix8(x8 + F.interpolate(self.up16(y16), scale_factor=2.0, mode="nearest"))
        y4 = self.mix4(x4 + F.interpolate(self.up8(y8), scale_factor=2.0, mode="nearest"))
        return self.head(y4)


# ------------------------------------------------------------------------------------------------------- data


def from_onnx(model: CornerNet, path: Path) -> CornerNet:
    """The weights of an exported finder graph put back into `model`. The exporter folded every batch norm into the
    convolution before it, so each convolution takes the folded weights, and its batch norm becomes the identity plus
    the folded bias: in eval mode the net computes what the graph does (the caller checks). Fine-tune it with frozen
    batch norms (`freeze_batch_norms`): batch statistics would undo the folding. Why: the shipped finder's training
    checkpoint was lost (issue 20 found it overwritten), and its graph is all that is left of 82 minutes of training."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    convs_onnx = [node for node in graph.node if node.op_type == "Conv"]
    order: list[nn.Conv2d] = []
    hooks = [
        m.register_forward_hook(lambda m, _i, _o: order.append(m)) for m in model.modules() if isinstance(m, nn.Conv2d)
    ]
    with torch.no_grad():
        model.eval()(torch.zeros(1, 3, 64, 64))
    for h in hooks:
        h.remove()
    if len(order) != len(convs_onnx):
        raise ValueError(f"{path}: {len(convs_onnx)} convolutions, the finder has {len(order)} (not this net's graph)")
    norms = {
        conv: bn
        for seq in model.modules()
        for conv, bn in zip(seq.children(), list(seq.children())[1:], strict=False)
        if isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d)
    }
    with torch.no_grad():
        for conv, node in zip(order, convs_onnx, strict=True):
            w = torch.from_numpy(weights[node.input[1]].copy())
            b = torch.from_numpy(weights[node.input[2]].copy()) if len(node.input) > 2 else torch.zeros(w.shape[0])
            if w.shape != conv.weight.shape:
                raise ValueError(
                    f"{path}: a convolution of {tuple(w.shape)} where the finder has {tuple(conv.weight.shape)}"
                )
            conv.weight.copy_(w)
            bn = norms.get(conv)
            if bn is None:
                conv.bias.copy_(b)
                continue
            bn.weight.fill_(1.0)
            bn.bias.copy_(b)
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
    return model


def freeze_batch_norms(model: nn.Module) -> None:
    """Batch norms in eval mode (their running statistics and affine kept as they are) while the rest trains."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
            m.weight.requires_grad_(False)


def corner_targets(geometry: SceneGeometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every printed corner of every card: point, edge a, edge b, heat channel, visibility."""
    points, edges_a, edges_b, kinds, vis = [], [], [], [], []
    for n in range(len(geometry.codes)):
        for k in range(4):
            point, a, b = printed_corner(geometry.quads[n], k)
            points.append(point)
            edges_a.append(a)
            edges_b.append(b)
            kinds.append(0 if geometry.face_up[n] else 1)
            vis.append(geometry.corner_visible[n, k])
    if not points:
        return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, int), np.zeros(0)
    return np.array(points), np.array(edges_a), np.array(edges_b), np.array(kinds), np.array(vis)


def tile_matrix(centre: np.ndarray, scale: float, angle: float) -> np.ndarray:
    """2x3 map from frame pixels to a TILE x TILE tile centred on `centre`, zoomed and turned."""
    m = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), angle, scale)
    m[:, 2] += TILE / 2 - centre
    return m


def render_targets(
    m: np.ndarray, points: np.ndarray, a: np.ndarray, b: np.ndarray, kinds: np.ndarray, vis: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Heat (kinds, g, g), heat-loss weight (kinds, g, g), regression (6, g, g) and its mask (g, g) for one tile."""
    g = TILE // STRIDE
    heat = np.zeros((len(CORNER_KINDS), g, g), np.float32)  # 0: a corner's heat; 1: 1 where it is face down
    weight = np.ones_like(heat)
    weight[1] = 0.0  # the face-down channel is taught only around corners
    reg = np.zeros((6, g, g), np.float32)
    mask = np.zeros((g, g), np.float32)
    if len(points) == 0:
        return heat, weight, reg, mask
    p = points @ m[:, :2].T + m[:, 2]
    ta, tb = a @ m[:, :2].T, b @ m[:, :2].T
    cells = p / STRIDE
    yy, xx = np.mgrid[0:g, 0:g].astype(np.float32) + 0.5
    for i in np.nonzero((cells > -2).all(axis=1) & (cells < g + 2).all(axis=1))[0]:
        cx, cy = cells[i]
        k = int(kinds[i])
        if vis[i] < IGNORED:
            continue
        ix, iy = math.floor(cx), math.floor(cy)
        # centred on the corner's own cell, so that cell is exactly 1 (CenterNet's positive); the offset says where
        # in the cell the corner lies
        blob = np.exp(-((xx - ix - 0.5) ** 2 + (yy - iy - 0.5) ** 2) / (2 * SIGMA**2))
        if vis[i] < POSITIVE:
            weight[0][blob > 0.05] = 0.0
            continue
        heat[0] = np.maximum(heat[0], blob)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                x, y = ix + dx, iy + dy
                if 0 <= x < g and 0 <= y < g:
                    reg[:, y, x] = [cx - x, cy - y, *(ta[i] / REG_SCALE), *(tb[i] / REG_SCALE)]
                    mask[y, x] = 1.0 if (dx, dy) == (0, 0) else max(mask[y, x], 0.5)
                    heat[1, y, x] = float(k == 1)
                    weight[1, y, x] = 1.0
    return heat, weight, reg, mask


def photometric(rng: np.random.Generator, tile: np.ndarray) -> np.ndarray:
    """Light jitter beyond the renderer's camera model: exposure, contrast, a colour cast, sometimes blur."""
    t = tile.astype(np.float32)
    t = (t - 128) * rng.uniform(0.75, 1.25) + 128 + rng.uniform(-25, 25)
    t *= rng.uniform(0.9, 1.1, size=3)
    if rng.random() < 0.2:
        t = cv2.GaussianBlur(t, (0, 0), rng.uniform(0.5, 1.3))
    return np.clip(t, 0, 255).astype(np.uint8)


class TileSampler:
    """Random tiles of stored scenes with their targets; each decoded frame gives several tiles."""

    def __init__(self, scenes: Sequence[Path], seed: int, per_frame: int = 4) -> None:
        if not scenes:
            raise ValueError("no stored scenes to train on")
        self.scenes = list(scenes)
        self.rng = np.random.default_rng(seed)
        self.per_frame = per_frame

    def frame_tiles(self) -> list[tuple[np.ndarray, ...]]:
        stem = self.scenes[int(self.rng.integers(len(self.scenes)))]
        image = cv2.imread(str(stem.with_suffix(".jpg")), cv2.IMREAD_COLOR)
        points, a, b, kinds, vis = corner_targets(SceneGeometry.load(stem.with_suffix(".npz")))
        seen = np.nonzero(vis >= POSITIVE)[0]
        out = []
        for _ in range(self.per_frame):
            if len(seen) and self.rng.random() < 0.75:
                centre = points[int(self.rng.choice(seen))] + self.rng.uniform(-90, 90, 2)
            else:
                centre = self.rng.uniform([0, 0], [image.shape[1], image.shape[0]])
            scale = float(np.exp(self.rng.uniform(*np.log(SCALE_RANGE))))
            m = tile_matrix(centre, scale, float(self.rng.uniform(-180, 180)))
            tile = cv2.warpAffine(
                image,
                m,
                (TILE, TILE),
                flags=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_CONSTANT,
                borderValue=(114, 114, 114),
            )
            out.append((photometric(self.rng, tile), *render_targets(m, points, a, b, kinds, vis)))
        return out

    def batch(self, size: int) -> tuple[torch.Tensor, ...]:
        items: list[tuple[np.ndarray, ...]] = []
        while len(items) < size:
            items += self.frame_tiles()
        items = items[:size]
        x = np.stack([t[0][..., ::-1].transpose(2, 0, 1) for t in items]).astype(np.float32) / 255.0
        return tuple(
            torch.from_numpy(np.ascontiguousarray(v))
            for v in (x, *(np.stack([t[i] for t in items]) for i in range(1, 5)))
        )


# ------------------------------------------------------------------------------------------------------- loss


def focal_loss(logits: torch.Tensor, heat: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss, normalised by the number of peaks."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = (heat > 0.99).float()
    pos_loss = -torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = -torch.log(1 - p) * p**2 * (1 - heat) ** 4 * (1 - pos) * weight
    return (pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1.0)


def regression_loss(pred: torch.Tensor, reg: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Offset L1, and edge-vector L1 relative to the edge's length (a 5 px error matters on a small card only).

    Regressing the two vectors directly learns which edge is the short one faster than asking it as a yes-or-no
    question beside the edges' bisector (session 14, on a lent GPU: at the CPU recipe's 144,000 tiles that head
    still swapped the edges at 44% of found corners; this one, at 11%; see models/cards-corners.md)."""
    m = mask.unsqueeze(1)
    total = mask.sum().clamp(min=1.0)
    offset = ((pred[:, :2] - reg[:, :2]).abs() * m).sum() / total
    length = torch.cat([reg[:, 2:4].norm(dim=1, keepdim=True)] * 2 + [reg[:, 4:6].norm(dim=1, keepdim=True)] * 2, 1)
    edges = ((pred[:, 2:] - reg[:, 2:]).abs() / (length + 0.2) * m).sum() / total
    return offset, edges


def losses(out: torch.Tensor, heat: torch.Tensor, weight: torch.Tensor, reg: torch.Tensor, mask: torch.Tensor) -> dict:
    """Corner heat (focal), face up or down where there is a corner (plain cross-entropy: an easy, dense signal
    that two competing heat maps learnt only slowly), offset and edges."""
    k = len(CORNER_KINDS)
    offset, edges = regression_loss(out[:, k:], reg, mask)
    kind = F.binary_cross_entropy_with_logits(out[:, 1], heat[:, 1], weight=weight[:, 1], reduction="sum")
    kind = kind / weight[:, 1].sum().clamp(min=1.0)
    return {"heat": focal_loss(out[:, :1], heat[:, :1], weight[:, :1]), "kind": kind, "offset": offset, "edges": edges}


# ------------------------------------------------------------------------------------------------------ train


class TileStream(torch.utils.data.IterableDataset):
    """Batches of tiles from worker processes, each with its own sampler: a machine with many cores (the lent GPU
    machine) keeps its accelerator fed; on this 2-core CPU training samples in its own thread (`workers=0`)."""

    def __init__(self, scenes: Sequence[Path], seed: int, batch: int) -> None:
        self.scenes, self.seed, self.batch = list(scenes), seed, batch

    def __iter__(self):  # noqa: ANN204 (an iterator of tensor tuples)
        info = torch.utils.data.get_worker_info()
        if info is not None:
            cv2.setNumThreads(1)  # many workers, one core each
        sampler = TileSampler(self.scenes, self.seed + 7919 * (info.id if info else 0))
        while True:
            yield sampler.batch(self.batch)


def train(
    scenes: Sequence[Path],
    run: Path,
    minutes: float,
    batch: int,
    lr: float,
    seed: int,
    threads: int,
    val: Sequence[Path] = (),
    steps: int = 0,
    device: str = "cpu",
    workers: int = 0,
    init_onnx: Path | None = None,
) -> None:
    """Cosine schedule over a fixed time budget (what a CPU session can spend) or, with `steps`, over that many
    steps (to repeat a CPU budget's steps on a faster machine), checkpointed every few minutes and resumed from the
    last checkpoint: the curve in run/curve.jsonl continues across interruptions."""
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    run.mkdir(parents=True, exist_ok=True)
    model = CornerNet().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    ckpt = run / "last.pt"
    state = {"step": 0, "seconds": 0.0, "budget_s": minutes * 60, "budget_steps": steps, "frozen_bn": False}
    if init_onnx is not None and not ckpt.exists():  # a fine-tune of an exported finder: batch norms frozen
        from_onnx(model.cpu(), init_onnx).to(device)
        state["frozen_bn"] = True
        print(f"from {init_onnx}, batch norms frozen")
    if ckpt.exists():
        saved = torch.load(ckpt, weights_only=False, map_location=device)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        state = {"budget_steps": 0, **saved["state"]}
        state["budget_s"] = max(state["budget_s"], minutes * 60)
        state["budget_steps"] = max(state["budget_steps"], steps)
        print(f"resumed at step {state['step']}, {state['seconds'] / 60:.1f} of {state['budget_s'] / 60:.0f} min")

    def progress() -> float:
        if state["budget_steps"]:
            return state["step"] / state["budget_steps"]
        return state["seconds"] / state["budget_s"]

    stream = TileStream([s for folder in scenes for s in stored_scenes(folder)], seed + state["step"], batch)
    batches = iter(
        torch.utils.data.DataLoader(stream, batch_size=None, num_workers=workers, persistent_workers=workers > 0)
        if workers
        else stream
    )
    model.train()
    if state.get("frozen_bn"):
        freeze_batch_norms(model)
    log = (run / "curve.jsonl").open("a")
    running: dict[str, float] = {}
    last_save = time.time()
    while progress() < 1.0:
        t0 = time.time()
        cosine_lr(opt, lr, state["step"], progress(), warmup=200)
        x, heat, weight, reg, mask = (t.to(device, non_blocking=True) for t in next(batches))
        parts = losses(model(x), heat, weight, reg, mask)
        loss = parts["heat"] + parts["kind"] + parts["offset"] + 2.0 * parts["edges"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        state["step"] += 1
        state["seconds"] += time.time() - t0
        if state["step"] % 50 == 0:
            for key, value in parts.items():
                v = float(value.detach())
                running[key] = 0.9 * running.get(key, v) + 0.1 * v
            row = {"step": state["step"], "minutes": round(state["seconds"] / 60, 2), "tiles": state["step"] * batch}
            row |= {k: round(v, 4) for k, v in running.items()}
            log_row(log, row)
        done = progress() >= 1.0
        if val and (state["step"] % 1500 == 0 or done):
            log_row(log, {"step": state["step"], "minutes": round(state["seconds"] / 60, 2), **evaluate(model, val)})
        if time.time() - last_save > 180 or done:
            save_checkpoint(run, {"model": model.state_dict(), "opt": opt.state_dict(), "state": state}, ckpt.name)
            last_save = time.time()
    log.close()


def evaluate(model: CornerNet, scenes: Sequence[Path], min_score: float = 0.35) -> dict[str, float | None]:
    """The net in training, scored as the runtime decodes it (`score_finder`)."""
    from vision.recognise.corners import decode, finder_blob

    device = next(model.parameters()).device

    def find(frame: np.ndarray) -> list:
        blob, scale = finder_blob(frame)
        with torch.no_grad():
            return decode(model(torch.from_numpy(blob).to(device)).cpu().numpy(), min_score, scale)

    was_training = model.training
    frozen = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d) and not m.training]
    model.eval()
    try:
        return score_finder(find, scenes)
    finally:
        model.train(was_training)
        for m in frozen:
            m.eval()


def score_finder(find: Callable[[np.ndarray], list], scenes: Sequence[Path]) -> dict[str, float | None]:
    """Corner recall, point and edge errors, and false corners per frame on whole stored frames; `find` is a net in
    training or an exported graph, so a new finder is scored beside the shipped one."""
    from vision.recognise.bench_stages import StageCounts

    counts = StageCounts()
    false_corners = 0
    for stem in scenes:
        frame = cv2.imread(str(stem.with_suffix(".jpg")), cv2.IMREAD_COLOR)
        g = SceneGeometry.load(stem.with_suffix(".npz"))
        found = find(frame)
        cards = [
            {
                "quad": g.quads[n],
                "face_up": bool(g.face_up[n]),
                "code": str(g.codes[n]),
                "corner_visible": g.corner_visible[n].tolist(),
                "index_fraction": g.index_visible[n].tolist(),
            }
            for n in range(len(g.codes))
        ]
        counts.add_finder(cards, found)
        points = g.quads.reshape(-1, 2)
        widths = np.repeat(np.linalg.norm(g.quads[:, 1] - g.quads[:, 0], axis=1), 4)
        for c in found:
            if not len(points) or (np.linalg.norm(points - c.point, axis=1) / np.maximum(widths, 1)).min() > 0.15:
                false_corners += 1
    finder = counts.summary()["corner_finder"]
    return {
        "val_index_corner_recall": finder["index_corner_recall"],
        "val_down_corner_recall": finder["face_down_corner_recall"],
        "val_point_error": finder["median_point_error_card_widths"],
        "val_edge_error": finder["median_edge_error_card_widths"],
        "val_edge_turn_deg": finder["median_edge_turn_deg"],
        "val_gross_edges": finder["gross_edge_share"],
        "val_swapped_edges": finder["swapped_edge_share"],
        "val_false_corners_per_frame": false_corners / max(len(scenes), 1),
    }


def export(run: Path, onnx_path: Path) -> None:
    """The trained net as ONNX with free height and width (multiples of 32), for ONNX Runtime."""
    model = CornerNet()
    model.load_state_dict(torch.load(run / "last.pt", weights_only=False)["model"])
    dynamic = {"images": {2: "height", 3: "width"}, "corners": {2: "gh", 3: "gw"}}
    export_onnx(model, torch.zeros(1, 3, 736, 1280), onnx_path, ["images"], ["corners"], dynamic)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--scenes", type=Path, nargs="+", required=True, help="folders of stored scenes")
    add_budget_args(t, minutes=60, batch=24, lr=3e-3, threads=2)
    t.add_argument("--steps", type=int, default=0, help="a budget of steps instead of minutes")
    t.add_argument("--device", default="cpu", help="torch device (cpu, or cuda on a lent GPU machine)")
    t.add_argument("--workers", type=int, default=0, help="tile-sampling processes (0: in the training thread)")
    t.add_argument("--val", type=Path, help="a folder of stored validation scenes (recall logged every 1500 steps)")
    t.add_argument("--val-scenes", type=int, default=60)
    t.add_argument(
        "--init-onnx",
        type=Path,
        help="start a new run from an exported finder graph (e.g. models/cards-corners.onnx), batch norms frozen",
    )
    v = sub.add_parser("evaluate")
    v.add_argument("--run", type=Path, help="a training run (its last.pt)")
    v.add_argument("--onnx", type=Path, help="or an exported finder, e.g. models/cards-corners.onnx")
    v.add_argument("--min-score", type=float, default=0.35)
    v.add_argument("--scenes", type=Path, required=True)
    v.add_argument("--n", type=int, default=100)
    add_export_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "train":
        val = stored_scenes(args.val)[: args.val_scenes] if args.val else []
        budget = {"minutes": args.minutes, "steps": args.steps}
        machine = {"threads": args.threads, "device": args.device, "workers": args.workers}
        train(
            args.scenes,
            args.out,
            batch=args.batch,
            lr=args.lr,
            seed=args.seed,
            val=val,
            init_onnx=args.init_onnx,
            **budget,
            **machine,
        )
    elif args.command == "evaluate":
        scenes = stored_scenes(args.scenes)[: args.n]
        if args.onnx:
            from vision.recognise.corners import CornerFinder

            finder = CornerFinder(args.onnx)
            print(score_finder(lambda frame: finder.find(frame, args.min_score), scenes))
        elif args.run:
            torch.set_num_threads(2)
            model = CornerNet()
            model.load_state_dict(torch.load(args.run / "last.pt", weights_only=False)["model"])
            print(evaluate(model, scenes, args.min_score))
        else:
            parser.error("evaluate needs --run or --onnx")
    else:
        export(args.run, args.onnx)


if __name__ == "__main__":
    main()
