"""Scene compositor: cards, hands and clutter on a table, photographed by a random camera, with exact labels.

A `SceneSpec` holds every random choice (drawn from one seed by `random_spec`), so a scene can be stored, shown and
re-rendered byte for byte. Labels come from an id map that every object writes in z-order as it is pasted: what
is visible is what is left of an object's id in the map at the end, so overlap, hands and the frame edge are all
counted by the same pixels the camera image is made of, never estimated from geometry.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import cv2
import numpy as np

from vision.synth.backgrounds import BackgroundSpec, TableTexture, random_background_spec, render_table
from vision.synth.camera import (
    CARD_H_MM,
    CARD_W_MM,
    DEFAULT_IMAGE_SIZE,
    Camera,
    apply_homography,
    card_to_table,
    random_camera,
    translation,
)
from vision.synth.deckdir import FACE_CODES, Deck
from vision.synth.effects import EffectParams, cast_shadow, finish, random_effects
from vision.synth.legibility import face_legibility, index_legibility, rank_printed
from vision.synth.occluders import OBJECT_KINDS, OccluderSpec, Patch, random_occluder, render_occluder
from vision.synth.pieces import PieceSet, as_piece_set
from vision.synth.solids import DIE_SIDES, SolidRender, SolidSpec, render_shadow, render_solid

DEFAULT_CODES: tuple[str, ...] = (*FACE_CODES, "JOKER")  # what every valid deck directory has
LAYOUTS = ("scatter", "pile", "fan", "row")
VISIBLE_THRESHOLD = 0.6
MAX_CARDS = 25
SUBPIXEL_BITS = 4
_MIP_CACHE: dict[tuple[str, str, int], np.ndarray] = {}


@dataclass(frozen=True)
class CardSpec:
    code: str  # the card's identity, whichever side is up
    face_up: bool
    x_mm: float
    y_mm: float
    rotation_deg: float
    glossy: bool


@dataclass(frozen=True)
class SceneSpec:
    seed: int
    camera: Camera
    deck_index: int  # which deck or piece set of the list given to render_scene
    layout: str  # the layouts used, joined by '+', for reports
    cards: tuple[CardSpec, ...]  # bottom to top
    occluders: tuple[OccluderSpec, ...]  # above all cards, in this order
    background: BackgroundSpec
    effects: EffectParams
    solids: tuple[SolidSpec, ...] = ()  # dice, cubes, pawns: above the flat pieces, below hands and clutter


@dataclass
class RegionLabel:
    """A corner index area: where it is in the image and whether enough of it shows to be read."""

    quad: list[list[float]]
    box: tuple[float, float, float, float] | None
    visible_fraction: float
    visible: bool
    legibility: float | None = None  # a card index's `index_legibility` in the finished frame (None: not measured)


@dataclass
class ObjectLabel:
    code: str  # what shows: a card code ('AS'..'KC', 'JOKER', a game's piece code), its back's name when face down
    # ('BACK', 'BACK_ARTIFACT'), 'hand' or 'object'
    face_up: bool
    quad: list[list[float]]  # TL, TR, BR, BL of the piece as printed (for hands and objects: their box)
    box: tuple[float, float, float, float] | None  # x1, y1, x2, y2 clipped to the frame; None when not in view
    visible_fraction: float  # visible pixels / all pixels of the object, frame edge and occlusion both counted
    corners: list[RegionLabel]  # the printed index regions of the side that shows (standard cards: top-left, then its
    # 180-degree twin); empty for hands, objects and index-less sides
    table_pose: tuple[float, float, float]  # x_mm, y_mm, rotation_deg
    z: int  # paint order, 0 = lowest
    subtype: str = ""  # the piece's identity under its back, or 'phone', 'cup', ...
    kind: str = "card"  # card, tile, token, board; d6, d20, cube, pawn; hand; object
    size_mm: tuple[float, float] = (0.0, 0.0)  # printed width, height of a flat piece; a solid's size twice
    corner_visible: list[float] = field(default_factory=list)  # flat pieces: how much of a small square at each
    # printed corner (TL, TR, BR, BL) shows; a corner detector learns the corners a camera can actually see


@dataclass
class Scene:
    image: np.ndarray  # BGR uint8
    objects: list[ObjectLabel]
    spec: SceneSpec = field(repr=False)

    def to_dict(self) -> dict:
        cam = self.spec.camera
        return {
            "seed": self.spec.seed,
            "width": cam.width,
            "height": cam.height,
            "camera": asdict(cam),
            "layout": self.spec.layout,
            "background": self.spec.background.source,
            "objects": [rounded_json(asdict(obj)) for obj in self.objects],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def cards(self) -> list[ObjectLabel]:
        """Every game component in view, flat or solid: what a recogniser must find (hands and clutter are not)."""
        return [obj for obj in self.objects if obj.code not in ("hand", "object")]


def rounded_json(value: object) -> object:
    """Three decimals keep label files small and byte-stable across platforms."""
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: rounded_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded_json(v) for v in value]
    return value


# ----------------------------------------------------------------------------------------------------- specs


def random_spec(
    rng: np.random.Generator,
    n_decks: int = 1,
    n_backgrounds: int = 0,
    width: int = DEFAULT_IMAGE_SIZE[0],
    height: int = DEFAULT_IMAGE_SIZE[1],
    codes: Sequence[str] = DEFAULT_CODES,
    max_cards: int = MAX_CARDS,
    hand_rate: float = 0.4,
    deck_index: int | None = None,
    piece_size_mm: tuple[float, float] = (CARD_W_MM, CARD_H_MM),
    camera: Camera | None = None,
) -> SceneSpec:
    """Cards come in groups (a pile, a fan, a row, a scatter) placed by sampling image points and casting them onto
    the table, so groups land where the camera looks, some straddling the frame edge. Pass `deck_index` and that
    deck's `codes` when decks differ in what they hold (not every design has a joker), and the pieces' printed size
    when they are not poker cards, so fans and rows are spaced for them; `camera` replaces the usual table view
    (`camera.closeup_camera` for a phone close-up)."""
    camera = camera or random_camera(rng, width, height)
    n_cards = int(rng.integers(1, max_cards + 1))
    chosen = [str(c) for c in rng.permutation(np.array(codes))[:n_cards]]
    cards: list[CardSpec] = []
    layouts: list[str] = []
    while len(cards) < len(chosen):
        layout = str(rng.choice(LAYOUTS, p=[0.3, 0.2, 0.25, 0.25]))
        group = chosen[len(cards) : len(cards) + int(rng.integers(1, 10))]
        centre = _table_point(rng, camera, edge_rate=0.15)
        cards += _group(rng, layout, group, centre, _view_width_mm(camera), piece_size_mm)
        layouts.append(layout)
    occluders = _occluders(rng, camera, cards, hand_rate)
    return SceneSpec(
        seed=int(rng.integers(0, 2**31)),
        camera=camera,
        deck_index=int(rng.integers(0, max(n_decks, 1))) if deck_index is None else deck_index,
        layout="+".join(layouts),
        cards=tuple(cards),
        occluders=occluders,
        background=random_background_spec(rng, n_backgrounds),
        effects=random_effects(rng),
    )


def _table_point(rng: np.random.Generator, camera: Camera, edge_rate: float) -> tuple[float, float]:
    low, high = (-0.08, 1.08) if rng.random() < edge_rate else (0.12, 0.88)
    u, v = rng.uniform(low, high) * camera.width, rng.uniform(low, high) * camera.height
    x, y = apply_homography(camera.image_to_table(), np.array([[u, v]]))[0]
    return float(x), float(y)


def _view_width_mm(camera: Camera) -> float:
    """Width of table the camera sees at the point it looks at."""
    return camera.width * float(np.linalg.norm(camera.position())) / camera.focal_px


def _group(
    rng: np.random.Generator,
    layout: str,
    codes: list[str],
    centre: tuple[float, float],
    view_mm: float,
    piece_size_mm: tuple[float, float] = (CARD_W_MM, CARD_H_MM),
) -> list[CardSpec]:
    k = len(codes)
    size = max(piece_size_mm[0] / CARD_W_MM, piece_size_mm[1] / CARD_H_MM)  # spacings below are for poker cards
    base = float(rng.uniform(0, 360))
    if layout == "pile":
        messy = rng.random() < 0.3
        jitter, turn = (12.0, 25.0) if messy else (2.0, 4.0)
        poses = [(rng.normal(0, jitter), rng.normal(0, jitter), base + rng.normal(0, turn)) for _ in range(k)]
        face_down_rate = 0.6
    elif layout == "fan":
        spread, radius = rng.uniform(6, 18), rng.uniform(45, 75)
        angles = [base + spread * (i - (k - 1) / 2) for i in range(k)]
        poses = [(-radius * _sin(a), radius * _cos(a), a + rng.normal(0, 1.5)) for a in angles]
        face_down_rate = 0.1
    elif layout == "row":
        along_width = rng.random() < 0.6
        step = rng.uniform(15, 75) if along_width else rng.uniform(12, 30)
        axis = (_cos(base), _sin(base)) if along_width else (-_sin(base), _cos(base))
        offsets = [step * (i - (k - 1) / 2) for i in range(k)]
        poses = [
            (o * axis[0] + rng.normal(0, 1.5), o * axis[1] + rng.normal(0, 1.5), base + rng.normal(0, 3))
            for o in offsets
        ]
        face_down_rate = 0.15
    else:
        reach = min(0.18 * view_mm, 200.0)
        poses = [(rng.uniform(-reach, reach), rng.uniform(-reach, reach) * 0.7, rng.uniform(0, 360)) for _ in range(k)]
        face_down_rate = 0.2
    return [
        CardSpec(
            code,
            bool(rng.random() >= face_down_rate),
            centre[0] + float(dx) * size,
            centre[1] + float(dy) * size,
            float(rot) % 360,
            bool(rng.random() < 0.6),
        )
        for code, (dx, dy, rot) in zip(codes, poses, strict=True)
    ]


def _sin(deg: float) -> float:
    return math.sin(math.radians(deg))


def _cos(deg: float) -> float:
    return math.cos(math.radians(deg))


def _occluders(
    rng: np.random.Generator, camera: Camera, cards: list[CardSpec], hand_rate: float
) -> tuple[OccluderSpec, ...]:
    """Hands reach in from the player's side (towards the camera's foot) and mostly over cards, since that is
    when they matter; clutter lies anywhere."""
    result = []
    for _ in range(int(rng.choice([0, 1, 2, 3], p=[0.45, 0.3, 0.15, 0.1]))):
        kind = str(rng.choice(OBJECT_KINDS))
        x, y = _table_point(rng, camera, edge_rate=0.3)
        result.append(random_occluder(rng, kind, x, y, float(rng.uniform(0, 360))))
    n_hands = int(rng.random() < hand_rate) + int(rng.random() < hand_rate * 0.25)
    foot = camera.position()[:2]
    for _ in range(n_hands):
        if cards and rng.random() < 0.75:
            card = cards[int(rng.integers(0, len(cards)))]
            x, y = card.x_mm + rng.normal(0, 40), card.y_mm + rng.normal(0, 40)
        else:
            x, y = _table_point(rng, camera, edge_rate=0.3)
        dx, dy = x - foot[0], y - foot[1] + 1e-3
        heading = math.degrees(math.atan2(-dx, dy)) + rng.normal(0, 35)
        result.append(random_occluder(rng, "hand", float(x), float(y), float(heading)))
    return tuple(result)


def fixed_spec(
    cards: Sequence[CardSpec],
    camera: Camera | None = None,
    occluders: Sequence[OccluderSpec] = (),
    background: BackgroundSpec | None = None,
    effects: EffectParams | None = None,
    seed: int = 0,
) -> SceneSpec:
    """A hand-built scene (straight-down camera, plain felt, no effects unless given) for tests and demos."""
    return SceneSpec(
        seed=seed,
        camera=camera or Camera(height_mm=600.0, tilt_deg=0.0, yaw_deg=0.0, hfov_deg=60.0),
        deck_index=0,
        layout="fixed",
        cards=tuple(cards),
        occluders=tuple(occluders),
        background=background or BackgroundSpec("felt", 0, seed, 0.0, (0.0, 0.0), 1.0, (0.4, 0.6, 0.3)),
        effects=effects or EffectParams.none(),
    )


# ----------------------------------------------------------------------------------------------------- render


@dataclass
class Painted:
    """What render needs to remember about a pasted object to label it once everything is on the table."""

    patch: Patch
    mask: np.ndarray  # bool, the object's full silhouette in its patch
    card_h: np.ndarray | None  # card image fractions (0-1) to image pixels; None for hands and objects
    source: CardSpec | OccluderSpec | SolidSpec
    solid: SolidRender | None = None


@dataclass
class Painting:
    """A table painted up to the camera's effects: the canvas, the id map and what was pasted, in paint order.
    Clips paint their still table once this way and composite only what moves on copies of it."""

    canvas: np.ndarray  # float32 BGR
    ids: np.ndarray  # int16: 0 = table, i + 1 = painted[i]
    painted: list[Painted]
    pieces: PieceSet


def render_scene(
    spec: SceneSpec,
    decks: Sequence[Deck | PieceSet],
    backgrounds: Sequence[TableTexture] = (),
    visible_threshold: float = VISIBLE_THRESHOLD,
) -> Scene:
    """Paint table, cards (bottom to top), solids, clutter and hands, each after its own shadow, then apply the
    camera's effects. Objects wholly outside the frame get no label; objects wholly hidden under others keep theirs
    (visible_fraction 0), because a tracker must know the buried card is still there."""
    painting = paint_scene(spec, decks, backgrounds)
    return finish_scene(spec, painting, visible_threshold)


def finish_scene(spec: SceneSpec, painting: Painting, visible_threshold: float = VISIBLE_THRESHOLD) -> Scene:
    """The camera's effects on a painted table, and the labels read off its id map."""
    glossy = np.array([0.0, *(glossiness(item.source) for item in painting.painted)], np.float32)
    image = finish(painting.canvas, glossy[painting.ids], spec.effects, spec.seed)
    objects = label_objects(spec, painting.painted, painting.ids, painting.pieces, visible_threshold, image)
    return Scene(image=image, objects=objects, spec=spec)


