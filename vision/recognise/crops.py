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


CORNER_INDEX = (0.18, 0.25)  # an index's region as a share of card width and height: the labeller's STANDARD_INDEX


def card_frame(quad: np.ndarray) -> np.ndarray:
    """A card outline reordered to run clockwise from a corner where a short edge starts, the order a card's
    own top-left, top-right, bottom-right, bottom-left would have (up to a half turn, which a standard card's
    point symmetry makes harmless)."""
    quad = np.asarray(quad, np.float32)
    if np.linalg.norm(quad[1] - quad[0]) > np.linalg.norm(quad[2] - quad[1]):
        quad = np.roll(quad, -1, axis=0)  # make the first edge a short one
    if cv2.contourArea(quad, oriented=True) < 0:
        quad = quad[[1, 0, 3, 2]]  # clockwise in the image
    start = int(np.argmin(quad.sum(axis=1)[[0, 2]])) * 2  # of the two corners a short edge starts at
    return np.roll(quad, -start, axis=0)


def corner_boxes(
    quad: np.ndarray, region: tuple[float, float] = CORNER_INDEX
) -> list[tuple[float, float, float, float]]:
    """Bounding boxes of the four corner regions where a card prints its index, for reading a card whose indices
    the finder missed: two of them hold the index, the reader calls the others none."""
    frame = card_frame(quad)
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    h = cv2.getPerspectiveTransform(unit, frame)
    rw, rh = region
    boxes = []
    for u0, v0 in ((0, 0), (1 - rw, 0), (1 - rw, 1 - rh), (0, 1 - rh)):
        corners = np.array([[u0, v0], [u0 + rw, v0], [u0 + rw, v0 + rh], [u0, v0 + rh]], np.float32)
        pts = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), h).reshape(-1, 2)
        boxes.append((float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max())))
    return boxes
