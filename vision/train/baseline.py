"""The same two trained models run through ultralytics' PyTorch `predict`: the latency baseline that
`tabletop bench vision` reports beside the ONNX Runtime path (training environment only)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vision.recognise.crops import index_crop
from vision.recognise.finder import Found, quad_bounds, xywhr_quads
from vision.recognise.labels import FINDER_CLASSES
from vision.recognise.models import models_dir
from vision.recognise.recogniser import THRESHOLDS_FILE, Recogniser, Thresholds


class UltralyticsRecogniser(Recogniser):
    """Recogniser whose finder and reader are ultralytics YOLO objects on the .pt weights; grouping is shared."""

    def __init__(self, finder_pt: Path, reader_pt: Path, threads: int = 2) -> None:
        from vision.train.fit import FINDER_EXPORT_SHAPE, READER_IMGSZ, _ultralytics

        ultralytics = _ultralytics()
        import torch

        torch.set_num_threads(threads)
        self.finder_model = ultralytics.YOLO(str(finder_pt))
        self.reader_model = ultralytics.YOLO(str(reader_pt))
        names = self.reader_model.names
        self._classes = tuple(names[i] for i in sorted(names))
        self.imgsz, self.crop = FINDER_EXPORT_SHAPE, READER_IMGSZ
        self.deck = None
        self.calibration = None
        self.thresholds = Thresholds.load(models_dir() / THRESHOLDS_FILE)

    @property
    def classes(self) -> tuple[str, ...]:
        return self._classes

    def find(self, frame: np.ndarray) -> list[Found]:
        result = self.finder_model.predict(
            frame, imgsz=self.imgsz, conf=min(self.thresholds.finder_scores().values()), iou=0.5, verbose=False
        )[0]
        obb = result.obb
        xywhr = obb.xywhr.numpy()
        found = []
        for quad, score, k in zip(xywhr_quads(xywhr), obb.conf.numpy(), obb.cls.numpy().astype(int), strict=True):
            kind = FINDER_CLASSES[k]
            if score >= self.thresholds.finder_scores()[kind]:
                found.append(Found(kind, float(score), quad, quad_bounds(quad)))
        return found

    def read_indices(self, frame: np.ndarray, quads: Sequence[np.ndarray]) -> np.ndarray:
        if not len(quads):
            return np.zeros((0, len(self._classes)), np.float32)
        crops = [index_crop(frame, quad, self.crop) for quad in quads]
        results = self.reader_model.predict(crops, imgsz=self.crop, verbose=False)
        return np.stack([r.probs.data.numpy() for r in results])
