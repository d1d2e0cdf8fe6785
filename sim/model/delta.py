"""Delta Lake's commit loop on a log (docs/MODEL.md, "The log protocol"; `commit.protocol: log`), shared by the
designs that run it (`log`: delta-rs and Delta Spark; `delta_dynamodb`: Delta Spark with its DynamoDB log store).

Each table has a log of numbered entries; v[t] is how many it has. A transaction's entry is written once, its
bytes fixed when its runtime ends; an attempt LISTs the log (the newest version M), reads and checks the
entries it has not checked yet, and creates entry M + 1 put-if-absent: it succeeds iff the log still has M
entries at the create's effect point. Nothing is rewritten on a retry. Every `checkpoint_interval`-th version
its committer also writes a checkpoint, counted in its end time but in no one's critical section.

The real clients' extra reads (docs/MODEL.md "Delta clients"), each a switch of `commit`: delta-rs updates its
snapshot between the checks and the put (a LIST and the new entries again, `snapshot_update`); snapshot reads
run on their own lanes (`snapshot_max_parallel`), each entry read `snapshot_passes` times, a checkpoint as
`checkpoint_read_gets` ranged GETs, a fresh snapshot's LIST after a GET of the `_last_checkpoint` hint
(`last_checkpoint_hint`); the post-commit work updates the committer's snapshot to its entry
(`post_commit_update`), rebuilds the checkpoint from a fresh snapshot (`checkpoint_rebuild`) and LISTs the whole
log for expired entries (`log_cleanup`); with no retry, an attempt whose LIST finds the log moved fails there
(`fail_fast_without_retries`). A LIST outside an effect point is drawn as a GET, one per page of LIST_PAGE_KEYS
keys.
"""
from . import catalog, faults, history, log_store, operations, throttle
from .draws import take, take_sum
from .io import gets_ms, gets_on_lanes_ms, list_ms, log_pages_ms, store_wait_ms
from .jit import handler, model_function
from .retry import delay_ms
from .state import LIST_PAGE_KEYS, PC, Fault, LogCleanup, Op, Outcome, Reason, Src
from .transaction import (admitted, before_create_ms, end, first_read, next_read, next_write, read_catalog,
                          real_conflict, resend)


@model_function
def begin(m, j):
    """INIT: the client's setup (`commit.client_setup_ms`), then the snapshot read (its LIST; of a long log without
    checkpoints, its pages before the last first; with the `_last_checkpoint` hint, its GET before them)."""
    before = m.p.client_setup_ms + _hint_ms(m, j) + log_pages_ms(m, j)
    if before > 0.0:
        return next_read(m, j, PC.LOG_BASE, before)
    return first_read(m, j, PC.LOG_BASE)


