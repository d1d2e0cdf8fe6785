"""Delta's DynamoDB log store (docs/MODEL.md, "Delta on S3 with DynamoDB"; `log_store`): the requests it adds
around a Delta commit on S3, whose put-if-absent is a conditional PutItem in one DynamoDB table.

Its write capacity is one token bucket (WRITE_BUCKET, `sim.model.throttle`) shared by every table: the create takes
it at its effect point (`sim.model.delta`), and so does the completion PutItem after the commit (`on_complete`).
Its read capacity is another (READ_BUCKET): each LIST's Query of the newest entry and each attempt's GetItem of the
previous one take a unit at their effect points (`on_read`).
"""
import math

from . import history, throttle
from .draws import take
from .io import log_pages_ms
from .jit import handler, model_function
from .resend import GIVE_UP
from .state import PC, Outcome, Reason, Src
from .transaction import DONE, end, next_read, next_write, start, throttled_delay

WRITE_BUCKET = 0   # its table's write capacity (`sim.model.throttle`'s buckets: no other limit binds with a store)
READ_BUCKET = 1    # ... and its read capacity


@model_function
def query(m, j, before, after_ms, then):
    """A LIST of the log (`listFrom`) also Queries the store for its table's newest entry (a consistent Query), sent
    `before` ms from now: its effect point takes a read unit (`on_read`). Once it is answered the transaction goes on
    `after_ms` later: then LISTs (`then` LOG_LIST: a snapshot read whose first attempt refreshes), checks and creates
    (LOG_CREATE), or ends aborted (DONE: its checks found a conflict)."""
    tx = m.tx[j]
    tx.store_next = then
    tx.store_after_ms = after_ms
    return start(m, j, Src.LOG_STORE, PC.STORE_QUERY, before)


@model_function
def check_then_create(m, j, before):
    """Before its conditional PutItem (BaseExternalLogStore.write), from `before` ms from now: the entry is not in
    S3 yet (a HEAD), the previous entry's item (a consistent GetItem, `on_read`), then its file (a HEAD) and the
    entry's temp file (a PUT)."""
    tx = m.tx[j]
    before += take(m, Src.GET)
    tx.store_after_ms = take(m, Src.GET) + take(m, Src.PUT_ML)
    tx.store_next = PC.LOG_CREATE
    tx.gets += 2
    tx.puts += 1
    return start(m, j, Src.LOG_STORE, PC.STORE_GET, before)


@handler
def on_read(m, j, now):
    """A read's effect point (the Query, the GetItem): it takes a unit of the table's read capacity (a strongly
    consistent read of an item under 4 KB costs one). Throttled, the SDK resends it after its policy's sleep, or
    gives it up, and the commit fails (`throttled`: Delta retries only FileAlreadyExistsException). Answered, the
    transaction goes on where the read was for."""
    tx = m.tx[j]
    answer_in = m.p.g * tx.op_latency_ms
    ok = throttle.take_token(m, READ_BUCKET, now, m.p.read_rate_per_ms, m.p.read_burst, 0.0)
    if history.on(m):
        history.store_read(m, now, j, tx.table, ok, now + answer_in)
    if not ok:
        delay = throttled_delay(m, j, now, answer_in, m.p.f)
        if delay == GIVE_UP:
            return end(m, j, now, Outcome.ABORTED, Reason.THROTTLED, now + answer_in)
        return start(m, j, Src.LOG_STORE, tx.pc, answer_in + delay)
    tx.throttled_in_row = 0
    answer = answer_in + tx.store_after_ms
    if tx.pc == PC.STORE_GET:
        return next_write(m, j, PC.LOG_CREATE, answer)
    if math.isnan(tx.runtime_end_ms):                # the snapshot read's Query: the runtime follows it
        tx.runtime_end_ms = now + answer
    nxt = tx.store_next
    if nxt == PC.LOG_LIST:
        return next_read(m, j, PC.LOG_LIST, answer + log_pages_ms(m, j))
    if nxt == PC.DONE:
        return end(m, j, now, Outcome.ABORTED, Reason.VALIDATION, now + answer)
    return check_then_create(m, j, answer)


@model_function
def copy_then_complete(m, j, now, answer):
    """After its commit point: the temp file is copied to the entry's name (a GET and a PUT), then its item is
    marked complete (a PutItem, sent now: `on_complete` is its effect point). Returns the time from `now` to the
    completion's send, and to its effect point."""
    tx = m.tx[j]
    before = answer - now + take(m, Src.GET) + take(m, Src.PUT_ML)
    tx.gets += 1
    tx.puts += 1
    return before, start(m, j, Src.LOG_STORE, PC.LOG_COMPLETE, before)


@model_function
def awaits_completion(m, j):
    """The commit has ended (its record is final) but its completion PutItem is still to take effect: the slot
    stays in use until then."""
    tx = m.tx[j]
    tx.pc = PC.LOG_COMPLETE
    tx.throttled_in_row = 0


@handler
def on_complete(m, j, now):
    """The completion PutItem's effect point: it takes a unit of the table's write capacity; a throttled one is
    resent by the SDK (its later answers are past the commit's recorded end) or given up, which Delta ignores
    ("ignoring recoverable error": a reader repairs an incomplete entry)."""
    tx = m.tx[j]
    answer_in = m.p.g * tx.op_latency_ms
    ok = throttle.admit(m, WRITE_BUCKET, now)
    if history.on(m):
        history.store_write(m, now, j, tx.table, ok, now + answer_in)
    if not ok:
        delay = throttled_delay(m, j, now, answer_in, m.p.f)
        if delay != GIVE_UP:
            return start(m, j, Src.LOG_STORE, PC.LOG_COMPLETE, answer_in + delay)
    tx.pc = PC.DONE
    return DONE


OWNS = dict(effect_points=("LOG_COMPLETE", "STORE_QUERY", "STORE_GET"), fields=("store_next", "store_after_ms"),
            params=("log_store", "read_rate_per_ms", "read_burst"), sources=("LOG_STORE",))
