"""Scenes of The LOOP's board for counting cubes: every Era holds 0-6 rift cubes and a few energy cubes, some
scattered, some pushed together in touching rows, now and then a hand over the ring, and the usual clutter of a game
in progress (clone tokens, vortex and mission tiles, pawns, cards around the board).

`game_scenes._the_loop_table` drops cubes anywhere in an Era, independently, so two may stand inside one another:
fine for teaching a detector what a cube looks like, useless for asking "how many are there". Here no two cubes
share space (scattered ones keep a cube's diagonal apart, touching ones share a face), so the truth per Era is a
count a person would agree with. Each scene's truth is `EraTruth` per Era: the cubes whose centre lies in it, and
how much of each the camera sees (a cube a hand hides wholly cannot be counted by anyone).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from vision.board.layout import ERA_CODES
from vision.synth.camera import Camera, apply_homography, card_to_table
from vision.synth.game_scenes import era_polygons
from vision.synth.occluders import random_occluder
from vision.synth.pieces import PieceSet
from vision.synth.scene import CardSpec, Scene, SceneSpec, random_spec
from vision.synth.solids import SolidSpec, agent_codes, random_solid, rotation_about

MAX_RIFT = 6  # the range: 0-6 cubes in an Era
RING_SHARE = (0.4, 0.85)  # a camera set up to watch the board frames the ring of Eras at this share of its height
RING_MM = 240.0  # the ring's width on a 420 mm board (board fractions 0.22-0.78)
TOUCH_GAP = 1.01  # touching cubes: centres this many cube sides apart, faces parallel
APART = 1.5  # scattered cubes: centres at least this many sides apart (more than a diagonal: never inside another)


@dataclass(frozen=True)
class EraTruth:
    era: str  # the Era's code (its ring sector on the board)
    polygon_px: np.ndarray  # the sector in frame pixels
    in_frame: float  # share of the sector's area inside the frame
    cubes: tuple[tuple[str, float], ...]  # (colour, visible share) of every cube whose centre lies in the sector

    def count(self, colour: str) -> int:
        return sum(1 for c, _ in self.cubes if c == colour)


def board_code(pieces: PieceSet) -> str:
    code = next((c for c, info in pieces.pieces.items() if info.kind == "board"), None)
    if code is None:
        raise ValueError(f"{pieces.path}: piece set has no board (a piece of kind 'board' in pieces.json)")
    return code


def cube_scene_spec(
    rng: np.random.Generator,
    pieces: PieceSet,
    n_backgrounds: int,
    width: int,
    height: int,
    set_index: int,
    mission_rng: np.random.Generator | None = None,
) -> tuple[SceneSpec, dict[str, np.ndarray], tuple[SpotTile, ...]]:
    """A board scene, its Era sectors in table millimetres (keyed by Era code), and with `mission_rng` the mission
    tiles on their spots (`spot_tiles`, drawn from that stream alone, so the rest of the scene is the one drawn
    without them)."""
    code = board_code(pieces)
    size = pieces.pieces[code].size_mm
    base = random_spec(rng, 1, n_backgrounds, width, height, codes=_flat(pieces, "card"), deck_index=set_index)
    camera = _framing(base.camera, float(rng.uniform(*RING_SHARE)) / (max(size) / 420.0))
    bx, by = (float(v) for v in rng.normal(0, 25, 2))
    board = CardSpec(code, True, bx, by, float(rng.uniform(0, 360)), bool(rng.random() < 0.5))
    to_table = card_to_table(board.x_mm, board.y_mm, board.rotation_deg, 1, 1, size)
    eras = dict(zip(ERA_CODES, era_polygons(pieces, to_table, board, size), strict=False))
    cubes: list[SolidSpec] = []
    for polygon in eras.values():
        cubes += _era_cubes(rng, polygon, cubes)
    tokens = []
    for piece in _ring_pieces(rng, pieces, int(rng.integers(0, 6))):
        point = _free_point(rng, list(eras.values())[int(rng.integers(0, len(eras)))], cubes, 14.0)
        if point is not None:
            tokens.append(CardSpec(str(piece), bool(rng.random() < 0.85), *point, float(rng.uniform(0, 360)), False))
    pawns = []
    for agent in rng.permutation(np.array(agent_codes(), dtype=object))[: int(rng.integers(0, 4))]:
        point = _free_point(rng, list(eras.values())[int(rng.integers(0, len(eras)))], cubes + pawns, 14.0)
        if point is not None:  # (pawns keep apart: two never stand in one another)
            pawns.append(random_solid(rng, "pawn", *point, code=str(agent)))
    far = [c for c in base.cards if math.hypot(c.x_mm - bx, c.y_mm - by) > 0.6 * max(size)]
    hands = [o for o in base.occluders if o.kind != "hand"]
    for _ in range(int(rng.random() < 0.35) + int(rng.random() < 0.1)):
        x, y = _point_in(rng, list(eras.values())[int(rng.integers(0, len(eras)))])
        x, y = x + float(rng.normal(0, 25)), y + float(rng.normal(0, 25))
        hands.append(random_occluder(rng, "hand", x, y, _reaching(rng, camera, x, y)))
    tiles: list[CardSpec] = []
    progress: list[SolidSpec] = []
    spots: tuple[SpotTile, ...] = ()
    if mission_rng is not None:
        spots = spot_tiles(mission_rng, pieces, to_table)
        tiles, progress = _spot_pieces(mission_rng, spots)
        if spots and mission_rng.random() < 0.25:  # a hand reaching for a mission
            x, y = spots[int(mission_rng.integers(0, len(spots)))].centre
            heading = _reaching(mission_rng, camera, x, y)
            hands.append(random_occluder(mission_rng, "hand", x + float(mission_rng.normal(0, 20)), y, heading))
    spec = replace(
        base,
        camera=camera,
        cards=(board, *far, *tokens, *tiles),
        solids=(*cubes, *pawns, *progress),
        occluders=tuple(hands),
        layout="board-cubes" + ("+missions" if spots else ""),
    )
    return spec, eras, spots


def _reaching(rng: np.random.Generator, camera: Camera, x: float, y: float) -> float:
    """The heading of a hand reaching from the camera's side of the table towards (x, y), give or take 35 degrees."""
    foot = camera.position()[:2]
    return math.degrees(math.atan2(-(x - foot[0]), y - foot[1] + 1e-3)) + float(rng.normal(0, 35))


