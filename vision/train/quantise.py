"""8-bit versions of the finder and reader graphs, calibrated on validation-family frames and crops.

Why: on a 2-core laptop CPU most of the frame's time is the finder's convolutions, and CPUs with VNNI run 8-bit
convolutions several times faster than float ones. Only convolutions are quantised (weights per channel,
activations per tensor); the detector's box decoding and the classifier's softmax stay in float, where 8 bits
would cost accuracy for no speed. Calibration uses validation families only, never the test families the
benchmark reports on. Training environment only (needs the onnx package); the runtime just loads the graphs.

    python -m vision.train.quantise --scenes out/ds10k_v2/images/val --crops out/reader_ds4/val
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import cv2
import numpy as np

from vision.recognise.finder import Finder
from vision.recognise.models import FINDER_FILE, READER_FILE, models_dir
from vision.recognise.reader import Reader, bgr_blob

INT8_SUFFIX = ".int8.onnx"


def int8_path(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".onnx") + INT8_SUFFIX)


def _pick(paths: Sequence[Path], count: int, seed: int) -> list[Path]:
    paths = sorted(paths)
    return random.Random(seed).sample(paths, min(count, len(paths)))


def finder_blobs(finder: Finder, images: Sequence[Path]) -> Iterator[np.ndarray]:
    for path in images:
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if frame is None:
            raise ValueError(f"{path}: not an image")
        if max(frame.shape[:2]) < 1000:  # the finder sets hold frames at half size: back to camera size
            frame = cv2.resize(frame, None, fx=2, fy=2, interpolation=cv2.INTER_LINEAR)
        yield finder.prepare(frame)[0]


def reader_blobs(size: int, crops: Sequence[Path], batch: int = 32) -> Iterator[np.ndarray]:
    for start in range(0, len(crops), batch):
        images = [cv2.resize(cv2.imread(str(p), cv2.IMREAD_COLOR), (size, size)) for p in crops[start : start + batch]]
        yield bgr_blob(np.stack(images))


def quantise(src: Path, dst: Path, input_name: str, blobs: Iterator[np.ndarray]) -> Path:
    """Static QDQ quantisation of the graph's convolutions; keeps the graph's metadata (class names)."""
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Feed(CalibrationDataReader):
        def get_next(self) -> dict[str, np.ndarray] | None:
            blob = next(blobs, None)
            return None if blob is None else {input_name: blob}

    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        quant_pre_process(str(src), str(prepared), skip_symbolic_shape=True)
        quantize_static(
            str(prepared),
            str(dst),
            Feed(),
            quant_format=QuantFormat.QDQ,
            op_types_to_quantize=["Conv"],
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
    original, made = onnx.load(str(src)), onnx.load(str(dst))
    del made.metadata_props[:]
    made.metadata_props.extend(original.metadata_props)
    onnx.save(made, str(dst))
    return dst


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="8-bit finder and reader graphs, calibrated on validation data.")
    parser.add_argument("--scenes", type=Path, required=True, help="validation scene images (finder calibration)")
    parser.add_argument("--crops", type=Path, required=True, help="validation reader crops, one folder per class")
    parser.add_argument("--models", type=Path, default=None, help="models directory (default: models/)")
    parser.add_argument("--frames", type=int, default=64)
    parser.add_argument("--crop-count", type=int, default=1024)
    args = parser.parse_args(argv)
    folder = args.models or models_dir()
    finder = Finder(folder / FINDER_FILE, threads=2)
    images = _pick([*args.scenes.glob("*.jpg"), *args.scenes.glob("*.png")], args.frames, 0)
    if not images:
        parser.error(f"{args.scenes}: no .jpg or .png scene images")
    print(quantise(finder.path, int8_path(finder.path), finder.input_name, finder_blobs(finder, images)))
    reader = Reader(folder / READER_FILE, threads=2)
    crops = _pick([*args.crops.glob("*/*.jpg"), *args.crops.glob("*/*.png")], args.crop_count, 1)
    if not crops:
        parser.error(f"{args.crops}: no crops in class folders")
    print(quantise(reader.path, int8_path(reader.path), reader.input_name, reader_blobs(reader.size, crops)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
