"""What every net trained here shares: a cosine learning rate over a time budget (what a CPU session can spend), a
learning curve written as it goes, checkpoints that survive an interruption, and the export to ONNX."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import IO, Any

import torch


def cosine_lr(opt: torch.optim.Optimizer, lr: float, step: int, progress: float, warmup: int) -> None:
    """A linear warm-up over `warmup` steps, then a cosine from `lr` down to 0 as `progress` goes from 0 to 1."""
    for group in opt.param_groups:
        group["lr"] = lr * min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * progress))


def log_row(log: IO[str], row: dict[str, Any]) -> None:
    """One line of the learning curve, on disk at once (a session may end at any moment)."""
    log.write(json.dumps(row) + "\n")
    log.flush()
    print(row, flush=True)


def save_checkpoint(run: Path, checkpoint: dict[str, Any], name: str = "last.pt") -> None:
    """Whole or not at all: written beside, then renamed over the last one."""
    torch.save(checkpoint, run / "tmp.pt")
    (run / "tmp.pt").replace(run / name)


def export_onnx(
    model: torch.nn.Module, dummy: torch.Tensor, path: Path, inputs: list[str], outputs: list[str], dynamic: dict
) -> None:
    """The eval-mode model as an ONNX graph (opset 17, the TorchScript exporter) for ONNX Runtime."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model.eval(),
        dummy,
        str(path),
        input_names=inputs,
        output_names=outputs,
        dynamic_axes=dynamic,
        opset_version=17,
        dynamo=False,
    )
    print(f"wrote {path}")
