"""Scenes of dice on a game table for the dice reader (`vision.dice`): Loot Roll's cards in their usual groups,
two to twelve d20s and d6s among them, hands now and then, and the camera framed so a d20 spans DIE_PX pixels.

Most dice lie flat with one face up. Some do not, and the reader must then give no value: a die cocked against
something (tilted COCKED_DEG off flat) and a die still in the air (any rotation, a few centimetres up). Each die's
truth is `DieTruth`, read back from the rendered scene's own labels (what shows of the die and of its top face),
so a die a hand hides is known to be hidden. With `split`, dice come only in that split's designs, fonts, colours
and materials (`solids.random_solid`), so a reader measured on the test split meets dice it never saw.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from vision.dice.crops import ordered
from vision.synth.camera import Camera, apply_homography
from vision.synth.pieces import PieceSet
from vision.synth.scene import Scene, SceneSpec, random_spec
from vision.synth.solids import (
    DEFAULT_SIZE_MM,
    DIE_SIDES,
    SolidSpec,
    as_rotation,
    project_points,
    random_solid,
    rotation_about,
    world_vertices,
)

DIE_PX = (32.0, 110.0)  # a d20's height in frame pixels, as a camera set up to watch the dice frames it
MAX_DICE = 12
COCKED_DEG = (12.0, 35.0)  # a die leaning on a card's edge or another die
STATE_RATES = {"rest": 0.8, "cocked": 0.1, "air": 0.1}
TRAY_DICE = (12, 25)  # dice on a tray scene (`dice_tray_spec`)
APART = 1.6  # dice keep this many sizes between centres (they may nearly touch, never stand in one another)


@dataclass(frozen=True)
class DieTruth:
    """One die as the camera saw it. `value` is None unless it lies flat; `face_seen` is how much of its top face
    shows (a hand or a card over it hides the value even when the die shows). A cocked die has no value but still
    a face nearest to up, leaning: its corners and share seen are kept too, so the face finder can be taught where
    a leaning face lies (its lean is what tells a cocked die from a resting one, `vision.dice.level.lean_of`)."""

    kind: str
    value: int | None
    state: str  # 'rest' | 'cocked' | 'air'
    centre_px: tuple[float, float]
    size_px: float  # the longer side of its box in the frame
    seen: float  # visible share of the die
    face_seen: float  # visible share of its top face (0 when it has none: in the air)
    top_face: tuple[tuple[float, float], ...] = ()  # the top face's corners in the frame (3 on a d20, 4 on a d6),
    # in the order they go round in the image (a cocked die's: the face nearest to up); empty in the air
    legibility: float | None = None  # how much of the top face's print the camera left (`face_legibility`)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "value": self.value,
            "state": self.state,
            "centre_px": [round(v, 2) for v in self.centre_px],
            "size_px": round(self.size_px, 2),
            "seen": round(self.seen, 3),
            "face_seen": round(self.face_seen, 3),
            "top_face": [[round(v, 2) for v in p] for p in self.top_face],
            "legibility": self.legibility,
        }

    @classmethod
    def from_json(cls, data: dict) -> DieTruth:
        return cls(
            data["kind"],
            data["value"],
            data["state"],
            (float(data["centre_px"][0]), float(data["centre_px"][1])),
            float(data["size_px"]),
            float(data["seen"]),
            float(data["face_seen"]),
            tuple((float(x), float(y)) for x, y in data["top_face"]),
            data["legibility"],
        )


def frame_for_dice(camera: Camera, d20_px: float) -> Camera:
    """The camera moved along its line of sight until an 18 mm d20 at the view's centre spans `d20_px`."""
    focal = camera.width / (2 * math.tan(math.radians(camera.hfov_deg) / 2))
    distance = focal * DEFAULT_SIZE_MM["d20"] / d20_px
    return replace(camera, height_mm=distance * math.cos(math.radians(camera.tilt_deg)))


Looks = dict[str, SolidSpec]  # one player's dice: the d20 and the d6 every die of that kind looks like


def dice_scene_spec(
    rng: np.random.Generator,
    pieces: PieceSet,
    n_backgrounds: int,
    width: int,
    height: int,
    split: str | None,
    looks: Looks | None = None,
) -> tuple[SceneSpec, list[str]]:
    """A table with dice, and each die's state (in the order of the spec's solids); with `looks`, every die is
    the player's own of its kind (design, colours, size)."""
    cards = [c for c in pieces.codes if pieces.pieces[c].kind == "card"]
    size = pieces.pieces[cards[0]].size_mm
    base = random_spec(rng, 1, n_backgrounds, width, height, codes=cards, max_cards=12, piece_size_mm=size)
    d20_px = float(np.exp(rng.uniform(*np.log(DIE_PX))))
    camera = frame_for_dice(base.camera, d20_px)
    dice, states = placed_dice(rng, camera, int(rng.integers(2, MAX_DICE + 1)), split, looks, STATE_RATES)
    spec = replace(base, camera=camera, solids=tuple(dice), layout=f"dice+{base.layout}")
    return spec, states


