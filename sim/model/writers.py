"""Writers (docs/MODEL.md, "Writers"): a fixed set of N writers instead of open-loop arrivals.

A writer runs one transaction at a time. Closed loop: its next transaction starts a think time after the last
one ended (committed or aborted: the writer learns the outcome at the transaction's end_ms). A trace's writers
and its rows of no writer are starters too (`sim.model.trace`): these hand them on to it. Periodic: its
commits are due at ticks phase + k interval; one starts U(0, jitter) after its tick, or, if the previous commit
still runs then, as soon as it ends (`wait`: the ticks passed meanwhile merge into it) or at the next tick after
it ends (`skip`: the ticks passed are dropped). A writer with a budget stops after that many transactions; none
starts at or after duration_ms. Each writer has at most one pending event, its next start: the engine schedules
it where `first_due` and `on_end` say and calls `on_due` there. Maintenance jobs (`sim.model.jobs`) are starters
too, rows after the writers': these three hand a job's row on to it; a job's `on_due` may also ask for the row's
next start with no end between (its `again_ms`: a compaction's next batch), still one pending start at a time.
"""
import math

import numpy as np

from . import jobs, trace
from .draws import take
from .jit import model_function
from .state import Op, Src
from .transaction import begin, opened


@model_function
def starter(m, j):
    """The row of `Model.wr` whose transaction j is: its writer's, or its maintenance job's (-1: an arrival's)."""
    tx = m.tx[j]
    if tx.job >= 0:
        return m.p.writers + tx.job
    return tx.writer


@model_function
def first_due(m, w):
    """Writer w's first start (closed) or first trigger (periodic), from 0: its phase U(0, start_spread_ms)."""
    if w >= m.p.writers:
        return jobs.first_due(m, w - m.p.writers)
    if m.p.trace:
        return trace.first_due(m, w)
    wr = m.wr[w]
    phase = take(m, Src.WRITER) * m.p.spread_ms
    wr.missed = 0
    if not m.p.periodic:
        wr.due_ms = np.nan
        return phase
    wr.phase_ms = phase
    wr.due_ms = phase
    wr.tick = 1
    return phase + take(m, Src.WRITER) * m.p.jitter_ms


@model_function
def _stopped(m):
    """A writer stops: the last one ends the arrivals (the run stops once no window transaction is open)."""
    r = m.run[0]
    r.writers_active -= 1
    if r.writers_active == 0:
        r.arrivals_done = 1
        if r.open_in_window == 0:
            r.stop = 1
    return -1.0


@model_function
def on_due(m, w, now):
    """Writer w's next transaction starts now: the slot it takes, or -1 (it stops) at or after duration_ms."""
    if w >= m.p.writers:
        return jobs.on_due(m, w - m.p.writers, now)
    if m.p.trace:   # (a row that arrived before duration_ms starts, however late its writer lets it)
        j = trace.on_due(m, w, now)
        if j < 0:
            _stopped(m)
        return j
    if now >= m.p.duration_ms:
        _stopped(m)
        return -1
    wr = m.wr[w]
    if wr.inline_table >= 0:
        return _inline_service(m, w, now)
    j = begin(m, now, w)
    wr.started += 1
    tx = m.tx[j]
    tx.due_ms = wr.due_ms
    tx.missed = wr.missed
    return j


@model_function
def _inline_service(m, w, now):
    """Writer w's commit returns through a table service it runs inline (Hudi): a compaction transaction of its
    writer on every partition of the table, working a lognormal time; it draws none of the arrivals' draws, so the
    writer's own transactions are those it would run without it."""
    wr = m.wr[w]
    t = wr.inline_table
    wr.inline_table = -1
    runtime = m.p.inline_median_ms * math.exp(m.p.inline_sigma * take(m, Src.JOB_RUNTIME))
    return opened(m, now, w, -1, t, Op.COMPACTION, (np.int64(1) << m.p.partitions) - 1, runtime)


@model_function
def _next_tick(m, wr, end_ms):
    """A periodic writer's next trigger after a commit that ended at end_ms (wr.tick: the first tick no commit
    has served): that tick if it is still ahead, else now (wait) or the next tick ahead (skip)."""
    interval = m.p.interval_ms
    k = wr.tick
    due = wr.phase_ms + k * interval
    if due > end_ms:
        wr.missed = 0
        wr.tick = k + 1
        wr.due_ms = due
        return due
    last = np.int64((end_ms - wr.phase_ms) // interval)   # the last tick at or before end_ms (>= k)
    if m.p.skip:
        wr.missed = last - k + 1
        wr.tick = last + 2
        due = wr.phase_ms + (last + 1) * interval
        wr.due_ms = due
        return due
    wr.missed = last - k
    wr.tick = last + 1
    wr.due_ms = due
    return end_ms


@model_function
def on_end(m, j, now):
    """Transaction j of a writer ended (its handler returned DONE now): the delay from now to the writer's
    next start, or -1 if the writer stops."""
    tx = m.tx[j]
    if tx.job >= 0:
        return jobs.on_end(m, j, now)
    if m.p.trace:
        delay = trace.on_end(m, j, now)
        return delay if delay >= 0.0 else _stopped(m)
    wr = m.wr[tx.writer]
    end_ms = tx.end_ms
    if wr.inline_table >= 0 and end_ms < m.p.duration_ms:   # its commit runs a table service before it returns
        return max(end_ms - now, 0.0)
    wr.inline_table = -1
    if m.p.budget > 0 and wr.started >= m.p.budget:
        return _stopped(m)
    if m.p.periodic:
        at = _next_tick(m, wr, end_ms) + take(m, Src.WRITER) * m.p.jitter_ms
    else:
        at = end_ms + take(m, Src.THINK)
    if at >= m.p.duration_ms:
        return _stopped(m)
    if at < now:   # its last request's answer came after the end it recorded (a log store's resent completion)
        return 0.0
    return at - now
