"""Delta's DynamoDB log store (docs/MODEL.md, "Delta on S3 with DynamoDB"; `log_store`): the requests it adds
around a Delta commit on S3, whose put-if-absent is a conditional PutItem in one DynamoDB table.

Its write capacity is one token bucket (bucket 0, `sim.model.throttle`) shared by every table: the create takes
it at its effect point (`sim.model.delta`), and so does the completion PutItem after the commit (`on_complete`).
"""
from . import history, throttle
from .draws import take
from .jit import handler, model_function
from .resend import GIVE_UP
from .state import PC, Src
from .transaction import DONE, start, throttled_delay


@model_function
def query_ms(m):
    """A LIST of the log (`listFrom`) also Queries the store for its table's newest entry."""
    return take(m, Src.LOG_STORE) if m.p.log_store else 0.0


@model_function
def before_create_ms(m, j):
    """Before its conditional PutItem (BaseExternalLogStore.write): the entry is not in S3 yet (a HEAD), the
    previous entry's item (a consistent GetItem) and its file (a HEAD), the entry's temp file (a PUT)."""
    tx = m.tx[j]
    ms = take(m, Src.GET) + take(m, Src.LOG_STORE) + take(m, Src.GET) + take(m, Src.PUT_ML)
    tx.gets += 2
    tx.puts += 1
    return ms


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
    ok = throttle.admit(m, 0, now)
    if history.on(m):
        history.store_write(m, now, j, tx.table, ok, now + answer_in)
    if not ok:
        delay = throttled_delay(m, j, now, answer_in, m.p.f)
        if delay != GIVE_UP:
            return start(m, j, Src.LOG_STORE, PC.LOG_COMPLETE, answer_in + delay)
    tx.pc = PC.DONE
    return DONE


OWNS = dict(effect_points=("LOG_COMPLETE",), fields=(), params=("log_store",), sources=("LOG_STORE",))