@model_function
def snapshot_ms(m, j, v, at):
    """Reading a snapshot of a log with v entries: a GET of the newest checkpoint, then of every entry after
    it (with no checkpoint yet, every entry); none for `commit.shape: object`."""
    if m.p.object_shape:                             # the microbenchmark reads no snapshot
        return 0.0
    ci = m.p.checkpoint_interval
    newest = (v // ci) * ci if ci > 0 else 0
    return _tail_ms(m, j, newest, v, at)


@model_function
def _tail_ms(m, j, newest, v, at):
    """Read from `at`: the checkpoint of the first `newest` entries (none if 0; `commit.checkpoint_read_gets` ranged
    GETs, one after another), then entries newest + 1 .. v (`_passes_ms`)."""
    ms = 0.0
    if newest > 0:
        k = m.p.checkpoint_read_gets
        ms += take_sum(m, Src.GET, k)
        m.tx[j].gets += k
    if v > newest:
        ms += _passes_ms(m, j, v - newest, at + ms)
    return ms


@model_function
def _passes_ms(m, j, n, at):
    """n entries read from `at`, `commit.snapshot_passes` times, pass after pass (delta-rs: the kernel's protocol
    and metadata replay, then its file replay), each pass on the snapshot reads' lanes
    (`commit.snapshot_max_parallel`; the kernel's json handler, buffered(1000)) and, at a store that serves GETs one
    at a time, after those sent before it (`store_wait_ms`)."""
    ms = 0.0
    for _ in range(m.p.snapshot_passes):
        ms += gets_on_lanes_ms(m, j, n, m.p.snapshot_max_parallel) + store_wait_ms(m, at + ms, n)
        ms += n * m.p.snapshot_entry_ms
    return ms


@model_function
def _update_ms(m, j, n, at):
    """delta-rs's snapshot update to n > 0 new entries: a LIST from the newest checkpoint (its pages, one after
    another) and the n entries' passes. Inside an attempt, after the checks (`commit.snapshot_update`), before the
    put-if-absent; after the commit, to the committer's own entry (`commit.post_commit_update`). From `at`."""
    listing = list_ms(m, j, 1) + log_pages_ms(m, j)
    return listing + _passes_ms(m, j, n, at + listing)


@model_function
def _hint_ms(m, j):
    """The kernel's `_last_checkpoint` hint, read before a fresh snapshot's LIST (`commit.last_checkpoint_hint`):
    a GET (404 while the table has no checkpoint)."""
    if not m.p.last_checkpoint_hint:
        return 0.0
    m.tx[j].gets += 1
    return take(m, Src.GET)


@handler
def on_log_base(m, j, now):
    """The snapshot read at arrival: its LIST's effect point sees M = v[t]; then the checkpoint and entries are
    read, the runtime runs, and the first attempt LISTs again (or, `first_attempt: stale`, creates M + 1)."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    tx.validated = v                                 # the entries in its snapshot need no check
    tx.prepared = v
    if m.p.log_store:                                # its LIST Queries the store first (the runtime end is set then)
        return log_store.query(m, j, m.p.g * L, snapshot_ms(m, j, v, now + m.p.g * L) + tx.runtime_ms,
                               PC.LOG_LIST if m.p.refresh_first else PC.LOG_CREATE)
    pending = m.p.g * L
    pending += snapshot_ms(m, j, v, now + pending)
    tx.runtime_end_ms = now + pending + tx.runtime_ms
    pending += tx.runtime_ms
    if m.p.refresh_first:
        return next_read(m, j, PC.LOG_LIST, pending + log_pages_ms(m, j))
    return _create(m, j, pending)


@handler
def on_list(m, j, now):
    """An attempt's LIST: its effect point sees the newest version M; the entries not checked yet are read
    (M - checked GETs) and checked (a VO conflicts with each with probability vo_conflict_probability: abort,
    validation_failed; a FastAppend cannot); then entry M + 1 is created."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    checked = tx.validated
    n = v - checked
    if n > 0 and m.p.fail_fast:
        return _moved(m, j, now, L)
    pending = m.p.g * L
    checks = 0.0                                     # the same after the answer (with a log store, its Query's)
    if n > 0 and not m.p.object_shape:
        d = gets_ms(m, j, n)
        pending += d
        checks += d
    tx.validated = v
    tx.prepared = v
    aborted = tx.op == Op.VO and real_conflict(m, n)
    if operations.validates(m, j):                   # the entries it read now, by Delta's rules
        aborted, _ = operations.validate(m, j, checked, v)
    if n > 0 and m.p.snapshot_update and not aborted and not m.p.object_shape:
        d = _update_ms(m, j, n, now + pending)
        pending += d
        checks += d
    if history.on(m):
        history.prepare(m, now, j, tx.table, v, checked, v)
    if m.p.faults and faults.met_own(m, j, checked, v):   # a resend found its own entry among those read
        return _met_own(m, j, now, pending)
    if m.p.log_store:
        return log_store.query(m, j, m.p.g * L, checks, PC.DONE if aborted else PC.LOG_CREATE)
    if aborted:
        return end(m, j, now, Outcome.ABORTED, Reason.VALIDATION, now + pending)
    return _create(m, j, pending)


@model_function
def _moved(m, j, now, L):
    """delta-rs with max_retries 0 (`commit.fail_fast_without_retries`): the attempt's LIST found entries its
    snapshot lacks, and the commit fails there, MaxCommitAttempts with no check and no put
    (crates/core/src/kernel/transaction/mod.rs:873-885): its one attempt used, at the LIST's answer."""
    m.tx[j].attempts += 1
    return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, now + m.p.g * L)


@model_function
def _met_own(m, j, now, pending):
    """The entries an attempt read hold its own (its resent create found it there; `sim.model.faults`): Delta Spark's
    idempotency check, when on, takes it for the commit; else a blind append conflicts with nothing and creates the
    next entry too, and anything else conflicts with its own (Delta Spark: IdempotentCommitRetrySuite)."""
    tx = m.tx[j]
    if m.p.idempotency_check:
        return end(m, j, now, Outcome.COMMITTED, Reason.NONE, now + pending)
    if tx.op != Op.FA:
        return faults.unknown(m, j, now, Reason.SELF_CONFLICT, now + pending)
    return _create(m, j, pending)


@model_function
def _create(m, j, pending):
    """Create the next entry `pending` ms from now (with Delta's DynamoDB log store, after its checks and the
    entry's temp file: its conditional PutItem is the create; on a file system, after its exists() check and
    temp file: the rename or link is)."""
    if m.p.log_store:
        return log_store.check_then_create(m, j, pending)
    return next_write(m, j, PC.LOG_CREATE, pending + before_create_ms(m, j, True))