def paint_scene(
    spec: SceneSpec, decks: Sequence[Deck | PieceSet], backgrounds: Sequence[TableTexture] = ()
) -> Painting:
    camera = spec.camera
    frame = (camera.width, camera.height)
    table_h = camera.table_to_image()
    canvas = render_table(spec.background, camera, list(backgrounds))
    ids = np.zeros((camera.height, camera.width), np.int16)
    pieces = as_piece_set(decks[spec.deck_index % len(decks)])
    painted: list[Painted] = []
    for card in spec.cards:
        patch, card_h = card_patch(card, pieces, table_h, frame)
        px_per_mm = pixels_per_mm(card_h, pieces.pieces[card.code].size_mm)
        shift = tuple(o * px_per_mm * 0.6 for o in spec.effects.shadow_offset)
        painted.append(
            paste_object(canvas, ids, patch, len(painted) + 1, spec.effects, shift, 0.5 + 0.6 * px_per_mm, card_h, card)
        )
    light = light_direction(spec.effects, camera)
    for solid in sorted(spec.solids, key=lambda s: -camera_distance(camera, s)):  # far to near
        rendered = render_solid(solid, camera, light, frame)
        if rendered is None:
            continue
        shadow = render_shadow(solid, camera, light, frame)
        if shadow is not None:
            cast_shadow(canvas, shadow.alpha, (shadow.x0, shadow.y0), (0.0, 0.0), 0.0, spec.effects.shadow_strength)
        painted.append(
            paste_object(canvas, ids, rendered.patch, len(painted) + 1, spec.effects, (0, 0), 0.0, None, solid)
        )
        painted[-1].solid = rendered
    for occ in spec.occluders:
        patch = render_occluder(occ, table_h, frame, camera=camera)  # in 3-D: a raised hand shows parallax
        if patch is None:
            continue
        lift = occ.height_mm * camera.focal_px / camera.height_mm
        shift = tuple(o * lift * 0.12 for o in spec.effects.shadow_offset)
        painted.append(
            paste_object(canvas, ids, patch, len(painted) + 1, spec.effects, shift, 1.0 + 0.05 * lift, None, occ)
        )
    return Painting(canvas, ids, painted, pieces)


