"""3-D game pieces (d6 and d20 dice, wooden cubes, agent pawns) rendered in true perspective through the scene camera.

Dice must be recognised from every face at every angle, so they are meshes, not stickers: the d6 and d20 are the
meshes of the npm package @3d-dice/dice-box (MIT, vendored by solids_assets.py, values from its own face map);
cubes and pawns are built here. A small numpy/OpenCV rasteriser draws them: vertices go through the same pinhole
`Camera` as the table (K, R, t), back faces are culled, the remaining triangles are filled far-to-near into a
triangle-id buffer (exact for the convex dice and cubes; a depth-sorted painter's order for the pawns), each pixel
gets perspective-correct texture coordinates and a smooth normal, and Lambert + Blinn-Phong + a Fresnel sheen shade
it. The buffer is supersampled 2-3x and box-filtered down, so silhouettes and numerals are antialiased like a
camera's pixels. The result is a `Patch` the scene compositor pastes like any other object, with exact labels: the
projected outline, the top face's polygon and the value it shows.

Sizes (millimetres; `size_mm` is always the piece's resting height): d6 16 mm edge (the common 16 mm die), d20
18 mm face to face (about 20-22 mm point to point, like most d20s on sale), cubes 8-10 mm (the brief; wooden
game cubes are 8 or 10 mm), pawns 16 mm wide x 25 mm tall (the brief; a guess at The LOOP's agent pawns) or
meeples 20 x 20 x 9 mm (guess). Looks come from `variant`: a d6 shows pips, the dice-box numerals or numerals in
one of the system fonts; a d20 the dice-box numerals or a system font; cubes get stained wood grain; pawns are
painted wood or plastic. Many designs, so a model cannot learn one die.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision.synth.art.common import Surface, design_split, draw_text, font_files, hsv_bgr, jitter_colour
from vision.synth.camera import Camera
from vision.synth.effects import cast_shadow
from vision.synth.occluders import Patch
from vision.synth.solids_assets import DATA_DIR, MESH_FILE, NUMERALS_FILE

SOLID_KINDS = ("d6", "d20", "cube", "pawn")
DIE_SIDES = {"d6": 6, "d20": 20}
DEFAULT_SIZE_MM = {"d6": 16.0, "d20": 18.0, "cube": 9.0, "pawn": 25.0}
DEFAULT_LIGHT = (-0.35, 0.45, 0.82)  # towards the light, table frame: a lamp above, left and behind
CATALOGUE = Path(__file__).resolve().parents[2] / "games" / "the_loop" / "data" / "catalogue.json"
BGR = tuple[int, int, int]

# Dice bodies and inks as sold (BGR): white/black, black/white or gold, red, blue, green, ivory, yellow, purple.
DICE_PALETTE: tuple[tuple[BGR, BGR], ...] = (
    ((236, 236, 232), (25, 25, 25)),
    ((236, 236, 232), (30, 30, 170)),
    ((205, 228, 238), (20, 20, 20)),
    ((28, 28, 30), (235, 235, 235)),
    ((28, 28, 30), (70, 175, 215)),
    ((40, 40, 185), (240, 240, 240)),
    ((30, 25, 120), (80, 190, 225)),
    ((150, 75, 30), (240, 240, 240)),
    ((60, 135, 40), (240, 240, 240)),
    ((40, 200, 235), (25, 25, 25)),
    ((125, 45, 95), (240, 240, 240)),
    ((30, 120, 235), (25, 25, 25)),
    ((125, 125, 120), (245, 245, 245)),
)
CUBE_COLOURS: dict[str, BGR] = {"red": (40, 45, 180), "green": (45, 135, 50), "blue": (150, 80, 30)}
# One colour per agent, in catalogue order; none is red, green or blue, so a pawn is never taken for a cube.
PAWN_COLOURS: tuple[BGR, ...] = ((30, 195, 235), (130, 50, 115), (25, 120, 230), (225, 225, 220), (40, 40, 40))
DESIGNS_PER_KIND = 64  # variants beyond this repeat a look (bounds the texture cache)
# Dice have more looks: a face reader must meet numeral fonts, colours and materials it never saw. A die design's
# number falls in the train / validation / test split as every procedural design does (`art.common.design_split`);
# its font comes only from font families of that split, and `random_solid(..., split=)` gives it colours from that
# split's hues (DIE_HUE_SPLIT) and, held out, a resin no training die is made of.
DIE_DESIGNS = 400
DIE_HUE_SECTORS = 12  # hue in 30-degree sectors; sector s belongs to split DIE_HUE_SPLIT[s % 4]
DIE_HUE_SPLIT = ("train", "val", "train", "test")
HELD_OUT_MATERIAL = "resin"
_SYMBOL_FONTS = ("symbol", "d050000l", "z003", "dingbat")


class SolidError(ValueError):
    """A solid was asked for with a kind, value, rotation or size it cannot have; the message names the field."""


# ----------------------------------------------------------------------------------------------------- rotations


def as_rotation(value: object, where: str = "rotation") -> np.ndarray:
    """A 3x3 local-to-table rotation from a 3x3 matrix, 9 numbers (row-major) or a quaternion (w, x, y, z)."""
    try:
        arr = np.asarray(value, np.float64)
    except (TypeError, ValueError) as exc:
        raise SolidError(f"{where}: expected a 3x3 matrix or a quaternion (w, x, y, z), got {value!r}") from exc
    if arr.shape == (4,):
        norm = float(np.linalg.norm(arr))
        if not math.isfinite(norm) or norm < 1e-9:
            raise SolidError(f"{where}: quaternion {arr.tolist()} has no direction (zero or not finite)")
        w, x, y, z = arr / norm
        return np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ]
        )
    if arr.size != 9:
        raise SolidError(f"{where}: expected a 3x3 matrix or a quaternion (w, x, y, z), got shape {arr.shape}")
    matrix = arr.reshape(3, 3)
    if not np.all(np.isfinite(matrix)) or not np.allclose(matrix @ matrix.T, np.eye(3), atol=1e-4):
        raise SolidError(f"{where}: matrix is not orthonormal: {np.round(matrix, 4).tolist()}")
    if np.linalg.det(matrix) < 0:
        raise SolidError(f"{where}: matrix is a reflection (determinant -1), not a rotation")
    return matrix


def rotation_about(axis: Sequence[float], angle_rad: float) -> np.ndarray:
    unit = np.asarray(axis, np.float64)
    unit = unit / np.linalg.norm(unit)
    return cv2.Rodrigues(unit * angle_rad)[0]


def rotation_aligning(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The smallest rotation taking direction `source` onto `target`."""
    a, b = source / np.linalg.norm(source), target / np.linalg.norm(target)
    axis = np.cross(a, b)
    sin, cos = float(np.linalg.norm(axis)), float(a @ b)
    if sin < 1e-9:
        if cos > 0:
            return np.eye(3)
        helper = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        return rotation_about(np.cross(a, helper), math.pi)
    return rotation_about(axis, math.atan2(sin, cos))


def _rotation_tuple(matrix: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(matrix, np.float64).ravel())


# ----------------------------------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class SolidPose:
    """Where a solid is at one instant: z_mm is the height of its lowest point (0 = resting on the table)."""

    x_mm: float
    y_mm: float
    z_mm: float
    rotation: tuple[float, ...]  # 3x3 row-major, local -> table

    @property
    def matrix(self) -> np.ndarray:
        return np.array(self.rotation, np.float64).reshape(3, 3)


@dataclass(frozen=True)
class SolidSpec:
    """One 3-D piece. `rotation` accepts a 3x3 matrix, 9 numbers or a quaternion (w, x, y, z) and is stored as 9
    floats, so specs stay hashable and JSON-friendly. `code` names what the piece is in a game: the agent code for
    a pawn, 'red' / 'green' / 'blue' for a cube, empty for dice (their value comes from the rotation)."""

    kind: str
    x_mm: float
    y_mm: float
    z_mm: float = 0.0
    rotation: tuple[float, ...] = _rotation_tuple(np.eye(3))
    size_mm: float = 0.0  # 0 = the kind's default
    colour: BGR = (236, 236, 232)
    ink: BGR = (25, 25, 25)
    variant: int = 0
    code: str = ""

    def __post_init__(self) -> None:
        check_kind(self.kind)
        object.__setattr__(self, "rotation", _rotation_tuple(as_rotation(self.rotation, f"{self.kind} rotation")))
        size = self.size_mm or DEFAULT_SIZE_MM[self.kind]
        if not (math.isfinite(size) and 1.0 <= size <= 200.0):
            raise SolidError(f"{self.kind} size_mm: expected 1-200 mm, got {self.size_mm!r}")
        object.__setattr__(self, "size_mm", float(size))
        if not math.isfinite(self.z_mm) or self.z_mm < 0:
            raise SolidError(f"{self.kind} z_mm: height of the lowest point must be >= 0, got {self.z_mm!r}")
        for name in ("colour", "ink"):
            value = getattr(self, name)
            if len(value) != 3 or not all(0 <= int(c) <= 255 for c in value):
                raise SolidError(f"{self.kind} {name}: expected a BGR triple of 0-255, got {value!r}")
            object.__setattr__(self, name, tuple(int(c) for c in value))

    @property
    def matrix(self) -> np.ndarray:
        return np.array(self.rotation, np.float64).reshape(3, 3)

    def at(self, pose: SolidPose) -> SolidSpec:
        """The same piece moved to another pose (one frame of a `tumble`)."""
        return replace(self, x_mm=pose.x_mm, y_mm=pose.y_mm, z_mm=pose.z_mm, rotation=pose.rotation)


