"""Iceberg's commit as one conditional write of the catalog, on a store that serves conditional writes to one
object one at a time (a provider's `cas_one_at_a_time`, a what-if no shipped profile has; docs/MODEL.md,
"Concurrent writes to one object"): design `cas` with each write queued at its object.

The write asks its object's queue when it goes out (`sim.model.capacity`: a queue of one per object, rows from
OBJECT_QUEUES on), waits there in order of arrival while another write of the object is in flight, and holds it
from its start to its answer; then it is the catalog CAS of `iceberg.on_catalog_cas`. A design of its own so that
the default's compile carries no queue.
"""
from .. import capacity, catalog, iceberg
from ..capacity import OBJECT_QUEUES
from ..jit import handler, model_function
from ..lock import no_timer
from ..state import PC, Src
from ..transaction import AGAIN, pooled


@model_function
def _write(m, j, before):
    """The conditional write goes out `before` ms from now, into its object's queue."""
    return pooled(m, j, OBJECT_QUEUES + catalog.object_of(m, m.tx[j].table), Src.CAS, PC.CAS, before)


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
            return capacity.after_effect(m, j, capacity.answer_in(m, j), iceberg.on_catalog_cas(m, j, now))
        if pc == PC.COMMIT:
            return _write(m, j, m.tx[j].commit_in_ms)
        delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            return delay


timer = no_timer   # a queue of writes has no acquire timeout


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-29): the engine's `compiling the model ...` line quotes it
COMPILE_S = 4

OWNS = dict(effect_points=("CAS",), fields=(), params=("object_queue",), sources=())
