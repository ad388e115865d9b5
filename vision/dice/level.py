"""A resting die's top face lies level: a regular triangle (d20) or square (d6) parallel to the table, at the die's
height above it. With the table calibrated, that leaves four unknowns per die (where it stands, which way it is
turned, how big it is) where the face finder's corner map has six or eight (every corner free), and it rules out
the faces a d20 shows its camera from the side: they lean, so no level polygon passes through their corners.

The camera comes from the calibration's homography alone (`TableCamera.from_homography`): the focal length that
makes the table's two axes orthogonal and equally long, with the principal point at the frame's centre, as webcams
and phones have it (no lens distortion: webcams correct it before the frame leaves them). `fit_level_face` then
scores every level polygon of a coarse grid around the found die by the corner evidence at its corners, and refines
the best one."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from vision.dice.crops import FACE_SIDES

# A face's circumradius as a share of the die's resting height: a d20's face (edge a) has radius a / sqrt(3) and the
# die stands 1.5115 a tall (twice the icosahedron's inradius); a d6's face is a square of the die's own edge, its
# corners a little rounded.
FACE_RADIUS = {"d20": (1 / math.sqrt(3)) / 1.5115, "d6": 0.69}
DIE_MM = {"d20": (14.0, 30.0), "d6": (10.0, 26.0)}  # resting heights a table die comes in
FINE_HEIGHTS = np.array([0.92, 0.96, 1.0, 1.04, 1.08])  # the finer grid's heights, shares of the coarse best
OUTLINE = {"d20": 1.2, "d6": 1.5}  # a resting die's outline across, seen from above at a slant, in heights
MARKS = 12  # the strongest corner marks a face is fitted to (a face has 3 or 4 corners; the rest are doubt)
FALLBACK_HFOV_DEG = 62.0  # a webcam's field of view, for a camera looking straight down (its focal is unobservable)


class LevelFitError(ValueError):
    """The calibration implies no camera that looks at the table."""


@dataclass(frozen=True)
class TableCamera:
    """A pinhole camera over the table: table millimetres (z up, towards the camera) to frame pixels."""

    intrinsics: np.ndarray  # 3 x 3
    axes: np.ndarray  # 3 x 3, columns: the table's x, y and up directions in camera coordinates
    origin: np.ndarray  # 3, the table's origin in camera coordinates

    @classmethod
    def from_homography(cls, image_from_table: np.ndarray, frame_size: tuple[int, int]) -> TableCamera:
        """The camera whose view of the plane z = 0 is `image_from_table` (table mm to frame pixels)."""
        width, height = frame_size
        shift = np.array([[1.0, 0.0, -width / 2], [0.0, 1.0, -height / 2], [0.0, 0.0, 1.0]])
        g = shift @ np.asarray(image_from_table, np.float64)
        h1, h2 = g[:, 0], g[:, 1]
        # r1 . r2 = 0 and |r1| = |r2|, each linear in u = 1 / f^2: a u + b = 0.
        a = np.array([h1[0] * h2[0] + h1[1] * h2[1], h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
        b = np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
        u = -float(a @ b) / float(a @ a) if float(a @ a) > 0 else 0.0
        focal = 1.0 / math.sqrt(u) if u > 0 else 0.0
        if not width * 0.2 < focal < width * 8:
            focal = (width / 2) / math.tan(math.radians(FALLBACK_HFOV_DEG) / 2)
        k = np.array([[focal, 0.0, width / 2], [0.0, focal, height / 2], [0.0, 0.0, 1.0]])
        m = np.linalg.inv(k) @ np.asarray(image_from_table, np.float64)
        scale = 2.0 / (np.linalg.norm(m[:, 0]) + np.linalg.norm(m[:, 1]))
        if m[2, 2] * scale < 0:  # the table must lie in front of the camera
            scale = -scale
        r1, r2, origin = m[:, 0] * scale, m[:, 1] * scale, m[:, 2] * scale
        u_, _, vt = np.linalg.svd(np.column_stack([r1, r2]), full_matrices=False)
        r1, r2 = (u_ @ vt).T
        up = np.cross(r1, r2)
        if float(up @ origin) > 0:  # "up" points from the table towards the camera, whichever way x and y run
            up = -up
        if origin[2] <= 0:
            raise LevelFitError("the table calibration puts the table behind the camera")
        return cls(k, np.column_stack([r1, r2, up]), origin)

    def project(self, points: np.ndarray) -> np.ndarray:
        """(..., 3) table mm to (..., 2) frame pixels."""
        return self.project_xyz(points[..., 0], points[..., 1], points[..., 2])

    @cached_property
    def projection(self) -> np.ndarray:
        """3 x 4: table mm (homogeneous) to frame pixels (homogeneous)."""
        return self.intrinsics @ np.column_stack([self.axes, self.origin])

    @cached_property
    def eye(self) -> np.ndarray:
        """The camera's centre in table mm."""
        return -self.axes.T @ self.origin

    def project_xyz(self, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Table mm given coordinate by coordinate (arrays of one shape) to (..., 2) frame pixels."""
        p = self.projection
        w = p[2, 0] * x + p[2, 1] * y + p[2, 2] * z + p[2, 3]
        u = (p[0, 0] * x + p[0, 1] * y + p[0, 2] * z + p[0, 3]) / w
        v = (p[1, 0] * x + p[1, 1] * y + p[1, 2] * z + p[1, 3]) / w
        return np.stack([u, v], -1)

    def on_plane(self, pixels: np.ndarray, z_mm: float) -> np.ndarray:
        """(n, 2) frame pixels to the (n, 2) table points where their rays meet the level plane z = z_mm."""
        rays = np.column_stack([pixels, np.ones(len(pixels))]) @ np.linalg.inv(self.intrinsics).T
        local = rays @ self.axes  # each ray's direction in table axes
        depth = (z_mm - self.eye[2]) / local[:, 2]
        return self.eye[:2] + depth[:, None] * local[:, :2]


@dataclass(frozen=True)
class Marks:
    """Corner marks scored where they lie, without a map: for the few hundred sharp looks `lean_of` takes, a map
    fine enough for their spread would cost more than the looks."""

    points: np.ndarray  # (k, 2) frame pixels
    weights: np.ndarray  # (k,)
    sigma: float

    def at(self, corners: np.ndarray) -> np.ndarray:
        """(m,) the mean over each candidate's corners (m, n, 2) of the strongest mark near it."""
        if len(self.points) == 0:
            return np.zeros(corners.shape[0])
        d2 = ((corners[..., None, :] - self.points) ** 2).sum(-1)
        return (self.weights * np.exp(-d2 / (2 * self.sigma**2))).max(-1).mean(-1)


@dataclass(frozen=True)
class LevelFace:
    corners: np.ndarray  # (n, 2) frame pixels
    score: float  # the mean corner evidence at its corners, 0-1
    foot_mm: tuple[float, float]  # the die's centre on the table
    height_mm: float
    lean: float = math.nan  # how much better a leaning face than a level one fits the marks (`lean_of`): a cocked
    # die; NaN until weighed (`weighed`: the search costs more than the fit, and most dice never need it)
    lean_deg: float = math.nan  # the leaning face's tilt
    pose: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # x, y (mm), turn (radians), height (mm)
    kind: str = ""
    weighing: tuple[TableCamera, Evidence, Marks] | None = field(default=None, repr=False, compare=False)

    def weighed(self) -> LevelFace:
        """This face with its lean weighed (itself when weighed already, or when nothing is left to weigh it on)."""
        if not math.isnan(self.lean) or self.weighing is None:
            return self
        lean, lean_deg = lean_of(self.weighing[0], self.kind, np.array(self.pose), *self.weighing[1:])
        return replace(self, lean=lean, lean_deg=lean_deg, weighing=None)


def level_corners(
    camera: TableCamera, kind: str, x: np.ndarray, y: np.ndarray, turn: np.ndarray, height: np.ndarray
) -> np.ndarray:
    """(m, n, 2) frame pixels of the level top faces of m dice standing at (x, y) mm, turned `turn` radians,
    `height` mm tall."""
    lx, ly = _face_offsets(kind, turn, height)
    return camera.project_xyz(x[:, None] + lx, y[:, None] + ly, np.repeat(height[:, None], lx.shape[1], 1))


def _face_offsets(kind: str, turn: np.ndarray, height: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(m, n) each face's corners about its centre, in its own plane (mm): a regular polygon of the kind's face,
    turned `turn` radians, for dice `height` mm tall."""
    n = FACE_SIDES[kind]
    angles = turn[:, None] + np.arange(n) * (2 * math.pi / n)
    radius = (FACE_RADIUS[kind] * height)[:, None]
    return radius * np.cos(angles), radius * np.sin(angles)


@dataclass(frozen=True)
class Evidence:
    """The corner marks near one die as a map: at each point, the strongest mark near it (its weight times a
    Gaussian of the distance), sampled every `step` pixels from `origin`, so that scoring a face is a lookup per
    corner however many marks there are."""

    grid: np.ndarray  # (rows, cols)
    origin: np.ndarray  # (2,) frame pixels of grid[0, 0]
    step: float

    @classmethod
    def of(cls, points: np.ndarray, weights: np.ndarray, centre: np.ndarray, reach: float, sigma: float) -> Evidence:
        """The map within `reach` pixels of `centre`."""
        step = sigma / 2
        n = int(np.ceil(2 * reach / step)) + 1
        origin = np.asarray(centre, np.float64) - reach
        axis = np.arange(n) * step
        if len(points) == 0:
            return cls(np.zeros((n, n)), origin, step)
        dx = (origin[0] + axis)[None, :, None] - points[:, 0]
        dy = (origin[1] + axis)[:, None, None] - points[:, 1]
        grid = (weights * np.exp(-(dx**2 + dy**2) / (2 * sigma**2))).max(-1)
        return cls(grid, origin, step)

    def at(self, corners: np.ndarray) -> np.ndarray:
        """(m,) the mean over each candidate's corners (m, n, 2) of the map there (bilinear; 0 off the map)."""
        u = (corners - self.origin) / self.step
        rows, cols = self.grid.shape
        x0, y0 = np.floor(u[..., 0]).astype(int), np.floor(u[..., 1]).astype(int)
        fx, fy = u[..., 0] - x0, u[..., 1] - y0
        inside = (x0 >= 0) & (y0 >= 0) & (x0 < cols - 1) & (y0 < rows - 1)
        x0, y0 = x0.clip(0, cols - 2), y0.clip(0, rows - 2)
        g = self.grid
        value = (
            g[y0, x0] * (1 - fx) * (1 - fy)
            + g[y0, x0 + 1] * fx * (1 - fy)
            + g[y0 + 1, x0] * (1 - fx) * fy
            + g[y0 + 1, x0 + 1] * fx * fy
        )
        return (value * inside).mean(-1)


def fit_level_face(
    camera: TableCamera,
    kind: str,
    centre_px: tuple[float, float],
    size_px: float,
    points: np.ndarray,
    weights: np.ndarray,
    weigh: bool = True,
) -> LevelFace:
    """The level top face, among those of a die standing near the found one, whose corners the corner marks
    (`points` in frame pixels, `weights` 0-1) support best: a coarse grid over height, place and turn, then a
    finer one around the best; its lean weighed now, or (`weigh` False) when asked (`LevelFace.weighed`)."""
    low, high = DIE_MM[kind]
    centre = np.array([centre_px], np.float64)
    # the die's height from its size in the frame (millimetres per pixel where it stands), roughly: the grid spans
    # a third either way
    half = np.array([[size_px / 2, 0.0]])
    across = camera.on_plane(centre + half, 0.0) - camera.on_plane(centre - half, 0.0)
    guess = float(np.clip(np.linalg.norm(across) / OUTLINE[kind], low, high))
    sigma = max(size_px * 0.08, 1.5)
    strongest = np.argsort(-np.asarray(weights))[:MARKS]
    marks = Evidence.of(np.asarray(points)[strongest], np.asarray(weights)[strongest], centre[0], size_px, sigma)
    period = 2 * math.pi / FACE_SIDES[kind]
    coarse = [
        _grid(camera.on_plane(centre, h / 2)[0], 0.35 * h, 7, np.arange(16) * period / 16, np.array([h]))
        for h in guess * np.array([0.7, 0.85, 1.0, 1.15, 1.3])
    ]
    best, _, _ = _best(camera, kind, np.concatenate(coarse, 1), marks)
    x, y, turn, height = best
    fine = _grid((x, y), 0.08 * height, 5, turn + np.linspace(-1, 1, 9) * period / 24, height * FINE_HEIGHTS)
    best, score, corners = _best(camera, kind, fine, marks)
    sharp = Marks(np.asarray(points)[strongest], np.asarray(weights)[strongest], max(size_px * LEAN_SIGMA, 1.0))
    face = LevelFace(
        corners.astype(np.float32),
        score,
        (float(best[0]), float(best[1])),
        float(best[3]),
        pose=(float(best[0]), float(best[1]), float(best[2]), float(best[3])),
        kind=kind,
        weighing=(camera, marks, sharp),
    )
    return face.weighed() if weigh else face


LEAN_SIGMA = 0.04  # the marks' spread when a leaning face is weighed against a level one, in die sizes
LEAN_DEG = np.array([8.0, 14.0, 20.0, 27.0, 35.0])  # the tilts a cocked die is looked for at (scenes: 12-35)
LEAN_DIRECTIONS = 12
LEAN_ROUNDS = 4  # at most: a round that finds no better leaning face ends the search
LEAN_HEIGHTS = np.array([0.9, 1.0, 1.1])  # the leaning face's centre may stand lower or higher than the level one's


def lean_of(camera: TableCamera, kind: str, level: np.ndarray, loose: Evidence, sharp: Marks) -> tuple[float, float]:
    """(gain, tilt in degrees): the best face leaning 8-35 degrees any way against the best level one, near the
    level fit `level` (x, y, turn, height), both scored on `sharp` marks. A die cocked on a card's edge or another
    die shows a top face that leans; a resting one shows none better than level. (A d20's faces are 42 degrees
    apart, so some face of a cocked d20 always looks nearly level to a loose fit: the level fit's own score barely
    tells them apart.) Every tilt, way, place and height near the level fit is looked up on the `loose` map, then
    the best is moved about itself on the sharp marks for a few rounds; the level face is moved as far."""
    x, y, turn, height = (float(v) for v in level)
    heights = height * LEAN_HEIGHTS
    flat_near = np.concatenate([_moved((x, y, turn, h), 3, 3) for h in heights], 1)
    flat = float(sharp.at(leaning_corners(camera, kind, flat_near, *np.zeros((2, flat_near.shape[1])))).max())
    places = np.concatenate([_moved((x, y, turn, h), 3, 1) for h in heights], 1)
    ways = np.arange(LEAN_DIRECTIONS) * 2 * math.pi / LEAN_DIRECTIONS
    tilt, way = (np.tile(g.ravel(), places.shape[1]) for g in np.meshgrid(np.radians(LEAN_DEG), ways, indexing="ij"))
    faces = np.repeat(places, len(LEAN_DEG) * LEAN_DIRECTIONS, 1)
    best = int(loose.at(leaning_corners(camera, kind, faces, tilt, way)).argmax())
    face, lean = faces[:, best], np.array([tilt[best], way[best]])
    score = -math.inf
    steps = np.array([math.radians(3.0), math.pi / LEAN_DIRECTIONS / 2])
    shifts = np.stack(np.meshgrid([-1, 0, 1], [-1, 0, 1], indexing="ij"), -1).reshape(-1, 2) * steps
    for _ in range(LEAN_ROUNDS):
        near = _moved((face[0], face[1], face[2], face[3]), 3, 3)
        tilt, way = (np.tile(v, near.shape[1]) for v in (lean + shifts).T)
        faces = np.repeat(near, len(shifts), 1)
        scores = sharp.at(leaning_corners(camera, kind, faces, tilt, way))
        i = int(scores.argmax())
        if scores[i] <= score:
            break
        score, face, lean = float(scores[i]), faces[:, i], np.array([tilt[i], way[i]])
    return score - flat, float(np.degrees(lean[0]))


def _moved(level: tuple[float, float, float, float], places: int, turns: int) -> np.ndarray:
    """(4, m) a face's (x, y, turn, height) moved on a places x places grid within an eighth of its height and over
    `turns` turns within a 48th of a full turn either way (one candidate when both are 1)."""
    x, y, turn, height = level
    reach = np.linspace(-0.12, 0.12, places) * height if places > 1 else np.zeros(1)
    spin = np.linspace(-1, 1, turns) * math.pi / 24 if turns > 1 else np.zeros(1)
    ox, oy, ot = (g.ravel() for g in np.meshgrid(reach, reach, spin, indexing="ij"))
    return np.stack([x + ox, y + oy, turn + ot, np.full(ox.shape, height)])


def leaning_corners(camera: TableCamera, kind: str, faces: np.ndarray, tilt: np.ndarray, way: np.ndarray) -> np.ndarray:
    """(m, n, 2) frame pixels of the top faces (x, y, turn, height; 4 x m) tilted by `tilt` radians about the level
    axis across the direction `way` (a tilt of 0: `level_corners`)."""
    x, y, turn, height = faces
    lx, ly = _face_offsets(kind, turn, height)
    # each corner turned about the level axis (-sin way, cos way, 0) by the tilt (Rodrigues' formula)
    ux, uy = -np.sin(way)[:, None], np.cos(way)[:, None]
    ca, sa = np.cos(tilt)[:, None], np.sin(tilt)[:, None]
    along = (ux * lx + uy * ly) * (1 - ca)
    return camera.project_xyz(
        x[:, None] + lx * ca + ux * along, y[:, None] + ly * ca + uy * along, height[:, None] + (ux * ly - uy * lx) * sa
    )


def _grid(
    foot: tuple[float, float] | np.ndarray,
    reach: float,
    steps: int,
    turns: np.ndarray,
    heights: np.ndarray,
) -> np.ndarray:
    """(4, m) candidates (x, y, turn, height): places within `reach` mm of `foot` on a steps x steps grid, every
    turn and height given."""
    offsets = np.linspace(-reach, reach, steps)
    ox, oy, ot, oh = np.meshgrid(offsets, offsets, turns, heights, indexing="ij")
    return np.stack([foot[0] + ox.ravel(), foot[1] + oy.ravel(), ot.ravel(), oh.ravel()])


def _best(
    camera: TableCamera, kind: str, candidates: np.ndarray, marks: Evidence
) -> tuple[np.ndarray, float, np.ndarray]:
    """The candidate whose level face the corner marks support best, its score and its corners."""
    corners = level_corners(camera, kind, *candidates)
    scores = marks.at(corners)
    i = int(scores.argmax())
    return candidates[:, i], float(scores[i]), corners[i]