@dataclass
class SolidRender:
    """A rendered piece and its labels, all in image pixels of the full frame."""

    patch: Patch
    mask: np.ndarray  # bool silhouette (alpha > 0.5) in the patch window
    outline: np.ndarray  # (k, 2) convex hull of the projected mesh
    box: tuple[float, float, float, float] | None  # x1, y1, x2, y2 of the mask, clipped to the frame
    top_face: np.ndarray | None  # (k, 2) the upward face (the one showing the value on a die); None for pawns
    value: int | None  # the die's value; None for cubes and pawns
    top_z_mm: float  # height of the highest point above the table (for shadow length)
    depth_mm: float  # distance from the camera centre to the piece's centre (for paint order)
    centre_px: tuple[float, float] = field(default=(0.0, 0.0))


def check_kind(kind: str) -> None:
    if kind not in SOLID_KINDS:
        raise SolidError(f"unknown solid kind {kind!r}; expected one of {', '.join(SOLID_KINDS)}")


def check_value(kind: str, value: int | None) -> None:
    check_kind(kind)
    if kind in DIE_SIDES:
        sides = DIE_SIDES[kind]
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 1 <= int(value) <= sides:
            raise SolidError(f"{kind} value: expected an integer 1-{sides}, got {value!r}")
    elif kind == "cube" and value is not None and not (isinstance(value, int | np.integer) and 1 <= value <= 6):
        raise SolidError(f"cube value: expected None (any face up) or a face number 1-6, got {value!r}")
    elif kind == "pawn" and value is not None:
        raise SolidError(f"pawn value: a pawn has no value and always stands upright; expected None, got {value!r}")


# ----------------------------------------------------------------------------------------------------- geometry


@dataclass(frozen=True)
class Mesh:
    """Geometry at a resting height of 1, centred on its bounding box; per-corner normals so bevels shade smooth
    while flat faces stay flat."""

    vertices: np.ndarray  # (V, 3)
    triangles: np.ndarray  # (T, 3) counter-clockwise seen from outside
    corner_normals: np.ndarray  # (T, 3, 3)
    face_normals: np.ndarray  # (F, 3) the flat faces a piece can rest on
    face_values: np.ndarray  # (F,) the number each face shows (dice) or its index (cubes, pawns)
    face_polygons: tuple[np.ndarray, ...]  # each (k, 3) on its face's plane
    convex: bool


