"""Is the table still, and what changed on it since the last still picture?

Cheap enough to run on every frame of 30 fps video: frames are shrunk to GATE_WIDTH pixels wide, grey and blurred,
so sensor noise and a slow camera creep vanish while a hand, a carried card or a flip stays loud. Recognition is
only run once the table has been still for `settle_s`, and a still picture is compared with the last committed
one region by region, so the decoder knows which cards changed and a hand that passed over an unchanged table
costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

GATE_WIDTH = 320
PIXEL_DELTA = 10.0  # grey levels (after blurring) that count as a changed pixel
MOVING_FRACTION = 0.002  # more than this share of changed pixels between consecutive frames is motion
REGION_DELTA = 18.0  # grey levels for the still-to-still comparison (a different card face, or a card gone)
REGION_CHANGED = 0.2  # share of a card's pixels that must change for it to count as changed


def small_grey(frame: np.ndarray, width: int = GATE_WIDTH) -> np.ndarray:
    """The frame shrunk to `width` pixels wide (area averaging), grey, lightly blurred, as float32."""
    h, w = frame.shape[:2]
    size = (width, max(1, round(h * width / w)))
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    small = cv2.resize(grey, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    return cv2.GaussianBlur(small, (5, 5), 0)


@dataclass
class MotionGate:
    """Counts still frames: `update` takes each frame and says whether the table has been still long enough."""

    fps: float = 30.0
    settle_s: float = 0.15
    moving_fraction: float = MOVING_FRACTION
    previous: np.ndarray | None = None
    still_frames: int = 0
    last_motion: float = 0.0

    @property
    def settle_frames(self) -> int:
        return max(1, round(self.settle_s * self.fps))

    def update(self, frame: np.ndarray) -> bool:
        grey = small_grey(frame)
        if self.previous is None or self.previous.shape != grey.shape:
            self.last_motion = 1.0
        else:
            self.last_motion = float(np.mean(np.abs(grey - self.previous) > PIXEL_DELTA))
        self.previous = grey
        self.still_frames = self.still_frames + 1 if self.last_motion <= self.moving_fraction else 0
        return self.settled

    @property
    def settled(self) -> bool:
        return self.still_frames >= self.settle_frames


def change_map(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Boolean map (gate resolution) of the pixels that differ between two still pictures (from `small_grey`)."""
    return np.abs(after - before) > REGION_DELTA


def region_changed(changes: np.ndarray, quad: np.ndarray, frame_width: int) -> float:
    """Share of a card outline's pixels (frame coordinates) that changed."""
    scale = changes.shape[1] / frame_width
    mask = np.zeros(changes.shape, np.uint8)
    cv2.fillConvexPoly(mask, np.round(np.asarray(quad) * scale).astype(np.int32), 1)
    area = int(mask.sum())
    if area == 0:
        return 0.0
    return float(changes[mask.astype(bool)].mean())