@dataclass(frozen=True)
class SpotTile:
    """What lies on one Era's mission spot: nothing, a mission tile face down, or one face up with progress cubes
    on some of its slots."""

    era: str
    spot_mm: np.ndarray  # the printed spot's corners, table millimetres
    code: str | None  # the tile's mission (M01...), None for an empty spot
    face_up: bool
    x_mm: float = 0.0  # the tile's centre and turn on the table
    y_mm: float = 0.0
    rotation_deg: float = 0.0
    progress: tuple[tuple[str, float, float, int], ...] = ()  # (colour, table x, y, slot) of each progress cube

    @property
    def centre(self) -> tuple[float, float]:
        return float(self.spot_mm[:, 0].mean()), float(self.spot_mm[:, 1].mean())


SPOT_STATES = ("empty", "back", "front")
SPOT_WEIGHTS = (0.15, 0.4, 0.45)  # a game shows mostly tiles face down, two face up; fronts weigh more to be read


def spot_tiles(rng: np.random.Generator, pieces: PieceSet, to_table: np.ndarray) -> tuple[SpotTile, ...]:
    """A tile (or none) on each Era's mission spot, distinct missions, laid by hand: a few mm off the spot's
    centre, a few degrees off square, in any of four turns; a face-up tile holds 0 to all of its progress cubes on
    randomly chosen slots. A piece set that is not one of the art module's designs has no known spots: none."""
    from games.the_loop.catalogue import load_catalogue
    from vision.synth.art.the_loop import mission_regions, mission_slot_boxes
    from vision.synth.game_scenes import design_number

    number = design_number(pieces)
    if number is None:
        return ()
    slots = {code: m.slots for code, m in load_catalogue().missions.items() if code in pieces.pieces}
    codes = [str(c) for c in rng.permutation(np.array(sorted(slots), dtype=object))]
    out = []
    for era, square in mission_regions(number).items():
        spot = apply_homography(to_table, np.array(square, float))
        state = str(rng.choice(SPOT_STATES, p=SPOT_WEIGHTS))
        if state == "empty" or not codes:
            out.append(SpotTile(era, spot, None, False))
            continue
        code = codes.pop()
        edge = spot[1] - spot[0]
        turn = math.degrees(math.atan2(edge[1], edge[0])) + 90.0 * int(rng.integers(0, 4)) + float(rng.normal(0, 3))
        x, y = spot.mean(axis=0) + rng.normal(0, 1.5, 2)
        cubes: tuple[tuple[str, float, float, int], ...] = ()
        if state == "front":
            to_tile = card_to_table(float(x), float(y), turn, 1, 1, pieces.pieces[code].size_mm)
            boxes = mission_slot_boxes(len(slots[code]))
            filled = sorted(rng.choice(len(boxes), int(rng.integers(0, len(boxes) + 1)), replace=False).tolist())
            centres = np.array([((boxes[k][0] + boxes[k][2]) / 2, (boxes[k][1] + boxes[k][3]) / 2) for k in filled])
            points = apply_homography(to_tile, centres) if filled else np.zeros((0, 2))
            cubes = tuple(
                (slots[code][k], float(px), float(py), int(k)) for k, (px, py) in zip(filled, points, strict=True)
            )
        out.append(SpotTile(era, spot, code, state == "front", float(x), float(y), turn, cubes))
    return tuple(out)


