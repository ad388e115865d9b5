"""A second look at each found corner: its card's two edges, measured again on a patch cut around it.

Why: the corner finder places a corner well (a median 0.02 card widths) but its edges badly (a median 5.6 degrees
off, a seventh more than 30 degrees off or swapped), and the reader's crop is cut along those edges. On the test
scenes the reader read 66% of the found index corners cut along the finder's frame and 79% of the same corners cut
along their true frames (issue 18, sessions 13-16). The finder predicts its edges at stride 4 from a 256 px tile's
worth of context shared with everything else it does; this small net sees only one corner, at a fixed 40 px per
card width, turned so the finder's guess of the corner's inside points down and to the right, and says where the
edges really run. Turning the patch by the finder's own bisector keeps the usual case (a small correction) close to
one orientation; a tenth of its lessons are also turned by quarter turns, so a reversed guess is corrected as well.

The patch is a pure rotation of the frame (never mirrored), and the net says two different things about it. First
the corner's two edges in the order they come going clockwise round the card's inside (`e_x` then `e_y`), which the
picture always shows. Then which of them is the card's short edge, which only an index (or enough of the card) shows:
a back's corner, or the plain corner of a two-index deck, looks the same either way round within a card's width.
Asked for `a` and `b` directly, the first net averaged the two answers where it could not tell them apart, and put
both edges along the bisector (session 17: a quarter of its edges were grossly off, against the finder's 14%). So
where the net is unsure which edge is the short one, the finder's word (it sees the whole card) decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from vision.recognise.corners import Corner, Pyramid, right_handed
from vision.recognise.models import ModelError, session

PATCH = 48  # the patch's side, pixels
PATCH_SPAN = 1.2  # ...and in card widths (as the finder measures the width), centred on the corner
MIN_WIDTH = 8.0  # px: a finder's width below this is taken as this (a patch must cover something)
N_TERMS = 8  # a frame in the patch's terms: a's direction (2), b's (2), log |a| and log |b| over the width, offset (2)
N_OUT = 9  # the net: e_x's direction (2), e_y's (2), their log lengths, the offset (2), the logit that a is e_x
# The net's word on which edge is the short one is taken when it is at least this sure. On the validation scenes' found
# corners (session 17, the shipped net): edges grossly off at 0.5: 16.9%, 0.8: 13.4%, 0.95: 11.3%, 0.99: 10.4%,
# never (the finder's word always): 10.9%; the finder alone: 13.6%
SURE = 0.99


def patch_axes_of(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For corners with edges a, b (each (n, 2)): the patch's x and y axes as unit vectors in the frame (each
    (n, 2)), a rotation (never a mirror) that puts the bisector of the corner's two edges at 45 degrees, down and to
    the right."""
    a, b = np.asarray(a, np.float64).reshape(-1, 2), np.asarray(b, np.float64).reshape(-1, 2)
    ua = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-6)
    ub = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-6)
    d = ua + ub
    opposite = np.linalg.norm(d, axis=1) < 1e-3  # edges opposite: no inside to point at, take a's side
    d[opposite] = np.stack([-ua[opposite, 1], ua[opposite, 0]], axis=1)
    angle = np.arctan2(d[:, 1], d[:, 0]) - np.pi / 4
    x = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    return x, np.stack([-x[:, 1], x[:, 0]], axis=1)


def patch_axes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`patch_axes_of` for one corner."""
    x, y = patch_axes_of(a, b)
    return x[0], y[0]


def patch_widths(a: np.ndarray) -> np.ndarray:
    return np.maximum(np.linalg.norm(np.asarray(a, np.float64).reshape(-1, 2), axis=1), MIN_WIDTH)


def patch_width(a: np.ndarray) -> float:
    return float(patch_widths(a)[0])


def patch_maps(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, 2, 3) affines from patch pixels (u, v) to frame pixels, one per corner."""
    x, y = patch_axes_of(a, b)
    step = (PATCH_SPAN * patch_widths(a) / PATCH)[:, None]  # frame pixels per patch pixel
    origin = np.asarray(points, np.float64).reshape(-1, 2) - (x + y) * (PATCH / 2 - 0.5) * step
    return np.stack([x * step, y * step, origin], axis=2)


