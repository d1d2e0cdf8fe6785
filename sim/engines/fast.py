"""The fast engine: the model's handlers compiled with numba inside an event loop, one loop per design.

The loop keeps an event queue on SimPy's event key (time, priority, eid), eid being a counter bumped at every
schedule (`sim.engines.queue`: a small heap of the near events, the far ones in buckets of time, popped in one
heap's order, exactly); the arrivals process starts with an URGENT event at 0, every other event is NORMAL (the
SimPy engine's process-initialization and termination events are no-ops and are left out, which keeps the relative
order of all other eids). A new transaction takes its first step in the event that starts it (an arrival, a writer's tick),
after the next arrival is scheduled: that step is the transaction's own (its reads' draws and its first request),
touches nothing shared, and an event of its own at the same instant would run before any other anyway. Event
times are `now + delay` with the handlers' own delays, so every float operation is the SimPy engine's, in the same
order (no fast-math: nothing is fused or reassociated), and the results are the same, bit for bit. When a random
source could run short, the loop returns between two events, the wrapper refills it (`sim.model.build.Run.refill`)
and the loop resumes.

Each design (`sim.model.designs`) gets a loop of its own, built around its `step` (`loop_for`): a run compiles
only the handlers its design can reach, once per machine (numba caches each loop in a file of its own, keyed by
its design's `step`). numba's cache tracks only this file's source; the model's handlers compile into the loops
from other files, so `_guard_cache` drops the cached loops when any of them changes.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import multiprocessing
import os
import sys
from pathlib import Path

import numpy as np
from numba import njit, typeof, types
from numba.core import event as ev

from ..model import arrivals, writers
from ..model.designs import DESIGNS, design_of_config
from ..model.transaction import PARKED
from ..model.draws import events_before_refill, needs
from ..model.jit import handler
from ..model.state import PC
from ..orphans import end_with_parent
from .base import EngineBase
from . import queue
from .model_ref import ModelRef

# heap "who": >= 0 a transaction (its slot); W_WRITER0 - w writer (or maintenance job) w's next start; below the
# starters', slot j's lock timer (W_WRITER0 - starters - j); else:
W_ARRIVALS_START, W_ARRIVALS, W_WATCHDOG, W_STOP = np.int64(-1), np.int64(-2), np.int64(-3), np.int64(-4)
W_WRITER0 = np.int64(-5)
URGENT, NORMAL = np.int64(0), np.int64(1)
_PRIO_SHIFT = np.int64(1) << np.int64(62)   # heap key = priority * 2^62 + eid
# loop state kept between calls
E_EID, E_HEAP, E_STOPPED, E_STARTED, E_NEED, E_DONE = range(6)
N_E = 6
STATUS_DONE, STATUS_NEED, STATUS_EMPTY, STATUS_GROW = 0, 1, 2, 3
PUSHES_PER_EVENT = 4   # an event schedules at most 4 events (the next arrival, a transaction's own or its writer's
                       # next start, a woken waiter's, a timer), and with commits over several tables one more woken
                       # waiter a table (a COMMIT releases their row locks: `tables_max`)


def _guard_cache() -> None:
    """numba checks a cached function against its own file only, but a loop and each model function link the
    model functions they call from other files: any change to the model or this engine drops every cached one."""
    here = Path(__file__).resolve()
    model = here.parent.parent / "model"
    sources = sorted(model.rglob("*.py")) + [here, here.parent / "model_ref.py", here.parent / "queue.py"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    stamp = here.parent / "__pycache__" / f"{here.stem}.model-digest"
    try:
        if stamp.is_file() and stamp.read_text() == digest:
            return
        for cache in [here.parent / "__pycache__", *model.rglob("__pycache__")]:
            for f in cache.glob("*.nb[ic]"):
                f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:   # a read-only install: numba then caches elsewhere, keyed by each file alone
        pass


_guard_cache()


@handler
def _at(h_t, h_k, h_w, qs, hsize, eid, t, priority, who):
    """Schedule `who` at t on SimPy's key (time, priority, eid): the hot heap's new size."""
    return queue.push(h_t, h_k, h_w, qs, hsize, t, priority * _PRIO_SHIFT + eid, who)


@handler
def _arrivals_event(m, who, now, h_t, h_k, h_w, qs, hsize, eid):
    """The arrivals process: a new transaction arrives, then the next arrival is scheduled. Returns the hot heap's
    size, the next eid and the new transaction's slot (-1: none), which starts in this same event."""
    j = -1
    if who == W_ARRIVALS:
        j = arrivals.on_arrival(m, now)
    if who == W_ARRIVALS_START or j >= 0:
        delay = arrivals.next_arrival(m, now)
        hsize = _at(h_t, h_k, h_w, qs, hsize, eid, now + delay, NORMAL, W_ARRIVALS)
        eid += 1
    return hsize, eid, j


