"""How a model function is declared: plain Python for the SimPy engine, and compiled for the fast engine's loops.

Each model function is a numba dispatcher of its own (`model_function`), compiled on its first use and cached on
disk, and a design's loop (`sim.engines.fast`) links the ones its design reaches. So a design's first run compiles
its own handlers and the mechanisms no earlier run compiled, and loads the rest from the cache; a design never
compiles another's handlers. Called from Python (the SimPy engine), a model function runs its Python code.

Measured on the default design's first run (benchmarks/compile.py): every function compiled is a whole pipeline
(typing, lowering, machine code), so what keeps that down is how little each one is handed and made of:
- no Python-callable wrapper (`no_cpython_wrapper`, `no_cfunc_wrapper`): only compiled code calls these
  functions, and a wrapper that unboxes the whole `Model` was about a quarter of each function's compile;
- no inlining at numba's IR level: an inlined function is still compiled on its own, then typed again in each
  caller; nested (loop -> step -> route -> handler) that multiplied the typing;
- the `Model` handed to each is small: the parameters as one record, the random draws as one array; and the fast
  engine hands it over by reference, one pointer (`sim.engines.model_ref`), not its forty-odd arrays field by field
  (which took the default design's first compile from 57 to 36 s of CPU, and a heavy run from 3.4 to 1.8 s).
The loop runs as fast as when the handlers were inlined into it (benchmarks/compile.py's run figures).
The loops compile without numba's reference counting (`_nrt=False`: they allocate nothing).

`handler` marks the functions an effect point dispatches to (a design's `step`, the routes it composes and the
handlers they call); it is `model_function`.
"""
from __future__ import annotations

import importlib

from numba.core.registry import CPUDispatcher

_OPTIONS = dict(nopython=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)


def _named(module: str, qualname: str):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


class ModelFunction(CPUDispatcher):
    """A model function: compiled (and cached) for compiled callers, plain Python for Python callers."""

    def __reduce__(self):
        # by name: numba keys a design's cached loop on a pickle of the functions it closes over, which must be
        # the same bytes in every process (a dispatcher's own pickle holds a per-process id)
        return _named, (self.py_func.__module__, self.py_func.__qualname__)


def model_function(fn):
    # a class of its own whose call is the function itself: the SimPy engine's calls cost no extra frame
    cls = type(ModelFunction.__name__, (ModelFunction,), {"__call__": staticmethod(fn), "__slots__": ()})
    disp = cls(py_func=fn, locals={}, targetoptions=dict(_OPTIONS))
    disp.enable_caching()
    return disp


handler = model_function
