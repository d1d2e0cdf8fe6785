"""Delta Lake's commit protocol on an object store (docs/MODEL.md, "Commit protocol"; `commit.protocol: log`).

Each table has a log of numbered entries; v[t] is how many it has. A transaction's entry is written once, its
bytes fixed when its runtime ends; an attempt LISTs the log (the newest version M), reads and checks the
entries it has not checked yet, and creates entry M + 1 put-if-absent: it succeeds iff the log still has M
entries at the create's effect point. Nothing is rewritten on a retry. Every `checkpoint_interval`-th version
its committer also writes a checkpoint, counted in its end time but in no one's critical section.

The real clients' extra reads (docs/MODEL.md "Delta clients"), each a switch of `commit`: delta-rs updates its
snapshot between the checks and the put (a LIST and the new entries again, `snapshot_update`); snapshot reads
run on their own lanes (`snapshot_max_parallel`); the post-commit work rebuilds the checkpoint from a fresh
snapshot (`checkpoint_rebuild`) and LISTs the whole log for expired entries (`log_cleanup`). A LIST outside an
effect point is drawn as a GET, one per page of LIST_PAGE_KEYS keys.
"""
from . import catalog, history, throttle
from .draws import take
from .io import gets_ms, gets_on_ms
from .jit import handler, model_function
from .retry import delay_ms
from .rewrite import _real_conflict
from .resend import GIVE_UP
from .state import LIST_PAGE_KEYS, PC, LogCleanup, Outcome, Reason, Src
from .transaction import DONE, admitted, end, next_read, next_write, read_catalog, resend, start, throttled_delay


