"""How a process that reads frames shares its cores: the ONNX Runtime graphs and OpenCV run on threads of their own,
and numpy's BLAS keeps to one."""

from __future__ import annotations

import os


def one_blas_thread() -> None:
    """numpy's and OpenCV's BLAS (each wheel ships an OpenBLAS) on one thread for the rest of the process.

    Why: OpenBLAS keeps its worker threads spinning for a while after every product it splits between them, and on
    two cores they take those cores from the ONNX Runtime graph that runs next. Measured (session 52, this 2-core
    machine): The LOOP's board net took 11 ms, and 17 ms right after a 44 x 2,700 x 81 numpy product; the whole
    board of a frame 50 ms, and 41 ms with one BLAS thread. The runtime's products are small; training (torch)
    never calls this. A library loaded later reads the environment; one loaded already is told by threadpoolctl."""
    from threadpoolctl import threadpool_limits

    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    threadpool_limits(1, user_api="blas")