def _triangle_normals(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    normals = np.cross(b - a, c - a)
    return normals / np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (the vendored float32 normals are a few 1e-8 off, enough to skew a resting die)."""
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


@cache
def _dice_box_arrays() -> dict[str, np.ndarray]:
    path = DATA_DIR / MESH_FILE
    if not path.is_file():
        raise SolidError(f"{path} is missing: rebuild it with `python -m vision.synth.solids_assets PACKAGE_DIR`")
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


@cache
def dice_box_uv(kind: str) -> np.ndarray:
    """Per-corner texture coordinates (image fractions) into the vendored numeral texture."""
    arrays = _dice_box_arrays()
    return arrays[f"{kind}_uv"][arrays[f"{kind}_triangles"]].astype(np.float64)


@cache
def mesh(kind: str, shape: str = "") -> Mesh:
    """The mesh of a kind; `shape` picks a pawn's form ('pawn' or 'meeple')."""
    check_kind(kind)
    if kind in DIE_SIDES:
        arrays = _dice_box_arrays()
        triangles = arrays[f"{kind}_triangles"].astype(np.int64)
        return Mesh(
            vertices=arrays[f"{kind}_vertices"].astype(np.float64),
            triangles=triangles,
            corner_normals=arrays[f"{kind}_normals"][triangles].astype(np.float64),
            face_normals=_unit(arrays[f"{kind}_face_normals"].astype(np.float64)),
            face_values=arrays[f"{kind}_face_values"].astype(np.int64),
            face_polygons=tuple(p.astype(np.float64) for p in arrays[f"{kind}_face_polygons"]),
            convex=True,
        )
    if kind == "cube":
        return _cube_mesh(0.09)
    return _meeple_mesh() if shape == "meeple" else _pawn_mesh()


def convex_hull_mesh(points: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Triangles and planar face polygons (vertex indices, counter-clockwise from outside) of the convex hull of a
    few dozen points, by testing every plane through three points: simple, exact and fast enough to run once."""
    centre = points.mean(axis=0)
    triples = np.array(list(itertools.combinations(range(len(points)), 3)))
    p0, p1, p2 = (points[triples[:, i]] for i in range(3))
    normals = np.cross(p1 - p0, p2 - p0)
    lengths = np.linalg.norm(normals, axis=1)
    keep = lengths > 1e-9
    normals, p0 = normals[keep] / lengths[keep, None], p0[keep]
    side = np.einsum("ij,ij->i", normals, p0 - centre)
    normals, p0 = normals[np.abs(side) > 1e-9], p0[np.abs(side) > 1e-9]  # a face plane never passes the centre
    normals *= np.sign(side[np.abs(side) > 1e-9])[:, None]
    offsets = np.einsum("ij,ij->i", normals, p0)
    outside = (points @ normals.T - offsets) > 1e-7
    supporting = ~outside.any(axis=0)
    planes = np.unique(np.round(np.column_stack([normals, offsets])[supporting], 6), axis=0)
    triangles, faces = [], []
    for plane in planes:
        normal = plane[:3] / np.linalg.norm(plane[:3])
        on = np.nonzero(np.abs(points @ normal - plane[3]) < 1e-5)[0]
        ring = on[_ccw_order(points[on], normal)]
        faces.append(ring)
        triangles += [(ring[0], ring[i], ring[i + 1]) for i in range(1, len(ring) - 1)]
    return np.array(triangles, np.int64), faces


def _ccw_order(points: np.ndarray, normal: np.ndarray) -> np.ndarray:
    centre = points.mean(axis=0)
    e1 = points[0] - centre
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(normal, e1)
    return np.argsort(np.arctan2((points - centre) @ e2, (points - centre) @ e1))


@cache
def _cube_mesh(bevel: float) -> Mesh:
    """A cube with chamfered edges and corners, edge 1: wooden game cubes are sanded, so their edges catch light."""
    half, inner = 0.5, 0.5 - bevel
    points = np.array(
        [
            perm
            for sx, sy, sz in itertools.product((-1, 1), repeat=3)
            for perm in (
                (sx * half, sy * inner, sz * inner),
                (sx * inner, sy * half, sz * inner),
                (sx * inner, sy * inner, sz * half),
            )
        ]
    )
    triangles, faces = convex_hull_mesh(points)
    tri_normals = _triangle_normals(points, triangles)
    axes = np.vstack([np.eye(3), -np.eye(3)])
    polygons = []
    for axis in axes:
        ring = next(f for f in faces if abs(_triangle_normals(points, f[None, :3])[0] @ axis - 1) < 1e-6)
        polygons.append(points[ring])
    return Mesh(
        vertices=points,
        triangles=triangles,
        corner_normals=np.repeat(tri_normals[:, None, :], 3, axis=1),
        face_normals=axes,
        face_values=np.arange(1, 7),
        face_polygons=tuple(polygons),
        convex=True,
    )


def _revolve(profile: np.ndarray, segments: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices, triangles and smooth per-corner normals of a profile (r, z) spun about the z axis."""
    angles = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    r, z = profile[:, 0], profile[:, 1]
    verts = np.stack([np.outer(r, np.cos(angles)), np.outer(r, np.sin(angles)), np.repeat(z[:, None], segments, 1)], -1)
    tangent = np.gradient(profile, axis=0)
    n_r, n_z = tangent[:, 1], -tangent[:, 0]  # profile runs bottom-centre -> top-centre: outward is (dz, -dr)
    length = np.hypot(n_r, n_z)
    n_r, n_z = n_r / length, n_z / length
    norms = np.stack(
        [np.outer(n_r, np.cos(angles)), np.outer(n_r, np.sin(angles)), np.repeat(n_z[:, None], segments, 1)], -1
    )
    n_rings = len(profile)
    index = np.arange(n_rings * segments).reshape(n_rings, segments)
    triangles = []
    for i in range(n_rings - 1):
        for j in range(segments):
            a, b = index[i, j], index[i, (j + 1) % segments]
            c, d = index[i + 1, j], index[i + 1, (j + 1) % segments]
            triangles += [(a, b, d), (a, d, c)]
    tris = np.array(triangles, np.int64)
    flat_n = norms.reshape(-1, 3)
    return verts.reshape(-1, 3), tris, flat_n[tris]


@cache
def _pawn_mesh() -> Mesh:
    """A turned pawn: flat base, waisted body, collar and ball head, 0.64 wide and 1 tall (16 x 25 mm)."""
    head = [(0.19 * math.sin(a), 0.78 + 0.19 * -math.cos(a)) for a in np.linspace(0.35, math.pi, 9)]
    profile = np.array(
        [(0.0, 0.0), (0.30, 0.0), (0.32, 0.025), (0.31, 0.07), (0.24, 0.12), (0.17, 0.22), (0.13, 0.40),
         (0.12, 0.50), (0.17, 0.53), (0.17, 0.56), (0.11, 0.59), *head]
    )  # fmt: skip
    vertices, triangles, normals = _revolve(profile, 22)
    vertices[:, 2] -= 0.5
    top = np.array([[0.0, 0.0, 1.0]])
    return Mesh(vertices, triangles, normals, top, np.array([1]), (vertices[-22:],), convex=False)


@cache
def _meeple_mesh() -> Mesh:
    """A meeple standing up: a star-shaped outline (so a fan from its middle triangulates it) extruded 0.45 thick,
    with its side wall shaded smoothly like the sanded edge of a wooden meeple."""
    half = np.array(
        [(0.0, 0.93), (0.09, 0.91), (0.15, 0.84), (0.16, 0.75), (0.12, 0.67), (0.30, 0.64), (0.46, 0.58),
         (0.50, 0.51), (0.45, 0.45), (0.24, 0.40), (0.22, 0.34), (0.30, 0.17), (0.40, 0.02), (0.38, 0.0),
         (0.16, 0.0), (0.06, 0.13), (0.0, 0.15)]
    )  # fmt: skip
    outline = np.vstack([half, half[-2:0:-1] * [-1, 1]])
    outline = _chaikin(outline, 2)
    outline[:, 1] = outline[:, 1] / outline[:, 1].max()
    n = len(outline)
    depth = 0.45
    centre = np.array([0.0, 0.45])
    front = np.column_stack([outline[:, 0], np.full(n, depth / 2), outline[:, 1]])
    back = front * [1, -1, 1]
    vertices = np.vstack([front, back, [[centre[0], depth / 2, centre[1]], [centre[0], -depth / 2, centre[1]]]])
    fc, bc = 2 * n, 2 * n + 1
    idx = np.arange(n)
    nxt = (idx + 1) % n
    tri_front = np.column_stack([np.full(n, fc), nxt, idx])
    tri_back = np.column_stack([np.full(n, bc), n + idx, n + nxt])
    tri_side = np.vstack([np.column_stack([idx, nxt, n + nxt]), np.column_stack([idx, n + nxt, n + idx])])
    triangles = np.vstack([tri_front, tri_back, tri_side])
    edge = np.roll(outline, -1, 0) - np.roll(outline, 1, 0)
    wall = np.column_stack([-edge[:, 1], np.zeros(n), edge[:, 0]])
    wall /= np.linalg.norm(wall, axis=1, keepdims=True)
    wall *= np.sign(np.einsum("ij,ij->i", wall, front - [centre[0], 0, centre[1]]))[:, None]
    vertex_normals = np.vstack([wall, wall, [[0, 1, 0], [0, -1, 0]]])
    normals = vertex_normals[triangles]
    normals[:n] = [0, 1, 0]
    normals[n : 2 * n] = [0, -1, 0]
    fixed = _wind_outward(vertices, triangles, normals)
    vertices[:, 2] -= 0.5
    top = np.array([[0.0, 0.0, 1.0]])
    return Mesh(vertices, fixed, normals, top, np.array([1]), (vertices[:1],), convex=False)


def _chaikin(polygon: np.ndarray, rounds: int) -> np.ndarray:
    for _ in range(rounds):
        nxt = np.roll(polygon, -1, 0)
        polygon = np.stack([0.75 * polygon + 0.25 * nxt, 0.25 * polygon + 0.75 * nxt], 1).reshape(-1, 2)
    return polygon


def _wind_outward(vertices: np.ndarray, triangles: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """Flip triangles whose winding disagrees with their intended (shading) normal, so culling keeps the right
    side of non-convex meshes."""
    geometric = np.cross(
        vertices[triangles[:, 1]] - vertices[triangles[:, 0]], vertices[triangles[:, 2]] - vertices[triangles[:, 0]]
    )
    flip = np.einsum("ij,ij->i", geometric, normals.mean(axis=1)) < 0
    fixed = triangles.copy()
    fixed[flip] = fixed[flip][:, [0, 2, 1]]
    return fixed


# ----------------------------------------------------------------------------------------------------- looks


@dataclass(frozen=True)
class Design:
    """How a piece looks, drawn from (kind, variant): face marking style, font, material."""

    kind: str
    style: str  # d6: 'pips' | 'dice-box' | 'font'; d20: 'dice-box' | 'font'; cube: 'wood'; pawn: 'pawn' | 'meeple'
    font: str  # path of the font for 'font' style, else ''
    ink_scale: float  # numeral height or pip radius, relative
    accent_one: bool  # a d6 whose single pip is large and red, as on many dice
    material: str  # 'plastic' | 'wood'
    gloss: float  # multiplies the material's highlight: matte to polished
    seed: int
    lettering: Lettering | None = None  # a training die's numerals drawn beyond its font's shapes (`lettering_of`)


@dataclass(frozen=True)
class Lettering:
    """How a training die's numerals depart from its font as printed (session 36, `set_lettered`). The face reader
    read held-out fonts well and a lettering no training die had (the dice-box numerals) badly, and four times the
    faces in the same 24 font families did not help; so training dice were given numeral shapes beyond their fonts:
    stroke fonts, weight, slant, width, size, numerals pointing at an edge, other marks on 6 and 9. Measured, that
    reader read validation dice worse (models/dice.md), so no die is lettered unless asked. Never on validation or
    test dice: they keep measuring lettering no reader was taught."""

    stroke_font: int  # -1: the design's font file; else an OpenCV Hershey stroke font (cv2.FONT_HERSHEY_*)
    weight: float  # strokes grown (> 0) or thinned (< 0), in numeral heights
    slant: float  # horizontal shear
    width: float  # horizontal scale
    size: float  # height scale
    turned: bool  # a d20's numerals point at an edge of their face, not a corner (some real dice print them so)
    mark: str  # how 6 and 9 are told apart: 'bar' beneath, 'dot' after, or 'none'


def design_of(kind: str, variant: int) -> Design:
    check_kind(kind)
    return _design(kind, design_index(kind, variant))


def design_index(kind: str, variant: int) -> int:
    """The design a variant number stands for (variants beyond the kind's count repeat a look)."""
    return int(variant) % (DIE_DESIGNS if kind in DIE_SIDES else DESIGNS_PER_KIND)


def die_design_split(variant: int) -> str:
    """ "train", "val" or "test": which readers may see this die design (its font and material follow it)."""
    return design_split(int(variant) % DIE_DESIGNS)


@lru_cache(maxsize=2 * DIE_DESIGNS + 2 * DESIGNS_PER_KIND)
def _design(kind: str, index: int) -> Design:
    rng = np.random.default_rng([index, SOLID_KINDS.index(kind), 7])
    font, scale, accent, material = "", 1.0, False, "plastic"
    held_out = design_split(index) != "train"  # the dice-box numerals are one more font: never a training die's
    if kind == "d6":
        style = str(rng.choice(["pips", "dice-box", "font"], p=[0.5, 0.2, 0.3] if held_out else [0.6, 0.0, 0.4]))
        scale = float(rng.uniform(0.85, 1.15))
        accent = style == "pips" and rng.random() < 0.3
    elif kind == "d20":
        style = str(rng.choice(["dice-box", "font"], p=[0.4, 0.6] if held_out else [0.0, 1.0]))
        scale = float(rng.uniform(0.85, 1.1))
    elif kind == "cube":
        style, material = "wood", "wood"
    else:
        style = str(rng.choice(["pawn", "meeple"], p=[0.6, 0.4]))
        material = str(rng.choice(["wood", "plastic"], p=[0.65, 0.35]))
    if style == "font":
        fonts = _numeral_fonts(design_split(index)) if kind in DIE_SIDES else _numeral_fonts()
        font = str(fonts[int(rng.integers(0, len(fonts)))])
    gloss = float(rng.uniform(0.4, 1.4))
    if kind in DIE_SIDES and held_out and rng.random() < 0.5:
        material = HELD_OUT_MATERIAL
    lettering = lettering_of(kind, index) if style == "font" and not held_out else None
    return Design(kind, style, font, scale, accent, material, gloss, index, lettering)


# The share of training dice with numerals whose lettering is varied (`set_lettered`). None by default: the face
# reader trained on lettered dice (session 36, 3 in 4 lettered) read held-out dice worse than the shipped one, which
# was trained without (models/dice.md), so the shipped recipe renders dice as before.
_LETTERED: list = [0.0, "reshaped"]
STROKE_FONTS = (0, 1, 2, 3, 4, 5, 6, 7)  # OpenCV's Hershey fonts: simplex, plain, duplex, complex, triplex, ...
# How lettered designs depart from their fonts: "reshaped" (session 36: stroke fonts, weight, slant, width, size,
# turns, marks) or "marked" (session 43: only what real dice vary while keeping the numeral's size and shape: the
# mark that tells 6 from 9, numerals pointing at an edge of a d20's face, a little weight)
LETTERINGS = ("reshaped", "marked")


def set_lettered(share: float, how: str = "reshaped") -> None:
    """Letter this share of training dice designs from now on, in this process (`dice_data --lettered`), `how`
    one of LETTERINGS."""
    if not 0.0 <= share <= 1.0:
        raise SolidError(f"lettered share: expected 0-1, got {share}")
    if how not in LETTERINGS:
        raise SolidError(f"lettering: expected one of {', '.join(LETTERINGS)}, got {how!r}")
    if [share, how] != _LETTERED:
        _LETTERED[:] = [share, how]
        _design.cache_clear()
        skin.cache_clear()


def lettering_of(kind: str, index: int) -> Lettering | None:
    """A training die design's lettering, drawn from a stream of its own so that no other draw of the design (its
    style, font, colours) moves: designs rendered before lettering existed keep their look otherwise."""
    rng = np.random.default_rng([index, SOLID_KINDS.index(kind), 13])
    if rng.random() >= _LETTERED[0]:
        return None
    if _LETTERED[1] == "marked":
        turned = kind == "d20" and rng.random() < 0.4
        marks, odds = (["bar", "dot"], [0.6, 0.4]) if turned else (["bar", "dot", "none"], [0.45, 0.25, 0.3])
        return Lettering(-1, float(rng.uniform(-0.03, 0.04)), 0.0, 1.0, 1.0, turned, str(rng.choice(marks, p=odds)))
    stroke_font = int(rng.choice(STROKE_FONTS)) if rng.random() < 0.35 else -1
    return Lettering(
        stroke_font=stroke_font,
        weight=float(rng.uniform(-0.035, 0.06)),
        slant=float(rng.uniform(-0.25, 0.25)) if rng.random() < 0.4 else 0.0,
        width=float(np.exp(rng.uniform(-0.25, 0.2))),
        size=float(rng.uniform(0.65, 1.1)),
        turned=kind == "d20" and rng.random() < 0.3,
        mark=str(rng.choice(["bar", "dot", "none"], p=[0.6, 0.25, 0.15])),
    )


@cache
def _numeral_fonts(split: str | None = None) -> tuple[Path, ...]:
    """Upright faces that print digits as digits (no symbol, dingbat, key-cap or script fonts: the decks' own test of
    a font's glyphs); bold ones twice, as on dice."""
    from vision.synth.procedural import (  # the decks' own checks; imported late (it loads fonts)
        font_split,
        renders_chars,
    )

    usable = [
        f
        for f in font_files()
        if not any(s in f.stem.lower() for s in _SYMBOL_FONTS)
        and "italic" not in f.stem.lower()
        and renders_chars(str(f), "0123456789")
    ]
    if split is not None:
        usable = [f for f in usable if font_split(f) == split] or usable
    bold = [f for f in usable if any(w in f.stem.lower() for w in ("bold", "demi", "black"))]
    return tuple(usable + bold)


@dataclass(frozen=True)
class Skin:
    """Texture pyramid (channels: ink coverage, accent-ink coverage, body shade multiplier) and the per-corner
    coordinates into it (image fractions)."""

    levels: tuple[np.ndarray, ...]  # float32 (H, W, 3), halving
    corner_uv: np.ndarray  # (T, 3, 2)


def _pyramid(texture: np.ndarray, levels: int = 6) -> tuple[np.ndarray, ...]:
    out = [texture.astype(np.float32)]
    while len(out) < levels and min(out[-1].shape[:2]) >= 16:
        out.append(cv2.pyrDown(out[-1]))
    return tuple(out)


@lru_cache(maxsize=2 * DESIGNS_PER_KIND)  # a d20's atlas and its pyramid are about 6 MB
def skin(design: Design) -> Skin:
    geometry = mesh(design.kind, design.style if design.kind == "pawn" else "")
    if design.style == "dice-box":
        ink = cv2.imread(str(DATA_DIR / NUMERALS_FILE), cv2.IMREAD_GRAYSCALE)
        if ink is None:
            raise SolidError(f"{DATA_DIR / NUMERALS_FILE} is missing or unreadable: rebuild with solids_assets")
        ink_f = ink.astype(np.float32) / 255.0
        texture = np.dstack([ink_f, np.zeros_like(ink_f), _engraving(ink_f, 2.5)])
        return Skin(_pyramid(texture), dice_box_uv(design.kind))
    if design.kind == "pawn":
        texture = np.dstack([np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32), np.ones((16, 16))])
        return Skin(_pyramid(texture.astype(np.float32), 1), np.full((len(geometry.triangles), 3, 2), 0.5))
    return _atlas_skin(design, geometry)


def _engraving(ink: np.ndarray, sigma: float) -> np.ndarray:
    """Body shade around recessed numerals: a faint dark halo where the engraving's wall catches no light."""
    halo = np.clip(cv2.GaussianBlur(ink, (0, 0), sigma) - ink, 0.0, 1.0)
    return 1.0 - 0.45 * halo


def _face_frames(geometry: Mesh) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]]:
    """Per face: (centre, normal, right, up, radius). 'Up' points at a corner on a d20 (numerals point at a
    vertex on real d20s) and along an edge on a cube."""
    frames = []
    for normal, polygon in zip(geometry.face_normals, geometry.face_polygons, strict=True):
        centre = polygon.mean(axis=0)
        up = polygon[0] - centre if len(polygon) == 3 else (polygon[0] + polygon[1]) / 2 - centre
        up = up - normal * (up @ normal)
        up /= np.linalg.norm(up)
        right = np.cross(up, normal)
        radius = float(np.linalg.norm(polygon - centre, axis=1).max())
        frames.append((centre, normal, right, up, radius))
    return frames


