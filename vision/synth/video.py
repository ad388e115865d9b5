"""Full-game videos with per-frame ground truth, from a list of table layouts (no rules here: the moves arrive as
text and the tables they lead to as lists of `PlacedCard`s, laid out by the caller's table module from a game
engine's state: `ltl_table` for Loot the Loop, `loop_table` for LOOP, `bag_table` for Bag-O-Loot).

Any piece set plays (a deck directory is adapted by `pieces.as_piece_set`); every card is drawn at its own printed
size from the set. A layout lists every card of the game at every stage, so a card is followed from layout to
layout by its identity (`PlacedCard.key`: its code, or `uid` where several copies share a code). A card `held` in a
player's hand is off the table: it is neither drawn nor labelled, and when it is played it is carried in from its
held pose (the seat's edge of the table) and taken back there when it is picked up.

Timeline: a still table, then for each action a hand reaches in, the cards travel from one table state to the next
(an action may have several stages, e.g. explore then nab), the hand leaves, and the table stays still for
0.5-1.5 s. Every frame inside an action's span is `moving`; every frame outside is a still table. A carried card
rises a little off the table (drawn through the camera, so it looms larger and its shadow falls further away); a
card turned over is squashed across its flip axis down to an edge-on sliver and opens up showing its other side,
the picture and its `face_up` label switching together at the midpoint.

Speed: what is constant in a video is drawn once per worker: the table (lighting, background and camera are the
video's), and the cards that do not move during a stretch of frames, kept as a cached layer (canvas and id map)
on which only the moving cards and the hand are painted. A still stretch is rendered once and repeated with fresh
sensor noise (and the camera drift applied as a sub-pixel shift of the frame and of the labels). Caching changes
no pixel: every frame is painted by the same operations in the same order, cached or not, so the output is
byte-identical whatever the number of processes. Frames render in a pool of worker processes in fixed jobs; each
frame's noise is seeded by (seed, frame).

Files: video.mp4, H.264 (yuv420p, through the ffmpeg binary that the `imageio-ffmpeg` wheel ships; OpenCV's
'mp4v' when that package is missing, several times larger); actions.json, one entry per action: {"action",
"start_frame", "end_frame" (inclusive), "t_start", "t_end"}; states.jsonl.gz (read it with `read_states`), one
JSON line per frame: {"frame", "t", "moving", "action" (index or null), "hand_visible", "hands" (boxes x1 y1 x2 y2),
"cards"}, cards in paint order (bottom to top), each {"code" (its identity, even face down), "face_up", "zone",
"id" (only for copies that share a code: which physical card), "index" (see the table modules), "carried" (in
the hand; zone and index are then where it is going), "flipping" (being turned over), "pose" (x mm, y mm,
rotation deg on the table, of the point under its centre), "quad" (TL TR BR BL image pixels as printed, as drawn:
lifted and squashed while carried), "visible" (fraction of its pixels in view)}; meta.json: game, players, seed,
deck (the piece set), policy, fps, size, frames, codec, camera, final score and scores, engine and commit.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import subprocess
import sys
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import Pool
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
from tqdm import tqdm

from vision.synth.backgrounds import load_table_textures, random_background_spec, render_table
from vision.synth.camera import Camera, apply_homography, pose_matrix, translation
from vision.synth.components import load_component
from vision.synth.deckdir import Deck
from vision.synth.effects import finish, noise_field, random_effects
from vision.synth.occluders import OccluderSpec, Patch, random_occluder, render_occluder
from vision.synth.pieces import PieceSet, as_piece_set
from vision.synth.scene import CardSpec, SceneSpec, card_homography, card_patch, paste_object, pixels_per_mm

STILL_S = (0.5, 1.5)
MOVE_S = (0.4, 1.2)
REACH_S = (0.25, 0.45)  # the hand coming in, and going out
FLIP_SLIDE_MM = 45.0  # a flipped card is slid out sideways, turned under the hand, and slid back
MAX_BULGE_MM = 70.0
CARRY_LIFT_MM = 12.0  # how high a carried card rises at mid-carry
FLIP_LIFT_MM = 18.0  # and how much higher while it is turned over (its raised edge lifts the middle)
MIN_SQUASH = 0.03  # edge-on: a sliver of card stock, never a zero-width (singular) picture
HAND_REACH_MM = 95.0  # wrist to the card under the fingers
HAND_AWAY_MM = 650.0  # how far back the wrist starts and ends (the arm then leaves the frame)
FLIP_GRIP_MM = 75.0  # the hand further back when it turns a card over: fingertips at the card's near edge
FRAME_MARGIN_MM = 45.0
CAMERA_HEIGHT_MM = (380.0, 700.0)  # a phone or webcam on a stand over a one-player layout
FALLBACK_HEIGHT_MM = 900.0
MOTION_JOB_FRAMES = 12
STACK_SAMPLE = 5
LAYER_CACHE = 3  # static card layers kept per worker: the reach-in, the move and the reach-out of one stage
CARD_SHADOW_MM = 0.6  # a card lying flat: its shadow is offset as if it stood this high (scene.py's rim)
LIFT_SHADOW = 0.12  # shadow shift per pixel of height, as for hands in scene.py
NOISE_BANK = 4  # sensor noise fields per video
NOISE_PAD = 32  # each frame crops its noise at an offset of up to twice this
STATES_FILE = "states.jsonl.gz"
CRF = 21  # H.264 quality: 18 is visually lossless, 23 ffmpeg's default; table video compresses very well
PRESET = "veryfast"
FALLBACK_FOURCC = "mp4v"

_CONTEXT: dict[str, object] = {}


@dataclass(frozen=True)
class PlacedCard:
    """One card's place on the table (or in a hand) in one layout."""

    code: str
    face_up: bool
    zone: str  # where it lies, named by its table module ("deck", "seat 2 played", ...)
    index: int  # its place in that zone (0 = top of a pile, or first in a row; see the table module)
    x_mm: float
    y_mm: float
    rotation_deg: float
    held: bool = False  # in a player's hand: off the table, not drawn or labelled; the pose is where it is held
    buried: bool = False  # deep in a squared stack: hidden by the cards on it, so frames may skip painting it
    uid: str = ""  # which physical card, when several copies share one code ("" = the code says it)

    @property
    def key(self) -> str:
        return self.uid or self.code


