"""Full-game videos with per-frame ground truth, from a list of table states (no rules here: the moves arrive as
text and the tables they lead to as `TableState`s, built by the caller from a game engine).

Timeline: a still table, then for each action a hand reaches in, the cards travel from one table state to the next
(an action may have several stages, e.g. explore then nab), the hand leaves, and the table stays still for
0.5-1.5 s. Every frame inside an action's span is `moving`; every frame outside is a still table.

Speed: a still stretch is rendered once by the scene compositor and repeated with fresh sensor noise (and the
camera drift applied as a sub-pixel shift of the frame and of the labels), so only motion frames pay for a full
render. Lighting, background, camera and the player's hand are drawn once per video, as in a real session.
Frames render in a pool of worker processes in fixed jobs; each frame's noise is seeded by (seed, frame), so the
output is byte-identical whatever the number of processes.

Files: video.mp4 ('mp4v'); actions.json, one entry per action: {"action", "start_frame", "end_frame" (inclusive),
"t_start", "t_end"}; states.jsonl, one line per frame: {"frame", "t", "moving", "action" (index or null),
"hand_visible", "hands" (boxes x1 y1 x2 y2), "cards"}, cards in paint order (bottom to top), each {"code" (its
identity, even face down), "face_up", "zone", "index" (see ltl_table), "carried" (in the hand; zone and index are
then where it is going), "pose" (x mm, y mm, rotation deg on the table), "quad" (TL TR BR BL image pixels as
printed), "visible" (fraction of its pixels in view)}; meta.json: game, seed, deck, policy, fps, size, frames,
camera, final score, engine and commit.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.synth.backgrounds import TableTexture, load_table_textures, random_background_spec
from vision.synth.camera import Camera, apply_homography
from vision.synth.deckdir import Deck, load_deck
from vision.synth.effects import add_noise, random_effects
from vision.synth.ltl_table import (
    CASCADE_SHOWN,
    ZONE_NOTES,
    ZONE_SCORE,
    PlacedCard,
    TableState,
    extent_mm,
    layout,
)
from vision.synth.occluders import OccluderSpec, random_occluder
from vision.synth.scene import CardSpec, SceneSpec, card_homography, render_scene

STILL_S = (0.5, 1.5)
MOVE_S = (0.4, 1.2)
REACH_S = (0.25, 0.45)  # the hand coming in, and going out
FLIP_SLIDE_MM = 45.0  # a flipped card is slid out sideways, turned under the hand, and slid back
MAX_BULGE_MM = 70.0
HAND_REACH_MM = 95.0  # wrist to the card under the fingers
HAND_AWAY_MM = 650.0  # how far back the wrist starts and ends (the arm then leaves the frame)
FRAME_MARGIN_MM = 45.0
MOTION_JOB_FRAMES = 12
STACK_SAMPLE = 5
FOURCC = "mp4v"

_CONTEXT: dict[str, object] = {}


@dataclass(frozen=True)
class GameStep:
    """One action as text and the table after each of its physical stages (the last is the table after it)."""

    action: str
    stages: tuple[TableState, ...]


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
    card: PlacedCard  # pose and face as seen in this frame; zone and index are where it is going
    carried: bool


# ----------------------------------------------------------------------------------------------- planning


def random_look(seed: int, size: tuple[int, int], n_photos: int, drift_px: float) -> VideoLook:
    """Camera blur is kept (a soft webcam stays soft); per-scene motion blur and JPEG are off, because the table
    is mostly still and the video codec does its own compression."""
    rng = np.random.default_rng([seed, 1])
    camera = fitting_camera(rng, size)
    effects = replace(random_effects(rng), noise_sigma=0.0, jpeg_quality=0, motion=(0.0, 0.0))
    background = random_background_spec(rng, n_photos)
    scene = SceneSpec(seed, camera, 0, "loot-the-loop", (), (), background, effects)
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


def fitting_camera(rng: np.random.Generator, size: tuple[int, int], tries: int = 60) -> Camera:
    """A phone or webcam on a stand at the player's side, drawn until the whole layout (and the room cards need
    while carried) is in view; straight down from high up if no draw fits."""
    x0, y0, x1, y1 = extent_mm(FRAME_MARGIN_MM)
    corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    for _ in range(tries):
        camera = Camera(
            height_mm=float(rng.uniform(380, 700)),
            tilt_deg=float(rng.uniform(0, 30)),
            yaw_deg=float(rng.normal(0, 10)),
            hfov_deg=float(rng.uniform(55, 72)),
            width=size[0],
            height=size[1],
        )
        pts = apply_homography(camera.table_to_image(), corners)
        if (pts >= 0).all() and (pts[:, 0] < size[0]).all() and (pts[:, 1] < size[1]).all():
            return camera
    return Camera(height_mm=900.0, tilt_deg=0.0, yaw_deg=0.0, hfov_deg=65.0, width=size[0], height=size[1])


def _frames(rng: np.random.Generator, span: tuple[float, float], fps: int) -> int:
    return max(1, round(float(rng.uniform(*span)) * fps))


def plan_frames(n_stages_per_step: Sequence[int], seed: int, fps: int) -> tuple[list[FramePlan], list[tuple[int, int]]]:
    """The frame plan and each action's (first, last) frame. Table 0 is the start; step k's stages are the next
    tables in order. Durations are drawn from their own stream, so they do not depend on the look."""
    rng = np.random.default_rng([seed, 2])
    plans = [FramePlan(0, 0, 0.0, None, 0.0, None)] * _frames(rng, STILL_S, fps)
    spans = []
    table = 0
    for k, n_stages in enumerate(n_stages_per_step):
        first = len(plans)
        heading = float(rng.normal(0, 15))
        n_in = _frames(rng, REACH_S, fps)
        plans += [FramePlan(table, table + 1, 0.0, _ease((i + 1) / n_in), heading, k) for i in range(n_in)]
        for stage in range(n_stages):
            n_move = _frames(rng, MOVE_S, fps)
            plans += [FramePlan(table, table + 1, (i + 1) / n_move, 1.0, heading, k) for i in range(n_move)]
            table += 1
            if stage < n_stages - 1:  # the hand moves on to the next stage's cards
                plans += [FramePlan(table, table + 1, 0.0, 1.0, heading, k)] * max(1, fps // 10)
        n_out = _frames(rng, REACH_S, fps)
        plans += [FramePlan(table - 1, table, 1.0, 1.0 - _ease((i + 1) / n_out), heading, k) for i in range(n_out)]
        spans.append((first, len(plans) - 1))
        plans += [FramePlan(table, table, 0.0, None, 0.0, None)] * _frames(rng, STILL_S, fps)
    return plans, spans


# ----------------------------------------------------------------------------------------------- motion


def _ease(s: float) -> float:
    return s * s * (3.0 - 2.0 * s)


def is_carried(a: PlacedCard, b: PlacedCard) -> bool:
    """Picked up by the hand: it changes zone or face, or goes deeper into the same pile by more than one place
    (an explore block going under the deck). Cards that only close up a gap slide without being lifted."""
    return a.zone != b.zone or a.face_up != b.face_up or b.index - a.index > 1


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


def interpolate(table_a: list[PlacedCard], table_b: list[PlacedCard], s: float) -> list[CardFrame]:
    """Cards between two layouts, in paint order: resting cards in their old order, carried ones above them. At
    s = 1 the result is exactly table b (its order, poses and faces), so every still frame is a true layout."""
    if s >= 1.0:
        before = {card.code: card for card in table_a}
        return [CardFrame(card, is_carried(before[card.code], card)) for card in table_b]
    target = {card.code: card for card in table_b}
    e = _ease(s)
    resting, carried = [], []
    for a in table_a:
        b = target[a.code]
        if is_carried(a, b):
            x, y, rot = _carried_pose(a, b, e)
            face = a.face_up if e < 0.5 else b.face_up
            carried.append(CardFrame(replace(b, face_up=face, x_mm=x, y_mm=y, rotation_deg=rot), True))
        else:
            x, y = a.x_mm + (b.x_mm - a.x_mm) * e, a.y_mm + (b.y_mm - a.y_mm) * e
            rot = a.rotation_deg + (b.rotation_deg - a.rotation_deg) * e
            resting.append(CardFrame(replace(b, x_mm=x, y_mm=y, rotation_deg=rot), False))
    return resting + carried


def hand_pose(cards: list[CardFrame], reach: float, heading_deg: float) -> tuple[float, float, float]:
    """Wrist position and heading: the fingers over the carried cards' centre (the deck's top card when nothing
    is carried), reaching in from the player's side."""
    held = [c.card for c in cards if c.carried] or [c.card for c in cards[-1:]]
    cx = sum(c.x_mm for c in held) / max(len(held), 1)
    cy = sum(c.y_mm for c in held) / max(len(held), 1)
    back = HAND_REACH_MM + HAND_AWAY_MM * (1.0 - reach)
    a = math.radians(heading_deg)
    return cx + back * math.sin(a), cy - back * math.cos(a), heading_deg