def _spot_pieces(rng: np.random.Generator, spots: Sequence[SpotTile]) -> tuple[list[CardSpec], list[SolidSpec]]:
    """The tiles and progress cubes `spot_tiles` drew, as the renderer takes them (cubes set square on their
    slots, as a player drops them, a little askew)."""
    tiles, cubes = [], []
    for spot in spots:
        if spot.code is None:
            continue
        tiles.append(CardSpec(spot.code, spot.face_up, spot.x_mm, spot.y_mm, spot.rotation_deg, False))
        for colour, x, y, _ in spot.progress:
            turn = rotation_about((0, 0, 1), math.radians(spot.rotation_deg + float(rng.normal(0, 6))))
            cube = random_solid(rng, "cube", x + float(rng.normal(0, 0.7)), y + float(rng.normal(0, 0.7)), code=colour)
            cubes.append(replace(cube, size_mm=float(rng.uniform(8.0, 9.5)), rotation=tuple(turn.ravel())))
    return tiles, cubes


def _ring_pieces(rng: np.random.Generator, pieces: PieceSet, n: int) -> list[str]:
    """`n` flat pieces for the ring, a kind drawn first (half of them clone tokens, a third mission tiles, the rest
    vortex tiles): drawn from all codes alike, the one vortex tile among 39 codes would hardly ever be seen, and a
    vortex is the piece that can lose the game."""
    flat = _flat(pieces, "token", "tile")
    kinds = {
        "vortex": [c for c in flat if c == "VORTEX"],
        "mission": [c for c in flat if pieces.pieces[c].kind == "tile" and c != "VORTEX"],
        "clone": [c for c in flat if pieces.pieces[c].kind == "token"],
    }
    out = []
    for _ in range(n):
        kind = str(rng.choice(["clone", "mission", "vortex"], p=[0.5, 0.3, 0.2]))
        if kinds[kind]:
            out.append(str(kinds[kind][int(rng.integers(0, len(kinds[kind])))]))
    return out


def _framing(camera: Camera, share: float) -> Camera:
    """The camera moved along its line of sight until the ring spans `share` of the frame's height."""
    vfov = 2 * math.atan(math.tan(math.radians(camera.hfov_deg) / 2) * camera.height / camera.width)
    distance = RING_MM / (share * 2 * math.tan(vfov / 2))
    return replace(camera, height_mm=distance * math.cos(math.radians(camera.tilt_deg)))


@dataclass(frozen=True)
class RenderedBoard:
    scene: Scene
    pieces: PieceSet
    frame_from_board: np.ndarray  # board fractions -> frame pixels, the truth
    eras: dict[str, dict]  # Era -> {"in_frame": share, "counts": {colour: n}, "least_seen": least visible share}
    rng: np.random.Generator  # the scene's stream, drawn on by callers that need more (a registration's error)
    # every token, tile and pawn the counter reads: (label in cubes.PIECES, table x, y mm, visible share)
    on_ring: tuple[tuple[str, float, float, float], ...] = ()
    spots: tuple[SpotTruth, ...] = ()  # the mission spots, when the scene was drawn with them


@dataclass(frozen=True)
class SpotTruth:
    """One mission spot as the camera sees it: what lies there, its progress cubes by colour, how much of the tile
    shows and how much of its least seen cube."""

    era: str
    tile: str | None  # the mission's code face up, BACK_MISSION face down, None when the spot is empty
    progress: dict[str, int]
    tile_seen: float  # the share of the tile that shows; of an empty spot, the share of the spot
    least_seen: float
    spot_in_frame: float  # share of the spot's corners inside the frame (1: all four)
    filled: tuple[int, ...] = ()  # the slots that hold a cube (their order in the mission's slots)


