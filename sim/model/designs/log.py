"""Delta Lake's log on an object store (docs/MODEL.md, "The log protocol" and "Delta clients"): the named designs
`log` (delta-rs) and `log-spark` (Delta Spark), which differ only in their clients' settings (config data).

Delta's commit loop (`sim.model.delta`) LISTs the log, checks the entries it has not checked, and creates the next
entry put-if-absent; a lost create retries at the next version, nothing rewritten.
"""
from .. import delta
from ..jit import handler
from ..lock import no_timer


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`)."""
    pc = m.tx[j].pc
    return delta.route(m, j, now, pc)


timer = no_timer   # it takes no lock, so it sets no timer


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-29): the engine's `compiling the model ...` line quotes it
COMPILE_S = 18

OWNS = dict(effect_points=(), fields=(), params=(), sources=())
