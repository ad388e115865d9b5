"""A corner's two edges, straightened against the frame's own gradients.

Why: the reader reads a crop cut along the corner's frame, so the frame's angle decides what it sees. The corner
finder regresses its edges at stride 4 and is off by a median 5.6 degrees, a quarter of corners by more than 12
(session 13, validation families): on those the reader lost 9-47 points against the same crops cut along the true
edges. A card's edge is a straight step in brightness running from its corner, which the frame measures exactly: each
edge is turned to the direction along which the gradient across it is strongest, within a few tens of degrees of
the finder's guess (the finder decides which edge is which; the frame only straightens them). Lengths and the
corner's point are left as the finder gave them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import cv2
import numpy as np

if TYPE_CHECKING:
    from vision.recognise.corners import Corner  # corners.py calls this module: no import at run time

SEARCH_DEG = 24.0  # an edge is looked for this far either side of the finder's direction
COARSE_STEP_DEG = 2.0  # first pass
FINE_STEP_DEG = 0.5  # second pass, around the first pass's best, one coarse step either side
ALONG = (0.1, 0.6)  # the stretch of edge sampled, in card widths from the corner: past the rounded corner
SAMPLES = 24  # points along that stretch
MIN_STEP = 8.0  # mean Sobel response across a line below which it is no edge (about 2 grey levels per pixel)
TIE_BREAK = 1e-3  # per degree turned: between equal edges the one nearer the guess wins


def gradients(frame: np.ndarray, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The frame's brightness gradient (x, y; 3x3 Sobel, int16), at `scale` of its size (a big photo is measured
    shrunk, as the finder sees it). In integers: float Sobel costs ten times as much for the same directions."""
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    if scale < 1.0:
        gray = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    gx, gy = cv2.spatialGradient(np.ascontiguousarray(gray, np.uint8))
    return gx, gy


def edge_strength(
    grad: tuple[np.ndarray, np.ndarray], points: np.ndarray, angles: np.ndarray, widths: np.ndarray
) -> np.ndarray:
    """(m, k): how strongly the frame steps across a straight line from point i in direction angles[i, k] (radians),
    over the ALONG stretch of card width widths[i]: the mean of the gradient's component across the line."""
    m, k = angles.shape
    u = np.stack([np.cos(angles), np.sin(angles)], axis=-1)  # (m, k, 2)
    t = np.linspace(*ALONG, SAMPLES)[None, None, :] * widths[:, None, None]  # (m, 1, n)
    xy = points[:, None, None, :] + u[:, :, None, :] * t[..., None]  # (m, k, n, 2)
    map_x = np.ascontiguousarray(xy[..., 0].reshape(-1, SAMPLES), np.float32)  # rows stay under remap's 32767
    map_y = np.ascontiguousarray(xy[..., 1].reshape(-1, SAMPLES), np.float32)
    gx, gy = (
        cv2.remap(g, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0).reshape(
            m, k, SAMPLES
        )
        for g in grad
    )
    across = np.abs(gx.astype(np.float32) * -u[..., 1:2] + gy * u[..., 0:1])  # the component along the line's normal
    return across.mean(axis=-1)


def best_angles(
    grad: tuple[np.ndarray, np.ndarray], points: np.ndarray, guess: np.ndarray, widths: np.ndarray
) -> np.ndarray:
    """(m,) the direction (radians) of the strongest edge near each guessed direction, coarse then fine. Where no
    edge stands out (a faint or hidden one), the guess is kept: a tie goes to the smaller turn, and an edge weaker
    than MIN_STEP moves nothing."""
    rows = np.arange(len(guess))
    start = guess
    for half, step in ((SEARCH_DEG, COARSE_STEP_DEG), (COARSE_STEP_DEG, FINE_STEP_DEG)):
        turns = np.deg2rad(np.arange(-half, half + 1e-6, step))
        angles = start[:, None] + turns[None, :]
        strength = edge_strength(grad, points, angles, widths)
        pick = (strength - TIE_BREAK * np.abs(np.rad2deg(turns))[None, :]).argmax(axis=1)
        start = np.where(strength[rows, pick] >= MIN_STEP, angles[rows, pick], start)
    return start


def straighten(frame: np.ndarray, corners: Sequence[Corner], scale: float = 1.0) -> list[Corner]:
    """The corners with each edge turned onto the frame's strongest nearby edge, lengths kept. `scale` is the
    finder's shrink of the frame: the gradients are measured at that size."""
    if not corners:
        return []
    grad = gradients(frame, scale)
    points = np.array([c.point for c in corners], np.float64) * scale
    widths = np.maximum(np.array([c.width for c in corners], np.float64) * scale, 1.0)
    out = []
    turned = []  # a's and b's new vectors
    for edge in ("a", "b"):
        vectors = np.array([getattr(c, edge) for c in corners], np.float64)
        angles = best_angles(grad, points, np.arctan2(vectors[:, 1], vectors[:, 0]), widths)
        lengths = np.linalg.norm(vectors, axis=1)
        turned.append(np.stack([np.cos(angles), np.sin(angles)], axis=1) * lengths[:, None])
    for c, a, b in zip(corners, *turned, strict=True):
        out.append(replace(c, a=a.astype(np.float32), b=b.astype(np.float32)))
    return out