@handler
def _start_in(h_t, h_k, h_w, qs, hsize, eid, now, delay, who):
    """A starter's (`who`: its heap code) next start `delay` ms from now, if it has one (-1: none): after its
    transaction's end (`_ended`), or after its start when it asks for another with no end between (a compaction's
    next batch: its row's `again_ms`). Returns the hot heap's size and the next eid. (The model is not handed over: a
    function that takes it costs seconds of the first compile.)"""
    if delay >= 0.0:
        hsize = _at(h_t, h_k, h_w, qs, hsize, eid, now + delay, NORMAL, who)
        eid += 1
    return hsize, eid


@handler
def _start(m, e, h_t, h_k, h_w, qs, hsize, eid, watchdog_ms):
    """The arrivals process starts (URGENT at 0), or each writer's first start is scheduled in writer order;
    then the watchdog, which bounds the run; the loop's state `e` says it started. Returns the hot heap's size and the
    next eid."""
    e[E_STARTED] = 1
    if m.p.writers == 0:
        hsize = _at(h_t, h_k, h_w, qs, hsize, eid, 0.0, URGENT, W_ARRIVALS_START)
        eid += 1
    for w in range(m.p.starters):
        hsize = _at(h_t, h_k, h_w, qs, hsize, eid, writers.first_due(m, w), NORMAL, W_WRITER0 - w)
        eid += 1
    hsize = _at(h_t, h_k, h_w, qs, hsize, eid, watchdog_ms, NORMAL, W_WATCHDOG)
    return hsize, eid + 1


@handler
def _ended(m, j, now, h_t, h_k, h_w, qs, hsize, eid):
    """Transaction j ended: its writer's (or maintenance job's) next start is scheduled (if it has one). Returns
    the hot heap's size and the next eid."""
    w = writers.starter(m, j)
    if w >= 0:
        hsize, eid = _start_in(h_t, h_k, h_w, qs, hsize, eid, now, writers.on_end(m, j, now), W_WRITER0 - w)
    return hsize, eid


@handler
def _lock_asks(m, now, h_t, h_k, h_w, qs, hsize, eid, timers0):
    """What the last handler asked of the engine besides its own next event: run a parked waiter now (a FIFO-notify
    grant; a connection or row lock handed on, `sim.model.capacity`), then set a parked waiter's timer
    (`sim.model.lock`). Returns the hot heap's size and the next eid."""
    r = m.run[0]
    w = r.wake
    while w >= 0:                  # (several: in the order woken, `sim.model.fifo.wake`)
        hsize = _at(h_t, h_k, h_w, qs, hsize, eid, now, NORMAL, w)
        eid += 1
        nxt = m.tx[w].wake_next
        m.tx[w].wake_next = -1
        w = nxt
    r.wake = -1
    if r.timer >= 0:
        hsize = _at(h_t, h_k, h_w, qs, hsize, eid, now + r.timer_ms, NORMAL, timers0 - r.timer)
        eid += 1
        r.timer = -1
    return hsize, eid


@handler
def _stepped(m, j, now, delay, h_t, h_k, h_w, qs, hsize, eid, timers0):
    """Transaction j took its step, which asks `delay`: what it asked of the engine, then its next event (none
    once it ended or while it waits parked). Returns the hot heap's size and the next eid."""
    if m.p.parks:
        hsize, eid = _lock_asks(m, now, h_t, h_k, h_w, qs, hsize, eid, timers0)
    if m.tx[j].pc == PC.DONE:
        hsize, eid = _ended(m, j, now, h_t, h_k, h_w, qs, hsize, eid)
    elif delay != PARKED:
        hsize = _at(h_t, h_k, h_w, qs, hsize, eid, now + delay, NORMAL, j)
        eid += 1
    return hsize, eid


@handler
def _pause(e, eid, hsize, stopped):
    """The loop's state as it leaves (done, or for the wrapper to refill or grow the queue), for its next call."""
    e[E_EID] = eid
    e[E_HEAP] = hsize
    e[E_STOPPED] = 1 if stopped else 0


