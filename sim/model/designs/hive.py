"""Iceberg's commit through the Hive Metastore and its table lock (docs/MODEL.md, "Iceberg on the Hive Metastore";
named design `hive`).

The rewrite protocol on a service catalog (HMS: getTable, lock, checkLock, alter_table, unlock, each at the service's
latency), with the client writing the table's metadata.json, and the commit point guarded by HMS's lock
(`sim.model.lock`, variant `hms`):
- before the lock, as every Iceberg client does: the refresh (getTable) and the prepare (GETs of metadata.json and the
  manifest list; PUTs of the manifest list and the new metadata.json, `writeNewMetadataIfRequired`);
- the lock call: FIFO, polled at 50 ms x 1.5 up to 5 s, given up after 180 s;
- inside it: getTable, whose effect point compares the table's metadata location with the base the attempt was
  prepared on; equal: alter_table, the commit point; else CommitFailedException, and the client DELETEs its new
  metadata.json while it still holds the lock (`cleanupMetadataAndUnlock`); then the unlock;
- a failed attempt (the base moved, or the lock call timed out) is retried by the client's commit retry policy: sleep,
  refresh, prepare again (its metadata.json was deleted), lock again.
So a writer that waited behind any commit always fails its compare: one winner per round, as under a CAS, plus the
queue and the poll gaps.
Every lock() RPC (a request and each re-request) takes HMS's one NEXT_LOCK_ID row at its effect point, shared by
every table (`sim.model.capacity`, a pool of one, FIFO): a lock() that finds it held waits, parked, and its enqueue
runs when the row is handed to it; the holder releases it `hms_row_share` of the RPC's round trip later.
Hive 2 and 3 (`lock.hms_version: 3`) also run every checkLock under one metastore-wide mutex (a second pool of one):
a lock()'s, asked for once its enqueue released the row, and each poll's, asked for at its effect point; its check
(first in line and the lock free: granted, else WAITING) is made when the mutex is handed to it, and the mutex is
released `hms_mutex_share` of the RPC's round trip later; the client hears after its waits and the rest of its round
trip, and no sooner than the release.
"""
from .. import capacity, catalog, history, iceberg, lock
from ..capacity import CHECK_LOCK_MUTEX, NEXT_LOCK_ID
from ..draws import take
from ..jit import handler, model_function
from ..operations import attempts_allowed
from ..retry import conflict_delay
from ..state import PC, Outcome, Reason, Src
from ..transaction import AGAIN, PARKED, end, next_read, next_write, read_catalog


@model_function
def commit(m, j, before):
    """The prepared attempt asks for the table's lock `before` ms from now."""
    return lock.request(m, j, before, PC.HIVE_LOCKED, PC.HIVE_UNLOCKED)


@handler
def on_locked(m, j, now):
    """It holds the lock: getTable."""
    return next_read(m, j, PC.HIVE_CHECK, m.tx[j].lock_answer_ms)


@handler
def on_check(m, j, now):
    """getTable's effect point, inside the lock: the table still at the version the attempt was prepared on, then
    alter_table; else the attempt fails here (a `cas` row, as a CAS whose compare failed): DELETE the new
    metadata.json, then unlock."""
    tx = m.tx[j]
    t = tx.table
    answer_in = m.p.g * tx.op_latency_ms
    v = catalog.read_version(m, t)
    if v == tx.prepared:
        read_catalog(m, j, now, tx.op_latency_ms)
        return next_write(m, j, PC.HIVE_ALTER, answer_in)
    tx.catalog_reads += 1
    tx.attempts += 1
    if history.on(m):
        history.cas(m, now, j, t, v, v, tx.seq, False, now + answer_in)
    tx.deletes += 1
    return lock.unlock(m, j, answer_in + take(m, Src.DELETE), PC.HIVE_UNLOCKED)


@handler
def on_alter(m, j, now):
    """alter_table's effect point: the commit; the commit call returns when its unlock is answered."""
    return lock.commit(m, j, now, PC.HIVE_UNLOCKED)


@handler
def on_unlocked(m, j, now):
    """After a failed attempt's unlock, or a lock call that timed out (CommitFailedException: the client then asks
    HMS for its lock (showLocks, none found) and deletes its new metadata.json, with no lock held): out of
    attempts, the commit fails; else the client's retry policy sleeps, then refreshes, and the next attempt prepares
    again (a new manifest list and metadata.json)."""
    tx = m.tx[j]
    answer_in = tx.lock_answer_ms
    if tx.lock_failed != 0:                          # its unlock() finds no lock id: showLocks, then the DELETE
        tx.deletes += 1
        answer_in += take(m, Src.LOCK_READ) + take(m, Src.DELETE)
    if tx.attempts >= attempts_allowed(m, j):
        reason = Reason.LOCK_TIMEOUT if tx.lock_failed != 0 else Reason.EXHAUSTED
        return end(m, j, now, Outcome.ABORTED, reason, now + answer_in)
    delay = conflict_delay(m, j, catalog.read_version(m, tx.table) != tx.prepared)
    tx.backoff_ms += delay
    tx.prepared = -1                                 # its metadata.json is gone: the next attempt writes it again
    return next_read(m, j, PC.BACKOFF_READ, answer_in + delay)


