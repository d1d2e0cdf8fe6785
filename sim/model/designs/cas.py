"""Iceberg's commit as one conditional write of the catalog (docs/MODEL.md, "One transaction"): the named designs
`file` (the catalog as one object in the bucket, `catalog.scope: global`), `service-pointer` (a service CASes each
table's metadata location: Glue, the JDBC catalog, S3 Tables) and the default model.

Iceberg's client (`sim.model.iceberg`) prepares each attempt; its commit is a CAS of the catalog object (or the
table's pointer) against the version the last refresh saw (`iceberg.on_catalog_cas`), which a throttled object
answers 429 first. A store that serves conditional writes to one object one at a time is design `cas_queue`.
"""
from .. import iceberg
from ..jit import handler
from ..lock import no_timer
from ..state import PC
from ..transaction import AGAIN, next_write


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`)."""
    while True:
        pc = m.tx[j].pc
        if pc == PC.CAS:
            return iceberg.on_catalog_cas(m, j, now)
        if pc == PC.COMMIT:
            return next_write(m, j, PC.CAS, m.tx[j].commit_in_ms)
        delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            return delay


timer = no_timer   # it takes no lock, so it sets no timer


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-29): the engine's `compiling the model ...` line quotes it
COMPILE_S = 6

OWNS = dict(effect_points=("CAS",), fields=(), params=(), sources=())
