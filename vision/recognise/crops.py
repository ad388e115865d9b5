"""The one rule that turns a corner-index box into the reader's input, used by training and runtime alike."""

from __future__ import annotations

import cv2
import numpy as np

CROP_PX = 64  # the reader's input side: a median index spans about 45 px of the frame with its margin
CROP_SCALE = 1.3  # the square's side over the region's longer side: the index plus a margin of card and edge


def crop_matrix(quad: np.ndarray, size: int = CROP_PX, scale: float = CROP_SCALE) -> tuple[np.ndarray, float]:
    """The 2x3 affine map from frame pixels to the size x size crop of an index region (a quad whose long side
    runs along the card), turned so that side is vertical; and the crop's side in frame pixels."""
    q = card_frame(quad)
    centre = q.mean(axis=0)
    across = (q[1] - q[0] + q[2] - q[3]) / 2
    along = (q[3] - q[0] + q[2] - q[1]) / 2
    side = max(float(np.linalg.norm(across)), float(np.linalg.norm(along)), 1.0) * scale
    ux = across / max(float(np.linalg.norm(across)), 1e-6)
    uy = along / max(float(np.linalg.norm(along)), 1e-6)
    src = np.array([centre - (ux + uy) * side / 2, centre + (ux - uy) * side / 2, centre + (uy - ux) * side / 2])
    dst = np.array([[0, 0], [size, 0], [0, size]], np.float32)
    return cv2.getAffineTransform(src.astype(np.float32), dst), side


def index_crop(image: np.ndarray, quad: np.ndarray, size: int = CROP_PX, scale: float = CROP_SCALE) -> np.ndarray:
    """The index turned upright (or upside down: a card's two indices face opposite ways, and which is which
    is unknowable from one corner) with a margin of card and edge, resampled to size x size. Turning it leaves
    the reader two orientations to learn instead of every angle. Large indices are shrunk by area first, so a
    big card is not read through aliasing."""
    quad = np.asarray(quad, np.float32)
    matrix, side = crop_matrix(quad, size, scale)
    shrink = side / size
    if shrink > 1.5:
        c = quad.mean(axis=0)
        reach = side * 0.75 + 2
        x0, y0 = max(int(c[0] - reach), 0), max(int(c[1] - reach), 0)
        x1, y1 = min(int(c[0] + reach) + 1, image.shape[1]), min(int(c[1] + reach) + 1, image.shape[0])
        if x1 - x0 >= 2 and y1 - y0 >= 2:
            k = 1 / shrink
            roi = cv2.resize(image[y0:y1, x0:x1], None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
            local = (quad - [x0, y0]) * [roi.shape[1] / (x1 - x0), roi.shape[0] / (y1 - y0)]
            matrix, _ = crop_matrix(local.astype(np.float32), size, scale)
            image = roi
    return cv2.warpAffine(image, matrix, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


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


def corner_quads(quad: np.ndarray, region: tuple[float, float] = CORNER_INDEX) -> list[np.ndarray]:
    """The four corner regions where a card prints its index, for reading a card whose indices the finder
    missed: two of them hold the index, the reader calls the others none."""
    frame = card_frame(quad)
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    h = cv2.getPerspectiveTransform(unit, frame)
    rw, rh = region
    quads = []
    for u0, v0 in ((0, 0), (1 - rw, 0), (1 - rw, 1 - rh), (0, 1 - rh)):
        corners = np.array([[u0, v0], [u0 + rw, v0], [u0 + rw, v0 + rh], [u0, v0 + rh]], np.float32)
        quads.append(cv2.perspectiveTransform(corners.reshape(-1, 1, 2), h).reshape(-1, 2))
    return quads
