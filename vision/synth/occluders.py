"""Hands, arms and table clutter, modelled in 3-D millimetres and shaded like skin, cloth, ceramic and metal.

Why procedural: every occluder comes with an exact mask and unlimited variety of pose, skin tone and sleeve, which
photographed cut-outs cannot give offline. Why this much modelling: the realism check found flat-shaded polygon
hands easily separable from real photos. A hand is now a set of round cones (back of the hand, wrist, four fingers
with three segments each, the thumb on the correct side) rendered as a height field seen from above; its slopes
give the volumetric gradient across each finger, ambient occlusion darkens the valleys between fingers, and the
field is where knuckle creases, nails, redder knuckles, warm subsurface edges and an uneven sheen are painted.
Clutter (phone, cup, coin, pen, keys, a box lid, folded glasses, paper notes, a rulebook) is built from flat layers
at their real heights, each shaded from its own small height field (bevels, rims, relief).

Geometry: every part is a textured plane in table space (x right, y away, z up, millimetres). Without a camera the
planes are mapped with the table homography (heights ignored: the old behaviour). With `camera=` each plane is
projected at its height through K [R | t], so a tilted camera sees parallax: a hand held over the cards looks
bigger and is displaced away from the camera's foot; a cup shows its wall, and its rim moves off its base. The
hand plane is at `height_mm` at the wrist with the fingertips lower and the forearm rising towards the elbow; all
those heights scale with `height_mm`, so a hand at height 0 lies on the table and projects like the flat version.

Patches are clipped to the frame plus FRAME_MARGIN_PX (room for the shadow of what is just outside): an arm that
reaches in from outside used to cost a window up to three times the frame. Consequence for labels: the visible
fraction of an occluder is now the fraction of its in-frame part (plus margin) that shows, not of the whole object.

Randomness: everything comes from `variant`. Its lowest bit is the handedness (odd = left hand, an exact mirror),
the other bits seed pose, proportions, sleeve, marks and object styles, so variants 2k and 2k+1 are the same hand
in mirror image. Sizes: an adult hand is ~185 mm from wrist to fingertip and ~80 mm across the knuckles
(anthropometric averages), times `scale`; object sizes are typical retail sizes (guesses within a few mm).

Speed (a hand must stay a few milliseconds): colours are separate B, G, R planes while painting (numpy is an
order of magnitude slower on a trailing axis of 3 or 4); lighting is one lookup per texel in a slope -> response
table; textures are made at a little under the image's own resolution (the arm at less); the arm is warped in
strips so a diagonal arm's empty bounding box costs nothing; layers are blended only where they overlap; and a
hand's light-independent maps are cached, so a video that re-renders one hand pays only for lighting and warping.
Measured (`process_time`, one cv2 thread, this 2-core machine, 150 hands under `random_camera` cameras): ~8 ms
for a hand under 200 px long (wrist to fingertip), ~11 ms at the median 250 px, 14-23 ms for 300-600 px, mean
12.7 ms; a cached hand (video) ~5 ms. The flat-polygon version took 10, 15, 24-50 ms, mean 21 ms, because its
window covered the whole 900 mm arm (1.5 Mpx on average against 0.5 Mpx now).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.camera import Camera, translation

OBJECT_KINDS = ("phone", "cup", "coin", "pen", "keys", "lid", "glasses", "notes", "rulebook")
# BGR skin tones from light to deep; several so no tone is out of distribution at test time.
SKIN_TONES = (
    (170, 195, 235),
    (140, 175, 225),
    (115, 150, 205),
    (90, 125, 180),
    (65, 95, 145),
    (45, 65, 105),
    (125, 160, 200),  # olive
    (33, 45, 78),  # very deep
)
SUBPIXEL_BITS = 3
FRAME_MARGIN_PX = 48
HAND_POSES = ("flat", "reach", "hold", "pinch", "fist")
OBJECT_HEIGHTS_MM = {
    "phone": 9.0,
    "cup": 90.0,
    "coin": 2.0,
    "pen": 10.0,
    "keys": 4.0,
    "lid": 30.0,
    "glasses": 22.0,
    "notes": 0.5,
    "rulebook": 6.0,
}
HAND_HEIGHT_MM = (40.0, 150.0)
MAX_TEXELS_PER_MM = 2.6  # texture detail cap: finer than this is invisible at webcam resolution
# Texture resolution relative to the image: slightly under one texel per pixel costs a third less and looks the
# same once the camera's own softness is applied; the arm is smooth and needs less still.
HAND_TEXELS_PER_PX = 0.8
ARM_TEXELS_PER_HAND_TEXEL = 0.6
_NO_SKIN_MM = -100.0  # height-field value off the hand, before the rim fill
RIM_DROP_MM = 3.0  # how far the skin surface falls away just outside the outline: sets how dark rims are
_WORLD_LIGHT = (0.25, 0.35, 1.0)  # room light mostly from above, a little from the far side
_ARM_LENGTH_MM = 900.0  # long enough that an arm always leaves the frame, as a real one does

Planes = list[np.ndarray]  # B, G, R float32 planes of one texture
Colour = np.ndarray  # (3,) float32 BGR


@dataclass(frozen=True)
class OccluderSpec:
    kind: str  # "hand" or one of OBJECT_KINDS
    x_mm: float
    y_mm: float
    rotation_deg: float  # for a hand: direction the fingers point, measured like card rotation
    scale: float
    colour: tuple[int, int, int]  # skin tone or body colour, BGR
    accent: tuple[int, int, int]  # sleeve, screen, coffee, cap
    height_mm: float  # above the table: sets parallax (with a camera) and how far and soft the shadow falls
    variant: int  # seeds all shape choices; lowest bit = left hand

    @property
    def label(self) -> str:
        return "hand" if self.kind == "hand" else "object"


@dataclass
class Patch:
    """An object's pixels in an axis-aligned window of the image at (x0, y0). Occluder windows are clipped to the
    frame plus FRAME_MARGIN_PX; card windows may reach further."""

    bgr: np.ndarray  # float32, straight (not premultiplied) colour; for occluders a view into a BGRA buffer
    alpha: np.ndarray  # float32 0-1
    x0: int
    y0: int


def random_occluder(rng: np.random.Generator, kind: str, x_mm: float, y_mm: float, rotation_deg: float) -> OccluderSpec:
    """Draw the colours, size, height and variant of an occluder placed by the caller (who knows where hands reach
    and clutter lies); everything finer is drawn later from the variant, so specs stay small and storable."""
    if kind == "hand":
        tone = np.array(SKIN_TONES[int(rng.integers(0, len(SKIN_TONES)))], float)
        # brightness varies more than hue: an independent +-10 % per channel made greenish, unreal skin
        colour = tone * rng.uniform(0.88, 1.1) * (1.0 + rng.normal(0.0, 0.025, 3))
        return OccluderSpec(
            kind, x_mm, y_mm, rotation_deg, float(rng.uniform(0.85, 1.12)), _bgr(colour), _random_colour(rng),
            float(rng.uniform(*HAND_HEIGHT_MM)), int(rng.integers(0, 2**31)),
        )  # fmt: skip
    if kind not in OBJECT_HEIGHTS_MM:
        raise ValueError(f"unknown occluder kind '{kind}'; expected 'hand' or one of {OBJECT_KINDS}")
    colour = _random_colour(rng) if kind != "coin" else ((60, 160, 200) if rng.random() < 0.5 else (180, 180, 175))
    return OccluderSpec(
        kind, x_mm, y_mm, rotation_deg, float(rng.uniform(0.85, 1.15)), colour, _random_colour(rng),
        OBJECT_HEIGHTS_MM[kind], int(rng.integers(0, 2**31)),
    )  # fmt: skip


def _random_colour(rng: np.random.Generator) -> tuple[int, int, int]:
    return tuple(int(v) for v in rng.integers(20, 230, 3))


def _bgr(values: Sequence[float] | np.ndarray) -> tuple[int, int, int]:
    b, g, r = (int(np.clip(round(float(v)), 0, 255)) for v in values)
    return b, g, r


# ----------------------------------------------------------------------------------------------- projection


def projection(table_to_image: np.ndarray, camera: Camera | None = None) -> np.ndarray:
    """3x4 matrix from table (x, y, z, 1) to image pixels. Without a camera heights are ignored (the table
    homography, as before); with one it is K [R | -R c], which equals the homography on the table plane."""
    if camera is None:
        h = np.asarray(table_to_image, float)
        return np.column_stack([h[:, 0], h[:, 1], np.zeros(3), h[:, 2]])
    rot = camera.rotation()
    p = camera.intrinsics() @ np.column_stack([rot, -rot @ camera.position()])
    return p / p[2, 3]


def plane(x_mm: float, y_mm: float, rotation_deg: float, scale: float, z_mm: float, rise: float = 0.0) -> np.ndarray:
    """4x3 matrix from an object's local millimetres (u, v, 1) to table (x, y, z, 1): a rigid pose in the table
    plane, scaled, lifted to z_mm and tilted so that z grows by `rise` mm per local mm towards -v (a hand's
    fingertips are lower than its wrist, a forearm rises towards the elbow)."""
    a = math.radians(rotation_deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[scale * c, -scale * s, x_mm], [scale * s, scale * c, y_mm], [0.0, -rise, z_mm], [0.0, 0.0, 1.0]])


def project(p: np.ndarray, points_xyz: np.ndarray) -> np.ndarray:
    """(N, 3) table points to (N, 2) pixels; points behind the camera come back as NaN."""
    pts = np.asarray(points_xyz, float).reshape(-1, 3)
    h = np.column_stack([pts, np.ones(len(pts))]) @ p.T
    out = np.full((len(pts), 2), np.nan)
    front = h[:, 2] > 1e-9
    out[front] = h[front, :2] / h[front, 2:]
    return out


@dataclass
class _Layer:
    """A BGRA texture (straight colour) lying on a plane: texel (c, r) sits at local (u0 + (c+.5)/d, v0 + (r+.5)/d)."""

    texture: np.ndarray  # float32 (h, w, 4)
    u0: float
    v0: float
    density: float  # texels per local millimetre
    plane: np.ndarray  # 4x3 local -> table

    def homography(self, p: np.ndarray) -> np.ndarray:
        d = self.density
        texel_to_local = np.array([[1 / d, 0, self.u0 + 0.5 / d], [0, 1 / d, self.v0 + 0.5 / d], [0, 0, 1.0]])
        return p @ self.plane @ texel_to_local


def _px_per_mm(p: np.ndarray, plane_m: np.ndarray, u: float, v: float) -> float:
    """Image pixels per local millimetre at (u, v) (square root of the Jacobian's area); 0 behind the camera."""
    pts = np.array([[u, v, 1.0], [u + 1.0, v, 1.0], [u, v + 1.0, 1.0]]) @ (p @ plane_m).T
    if (pts[:, 2] <= 1e-9).any():
        return 0.0
    xy = pts[:, :2] / pts[:, 2:]
    a, b = xy[1] - xy[0], xy[2] - xy[0]
    return math.sqrt(abs(a[0] * b[1] - a[1] * b[0]))


Rect = tuple[float, float, float, float]  # u0, v0, u1, v1 in local millimetres


def _clip_rect(p: np.ndarray, plane_m: np.ndarray, rect: Rect, frame: tuple[int, int]) -> Rect | None:
    """The part of a local rectangle that lands in the frame (plus margin) in front of the camera, as a smaller
    local rectangle: an arm runs 900 mm back, and texturing what no pixel shows was the old renderer's main cost."""
    u0, v0, u1, v1 = rect
    us = np.linspace(u0, u1, max(3, min(24, int((u1 - u0) / 8) + 2)))
    vs = np.linspace(v0, v1, max(3, min(96, int((v1 - v0) / 8) + 2)))
    grid_u, grid_v = np.meshgrid(us, vs)
    local = np.column_stack([grid_u.ravel(), grid_v.ravel(), np.ones(grid_u.size)])
    h = local @ (p @ plane_m).T
    front = h[:, 2] > 1e-9
    xy = np.full((len(h), 2), np.inf)
    xy[front] = h[front, :2] / h[front, 2:]
    du, dv = us[1] - us[0], vs[1] - vs[0]
    step = max(_px_per_mm(p, plane_m, float(us.mean()), float(vs.mean())), 0.05) * max(du, dv)
    pad = FRAME_MARGIN_PX + 2.0 * step
    keep = front & (xy[:, 0] > -pad) & (xy[:, 0] < frame[0] + pad) & (xy[:, 1] > -pad) & (xy[:, 1] < frame[1] + pad)
    if not keep.any():
        return None
    ku, kv = local[keep, 0], local[keep, 1]
    return max(u0, ku.min() - du), max(v0, kv.min() - dv), min(u1, ku.max() + du), min(v1, kv.max() + dv)


def _window(layer: _Layer, p: np.ndarray, frame: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """The layer's pixel box, clipped to the frame plus margin; None when it is behind the camera or outside."""
    th, tw = layer.texture.shape[:2]
    corners = np.array([[-0.5, -0.5, 1], [tw - 0.5, -0.5, 1], [tw - 0.5, th - 0.5, 1], [-0.5, th - 0.5, 1]])
    h = corners @ layer.homography(p).T
    if (h[:, 2] <= 1e-9).any():
        return None
    xy = h[:, :2] / h[:, 2:]
    x0, y0 = (np.floor(xy.min(axis=0)).astype(int) - 1).clip(-FRAME_MARGIN_PX)
    x1, y1 = np.ceil(xy.max(axis=0)).astype(int) + 2
    x1, y1 = min(int(x1), frame[0] + FRAME_MARGIN_PX), min(int(y1), frame[1] + FRAME_MARGIN_PX)
    return (int(x0), int(y0), x1, y1) if x1 > x0 and y1 > y0 else None


STRIP_TEXELS = 48


def _warp_strips(
    layer: _Layer, p: np.ndarray, out: np.ndarray, origin: tuple[int, int], frame: tuple[int, int]
) -> None:
    """Warp a long texture (an arm) in overlapping strips of rows, each into its own small box: a diagonal arm's
    bounding box is mostly empty, and warping costs per output pixel. Strips overlap by two rows so every pixel's
    bilinear footprint lies wholly inside one strip (BORDER_TRANSPARENT leaves the others untouched)."""
    rows = layer.texture.shape[0]
    for r0 in range(0, max(rows - 2, 1), STRIP_TEXELS):
        r1 = min(rows, r0 + STRIP_TEXELS + 2)
        strip = _Layer(layer.texture[r0:r1], layer.u0, layer.v0 + r0 / layer.density, layer.density, layer.plane)
        box = _window(strip, p, frame)
        if box is None:
            continue
        bx0, by0 = max(box[0], origin[0]), max(box[1], origin[1])
        bx1, by1 = min(box[2], origin[0] + out.shape[1]), min(box[3], origin[1] + out.shape[0])
        if bx1 <= bx0 or by1 <= by0:
            continue
        h = translation(-bx0, -by0) @ strip.homography(p)
        region = out[by0 - origin[1] : by1 - origin[1], bx0 - origin[0] : bx1 - origin[0]]
        cv2.warpPerspective(strip.texture, h, (bx1 - bx0, by1 - by0), region, cv2.INTER_LINEAR, cv2.BORDER_TRANSPARENT)


def _composite(layers: list[_Layer], p: np.ndarray, frame: tuple[int, int]) -> Patch | None:
    """Warp every layer into one window (clipped to the frame plus margin) and stack them, later ones in front."""
    boxes = [_window(layer, p, frame) for layer in layers]
    valid = [b for b in boxes if b is not None]
    if not valid:
        return None
    x0, y0 = min(b[0] for b in valid), min(b[1] for b in valid)
    x1, y1 = max(b[2] for b in valid), max(b[3] for b in valid)
    if x1 <= 0 or y1 <= 0 or x0 >= frame[0] or y0 >= frame[1]:
        return None
    out = np.zeros((y1 - y0, x1 - x0, 4), np.float32)
    painted: tuple[int, int, int, int] | None = None  # box holding everything drawn so far
    for layer, box in zip(layers, boxes, strict=True):
        if box is None:
            continue
        bx0, by0, bx1, by1 = box
        h = translation(-bx0, -by0) @ layer.homography(p)
        region = out[by0 - y0 : by1 - y0, bx0 - x0 : bx1 - x0]
        size = (bx1 - bx0, by1 - by0)
        if painted is None:  # nothing underneath yet: warp straight into the window
            _warp_strips(layer, p, out, (x0, y0), frame)
            painted = box
            continue
        warped = cv2.warpPerspective(layer.texture, h, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        _paste_over(region, warped)
        painted = (min(bx0, painted[0]), min(by0, painted[1]), max(bx1, painted[2]), max(by1, painted[3]))
    alpha = cv2.extractChannel(out, 3)
    if float(alpha.max()) < 0.004:
        return None
    return Patch(bgr=out[..., :3], alpha=alpha, x0=int(x0), y0=int(y0))


def _paste_over(region: np.ndarray, top: np.ndarray) -> None:
    """Straight-colour BGRA 'over', in place: opaque texels of the top are copied, empty ones leave what is below,
    and only the soft rim in between (a few thousand pixels) is blended, weighting each colour by its share of the
    combined alpha. Blending whole boxes cost more than everything else a rulebook or a hand needs."""
    top_alpha = cv2.extractChannel(top, 3)
    rim = cv2.findNonZero(cv2.inRange(top_alpha, 1e-6, 0.9999))
    if rim is not None:
        rim = rim.reshape(-1, 2)
        xs, ys = rim[:, 0], rim[:, 1]
        under = region[ys, xs]
        over = top[ys, xs]
    cv2.copyTo(top, cv2.compare(top_alpha, 0.9999, cv2.CMP_GE), region)
    if rim is None:
        return
    a_top, a_under = over[:, 3:], under[:, 3:] * (1.0 - over[:, 3:])
    alpha = a_top + a_under
    colour = (over[:, :3] * a_top + under[:, :3] * a_under) / np.maximum(alpha, 1e-6)
    region[ys, xs] = np.concatenate([colour, alpha], axis=1)


def render_occluder(
    spec: OccluderSpec, table_to_image: np.ndarray, frame: tuple[int, int], camera: Camera | None = None
) -> Patch | None:
    """The occluder's shaded pixels and soft alpha, or None when nothing of it reaches the frame. With a camera,
    parts are projected at their heights through it (parallax) and `table_to_image` is not used; without one, they
    are mapped flat through `table_to_image`, as before."""
    p = projection(table_to_image, camera)
    if spec.kind == "hand":
        layers = _hand_layers(spec, p, frame)
    elif spec.kind in OBJECT_BUILDERS:
        layers = OBJECT_BUILDERS[spec.kind](spec, p)
    else:
        raise ValueError(f"unknown occluder kind '{spec.kind}'; expected 'hand' or one of {OBJECT_KINDS}")
    return _composite(layers, p, frame) if layers else None


# ----------------------------------------------------------------------------------------------- shading kit


@functools.cache
def _noise_tile(kind: str) -> np.ndarray:
    """A fixed 1024x1024 noise tile (zero mean, unit spread, seamless over 512): 'smooth' has features ~8 texels
    wide, 'fine' ~1. Seeded by name, so renders stay deterministic and pay nothing to make noise."""
    rng = np.random.default_rng(sum(map(ord, kind)) * 7919)
    if kind == "fine":
        white = rng.standard_normal((512, 512)).astype(np.float32)
        tile = cv2.GaussianBlur(np.tile(white, (3, 3)), (0, 0), 0.7)[512:1024, 512:1024]
    else:
        small = rng.standard_normal((64, 64)).astype(np.float32)
        tile = cv2.resize(np.tile(small, (3, 3)), (1536, 1536), interpolation=cv2.INTER_CUBIC)[512:1024, 512:1024]
    tile = (tile - tile.mean()) / (tile.std() + 1e-6)
    return np.tile(tile, (2, 2))


def _noise(shape: tuple[int, int], feature_texels: float, seed: int, kind: str = "smooth") -> np.ndarray:
    """Noise with features about `feature_texels` wide for a texture of `shape`, cut from a cached tile at a
    seeded offset."""
    factor = (8.0 if kind == "smooth" else 1.0) / max(feature_texels, 1e-3)
    ch, cw = max(2, math.ceil(shape[0] * factor)), max(2, math.ceil(shape[1] * factor))
    oy, ox = (seed * 7349) % 512, (seed * 3571) % 512
    source = _noise_tile(kind)
    if oy + ch > source.shape[0] or ox + cw > source.shape[1]:
        source = np.tile(source[:512, :512], (math.ceil((oy + ch) / 512), math.ceil((ox + cw) / 512)))
    crop = source[oy : oy + ch, ox : ox + cw]
    if crop.shape != (shape[0], shape[1]):
        crop = cv2.resize(crop, (shape[1], shape[0]), interpolation=cv2.INTER_LINEAR)
    return crop


def _pow(x: np.ndarray, power: int) -> np.ndarray:
    """x ** power for a power of two, by squaring (np.power is several times slower)."""
    out = x
    while power > 1:
        out = out * out
        power //= 2
    return out


def _local_light(rotation_deg: float, mirror: bool = False) -> np.ndarray:
    """The room light in an object's local frame: it stays fixed in the world while the object turns."""
    lx, ly, lz = _WORLD_LIGHT
    a = math.radians(-rotation_deg)
    c, s = math.cos(a), math.sin(a)
    light = np.array([c * lx - s * ly, s * lx + c * ly, lz])
    if mirror:
        light[0] = -light[0]
    return light / np.linalg.norm(light)


@dataclass(frozen=True)
class _Material:
    ambient: float = 0.38
    wrap: float = 0.25  # light wrapping past the terminator: skin and cloth scatter, metal does not
    specular: float = 0.08
    shininess: int = 16  # a power of two
    warmth: float = 0.0  # shadows of skin turn redder (blue and green are absorbed more under the surface)
    rim: float = 0.0  # light scattered through thin edges (finger sides) shows warm


LUT_SIZE = 65
LUT_SLOPE = 5.0  # surface slopes steeper than this (79 degrees) share the table's border entry


def _response_lut(light: np.ndarray, material: _Material) -> np.ndarray:
    """Light response per surface slope (gx, gy): B, G, R shade factors and a specular term (0-255), sampled on a
    LUT_SIZE square. Shading then costs one remap per texel instead of some thirty array operations.

    Model: wrapped Lambert + hemisphere ambient + Blinn-Phong sheen, viewer above. Skin warmth makes the dim side
    redder rather than just darker, which is most of what separates skin from painted plastic."""
    g = np.linspace(-LUT_SLOPE, LUT_SLOPE, LUT_SIZE, dtype=np.float32)
    gx, gy = np.meshgrid(g, g)
    nz = 1.0 / np.sqrt(gx * gx + gy * gy + 1.0)
    nx, ny = -gx * nz, -gy * nz
    lx, ly, lz = (float(v) for v in light)
    diffuse = np.clip((nx * lx + ny * ly + nz * lz + material.wrap) / (1.0 + material.wrap), 0.0, 1.0)
    shade = material.ambient * (0.6 + 0.4 * nz) + (1.0 - material.ambient) * diffuse
    half = np.array([lx, ly, lz + 1.0])
    hx, hy, hz = half / np.linalg.norm(half)
    ndh = np.clip(nx * hx + ny * hy + nz * hz, 0.0, 1.0)
    lut = np.empty((LUT_SIZE, LUT_SIZE, 4), np.float32)
    dim = 1.0 - np.clip(shade, 0.0, 1.0)
    edge = (1.0 - nz) * material.rim
    warm = (material.warmth, material.warmth * 0.55, 0.0)
    for channel, (w, rim) in enumerate(zip(warm, (-1.0, -0.3, 1.0), strict=True)):
        lut[..., channel] = shade * (1.0 - w * dim) * (1.0 + rim * edge)
    lut[..., 3] = (material.specular * 255.0) * _pow(ndh, material.shininess)
    return lut


def _slopes(height: np.ndarray, density: float, smooth: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A height field's slopes (mm per mm), already scaled into coordinates of the response table."""
    height = np.ascontiguousarray(height, np.float32)
    if smooth > 0:
        height = cv2.GaussianBlur(height, (0, 0), smooth)
    k = density / 8.0 * (LUT_SIZE - 1) / (2.0 * LUT_SLOPE)
    c = (LUT_SIZE - 1) / 2.0
    mx = cv2.Sobel(height, cv2.CV_32F, 1, 0, ksize=3, scale=k, delta=c, borderType=cv2.BORDER_REPLICATE)
    my = cv2.Sobel(height, cv2.CV_32F, 0, 1, ksize=3, scale=k, delta=c, borderType=cv2.BORDER_REPLICATE)
    return mx, my


def _channels(colour: Planes | Colour | Sequence[float]) -> list[np.ndarray | float]:
    return list(colour) if isinstance(colour, list) else [float(c) for c in colour]


def _apply(
    albedo: Planes | Colour,
    slopes: tuple[np.ndarray, np.ndarray],
    light: np.ndarray,
    material: _Material,
    occlusion: np.ndarray | None = None,
    gain: np.ndarray | None = None,
) -> Planes:
    """Colour = albedo x shade (x ambient occlusion) + specular (x a gain map), per plane."""
    response = cv2.remap(_response_lut(light, material), slopes[0], slopes[1], cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
    *shades, spec = cv2.split(response)
    if gain is not None:
        spec = spec * gain
    out = []
    for value, shade in zip(_channels(albedo), shades, strict=True):
        plane_shade = shade if occlusion is None else shade * occlusion
        out.append((value * plane_shade + spec).astype(np.float32, copy=False))
    return out


def _lit(albedo: Planes | Colour, height: np.ndarray, density: float, light: np.ndarray, mat: _Material) -> Planes:
    return _apply(albedo, _slopes(height, density), light, mat)


def _mix(base: Planes | Colour, top: Planes | Colour, t: np.ndarray) -> Planes:
    """base + (top - base) * t per plane; either side may be a flat colour."""
    return [b + (o - b) * t for b, o in zip(_channels(base), _channels(top), strict=True)]


def _tint(colour: Planes | Colour, factor: np.ndarray | float) -> Planes:
    return [c * factor for c in _channels(colour)]


def _layer(colour: Planes, alpha: np.ndarray, rect: Rect, density: float, plane_m: np.ndarray) -> _Layer:
    """Colour must be meaningful just outside the outline too (every painter computes it everywhere): textures
    are straight, not premultiplied, so the soft edge blends with the colour beside it."""
    alpha = np.ascontiguousarray(alpha, np.float32)
    shape = alpha.shape
    planes = [np.broadcast_to(np.asarray(c, np.float32), shape).astype(np.float32) for c in colour]
    return _Layer(cv2.merge([*planes, alpha]), rect[0], rect[1], density, plane_m)


def _grid(rect: Rect, density: float) -> tuple[np.ndarray, np.ndarray]:
    """Texel-centre coordinates of a local rectangle: u as a (1, w) row, v as an (h, 1) column."""
    u0, v0, u1, v1 = rect
    w, h = max(1, math.ceil((u1 - u0) * density)), max(1, math.ceil((v1 - v0) * density))
    u = (u0 + (np.arange(w, dtype=np.float32) + 0.5) / density)[None, :]
    v = (v0 + (np.arange(h, dtype=np.float32) + 0.5) / density)[:, None]
    return u, v


def _coverage(signed_distance: np.ndarray, density: float) -> np.ndarray:
    """Anti-aliased coverage from a signed distance in millimetres (negative inside)."""
    return np.clip(0.5 - signed_distance * density, 0.0, 1.0).astype(np.float32)


def _sd_box(u: np.ndarray, v: np.ndarray, half_w: float, half_h: float, radius: float) -> np.ndarray:
    qx = np.abs(u) - (half_w - radius)
    qy = np.abs(v) - (half_h - radius)
    outside = np.sqrt(np.maximum(qx, 0.0) ** 2 + np.maximum(qy, 0.0) ** 2)
    return outside + np.minimum(np.maximum(qx, qy), 0.0) - radius


def _sd_circle(u: np.ndarray, v: np.ndarray, cx: float, cy: float, radius: float) -> np.ndarray:
    return np.sqrt((u - cx) ** 2 + (v - cy) ** 2) - radius


def _sd_segment(u: np.ndarray, v: np.ndarray, a: tuple[float, float], b: tuple[float, float], r: float) -> np.ndarray:
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    t = np.clip(((u - ax) * dx + (v - ay) * dy) / max(dx * dx + dy * dy, 1e-9), 0.0, 1.0)
    return np.sqrt((u - ax - t * dx) ** 2 + (v - ay - t * dy) ** 2) - r


def _bevel(signed_distance: np.ndarray, width: float, height: float) -> np.ndarray:
    """A rounded edge: the height rises over `width` mm inside the outline, so the light catches the rim."""
    t = np.clip(-signed_distance / width, 0.0, 1.0)
    return (height * np.sqrt(t * (2.0 - t))).astype(np.float32)


def _tame(colour: Sequence[int] | np.ndarray, grey_mix: float, gain: float = 1.0) -> Colour:
    """Random RGB is garish; real objects and clothes are mostly muted, so mix towards the colour's grey."""
    c = np.asarray(colour, np.float32)
    return (c * (1.0 - grey_mix) + c.mean() * grey_mix) * gain


def _texel(rect: Rect, density: float) -> Callable[[float, float], tuple[int, int]]:
    """Local millimetres to fixed-point texel coordinates for cv2 drawing (SUBPIXEL_BITS)."""
    one = 1 << SUBPIXEL_BITS

    def to_px(u: float, v: float) -> tuple[int, int]:
        return round(((u - rect[0]) * density - 0.5) * one), round(((v - rect[1]) * density - 0.5) * one)

    return to_px


# ----------------------------------------------------------------------------------------------------- hands


@dataclass(frozen=True)
class _Bone:
    """A round cone from a to b (u, v, z in right-hand model millimetres, z up from the table) with radii ra, rb;
    `flat` squashes its cross-section (fingers are wider than tall); `fade` fades it out towards -v below that
    v, so the wrist melts into the separately drawn forearm; `blend` joins it smoothly to what is already drawn
    (needed where fingers meet the hand, not between segments of one finger)."""

    a: tuple[float, float, float]
    b: tuple[float, float, float]
    ra: float
    rb: float
    flat: float = 0.85
    fade: float | None = None
    blend: bool = True


@dataclass(frozen=True)
class _Nail:
    bone: int  # index of the end segment it sits on
    along: float  # centre along the bone's projected axis, mm from its start
    half_length: float
    across: float  # centre offset across the axis (the thumb's nail is seen from the side)
    half_width: float


@dataclass(frozen=True)
class HandModel:
    """Everything a hand's shape and look depend on, drawn from the spec's variant (right-hand coordinates: u to
    the right, v from the wrist towards the fingertips; a left hand is this mirrored)."""

    left: bool
    pose: str
    bones: tuple[_Bone, ...]
    nails: tuple[_Nail, ...]
    wrinkles: np.ndarray  # (n, 3, 2) knuckle-crease polylines (end, middle, end) in model millimetres
    knuckles: tuple[tuple[float, float, float], ...]  # (u, v, radius) of spots that are redder or darker
    arm_half_width: tuple[float, float]  # at the wrist, at the forearm's widest
    sleeve: tuple[float, float, bool, bool] | None  # start v, slack mm, rolled cuff, striped
    sleeve_colour: tuple[int, int, int]
    sheen: float  # specular strength: dry to oily skin


_FINGERS = (  # knuckle (u, v), segment lengths, radii at the knuckle and each joint, for a right hand
    ((-26.0, 92.0), (40.0, 23.0, 19.0), (9.8, 9.0, 8.3, 7.6)),  # index
    ((-7.5, 97.0), (45.0, 27.0, 20.0), (10.0, 9.3, 8.5, 7.8)),  # middle
    ((11.0, 94.0), (42.0, 26.0, 20.0), (9.5, 8.8, 8.1, 7.3)),  # ring
    ((28.0, 84.0), (33.0, 19.0, 17.0), (8.5, 7.8, 7.1, 6.5)),  # little
)
_POSE_FLEX = {  # (low, high) degrees at the knuckle, middle and end joints of the fingers
    "flat": ((4, 14), (3, 12), (0, 8)),
    "reach": ((10, 28), (28, 55), (12, 30)),
    "hold": ((4, 16), (14, 32), (8, 22)),
    "pinch": ((35, 60), (55, 80), (25, 40)),
    "fist": ((55, 80), (85, 105), (35, 60)),
}
_THUMB_YAW = {"flat": (-55, -30), "reach": (-60, -35), "hold": (-20, -5), "pinch": (-25, -8), "fist": (55, 75)}


def hand_model(spec: OccluderSpec) -> HandModel:
    """Draw a hand from the variant: pose, finger flexion and spread, proportions, thumb, arm and sleeve."""
    return _hand_model(spec.variant, spec.accent)


@functools.lru_cache(maxsize=64)
def _hand_model(variant: int, accent: tuple[int, int, int]) -> HandModel:
    rng = np.random.default_rng(variant >> 1)
    pose = HAND_POSES[int(rng.choice(len(HAND_POSES), p=[0.3, 0.27, 0.22, 0.12, 0.09]))]
    spread = rng.uniform(1.0, 4.0) if pose in ("hold", "fist") else rng.uniform(2.5, 11.0)
    width = rng.uniform(0.93, 1.07)  # broad or slender hands
    bones = [  # back of the hand (a flat body), wrist (fading into the forearm)
        _Bone((0.0, 22.0, 5.0), (1.0 * width, 68.0, 7.0), 30.0 * width, 34.0 * width, 0.55),
        _Bone((0.0, -45.0, 8.0), (0.0, 14.0, 8.0), 26.5 * width, 28.0 * width, 0.72, fade=-22.0),
    ]
    nails: list[_Nail] = []
    creases: list[tuple[float, float, float, float]] = []
    knuckles: list[tuple[float, float, float]] = []
    proximal: list[tuple[tuple[float, float, float], tuple[float, float, float]]] = []
    for i, ((ku, kv), lengths, radii) in enumerate(_FINGERS):
        flex_range = _POSE_FLEX["reach" if pose == "pinch" and i == 0 else pose]
        flex = [math.radians(rng.uniform(*flex_range[k])) for k in range(3)]
        yaw = math.radians((i - 1.3) * spread + rng.normal(0.0, 1.5))
        base = (ku * width, kv + rng.normal(0.0, 1.5), 22.0)
        bones.append(_Bone((ku * 0.45 * width, 20.0, 17.0), base, 11.0, radii[0] + 0.8, 0.6))  # metacarpal ridge
        chain = _chain(base, yaw, flex, [x * rng.uniform(0.96, 1.05) for x in lengths])
        scaled = [r * width for r in radii]
        proximal.append((chain[0], chain[1]))
        for k in range(3):
            bones.append(_Bone(chain[k], chain[k + 1], scaled[k], scaled[k + 1], 0.82, blend=k < 2))
        nail = _nail(len(bones) - 1, chain[2], chain[3], scaled[2], scaled[3], sum(flex))
        if nail is not None:
            nails.append(nail)
        creases.extend(_joint(chain, k, scaled[k]) for k in (1, 2))
        knuckles.extend([(*chain[0][:2], scaled[0]), (*chain[1][:2], scaled[1] * 0.8), (*chain[3][:2], scaled[3])])
    bones.extend(_webs(proximal))
    _thumb(rng, pose, width, bones, nails, creases, knuckles)
    sleeve = None
    if rng.random() < 0.7:
        start = -float(rng.choice([rng.uniform(40.0, 90.0), rng.uniform(90.0, 260.0)]))
        sleeve = (start, float(rng.uniform(4.0, 15.0)), bool(rng.random() < 0.4), bool(rng.random() < 0.15))
    return HandModel(
        left=bool(variant & 1),
        pose=pose,
        bones=tuple(bones),
        nails=tuple(nails),
        wrinkles=_wrinkles(creases, np.random.default_rng((variant >> 1) + 17)),
        knuckles=tuple(knuckles),
        arm_half_width=(rng.uniform(24.0, 29.0) * width, rng.uniform(31.0, 38.0) * width),
        sleeve=sleeve,
        sleeve_colour=_fabric(accent, rng),
        sheen=float(rng.uniform(0.03, 0.09)),
    )


def _webs(proximal: list[tuple[tuple[float, float, float], tuple[float, float, float]]]) -> list[_Bone]:
    """Skin webbing between neighbouring fingers, a third of the way up their first segments: without it the
    fingers look stuck onto the hand like sausages."""
    webs = []
    for (a0, a1), (b0, b1) in itertools.pairwise(proximal):
        root = ((a0[0] + b0[0]) / 2, (a0[1] + b0[1]) / 2, 15.0)
        reach = [
            (x0 + 0.3 * (x1 - x0) + y0 + 0.3 * (y1 - y0)) / 2 for x0, x1, y0, y1 in zip(a0, a1, b0, b1, strict=True)
        ]
        webs.append(_Bone(root, (reach[0], reach[1], reach[2] - 5.0), 8.0, 6.5, 0.55))
    return webs


def _fabric(accent: tuple[int, int, int], rng: np.random.Generator) -> tuple[int, int, int]:
    """Sleeve colours: usually a muted accent, often the black, grey, white, navy or denim most clothes are."""
    if rng.random() < 0.35:
        basics = ((30, 30, 32), (95, 95, 98), (215, 215, 212), (70, 40, 30), (120, 85, 55), (40, 55, 90))
        return _bgr(np.array(basics[int(rng.integers(0, len(basics)))], float) * rng.uniform(0.85, 1.1))
    return _bgr(_tame(accent, float(rng.uniform(0.2, 0.65)), float(rng.uniform(0.7, 1.0))))


def _chain(
    base: tuple[float, float, float], yaw: float, flex: list[float], lengths: list[float]
) -> list[tuple[float, float, float]]:
    """Joint positions of a finger: each segment bends down by its cumulative flexion, so seen from above a curled
    segment is foreshortened and drops towards the table."""
    points = [base]
    pitch = 0.0
    for angle, length in zip(flex, lengths, strict=True):
        pitch += angle
        u, v, z = points[-1]
        horizontal = length * math.cos(pitch)
        points.append((u + horizontal * math.sin(yaw), v + horizontal * math.cos(yaw), z - length * math.sin(pitch)))
    return points


def _nail(
    bone: int,
    start: tuple[float, float, float],
    end: tuple[float, float, float],
    radius: float,
    tip_radius: float,
    pitch: float,
    across: float = 0.0,
    width: float = 0.6,
) -> _Nail | None:
    """A nail over the outer two thirds of an end segment, reaching a little over the rounded tip; none when the
    segment points down so steeply that the nail faces away from the camera."""
    if math.cos(pitch) < 0.3:
        return None
    projected = math.hypot(end[0] - start[0], end[1] - start[1])
    first, last = 0.32 * projected, projected + 0.5 * tip_radius * math.cos(pitch)
    return _Nail(bone, (first + last) / 2, (last - first) / 2, across, width * radius)


def _joint(chain: list[tuple[float, float, float]], k: int, radius: float) -> tuple[float, float, float, float]:
    (ua, va, _), (ub, vb, _) = chain[k - 1], chain[k + 1]
    return chain[k][0], chain[k][1], math.degrees(math.atan2(ub - ua, vb - va)), radius


def _thumb(
    rng: np.random.Generator,
    pose: str,
    width: float,
    bones: list[_Bone],
    nails: list[_Nail],
    creases: list[tuple[float, float, float, float]],
    knuckles: list[tuple[float, float, float]],
) -> None:
    """The thumb is on the -u side of a right hand, lower than the fingers and turned so its nail is seen from the
    side; in a fist it crosses the fingers, when holding a card it tucks under (only its base shows)."""
    yaw = math.radians(rng.uniform(*_THUMB_YAW[pose]))
    flex = [math.radians(rng.uniform(0, 15)), math.radians(rng.uniform(5, 30))]
    base = (-30.0 * width, 70.0, 20.0) if pose == "fist" else (-38.0 * width, 44.0, 13.0)
    bones.append(_Bone((-18.0 * width, 12.0, 14.0), base, 13.0 * width, 11.5 * width, 0.7))
    length = 0.75 if pose == "hold" else 1.0
    chain = _chain(base, yaw, flex, [31.0 * length, 27.0 * length])
    radii = (11.0 * width, 10.2 * width, 9.0 * width)
    for k in range(2):
        bones.append(_Bone(chain[k], chain[k + 1], radii[k], radii[k + 1], 0.8, blend=k == 0))
    if pose != "hold":
        side = -0.28 * radii[1] * math.copysign(1.0, math.cos(yaw))
        nail = _nail(len(bones) - 1, chain[1], chain[2], radii[1], radii[2], sum(flex), side, 0.45)
        if nail is not None:
            nails.append(nail)
    creases.append(_joint(chain, 1, radii[1]))
    knuckles.extend([(*chain[1][:2], radii[1] * 0.8), (*chain[2][:2], radii[2])])


def _smax(a: np.ndarray, b: np.ndarray, k: float) -> np.ndarray:
    """Polynomial smooth maximum: where two parts meet, the surface rounds over instead of creasing sharply, as
    skin does between fingers and over the knuckles."""
    h = np.clip(0.5 + 0.5 * (b - a) / k, 0.0, 1.0)
    return a + (b - a) * h + k * h * (1.0 - h)


def _hand_bounds(model: HandModel) -> Rect:
    ends = [(end[0], end[1], r) for bone in model.bones for end, r in ((bone.a, bone.ra), (bone.b, bone.rb))]
    us = [u + s * r for u, _, r in ends for s in (-1, 1)]
    vs = [v + s * r for _, v, r in ends for s in (-1, 1)]
    return min(us) - 1.0, max(-45.0, min(vs)) - 1.0, max(us) + 1.0, max(vs) + 1.0


def _quantised(density: float) -> float:
    """Densities rounded to 1/16 octave, so a hand moving across the frame reuses its cached surface."""
    return float(2.0 ** (round(math.log2(density) * 16.0) / 16.0))


def _hand_layers(spec: OccluderSpec, p: np.ndarray, frame: tuple[int, int]) -> list[_Layer]:
    """Forearm (with sleeve) below, hand above, on two planes that meet at the wrist. A left hand is the right
    hand with u mirrored in the plane matrix, so the mirror is exact and costs nothing."""
    model = hand_model(spec)
    mirror = np.diag([-1.0, 1.0, 1.0]) if model.left else np.eye(3)
    h = max(spec.height_mm, 0.0)
    hand_plane = plane(spec.x_mm, spec.y_mm, spec.rotation_deg, spec.scale, h, h / 400.0) @ mirror
    arm_plane = plane(spec.x_mm, spec.y_mm, spec.rotation_deg, spec.scale, h, h / 300.0) @ mirror
    ppm = _px_per_mm(p, hand_plane, 0.0, 60.0)
    if ppm <= 0.0:
        return []
    density = _quantised(float(np.clip(ppm * HAND_TEXELS_PER_PX, 0.25, MAX_TEXELS_PER_MM)))
    light = _local_light(spec.rotation_deg, model.left)
    layers = []
    reach = max(model.arm_half_width) + (model.sleeve[1] + 5.0 if model.sleeve else 2.0)
    arm_rect = _clip_rect(p, arm_plane, (-reach, -_ARM_LENGTH_MM, reach, 8.0), frame)
    if arm_rect is not None:
        layers.append(_arm_layer(spec, model, arm_rect, density * ARM_TEXELS_PER_HAND_TEXEL, arm_plane, light))
    bounds = _hand_bounds(model)
    if _clip_rect(p, hand_plane, bounds, frame) is not None:
        surface = _hand_surface(spec.variant, spec.colour, density)
        layers.append(_skin_layer(surface, model, bounds, density, hand_plane, light))
    return layers


@dataclass(frozen=True)
class _HandSurface:
    """Light-independent maps of one hand at one texel density (cached: a video re-renders the same hand)."""

    height: np.ndarray  # mm above the table
    alpha: np.ndarray
    albedo: tuple[np.ndarray, np.ndarray, np.ndarray]
    nail: np.ndarray  # 0-1 nail coverage (more sheen)
    occlusion: np.ndarray  # ambient occlusion in the valleys between fingers
    sheen: np.ndarray  # specular gain: uneven, oilier on the nails
    slopes: tuple[np.ndarray, np.ndarray]


@functools.lru_cache(maxsize=6)
def _hand_surface(variant: int, colour: tuple[int, int, int], density: float) -> _HandSurface:
    spec = OccluderSpec("hand", 0.0, 0.0, 0.0, 1.0, colour, (0, 0, 0), 0.0, variant)
    model = hand_model(spec)
    rect = _hand_bounds(model)
    height, alpha, nail, nail_tip = _hand_height(model, rect, density)
    return _paint_skin(model, rect, density, variant >> 1, np.array(colour, np.float32), height, alpha, nail, nail_tip)


def _hand_height(model: HandModel, rect: Rect, density: float) -> tuple[np.ndarray, ...]:
    """Rasterise the bones as a height field (smooth union), with anti-aliased coverage and nail masks. Each bone
    touches only its own bounding box of texels."""
    u, v = _grid(rect, density)
    shape = (v.shape[0], u.shape[1])
    height = np.full(shape, _NO_SKIN_MM, np.float32)
    alpha = np.zeros(shape, np.float32)
    nail = np.zeros(shape, np.float32)
    nail_tip = np.zeros(shape, np.float32)
    nails = {n.bone: n for n in model.nails}
    painted_nails = False
    for index, bone in enumerate(model.bones):
        r_max = max(bone.ra, bone.rb)
        c0 = max(0, int((min(bone.a[0], bone.b[0]) - r_max - rect[0]) * density))
        c1 = min(shape[1], int((max(bone.a[0], bone.b[0]) + r_max - rect[0]) * density) + 2)
        r0 = max(0, int((min(bone.a[1], bone.b[1]) - r_max - rect[1]) * density))
        r1 = min(shape[0], int((max(bone.a[1], bone.b[1]) + r_max - rect[1]) * density) + 2)
        if c0 >= c1 or r0 >= r1:
            continue
        bu, bv = u[:, c0:c1] - bone.a[0], v[r0:r1] - bone.a[1]
        dx, dy, dz = bone.b[0] - bone.a[0], bone.b[1] - bone.a[1], bone.b[2] - bone.a[2]
        length2 = max(dx * dx + dy * dy, 1e-6)
        raw = bu * (dx / length2) + bv * (dy / length2)
        t = np.minimum(np.maximum(raw, 0.0), 1.0)
        px, py = bu - t * dx, bv - t * dy
        radius = bone.ra + (bone.rb - bone.ra) * t
        inside = radius * radius - (px * px + py * py)
        # coverage from r^2 - d^2 ~ 2 r (r - d) near the outline: one square root fewer per texel
        cover = np.clip(inside * (density / (bone.ra + bone.rb)) + 0.5, 0.0, 1.0)
        if bone.fade is not None:
            cover *= np.clip((bv + (bone.a[1] - bone.fade + 20.0)) * 0.05, 0.0, 1.0)
        top = np.where(cover > 0.0, bone.a[2] + dz * t + bone.flat * np.sqrt(np.maximum(inside, 0.0)), _NO_SKIN_MM)
        sub_h = height[r0:r1, c0:c1]
        on_top = top >= sub_h
        if bone.blend:
            height[r0:r1, c0:c1] = _smax(sub_h, top, 3.0)
        else:
            np.maximum(sub_h, top, out=sub_h)
        np.maximum(alpha[r0:r1, c0:c1], cover, out=alpha[r0:r1, c0:c1])
        if painted_nails:
            nail[r0:r1, c0:c1] *= ~on_top  # a later part on top hides nails under it
        if index in nails:
            _paint_nail(nails[index], raw, bu, bv, dx, dy, on_top, density, nail[r0:r1, c0:c1], nail_tip[r0:r1, c0:c1])
            painted_nails = True
    return _rim(height, density), alpha, nail, nail_tip


def _rim(height: np.ndarray, density: float) -> np.ndarray:
    """Fill the texels off the hand with the nearby skin height minus a few millimetres (a normalised blur at a
    quarter of the resolution): the outline then always slopes away by the same amount, so rims darken evenly
    whether a finger is held high or curls down past the model's zero."""
    skin = (height > _NO_SKIN_MM + 1.0).astype(np.float32)
    shape = (height.shape[1], height.shape[0])
    small = (max(2, shape[0] // 4), max(2, shape[1] // 4))
    sigma = max(0.75 * density, 0.5)
    weight = cv2.GaussianBlur(cv2.resize(skin, small, interpolation=cv2.INTER_AREA), (0, 0), sigma)
    total = cv2.GaussianBlur(cv2.resize(height * skin, small, interpolation=cv2.INTER_AREA), (0, 0), sigma)
    fill = cv2.resize(total / np.maximum(weight, 1e-4), shape) - RIM_DROP_MM
    return np.where(skin > 0, height, fill).astype(np.float32)


def _paint_nail(
    spec_nail: _Nail,
    raw: np.ndarray,
    bu: np.ndarray,
    bv: np.ndarray,
    dx: float,
    dy: float,
    on_top: np.ndarray,
    density: float,
    nail: np.ndarray,
    nail_tip: np.ndarray,
) -> None:
    """A rounded-square nail (superellipse) in the end segment's own coordinates, and its paler free edge."""
    length = math.sqrt(dx * dx + dy * dy)
    along = raw * length
    across = (bv * dx - bu * dy) * (1.0 / max(length, 1e-6))
    a = np.abs(along - spec_nail.along) * (1.0 / spec_nail.half_length)
    b = np.abs(across - spec_nail.across) * (1.0 / spec_nail.half_width)
    q = a * a * a + b * b * b
    cov = np.clip(0.5 - (q - 1.0) * (spec_nail.half_width / 3.0 * density), 0.0, 1.0) * on_top
    np.maximum(nail, cov, out=nail)
    tip = np.clip((along - (spec_nail.along + 0.5 * spec_nail.half_length)) * (1.0 / 1.5), 0.0, 1.0)
    np.maximum(nail_tip, tip * cov, out=nail_tip)


def _paint_skin(
    model: HandModel,
    rect: Rect,
    density: float,
    seed: int,
    skin: Colour,
    height: np.ndarray,
    alpha: np.ndarray,
    nail: np.ndarray,
    nail_tip: np.ndarray,
) -> _HandSurface:
    """Albedo: skin tone with blotches and pores, redder (light skin) or darker (deep skin) knuckles and tips,
    fine creases over the finger joints, pink-white nails with paler free edges. Plus ambient occlusion, a sheen
    map and the slopes the lighting needs."""
    shape = height.shape
    small = (max(2, shape[1] // 4), max(2, shape[0] // 4))
    marks = np.zeros((small[1], small[0]), np.float32)
    to_small = _texel(rect, density / 4.0)
    for ku, kv, radius in model.knuckles:
        centre = to_small(ku, kv)
        cv2.circle(marks, centre, round(radius * 0.7 * density / 4.0 * (1 << SUBPIXEL_BITS)), 1.0, -1, cv2.LINE_AA,
                   SUBPIXEL_BITS)  # fmt: skip
    marks = cv2.resize(cv2.GaussianBlur(marks, (0, 0), max(0.55 * density, 0.5)), (shape[1], shape[0]))
    crease = _crease_map(model, rect, density, shape)
    texture = 1.0 + 0.025 * _noise(shape, 14.0 * density, seed) + 0.015 * _noise(shape, 1.0, seed + 5, "fine")
    texture -= 0.13 * crease
    deep = float(skin.mean()) < 110.0
    redness = (0.08, 0.08, 0.06) if deep else (0.12, 0.08, 0.01)  # deep skin darkens at knuckles, light reddens
    albedo = [skin[c] * texture * (1.0 - redness[c] * marks) for c in range(3)]
    nail_colour = skin * 0.55 + np.array([200.0, 205.0, 238.0], np.float32) * 0.45
    albedo = _mix(albedo, nail_colour, nail * 0.6)
    albedo = _mix(albedo, (215.0, 222.0, 235.0), nail_tip * 0.45)
    blurred = cv2.resize(cv2.GaussianBlur(cv2.resize(height, small, interpolation=cv2.INTER_AREA), (0, 0),
                                          max(1.25 * density, 0.5)), (shape[1], shape[0]))  # fmt: skip
    occlusion = np.clip(1.0 - 0.015 * (blurred - height), 0.72, 1.0)
    sheen = (1.0 + 0.35 * _noise(shape, 8.0 * density, seed + 1)) * (1.0 + 3.0 * nail)
    slopes = _slopes(height, density, smooth=max(0.9 * density, 0.5))
    planes = tuple(np.ascontiguousarray(c, np.float32) for c in albedo)
    for array in (*planes, height, alpha, nail, occlusion, sheen, *slopes):
        array.flags.writeable = False  # shared through the cache
    return _HandSurface(height, alpha, planes, nail, occlusion, sheen, slopes)  # type: ignore[arg-type]


def _wrinkles(creases: list[tuple[float, float, float, float]], rng: np.random.Generator) -> np.ndarray:
    """Two to four short, slightly curved wrinkles across each finger joint (u, v, axis angle, finger radius)."""
    lines = []
    for ju, jv, angle, radius in creases:
        a = math.radians(angle)
        along, across = np.array([math.sin(a), math.cos(a)]), np.array([math.cos(a), -math.sin(a)])
        n = int(rng.integers(2, 5))
        centres = np.array([ju, jv]) + np.outer(rng.uniform(-2.6, 2.6, n), along)
        reach = rng.uniform(0.55, 0.8, (n, 2)) * radius
        bow = rng.uniform(0.4, 1.4, n)
        lines.append(np.stack([centres - across * reach[:, :1], centres + np.outer(bow, along),
                               centres + across * reach[:, 1:]], axis=1))  # fmt: skip
    return np.concatenate(lines) if lines else np.zeros((0, 3, 2))


def _crease_map(model: HandModel, rect: Rect, density: float, shape: tuple[int, int]) -> np.ndarray:
    """The knuckle wrinkles drawn as anti-aliased lines (one cv2 call), slightly softened."""
    creases = np.zeros(shape, np.uint8)
    one = 1 << SUBPIXEL_BITS
    pts = np.round(((model.wrinkles - [rect[0], rect[1]]) * density - 0.5) * one).astype(np.int32)
    cv2.polylines(creases, list(pts), False, 255, 1, cv2.LINE_AA, SUBPIXEL_BITS)
    return cv2.GaussianBlur(creases, (0, 0), max(0.35 * density, 0.3)).astype(np.float32) * (1.0 / 255.0)


def _skin_layer(
    surface: _HandSurface, model: HandModel, rect: Rect, density: float, plane_m: np.ndarray, light: np.ndarray
) -> _Layer:
    material = _Material(ambient=0.36, wrap=0.35, specular=model.sheen, shininess=16, warmth=0.3, rim=0.08)
    colour = _apply(list(surface.albedo), surface.slopes, light, material, surface.occlusion, surface.sheen)
    return _layer(colour, surface.alpha, rect, density, plane_m)


def _tube(u: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Height of a lying cylinder across u, continued downwards outside its outline (so the colour just outside,
    which the soft edge blends with, is the dark rim's and not a flat-lit one)."""
    return 0.9 * np.sqrt(np.maximum(half * half - u * u, 0.0)) - 4.0 * np.maximum(np.abs(u) - half, 0.0)


def _arm_layer(
    spec: OccluderSpec, model: HandModel, rect: Rect, density: float, plane_m: np.ndarray, light: np.ndarray
) -> _Layer:
    """The forearm as a tapering cylinder (narrow at the wrist, wider towards the elbow) and, if worn, a sleeve:
    looser than the arm, folded (a noisy height on the cylinder), with grain, a hem or a rolled cuff, sometimes
    stripes. Skin is only shaded on the rows the sleeve leaves bare, cloth only on the rows it covers."""
    u, v = _grid(rect, density)
    rows, cols = v.shape[0], u.shape[1]
    seed = spec.variant >> 1
    wrist, forearm = model.arm_half_width
    grow = np.clip((-v - 15.0) / 170.0, 0.0, 1.0)
    half = wrist + (forearm - wrist) * grow * grow * (3.0 - 2.0 * grow)
    half = half + 1.2 * _noise((rows, 1), 40.0 * density, seed + 3)
    height = _tube(u, half)
    alpha = _coverage(np.abs(u) - half, density)
    skin_from, cloth_to = 0, 0
    if model.sleeve is not None:
        start, slack, rolled, striped = model.sleeve
        edge = start + 2.0 * _noise((1, cols), 30.0 * density, seed + 11)
        skin_from = int(np.searchsorted(v[:, 0], float(edge.min()) - 2.0))
        cloth_to = int(np.searchsorted(v[:, 0], float(edge.max()) + 2.0))
    if model.sleeve is not None and cloth_to > 0:
        vc = v[:cloth_to]
        cuff = np.clip(1.0 - np.abs(vc - (edge - 14.0)) / 14.0, 0.0, 1.0) if rolled else np.float32(0.0)
        sleeve_half = half[:cloth_to] + slack + 3.0 * cuff
        folds = _noise((cloth_to, cols), 14.0 * density, seed + 12)
        cloth_height = _tube(u, sleeve_half) + 2.5 * folds + 4.0 * cuff
        height[:cloth_to] = np.where(vc < edge, cloth_height, height[:cloth_to])
        cover = _coverage(np.abs(u) - sleeve_half, density) * _coverage(vc - edge, density)
    slopes = _slopes(height, density)
    colour = [np.empty((rows, cols), np.float32) for _ in range(3)]
    if skin_from < rows:
        skin_slopes = (slopes[0][skin_from:], slopes[1][skin_from:])
        bare = (rows - skin_from, cols)
        texture = 1.0 + 0.04 * _noise(bare, 12.0 * density, seed + 9) + 0.015 * _noise(bare, 1.0, seed + 4, "fine")
        skin = np.array(spec.colour, np.float32) * 0.97
        material = _Material(ambient=0.36, wrap=0.35, specular=model.sheen * 0.8, shininess=16, warmth=0.3, rim=0.08)
        for plane_out, plane_in in zip(colour, _apply(_tint(skin, texture), skin_slopes, light, material), strict=True):
            plane_out[skin_from:] = plane_in
    if model.sleeve is not None and cloth_to > 0:
        grain = 1.0 + 0.05 * _noise((cloth_to, cols), 1.0, seed + 13, "fine") + 0.05 * folds
        if striped:
            stripe = (np.sin((vc - edge) * (2 * math.pi / (6.0 + seed % 11))) > 0.3).astype(np.float32)
            grain = grain * (1.0 - 0.45 * cv2.GaussianBlur(stripe, (0, 0), 0.6))
        seam = 28.0 if rolled else 9.0
        grain = grain * (1.0 - 0.22 * np.clip(1.0 - np.abs(vc - (edge - seam)) / 1.3, 0.0, 1.0))
        fabric = np.array(model.sleeve_colour, np.float32)
        cloth_slopes = (slopes[0][:cloth_to], slopes[1][:cloth_to])
        cloth = _apply(_tint(fabric, grain), cloth_slopes, light, _Material(0.4, 0.45, 0.02, 8))
        bare_alpha = alpha[:cloth_to].copy()
        alpha[:cloth_to] = np.maximum(bare_alpha, cover)
        weight = cover / np.maximum(alpha[:cloth_to], 1e-3)  # cloth's share; the rest is bare skin at the hem
        for plane_out, plane_cloth in zip(colour, cloth, strict=True):
            mixed = plane_out[skin_from:cloth_to]
            plane_out[skin_from:cloth_to] = mixed + (plane_cloth[skin_from:] - mixed) * weight[skin_from:]
            plane_out[:skin_from] = plane_cloth[:skin_from]
    return _layer(colour, alpha, rect, density, plane_m)


# ----------------------------------------------------------------------------------------------------- clutter

Paint = Callable[[np.ndarray, np.ndarray, float, np.ndarray], tuple[Planes, np.ndarray]]


def _flat(
    spec: OccluderSpec, p: np.ndarray, rect: Rect, z_mm: float, paint: Paint, detail: float = 1.1
) -> list[_Layer]:
    """One flat part of an object at height z_mm; `paint(u, v, density, light)` gives its colour and alpha.
    `detail` is texels per image pixel: big plain surfaces (a rulebook cover, a box side) need fewer."""
    plane_m = plane(spec.x_mm, spec.y_mm, spec.rotation_deg, spec.scale, z_mm)
    ppm = _px_per_mm(p, plane_m, (rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2)
    if ppm <= 0.0:
        return []
    density = float(np.clip(ppm * detail, 0.25, MAX_TEXELS_PER_MM * 1.5))
    u, v = _grid(rect, density)
    colour, alpha = paint(u, v, density, _local_light(spec.rotation_deg))
    return [_layer(colour, alpha, rect, density, plane_m)]


def _sides(
    spec: OccluderSpec,
    p: np.ndarray,
    outline: Callable[[np.ndarray, np.ndarray], np.ndarray],
    rect: Rect,
    heights: Sequence[float],
    colour: Colour,
) -> list[_Layer]:
    """An object's side wall as its outline stacked at a few heights: from a tilted camera the stack fills the band
    between base and top, as a real phone's or box's side does. Where it would hide under the top (no camera, so
    heights are ignored, or the top's outline moves less than a pixel against the base's) it is not drawn."""
    if _camera_centre(p) is None or not heights:
        return []
    corners = np.array([[rect[0], rect[1]], [rect[2], rect[1]], [rect[2], rect[3]], [rect[0], rect[3]]])
    table = corners @ plane(0.0, 0.0, spec.rotation_deg, spec.scale, 0.0)[:2, :2].T + [spec.x_mm, spec.y_mm]
    base = project(p, np.column_stack([table, np.full(4, min(heights))]))
    top = project(p, np.column_stack([table, np.full(4, spec.height_mm)]))
    if np.nanmax(np.abs(top - base), initial=0.0) < 0.75:
        return []

    def paint(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        sd = outline(u, v)
        return _tint(colour, 0.75 + 0.25 * np.clip(1.0 + sd / 3.0, 0.0, 1.0)), _coverage(sd, density)

    return [layer for z in heights for layer in _flat(spec, p, rect, z, paint, detail=0.6)]


def _phone(spec: OccluderSpec, p: np.ndarray) -> list[_Layer]:
    """A phone face up (black glass with the room's reflection, sometimes the screen lit) or face down (case and
    camera bump), with its side showing from a tilted camera."""
    rng = np.random.default_rng(spec.variant)
    w, h, r = rng.uniform(68.0, 78.0), rng.uniform(140.0, 162.0), rng.uniform(6.0, 11.0)
    face_up = rng.random() < 0.7
    screen_on = face_up and rng.random() < 0.4
    case = _tame(spec.colour, 0.6, 0.5) if rng.random() < 0.5 else np.array([35.0, 33.0, 33.0], np.float32)
    angle, offset = rng.uniform(0, math.pi), rng.uniform(-0.6, 0.6)
    rect = (-w / 2 - 1, -h / 2 - 1, w / 2 + 1, h / 2 + 1)

    def outline(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return _sd_box(u, v, w / 2, h / 2, r)

    def top(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        sd = outline(u, v)
        if not face_up:
            bump = _sd_box(u - (w / 2 - 17.0), v - (h / 2 - 17.0), 12.0, 12.0, 4.0)
            lenses = np.minimum(_sd_circle(u, v, w / 2 - 22.0, h / 2 - 12.0, 4.5),
                                _sd_circle(u, v, w / 2 - 22.0, h / 2 - 23.0, 4.5))  # fmt: skip
            albedo = _tint(case, (1.0 - 0.35 * _coverage(bump, density)) * (1.0 - 0.8 * _coverage(lenses, density)))
            relief = _bevel(sd, 2.5, 2.0) + _bevel(bump, 1.0, 1.0) + 0.6 * _bevel(lenses, 1.0, 1.0)
            return _lit(albedo, relief, density, light, _Material(0.45, 0.2, 0.15, 16)), _coverage(sd, density)
        glass = _coverage(_sd_box(u, v, w / 2 - 3.0, h / 2 - 3.0, max(r - 3.0, 1.0)), density)
        albedo = _mix(case, (14.0, 13.0, 13.0), glass)
        if screen_on:
            screen = _coverage(_sd_box(u, v, w / 2 - 4.5, h / 2 - 9.0, max(r - 5.0, 1.0)), density)
            glow = 0.6 + 0.4 * np.clip(v / h + 0.5, 0, 1) + 0.15 * _noise(sd.shape, 20 * density, spec.variant % 997)
            albedo = _mix(albedo, _tint(np.array(spec.accent, np.float32), glow), screen)
        albedo = _tint(albedo, 1.0 - _coverage(_sd_circle(u, v, 0.0, h / 2 - 5.5, 1.3), density))
        along = (u * math.cos(angle) + v * math.sin(angle)) / max(w, h) - offset
        reflection = (70.0 * np.exp(-((along / 0.18) ** 2)) + 25.0 * np.clip(v / h + 0.5, 0, 1)) * glass
        colour = _lit(albedo, _bevel(sd, 2.5, 2.0), density, light, _Material(0.5, 0.1, 0.35, 32))
        return [c + reflection for c in colour], _coverage(sd, density)

    sides = _sides(spec, p, outline, rect, (0.0,), case * 0.55)
    return [*sides, *_flat(spec, p, rect, spec.height_mm, top)]


def _cup(spec: OccluderSpec, p: np.ndarray) -> list[_Layer]:
    """A mug: base, wall (a camera-facing card through the axis, so a tilted camera sees it), handle, and the rim
    with coffee, tea or nothing inside and the lamp's reflection on the liquid."""
    rng = np.random.default_rng(spec.variant)
    radius, base_r, tall = rng.uniform(38.0, 45.0), rng.uniform(31.0, 38.0), spec.height_mm
    if rng.random() < 0.55:
        ceramic = _tame(spec.colour, 0.3)
    else:
        ceramic = np.array([228, 232, 235], np.float32) * rng.uniform(0.8, 1.0)
    drink = [(25, 38, 60), (30, 85, 150), None, (60, 95, 140)][int(rng.choice(4, p=[0.45, 0.25, 0.15, 0.15]))]
    handle_angle = math.radians(rng.uniform(0, 360))
    glint = (rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4))
    rect = (-radius - 1, -radius - 1, radius + 1, radius + 1)
    hx, hy = math.cos(handle_angle), math.sin(handle_angle)

    def handle(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        sd = _sd_segment(u, v, (hx * (radius - 4), hy * (radius - 4)), (hx * (radius + 17), hy * (radius + 17)), 5.0)
        colour = _lit(ceramic, _bevel(sd, 5.0, 5.0), density, light, _Material(0.4, 0.2, 0.35, 32))
        return colour, _coverage(sd, density)

    def top(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        sd = _sd_circle(u, v, 0, 0, radius)
        in_cup = _coverage(_sd_circle(u, v, 0, 0, radius - 3.5), density)
        inside_shade = np.clip(0.55 + 0.35 * (u * float(light[0]) + v * float(light[1])) / radius, 0.2, 1.0)
        albedo = _tint(ceramic, 1.0 - in_cup * (1.0 - inside_shade))
        liquid = _coverage(_sd_circle(u, v, 0, 0, radius - 5.0), density) if drink else np.zeros_like(sd)
        if drink is not None:
            meniscus = np.clip(1.0 - np.abs(_sd_circle(u, v, 0, 0, radius - 6.0)) / 1.5, 0, 1)
            albedo = _mix(albedo, _tint(np.array(drink, np.float32), 1.0 + 0.5 * meniscus), liquid)
        rim = _bevel(sd, 3.5, 2.0) * (1.0 - in_cup)
        colour = _lit(albedo, rim, density, light, _Material(0.5, 0.2, 0.3, 32))
        spot = np.exp(-((u - glint[0] * radius) ** 2 + (v - glint[1] * radius) ** 2) / (0.09 * radius**2))
        return [c + 120.0 * spot * liquid for c in colour], _coverage(sd, density)

    def base_outline(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return _sd_circle(u, v, 0, 0, base_r)

    layers = _sides(spec, p, base_outline, rect, (0.0,), ceramic * 0.62)
    layers += _cup_wall(spec, p, radius, base_r, tall, ceramic)
    layers += _flat(spec, p, (-radius - 25, -radius - 25, radius + 25, radius + 25), tall * 0.55, handle)
    return [*layers, *_flat(spec, p, rect, tall, top)]


def _cup_wall(
    spec: OccluderSpec, p: np.ndarray, radius: float, base_r: float, tall: float, ceramic: Colour
) -> list[_Layer]:
    """The wall as a vertical card through the cup's axis, turned to face the camera; nothing when the camera is
    absent or straight above, where a wall is not seen."""
    centre = _camera_centre(p)
    if centre is None:
        return []
    toward = centre[:2] - np.array([spec.x_mm, spec.y_mm])
    dist = float(np.linalg.norm(toward))
    if dist < 1.0:
        return []
    fx, fy = toward / dist
    rx, ry = fy, -fx  # to the right as the camera sees it
    s = spec.scale
    plane_m = np.array([[rx * s, 0.0, spec.x_mm], [ry * s, 0.0, spec.y_mm], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    ppm = _px_per_mm(p, plane_m, 0.0, tall / 2)
    if ppm < 0.02:
        return []
    density = float(np.clip(ppm * 1.1, 0.25, MAX_TEXELS_PER_MM * 1.5))
    rect = (-radius - 1, 0.0, radius + 1, tall)
    u, v = _grid(rect, density)
    half = base_r + (radius - base_r) * (v / tall)
    q = np.clip(u / half, -1.0, 1.0)
    around = np.sqrt(np.maximum(1.0 - q * q, 0.0))
    lx, ly, _ = (float(x) for x in _local_light(0.0))
    facing = q * (lx * rx + ly * ry) + around * (lx * fx + ly * fy)
    shade = 0.45 + 0.4 * np.clip(facing + 0.3, 0, 1.3) + 0.25 * _pow(np.clip(around * 0.98, 0, 1), 16)
    return [_layer(_tint(ceramic * 0.9, shade), _coverage(np.abs(u) - half, density), rect, density, plane_m)]


def _camera_centre(p: np.ndarray) -> np.ndarray | None:
    """The camera's position in table millimetres (the projection's null space); None for the flat homography."""
    centre = np.linalg.svd(p)[2][-1]
    return None if abs(centre[3]) < 1e-9 else centre[:3] / centre[3]


def _coin(spec: OccluderSpec, p: np.ndarray) -> list[_Layer]:
    """A coin: raised rim, embossed relief, metal that is mostly reflection (low diffuse, broad highlight)."""
    rng = np.random.default_rng(spec.variant)
    radius = rng.uniform(9.5, 13.5)
    metal = np.array(spec.colour, np.float32)
    seed = spec.variant % 1000
    rect = (-radius - 1, -radius - 1, radius + 1, radius + 1)

    def outline(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return _sd_circle(u, v, 0, 0, radius)

    def top(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        sd = outline(u, v)
        relief = _bevel(sd, 0.8, 0.5) + 0.4 * np.clip(1.0 - np.abs(sd + 1.2) / 0.7, 0, 1)
        relief += 0.35 * _noise(sd.shape, 2.5 * density, seed) * _coverage(sd + 2.0, density)
        relief += 0.3 * _coverage(np.abs(_sd_circle(u, v, 0, 0, radius * 0.45)) - 0.4, density)
        albedo = _tint(metal, 0.9 + 0.1 * _noise(sd.shape, 1.0, seed, "fine"))
        return _lit(albedo, relief, density, light, _Material(0.3, 0.0, 0.55, 8)), _coverage(sd, density)

    return [*_sides(spec, p, outline, rect, (0.0,), metal * 0.6), *_flat(spec, p, rect, spec.height_mm, top)]


def _pen(spec: OccluderSpec, p: np.ndarray) -> list[_Layer]:
    """A pen at the height of its axis: a glossy cylinder (sharp highlight line), a cap with a clip, a metal tip."""
    rng = np.random.default_rng(spec.variant)
    length, radius = rng.uniform(130.0, 150.0), rng.uniform(4.0, 5.5)
    body = _tame(spec.colour, 0.25)
    cap = np.array(spec.accent, np.float32) * 0.45 if rng.random() < 0.6 else body * 0.6
    cap_len = rng.uniform(35.0, 55.0)
    rect = (-radius - 2, -length / 2 - 1, radius + 2, length / 2 + 1)

    def paint(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        half = radius * np.clip((v + length / 2) / 10.0, 0.15, 1.0)  # the tip tapers
        sd = np.maximum(np.abs(u) - half, np.abs(v) - length / 2)
        relief = 0.95 * np.sqrt(np.maximum(half * half - u * u, 0.0))
        is_cap = _coverage(length / 2 - cap_len - v, density)
        tip = _coverage(v + length / 2 - 9.0, density)
        clip_sd = np.maximum(np.abs(u) - 1.2, np.abs(v - (length / 2 - cap_len * 0.45)) - cap_len * 0.4)
        clip = _coverage(clip_sd, density)
        albedo = _mix(_mix(_mix(body, cap, is_cap), (150.0, 150.0, 150.0), tip), (170.0, 170.0, 172.0), clip)
        colour = _lit(albedo, relief + 1.2 * clip, density, light, _Material(0.4, 0.15, 0.45, 64))
        return colour, _coverage(sd, density)

    return _flat(spec, p, rect, spec.height_mm * 0.5, paint)


def _keys(spec: OccluderSpec, p: np.ndarray) -> list[_Layer]:
    """A ring with two to four keys fanned out, brass or steel, bevelled so their edges catch the light."""
    rng = np.random.default_rng(spec.variant)
    n = int(rng.integers(2, 5))
    angles = np.sort(rng.uniform(-70, 70, n))
    metals = (np.array([55, 120, 160], np.float32), np.array([140, 140, 136], np.float32),
              np.array([100, 104, 108], np.float32))  # fmt: skip
    colours = [metals[int(rng.integers(0, 3))] for _ in range(n)]
    ring_r = rng.uniform(9.0, 14.0)
    reach = np.array([[-13.0, ring_r - 1.0], [13.0, ring_r - 1.0], [-13.0, ring_r + 68.0], [13.0, ring_r + 68.0]])
    turned = [reach @ np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]) for a in np.radians(angles)]
    extent = np.vstack([[[-ring_r - 2, -ring_r - 2], [ring_r + 2, ring_r + 2]], *turned])
    rect = (*(extent.min(axis=0) - 1.0), *(extent.max(axis=0) + 1.0))

    def paint(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        sd = np.abs(_sd_circle(u, v, 0.0, 0.0, ring_r)) - 1.0
        relief = _bevel(sd, 1.0, 1.0)
        albedo: Planes | Colour = metals[1]
        for angle, colour in zip(angles, colours, strict=True):
            a = math.radians(float(angle))
            c, s = math.cos(a), math.sin(a)
            ku, kv = c * u + s * v, -s * u + c * v
            head = _sd_circle(ku, kv, 0.0, ring_r + 12.0, 12.0)
            teeth = 1.2 * (np.sin(kv * 1.4) > 0) * (ku > 0)
            blade = _sd_box(ku - 2.0, kv - (ring_r + 45.0), 4.0 + teeth, 22.0, 1.0)
            key = np.maximum(np.minimum(head, blade), -_sd_circle(ku, kv, 0.0, ring_r + 5.0, 3.0))
            albedo = _mix(albedo, colour, _coverage(key, density))
            relief = np.maximum(relief, _bevel(key, 1.2, 1.5))
            sd = np.minimum(sd, key)
        return _lit(albedo, relief, density, light, _Material(0.3, 0.0, 0.35, 8)), _coverage(sd, density)

    return _flat(spec, p, rect, spec.height_mm * 0.5, paint)


def _lid(spec: OccluderSpec, p: np.ndarray) -> list[_Layer]:
    """A game or dice-box lid: printed top (colour field, border, title band, emblem, worn edges) over a side."""
    rng = np.random.default_rng(spec.variant)
    w, h = rng.uniform(80.0, 150.0), rng.uniform(80.0, 150.0)
    print_colour = _tame(spec.colour, 0.2)
    ink = _tame(spec.accent, 0.1, 0.8)
    rect = (-w / 2 - 1, -h / 2 - 1, w / 2 + 1, h / 2 + 1)

    def outline(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return _sd_box(u, v, w / 2, h / 2, 1.5)

    def top(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        sd = outline(u, v)
        border = _coverage(np.abs(_sd_box(u, v, w / 2 - 6, h / 2 - 6, 3.0)) - 1.2, density)
        band = _coverage(_sd_box(u, v - h * 0.28, w / 2 - 12, 8.0, 2.0), density)
        emblem = _coverage(_sd_circle(u, v, 0.0, -h * 0.1, min(w, h) * 0.2), density)
        albedo = _mix(print_colour, ink, np.clip(border + band + emblem * 0.7, 0, 1))
        albedo = _tint(albedo, 1.0 + 0.05 * _noise(sd.shape, 6 * density, spec.variant % 991))
        albedo = _mix(albedo, (235.0, 235.0, 235.0), np.clip(1.0 + sd / 1.5, 0, 1) * 0.35)  # worn, paler edges
        colour = _lit(albedo, _bevel(sd, 1.5, 1.0), density, light, _Material(0.45, 0.2, 0.12, 16))
        return colour, _coverage(sd, density)

    sides = _sides(spec, p, outline, rect, (0.0, spec.height_mm / 2), print_colour * 0.55)
    return [*sides, *_flat(spec, p, rect, spec.height_mm, top, detail=0.8)]


def _glasses(spec: OccluderSpec, p: np.ndarray) -> list[_Layer]:
    """Folded glasses: two lens rims, a bridge and the temples folded across; the lenses are mostly transparent
    with a reflection, so only the frame really hides what is under it."""
    rng = np.random.default_rng(spec.variant)
    frame_colour = np.array([25, 25, 28], np.float32) if rng.random() < 0.5 else _tame(spec.colour, 0.4, 0.6)
    lw, lh = rng.uniform(22.0, 28.0), rng.uniform(15.0, 21.0)
    rect = (-2 * lw - 10, -lh - 12, 2 * lw + 10, lh + 8)

    def paint(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        lens = np.minimum(_sd_box(u - (lw + 4), v, lw, lh, lh * 0.7), _sd_box(u + (lw + 4), v, lw, lh, lh * 0.7))
        bridge = _sd_segment(u, v, (-5.0, lh * 0.4), (5.0, lh * 0.4), 1.2)
        temples = np.minimum(_sd_segment(u, v, (-2 * lw - 6, -lh * 0.5), (2 * lw - 4, -lh - 4), 1.4),
                             _sd_segment(u, v, (2 * lw + 6, -lh * 0.5), (-2 * lw + 4, -lh - 6), 1.4))  # fmt: skip
        solid = np.minimum(np.minimum(np.abs(lens) - 1.4, bridge), temples)
        frame_alpha = _coverage(solid, density)
        glass = _coverage(lens, density) * (1 - frame_alpha)
        reflection = np.clip((u + v) / (2 * lw) + 0.2, 0, 1)
        lit = _lit(frame_colour, _bevel(solid, 1.4, 1.2), density, light, _Material(0.35, 0.0, 0.5, 32))
        lens_alpha = glass * (0.06 + 0.18 * reflection * reflection)
        alpha = frame_alpha + lens_alpha
        inv = 1.0 / (alpha + 1e-3)  # off the glasses the colour falls back to the frame's (the edge blends with it)
        return [(c * (frame_alpha + 1e-3) + (150.0 + 80.0 * reflection) * lens_alpha) * inv for c in lit], alpha

    return _flat(spec, p, rect, spec.height_mm * 0.5, paint)


def _notes(spec: OccluderSpec, p: np.ndarray) -> list[_Layer]:
    """A sticky note or a slip of paper with handwriting; its free end curls up a little, so it shades unevenly."""
    rng = np.random.default_rng(spec.variant)
    sticky = rng.random() < 0.6
    w, h = (76.0, 76.0) if sticky else (rng.uniform(90, 150), rng.uniform(60, 110))
    papers = ((110, 235, 250), (200, 170, 250), (240, 210, 150), (160, 245, 190))
    paper = np.array(papers[int(rng.integers(0, 4))] if sticky else (236, 240, 242), np.float32)
    ink = np.array((120, 40, 20) if rng.random() < 0.6 else (30, 30, 30), np.float32)
    lines = [_handwriting(rng, -w / 2 + 8, h / 2 - 12 - row * rng.uniform(9, 13), rng.uniform(0.4, 0.85) * (w - 16))
             for row in range(int(rng.integers(2, 6)))]  # fmt: skip
    curl = rng.uniform(0.5, 4.0)
    rect = (-w / 2 - 1, -h / 2 - 1, w / 2 + 1, h / 2 + 1)

    def paint(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        sd = _sd_box(u, v, w / 2, h / 2, 0.5)
        writing = np.zeros(sd.shape, np.uint8)
        to_px = _texel(rect, density)
        for line in lines:
            pts = np.array([to_px(x, y) for x, y in line], np.int32)
            cv2.polylines(writing, [pts], False, 255, max(1, int(0.6 * density)), cv2.LINE_AA, SUBPIXEL_BITS)
        albedo = _mix(paper, ink, writing.astype(np.float32) * (0.85 / 255.0))
        lift = (curl * np.clip((v - h / 4) / (h / 4), 0, 1) ** 2).astype(np.float32) + np.zeros_like(sd)
        return _lit(albedo, lift, density, light, _Material(0.5, 0.3, 0.04, 8)), _coverage(sd, density)

    return _flat(spec, p, rect, spec.height_mm, paint, detail=0.9)


def _handwriting(rng: np.random.Generator, x0: float, y0: float, length: float) -> np.ndarray:
    """A line of scrawl: letters as small loops of random height and slant, words separated by gaps (pen lifts
    are ignored: at webcam resolution a line of handwriting reads as one wobbly stroke)."""
    t = np.linspace(0.0, length, max(8, int(length * 6)))
    letter = rng.uniform(2.5, 3.6)
    heights = 0.7 + 0.5 * _noise((1, t.size), 12.0, int(rng.integers(0, 1 << 20)))[0] ** 2
    loops = heights * np.sin(t * (2 * math.pi / letter) + rng.uniform(0, 6.3))
    x = x0 + t + 0.6 * np.cos(t * (2 * math.pi / letter)) + 0.25 * loops
    gaps = np.sin(t * rng.uniform(0.35, 0.6)) > 0.85  # word breaks: flatten the stroke
    y = y0 + np.where(gaps, 0.0, loops) + rng.normal(0.0, 0.15, t.size)
    return np.column_stack([x, y])


def _rulebook(spec: OccluderSpec, p: np.ndarray) -> list[_Layer]:
    """A rulebook or booklet lying around (often only a corner in view): glossy printed cover over a block of cream
    page edges that a tilted camera sees as a pale band."""
    rng = np.random.default_rng(spec.variant)
    w, h = (210.0, 297.0) if rng.random() < 0.5 else (rng.uniform(150, 220), rng.uniform(150, 220))
    cover = _tame(spec.colour, 0.25)
    ink = _tame(spec.accent, 0.15, 0.9)
    rect = (-w / 2 - 1, -h / 2 - 1, w / 2 + 1, h / 2 + 1)

    def outline(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return _sd_box(u, v, w / 2, h / 2, 1.0)

    def top(u: np.ndarray, v: np.ndarray, density: float, light: np.ndarray) -> tuple[Planes, np.ndarray]:
        sd = outline(u, v)
        title = _coverage(_sd_box(u, v - h * 0.32, w * 0.35, h * 0.06, 3.0), density)
        art = _coverage(_sd_box(u, v + h * 0.05, w * 0.38, h * 0.22, 2.0), density)
        picture = _tint(ink, 1.0 + 0.35 * _noise(sd.shape, 25 * density, spec.variant % 983))
        albedo = _mix(_mix(cover, ink, title), picture, art)
        colour = _lit(albedo, _bevel(sd, 2.0, 0.8), density, light, _Material(0.45, 0.2, 0.25, 32))
        return colour, _coverage(sd, density)

    pages = _sides(spec, p, outline, rect, (0.0,), np.array([200, 220, 228], np.float32))
    return [*pages, *_flat(spec, p, rect, spec.height_mm, top, detail=0.6)]


OBJECT_BUILDERS: dict[str, Callable[[OccluderSpec, np.ndarray], list[_Layer]]] = {
    "phone": _phone,
    "cup": _cup,
    "coin": _coin,
    "pen": _pen,
    "keys": _keys,
    "lid": _lid,
    "glasses": _glasses,
    "notes": _notes,
    "rulebook": _rulebook,
}