def glossiness(source: CardSpec | OccluderSpec | SolidSpec) -> float:
    """Glare falls on glossy cards and on plastic dice; wood, skin and clutter stay matte."""
    if isinstance(source, CardSpec):
        return float(source.glossy)
    return 1.0 if isinstance(source, SolidSpec) and source.kind in DIE_SIDES else 0.0


def camera_distance(camera: Camera, solid: SolidSpec) -> float:
    return float(np.linalg.norm(camera.position() - np.array([solid.x_mm, solid.y_mm, solid.z_mm])))


def light_direction(effects: EffectParams, camera: Camera) -> tuple[float, float, float]:
    """The lamp that casts the flat pieces' shadows (an image-space shift) also lights and shadows the solids: the
    shift is carried onto the table at the image centre, and the light comes from the opposite side, high up."""
    dx, dy = effects.shadow_offset
    if dx == 0 and dy == 0:
        return (-0.35, 0.45, 0.82)
    centre = np.array([[camera.width / 2, camera.height / 2], [camera.width / 2 + dx, camera.height / 2 + dy]])
    a, b = apply_homography(camera.image_to_table(), centre)
    away = (b - a) / max(float(np.linalg.norm(b - a)), 1e-9)
    elevation = 1.0 / max(math.hypot(dx, dy), 0.4)  # a long shadow is a low lamp
    light = np.array([-away[0], -away[1], elevation])
    return tuple(float(v) for v in light / np.linalg.norm(light))  # type: ignore[return-value]


