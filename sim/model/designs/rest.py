"""A REST catalog server's commit, built from its parts (docs/MODEL.md, "REST servers"; `catalog.server`; the named
designs `rest` and `rest-lakekeeper`).

Every real server (Iceberg's reference server, Polaris, Lakekeeper) writes the new metadata.json itself inside
the commit call. A load (the client's loadTable or refresh, and the server's own load of the base) is a database
read, whose effect point captures the table's version, then, where the implementation does one, a GET of
metadata.json. The client's commit POST is:
- the server loads the base (an early effect point) and checks the client's requirement (the version its
  refresh saw) against it: a table that moved is a 409 at once, with no PUT;
- it PUTs the new metadata.json (the provider's size-aware table-metadata PUT), re-reads the row where the
  implementation does (a table that moved fails the commit there), then CASes the database row against that base
  (the late effect point);
- a lost CAS is retried as the implementation does: DELETE the file it wrote (where it does), sleep, re-load,
  re-check. For appends to one branch the re-check always fails (a version that moved never comes back), so a
  server retry only delays the 409.
Every database request takes a connection of the server's pool (`sim.model.capacity`): the client's loads the
read pool where the server has one; the server's load and CAS its (write) pool, each released at its answer.
Lakekeeper 0.9 (`row_locks`) runs one transaction instead: its load and updates (one request) take the table's row
lock, then it PUTs and COMMITs, holding its connection and the lock throughout; a commit that waited for the lock
finds the row changed (its check fails) and rolls back. Lakekeeper >= 0.10 (`row_hold`) writes metadata.json
first, then runs its commit transaction: its updates (one request: they take the row lock, and the last one is the
check) then its COMMIT (another), holding the lock between them; an update that finds the row locked waits for the
holder's COMMIT, as PostgreSQL's UPDATE at READ COMMITTED does, then checks the row as it is then. A request that
waited the pool's acquire timeout for a connection fails: the server answers 500, which the client does not retry.
On a 409 the Iceberg client sleeps its retry policy's delay, then refreshes (no read before the sleep), and
prepares and POSTs again. Request counts include the server's requests for the transaction: its database reads
(`catalog_reads`), metadata.json GETs (`gets`), PUTs (`puts`) and DELETEs (`deletes`).
"""
from .. import capacity, catalog, faults, growth, history, iceberg, pyiceberg
from ..capacity import SERVER_POOL
from ..draws import take
from ..jit import handler, model_function
from ..operations import attempts_allowed, requirement_holds, server_rebases
from ..retry import conflict_delay, delay_ms
from ..state import PC, Fault, Outcome, Reason, Src
from ..transaction import AGAIN, PARKED, end, next_read, pooled, start


@model_function
def post(m, j, before):
    """The client POSTs its commit `before` ms from now: the server's load of the base comes first. Whether the POST
    loses its answer or is answered 5xx is drawn as it goes out (`sim.model.faults`)."""
    tx = m.tx[j]
    tx.server_retries = 0
    tx.fault = faults.draw(m, j)
    if m.p.server_local:                             # the client's round trip; the server's load as it arrives
        return start(m, j, Src.READ, PC.SRV_LOAD, before)
    return _load(m, j, before)


@model_function
def _load(m, j, before):
    """The server loads the base `before` ms from now, on a connection of its pool (Lakekeeper 0.9: the first
    request of its one transaction, the load and its updates)."""
    return pooled(m, j, SERVER_POOL, Src.READ, PC.SRV_LOAD, before)


@model_function
def _rejected(m, j, now, answer_in):
    """The client gets a 409 `answer_in` ms from now: out of attempts, or its policy's sleep then a refresh (a
    table moved since the prepare counts as a table conflict)."""
    tx = m.tx[j]
    if tx.fault == Fault.LOST:
        return faults.lost(m, j, now, now + answer_in, -1)
    if tx.attempts >= attempts_allowed(m, j):
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, pyiceberg.call_end_ms(m, j, False, now + answer_in))
    delay = conflict_delay(m, j, catalog.read_version(m, tx.table) != tx.prepared)
    tx.backoff_ms += delay
    return next_read(m, j, PC.BACKOFF_READ, answer_in + delay)


