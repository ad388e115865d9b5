"""Where the board lies in the frame: its enrolled picture matched against the frame.

A board is the one large, richly printed flat thing on the table, so local features (SIFT) with a RANSAC homography
find it under any yaw, tilt and scale, with cubes, pawns and a hand over part of it (the features left uncovered
suffice). Cards, which are small in the frame, could not be found this way (models/catalogue-cards.md); a board
can. The result maps board fractions (0-1 across its picture) to frame pixels.

Finding costs tens of milliseconds, so a live loop registers once and again only when the board seems to have
moved (`BoardTracker`), as the mat's markers are looked for twice a second.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

PICTURE_PX = 800  # the board picture's side when its features are taken (its Eras' print at about frame scale)
FRAME_LONG_PX = 800  # frames are shrunk to this first: the board's print survives it, a speckled table's grain (which
# would crowd the board's features out of a capped list) does not, and it is 3-5x faster
MIN_INLIERS = 15
RATIO = 0.85  # Lowe's ratio test
MIN_AGREEMENT = 0.2  # the frame's edges, cut along a found homography, must correlate this well with the board's
# (the ring's seven sectors look alike, so a handful of matches can agree on a board turned by a sector or two)


class BoardNotFound(RuntimeError):
    """No homography with enough agreeing matches: the board is out of view, mostly covered, or another board."""


@dataclass(frozen=True)
class Registration:
    frame_from_board: np.ndarray  # 3x3: board fractions -> frame pixels
    inliers: int


class BoardRegistrar:
    """The board picture's features, taken once; `register(frame)` per frame that needs it."""

    def __init__(self, board_picture: np.ndarray, features: int = 4000) -> None:
        grey = _grey(board_picture)
        scale = PICTURE_PX / max(grey.shape)
        self.picture_scale = scale
        self.picture_size = grey.shape[1], grey.shape[0]
        small = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        self.points, self.descriptors = cv2.SIFT_create(nfeatures=features).detectAndCompute(small, None)
        self.sift = cv2.SIFT_create()  # every feature of the shrunk frame
        self.edges = _edges(small)
        if self.descriptors is None or len(self.points) < MIN_INLIERS:
            raise ValueError("board picture: too little print to register it by (fewer than 25 features)")
        self.matcher = cv2.FlannBasedMatcher({"algorithm": 1, "trees": 4}, {"checks": 48})

    def register(self, frame: np.ndarray) -> Registration:
        grey = _grey(frame)
        shrink = min(1.0, FRAME_LONG_PX / max(grey.shape))
        if shrink < 1.0:
            grey = cv2.resize(grey, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA)
        points, descriptors = self.sift.detectAndCompute(grey, None)
        if descriptors is None or len(points) < MIN_INLIERS:
            raise BoardNotFound(f"only {0 if descriptors is None else len(points)} features in the frame")
        pairs = self.matcher.knnMatch(self.descriptors, descriptors, k=2)
        good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < RATIO * p[1].distance]
        if len(good) < MIN_INLIERS:
            raise BoardNotFound(f"{len(good)} feature matches with the board picture (at least {MIN_INLIERS} needed)")
        src = np.float32([self.points[m.queryIdx].pt for m in good])
        dst = np.float32([points[m.trainIdx].pt for m in good])
        best: tuple[float, np.ndarray, int] | None = None
        for _ in range(5):  # the best-agreeing of up to five hypotheses, each from the matches the last left over
            if len(src) < MIN_INLIERS:
                break
            h, mask = cv2.findHomography(src, dst, cv2.USAC_MAGSAC, 3.0, maxIters=20000, confidence=0.9999)
            if h is None or mask is None or int(mask.sum()) < MIN_INLIERS:
                break
            inliers = int(mask.sum())
            score = self.agreement(grey, h)
            if best is None or score > best[0]:
                best = (score, h, inliers)
            if score >= 0.5:  # the true placement scores 0.3-0.9, a wrong one under 0.15 (24 test scenes)
                break
            keep = mask.ravel() == 0
            src, dst = src[keep], dst[keep]
        if best is None or best[0] < MIN_AGREEMENT:
            found = "no" if best is None else f"agreement {best[0]:.2f} of"
            raise BoardNotFound(f"{found} board placement (at least {MIN_AGREEMENT} needed)")
        w, hgt = self.picture_size
        from_fraction = np.diag([w * self.picture_scale, hgt * self.picture_scale, 1.0])
        to_frame = np.diag([1 / shrink, 1 / shrink, 1.0])
        return Registration(to_frame @ best[1] @ from_fraction, best[2])

    def agreement(self, grey: np.ndarray, h: np.ndarray) -> float:
        """Correlation of the frame's edges, cut along `h` into the board picture's frame, with the picture's own
        edges (the valid part only): about 0.5-0.9 where the board really lies, near 0 elsewhere."""
        size = self.edges.shape[1], self.edges.shape[0]
        cut = cv2.warpPerspective(grey, h, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderValue=0)
        valid = (
            cv2.warpPerspective(
                np.full(grey.shape, 255, np.uint8), h, size, flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP
            )
            > 0
        )
        if valid.mean() < 0.2:
            return 0.0
        a, b = _edges(cut)[valid], self.edges[valid]
        a, b = a - a.mean(), b - b.mean()
        return float((a * b).sum() / (np.sqrt((a * a).sum() * (b * b).sum()) + 1e-9))


def _edges(grey: np.ndarray) -> np.ndarray:
    """Gradient magnitude at the scale of the board's print, blurred a little so a pixel or two of error is forgiven."""
    smooth = cv2.GaussianBlur(grey.astype(np.float32), (0, 0), 1.5)
    gx, gy = cv2.Sobel(smooth, cv2.CV_32F, 1, 0), cv2.Sobel(smooth, cv2.CV_32F, 0, 1)
    return cv2.GaussianBlur(cv2.magnitude(gx, gy), (0, 0), 2.0)


def _grey(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return image
    if image.shape[2] == 4:
        alpha = image[..., 3:4].astype(np.float32) / 255.0
        image = (image[..., :3] * alpha + 128 * (1 - alpha)).astype(np.uint8)
    return cv2.cvtColor(image[..., :3], cv2.COLOR_BGR2GRAY)