def _card_image(deck: PieceSet, code: str, width_px: float) -> np.ndarray:
    """The card picture shrunk (in halving steps, cached) to about twice its size in the frame: warping straight
    from a 500-pixel card to 60 pixels would alias the index letters into noise. Colours are premultiplied by
    alpha, so the transparent rounded corners of rendered decks do not bleed a dark fringe when interpolated."""
    source = deck.image(code)
    level = 0
    while source.shape[1] / 2 ** (level + 1) >= 2.0 * width_px and level < 6:
        level += 1
    key = (str(deck.path), code, level)
    if key not in _MIP_CACHE:
        if len(_MIP_CACHE) > 600:
            _MIP_CACHE.clear()
        size = (round(source.shape[1] / 2**level), round(source.shape[0] / 2**level))
        premultiplied = source.copy()
        premultiplied[..., :3] = (source[..., :3].astype(np.uint16) * source[..., 3:] // 255).astype(np.uint8)
        _MIP_CACHE[key] = premultiplied if level == 0 else cv2.resize(premultiplied, size, interpolation=cv2.INTER_AREA)
    return _MIP_CACHE[key]


def card_homography(
    card: CardSpec, table_h: np.ndarray, size_mm: tuple[float, float] = (CARD_W_MM, CARD_H_MM)
) -> np.ndarray:
    """Piece fractions (u, v in 0-1 across the printed face, TL origin) to image pixels."""
    return table_h @ card_to_table(card.x_mm, card.y_mm, card.rotation_deg, 1, 1, size_mm)


def pixels_per_mm(card_h: np.ndarray, size_mm: tuple[float, float]) -> float:
    quad = apply_homography(card_h, np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float))
    return math.sqrt(abs(cv2.contourArea(quad.astype(np.float32))) / (size_mm[0] * size_mm[1]))


