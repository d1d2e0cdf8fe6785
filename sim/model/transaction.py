"""One transaction's life, whatever its commit protocol (docs/MODEL.md, "One transaction").

Other transactions can observe a transaction only where it touches the catalog (or a table's log): a read's
capture and a conditional write's check-and-swap. A transaction is therefore a state machine whose states
(`PC_*`) are "waiting for the effect point of my next catalog operation". Each protocol (`rewrite`, `log`)
has one handler per effect point; a handler runs at that effect point and returns the time from `now` to the
transaction's next one: everything in between (the rest of a round trip, the runtime, a backoff sleep, a whole
prepare with its GETs and PUTs) touches no shared state and is summed into that one delay. A transaction that
ends is left in `PC_DONE` and its handler returns `DONE`. `sim.model.step` dispatches; engines own time and
order and call it when the delay has passed.

This module holds the steps every protocol shares: catalog reads, starting a conditional write, a 429 from a
throttled object, the end.
"""
from . import catalog, history, throttle
from .draws import take
from .jit import model_function
from .layout import (PC_DONE, PF_F, PF_G, PF_JIT_THR, PI_POL_THR, S_CAS, S_READ, S_THROTTLE, ST_ARR_DONE, ST_OPEN,
                     ST_STOP, TF_END, TF_L, TI_ATTEMPTS, TI_CREADS, TI_INWIN, TI_OUTCOME, TI_PC, TI_REASON, TI_SEQ,
                     TI_TABLE, TI_THR, TI_THR_K, TI_V)
from .retry import delay_ms

DONE = -1.0   # a handler's answer for a transaction that ended


@model_function
def read_catalog(m, j, now, L):
    """A catalog read's effect point (a LIST of t's log, for the log protocol): capture the version the next
    conditional write must expect, and v[t]; the caller learns them at now + (1 - f) L."""
    t = m.tx_i[j, TI_TABLE]
    seq = catalog.read_seq(m, t)
    v = catalog.read_version(m, t)
    m.tx_i[j, TI_SEQ] = seq
    m.tx_i[j, TI_V] = v
    m.tx_i[j, TI_CREADS] += 1
    if history.on(m):
        history.read(m, now, j, t, seq, v, now + m.pf[PF_G] * L)
    return v


@model_function
def next_read(m, j, pc, before):
    """Start a catalog read `before` ms from now: the delay to its effect point, where `pc` handles it."""
    L = take(m.rd, m, S_READ)
    m.tx_f[j, TF_L] = L
    m.tx_i[j, TI_PC] = pc
    return before + m.pf[PF_F] * L


@model_function
def next_write(m, j, pc, before):
    """Start a conditional write (a CAS, or a log entry's put-if-absent) `before` ms from now."""
    L = take(m.cs, m, S_CAS)
    m.tx_f[j, TF_L] = L
    m.tx_i[j, TI_PC] = pc
    return before + m.pf[PF_F] * L


@model_function
def admitted(m, j, now, slot):
    """A conditional write's effect point, first: does the object (bucket `slot`) have a token
    (`sim.model.throttle`)? If not, the request is throttled (`resend` says when it comes back)."""
    if throttle.on(m) and not throttle.admit(m, slot, now):
        return False
    m.tx_i[j, TI_THR_K] = 0
    return True


@model_function
def resend(m, j, now):
    """A conditional write answered 429: nothing changed and no attempt was used; the storage client resends
    it after `storage.throttle_retry` (the k-th 429 in a row of this request sleeps the k-th delay)."""
    L = m.tx_f[j, TF_L]
    t = m.tx_i[j, TI_TABLE]
    answer_in = m.pf[PF_G] * L
    if history.on(m):
        history.throttled(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), m.tx_i[j, TI_SEQ],
                          now + answer_in)
    m.tx_i[j, TI_THR] += 1
    k = m.tx_i[j, TI_THR_K] + 1
    m.tx_i[j, TI_THR_K] = k
    delay = delay_ms(m, m.pi[PI_POL_THR], m.pf[PF_JIT_THR], m.bo_thr, k, m.th, S_THROTTLE)
    return next_write(m, j, m.tx_i[j, TI_PC], answer_in + delay)


@model_function
def end(m, j, now, outcome, reason, end_ms):
    """The transaction ends (committed or aborted); the run may stop once every window transaction has."""
    t = m.tx_i[j, TI_TABLE]
    m.tx_i[j, TI_PC] = PC_DONE
    m.tx_i[j, TI_OUTCOME] = outcome
    m.tx_i[j, TI_REASON] = reason
    m.tx_f[j, TF_END] = end_ms
    if history.on(m):
        history.end(m, now, j, t, end_ms, outcome, reason, m.tx_i[j, TI_ATTEMPTS])
    if m.tx_i[j, TI_INWIN] != 0:
        m.st[ST_OPEN] -= 1
        if m.st[ST_OPEN] == 0 and m.st[ST_ARR_DONE] != 0:
            m.st[ST_STOP] = 1
    return DONE
