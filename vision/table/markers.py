"""The table plane from a printed mat's ArUco markers, kept frame after frame (issue 20).

Each marker the camera finds gives four exact correspondences between frame pixels and table millimetres (the
layout says where it was printed), so the plane needs no guess about the camera: a homography fitted to the corners
of every marker in view (RANSAC, so one misread marker cannot bend it). Two markers are the least this trusts: one
marker's four corners also fix a homography, but one 30 mm square extrapolated across a table half a metre wide
puts its far edge centimetres off.

`MatTracker` keeps the plane across frames, as a live table needs:
- markers covered by hands or cards: the plane is refitted from those still in view, or held while too few show;
- a camera bumped mid-game: the markers' corners land away from where the held plane puts them, and the plane is
  refitted from the new view (or, with too few markers in view, dropped until they show again: a stale plane
  would put every card in the wrong zone). The game's state is the tracker's and is not touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.recognise.calibration import TableCalibration
from vision.synth.camera import apply_homography
from vision.table.mat import ARUCO_DICTIONARY, MatLayout

MIN_MARKERS = 2  # markers in view to fit the plane
RANSAC_MM = 3.0  # a corner further than this from the fitted plane is an outlier
BUMP_PX = 4.0  # the markers' corners this far (mean, frame pixels) from where the held plane puts them: moved


@dataclass(frozen=True)
class Sighting:
    """One marker found in a frame: its id and corners (TL, TR, BR, BL as printed) in frame pixels."""

    id: int
    corners: np.ndarray  # (4, 2) float32


def detector() -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX  # corners to a tenth of a pixel, not a pixel
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY), params)


def find_markers(frame: np.ndarray, finder: cv2.aruco.ArucoDetector | None = None) -> list[Sighting]:
    """Every mat marker in a frame (BGR or grey)."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    corners, ids, _ = (finder or detector()).detectMarkers(grey)
    if ids is None:
        return []
    return [Sighting(int(i), c.reshape(4, 2).astype(np.float32)) for c, i in zip(corners, ids.ravel(), strict=True)]


@dataclass(frozen=True)
class PlaneFit:
    homography: np.ndarray  # 3x3, frame pixels to table mm
    markers: tuple[int, ...]  # the ids it was fitted to (outliers excluded)
    error_mm: float  # root mean square distance of their corners from the plane, table mm


def fit_plane(sightings: Sequence[Sighting], layout: MatLayout, min_markers: int = MIN_MARKERS) -> PlaneFit | None:
    """The plane from the sighted markers that the layout has, or None with fewer than `min_markers` of them."""
    printed = {m.id: np.array(m.corners_mm, np.float32) for m in layout.markers}
    known = [s for s in sightings if s.id in printed]
    if len({s.id for s in known}) < min_markers:
        return None
    image = np.concatenate([s.corners for s in known])
    table = np.concatenate([printed[s.id] for s in known])
    h, inliers = cv2.findHomography(image, table, cv2.RANSAC, RANSAC_MM)
    if h is None or abs(np.linalg.det(h)) < 1e-12:
        return None
    keep = inliers.ravel().astype(bool).reshape(-1, 4).all(axis=1)  # a marker is kept whole or not at all
    if keep.sum() < min_markers:
        return None
    image, table = image.reshape(-1, 4, 2)[keep].reshape(-1, 2), table.reshape(-1, 4, 2)[keep].reshape(-1, 2)
    h, _ = cv2.findHomography(image, table, 0)  # least squares on the inliers
    if h is None:
        return None
    mapped = apply_homography(h, image)
    error = float(np.sqrt(np.mean(np.sum((mapped - table) ** 2, axis=1))))
    return PlaneFit(h, tuple(s.id for s, k in zip(known, keep, strict=True) if k), error)


def displacement_px(homography: np.ndarray, sightings: Sequence[Sighting], layout: MatLayout) -> float | None:
    """How far (mean, frame pixels) the sighted markers' corners lie from where the plane `homography` puts their
    printed corners; None when no sighted marker is in the layout."""
    printed = {m.id: np.array(m.corners_mm, np.float64) for m in layout.markers}
    known = [s for s in sightings if s.id in printed]
    if not known:
        return None
    expected = apply_homography(np.linalg.inv(homography), np.concatenate([printed[s.id] for s in known]))
    seen = np.concatenate([s.corners for s in known]).astype(np.float64)
    return float(np.linalg.norm(expected - seen, axis=1).mean())


@dataclass(frozen=True)
class MatStatus:
    """What one frame did to the plane: "fitted" (first time), "refitted", "moved" (the camera was bumped and the
    plane refitted), "held" (too few markers in view, the plane kept), "lost" (the markers in view disagree with
    the plane and are too few to fit a new one: no plane until they show) or "none" (never fitted)."""

    state: str
    markers: int  # mat markers in view
    error_mm: float | None = None  # the fit's corner error, where it fitted


class MatTracker:
    """The table plane of a printed mat, updated from every frame it is shown."""

    def __init__(self, layout: MatLayout, min_markers: int = MIN_MARKERS) -> None:
        if len(layout.markers) < min_markers:
            raise ValueError(f"the {layout.game} layout lists {len(layout.markers)} markers; {min_markers} are needed")
        self.layout = layout
        self.min_markers = min_markers
        self.calibration: TableCalibration | None = None
        self._detector = detector()

    def update(self, frame: np.ndarray) -> MatStatus:
        sightings = [s for s in find_markers(frame, self._detector) if s.id in {m.id for m in self.layout.markers}]
        fit = fit_plane(sightings, self.layout, self.min_markers)
        held = self.calibration
        if fit is not None:
            moved = held is not None and (displacement_px(held.homography, sightings, self.layout) or 0.0) > BUMP_PX
            self.calibration = TableCalibration(fit.homography, self.layout)
            state = "fitted" if held is None else ("moved" if moved else "refitted")
            return MatStatus(state, len(sightings), fit.error_mm)
        if held is None:
            return MatStatus("none", len(sightings))
        off = displacement_px(held.homography, sightings, self.layout)
        if off is not None and off > BUMP_PX:
            self.calibration = None
            return MatStatus("lost", len(sightings))
        return MatStatus("held", len(sightings))