def _atlas_skin(design: Design, geometry: Mesh, tile: int = 128) -> Skin:
    """Draw each face in its own tile and map every triangle (bevels included) onto the tile of the face it leans
    towards by planar projection, so ink never wraps round an edge."""
    frames = _face_frames(geometry)
    n_faces = len(frames)
    cols = math.ceil(math.sqrt(n_faces * 1.5))
    rows = math.ceil(n_faces / cols)
    texture = np.zeros((rows * tile, cols * tile, 3), np.float32)
    texture[..., 2] = 1.0
    rng = np.random.default_rng(design.seed)
    scale = tile * 0.44 / max(f[4] for f in frames)  # pixels per mesh unit: the face plus its bevel fit the tile
    tri_normals = _triangle_normals(geometry.vertices, geometry.triangles)
    owner = np.argmax(tri_normals @ geometry.face_normals.T, axis=1)
    corner_uv = np.zeros((len(geometry.triangles), 3, 2))
    for f, (centre, _normal, right, up, radius) in enumerate(frames):
        x0, y0 = (f % cols) * tile, (f // cols) * tile
        cx, cy = x0 + tile / 2, y0 + tile / 2
        cell = texture[y0 : y0 + tile, x0 : x0 + tile]
        value = int(geometry.face_values[f])
        if design.kind == "cube":
            cell[..., 2] = _wood_grain(rng, centre, right, up, scale, tile)
        elif design.style == "pips":
            _draw_pips(cell, value, radius * scale, design)
        else:
            _draw_numeral(cell, value, radius * scale, design, triangle=len(geometry.face_polygons[f]) == 3)
        mine = owner == f
        rel = geometry.vertices[geometry.triangles[mine]] - centre
        corner_uv[mine, :, 0] = (cx + (rel @ right) * scale) / texture.shape[1]
        corner_uv[mine, :, 1] = (cy - (rel @ up) * scale) / texture.shape[0]
    if design.kind != "cube":
        texture[..., 2] *= _engraving(np.maximum(texture[..., 0], texture[..., 1]), 1.5)
    return Skin(_pyramid(texture), corner_uv)


def _draw_pips(cell: np.ndarray, value: int, face_radius_px: float, design: Design) -> None:
    """Standard pip layouts on a 3 x 3 grid; drawn 4x oversize and reduced for smooth disks."""
    spots = {
        1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)], 4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
        5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)], 6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
    }[value]  # fmt: skip
    half_edge = face_radius_px / math.sqrt(2)
    spacing = half_edge * 0.52
    radius = half_edge * 0.16 * design.ink_scale
    accent = design.accent_one and value == 1
    if value == 1:
        radius *= 1.9 if accent else 1.35
    size = cell.shape[0]
    big = np.zeros((size * 4, size * 4), np.uint8)
    for sx, sy in spots:
        centre = (round((size / 2 + sx * spacing) * 4), round((size / 2 + sy * spacing) * 4))
        cv2.circle(big, centre, round(radius * 4), 255, -1, cv2.LINE_AA)
    disk = cv2.resize(big, (size, size), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    cell[..., 1 if accent else 0] = disk


def _draw_numeral(cell: np.ndarray, value: int, face_radius_px: float, design: Design, triangle: bool) -> None:
    """A numeral centred on the face (a d20's sits at the triangle's centroid, sized to its inscribed circle);
    6 and 9 get a bar beneath, as dice print them so they cannot be mistaken for each other. A lettered design's
    numeral is drawn oversize and reshaped (`_lettered`)."""
    if design.lettering is not None:
        cell[..., 0] = _lettered(cell.shape[0], value, face_radius_px, design, triangle)
        return
    size = cell.shape[0]
    surface = Surface(bgr=np.zeros((size, size, 3), np.float32), alpha=np.ones((size, size), np.float32))
    text = str(value)
    height, centre = _numeral_place(size, face_radius_px, design.ink_scale, triangle, text)
    box = draw_text(surface, text, centre, height, (255, 255, 255), Path(design.font))
    if value in (6, 9):
        _draw_bar(surface.bgr, box, height)
    cell[..., 0] = surface.bgr[..., 0] / 255.0


def _numeral_place(
    size: float, face_radius_px: float, scale: float, triangle: bool, text: str
) -> tuple[float, tuple[float, float]]:
    """(height, centre) of a face's numeral in a tile `size` px a side: sized to the face's inscribed circle (two
    digits a little smaller), a d20's sitting at the triangle's centroid."""
    inscribed = face_radius_px * (0.5 if triangle else 0.7)
    height = inscribed * (0.95 if triangle else 1.1) * scale
    if len(text) == 2:
        height *= 0.82
    return height, (size / 2, size / 2 + (inscribed * 0.08 if triangle else 0.0))


def _draw_bar(ink: np.ndarray, box: tuple[float, float, float, float], height: float) -> None:
    """The bar under a 6 or a 9."""
    bar_y = box[3] + height * 0.12
    half = height * 0.22
    x = (box[0] + box[2]) / 2
    cv2.rectangle(
        ink, (round(x - half), round(bar_y)), (round(x + half), round(bar_y + height * 0.1)), (255, 255, 255), -1
    )


LETTERING_OVERSAMPLE = 4  # a lettered numeral is drawn and reshaped at 4 times the tile, then reduced


def _lettered(size: int, value: int, face_radius_px: float, design: Design, triangle: bool) -> np.ndarray:
    """A lettered design's numeral ink (size x size, 0-1): drawn oversize in its font or a stroke font, 6 and 9
    marked its way, sheared, widened, grown or thinned, and turned to point at an edge when the design says so."""
    lettering = design.lettering
    assert lettering is not None
    up = LETTERING_OVERSAMPLE
    big = size * up
    text = str(value)
    height, centre = _numeral_place(big, face_radius_px * up, design.ink_scale * lettering.size, triangle, text)
    ink = np.zeros((big, big, 3), np.float32)
    if lettering.stroke_font >= 0:
        box = _stroke_text(ink, text, centre, height, lettering.stroke_font)
    else:
        surface = Surface(bgr=ink, alpha=np.ones((big, big), np.float32))
        box = draw_text(surface, text, centre, height, (255, 255, 255), Path(design.font))
    if value in (6, 9) and lettering.mark == "bar":
        _draw_bar(ink, box, height)
    elif value in (6, 9) and lettering.mark == "dot":
        radius = max(round(height * 0.07), 1)
        cv2.circle(ink, (round(box[2] + radius * 2), round(box[3] - radius)), radius, (255, 255, 255), -1)
    mask = ink[..., 0] / 255.0
    reach = round(abs(lettering.weight) * height)
    if reach:
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))
        mask = cv2.dilate(mask, kernel) if lettering.weight > 0 else cv2.erode(mask, kernel)
    shape = np.array([[lettering.width, lettering.slant], [0.0, 1.0]])
    goal = np.array(centre)
    if lettering.turned:  # half a turn about the face's centre
        shape, goal = -shape, big - 1 - goal  # about the middle of the picture (pixel centres)
    matrix = np.hstack([shape, (goal - shape @ np.array(centre))[:, None]])
    mask = cv2.warpAffine(mask, matrix, (big, big), flags=cv2.INTER_LINEAR)
    return cv2.resize(mask, (size, size), interpolation=cv2.INTER_AREA)