@model_function
def _committed(m, j, now, t, answer):
    """The entry is created: the committer's post-commit work ends its call (with Delta's DynamoDB log store, after
    the entry's copy into the log and its completion PutItem)."""
    if m.p.log_store:
        before, delay = log_store.copy_then_complete(m, j, now, answer)
        end_ms = now + before + m.tx[j].op_latency_ms
        end_ms += _post_commit_ms(m, j, m.versions[t], end_ms)
        end(m, j, now, Outcome.COMMITTED, Reason.NONE, end_ms)
        log_store.awaits_completion(m, j)
        return delay
    if throttle.on(m):
        throttle.entry_created(m, t)
    answer += _post_commit_ms(m, j, m.versions[t], answer)
    return end(m, j, now, faults.committed(m, j), Reason.NONE, answer)


@model_function
def _post_commit_ms(m, j, v, at):
    """After creating the v-th entry: the committer's snapshot updated to it (delta-rs), then every
    checkpoint_interval-th version a checkpoint (its PUT; rebuilt, a fresh snapshot read first, and with the hint
    the new checkpoint's HEAD and the `_last_checkpoint` PUT after), then the expired-log cleanup's LIST of the
    log's entries (after every commit, or after a checkpoint)."""
    ms = 0.0
    if m.p.post_commit_update and not m.p.object_shape:
        ms += _update_ms(m, j, 1, at)
    ci = m.p.checkpoint_interval
    cp = ci > 0 and v % ci == 0
    if cp and m.p.checkpoint_rebuild:
        rebuild = _hint_ms(m, j) + list_ms(m, j, 1)
        ms += rebuild + _tail_ms(m, j, v - ci, v, at + ms + rebuild)
        if m.p.last_checkpoint_hint:                 # the kernel HEADs the checkpoint it wrote, for the hint's size
            ms += take(m, Src.GET)
            m.tx[j].gets += 1
        ms += take(m, Src.PUT_LAST_CP)
        m.tx[j].puts += 1
    if cp:
        ms += take(m, Src.PUT_CP)
        m.tx[j].puts += 1
    c = m.p.log_cleanup
    if (c == LogCleanup.EVERY_COMMIT or (c == LogCleanup.CHECKPOINT and cp)) and not m.p.object_shape:
        keys = m.p.log_entries_at_start + v
        ms += list_ms(m, j, (keys + LIST_PAGE_KEYS - 1) // LIST_PAGE_KEYS)
    return ms


@handler
def on_create(m, j, now):
    """The put-if-absent of entry M + 1: committed, or, after the policy of retry.table, the next attempt's
    LIST, or retries_exhausted. Contenders race for one entry name: a throttled name answers 429 first."""
    tx = m.tx[j]
    t = tx.table
    expected = tx.seq
    slot = 0 if m.p.log_store else throttle.entry_slot(m, t, expected + 1)   # (the log store's table: one bucket)
    if throttle.on(m) and not admitted(m, j, now, slot):
        return resend(m, j, now)
    L = tx.op_latency_ms
    resent = faults.resent(m, j)                    # a storage client's resend is no attempt of the client's
    fault = faults.draw(m, j)
    if fault == Fault.ERROR:
        return faults.failed(m, j, now, now + m.p.cg * L, PC.LOG_CREATE)
    attempts = tx.attempts + (0 if resent else 1)
    tx.attempts = attempts
    ok = catalog.cas(m, j, t, expected, now)
    answer = now + m.p.cg * L
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, answer)
    if fault == Fault.LOST:
        return faults.lost(m, j, now, answer, PC.LOG_CREATE)
    if ok:
        return _committed(m, j, now, t, answer)
    if attempts >= m.p.max_attempts:
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, answer)
    k = tx.table_conflicts + 1
    tx.table_conflicts = k
    delay = delay_ms(m, m.p.policy_table, m.p.jitter_table, m.bo_tab, k, Src.BACKOFF)
    tx.backoff_ms += delay
    return next_read(m, j, PC.LOG_LIST, m.p.cg * L + delay + log_pages_ms(m, j))


@handler
def route(m, j, now, pc):
    """The loop's handler for its effect point `pc` (`OWNS`), and INIT."""
    if pc == PC.INIT:
        return begin(m, j)
    if pc == PC.LOG_CREATE:
        return on_create(m, j, now)
    if pc == PC.LOG_LIST:
        return on_list(m, j, now)
    return on_log_base(m, j, now)   # PC.LOG_BASE


OWNS = dict(effect_points=("LOG_BASE", "LOG_LIST", "LOG_CREATE"), fields=("lists",),
            params=("log", "snapshot_update", "snapshot_max_parallel", "checkpoint_rebuild", "log_cleanup",
                    "log_entries_at_start", "checkpoint_interval", "snapshot_passes", "last_checkpoint_hint",
                    "checkpoint_read_gets", "post_commit_update", "fail_fast", "client_setup_ms",
                    "snapshot_entry_ms"),
            sources=("PUT_CP", "PUT_LAST_CP"))
