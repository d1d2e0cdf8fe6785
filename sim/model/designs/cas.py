"""Iceberg's commit as one conditional write of the catalog (docs/MODEL.md, "One transaction"): the named designs
`file` (the catalog as one object in the bucket, `catalog.scope: global`), `service-pointer` (a service CASes each
table's metadata location: Glue, the JDBC catalog, S3 Tables) and the default model.

Iceberg's client (`sim.model.iceberg`) prepares each attempt; its commit is a CAS of the catalog object (or the
table's pointer) against the version the last refresh saw, which a throttled object answers 429 first.
"""
from .. import catalog, iceberg
from ..iceberg import lost, swap
from ..jit import handler
from ..lock import no_timer
from ..state import PC, Outcome, Reason
from ..transaction import AGAIN, admitted, end, next_write, resend


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


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`)."""
    while True:
        pc = m.tx[j].pc
        if pc == PC.CAS:
            return on_cas(m, j, now)
        if pc == PC.COMMIT:
            return next_write(m, j, PC.CAS, m.tx[j].commit_in_ms)
        delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            return delay


timer = no_timer   # it takes no lock, so it sets no timer


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-26): the engine's `compiling the model ...` line quotes it
COMPILE_S = 10

OWNS = dict(effect_points=("CAS",), fields=(), params=(), sources=())
