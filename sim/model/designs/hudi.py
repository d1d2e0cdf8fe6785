"""Apache Hudi's optimistic concurrency control under its table lock (docs/MODEL.md, "Hudi"; named design `hudi`).

A table's timeline is a log of completed instants (`v[t]`: how many); a write takes the table's lock twice
(`sim.model.lock`, by default ZooKeeper's):
- to start (`startCommit`): under the lock, its instant time is generated (TrueTime: a sleep of the expected clock
  skew, `commit.clock_skew_wait_ms`), its heartbeat file and `.requested` instant are PUT; the timeline then is its
  base (every instant completed later is a candidate for conflicts);
- then it writes its data (its runtime), GETs its heartbeat, and asks for the lock to commit: under the lock, it
  LISTs the timeline, GETs each instant completed since its base and checks it (a conflict iff their file groups
  overlap: a FastAppend, an insert into new file groups, never; a ValidatedOverwrite with
  `vo_conflict_probability` per instant); a conflict fails the write (HoodieWriteConflictException; Hudi retries
  no conflict by default), after the unlock. Else it finalizes the write (a LIST of its markers, est.), writes the
  metadata table (a LIST and METADATA_TABLE_PUTS small PUTs, est.), generates its completion time (TrueTime again),
  checks the completed instant does not exist (a HEAD) and PUTs it: the commit point; then it unlocks.
A lock call that gives up (51 tries of 60 s by default) fails the write (HoodieLockException).
"""
from .. import catalog, history, lock, operations
from ..draws import take, take_sum
from ..io import gets_ms, list_ms
from ..jit import handler, model_function
from ..state import PC, Op, Outcome, Reason, Src
from ..transaction import AGAIN, end, next_read, read_catalog, real_conflict, start

METADATA_TABLE_PUTS = 4   # a metadata-table deltacommit: requested, log block, inflight, completed (est.)
# an upsert's `rejected`: its file groups are pending clustering (it fails as it writes), or a merge-on-read
# compaction was scheduled on them after its instant (its commit's conflict check fails it)
REJECT_AT_WRITE = 1
FAIL_AT_CHECK = 2


@model_function
def _small_puts_ms(m, j, n):
    """n small files PUT one after another (timeline instants, a heartbeat, metadata-table files)."""
    m.tx[j].puts += n
    return take_sum(m, Src.PUT_TIMELINE, n)


@model_function
def begin(m, j):
    """INIT: the write client loads the timeline (a LIST), then asks for the lock to start its instant."""
    tx = m.tx[j]
    tx.lists += 1
    return lock.request(m, j, take(m, Src.READ), PC.HUDI_START_LOCKED, PC.HUDI_STARTED)


@handler
def on_start_locked(m, j, now):
    """It holds the lock to start: the timeline now is its base (nothing completes while it holds the lock); its
    instant time (TrueTime's sleep), heartbeat file and `.requested` instant, then the unlock."""
    tx = m.tx[j]
    t = tx.table
    v = catalog.read_version(m, t)
    tx.validated = v
    tx.prepared = v
    tx.seq = v
    tx.version = v
    before = tx.lock_answer_ms
    if history.on(m):
        history.read(m, now, j, t, v, v, now + before)
    tx.instant = 1
    if m.p.ops:
        _table_services(m, j, t)
    before += m.p.clock_skew_wait_ms + _small_puts_ms(m, j, 2)
    return lock.unlock(m, j, before, PC.HUDI_STARTED)


@model_function
def _table_services(m, j, t):
    """Under the start lock. A clustering's or a merge-on-read compaction's requested instant: every upsert of its
    partitions whose instant is earlier and that has not committed will fail its conflict check, the service pending
    or completed by then (`getCandidateInstants` takes the pending clusterings and compactions after its instant,
    `resolveConflict` lets only an earlier compaction pass); a clustering's file groups are also pending until it
    completes or fails, and an upsert that finds its own pending is rejected when it writes (SparkRejectUpdateStrategy,
    Hudi's default: "Not allowed to update the clustering file group"; `on_started` fails it at once), while one
    after a compaction's instant writes its log files into the new file slice."""
    tx = m.tx[j]
    tb = m.tables[t]
    if tx.op == Op.COMPACTION:
        if not m.p.hudi_mor:
            tb.clustering_parts |= tx.parts
        for i in range(len(m.tx)):
            other = m.tx[i]
            if (i != j and other.txn >= 0 and other.instant != 0 and other.table == t and other.op == Op.OVERWRITE
                    and (other.parts & tx.parts) != 0):
                other.rejected = FAIL_AT_CHECK
    elif tx.op == Op.OVERWRITE and (tb.clustering_parts & tx.parts) != 0:
        tx.rejected = REJECT_AT_WRITE


@handler
def on_started(m, j, now):
    """Its instant started (or its lock call failed: the write fails): it writes its data, GETs its heartbeat and
    asks for the lock to commit."""
    tx = m.tx[j]
    answer_in = tx.lock_answer_ms
    if tx.rejected == REJECT_AT_WRITE:               # its updates go to file groups a clustering holds
        return end(m, j, now, Outcome.ABORTED, Reason.VALIDATION, now + answer_in)
    if tx.lock_failed != 0:
        return end(m, j, now, Outcome.ABORTED, Reason.LOCK_TIMEOUT, now + answer_in)
    tx.runtime_end_ms = now + answer_in + tx.runtime_ms
    tx.gets += 1
    before = answer_in + tx.runtime_ms + take(m, Src.GET)
    return lock.request(m, j, before, PC.HUDI_LOCKED, PC.HUDI_FAILED)


