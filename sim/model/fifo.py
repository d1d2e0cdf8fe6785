"""A FIFO queue of transaction slots: the waiters of a commit lock (`sim.model.lock`, a row of `Model.lk`), linked
through their `queue_next` field, and of a server's connection pool or row lock (`sim.model.capacity`, a row of
`Model.pl`; `pooled`), through `pool_next`. `q` is the queue's row, whose `head` and `tail` are its first and last
slots (-1: none); a slot waits in one queue of each kind at a time (Hive 3: a lock's queue while it waits for the
checkLock mutex)."""
from .jit import model_function


@model_function
def _next(m, j, pooled):
    return m.tx[j].pool_next if pooled else m.tx[j].queue_next


@model_function
def _link(m, j, pooled, nxt):
    if pooled:
        m.tx[j].pool_next = nxt
    else:
        m.tx[j].queue_next = nxt


@model_function
def push(m, q, j, pooled):
    """Slot j joins the end of queue `q` (a pool's if `pooled`)."""
    _link(m, j, pooled, -1)
    tail = q.tail
    if tail < 0:
        q.head = j
    else:
        _link(m, tail, pooled, j)
    q.tail = j


@model_function
def remove(m, q, j, pooled):
    """Take slot j out of queue `q` (a pool's if `pooled`; the head, or a waiter that gave up: a walk from the
    head)."""
    prev = -1
    c = q.head
    while c != j:
        prev = c
        c = _next(m, c, pooled)
    nxt = _next(m, j, pooled)
    if prev < 0:
        q.head = nxt
    else:
        _link(m, prev, pooled, nxt)
    if q.tail == j:
        q.tail = prev


@model_function
def wake(m, w):
    """Parked slot w runs now, after the handler (`run.wake`); slots woken in one event (a COMMIT that releases
    several row locks) run in the order woken, each after the one before (`tx.wake_next`)."""
    r = m.run[0]
    if r.wake < 0:
        r.wake = w
    else:
        m.tx[r.wake_last].wake_next = w
    r.wake_last = w


@model_function
def ask_timer(m, j, after_ms):
    """Waiter j, parked in a queue, asks the engine for a timer in `after_ms` (the engine then calls the design's
    `timer`, which says whether j gives its wait up): one ask per event, taken by the engine after the handler."""
    r = m.run[0]
    r.timer = j
    r.timer_ms = after_ms


OWNS = dict(effect_points=(), fields=("queue_next", "pool_next", "wake_next"), params=(), sources=())