def card_patch(
    card: CardSpec, pieces: PieceSet, table_h: np.ndarray, frame: tuple[int, int]
) -> tuple[Patch, np.ndarray]:
    card_h = card_homography(card, table_h, pieces.pieces[card.code].size_mm)
    quad = apply_homography(card_h, np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float))
    width_px = float(np.linalg.norm(quad[1] - quad[0]))
    source = _card_image(pieces, pieces.side(card.code, card.face_up), width_px)
    w, h = frame
    x0, y0 = np.floor(quad.min(axis=0)).astype(int).clip([-w, -h], [2 * w, 2 * h])
    x1, y1 = (np.ceil(quad.max(axis=0)).astype(int) + 1).clip([-w, -h], [2 * w, 2 * h])
    # source pixel centres sit half a pixel inside the card's edge, so the warped card fills exactly its quad
    pixels_to_fraction = np.diag([1.0 / source.shape[1], 1.0 / source.shape[0], 1.0]) @ translation(0.5, 0.5)
    to_patch = translation(-x0, -y0) @ card_h @ pixels_to_fraction
    size = (int(max(x1 - x0, 1)), int(max(y1 - y0, 1)))
    warped = cv2.warpPerspective(
        source, to_patch, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0
    )
    warped = warped.astype(np.float32)
    alpha = warped[..., 3] / 255.0
    bgr = warped[..., :3] / np.maximum(alpha, 1.0 / 255.0)[..., None]
    return Patch(bgr=bgr, alpha=alpha, x0=int(x0), y0=int(y0)), card_h


