"""Delta Lake's commit protocol on an object store (docs/MODEL.md, "Commit protocol"; `commit.protocol: log`).

Each table has a log of numbered entries; v[t] is how many it has. A transaction's entry is written once, its
bytes fixed when its runtime ends; an attempt LISTs the log (the newest version M), reads and checks the
entries it has not checked yet, and creates entry M + 1 put-if-absent: it succeeds iff the log still has M
entries at the create's effect point. Nothing is rewritten on a retry. Every `checkpoint_interval`-th version
its committer also writes a checkpoint, counted in its end time but in no one's critical section.
"""
from . import catalog, history, throttle
from .draws import take
from .io import gets_ms
from .jit import handler, model_function
from .retry import delay_ms
from .rewrite import _real_conflict
from .state import PC, Outcome, Reason, Src
from .transaction import admitted, end, next_read, next_write, read_catalog, resend


@model_function
def snapshot_ms(m, j, v):
    """Reading a snapshot of a log with v entries: a GET of the newest checkpoint, then of every entry after
    it (with no checkpoint yet, every entry); none for `commit.shape: object`."""
    if m.p.object_shape:                             # the microbenchmark reads no snapshot
        return 0.0
    ci = m.p.checkpoint_interval
    newest = (v // ci) * ci if ci > 0 else 0
    ms = 0.0
    if newest > 0:
        ms += take(m, Src.GET)
        m.tx[j].gets += 1
    if v > newest:
        ms += gets_ms(m, j, v - newest)
    return ms


@handler
def on_log_base(m, j, now):
    """The snapshot read at arrival: its LIST's effect point sees M = v[t]; then the checkpoint and entries are
    read, the runtime runs, and the first attempt LISTs again (or, `first_attempt: stale`, creates M + 1)."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    tx.validated = v                                 # the entries in its snapshot need no check
    tx.prepared = v
    pending = m.p.g * L + snapshot_ms(m, j, v)
    tx.runtime_end_ms = now + pending + tx.runtime_ms
    pending += tx.runtime_ms
    if m.p.refresh_first:
        return next_read(m, j, PC.LOG_LIST, pending)
    return next_write(m, j, PC.LOG_CREATE, pending)


@handler
def on_list(m, j, now):
    """An attempt's LIST: its effect point sees the newest version M; the entries not checked yet are read
    (M - checked GETs) and checked (a VO conflicts with each with probability vo_conflict_probability: abort,
    validation_failed; a FastAppend cannot); then entry M + 1 is created."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    pending = m.p.g * L
    checked = tx.validated
    n = v - checked
    if n > 0 and not m.p.object_shape:
        pending += gets_ms(m, j, n)
    tx.validated = v
    tx.prepared = v
    aborted = tx.is_vo != 0 and _real_conflict(m, n)
    if history.on(m):
        history.prepare(m, now, j, tx.table, v, checked, v)
    if aborted:
        return end(m, j, now, Outcome.ABORTED, Reason.VALIDATION, now + pending)
    return next_write(m, j, PC.LOG_CREATE, pending)


@model_function
def _committed(m, j, now, t, answer):
    """The entry is created: every checkpoint_interval-th version its committer writes a checkpoint first."""
    if throttle.on(m):
        throttle.entry_created(m, t)
    ci = m.p.checkpoint_interval
    if ci > 0 and m.versions[t] % ci == 0:
        answer += take(m, Src.PUT_CP)
        m.tx[j].puts += 1
    return end(m, j, now, Outcome.COMMITTED, Reason.NONE, answer)


@handler
def on_create(m, j, now):
    """The put-if-absent of entry M + 1: committed, or, after the policy of retry.table, the next attempt's
    LIST, or retries_exhausted. Contenders race for one entry name: a throttled name answers 429 first."""
    tx = m.tx[j]
    t = tx.table
    expected = tx.seq
    if throttle.on(m) and not admitted(m, j, now, throttle.entry_slot(m, t, expected + 1)):
        return resend(m, j, now)
    L = tx.op_latency_ms
    attempts = tx.attempts + 1
    tx.attempts = attempts
    ok = catalog.cas(m, t, expected)
    answer = now + m.p.g * L
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, answer)
    if ok:
        return _committed(m, j, now, t, answer)
    if attempts >= m.p.max_attempts:
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, answer)
    k = tx.table_conflicts + 1
    tx.table_conflicts = k
    delay = delay_ms(m, m.p.policy_table, m.p.jitter_table, m.bo_tab, k, Src.BACKOFF)
    tx.backoff_ms += delay
    return next_read(m, j, PC.LOG_LIST, m.p.g * L + delay)
