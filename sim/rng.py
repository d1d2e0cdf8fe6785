"""Random streams: one independent child stream per random source, seeded from (config hash, replication).

Streams are spawned in a fixed order of source names, so adding draws to one source never shifts another,
and the same config and replication give bit-identical results in any process or executor.
"""
from __future__ import annotations

import numpy as np

#: sources of the workload itself: with common random numbers they are keyed by the seed, not the config hash
WORKLOAD_SOURCES = ("arrival", "table", "operation", "runtime", "think", "writer")

SOURCES = (
    "arrival", "table", "operation", "runtime",
    "catalog_read", "catalog_cas", "get", "put_manifest_list", "put_table_metadata",
    "backoff", "validation_conflict",
    # added later: appending keeps every earlier source's stream (a child's seed depends on its index only)
    "put_checkpoint", "throttle",
    "think", "writer",
    "server_backoff",    # REST servers (sim.model.designs.rest)
    "put_version_hint",      # version files (fs-table): the hint's best-effort PUT
    "put_last_checkpoint",   # log fidelity: the checkpoint rebuild's _last_checkpoint PUT
    "lock_read", "lock_write", "lock_jitter",   # locks (sim.model.lock): polls; requests, releases; poll jitter
    "delete",                # an object DELETE (Iceberg on HMS: a losing attempt's metadata.json)
    "put_timeline",          # Hudi: a small timeline or metadata-table file's PUT
    "log_store",             # Delta's DynamoDB log store: its GetItem, Query and completion PutItem
)


def streams(config_hash: str, replication: int) -> dict[str, np.random.Generator]:
    root = np.random.SeedSequence(entropy=[int(config_hash, 16), int(replication)])
    return {name: np.random.Generator(np.random.PCG64(child))
            for name, child in zip(SOURCES, root.spawn(len(SOURCES)))}


def run_streams(cfg, replication: int) -> dict[str, np.random.Generator]:
    """The streams of one run of `cfg` (a `sim.config.Config`); every engine gets its randomness here.

    With `cfg.common_random_numbers` the workload sources are seeded from (seed, replication, source) alone, so
    configurations that differ only in design, retry policy or load share their underlying draws: the engines
    scale standard variates by the parameters (exponential gaps by the mean, lognormal runtimes by the
    median), so transaction i gets the same table, operation and runtime, and gaps scale with the mean. Every
    other source stays keyed by the config's seed hash."""
    from .config import seed_hash
    out = streams(seed_hash(cfg), replication)
    if getattr(cfg, "common_random_numbers", False):
        for name in WORKLOAD_SOURCES:
            seq = np.random.SeedSequence(entropy=[int(cfg.seed), int(replication), SOURCES.index(name)],
                                         spawn_key=(_CRN_TAG,))
            out[name] = np.random.Generator(np.random.PCG64(seq))
    return out


#: keeps common-random-number streams apart from any (config hash, replication) stream
_CRN_TAG = 0xC0

