"""Random sources and their streams: one independent child stream per source, seeded from (config hash,
replication).

Every source is declared once, in `SOURCES`: its stream, its code in the model (`Src`, `sim.model.state`), what
it draws (`sim.model.sources`) and how many at first. Streams are spawned in the table's order, so adding draws to
one source never shifts another, and the same config and replication give bit-identical results in any process
or executor. This module stays light (numpy only): `sim.model.state` derives its codes from it.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

BATCH = 1024   # a source's draws come in multiples of this many (`sim.model.sources`)


class RandomSource(NamedTuple):
    """One random source. `draws` names what it draws: "latency.<profile>" (a `sim.latency.LatencyModel` field),
    "uniform" (U(0, 1)) or "workload.<its distribution>". `first(p, n)`: how many to draw up front, from the run's
    `Params` and its expected arrivals n (a guess that sizes memory, never the numbers: refills continue the same
    stream)."""
    stream: str                 # its stream's name (streams are spawned in `SOURCES` order)
    code: str                   # its name in `Src`; "": drawn by the arrivals (`sim.model.sources.Arrivals`)
    index: int                  # its `Src` value, the index of its draws in `Model.draws` (-1: none)
    draws: str
    first: Callable | None      # None: drawn by the arrivals
    workload: bool = False      # the workload's own: with common random numbers keyed by the seed, not the config hash


# Append new sources at the end: a child stream's seed depends on its index only, so appending keeps every earlier
# source's draws (and so existing results); give it the next `Src` value too.
SOURCES = (
    # the arrivals' gaps (a batch more than the arrivals expected; writers draw none), tables, operations, runtimes
    # (a trace's rows draw a runtime where they have none, and partitions: `sim.trace.replay`)
    RandomSource("arrival", "GAP", 7, "workload.inter_arrival", lambda p, n: n + BATCH, workload=True),
    RandomSource("table", "", -1, "workload.table_selection", None, workload=True),
    RandomSource("operation", "", -1, "workload.fast_append_ratio", None, workload=True),
    RandomSource("runtime", "", -1, "workload.runtime", None, workload=True),
    RandomSource("catalog_read", "READ", 0, "latency.catalog_read", lambda p, n: 3 * n),
    RandomSource("catalog_cas", "CAS", 1, "latency.catalog_cas", lambda p, n: 2 * n),
    RandomSource("get", "GET", 2, "latency.get", lambda p, n: 4 * n),
    RandomSource("put_manifest_list", "PUT_ML", 3, "latency.put_manifest_list", lambda p, n: 2 * n),
    RandomSource("put_table_metadata", "PUT_TM", 4, "latency.put_table_metadata", lambda p, n: 2 * n),
    # backoff jitter; real conflicts of a ValidatedOverwrite
    RandomSource("backoff", "BACKOFF", 5, "uniform",
                 lambda p, n: n if p.jitter_catalog != 0.0 or p.jitter_table != 0.0 else 0),
    RandomSource("validation_conflict", "CONFLICT", 6, "uniform", lambda p, n: n if p.vo_conflicts else 0),
    RandomSource("put_checkpoint", "PUT_CP", 8, "latency.put_checkpoint",
                 lambda p, n: n // p.checkpoint_interval if p.checkpoint_interval else 0),
    RandomSource("throttle", "THROTTLE", 9, "uniform", lambda p, n: n if p.throttle else 0),   # resend jitter
    # writers (sim.model.writers): think times; a writer's first start and phase jitter, 2 per writer at least
    # (a trace's starters draw neither: `sim.model.trace`)
    RandomSource("think", "THINK", 10, "workload.think", lambda p, n: n if p.writers and not p.trace else 0,
                 workload=True),
    RandomSource("writer", "WRITER", 11, "uniform",
                 lambda p, n: 2 * (n + p.writers) if p.writers and not p.trace else 0, workload=True),
    # REST servers (sim.model.designs.rest): the jitter of a server's retry sleep per lost database CAS
    RandomSource("server_backoff", "SERVER", 12, "uniform",
                 lambda p, n: n if p.server and (p.jitter_server != 0.0 or p.mt_ref) else 0),
    # version files (fs-table): the version hint's best-effort PUT
    RandomSource("put_version_hint", "PUT_HINT", 13, "latency.put_version_hint",
                 lambda p, n: n if p.version_files else 0),
    # log fidelity: the checkpoint rebuild's _last_checkpoint PUT
    RandomSource("put_last_checkpoint", "PUT_LAST_CP", 14, "latency.put_last_checkpoint",
                 lambda p, n: n // max(1, p.checkpoint_interval) if p.checkpoint_rebuild else 0),
    # locks (sim.model.lock): polls; a request and a release per attempt; poll jitter
    RandomSource("lock_read", "LOCK_READ", 15, "latency.lock", lambda p, n: n if p.lock else 0),
    RandomSource("lock_write", "LOCK_WRITE", 16, "latency.lock_write", lambda p, n: 2 * n if p.lock else 0),
    RandomSource("lock_jitter", "LOCK_JITTER", 17, "uniform", lambda p, n: n if p.lock and p.jitter_lock != 0.0 else 0),
    # an object DELETE (Iceberg on HMS, and a REST server that deletes it: a losing attempt's metadata.json)
    RandomSource("delete", "DELETE", 18, "latency.delete",
                 lambda p, n: n if (p.lock and not p.hudi) or p.server_delete else 0),
    # Hudi: a small timeline or metadata-table file's PUT
    RandomSource("put_timeline", "PUT_TIMELINE", 19, "latency.put_timeline", lambda p, n: 8 * n if p.hudi else 0),
    # Delta's DynamoDB log store: its GetItem, Query and completion PutItem
    RandomSource("log_store", "LOG_STORE", 20, "latency.log_store", lambda p, n: 3 * n if p.log_store else 0),
    # the microbenchmark's HEAD, under a profile with a HEAD of its own (else the HEAD is a `get` draw); a file
    # system's exists() checks
    RandomSource("head", "HEAD", 21, "latency.head",
                 lambda p, n: 4 * n if p.file_system or p.pyiceberg else n if p.own_head else 0),
    # a long read's one draw (`sim.long_reads`): the uniform that picks its quantile; drawn once a run has one
    RandomSource("long_read", "LONG", 22, "uniform", lambda p, n: 0),
    # operations (`workload.operations`): the partitions each arrival touches, drawn by the arrivals
    RandomSource("partitions", "", -1, "workload.operations", None, workload=True),
    # maintenance jobs (`sim.model.jobs`): each job's phase; each run's time before its commit (standard normals,
    # scaled by its job's lognormal)
    RandomSource("job_phase", "JOB_PHASE", 23, "uniform", lambda p, n: p.jobs + BATCH if p.jobs else 0, workload=True),
    RandomSource("job_runtime", "JOB_RUNTIME", 24, "workload.job_runtime",
                 lambda p, n: BATCH if p.jobs or p.inline_every else 0, workload=True),
    # commits over several tables (`workload.multi_table`): how many tables each arrival's commit spans, and which
    # others, drawn by the arrivals
    RandomSource("tables", "", -1, "workload.multi_table", None, workload=True),
    # faults (`sim.model.faults`): whether a commit request lost its answer or was answered 5xx, one a request
    RandomSource("fault", "FAULT", 25, "uniform", lambda p, n: 2 * n if p.faults else 0),
    # concurrent writes to one object (`sim.model.contention`): whether a write that met another in flight is
    # answered 5xx (a busy store: Azure), one a write that met one
    RandomSource("busy", "BUSY", 26, "uniform", lambda p, n: n if p.busy_share > 0.0 else 0),
    # PyIceberg's client (`commit.client: pyiceberg`): PyArrow's LIST of a name before it creates metadata.json
    RandomSource("list", "LIST", 27, "latency.list", lambda p, n: n if p.pyiceberg and not p.server else 0),
    # a REST server with local steps (SeaweedFS's): its own time per load, and per commit up to its CAS
    RandomSource("server_load", "SRV_LOAD", 28, "latency.server_load", lambda p, n: 3 * n if p.server_local else 0),
    RandomSource("server_commit", "SRV_COMMIT", 29, "latency.server_commit",
                 lambda p, n: n if p.server_local else 0),
    # the client's own time per attempt (`commit.client_work`): a lognormal factor of median 1 on its line
    RandomSource("client_work", "WORK", 30, "latency.client_work", lambda p, n: 2 * n),
)


def model_sources(sources=SOURCES) -> tuple[RandomSource, ...]:
    """The sources the model draws through `Model.draws`, in `Src` order (their indexes must be 0, 1, ...)."""
    out = tuple(sorted((s for s in sources if s.code), key=lambda s: s.index))
    if [s.index for s in out] != list(range(len(out))):
        raise ValueError(f"sim.rng.SOURCES: Src indexes {sorted(s.index for s in out)} are not 0..{len(out) - 1}")
    return out


def streams(config_hash: str, replication: int) -> dict[str, np.random.Generator]:
    root = np.random.SeedSequence(entropy=[int(config_hash, 16), int(replication)])
    return {s.stream: np.random.Generator(np.random.PCG64(child))
            for s, child in zip(SOURCES, root.spawn(len(SOURCES)))}


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
        for i, s in enumerate(SOURCES):
            if s.workload:
                seq = np.random.SeedSequence(entropy=[int(cfg.seed), int(replication), i], spawn_key=(_CRN_TAG,))
                out[s.stream] = np.random.Generator(np.random.PCG64(seq))
    return out


#: keeps common-random-number streams apart from any (config hash, replication) stream
_CRN_TAG = 0xC0
