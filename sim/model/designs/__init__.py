"""The model's designs: one module each, peers built on the mechanisms below them (`sim.model`: transaction life,
catalog, I/O, Iceberg's client, Delta's log, lock, throttle, resend, retry, arrivals, writers). No design imports
another.

A design module owns its effect points' handlers and `step`, the one place that routes each effect point it can
reach to its handler, and declares in `OWNS` the effect points, transaction fields, parameters and random sources
that are its alone (the mechanisms it composes declare theirs). Each design's `step` is compiled into an event
loop of its own (`sim.engines.fast`), so a run compiles only its design.

Which design a run is comes from its parameters (`design_of`), so that a config that spells out a design's keys
instead of naming it runs the same. The named designs a config can give (`sim.designs`, config data) map onto
these: several named designs that differ only in settings share one model design.

Adding a design: its module here, its name in `_NAMES` (and, if its parameters tell it apart, in `design_of`),
its named preset in `sim.designs`, and its docs (docs/howto.md, "Add a design").
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType

_NAMES = ("cas", "fs_table", "rest", "hive", "log", "delta_dynamodb", "hudi", "cas_queue", "rest_tx", "cas_db", "cas_contended")


class _Designs(Mapping):
    """Each design's module by name, imported on first use: a run imports its own design, not the others' handlers
    and mechanisms (numba's decorators make a module's import cost grow with its functions)."""

    def __getitem__(self, name: str) -> ModuleType:
        if name not in _NAMES:
            raise KeyError(name)
        return importlib.import_module(f"{__name__}.{name}")

    def __iter__(self):
        return iter(_NAMES)

    def __len__(self) -> int:
        return len(_NAMES)


DESIGNS: Mapping[str, ModuleType] = _Designs()


def design_of(p) -> str:
    """The model design a run's parameters (`sim.model.state.Params`) select."""
    if p.hudi:
        return "hudi"
    if p.lock:
        return "hive"
    if p.log_store:
        return "delta_dynamodb"
    if p.log:
        return "log"
    if p.server:
        return "rest_tx" if p.tables_max > 1 or p.mt_ref else "rest"   # (Nessie's one-table commit: its branch's)
    if p.rt_ops:
        return "cas_db"
    if p.version_files:
        return "fs_table"
    if p.object_queue:
        return "cas_queue"
    if p.contended:
        return "cas_contended"
    return "cas"


def design_of_config(cfg) -> str:
    """The model design a config runs (what its first run compiles)."""
    from ..params import params_of
    return design_of(params_of(cfg, False)[0])
