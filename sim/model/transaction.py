"""One transaction's life, whatever its commit protocol (docs/MODEL.md, "One transaction").

Other transactions can observe a transaction only where it touches the catalog (or a table's log): a read's
capture and a conditional write's check-and-swap. A transaction is therefore a state machine whose states
(`PC`) are "waiting for the effect point of my next catalog operation". Each design (`sim.model.designs`)
has one handler per effect point; a handler runs at that effect point and returns the time from `now` to the
transaction's next one: everything in between (the rest of a round trip, the runtime, a backoff sleep, a whole
prepare with its GETs and PUTs) touches no shared state and is summed into that one delay. A transaction that
ends is left in `PC.DONE` and its handler returns `DONE`. Its design's `step` dispatches; engines own time and
order and call it when the delay has passed.

This module holds the steps every protocol shares: the start, catalog reads, starting a conditional write, a 429
from a throttled object, a validation's real conflicts, the end.
"""
import numpy as np

from . import catalog, history, round_trips, throttle
from .draws import take
from .jit import model_function
from .operations import attempts_allowed
from .resend import GIVE_UP, next_delay_ms
from .state import PC, Outcome, Reason, Src


@model_function
def begin(m, now, writer):
    """A new transaction starts now (an open-loop arrival, writer -1, or `writer`'s next): the slot it takes. Its
    table, operation, partitions and runtime are the next drawn arrival's, drawn ahead (a writer that owns a table
    commits to it instead)."""
    r = m.run[0]
    drawn = m.arrivals[r.drawn_next - r.arrivals_base]
    r.drawn_next += 1
    t = drawn.table
    if writer >= 0 and m.p.owned:
        t = writer % m.p.num_tables
    j = opened(m, now, writer, -1, t, drawn.op, drawn.parts, drawn.runtime_ms)
    if m.p.tables_max > 1 or m.p.mt_ref:
        _spans(m, j, r.drawn_next - 1 - r.arrivals_base, drawn.ntables)
    return j


@model_function
def _spans(m, j, a, k):
    """Transaction j's commit spans k tables (`workload.multi_table`): its first, then drawn arrival a's others."""
    K = m.p.tables_max
    m.tx[j].ntables = k
    m.mt_table[j * K] = m.tx[j].table
    for i in range(1, k):
        m.mt_table[j * K + i] = m.arr_more[a * (K - 1) + i - 1]


@model_function
def opened(m, now, writer, job, t, op, parts, runtime_ms):
    """Transaction with the next id opens now on table t, its operation, partitions and runtime given: the slot it
    takes. A writer's (`writer` >= 0), a maintenance job's (`job` >= 0, `sim.model.jobs`) or an arrival's."""
    return opened_at(m, now, now, writer, job, t, op, parts, runtime_ms)


@model_function
def opened_at(m, now, arrived_ms, writer, job, t, op, parts, runtime_ms):
    """`opened`, for a transaction that arrived at `arrived_ms` (<= now: a trace's row that waited for its writer,
    `sim.model.trace`): the window counts it by that arrival."""
    r = m.run[0]
    i = r.next_txn
    r.next_txn = i + 1
    f = r.free_slots - 1
    r.free_slots = f
    j = m.free[f]
    inwin = m.p.window_lo_ms <= arrived_ms < m.p.window_hi_ms
    tx = m.tx[j]
    tx.txn = i
    tx.table = t
    tx.op = op
    tx.parts = parts
    tx.in_window = 1 if inwin else 0
    tx.pc = PC.INIT
    tx.arrival_ms = now
    tx.runtime_ms = runtime_ms
    tx.writer = writer
    tx.job = job
    tx.client_tokens = m.p.client_burst      # under open-loop arrivals a transaction is its own client
    tx.client_last_ms = -np.inf
    if inwin:
        r.open_in_window += 1
    if history.on(m):
        history.begin(m, now, j, t, attempts_allowed(m, j))
    return j


@model_function
def first_read(m, j, pc):
    """INIT: the transaction reads its base snapshot (a log's: LIST), handled at `pc`; the microbenchmark's first
    read of a storage object is a HEAD (the profile's own, else a GET draw), then the GET. Where the client's
    conditional write expects the HEAD's version (`head_version`), the HEAD is the read that captures it, and the
    GET is the prepare's (`sim.model.iceberg.prepare`)."""
    if m.p.head_version:
        return start(m, j, Src.HEAD, pc, 0.0)
    head = 0.0
    if m.p.head:
        head = take(m, Src.HEAD) if m.p.own_head else take(m, Src.GET)
        m.tx[j].gets += 1
    return next_read(m, j, pc, head)


@model_function
def real_conflict(m, n):
    """Whether n newly validated snapshots (or log entries, or timeline instants) hold a real conflict
    (vo_conflict_probability each)."""
    return m.p.vo_conflicts and n > 0 and take(m, Src.CONFLICT) < m.thr[min(n, len(m.thr) - 1)]

DONE = -1.0     # a handler's answer for a transaction that ended
AGAIN = -2.0    # ... for one whose next effect point is now: `tx.pc` says which (its design's `step` runs it at once)
PARKED = -3.0   # ... for one that waits with no event of its own until another wakes it (a FIFO lock's waiter)


@model_function
def read_catalog(m, j, now, L):
    """A catalog read's effect point (a LIST of t's log, for the log protocol): capture the version the next
    conditional write must expect, and v[t]; the caller learns them at now + (1 - f) L."""
    tx = m.tx[j]
    t = tx.table
    seq = catalog.read_seq(m, t)
    v = catalog.read_version(m, t)
    tx.seq = seq
    tx.version = v
    tx.catalog_reads += 1
    if history.on(m):
        history.read(m, now, j, t, seq, v, now + (m.p.g * L + tx.rt_after_ms if m.p.rt_ops else m.p.g * L))
    return v


