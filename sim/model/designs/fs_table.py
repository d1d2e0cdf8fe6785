"""Iceberg file-system tables (docs/MODEL.md, "File-system tables"; `catalog.version_files`, named design
`fs-table`).

A table's versions are files `v{N}.metadata.json` in the bucket; v[t] is the newest. A commit writes its table
metadata (the prepare's PUT, a temp file) and copies it to `v{N+1}` if absent: that conditional create is the
CAS, and contenders race for one fresh name per version (on a throttled provider each name is its own bucket).
The committer then PUTs `version-hint.text` best effort (`committed`). A reader finds the newest version by
probing `exists(v+1)`, `exists(v+2)`, ... from the version the hint names until a miss, at every catalog read;
the miss is the read's effect point, where it sees v[t] exactly (versions only grow, and a hint never names
one that does not exist).
"""
from .. import iceberg, throttle
from ..draws import take
from ..iceberg import lost, swap
from ..jit import handler, model_function
from ..lock import no_timer
from ..state import PC, Outcome, Reason, Src
from ..transaction import AGAIN, admitted, before_create_ms, end, next_write, probe, resend


@handler
def on_hint(m, j, now):
    """The version hint's GET at its effect point: the hint names version h; the probes start at h + 1."""
    tx = m.tx[j]
    tx.gets += 1
    return probe(m, j, m.hints[tx.table] + 1, m.p.g * tx.op_latency_ms)


ANSWERED = AGAIN   # on_probe's answer for a miss: the read's own effect point is now (`step` runs it)


@handler
def on_probe(m, j, now):
    """An exists() probe at its effect point: a hit probes the next name; a miss answers the read: the
    transaction waits at the effect point that asked for it (`after_read`), which runs now, on this
    request's latency (ANSWERED)."""
    tx = m.tx[j]
    name = tx.probe
    if m.versions[tx.table] >= name:
        tx.gets += 1
        return probe(m, j, name + 1, m.p.g * tx.op_latency_ms)
    tx.pc = tx.after_read
    return ANSWERED


@model_function
def committed(m, j, now, t, answer):
    """Version file v[t] was just created, the committer learns it at `answer`: its name keeps its bucket, and
    the committer PUTs the version hint (counted in its end time, in no one's critical section). The hint
    names v[t] from now on unless its object is throttled: the 429 is ignored and the hint stays as it was
    (later readers probe more). The write takes effect here, at the create's effect point, a little before
    the real PUT would (by the create's answer and half the PUT): a reader in that gap probes one name less."""
    if throttle.on(m):
        throttle.entry_created(m, t)
    L = take(m, Src.PUT_HINT)
    m.tx[j].puts += 1
    if not throttle.on(m) or throttle.admit_from(m, throttle.hint_slot(m, t), j, now):
        m.hints[t] = m.versions[t]
    return end(m, j, now, Outcome.COMMITTED, Reason.NONE, answer + L)


@handler
def on_create(m, j, now):
    """The create of version file v{N+1} if absent (its name's bucket answers 429 first, if throttled):
    committed (then the version hint), or the next attempt's read, or retries_exhausted."""
    tx = m.tx[j]
    if not admitted(m, j, now, throttle.entry_slot(m, tx.table, tx.seq + 1)):
        return resend(m, j, now)
    ok, answer = swap(m, j, now, 1)
    if ok:
        return committed(m, j, now, tx.table, answer)
    return lost(m, j, now, answer)


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`)."""
    while True:
        pc = m.tx[j].pc
        if pc == PC.FS_PROBE:
            delay = on_probe(m, j, now)
        elif pc == PC.CAS:
            return on_create(m, j, now)
        elif pc == PC.FS_HINT:
            return on_hint(m, j, now)
        elif pc == PC.COMMIT:                       # (on a file system, Hadoop tables' exists() check first)
            return next_write(m, j, PC.CAS, m.tx[j].commit_in_ms + before_create_ms(m, j, False))
        else:
            delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            return delay


timer = no_timer   # it takes no lock, so it sets no timer


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-29): the engine's `compiling the model ...` line quotes it
COMPILE_S = 5

OWNS = dict(effect_points=("FS_HINT", "FS_PROBE", "CAS"), fields=("after_read", "probe"),
            params=("version_files",), sources=("PUT_HINT",))
