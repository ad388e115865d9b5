"""Where the board lies in the frame: its enrolled picture matched against the frame.

A board is the one large, richly printed flat thing on the table, so local features (SIFT) with a RANSAC homography
find it under any yaw, tilt and scale, with cubes, pawns and a hand over part of it (the features left uncovered
suffice). Cards, which are small in the frame, could not be found this way (models/catalogue-cards.md); a board
can. The result maps board fractions (0-1 across its picture) to frame pixels.

Finding costs 100-200 ms, so a live loop should register once and hand the placement to `BoardReader.read` until
the board seems to have moved, as the mat's markers are looked for twice a second (no such loop follows The LOOP's
board yet: `tabletop detect` registers each picture it is given).

A frame smeared by a moving camera or hand (motion blur) or out of focus has few features like the sharp picture's,
and its matches then agree on wrong placements (which the edge check refuses). Such a frame is matched again against
the picture blurred as it might be (`BLURS`: smeared a few pixels four ways, or defocused), whose features are
alike; those references are made the first time one is needed (session 45: 5 of 7 validation frames the sharp
picture could not place were then placed within 7 px).

Glare and a dim room flatten the board's print, and a washed-out frame's features then match nothing like the
sharp picture's. Both the picture and every frame are evened out first (`evened`: contrast-limited adaptive
histogram equalisation over the full-size grey picture), so the print's edges stand out as strongly wherever the
light falls. Session 57, 200 validation frames: boards not found 5 to 2, placed more than 10 px off at a corner 13 to
1, median corner error 2.27 to 1.06 px; registration about 1.4 times as long (the evened frame has more features).
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
EVEN_CLIP = 3.0  # `evened`: OpenCV's CLAHE clip limit and tile grid (clip 2-6, tiles 4-16 tried: 3 and 8 placed best)
EVEN_TILES = 8
SURE_AGREEMENT = 0.5  # the true placement scores 0.3-0.9, a wrong one under 0.15 (24 test scenes): no more looking
RNG_SEED = 52  # OpenCV's generator, seeded before every registration (`register`)
# The picture blurred as a frame may be, for a frame the sharp picture cannot place: ("motion", length px at
# PICTURE_PX, angle in degrees) or ("focus", Gaussian sigma px, 0: no angle); tried in this order
BLURS: tuple[tuple[str, float, float], ...] = (
    *(("motion", length, angle) for length in (5.0, 9.0, 13.0) for angle in (0.0, 45.0, 90.0, 135.0)),
    ("focus", 1.5, 0.0),
    ("focus", 3.0, 0.0),
)


class BoardNotFound(RuntimeError):
    """No homography with enough agreeing matches: the board is out of view, mostly covered, or another board."""


@dataclass(frozen=True)
class Registration:
    frame_from_board: np.ndarray  # 3x3: board fractions -> frame pixels
    inliers: int


class BoardRegistrar:
    """The board picture's features, taken once; `register(frame)` per frame that needs it."""

    def __init__(
        self, board_picture: np.ndarray, features: int = 4000, blurs: tuple[tuple[str, float, float], ...] = BLURS
    ) -> None:
        grey = _grey(board_picture)
        scale = PICTURE_PX / max(grey.shape)
        self.picture_scale = scale
        self.picture_size = grey.shape[1], grey.shape[0]
        small = cv2.resize(evened(grey), None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        # the picture as it comes, shrunk: blurred as a frame may be, then evened as a blurred frame is (`blurred`)
        self.raw_small = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        self.small, self.features, self.blurs = small, features, blurs
        self._blurred: list[tuple] | None = None  # `blurred`: made the first time a frame needs them
        self.points, self.descriptors = self._features_of(small)
        self.sift = cv2.SIFT_create()  # every feature of the shrunk frame
        self.edges = _edges(small)
        if self.descriptors is None or len(self.points) < MIN_INLIERS:
            raise ValueError("board picture: too little print to register it by (fewer than 25 features)")
        self.matcher = cv2.FlannBasedMatcher({"algorithm": 1, "trees": 4}, {"checks": 48})

    def register(self, frame: np.ndarray) -> Registration:
        # MAGSAC draws from OpenCV's one process-wide generator: seeded here, a frame is placed the same way whatever
        # ran before it (session 52 found every test frame's placement moved by an earlier RANSAC elsewhere, so a
        # bench's figures hung on what it had run first)
        cv2.setRNGSeed(RNG_SEED)
        grey = evened(_grey(frame))
        shrink = min(1.0, FRAME_LONG_PX / max(grey.shape))
        if shrink < 1.0:
            grey = cv2.resize(grey, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA)
        points, descriptors = self.sift.detectAndCompute(grey, None)
        if descriptors is None or len(points) < MIN_INLIERS:
            raise BoardNotFound(f"only {0 if descriptors is None else len(points)} features in the frame")
        frame_features = (points, descriptors)
        best, why = self._placed(grey, frame_features, (self.points, self.descriptors), 5)
        if best is None or best[0] < MIN_AGREEMENT:  # not placed: the frame may be smeared or out of focus
            for reference in self.blurred():
                found, _ = self._placed(grey, frame_features, reference, 3)
                if found is not None and (best is None or found[0] > best[0]):
                    best = found
                if best is not None and best[0] >= SURE_AGREEMENT:
                    break
        if best is None or best[0] < MIN_AGREEMENT:
            raise BoardNotFound(
                why if best is None else f"agreement {best[0]:.2f} of board placement (at least {MIN_AGREEMENT} needed)"
            )
        w, hgt = self.picture_size
        from_fraction = np.diag([w * self.picture_scale, hgt * self.picture_scale, 1.0])
        to_frame = np.diag([1 / shrink, 1 / shrink, 1.0])
        return Registration(to_frame @ best[1] @ from_fraction, best[2])

    def _placed(
        self, grey: np.ndarray, frame_features: tuple, reference: tuple, hypotheses: int
    ) -> tuple[tuple[float, np.ndarray, int] | None, str]:
        """(agreement, homography picture -> shrunk frame, inliers) of the best-agreeing of up to `hypotheses`
        placements, each from the matches the last left over, between the `reference` features (points,
        descriptors of the picture at PICTURE_PX) and the frame's; None, and why, when none is found."""
        points, descriptors = frame_features
        pairs = self.matcher.knnMatch(reference[1], descriptors, k=2)
        good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < RATIO * p[1].distance]
        if len(good) < MIN_INLIERS:
            return None, f"{len(good)} feature matches with the board picture (at least {MIN_INLIERS} needed)"
        src = np.float32([reference[0][m.queryIdx].pt for m in good])
        dst = np.float32([points[m.trainIdx].pt for m in good])
        best: tuple[float, np.ndarray, int] | None = None
        for _ in range(hypotheses):
            if len(src) < MIN_INLIERS:
                break
            h, mask = cv2.findHomography(src, dst, cv2.USAC_MAGSAC, 3.0, maxIters=20000, confidence=0.9999)
            if h is None or mask is None or int(mask.sum()) < MIN_INLIERS:
                break
            score = self.agreement(grey, h)
            if best is None or score > best[0]:
                best = (score, h, int(mask.sum()))
            if score >= SURE_AGREEMENT:
                break
            keep = mask.ravel() == 0
            src, dst = src[keep], dst[keep]
        return best, f"no board placement (at least {MIN_AGREEMENT} needed)" if best is None else ""

    def blurred(self) -> list[tuple]:
        """The picture's features blurred each way of `blurs` (`BLURS`; points, descriptors), made the first time
        asked."""
        if self._blurred is None:
            self._blurred = []
            for kind, size, angle in self.blurs:
                if kind == "motion":
                    smeared = cv2.filter2D(self.raw_small, -1, motion_kernel(size, angle))
                else:
                    smeared = cv2.GaussianBlur(self.raw_small, (0, 0), size)
                points, descriptors = self._features_of(evened(smeared))
                if descriptors is not None and len(points) >= MIN_INLIERS:
                    self._blurred.append((points, descriptors))
        return self._blurred

    def _features_of(self, picture: np.ndarray) -> tuple:
        """(points, descriptors) of the board's picture at PICTURE_PX, sharp or blurred: the strongest `features`."""
        return cv2.SIFT_create(nfeatures=self.features).detectAndCompute(picture, None)

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