def _make_loop(step, on_timer):
    """The event loop around a design's `step` (and its lock timers' handler): a closure, so that numba compiles
    and caches one loop per design (its cache key holds the closure's functions)."""
    def _loop(m, e, h_t, h_k, h_w, qs, watchdog_ms, end):
        eid = e[E_EID]
        hsize = e[E_HEAP]
        stopped = e[E_STOPPED] != 0
        if e[E_STARTED] == 0:
            hsize, eid = _start(m, e, h_t, h_k, h_w, qs, hsize, eid, watchdog_ms)
        status = STATUS_DONE
        safe = 0       # events that can run before a source could run short (`needs` is checked only then)
        timers0 = W_WRITER0 - m.p.starters
        while True:
            if PUSHES_PER_EVENT + m.p.tables_max > queue.room(qs, hsize):   # (stale lock timers; a COMMIT's wakes)
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
            hsize = queue.ready(h_t, h_k, h_w, qs, hsize)
            if hsize == 0:   # cannot happen (the watchdog is always there)
                status = STATUS_EMPTY
                break
            now, who = h_t[0], h_w[0]
            hsize = queue.pop(h_t, h_k, h_w, hsize)
            j = -1         # the transaction that takes its next step in this event
            if who >= 0:   # a transaction's slot
                j = who
            elif who <= timers0:   # slot j's lock timer: if its waiter gives up now, it runs now (else stale)
                waiter = timers0 - who
                if on_timer(m, waiter, now):
                    hsize = _at(h_t, h_k, h_w, qs, hsize, eid, now, NORMAL, waiter)
                    eid += 1
            elif who <= W_WRITER0:   # writer (or job) w's next transaction starts now, its first step in this event
                j = writers.on_due(m, W_WRITER0 - who, now)
                hsize, eid = _start_in(h_t, h_k, h_w, qs, hsize, eid, now, m.wr[W_WRITER0 - who].again_ms, who)
            elif who == W_ARRIVALS or who == W_ARRIVALS_START:
                hsize, eid, j = _arrivals_event(m, who, now, h_t, h_k, h_w, qs, hsize, eid)
            elif who == W_STOP:   # the run ends here
                e[E_DONE] = 1
                end[0] = now
                break
            if j >= 0:
                hsize, eid = _stepped(m, j, now, step(m, j, now), h_t, h_k, h_w, qs, hsize, eid, timers0)
            # the watchdog, or the last window transaction's end once arrivals ended, schedules the stop
            if (who == W_WATCHDOG or m.run[0].stop != 0) and not stopped:
                stopped = True
                hsize = _at(h_t, h_k, h_w, qs, hsize, eid, now, NORMAL, W_STOP)
                eid += 1
        _pause(e, eid, hsize, stopped)
        return status

    return _loop


_LOOPS: dict = {}


def loop_for(design: str):
    """The compiled event loop of `design` (`sim.model.designs.DESIGNS`): built once per process, compiled on its
    first call (or loaded from numba's cache)."""
    if design not in _LOOPS:
        mod = DESIGNS[design]
        loop = _make_loop(mod.step, mod.timer)
        loop.__qualname__ = loop.__name__ = f"loop_{design}"   # its own cache file, whatever the others do
        _LOOPS[design] = njit(cache=True, nogil=True, _nrt=False)(loop)   # no allocation inside: no refcounts
    return _LOOPS[design]


def _params_record(p):
    """The parameters as a one-row record array: compiled code gets a pointer to its row, not its fields one by
    one."""
    dt = np.dtype([(k, np.bool_ if isinstance(v, bool) else np.int64 if isinstance(v, int) else np.float64)
                   for k, v in p._asdict().items()])
    arr = np.zeros(1, dtype=dt)
    arr[0] = tuple(p)
    return arr


# the first use of a design after an install compiles its loop: about this long on a 2-core machine for the first
# design (with every mechanism); a later one, its module's `COMPILE_S` (its own handlers and mechanisms, the rest
# loaded from the cache). benchmarks/compile.py, 2026-11-29, with the model handed over by reference
# (`sim.engines.model_ref`): each design's first use less its warm run, CPU (cas 35.5 - 1.5 s; cas_queue and cas
# after another design scaled by the series' ratio, 116 / 193 s against the checkout before). `sim run` and a sweep
# compile a design on two cores (`compile_designs`): the first in 26.2 s of wall time, measured the same day; the
# later ones' figures are one core's, so the notice errs long for them
FIRST_COMPILE_S = 26


def cached_loops(design: str) -> list[str]:
    """The designs whose loops numba's cache holds (where `design`'s would be)."""
    loop = loop_for(design)
    cache = Path(getattr(getattr(loop, "_cache", None), "_cache_path", Path(__file__).parent / "__pycache__"))
    stem = Path(__file__).stem
    return [f.name[len(stem) + len(".loop_"):].rsplit("-", 1)[0] for f in cache.glob(f"{stem}.loop_*.nbi")]


def _compile_estimate_s(design: str) -> int:
    """The first design compiled on a machine compiles every mechanism; a later one, its own part."""
    others = [d for d in cached_loops(design) if d != design]
    return DESIGNS[design].COMPILE_S if others else FIRST_COMPILE_S


