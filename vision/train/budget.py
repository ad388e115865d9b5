"""What every net trained here shares: a cosine learning rate over a time budget (what a CPU session can spend), a
learning curve written as it goes, checkpoints that survive an interruption, and the export to ONNX."""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch only where a net is trained: the command lines' options are read without it
    import torch


class TorchSession:
    """A torch net behind ONNX Runtime's `run` call (input "x"; every output, in order, as numpy), so that validation
    reads through the same code as the runtime does with the exported graph."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model

    def run(self, _outputs: object, feeds: dict[str, Any]) -> list[Any]:
        import torch

        with torch.no_grad():
            out = self.model(torch.from_numpy(feeds["x"]))
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


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
    import torch

    torch.save(checkpoint, run / "tmp.pt")
    (run / "tmp.pt").replace(run / name)


def export_onnx(
    model: torch.nn.Module, dummy: torch.Tensor, path: Path, inputs: list[str], outputs: list[str], dynamic: dict
) -> None:
    """The eval-mode model as an ONNX graph (opset 17, the TorchScript exporter) for ONNX Runtime."""
    import torch

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


def train_for_budget(
    model: torch.nn.Module,
    opt: torch.optim.Optimizer,
    state: dict[str, Any],
    lr: float,
    next_loss: Callable[[], torch.Tensor],
    evaluate: Callable[[], dict[str, Any]],
    run: Path,
    seen: tuple[str, int],
    extra: dict[str, Any] | None = None,
    warmup: int = 300,
    every_s: float = 240.0,
) -> None:
    """Steps (`next_loss` draws a batch and gives its loss) until `state["seconds"]` of stepping reach
    `state["budget_s"]`, on the cosine; every `every_s` seconds and at the end a curve row (steps, minutes, what was
    seen: `seen` is its name and the batch size, the running loss and `evaluate()`'s figures) and a checkpoint
    (`extra` beside the model, optimiser and state)."""
    with (run / "curve.jsonl").open("a") as log:
        last_eval = time.time()
        running = 0.0
        while state["seconds"] < state["budget_s"]:
            t0 = time.time()
            cosine_lr(opt, lr, state["step"], state["seconds"] / state["budget_s"], warmup)
            loss = next_loss()
            opt.zero_grad()
            loss.backward()
            opt.step()
            state["step"] += 1
            state["seconds"] += time.time() - t0
            value = float(loss.detach())
            running = 0.98 * running + 0.02 * value if state["step"] > 1 else value
            if time.time() - last_eval > every_s or state["seconds"] >= state["budget_s"]:
                name, batch = seen
                row = {"step": state["step"], "minutes": round(state["seconds"] / 60, 2), name: state["step"] * batch}
                log_row(log, {**row, "loss": round(running, 4), **evaluate()})
                checkpoint = {"model": model.state_dict(), "opt": opt.state_dict(), "state": state}
                save_checkpoint(run, {**checkpoint, **(extra or {})})
                last_eval = time.time()


def add_budget_args(parser: argparse.ArgumentParser, minutes: float, batch: int, lr: float, threads: int) -> None:
    """The options every budgeted training run takes: where it goes, its time budget and its optimiser."""
    parser.add_argument("--out", type=Path, required=True, help="the run's folder (last.pt, curve.jsonl): resumed")
    parser.add_argument("--minutes", type=float, default=minutes, help="the budget, minutes of training steps")
    parser.add_argument("--batch", type=int, default=batch)
    parser.add_argument("--lr", type=float, default=lr)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=threads, help="torch threads (1 beside another training)")


def resume(run: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, minutes: float) -> dict[str, Any]:
    """The run's training state (steps, seconds of stepping, the budget): from its last checkpoint when there is one
    (model and optimiser restored), else from nothing; the budget is always `minutes`, so a finished run can be
    continued to a longer one (a warm continuation of its cosine)."""
    run.mkdir(parents=True, exist_ok=True)
    state: dict[str, Any] = {"step": 0, "seconds": 0.0, "budget_s": minutes * 60.0}
    last = run / "last.pt"
    if last.is_file():
        import torch

        saved = torch.load(last, weights_only=False)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        state = {**saved["state"], "budget_s": minutes * 60.0}
        print(f"resumed at step {state['step']}, {state['seconds'] / 60:.1f} of {minutes} min")
    return state


def train_or_export(
    description: str,
    add_train_args: Callable[[argparse.ArgumentParser], None],
    train: Callable[[argparse.Namespace], None],
    export: Callable[[Path, Path], None],
    argv: list[str] | None = None,
) -> None:
    """The command line of a net with nothing but `train` (its options from `add_train_args`) and `export`."""
    parser = argparse.ArgumentParser(description=description)
    sub = parser.add_subparsers(dest="command", required=True)
    add_train_args(sub.add_parser("train"))
    add_export_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "train":
        train(args)
    else:
        export(args.run, args.onnx)


def add_export_parser(sub: Any) -> None:
    """`export --run RUN --onnx FILE`: a run's last checkpoint as an ONNX graph."""
    e = sub.add_parser("export")
    e.add_argument("--run", type=Path, required=True)
    e.add_argument("--onnx", type=Path, required=True)
