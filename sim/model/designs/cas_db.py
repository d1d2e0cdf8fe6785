"""A catalog in a SQL database that the client queries itself, each operation several round trips (docs/MODEL.md,
"Operations as database round trips"; `catalog.round_trips`): DuckLake on PostgreSQL (design ducklake-postgres), a
service pointer the client updates in a database transaction (PyIceberg's SqlCatalog).

Iceberg's client (`sim.model.iceberg`) reads and prepares; its reads are the round trips of `sim.model.round_trips`.
The commit is a statement that checks the row against the version the client's last read saw (DuckLake's batch,
which inserts the next snapshot id; the SqlCatalog's `UPDATE ... WHERE metadata_location = old`), at one of its
round trips. Where its change becomes visible at a later round trip (its COMMIT: `round_trips.commit.visible`), the
statement takes the row's lock at its effect point (`sim.model.capacity`: under `catalog.scope: global` the one
row every commit writes, else its table's) and holds it to the COMMIT's effect point, where the new version becomes
visible and the lock is released: a statement of another commit that meets the row meanwhile waits for that
COMMIT, then fails its check (PostgreSQL: an UPDATE or INSERT of a row or key another open transaction wrote waits
for it to end, then fails if it committed). The first statement wins. A loser's answer comes after its remaining
round trips (its ROLLBACK); it then reads again (`round_trips.conflict`; 0: not, the error says which conflict it
was) and sleeps its retry policy's delay before the read after the sleep.
"""
from .. import capacity, catalog, history, iceberg, pyiceberg
from ..jit import handler, model_function
from ..lock import no_timer
from ..operations import attempts_allowed
from ..retry import conflict_delay
from ..round_trips import start_commit
from ..state import PC, Outcome, Reason
from ..transaction import AGAIN, PARKED, end, next_read


@model_function
def _key(m, j):
    """The row a commit of transaction j writes: its table's, or under one catalog version every commit's (0)."""
    return catalog.object_of(m, m.tx[j].table)


@handler
def on_statement(m, j, now):
    """The commit's statement at its effect point: atomic (visible at once), or, where it stays open to a later
    COMMIT, under the row's lock (granted, or it waits for the holder's COMMIT)."""
    tx = m.tx[j]
    if not m.p.rt_hold:
        return _swap(m, j, now, m.p.cg * tx.op_latency_ms + tx.rt_after_ms, True)
    if capacity.lock_key(m, j, now, tx.table, _key(m, j)):
        return _checked(m, j, now, m.p.cg * tx.op_latency_ms)
    tx.pc = PC.DB_ROW_WAIT
    return PARKED


@handler
def on_row_granted(m, j, now):
    """A statement that waited for the row gets it (its holder committed or rolled back): its check runs now, its
    answer the rest of its round trip later."""
    return _checked(m, j, now, m.p.cg * m.tx[j].op_latency_ms)


@model_function
def _checked(m, j, now, answer_in):
    """Under the row's lock, the statement's check against the version the client's last read saw: it holds, and
    the COMMIT follows (the statement's answer `answer_in` from now, the round trips between, then the COMMIT's own
    to its effect point); or it fails, releasing the row at once (its rollback), and the attempt is lost."""
    tx = m.tx[j]
    t = tx.table
    tx.attempts += 1
    seq = catalog.read_seq(m, t)
    if seq == tx.seq:
        tx.pc = PC.DB_COMMIT
        return answer_in + tx.rt_mid_ms + m.p.f * tx.rt_visible_ms
    answer_in += tx.rt_after_ms
    if history.on(m):
        history.cas(m, now, j, t, seq, catalog.read_version(m, t), tx.seq, False, now + answer_in)
    capacity.unlock_key(m, j, now, t, _key(m, j), not m.p.scope_table)
    return _lost(m, j, now, answer_in)


@handler
def on_commit(m, j, now):
    """The COMMIT's effect point: the change the statement made under the row's lock becomes visible (the catalog
    moves), and the lock is released, to the first waiter."""
    tx = m.tx[j]
    answer_in = m.p.g * tx.rt_visible_ms + tx.rt_tail_ms
    delay = _swap(m, j, now, answer_in, False)
    capacity.unlock_key(m, j, now, tx.table, _key(m, j), not m.p.scope_table)
    return delay


@model_function
def _swap(m, j, now, answer_in, attempt):
    """The catalog's version moves now if it is still the one the client's last read saw (an attempt, where the
    statement is its own COMMIT): committed, answered `answer_in` from now, or lost."""
    tx = m.tx[j]
    t = tx.table
    if attempt:
        tx.attempts += 1
    ok = catalog.cas(m, j, t, tx.seq, now)
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), tx.seq, ok, now + answer_in)
        if ok and m.p.tables_max > 1:
            catalog.record_landed_too(m, j, now, now + answer_in)
    if ok:   # (PyIceberg deletes its failed attempts' files before the call returns: `sim.model.pyiceberg`)
        return end(m, j, now, Outcome.COMMITTED, Reason.NONE, pyiceberg.call_end_ms(m, j, True, now + answer_in))
    return _lost(m, j, now, answer_in)


@model_function
def _lost(m, j, now, answer_in):
    """A lost attempt, answered `answer_in` from now: out of attempts, or the read after it (none: the error told
    the conflict's class, v[t] moved or not), the sleep, and the read after the sleep."""
    tx = m.tx[j]
    if tx.attempts >= attempts_allowed(m, j):
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, pyiceberg.call_end_ms(m, j, False, now + answer_in))
    if m.p.rt_conflict_n > 0:
        return next_read(m, j, PC.CONFLICT_READ, answer_in)
    delay = conflict_delay(m, j, catalog.read_version(m, tx.table) != tx.prepared)
    tx.backoff_ms += delay
    return next_read(m, j, PC.BACKOFF_READ, answer_in + delay)


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`)."""
    while True:
        pc = m.tx[j].pc
        if pc == PC.CAS:
            return on_statement(m, j, now)
        if pc == PC.DB_COMMIT:
            return on_commit(m, j, now)
        if pc == PC.DB_ROW_WAIT:
            return on_row_granted(m, j, now)
        if pc == PC.COMMIT:
            return start_commit(m, j, PC.CAS, m.tx[j].commit_in_ms)
        delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            return delay


timer = no_timer   # a statement waits for the row's COMMIT with no timeout (PostgreSQL's lock_timeout is 0)


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached: after design cas's,
# 11.4 s of CPU on a loaded machine where cas's own cold compile took 44.7 s (22 s quiet: benchmarks/compile.py),
# so about 6 s quiet; the engine's `compiling the model ...` line quotes it
COMPILE_S = 6

OWNS = dict(effect_points=("DB_ROW_WAIT", "DB_COMMIT"), fields=(), params=(), sources=())
