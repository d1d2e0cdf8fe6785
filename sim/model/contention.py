"""Concurrent conditional writes to one object (docs/model/concurrent-writes.md; design cas_contended): what a store
does to a write that another write to the same object overlaps, as its provider's measured set says.

- A busy store (Azure, `busy_share`): a conditional write that reaches its check while another write to its object
  is in flight (sent, not yet answered) is answered 5xx with probability `busy_share`, changes nothing, is no
  attempt, and is resent by the store's client on its own schedule (`sim.model.resend`, `busy_error_retry`; given
  up, the transaction ends `throttled`). Its send is an event (`CAS_SEND`), where the object's writes in flight are
  booked: the latest answer of those sent and whose it is, and the latest of the others' (`Model.bk`), so a check
  knows in O(1) whether another write is in flight. (A 429's or a fault's resend goes out as in design cas, with no
  send event: it is not booked. No shipped profile has both.)
- A late loser (S3 Express, `loser_answer_ms`): a conditional write that fails its check is answered that much
  after its latency says.
- An object that reads empty mid-write (ADLS Gen2's upload of `upload_requests`, `empty_reads`: the microbenchmark's
  write, checked in its first request, `sim.model.params`): from a successful conditional write's check to its
  answer (Create replaced the object with an empty file; Append and Flush follow) a read finds it empty, and the
  microbenchmark's client, which checks the length its HEAD and its GET read, fails the operation at that read's
  answer (`empty_read`). Its HEAD is an effect point of its own (`HEAD_CHECK`).
"""
from . import catalog, faults, history
from .draws import take
from .jit import handler, model_function
from .operations import attempts_allowed
from .resend import GIVE_UP
from .state import PC, Fault, Outcome, Reason, Src
from .transaction import admitted, end, next_read, resend, throttled_delay


@model_function
def send_in(m, j, before):
    """Transaction j's conditional write goes out `before` ms from now: its send is an event (`CAS_SEND`)."""
    m.tx[j].pc = PC.CAS_SEND
    return before


@handler
def on_send(m, j, now):
    """The write's send: its latency drawn; on a busy store, booked among its object's writes in flight. Its check
    is `cf` of its latency on (`CAS`)."""
    L = take(m, Src.CAS)
    tx = m.tx[j]
    tx.op_latency_ms = L
    if m.p.busy_share > 0.0:
        b = m.bk[catalog.object_of(m, tx.table)]
        answer = now + L
        if b.busy_slot == j:                         # its own earlier write, answered before this send
            b.busy_until_ms = answer
        elif answer > b.busy_until_ms:
            b.busy_next_ms = b.busy_until_ms
            b.busy_until_ms = answer
            b.busy_slot = j
        elif answer > b.busy_next_ms:
            b.busy_next_ms = answer
    tx.pc = PC.CAS
    return m.p.cf * L


@model_function
def overlapped(m, j, now):
    """Whether another conditional write to transaction j's object is in flight now (sent, not yet answered)."""
    b = m.bk[catalog.object_of(m, m.tx[j].table)]
    others = b.busy_next_ms if b.busy_slot == j else b.busy_until_ms
    return others > now


@model_function
def busy(m, j, now):
    """Whether the store answers j's write, at its check now, 5xx: another write to its object is in flight and the
    draw says so (one draw a write that met one)."""
    return m.p.busy_share > 0.0 and overlapped(m, j, now) and take(m, Src.BUSY) < m.p.busy_share


@model_function
def busy_resend(m, j, now):
    """j's write answered 5xx: nothing changed, no attempt used; its client resends it after its sleep (a send
    again), or gives it up and the transaction ends `throttled` (its resends are counted as a 429's)."""
    tx = m.tx[j]
    t = tx.table
    answer_in = m.p.cg * tx.op_latency_ms
    if history.on(m):
        history.throttled(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), tx.seq, now + answer_in)
    delay = throttled_delay(m, j, now, answer_in, m.p.cf)
    if delay == GIVE_UP:
        return end(m, j, now, Outcome.ABORTED, Reason.THROTTLED, now + answer_in)
    return send_in(m, j, answer_in + delay)


@handler
def on_cas(m, j, now):
    """The conditional write of the catalog object (or the table's pointer) at its check: a busy store's 5xx, a
    throttled object's 429, a fault, then the swap; a late loser's answer, an object that reads empty until a
    winner's answer."""
    if busy(m, j, now):
        return busy_resend(m, j, now)
    tx = m.tx[j]
    o = catalog.object_of(m, tx.table)
    if not admitted(m, j, now, o):
        return resend(m, j, now)
    resent = faults.resent(m, j)
    fault = faults.draw(m, j)
    if fault == Fault.ERROR:
        return faults.failed(m, j, now, now + m.p.cg * tx.op_latency_ms, PC.CAS)
    ok, answer = _swap(m, j, now, 0 if resent else 1)
    if fault == Fault.LOST:
        return faults.lost(m, j, now, answer, PC.CAS)
    if ok:
        if m.p.empty_reads:
            m.bk[o].empty_until_ms = answer
        return end(m, j, now, faults.committed(m, j), Reason.NONE, answer)
    if tx.attempts >= attempts_allowed(m, j):
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, answer)
    return next_read(m, j, PC.CONFLICT_READ, answer - now)


@model_function
def _swap(m, j, now, attempt):
    """`iceberg.swap`, a losing write answered `loser_answer_ms` late: whether it swapped, and its answer."""
    tx = m.tx[j]
    t = tx.table
    tx.attempts += attempt
    expected = tx.seq
    ok = catalog.cas(m, j, t, expected, now)
    answer = now + m.p.cg * tx.op_latency_ms
    if not ok:
        answer += m.p.loser_answer_ms
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, answer)
    return ok, answer


@model_function
def empty(m, j, now):
    """Whether transaction j's object reads empty now (a winner's write between its check and its answer)."""
    return now < m.bk[catalog.object_of(m, m.tx[j].table)].empty_until_ms


@model_function
def head(m, j):
    """INIT where reads may find the object empty: the microbenchmark's HEAD (the profile's own, else a GET draw),
    its effect point `HEAD_CHECK`."""
    L = take(m, Src.HEAD) if m.p.own_head else take(m, Src.GET)
    tx = m.tx[j]
    tx.gets += 1
    tx.op_latency_ms = L
    tx.pc = PC.HEAD_CHECK
    return m.p.f * L


@handler
def on_head(m, j, now):
    """The HEAD's effect point: the object empty, the client fails the operation at the HEAD's answer; else its
    GET (the base read, `PC.BASE`)."""
    L = m.tx[j].op_latency_ms
    if empty(m, j, now):
        return end(m, j, now, Outcome.ABORTED, Reason.EMPTY_READ, now + m.p.g * L)
    return next_read(m, j, PC.BASE, m.p.g * L)


@model_function
def read_empty(m, j, now):
    """The GET's effect point found the object empty: the client fails the operation at its answer."""
    return end(m, j, now, Outcome.ABORTED, Reason.EMPTY_READ, now + m.p.g * m.tx[j].op_latency_ms)