def render_board_scene(
    index: int, seed: int, root: Path, designs: Sequence[str], missions: bool = False
) -> RenderedBoard:
    """Scene `index` of the stream `seed`, of one of `designs` (folders under `root`), with its truth; with
    `missions`, mission tiles lie on their spots (`spot_tiles`)."""
    from vision.board.cubes import COLOURS
    from vision.synth.backgrounds import table_textures
    from vision.synth.components import load_component
    from vision.synth.scene import finish_scene, paint_scene

    rng = np.random.default_rng([seed, index])
    pieces = load_component(Path(root) / designs[int(rng.integers(0, len(designs)))])
    backgrounds = table_textures()
    mission_rng = np.random.default_rng([seed, index, 7]) if missions else None
    spec, eras, spots = cube_scene_spec(rng, pieces, len(backgrounds), 1280, 720, 0, mission_rng)
    painting = paint_scene(spec, [pieces], backgrounds)
    scene = finish_scene(spec, painting)
    board = spec.cards[0]
    size = pieces.pieces[board_code(pieces)].size_mm
    truth = spec.camera.table_to_image() @ card_to_table(board.x_mm, board.y_mm, board.rotation_deg, 1, 1, size)
    info = {
        t.era: {
            "in_frame": t.in_frame,
            "counts": {c: t.count(c) for c in COLOURS},
            "least_seen": min((v for _, v in t.cubes), default=1.0),
        }
        for t in era_truth(scene, eras)
    }
    on_ring = tuple(
        (label, float(o.table_pose[0]), float(o.table_pose[1]), float(o.visible_fraction))
        for o in scene.objects
        if (label := piece_class(o.kind, o.subtype)) is not None
    )
    return RenderedBoard(scene, pieces, truth, info, rng, on_ring, tuple(spot_truth(scene, spots, painting.ids)))


def spot_truth(scene: Scene, spots: Sequence[SpotTile], ids: np.ndarray) -> list[SpotTruth]:
    """Each spot's truth from the rendered scene's labels (tiles and cubes found by where they were put); an empty
    spot is seen as much as its pixels show the board (the first piece painted: id 1 in the painting's `ids`)."""
    w, h = scene.spec.camera.width, scene.spec.camera.height
    to_image = scene.spec.camera.table_to_image()
    out = []
    for spot in spots:
        corners = apply_homography(to_image, spot.spot_mm)
        inside = float(np.mean([(0 <= x < w and 0 <= y < h) for x, y in corners]))
        mask = np.zeros((h, w), np.uint8)
        cv2.fillPoly(mask, [np.round(corners).astype(np.int32)], 1)
        tile_seen = float((ids[mask.astype(bool)] == 1).mean()) if mask.any() else 0.0
        least = 1.0
        for o in scene.objects:
            at = (float(o.table_pose[0]), float(o.table_pose[1]))
            if o.kind == "tile" and spot.code is not None and math.dist(at, (spot.x_mm, spot.y_mm)) < 1e-3:
                tile_seen = float(o.visible_fraction)
            if o.kind == "cube" and any(math.dist(at, (x, y)) < 3.0 for _, x, y, _ in spot.progress):
                least = min(least, float(o.visible_fraction))
        tile = None if spot.code is None else (spot.code if spot.face_up else "BACK_MISSION")
        progress = {c: sum(1 for colour, *_ in spot.progress if colour == c) for c in ("red", "green")}
        filled = tuple(sorted(k for *_, k in spot.progress))
        out.append(SpotTruth(spot.era, tile, progress, tile_seen, least, inside, filled))
    return out


def piece_class(kind: str, identity: str) -> str | None:
    """The heat map (a `PIECES` label) a token, tile or pawn is taught in, from its kind and its code; None for a
    piece the counter does not read."""
    if kind == "pawn":
        label = f"PAWN:{identity}"
    elif identity == "VORTEX":
        label = "VORTEX"
    elif kind == "tile" and identity.startswith("M"):
        label = "MISSION"
    elif kind == "token" and identity[:3] in ERA_CODES:
        label = f"CLONE:{identity[:3]}"
    else:
        return None
    from vision.board.cubes import PIECES

    return label if label in PIECES else None