@handler
def on_locked(m, j, now):
    """It holds the lock to commit: the timeline's LIST."""
    return next_read(m, j, PC.HUDI_CHECK, m.tx[j].lock_answer_ms)


@handler
def on_check(m, j, now):
    """The timeline's LIST inside the lock: the instants completed since its base are GET and checked; a conflict
    fails the write after the unlock; else the metadata table, TrueTime and the completed instant's PUT."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    pending = m.p.g * L
    checked = tx.validated
    n = v - checked
    if n > 0 and not (m.p.hudi_mor and tx.op == Op.COMPACTION):   # (a compaction's commit resolves no conflict)
        pending += gets_ms(m, j, n)
    tx.validated = v
    tx.prepared = v
    conflict = tx.op == Op.VO and real_conflict(m, n)
    if operations.validates(m, j):                   # the instants it read now, by Hudi's rule
        conflict, _ = operations.validate(m, j, checked, v)
        conflict = conflict or tx.rejected == FAIL_AT_CHECK
    if history.on(m):
        history.prepare(m, now, j, tx.table, v, checked, v)
    if conflict:
        return lock.unlock(m, j, pending, PC.HUDI_FAILED)
    pending += list_ms(m, j, 2) + _small_puts_ms(m, j, METADATA_TABLE_PUTS) + m.p.clock_skew_wait_ms
    pending += take(m, Src.GET)                      # the completed instant does not exist yet (a HEAD)
    tx.gets += 1
    tx.puts += 1
    return start(m, j, Src.PUT_TM, PC.HUDI_COMMIT, pending)


@handler
def on_commit(m, j, now):
    """The completed instant's PUT takes effect: the commit (a clustering's file groups are no longer pending); the
    write returns when its unlock is answered."""
    _released(m, j)
    m.tx[j].instant = 0
    if m.p.inline_every > 0:
        _count_for_inline(m, j)
    return lock.commit(m, j, now, PC.HUDI_FAILED)


@model_function
def _count_for_inline(m, j):
    """A table service run inline (`hoodie.compact.inline`, `hoodie.clustering.inline`): the writer whose commit is
    the table's n-th since its last service runs one as its commit returns (`postCommit`'s
    `runTableServicesInline`), before its next write; the count starts again at once (est.: Hudi counts the delta
    commits after the last compaction instant, which this writer's schedule makes a moment later)."""
    tx = m.tx[j]
    tb = m.tables[tx.table]
    if tx.op == Op.COMPACTION or tx.writer < 0:
        return
    tb.delta_commits += 1
    if tb.delta_commits >= m.p.inline_every:
        tb.delta_commits = 0
        m.wr[tx.writer].inline_table = tx.table


@model_function
def _released(m, j):
    """A clustering completed or failed: its file groups are no longer pending (a failed one's instant rolled back
    at once: the writers' eager rollback of failed writes, est.)."""
    tx = m.tx[j]
    if m.p.ops and tx.op == Op.COMPACTION and not m.p.hudi_mor:
        m.tables[tx.table].clustering_parts &= ~tx.parts


@handler
def on_failed(m, j, now):
    """The write fails, after its unlock (a conflict) or its lock call's last timeout."""
    tx = m.tx[j]
    _released(m, j)
    reason = Reason.VALIDATION
    if tx.lock_failed != 0:
        reason = Reason.LOCK_TIMEOUT
    elif tx.attempts > 0:                            # its completed instant failed: not while it held the lock
        reason = Reason.EXHAUSTED
    return end(m, j, now, Outcome.ABORTED, reason, now + tx.lock_answer_ms)


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`)."""
    while True:
        pc = m.tx[j].pc
        if lock.owns(pc):
            delay = lock.route(m, j, now, pc)
        elif pc == PC.HUDI_CHECK:
            delay = on_check(m, j, now)
        elif pc == PC.HUDI_START_LOCKED:
            delay = on_start_locked(m, j, now)
        elif pc == PC.HUDI_STARTED:
            delay = on_started(m, j, now)
        elif pc == PC.HUDI_LOCKED:
            delay = on_locked(m, j, now)
        elif pc == PC.HUDI_COMMIT:
            delay = on_commit(m, j, now)
        elif pc == PC.HUDI_FAILED:
            delay = on_failed(m, j, now)
        else:
            return begin(m, j)   # PC.INIT
        if delay != AGAIN:
            return delay


timer = lock.on_timer   # a parked lock waiter's timer: whether it gives its wait up now


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-29): the engine's `compiling the model ...` line quotes it
COMPILE_S = 8

OWNS = dict(effect_points=("HUDI_START_LOCKED", "HUDI_STARTED", "HUDI_LOCKED", "HUDI_CHECK", "HUDI_COMMIT",
                           "HUDI_FAILED"),
            fields=("rejected", "instant"),
            params=("hudi", "clock_skew_wait_ms", "hudi_mor", "inline_every", "inline_median_ms", "inline_sigma"),
            sources=("PUT_TIMELINE",))
