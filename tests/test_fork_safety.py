"""Forking a process that holds ONNX Runtime sessions (the renderers' and benches' process pools): a child must
never free an object it inherited, or it can hang in a session's destructor (`vision.recognise.models`)."""

from __future__ import annotations

import gc
import multiprocessing
import os
from pathlib import Path

import vision.recognise.models  # noqa: F401 - registers the fork hook under test


class _Cycle:
    """Garbage only the collector frees (it refers to itself); notes the process that freed it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.me = self

    def __del__(self) -> None:
        (self.folder / str(os.getpid())).touch()


def _collect(_: int) -> int:
    gc.collect()
    return os.getpid()


def test_a_forked_child_never_frees_what_its_parent_dropped(tmp_path: Path) -> None:
    enabled = gc.isenabled()
    gc.disable()  # so only the fork hook, or the child, can free the cycle
    try:
        _Cycle(tmp_path)
        with multiprocessing.get_context("fork").Pool(1) as pool:
            (child,) = pool.map(_collect, [0])
    finally:
        if enabled:
            gc.enable()
    assert (tmp_path / str(os.getpid())).exists()  # freed in the parent, before the fork
    assert not (tmp_path / str(child)).exists()
