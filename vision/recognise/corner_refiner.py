"""A second look at each found corner: its card's two edges, measured again on a patch cut around it.

Why: the corner finder places a corner well (a median 0.02 card widths) but its edges badly (a median 5.6 degrees
off, a seventh more than 30 degrees off or swapped), and the reader's crop is cut along those edges. On the test
scenes the reader read 66% of the found index corners cut along the finder's frame and 79% of the same corners cut
along their true frames (issue 18, sessions 13-16). The finder predicts its edges at stride 4 from a 256 px tile's
worth of context shared with everything else it does; this small net sees only one corner, at a fixed 40 px per
card width, turned so the finder's guess of the corner's inside points down and to the right, and says where the
edges really run. Turning the patch by the finder's own bisector keeps the usual case (a small correction) close to
one orientation; the net is also taught every quarter turn, so a reversed or swapped guess is corrected as well.

The patch is a pure rotation of the frame (never mirrored): the printed index tells the net which edge is the
card's short one, and the same patch serves both of a swapped pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from vision.recognise.corners import Corner, warp_area
from vision.recognise.models import ModelError, session

PATCH = 48  # the patch's side, pixels
PATCH_SPAN = 1.2  # ...and in card widths (as the finder measures the width), centred on the corner
MIN_WIDTH = 8.0  # px: a finder's width below this is taken as this (a patch must cover something)
N_OUT = 8  # a's direction (2), b's direction (2), log |a| and log |b| over the width, the point's offset (2)


def patch_axes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The patch's x and y axes as unit vectors in the frame: a rotation (never a mirror) that puts the bisector of
    the corner's two edges at 45 degrees, down and to the right."""
    ua = np.asarray(a, np.float64) / max(float(np.linalg.norm(a)), 1e-6)
    ub = np.asarray(b, np.float64) / max(float(np.linalg.norm(b)), 1e-6)
    d = ua + ub
    if float(np.linalg.norm(d)) < 1e-3:  # edges opposite: no inside to point at, take a's side
        d = np.array([-ua[1], ua[0]])
    angle = float(np.arctan2(d[1], d[0])) - np.pi / 4
    x = np.array([np.cos(angle), np.sin(angle)])
    return x, np.array([-x[1], x[0]])


def patch_width(a: np.ndarray) -> float:
    return max(float(np.linalg.norm(a)), MIN_WIDTH)


def patch_map(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """2x3 affine from patch pixels (u, v) to frame pixels."""
    x, y = patch_axes(a, b)
    step = PATCH_SPAN * patch_width(a) / PATCH  # frame pixels per patch pixel
    origin = np.asarray(point, np.float64) - (x + y) * (PATCH / 2 - 0.5) * step
    return np.column_stack([x * step, y * step, origin])


def refiner_patch(image: np.ndarray, point: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The grey PATCH x PATCH patch the refiner reads for a corner found at `point` with edges `a`, `b`."""
    patch = warp_area(image, patch_map(point, a, b), (PATCH, PATCH))
    return cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY) if patch.ndim == 3 else patch


def patch_blob(patches: np.ndarray) -> np.ndarray:
    """(n, PATCH, PATCH) uint8 -> (n, 1, PATCH, PATCH) float32, each patch to zero mean and unit spread: the
    edges are what matter, not the light."""
    x = patches.astype(np.float32)
    mean = x.mean(axis=(1, 2), keepdims=True)
    std = x.std(axis=(1, 2), keepdims=True)
    return ((x - mean) / np.maximum(std, 4.0))[:, None]


def frame_targets(
    found: tuple[np.ndarray, np.ndarray, np.ndarray], true: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> np.ndarray:
    """What the refiner should say for a corner found as `found` (point, a, b) that truly is `true`, in the patch's
    own terms (N_OUT numbers)."""
    point, a, b = (np.asarray(v, np.float64) for v in found)
    tp, ta, tb = (np.asarray(v, np.float64) for v in true)
    x, y = patch_axes(a, b)
    width = patch_width(a)

    def local(v: np.ndarray) -> np.ndarray:
        return np.array([v @ x, v @ y])

    la, lb = local(ta), local(tb)
    return np.concatenate(
        [
            la / max(float(np.linalg.norm(la)), 1e-6),
            lb / max(float(np.linalg.norm(lb)), 1e-6),
            [
                np.log(max(float(np.linalg.norm(ta)), 1e-3) / width),
                np.log(max(float(np.linalg.norm(tb)), 1e-3) / width),
            ],
            local(tp - point) / width,
        ]
    ).astype(np.float32)


def refined_frame(
    point: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray, move_point: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The corner frame the refiner's output `out` (N_OUT numbers, in `frame_targets`' terms) says, in frame
    pixels."""
    x, y = patch_axes(a, b)
    width = patch_width(a)
    out = np.asarray(out, np.float64)

    def frame_dir(v: np.ndarray) -> np.ndarray:
        d = v[0] * x + v[1] * y
        return d / max(float(np.linalg.norm(d)), 1e-6)

    la, lb = np.exp(np.clip(out[4:6], -1.5, 1.5)) * width
    shift = (out[6] * x + out[7] * y) * width if move_point else np.zeros(2)
    return (
        (np.asarray(point, np.float64) + shift).astype(np.float32),
        (frame_dir(out[0:2]) * la).astype(np.float32),
        (frame_dir(out[2:4]) * lb).astype(np.float32),
    )


class CornerRefiner:
    """Runs the refiner's ONNX graph on a batch of found corners."""

    def __init__(self, path: Path, threads: int = 2) -> None:
        self.path = path
        self.session = session(path, threads)
        shape = self.session.get_outputs()[0].shape
        if shape[-1] != N_OUT:
            raise ModelError(f"{path}: {shape[-1]} outputs, expected {N_OUT} (a corner refiner)")
        self.input_name = self.session.get_inputs()[0].name

    def raw(self, frame: np.ndarray, frames: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
        if not frames:
            return np.zeros((0, N_OUT), np.float32)
        patches = np.stack([refiner_patch(frame, p, a, b) for p, a, b in frames])
        return self.session.run(None, {self.input_name: patch_blob(patches)})[0]

    def refine(self, frame: np.ndarray, corners: Sequence[Corner], move_point: bool = True) -> list[Corner]:
        """The same corners with their edges (and points) measured again."""
        out = self.raw(frame, [(c.point, c.a, c.b) for c in corners])
        refined = []
        for c, row in zip(corners, out, strict=True):
            p, a, b = refined_frame(c.point, c.a, c.b, row, move_point)
            refined.append(Corner(c.kind, c.score, p, a, b))
        return refined