@model_function
def next_read(m, j, pc, before):
    """Start a catalog read `before` ms from now: the delay to its effect point, where `pc` handles it. With
    version files the read is a chain of GETs (`sim.model.designs.fs_table`), the version hint's then probes, whose
    last one hands its answer to `pc`."""
    if m.p.version_files:
        m.tx[j].after_read = pc
        pc = PC.FS_HINT
    if m.p.server and not m.p.server_local:   # a REST server's load: a database read on a connection of its pool
        return pooled(m, j, m.p.client_pool, Src.READ, pc, before)
    if m.p.rt_ops:                 # the client's own round trips to the catalog's database
        return round_trips.start_read(m, j, pc, before)
    return start(m, j, Src.READ, pc, before)


@model_function
def pooled(m, j, k, src, pc, before):
    """Start a request (latency source `src`, effect point `pc`) on a connection of a server's pool k `before` ms
    from now: first it asks the pool for one (`sim.model.capacity`), and waits there while none is free."""
    tx = m.tx[j]
    tx.pool_ask = k
    tx.pool_src = src
    tx.pool_pc = pc
    tx.pc = PC.POOL_ACQUIRE
    return before


@model_function
def probe(m, j, name, before):
    """Start an exists() probe of version file `name` `before` ms from now (a GET-profile draw; on a file system
    its HEAD: getFileInfo, stat)."""
    m.tx[j].probe = name
    return start(m, j, Src.HEAD if m.p.file_system else Src.READ, PC.FS_PROBE, before)


@model_function
def before_create_ms(m, j, temp):
    """What a file system's create-if-absent sends before its atomic step (`storage.create_if_absent`; the step is
    the conditional write, `next_write`): by rename, an exists() check (a HEAD; a name found there fails at the
    rename in the model), then, if the bytes are not yet in a file (`temp`: a log entry), the temp file's PUT; by
    hard link, that PUT alone. An object store's conditional PUT sends nothing before."""
    ms = 0.0
    tx = m.tx[j]
    if m.p.create_exists:
        ms += take(m, Src.HEAD)
        tx.gets += 1
    if temp and m.p.file_system:
        ms += take(m, Src.PUT_ML)
        tx.puts += 1
    return ms


@model_function
def next_write(m, j, pc, before):
    """Start a conditional write (a CAS, or a log entry's put-if-absent) `before` ms from now: its effect point
    is where its store checks it (`m.p.cf` of its latency)."""
    L = take(m, Src.CAS)
    tx = m.tx[j]
    tx.op_latency_ms = L
    tx.pc = pc
    return before + m.p.cf * L


@model_function
def start(m, j, src, pc, before):
    """Start a request drawn from source `src` `before` ms from now: the delay to its effect point, where `pc`
    handles it."""
    L = take(m, src)
    tx = m.tx[j]
    tx.op_latency_ms = L
    tx.pc = pc
    return before + m.p.f * L


@model_function
def admitted(m, j, now, slot):
    """A conditional write's effect point, first: does the object (bucket `slot`) have a token
    (`sim.model.throttle`)? If not, the request is throttled (`resend` says when it comes back)."""
    if throttle.on(m) and not throttle.admit_from(m, slot, j, now):
        return False
    m.tx[j].throttled_in_row = 0
    return True


@model_function
def resend(m, j, now):
    """A conditional write answered 429: nothing changed and no attempt was used. The storage client resends it
    after its policy's sleep (`storage.throttle_retry`; `sim.model.resend`), or gives it up, and the transaction
    ends aborted (`throttled`): neither delta-rs nor Iceberg retries a commit on a storage error."""
    tx = m.tx[j]
    t = tx.table
    answer_in = m.p.cg * tx.op_latency_ms
    if history.on(m):
        history.throttled(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), tx.seq,
                          now + answer_in)
    delay = throttled_delay(m, j, now, answer_in, m.p.cf)
    if delay == GIVE_UP:
        return end(m, j, now, Outcome.ABORTED, Reason.THROTTLED, now + answer_in)
    return next_write(m, j, tx.pc, answer_in + delay)


@model_function
def throttled_delay(m, j, now, answer_in, f):
    """Transaction j's request, which took effect at `f` of its latency, was answered 429 `answer_in` from now:
    counted, and the client's sleep before its resend, or GIVE_UP (`sim.model.resend`)."""
    tx = m.tx[j]
    tx.throttled += 1
    k = tx.throttled_in_row + 1
    tx.throttled_in_row = k
    if k == 1:
        tx.request_sent_ms = now - f * tx.op_latency_ms
    return next_delay_ms(m, j, k, now + answer_in - tx.request_sent_ms)


@model_function
def end(m, j, now, outcome, reason, end_ms):
    """The transaction ends (committed or aborted); the run may stop once every window transaction has."""
    tx = m.tx[j]
    tx.pc = PC.DONE
    tx.outcome = outcome
    tx.reason = reason
    tx.end_ms = end_ms
    if history.on(m):
        history.end(m, now, j, tx.table, end_ms, outcome, reason, tx.attempts)
    if tx.in_window != 0:
        r = m.run[0]
        r.open_in_window -= 1
        if r.open_in_window == 0 and r.arrivals_done != 0:
            r.stop = 1
    return DONE
