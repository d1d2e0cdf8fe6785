"""A commit lock (docs/MODEL.md, "Locks"; `lock`): requested, held through a design's critical section, released.

A lock is per table (`lock.scope: table`, lock k = the table) or one for every table (`global`, k = 0). Every touch of
it is an effect point at the lock service: a request (HMS `lock`, ZooKeeper's sequential node, a conditional PutItem),
a poll (HMS `checkLock`, the lock client's GetItem) and the release. How a waiter waits is the discipline:
- `fifo_notify` (ZooKeeper, Curator's InterProcessMutex): waiters queue in request order; a release hands the lock to
  the first, which hears of it one round trip later (its watch fires, it lists the lock's children). A queued waiter
  has no event of its own (`PARKED`): the release wakes it (`run.wake`), or its timer (`run.timer`) gives it up.
- `fifo_poll` (the Hive Metastore): waiters queue in request order, but one learns it holds the lock only at its own
  poll (`checkLock`, the first right after the request was answered WAITING), first in line with the lock free;
  between polls it sleeps `lock.poll`'s growing delay.
- `race_poll` (the DynamoDB lock client, Hudi's storage lock): no queue; a waiter GETs the lock every period, and one
  that finds it free tries to take it with a conditional write: the first write wins.
- `lease_sleep` (Iceberg's DynamoDbLockManager): a conditional write that finds the lock held sleeps a lease, then
  tries again.
A lock may live in storage (`lock.variant: storage`, Hudi's storage-based lock: one lock object per table, GET polls
and conditional PUTs at the provider's latencies): each write to its object takes a token of the provider's
mutation limit (bucket k: no other conditional write of a locked design uses the tables' buckets); a throttled
acquire fails (look again later), and a throttled release leaves the lock held by no one (GHOST) until its
validity, counted from the grant, has passed.
A request not granted `lock.timeout_ms` after it reached the service is given up (polled disciplines: at a failed
poll, and an HMS waiter unlocks its waiting lock; notify: at its timer); it is asked again after `lock.retry_wait_ms`
while the lock call has `lock.retries` left, else the lock call fails, and the commit attempt it was for with it.

A design starts a lock call with `request(.., after_lock, after_unlock)`: once it holds the lock it goes on at
`after_lock`, once it released it (or gave up) at `after_unlock`, both run at once (`AGAIN`), `tx.lock_answer_ms`
saying when the client hears of it.
"""
import math

from . import catalog, fifo, history, throttle
from .draws import take
from .jit import handler, model_function
from .retry import delay_ms
from .state import PC, Discipline, Kind, Outcome, Reason, Src
from .transaction import AGAIN, DONE, PARKED, end, start


GHOST = -2            # `lk.holder` of a storage lock whose release failed: held by no one until it expires
CLOCK_DRIFT_MS = 500.0   # Hudi's storage lock counts a lock expired only this long past its validity


@model_function
def key(m, j):
    """The lock transaction j's commits take: its table's, or the one lock of every table."""
    return m.tx[j].table if m.p.lock_per_table else 0


@model_function
def _free(m, k, now):
    """Lock k is free now: no holder, or (a storage lock whose release failed) past its expiry."""
    h = m.lk[k].holder
    return h == -1 or (h == GHOST and now > m.lk[k].expires_ms)


@model_function
def _written(m, j, now, k):
    """A storage lock's conditional PUT of its lock object at its effect point: it needs a token of the object's
    mutation limit (bucket k), and of its client's if the provider has one; without one it is answered 429, which
    Hudi's storage lock client does not resend."""
    if not (m.p.lock_in_storage and throttle.on(m)):
        return True
    ok = throttle.admit_from(m, k, j, now)
    if history.on(m):
        history.lock_write(m, now, j, m.tx[j].table, k, ok)
    if not ok:
        m.tx[j].throttled += 1
    return ok


@model_function
def request(m, j, before, after_lock, after_unlock):
    """Start a lock call `before` ms from now: the delay to its first effect point."""
    tx = m.tx[j]
    tx.after_lock = after_lock
    tx.after_unlock = after_unlock
    tx.lock_failed = 0
    tx.lock_retries_left = m.p.lock_retries
    return _ask(m, j, before)