def _stroke_text(
    ink: np.ndarray, text: str, centre: tuple[float, float], height: float, font: int
) -> tuple[float, float, float, float]:
    """`text` in an OpenCV Hershey stroke font, its digits `height` tall, centred at `centre`; returns its box."""
    (w, h), _ = cv2.getTextSize(text, font, 1.0, 1)
    scale = height / max(h, 1)
    thickness = max(round(height * 0.11), 1)
    x0, y1 = centre[0] - w * scale / 2, centre[1] + height / 2
    drawn = np.zeros(ink.shape[:2], np.uint8)  # OpenCV draws text on 8-bit pictures only
    cv2.putText(drawn, text, (round(x0), round(y1)), font, scale, 255, thickness, cv2.LINE_AA)
    ink[..., 0] = np.maximum(ink[..., 0], drawn)
    return (x0, y1 - height, x0 + w * scale, y1)


def _wood_grain(
    rng: np.random.Generator, centre: np.ndarray, right: np.ndarray, up: np.ndarray, scale: float, tile: int
) -> np.ndarray:
    """Shade multiplier from one 3-D grain field sampled on each face, so four sides show long grain and the two
    ends show ring arcs, as on a cube cut from a plank."""
    axis_offset = np.array([0.0, 0.8, -0.6]) + rng.normal(0, 0.2, 3)
    ring_freq = rng.uniform(5.0, 9.0)
    ys, xs = np.mgrid[0:tile, 0:tile].astype(np.float32)
    points = (
        centre + np.multiply.outer((xs - tile / 2) / scale, right) + np.multiply.outer(-(ys - tile / 2) / scale, up)
    )
    rel = points - axis_offset
    radius = np.hypot(rel[..., 1], rel[..., 2])
    wobble = 0.05 * np.sin(points[..., 0] * rng.uniform(3, 6) + rng.uniform(0, 6))
    rings = 0.5 + 0.5 * np.sin(2 * np.pi * (radius + wobble) * ring_freq)
    noise = cv2.GaussianBlur(rng.normal(0, 1, (tile, tile)).astype(np.float32), (0, 0), 1.2)
    return (0.9 + 0.14 * rings**3 + 0.03 * noise).astype(np.float32)


# ----------------------------------------------------------------------------------------------------- poses


def settled_pose(rng: np.random.Generator, kind: str, value: int | None = None) -> np.ndarray:
    """A resting rotation with `value` facing up and a random yaw; a cube shows a random face when value is None
    and a pawn always stands."""
    check_value(kind, value)
    yaw = rotation_about((0, 0, 1), float(rng.uniform(0, 2 * np.pi)))
    if kind == "pawn":
        return yaw
    geometry = mesh(kind)
    if value is None:
        face = int(rng.integers(0, len(geometry.face_values)))
    else:
        face = int(np.nonzero(geometry.face_values == value)[0][0])
    return yaw @ rotation_aligning(geometry.face_normals[face], np.array([0.0, 0.0, 1.0]))


def top_face_index(kind: str, rotation: object) -> int:
    """The face whose normal points most nearly straight up."""
    check_kind(kind)
    ups = (as_rotation(rotation) @ mesh(kind).face_normals.T)[2]
    return int(np.argmax(ups))


def top_value(kind: str, rotation: object) -> int:
    """The value a die shows on top in this rotation (the inverse of `settled_pose`)."""
    if kind not in DIE_SIDES:
        check_kind(kind)
        raise SolidError(f"top_value: a {kind} has no value; expected one of {', '.join(DIE_SIDES)}")
    return int(mesh(kind).face_values[top_face_index(kind, rotation)])


def tumble(
    rng: np.random.Generator,
    kind: str,
    start_xy: tuple[float, float],
    end_xy: tuple[float, float],
    value: int | None = None,
    n_frames: int = 30,
    drop_mm: float | None = None,
) -> list[SolidPose]:
    """A roll from a hand at `start_xy` to rest at `end_xy` with `value` up: a fall, bounces that lose most of their
    height each time, travel and spin that slow down together (rolling, not sliding), then still frames. The spin
    is built backwards from the settled rotation, so the last frames show exactly `value`. A pawn is carried
    instead: lifted, moved, twisted a little and set down upright."""
    check_value(kind, value)
    if n_frames < 2:
        raise SolidError(f"tumble n_frames: expected at least 2, got {n_frames}")
    final = settled_pose(rng, kind, value)
    start, end = np.asarray(start_xy, np.float64), np.asarray(end_xy, np.float64)
    moving = max(2, round(n_frames * rng.uniform(0.6, 0.85)))
    tau = np.linspace(0.0, 1.0, moving)
    travel = 1.0 - (1.0 - tau) ** 2  # speed falls linearly to zero
    distance = float(np.linalg.norm(end - start))
    heading = (end - start) / distance if distance > 1e-6 else np.array([1.0, 0.0])
    size = DEFAULT_SIZE_MM[kind]
    if kind == "pawn":
        lift = drop_mm if drop_mm is not None else float(rng.uniform(15.0, 40.0))
        heights = lift * np.sin(np.pi * np.clip(tau * 1.1, 0, 1)) ** 0.7
        axis, spin = np.array([0.0, 0.0, 1.0]), float(rng.normal(0, 0.6))
    else:
        drop = drop_mm if drop_mm is not None else float(rng.uniform(25.0, 80.0))
        heights = _bounces(tau, drop, float(rng.uniform(0.3, 0.5)), float(rng.uniform(0.45, 0.7)))
        roll_axis = np.cross([0.0, 0.0, 1.0], [heading[0], heading[1], 0.0])
        axis = roll_axis + rng.normal(0, 0.35, 3)
        turns = 1.0 if kind == "cube" else 2.0
        spin = distance / (0.5 * size) * rng.uniform(0.5, 0.9) + turns * rng.uniform(np.pi, 3 * np.pi)
    poses = []
    for t, along, z in zip(tau, travel, heights, strict=True):
        remaining = spin * (1.0 - (1.0 - (1.0 - t) ** 2))  # angle still to turn: slows to zero with the travel
        rotation = rotation_about(axis, -remaining) @ final
        x, y = start + (end - start) * along
        poses.append(SolidPose(float(x), float(y), float(max(z, 0.0)), _rotation_tuple(rotation)))
    rest = SolidPose(float(end[0]), float(end[1]), 0.0, _rotation_tuple(final))
    poses[-1] = rest
    return poses + [rest] * (n_frames - moving)