def paste_object(
    canvas: np.ndarray,
    ids: np.ndarray,
    patch: Patch,
    object_id: int,
    effects: EffectParams,
    shadow_shift: tuple[float, ...],
    shadow_blur: float,
    card_h: np.ndarray | None,
    source: CardSpec | OccluderSpec,
) -> Painted:
    """Shadow first, then alpha-blend the object, then claim its pixels in the id map (alpha > 0.5, the same
    threshold a viewer's eye would use for 'this pixel shows the object')."""
    cast_shadow(
        canvas,
        patch.alpha,
        (patch.x0, patch.y0),
        (shadow_shift[0], shadow_shift[1]),
        shadow_blur,
        effects.shadow_strength,
    )
    mask = patch.alpha > 0.5
    ph, pw = patch.alpha.shape
    x0, y0 = max(patch.x0, 0), max(patch.y0, 0)
    x1, y1 = min(patch.x0 + pw, canvas.shape[1]), min(patch.y0 + ph, canvas.shape[0])
    if x0 < x1 and y0 < y1:
        sy, sx = slice(y0 - patch.y0, y1 - patch.y0), slice(x0 - patch.x0, x1 - patch.x0)
        alpha = patch.alpha[sy, sx, None]
        region = canvas[y0:y1, x0:x1]
        region += (patch.bgr[sy, sx] - region) * alpha
        ids[y0:y1, x0:x1][mask[sy, sx]] = object_id
    return Painted(patch=patch, mask=mask, card_h=card_h, source=source)


