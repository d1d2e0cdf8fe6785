"""Random streams: one independent child stream per random source, seeded from (config hash, replication).

Streams are spawned in a fixed order of source names, so adding draws to one source never shifts another,
and the same config and replication give bit-identical results in any process or executor.
"""
from __future__ import annotations

import numpy as np

SOURCES = (
    "arrival", "table", "operation", "runtime",
    "catalog_read", "catalog_cas", "get", "put_manifest_list", "put_table_metadata",
    "backoff", "validation_conflict",
    # added later: appending keeps every earlier source's stream (a child's seed depends on its index only)
    "put_checkpoint", "throttle",
)


def streams(config_hash: str, replication: int) -> dict[str, np.random.Generator]:
    root = np.random.SeedSequence(entropy=[int(config_hash, 16), int(replication)])
    return {name: np.random.Generator(np.random.PCG64(child))
            for name, child in zip(SOURCES, root.spawn(len(SOURCES)))}


def run_streams(cfg, replication: int) -> dict[str, np.random.Generator]:
    """The streams of one run of `cfg` (a `sim.config.Config`); every engine gets its randomness here."""
    from .config import seed_hash
    return streams(seed_hash(cfg), replication)
