"""Training runs for the card recogniser (ultralytics, CPU), resumable, and their export to ONNX under models/.

One command per stage, safe to run again: a finished run is not repeated, an interrupted one resumes from its
last epoch (a session is at most three hours and takes its background jobs with it).

    python -m vision.train.fit finder --data out/finder_ds/data.yaml --epochs 2
    python -m vision.train.fit reader --data out/reader_ds --epochs 4
    python -m vision.train.fit export --run out/runs/finder --onnx models/cards-finder.onnx
    python -m vision.train.fit val --weights out/runs/reader/weights/last.pt --data out/reader_ds4 --split test
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).parent
FINDER_YAML = HERE / "finder.yaml"
READER_YAML = HERE / "reader.yaml"
FINDER_IMGSZ = 640  # training tile; the exported graph takes the 1280x720 frame at half size, 640x384
FINDER_EXPORT_SHAPE = (384, 640)
READER_IMGSZ = 64
FINDER_SCALE = 0.5  # the finder's zoom augmentation, +- this fraction (ultralytics' default)


def _ultralytics() -> ModuleType:
    """ultralytics, offline and on both cores (it uses one thread unless told)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_AUTOINSTALL", "False")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(Path(tempfile.gettempdir()) / "tabletop-yolo"))
    import torch
    import ultralytics
    import ultralytics.utils.torch_utils as torch_utils

    threads = max(1, min(2, os.cpu_count() or 1))
    torch_utils.NUM_THREADS = threads
    torch.set_num_threads(threads)
    return ultralytics


def _finished(run: Path, epochs: int) -> bool:
    results = run / "results.csv"
    return results.exists() and len(results.read_text().strip().splitlines()) - 1 >= epochs


def train(
    stage: str,
    data: Path,
    project: Path,
    epochs: int,
    batch: int,
    workers: int = 2,
    init: Path | None = None,
    name: str | None = None,
    lr0: float | None = None,
    scale: float = FINDER_SCALE,
) -> Path:
    """Trains (or resumes) one stage; returns its run directory. `init` starts from an earlier run's weights
    (a new run, `name`, with its own schedule): how training goes on across sessions. `scale` is the finder's
    zoom augmentation (+-): a smaller range spends fewer samples on indices shrunk below what the camera sees."""
    ultralytics = _ultralytics()
    name = name or stage
    run = project / name
    last = run / "weights" / "last.pt"
    if _finished(run, epochs):
        print(f"{run}: already trained for {epochs} epochs")
        return run
    if last.exists():
        ultralytics.YOLO(str(last)).train(resume=True)
        return run
    common = dict(
        data=str(data),
        epochs=epochs,
        batch=batch,
        workers=workers,
        project=str(project.resolve()),
        name=name,
        exist_ok=True,
        amp=False,
        plots=False,
        val=False,
        save_period=1,
        seed=0,
        deterministic=False,
        warmup_epochs=0.3,
        patience=1000,
    )
    if init is not None and not init.is_file():
        raise FileNotFoundError(f"{init}: no such weights to start from")
    if stage == "finder":
        model = ultralytics.YOLO(str(init or FINDER_YAML), task="obb")
        # mosaic all the way (close_mosaic 0): frames are 640x360, so a plain letterbox would waste 44% of
        # every 640x640 tile on padding; rotations are already in the data (cards lie at every angle)
        model.train(imgsz=FINDER_IMGSZ, close_mosaic=0, mosaic=1.0, degrees=0.0, fliplr=0.5, scale=scale, **common)
    elif stage == "reader":
        model = ultralytics.YOLO(str(init or READER_YAML), task="classify")
        # no flips (a mirrored index is not a card), mild crops (the index must stay in), colour jitter and
        # erasing (a finger or a neighbour's edge over part of the index); AdamW at 2e-3 with a cosine decay, as
        # ultralytics' automatic choice for 54 classes (1.7e-4) is too timid for a few epochs from scratch; the
        # 113k crops of 32x32 are 350 MB, cached in memory rather than decoded again every epoch
        model.train(
            imgsz=READER_IMGSZ,
            optimizer="AdamW",
            lr0=lr0 or 0.002,
            cos_lr=True,
            cache="ram",
            fliplr=0.0,
            flipud=0.0,
            scale=0.15,
            auto_augment=None,
            erasing=0.25,
            hsv_h=0.01,
            hsv_s=0.4,
            hsv_v=0.4,
            **common,
        )
    else:
        raise ValueError(f"unknown stage {stage!r}: expected finder or reader")
    return run