def motion_kernel(length: float, angle_deg: float) -> np.ndarray:
    """A straight smear `length` pixels long at `angle_deg` (0: along x), as a camera moved during the exposure
    leaves it; normalised to keep brightness."""
    size = int(np.ceil(length)) | 1
    kernel = np.zeros((size, size), np.float32)
    centre = (size - 1) / 2
    a = np.radians(angle_deg)
    t = np.linspace(-(length - 1) / 2, (length - 1) / 2, 4 * size)
    kernel[np.rint(centre + t * np.sin(a)).astype(int), np.rint(centre + t * np.cos(a)).astype(int)] = 1.0
    return kernel / kernel.sum()


def _edges(grey: np.ndarray) -> np.ndarray:
    """Gradient magnitude at the scale of the board's print, blurred a little so a pixel or two of error is forgiven."""
    smooth = cv2.GaussianBlur(grey.astype(np.float32), (0, 0), 1.5)
    gx, gy = cv2.Sobel(smooth, cv2.CV_32F, 1, 0), cv2.Sobel(smooth, cv2.CV_32F, 0, 1)
    return cv2.GaussianBlur(cv2.magnitude(gx, gy), (0, 0), 2.0)


def evened(grey: np.ndarray) -> np.ndarray:
    """The grey picture with its contrast evened out tile by tile (CLAHE), at its full size: the same print reads
    alike under glare, in shade and in a dim room."""
    return cv2.createCLAHE(clipLimit=EVEN_CLIP, tileGridSize=(EVEN_TILES, EVEN_TILES)).apply(grey)


def _grey(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return image
    if image.shape[2] == 4:
        alpha = image[..., 3:4].astype(np.float32) / 255.0
        image = (image[..., :3] * alpha + 128 * (1 - alpha)).astype(np.uint8)
    return cv2.cvtColor(image[..., :3], cv2.COLOR_BGR2GRAY)