def _visible(ids: np.ndarray, painted: Painted, object_id: int, region: np.ndarray) -> tuple[float, float]:
    """(visible pixels, all pixels) of a boolean region of an object's patch."""
    total = float(region.sum())
    patch = painted.patch
    ph, pw = region.shape
    x0, y0 = max(patch.x0, 0), max(patch.y0, 0)
    x1, y1 = min(patch.x0 + pw, ids.shape[1]), min(patch.y0 + ph, ids.shape[0])
    if x0 >= x1 or y0 >= y1:
        return 0.0, total
    inside = region[y0 - patch.y0 : y1 - patch.y0, x0 - patch.x0 : x1 - patch.x0]
    return float(np.count_nonzero(inside & (ids[y0:y1, x0:x1] == object_id))), total


def _clipped_box(points: np.ndarray, frame: tuple[int, int]) -> tuple[float, float, float, float] | None:
    x1, y1 = np.clip(points.min(axis=0), 0, frame)
    x2, y2 = np.clip(points.max(axis=0), 0, frame)
    if x2 - x1 < 1 or y2 - y1 < 1:
        return None
    return float(x1), float(y1), float(x2), float(y2)


def region_quads(regions: Sequence[tuple[float, float, float, float]]) -> list[np.ndarray]:
    """Index regions (x0, y0, x1, y1 in piece fractions) as quads listed TL, TR, BR, BL as printed."""
    return [np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float) for x0, y0, x1, y1 in regions]


CORNER_SQUARE_MM = 6.0  # the patch around a printed corner whose visibility says whether the corner itself shows


def corner_squares(size_mm: tuple[float, float], side_mm: float = CORNER_SQUARE_MM) -> list[np.ndarray]:
    """Small squares at a piece's four printed corners (TL, TR, BR, BL), in picture fractions, inside the piece."""
    u, v = min(side_mm / size_mm[0], 0.5), min(side_mm / size_mm[1], 0.5)
    return region_quads([(0, 0, u, v), (1 - u, 0, 1, v), (1 - u, 1 - v, 1, 1), (0, 1 - v, u, 1)])


def label_objects(
    spec: SceneSpec,
    painted: list[Painted],
    ids: np.ndarray,
    pieces: PieceSet,
    threshold: float,
    image: np.ndarray | None = None,
) -> list[ObjectLabel]:
    """Labels from the id map; with the finished `image`, each face-up card's index regions also get their
    legibility (how much of the print the camera left readable)."""
    frame = (spec.camera.width, spec.camera.height)
    labels = []
    for z, item in enumerate(painted):
        source = item.source
        visible, total = _visible(ids, item, z + 1, item.mask)
        fraction = visible / total if total else 0.0
        if item.card_h is not None:
            assert isinstance(source, CardSpec)
            quad = apply_homography(item.card_h, np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float))
            box = _clipped_box(quad, frame)
            side = pieces.side(source.code, source.face_up)
            regions = region_quads(pieces.pieces[side].index)
            corners = [_corner(item, ids, z + 1, region, frame, threshold) for region in regions]
            face_up = source.face_up or pieces.pieces[source.code].back is None
            if image is not None and face_up and any(c.visible_fraction > 0 for c in corners):
                shows = ids == z + 1  # once per card: a whole frame's comparison
                for corner, region in zip(corners, pieces.pieces[side].index, strict=True):
                    if corner.visible_fraction > 0:
                        corner.legibility = (
                            round(index_legibility(image, pieces.image(side), quad, region, shows), 3)
                            if rank_printed(pieces.name, side)
                            else 0.0
                        )
            code = pieces.label(side)
            pose = (source.x_mm, source.y_mm, source.rotation_deg)
            info = pieces.pieces[source.code]
            tips = [_corner(item, ids, z + 1, square, frame, threshold) for square in corner_squares(info.size_mm)]
            labels.append(
                ObjectLabel(
                    code,
                    face_up,
                    quad.tolist(),
                    box,
                    fraction,
                    corners,
                    pose,
                    z,
                    source.code,
                    info.kind,
                    info.size_mm,
                    [round(tip.visible_fraction, 3) for tip in tips],
                )
            )
        elif item.solid is not None:
            assert isinstance(source, SolidSpec)
            labels.append(_solid_label(item, ids, z, fraction, frame, threshold, image))
        else:
            assert isinstance(source, OccluderSpec)
            ys, xs = np.nonzero(item.mask)
            pts = np.column_stack([xs + item.patch.x0, ys + item.patch.y0]).astype(float)
            box = _clipped_box(pts, frame) if len(pts) else None
            x1, y1, x2, y2 = box or (0.0, 0.0, 0.0, 0.0)
            quad = [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]
            pose = (source.x_mm, source.y_mm, source.rotation_deg)
            labels.append(ObjectLabel(source.label, False, quad, box, fraction, [], pose, z, source.kind, source.label))
    return [label for label in labels if label.box is not None]


