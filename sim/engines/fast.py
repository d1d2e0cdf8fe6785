"""The fast engine: the model's handlers compiled with numba inside one event loop.

The loop keeps a binary heap on SimPy's event key (time, priority, eid), eid being a counter bumped at every
schedule; a new transaction starts with an URGENT event at the current time, every other event is NORMAL (the
SimPy engine's process-termination events are no-ops and are left out, which keeps the relative order of all
other eids). Event times are `now + delay` with the handlers' own delays, so every float operation is the
SimPy engine's, in the same order (no fast-math: nothing is fused or reassociated), and the results are the
same, bit for bit. When a random source could run short, the loop returns between two events, the wrapper
refills it (`sim.model.build.Run.refill`) and the loop resumes.

numba's cache tracks only this file's source; the model's handlers compile into this loop from other files,
so `_guard_cache` drops the cached loop when any of them changes.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import njit

from ..model import arrivals, lock, writers
from ..model.step import step
from ..model.transaction import PARKED
from ..model.draws import events_before_refill, needs
from ..model.jit import handler
from ..model.state import PC
from .base import EngineBase

# heap "who": >= 0 a transaction (its slot); W_WRITER0 - w writer w's next start; below the writers', slot j's lock
# timer (W_WRITER0 - writers - j); else:
W_ARRIVALS_START, W_ARRIVALS, W_WATCHDOG, W_STOP = np.int64(-1), np.int64(-2), np.int64(-3), np.int64(-4)
W_WRITER0 = np.int64(-5)
URGENT, NORMAL = np.int64(0), np.int64(1)
_PRIO_SHIFT = np.int64(1) << np.int64(62)   # heap key = priority * 2^62 + eid
# loop state kept between calls
E_EID, E_HEAP, E_STOPPED, E_STARTED, E_NEED, E_DONE = range(6)
N_E = 6
STATUS_DONE, STATUS_NEED, STATUS_EMPTY, STATUS_GROW = 0, 1, 2, 3
PUSHES_PER_EVENT = 3   # an event schedules at most 3 events (a transaction's own, a woken waiter's, a timer)


def _guard_cache() -> None:
    here = Path(__file__).resolve()
    sources = sorted((here.parent.parent / "model").glob("*.py")) + [here]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    cache = here.parent / "__pycache__"
    stamp = cache / f"{here.stem}.model-digest"
    try:
        if stamp.is_file() and stamp.read_text() == digest:
            return
        for f in cache.glob(f"{here.stem}.*.nb[ic]"):
            f.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:   # a read-only install: numba then caches elsewhere, keyed by this file alone
        pass


_guard_cache()


@njit(cache=True)
def _push(h_t, h_k, h_w, size, t, key, who):
    """Binary min-heap on (time, key)."""
    i = size
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
    return size + 1


@njit(cache=True)
def _pop(h_t, h_k, h_w, size):
    """Remove the root (already read by the caller); returns the new size."""
    size -= 1
    if size == 0:
        return 0
    t = h_t[size]
    key = h_k[size]
    who = h_w[size]
    i = 0
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
    return size


@handler
def _at(h_t, h_k, h_w, hsize, eid, t, priority, who):
    """Schedule `who` at t on SimPy's key (time, priority, eid): the heap's new size."""
    return _push(h_t, h_k, h_w, hsize, t, priority * _PRIO_SHIFT + eid, who)


@handler
def _arrivals_event(m, who, now, h_t, h_k, h_w, hsize, eid):
    """The arrivals process: a new transaction starts now (URGENT), then the next arrival is scheduled.
    Returns the heap's size and the next eid."""
    j = -1
    if who == W_ARRIVALS:
        j = arrivals.on_arrival(m, now)
        if j >= 0:
            hsize = _at(h_t, h_k, h_w, hsize, eid, now, URGENT, j)
            eid += 1
    if who == W_ARRIVALS_START or j >= 0:
        delay = arrivals.next_arrival(m, now)
        hsize = _at(h_t, h_k, h_w, hsize, eid, now + delay, NORMAL, W_ARRIVALS)
        eid += 1
    return hsize, eid


@handler
def _start(m, h_t, h_k, h_w, hsize, eid, watchdog_ms):
    """The arrivals process starts (URGENT at 0), or each writer's first start is scheduled in writer order;
    then the watchdog, which bounds the run. Returns the heap's size and the next eid."""
    if m.p.writers > 0:
        for w in range(m.p.writers):
            hsize = _at(h_t, h_k, h_w, hsize, eid, writers.first_due(m, w), NORMAL, W_WRITER0 - w)
            eid += 1
    else:
        hsize = _at(h_t, h_k, h_w, hsize, eid, 0.0, URGENT, W_ARRIVALS_START)
        eid += 1
    hsize = _at(h_t, h_k, h_w, hsize, eid, watchdog_ms, NORMAL, W_WATCHDOG)
    return hsize, eid + 1


@handler
def _ended(m, j, now, h_t, h_k, h_w, hsize, eid):
    """Transaction j ended: its writer's next start is scheduled (if it has one). Returns the heap's size and the
    next eid."""
    if m.p.writers > 0:
        delay = writers.on_end(m, j, now)
        if delay >= 0.0:
            hsize = _at(h_t, h_k, h_w, hsize, eid, now + delay, NORMAL, W_WRITER0 - m.tx[j].writer)
            eid += 1
    return hsize, eid


