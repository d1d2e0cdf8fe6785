"""Iceberg's commit protocol (docs/MODEL.md, "One transaction"; `commit.protocol: rewrite`): every attempt
after a table conflict rewrites the manifest list and the table metadata before its CAS."""
from . import catalog, fs_table, hive, history, server
from .draws import take
from .io import gets_ms
from .jit import handler, model_function
from .retry import conflict_delay
from .state import PC, Outcome, Reason, Src
from .transaction import admitted, end, next_read, next_write, read_catalog, resend


@model_function
def _validate(m, j, v):
    """A VO reads the n snapshots of its table up to v it has not validated; the newest is the current manifest
    list, already read, so that is n - 1 more GETs. Returns their time."""
    tx = m.tx[j]
    n = v - tx.validated
    if n > 1:
        tx.manifest_lists_read += n - 1
        return gets_ms(m, j, n - 1)
    return 0.0


@model_function
def _real_conflict(m, n):
    """Whether n newly validated snapshots hold a real conflict (vo_conflict_probability each)."""
    return m.p.vo_conflicts and n > 0 and take(m, Src.CONFLICT) < m.thr[min(n, len(m.thr) - 1)]


@model_function
def prepare(m, j, now, v):
    """Prepare on table version v: read the table metadata and the current manifest list; a VO validates the
    snapshots it has not validated and may find a real conflict; then write the manifest list and the table
    metadata (none of this for `commit.shape: object`). Returns the I/O time, negated if the validation aborts
    the transaction."""
    tx = m.tx[j]
    inlined = m.p.metadata_inlined
    tx.prepared = v
    if m.p.object_shape:                             # the microbenchmark writes no table
        if history.on(m):
            history.prepare(m, now, j, tx.table, v, -1, -1)
        return 0.0
    cost = 0.0
    if not inlined:
        cost += take(m, Src.GET)                     # table metadata
        tx.gets += 1
    cost += take(m, Src.GET)                         # current manifest list
    tx.gets += 1
    tx.manifest_lists_read += 1
    vfrom = -1
    vto = -1
    aborted = False
    if tx.is_vo != 0:
        vfrom = tx.validated
        vto = v
        cost += _validate(m, j, v)
        tx.validated = v
        aborted = _real_conflict(m, v - vfrom)
    if not aborted:
        cost += take(m, Src.PUT_ML)
        tx.puts += 1
        if not inlined:
            cost += take(m, Src.PUT_TM)
            tx.puts += 1
    if history.on(m):
        history.prepare(m, now, j, tx.table, v, vfrom, vto)
    return -cost if aborted else cost


@model_function
def _prepare_then_cas(m, j, now, pending, v, do_prepare):
    """After a read whose answer comes `pending` ms from now: prepare if asked, then CAS (with
    `commit.reread_before_cas`, a prepare is followed by a re-read of the catalog first)."""
    if do_prepare:
        cost = prepare(m, j, now, v)
        if cost < 0:
            return end(m, j, now, Outcome.ABORTED, Reason.VALIDATION, now + pending - cost)
        pending += cost
        if m.p.reread_before_cas:
            return next_read(m, j, PC.REREAD, pending)
    if m.p.server:                                   # a REST server commits on the client's behalf
        return server.post(m, j, pending)
    if m.p.lock:                                     # Iceberg on the Hive Metastore: the commit under its lock
        return hive.commit(m, j, pending)
    return next_write(m, j, PC.CAS, pending)


@handler
def on_base_read(m, j, now):
    """Step 2's effect point, then step 3 (the runtime) and the first attempt's refresh (or a stale CAS)."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    tx.validated = v
    runtime = tx.runtime_ms
    answer_in = server.read_answer_ms(m, j, L)
    tx.runtime_end_ms = now + answer_in + runtime
    pending = answer_in + runtime
    if m.p.refresh_first:
        return next_read(m, j, PC.REFRESH, pending)
    return _prepare_then_cas(m, j, now, pending, v, True)


@handler
def on_refresh(m, j, now):
    """Step 4's refresh: before the first attempt, or after a backoff sleep (a table that moved meanwhile
    forces a re-prepare)."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    first = tx.pc == PC.REFRESH
    v = read_catalog(m, j, now, L)
    pending = server.read_answer_ms(m, j, L)
    return _prepare_then_cas(m, j, now, pending, v, first or v != tx.prepared)


@handler
def on_cas(m, j, now):
    """Step 4's CAS against the version of the last refresh: committed, or the next attempt's refresh, or
    retries_exhausted. A throttled object answers 429 first: the request comes back later."""
    tx = m.tx[j]
    t = tx.table
    obj = fs_table.slot(m, t, tx.seq) if m.p.version_files else catalog.object_of(m, t)
    if not admitted(m, j, now, obj):
        return resend(m, j, now)
    L = tx.op_latency_ms
    attempts = tx.attempts + 1
    tx.attempts = attempts
    expected = tx.seq
    ok = catalog.cas(m, t, expected)
    answer = now + m.p.g * L
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, answer)
    if ok and m.p.version_files:
        return fs_table.committed(m, j, now, t, answer)
    if ok:
        return end(m, j, now, Outcome.COMMITTED, Reason.NONE, answer)
    if attempts >= m.p.max_attempts:
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, answer)
    return next_read(m, j, PC.CONFLICT_READ, m.p.g * L)


@handler
def on_conflict_read(m, j, now):
    """The refresh after a failed CAS tells the conflict class; the class's policy may sleep, and a moved
    table is prepared again."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    return _after_conflict(m, j, now, v, m.p.g * L)


@handler
def on_reread(m, j, now):
    """`commit.reread_before_cas` (boring-catalog): the catalog read right after the prepare. If this table
    moved since the prepare, the attempt fails here, before its CAS (a table conflict: an attempt spent, as
    the real commit raises); else the CAS expects this read's version, as if nothing else had changed."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    if v == tx.prepared:
        return next_write(m, j, PC.CAS, m.p.g * L)
    attempts = tx.attempts + 1
    tx.attempts = attempts
    if attempts >= m.p.max_attempts:
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, now + m.p.g * L)
    return _after_conflict(m, j, now, v, m.p.g * L)


@model_function
def _after_conflict(m, j, now, v, pending):
    """A failed attempt's fresh read saw table version v: its class's sleep, then a refresh, or at once a
    re-CAS (a catalog conflict) or a re-prepare (the table moved)."""
    tx = m.tx[j]
    moved = v != tx.prepared
    delay = conflict_delay(m, j, moved)
    if m.p.metadata_read_on_failure:
        pending += take(m, Src.GET)
        tx.gets += 1
    if delay > 0.0:                                  # sleep, then refresh again before re-CASing
        tx.backoff_ms += delay
        return next_read(m, j, PC.BACKOFF_READ, pending + delay)
    return _prepare_then_cas(m, j, now, pending, v, moved)
