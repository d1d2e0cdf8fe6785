"""Open-loop arrivals (docs/MODEL.md, "Workload"): gaps from one stream until the first that reaches
`duration_ms`; each arrival's table, operation and runtime were drawn ahead, in chunks (`sim.model.sources`)."""
from . import history
from .draws import take
from .jit import model_function
from .state import PC, ArrivalsAt, Src


@model_function
def next_arrival(m, now):
    """Draw the next gap: the delay to the next arrival, or to `duration_ms` when the gap reaches past it."""
    gap = take(m, Src.GAP)
    duration = m.p.duration_ms
    if now + gap >= duration:
        m.run[0].arrivals_next = ArrivalsAt.CLOSE
        return duration - now
    m.run[0].arrivals_next = ArrivalsAt.NEXT
    return gap


@model_function
def on_arrival(m, now):
    """The arrivals' pending event: a new transaction (the slot it takes, to start), or -1 when arrivals have
    ended (the run may then stop, once no window transaction is open)."""
    r = m.run[0]
    if r.arrivals_next == ArrivalsAt.CLOSE:
        r.arrivals_done = 1
        if r.open_in_window == 0:
            r.stop = 1
        return -1
    i = r.next_txn
    r.next_txn = i + 1
    a = i - r.arrivals_base
    f = r.free_slots - 1
    r.free_slots = f
    j = m.free[f]
    t = m.tables[a]
    inwin = m.p.window_lo_ms <= now < m.p.window_hi_ms
    tx = m.tx[j]
    tx.txn = i
    tx.table = t
    tx.is_vo = m.isvo[a]
    tx.in_window = 1 if inwin else 0
    tx.pc = PC.INIT
    tx.arrival_ms = now
    tx.runtime_ms = m.runtimes[a]
    if inwin:
        r.open_in_window += 1
    if history.on(m):
        history.begin(m, now, j, t, m.p.max_attempts)
    return j
