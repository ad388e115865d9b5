"""Loading the recogniser's ONNX files: where they live, their class names, and a clear error when missing."""

from __future__ import annotations

import ast
import dataclasses
import gc
import json
import os
from pathlib import Path
from typing import Self

import onnxruntime as ort

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
FINDER_FILE = "cards-finder.onnx"
READER_FILE = "cards-reader.onnx"
READER_HEAD_FILE = "cards-reader-head.npz"  # the reader's last layer, the start of every enrolment


def _before_fork() -> None:
    """A forked child must never free an ONNX Runtime session it inherited: the session's thread pool and its locks
    belong to the parent, and the child hangs in the destructor (a fork pool of the video renderer hung so, its
    worker's collector freeing a session an earlier test had dropped). So garbage is collected before every fork
    and what remains is frozen: the child's collector never visits an object it inherited."""
    gc.collect()
    gc.freeze()


os.register_at_fork(before=_before_fork, after_in_parent=gc.unfreeze)


class ModelError(RuntimeError):
    """A model file is missing or is not what the recogniser expects."""


def models_dir() -> Path:
    """models/ beside the package, or TABLETOP_MODELS when set (a trained copy elsewhere)."""
    return Path(os.environ.get("TABLETOP_MODELS", MODELS_DIR))


def session(path: Path, threads: int = 2) -> ort.InferenceSession:
    """An ONNX Runtime session on `threads` cores (two is the laptop this is built for)."""
    if not path.is_file():
        raise ModelError(f"{path}: model file not found (models/README.md says how to train or restore it)")
    return session_of_bytes(path, threads, str(path))


def session_of_bytes(graph: Path | bytes, threads: int = 2, where: str = "") -> ort.InferenceSession:
    """`session` on a graph's file or its bytes (an enrolled deck's adapted reader travels inside its deck head);
    `where` names it in the error a damaged graph raises."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # A recogniser runs two graphs in turn on the same two cores. By default each session's idle threads spin
    # after a run, and they spin while the other graph runs, taking its cores: a busy frame through the rectified
    # recogniser took 61 ms with spinning and 41 ms without (issue 18, session 13).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        model = graph if isinstance(graph, bytes) else str(graph)
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime raises its own untyped errors for a corrupt file
        raise ModelError(f"{where or graph}: not a loadable ONNX model ({err})") from err


def class_names(sess: ort.InferenceSession, path: Path) -> tuple[str, ...]:
    """The class names ultralytics writes into the ONNX metadata, in output order."""
    meta = sess.get_modelmeta().custom_metadata_map
    if "names" not in meta:
        raise ModelError(f"{path}: no 'names' in the ONNX metadata (expected an ultralytics export)")
    names = ast.literal_eval(meta["names"])
    return tuple(names[i] for i in sorted(names))


class ThresholdFile:
    """Save and load for a frozen dataclass of float cut-offs (and tuples of floats: a curve) kept beside the models
    (chosen by a tuner)."""

    def save(self, path: Path) -> Path:
        path.write_text(json.dumps(dataclasses.asdict(self), indent=1) + "\n")  # type: ignore[call-overload]
        return path

    @classmethod
    def load(cls, path: Path) -> Self:
        """The file's values, defaults where it has none; defaults when there is no file."""
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text())
            known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
            return cls(
                **{k: tuple(map(float, v)) if isinstance(v, list) else float(v) for k, v in data.items() if k in known}
            )
        except (OSError, ValueError, TypeError, AttributeError) as err:
            raise ModelError(f"{path}: not a thresholds file ({err})") from err