@model_function
def _row_hold_ms(m, j, now):
    """A lock() RPC's effect point: HMS's enqueueLock takes the metastore's one NEXT_LOCK_ID row (`SELECT ... FOR
    UPDATE`) and holds it to its transaction's COMMIT, `hms_row_share` of the RPC's round trip (0: not modelled;
    -1: the row is held by another lock(), and this one waits for it, parked)."""
    tx = m.tx[j]
    if m.p.hms_row_share <= 0.0:
        return 0.0
    if not capacity.take_unit(m, j, now, NEXT_LOCK_ID):
        tx.pc = PC.HMS_ROW_WAIT
        return -1.0
    return m.p.hms_row_share * tx.op_latency_ms


@model_function
def _handed(m, j, now, pc, share):
    """A request that waited for HMS's NEXT_LOCK_ID row (its enqueue, `pc` LOCK_REQUEST) or Hive 3's checkLock
    mutex (its check, HMS_CHECK_LOCK) holds it now (a release handed it on): that step runs now, and it holds the
    unit `share` of the RPC's round trip."""
    tx = m.tx[j]
    tx.pool_wait_ms += now - tx.pool_queued_ms
    tx.pc = pc
    return share * tx.op_latency_ms


@model_function
def _mutex_hold_ms(m, j, now, answer_in):
    """Hive 3: a checkLock asks for the metastore's checkLock mutex (`SELECT ... FOR UPDATE` of its AUX_TABLE row),
    its check to run once it holds it, the client to hear `answer_in` later: the hold, `hms_mutex_share` of the
    RPC's round trip (-1: the mutex is another checkLock's, and this one waits for it, parked)."""
    tx = m.tx[j]
    if not capacity.take_unit(m, j, now, CHECK_LOCK_MUTEX):
        tx.pool_resume_ms = answer_in                 # kept while it waits: the rest of its round trip
        tx.pc = PC.HMS_MUTEX_WAIT
        return -1.0
    tx.pc = PC.HMS_CHECK_LOCK
    return m.p.hms_mutex_share * tx.op_latency_ms


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`); a lock() RPC first takes
    HMS's NEXT_LOCK_ID row (waits for it), and releases it its hold later, an event of its own. Hive 3 (a checkLock
    mutex): a lock() enqueues there, then, once it released the row, runs its checkLock under the mutex (waits for
    it); a poll runs its checkLock under it too; the check (grant or WAITING) is made when the mutex is its, and
    the mutex released its hold later."""
    tx = m.tx[j]
    pc = tx.pc
    hive3 = m.p.hms_mutex_share > 0.0
    hold = 0.0
    answer_in = m.p.g * tx.op_latency_ms
    if pc == PC.POOL_RELEASE:
        delay = capacity.on_release(m, j, now)
        if not (hive3 and tx.pc == PC.HMS_CHECK_LOCK):
            return delay
        answer_in = delay                             # a Hive 3 lock() released the row: its checkLock
        hold = _mutex_hold_ms(m, j, now, answer_in)
    elif pc == PC.HMS_MUTEX_WAIT:
        answer_in = tx.pool_resume_ms
        hold = _handed(m, j, now, PC.HMS_CHECK_LOCK, m.p.hms_mutex_share)
    elif pc == PC.HMS_ROW_WAIT:
        hold = _handed(m, j, now, PC.LOCK_REQUEST, m.p.hms_row_share)
    elif pc == PC.LOCK_REQUEST:
        hold = _row_hold_ms(m, j, now)
    elif pc == PC.LOCK_POLL and hive3:
        hold = _mutex_hold_ms(m, j, now, answer_in)
    if hold < 0.0:
        return PARKED
    while True:
        pc = tx.pc
        if pc == PC.LOCK_REQUEST and hive3:           # the enqueue; its checkLock after the row's release
            lock.enqueue(m, j, now)
            tx.pc = PC.HMS_CHECK_LOCK
            if hold > 0.0:
                return capacity.after_effect(m, j, hold, answer_in)
            hold = _mutex_hold_ms(m, j, now, answer_in)   # no row modelled: the mutex at once
            if hold < 0.0:
                return PARKED
            continue
        if pc == PC.HMS_CHECK_LOCK:
            delay = lock.check(m, j, now, answer_in)
        elif pc == PC.HIVE_CHECK:
            delay = on_check(m, j, now)
        elif pc == PC.HIVE_LOCKED:
            delay = on_locked(m, j, now)
        elif pc == PC.HIVE_ALTER:
            delay = on_alter(m, j, now)
        elif pc == PC.HIVE_UNLOCKED:
            delay = on_unlocked(m, j, now)
        elif lock.owns(pc):
            delay = lock.route(m, j, now, pc)
        elif pc == PC.COMMIT:
            delay = commit(m, j, m.tx[j].commit_in_ms)
        else:
            delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            if hold > 0.0:
                return capacity.after_effect(m, j, hold, delay)
            return delay


timer = lock.on_timer   # a parked lock waiter's timer: whether it gives its wait up now


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-29): the engine's `compiling the model ...` line quotes it
COMPILE_S = 11

OWNS = dict(effect_points=("HIVE_LOCKED", "HIVE_CHECK", "HIVE_ALTER", "HIVE_UNLOCKED", "HMS_ROW_WAIT",
                           "HMS_MUTEX_WAIT", "HMS_CHECK_LOCK"),
            fields=("deletes",), params=("hms_row_share", "hms_mutex_share"), sources=("DELETE",))
