"""The one entry point engines call: run transaction j's handler for the effect point it waits at."""
from . import fs_table, log, rewrite, server
from .jit import handler
from .state import PC
from .transaction import first_read


@handler
def step(m, j, now):
    """The delay from `now` to transaction j's next effect point, or `transaction.DONE` if it ended. The
    default model's effect points are tested first; a version-file probe that misses answers its read at once,
    so the dispatch runs again for the effect point that read was for."""
    while True:
        pc = m.tx[j].pc
        if pc == PC.CAS:
            return rewrite.on_cas(m, j, now)
        if pc == PC.CONFLICT_READ:
            return rewrite.on_conflict_read(m, j, now)
        if pc == PC.REFRESH or pc == PC.BACKOFF_READ:
            return rewrite.on_refresh(m, j, now)
        if pc == PC.BASE:
            return rewrite.on_base_read(m, j, now)
        if pc == PC.LOG_CREATE:
            return log.on_create(m, j, now)
        if pc == PC.LOG_LIST:
            return log.on_list(m, j, now)
        if pc == PC.LOG_BASE:
            return log.on_log_base(m, j, now)
        if pc == PC.SRV_LOAD:                        # REST servers
            return server.on_load(m, j, now)
        if pc == PC.SRV_CAS:
            return server.on_cas(m, j, now)
        if pc == PC.REREAD:                          # the re-read before the CAS
            return rewrite.on_reread(m, j, now)
        if pc == PC.FS_HINT:                         # version files: the hint's GET, then probes
            return fs_table.on_hint(m, j, now)
        if pc == PC.FS_PROBE:
            delay = fs_table.on_probe(m, j, now)
            if delay != fs_table.ANSWERED:
                return delay
            continue                                 # a miss: tx.pc is now the read's own effect point
        return first_read(m, j)   # PC.INIT
