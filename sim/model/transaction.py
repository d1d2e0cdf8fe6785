"""One transaction (docs/MODEL.md, "One transaction"), as handlers of its catalog effect points.

Other transactions can observe a transaction only where it touches the catalog: a read's capture and a CAS's
check-and-swap. A transaction is therefore a state machine whose states (`PC_*`) are "waiting for the effect
point of my next catalog operation". `step(m, j, now)` runs the handler of the state transaction j is in, at
that effect point, and returns the time from `now` to its next effect point; everything in between (the rest
of a round trip, the runtime, a backoff sleep, a whole prepare with its GETs and PUTs) touches no shared state
and is summed into that one delay. A transaction that ends is left in `PC_DONE`.

Engines own time and order: they call `step` when the delay has passed, in SimPy's event order.
"""
from .jit import handler, model_function

from . import catalog, history
from .draws import take
from .io import lanes_ms
from .layout import (O_ABORTED, O_COMMITTED, PC_BACKOFFREAD, PC_BASE, PC_CAS, PC_DONE, PC_FAILREAD, PC_INIT,
                     PC_REFRESH1, PF_F, PF_G, PF_JIT_CAT, PF_JIT_TAB, PI_CONFLICT, PI_INLINED, PI_MAX_ATTEMPTS,
                     PI_MAX_PARALLEL, PI_POL_CAT, PI_POL_TAB, PI_READ_MD, PI_REFRESH_FIRST, R_EXHAUSTED, R_NONE,
                     R_VALIDATION, S_CAS, S_CONFLICT, S_GET, S_PUT_ML, S_PUT_TM, S_READ, ST_ARR_DONE, ST_OPEN,
                     ST_STOP, TF_BACKOFF, TF_END, TF_L, TF_RTEND, TF_RUNTIME, TI_ATTEMPTS, TI_CATC, TI_CREADS,
                     TI_GETS, TI_INWIN, TI_ISVO, TI_MLREAD, TI_OUTCOME, TI_PC, TI_PREPARED, TI_PUTS, TI_REASON,
                     TI_SEQ, TI_TABC, TI_TABLE, TI_V, TI_VALIDATED)
from .retry import delay_ms

DONE = -1.0   # `step`'s answer for a transaction that ended


@model_function
def _read_catalog(m, j, now, L):
    """A catalog read's effect point: capture (seq, v[t]); the caller learns it at now + (1 - f) L."""
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
def _next_read(m, j, pc, before):
    """Start a catalog read `before` ms from now: the delay to its effect point."""
    L = take(m.rd, m, S_READ)
    m.tx_f[j, TF_L] = L
    m.tx_i[j, TI_PC] = pc
    return before + m.pf[PF_F] * L


@model_function
def _next_cas(m, j, before):
    """Start the CAS `before` ms from now (after the refresh's answer and any prepare)."""
    L = take(m.cs, m, S_CAS)
    m.tx_f[j, TF_L] = L
    m.tx_i[j, TI_PC] = PC_CAS
    return before + m.pf[PF_F] * L


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


@model_function
def prepare(m, j, now, v):
    """Prepare on table version v: read the table metadata and the current manifest list; a VO validates the
    n snapshots it has not validated (n - 1 more manifest-list GETs, on io.max_parallel lanes) and may find a
    real conflict; then write the manifest list and the table metadata. Returns the I/O time, negated if the
    validation aborts the transaction."""
    inlined = m.pi[PI_INLINED] != 0
    m.tx_i[j, TI_PREPARED] = v
    cost = 0.0
    if not inlined:
        cost += take(m.gt, m, S_GET)                 # table metadata
        m.tx_i[j, TI_GETS] += 1
    cost += take(m.gt, m, S_GET)                     # current manifest list
    m.tx_i[j, TI_GETS] += 1
    m.tx_i[j, TI_MLREAD] += 1
    vfrom = -1
    vto = -1
    aborted = False
    if m.tx_i[j, TI_ISVO] != 0:
        vfrom = m.tx_i[j, TI_VALIDATED]
        vto = v
        n = v - vfrom                                # the newest is the current list, read above
        if n > 1:
            c = m.cur[S_GET]
            cost += lanes_ms(m.gt, c, m.step[S_GET], n - 1, m.pi[PI_MAX_PARALLEL], m.lanes)
            m.cur[S_GET] = c + m.step[S_GET] * (n - 1)
            m.tx_i[j, TI_GETS] += n - 1
            m.tx_i[j, TI_MLREAD] += n - 1
        m.tx_i[j, TI_VALIDATED] = v
        if m.pi[PI_CONFLICT] != 0 and n > 0:
            if take(m.cu, m, S_CONFLICT) < m.thr[n]:
                aborted = True
    if not aborted:
        cost += take(m.pm, m, S_PUT_ML)
        m.tx_i[j, TI_PUTS] += 1
        if not inlined:
            cost += take(m.pt, m, S_PUT_TM)
            m.tx_i[j, TI_PUTS] += 1
    if history.on(m):
        history.prepare(m, now, j, m.tx_i[j, TI_TABLE], v, vfrom, vto)
    return -cost if aborted else cost


