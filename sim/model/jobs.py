"""Maintenance jobs (docs/MODEL.md, "Operations and maintenance"; `maintenance`): compaction, manifest rewrites,
snapshot expiry and schema changes beside the writers, one job row per job and table (`Model.jobs`).

A job's runs on a table start at its ticks, phase + k every_ms (the phase U(0, every_ms) per table), as a scheduler
that runs one instance at a time does: a tick that comes while the last run still works or commits is skipped, and
the next run starts at the first tick after it ended. A run is a transaction of the job's operation: its base read,
its work (a lognormal time, drawn per run), then the client's commit loop, whose rules say what a commit that
landed meanwhile does to it (`sim.model.operations`). A run that fails loses its work. Its partitions rotate: run k
reads and rewrites partitions k * touches .. (k + 1) * touches - 1 (mod the table's), or all of them.
A compaction in partial progress (Iceberg's RewriteDataFiles) commits its run in batches instead: the run's start
opens no transaction; each batch opens one when its file groups are done (the row's next start, asked for by its
`again_ms` with none of its transactions' ends between), validating from the run's starting snapshot
(`started`).

Each job row is a starter of its own after the writers' (`Model.wr` row writers + k), with at most one pending
start: the engine schedules it where `first_due` and `on_end` say and calls `on_due` there. Jobs draw none of the
arrivals' draws (`sim.model.transaction.opened`): the writers' transactions are the same with and without them.
"""
import math

import numpy as np

from .draws import take
from .jit import model_function
from .state import Src
from .transaction import opened


@model_function
def first_due(m, k):
    """Job row k's first start, from 0: its phase."""
    jb = m.jobs[k]
    wr = m.wr[m.p.writers + k]
    phase = take(m, Src.JOB_PHASE) * jb.every_ms
    wr.phase_ms = phase
    wr.tick = 1
    return phase


@model_function
def parts_of(m, k, run):
    """The partitions job row k's run `run` reads and rewrites: all, or its turn in the rotation."""
    n = m.p.partitions
    touches = m.jobs[k].touches
    if touches == 0 or touches >= n:
        return (np.int64(1) << n) - 1
    parts = np.int64(0)
    first = (run * touches) % n
    for i in range(touches):
        parts |= np.int64(1) << ((first + i) % n)
    return parts


@model_function
def _batches(jb):
    """(file groups per batch, batches) of a run in partial progress: ceil(groups / max-commits) groups a commit."""
    per = (jb.groups + jb.max_commits - 1) // jb.max_commits
    return per, (jb.groups + per - 1) // per


@model_function
def _batch_groups(jb, b):
    """(groups of batch b, its last group's index)."""
    per, _ = _batches(jb)
    last = min(jb.groups, (b + 1) * per)
    return last - b * per, last - 1


@model_function
def _batch_parts(jb, wr, b):
    """The partitions of batch b's groups: a run plans its groups partition by partition (RewriteDataFiles' file
    groups are within one partition, in partition order), as many to each of its P partitions (group i in its
    run's partitions i * P // groups .. ((i + 1) * P - 1) // groups: one, unless groups < P)."""
    per, _ = _batches(jb)
    n = 0
    for i in range(63):
        n += (wr.run_parts >> i) & 1
    k0 = (b * per) * n // jb.groups
    k1 = (min(jb.groups, (b + 1) * per) * n - 1) // jb.groups
    parts = np.int64(0)
    k = 0
    for i in range(63):
        if (wr.run_parts >> i) & 1:
            if k0 <= k <= k1:
                parts |= np.int64(1) << i
            k += 1
    return parts