def placed_dice(
    rng: np.random.Generator,
    camera: Camera,
    count: int,
    split: str | None,
    looks: Looks | None,
    state_rates: dict[str, float],
) -> tuple[list[SolidSpec], list[str]]:
    """Up to `count` dice where the camera sees them, APART sizes from each other, each resting, cocked or in the
    air by `state_rates`, and that state."""
    width, height = camera.width, camera.height
    to_table = camera.image_to_table()
    dice: list[SolidSpec] = []
    states: list[str] = []
    for _ in range(count):
        kind = "d6" if rng.random() < 0.35 else "d20"
        for _attempt in range(30):
            point = rng.uniform([0.08 * width, 0.1 * height], [0.92 * width, 0.9 * height])
            x, y = apply_homography(to_table, point[None])[0]
            if all(math.hypot(x - d.x_mm, y - d.y_mm) > APART * max(d.size_mm, 18.0) for d in dice):
                break
        else:
            continue
        state = str(rng.choice(list(state_rates), p=list(state_rates.values())))
        die = random_solid(rng, kind, float(x), float(y), split=split)
        if looks is not None:
            die = wearing(die, looks[kind])
        if state == "cocked":
            axis = rotation_about((0, 0, 1), float(rng.uniform(0, 2 * math.pi))) @ np.array([1.0, 0.0, 0.0])
            tilt = rotation_about(axis, math.radians(float(rng.uniform(*COCKED_DEG))))
            die = replace(die, rotation=tuple((tilt @ as_rotation(die.rotation)).ravel()))
        elif state == "air":
            turn = _random_rotation(rng)
            die = replace(die, rotation=tuple(turn.ravel()), z_mm=float(rng.uniform(8.0, 60.0)))
        dice.append(die)
        states.append(state)
    return dice, states


def dice_tray_spec(
    rng: np.random.Generator, n_backgrounds: int, width: int, height: int, split: str | None, cocked: float = 0.0
) -> tuple[SceneSpec, list[str]]:
    """Only dice on a bare table (no cards, no hands), at rest but for a `cocked` share: TRAY_DICE of them where
    the camera sees them, its light and effects as any scene's. Many top faces for the face reader, and leaning
    ones for the face finder, at a fraction of a table scene's cost (its cards are most of that)."""
    from vision.synth.backgrounds import random_background_spec
    from vision.synth.camera import random_camera
    from vision.synth.effects import random_effects

    camera = frame_for_dice(random_camera(rng, width, height), float(np.exp(rng.uniform(*np.log(DIE_PX)))))
    rates = {"rest": 1.0 - cocked, "cocked": cocked} if cocked else {"rest": 1.0}
    dice, states = placed_dice(rng, camera, int(rng.integers(*TRAY_DICE)), split, None, rates)
    spec = SceneSpec(
        seed=int(rng.integers(0, 2**31)),
        camera=camera,
        deck_index=0,
        layout="dice-tray",
        cards=(),
        occluders=(),
        background=random_background_spec(rng, n_backgrounds),
        effects=random_effects(rng),
        solids=tuple(dice),
    )
    return spec, states


def wearing(die: SolidSpec, look: SolidSpec) -> SolidSpec:
    """The die as `look`'s twin: its design, colours and size, at its own place and pose."""
    return replace(die, variant=look.variant, colour=look.colour, ink=look.ink, size_mm=look.size_mm)


def random_looks(rng: np.random.Generator, split: str) -> Looks:
    """A player's dice: one d20 and one d6 of the split's looks."""
    return {kind: random_solid(rng, kind, 0.0, 0.0, split=split) for kind in DIE_SIDES}


