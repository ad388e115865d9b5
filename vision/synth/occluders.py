"""Hands, arms and table clutter (phone, cup, coin, pen), drawn as shaded polygons in table millimetres.

They are procedural rather than photographed so that they come with exact masks and unlimited variety of pose and
skin tone; what matters for the detector is that card corners disappear under skin-coloured, shaded, soft-edged
shapes of the right size, and that the tracker learns to recognise a hand over the play area.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.camera import apply_homography, pose_matrix

OBJECT_KINDS = ("phone", "cup", "coin", "pen")
# BGR skin tones from light to deep; several so no tone is out of distribution at test time.
SKIN_TONES = (
    (170, 195, 235),
    (140, 175, 225),
    (115, 150, 205),
    (90, 125, 180),
    (65, 95, 145),
    (45, 65, 105),
)
SUBPIXEL_BITS = 3


@dataclass(frozen=True)
class OccluderSpec:
    kind: str  # "hand" or one of OBJECT_KINDS
    x_mm: float
    y_mm: float
    rotation_deg: float  # for a hand: direction the fingers point, measured like card rotation
    scale: float
    colour: tuple[int, int, int]  # skin tone or body colour, BGR
    accent: tuple[int, int, int]  # sleeve, screen, coffee, cap
    height_mm: float  # above the table: sets how far and soft its shadow falls
    variant: int  # seed for small shape changes (finger spread and curl, sleeve, mirror)

    @property
    def label(self) -> str:
        return "hand" if self.kind == "hand" else "object"


@dataclass
class Patch:
    """An object's pixels in an axis-aligned window of the image at (x0, y0); the window may reach outside the
    frame, which is how visible fractions count the frame edge."""

    bgr: np.ndarray  # float32
    alpha: np.ndarray  # float32 0-1
    x0: int
    y0: int


def random_occluder(rng: np.random.Generator, kind: str, x_mm: float, y_mm: float, rotation_deg: float) -> OccluderSpec:
    if kind == "hand":
        colour = SKIN_TONES[int(rng.integers(0, len(SKIN_TONES)))]
        colour = tuple(int(np.clip(c * rng.uniform(0.9, 1.1), 0, 255)) for c in colour)
        return OccluderSpec(
            kind, x_mm, y_mm, rotation_deg, float(rng.uniform(0.85, 1.15)), colour, _random_colour(rng),
            float(rng.uniform(30, 160)), int(rng.integers(0, 2**31)),
        )  # fmt: skip
    heights = {"phone": 9.0, "cup": 90.0, "coin": 2.0, "pen": 10.0}
    colour = _random_colour(rng) if kind != "coin" else ((60, 160, 200) if rng.random() < 0.5 else (180, 180, 175))
    return OccluderSpec(
        kind, x_mm, y_mm, rotation_deg, float(rng.uniform(0.85, 1.15)), colour, _random_colour(rng), heights[kind],
        int(rng.integers(0, 2**31)),
    )  # fmt: skip


def _random_colour(rng: np.random.Generator) -> tuple[int, int, int]:
    return tuple(int(v) for v in rng.integers(20, 230, 3))


def shapes(spec: OccluderSpec) -> list[tuple[np.ndarray, tuple[int, int, int]]]:
    """(polygon in table millimetres, colour) layers, drawn in order."""
    local = _hand(spec) if spec.kind == "hand" else _object(spec)
    pose = pose_matrix(spec.x_mm, spec.y_mm, spec.rotation_deg)
    return [(apply_homography(pose, poly * spec.scale), colour) for poly, colour in local]


def _circle(cx: float, cy: float, rx: float, ry: float | None = None, n: int = 40) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.column_stack([cx + rx * np.cos(t), cy + (rx if ry is None else ry) * np.sin(t)])


def _capsule(start: tuple[float, float], angle_deg: float, length: float, width: float) -> np.ndarray:
    """A finger or pen: a rectangle with round ends, pointing along angle_deg (0 = +y)."""
    a = math.radians(angle_deg)
    direction = np.array([-math.sin(a), math.cos(a)])
    normal = np.array([direction[1], -direction[0]])
    t = np.linspace(-np.pi / 2, np.pi / 2, 9)
    end = np.array(start) + direction * length
    tip = end + (np.outer(np.sin(t), normal) + np.outer(np.cos(t), direction)) * width / 2
    base = np.array(start) + (np.outer(-np.sin(t), normal) - np.outer(np.cos(t), direction)) * width / 2
    return np.vstack([tip, base])


def _hand(spec: OccluderSpec) -> list[tuple[np.ndarray, tuple[int, int, int]]]:
    """A right or left hand reaching in along +y local, wrist at the origin, arm running 900 mm back so it always
    leaves the frame as a real arm does."""
    rng = np.random.default_rng(spec.variant)
    mirror = -1.0 if rng.random() < 0.5 else 1.0
    spread = rng.uniform(2.0, 12.0)
    curl = rng.uniform(0.55, 1.0, 4)
    polys = [_circle(0.0, 45.0, 40.0, 50.0)]
    for i, (base_x, length) in enumerate(zip((-27.0, -9.0, 9.0, 27.0), (60.0, 76.0, 80.0, 72.0), strict=True)):
        polys.append(_capsule((base_x, 82.0), (i - 1.5) * spread, length * curl[i], 15.5))
    polys.append(_capsule((-34.0, 30.0), rng.uniform(35.0, 75.0), 55.0 * rng.uniform(0.7, 1.0), 21.0))
    polys.append(np.array([[-36.0, 15.0], [36.0, 15.0], [60.0, -900.0], [-60.0, -900.0]]))
    layers = [(p * np.array([mirror, 1.0]), spec.colour) for p in polys]
    if rng.random() < 0.6:
        start = -rng.uniform(60.0, 250.0)
        sleeve = np.array([[-48.0, start], [48.0, start], [72.0, -900.0], [-72.0, -900.0]])
        layers.append((sleeve, spec.accent))
    return layers


def _object(spec: OccluderSpec) -> list[tuple[np.ndarray, tuple[int, int, int]]]:
    dark = tuple(int(c * 0.35) for c in spec.accent)
    if spec.kind == "phone":
        body = _rounded_rect(72.0, 150.0, 9.0)
        screen_on = np.random.default_rng(spec.variant).random() < 0.4
        return [(body, (30, 30, 32)), (_rounded_rect(65.0, 140.0, 6.0), spec.accent if screen_on else (18, 16, 16))]
    if spec.kind == "cup":
        return [
            (_circle(0, 0, 42.0), spec.colour),
            (_circle(0, 0, 37.0), dark),
            (_capsule((38, 0), -90, 22, 12), spec.colour),
        ]
    if spec.kind == "coin":
        return [(_circle(0, 0, 11.5), spec.colour), (_circle(0, 0, 9.5), tuple(int(c * 0.85) for c in spec.colour))]
    if spec.kind == "pen":
        return [(_capsule((0, -70), 0, 140.0, 9.0), spec.colour), (_capsule((0, 25), 0, 45.0, 10.0), dark)]
    raise ValueError(f"unknown occluder '{spec.kind}'; expected 'hand' or one of {OBJECT_KINDS}")


def _rounded_rect(w: float, h: float, r: float) -> np.ndarray:
    corners = (
        (w / 2 - r, h / 2 - r, 0.0),
        (-w / 2 + r, h / 2 - r, 90.0),
        (-w / 2 + r, -h / 2 + r, 180.0),
        (w / 2 - r, -h / 2 + r, 270.0),
    )
    arcs = []
    for cx, cy, start in corners:
        t = np.radians(np.linspace(start, start + 90.0, 6))
        arcs.append(np.column_stack([cx + r * np.cos(t), cy + r * np.sin(t)]))
    return np.vstack(arcs)


def render_occluder(spec: OccluderSpec, table_to_image: np.ndarray, frame: tuple[int, int]) -> Patch | None:
    """Rasterise with sub-pixel vertices and anti-aliased edges, then shade by distance to the silhouette edge:
    fingers, arms and cups are round, so they darken towards their outline like the real thing."""
    table_layers = shapes(spec)
    layers = [(apply_homography(table_to_image, poly), colour) for poly, colour in table_layers]
    points = np.vstack([poly for poly, _ in layers])
    w, h = frame
    x0, y0 = (np.floor(points.min(axis=0)).astype(int)).clip([-w, -h], [2 * w, 2 * h])
    x1, y1 = (np.ceil(points.max(axis=0)).astype(int) + 1).clip([-w, -h], [2 * w, 2 * h])
    if x1 <= x0 or y1 <= y0 or x1 <= 0 or y1 <= 0 or x0 >= w or y0 >= h:
        return None
    colour = np.zeros((y1 - y0, x1 - x0, 3), np.uint8)
    alpha = np.zeros((y1 - y0, x1 - x0), np.uint8)
    for poly, bgr in layers:
        pts = np.round((poly - [x0, y0]) * (1 << SUBPIXEL_BITS)).astype(np.int32)
        cv2.fillPoly(colour, [pts], bgr, cv2.LINE_AA, SUBPIXEL_BITS)
        cv2.fillPoly(alpha, [pts], 255, cv2.LINE_AA, SUBPIXEL_BITS)
    px_per_mm = _extent(layers[0][0]) / max(_extent(table_layers[0][0]), 1e-9)
    roundness = {"hand": 9.0, "cup": 6.0, "coin": 4.0, "pen": 4.0, "phone": 3.0}[spec.kind] * px_per_mm * spec.scale
    inside = cv2.distanceTransform((alpha > 127).astype(np.uint8), cv2.DIST_L2, 3)
    shade = 0.55 + 0.45 * np.sqrt(np.clip(inside / max(roundness, 1.0), 0.0, 1.0))
    bgr = colour.astype(np.float32) * shade[..., None]
    return Patch(bgr=bgr, alpha=alpha.astype(np.float32) / 255.0, x0=int(x0), y0=int(y0))


def _extent(points: np.ndarray) -> float:
    return float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))
