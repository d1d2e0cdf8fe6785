"""Sweeps: YAML spec -> runs (any executor) -> results table (one row per configuration x replication).

The names below are loaded when first used (PEP 562): `python -m sim run` builds its parser from
`sim.sweep.cli`, and must not pay for the sweep's imports (pandas, scipy through the knee search)."""
import importlib

_WHERE = {"Outcome": "runner", "assemble": "runner", "run_sweep": "runner", "tasks_of": "runner",
          "Point": "spec", "Sweep": "spec", "load": "spec", "parse": "spec"}
__all__ = sorted(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