# ----------------------------------------------------------------------------------------------- rendering


@dataclass
class _Context:
    look: VideoLook
    deck: Deck
    backgrounds: list[TableTexture]
    layouts: list[list[PlacedCard]]
    plans: list[FramePlan]
    fps: int


def _init_worker(look: VideoLook, deck_path: str, tables: list[TableState], plans: list[FramePlan], fps: int) -> None:
    deck = load_deck(deck_path)
    layouts = [layout(t, look.seed) for t in tables]
    _CONTEXT["ctx"] = _Context(look, deck, load_table_textures(), layouts, plans, fps)


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
        frames.append(_sensor(image, shift, ctx.look, f))
        records.append(json.dumps(_record(labels, shift, f, ctx), separators=(",", ":")))
    return np.stack(frames), records


def _render_plan(ctx: _Context, plan: FramePlan) -> tuple[np.ndarray, dict]:
    cards = interpolate(ctx.layouts[plan.a], ctx.layouts[plan.b], plan.s)
    specs = [CardSpec(c.card.code, c.card.face_up, c.card.x_mm, c.card.y_mm, c.card.rotation_deg, ctx.look.glossy)
             for c in cards]  # fmt: skip
    hands: tuple[OccluderSpec, ...] = ()
    if plan.reach is not None and plan.reach > 0.0:
        x, y, rot = hand_pose(cards, plan.reach, plan.heading_deg)
        hands = (replace(ctx.look.hand, x_mm=x, y_mm=y, rotation_deg=rot),)
    drawn = drawn_cards(cards)
    scene_spec = replace(ctx.look.scene, cards=tuple(specs[i] for i in drawn), occluders=hands)
    scene = render_scene(scene_spec, [ctx.deck], ctx.backgrounds)
    table_h = ctx.look.camera.table_to_image()
    visible = {drawn[label.z]: label.visible_fraction for label in scene.objects if label.z < len(drawn)}
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    card_rows = []
    for z, (frame_card, spec) in enumerate(zip(cards, specs, strict=True)):
        c = frame_card.card
        card_rows.append({
            "code": c.code, "face_up": c.face_up, "zone": c.zone, "index": c.index, "carried": frame_card.carried,
            "pose": [round(c.x_mm, 2), round(c.y_mm, 2), round(c.rotation_deg, 2)],
            "quad": apply_homography(card_homography(spec, table_h), unit).tolist(),
            "visible": round(visible.get(z, 0.0), 3),
        })  # fmt: skip
    hand_boxes = [label.box for label in scene.objects if label.code == "hand" and label.box is not None]
    return scene.image, {"cards": card_rows, "hands": hand_boxes}