@handler
def on_load(m, j, now):
    """The server's load of the base (first, or after a lost CAS): its database read's effect point. The
    client's requirement holds iff the table is still at the version its refresh saw: then PUT metadata.json
    (Lakekeeper 0.9: first its updates take the row lock) and CAS; else 409 (at the first load: the attempt's
    outcome; at a re-load: after the lost CAS)."""
    if m.p.server_local:
        return _local_load(m, j, now)
    tx = m.tx[j]
    t = tx.table
    first = tx.server_retries == 0
    tx.catalog_reads += 1
    seq = catalog.read_seq(m, t)
    answer_in = catalog.read_answer_ms(m, j, tx.op_latency_ms)   # (its load's metadata.json GET, if any)
    if first and tx.fault == Fault.ERROR:            # the server fails before its check: 500
        return faults.failed(m, j, now, now + answer_in, -1)
    if requirement_holds(m, j, seq):
        if seq != tx.seq:                            # an expiry, a schema change: applied to the table as it loaded it
            _rebased(m, j, now, seq, answer_in)
        if m.p.row_locks:
            capacity.keep(m, j, True)
            if capacity.lock_row(m, j, now, t):
                return _write_then_commit(m, j, now, answer_in)
            tx.pc = PC.SRV_ROW_WAIT
            return PARKED
        return _write_then_cas(m, j, now, answer_in)
    return _failed_requirement(m, j, now, seq, first, answer_in)


@model_function
def _failed_requirement(m, j, now, seq, first, answer_in):
    """The server's load found the table moved: 409 `answer_in` ms from now (at the first load: the attempt's
    outcome; at a re-load: after the lost CAS)."""
    tx = m.tx[j]
    t = tx.table
    if first:                                        # the attempt ends here: counted where its outcome is
        tx.attempts += 1
    if history.on(m):
        v = catalog.read_version(m, t)
        if first:
            history.cas(m, now, j, t, seq, v, tx.seq, False, now + answer_in)
        else:
            history.read(m, now, j, t, seq, v, now + answer_in)
    return _rejected(m, j, now, answer_in)


@model_function
def _local_load(m, j, now):
    """A server whose steps are local (SeaweedFS's: the table's filer entry holds its metadata) loads the table as
    the request arrives (its GetTable's first lookup is the effect point) and spends `load_latency` there; the
    requirement holds: it creates metadata.json and updates the entry up to its CAS (`commit_latency`), with no
    database request and no pool; else 409, the load's time and the way back later."""
    tx = m.tx[j]
    t = tx.table
    tx.catalog_reads += 1
    seq = catalog.read_seq(m, t)
    local = catalog.local_load_ms(m, t)
    if not requirement_holds(m, j, seq):
        return _failed_requirement(m, j, now, seq, tx.server_retries == 0, local + m.p.g * tx.op_latency_ms)
    if seq != tx.seq:                                # (an expiry, a schema change: as `on_load`)
        _rebased(m, j, now, seq, local)
    tx.puts += 1                                     # metadata.json, inline in the filer
    tx.pc = PC.SRV_CAS
    return local + take(m, Src.SRV_COMMIT) + m.p.srv_commit_per_version_ms * m.versions[t]


@model_function
def _rebased(m, j, now, seq, answer_in):
    """The server applies an update whose requirements do not pin the table's version (an expiry's, a schema
    change's) to the table as its load saw it: its metadata.json is prepared on that version, and its CAS
    expects it."""
    tx = m.tx[j]
    t = tx.table
    v = catalog.read_version(m, t)
    tx.seq = seq
    tx.prepared = v
    if history.on(m):
        history.read(m, now, j, t, seq, v, now + answer_in)
        history.prepare(m, now, j, t, v, -1, -1)


@model_function
def _write_then_cas(m, j, now, answer_in):
    """The requirement held: PUT metadata.json with no database request open, then (where the server does) re-read
    the row, then the database CAS, each on a connection of the pool."""
    tx = m.tx[j]
    tx.puts += 1
    put = answer_in + growth.put_metadata_ms(m, j, now)
    if m.p.server_reread:
        return pooled(m, j, SERVER_POOL, Src.READ, PC.SRV_REREAD, put)
    return _cas(m, j, put)


@model_function
def _cas(m, j, before):
    """The database CAS `before` ms from now, on a connection of the pool: one autocommit UPDATE, or (`row_hold`)
    the commit transaction's updates, its COMMIT to follow."""
    return pooled(m, j, SERVER_POOL, Src.CAS, PC.SRV_UPDATE if m.p.row_hold else PC.SRV_CAS, before)


