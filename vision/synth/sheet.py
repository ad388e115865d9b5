"""Contact sheets and distribution reports: the two ways a person checks a synthetic data set before training on it
(do the labels sit on the cards? do the scenes cover the cameras and clutter of a real table?)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from vision.synth.scene import Scene, SceneSpec

TILE_WIDTH = 640
GREEN = (60, 220, 60)
RED = (40, 40, 235)
CARD_COLOUR = (255, 200, 0)
OTHER_COLOUR = (255, 0, 255)


def annotate(scene: Scene, width: int = TILE_WIDTH) -> np.ndarray:
    """The scene scaled to `width` with quads (TL corner dotted, so orientation shows), corner boxes in green when
    visible and red when not, and the code with its visible fraction."""
    scale = width / scene.image.shape[1]
    tile = cv2.resize(scene.image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    for obj in scene.objects:
        quad = np.round(np.array(obj.quad) * scale).astype(np.int32)
        card = obj.code not in ("hand", "object")
        cv2.polylines(tile, [quad], True, CARD_COLOUR if card else OTHER_COLOUR, 1, cv2.LINE_AA)
        if not card:
            _text(tile, obj.subtype, quad[0] + [3, 12], OTHER_COLOUR)
            continue
        cv2.circle(tile, tuple(int(v) for v in quad[0]), 3, CARD_COLOUR, -1)
        for corner in obj.corners:
            cq = np.round(np.array(corner.quad) * scale).astype(np.int32)
            cv2.polylines(tile, [cq], True, GREEN if corner.visible else RED, 1, cv2.LINE_AA)
        centre = quad.mean(axis=0).astype(int)
        _text(tile, f"{obj.code} {obj.visible_fraction:.2f}", centre - [18, 0], CARD_COLOUR)
    return tile


def _text(image: np.ndarray, text: str, at: np.ndarray, colour: tuple[int, int, int]) -> None:
    origin = (int(at[0]), int(at[1]))
    cv2.putText(image, text, origin, cv2.FONT_HERSHEY_SIMPLEX, 0.38, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(image, text, origin, cv2.FONT_HERSHEY_SIMPLEX, 0.38, colour, 1, cv2.LINE_AA)


def contact_sheet(scenes: Sequence[Scene], out_png: str | Path, cols: int = 4, tile_width: int = TILE_WIDTH) -> Path:
    tiles = [annotate(scene, tile_width) for scene in scenes]
    if not tiles:
        raise ValueError("contact_sheet needs at least one scene")
    tile_h = max(t.shape[0] for t in tiles)
    rows = math.ceil(len(tiles) / cols)
    sheet = np.full((rows * tile_h + (rows - 1) * 4, cols * tile_width + (cols - 1) * 4, 3), 255, np.uint8)
    for i, tile in enumerate(tiles):
        y, x = (i // cols) * (tile_h + 4), (i % cols) * (tile_width + 4)
        sheet[y : y + tile.shape[0], x : x + tile.shape[1]] = tile
    out = Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), sheet)
    return out


def _summary(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    arr = np.asarray(values, float)
    quantiles = np.percentile(arr, [5, 50, 95])
    return {
        "n": len(arr),
        "min": round(float(arr.min()), 3),
        "p5": round(float(quantiles[0]), 3),
        "median": round(float(quantiles[1]), 3),
        "mean": round(float(arr.mean()), 3),
        "p95": round(float(quantiles[2]), 3),
        "max": round(float(arr.max()), 3),
    }


def distribution_report(items: Sequence[Scene | SceneSpec]) -> dict[str, dict[str, float]]:
    """Camera and layout summaries work from specs alone; pixel-derived ones (card scale, overlap, occlusion,
    visible fraction) need rendered scenes and are left out for specs."""
    specs = [item.spec if isinstance(item, Scene) else item for item in items]
    report = {
        "camera_height_mm": _summary([s.camera.height_mm for s in specs]),
        "camera_tilt_deg": _summary([s.camera.tilt_deg for s in specs]),
        "camera_hfov_deg": _summary([s.camera.hfov_deg for s in specs]),
        "cards_per_scene": _summary([len(s.cards) for s in specs]),
        "hands_per_scene": _summary([sum(o.kind == "hand" for o in s.occluders) for s in specs]),
        "objects_per_scene": _summary([sum(o.kind != "hand" for o in s.occluders) for s in specs]),
        "face_down_share": _summary([np.mean([not c.face_up for c in s.cards]) for s in specs if s.cards]),
    }
    scenes = [item for item in items if isinstance(item, Scene)]
    if scenes:
        pieces = [obj for scene in scenes for obj in scene.cards()]
        cards = [obj for obj in pieces if obj.kind == "card"]
        indexed = [obj for obj in cards if obj.corners]
        hidden_by_hand = [_hand_covered(scene) for scene in scenes]
        report |= {
            "pieces_per_scene_by_kind": {
                kind: round(sum(obj.kind == kind for obj in pieces) / len(scenes), 2)
                for kind in sorted({obj.kind for obj in pieces})
            },
            "card_width_px": _summary([float(np.linalg.norm(np.subtract(c.quad[1], c.quad[0]))) for c in cards]),
            "card_visible_fraction": _summary([c.visible_fraction for c in cards]),
            "card_overlapped_share": _summary(
                [np.mean([c.visible_fraction < 0.99 for c in s.cards()]) for s in scenes if s.cards()]
            ),
            "corner_visible_share": _summary([float(np.mean([k.visible for k in c.corners])) for c in indexed]),
            "solid_width_px": _summary(
                [o.box[2] - o.box[0] for o in pieces if o.kind in ("d6", "d20", "cube", "pawn") and o.box]
            ),
            "scenes_with_hand_over_cards": _summary([float(h) for h in hidden_by_hand]),
        }
    return report


def _hand_covered(scene: Scene) -> bool:
    hands = [o for o in scene.objects if o.code == "hand"]
    return bool(hands) and any(c.visible_fraction < 0.99 for c in scene.cards())
