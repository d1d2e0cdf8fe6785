"""A catalog server's finite capacity (docs/MODEL.md, "Server capacity"; `catalog.server`): its database's
connection pools and its row locks, each a count of units with a FIFO queue (`Model.pl`: row SERVER_POOL the
server's pool, Lakekeeper's write pool and the one pool of the others; READ_POOL Lakekeeper's read pool, which its
loadTable takes; from ROW_LOCKS on one row lock per table, a pool of one). Design hive (no server pool) uses row
NEXT_LOCK_ID for HMS's one NEXT_LOCK_ID row: every lock() takes it as a connection is taken (`take_unit`), holds it
for a time of its own, and releases it as a connection is (`after_effect`, `on_release`); Hive 3's checkLock mutex
(row CHECK_LOCK_MUTEX) the same way, by every checkLock.

A request on a pool (`transaction.pooled`) first asks for a connection when it would start (`POOL_ACQUIRE`): it
gets one if one is free, else it queues and waits (`PARKED`, `POOL_WAIT`) until a release hands it one: the engine
runs it then (`run.wake`). It holds the connection through its round trip: its effect point (f L), then its answer
(L). There the connection is released (`POOL_RELEASE`, an event of its own, so a waiter gets it at that instant),
and the transaction goes on where its handler had sent it; unless the transaction keeps the connection for its next
request (`pool_keep`: one database transaction over several requests, Lakekeeper 0.9's). A pool with an acquire
timeout (`Params.pool_timeout_ms`) gives a waiter up that long after it queued: its timer (`run.timer`) takes it
out of the queue and the engine runs it at `POOL_TIMEOUT`, its design's to handle (the request failed).

A store that serves conditional writes to one object one at a time (`cas_one_at_a_time`, design cas_queue) uses the rows
from OBJECT_QUEUES on as one queue of one per object: a write asks its object's at its start, as a request asks a
pool, and holds it to its answer.

A row lock is asked for at a statement's effect point: granted if free, else the statement waits for it with its
connection held (the design parks it) until the holder releases it, at its COMMIT (or its rollback): the lock goes
to the first waiter, which the engine runs then. Its requests, grants, waits and holds are counted and recorded as a
commit lock's (`sim.model.lock`'s fields and history rows), under the table's key, so the checker holds them to
invariant 7.
"""
from . import fifo, history
from .jit import handler, model_function
from .state import PC, Kind, Src
from .transaction import DONE, PARKED, next_write, start

SERVER_POOL = 0   # rows of `Model.pl`: the server's pool ...
READ_POOL = 1     # ... the pool its client's loads take, if it has one of their own (`Params.client_pool`)
ROW_LOCKS = 2     # ... then table t's row lock at ROW_LOCKS + t
OBJECT_QUEUES = ROW_LOCKS   # a store's per-object queue of conditional writes (no server): object o's at this + o
NEXT_LOCK_ID = 0  # HMS (design hive, no server pool): the metastore's one NEXT_LOCK_ID row, a pool of one
CHECK_LOCK_MUTEX = 1   # ... and Hive 3's checkLock mutex (its AUX_TABLE row), a pool of one


@model_function
def _enqueue(m, k, j, now):
    m.tx[j].pool_queued_ms = now
    fifo.push(m, m.pl[k], j, True)


@model_function
def _hand_on(m, k):
    """A unit of k comes back: to the first waiter (its slot, which the engine runs now: `run.wake`), else free
    (-1)."""
    w = m.pl[k].head
    if w < 0:
        m.pl[k].free += 1
        return -1
    fifo.remove(m, m.pl[k], w, True)
    fifo.wake(m, w)
    return w


@model_function
def take_unit(m, j, now, k):
    """Transaction j asks pool k for a unit (a connection; HMS's NEXT_LOCK_ID row): True if it holds one now (in
    `tx.pool`); else it is queued in order of asking, and waits until a release hands it one (`on_release` sets
    `tx.pool`, the engine runs it then)."""
    if m.pl[k].free > 0:
        m.pl[k].free -= 1
        m.tx[j].pool = k
        return True
    _enqueue(m, k, j, now)
    return False


# ------------------------------------------------------------------------------------------ connections

@handler
def on_acquire(m, j, now):
    """A request asks its pool for a connection: it starts now if one is free, else it queues (in order of asking;
    a free connection means no one queues). A queued request runs again when a release handed it its connection:
    it starts then."""
    tx = m.tx[j]
    if tx.pc == PC.POOL_WAIT:
        tx.pool_wait_ms += now - tx.pool_queued_ms
        return _begin(m, j)
    if take_unit(m, j, now, tx.pool_ask):
        return _begin(m, j)
    tx.pc = PC.POOL_WAIT
    if m.p.pool_timeout_ms > 0.0:
        fifo.ask_timer(m, j, m.p.pool_timeout_ms)
    return PARKED


@model_function
def _begin(m, j):
    """The request starts now that it holds its unit: a conditional write takes effect where its store checks it
    (`transaction.next_write`: a server's at the catalog's fraction, as any of its requests), any other request at
    the catalog's fraction."""
    tx = m.tx[j]
    if tx.pool_src == Src.CAS:
        return next_write(m, j, tx.pool_pc, 0.0)
    return start(m, j, tx.pool_src, tx.pool_pc, 0.0)