def drawn_cards(cards: list[CardFrame]) -> list[int]:
    """Which cards to paint. A card deep in a squared stack shows only a sub-pixel sliver of its edge, yet painting
    all 47 of them costs most of a frame; every STACK_SAMPLE-th and the deepest one keep the stack's thickness
    and far edge, and the rest are listed in the labels as fully hidden (visible 0), which they nearly are."""
    deepest: dict[str, int] = {}
    for c in cards:
        deepest[c.card.zone] = max(deepest.get(c.card.zone, 0), c.card.index)
    return [
        i
        for i, c in enumerate(cards)
        if c.carried
        or c.card.zone in (ZONE_NOTES, ZONE_SCORE)
        or c.card.index <= CASCADE_SHOWN
        or c.card.index % STACK_SAMPLE == 0
        or c.card.index == deepest[c.card.zone]
    ]


def _drift(look: VideoLook, frame: int, n_frames: int) -> tuple[float, float]:
    """A slow creep (a stand settling): linear over the video, so it stays a few pixels in total."""
    u = frame / max(n_frames - 1, 1)
    return look.drift_px[0] * u, look.drift_px[1] * u


def _sensor(image: np.ndarray, shift: tuple[float, float], look: VideoLook, frame: int) -> np.ndarray:
    if abs(shift[0]) + abs(shift[1]) > 1e-3:
        matrix = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
        image = cv2.warpAffine(image, matrix, image.shape[1::-1], flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    noise_seed = int(np.random.SeedSequence([look.seed, frame]).generate_state(1)[0])
    noisy = add_noise(image.astype(np.float32), look.noise_sigma, noise_seed)
    return np.clip(noisy + 0.5, 0, 255).astype(np.uint8)


def _record(labels: dict, shift: tuple[float, float], frame: int, ctx: _Context) -> dict:
    """One line of states.jsonl; serialised in the worker, since the main process is busy encoding video."""
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


def render_table_video(
    initial: TableState,
    steps: Sequence[GameStep],
    deck: Deck,
    out_dir: str | Path,
    seed: int,
    fps: int = 30,
    size: tuple[int, int] = (1280, 720),
    meta: dict | None = None,
    processes: int = 2,
    progress: bool = True,
    drift_px: float = 3.0,
) -> dict:
    """Write video.mp4, actions.json, states.jsonl and meta.json (with `meta` merged in); return the meta."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    look = random_look(seed, size, len(load_table_textures()), drift_px)
    tables = [initial, *(table for step in steps for table in step.stages)]
    plans, spans = plan_frames([len(step.stages) for step in steps], seed, fps)
    video_path = out / "video.mp4"
    writer = cv2.VideoWriter(str(video_path), cv2.VideoWriter.fourcc(*FOURCC), float(fps), size)
    if not writer.isOpened():
        raise RuntimeError(f"{video_path}: OpenCV cannot write '{FOURCC}' video here")
    init_args = (look, str(deck.path), tables, plans, fps)
    jobs = list(_jobs(plans))
    bar = tqdm(total=len(plans), desc="frames", unit="frame", disable=not progress)
    try:
        with (out / "states.jsonl").open("w") as states_file:
            for frames, records in _run_jobs(jobs, init_args, processes):
                for frame, record in zip(frames, records, strict=True):
                    writer.write(frame)
                    states_file.write(record + "\n")
                bar.update(len(records))
    finally:
        writer.release()
        bar.close()
    actions = [
        {"action": step.action, "start_frame": a, "end_frame": b, "t_start": a / fps, "t_end": b / fps}
        for step, (a, b) in zip(steps, spans, strict=True)
    ]
    (out / "actions.json").write_text(json.dumps(actions, indent=1) + "\n")
    result = {
        **(meta or {}),
        "deck": {"name": deck.name, "family": deck.family, "path": str(deck.path)},
        "seed": seed,
        "fps": fps,
        "size": list(size),
        "frames": len(plans),
        "duration_s": round(len(plans) / fps, 3),
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
    with Pool(processes, initializer=_init_worker, initargs=init_args) as pool:
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
