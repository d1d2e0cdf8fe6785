"""Maintenance jobs (docs/MODEL.md, "Operations and maintenance"; `maintenance`): compaction, manifest rewrites,
snapshot expiry and schema changes beside the writers, one job row per job and table (`Model.jobs`).

A job's runs on a table start at its ticks, phase + k every_ms (the phase U(0, every_ms) per table), as a scheduler
that runs one instance at a time does: a tick that comes while the last run still works or commits is skipped, and
the next run starts at the first tick after it ended. A run is a transaction of the job's operation: its base read,
its work (a lognormal time, drawn per run), then the client's commit loop, whose rules say what a commit that
landed meanwhile does to it (`sim.model.operations`). A run that fails loses its work. Its partitions rotate: run k
reads and rewrites partitions k * touches .. (k + 1) * touches - 1 (mod the table's), or all of them.

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
def on_due(m, k, now):
    """Job row k's next run starts now: the slot it takes, or -1 at or after duration_ms (the job stops)."""
    if now >= m.p.duration_ms:
        return -1
    jb = m.jobs[k]
    wr = m.wr[m.p.writers + k]
    runtime = jb.median_ms * math.exp(jb.sigma * take(m, Src.JOB_RUNTIME))
    j = opened(m, now, -1, k, jb.table, jb.op, parts_of(m, k, wr.started), runtime)
    wr.started += 1
    return j


@model_function
def on_end(m, j, now):
    """Job transaction j ended: the delay from now to its job's next run (the first tick after its end), or -1 if
    that is at or after duration_ms."""
    tx = m.tx[j]
    k = tx.job
    wr = m.wr[m.p.writers + k]
    every = m.jobs[k].every_ms
    due = wr.phase_ms + wr.tick * every
    if due <= tx.end_ms:                            # ticks passed while it ran: skipped
        wr.tick = np.int64((tx.end_ms - wr.phase_ms) // every) + 1
        due = wr.phase_ms + wr.tick * every
    wr.tick += 1
    if due >= m.p.duration_ms:
        return -1.0
    return max(due - now, 0.0)


# what maintenance jobs own: a job transaction's row, the rows' count, their draws
OWNS = dict(effect_points=(), fields=("job",), params=("jobs", "starters"), sources=("JOB_PHASE", "JOB_RUNTIME"))
