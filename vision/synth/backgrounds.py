"""Table surfaces: real photographs when the Debian packages are installed, procedural ones otherwise, plus what
lies around the cards on a real table: flat clutter (paper, notebooks, game boxes, coasters, place mats) and, in
some frames, the table's edge with the floor beyond it.

Everything is laid out in millimetres and reaches the image through the camera, so grain shrinks towards the far
edge as on a real table; pasting a flat photo behind the cards would give the detector a perspective cue that
never occurs on a real table. Procedural textures are periodic (they repeat seamlessly instead of mirroring), so
a far camera sees a long table without a kaleidoscope seam.

Scales, from looking at tables: wood grain streaks 0.5-2 mm apart inside growth-ring figures 7-40 mm apart (a
plank cut across the rings shows them wide), planks 75-300 mm wide; a linen or canvas tablecloth's threads
0.7-2.7 mm (a fine cotton weave is below what a webcam resolves and shows only as grain); felt fibres below a
millimetre with mottling over centimetres; granite speckles 1-5 mm. A texel is 0.3-1.2 mm, so the finest of these
reach the image as the slight grain a webcam actually resolves at 0.7-3 px/mm.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.synth.camera import Camera, apply_homography, pose_matrix, translation

PROCEDURAL_KINDS = ("wood", "felt", "cloth", "stone", "painted", "playmat")
FLOOR_KINDS = ("wood", "felt", "stone", "painted")  # boards, carpet, tiles, lino
CLUTTER_KINDS = ("paper", "notebook", "book", "box", "coaster", "mat")
# Curated: only pictures that look like a table top seen from above (the wallpaper folders also hold flowers).
TABLE_PHOTOS = (
    "/usr/share/backgrounds/mate/nature/Wood.jpg",
    "/usr/share/manuskript/resources/backgrounds/writingdesk.jpg",
    *(
        f"/usr/share/gnubg/textures/{name}.png"
        for name in ("alder", "ash", "berch", "felt", "maple", "oak", "pine", "pine2", "redwood", "stain", "suede")
    ),
    "/usr/share/gnubg/textures/wood.png",
)
PROCEDURAL_SIZE = 1024  # texels; a power of two so every noise grid below divides it and the texture tiles
MAX_PHOTO_SIDE = 1600
CLUTTER_PX_PER_MM = 2.0  # clutter art resolution: as sharp as the closest camera (about 3 px/mm) needs
CLUTTER_THICKNESS_MM = {"box": 6.0, "book": 4.0, "notebook": 2.5, "coaster": 2.0}  # sets the contact shadow's reach
FLOOR_TEXTURE_SIZE = 512  # the floor is far and out of focus
# Texture width in millimetres per kind: what one 1024-texel tile of that surface covers.
SPAN_MM = {
    "wood": (600, 1200),
    "felt": (300, 500),
    "cloth": (350, 700),
    "stone": (300, 600),
    "painted": (800, 1500),
    "playmat": (600, 900),
}


@dataclass(frozen=True)
class TableTexture:
    """A texture and how many millimetres of table its width covers (small gnubg tiles repeat; a photo does not)."""

    image: np.ndarray  # BGR uint8
    span_mm: float
    grey: bool  # gnubg ships grey textures meant to be tinted
    tileable: bool = False  # repeats seamlessly (gnubg tiles, procedural textures); mirroring would show seams


@dataclass(frozen=True)
class Surround:
    """The table's edge crossing the frame and the floor below it. The edge is given in image fractions (where
    it crosses the view), because only an edge that is in view matters; it reaches the table through the camera."""

    edge: tuple[tuple[float, float], tuple[float, float]]  # two points of the edge line, image fractions
    drop_mm: float  # table top to floor
    floor: str  # one of FLOOR_KINDS
    floor_seed: int
    floor_tint: tuple[float, float, float]  # BGR colour of the floor
    brightness: float  # floor light relative to the table top: under the table's lip, further from the lamp
    blur_px: float  # depth of field: the camera focuses on the table
    rim: float  # edge band brightness: > 1 a lit bevel, < 1 a dark trim


@dataclass(frozen=True)
class FlatItem:
    """Flat clutter lying on the table: part of the background (no label), never card-shaped."""

    kind: str  # one of CLUTTER_KINDS
    anchor: tuple[float, float]  # where its centre falls, image fractions (near the frame border)
    rotation_deg: float
    size_mm: tuple[float, float]
    colour: tuple[float, float, float]  # BGR 0-1: cover, paper or cork
    accent: tuple[float, float, float]  # BGR 0-1: ink, print, band
    seed: int


@dataclass(frozen=True)
class BackgroundSpec:
    source: str  # "photo" or one of PROCEDURAL_KINDS
    index: int  # which photo (modulo the photos available)
    seed: int
    rotation_deg: float
    offset_mm: tuple[float, float]
    scale: float  # multiplies the texture's natural span
    tint: tuple[float, float, float]  # BGR: grey photos and procedural surfaces get their colour here
    surround: Surround | None = None
    clutter: tuple[FlatItem, ...] = ()


# ----------------------------------------------------------------------------------------------------- random specs


def find_table_photos(candidates: tuple[str, ...] = TABLE_PHOTOS) -> list[Path]:
    return [Path(p) for p in candidates if Path(p).is_file()]


def load_table_textures(paths: list[Path] | None = None) -> list[TableTexture]:
    """Photos larger than MAX_PHOTO_SIDE are shrunk once here so no scene pays for decoding 5 megapixels."""
    textures = []
    for path in find_table_photos() if paths is None else paths:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            continue
        side = max(image.shape[:2])
        if side > MAX_PHOTO_SIDE:
            factor = MAX_PHOTO_SIDE / side
            image = cv2.resize(image, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
        grey = bool(np.ptp(image.astype(np.int16), axis=2).max() < 8)
        span = 1400.0 if side >= 1000 else 2.0 * image.shape[1]  # small tiles: ~2 mm per texel
        textures.append(TableTexture(image=image, span_mm=span, grey=grey, tileable=side < 1000))
    return textures


@functools.cache
def table_textures() -> tuple[TableTexture, ...]:
    """The installed table photographs (`load_table_textures`), loaded once per process: scene renderers call this
    for every scene."""
    return tuple(load_table_textures())


def random_background_spec(rng: np.random.Generator, n_photos: int, photo_share: float = 0.35) -> BackgroundSpec:
    """Photos are few and mostly wood, so they get about a third of the frames and the procedural kinds (each
    with its own colour and pattern draw) the rest. A table edge shows in about 30 % of the frames (a tilted
    camera 50-70 cm up sees a metre across, past the edge of most tables) and flat clutter in 70 %, since a
    table during a game is seldom bare (rules, score pads, boxes, coasters)."""
    use_photo = n_photos > 0 and rng.random() < photo_share
    source = "photo" if use_photo else str(rng.choice(PROCEDURAL_KINDS))
    n_clutter = int(rng.choice(4, p=[0.3, 0.35, 0.2, 0.15]))
    return BackgroundSpec(
        source=source,
        index=int(rng.integers(0, max(n_photos, 1))),
        seed=int(rng.integers(0, 2**31)),
        rotation_deg=float(rng.uniform(0.0, 360.0)),
        offset_mm=(float(rng.uniform(-300, 300)), float(rng.uniform(-300, 300))),
        scale=float(rng.uniform(0.7, 1.4)),
        tint=random_surface_colour(rng, source),
        surround=random_surround(rng) if rng.random() < 0.3 else None,
        clutter=tuple(random_flat_item(rng) for _ in range(n_clutter)),
    )


# HSV ranges per surface (hue in degrees, saturation, value), each a list of (weight, h, s, v) families: wood from
# pale oak to walnut with painted and grey-stained tops; felt and cloth in any hue; stone grey, beige or black.
SURFACE_COLOURS: dict[str, tuple[tuple[float, tuple[float, float], tuple[float, float], tuple[float, float]], ...]] = {
    "wood": ((0.75, (18, 38), (0.3, 0.7), (0.35, 0.9)), (0.25, (0, 360), (0.0, 0.25), (0.3, 0.95))),
    "felt": ((0.4, (90, 170), (0.3, 0.7), (0.2, 0.6)), (0.6, (0, 360), (0.1, 0.6), (0.12, 0.7))),
    "cloth": ((0.6, (0, 360), (0.05, 0.5), (0.5, 0.95)), (0.4, (0, 360), (0.3, 0.8), (0.2, 0.75))),
    "stone": ((0.6, (20, 45), (0.0, 0.3), (0.5, 0.9)), (0.4, (0, 360), (0.0, 0.15), (0.1, 0.5))),
    "painted": ((0.6, (0, 360), (0.0, 0.08), (0.15, 0.95)), (0.4, (0, 360), (0.1, 0.45), (0.5, 0.9))),
    "playmat": ((1.0, (0, 360), (0.3, 0.8), (0.15, 0.6)),),
    "photo": ((0.7, (20, 40), (0.0, 0.35), (0.8, 1.0)), (0.3, (0, 360), (0.0, 0.2), (0.85, 1.0))),
}


def random_surface_colour(rng: np.random.Generator, source: str) -> tuple[float, float, float]:
    families = SURFACE_COLOURS.get(source, SURFACE_COLOURS["wood"])
    weights = np.array([f[0] for f in families])
    _, hue, sat, val = families[int(rng.choice(len(families), p=weights / weights.sum()))]
    return hsv_colour(rng.uniform(*hue), rng.uniform(*sat), rng.uniform(*val))


def hsv_colour(hue_deg: float, saturation: float, value: float) -> tuple[float, float, float]:
    """BGR 0-1 from hue in degrees, saturation and value in 0-1."""
    pixel = np.array([[[hue_deg % 360.0, saturation, value]]], np.float32)
    b, g, r = cv2.cvtColor(pixel, cv2.COLOR_HSV2BGR)[0, 0]
    return float(b), float(g), float(r)


def random_surround(rng: np.random.Generator) -> Surround:
    """The edge runs across one side of the view, 2-15 % of the frame in from it and at most 15 degrees off it,
    so it stays clear of the play area where cards are laid (scenes place cards without knowing the table's
    edge); the far side (top of the image) most often, since tilted cameras see furthest there."""
    side = int(rng.choice(4, p=[0.4, 0.2, 0.2, 0.2]))  # top, bottom, left, right
    depth = rng.uniform(0.02, 0.15)
    lean = np.tan(np.radians(rng.uniform(-15, 15)))
    a, b = depth, float(np.clip(depth + lean, 0.0, 0.3))
    edge = (((0.0, a), (1.0, b)), ((0.0, 1 - a), (1.0, 1 - b)), ((a, 0.0), (b, 1.0)), ((1 - a, 0.0), (1 - b, 1.0)))
    floor = str(rng.choice(FLOOR_KINDS))
    return Surround(
        edge=edge[side],
        drop_mm=float(rng.uniform(650, 780)),
        floor=floor,
        floor_seed=int(rng.integers(0, 2**31)),
        floor_tint=random_surface_colour(rng, floor),
        brightness=float(rng.uniform(0.35, 0.85)),
        blur_px=float(rng.uniform(1.0, 4.0)),
        rim=float(rng.choice([rng.uniform(0.3, 0.7), rng.uniform(1.1, 1.5)])),
    )


CLUTTER_SIZES_MM = {
    "paper": ((210, 297), (148, 210), (216, 279)),
    "notebook": ((148, 210), (90, 140), (176, 250)),
    "book": ((155, 235), (210, 280), (130, 200)),
    "box": ((295, 295), (250, 180), (200, 130)),
    "coaster": ((100, 100), (90, 90), (110, 110)),
    "mat": ((450, 300), (400, 300), (330, 330)),
}


def random_flat_item(rng: np.random.Generator) -> FlatItem:
    """Anchored 0-18 % inside or up to 8 % outside a random frame border, so clutter crowds the frame's edges the
    way it does around a play area, and is often cut by the frame."""
    kind = str(rng.choice(CLUTTER_KINDS, p=[0.3, 0.15, 0.15, 0.15, 0.1, 0.15]))
    along, inset = rng.uniform(0.05, 0.95), rng.uniform(-0.08, 0.18)
    side = int(rng.integers(0, 4))
    anchor = ((along, inset), (along, 1 - inset), (inset, along), (1 - inset, along))[side]
    sizes = CLUTTER_SIZES_MM[kind]
    size = np.array(sizes[int(rng.integers(0, len(sizes)))], float) * rng.uniform(0.95, 1.05)
    paper_white = hsv_colour(rng.uniform(30, 60), rng.uniform(0.0, 0.12), rng.uniform(0.85, 0.98))
    colour = (
        paper_white
        if kind == "paper"
        else hsv_colour(rng.uniform(0, 360), rng.uniform(0.2, 0.9), rng.uniform(0.2, 0.9))
    )
    if kind == "coaster" and rng.random() < 0.5:
        colour = hsv_colour(rng.uniform(25, 35), rng.uniform(0.35, 0.55), rng.uniform(0.5, 0.75))  # cork
    ink = hsv_colour(rng.uniform(200, 250), rng.uniform(0.0, 0.8), rng.uniform(0.1, 0.4))
    accent = ink if kind == "paper" else hsv_colour(rng.uniform(0, 360), rng.uniform(0.2, 1.0), rng.uniform(0.1, 1.0))
    return FlatItem(
        kind=kind,
        anchor=(float(anchor[0]), float(anchor[1])),
        rotation_deg=float(rng.uniform(-25, 25) + 90 * rng.integers(0, 4)),
        size_mm=(float(size[0]), float(size[1])),
        colour=colour,
        accent=accent,
        seed=int(rng.integers(0, 2**31)),
    )


# ----------------------------------------------------------------------------------------------------- procedural


def procedural_texture(
    kind: str, seed: int, tint: tuple[float, float, float], size: int = PROCEDURAL_SIZE
) -> TableTexture:
    """Textures are built from band-limited periodic noise (random grids resized up with wrap-around) so they have
    the soft structure of real surfaces rather than per-pixel white noise, and tile seamlessly. `tint` is the
    surface's main colour; the seed draws its pattern and any second colour. `size` (a power of two) trades
    detail for speed: a blurred floor far below the table needs far fewer texels than the table top."""
    makers = {"wood": _wood, "felt": _felt, "cloth": _cloth, "stone": _stone, "painted": _painted, "playmat": _playmat}
    if kind not in makers:
        raise ValueError(f"unknown procedural table '{kind}'; expected one of {PROCEDURAL_KINDS}")
    if size & (size - 1) or size < 64:
        raise ValueError(f"procedural texture size must be a power of two of at least 64, not {size}")
    rng = np.random.default_rng(seed)
    image = makers[kind](rng, size, np.array(tint, np.float32))
    return TableTexture(image=image, span_mm=float(rng.uniform(*SPAN_MM[kind])), grey=False, tileable=True)


def periodic_noise(rng: np.random.Generator, size: int, cells: tuple[int, int]) -> np.ndarray:
    """Smooth noise (about unit variance) of `cells` (x, y) random values per PROCEDURAL_SIZE texels, across a
    size x size tile that repeats exactly: the grid is interpolated with wrap-around, cubic up to four samples a
    cell and linear from there (cheap, and already smooth)."""
    cx, cy = (max(1, c * size // PROCEDURAL_SIZE) for c in cells)
    if size % cx or size % cy:
        raise ValueError(f"noise cells {cells} must divide the texture size {size}")
    grid = (rng.random((cy, cx), dtype=np.float32) - np.float32(0.5)) * np.float32(np.sqrt(12.0))
    grid = _wrap_resize(grid, (min(4 * cx, size), min(4 * cy, size)), cv2.INTER_CUBIC)
    return _wrap_resize(grid, (size, size), cv2.INTER_LINEAR)


def _wrap_resize(grid: np.ndarray, out: tuple[int, int], interpolation: int) -> np.ndarray:
    """Resize by whole factors with the grid treated as periodic (pixel centres kept aligned)."""
    if grid.shape[1] == out[0] and grid.shape[0] == out[1]:
        return grid
    fx, fy = out[0] / grid.shape[1], out[1] / grid.shape[0]
    matrix = np.float32([[fx, 0, (fx - 1) / 2], [0, fy, (fy - 1) / 2]])
    return cv2.warpAffine(grid, matrix, out, flags=interpolation, borderMode=cv2.BORDER_WRAP)


def palette_texture(
    rng: np.random.Generator,
    value: np.ndarray,
    ramps: list[tuple[np.ndarray, np.ndarray]],
    classes: np.ndarray | None = None,
    top: float = 1.3,
) -> np.ndarray:
    """BGR uint8 from a value map (0-`top`) and a class map: class k runs from ramps[k][0] (value 0) to ramps[k][1]
    (value 1), so grain and background differ in hue as well as brightness (late wood is redder than early
    wood). One 8-bit lookup does the colouring; the value is dithered so few levels per class do not band."""
    levels = 256 // len(ramps)
    step = (value * np.float32((levels - 1) / top)) + rng.random(value.shape, dtype=np.float32)
    index = np.clip(step, 0, levels - 1).astype(np.uint8)
    if classes is not None:
        index += (classes.astype(np.uint8) * levels).astype(np.uint8)
    t = np.linspace(0.0, top, levels, dtype=np.float32)[:, None]
    table = np.zeros((256, 1, 3), np.uint8)
    for k, (dark, light) in enumerate(ramps):
        table[k * levels : (k + 1) * levels, 0] = np.clip((dark + (light - dark) * t) * 255.0 + 0.5, 0, 255)
    return cv2.LUT(cv2.merge([index, index, index]), table)


def _deeper(colour: np.ndarray, factor: float) -> np.ndarray:
    """Darker and a little more saturated: the late wood of a ring, a cloth's shadowed thread."""
    grey = float(colour.mean())
    return np.clip((grey + (colour - grey) * 1.25) * factor, 0.0, 1.0)


