"""Iceberg's commit protocol (docs/MODEL.md, "One transaction"; `commit.protocol: rewrite`): every attempt
after a table conflict rewrites the manifest list and the table metadata before its CAS."""
from . import catalog, history
from .draws import take
from .io import lanes_ms
from .jit import handler, model_function
from .layout import (O_ABORTED, O_COMMITTED, PC_BACKOFFREAD, PC_CAS, PC_FAILREAD, PC_REFRESH1, PF_G,
                     PF_JIT_CAT, PF_JIT_TAB, PI_CONFLICT, PI_INLINED, PI_MAX_ATTEMPTS, PI_MAX_PARALLEL, PI_POL_CAT,
                     PI_POL_TAB, PI_READ_MD, PI_REFRESH_FIRST, R_EXHAUSTED, R_NONE, R_VALIDATION, S_BACKOFF,
                     S_CONFLICT, S_GET, S_PUT_ML, S_PUT_TM, TF_BACKOFF, TF_L, TF_RTEND, TF_RUNTIME, TI_ATTEMPTS,
                     TI_CATC, TI_GETS, TI_ISVO, TI_MLREAD, TI_PC, TI_PREPARED, TI_PUTS, TI_SEQ, TI_TABC, TI_TABLE,
                     TI_VALIDATED)
from .retry import delay_ms
from .transaction import admitted, end, next_read, next_write, read_catalog, resend


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
            if take(m.cu, m, S_CONFLICT) < m.thr[min(n, len(m.thr) - 1)]:
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
    return next_write(m, j, PC_CAS, pending)


@handler
def on_base_read(m, j, now):
    """Step 2's effect point, then step 3 (the runtime) and the first attempt's refresh (or a stale CAS)."""
    L = m.tx_f[j, TF_L]
    v = read_catalog(m, j, now, L)
    m.tx_i[j, TI_VALIDATED] = v
    runtime = m.tx_f[j, TF_RUNTIME]
    m.tx_f[j, TF_RTEND] = now + m.pf[PF_G] * L + runtime
    pending = m.pf[PF_G] * L + runtime
    if m.pi[PI_REFRESH_FIRST] != 0:
        return next_read(m, j, PC_REFRESH1, pending)
    return _prepare_then_cas(m, j, now, pending, v, True)


@handler
def on_refresh(m, j, now):
    """Step 4's refresh: before the first attempt, or after a backoff sleep (a table that moved meanwhile
    forces a re-prepare)."""
    L = m.tx_f[j, TF_L]
    first = m.tx_i[j, TI_PC] == PC_REFRESH1
    v = read_catalog(m, j, now, L)
    pending = m.pf[PF_G] * L
    return _prepare_then_cas(m, j, now, pending, v, first or v != m.tx_i[j, TI_PREPARED])


@handler
def on_cas(m, j, now):
    """Step 4's CAS against the version of the last refresh: committed, or the next attempt's refresh, or
    retries_exhausted. A throttled object answers 429 first: the request comes back later."""
    t = m.tx_i[j, TI_TABLE]
    if not admitted(m, j, now, catalog.object_of(m, t)):
        return resend(m, j, now)
    L = m.tx_f[j, TF_L]
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
    return next_read(m, j, PC_FAILREAD, m.pf[PF_G] * L)


@handler
def on_conflict_read(m, j, now):
    """The refresh after a failed CAS tells the conflict class (table: v[t] moved since the prepare; else
    catalog); the class's policy may sleep, and a moved table is prepared again."""
    L = m.tx_f[j, TF_L]
    v = read_catalog(m, j, now, L)
    pending = m.pf[PF_G] * L
    moved = v != m.tx_i[j, TI_PREPARED]
    if moved:
        k = m.tx_i[j, TI_TABC] + 1
        m.tx_i[j, TI_TABC] = k
        delay = delay_ms(m, m.pi[PI_POL_TAB], m.pf[PF_JIT_TAB], m.bo_tab, k, m.bo, S_BACKOFF)
    else:
        k = m.tx_i[j, TI_CATC] + 1
        m.tx_i[j, TI_CATC] = k
        delay = delay_ms(m, m.pi[PI_POL_CAT], m.pf[PF_JIT_CAT], m.bo_cat, k, m.bo, S_BACKOFF)
    if m.pi[PI_READ_MD] != 0:                        # commit.metadata_read_on_failure
        pending += take(m.gt, m, S_GET)
        m.tx_i[j, TI_GETS] += 1
    if delay > 0.0:                                  # sleep, then refresh again before re-CASing
        m.tx_f[j, TF_BACKOFF] += delay
        return next_read(m, j, PC_BACKOFFREAD, pending + delay)
    return _prepare_then_cas(m, j, now, pending, v, moved)
