"""How the dice nets see a frame, shared by the runtime, the data and the training so they cannot drift apart:
the finder works on the frame at FRAME_SCALE, the reader on a square around each die, DIE_SPAN of the die's size
on a side, scaled to READ_PX."""

from __future__ import annotations

import cv2
import numpy as np

FRAME_SCALE = 0.5  # the finder's frame: 1280 x 720 becomes 640 x 360 (a d20 still spans 12-32 pixels)
STRIDE = 4  # finder cells, in the finder's frame pixels
READ_PX = 96  # the reader's square
DIE_SPAN = 1.6  # the reader's square spans this many die sizes (a die of 60 pixels: numerals of 10-15)
# The reader's classes: no readable face (cocked, in the air, hidden, not a die), then every d6 and d20 face.
CLASSES = ("none", *(f"D6:{v}" for v in range(1, 7)), *(f"D20:{v}" for v in range(1, 21)))


def class_of(kind: str, value: int | None) -> int:
    """The reader's class for a die of `kind` ('d6' | 'd20') showing `value` (None: no face up)."""
    if value is None:
        return 0
    return CLASSES.index(f"{kind.upper()}:{value}")


def square(
    image: np.ndarray, centre: tuple[float, float], side: float, out_px: int, angle_deg: float = 0.0
) -> np.ndarray:
    """The square of `side` image pixels around `centre`, turned by `angle_deg`, resampled to `out_px` a side
    (the frame's edge repeated beyond it; blurred first when it shrinks, as a camera farther away would see it)."""
    scale = out_px / side
    cx, cy = float(centre[0]), float(centre[1])
    reach = int(np.ceil(side * 0.75)) + 2  # the turned square's corners, and the blur's margin
    x0, y0 = int(np.floor(cx)) - reach, int(np.floor(cy)) - reach
    h, w = image.shape[:2]
    region = image[max(y0, 0) : max(min(y0 + 2 * reach, h), 0), max(x0, 0) : max(min(x0 + 2 * reach, w), 0)]
    if region.size == 0:
        return np.zeros((out_px, out_px, *image.shape[2:]), image.dtype)
    ox, oy = max(x0, 0), max(y0, 0)
    if scale < 0.8:
        region = cv2.GaussianBlur(region, (0, 0), 0.45 / scale)
    m = cv2.getRotationMatrix2D((cx - ox, cy - oy), angle_deg, scale)
    m[:, 2] += np.array([out_px / 2 - (cx - ox), out_px / 2 - (cy - oy)])
    return cv2.warpAffine(region, m, (out_px, out_px), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def finder_frame(frame: np.ndarray) -> np.ndarray:
    h, w = frame.shape[:2]
    size = (round(w * FRAME_SCALE), round(h * FRAME_SCALE))
    return cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