@model_function
def snapshot_ms(m, j, v):
    """Reading a snapshot of a log with v entries: a GET of the newest checkpoint, then of every entry after
    it (with no checkpoint yet, every entry); none for `commit.shape: object`."""
    if m.p.object_shape:                             # the microbenchmark reads no snapshot
        return 0.0
    ci = m.p.checkpoint_interval
    newest = (v // ci) * ci if ci > 0 else 0
    return _tail_ms(m, j, newest, v)


@model_function
def _tail_ms(m, j, newest, v):
    """The checkpoint of the first `newest` entries (none if 0), then entries newest + 1 .. v on the snapshot
    reads' lanes (`commit.snapshot_max_parallel`; the kernel's json handler, buffered(1000))."""
    ms = 0.0
    if newest > 0:
        ms += take(m, Src.GET)
        m.tx[j].gets += 1
    if v > newest:
        ms += gets_on_ms(m, j, v - newest, m.p.snapshot_max_parallel)
    return ms


@model_function
def list_ms(m, j, pages):
    """A LIST of the log outside an effect point, its pages one after another, each a GET draw."""
    ms = 0.0
    for _ in range(pages):
        ms += take(m, Src.GET)
    m.tx[j].lists += pages
    return ms


@model_function
def _update_ms(m, j, n):
    """delta-rs's snapshot update after the checks read n > 0 new entries (`commit.snapshot_update`): a LIST
    and the n entries again, on the snapshot reads' lanes, before the put-if-absent."""
    return list_ms(m, j, 1) + gets_on_ms(m, j, n, m.p.snapshot_max_parallel)


@handler
def on_log_base(m, j, now):
    """The snapshot read at arrival: its LIST's effect point sees M = v[t]; then the checkpoint and entries are
    read, the runtime runs, and the first attempt LISTs again (or, `first_attempt: stale`, creates M + 1)."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    tx.validated = v                                 # the entries in its snapshot need no check
    tx.prepared = v
    pending = m.p.g * L + _store_query_ms(m) + snapshot_ms(m, j, v)
    tx.runtime_end_ms = now + pending + tx.runtime_ms
    pending += tx.runtime_ms
    if m.p.refresh_first:
        return next_read(m, j, PC.LOG_LIST, pending)
    return _create(m, j, pending)


@handler
def on_list(m, j, now):
    """An attempt's LIST: its effect point sees the newest version M; the entries not checked yet are read
    (M - checked GETs) and checked (a VO conflicts with each with probability vo_conflict_probability: abort,
    validation_failed; a FastAppend cannot); then entry M + 1 is created."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    pending = m.p.g * L + _store_query_ms(m)
    checked = tx.validated
    n = v - checked
    if n > 0 and not m.p.object_shape:
        pending += gets_ms(m, j, n)
    tx.validated = v
    tx.prepared = v
    aborted = tx.is_vo != 0 and _real_conflict(m, n)
    if n > 0 and m.p.snapshot_update and not aborted and not m.p.object_shape:
        pending += _update_ms(m, j, n)
    if history.on(m):
        history.prepare(m, now, j, tx.table, v, checked, v)
    if aborted:
        return end(m, j, now, Outcome.ABORTED, Reason.VALIDATION, now + pending)
    return _create(m, j, pending)


@model_function
def _store_query_ms(m):
    """Delta's DynamoDB log store lists the log (`listFrom`) with a Query of its table's newest entry too."""
    return take(m, Src.LOG_STORE) if m.p.log_store else 0.0


@model_function
def _create(m, j, pending):
    """Create the next entry `pending` ms from now. Delta's DynamoDB log store first checks the entry is not in
    S3 yet (a HEAD), reads the previous entry's item (a consistent GetItem) and checks its file (a HEAD), and
    PUTs the entry to a temp file; its conditional PutItem is the create (BaseExternalLogStore.write)."""
    if m.p.log_store:
        tx = m.tx[j]
        pending += take(m, Src.GET) + take(m, Src.LOG_STORE) + take(m, Src.GET) + take(m, Src.PUT_ML)
        tx.gets += 2
        tx.puts += 1
    return next_write(m, j, PC.LOG_CREATE, pending)


@model_function
def _committed(m, j, now, t, answer):
    """The entry is created: the committer's post-commit work ends its call (with Delta's DynamoDB log store, after
    the entry's copy into the log and its completion PutItem)."""
    if m.p.log_store:
        return _complete(m, j, now, answer)
    if throttle.on(m):
        throttle.entry_created(m, t)
    answer += _post_commit_ms(m, j, m.versions[t])
    return end(m, j, now, Outcome.COMMITTED, Reason.NONE, answer)


@model_function
def _complete(m, j, now, answer):
    """Delta's DynamoDB log store after its commit point: the temp file is copied to the entry's name (a GET and
    a PUT), then its item is marked complete (a PutItem, which takes write capacity at its effect point). The
    commit has ended; its call returns at the completion's answer (and the post-commit work after it)."""
    tx = m.tx[j]
    before = answer - now + take(m, Src.GET) + take(m, Src.PUT_ML)
    tx.gets += 1
    tx.puts += 1
    delay = start(m, j, Src.LOG_STORE, PC.LOG_COMPLETE, before)
    end_ms = now + before + tx.op_latency_ms + _post_commit_ms(m, j, m.versions[tx.table])
    end(m, j, now, Outcome.COMMITTED, Reason.NONE, end_ms)
    tx.pc = PC.LOG_COMPLETE
    tx.throttled_in_row = 0
    return delay


@handler
def on_complete(m, j, now):
    """The completion PutItem's effect point: it takes a unit of the table's write capacity; a throttled one is
    resent by the SDK (its later answers are past the commit's recorded end) or given up, which Delta ignores
    ("ignoring recoverable error": a reader repairs an incomplete entry)."""
    tx = m.tx[j]
    answer_in = m.p.g * tx.op_latency_ms
    ok = throttle.admit(m, 0, now)
    if history.on(m):
        history.store_write(m, now, j, tx.table, ok, now + answer_in)
    if not ok:
        delay = throttled_delay(m, j, now, answer_in)
        if delay != GIVE_UP:
            return start(m, j, Src.LOG_STORE, PC.LOG_COMPLETE, answer_in + delay)
    tx.pc = PC.DONE
    return DONE


@model_function
def _post_commit_ms(m, j, v):
    """After creating the v-th entry: every checkpoint_interval-th version a checkpoint (its PUT; rebuilt, a
    fresh snapshot read first and `_last_checkpoint` PUT after), then the expired-log cleanup's LIST of the
    log's entries (after every commit, or after a checkpoint)."""
    ms = 0.0
    ci = m.p.checkpoint_interval
    cp = ci > 0 and v % ci == 0
    if cp and m.p.checkpoint_rebuild:
        ms += list_ms(m, j, 1) + _tail_ms(m, j, v - ci, v) + take(m, Src.PUT_LAST_CP)
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
