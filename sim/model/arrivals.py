"""Open-loop arrivals (docs/MODEL.md, "Workload"): gaps from one stream until the first that reaches
`duration_ms`; each arrival's table, operation and runtime were drawn ahead, in chunks (`sim.model.sources`)."""
from .draws import take
from .jit import model_function
from .state import ArrivalsAt, Src
from .transaction import begin


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
    return begin(m, now, -1)