def solid_label(solid: SolidSpec, value: int | None) -> str:
    """Class names of solids: 'd20-17', 'd6-3' (the value on top), 'cube-red', 'pawn-chrono' (the engine's words)."""
    return f"{solid.kind}-{value}" if solid.kind in DIE_SIDES else f"{solid.kind}-{solid.code}"


def _solid_label(
    item: Painted,
    ids: np.ndarray,
    z: int,
    fraction: float,
    frame: tuple[int, int],
    threshold: float,
    image: np.ndarray | None = None,
) -> ObjectLabel:
    """A die's readable part is its top face: that region is its 'index' (visible when enough of it shows); with
    the finished `image`, its legibility too (`legibility.face_legibility`)."""
    solid, rendered = item.source, item.solid
    assert isinstance(solid, SolidSpec) and rendered is not None
    box = rendered.box
    x1, y1, x2, y2 = box or (0.0, 0.0, 0.0, 0.0)
    corners = []
    if rendered.top_face is not None and solid.kind in DIE_SIDES:
        face = _region(item, ids, z + 1, rendered.top_face, frame, threshold)
        if image is not None and face.visible_fraction > 0:
            patch = rendered.patch
            shows = ids[patch.y0 : patch.y0 + patch.alpha.shape[0], patch.x0 : patch.x0 + patch.alpha.shape[1]]
            face.legibility = round(
                face_legibility(image, patch.bgr, (patch.x0, patch.y0), rendered.top_face, shows == z + 1), 3
            )
        corners.append(face)
    rot = solid.matrix
    yaw = math.degrees(math.atan2(rot[1, 0], rot[0, 0])) % 360
    return ObjectLabel(
        solid_label(solid, rendered.value),
        True,
        [[x1, y1], [x2, y1], [x2, y2], [x1, y2]],
        box,
        fraction,
        corners,
        (solid.x_mm, solid.y_mm, yaw),
        z,
        solid.code or solid.kind,
        solid.kind,
        (solid.size_mm, solid.size_mm),
    )


def _corner(
    item: Painted, ids: np.ndarray, object_id: int, region: np.ndarray, frame: tuple[int, int], threshold: float
) -> RegionLabel:
    assert item.card_h is not None
    return _region(item, ids, object_id, apply_homography(item.card_h, region), frame, threshold)


def _region(
    item: Painted, ids: np.ndarray, object_id: int, quad: np.ndarray, frame: tuple[int, int], threshold: float
) -> RegionLabel:
    """How much of an image-space polygon of an object still shows, counted in the id map."""
    mask = np.zeros(item.mask.shape, np.uint8)
    pts = np.round((quad - [item.patch.x0, item.patch.y0]) * (1 << SUBPIXEL_BITS)).astype(np.int32)
    cv2.fillPoly(mask, [pts], 1, cv2.LINE_8, SUBPIXEL_BITS)
    visible, total = _visible(ids, item, object_id, (mask > 0) & item.mask)
    fraction = visible / total if total else 0.0
    return RegionLabel(quad.tolist(), _clipped_box(quad, frame), fraction, fraction >= threshold)