def _bounces(tau: np.ndarray, drop: float, restitution: float, air_share: float) -> np.ndarray:
    """Height of the lowest point: a fall from `drop`, then bounces each `restitution`^2 as high, all within the
    first `air_share` of the motion (times follow sqrt(height), as for a real fall)."""
    heights = [drop]
    while heights[-1] * restitution**2 > 0.5 and len(heights) < 6:
        heights.append(heights[-1] * restitution**2)
    durations = np.array([math.sqrt(heights[0])] + [2 * math.sqrt(h) for h in heights[1:]])
    edges = np.concatenate([[0.0], np.cumsum(durations)]) / durations.sum() * air_share
    z = np.zeros_like(tau)
    for i, h in enumerate(heights):
        inside = (tau >= edges[i]) & (tau < edges[i + 1])
        s = (tau[inside] - edges[i]) / (edges[i + 1] - edges[i])
        z[inside] = h * (1 - s**2) if i == 0 else h * 4 * s * (1 - s)
    return z


# ----------------------------------------------------------------------------------------------------- render


@dataclass(frozen=True)
class _Material:
    diffuse: float
    specular: float
    shininess: float
    sheen: float  # Fresnel reflection of the bright room at grazing angles


MATERIALS = {
    "plastic": _Material(diffuse=0.46, specular=0.35, shininess=60.0, sheen=0.2),
    "wood": _Material(diffuse=0.5, specular=0.06, shininess=8.0, sheen=0.05),
    HELD_OUT_MATERIAL: _Material(diffuse=0.4, specular=0.6, shininess=140.0, sheen=0.35),  # held-out dice only
}


def piece_mesh(spec: SolidSpec) -> Mesh:
    """The mesh this spec is drawn with (a pawn's design picks pawn or meeple)."""
    return mesh(spec.kind, design_of(spec.kind, spec.variant).style if spec.kind == "pawn" else "")


def world_vertices(spec: SolidSpec) -> np.ndarray:
    """Mesh vertices in table millimetres: rotated, scaled, and lifted so the lowest point is at z_mm."""
    local = piece_mesh(spec).vertices * spec.size_mm
    rotated = local @ spec.matrix.T
    return rotated + np.array([spec.x_mm, spec.y_mm, spec.z_mm - rotated[:, 2].min()])


