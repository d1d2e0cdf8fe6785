"""Iceberg's commit as one conditional write of the catalog (docs/MODEL.md, "One transaction"): the named designs
`file` (the catalog as one object in the bucket, `catalog.scope: global`), `service-pointer` (a service CASes each
table's metadata location: Glue, the JDBC catalog, S3 Tables) and the default model.

Iceberg's client (`sim.model.iceberg`) prepares each attempt; its commit is a CAS of the catalog object (or the
table's pointer) against the version the last refresh saw, which a throttled object answers 429 first. A store
that serves conditional writes to one object one at a time (`object_queue`) queues each at its object
(`sim.model.capacity`: a queue of one per object, held from the write's start to its answer).
"""
from .. import capacity, catalog, iceberg
from ..capacity import OBJECT_QUEUES
from ..iceberg import lost, swap
from ..jit import handler, model_function
from ..lock import no_timer
from ..state import PC, Outcome, Reason, Src
from ..transaction import AGAIN, admitted, end, next_write, pooled, resend


@handler
def on_cas(m, j, now):
    """The CAS against the version of the last refresh: committed, or the next attempt's read, or
    retries_exhausted. A throttled object answers 429 first: the request comes back later."""
    if not admitted(m, j, now, catalog.object_of(m, m.tx[j].table)):
        return resend(m, j, now)
    ok, answer = swap(m, j, now)
    if ok:
        return end(m, j, now, Outcome.COMMITTED, Reason.NONE, answer)
    return lost(m, j, now, answer)


@model_function
def _write(m, j, before):
    """The conditional write goes out `before` ms from now: at once, or into its object's queue."""
    if m.p.object_queue:
        return pooled(m, j, OBJECT_QUEUES + catalog.object_of(m, m.tx[j].table), Src.CAS, PC.CAS, before)
    return next_write(m, j, PC.CAS, before)


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`); a queued write's turn and
    its release are its queue's (`sim.model.capacity`)."""
    pc = m.tx[j].pc
    if capacity.owns(pc):
        return capacity.route(m, j, now, pc)
    while True:
        pc = m.tx[j].pc
        if pc == PC.CAS:
            return capacity.after_effect(m, j, capacity.answer_in(m, j), on_cas(m, j, now))
        if pc == PC.COMMIT:
            return _write(m, j, m.tx[j].commit_in_ms)
        delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            return delay


timer = no_timer   # it takes no lock, so it sets no timer


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-26): the engine's `compiling the model ...` line quotes it
COMPILE_S = 10

OWNS = dict(effect_points=("CAS",), fields=(), params=("object_queue",), sources=())
