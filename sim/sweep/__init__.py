"""Sweeps: YAML spec -> runs (any executor) -> results table (one row per configuration x replication)."""
from .runner import Outcome, assemble, run_sweep, tasks_of
from .spec import Point, Sweep, load, parse

__all__ = ["Outcome", "Point", "Sweep", "assemble", "load", "parse", "run_sweep", "tasks_of"]
