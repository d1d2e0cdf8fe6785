"""The fast engine's event queue: a min-queue on (time, key) whose near events sit in a small heap and whose far
events wait in buckets of time, unsorted.

An open-loop run far past its knee keeps tens of thousands of transactions in flight, most of them in their runtime
(a lognormal of median 3 min) or reading a long validation, each one event seconds or minutes away. In one binary
heap every event paid for the far ones: a pop sifted down through all their levels (log2 of 30,000 is 15), and perf
put three quarters of the loop's own samples there (benchmarks/README.md, "Issue 42"). Here time is cut in buckets
of `QUANTUM_MS`: an event in the current bucket (or before it) goes to the hot heap; a later one is linked into its
bucket in a ring of `BUCKETS` (or, further than the ring reaches, into an overflow list), in O(1). When the hot heap
is empty the next bucket that holds events becomes current: its events move to the hot heap, which is then
heapified. Every hot event is in a bucket at or before the current one and every other event in a later bucket, so
the hot heap's root is the queue's least (time, key): the order popped is the single heap's, exactly (keys are
unique: they hold the event's eid; a time's bucket is `floor(time / QUANTUM_MS)`, monotone in the time).

Arrays: `h_t`, `h_k`, `h_w` (time, key, who) hold the hot heap at [0, cap) and the bucketed events' nodes at
[cap, 2 cap); `qs` (int64) holds the header, the ring's list heads and each node's next. The hot heap's size is the
caller's (the loop returns it, `sim.engines.fast`).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

QUANTUM_MS = 10.0     # a bucket's width; any width gives the same order, only its cost changes
BUCKETS = 1 << 16     # the ring's buckets: 655 s of events ahead; further ones wait in the overflow list
FAR = 2.0 ** 52       # ms: a time from here on (and infinity) is in the last bucket
LAST = np.int64(1) << np.int64(60)
# the header of `qs`
CUR, FREE, OVER, USED, RING, CAP = range(6)
HEADER = 8
NONE = -1


def new(cap: int) -> tuple:
    """An empty queue with room for `cap` events: (h_t, h_k, h_w, qs)."""
    h_t, h_k, h_w = np.zeros(2 * cap), np.zeros(2 * cap, dtype=np.int64), np.zeros(2 * cap, dtype=np.int64)
    qs = np.full(HEADER + BUCKETS + cap, NONE, dtype=np.int64)
    qs[:HEADER] = 0
    qs[CUR] = -1      # the bucket before time 0's
    qs[OVER] = NONE
    qs[CAP] = cap
    _chain(qs, 0, cap, NONE)
    return h_t, h_k, h_w, qs


def time_ms(qs) -> float:
    """The start of the current bucket: the time of the last event popped, or up to a bucket before it (from
    Python, between two calls of the loop)."""
    return max(int(qs[CUR]), 0) * QUANTUM_MS


def _chain(qs: np.ndarray, first: int, last: int, then: int) -> None:
    """Nodes first..last-1 become the free list's head, in order, followed by `then`."""
    nxt = qs[HEADER + BUCKETS:]
    nxt[first:last - 1] = np.arange(first + 1, last)
    nxt[last - 1] = then
    qs[FREE] = first


def grown(h_t, h_k, h_w, qs, hot: int, cap: int) -> tuple:
    """The queue with room for `cap` events, its events, buckets and nodes kept (between events)."""
    old = int(qs[CAP])
    out_t, out_k, out_w, out_q = new(cap)
    for src, dst in ((h_t, out_t), (h_k, out_k), (h_w, out_w)):
        dst[:hot] = src[:hot]
        dst[cap:cap + old] = src[old:2 * old]
    out_q[:HEADER + BUCKETS + old] = qs
    out_q[CAP] = cap
    _chain(out_q, old, cap, int(qs[FREE]))
    return out_t, out_k, out_w, out_q


def pending(qs, hot: int) -> int:
    """Events queued."""
    return hot + int(qs[USED])


@njit(cache=True)
def room(qs, hot):
    """Events the queue can still take."""
    return qs[CAP] - hot - qs[USED]


@njit(cache=True)
def _bucket(t):
    return np.int64(math.floor(t / QUANTUM_MS)) if t < FAR else LAST


@njit(cache=True)
def _down(h_t, h_k, h_w, i, size, t, key, who):
    """Put (t, key, who) at position i of the hot heap of `size` entries, sifting it down."""
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        r = c + 1
        if r < size and (h_t[r] < h_t[c] or (h_t[r] == h_t[c] and h_k[r] < h_k[c])):
            c = r
        if h_t[c] < t or (h_t[c] == t and h_k[c] < key):
            h_t[i] = h_t[c]
            h_k[i] = h_k[c]
            h_w[i] = h_w[c]
            i = c
        else:
            break
    h_t[i] = t
    h_k[i] = key
    h_w[i] = who


