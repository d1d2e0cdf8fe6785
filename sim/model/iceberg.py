"""Iceberg's client commit loop (docs/MODEL.md, "One transaction"; `commit.protocol: rewrite`), shared by the
designs that run it (`cas`, `fs_table`, `rest`, `hive`): every attempt after a table conflict rewrites the
manifest list and the table metadata before it commits.

The client reads its base, runs, refreshes, prepares, and then hands the prepared attempt to its design's commit
(a CAS on the catalog, a version file's create, a REST server's POST, a lock's critical section): it leaves the
attempt at `PC.COMMIT` with `tx.commit_in_ms` saying when the commit request goes out, and answers `AGAIN`, so
the design's `step` starts its commit in the same event. A lost attempt comes back here (`after_conflict`).
"""
from . import catalog, faults, growth, history, jobs, operations, pyiceberg
from .draws import take
from .io import gets_ms
from .jit import handler, model_function
from .retry import conflict_delay
from .state import PC, Fault, Op, Outcome, Reason, Src
from .transaction import AGAIN, admitted, end, first_read, next_read, next_write, read_catalog, real_conflict, resend


@model_function
def begin(m, j):
    """INIT: the base read (step 2)."""
    return first_read(m, j, PC.BASE)


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
def prepare(m, j, now, v):
    """Prepare on table version v: read the table metadata and the current manifest list; a VO validates the
    snapshots it has not validated and may find a real conflict; then write the manifest list and the table
    metadata (none of this for `commit.shape: object`). Returns the I/O time and whether the validation aborts the
    transaction."""
    if m.p.pyiceberg:                                # PyIceberg's snapshot producer (`sim.model.pyiceberg`)
        return pyiceberg.prepare_ms(m, j, now, v), False
    tx = m.tx[j]
    inlined = m.p.metadata_inlined
    tx.prepared = v
    if m.p.object_shape:                             # the microbenchmark writes no table
        if history.on(m):
            history.prepare(m, now, j, tx.table, v, -1, -1)
        if m.p.head_version:                         # the body's GET, after the HEAD that gave the version
            tx.gets += 1
            return take(m, Src.READ), False
        return 0.0, False
    cost = pyiceberg.work_ms(m, j, v)                # the client's own time (`commit.client_work`; 0 by default)
    t = tx.table
    lists = not m.p.file_lists_inlined               # (DuckLake's file lists are the database's rows)
    if not inlined:
        cost += growth.get_metadata_ms(m, t)         # table metadata
        tx.gets += 1
    if lists:
        cost += growth.get_list_ms(m, t)             # current manifest list
        tx.gets += 1
        tx.manifest_lists_read += 1
    vfrom = -1
    vto = -1
    aborted = False
    if tx.op == Op.VO:
        vfrom = tx.validated
        vto = v
        cost += _validate(m, j, v)
        tx.validated = v
        aborted = real_conflict(m, v - vfrom)
    elif operations.validates(m, j):
        vfrom = tx.validated
        vto = v
        aborted, n = operations.validate(m, j, vfrom, v)
        if m.p.expiring and not aborted and operations.walks_history(m, j):
            aborted = growth.history_gap(m, j)
        if n > 0 and lists:                          # each snapshot's manifest list and added manifest
            tx.manifest_lists_read += n
            cost += gets_ms(m, j, 2 * n)
        tx.validated = v
    if not aborted and lists:
        cost += growth.put_list_ms(m, j)
        tx.puts += 1
    if not aborted and not inlined:
        cost += growth.put_metadata_ms(m, j, now)
        tx.puts += 1
    if history.on(m):
        history.prepare(m, now, j, tx.table, v, vfrom, vto)
    return cost, aborted


@model_function
def _prepare_then_commit(m, j, now, pending, v, do_prepare):
    """After a read whose answer comes `pending` ms from now: prepare if asked, then commit (with
    `commit.reread_before_cas`, a prepare is followed by a re-read of the catalog first)."""
    if do_prepare:
        if m.p.faults and m.tx[j].landings > 0 and m.tx[j].op != Op.FA:   # a resend found its own commit there:
            return faults.unknown(m, j, now, Reason.SELF_CONFLICT, now + pending)   # it conflicts with it
        cost, aborted = prepare(m, j, now, v)
        if aborted:
            return end(m, j, now, Outcome.ABORTED, Reason.VALIDATION, now + pending + cost)
        pending += cost
        if m.p.reread_before_cas:
            return next_read(m, j, PC.REREAD, pending)
    return commit(m, j, pending)


@model_function
def commit(m, j, before):
    """Hand the prepared attempt to the design's commit, whose request goes out `before` ms from now."""
    tx = m.tx[j]
    tx.commit_in_ms = before
    tx.pc = PC.COMMIT
    return AGAIN


@handler
def on_base_read(m, j, now):
    """Step 2's effect point, then step 3 (the runtime) and the first attempt's refresh (or a stale commit)."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    jobs.started(m, j, v)
    runtime = tx.runtime_ms
    answer_in = catalog.read_answer_ms(m, j, L)
    tx.runtime_end_ms = now + answer_in + runtime
    pending = answer_in + runtime
    if m.p.refresh_first:
        return next_read(m, j, PC.REFRESH, pending)
    return _prepare_then_commit(m, j, now, pending, v, True)


@handler
def on_refresh(m, j, now):
    """Step 4's refresh: before the first attempt, or after a backoff sleep (a table that moved meanwhile
    forces a re-prepare)."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    first = tx.pc == PC.REFRESH
    v = read_catalog(m, j, now, L)
    pending = catalog.read_answer_ms(m, j, L)
    # (PyIceberg prepares again after every failed attempt: `_rebuild_snapshot_updates`)
    return _prepare_then_commit(m, j, now, pending, v, first or v != tx.prepared or m.p.pyiceberg)


