"""The `sim` command's entry points (`sim`, pyproject.toml's [project.scripts]; `python -m sim`): the process's
settings, made before numpy loads, then the command line (`sim.cli`)."""
from __future__ import annotations

import gc
import os


def _settings() -> None:
    """One BLAS thread: sim computes in one thread a process (a sweep's parallelism is its worker processes, which
    inherit this), and OpenBLAS's own threads spin on the cores the other workers use (4c's grid on 2 cores: 152 s
    -> 145 s; one heavy `sim run`, 3.3 s -> 3.0 s). An explicit setting is kept.

    No loop vectorization in numba's compiles: the model's loops are event steps, not array loops; LLVM's passes
    over the default design's first compile took 19.1 s with it, 15.7 s without (NUMBA_LLVM_PASS_TIMINGS), and a
    seventh of 4c ran in the same time (14.4-14.9 s against 13.9-15.9 s, five pairs; results bit for bit).

    No garbage collection while the command loads: importing numpy and numba (some 115 k objects) ran 2 full
    collections and 250 young ones, 97 ms of a light `sim run`'s 0.6 s, none of which found anything to free.
    `sim.cli` turns it back on for the commands that need it (`_collector`)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("NUMBA_LOOP_VECTORIZE", "0")
    gc.disable()


def console() -> int:
    _settings()
    from .cli import console as command
    return command()


def module() -> int:
    _settings()
    from .cli import exiting, main
    return exiting(main())
