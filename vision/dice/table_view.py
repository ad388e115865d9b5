"""A die seen from the table's own side: its neighbourhood cut from the frame through the homography of the level
plane at the die's height, so a resting die's top face is a regular triangle or square in the picture itself and a
cocked die's is not, whatever the camera's tilt (models/dice.md, "Limits, and the next design"; session 46).

The face finder then sees what "level" means instead of inferring it afterwards from loose corner marks: the faces
a tilted camera sees from the side fall outside the top face, stretched away from the camera, and the top face
comes at one scale (its millimetres, not the die's distance). The picture's axes are the table's, turned as asked;
it is never mirrored (a plane seen from the camera's side keeps its orientation)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.dice.level import FACE_RADIUS, TableCamera

VIEW_SPAN = 1.8  # the view's side, in die heights guessed from the find (a resting die's outline is 1.2-1.5)
OUTLINE_HEIGHTS = 1.35  # a die's outline across, seen from above at a slant, in heights: between a d20's and a d6's


def plane_to_frame(camera: TableCamera, z_mm: float) -> np.ndarray:
    """3 x 3: the level plane z = `z_mm` (table mm, x and y) to frame pixels."""
    p = camera.projection
    return np.column_stack([p[:, 0], p[:, 1], p[:, 2] * z_mm + p[:, 3]])


@dataclass(frozen=True)
class TableView:
    """Where a die's view lies: the point of the table it is centred on, the plane's height, its side (mm) and turn."""

    x_mm: float
    y_mm: float
    z_mm: float
    side_mm: float
    turn_deg: float = 0.0

    def frame_from_view(self, camera: TableCamera, out_px: int) -> np.ndarray:
        """3 x 3: the view's pixels (`out_px` a side; pixel centres at whole numbers) to frame pixels."""
        s = self.side_mm / out_px
        c, t = math.cos(math.radians(self.turn_deg)), math.sin(math.radians(self.turn_deg))
        # view pixel -> mm about the view's centre (turned) -> the plane's mm
        about = np.array([[s, 0.0, (0.5 - out_px / 2) * s], [0.0, s, (0.5 - out_px / 2) * s], [0.0, 0.0, 1.0]])
        turned = np.array([[c, -t, self.x_mm], [t, c, self.y_mm], [0.0, 0.0, 1.0]])
        matrix = plane_to_frame(camera, self.z_mm) @ turned @ about
        if _orientation(matrix, out_px) < 0:  # the table's axes run mirrored to the camera's: flip the view's rows
            flip = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, out_px - 1.0], [0.0, 0.0, 1.0]])
            matrix = matrix @ flip
        return matrix / matrix[2, 2]


def _orientation(matrix: np.ndarray, out_px: int) -> float:
    """The sign of the map's Jacobian at the view's centre (negative: the view would be a mirror image)."""
    c = (out_px - 1) / 2
    x, y, w = matrix @ np.array([c, c, 1.0])
    jacobian = (matrix[:2, :2] * w - np.outer([x, y], matrix[2, :2])) / w**2
    return float(np.linalg.det(jacobian))


def view_of_find(
    camera: TableCamera, centre_px: tuple[float, float], size_px: float, turn_deg: float = 0.0
) -> TableView:
    """The view of a die found at `centre_px`, `size_px` across: its height guessed from its size on the table
    (millimetres per pixel where it stands), the plane at that height, centred where the find's ray meets half of
    it (a die's image centre is about its middle's)."""
    centre = np.array([centre_px], np.float64)
    half = np.array([[size_px / 2, 0.0]])
    across = float(np.linalg.norm(camera.on_plane(centre + half, 0.0) - camera.on_plane(centre - half, 0.0)))
    height = across / OUTLINE_HEIGHTS
    x, y = camera.on_plane(centre, height / 2)[0]
    return TableView(float(x), float(y), height, VIEW_SPAN * height, turn_deg)


def view_picture(image: np.ndarray, frame_from_view: np.ndarray, out_px: int) -> np.ndarray:
    """The view (`out_px` a side) cut from `image` whose pixels are the frame's (or any picture the matrix maps to);
    the picture's edge repeated beyond it, blurred first when the view shrinks it. Only the view's footprint (and
    the blur's reach) is worked on, so a whole frame costs what a window does."""
    scale = math.sqrt(abs(_orientation(frame_from_view, out_px)))  # picture pixels per view pixel
    sigma = 0.45 * scale if scale > 1.25 else 0.0
    footprint = carried(np.array([[0, 0], [out_px, 0], [0, out_px], [out_px, out_px]]) - 0.5, frame_from_view)
    reach = math.ceil(4 * sigma) + 2
    h, w = image.shape[:2]
    x0, y0 = np.clip(np.floor(footprint.min(axis=0)).astype(int) - reach, 0, [w - 1, h - 1])
    x1, y1 = np.clip(np.ceil(footprint.max(axis=0)).astype(int) + reach + 1, [x0 + 1, y0 + 1], [w, h])
    region = image[y0:y1, x0:x1]
    if sigma:
        region = cv2.GaussianBlur(region, (0, 0), sigma)
    shift = np.array([[1.0, 0.0, -x0], [0.0, 1.0, -y0], [0.0, 0.0, 1.0]])
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    return cv2.warpPerspective(
        region, shift @ frame_from_view, (out_px, out_px), flags=flags, borderMode=cv2.BORDER_REPLICATE
    )


def carried(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """(n, 2) points carried by a 3 x 3 map (a homography, or an affine map with its last row)."""
    points = np.asarray(points, np.float64).reshape(-1, 2)
    if not len(points):
        return points
    moved = np.column_stack([points, np.ones(len(points))]) @ np.asarray(matrix, np.float64).T
    return moved[:, :2] / moved[:, 2:]


def to_view(points_px: np.ndarray, frame_from_view: np.ndarray) -> np.ndarray:
    """(n, 2) frame pixels to the view's pixels."""
    return carried(points_px, np.linalg.inv(frame_from_view))


def top_height(camera: TableCamera, kind: str, corners_px: np.ndarray) -> float:
    """The height (mm) at which the level face whose corners the frame shows at `corners_px` is the top face of a
    die that tall (its circumradius FACE_RADIUS of the height): the truth's height for a training die. A face seen
    on the plane z has a radius that shrinks as z rises towards the camera, the die's grows: one crossing."""
    corners = np.asarray(corners_px, np.float64).reshape(-1, 2)

    def excess(z: float) -> float:
        on = camera.on_plane(corners, z)
        return float(np.linalg.norm(on - on.mean(axis=0), axis=1).mean()) - FACE_RADIUS[kind] * z

    low, high = 4.0, 80.0  # mm: no table die is shorter or taller
    if excess(low) <= 0 or excess(high) >= 0:
        raise ValueError(f"no height between {low} and {high} mm makes these corners a {kind}'s top face")
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if excess(mid) > 0 else (low, mid)
    return (low + high) / 2