def validate(weights: Path, data: Path, split: str) -> dict[str, float]:
    """Stage-level metrics on a split's families (finder: box mAP and recall per class; reader: top-1): where
    the end-to-end benchmark's misses come from."""
    ultralytics = _ultralytics()
    if not weights.is_file():
        raise FileNotFoundError(f"{weights}: no such weights")
    model = ultralytics.YOLO(str(weights))
    imgsz = FINDER_IMGSZ if model.task == "obb" else READER_IMGSZ
    metrics = model.val(data=str(data), split=split, imgsz=imgsz, batch=16, workers=2, plots=False)
    if model.task == "classify":
        return {"top1": float(metrics.top1), "top5": float(metrics.top5)}
    box = metrics.box
    found = {"mAP50": float(box.map50), "mAP50-95": float(box.map)}
    for k, name in enumerate(model.names.values()):
        found[f"{name} mAP50"] = float(box.ap50[k])
        found[f"{name} recall"] = float(box.r[k])
        found[f"{name} precision"] = float(box.p[k])
    return found


def export(run: Path, onnx: Path) -> Path:
    """The run's last weights as a static-shape ONNX graph (ONNX Runtime only at run time)."""
    ultralytics = _ultralytics()
    weights = run / "weights" / "last.pt"
    if not weights.exists():
        raise FileNotFoundError(f"{weights}: no trained weights (train the stage first)")
    model = ultralytics.YOLO(str(weights))
    imgsz = FINDER_EXPORT_SHAPE if model.task == "obb" else READER_IMGSZ
    dynamic = model.task == "classify"  # the reader takes every crop of a frame in one batch
    made = Path(model.export(format="onnx", imgsz=imgsz, dynamic=dynamic, simplify=False, opset=17))
    onnx.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(made, onnx)
    if model.task == "classify":
        expose_features(onnx)
    return onnx


def expose_features(path: Path) -> Path:
    """Adds the last layer's input as a second output, `features`, and saves that layer beside the graph as the
    base deck head (`<name>-head.npz`): enrolment refits it without torch and without the onnx package."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    from vision.recognise.enrol import DeckHead
    from vision.recognise.reader import FEATURES_OUTPUT

    model = onnx.load(str(path))
    graph = model.graph
    gemms = [n for n in graph.node if n.op_type == "Gemm"]
    if not gemms:
        raise ValueError(f"{path}: no Gemm node (the classifier's last layer) to take features from")
    gemm = gemms[-1]
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    weight = init[gemm.input[1]]
    attrs = {a.name: helper.get_attribute_value(a) for a in gemm.attribute}
    if not attrs.get("transB", 0):
        weight = weight.T
    bias = init[gemm.input[2]] if len(gemm.input) > 2 else np.zeros(weight.shape[0], np.float32)
    if FEATURES_OUTPUT not in [o.name for o in graph.output]:
        graph.node.append(helper.make_node("Identity", [gemm.input[0]], [FEATURES_OUTPUT]))
        value = helper.make_tensor_value_info(FEATURES_OUTPUT, onnx.TensorProto.FLOAT, ["n", weight.shape[1]])
        graph.output.append(value)
        onnx.checker.check_model(model)
        onnx.save(model, str(path))
    meta = {p.key: p.value for p in model.metadata_props}
    names = ast.literal_eval(meta["names"])
    classes = tuple(names[i] for i in sorted(names))
    head = DeckHead("base", classes, weight.astype(np.float32), bias.astype(np.float32))
    return head.save(path.with_name(path.stem + "-head.npz"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train or export the card recogniser's stages (CPU, resumable).")
    sub = parser.add_subparsers(dest="command", required=True)
    for stage, batch in (("finder", 16), ("reader", 64)):
        p = sub.add_parser(stage)
        p.add_argument("--data", type=Path, required=True)
        p.add_argument("--project", type=Path, default=Path("out/runs"))
        p.add_argument("--epochs", type=int, required=True)
        p.add_argument("--batch", type=int, default=batch)
        p.add_argument("--init", type=Path, help="start from these weights (an earlier run's last.pt)")
        p.add_argument("--name", help="run name (default: the stage)")
        p.add_argument("--lr0", type=float, help="reader: initial learning rate (default 0.002)")
        if stage == "finder":
            p.add_argument("--scale", type=float, default=FINDER_SCALE, help="zoom augmentation, +- this fraction")
    p = sub.add_parser("export")
    p.add_argument("--run", type=Path, required=True)
    p.add_argument("--onnx", type=Path, required=True)
    p = sub.add_parser("val")
    p.add_argument("--weights", type=Path, required=True)
    p.add_argument("--data", type=Path, required=True, help="the stage's data (finder data.yaml or reader folder)")
    p.add_argument("--split", default="val", choices=("val", "test"))
    args = parser.parse_args(argv)
    if args.command == "val":
        for key, value in validate(args.weights, args.data, args.split).items():
            print(f"{key:24s} {value:.4f}")
    elif args.command == "export":
        print(export(args.run, args.onnx))
    else:
        print(
            train(
                args.command,
                args.data,
                args.project,
                args.epochs,
                args.batch,
                init=args.init,
                name=args.name,
                lr0=args.lr0,
                scale=getattr(args, "scale", FINDER_SCALE),
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
