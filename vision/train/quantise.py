"""8-bit versions of the recognisers' graphs, calibrated on validation data (never the test families).

Why: on a 2-core laptop CPU with VNNI, 8-bit convolutions run several times faster than float ones. Only
convolutions are quantised (weights per channel, activations per tensor); softmax and box decoding stay in float,
where 8 bits would cost accuracy for no speed. Training environment only (needs the onnx package); the runtime just
loads the graphs.

Weights are quantised to 7 bits (`reduce_range`). On an x86 CPU without VNNI (AVX2 only: AMD Zen 2 and 3, Intel
before Ice Lake) ONNX Runtime multiplies 8-bit activations by 8-bit weights with an instruction that adds pairs of
products into 16 bits and saturates, so a graph with full-range weights reads differently there: session 21 found
the 8-bit refiner swapping a third of the corners' edges and the 8-bit reader 9 points worse on an AMD EPYC, while
the same graphs matched their float ones on the VNNI machines they had been measured on. With 7-bit weights no sum
saturates, and every CPU computes the same result.

- `corner-reader`: the rectified reader (issue 18), calibrated on a validation crop file of `reader_data`. Its
  8-bit graph is the one shipped as `models/cards-corner-reader.onnx`: 2.7x as fast as the float graph on a busy
  frame's 52 corners, and within 0.1 point of its top-1 (session 13). The corner finder is left in float: its
  depthwise convolutions ran slower in 8 bits.
- `corner-refiner`: the corner refiner (issue 18, session 17), calibrated on a validation folder of `refiner_data`
  patches.
- `previous`: the previous recogniser's finder and reader (issue 5), written beside them as `*.int8.onnx`; measured
  once (finder 1.43x as fast, reader no faster), never shipped.

    python -m vision.train.quantise corner-reader --float models/cards-corner-reader.float.onnx \
        --crops out/reader_crops/val.npz --out models/cards-corner-reader.onnx
    python -m vision.train.quantise previous --scenes out/ds10k_v2/images/val --crops out/reader_ds4/val
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
        prepared, made_path = Path(tmp) / "prepared.onnx", Path(tmp) / "int8.onnx"
        quant_pre_process(str(src), str(prepared), skip_symbolic_shape=True)
        quantize_static(
            str(prepared),
            str(made_path),
            Feed(),
            quant_format=QuantFormat.QDQ,
            op_types_to_quantize=["Conv"],
            per_channel=True,
            reduce_range=True,  # 7-bit weights: see the module's docstring
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
        original, made = onnx.load(str(src)), onnx.load(str(made_path))
        del made.metadata_props[:]
        made.metadata_props.extend(original.metadata_props)
        dst.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(made, str(made_path))
        made_path.replace(dst)  # whole or not at all: dst may be the shipped graph
    return dst


def crop_blobs(crops: Path, count: int, seed: int = 1, batch: int = 64) -> Iterator[np.ndarray]:
    """Batches of a crop file's crops (a `reader_data.CropSet`), a fixed random sample of them."""
    with np.load(crops) as data:
        if "x" not in data.files:
            raise ValueError(f"{crops}: no 'x' array (expected a crop file written by vision.train.reader_data)")
        x = data["x"]
    pick = np.sort(np.random.default_rng(seed).permutation(len(x))[:count])
    for start in range(0, len(pick), batch):
        yield bgr_blob(x[pick[start : start + batch]])


def quantise_corner_reader(src: Path, dst: Path, crops: Path, count: int = 2048, game: str = "loot-the-loop") -> Path:
    """A rectified reader's 8-bit graph; `game` says what it reads (a number-card reader: loop or bag-o-loot)."""
    from vision.recognise.corner_reader import CornerReader

    reader = CornerReader(src, threads=2, game=game)  # refuses a graph that is not a rectified reader of that game
    return quantise(src, dst, reader.input_name, crop_blobs(crops, count))


