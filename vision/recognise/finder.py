"""Stage 1: oriented boxes of corner indices, face-up cards and face-down cards in a frame at half size."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.recognise.labels import FINDER_CLASSES
from vision.recognise.models import ModelError, class_names, session

MIN_SCORE = {"index": 0.25, "card": 0.35, "back": 0.35}  # below these a box is not worth a reader's look
NMS_IOU = {"index": 0.4, "card": 0.5}  # per NMS group (named by its first class); indices barely ever overlap
NMS_GROUPS = (("index",), ("card", "back"))
# Cards of one deck are one size, so an outline lying mostly inside a stronger one is that card boxed twice (a
# loose box and a tight one can stay under the IoU cut): a real card that far under another could not be seen.
CONTAINED = 0.85
PAD_VALUE = 114  # ultralytics' letterbox grey, what the finder saw in training


@dataclass(frozen=True)
class Found:
    kind: str  # one of FINDER_CLASSES
    score: float
    quad: np.ndarray  # (4, 2) float32, frame pixels, ultralytics' corner order
    box: tuple[float, float, float, float]  # the quad's axis-aligned bounds, frame pixels


def quad_bounds(quad: np.ndarray) -> tuple[float, float, float, float]:
    """A quad's axis-aligned bounds (x1, y1, x2, y2)."""
    return float(quad[:, 0].min()), float(quad[:, 1].min()), float(quad[:, 0].max()), float(quad[:, 1].max())


def xywhr_quads(xywhr: np.ndarray) -> np.ndarray:
    """(n, 5) centre, size and angle (radians) to (n, 4, 2) corners, as ultralytics' xywhr2xyxyxyxy."""
    ctr, w, h, r = xywhr[:, :2], xywhr[:, 2:3], xywhr[:, 3:4], xywhr[:, 4:5]
    cos, sin = np.cos(r), np.sin(r)
    v1 = np.concatenate([w / 2 * cos, w / 2 * sin], axis=1)
    v2 = np.concatenate([-h / 2 * sin, h / 2 * cos], axis=1)
    return np.stack([ctr + v1 + v2, ctr + v1 - v2, ctr - v1 - v2, ctr - v1 + v2], axis=1).astype(np.float32)


class Finder:
    """Runs the finder ONNX graph on a frame; thread count fixed at construction."""

    def __init__(self, path: Path, threads: int = 2) -> None:
        self.path = path
        self.session = session(path, threads)
        names = class_names(self.session, path)
        if names != FINDER_CLASSES:
            raise ModelError(f"{path}: classes {names}, expected {FINDER_CLASSES}")
        shape = self.session.get_inputs()[0].shape
        self.input_hw = (int(shape[2]), int(shape[3]))
        self.input_name = self.session.get_inputs()[0].name

    def prepare(self, frame: np.ndarray) -> tuple[np.ndarray, float]:
        """The frame scaled to fit the graph's input (top-left, grey padding) and the scale used."""
        ih, iw = self.input_hw
        h, w = frame.shape[:2]
        scale = min(iw / w, ih / h)
        nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
        canvas = np.full((ih, iw, 3), PAD_VALUE, np.uint8)
        canvas[:nh, :nw] = cv2.resize(frame, (nw, nh), interpolation=cv2.INTER_AREA)
        blob = cv2.dnn.blobFromImage(canvas, 1 / 255.0, swapRB=True)
        return blob, scale

    def find(self, frame: np.ndarray, min_score: dict[str, float] | None = None) -> list[Found]:
        blob, scale = self.prepare(frame)
        raw = self.session.run(None, {self.input_name: blob})[0][0].T  # (N, 4 + classes + 1)
        return decode(raw, scale, min_score)


def decode(raw: np.ndarray, scale: float, min_score: dict[str, float] | None = None) -> list[Found]:
    """Thresholds (per class, MIN_SCORE unless given), rotated NMS, and the boxes in frame pixels. Face-up and
    face-down outlines share one NMS: one place on the table holds one card, whichever side is up."""
    min_score = min_score or MIN_SCORE
    n_cls = len(FINDER_CLASSES)
    scores = raw[:, 4 : 4 + n_cls]
    cls = scores.argmax(1)
    best = scores[np.arange(len(raw)), cls]
    floor = np.array([min_score[kind] for kind in FINDER_CLASSES])
    found: list[Found] = []
    for kinds in NMS_GROUPS:
        ks = [FINDER_CLASSES.index(kind) for kind in kinds]
        keep = np.isin(cls, ks) & (best >= floor[cls])
        if not keep.any():
            continue
        rows, kept_cls, kept_score = raw[keep], cls[keep], best[keep]
        xywhr = np.concatenate([rows[:, :4] / scale, rows[:, 4 + n_cls : 5 + n_cls]], axis=1)
        rects = [((float(x), float(y)), (float(w), float(h)), float(np.degrees(r))) for x, y, w, h, r in xywhr]
        iou = NMS_IOU[kinds[0]]
        chosen = np.array(cv2.dnn.NMSBoxesRotated(rects, kept_score.tolist(), 0.0, iou), int).ravel()
        group = [
            Found(FINDER_CLASSES[k], float(score), quad, quad_bounds(quad))
            for quad, score, k in zip(xywhr_quads(xywhr[chosen]), kept_score[chosen], kept_cls[chosen], strict=True)
        ]
        found += group if kinds == ("index",) else drop_contained(group)
    return found


def drop_contained(found: list[Found], share: float = CONTAINED) -> list[Found]:
    """Strongest first, keeps each box unless at least `share` of its area lies inside a box already kept."""
    kept: list[Found] = []
    for f in sorted(found, key=lambda f: -f.score):
        area = abs(cv2.contourArea(f.quad))
        inside = (cv2.intersectConvexConvex(f.quad, k.quad)[0] for k in kept)
        if area <= 0 or not any(i >= share * area for i in inside):
            kept.append(f)
    return kept