@model_function
def _prepare_then_cas(m, j, now, pending, v, do_prepare):
    """After a read whose answer comes `pending` ms from now: prepare if asked, then CAS."""
    if do_prepare:
        cost = prepare(m, j, now, v)
        if cost < 0:
            return end(m, j, now, O_ABORTED, R_VALIDATION, now + pending - cost)
        pending += cost
    return _next_cas(m, j, pending)


@handler
def on_start(m, j, now):
    """Step 2: the transaction arrives and reads the catalog for its base snapshot."""
    return _next_read(m, j, PC_BASE, 0.0)


@handler
def on_base_read(m, j, now):
    """Step 2's effect point, then step 3 (the runtime) and the first attempt's refresh (or a stale CAS)."""
    L = m.tx_f[j, TF_L]
    v = _read_catalog(m, j, now, L)
    m.tx_i[j, TI_VALIDATED] = v
    runtime = m.tx_f[j, TF_RUNTIME]
    m.tx_f[j, TF_RTEND] = now + m.pf[PF_G] * L + runtime
    pending = m.pf[PF_G] * L + runtime
    if m.pi[PI_REFRESH_FIRST] != 0:
        return _next_read(m, j, PC_REFRESH1, pending)
    return _prepare_then_cas(m, j, now, pending, v, True)


@handler
def on_refresh(m, j, now):
    """Step 4's refresh: before the first attempt, or after a backoff sleep (a table that moved meanwhile
    forces a re-prepare)."""
    L = m.tx_f[j, TF_L]
    first = m.tx_i[j, TI_PC] == PC_REFRESH1
    v = _read_catalog(m, j, now, L)
    pending = m.pf[PF_G] * L
    return _prepare_then_cas(m, j, now, pending, v, first or v != m.tx_i[j, TI_PREPARED])


@handler
def on_cas(m, j, now):
    """Step 4's CAS against the seq of the last refresh: committed, or the next attempt's refresh, or
    retries_exhausted."""
    L = m.tx_f[j, TF_L]
    t = m.tx_i[j, TI_TABLE]
    attempts = m.tx_i[j, TI_ATTEMPTS] + 1
    m.tx_i[j, TI_ATTEMPTS] = attempts
    expected = m.tx_i[j, TI_SEQ]
    ok = catalog.cas(m, t, expected)
    answer = now + m.pf[PF_G] * L
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, answer)
    if ok:
        return end(m, j, now, O_COMMITTED, R_NONE, answer)
    if attempts >= m.pi[PI_MAX_ATTEMPTS]:
        return end(m, j, now, O_ABORTED, R_EXHAUSTED, answer)
    return _next_read(m, j, PC_FAILREAD, m.pf[PF_G] * L)


@handler
def on_conflict_read(m, j, now):
    """The refresh after a failed CAS tells the conflict class (table: v[t] moved since the prepare; else
    catalog); the class's policy may sleep, and a moved table is prepared again."""
    L = m.tx_f[j, TF_L]
    v = _read_catalog(m, j, now, L)
    pending = m.pf[PF_G] * L
    moved = v != m.tx_i[j, TI_PREPARED]
    if moved:
        k = m.tx_i[j, TI_TABC] + 1
        m.tx_i[j, TI_TABC] = k
        delay = delay_ms(m, m.pi[PI_POL_TAB], m.pf[PF_JIT_TAB], m.bo_tab, k)
    else:
        k = m.tx_i[j, TI_CATC] + 1
        m.tx_i[j, TI_CATC] = k
        delay = delay_ms(m, m.pi[PI_POL_CAT], m.pf[PF_JIT_CAT], m.bo_cat, k)
    if m.pi[PI_READ_MD] != 0:                        # commit.metadata_read_on_failure
        pending += take(m.gt, m, S_GET)
        m.tx_i[j, TI_GETS] += 1
    if delay > 0.0:                                  # sleep, then refresh again before re-CASing
        m.tx_f[j, TF_BACKOFF] += delay
        return _next_read(m, j, PC_BACKOFFREAD, pending + delay)
    return _prepare_then_cas(m, j, now, pending, v, moved)


@model_function
def step(m, j, now):
    """Run transaction j's handler for the effect point it waits at; the delay to its next one, or DONE."""
    pc = m.tx_i[j, TI_PC]
    if pc == PC_CAS:
        return on_cas(m, j, now)
    if pc == PC_FAILREAD:
        return on_conflict_read(m, j, now)
    if pc == PC_REFRESH1 or pc == PC_BACKOFFREAD:
        return on_refresh(m, j, now)
    if pc == PC_BASE:
        return on_base_read(m, j, now)
    return on_start(m, j, now)