@model_function
def _write_then_commit(m, j, now, answer_in):
    """Lakekeeper 0.9: its updates hold the row lock; it PUTs metadata.json inside its transaction, then COMMITs on
    the same connection (the CAS's effect point: the new version becomes visible and the lock is released)."""
    tx = m.tx[j]
    tx.puts += 1
    return start(m, j, Src.CAS, PC.SRV_CAS, answer_in + growth.put_metadata_ms(m, j, now))


@handler
def on_row_lock(m, j, now):
    """A transaction that waited for the table's row lock gets it (the holder committed or rolled back): its
    updates run now (Lakekeeper >= 0.10: `_checked`); a row that changed since its load matches nothing
    (ConcurrentUpdateError), and it rolls back, releasing the lock, and the server retries. Its answer comes the
    rest of its request later."""
    tx = m.tx[j]
    t = tx.table
    answer_in = m.p.g * tx.op_latency_ms
    if m.p.row_hold:
        return _checked(m, j, now, answer_in)
    seq = catalog.read_seq(m, t)
    if seq == tx.seq:
        return _write_then_commit(m, j, now, answer_in)
    _failed(m, j, now, seq, answer_in)
    capacity.unlock_row(m, j, now, t)
    capacity.keep(m, j, False)
    return _lost(m, j, now, answer_in)


@handler
def on_update(m, j, now):
    """Lakekeeper >= 0.10: its commit transaction's updates reach the table's rows: they take the row lock (the
    transaction keeps its connection to its COMMIT), or wait for it while another transaction holds it."""
    tx = m.tx[j]
    capacity.keep(m, j, True)
    if capacity.lock_row(m, j, now, tx.table):
        return _checked(m, j, now, m.p.g * tx.op_latency_ms)
    tx.pc = PC.SRV_ROW_WAIT
    return PARKED


@model_function
def _checked(m, j, now, answer_in):
    """Lakekeeper >= 0.10, under the row lock: the last update's check (`UPDATE tabular ... WHERE metadata_location
    IS NOT DISTINCT FROM old`). It holds: the COMMIT follows on the same connection (the CAS's effect point, where
    the lock is released). It does not (zero rows, ConcurrentUpdateError): the transaction rolls back, releasing the
    lock, and the server retries as for a lost CAS."""
    tx = m.tx[j]
    t = tx.table
    seq = catalog.read_seq(m, t)
    if seq == tx.seq:
        return start(m, j, Src.CAS, PC.SRV_CAS, answer_in)
    _failed(m, j, now, seq, answer_in)
    capacity.unlock_row(m, j, now, t)
    capacity.keep(m, j, False)
    return _lost(m, j, now, answer_in)


@handler
def on_reread(m, j, now):
    """The server's re-read of the row after its PUT (the reference server's and Polaris's doCommit): a table that
    moved since its load fails the commit here (CommitFailedException, retried as a lost CAS), else the CAS."""
    tx = m.tx[j]
    t = tx.table
    tx.catalog_reads += 1
    seq = catalog.read_seq(m, t)
    answer_in = m.p.g * tx.op_latency_ms
    if seq != tx.seq:
        _failed(m, j, now, seq, answer_in)
        return _lost(m, j, now, answer_in)
    if history.on(m):
        history.read(m, now, j, t, seq, catalog.read_version(m, t), now + answer_in)
    return _cas(m, j, answer_in)


@model_function
def _failed(m, j, now, seq, answer_in):
    """The POST's check found the table moved (its re-read, or Lakekeeper 0.9's updates): the attempt is lost
    here, recorded as its failed CAS."""
    tx = m.tx[j]
    if tx.server_retries == 0 or server_rebases(m, j):
        tx.attempts += 1
    if history.on(m):
        t = tx.table
        history.cas(m, now, j, t, seq, catalog.read_version(m, t), tx.seq, False, now + answer_in)


@handler
def on_cas(m, j, now):
    """The server's database CAS against the base it loaded (Lakekeeper 0.9: its COMMIT, under the row lock, which
    it releases): committed, or a lost race that the server retries while it has retries left, else a 409."""
    tx = m.tx[j]
    t = tx.table
    if tx.server_retries == 0 or server_rebases(m, j):   # (a re-load's check never passes but for those)
        tx.attempts += 1
    expected = tx.seq
    ok = catalog.cas(m, j, t, expected, now)
    answer_in = m.p.g * tx.op_latency_ms
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, now + answer_in)
    if m.p.row_locks or m.p.row_hold:
        capacity.unlock_row(m, j, now, t)
        capacity.keep(m, j, False)
    if ok and tx.fault == Fault.LOST:
        return faults.lost(m, j, now, now + answer_in, -1)
    if ok:
        return end(m, j, now, Outcome.COMMITTED, Reason.NONE, pyiceberg.call_end_ms(m, j, True, now + answer_in))
    return _lost(m, j, now, 0.0 if m.p.server_local else answer_in)   # (a local CAS: the server goes on at once)