def quantise_corner_refiner(src: Path, dst: Path, patches: Path, count: int = 2048, batch: int = 64) -> Path:
    from vision.recognise.corner_refiner import CornerRefiner, patch_blob
    from vision.train.refiner_data import PatchSet

    refiner = CornerRefiner(src, threads=2)  # refuses a graph that is not a corner refiner
    shards = sorted(f for f in patches.glob("shard-*.npz") if not f.name.endswith(".tmp.npz"))
    if not shards:
        raise ValueError(f"{patches}: no shards (expected a folder written by vision.train.refiner_data)")
    x = PatchSet.load(shards[0]).x
    pick = np.sort(np.random.default_rng(1).permutation(len(x))[:count])
    blobs = (patch_blob(x[pick[i : i + batch]]) for i in range(0, len(pick), batch))
    return quantise(src, dst, refiner.input_name, blobs)


def quantise_previous(folder: Path, scenes: Path, crops: Path, frames: int, crop_count: int) -> list[Path]:
    finder = Finder(folder / FINDER_FILE, threads=2)
    images = _pick([*scenes.glob("*.jpg"), *scenes.glob("*.png")], frames, 0)
    if not images:
        raise ValueError(f"{scenes}: no .jpg or .png scene images")
    made = [quantise(finder.path, int8_path(finder.path), finder.input_name, finder_blobs(finder, images))]
    reader = Reader(folder / READER_FILE, threads=2)
    picked = _pick([*crops.glob("*/*.jpg"), *crops.glob("*/*.png")], crop_count, 1)
    if not picked:
        raise ValueError(f"{crops}: no crops in class folders")
    made.append(quantise(reader.path, int8_path(reader.path), reader.input_name, reader_blobs(reader.size, picked)))
    return made


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="8-bit recogniser graphs, calibrated on validation data.")
    sub = parser.add_subparsers(dest="what", required=True)
    c = sub.add_parser("corner-reader", help="the rectified reader (issue 18)")
    c.add_argument("--float", dest="src", type=Path, required=True, help="the float reader graph (its export)")
    c.add_argument("--crops", type=Path, required=True, help="a validation crop file (vision.train.reader_data)")
    c.add_argument("--out", type=Path, required=True, help="where the 8-bit graph goes")
    c.add_argument("--count", type=int, default=2048, help="calibration crops")
    c.add_argument(
        "--game", default="loot-the-loop", help="whose cards it reads (loop or bag-o-loot: the number-card reader)"
    )
    r = sub.add_parser("corner-refiner", help="the corner refiner (issue 18)")
    r.add_argument("--float", dest="src", type=Path, required=True, help="the float refiner graph (its export)")
    r.add_argument("--patches", type=Path, required=True, help="a validation folder of vision.train.refiner_data")
    r.add_argument("--out", type=Path, required=True, help="where the 8-bit graph goes")
    r.add_argument("--count", type=int, default=2048, help="calibration patches")
    p = sub.add_parser("previous", help="the previous recogniser's finder and reader (issue 5)")
    p.add_argument("--scenes", type=Path, required=True, help="validation scene images (finder calibration)")
    p.add_argument("--crops", type=Path, required=True, help="validation reader crops, one folder per class")
    p.add_argument("--models", type=Path, default=None, help="models directory (default: models/)")
    p.add_argument("--frames", type=int, default=64)
    p.add_argument("--crop-count", type=int, default=1024)
    args = parser.parse_args(argv)
    try:
        if args.what == "corner-reader":
            if args.src.resolve() == args.out.resolve():
                parser.error("--out must differ from --float (the float graph is the source of every quantisation)")
            print(quantise_corner_reader(args.src, args.out, args.crops, args.count, args.game))
        elif args.what == "corner-refiner":
            if args.src.resolve() == args.out.resolve():
                parser.error("--out must differ from --float (the float graph is the source of every quantisation)")
            print(quantise_corner_refiner(args.src, args.out, args.patches, args.count))
        else:
            for path in quantise_previous(
                args.models or models_dir(), args.scenes, args.crops, args.frames, args.crop_count
            ):
                print(path)
    except (OSError, ValueError) as err:
        parser.error(str(err))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