Layout = Sequence[PlacedCard]  # every card of the game, in paint order (bottom to top)


@dataclass(frozen=True)
class GameStep:
    """One action as text and the layout after each of its physical stages (the last is the table after it).
    `reach_from_deg` is where the acting player's hand comes from: 0 from the camera's side, 90 from the right,
    180 from across the table (the heading `hand_pose` uses)."""

    action: str
    stages: tuple[Layout, ...]
    reach_from_deg: float = 0.0


@dataclass(frozen=True)
class VideoLook:
    """Every per-video random choice: one camera, one table, one light, one player's hand, one drift."""

    seed: int
    camera: Camera
    scene: SceneSpec  # background and effects (noise off: added per frame); cards and hands are set per frame
    hand: OccluderSpec
    glossy: bool
    noise_sigma: float
    drift_px: tuple[float, float]  # total camera drift over the video, in pixels


@dataclass(frozen=True)
class FramePlan:
    """Cards at `s` (0-1) of the way from table `a` to table `b`; a hand at `reach` (1 = on the cards) or none."""

    a: int
    b: int
    s: float
    reach: float | None
    heading_deg: float
    action: int | None  # index into the steps while the frame is part of an action's span


@dataclass(frozen=True)
class CardFrame:
    """A card as seen in one frame. `squash` is its printed size across `flip_axis` (1 flat, near 0 edge-on)."""

    card: PlacedCard  # pose and face as seen in this frame; zone and index are where it is going
    carried: bool
    lift_mm: float = 0.0
    squash: float = 1.0
    flip_axis: str = ""  # "" when not being turned over, else "long" (over its long edge) or "short" (end over end)

    @property
    def flipping(self) -> bool:
        return bool(self.flip_axis)


# ----------------------------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class TableView:
    """What the camera must frame: the table area every layout can occupy (x0, y0, x1, y1 mm, with room for the
    cards carried above it) and the camera heights to draw from (a bigger table needs a higher camera)."""

    extent_mm: tuple[float, float, float, float]
    heights_mm: tuple[float, float] = CAMERA_HEIGHT_MM
    game: str = "loot-the-loop"


def random_look(seed: int, size: tuple[int, int], n_photos: int, drift_px: float, view: TableView) -> VideoLook:
    """Camera blur is kept (a soft webcam stays soft); per-scene motion blur and JPEG are off, because the table
    is mostly still and the video codec does its own compression."""
    rng = np.random.default_rng([seed, 1])
    camera = fitting_camera(rng, size, view)
    effects = replace(random_effects(rng), noise_sigma=0.0, jpeg_quality=0, motion=(0.0, 0.0))
    background = random_background_spec(rng, n_photos)
    scene = SceneSpec(seed, camera, 0, view.game, (), (), background, effects)
    hand = random_occluder(rng, "hand", 0.0, 0.0, 0.0)
    angle = rng.uniform(0, 2 * math.pi)
    amount = rng.uniform(0.3, 1.0) * drift_px
    return VideoLook(
        seed=seed,
        camera=camera,
        scene=scene,
        hand=hand,
        glossy=bool(rng.random() < 0.6),
        noise_sigma=float(rng.uniform(1.0, 5.0)),
        drift_px=(float(math.cos(angle) * amount), float(math.sin(angle) * amount)),
    )


def fitting_camera(rng: np.random.Generator, size: tuple[int, int], view: TableView, tries: int = 60) -> Camera:
    """A phone or webcam on a stand at the player's side, drawn until the whole layout (and the room cards need
    while carried) is in view; straight down from high enough if no draw fits."""
    x0, y0, x1, y1 = view.extent_mm
    corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    for _ in range(tries):
        camera = Camera(
            height_mm=float(rng.uniform(*view.heights_mm)),
            tilt_deg=float(rng.uniform(0, 30)),
            yaw_deg=float(rng.normal(0, 10)),
            hfov_deg=float(rng.uniform(55, 72)),
            width=size[0],
            height=size[1],
        )
        pts = apply_homography(camera.table_to_image(), corners)
        if (pts >= 0).all() and (pts[:, 0] < size[0]).all() and (pts[:, 1] < size[1]).all():
            return camera
    return overhead_camera(size, view.extent_mm)


def overhead_camera(size: tuple[int, int], extent: tuple[float, float, float, float], hfov_deg: float = 65.0) -> Camera:
    """Straight down over the origin, high enough that the extent fits (never lower than FALLBACK_HEIGHT_MM)."""
    x0, y0, x1, y1 = extent
    half_w = math.tan(math.radians(hfov_deg) / 2.0)
    half_h = half_w * size[1] / size[0]
    need = max(max(-x0, x1) / half_w, max(-y0, y1) / half_h) * 1.02
    height = max(FALLBACK_HEIGHT_MM, need)
    return Camera(height_mm=height, tilt_deg=0.0, yaw_deg=0.0, hfov_deg=hfov_deg, width=size[0], height=size[1])