def patch_map(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """2x3 affine from patch pixels (u, v) to frame pixels."""
    return patch_maps(point, a, b)[0]


class PatchCutter:
    """Patches for every corner of one frame, fast: the frame turned grey once, and read from its halvings by area as
    big corners need (`corners.Pyramid`: session 17, 120 us a patch shrunk on its own, against about 45; the patches
    differ by 1.6 grey levels on average, and the refiner reads both alike)."""

    def __init__(self, image: np.ndarray) -> None:
        self.pyramid = Pyramid(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image)

    def cut_all(self, points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """(n, PATCH, PATCH) patches for n corners (points, a, b each (n, 2))."""
        maps = patch_maps(points, a, b)
        if not len(maps):
            return np.zeros((0, PATCH, PATCH), np.uint8)
        return np.stack([self.pyramid.warp(m, (PATCH, PATCH)) for m in maps])

    def cut(self, point: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self.pyramid.warp(patch_map(point, a, b), (PATCH, PATCH))


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
    """The true frame `true` (point, a, b) of a corner found as `found`, in the patch's own terms (N_TERMS numbers;
    `ordered_edges` turns them into what the net is taught)."""
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


def ordered_edges(terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Frame terms (n, N_TERMS) -> the net's regression targets (n, N_OUT - 1: e_x, e_y, their log lengths, the
    offset) and its class target (n,: 1 where a is e_x, a card's top-left or bottom-right corner seen from above)."""
    terms = np.asarray(terms, np.float32)
    a, b = terms[:, 0:2], terms[:, 2:4]
    right = right_handed(a, b)
    first = np.where(right[:, None], a, b)
    second = np.where(right[:, None], b, a)
    lengths = np.where(right[:, None], terms[:, 4:6], terms[:, 5:3:-1])
    return np.concatenate([first, second, lengths, terms[:, 6:8]], axis=1), right.astype(np.float32)


def frame_terms(out: np.ndarray, finder_right: np.ndarray, sure: float = SURE) -> np.ndarray:
    """The net's outputs (n, N_OUT) as frame terms (n, N_TERMS): `a` is e_x where the net says so at least `sure`,
    e_y where it says the other at least that surely, and where the finder's frame had it (`finder_right`: its
    handedness, True for a right-handed frame) in between."""
    out = np.asarray(out, np.float32)
    p = 1.0 / (1.0 + np.exp(-out[:, 8]))
    right = np.where(p >= sure, True, np.where(p <= 1 - sure, False, np.asarray(finder_right, bool)))
    a = np.where(right[:, None], out[:, 0:2], out[:, 2:4])
    b = np.where(right[:, None], out[:, 2:4], out[:, 0:2])
    lengths = np.where(right[:, None], out[:, 4:6], out[:, 5:3:-1])
    return np.concatenate([a, b, lengths, out[:, 6:8]], axis=1)


def refined_frames(
    points: np.ndarray, a: np.ndarray, b: np.ndarray, terms: np.ndarray, move_point: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The corner frames (points, a, b: each (n, 2), frame pixels) that `terms` (n, N_TERMS), read in the patches of
    the found frames `points`, `a`, `b`, say."""
    x, y = patch_axes_of(a, b)
    width = patch_widths(a)[:, None]
    terms = np.asarray(terms, np.float64).reshape(-1, N_TERMS)

    def frame_dirs(v: np.ndarray) -> np.ndarray:
        d = v[:, :1] * x + v[:, 1:2] * y
        return d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-6)

    lengths = np.exp(np.clip(terms[:, 4:6], -1.5, 1.5)) * width
    shift = (terms[:, 6:7] * x + terms[:, 7:8] * y) * width if move_point else 0.0
    new_points = np.asarray(points, np.float64).reshape(-1, 2) + shift
    return (
        new_points.astype(np.float32),
        (frame_dirs(terms[:, 0:2]) * lengths[:, :1]).astype(np.float32),
        (frame_dirs(terms[:, 2:4]) * lengths[:, 1:2]).astype(np.float32),
    )


def refined_frame(
    point: np.ndarray, a: np.ndarray, b: np.ndarray, terms: np.ndarray, move_point: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`refined_frames` for one corner."""
    p, na, nb = refined_frames(point, a, b, terms, move_point)
    return p[0], na[0], nb[0]


class CornerRefiner:
    """Runs the refiner's ONNX graph on a batch of found corners."""

    def __init__(self, path: Path, threads: int = 2) -> None:
        self.path = path
        self.session = session(path, threads)
        shape = self.session.get_outputs()[0].shape
        if shape[-1] != N_OUT:
            raise ModelError(f"{path}: {shape[-1]} outputs, expected {N_OUT} (a corner refiner)")
        self.input_name = self.session.get_inputs()[0].name

    def raw(self, frame: np.ndarray, points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The net's outputs (n, N_OUT) for corners found at `points` with edges `a`, `b` (each (n, 2))."""
        if not len(points):
            return np.zeros((0, N_OUT), np.float32)
        patches = PatchCutter(frame).cut_all(points, a, b)
        return self.session.run(None, {self.input_name: patch_blob(patches)})[0]

    def refine(
        self, frame: np.ndarray, corners: Sequence[Corner], move_point: bool = True, lengths: bool = True
    ) -> list[Corner]:
        """The same corners with their edges' directions measured again; their points and edge lengths too, unless
        `move_point` or `lengths` is False (then the finder's are kept)."""
        if not corners:
            return []
        points = np.array([c.point for c in corners], np.float64)
        a = np.array([c.a for c in corners], np.float64)
        b = np.array([c.b for c in corners], np.float64)
        terms = frame_terms(self.raw(frame, points, a, b), right_handed(a, b))
        if not lengths:
            own = np.stack([np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)], axis=1)
            terms[:, 4:6] = np.log(np.maximum(own, 1e-3) / patch_widths(a)[:, None])
        new_points, new_a, new_b = refined_frames(points, a, b, terms, move_point)
        return [
            Corner(c.kind, c.score, p, na, nb) for c, p, na, nb in zip(corners, new_points, new_a, new_b, strict=True)
        ]
