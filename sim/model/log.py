"""Delta Lake's commit protocol on an object store (docs/MODEL.md, "Commit protocol"; `commit.protocol: log`).

Each table has a log of numbered entries; v[t] is how many it has. A transaction's entry is written once, its
bytes fixed when its runtime ends; an attempt LISTs the log (the newest version M), reads and checks the
entries it has not checked yet, and creates entry M + 1 put-if-absent: it succeeds iff the log still has M
entries at the create's effect point. Nothing is rewritten on a retry. Every `checkpoint_interval`-th version
its committer also writes a checkpoint, counted in its end time but in no one's critical section.
"""
from . import catalog, history, throttle
from .draws import take
from .io import lanes_ms
from .jit import handler, model_function
from .layout import (O_ABORTED, O_COMMITTED, PC_L_CREATE, PC_L_LIST, PF_G, PF_JIT_TAB, PI_CKPT_INTERVAL,
                     PI_CONFLICT, PI_MAX_ATTEMPTS, PI_MAX_PARALLEL, PI_POL_TAB, PI_REFRESH_FIRST, R_EXHAUSTED,
                     R_NONE, R_VALIDATION, S_BACKOFF, S_CONFLICT, S_GET, S_PUT_CP, TF_BACKOFF, TF_L, TF_RTEND,
                     TF_RUNTIME, TI_ATTEMPTS, TI_GETS, TI_ISVO, TI_PREPARED, TI_PUTS, TI_SEQ, TI_TABC, TI_TABLE,
                     TI_VALIDATED)
from .retry import delay_ms
from .transaction import admitted, end, next_read, next_write, read_catalog, resend


@model_function
def _gets_ms(m, j, n):
    """n > 0 GETs (entries), at most io.max_parallel at a time."""
    c = m.cur[S_GET]
    ms = lanes_ms(m.gt, c, m.step[S_GET], n, m.pi[PI_MAX_PARALLEL], m.lanes)
    m.cur[S_GET] = c + m.step[S_GET] * n
    m.tx_i[j, TI_GETS] += n
    return ms


@model_function
def snapshot_ms(m, j, v):
    """Reading a snapshot of a log with v entries: a GET of the newest checkpoint, then of every entry after
    it (with no checkpoint yet, every entry)."""
    ci = m.pi[PI_CKPT_INTERVAL]
    newest = (v // ci) * ci if ci > 0 else 0
    ms = 0.0
    if newest > 0:
        ms += take(m.gt, m, S_GET)
        m.tx_i[j, TI_GETS] += 1
    if v > newest:
        ms += _gets_ms(m, j, v - newest)
    return ms


@handler
def on_log_base(m, j, now):
    """The snapshot read at arrival: its LIST's effect point sees M = v[t]; then the checkpoint and entries are
    read, the runtime runs, and the first attempt LISTs again (or, `first_attempt: stale`, creates M + 1)."""
    L = m.tx_f[j, TF_L]
    v = read_catalog(m, j, now, L)
    m.tx_i[j, TI_VALIDATED] = v                      # the entries in its snapshot need no check
    m.tx_i[j, TI_PREPARED] = v
    pending = m.pf[PF_G] * L + snapshot_ms(m, j, v)
    m.tx_f[j, TF_RTEND] = now + pending + m.tx_f[j, TF_RUNTIME]
    pending += m.tx_f[j, TF_RUNTIME]
    if m.pi[PI_REFRESH_FIRST] != 0:
        return next_read(m, j, PC_L_LIST, pending)
    return next_write(m, j, PC_L_CREATE, pending)


@handler
def on_list(m, j, now):
    """An attempt's LIST: its effect point sees the newest version M; the entries not checked yet are read
    (M - checked GETs) and checked (a VO conflicts with each with probability vo_conflict_probability: abort,
    validation_failed; a FastAppend cannot); then entry M + 1 is created."""
    L = m.tx_f[j, TF_L]
    v = read_catalog(m, j, now, L)
    pending = m.pf[PF_G] * L
    checked = m.tx_i[j, TI_VALIDATED]
    n = v - checked
    if n > 0:
        pending += _gets_ms(m, j, n)
    m.tx_i[j, TI_VALIDATED] = v
    m.tx_i[j, TI_PREPARED] = v
    aborted = False
    if m.tx_i[j, TI_ISVO] != 0 and m.pi[PI_CONFLICT] != 0 and n > 0:
        aborted = take(m.cu, m, S_CONFLICT) < m.thr[min(n, len(m.thr) - 1)]
    if history.on(m):
        history.prepare(m, now, j, m.tx_i[j, TI_TABLE], v, checked, v)
    if aborted:
        return end(m, j, now, O_ABORTED, R_VALIDATION, now + pending)
    return next_write(m, j, PC_L_CREATE, pending)


@handler
def on_create(m, j, now):
    """The put-if-absent of entry M + 1: committed (and every checkpoint_interval-th version a checkpoint PUT
    before the committer is done), or, after the policy of retry.table, the next attempt's LIST, or
    retries_exhausted. Contenders race for one entry name: a throttled name answers 429 first."""
    t = m.tx_i[j, TI_TABLE]
    expected = m.tx_i[j, TI_SEQ]
    if throttle.on(m) and not admitted(m, j, now, throttle.entry_slot(m, t, expected + 1)):
        return resend(m, j, now)
    L = m.tx_f[j, TF_L]
    attempts = m.tx_i[j, TI_ATTEMPTS] + 1
    m.tx_i[j, TI_ATTEMPTS] = attempts
    ok = catalog.cas(m, t, expected)
    answer = now + m.pf[PF_G] * L
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, answer)
    if ok:
        if throttle.on(m):
            throttle.entry_created(m, t)
        ci = m.pi[PI_CKPT_INTERVAL]
        if ci > 0 and m.versions[t] % ci == 0:
            answer += take(m.pcp, m, S_PUT_CP)
            m.tx_i[j, TI_PUTS] += 1
        return end(m, j, now, O_COMMITTED, R_NONE, answer)
    if attempts >= m.pi[PI_MAX_ATTEMPTS]:
        return end(m, j, now, O_ABORTED, R_EXHAUSTED, answer)
    k = m.tx_i[j, TI_TABC] + 1
    m.tx_i[j, TI_TABC] = k
    delay = delay_ms(m, m.pi[PI_POL_TAB], m.pf[PF_JIT_TAB], m.bo_tab, k, m.bo, S_BACKOFF)
    m.tx_f[j, TF_BACKOFF] += delay
    return next_read(m, j, PC_L_LIST, m.pf[PF_G] * L + delay)