@model_function
def on_timer(m, j, now):
    """A waiter's acquire timeout, called by the engine: True if it gives its wait up now (out of the queue, at
    `POOL_TIMEOUT`, the engine runs it now); False if the timer is stale (a release handed it a connection first, or
    it is a later wait's)."""
    tx = m.tx[j]
    if tx.pc != PC.POOL_WAIT or tx.pool >= 0 or tx.pool_queued_ms + m.p.pool_timeout_ms != now:
        return False
    fifo.remove(m, m.pl[tx.pool_ask], j, True)
    tx.pool_wait_ms += now - tx.pool_queued_ms
    tx.pc = PC.POOL_TIMEOUT
    return True


@model_function
def answer_in(m, j):
    """At a request's effect point: the time to its answer, where the connection it holds is released (-1: it
    holds none). Read before the handler runs, which may start the next request."""
    tx = m.tx[j]
    if tx.pool < 0:
        return -1.0
    return (m.p.cg if tx.pool_src == Src.CAS else m.p.g) * tx.op_latency_ms


@model_function
def after_effect(m, j, release_in, delay):
    """A request's effect point was handled (`delay`: the handler's answer, to the next effect point, or DONE or
    PARKED): unless the transaction keeps its connection, the connection is released at the request's answer,
    `release_in` from now (`answer_in`), and the transaction goes on from there, `delay` from now, or at the release
    if that comes later: a connection's next request starts after this one's answer, so never before the release;
    HMS's NEXT_LOCK_ID row (`release_in` its hold) may outlast the answer, which then waits for it."""
    tx = m.tx[j]
    if release_in < 0.0 or tx.pool_keep != 0 or delay == PARKED:
        return delay
    tx.pool_resume_pc = tx.pc
    tx.pool_resume_ms = delay - release_in if delay > release_in else 0.0     # DONE (< 0): ends at the release
    tx.pc = PC.POOL_RELEASE
    return release_in


@handler
def on_release(m, j, now):
    """A request's answer: its connection goes back to its pool (to the first waiter, if one waits), and the
    transaction goes on where its handler had sent it (it may have ended at the effect point: then it ends here)."""
    tx = m.tx[j]
    k = tx.pool
    tx.pool = -1
    w = _hand_on(m, k)
    if w >= 0:
        m.tx[w].pool = k
    pc = tx.pool_resume_pc
    tx.pc = pc
    if pc == PC.DONE:
        return DONE
    return tx.pool_resume_ms


@model_function
def keep(m, j, keeping):
    """The transaction keeps its connection after its request in flight (one database transaction spans its next
    requests), or no longer."""
    m.tx[j].pool_keep = 1 if keeping else 0


# ------------------------------------------------------------------------------------------ row locks

@model_function
def lock_row(m, j, now, t):
    """A statement of transaction j asks for table t's row lock at its effect point: True if granted now; else it
    is queued, and its design parks it (a release grants it the lock and the engine runs it)."""
    return lock_key(m, j, now, t, t)


@model_function
def lock_key(m, j, now, t, k):
    """`lock_row` of row k (from ROW_LOCKS on) for transaction j's commit to table t: t's own row (k = t), or one row
    every commit writes (a lake's next snapshot id: k = 0)."""
    tx = m.tx[j]
    i = ROW_LOCKS + k
    tx.lock_requests += 1
    if history.on(m):
        history.lock(m, Kind.LOCK_REQUEST, now, j, t, k, 0)
    if m.pl[i].free > 0:
        m.pl[i].free -= 1
        m.pl[i].holder = j
        _granted(m, j, now, t, k, now)
        return True
    _enqueue(m, i, j, now)
    return False


@model_function
def _granted(m, j, now, t, k, asked_ms):
    tx = m.tx[j]
    tx.lock_grants += 1
    tx.lock_granted_ms = now
    tx.lock_wait_ms += now - asked_ms
    if history.on(m):
        history.lock(m, Kind.LOCK_GRANT, now, j, t, k, 0)


@model_function
def unlock_row(m, j, now, t):
    """Transaction j's COMMIT or rollback releases table t's row lock now: to the first waiter (the engine runs it
    now), else free."""
    unlock_key(m, j, now, t, t, False)


@model_function
def unlock_key(m, j, now, t, k, own_table):
    """`unlock_row` of row k, held for j's commit to table t; the waiter it goes to records its grant under its own
    table (`own_table`: a row every commit writes) or t."""
    tx = m.tx[j]
    tx.lock_hold_ms += now - tx.lock_granted_ms
    if history.on(m):
        history.lock(m, Kind.LOCK_RELEASE, now, j, t, k, 0)
    w = _hand_on(m, ROW_LOCKS + k)
    m.pl[ROW_LOCKS + k].holder = w
    if w >= 0:
        _granted(m, w, now, m.tx[w].table if own_table else t, k, m.tx[w].pool_queued_ms)


# ------------------------------------------------------------------------------------------ a row held for a time

# ------------------------------------------------------------------------------------------ its effect points

@model_function
def owns(pc):
    """Whether `pc` is the pools' (a request asking for a connection, waiting for one, releasing it)."""
    return pc == PC.POOL_ACQUIRE or pc == PC.POOL_WAIT or pc == PC.POOL_RELEASE


@handler
def route(m, j, now, pc):
    """The pools' handler for `pc` (`owns`): a request's connection asked for or handed on, or released."""
    if pc == PC.POOL_RELEASE:
        return on_release(m, j, now)
    return on_acquire(m, j, now)


OWNS = dict(effect_points=("POOL_ACQUIRE", "POOL_WAIT", "POOL_RELEASE"),
            fields=("pool", "pool_keep", "pool_ask", "pool_src", "pool_pc", "pool_resume_pc", "pool_resume_ms",
                    "pool_queued_ms", "pool_wait_ms"),
            params=("client_pool", "pool_timeout_ms"), sources=())
