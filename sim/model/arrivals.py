"""Open-loop arrivals (docs/MODEL.md, "Workload"): gaps from one stream until the first that reaches
`duration_ms`; each arrival's table, operation and runtime were drawn ahead, in chunks (`sim.model.build`)."""
from . import history
from .draws import take
from .jit import model_function
from .layout import (ARR_CLOSE, ARR_NEXT, PC_INIT, PF_DURATION, PF_HI, PF_LO, PI_MAX_ATTEMPTS, S_GAP, ST_ARR_DONE,
                     ST_ARR_BASE, ST_ARR_PC, ST_FREE, ST_NEXT_TXN, ST_OPEN, ST_STOP, TF_ARRIVAL, TF_RUNTIME,
                     TI_INWIN, TI_ISVO, TI_PC, TI_TABLE, TI_TXN)


@model_function
def next_arrival(m, now):
    """Draw the next gap: the delay to the next arrival, or to `duration_ms` when the gap reaches past it."""
    gap = take(m.gaps, m, S_GAP)
    duration = m.pf[PF_DURATION]
    if now + gap >= duration:
        m.st[ST_ARR_PC] = ARR_CLOSE
        return duration - now
    m.st[ST_ARR_PC] = ARR_NEXT
    return gap


@model_function
def on_arrival(m, now):
    """The arrivals' pending event: a new transaction (the slot it takes, to start), or -1 when arrivals have
    ended (the run may then stop, once no window transaction is open)."""
    if m.st[ST_ARR_PC] == ARR_CLOSE:
        m.st[ST_ARR_DONE] = 1
        if m.st[ST_OPEN] == 0:
            m.st[ST_STOP] = 1
        return -1
    j = m.st[ST_NEXT_TXN]
    m.st[ST_NEXT_TXN] = j + 1
    a = j - m.st[ST_ARR_BASE]
    f = m.st[ST_FREE] - 1
    m.st[ST_FREE] = f
    s = m.free[f]
    t = m.tables[a]
    inwin = m.pf[PF_LO] <= now < m.pf[PF_HI]
    m.tx_i[s, TI_TXN] = j
    m.tx_i[s, TI_TABLE] = t
    m.tx_i[s, TI_ISVO] = m.isvo[a]
    m.tx_i[s, TI_INWIN] = 1 if inwin else 0
    m.tx_i[s, TI_PC] = PC_INIT
    m.tx_f[s, TF_ARRIVAL] = now
    m.tx_f[s, TF_RUNTIME] = m.runtimes[a]
    if inwin:
        m.st[ST_OPEN] += 1
    if history.on(m):
        history.begin(m, now, s, t, m.pi[PI_MAX_ATTEMPTS])
    return s
