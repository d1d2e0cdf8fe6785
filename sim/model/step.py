"""The one entry point engines call: run transaction j's handler for the effect point it waits at."""
from . import log, rewrite
from .jit import handler
from .layout import PC_BACKOFFREAD, PC_BASE, PC_CAS, PC_FAILREAD, PC_L_BASE, PC_L_CREATE, PC_L_LIST, PC_REFRESH1, \
    PI_LOG, TI_PC
from .transaction import next_read


@handler
def step(m, j, now):
    """The delay from `now` to transaction j's next effect point, or `transaction.DONE` if it ended."""
    pc = m.tx_i[j, TI_PC]
    if pc == PC_CAS:
        return rewrite.on_cas(m, j, now)
    if pc == PC_FAILREAD:
        return rewrite.on_conflict_read(m, j, now)
    if pc == PC_REFRESH1 or pc == PC_BACKOFFREAD:
        return rewrite.on_refresh(m, j, now)
    if pc == PC_BASE:
        return rewrite.on_base_read(m, j, now)
    if pc == PC_L_CREATE:
        return log.on_create(m, j, now)
    if pc == PC_L_LIST:
        return log.on_list(m, j, now)
    if pc == PC_L_BASE:
        return log.on_log_base(m, j, now)
    # PC_INIT: the transaction has arrived and reads its base snapshot (a log's: LIST)
    return next_read(m, j, PC_L_BASE if m.pi[PI_LOG] != 0 else PC_BASE, 0.0)