@njit(cache=True)
def _up(h_t, h_k, h_w, i, t, key, who):
    """Put (t, key, who) at position i of the hot heap, sifting it up."""
    while i > 0:
        p = (i - 1) >> 1
        pt = h_t[p]
        if pt < t or (pt == t and h_k[p] < key):
            break
        h_t[i] = pt
        h_k[i] = h_k[p]
        h_w[i] = h_w[p]
        i = p
    h_t[i] = t
    h_k[i] = key
    h_w[i] = who


@njit(cache=True)
def _link(qs, node, b):
    """Node `node`, of bucket b (later than the current), into its ring bucket or the overflow list. The ring holds
    the buckets after the current one up to BUCKETS - 1 ahead, so no two of them share a ring slot, not even with the
    current one."""
    nxt = HEADER + BUCKETS
    if b < qs[CUR] + BUCKETS:
        head = HEADER + b % BUCKETS
        qs[RING] += 1
    else:
        head = OVER
    qs[nxt + node] = qs[head]
    qs[head] = node


@njit(cache=True)
def push(h_t, h_k, h_w, qs, hot, t, key, who):
    """Queue `who` at (t, key): the hot heap's new size."""
    b = _bucket(t)
    if b <= qs[CUR]:
        _up(h_t, h_k, h_w, hot, t, key, who)
        return hot + 1
    node = qs[FREE]
    qs[FREE] = qs[HEADER + BUCKETS + node]
    at = qs[CAP] + node
    h_t[at] = t
    h_k[at] = key
    h_w[at] = who
    qs[USED] += 1
    _link(qs, node, b)
    return hot


@njit(cache=True)
def pop(h_t, h_k, h_w, hot):
    """Remove the hot heap's root (already read by the caller: `h_t[0]`, `h_w[0]`); returns its new size."""
    hot -= 1
    if hot > 0:
        _down(h_t, h_k, h_w, 0, hot, h_t[hot], h_k[hot], h_w[hot])
    return hot


@njit(cache=True)
def ready(h_t, h_k, h_w, qs, hot):
    """The hot heap's size once it holds the queue's next event (`move` if it is empty; 0: the queue is empty)."""
    if hot > 0:
        return hot
    return move(h_t, h_k, h_w, qs)


@njit(cache=True)
def _spill(qs, h_t, upto):
    """Overflow nodes of buckets up to `upto` into the ring; returns the least bucket left in the overflow."""
    nxt = HEADER + BUCKETS
    cap = qs[CAP]
    node = qs[OVER]
    qs[OVER] = NONE
    least = LAST + 1
    while node != NONE:
        after = qs[nxt + node]
        b = _bucket(h_t[cap + node])
        if b <= upto:
            _link(qs, node, b)
        else:
            qs[nxt + node] = qs[OVER]
            qs[OVER] = node
            least = min(least, b)
        node = after
    return least


@njit(cache=True)
def move(h_t, h_k, h_w, qs):
    """The hot heap is empty: the next bucket with events becomes current and its events the hot heap's (a full
    ring turn spills the overflow's newly reachable buckets into the ring; an empty ring jumps to the overflow's
    first bucket). Returns the hot heap's size (0: the queue is empty)."""
    nxt = HEADER + BUCKETS
    cap = qs[CAP]
    while True:
        if qs[RING] == 0:
            if qs[OVER] == NONE:
                return 0
            least = _spill(qs, h_t, -1)          # (nothing spills: it finds the overflow's first bucket)
            qs[CUR] = least - 1
            _spill(qs, h_t, least - 2 + BUCKETS)
        cur = qs[CUR] + 1
        qs[CUR] = cur
        if cur % BUCKETS == 0:   # (an overflow node is always at or past the next full turn's bucket)
            _spill(qs, h_t, cur + BUCKETS - 1)
        head = HEADER + cur % BUCKETS
        node = qs[head]
        qs[head] = NONE
        hot = 0
        while node != NONE:
            at = cap + node
            h_t[hot] = h_t[at]
            h_k[hot] = h_k[at]
            h_w[hot] = h_w[at]
            hot += 1
            after = qs[nxt + node]
            qs[nxt + node] = qs[FREE]
            qs[FREE] = node
            node = after
        if hot > 0:
            qs[RING] -= hot
            qs[USED] -= hot
            for i in range(hot // 2 - 1, -1, -1):
                _down(h_t, h_k, h_w, i, hot, h_t[i], h_k[i], h_w[i])
            return hot
