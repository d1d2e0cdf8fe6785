"""Delta Lake on S3 with Delta's DynamoDB log store (docs/MODEL.md, "Delta on S3 with DynamoDB"; named design
`delta-dynamodb`): Delta Spark's commit loop (`sim.model.delta`) whose put-if-absent is a conditional PutItem in
one DynamoDB table that every Delta table shares (`sim.model.log_store`), and whose commit ends with the entry's
copy into the log and a completion PutItem.
"""
from .. import delta, log_store
from ..jit import handler
from ..lock import no_timer
from ..state import PC


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`)."""
    pc = m.tx[j].pc
    if pc == PC.LOG_COMPLETE:
        return log_store.on_complete(m, j, now)
    if pc == PC.STORE_QUERY or pc == PC.STORE_GET:
        return log_store.on_read(m, j, now)
    return delta.route(m, j, now, pc)


timer = no_timer   # it takes no lock, so it sets no timer


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-29): the engine's `compiling the model ...` line quotes it
COMPILE_S = 5

OWNS = dict(effect_points=(), fields=(), params=(), sources=())
