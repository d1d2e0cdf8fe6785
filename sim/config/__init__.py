"""Configuration as data: typed, frozen, validated, hashable.

A config file is YAML with the shape documented in docs/reference.md ("Config keys"). Every key is read by the
engine; an unknown key, a wrong type or an out-of-range value raises `ConfigError` naming the dotted key path,
so a typo is an error and never a silent default. The fully resolved config (all defaults filled in) and its
hash are stored with every result.

One concept per module, imports pointing one way (defaults <- types <- resolve <- loading, resolve <- hashing):
`defaults` (the numbers real systems set), `types` (the frozen dataclasses and each key's rule), `resolve` (the
cross-field rules), `loading` (plain data, files and overrides into a resolved `Config`), `hashing` (its
identity and its seeds): a config's hash is `config_hash(cfg)`, a copy with overrides `replaced(cfg, overrides)`.
"""
from __future__ import annotations

from ..schema import ConfigError
from .defaults import (CHECKPOINT_INTERVAL, EXPONENTIAL_RESEND, EXPONENTIAL_RETRY, LOCK_DISCIPLINES, LOCK_VARIANTS,
                       LOG_STORE_DEFAULTS, RESEND_CLIENTS, SERVER_VARIANTS)
from .hashing import config_hash, seed_hash
from .loading import build_structure, check_path, from_dict, load, overrides_of, parse_override, replaced, set_path
from .resolve import JOBS, LOG_CLIENT_KEYS, jobs_of, operations_on
from .trace import run_window, trace_data, trace_rate_cps, traced
from .types import (IO, Catalog, Commit, Config, InterArrival, Job, LatencySpec, Lock, LogStore, Maintenance,
                    Operations, Retry, RetryPolicy, Runtime, Server, Storage, TableSelection, Trace, Workload, Writers)

__all__ = [
    "CHECKPOINT_INTERVAL", "EXPONENTIAL_RESEND", "EXPONENTIAL_RETRY", "IO", "JOBS", "LOCK_DISCIPLINES",
    "LOCK_VARIANTS", "LOG_CLIENT_KEYS", "LOG_STORE_DEFAULTS", "RESEND_CLIENTS", "SERVER_VARIANTS", "Catalog",
    "Commit", "Config", "ConfigError", "InterArrival", "Job", "LatencySpec", "Lock", "LogStore", "Maintenance",
    "Operations", "Retry", "RetryPolicy", "Runtime", "Server", "Storage", "TableSelection", "Trace", "Workload",
    "Writers", "jobs_of", "operations_on", "build_structure", "check_path", "config_hash", "from_dict",
    "load", "overrides_of", "parse_override", "replaced", "run_window", "seed_hash", "set_path", "trace_data",
    "trace_rate_cps", "traced",
]
