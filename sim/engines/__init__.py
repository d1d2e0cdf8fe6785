"""Engines: how events are scheduled. Both run the one model of `sim.model` and give identical results.

- `fast` (`sim.engines.fast`): a numba event loop with an event queue on SimPy's event key (`sim.engines.queue`);
  the default.
- `simpy` (`sim.engines.simpy_engine`): SimPy processes, one per transaction; the reference to step through.
"""
from __future__ import annotations

ENGINES = ("fast", "simpy")


def make_engine(cfg, replication: int = 0, history: bool = False, engine: str = "fast", **kw):
    """`kw`: `sink`, `slots` (`sim.model.build.Run`)."""
    if engine == "fast":
        from .fast import FastEngine
        return FastEngine(cfg, replication, record_history=history, **kw)
    if engine == "simpy":
        from .simpy_engine import SimPyEngine
        return SimPyEngine(cfg, replication, record_history=history, **kw)
    raise ValueError(f"unknown engine {engine!r} (expected one of: {', '.join(ENGINES)})")