def era_truth(scene: Scene, eras: dict[str, np.ndarray]) -> list[EraTruth]:
    """Per Era, the cubes in it and how much of each shows, from the rendered scene's labels."""
    to_image = scene.spec.camera.table_to_image()
    w, h = scene.spec.camera.width, scene.spec.camera.height
    frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    cubes = [o for o in scene.objects if o.kind == "cube"]
    out = []
    for era, polygon in eras.items():
        px = apply_homography(to_image, polygon).astype(np.float32)
        hull = cv2.convexHull(px)  # a sector is concave; its hull's share in the frame is the sector's, near enough
        area = abs(cv2.contourArea(hull))
        inside, _ = cv2.intersectConvexConvex(hull, frame)
        contour = polygon.astype(np.float32).reshape(-1, 1, 2)
        mine = tuple(
            (o.subtype, float(o.visible_fraction))
            for o in cubes
            if cv2.pointPolygonTest(contour, (float(o.table_pose[0]), float(o.table_pose[1])), False) >= 0
        )
        out.append(EraTruth(era, px, float(inside / area) if area > 0 else 0.0, mine))
    return out


def _flat(pieces: PieceSet, *kinds: str) -> list[str]:
    return [c for c in pieces.codes if pieces.pieces[c].kind in kinds]


def _era_cubes(rng: np.random.Generator, polygon: np.ndarray, placed: list[SolidSpec]) -> list[SolidSpec]:
    """0-6 rift cubes, 0-2 energy cubes, now and then a blue one; a third of the time some of them in a touching
    row."""
    colours = ["red"] * int(rng.integers(0, MAX_RIFT + 1)) + ["green"] * int(rng.choice([0, 0, 1, 2]))
    colours += ["blue"] * int(rng.random() < 0.15)
    colours = [str(c) for c in rng.permutation(np.array(colours, dtype=object))] if colours else []
    out: list[SolidSpec] = []
    if len(colours) >= 2 and rng.random() < 0.4:
        k = int(rng.integers(2, min(len(colours), 4) + 1))
        out += _touching_row(rng, polygon, colours[:k], placed + out)
        colours = colours[len(out) :]
    for colour in colours:
        side = float(rng.uniform(8.0, 10.0))
        point = _free_point(rng, polygon, placed + out, APART * side)
        if point is not None:  # an Era too full for one more: it holds one fewer than drawn
            out.append(replace(random_solid(rng, "cube", *point, code=colour), size_mm=side))
    return out


def _touching_row(
    rng: np.random.Generator, polygon: np.ndarray, colours: list[str], placed: list[SolidSpec]
) -> list[SolidSpec]:
    """Cubes of one size pushed together face to face along a line, all turned alike."""
    side = float(rng.uniform(8.0, 10.0))
    yaw = float(rng.uniform(0, 2 * math.pi))
    step = np.array([math.cos(yaw), math.sin(yaw)]) * side * TOUCH_GAP
    contour = polygon.astype(np.float32).reshape(-1, 1, 2)
    for _ in range(50):
        start = np.array(_point_in(rng, polygon))
        centres = [start + i * step for i in range(len(colours))]
        if all(cv2.pointPolygonTest(contour, (float(x), float(y)), True) > side for x, y in centres) and all(
            _clear(c, placed, APART * side) for c in centres
        ):
            turn = rotation_about((0, 0, 1), yaw)
            return [
                replace(
                    random_solid(rng, "cube", float(x), float(y), code=c), size_mm=side, rotation=tuple(turn.ravel())
                )
                for (x, y), c in zip(centres, colours, strict=True)
            ]
    return []


def _clear(point: np.ndarray, placed: list[SolidSpec], gap: float) -> bool:
    return all(math.hypot(point[0] - s.x_mm, point[1] - s.y_mm) >= max(gap, APART * s.size_mm) for s in placed)


def _free_point(
    rng: np.random.Generator, polygon: np.ndarray, placed: list[SolidSpec], gap: float
) -> tuple[float, float] | None:
    for _ in range(200):
        point = _point_in(rng, polygon)
        if _clear(np.array(point), placed, gap):
            return point
    return None


def _point_in(rng: np.random.Generator, polygon: np.ndarray, margin: float = 6.0) -> tuple[float, float]:
    """A random point at least `margin` mm inside a (possibly concave) polygon."""
    low, high = polygon.min(axis=0), polygon.max(axis=0)
    contour = polygon.astype(np.float32).reshape(-1, 1, 2)
    for _ in range(200):
        x, y = rng.uniform(low, high)
        if cv2.pointPolygonTest(contour, (float(x), float(y)), True) > margin:
            return float(x), float(y)
    centre = polygon.mean(axis=0)
    return float(centre[0]), float(centre[1])
