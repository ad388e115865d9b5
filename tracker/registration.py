"""Has the camera moved? A bumped camera moves the whole table in the picture at once, which the decoder would read
as every card taken away and dealt again somewhere else (issue 19: a bump mid-game lost the rest of the game).

Between two still tables the picture's features are matched (ORB) and one similarity transform is fitted to them
(RANSAC). A move on the table moves a few cards and leaves the table and the other cards where they were: the best
transform is then the identity, or one that only the moved cards agree on while the rest of the picture stays. A
bumped camera moves everything together: most matches, all over the picture, agree on one transform that is not
the identity, and none stays where it was. The tracker then reads every later frame turned back into the first
view, so the decoder's memory of where things lie stays true.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

REG_WIDTH = 640  # the picture is matched at this width: 2 px of a 1280 px frame per pixel
MIN_MATCHES = 40  # fewer agreeing matches than this (a bare table) is no evidence either way
AGREE_SHARE = 0.5  # ...and at least this share of all matches must agree on the one transform
MIN_SHIFT = 2.0  # px at REG_WIDTH: a smaller shift of the picture's corners is the same view
STILL_SHARE = 0.1  # this share of matches (and at least STILL_MATCHES) that did not move: the camera did not either
STILL_MATCHES = 10
SPREAD = 0.3  # the agreeing matches must span this share of the picture's width and of its height


def registration_image(frame: np.ndarray) -> np.ndarray:
    """The frame shrunk to REG_WIDTH, grey, uint8: what two still tables are matched on."""
    h, w = frame.shape[:2]
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    return cv2.resize(grey, (REG_WIDTH, max(1, round(h * REG_WIDTH / w))), interpolation=cv2.INTER_AREA)


def camera_shift(before: np.ndarray, after: np.ndarray) -> np.ndarray | None:
    """The 2x3 similarity that takes `after`'s pixels to `before`'s (both `registration_image`s, full frame scale
    in the result's units of REG_WIDTH pixels) when the whole picture moved together; None when it did not, or when
    the pictures hold too little texture to tell."""
    if before.shape != after.shape:
        return None
    orb = cv2.ORB_create(nfeatures=800, fastThreshold=12)
    kp_b, des_b = orb.detectAndCompute(before, None)
    kp_a, des_a = orb.detectAndCompute(after, None)
    if des_b is None or des_a is None or len(kp_b) < MIN_MATCHES or len(kp_a) < MIN_MATCHES:
        return None
    matches = cv2.BFMatcher(cv2.NORM_HAMMING, crossCheck=True).match(des_a, des_b)
    if len(matches) < MIN_MATCHES:
        return None
    src = np.float32([kp_a[m.queryIdx].pt for m in matches])
    dst = np.float32([kp_b[m.trainIdx].pt for m in matches])
    m, inliers = cv2.estimateAffinePartial2D(src, dst, method=cv2.RANSAC, ransacReprojThreshold=2.0)
    if m is None or inliers is None:
        return None
    agree = int(inliers.sum())
    if agree < MIN_MATCHES or agree < AGREE_SHARE * len(matches):
        return None
    h, w = before.shape[:2]
    # Cards gathered into one pile move together too, and on a plain cloth they may hold most of the matches
    # (session 14: an 'order' move read as a 170 px camera move). But the camera moves everything: if anything in
    # the picture stayed where it was, or the agreeing matches sit in one part of it, the camera did not move.
    still = int((np.linalg.norm(src - dst, axis=1) < MIN_SHIFT).sum())
    if still >= max(STILL_MATCHES, STILL_SHARE * len(matches)):
        return None
    kept = src[inliers.ravel().astype(bool)]
    if np.ptp(kept[:, 0]) < SPREAD * w or np.ptp(kept[:, 1]) < SPREAD * h:
        return None
    corners = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    moved = float(np.abs(corners @ m[:, :2].T + m[:, 2] - corners).max())
    return m.astype(np.float64) if moved >= MIN_SHIFT else None


def to_frame_scale(m: np.ndarray, frame_width: int) -> np.ndarray:
    """A `camera_shift` (REG_WIDTH pixels) for full frames `frame_width` wide."""
    out = m.copy()
    out[:, 2] *= frame_width / REG_WIDTH
    return out


def compose(first: np.ndarray, then: np.ndarray) -> np.ndarray:
    """The 2x3 affine map `then` after `first`."""
    a = np.vstack([first, [0, 0, 1]])
    b = np.vstack([then, [0, 0, 1]])
    return (b @ a)[:2]


def describe(m: np.ndarray) -> str:
    """'moved 34 px and turned 2.0 degrees', for the player."""
    shift = math.hypot(m[0, 2], m[1, 2])
    turn = math.degrees(math.atan2(m[1, 0], m[0, 0]))
    return f"moved {shift:.0f} px" + (f" and turned {abs(turn):.1f} degrees" if abs(turn) >= 0.5 else "")