@contextlib.contextmanager
def compile_notice(design: str, say):
    """Say one line if anything compiles in here (numba's compile events): the first use of `design`."""
    said = []

    class _Listener(ev.Listener):
        def on_start(self, event):
            if not said:
                said.append(True)
                say(f"compiling the model for design {design} (first use after install, "
                    f"~{_compile_estimate_s(design)} s)")

        def on_end(self, event):
            pass

    with ev.install_listener("numba:compile", _Listener()):
        yield


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _one_compiler(design: str):
    """One process at a time compiles a design's loop on this machine (a lock file beside the cache): a second
    one waits, then loads what the first cached, instead of compiling the same thing side by side."""
    try:
        cache = Path(__file__).resolve().parent / "__pycache__"
        cache.mkdir(exist_ok=True)
        lock = open(cache / f"{Path(__file__).stem}.loop_{design}.lock", "w")
    except OSError:   # a read-only install: no lock
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _compile_step(design: str, args: tuple, parent_pid: int) -> None:
    """A helper process's part of a design's first compile: its `step` (the handlers, the larger half of the
    loop), into numba's cache, while the loop's own process compiles the engine's side (arrivals, writers and jobs,
    the draws' checks) and then loads the step from the cache. It ends with its parent (a sweep killed mid-compile)."""
    end_with_parent(parent_pid)
    DESIGNS[design].step.compile((args[0], types.int64, types.float64))


def compile_designs(configs, say=_say) -> list[str]:
    """Compile (or load from the cache) the loop of every design the configs run, in this process: a sweep's
    workers then load each from the cache instead of compiling it side by side. A design not cached yet is
    compiled on two cores: a helper process compiles its step meanwhile (`_compile_step`). Returns the designs."""
    first = {}
    for cfg in configs:
        first.setdefault(design_of_config(cfg), cfg)
    for design, cfg in first.items():
        eng = FastEngine(cfg, 0)
        sig = tuple(typeof(a) for a in eng.loop_args(eng._queue_room()))
        with _one_compiler(design):
            helper = None
            if design not in cached_loops(design):   # (started before the notice listens: it says it once)
                helper = multiprocessing.get_context("fork").Process(
                    target=_compile_step, args=(design, sig, os.getpid()))
                helper.start()
            with compile_notice(design, say):
                if helper is not None:
                    _compile_engine_side(sig[0])
                    helper.join()
                loop_for(design).compile(sig)
    return list(first)


def _compile_engine_side(model_type) -> None:
    """The loop's callees besides its design's step, into numba's cache, while a helper compiles the step."""
    i64, f64 = types.int64, types.float64
    for fn, sig in ((needs, ()), (events_before_refill, ()), (writers.on_due, (i64, f64)),
                    (writers.on_end, (i64, f64)), (arrivals.on_arrival, (f64,)), (arrivals.next_arrival, (f64,))):
        fn.compile((model_type, *sig))


class FastEngine(EngineBase):

    def loop_args(self, cap: int) -> tuple:
        """The loop's arguments at the start, its queue with room for `cap` events: the run's `Model` (its
        parameters as one record), the loop's state, the queue's arrays, the watchdog, the end."""
        m = ModelRef(self.r.m, _params_record(self.r.m.p))
        return (m, np.zeros(N_E, dtype=np.int64), *queue.new(cap), float(self.watchdog_ms),
                np.zeros(1, dtype=np.float64))

    def _queue_room(self) -> int:
        """Events the queue must hold: each transaction in flight (one per slot in use), each writer's next start,
        the arrivals, watchdog and stop."""
        return len(self.r.m.tx) + self.r.m.p.starters + 8

    def run(self) -> "FastEngine":
        r = self.r
        m, e, h_t, h_k, h_w, qs, watchdog_ms, end = self.loop_args(self._queue_room())
        params = m.params
        status = STATUS_DONE
        loop = loop_for(r.design)
        first = True
        while True:
            cap = self._queue_room()
            if status == STATUS_GROW:   # stale lock timers filled it
                cap = max(cap, 2 * int(qs[queue.CAP]))
            if qs[queue.CAP] < cap:   # the slots grew: so does the queue, between events
                h_t, h_k, h_w, qs = queue.grown(h_t, h_k, h_w, qs, int(e[E_HEAP]), cap)
            args = (ModelRef(r.m, params), e, h_t, h_k, h_w, qs, watchdog_ms, end)
            if first and not loop.signatures:   # its first call compiles the design's loop, or loads it
                first = False
                with _one_compiler(r.design), compile_notice(r.design, _say):
                    status = loop(*args)
            else:
                status = loop(*args)
            if status == STATUS_DONE:
                break
            if status == STATUS_EMPTY:
                raise RuntimeError("no scheduled events left before the run ended")
            if status == STATUS_NEED:
                r.refill(int(e[E_NEED]), queue.time_ms(qs))
        r.finish(end[0])
        return self