@model_function
def swap(m, j, now, attempt):
    """A conditional write of the catalog at its effect point (`attempt` 1: an attempt; 0: its storage client's
    resend of one, `sim.model.faults`): whether it swapped, and when its answer reaches the client."""
    tx = m.tx[j]
    t = tx.table
    L = tx.op_latency_ms
    tx.attempts += attempt
    expected = tx.seq
    ok = catalog.cas(m, j, t, expected, now)
    answer = now + m.p.cg * L
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, answer)
        if ok and m.p.tables_max > 1:
            catalog.record_landed_too(m, j, now, answer)
    return ok, answer


@handler
def on_catalog_cas(m, j, now):
    """The conditional write of the catalog object (or the table's pointer) against the version of the last
    refresh: committed, or the next attempt's read, or retries_exhausted. A throttled object answers 429 first: the
    request comes back later (designs `cas` and `cas_queue`)."""
    if not admitted(m, j, now, catalog.object_of(m, m.tx[j].table)):
        return resend(m, j, now)
    resent = faults.resent(m, j)
    fault = faults.draw(m, j)
    if fault == Fault.ERROR:
        return faults.failed(m, j, now, now + m.p.cg * m.tx[j].op_latency_ms, PC.CAS)
    ok, answer = swap(m, j, now, 0 if resent else 1)   # (a storage client's resend is no attempt of the client's)
    if fault == Fault.LOST:
        return faults.lost(m, j, now, answer, PC.CAS)
    if ok:
        return end(m, j, now, faults.committed(m, j), Reason.NONE, pyiceberg.call_end_ms(m, j, True, answer))
    return lost(m, j, now, answer)


@model_function
def lost(m, j, now, answer):
    """A conditional write that did not swap, answered at `answer`: retries_exhausted, or the next attempt's
    read, which tells the conflict's class."""
    tx = m.tx[j]
    if tx.attempts >= operations.attempts_allowed(m, j):
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, pyiceberg.call_end_ms(m, j, False, answer))
    if m.p.pyiceberg:                                # no read: its retry sleep, then a refresh
        return pyiceberg.retry(m, j, answer - now)
    return next_read(m, j, PC.CONFLICT_READ, m.p.cg * tx.op_latency_ms)


@handler
def on_conflict_read(m, j, now):
    """The refresh after a failed CAS tells the conflict class; the class's policy may sleep, and a moved
    table is prepared again."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    return _after_conflict(m, j, now, v, catalog.read_answer_ms(m, j, L))


@handler
def on_reread(m, j, now):
    """`commit.reread_before_cas` (boring-catalog): the catalog read right after the prepare. If this table
    moved since the prepare, the attempt fails here, before its CAS (a table conflict: an attempt spent, as
    the real commit raises); else the CAS expects this read's version, as if nothing else had changed."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    if m.p.pyiceberg:
        return _commit_table(m, j, now, v)
    if v == tx.prepared:
        return next_write(m, j, PC.CAS, m.p.g * L)
    attempts = tx.attempts + 1
    tx.attempts = attempts
    if attempts >= operations.attempts_allowed(m, j):
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, now + m.p.g * L)
    return _after_conflict(m, j, now, v, m.p.g * L)


@model_function
def _commit_table(m, j, now, v):
    """PyIceberg's SqlCatalog.commit_table after its load saw table version v (its SELECT's effect point): the
    metadata.json read and the client's checks; a moved table fails the requirement there (the attempt spent,
    nothing written); else the new metadata.json is created and the row swapped against this load's location."""
    tx = m.tx[j]
    pending = catalog.read_answer_ms(m, j, tx.op_latency_ms) + pyiceberg.in_commit_ms(m, j)
    if v == tx.prepared:                             # (the design's swap: the service pointer's CAS)
        return commit(m, j, pending + pyiceberg.write_metadata_ms(m, j, now))
    tx.attempts += 1
    if tx.attempts >= operations.attempts_allowed(m, j):
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, pyiceberg.call_end_ms(m, j, False, now + pending))
    return pyiceberg.retry(m, j, pending)


@model_function
def _after_conflict(m, j, now, v, pending):
    """A failed attempt's fresh read saw table version v: its class's sleep, then a refresh, or at once a
    re-commit (a catalog conflict) or a re-prepare (the table moved)."""
    tx = m.tx[j]
    moved = v != tx.prepared
    delay = conflict_delay(m, j, moved)
    if m.p.metadata_read_on_failure:
        pending += growth.get_metadata_ms(m, tx.table)
        tx.gets += 1
    if delay > 0.0:                                  # sleep, then refresh again before re-committing
        tx.backoff_ms += delay
        return next_read(m, j, PC.BACKOFF_READ, pending + delay)
    return _prepare_then_commit(m, j, now, pending, v, moved)


@handler
def route(m, j, now, pc):
    """The client's own effect points (`OWNS`), and INIT; `AGAIN` for any other (its design routes those)."""
    if pc == PC.INIT:
        return begin(m, j)
    if pc == PC.REFRESH or pc == PC.BACKOFF_READ:
        return on_refresh(m, j, now)
    if pc == PC.CONFLICT_READ:
        return on_conflict_read(m, j, now)
    if pc == PC.BASE:
        return on_base_read(m, j, now)
    if pc == PC.REREAD:
        return on_reread(m, j, now)
    if pc == PC.STATUS_CHECK:
        return faults.on_status_check(m, j, now)
    return AGAIN


# what the client owns: the effect points `route` handles, and the one it hands its designs (`PC.COMMIT`)
OWNS = dict(effect_points=("BASE", "REFRESH", "BACKOFF_READ", "CONFLICT_READ", "REREAD", "COMMIT"),
            fields=("commit_in_ms",))