@handler
def _lock_asks(m, now, h_t, h_k, h_w, hsize, eid, timers0):
    """What the last handler asked of the engine besides its own next event: run a parked waiter now (a FIFO-notify
    grant), then set a parked waiter's timer (`sim.model.lock`). Returns the heap's size and the next eid."""
    r = m.run[0]
    if r.wake >= 0:
        hsize = _at(h_t, h_k, h_w, hsize, eid, now, NORMAL, r.wake)
        eid += 1
        r.wake = -1
    if r.timer >= 0:
        hsize = _at(h_t, h_k, h_w, hsize, eid, now + r.timer_ms, NORMAL, timers0 - r.timer)
        eid += 1
        r.timer = -1
    return hsize, eid


@handler
def _timer_event(m, j, now, h_t, h_k, h_w, hsize, eid):
    """Slot j's lock timer: if its waiter gives its wait up now, the waiter runs now (a stale timer does nothing)."""
    if lock.on_timer(m, j, now):
        hsize = _at(h_t, h_k, h_w, hsize, eid, now, NORMAL, j)
        eid += 1
    return hsize, eid


@handler
def _writer_event(m, w, now, h_t, h_k, h_w, hsize, eid):
    """Writer w's next transaction starts now (URGENT), unless the writer stops."""
    j = writers.on_due(m, w, now)
    if j >= 0:
        hsize = _at(h_t, h_k, h_w, hsize, eid, now, URGENT, j)
        eid += 1
    return hsize, eid


@njit(cache=True, nogil=True, _nrt=False)   # no allocation inside: no reference counting needed
def _loop(m, e, h_t, h_k, h_w, watchdog_ms, end):
    eid = e[E_EID]
    hsize = e[E_HEAP]
    stopped = e[E_STOPPED] != 0
    if e[E_STARTED] == 0:
        e[E_STARTED] = 1
        hsize, eid = _start(m, h_t, h_k, h_w, hsize, eid, watchdog_ms)
    status = STATUS_DONE
    safe = 0       # events that can run before a source could run short (`needs` is checked only then)
    timers0 = W_WRITER0 - m.p.writers
    while True:
        if hsize + PUSHES_PER_EVENT > len(h_t):   # stale lock timers stay in the heap until they fire
            status = STATUS_GROW
            break
        if safe == 0:
            need = needs(m)
            if need != 0:
                e[E_NEED] = need
                status = STATUS_NEED
                break
            safe = events_before_refill(m)
        else:
            safe -= 1
        if hsize == 0:   # cannot happen (the watchdog is always there)
            status = STATUS_EMPTY
            break
        now = h_t[0]
        who = h_w[0]
        hsize = _pop(h_t, h_k, h_w, hsize)
        if who >= 0:   # a transaction's slot
            delay = step(m, who, now)
            if m.p.lock:
                hsize, eid = _lock_asks(m, now, h_t, h_k, h_w, hsize, eid, timers0)
            if m.tx[who].pc == PC.DONE:
                hsize, eid = _ended(m, who, now, h_t, h_k, h_w, hsize, eid)
            elif delay != PARKED:
                hsize = _at(h_t, h_k, h_w, hsize, eid, now + delay, NORMAL, who)
                eid += 1
        elif who <= timers0:
            hsize, eid = _timer_event(m, timers0 - who, now, h_t, h_k, h_w, hsize, eid)
        elif who <= W_WRITER0:
            hsize, eid = _writer_event(m, W_WRITER0 - who, now, h_t, h_k, h_w, hsize, eid)
        elif who == W_ARRIVALS or who == W_ARRIVALS_START:
            hsize, eid = _arrivals_event(m, who, now, h_t, h_k, h_w, hsize, eid)
        elif who == W_STOP:   # the run ends here
            e[E_DONE] = 1
            end[0] = now
            break
        # the watchdog, or the last window transaction's end once arrivals ended, schedules the stop
        if (who == W_WATCHDOG or m.run[0].stop != 0) and not stopped:
            stopped = True
            hsize = _at(h_t, h_k, h_w, hsize, eid, now, NORMAL, W_STOP)
            eid += 1
    e[E_EID] = eid
    e[E_HEAP] = hsize
    e[E_STOPPED] = 1 if stopped else 0
    return status


class FastEngine(EngineBase):

    def run(self) -> "FastEngine":
        r = self.r
        # the heap holds each transaction in flight (one per slot in use), each writer's next start, the
        # arrivals, watchdog and stop
        h_t = h_k = h_w = np.zeros(0, dtype=np.int64)
        e = np.zeros(N_E, dtype=np.int64)
        end = np.zeros(1, dtype=np.float64)
        status = STATUS_DONE
        while True:
            cap = len(r.m.tx) + r.m.p.writers + 8
            if status == STATUS_GROW:   # stale lock timers filled it
                cap = max(cap, 2 * len(h_t))
            if len(h_t) < cap:   # the slots grew (or the run starts): so does the heap, between events
                n = int(e[E_HEAP])
                h_t, h_k, h_w = (np.concatenate([h[:n], np.zeros(cap - n, dtype=dt)])
                                 for h, dt in ((h_t, np.float64), (h_k, np.int64), (h_w, np.int64)))
            status = _loop(r.m, e, h_t, h_k, h_w, self.watchdog_ms, end)
            if status == STATUS_DONE:
                break
            if status == STATUS_EMPTY:
                raise RuntimeError("no scheduled events left before the run ended")
            if status == STATUS_NEED:
                r.refill(int(e[E_NEED]))
        r.finish(end[0])
        return self