def _wood(rng: np.random.Generator, size: int, tint: np.ndarray) -> np.ndarray:
    """Planks along x: growth rings from a warped periodic sine, each plank cut from a different log (own phase,
    ring spacing and shade), fine grain streaks and pores stretched along the grain, dark seams between planks."""
    planks = int(rng.choice([4, 8]))
    rows = np.arange(size) // (size // planks)
    y = (np.arange(size, dtype=np.float32) / size)[:, None]
    warp = periodic_noise(rng, size, (4, 16)) * np.float32(0.03) + periodic_noise(rng, size, (16, 64)) * np.float32(
        0.004
    )
    ring_count = rng.integers(30, 90, planks)[rows][:, None].astype(np.float32)  # whole cycles: the tile repeats
    phase = rng.uniform(0, 2 * np.pi, planks)[rows][:, None].astype(np.float32)
    rings = np.sin(np.float32(2 * np.pi) * ring_count * (y + warp) + phase) * np.float32(0.5) + np.float32(0.5)
    rings = rings ** np.float32(rng.uniform(2.0, 5.0))
    streaks = periodic_noise(rng, size, (8, 512)) * np.float32(0.04) + periodic_noise(
        rng, size, (32, 1024)
    ) * np.float32(0.03)
    pores = np.clip(periodic_noise(rng, size, (64, 1024)) - np.float32(1.5), 0.0, None)
    shade = rng.normal(0, 0.07, planks)[rows][:, None].astype(np.float32)
    value = (
        np.float32(0.72) + shade + streaks - rings * np.float32(0.45 * rng.uniform(0.4, 1.0)) - pores * np.float32(0.5)
    )
    value += periodic_noise(rng, size, (4, 4)) * np.float32(0.04)
    seams = (np.arange(size) % (size // planks)) < max(size // 512, 1)
    value[seams, :] *= np.float32(0.45)
    return palette_texture(rng, value, [(_deeper(tint, 0.45), tint)])


def _felt(rng: np.random.Generator, size: int, tint: np.ndarray) -> np.ndarray:
    """Mottling over centimetres, fibres below a millimetre, a few pills and lint specks."""
    value = periodic_noise(rng, size, (8, 8)) * np.float32(0.05) + periodic_noise(rng, size, (32, 32)) * np.float32(
        0.03
    )
    value += periodic_noise(rng, size, (512, 512)) * np.float32(0.07)
    value += (rng.random((size, size), dtype=np.float32) - np.float32(0.5)) * np.float32(0.17)  # single fibres
    value += np.clip(periodic_noise(rng, size, (256, 256)) - np.float32(1.6), 0.0, None) * np.float32(0.6)  # lint
    return palette_texture(rng, value + np.float32(0.85), [(_deeper(tint, 0.6), tint)])


def _cloth(rng: np.random.Generator, size: int, tint: np.ndarray) -> np.ndarray:
    """A woven tablecloth: threads with random thickness and shade along both axes (the slubs that make linen
    look like linen), the weave's over-under checker, then a printed or woven pattern in a second colour: plain,
    gingham, stripes or dots."""
    thread = int(rng.choice([2, 4])) * max(size // PROCEDURAL_SIZE, 1)  # texels per thread: 0.7-2.7 mm
    n = size // thread
    idx = np.arange(size) // thread
    warp_threads = rng.normal(0, 1, n).astype(np.float32)[idx]
    weft_threads = rng.normal(0, 1, n).astype(np.float32)[idx]
    over = ((idx[:, None] + idx[None, :]) % 2).astype(np.float32)
    value = np.float32(0.85) + np.float32(0.05) * (warp_threads[None, :] * over + weft_threads[:, None] * (1 - over))
    value += np.float32(0.04) * (over - np.float32(0.5)) + periodic_noise(rng, size, (16, 16)) * np.float32(0.03)
    second = np.array(hsv_colour(rng.uniform(0, 360), rng.uniform(0.0, 0.8), rng.uniform(0.1, 1.0)), np.float32)
    mixed = (tint + second) / 2
    ramps = [(_deeper(c, 0.55), c) for c in (tint, mixed, second)]
    return palette_texture(rng, value, ramps, np.round(_cloth_pattern(rng, size) * 2))


def _cloth_pattern(rng: np.random.Generator, size: int) -> np.ndarray:
    """Share (0, 0.5 or 1) of the second colour per texel; periods divide the tile so the pattern repeats with it."""
    style = str(rng.choice(["plain", "gingham", "stripes", "dots"], p=[0.35, 0.25, 0.25, 0.15]))
    period = int(rng.choice([32, 64, 128])) * size // PROCEDURAL_SIZE
    axis = np.arange(size)
    band = ((axis % period) < period * rng.uniform(0.2, 0.5)).astype(np.float32)
    if style == "gingham":
        return 0.5 * (band[None, :] + band[:, None])
    if style == "stripes":
        return np.repeat(band[None, :], size, axis=0) if rng.random() < 0.5 else np.repeat(band[:, None], size, 1)
    if style == "dots":
        local = (axis % period - period / 2.0).astype(np.float32)
        radius = period * rng.uniform(0.1, 0.3)
        return ((local[None, :] ** 2 + local[:, None] ** 2) < radius**2).astype(np.float32)
    return np.zeros((size, size), np.float32)


def _stone(rng: np.random.Generator, size: int, tint: np.ndarray) -> np.ndarray:
    """Granite or terrazzo: grains of three shades at three sizes (2 mm to single texels) over a mottled base,
    sometimes a marble vein."""
    value = np.float32(0.8) + periodic_noise(rng, size, (8, 8)) * np.float32(0.05)
    value += (rng.random((size, size), dtype=np.float32) - np.float32(0.5)) * np.float32(0.08)
    classes = np.zeros((size, size), np.uint8)
    ramps = [(_deeper(tint, 0.6), tint)]
    for k, (cells, share) in enumerate((((256, 256), 0.06), ((512, 512), 0.12), ((1024, 1024), 0.1)), start=1):
        grain = periodic_noise(rng, size, cells)
        classes[grain > np.quantile(grain[::8, ::8], 1.0 - share)] = k
        shade = np.array(hsv_colour(rng.uniform(0, 60), rng.uniform(0, 0.3), rng.uniform(0.05, 1.0)), np.float32)
        ramps.append((_deeper(shade, 0.7), shade))
    if rng.random() < 0.4:
        x = (np.arange(size, dtype=np.float32) / size)[None, :]
        turbulence = periodic_noise(rng, size, (8, 8)) * np.float32(0.12) + periodic_noise(
            rng, size, (32, 32)
        ) * np.float32(0.02)
        vein = np.abs(np.sin(np.float32(2 * np.pi * int(rng.integers(1, 4))) * (x + turbulence))) ** np.float32(0.15)
        value *= np.float32(0.55) + np.float32(0.45) * vein
    return palette_texture(rng, value, ramps, classes)


def _painted(rng: np.random.Generator, size: int, tint: np.ndarray) -> np.ndarray:
    """A plain painted or laminate top: broad smudges, fine dust, and scratches in random directions, which are
    the only texture such a table has and what a camera picks up on it."""
    value = np.float32(0.9) + periodic_noise(rng, size, (4, 4)) * np.float32(0.03)
    value += periodic_noise(rng, size, (256, 256)) * np.float32(0.012)
    scratches = np.zeros((size, size), np.float32)
    for _ in range(int(rng.integers(10, 60))):
        p0 = rng.uniform(0, size, 2)
        p1 = p0 + rng.normal(0, size * 0.08, 2)
        cv2.line(scratches, tuple(int(v) for v in p0), tuple(int(v) for v in p1), float(rng.uniform(-1, 1)), 1)
    value += scratches * np.float32(0.06)
    return palette_texture(rng, value, [(_deeper(tint, 0.5), tint)])


def _playmat(rng: np.random.Generator, size: int, tint: np.ndarray) -> np.ndarray:
    """A printed neoprene play mat: broad fields blending the mat's colour into a second hue, a third hue printed
    over part of it with a crisp edge, and a fine fabric grain on top."""
    second, third = (
        np.array(hsv_colour(rng.uniform(0, 360), rng.uniform(0.3, 0.9), rng.uniform(0.15, 0.9)), np.float32)
        for _ in range(2)
    )
    blend = periodic_noise(rng, size, (4, 4)) * np.float32(0.35) + periodic_noise(rng, size, (16, 16)) * np.float32(0.1)
    value = np.clip(blend + np.float32(0.5), 0.0, 1.0)
    value += (rng.random((size, size), dtype=np.float32) - np.float32(0.5)) * np.float32(0.06)
    printed = periodic_noise(rng, size, (8, 8)) > rng.uniform(0.3, 1.2)
    return palette_texture(rng, value, [(tint, second), (third, second)], printed, top=1.05)


# ----------------------------------------------------------------------------------------------------- rendering


def table_texture(spec: BackgroundSpec, photos: list[TableTexture]) -> TableTexture:
    """A 'photo' spec with no photos installed falls back to procedural wood, so specs stay usable anywhere."""
    if spec.source == "photo" and photos:
        texture = photos[spec.index % len(photos)]
        tint = spec.tint if texture.grey else tuple(0.85 + 0.15 * t / max(spec.tint) for t in spec.tint)
        image = np.clip(texture.image.astype(np.float32) * np.array(tint, np.float32), 0, 255).astype(np.uint8)
        return TableTexture(image=image, span_mm=texture.span_mm, grey=False, tileable=texture.tileable)
    kind = spec.source if spec.source in PROCEDURAL_KINDS else "wood"
    return procedural_texture(kind, spec.seed, spec.tint)


def warp_texture(
    texture: TableTexture, pose: np.ndarray, plane_to_image: np.ndarray, px_per_mm: float, frame: tuple[int, int]
) -> np.ndarray:
    """A texture laid on a plane (its centre at `pose`, in plane millimetres) as the camera sees it, float32.
    Textures are pre-shrunk to the scale the camera needs so distant grain is filtered rather than aliased."""
    image = texture.image
    mm_per_texel = texture.span_mm / image.shape[1]
    shrink = mm_per_texel * px_per_mm
    if shrink < 0.6:
        new_w = max(round(image.shape[1] * shrink * 1.5), 8)
        new_h = max(round(image.shape[0] * new_w / image.shape[1]), 8)
        image = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_AREA)
        mm_per_texel = texture.span_mm / image.shape[1]
    h, w = image.shape[:2]
    tex_to_plane = pose @ np.diag([mm_per_texel, mm_per_texel, 1.0]) @ translation(-w / 2.0, -h / 2.0)
    warped = cv2.warpPerspective(
        image,
        plane_to_image @ tex_to_plane,
        frame,
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_WRAP if texture.tileable else cv2.BORDER_REFLECT_101,
    )
    return warped.astype(np.float32)


def render_table(spec: BackgroundSpec, camera: Camera, photos: list[TableTexture]) -> np.ndarray:
    """The table as seen by the camera, float32 BGR 0-255: the surface, flat clutter on it, and the edge with the
    floor where the spec has one."""
    texture = table_texture(spec, photos)
    texture = TableTexture(texture.image, texture.span_mm * spec.scale, texture.grey, texture.tileable)
    px_per_mm = camera.focal_px / float(np.linalg.norm(camera.position()))
    pose = pose_matrix(spec.offset_mm[0], spec.offset_mm[1], spec.rotation_deg)
    table = warp_texture(texture, pose, camera.table_to_image(), px_per_mm, (camera.width, camera.height))
    for item in spec.clutter:
        paste_flat_item(table, item, camera)
    if spec.surround is not None:
        add_surround(table, spec.surround, camera, spec.tint)
    return table


def floor_to_image(camera: Camera, drop_mm: float) -> np.ndarray:
    """Homography from floor millimetres (same x, y axes as the table, `drop_mm` below it) to image pixels. A floor
    point and the table point in front of it on the same ray differ by a scaling about the camera's foot point,
    by camera height over (height + drop), so the floor is the table homography after that scaling."""
    centre = camera.position()
    k = centre[2] / (centre[2] + drop_mm)
    foot = translation(centre[0], centre[1])
    return camera.table_to_image() @ foot @ np.diag([k, k, 1.0]) @ np.linalg.inv(foot)


def add_surround(table: np.ndarray, surround: Surround, camera: Camera, table_tint: tuple[float, float, float]) -> None:
    """Replace the part of the view beyond the table's edge with the floor (in place): out of focus, darker, and
    darkest just past the edge where the table top shades it; a thin rim marks the edge itself. The floor is
    rendered at half resolution, since it is blurred anyway."""
    w, h = camera.width, camera.height
    (u0, v0), (u1, v1) = surround.edge
    p0, p1 = np.array([u0 * w, v0 * h]), np.array([u1 * w, v1 * h])
    normal = np.array([p1[1] - p0[1], p0[0] - p1[0]])
    normal /= max(float(np.linalg.norm(normal)), 1e-9)
    if normal @ (np.array([w / 2, h / 2]) - p0) > 0:
        normal = -normal  # point away from the frame centre, where the cards are
    rim_width = float(np.clip(4.0 * _px_per_mm_at(camera, (p0 + p1) / 2.0), 1.0, 12.0))
    xs = np.arange(w, dtype=np.float32)[None, :] - np.float32(p0[0])
    ys = np.arange(h, dtype=np.float32)[:, None] - np.float32(p0[1])
    beyond = xs * np.float32(normal[0]) + ys * np.float32(normal[1])  # signed px from the edge, > 0 on the floor
    rows, cols = np.flatnonzero((beyond > -rim_width - 1).any(axis=1)), np.flatnonzero((beyond > -rim_width - 1).any(0))
    if not len(rows) or not len(cols):
        return
    y0, y1, x0, x1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    beyond = beyond[y0:y1, x0:x1]
    floor_texture = procedural_texture(surround.floor, surround.floor_seed, surround.floor_tint, FLOOR_TEXTURE_SIZE)
    px_per_mm = camera.focal_px / float(camera.position()[2] + surround.drop_mm) / 2.0
    half = np.diag([0.5, 0.5, 1.0]) @ translation(0.5, 0.5)  # full-resolution pixel centres to half-resolution
    to_half = translation(-0.5, -0.5) @ half @ floor_to_image(camera, surround.drop_mm)
    floor = warp_texture(floor_texture, np.eye(3), to_half, px_per_mm, ((w + 1) // 2, (h + 1) // 2))
    floor = cv2.resize(cv2.GaussianBlur(floor, (0, 0), surround.blur_px / 2.0), (w, h), interpolation=cv2.INTER_LINEAR)
    shade = surround.brightness * (1.0 - 0.5 * np.exp(-np.clip(beyond, 0, None) / np.float32(0.08 * h)))
    mask = np.clip(beyond + 0.5, 0.0, 1.0)[..., None]  # one pixel of antialiasing along the edge
    region = table[y0:y1, x0:x1]
    region += mask * (floor[y0:y1, x0:x1] * shade[..., None] - region)
    rim = np.clip(1.0 - np.abs(beyond + rim_width / 2.0) / (rim_width / 2.0), 0.0, 1.0)[..., None]
    region += rim * (np.clip(np.array(table_tint, np.float32) * 255.0 * surround.rim, 0, 255) - region)


def _px_per_mm_at(camera: Camera, point: np.ndarray) -> float:
    """Image pixels per table millimetre around an image point (from a 10 mm step on the table)."""
    table_point = apply_homography(camera.image_to_table(), point[None, :])[0]
    ends = apply_homography(camera.table_to_image(), np.array([table_point, table_point + np.array([10.0, 0.0])]))
    return float(np.linalg.norm(ends[1] - ends[0])) / 10.0


# ----------------------------------------------------------------------------------------------------- clutter


def paste_flat_item(table: np.ndarray, item: FlatItem, camera: Camera) -> None:
    """Draw the item's art in its own millimetres, warp it onto the table where its anchor falls, darken a soft
    contact shadow around it (room light is mostly diffuse), then blend it in (in place)."""
    art, alpha = flat_item_art(item)
    anchor = np.array([[item.anchor[0] * camera.width, item.anchor[1] * camera.height]])
    x_mm, y_mm = apply_homography(camera.image_to_table(), anchor)[0]
    h_px, w_px = alpha.shape
    to_table = (
        pose_matrix(x_mm, y_mm, item.rotation_deg)
        @ np.diag([item.size_mm[0] / w_px, -item.size_mm[1] / h_px, 1.0])
        @ translation(-w_px / 2.0, -h_px / 2.0)
    )
    homography = camera.table_to_image() @ to_table
    corners = apply_homography(homography, np.array([[0, 0], [w_px, 0], [w_px, h_px], [0, h_px]], float))
    pad = 12
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - pad
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + pad
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, camera.width), min(y1, camera.height)
    if x0 >= x1 or y0 >= y1:
        return
    window = translation(-x0, -y0) @ homography
    size = (int(x1 - x0), int(y1 - y0))
    warped = cv2.warpPerspective(art, window, size, flags=cv2.INTER_LINEAR).astype(np.float32)
    cover = cv2.warpPerspective(alpha, window, size, flags=cv2.INTER_LINEAR)
    thickness_mm = CLUTTER_THICKNESS_MM.get(item.kind, 1.0)
    px_per_mm = _px_per_mm_at(camera, (corners.min(axis=0) + corners.max(axis=0)) / 2.0)
    contact = cv2.GaussianBlur(cover, (0, 0), max(thickness_mm * px_per_mm, 0.7))
    region = table[y0:y1, x0:x1]
    region *= (1.0 - 0.45 * contact)[..., None]
    region += (warped - region) * cover[..., None]


def flat_item_art(item: FlatItem) -> tuple[np.ndarray, np.ndarray]:
    """BGR uint8 art and float alpha at CLUTTER_PX_PER_MM (less for big items, so none costs more than ~600 px);
    drawn in 8 bits because that is what OpenCV's text drawing takes."""
    rng = np.random.default_rng(item.seed)
    scale = min(CLUTTER_PX_PER_MM, 600.0 / max(item.size_mm))
    w, h = max(round(item.size_mm[0] * scale), 4), max(round(item.size_mm[1] * scale), 4)
    colour, accent = np.array(item.colour, np.float32) * 255.0, np.array(item.accent, np.float32) * 255.0
    art = np.empty((h, w, 3), np.float32)
    art[:] = colour
    alpha = np.ones((h, w), np.float32)
    if item.kind in ("book", "box"):
        t = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
        art = art * (1 - t) + accent * t
    elif item.kind == "coaster":
        alpha[:] = 0
        cv2.circle(alpha, (w // 2, h // 2), min(w, h) // 2 - 1, 1.0, -1, cv2.LINE_AA)
        art *= (0.85 + 0.15 * rng.random((h, w), np.float32))[..., None]
    elif item.kind == "mat":  # woven: alternating bands of the two colours
        stripes = (np.arange(h) // max(int(4 * scale), 1)) % 2 == 1
        art[stripes] = art[stripes] * 0.75 + accent * 0.25
    art *= (1.0 + 0.06 * (rng.random((h, w), np.float32) - 0.5))[..., None]  # paper and board fibre
    canvas = np.clip(art + 0.5, 0, 255).astype(np.uint8)
    if item.kind == "paper":
        _paper(rng, canvas, _bgr(accent), scale)
    elif item.kind in ("book", "box"):
        _printed_cover(rng, canvas, _bgr(accent), scale)
    elif item.kind == "notebook":
        band_x = int(w * rng.uniform(0.75, 0.9))
        canvas[:, band_x : band_x + max(int(6 * scale), 1)] = _bgr(accent)
        _text_lines(rng, canvas, _bgr(255.0 - colour), (0.2, 0.15), (0.6, 0.3), scale * 5.0, 2)
    return canvas, alpha


def _bgr(colour: np.ndarray) -> tuple[int, int, int]:
    b, g, r = (int(np.clip(c, 0, 255)) for c in colour)
    return b, g, r


def _paper(rng: np.random.Generator, art: np.ndarray, ink: tuple[int, int, int], scale: float) -> None:
    """A printed page (lines of words), a ruled note page with handwriting, or a score sheet grid."""
    h, w = art.shape[:2]
    style = rng.choice(["print", "notes", "grid"])
    margin = int(15 * scale)
    if style == "grid":
        step = max(int(rng.uniform(7, 12) * scale), 3)
        for x in range(margin, w - margin, step * 3):
            cv2.line(art, (x, margin), (x, h - margin), ink, 1, cv2.LINE_AA)
        for y in range(margin, h - margin, step):
            cv2.line(art, (margin, y), (w - margin, y), ink, 1, cv2.LINE_AA)
        return
    if style == "notes":
        rule = _bgr(np.array(hsv_colour(rng.uniform(190, 220), 0.3, 0.85)) * 255.0)
        for y in range(int(25 * scale), h, max(int(8 * scale), 2)):
            cv2.line(art, (0, y), (w, y), rule, 1, cv2.LINE_AA)
        _text_lines(rng, art, ink, (0.08, 0.1), (0.85, 0.5), scale * 5.0, 8, font=cv2.FONT_HERSHEY_SCRIPT_SIMPLEX)
        return
    _text_lines(rng, art, ink, (0.1, 0.06), (0.8, 0.88), scale * 3.0, 60)


def _printed_cover(rng: np.random.Generator, art: np.ndarray, accent: tuple[int, int, int], scale: float) -> None:
    """Book or game-box art over the gradient already there: bold round shapes in random hues, a title band with
    big letters and a frame, the things that give printed covers their many hues and hard edges."""
    h, w = art.shape[:2]
    for _ in range(int(rng.integers(3, 9))):
        colour = _bgr(np.array(hsv_colour(rng.uniform(0, 360), rng.uniform(0.3, 1.0), rng.uniform(0.2, 1.0))) * 255)
        centre = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
        axes = (int(rng.uniform(0.05, 0.35) * w), int(rng.uniform(0.05, 0.35) * h))
        cv2.ellipse(art, centre, axes, float(rng.uniform(0, 180)), 0, 360, colour, -1, cv2.LINE_AA)
    top, height = int(h * rng.uniform(0.05, 0.2)), int(h * rng.uniform(0.1, 0.15))
    inverse = _bgr(255.0 - np.array(accent, np.float32))
    art[top : top + height] = (art[top : top + height] * 0.3 + np.array(inverse) * 0.7).astype(np.uint8)
    title = "".join(rng.choice(list(string.ascii_uppercase), int(rng.integers(4, 10))))
    font_scale = height / 30.0
    origin = (int(w * 0.08), top + int(height * 0.8))
    thickness = max(int(font_scale * 2), 1)
    cv2.putText(art, title, origin, cv2.FONT_HERSHEY_TRIPLEX, font_scale, accent, thickness, cv2.LINE_AA)
    cv2.rectangle(art, (2, 2), (w - 3, h - 3), inverse, max(int(3 * scale), 1))


def _text_lines(
    rng: np.random.Generator,
    art: np.ndarray,
    ink: tuple[int, int, int],
    origin: tuple[float, float],
    extent: tuple[float, float],
    size_px: float,
    max_lines: int,
    font: int = cv2.FONT_HERSHEY_SIMPLEX,
) -> None:
    """Lines of random lowercase words, `size_px` high: at table distance text is a texture of short dark strokes,
    which is what a page contributes to a frame's edges."""
    h, w = art.shape[:2]
    font_scale = max(size_px / 22.0, 0.15)
    line_h = max(int(size_px * 1.7), 3)
    x0, y0 = int(origin[0] * w), int(origin[1] * h)
    chars = max(int(extent[0] * w / max(size_px * 0.55, 1)), 1)
    for i in range(min(max_lines, int(extent[1] * h / line_h))):
        words = [
            "".join(rng.choice(list(string.ascii_lowercase), int(rng.integers(2, 9))))
            for _ in range(int(rng.integers(3, 12)))
        ]
        line = " ".join(words)[: int(chars * rng.uniform(0.5, 1.0))]
        cv2.putText(art, line, (x0, y0 + (i + 1) * line_h), font, font_scale, ink, 1, cv2.LINE_AA)