@model_function
def _ready_ms(jb, wr, b):
    """When batch b of the run in progress is ready to commit: its last group's end, the groups taken in order
    by the run's threads in waves of equal time (the run's work W over its ceil(groups / threads) waves)."""
    _, last = _batch_groups(jb, b)
    waves = (jb.groups + jb.threads - 1) // jb.threads
    return wr.run_start_ms + wr.run_work_ms * (last // jb.threads + 1) / waves


@model_function
def on_due(m, k, now):
    """Job row k's next run starts now: the slot it takes, or -1 at or after duration_ms (the job stops). In
    partial progress a run's start opens no transaction (its base is the table's version now, its work drawn);
    each batch opens when its groups are done, its work their share of the run's: the row's `again_ms` asks the
    engine for its next start (-1: none; its next run then comes from its batches' ends, `on_end`)."""
    jb = m.jobs[k]
    wr = m.wr[m.p.writers + k]
    wr.again_ms = -1.0
    if now >= m.p.duration_ms:
        return -1
    if jb.groups > 0 and wr.batch >= 0:
        n_groups, _ = _batch_groups(jb, wr.batch)
        j = opened(m, now, -1, k, jb.table, jb.op, _batch_parts(jb, wr, wr.batch), 0.0)
        m.tx[j].arrival_ms = now - wr.run_work_ms * n_groups / jb.groups
        wr.batch += 1
        wr.open_batches += 1
        _next_batch(jb, wr, now)
        return j
    runtime = jb.median_ms * math.exp(jb.sigma * take(m, Src.JOB_RUNTIME))
    parts = parts_of(m, k, wr.started)
    wr.started += 1
    if jb.groups > 0:
        wr.batch = 0
        wr.run_start_ms = now
        wr.run_work_ms = runtime
        wr.run_version = m.versions[jb.table]
        wr.run_snapshots = m.tables[jb.table].total
        wr.run_parts = parts
        _next_batch(jb, wr, now)
        return -1
    return opened(m, now, -1, k, jb.table, jb.op, parts, runtime)


@model_function
def _next_batch(jb, wr, now):
    """The row's `again_ms`: the delay from now to its run's next batch, if one is still to open."""
    if wr.batch < _batches(jb)[1]:
        wr.again_ms = max(_ready_ms(jb, wr, wr.batch) - now, 0.0)


@model_function
def started(m, j, v):
    """Transaction j read its base, table version v: it validates from v, and its start counts the snapshots its
    table had committed (for `growth.history_gap`); a batch of a run in partial progress from its run's start
    instead (RewriteDataFilesCommitManager's validateFromSnapshot), whatever it read at its own."""
    tx = m.tx[j]
    if m.p.partial and tx.job >= 0 and m.jobs[tx.job].groups > 0:
        wr = m.wr[m.p.writers + tx.job]
        tx.validated = wr.run_version
        tx.start_snapshots = wr.run_snapshots
    else:
        tx.validated = v
        tx.start_snapshots = m.tables[tx.table].total


@model_function
def on_end(m, j, now):
    """Job transaction j ended: the delay from now to its job's next run (the first tick after its end), or -1 if
    that is at or after duration_ms, or if its run goes on (a batch still to open or to end)."""
    tx = m.tx[j]
    k = tx.job
    wr = m.wr[m.p.writers + k]
    jb = m.jobs[k]
    if jb.groups > 0:
        wr.open_batches -= 1
        if wr.batch < _batches(jb)[1] or wr.open_batches > 0:
            return -1.0
        wr.batch = -1
    every = jb.every_ms
    due = wr.phase_ms + wr.tick * every
    if due <= tx.end_ms:                            # ticks passed while it ran: skipped
        wr.tick = np.int64((tx.end_ms - wr.phase_ms) // every) + 1
        due = wr.phase_ms + wr.tick * every
    wr.tick += 1
    if due >= m.p.duration_ms:
        return -1.0
    return max(due - now, 0.0)


# what maintenance jobs own: a job transaction's row, the rows' count, their draws
OWNS = dict(effect_points=(), fields=("job",), params=("jobs", "starters", "partial"),
            sources=("JOB_PHASE", "JOB_RUNTIME"))