def frame_count(rng: np.random.Generator, span: tuple[float, float], fps: int) -> int:
    return max(1, round(float(rng.uniform(*span)) * fps))


def plan_frames(
    n_stages_per_step: Sequence[int], seed: int, fps: int, reach_from_deg: Sequence[float] | None = None
) -> tuple[list[FramePlan], list[tuple[int, int]]]:
    """The frame plan and each action's (first, last) frame. Table 0 is the start; step k's stages are the next
    tables in order. Durations are drawn from their own stream, so they do not depend on the look. The hand of
    step k comes from `reach_from_deg[k]` (default 0, the camera's side), give or take a natural 15 degrees."""
    rng = np.random.default_rng([seed, 2])
    plans = [FramePlan(0, 0, 0.0, None, 0.0, None)] * frame_count(rng, STILL_S, fps)
    spans = []
    table = 0
    bases = list(reach_from_deg) if reach_from_deg is not None else [0.0] * len(n_stages_per_step)
    for k, n_stages in enumerate(n_stages_per_step):
        first = len(plans)
        heading = bases[k] + float(rng.normal(0, 15))
        n_in = frame_count(rng, REACH_S, fps)
        plans += [FramePlan(table, table + 1, 0.0, _ease((i + 1) / n_in), heading, k) for i in range(n_in)]
        for stage in range(n_stages):
            n_move = frame_count(rng, MOVE_S, fps)
            plans += [FramePlan(table, table + 1, (i + 1) / n_move, 1.0, heading, k) for i in range(n_move)]
            table += 1
            if stage < n_stages - 1:  # the hand moves on to the next stage's cards
                plans += [FramePlan(table, table + 1, 0.0, 1.0, heading, k)] * max(1, fps // 10)
        n_out = frame_count(rng, REACH_S, fps)
        plans += [FramePlan(table - 1, table, 1.0, 1.0 - _ease((i + 1) / n_out), heading, k) for i in range(n_out)]
        spans.append((first, len(plans) - 1))
        plans += [FramePlan(table, table, 0.0, None, 0.0, None)] * frame_count(rng, STILL_S, fps)
    return plans, spans


# ----------------------------------------------------------------------------------------------- motion


def _ease(s: float) -> float:
    return s * s * (3.0 - 2.0 * s)


def is_carried(a: PlacedCard, b: PlacedCard) -> bool:
    """Picked up by the hand: it changes zone or face, leaves or enters a hand, or goes deeper into the same pile
    by more than one place (an explore block going under the deck). Cards that only close up a gap slide without
    being lifted."""
    return a.zone != b.zone or a.face_up != b.face_up or a.held != b.held or b.index - a.index > 1


def _hand_to_table(a: PlacedCard, b: PlacedCard) -> tuple[PlacedCard, PlacedCard]:
    """A card leaving or entering a hand shows the side it has on the table all the way: a player turns a card in
    the hand, not in the air, so the only flips in a video are cards turned over on the table."""
    if a.held and not b.held:
        return replace(a, face_up=b.face_up), b
    if b.held and not a.held:
        return a, replace(b, face_up=a.face_up)
    return a, b


def _moving_pairs(table_a: Layout, table_b: Layout) -> list[tuple[PlacedCard, PlacedCard]]:
    """Each card of table a with its place in table b (by identity), leaving out cards that stay in a hand."""
    target = {card.key: card for card in table_b}
    missing = [card.key for card in table_a if card.key not in target]
    if missing or len(target) != len(table_a):
        raise ValueError(
            f"consecutive layouts must hold the same cards (hands included, as held cards); "
            f"{len(table_a)} vs {len(table_b)} cards, missing from the second: {', '.join(missing[:5]) or 'none'}"
        )
    return [_hand_to_table(a, target[a.key]) for a in table_a if not (a.held and target[a.key].held)]


def flip_axis(code: str, seed: int) -> str:
    """How a player turns this card over in this video: mostly over its long edge like a page, sometimes end over
    end; fixed per card and video so a card is not handled two ways in one game."""
    return "short" if zlib.crc32(f"{seed}/{code}".encode()) % 4 == 0 else "long"


def _carried_pose(a: PlacedCard, b: PlacedCard, e: float) -> tuple[float, float, float]:
    dx, dy = b.x_mm - a.x_mm, b.y_mm - a.y_mm
    dist = math.hypot(dx, dy)
    lift = math.sin(math.pi * e)
    if dist < 1.0:  # a flip in place: out to the left and back
        return a.x_mm - FLIP_SLIDE_MM * lift, a.y_mm, a.rotation_deg + 6.0 * lift
    px, py = -dy / dist, dx / dist
    if px > 0:  # arc round the left of the deck, away from the notes and score pile
        px, py = -px, -py
    bulge = min(0.35 * dist, MAX_BULGE_MM) * lift
    rot = a.rotation_deg + (b.rotation_deg - a.rotation_deg) * e + 8.0 * lift
    return a.x_mm + dx * e + px * bulge, a.y_mm + dy * e + py * bulge, rot


def _carried_frame(a: PlacedCard, b: PlacedCard, e: float, seed: int) -> CardFrame:
    """A card in the hand at eased progress e: lifted on an arc; if it changes face, squashed through edge-on
    (|cos| of the turn angle) with the picture and label switching where it is edge-on, at e = 0.5."""
    x, y, rot = _carried_pose(a, b, e)
    rise = math.sin(math.pi * e)
    placed = replace(b, face_up=a.face_up if e < 0.5 else b.face_up, x_mm=x, y_mm=y, rotation_deg=rot)
    if a.face_up == b.face_up or e <= 0.0:
        return CardFrame(placed, True, CARRY_LIFT_MM * rise)
    squash = max(abs(math.cos(math.pi * e)), MIN_SQUASH)
    lift = (CARRY_LIFT_MM + FLIP_LIFT_MM) * rise
    return CardFrame(placed, True, lift, squash, flip_axis(a.key, seed))


def interpolate(table_a: Layout, table_b: Layout, s: float, seed: int = 0) -> list[CardFrame]:
    """Cards between two layouts, in paint order: resting cards in their old order, carried ones above them. At
    s = 1 the result is exactly table b (its order, poses and faces, flat on the table; held cards left out), so
    every still frame is a true layout."""
    if s >= 1.0:
        before = {card.key: card for card in table_a}
        return [CardFrame(card, is_carried(before[card.key], card)) for card in table_b if not card.held]
    e = _ease(s)
    resting, carried = [], []
    for a, b in _moving_pairs(table_a, table_b):
        if is_carried(a, b):
            carried.append(_carried_frame(a, b, e, seed))
        else:
            x, y = a.x_mm + (b.x_mm - a.x_mm) * e, a.y_mm + (b.y_mm - a.y_mm) * e
            rot = a.rotation_deg + (b.rotation_deg - a.rotation_deg) * e
            resting.append(CardFrame(replace(b, x_mm=x, y_mm=y, rotation_deg=rot), False))
    return resting + carried


def static_count(table_a: Layout, table_b: Layout, plan: FramePlan, drawn: list[int]) -> int:
    """How many of the drawn cards, from the bottom, stay put through this stretch of frames, so a cached layer of
    them can be reused: all of them while the hand only reaches (s = 0 or 1), else those below every moving card
    that neither are carried nor slide (the score pile and notes under a deck that closes up)."""
    if plan.a == plan.b or plan.s <= 0.0 or plan.s >= 1.0:
        return len(drawn)
    resting = [(a, b) for a, b in _moving_pairs(table_a, table_b) if not is_carried(a, b)]
    count = 0
    for i in drawn:
        if i >= len(resting):
            break
        a, b = resting[i]
        if (a.x_mm, a.y_mm, a.rotation_deg) != (b.x_mm, b.y_mm, b.rotation_deg):
            break
        count += 1
    return count


def hand_pose(
    cards: list[CardFrame], reach: float, heading_deg: float, grip_mm: float = 0.0
) -> tuple[float, float, float]:
    """Wrist position and heading: the fingers over the carried cards' centre (the deck's top card when nothing
    is carried), reaching in from the player's side; `grip_mm` further back for a card held by its near edge."""
    held = [c.card for c in cards if c.carried] or [c.card for c in cards[-1:]]
    cx = sum(c.x_mm for c in held) / max(len(held), 1)
    cy = sum(c.y_mm for c in held) / max(len(held), 1)
    back = HAND_REACH_MM + grip_mm + HAND_AWAY_MM * (1.0 - reach)
    a = math.radians(heading_deg)
    return cx + back * math.sin(a), cy - back * math.cos(a), heading_deg


def turns_over(table_a: Layout, table_b: Layout) -> bool:
    """Whether a card changes face between the tables: the hand then holds it by its near edge, fingers clear of
    the card, since that is how a card is turned over (and the flip stays in view)."""
    return any(a.face_up != b.face_up for a, b in _moving_pairs(table_a, table_b))


def drawn_cards(cards: list[CardFrame]) -> list[int]:
    """Which cards to paint. A card deep in a squared stack shows only a sub-pixel sliver of its edge, yet painting
    all 47 of them costs most of a frame; the table module marks such cards `buried` (keeping every
    STACK_SAMPLE-th and the deepest one, for the stack's thickness and far edge), and they are listed in the labels
    as fully hidden (visible 0), which they nearly are. A carried card is always painted."""
    return [i for i, c in enumerate(cards) if c.carried or not c.card.buried]


def buried_in_stack(index: int, deepest: int, shown: int) -> bool:
    """For table modules: whether the card `index` places down a squared stack (0 = top) can go unpainted, the
    top `shown` places, every STACK_SAMPLE-th and the deepest card being painted."""
    return not (index <= shown or index % STACK_SAMPLE == 0 or index == deepest)


# ----------------------------------------------------------------------------------------------- geometry


def lift_homothety(camera: Camera, lift_mm: float) -> np.ndarray:
    """Table-plane map that draws a flat thing `lift_mm` above the table where the camera sees it: its points
    project like table points pushed away from the camera's foot by h / (h - lift). Exact, not an approximation:
    so a lifted card's quad, size and parallax are right from any tilt."""
    if lift_mm <= 0.0:
        return np.eye(3)
    foot_x, foot_y, height = camera.position()
    k = height / max(height - lift_mm, 1.0)
    return translation(foot_x, foot_y) @ np.diag([k, k, 1.0]) @ translation(-foot_x, -foot_y)


def card_plane_map(frame_card: CardFrame, camera: Camera) -> np.ndarray:
    """Table-plane transform applied to a card before the camera: squashed about its centre across its flip axis
    (its width for a page-like flip, its height end over end), then lifted."""
    c = frame_card.card
    squash = np.eye(3)
    if frame_card.squash < 1.0:
        pose = pose_matrix(c.x_mm, c.y_mm, c.rotation_deg)
        sx, sy = (frame_card.squash, 1.0) if frame_card.flip_axis != "short" else (1.0, frame_card.squash)
        squash = pose @ np.diag([sx, sy, 1.0]) @ np.linalg.inv(pose)
    return lift_homothety(camera, frame_card.lift_mm) @ squash


# ----------------------------------------------------------------------------------------------- rendering


@dataclass
class _Layer:
    """The table with the bottom cards of a frame painted: a canvas, its id map, and each card's pixel count."""

    canvas: np.ndarray
    ids: np.ndarray
    totals: list[float]


@dataclass
class _Context:
    look: VideoLook
    pieces: PieceSet
    layouts: list[Layout]
    plans: list[FramePlan]
    fps: int
    table: np.ndarray  # the empty table, rendered once per video
    table_h: np.ndarray  # the camera's table-to-image homography
    noise: NoiseBank
    layers: OrderedDict[tuple, _Layer] = field(default_factory=OrderedDict)


def _init_worker(look: VideoLook, pieces_path: str, layouts: list[Layout], plans: list[FramePlan], fps: int) -> None:
    pieces = as_piece_set(load_component(pieces_path))
    table = render_table(look.scene.background, look.camera, load_table_textures())
    table_h = look.camera.table_to_image()
    noise = noise_bank(look, (look.camera.width, look.camera.height))
    _CONTEXT["ctx"] = _Context(look, pieces, layouts, plans, fps, table, table_h, noise)


def _render_job(job: tuple[int, int, bool]) -> tuple[np.ndarray, list[str]]:
    """Frames first..last (inclusive); a still job renders once and repeats with per-frame noise and drift."""
    first, last, still = job
    ctx = _CONTEXT["ctx"]
    assert isinstance(ctx, _Context)
    frames, records = [], []
    base = None
    for f in range(first, last + 1):
        if base is None or not still:
            base = _render_plan(ctx, ctx.plans[f])
        image, labels = base
        shift = _drift(ctx.look, f, len(ctx.plans))
        frames.append(sensor_frame(image, shift, ctx.look, f, ctx.noise))
        records.append(json.dumps(_record(labels, shift, f, ctx), separators=(",", ":")))
    return np.stack(frames), records


def _card_spec(frame_card: CardFrame, glossy: bool) -> CardSpec:
    c = frame_card.card
    return CardSpec(c.code, c.face_up, c.x_mm, c.y_mm, c.rotation_deg, glossy)


def _render_plan(ctx: _Context, plan: FramePlan) -> tuple[np.ndarray, dict]:
    look = ctx.look
    cards = interpolate(ctx.layouts[plan.a], ctx.layouts[plan.b], plan.s, look.seed)
    specs = [_card_spec(c, look.glossy) for c in cards]
    card_table_hs = [ctx.table_h @ card_plane_map(c, look.camera) for c in cards]  # each as drawn: lifted, squashed
    hand = None
    if plan.reach is not None and plan.reach > 0.0:
        grip = FLIP_GRIP_MM if turns_over(ctx.layouts[plan.a], ctx.layouts[plan.b]) else 0.0
        x, y, rot = hand_pose(cards, plan.reach, plan.heading_deg, grip)
        hand = replace(look.hand, x_mm=x, y_mm=y, rotation_deg=rot)
    drawn = drawn_cards(cards)
    n_static = static_count(ctx.layouts[plan.a], ctx.layouts[plan.b], plan, drawn)
    draw_list = [(specs[i], cards[i].lift_mm, card_table_hs[i]) for i in drawn]
    image, visible, hand_box = _paint_frame(ctx, draw_list, n_static, hand)
    shown = dict(zip(drawn, visible, strict=True))
    rows = [
        _card_row(ctx, frame_card, spec, card_table_h, shown.get(z, 0.0))
        for z, (frame_card, spec, card_table_h) in enumerate(zip(cards, specs, card_table_hs, strict=True))
    ]
    return image, {"cards": rows, "hands": [hand_box] if hand_box is not None else []}


def _paint_frame(
    ctx: _Context, draw_list: list[tuple[CardSpec, float, np.ndarray]], n_static: int, hand: OccluderSpec | None
) -> tuple[np.ndarray, list[float], list[float] | None]:
    """The finished frame, each drawn card's visible fraction (what is left of its id in the id map over its
    silhouette's pixel count) and the hand's box. The first n_static cards come from the cached layer."""
    look = ctx.look
    layer = _static_layer(ctx, draw_list[:n_static])
    canvas, ids = layer.canvas.copy(), layer.ids.copy()
    totals = list(layer.totals)
    for spec, lift_mm, card_table_h in draw_list[n_static:]:
        totals.append(_paint_card(ctx, canvas, ids, len(totals) + 1, spec, lift_mm, card_table_h))
    hand_box = _paint_hand(ctx, canvas, ids, len(totals) + 1, hand) if hand is not None else None
    glossy = (ids > 0) & (ids <= len(totals)) if look.glossy else np.zeros(ids.shape, bool)
    image = finish(canvas, glossy.astype(np.float32), look.scene.effects, look.seed)
    counts = np.bincount(ids.ravel().astype(np.intp), minlength=len(totals) + 2)
    visible = [float(counts[k + 1]) / total if total else 0.0 for k, total in enumerate(totals)]
    return image, visible, hand_box


def _card_row(ctx: _Context, frame_card: CardFrame, spec: CardSpec, card_table_h: np.ndarray, visible: float) -> dict:
    c = frame_card.card
    size_mm = ctx.pieces.pieces[c.code].size_mm
    quad = apply_homography(card_homography(spec, card_table_h, size_mm), np.array([[0, 0], [1, 0], [1, 1], [0, 1]]))
    row = {
        "code": c.code, "face_up": c.face_up, "zone": c.zone, "index": c.index, "carried": frame_card.carried,
        "flipping": frame_card.flipping, "pose": [round(c.x_mm, 2), round(c.y_mm, 2), round(c.rotation_deg, 2)],
        "quad": quad.tolist(), "visible": round(visible, 3),
    }  # fmt: skip
    return {**row, "id": c.uid} if c.uid else row


def _static_layer(ctx: _Context, draw_list: list[tuple[CardSpec, float, np.ndarray]]) -> _Layer:
    """The table with these cards painted, from the cache when this exact list was painted before (the key holds
    every input of the painting, so a hit is the same pixels)."""
    key = tuple((spec, lift, card_h.tobytes()) for spec, lift, card_h in draw_list)
    if key in ctx.layers:
        ctx.layers.move_to_end(key)
        return ctx.layers[key]
    canvas = ctx.table.copy()
    ids = np.zeros(canvas.shape[:2], np.int16)  # 0 = table, i + 1 = the i-th painted card
    totals = [_paint_card(ctx, canvas, ids, z + 1, *item) for z, item in enumerate(draw_list)]
    ctx.layers[key] = layer = _Layer(canvas, ids, totals)
    while len(ctx.layers) > LAYER_CACHE:
        ctx.layers.popitem(last=False)
    return layer


def _paint_card(
    ctx: _Context,
    canvas: np.ndarray,
    ids: np.ndarray,
    object_id: int,
    spec: CardSpec,
    lift_mm: float,
    card_table_h: np.ndarray,
) -> float:
    """Paste one card (shadow first) and return its silhouette's pixel count. A lifted card's shadow falls further
    and softer, by the same rule scene.py uses for a hand held above the table."""
    camera = ctx.look.camera
    frame = (camera.width, camera.height)
    size_mm = ctx.pieces.pieces[spec.code].size_mm
    patch, card_h = card_patch(spec, ctx.pieces, card_table_h, frame)
    px_per_mm = pixels_per_mm(card_homography(spec, ctx.table_h, size_mm), size_mm)
    lift_px = lift_mm * camera.focal_px / camera.height_mm
    reach = CARD_SHADOW_MM * px_per_mm + LIFT_SHADOW * lift_px
    effects = ctx.look.scene.effects
    shift = (effects.shadow_offset[0] * reach, effects.shadow_offset[1] * reach)
    blur = 0.5 + 0.6 * px_per_mm + 0.05 * lift_px
    painted = paste_object(canvas, ids, patch, object_id, effects, shift, blur, card_h, spec)
    return float(np.count_nonzero(painted.mask))


def _paint_hand(
    ctx: _Context, canvas: np.ndarray, ids: np.ndarray, object_id: int, hand: OccluderSpec
) -> list[float] | None:
    """Paste the hand and return its box (x1 y1 x2 y2, in-frame pixels), or None when it is out of view. Its
    shadow falls as scene.py casts a hand's: shifted and softened by its height over the table."""
    camera = ctx.look.camera
    frame = (camera.width, camera.height)
    lift = hand.height_mm * camera.focal_px / camera.height_mm
    effects = ctx.look.scene.effects
    shift = (effects.shadow_offset[0] * lift * LIFT_SHADOW, effects.shadow_offset[1] * lift * LIFT_SHADOW)
    blur = 1.0 + 0.05 * lift
    patch = render_occluder(hand, ctx.table_h, frame)
    if patch is None:
        return None
    painted = paste_object(canvas, ids, patch, object_id, effects, shift, blur, None, hand)
    return _in_frame_box(painted.mask, patch, frame)


def _in_frame_box(mask: np.ndarray, patch: Patch, frame: tuple[int, int]) -> list[float] | None:
    """Box of the mask's pixels that lie in the frame (pixel indices, as scene.py labels hands)."""
    w, h = frame
    x0, y0 = max(patch.x0, 0), max(patch.y0, 0)
    x1, y1 = min(patch.x0 + mask.shape[1], w), min(patch.y0 + mask.shape[0], h)
    if x0 >= x1 or y0 >= y1:
        return None
    inside = mask[y0 - patch.y0 : y1 - patch.y0, x0 - patch.x0 : x1 - patch.x0]
    cols, rows = np.flatnonzero(inside.any(axis=0)), np.flatnonzero(inside.any(axis=1))
    if len(cols) < 2 or len(rows) < 2:
        return None
    return [float(x0 + cols[0]), float(y0 + rows[0]), float(x0 + cols[-1]), float(y0 + rows[-1])]


def _drift(look: VideoLook, frame: int, n_frames: int) -> tuple[float, float]:
    """A slow creep (a stand settling): linear over the video, so it stays a few pixels in total."""
    u = frame / max(n_frames - 1, 1)
    return look.drift_px[0] * u, look.drift_px[1] * u


@dataclass(frozen=True)
class NoiseBank:
    """Sensor noise for a whole video: a few fields drawn once, each frame taking one at its own offset, with the
    shot-noise scale of effects.add_noise looked up per display level. Drawing a fresh full-frame field cost more
    than anything else in a still frame; shifted crops of a few fields are just as uncorrelated frame to frame."""

    fields: tuple[np.ndarray, ...]
    scale: np.ndarray  # noise standard deviation at each display level 0-255, float32


def noise_bank(look: VideoLook, size: tuple[int, int]) -> NoiseBank:
    w, h = size
    seeds = np.random.SeedSequence([look.seed, 3]).generate_state(NOISE_BANK)
    shape = (h + 2 * NOISE_PAD, w + 2 * NOISE_PAD)
    fields = tuple(noise_field(shape, int(seed), 1.0) for seed in seeds)
    levels = np.arange(256, dtype=np.float32)
    return NoiseBank(fields, (look.noise_sigma * (0.5 + np.sqrt(levels / 255.0))).astype(np.float32))


def sensor_frame(
    image: np.ndarray, shift: tuple[float, float], look: VideoLook, frame: int, bank: NoiseBank
) -> np.ndarray:
    if abs(shift[0]) + abs(shift[1]) > 1e-3:
        matrix = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
        image = cv2.warpAffine(image, matrix, image.shape[1::-1], flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    rng = np.random.default_rng([look.seed, frame])
    pick = int(rng.integers(0, NOISE_BANK))
    dx, dy = (int(v) for v in rng.integers(0, 2 * NOISE_PAD + 1, 2))
    h, w = image.shape[:2]
    noise = bank.fields[pick][dy : dy + h, dx : dx + w]
    return cv2.add(image, cv2.multiply(noise, cv2.LUT(image, bank.scale)), dtype=cv2.CV_8U)  # rounds and saturates


def _record(labels: dict, shift: tuple[float, float], frame: int, ctx: _Context) -> dict:
    """One line of the states file; serialised in the worker, since the main process is busy encoding video."""
    plan = ctx.plans[frame]
    dx, dy = shift
    cards = [{**row, "quad": [[round(x + dx, 1), round(y + dy, 1)] for x, y in row["quad"]]} for row in labels["cards"]]
    hands = [[round(v + (dx if i % 2 == 0 else dy), 1) for i, v in enumerate(box)] for box in labels["hands"]]
    return {
        "frame": frame,
        "t": round(frame / ctx.fps, 4),
        "moving": plan.action is not None,
        "action": plan.action,
        "hand_visible": bool(hands),
        "hands": hands,
        "cards": cards,
    }


def _jobs(plans: list[FramePlan]) -> Iterator[tuple[int, int, bool]]:
    """Runs of identical still frames become one job; motion frames go in small chunks."""
    start = 0
    while start < len(plans):
        still = plans[start].action is None
        end = start
        while end + 1 < len(plans) and (plans[end + 1] == plans[start] if still else plans[end + 1].action is not None):
            if not still and end + 1 - start >= MOTION_JOB_FRAMES:
                break
            end += 1
        yield start, end, still
        start = end + 1


# ----------------------------------------------------------------------------------------------- files


class FrameSink(Protocol):
    codec: str

    def write(self, frame: np.ndarray) -> None: ...

    def close(self) -> None: ...


def find_ffmpeg() -> str | None:
    """The ffmpeg binary inside the imageio-ffmpeg wheel (no download: the wheel carries it), or None."""
    try:
        import imageio_ffmpeg
    except ImportError:
        return None
    try:
        return str(imageio_ffmpeg.get_ffmpeg_exe())
    except RuntimeError:
        return None


class FfmpegWriter:
    """Raw BGR frames piped to ffmpeg's libx264: a table video is mostly still, which H.264 codes in a fraction of
    the bytes 'mp4v' needs at the same quality."""

    codec = "h264"

    def __init__(self, exe: str, path: Path, fps: int, size: tuple[int, int]) -> None:
        w, h = size
        if w % 2 or h % 2:
            raise ValueError(f"H.264 video (yuv420p) needs an even width and height, got size {w}x{h}")
        self.path = path
        command = [
            exe, "-hide_banner", "-loglevel", "error", "-y",
            "-f", "rawvideo", "-pix_fmt", "bgr24", "-s", f"{w}x{h}", "-r", str(fps), "-i", "-",
            "-an", "-c:v", "libx264", "-preset", PRESET, "-crf", str(CRF), "-pix_fmt", "yuv420p",
            "-movflags", "+faststart", str(path),
        ]  # fmt: skip
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)

    def write(self, frame: np.ndarray) -> None:
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(np.ascontiguousarray(frame).tobytes())
        except BrokenPipeError:
            self._fail()

    def close(self) -> None:
        assert self._process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self._process.stdin.close()
        if self._process.wait() != 0:
            self._fail()

    def _fail(self) -> None:
        self._process.kill()
        self._process.wait()
        message = self._process.stderr.read().decode(errors="replace").strip() if self._process.stderr else ""
        raise RuntimeError(f"{self.path}: ffmpeg failed to encode H.264: {message[-500:] or 'no message'}")


class OpenCvWriter:
    """The fallback without imageio-ffmpeg: OpenCV's own MPEG-4 Part 2 encoder, always present in its wheel."""

    codec = FALLBACK_FOURCC

    def __init__(self, path: Path, fps: int, size: tuple[int, int]) -> None:
        self._writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*FALLBACK_FOURCC), float(fps), size)
        if not self._writer.isOpened():
            raise RuntimeError(f"{path}: OpenCV cannot write '{FALLBACK_FOURCC}' video here")

    def write(self, frame: np.ndarray) -> None:
        self._writer.write(frame)

    def close(self) -> None:
        self._writer.release()


