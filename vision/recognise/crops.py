"""The one rule that turns a corner-index box into the reader's input, used by training and runtime alike."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

CROP_PX = 32  # the reader's input side; an index is 10-60 px tall in a 1280x720 frame
CROP_SCALE = 1.4  # the square's side over the box's longer side: the index plus a margin of card and edge


def crop_matrix(box: Sequence[float], size: int = CROP_PX, scale: float = CROP_SCALE) -> np.ndarray:
    """The 2x3 affine map from frame pixels to a size x size crop centred on `box` (x1, y1, x2, y2)."""
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1, 1.0) * scale
    k = size / side
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    return np.array([[k, 0, size / 2 - k * cx], [0, k, size / 2 - k * cy]], np.float32)


def index_crop(image: np.ndarray, box: Sequence[float], size: int = CROP_PX, scale: float = CROP_SCALE) -> np.ndarray:
    """An axis-aligned square around the box, resampled to size x size: the index keeps whatever rotation it
    has on the table, so the reader learns every rotation rather than trusting a guessed one."""
    matrix = crop_matrix(box, size, scale)
    side = size / matrix[0, 0]
    interpolation = cv2.INTER_AREA if side > size else cv2.INTER_LINEAR
    return cv2.warpAffine(image, matrix, (size, size), flags=interpolation, borderMode=cv2.BORDER_REPLICATE)