@model_function
def _ask(m, j, before):
    """Send a request `before` ms from now; a racing poller first looks (a GET), then writes if it saw the lock
    free."""
    tx = m.tx[j]
    tx.lock_polls = 0
    tx.lock_requested_ms = math.nan
    tx.lock_requests += 1
    if m.p.lock_discipline == Discipline.RACE_POLL:
        return start(m, j, Src.LOCK_READ, PC.LOCK_POLL, before)
    return start(m, j, Src.LOCK_WRITE, PC.LOCK_REQUEST, before)


@model_function
def _reached(m, j, now):
    """The request's first touch of the lock service: its wait counts from here."""
    tx = m.tx[j]
    if math.isnan(tx.lock_requested_ms):
        tx.lock_requested_ms = now
        if history.on(m):
            history.lock(m, Kind.LOCK_REQUEST, now, j, tx.table, key(m, j), 0)


@model_function
def _grant(m, j, now, k):
    """j holds lock k from now (a storage lock that expired is released of its ghost first)."""
    tx = m.tx[j]
    if m.lk[k].holder == GHOST and history.on(m):
        history.lock_expired(m, now, m.lk[k].ghost_txn, m.lk[k].ghost_table, k)
    m.lk[k].holder = j
    tx.lock_grants += 1
    tx.lock_granted_ms = now
    tx.lock_wait_ms += now - tx.lock_requested_ms
    if history.on(m):
        history.lock(m, Kind.LOCK_GRANT, now, j, tx.table, k, 0)


@model_function
def _go_on(m, j, pc, answer_in):
    """The transaction goes on now at effect point `pc`; it hears of the lock's answer `answer_in` from now."""
    tx = m.tx[j]
    tx.lock_answer_ms = answer_in
    tx.pc = pc
    if pc == PC.DONE:
        return DONE
    return AGAIN


@handler
def on_request(m, j, now):
    """A request's effect point. FIFO: granted iff the lock is free and no one is queued, else queued (notify: park;
    HMS answers WAITING and the client polls). A conditional write (racing pollers, lease sleepers): granted iff
    the lock is free, else the client sleeps and looks again."""
    tx = m.tx[j]
    k = key(m, j)
    answer_in = m.p.g * tx.op_latency_ms
    _reached(m, j, now)
    d = m.p.lock_discipline
    in_order = d == Discipline.FIFO_NOTIFY or d == Discipline.FIFO_POLL
    if not in_order and not _written(m, j, now, k):     # a throttled write changes nothing: look again later
        return _not_yet(m, j, now, answer_in)
    if _free(m, k, now) and (not in_order or m.lk[k].head < 0):
        _grant(m, j, now, k)
        return _go_on(m, j, tx.after_lock, answer_in)
    if not in_order:
        return _not_yet(m, j, now, answer_in)
    fifo.push(m, m.lk[k], j, False)
    if d == Discipline.FIFO_NOTIFY:
        return _park(m, j, now)
    return start(m, j, Src.LOCK_READ, PC.LOCK_POLL, answer_in)   # HMS answered WAITING: checkLock at once


@handler
def on_poll(m, j, now):
    """A poll's effect point. HMS's checkLock: granted iff first in line and the lock free. A racing poller's GET:
    if the lock is free, it tries to take it (a conditional write); else it sleeps and looks again."""
    tx = m.tx[j]
    k = key(m, j)
    answer_in = m.p.g * tx.op_latency_ms
    _reached(m, j, now)
    if m.p.lock_discipline == Discipline.FIFO_POLL:
        return check(m, j, now, answer_in)
    if _free(m, k, now):
        return start(m, j, Src.LOCK_WRITE, PC.LOCK_REQUEST, answer_in)
    return _not_yet(m, j, now, answer_in)


@model_function
def enqueue(m, j, now):
    """HMS, Hive 3: a lock() request's enqueue (its effect point), its check to come under the checkLock mutex
    (`check`): it reaches the service and joins the lock's queue."""
    _reached(m, j, now)
    fifo.push(m, m.lk[key(m, j)], j, False)


@model_function
def check(m, j, now, answer_in):
    """HMS's checkLock (a poll's, or under Hive 3's mutex a lock()'s after its enqueue): granted iff first in line
    and the lock free; the client hears of it `answer_in` from now."""
    k = key(m, j)
    if m.lk[k].head == j and _free(m, k, now):
        fifo.remove(m, m.lk[k], j, False)
        _grant(m, j, now, k)
        return _go_on(m, j, m.tx[j].after_lock, answer_in)
    return _not_yet(m, j, now, answer_in)