def project_points(camera: Camera, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Image pixels and camera depths of table points."""
    rot = camera.rotation()
    cam = (points - camera.position()) @ rot.T
    depth = cam[:, 2]
    k = camera.intrinsics()
    pixels = cam[:, :2] / depth[:, None] * [k[0, 0], k[1, 1]] + [k[0, 2], k[1, 2]]
    return pixels, depth


def render_solid(
    spec: SolidSpec,
    camera: Camera,
    light_dir: Sequence[float] = DEFAULT_LIGHT,
    frame_size: tuple[int, int] | None = None,
    supersample: int | None = None,
) -> SolidRender | None:
    """Render one piece; None when it lies wholly outside the frame or behind the camera."""
    frame = frame_size or (camera.width, camera.height)
    design = design_of(spec.kind, spec.variant)
    geometry = piece_mesh(spec)
    look = skin(design)
    world = world_vertices(spec)
    pixels, depth = project_points(camera, world)
    if depth.min() < 1.0:
        return None
    lo = np.floor(pixels.min(axis=0)).astype(int) - 1
    hi = np.ceil(pixels.max(axis=0)).astype(int) + 2
    if hi[0] <= 0 or hi[1] <= 0 or lo[0] >= frame[0] or lo[1] >= frame[1] or np.any(hi - lo > 4 * max(frame)):
        return None
    w, h = int(hi[0] - lo[0]), int(hi[1] - lo[1])
    ss = supersample or (3 if max(w, h) < 48 else 2)
    points = (pixels - lo + 0.5) * ss - 0.5  # supersampled pixel centres sit at integers
    rotation = spec.matrix
    normals_world = geometry.corner_normals @ rotation.T
    order = _visible_triangles(geometry, world, camera.position(), depth)
    tri_pts = points[geometry.triangles[order]]
    edges = tri_pts[:, 1:] - tri_pts[:, :1]
    order = order[np.abs(edges[:, 0, 0] * edges[:, 1, 1] - edges[:, 0, 1] * edges[:, 1, 0]) > 1e-6]  # not edge-on
    ids = _triangle_ids(points, geometry.triangles[order], (w * ss, h * ss))
    colour = _shade_pixels(
        ids, points, depth, geometry.triangles[order], normals_world[order], look, order, spec, design,
        np.asarray(light_dir, np.float64), camera.position() - world.mean(axis=0),
    )  # fmt: skip
    coverage = (ids > 0).astype(np.float32)
    small = cv2.resize(colour, (w, h), interpolation=cv2.INTER_AREA)
    alpha = cv2.resize(coverage, (w, h), interpolation=cv2.INTER_AREA)
    bgr = small / np.maximum(alpha, 1e-6)[..., None]
    patch = Patch(bgr=bgr.astype(np.float32), alpha=alpha, x0=int(lo[0]), y0=int(lo[1]))
    mask = alpha > 0.5
    return SolidRender(
        patch=patch,
        mask=mask,
        outline=cv2.convexHull(pixels.astype(np.float32)).reshape(-1, 2).astype(np.float64),
        box=mask_box(mask, patch.x0, patch.y0, frame),
        top_face=_top_face(spec, geometry, world, camera),
        value=top_value(spec.kind, rotation) if spec.kind in DIE_SIDES else None,
        top_z_mm=float(world[:, 2].max()),
        depth_mm=float(np.linalg.norm(world.mean(axis=0) - camera.position())),
        centre_px=tuple(float(v) for v in project_points(camera, world.mean(axis=0, keepdims=True))[0][0]),
    )


def _visible_triangles(geometry: Mesh, world: np.ndarray, eye: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Front-facing triangles, far to near (painter's order: exact for convex pieces, close enough for pawns)."""
    tri = geometry.triangles
    a, b, c = world[tri[:, 0]], world[tri[:, 1]], world[tri[:, 2]]
    facing = np.einsum("ij,ij->i", np.cross(b - a, c - a), eye - (a + b + c) / 3.0) > 0
    order = np.nonzero(facing)[0]
    if not geometry.convex:
        order = order[np.argsort(-depth[tri[order]].mean(axis=1), kind="stable")]
    return order


def _triangle_ids(points: np.ndarray, triangles: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Buffer of 1 + index into `triangles` (0 = empty), filled in order with 4 bits of sub-pixel precision."""
    ids = np.zeros((size[1], size[0]), np.uint16)
    fixed = np.round(points * 16).astype(np.int32)
    for k, tri in enumerate(triangles):
        cv2.fillConvexPoly(ids, fixed[tri], k + 1, cv2.LINE_8, 4)
    return ids


def _shade_pixels(
    ids: np.ndarray,
    points: np.ndarray,
    depth: np.ndarray,
    triangles: np.ndarray,
    corner_normals: np.ndarray,
    look: Skin,
    order: np.ndarray,
    spec: SolidSpec,
    design: Design,
    light_dir: np.ndarray,
    to_eye: np.ndarray,
) -> np.ndarray:
    """Supersampled premultiplied colour: interpolate normal and texture coordinates per pixel, then texture and
    light."""
    colour = np.zeros((*ids.shape, 3), np.float32)
    ys, xs = np.nonzero(ids)
    if len(xs) == 0:
        return colour
    t = ids[ys, xs].astype(np.intp) - 1
    planes = _attribute_planes(points, depth, triangles, np.concatenate([corner_normals, look.corner_uv[order]], 2))
    g = planes[t]  # (N, K + 1, 3): every attribute (and the 1/z weight) is affine in the pixel position
    values = g[:, :, 0] * xs[:, None].astype(np.float32) + g[:, :, 1] * ys[:, None].astype(np.float32) + g[:, :, 2]
    normal = values[:, :3]
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    uv = values[:, 3:5] / values[:, 5:6]
    level = _mip_level(look, triangles, points, order)
    tex = look.levels[level]
    tex_h, tex_w = tex.shape[:2]
    sample = _sample(tex, uv[:, 0] * tex_w - 0.5, uv[:, 1] * tex_h - 0.5)
    ink, accent, body_shade = sample[:, 0:1], sample[:, 1:2], sample[:, 2:3]
    body = np.array(spec.colour, np.float32) * body_shade
    albedo = body * (1 - ink - accent) + np.array(spec.ink, np.float32) * ink + _ACCENT_INK * accent
    material = MATERIALS[design.material]
    colour[ys, xs] = _light(albedo, normal, ink + accent, material, design.gloss, light_dir, to_eye)
    return colour


def _attribute_planes(
    points: np.ndarray, depth: np.ndarray, triangles: np.ndarray, attributes: np.ndarray
) -> np.ndarray:
    """Per triangle, (K + 1, 3) coefficients giving attribute/z (K rows) and 1/z (last row) as affine functions of
    the pixel (x, y, 1). Dividing the first by the last is perspective-correct interpolation, and it costs each
    pixel one gather and a few multiply-adds instead of solving for barycentrics."""
    corners = np.concatenate([points[triangles], np.ones((*triangles.shape, 1))], axis=2)  # (T, 3, 3): rows a, b, c
    to_bary = np.linalg.inv(np.transpose(corners, (0, 2, 1)))  # (x, y, 1) -> barycentric weights
    inv_z = 1.0 / depth[triangles]  # (T, 3)
    weighted = np.concatenate([attributes * inv_z[:, :, None], inv_z[:, :, None]], axis=2)  # (T, 3, K + 1)
    return np.einsum("tck,tcj->tkj", weighted, to_bary).astype(np.float32)


_ACCENT_INK = np.array((35, 30, 190), np.float32)
_REMAP_ROW = 512  # remap's output must stay under 32767 pixels a side: lay the pixel list out in rows


def _sample(texture: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Bilinear texture lookups at a list of points, through cv2.remap."""
    n = len(xs)
    rows = -(-n // _REMAP_ROW)
    map_x = np.zeros(rows * _REMAP_ROW, np.float32)
    map_y = np.zeros(rows * _REMAP_ROW, np.float32)
    map_x[:n], map_y[:n] = xs, ys
    shape = (rows, _REMAP_ROW)
    out = cv2.remap(texture, map_x.reshape(shape), map_y.reshape(shape), cv2.INTER_LINEAR, None, cv2.BORDER_REPLICATE)
    return out.reshape(rows * _REMAP_ROW, -1)[:n]


def _area2(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Twice the summed area of 2-D triangles."""
    u, v = b - a, c - a
    return float(np.abs(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]).sum())


def _mip_level(look: Skin, triangles: np.ndarray, points: np.ndarray, order: np.ndarray) -> int:
    """One level for the piece: texels per supersampled pixel over its visible triangles, rounded down so
    numerals stay a touch sharp (the supersampling filters the rest)."""
    base_h, base_w = look.levels[0].shape[:2]
    uv = look.corner_uv[order] * [base_w, base_h]
    uv_area = _area2(uv[:, 0], uv[:, 1], uv[:, 2])
    screen_area = _area2(points[triangles[:, 0]], points[triangles[:, 1]], points[triangles[:, 2]])
    ratio = math.sqrt(uv_area / max(screen_area, 1e-9))
    return int(np.clip(math.floor(math.log2(max(ratio, 1.0))), 0, len(look.levels) - 1))


def _light(
    albedo: np.ndarray,
    normal: np.ndarray,
    ink: np.ndarray,
    material: _Material,
    gloss: float,
    light: np.ndarray,
    to_eye: np.ndarray,
) -> np.ndarray:
    """Wrapped Lambert (plastic scatters light under its surface, so the shadow side is not black), a sky term
    from above, Blinn-Phong highlight (dulled on ink) and a Fresnel sheen at grazing angles."""
    light_u = light / np.linalg.norm(light)
    view = to_eye / np.linalg.norm(to_eye)
    half = (light_u + view) / np.linalg.norm(light_u + view)
    n_l = normal @ light_u
    wrap = 0.25
    diffuse = np.clip((n_l + wrap) / (1 + wrap), 0, 1)
    sky = 0.36 + 0.2 * normal[:, 2]  # rooms are lit from above and by their walls: sides never go black
    n_h = np.clip(normal @ half, 0, 1)
    highlight = gloss * material.specular * n_h**material.shininess * (n_l > 0) * (1 - 0.6 * ink[:, 0])
    n_v = np.clip(normal @ view, 0, 1)
    fresnel = material.sheen * (1 - n_v) ** 4
    lit = albedo * (sky + material.diffuse * diffuse)[:, None]
    return (lit + (255.0 * (highlight + fresnel))[:, None]).astype(np.float32)


def mask_box(mask: np.ndarray, x0: int, y0: int, frame: tuple[int, int]) -> tuple[float, float, float, float] | None:
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    x1, y1 = np.clip([xs.min() + x0, ys.min() + y0], 0, frame)
    x2, y2 = np.clip([xs.max() + x0 + 1, ys.max() + y0 + 1], 0, frame)
    if x2 - x1 < 1 or y2 - y1 < 1:
        return None
    return float(x1), float(y1), float(x2), float(y2)


def _top_face(spec: SolidSpec, geometry: Mesh, world: np.ndarray, camera: Camera) -> np.ndarray | None:
    if spec.kind == "pawn":
        return None
    face = top_face_index(spec.kind, spec.matrix)
    local = geometry.vertices * spec.size_mm @ spec.matrix.T
    offset = world[0] - local[0]
    polygon = geometry.face_polygons[face] * spec.size_mm @ spec.matrix.T + offset
    return project_points(camera, polygon)[0]


# ----------------------------------------------------------------------------------------------------- shadows


def render_shadow(
    spec: SolidSpec,
    camera: Camera,
    light_dir: Sequence[float] = DEFAULT_LIGHT,
    frame_size: tuple[int, int] | None = None,
) -> Patch | None:
    """The piece's shadow on the table as an alpha Patch (bgr unused, zeros): its silhouette cast along the light
    (softer the higher the piece floats) plus a dark contact patch where it touches the table. Multiply the table
    by (1 - strength * alpha) before pasting the piece."""
    frame = frame_size or (camera.width, camera.height)
    light = np.asarray(light_dir, np.float64)
    light = light / np.linalg.norm(light)
    if light[2] < 0.05:
        raise SolidError(f"light_dir {list(light_dir)}: the light must be above the table (z > 0.05)")
    world = world_vertices(spec)
    cast = world[:, :2] - np.outer(world[:, 2] / light[2], light[:2])
    table_h = camera.table_to_image()
    cast_px = cv2.perspectiveTransform(cast.reshape(-1, 1, 2), table_h).reshape(-1, 2)
    low = world[world[:, 2] <= world[:, 2].min() + 0.12 * spec.size_mm]
    contact_px = cv2.perspectiveTransform(low[:, :2].reshape(-1, 1, 2), table_h).reshape(-1, 2)
    px_per_mm = float(np.linalg.norm(cast_px.max(axis=0) - cast_px.min(axis=0))) / max(
        float(np.linalg.norm(cast.max(axis=0) - cast.min(axis=0))), 1e-6
    )
    blur = px_per_mm * (0.06 * spec.size_mm + 0.08 * spec.z_mm) + 0.6
    pad = math.ceil(3 * blur) + 2
    lo = np.floor(np.minimum(cast_px.min(axis=0), contact_px.min(axis=0))).astype(int) - pad
    hi = np.ceil(np.maximum(cast_px.max(axis=0), contact_px.max(axis=0))).astype(int) + pad
    if hi[0] <= 0 or hi[1] <= 0 or lo[0] >= frame[0] or lo[1] >= frame[1] or np.any(hi - lo > 4 * max(frame)):
        return None
    size = (int(hi[1] - lo[1]), int(hi[0] - lo[0]))
    soft = _filled_hull(cast_px - lo, size, blur)
    contact = _filled_hull(contact_px - lo, size, max(blur * 0.35, 0.6)) if spec.z_mm < 0.5 else np.zeros(size)
    fade = 1.0 / (1.0 + spec.z_mm / (2.0 * spec.size_mm))  # a die high in the air casts a paler shadow
    alpha = np.maximum(0.7 * soft * fade, contact).astype(np.float32)
    return Patch(bgr=np.zeros((*size, 3), np.float32), alpha=alpha, x0=int(lo[0]), y0=int(lo[1]))


def _filled_hull(points: np.ndarray, size: tuple[int, int], blur: float) -> np.ndarray:
    image = np.zeros(size, np.float32)
    hull = cv2.convexHull(np.round(points * 16).astype(np.int32))
    cv2.fillConvexPoly(image, hull, 1.0, cv2.LINE_AA, 4)
    return cv2.GaussianBlur(image, (0, 0), blur) if blur > 0 else image


def paste(canvas: np.ndarray, patch: Patch, shadow: Patch | None = None, shadow_strength: float = 0.55) -> None:
    """Darken under the shadow, then alpha-blend the piece (in place, float32 BGR canvas). The scene compositor
    has its own paste (it also keeps an id map); this one serves sheets and quick composites."""
    if shadow is not None:
        cast_shadow(canvas, shadow.alpha, (shadow.x0, shadow.y0), (0.0, 0.0), 0.0, shadow_strength)
    ph, pw = patch.alpha.shape
    x0, y0 = max(patch.x0, 0), max(patch.y0, 0)
    x1, y1 = min(patch.x0 + pw, canvas.shape[1]), min(patch.y0 + ph, canvas.shape[0])
    if x0 < x1 and y0 < y1:
        sy, sx = slice(y0 - patch.y0, y1 - patch.y0), slice(x0 - patch.x0, x1 - patch.x0)
        region = canvas[y0:y1, x0:x1]
        region += (patch.bgr[sy, sx] - region) * patch.alpha[sy, sx, None]


# ----------------------------------------------------------------------------------------------------- random specs


@cache
def agent_codes(catalogue: Path = CATALOGUE) -> tuple[str, ...]:
    """Agent codes in catalogue order (the pawns' codes)."""
    try:
        agents = json.loads(Path(catalogue).read_text())["agents"]
        return tuple(str(a["code"]) for a in agents)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SolidError(f"{catalogue}: cannot read agent codes from 'agents'[*]['code']: {exc}") from exc


def pawn_colour(code: str) -> BGR:
    codes = agent_codes()
    if code not in codes:
        raise SolidError(f"pawn code {code!r}: expected an agent code from the catalogue: {', '.join(codes)}")
    return PAWN_COLOURS[codes.index(code) % len(PAWN_COLOURS)]


def random_solid(
    rng: np.random.Generator,
    kind: str,
    x_mm: float,
    y_mm: float,
    value: int | None = None,
    code: str = "",
    split: str | None = None,
) -> SolidSpec:
    """A settled piece in a random design: dice in any catalogue body/ink pair, cubes of `code` colour (random
    if empty), pawns of agent `code` (random if empty); colours jittered as batches of paint and plastic vary. A
    die's value is random when None. With `split`, a die's design (font, material) and colours are only that
    split's (`die_colours`), for readers measured on dice they never saw."""
    if value is not None or kind not in DIE_SIDES:
        check_value(kind, value)
    variant = int(rng.integers(0, 2**31))
    if kind in DIE_SIDES:
        value = int(rng.integers(1, DIE_SIDES[kind] + 1)) if value is None else value
        if split is None:
            body, ink = DICE_PALETTE[int(rng.integers(0, len(DICE_PALETTE)))]
        else:
            while die_design_split(variant) != split:
                variant = int(rng.integers(0, 2**31))
            body, ink = die_colours(rng, split)
        size = DEFAULT_SIZE_MM[kind] * float(rng.uniform(0.85, 1.12))
    elif kind == "cube":
        code = code or str(rng.choice(list(CUBE_COLOURS)))
        if code not in CUBE_COLOURS:
            raise SolidError(f"cube code {code!r}: expected one of {', '.join(CUBE_COLOURS)}")
        body, ink, size = CUBE_COLOURS[code], (0, 0, 0), float(rng.uniform(8.0, 10.0))
    else:
        code = code or str(rng.choice(list(agent_codes())))
        body, ink = pawn_colour(code), (0, 0, 0)
        size = (
            float(rng.uniform(22.0, 26.0)) if design_of(kind, variant).style == "pawn" else float(rng.uniform(17, 21))
        )
    return SolidSpec(
        kind=kind,
        x_mm=x_mm,
        y_mm=y_mm,
        rotation=_rotation_tuple(settled_pose(rng, kind, value)),
        size_mm=size,
        colour=jitter_colour(rng, body, 10.0),
        ink=jitter_colour(rng, ink, 8.0),
        variant=variant,
        code=code,
    )


def die_colours(rng: np.random.Generator, split: str) -> tuple[BGR, BGR]:
    """A die body of a hue in `split`'s sectors (training dice also come white, black and grey: held-out dice
    never do, so their colours are all new) and an ink that stands out from it: near white or near black, or
    another of the split's hues."""
    sectors = [s for s in range(DIE_HUE_SECTORS) if DIE_HUE_SPLIT[s % len(DIE_HUE_SPLIT)] == split]
    if not sectors:
        raise SolidError(f"die colours: unknown split {split!r}; expected one of {', '.join(set(DIE_HUE_SPLIT))}")
    width = 360.0 / DIE_HUE_SECTORS

    def hue() -> float:
        return (int(rng.choice(sectors)) + float(rng.random())) * width

    if split == "train" and rng.random() < 0.3:
        body = hsv_bgr(0.0, 0.0, float(rng.choice([rng.uniform(0.08, 0.25), rng.uniform(0.35, 0.6), 0.92])))
    else:
        body = hsv_bgr(hue(), float(rng.uniform(0.35, 0.95)), float(rng.uniform(0.25, 0.95)))
    light = _luma(body) > 120
    if rng.random() < 0.25:
        for _ in range(20):
            ink = hsv_bgr(hue(), float(rng.uniform(0.5, 1.0)), float(rng.uniform(0.1, 0.35) if light else 0.95))
            if abs(_luma(ink) - _luma(body)) > 90:
                return body, ink
    return body, hsv_bgr(0.0, 0.0, float(rng.uniform(0.05, 0.18)) if light else float(rng.uniform(0.88, 0.98)))


def _luma(bgr: BGR) -> float:
    b, g, r = bgr
    return 0.114 * b + 0.587 * g + 0.299 * r


# ----------------------------------------------------------------------------------------------------- sheet

SHEET_CELL = 112


def _sheet_cell(
    spec: SolidSpec, tilt_deg: float, seed: int, overlay: bool = False, height_mm: float = 200.0
) -> np.ndarray:
    """One piece on a random table seen by a small camera looking at it; the label printed under it is the ground
    truth, so a wrong face map shows as a mismatch between the number on top and the caption."""
    from vision.synth.backgrounds import random_background_spec, render_table  # only the sheet needs tables

    rng = np.random.default_rng(seed)
    camera = Camera(height_mm, tilt_deg, float(rng.uniform(-180, 180)), 25.0, width=224, height=224)
    light = (float(rng.uniform(-0.6, 0.6)), float(rng.uniform(-0.6, 0.6)), 0.8)
    background = random_background_spec(rng, 0)
    if hasattr(background, "clutter"):
        background = replace(background, clutter=())  # flat clutter would crowd a 224-pixel cell
    canvas = render_table(background, camera, [])
    rendered = render_solid(spec, camera, light)
    if rendered is None:
        raise SolidError(f"sheet: {spec.kind} at ({spec.x_mm}, {spec.y_mm}) is outside the sheet camera's view")
    paste(canvas, rendered.patch, render_shadow(spec, camera, light))
    if overlay:
        cv2.polylines(canvas, [np.round(rendered.outline * 4).astype(np.int32)], True, (255, 200, 0), 1, cv2.LINE_AA, 2)
        if rendered.top_face is not None:
            cv2.polylines(
                canvas, [np.round(rendered.top_face * 4).astype(np.int32)], True, (0, 255, 0), 1, cv2.LINE_AA, 2
            )
    cx, cy = (round(v) for v in rendered.centre_px)
    half = SHEET_CELL // 2
    cell = np.clip(canvas[cy - half : cy + half, cx - half : cx + half], 0, 255).astype(np.uint8)
    caption = str(rendered.value) if rendered.value is not None else spec.code or spec.kind
    cv2.putText(cell, caption, (3, SHEET_CELL - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(cell, caption, (3, SHEET_CELL - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1, cv2.LINE_AA)
    return cell


def contact_sheet(seed: int = 0, columns: int = 20) -> np.ndarray:
    """Every d20 value and every d6 value in each d6 style, at three camera tilts in random designs and colours;
    then cubes and pawns; then a few with outline (cyan) and top face (green) overlaid; then dice at true scene
    size (20-35 px) magnified."""
    rng = np.random.default_rng(seed)
    cells: list[np.ndarray] = []
    for kind, styles in (("d20", ("",)), ("d6", ("pips", "dice-box", "font"))):
        for tilt in (0.0, 20.0, 40.0):
            for style in styles:
                for value in range(1, DIE_SIDES[kind] + 1):
                    spec = random_solid(rng, kind, 0.0, 0.0, value)
                    while style and design_of(kind, spec.variant).style != style:
                        spec = replace(spec, variant=spec.variant + 1)
                    cells.append(_sheet_cell(spec, tilt, int(rng.integers(0, 2**31))))
            cells += [np.zeros((SHEET_CELL, SHEET_CELL, 3), np.uint8)] * (-len(cells) % columns)
    for code in CUBE_COLOURS:
        for tilt in (0.0, 25.0, 40.0):
            cells.append(_sheet_cell(random_solid(rng, "cube", 0.0, 0.0, code=code), tilt, int(rng.integers(0, 2**31))))
    for code in agent_codes():
        for tilt in (15.0, 35.0):
            spec = random_solid(rng, "pawn", 0.0, 0.0, code=code)
            cells.append(_sheet_cell(spec, tilt, int(rng.integers(0, 2**31)), height_mm=320.0))
    cells += [np.zeros((SHEET_CELL, SHEET_CELL, 3), np.uint8)] * (-len(cells) % columns)
    for i in range(columns):
        kind = SOLID_KINDS[i % 4]
        spec = random_solid(rng, kind, 0.0, 0.0)
        cells.append(_sheet_cell(spec, 30.0, int(rng.integers(0, 2**31)), overlay=True, height_mm=260.0))
    for i in range(columns):
        spec = random_solid(rng, ("d6", "d20")[i % 2], 0.0, 0.0)
        height = float(rng.uniform(450.0, 800.0))
        small = _sheet_cell(spec, float(rng.uniform(0, 40)), int(rng.integers(0, 2**31)), height_mm=height)
        third = SHEET_CELL // 3
        centre = small[SHEET_CELL // 2 - third // 2 : SHEET_CELL // 2 + third - third // 2]
        centre = centre[:, SHEET_CELL // 2 - third // 2 : SHEET_CELL // 2 + third - third // 2]
        cells.append(cv2.resize(centre, (SHEET_CELL, SHEET_CELL), interpolation=cv2.INTER_NEAREST))
    rows = [np.hstack(cells[i : i + columns]) for i in range(0, len(cells), columns)]
    rows[-1] = np.hstack([rows[-1], np.zeros((SHEET_CELL, SHEET_CELL * columns - rows[-1].shape[1], 3), np.uint8)])
    return np.vstack(rows)


def write_contact_sheet(path: str | Path, seed: int = 0) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), contact_sheet(seed)):
        raise SolidError(f"cannot write the contact sheet to {out}")
    return out


if __name__ == "__main__":
    print(write_contact_sheet("/tmp/solids_sheet.png"))
