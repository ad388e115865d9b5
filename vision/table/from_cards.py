"""The table plane without a mat: from the cards on it, whose size and shape are known (issue 20).

A card is a rectangle of known size (a poker card 63 x 88 mm), so the four corners of one card seen in a frame
already fix a homography from the frame to the table, up to where on the table that card lies and how it is turned.
Several cards fix it better: the plane is the one homography that makes every card's outline the right rectangle at
once. That is fitted here by least squares on what does not depend on where each card lies: each mapped outline's
four sides and two diagonals against the card's. The table's origin and axes are then the first card's (the
largest); a layout drawn on the page is placed in those millimetres.

Pure numpy (a small Levenberg-Marquardt): the runtime has no scipy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.camera import apply_homography

POKER_MM = (63.0, 88.0)  # a standard card's width and height
MAX_STEPS = 60


class CardPlaneError(ValueError):
    """No plane can be had from these outlines (none given, or degenerate ones)."""


@dataclass(frozen=True)
class CardPlane:
    homography: np.ndarray  # 3x3, frame pixels to table mm (origin and axes: the first card's outline)
    cards: int
    error_mm: float  # root mean square misfit of the outlines' sides and diagonals, mm


def _shape_residuals(h: np.ndarray, quads: np.ndarray, size: tuple[float, float]) -> np.ndarray:
    """Each outline, mapped by h, against the card: its four sides and two diagonals, mm."""
    w, length = size
    want = np.array([w, length, w, length, np.hypot(w, length), np.hypot(w, length)])
    out = []
    for quad in quads:
        m = apply_homography(h, quad)
        sides = np.linalg.norm(np.roll(m, -1, axis=0) - m, axis=1)
        diagonals = [np.linalg.norm(m[2] - m[0]), np.linalg.norm(m[3] - m[1])]
        out.append(np.concatenate([sides, diagonals]) - want)
    return np.concatenate(out)


def card_rectangle(size: tuple[float, float] = POKER_MM) -> np.ndarray:
    w, length = size
    return np.array([[0, 0], [w, 0], [w, length], [0, length]], np.float64)


def plane_from_cards(quads: Sequence[np.ndarray], size: tuple[float, float] = POKER_MM) -> CardPlane:
    """The frame-to-table homography that best makes every outline (TL, TR, BR, BL as printed: its first side the
    card's short one) a `size` rectangle. Its origin and axes are the largest card's."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if not len(q):
        raise CardPlaneError("no card outlines to calibrate from")
    areas = np.array([abs(cv2.contourArea(x.astype(np.float32))) for x in q])
    if areas.max() < 4.0:
        raise CardPlaneError("the card outlines have no area")
    q = q[areas >= 4.0]
    first = q[int(np.argmax(areas[areas >= 4.0]))]
    h0 = cv2.getPerspectiveTransform(first.astype(np.float32), card_rectangle(size).astype(np.float32))
    h = h0 / h0[2, 2]
    params = h.ravel()[:8].copy()

    def residuals(p: np.ndarray) -> np.ndarray:
        return _shape_residuals(np.append(p, 1.0).reshape(3, 3), q, size)

    damping = 1e-3
    r = residuals(params)
    scale = np.maximum(np.abs(params), 1e-6) * 1e-6
    for _ in range(MAX_STEPS if len(q) > 1 else 0):
        jac = np.column_stack([(residuals(params + np.eye(8)[k] * scale[k]) - r) / scale[k] for k in range(8)])
        jtj, jtr = jac.T @ jac, jac.T @ r
        step = np.linalg.lstsq(jtj + damping * np.diag(np.diag(jtj) + 1e-12), -jtr, rcond=None)[0]
        trial = residuals(params + step)
        if np.sum(trial**2) < np.sum(r**2):
            params, r, damping = params + step, trial, damping / 3
            if np.linalg.norm(step) < 1e-10 * (np.linalg.norm(params) + 1e-12):
                break
        else:
            damping *= 4
    h = np.append(params, 1.0).reshape(3, 3)
    # the fit is free to slide and turn the table: put the largest card back at the origin, square to the axes
    mapped = apply_homography(h, first)
    rigid = _rigid(mapped, card_rectangle(size))
    h = rigid @ h
    return CardPlane(h / h[2, 2], len(q), float(np.sqrt(np.mean(r**2))))


def _rigid(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The rotation and translation (3x3) that best takes points src to dst (Kabsch)."""
    cs, cd = src.mean(axis=0), dst.mean(axis=0)
    u, _, vt = np.linalg.svd((src - cs).T @ (dst - cd))
    d = np.sign(np.linalg.det(vt.T @ u.T))
    rot = vt.T @ np.diag([1.0, d]) @ u.T
    out = np.eye(3)
    out[:2, :2] = rot
    out[:2, 2] = cd - rot @ cs
    return out