@model_function
def _lost(m, j, now, answer_in):
    """The server's commit failed its database check (its answer `answer_in` ms from now): it DELETEs the
    metadata.json it wrote (where it does), then retries (sleep, re-load) while it has retries left, else 409."""
    tx = m.tx[j]
    pending = answer_in
    if m.p.server_delete:
        tx.deletes += 1
        # (a local server's DeleteEntry: one filer request, bounded by a load's six)
        pending += catalog.local_load_ms(m, tx.table) if m.p.server_local else take(m, Src.DELETE)
    k = tx.server_retries + 1
    if k > m.p.server_retries:                       # (a local server's 409 still has its way back to go)
        return _rejected(m, j, now, pending + (m.p.g * tx.op_latency_ms if m.p.server_local else 0.0))
    tx.server_retries = k
    sleep = delay_ms(m, m.p.policy_server, m.p.jitter_server, m.bo_srv, k, Src.SERVER)
    if m.p.server_local:                             # the re-load is the server's own: no round trip, no pool
        tx.pc = PC.SRV_LOAD
        return pending + sleep
    return _load(m, j, pending + sleep)


@handler
def on_pool_timeout(m, j, now):
    """A request gave its wait for a connection up (sqlx's PoolTimedOut, Agroal's acquisition timeout): the server
    answers 500 (Lakekeeper's DatabaseError, Polaris's unmapped RuntimeException), after DELETEing the metadata.json
    it wrote if it had (its re-read or CAS waited; where it deletes). The client retries no 500 (a commit's is a
    CommitStateUnknownException, a load's a ServiceFailureException): the transaction ends aborted, `pool_timeout`.
    No database check ran, so no attempt is counted here (a server retry's attempt was, at its lost CAS)."""
    tx = m.tx[j]
    pc = tx.pool_pc
    answer_in = 0.0
    if m.p.server_delete and (pc == PC.SRV_REREAD or pc == PC.SRV_CAS or pc == PC.SRV_UPDATE):
        tx.deletes += 1
        answer_in = take(m, Src.DELETE)
    return end(m, j, now, Outcome.ABORTED, Reason.POOL_TIMEOUT, now + answer_in)


@handler
def step(m, j, now):
    """Transaction j's handler for the event it waits at (`sim.model.designs`): its pool's (asking for a
    connection, waiting for one, releasing it), or an effect point (and those it reaches at once, `AGAIN`), whose
    connection is released at its answer."""
    pc = m.tx[j].pc
    if capacity.owns(pc):
        return capacity.route(m, j, now, pc)
    if pc == PC.POOL_TIMEOUT:
        return on_pool_timeout(m, j, now)
    release_in = capacity.answer_in(m, j)
    while True:
        pc = m.tx[j].pc
        if pc == PC.SRV_LOAD:
            delay = on_load(m, j, now)
        elif pc == PC.SRV_CAS:
            delay = on_cas(m, j, now)
        elif pc == PC.SRV_REREAD:
            delay = on_reread(m, j, now)
        elif pc == PC.SRV_UPDATE:
            delay = on_update(m, j, now)
        elif pc == PC.SRV_ROW_WAIT:
            delay = on_row_lock(m, j, now)
        elif pc == PC.COMMIT:
            delay = post(m, j, m.tx[j].commit_in_ms)
        else:
            delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            return capacity.after_effect(m, j, release_in, delay)


timer = capacity.on_timer   # a request waiting for a connection: whether its pool's acquire timeout gives it up now


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached
# (benchmarks/compile.py, 2026-11-29): the engine's `compiling the model ...` line quotes it
COMPILE_S = 12

OWNS = dict(effect_points=("SRV_LOAD", "SRV_CAS", "SRV_REREAD", "SRV_ROW_WAIT", "SRV_UPDATE", "POOL_TIMEOUT"),
            fields=("server_retries",),
            params=("server", "server_get", "server_retries", "policy_server", "jitter_server", "server_reread",
                    "server_delete", "row_locks", "row_hold", "server_local", "srv_load_per_version_ms",
                    "srv_commit_per_version_ms"),
            sources=("SERVER", "SRV_LOAD", "SRV_COMMIT"))