def open_video(path: Path, fps: int, size: tuple[int, int]) -> FrameSink:
    """H.264 when imageio-ffmpeg is installed; otherwise 'mp4v', with a one-line notice (the files are several
    times larger, nothing else changes)."""
    exe = find_ffmpeg()
    if exe is None:
        print(
            f"notice: imageio-ffmpeg is not installed, so {path.name} is '{FALLBACK_FOURCC}' video, several times "
            "larger than H.264 (pip install imageio-ffmpeg)",
            file=sys.stderr,
        )
        return OpenCvWriter(path, fps, size)
    return FfmpegWriter(exe, path, fps, size)


def open_states(path: Path) -> io.TextIOWrapper:
    """A gzip text stream with no time in its header, so the same states give the same bytes."""
    raw = gzip.GzipFile(path, mode="wb", compresslevel=6, mtime=0)
    return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")


def read_states(path: str | Path) -> Iterator[dict]:
    """Per-frame dicts from a states file: a video's folder, its states.jsonl.gz, or a plain states.jsonl."""
    path = Path(path)
    if path.is_dir():
        path = path / STATES_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no states file (expected {STATES_FILE} written by tabletop synth game)")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}: line {number} is not JSON ({err.msg})") from err
            if not isinstance(record, dict) or "frame" not in record:
                raise ValueError(f"{path}: line {number} is not a frame record (expected an object with 'frame')")
            yield record


