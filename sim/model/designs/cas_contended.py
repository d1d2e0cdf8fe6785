"""Iceberg's commit as one conditional write of the catalog, on a store whose answer to a write depends on the
writes to its object in flight (a provider's measured set: a busy store's 5xx, a late loser, an object that reads
empty mid-write; `sim.model.contention`; docs/model/concurrent-writes.md): design `cas` with the write's send an
event of its own, and the microbenchmark's HEAD one where its reads may find the object empty. A design of its own
so that the default's compile carries none of it.
"""
from .. import contention, iceberg
from ..jit import handler
from ..lock import no_timer
from ..state import PC
from ..transaction import AGAIN


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`)."""
    while True:
        pc = m.tx[j].pc
        if pc == PC.CAS:
            return contention.on_cas(m, j, now)
        if pc == PC.CAS_SEND:
            return contention.on_send(m, j, now)
        if pc == PC.COMMIT:
            return contention.send_in(m, j, m.tx[j].commit_in_ms)
        if m.p.empty_reads:
            if pc == PC.INIT:
                return contention.head(m, j)
            if pc == PC.HEAD_CHECK:
                return contention.on_head(m, j, now)
            if pc == PC.BASE and contention.empty(m, j, now):
                return contention.read_empty(m, j, now)
        delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            return delay


timer = no_timer   # it takes no lock, so it sets no timer


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached (2026-11-30, a busy hour:
# the first `sim run` of it after design cas's 10.2 s of CPU, a warm run 1.8 s): the engine's `compiling the model
# ...` line quotes it
COMPILE_S = 8

OWNS = dict(effect_points=("CAS", "CAS_SEND", "HEAD_CHECK"), fields=(),
            params=("contended", "loser_answer_ms", "busy_share", "empty_reads"), sources=("BUSY",))