@model_function
def _not_yet(m, j, now, answer_in):
    """A request that was not granted at this effect point: past its timeout it is given up; else the client
    sleeps its next poll delay (a lease, for lease sleepers) and polls (tries) again."""
    tx = m.tx[j]
    if now - tx.lock_requested_ms > m.p.lock_timeout_ms:
        if m.p.lock_discipline == Discipline.FIFO_POLL:   # HMS: unlock the waiting lock; its effect leaves the queue
            return start(m, j, Src.LOCK_WRITE, PC.LOCK_CANCEL, answer_in)
        _leave(m, j, now)
        return _gave_up(m, j, now, answer_in)
    n = tx.lock_polls + 1
    tx.lock_polls = n
    if m.p.lock_discipline == Discipline.LEASE_SLEEP:
        return start(m, j, Src.LOCK_WRITE, PC.LOCK_REQUEST, answer_in + m.p.lock_lease_ms)
    sleep = delay_ms(m, m.p.policy_lock, m.p.jitter_lock, m.bo_lock, n, Src.LOCK_JITTER)
    return start(m, j, Src.LOCK_READ, PC.LOCK_POLL, answer_in + sleep)


@handler
def on_cancel(m, j, now):
    """An HMS waiter that timed out unlocks its waiting lock: at this effect point it leaves the queue."""
    fifo.remove(m, m.lk[key(m, j)], j, False)
    _leave(m, j, now)
    return _gave_up(m, j, now, m.p.g * m.tx[j].op_latency_ms)


@model_function
def _leave(m, j, now):
    """The request leaves the lock service now, not granted (out of the queue already, under FIFO)."""
    tx = m.tx[j]
    tx.lock_timeouts += 1
    tx.lock_wait_ms += now - tx.lock_requested_ms
    if history.on(m):
        history.lock(m, Kind.LOCK_TIMEOUT, now, j, tx.table, key(m, j), 1 if tx.lock_retries_left == 0 else 0)


@model_function
def _gave_up(m, j, now, answer_in):
    """After its request left the lock service: while the lock call has re-requests left, it asks again after
    `lock.retry_wait_ms`; else the call fails, and so does the commit attempt it was for (counted here): the
    transaction goes on at `after_unlock` with `lock_failed` set."""
    tx = m.tx[j]
    if tx.lock_retries_left > 0:
        tx.lock_retries_left -= 1
        return _ask(m, j, answer_in + m.p.lock_retry_wait_ms)
    tx.lock_failed = 1
    tx.attempts += 1
    return _go_on(m, j, tx.after_unlock, answer_in)


# ------------------------------------------------------------------------------------------ FIFO with notification

@model_function
def _park(m, j, now):
    """A notified waiter waits with no event of its own; its timer (set by the engine, `run.timer`) fires at its
    deadline unless a release granted it the lock first."""
    tx = m.tx[j]
    tx.lock_deadline_ms = now + m.p.lock_timeout_ms
    tx.pc = PC.LOCK_WAIT
    fifo.ask_timer(m, j, m.p.lock_timeout_ms)
    return PARKED


@model_function
def on_timer(m, j, now):
    """A parked waiter's timer, called by the engine: True if the waiter gives its wait up now (it leaves the queue,
    and the engine runs it now); False if the timer is stale (the wait it was for ended before)."""
    tx = m.tx[j]
    k = key(m, j)
    if tx.pc != PC.LOCK_WAIT or tx.lock_deadline_ms != now or m.lk[k].holder == j:
        return False
    fifo.remove(m, m.lk[k], j, False)
    _leave(m, j, now)
    return True


@model_function
def no_timer(m, j, now):
    """The timer handler of a design that takes no lock: it never sets a timer, so none is ever live."""
    return False


@handler
def on_wait(m, j, now):
    """A parked waiter runs again: a release granted it the lock (it hears so after a round trip: its watch fires
    and it lists the lock's children), or its timer gave the wait up (it deletes its node: a round trip)."""
    tx = m.tx[j]
    if m.lk[key(m, j)].holder == j:
        return _go_on(m, j, tx.after_lock, take(m, Src.LOCK_READ))
    return _gave_up(m, j, now, take(m, Src.LOCK_WRITE))


# ------------------------------------------------------------------------------------------ the release

@model_function
def unlock(m, j, before, after_unlock):
    """Send the release `before` ms from now; after its effect point the transaction goes on at `after_unlock`."""
    m.tx[j].after_unlock = after_unlock
    return start(m, j, Src.LOCK_WRITE, PC.UNLOCK, before)


