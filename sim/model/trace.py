"""A trace replayed (docs/model/workload.md, "Trace"; `workload.trace`): its rows are the transactions, each
arriving at its time on the simulated clock (`Model.trace`, built by `sim.trace.replay`), none drawn.

The replay is made of starters (`sim.model.writers`: each has at most one pending start, scheduled where
`first_due` and `on_end` say, and starts a transaction in `on_due`): one per writer the trace names, then one for
the rows of no writer (row `writers - 1` of `Model.wr`). A named writer runs its rows one at a time, in order: a row
starts at its arrival, or at its writer's last transaction's end if that is later (a real job's next run does not
start before its last one ended), so it waits however long contention makes that transaction. The rows of no
writer start at their arrivals, each its own transaction (open loop): their starter asks for its next start after
each start (its row's `again_ms`), and for a last one at `duration_ms`, where it stops.

A transaction of a row records its start as `arrival_ms` and the row's arrival as `due_ms` (a writer's wait is its
commit lag, as a periodic writer's lateness is); the measurement window counts it by the row's arrival.
"""
from .jit import model_function
from .transaction import opened_at


@model_function
def _anonymous(m, w):
    """Whether starter w is the rows of no writer (the last of the trace's starters)."""
    return w == m.p.writers - 1


@model_function
def first_due(m, w):
    """Starter w's first start, from 0: its first row's arrival (`duration_ms` when it has none: it stops)."""
    wr = m.wr[w]
    at = m.trace[wr.trace_row].arrival_ms if wr.trace_row < wr.trace_end else m.p.duration_ms
    wr.due_ms = at
    return at


@model_function
def on_due(m, w, now):
    """Starter w's next row starts now: the slot it takes, or -1 when it has none left (the starter stops)."""
    wr = m.wr[w]
    anonymous = _anonymous(m, w)
    if anonymous:
        wr.again_ms = -1.0
    i = wr.trace_row
    if i >= wr.trace_end:
        return -1
    wr.trace_row = i + 1
    row = m.trace[i]
    start = row.arrival_ms if anonymous else wr.due_ms
    j = opened_at(m, now, row.arrival_ms, -1 if anonymous else w, -1, row.table, row.op, row.parts, row.runtime_ms)
    tx = m.tx[j]
    tx.arrival_ms = start
    tx.due_ms = row.arrival_ms
    if anonymous:   # its next row's arrival, or a last start at duration_ms (none left: it stops there)
        nxt = m.trace[i + 1].arrival_ms if i + 1 < wr.trace_end else m.p.duration_ms
        wr.again_ms = max(nxt - now, 0.0)
    return j


@model_function
def on_end(m, j, now):
    """Transaction j of a named writer ended: the delay from now to the writer's next row's start (its arrival, or
    this end if later), or -1 when it has none left."""
    wr = m.wr[m.tx[j].writer]
    i = wr.trace_row
    if i >= wr.trace_end:
        return -1.0
    at = max(m.trace[i].arrival_ms, m.tx[j].end_ms, now)   # (its last answer may come after the end it recorded)
    wr.due_ms = at
    return at - now


# what a trace owns: its parameter (its rows are `Model.trace`; a starter's rows still to start are in `Model.wr`)
OWNS = dict(effect_points=(), fields=(), params=("trace",), sources=())
