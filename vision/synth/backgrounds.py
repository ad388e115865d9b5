"""Table surfaces: real photographs when the Debian packages are installed, procedural wood / felt / cloth otherwise.

Either way the texture is laid on the table plane in millimetres and warped through the camera homography, so the
grain shrinks towards the far edge exactly as a real table does; pasting a flat photo behind the cards would give
the detector a perspective cue that never occurs on a real table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.synth.camera import Camera, pose_matrix, translation

PROCEDURAL_KINDS = ("wood", "felt", "cloth")
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
PROCEDURAL_SIZE = 768
MAX_PHOTO_SIDE = 1600


@dataclass(frozen=True)
class TableTexture:
    """A texture and how many millimetres of table its width covers (small gnubg tiles repeat; a photo does not)."""

    image: np.ndarray  # BGR uint8
    span_mm: float
    grey: bool  # gnubg ships grey textures meant to be tinted
    tileable: bool = False  # gnubg's small textures repeat seamlessly; mirroring them shows a kaleidoscope


@dataclass(frozen=True)
class BackgroundSpec:
    source: str  # "photo" or one of PROCEDURAL_KINDS
    index: int  # which photo (modulo the photos available)
    seed: int
    rotation_deg: float
    offset_mm: tuple[float, float]
    scale: float  # multiplies the texture's natural span
    tint: tuple[float, float, float]  # BGR gains: grey textures get their colour here, photos a mild cast


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


def random_background_spec(rng: np.random.Generator, n_photos: int, photo_share: float = 0.6) -> BackgroundSpec:
    use_photo = n_photos > 0 and rng.random() < photo_share
    source = "photo" if use_photo else str(rng.choice(PROCEDURAL_KINDS))
    return BackgroundSpec(
        source=source,
        index=int(rng.integers(0, max(n_photos, 1))),
        seed=int(rng.integers(0, 2**31)),
        rotation_deg=float(rng.uniform(0.0, 360.0)),
        offset_mm=(float(rng.uniform(-300, 300)), float(rng.uniform(-300, 300))),
        scale=float(rng.uniform(0.7, 1.4)),
        tint=_random_tint(rng, source),
    )


# BGR gains per surface; wood-like tints also colour gnubg's grey photo textures, which are all wood or cloth.
WOOD_TINTS = ((0.45, 0.70, 0.95), (0.30, 0.45, 0.65), (0.55, 0.75, 0.90), (0.20, 0.30, 0.45), (0.80, 0.80, 0.80))
FELT_TINTS = ((0.40, 0.62, 0.30), (0.60, 0.42, 0.25), (0.30, 0.30, 0.60), (0.45, 0.45, 0.45), (0.22, 0.24, 0.26))
CLOTH_TINTS = (*FELT_TINTS, (0.85, 0.85, 0.90), (0.45, 0.65, 0.85))


def _random_tint(rng: np.random.Generator, source: str) -> tuple[float, float, float]:
    palette = {"felt": FELT_TINTS, "cloth": CLOTH_TINTS}.get(source, WOOD_TINTS)
    base = np.array(palette[int(rng.integers(0, len(palette)))]) * rng.uniform(0.85, 1.15, 3)
    return tuple(float(v) for v in np.clip(base, 0.05, 1.2))


def procedural_texture(
    kind: str, seed: int, tint: tuple[float, float, float], size: int = PROCEDURAL_SIZE
) -> TableTexture:
    """Textures are built from band-limited noise (random grids resized up) so they have the soft structure of real
    surfaces rather than per-pixel white noise, which a camera never sees at table distance."""
    rng = np.random.default_rng(seed)
    if kind == "wood":
        value, span = _wood(rng, size), float(rng.uniform(500, 900))
    elif kind == "felt":
        value, span = _felt(rng, size), float(rng.uniform(300, 600))
    elif kind == "cloth":
        value, span = _cloth(rng, size), float(rng.uniform(400, 700))
    else:
        raise ValueError(f"unknown procedural table '{kind}'; expected one of {PROCEDURAL_KINDS}")
    colour = value[..., None] * np.array(tint, np.float32) * 255.0
    return TableTexture(image=np.clip(colour, 0, 255).astype(np.uint8), span_mm=span, grey=False)


def _noise(rng: np.random.Generator, size: int, cells: tuple[int, int]) -> np.ndarray:
    grid = rng.standard_normal((cells[1], cells[0])).astype(np.float32)
    return cv2.resize(grid, (size, size), interpolation=cv2.INTER_CUBIC)


def _wood(rng: np.random.Generator, size: int) -> np.ndarray:
    """Planks along x: growth rings from a warped sine, fine streaks from noise stretched along the grain."""
    y = np.linspace(0, 1, size, dtype=np.float32)[:, None]
    warp = _noise(rng, size, (4, 6)) * 0.08 + _noise(rng, size, (12, 24)) * 0.01
    rings = 0.5 + 0.5 * np.sin((y + warp) * np.float32(rng.uniform(40, 90)))
    streaks = _noise(rng, size, (6, size // 3)) * 0.08
    value = 0.75 + 0.18 * rings**3 + streaks + _noise(rng, size, (3, 3)) * 0.05
    plank = int(size / rng.integers(2, 5))
    seams = (np.arange(size) % plank) < 2
    value[seams, :] *= 0.55
    return np.clip(value, 0.0, 1.3)


def _felt(rng: np.random.Generator, size: int) -> np.ndarray:
    mottling = _noise(rng, size, (8, 8)) * 0.05 + _noise(rng, size, (40, 40)) * 0.03
    fibres = cv2.GaussianBlur(rng.standard_normal((size, size)).astype(np.float32), (0, 0), 0.8) * 0.08
    return np.clip(0.85 + mottling + fibres, 0.0, 1.3)


def _cloth(rng: np.random.Generator, size: int) -> np.ndarray:
    period = float(rng.uniform(3.0, 6.0))
    axis = np.arange(size, dtype=np.float32) * np.float32(2 * np.pi / period)
    weave = 0.06 * np.sin(axis)[None, :] * np.sin(axis)[:, None]
    value = 0.85 + weave + _noise(rng, size, (10, 10)) * 0.05
    if rng.random() < 0.4:  # gingham check
        check = int(rng.integers(20, 60))
        bands = ((np.arange(size) // check) % 2).astype(np.float32)
        value = value * (1.0 - 0.25 * (bands[None, :] + bands[:, None]))
    return np.clip(value, 0.0, 1.3)


def table_texture(spec: BackgroundSpec, photos: list[TableTexture]) -> TableTexture:
    """A 'photo' spec with no photos installed falls back to procedural wood, so specs stay usable anywhere."""
    if spec.source == "photo" and photos:
        texture = photos[spec.index % len(photos)]
        tint = spec.tint if texture.grey else tuple(0.85 + 0.15 * t / max(spec.tint) for t in spec.tint)
        image = np.clip(texture.image.astype(np.float32) * np.array(tint, np.float32), 0, 255).astype(np.uint8)
        return TableTexture(image=image, span_mm=texture.span_mm, grey=False, tileable=texture.tileable)
    kind = spec.source if spec.source in PROCEDURAL_KINDS else "wood"
    return procedural_texture(kind, spec.seed, spec.tint)


def render_table(spec: BackgroundSpec, camera: Camera, photos: list[TableTexture]) -> np.ndarray:
    """The table as seen by the camera, float32 BGR 0-255. Textures are pre-shrunk to the scale the camera needs
    at the table centre so distant grain is filtered rather than aliased."""
    texture = table_texture(spec, photos)
    image = texture.image
    mm_per_texel = texture.span_mm * spec.scale / image.shape[1]
    px_per_mm = camera.focal_px / np.linalg.norm(camera.position())
    shrink = mm_per_texel * px_per_mm
    if shrink < 0.6 and not texture.tileable:
        image = cv2.resize(image, None, fx=shrink * 1.5, fy=shrink * 1.5, interpolation=cv2.INTER_AREA)
        mm_per_texel = texture.span_mm * spec.scale / image.shape[1]
    h, w = image.shape[:2]
    tex_to_table = (
        pose_matrix(spec.offset_mm[0], spec.offset_mm[1], spec.rotation_deg)
        @ np.diag([mm_per_texel, mm_per_texel, 1.0])
        @ translation(-w / 2.0, -h / 2.0)
    )
    homography = camera.table_to_image() @ tex_to_table
    table = cv2.warpPerspective(
        image,
        homography,
        (camera.width, camera.height),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_WRAP if texture.tileable else cv2.BORDER_REFLECT_101,
    )
    return table.astype(np.float32)
