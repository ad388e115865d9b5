"""How the dice nets see a frame, shared by the runtime, the data, the labeller and the training so they cannot
drift apart: the finder works on the frame at FRAME_SCALE; the face finder on a square around each die, DIE_SPAN of
the die's size on a side, scaled to READ_PX; the face reader on the top face alone, its corners warped onto a
regular triangle (d20) or square (d6) FACE_PX a side, so that every numeral comes at one scale and one of 3 or 4
turns, whatever the die's size, its tilt to the camera and the way it points."""

from __future__ import annotations

import cv2
import numpy as np

FRAME_SCALE = 0.5  # the finder's frame: 1280 x 720 becomes 640 x 360 (a d20 still spans 12-32 pixels)
STRIDE = 4  # finder cells, in the finder's frame pixels
READ_PX = 96  # the reader's square
DIE_SPAN = 1.6  # the reader's square spans this many die sizes (a die of 60 pixels: numerals of 10-15)
# The reader's classes: no readable face (cocked, in the air, hidden, not a die), then every d6 and d20 face.
CLASSES = ("none", *(f"D6:{v}" for v in range(1, 7)), *(f"D20:{v}" for v in range(1, 21)))
FACES = CLASSES[1:]  # the face reader's classes
KINDS = ("none", "d6", "d20")  # the face finder's: what lies face up in a die's square


def class_of(kind: str, value: int | None) -> int:
    """The reader's class for a die of `kind` ('d6' | 'd20') showing `value` (None: no face up)."""
    if value is None:
        return 0
    return CLASSES.index(f"{kind.upper()}:{value}")


def square_matrix(centre: tuple[float, float], side: float, out_px: int, angle_deg: float = 0.0) -> np.ndarray:
    """The 2 x 3 map from image pixels to `square`'s pixels (to carry points, such as a face's corners, along)."""
    m = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), angle_deg, out_px / side)
    m[:, 2] += np.array([out_px / 2 - float(centre[0]), out_px / 2 - float(centre[1])])
    return m


def image_from_square(centre: tuple[float, float], side: float, out_px: int) -> np.ndarray:
    """The 3 x 3 map from an upright `square`'s pixels back to the image's (`square_matrix` undone): to carry what a
    net marks in the square to the frame."""
    return np.linalg.inv(np.vstack([square_matrix(centre, side, out_px), [0.0, 0.0, 1.0]]))


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
    region = _prefiltered(region, scale)
    m = square_matrix((cx - ox, cy - oy), side, out_px, angle_deg)
    return cv2.warpAffine(region, m, (out_px, out_px), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _prefiltered(region: np.ndarray, scale: float) -> np.ndarray:
    """The region blurred before it is shrunk by `scale` (as a camera farther away would see it, without aliasing);
    as it is when it is not shrunk much."""
    return cv2.GaussianBlur(region, (0, 0), 0.45 / scale) if scale < 0.8 else region


def finder_frame(frame: np.ndarray) -> np.ndarray:
    h, w = frame.shape[:2]
    size = (round(w * FRAME_SCALE), round(h * FRAME_SCALE))
    return cv2.resize(frame, size, interpolation=cv2.INTER_AREA)


FACE_PX = 40  # the face reader's picture: a d20's numeral spans about a third of it
FACE_SIDES = {"d6": 4, "d20": 3}


def face_corners(n: int) -> np.ndarray:
    """The canonical face's corners in the face reader's picture, going round clockwise as the image shows it: a
    regular triangle (n = 3) centred in it, first corner up, its corners on the picture's edges; or a square (n = 4)
    standing on its side with a margin of a seventh (room for the face finder's error)."""
    if n == 3:
        angles, radius = np.radians([-90.0, 30.0, 150.0]), FACE_PX / 2
    else:
        angles, radius = np.radians([-135.0, -45.0, 45.0, 135.0]), FACE_PX * 0.36 * np.sqrt(2)
    return np.stack([FACE_PX / 2 + radius * np.cos(angles), FACE_PX / 2 + radius * np.sin(angles)], 1).astype(
        np.float32
    )


NORMAL_REACH = 4.0  # a normalised face's local light: its mean and spread within this many pixels (Gaussian)


def normalised_face(picture: np.ndarray) -> np.ndarray:
    """A face picture with each channel's local light taken away: less its neighbourhood's mean, over its
    neighbourhood's spread, clipped and put back in 0-255. A thin, faint or glared numeral then stands out as
    much as a bold one (an experiment of session 50: `dice_net --normalised`)."""
    values = picture.astype(np.float32)
    centred = values - cv2.GaussianBlur(values, (0, 0), NORMAL_REACH)
    spread = np.sqrt(cv2.GaussianBlur(centred * centred, (0, 0), NORMAL_REACH)) + 6.0
    return np.clip(128.0 + 50.0 * np.clip(centred / spread, -2.5, 2.5), 0, 255).astype(np.uint8)


def ordered(points: np.ndarray) -> np.ndarray:
    """A face's corners in the order they go round (clockwise as the image shows it, as `face_corners`), starting
    anywhere: a face has no first corner, the reader looks at every turn."""
    points = np.asarray(points, np.float32).reshape(-1, 2)
    centre = points.mean(axis=0)
    return points[np.argsort(np.arctan2(points[:, 1] - centre[1], points[:, 0] - centre[0]))]


def face_matrix(points: np.ndarray, turn: int = 0) -> np.ndarray:
    """The 3 x 3 map from image pixels onto the canonical face, the face's corners (`ordered`) rolled by `turn`
    (an affine map for a triangle, a homography for a square)."""
    src = np.roll(ordered(points), -turn, axis=0)
    dst = face_corners(len(src))
    if len(src) == 3:
        return np.vstack([cv2.getAffineTransform(src, dst), [0.0, 0.0, 1.0]])
    return cv2.getPerspectiveTransform(src, dst)


def face_picture(image: np.ndarray, points: np.ndarray, turn: int = 0) -> np.ndarray:
    """The top face whose corners in `image` are `points`, warped onto the canonical face (FACE_PX a side; the
    frame's edge repeated beyond it; blurred first when it shrinks, as `square` does)."""
    points = np.asarray(points, np.float32).reshape(-1, 2)
    h, w = image.shape[:2]
    reach = float(np.ptp(points, axis=0).max()) + 4
    x0, y0 = np.floor(points.min(axis=0) - reach).astype(int).clip(0, [w, h])
    x1, y1 = np.ceil(points.max(axis=0) + reach).astype(int).clip(0, [w, h])
    if x1 <= x0 or y1 <= y0:
        return np.zeros((FACE_PX, FACE_PX, *image.shape[2:]), image.dtype)
    matrix = face_matrix(points - [x0, y0], turn)
    region = image[y0:y1, x0:x1]
    region = _prefiltered(region, float(np.sqrt(abs(np.linalg.det(matrix[:2, :2])))))
    return cv2.warpPerspective(
        region, matrix, (FACE_PX, FACE_PX), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
