"""The one entry point engines call: run transaction j's handler for the effect point it waits at."""
from . import fs_table, hive, hudi, lock, log, rewrite, server
from .jit import handler
from .state import PC
from .transaction import AGAIN, first_read


@handler
def step(m, j, now):
    """The delay from `now` to transaction j's next effect point, `transaction.DONE` if it ended, or
    `transaction.PARKED` if it waits for another to wake it. The default model's effect points are tested first;
    a handler that answers `AGAIN` (a version-file probe that misses answers its read at once; a lock granted or
    released hands the transaction to its design's next step) has set the effect point that runs now."""
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
        if pc == PC.LOG_COMPLETE:                    # Delta's DynamoDB log store: the completion PutItem
            return log.on_complete(m, j, now)
        if pc == PC.FS_PROBE:
            delay = fs_table.on_probe(m, j, now)
        elif pc >= PC.LOCK_REQUEST:                  # locks and the designs that take them
            delay = _locked(m, j, now, pc)
        elif m.p.hudi:                               # PC.INIT
            return hudi.begin(m, j)
        else:
            return first_read(m, j)   # PC.INIT
        if delay != AGAIN:
            return delay


@handler
def _locked(m, j, now, pc):
    if pc == PC.LOCK_REQUEST:
        return lock.on_request(m, j, now)
    if pc == PC.LOCK_POLL:
        return lock.on_poll(m, j, now)
    if pc == PC.UNLOCK:
        return lock.on_unlock(m, j, now)
    if pc == PC.LOCK_WAIT:
        return lock.on_wait(m, j, now)
    if pc == PC.LOCK_CANCEL:
        return lock.on_cancel(m, j, now)
    if pc == PC.HIVE_LOCKED:                         # Iceberg on the Hive Metastore
        return hive.on_locked(m, j, now)
    if pc == PC.HIVE_CHECK:
        return hive.on_check(m, j, now)
    if pc == PC.HIVE_ALTER:
        return hive.on_alter(m, j, now)
    if pc == PC.HIVE_UNLOCKED:
        return hive.on_unlocked(m, j, now)
    if pc == PC.HUDI_START_LOCKED:                   # Hudi
        return hudi.on_start_locked(m, j, now)
    if pc == PC.HUDI_STARTED:
        return hudi.on_started(m, j, now)
    if pc == PC.HUDI_LOCKED:
        return hudi.on_locked(m, j, now)
    if pc == PC.HUDI_CHECK:
        return hudi.on_check(m, j, now)
    if pc == PC.HUDI_COMMIT:
        return hudi.on_commit(m, j, now)
    return hudi.on_failed(m, j, now)   # PC.HUDI_FAILED