def face_picture(rng: np.random.Generator, look: SolidSpec, value: int, n_backgrounds: int) -> SceneSpec:
    """What a player shows the camera to enrol one face: the die alone on the table, that face up, near the middle
    of a 1280 x 720 view framed as the dice scenes are."""
    from vision.synth.scene import random_spec as table_spec

    base = table_spec(rng, 1, n_backgrounds, 1280, 720, max_cards=1, hand_rate=0.0)
    camera = frame_for_dice(base.camera, float(rng.uniform(36.0, 64.0)))
    x, y = apply_homography(camera.image_to_table(), rng.uniform([560, 300], [720, 420])[None])[0]
    die = wearing(random_solid(rng, look.kind, float(x), float(y), value), look)
    return replace(base, camera=camera, cards=(), occluders=(), solids=(die,), layout="enrol-face")


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A rotation drawn uniformly (a unit quaternion from four normals)."""
    q = rng.normal(size=4)
    return as_rotation(tuple(q / np.linalg.norm(q)))


def dice_truth(scene: Scene, states: list[str]) -> list[DieTruth]:
    """Each die of the scene that shows in the frame, matched to its spec by where it stands on the table."""
    dice = [s for s in scene.spec.solids if s.kind in DIE_SIDES]
    out = []
    for obj in scene.objects:
        if obj.kind not in DIE_SIDES or obj.box is None:
            continue
        x, y = obj.table_pose[:2]
        i = min(range(len(dice)), key=lambda k: math.hypot(dice[k].x_mm - x, dice[k].y_mm - y))
        state = states[i]
        resting = state == "rest" and bool(obj.corners)
        faced = state != "air" and bool(obj.corners)
        face = obj.corners[0].visible_fraction if faced else 0.0
        corners = tuple((float(x), float(y)) for x, y in ordered(obj.corners[0].quad)) if faced else ()
        legibility = obj.corners[0].legibility if resting else None
        value = int(obj.code.split("-")[1]) if state == "rest" else None
        centre, size = _projected(dice[i], scene.spec.camera)
        seen = float(obj.visible_fraction)
        out.append(DieTruth(obj.kind, value, state, centre, size, seen, float(face), corners, legibility))
    return out


def _projected(die: SolidSpec, camera: Camera) -> tuple[tuple[float, float], float]:
    """The die's centre in the frame and the longer side of its whole outline (unclipped by the frame's edge)."""
    pixels, _ = project_points(camera, world_vertices(die))
    centre = project_points(camera, world_vertices(die).mean(axis=0, keepdims=True))[0][0]
    extent = pixels.max(axis=0) - pixels.min(axis=0)
    return (float(centre[0]), float(centre[1])), float(extent.max())


@dataclass(frozen=True)
class RenderedDice:
    scene: Scene
    dice: list[DieTruth]
    rng: np.random.Generator


def render_dice_scene(
    index: int, seed: int, root: Path, designs: list[str], split: str | None, looks: Looks | None = None
) -> RenderedDice:
    """Scene `index` of the stream `seed`: a table of one of `designs` (Loot Roll piece folders under `root`)."""
    from vision.synth.backgrounds import table_textures
    from vision.synth.components import load_component
    from vision.synth.scene import render_scene

    rng = np.random.default_rng([seed, index, 21])
    pieces = load_component(Path(root) / designs[int(rng.integers(0, len(designs)))])
    backgrounds = table_textures()
    spec, states = dice_scene_spec(rng, pieces, len(backgrounds), 1280, 720, split, looks)
    scene = render_scene(spec, [pieces], backgrounds)
    return RenderedDice(scene, dice_truth(scene, states), rng)


def render_dice_tray(index: int, seed: int, table: Path, split: str | None, cocked: float = 0.0) -> RenderedDice:
    """Tray scene `index` of the stream `seed` (`dice_tray_spec`); `table`: any Loot Roll piece folder (the scene
    holds none of its cards; loaded once per process)."""
    from vision.synth.backgrounds import table_textures
    from vision.synth.scene import render_scene

    rng = np.random.default_rng([seed, index, 22])
    backgrounds = table_textures()
    pieces = _table_pieces(str(table))
    spec, states = dice_tray_spec(rng, len(backgrounds), 1280, 720, split, cocked)
    scene = render_scene(spec, [pieces], backgrounds)
    return RenderedDice(scene, dice_truth(scene, states), rng)


def write_face_pictures(folder: Path, looks: Looks, seed: int, table: PieceSet) -> None:
    """An enrolment folder for `looks` (`vision.dice.enrol`): d20/1.png ... d20/20.png, d6/1.png ... d6/6.png
    (`table`: any piece set; the pictures hold no card of it)."""
    from vision.synth.backgrounds import table_textures
    from vision.synth.scene import render_scene

    backgrounds = table_textures()
    for kind, look in looks.items():
        (folder / kind).mkdir(parents=True, exist_ok=True)
        for value in range(1, DIE_SIDES[kind] + 1):
            rng = np.random.default_rng([seed, value, DIE_SIDES[kind], 22])
            scene = render_scene(face_picture(rng, look, value, len(backgrounds)), [table], backgrounds)
            cv2.imwrite(str(folder / kind / f"{value}.png"), scene.image)


@functools.cache
def _table_pieces(folder: str) -> PieceSet:
    """A tray's piece set, loaded (and its pictures checked) once per process."""
    from vision.synth.components import load_component

    return load_component(Path(folder))