def check_layouts(layouts: Sequence[Layout], pieces: PieceSet) -> None:
    """Every card must be a piece of the set (face and back pictures), and every layout must hold the same cards;
    checked before any frame is rendered, since a worker's KeyError would name neither the card nor the set."""
    codes = set(pieces.pieces)
    for k, cards in enumerate(layouts):
        unknown = sorted({c.code for c in cards} - codes)
        if unknown:
            raise ValueError(
                f"piece set '{pieces.path}' has no piece {', '.join(unknown[:5])} (layout {k}); expected a "
                f"{pieces.game} piece set with every card of the game"
            )
        if k:
            _moving_pairs(layouts[k - 1], cards)


def render_table_video(
    initial: Layout,
    steps: Sequence[GameStep],
    deck: Deck | PieceSet,
    out_dir: str | Path,
    seed: int,
    fps: int = 30,
    size: tuple[int, int] = (1280, 720),
    meta: dict | None = None,
    processes: int = 2,
    progress: bool = True,
    drift_px: float = 3.0,
    view: TableView | None = None,
) -> dict:
    """Write video.mp4, actions.json, states.jsonl.gz and meta.json (with `meta` merged in); return the meta.
    `deck` is any piece set (or deck directory) read from disk; `view` the table's extent and camera heights
    (default: Loot the Loop's)."""
    if view is None:
        from vision.synth.ltl_table import extent_mm  # the default table; imported here, since it imports this

        view = TableView(extent_mm(FRAME_MARGIN_MM))
    pieces = as_piece_set(deck)
    layouts = [list(initial), *(list(table) for step in steps for table in step.stages)]
    check_layouts(layouts, pieces)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    look = random_look(seed, size, len(load_table_textures()), drift_px, view)
    plans, spans = plan_frames([len(step.stages) for step in steps], seed, fps, [s.reach_from_deg for s in steps])
    video = open_video(out / "video.mp4", fps, size)
    init_args = (look, str(pieces.path), layouts, plans, fps)
    jobs = list(_jobs(plans))
    bar = tqdm(total=len(plans), desc="frames", unit="frame", disable=not progress)
    try:
        with open_states(out / STATES_FILE) as states_file:
            for frames, records in _run_jobs(jobs, init_args, processes):
                for frame, record in zip(frames, records, strict=True):
                    video.write(frame)
                    states_file.write(record + "\n")
                bar.update(len(records))
    finally:
        video.close()
        bar.close()
    actions = [
        {"action": step.action, "start_frame": a, "end_frame": b, "t_start": a / fps, "t_end": b / fps}
        for step, (a, b) in zip(steps, spans, strict=True)
    ]
    (out / "actions.json").write_text(json.dumps(actions, indent=1) + "\n")
    result = {
        **(meta or {}),
        "deck": {"name": pieces.name, "family": pieces.family, "path": str(pieces.path)},
        "seed": seed,
        "fps": fps,
        "size": list(size),
        "frames": len(plans),
        "duration_s": round(len(plans) / fps, 3),
        "codec": video.codec,
        "camera": asdict(look.camera),
        "background": look.scene.background.source,
        "drift_px": list(look.drift_px),
        "noise_sigma": look.noise_sigma,
    }
    (out / "meta.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    result["render_s"] = round(time.perf_counter() - started, 2)  # kept out of meta.json, which must be repeatable
    return result


def _run_jobs(
    jobs: list[tuple[int, int, bool]], init_args: tuple, processes: int
) -> Iterator[tuple[np.ndarray, list[str]]]:
    if processes <= 1:
        _init_worker(*init_args)
        yield from map(_render_job, jobs)
        return
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # forked workers inherit it: they already fill the cores, and OpenCV's thread pool on top
    try:  # cost about 7 % more CPU per frame (same pixels). Set here, not in the child: there it can deadlock.
        pool = Pool(processes, initializer=_init_worker, initargs=init_args)
    finally:
        cv2.setNumThreads(threads)
    with pool:
        yield from pool.imap(_render_job, jobs)


def read_video_frame_count(path: str | Path) -> int:
    """Frames that actually decode (container metadata can disagree with the stream)."""
    capture = cv2.VideoCapture(str(path))
    count = 0
    try:
        while capture.isOpened():
            ok, _ = capture.read()
            if not ok:
                break
            count += 1
    finally:
        capture.release()
    return count
