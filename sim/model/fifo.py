"""A FIFO queue of transaction slots, linked through their `queue_next` field: the waiters of a commit lock
(`sim.model.lock`, a row of `Model.lk`), of a server's connection pool or row lock (`sim.model.capacity`, a row of
`Model.pl`). `q` is the queue's row, whose `head` and `tail` are its first and last slots (-1: none); a slot waits
in one queue at a time."""
from .jit import model_function


@model_function
def push(m, q, j):
    """Slot j joins the end of queue `q`."""
    m.tx[j].queue_next = -1
    tail = q.tail
    if tail < 0:
        q.head = j
    else:
        m.tx[tail].queue_next = j
    q.tail = j


@model_function
def remove(m, q, j):
    """Take slot j out of queue `q` (the head, or a waiter that gave up: a walk from the head)."""
    prev = -1
    c = q.head
    while c != j:
        prev = c
        c = m.tx[c].queue_next
    nxt = m.tx[j].queue_next
    if prev < 0:
        q.head = nxt
    else:
        m.tx[prev].queue_next = nxt
    if q.tail == j:
        q.tail = prev


OWNS = dict(effect_points=(), fields=("queue_next",), params=(), sources=())


@model_function
def ask_timer(m, j, after_ms):
    """Waiter j, parked in a queue, asks the engine for a timer in `after_ms` (the engine then calls the design's
    `timer`, which says whether j gives its wait up): one ask per event, taken by the engine after the handler."""
    r = m.run[0]
    r.timer = j
    r.timer_ms = after_ms