@model_function
def end_then_unlock(m, j, now, outcome, reason, before):
    """The transaction's outcome is decided now (its commit took effect): its call returns when the release it
    sends `before` ms from now is answered. It has ended, but keeps its slot until the release's effect point."""
    delay = unlock(m, j, before, PC.DONE)
    end(m, j, now, outcome, reason, now + before + m.tx[j].op_latency_ms)
    m.tx[j].pc = PC.UNLOCK
    return delay


@model_function
def commit(m, j, now, after_fail):
    """The commit point of a critical section (its request's effect point, `now`): the object's version is still
    the one its in-lock read saw, since the lock keeps every other committer out (the checker holds the history
    to that), so the commit takes effect and the transaction ends when its release is answered; a commit that
    failed (it cannot, under mutual exclusion) unlocks and goes on at `after_fail`."""
    tx = m.tx[j]
    t = tx.table
    answer_in = m.p.g * tx.op_latency_ms
    tx.attempts += 1
    expected = tx.seq
    ok = catalog.cas(m, j, t, expected, now)
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, now + answer_in)
    if ok:
        return end_then_unlock(m, j, now, Outcome.COMMITTED, Reason.NONE, answer_in)
    return unlock(m, j, answer_in, after_fail)


@handler
def on_unlock(m, j, now):
    """The release's effect point: the lock is free, or, under fifo_notify, the first waiter's (the engine runs it
    now: `run.wake`). A storage lock's release is a conditional PUT: throttled, it fails, and the lock stays held
    by no one until its validity (from the grant) expires; its holder goes on."""
    tx = m.tx[j]
    k = key(m, j)
    tx.lock_hold_ms += now - tx.lock_granted_ms
    if not _written(m, j, now, k):
        m.lk[k].holder = GHOST
        m.lk[k].expires_ms = tx.lock_granted_ms + m.p.lock_validity_ms + CLOCK_DRIFT_MS
        m.lk[k].ghost_txn = tx.txn
        m.lk[k].ghost_table = tx.table
        return _go_on(m, j, tx.after_unlock, m.p.g * tx.op_latency_ms)
    m.lk[k].holder = -1
    if history.on(m):
        history.lock(m, Kind.LOCK_RELEASE, now, j, tx.table, k, 0)
    if m.p.lock_discipline == Discipline.FIFO_NOTIFY and m.lk[k].head >= 0:
        w = m.lk[k].head
        fifo.remove(m, m.lk[k], w, False)
        _grant(m, w, now, k)
        fifo.wake(m, w)
    return _go_on(m, j, tx.after_unlock, m.p.g * tx.op_latency_ms)


# ------------------------------------------------------------------------------------------ its effect points

@model_function
def owns(pc):
    """Whether effect point `pc` is the lock's (a request, a poll, a parked wait, an HMS cancel, a release)."""
    return PC.LOCK_REQUEST <= pc <= PC.UNLOCK


@handler
def route(m, j, now, pc):
    """The lock's handler for its effect point `pc` (`owns`)."""
    if pc == PC.LOCK_REQUEST:
        return on_request(m, j, now)
    if pc == PC.LOCK_POLL:
        return on_poll(m, j, now)
    if pc == PC.UNLOCK:
        return on_unlock(m, j, now)
    if pc == PC.LOCK_WAIT:
        return on_wait(m, j, now)
    return on_cancel(m, j, now)   # PC.LOCK_CANCEL


OWNS = dict(effect_points=("LOCK_REQUEST", "LOCK_POLL", "LOCK_WAIT", "LOCK_CANCEL", "UNLOCK"),
            fields=("after_lock", "after_unlock", "lock_answer_ms", "lock_failed", "lock_polls",
                    "lock_retries_left", "lock_requested_ms", "lock_granted_ms", "lock_deadline_ms",
                    "lock_requests", "lock_grants", "lock_timeouts", "lock_wait_ms", "lock_hold_ms"),
            params=("lock", "lock_per_table", "lock_discipline", "lock_in_storage", "lock_validity_ms",
                    "lock_timeout_ms", "lock_retries", "lock_retry_wait_ms", "lock_lease_ms", "policy_lock",
                    "jitter_lock"),
            sources=("LOCK_READ", "LOCK_WRITE", "LOCK_JITTER"))
