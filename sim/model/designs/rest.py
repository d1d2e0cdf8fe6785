"""A REST catalog server's commit, built from its parts (docs/MODEL.md, "REST servers"; `catalog.server`; the named
designs `rest` and `rest-lakekeeper`).

Every real server (Iceberg's reference server, Polaris, Lakekeeper) writes the new metadata.json itself inside
the commit call. A load (the client's loadTable or refresh, and the server's own load of the base) is a database
read, whose effect point captures the table's version, then, where the implementation does one, a GET of
metadata.json. The client's commit POST is:
- the server loads the base (an early effect point) and checks the client's requirement (the version its
  refresh saw) against it: a table that moved is a 409 at once, with no PUT;
- it PUTs the new metadata.json (the provider's size-aware table-metadata PUT), then CASes the database row
  against that base (the late effect point);
- a lost CAS is retried as the implementation does: sleep, re-load, re-check. For appends to one branch the
  re-check always fails (a version that moved never comes back), so a server retry only delays the 409.
On a 409 the Iceberg client sleeps its retry policy's delay, then refreshes (no read before the sleep), and
prepares and POSTs again. Request counts include the server's requests for the transaction: its database reads
(`catalog_reads`), metadata.json GETs (`gets`) and PUTs (`puts`).
"""
from .. import catalog, history, iceberg
from ..draws import take
from ..jit import handler, model_function
from ..lock import no_timer
from ..retry import conflict_delay, delay_ms
from ..state import PC, Outcome, Reason, Src
from ..transaction import AGAIN, end, next_read, next_write


@model_function
def post(m, j, before):
    """The client POSTs its commit `before` ms from now: the server's load of the base comes first."""
    m.tx[j].server_retries = 0
    return next_read(m, j, PC.SRV_LOAD, before)


@model_function
def _rejected(m, j, now, answer_in):
    """The client gets a 409 `answer_in` ms from now: out of attempts, or its policy's sleep then a refresh (a
    table moved since the prepare counts as a table conflict)."""
    tx = m.tx[j]
    if tx.attempts >= m.p.max_attempts:
        return end(m, j, now, Outcome.ABORTED, Reason.EXHAUSTED, now + answer_in)
    delay = conflict_delay(m, j, catalog.read_version(m, tx.table) != tx.prepared)
    tx.backoff_ms += delay
    return next_read(m, j, PC.BACKOFF_READ, answer_in + delay)


@handler
def on_load(m, j, now):
    """The server's load of the base (first, or after a lost CAS): its database read's effect point. The
    client's requirement holds iff the table is still at the version its refresh saw: then PUT metadata.json
    and CAS; else 409 (at the first load: the attempt's outcome; at a re-load: after the lost CAS)."""
    tx = m.tx[j]
    t = tx.table
    first = tx.server_retries == 0
    tx.catalog_reads += 1
    seq = catalog.read_seq(m, t)
    answer_in = catalog.read_answer_ms(m, j, tx.op_latency_ms)   # (its load's metadata.json GET, if any)
    if seq == tx.seq:
        tx.puts += 1
        return next_write(m, j, PC.SRV_CAS, answer_in + take(m, Src.PUT_TM))
    if first:                                        # the attempt ends here: counted where its outcome is
        tx.attempts += 1
    if history.on(m):
        v = catalog.read_version(m, t)
        if first:
            history.cas(m, now, j, t, seq, v, tx.seq, False, now + answer_in)
        else:
            history.read(m, now, j, t, seq, v, now + answer_in)
    return _rejected(m, j, now, answer_in)


@handler
def on_cas(m, j, now):
    """The server's database CAS against the base it loaded: committed, or a lost race that the server retries
    (sleep, then re-load) while it has retries left, else a 409."""
    tx = m.tx[j]
    t = tx.table
    if tx.server_retries == 0:                       # (a re-load's check never passes: see the module's doc)
        tx.attempts += 1
    expected = tx.seq
    ok = catalog.cas(m, t, expected)
    answer_in = m.p.g * tx.op_latency_ms
    if history.on(m):
        history.cas(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), expected, ok, now + answer_in)
    if ok:
        return end(m, j, now, Outcome.COMMITTED, Reason.NONE, now + answer_in)
    k = tx.server_retries + 1
    if k > m.p.server_retries:
        return _rejected(m, j, now, answer_in)
    tx.server_retries = k
    sleep = delay_ms(m, m.p.policy_server, m.p.jitter_server, m.bo_srv, k, Src.SERVER)
    return next_read(m, j, PC.SRV_LOAD, answer_in + sleep)


@handler
def step(m, j, now):
    """Transaction j's handler for the effect point it waits at (`sim.model.designs`)."""
    while True:
        pc = m.tx[j].pc
        if pc == PC.SRV_LOAD:
            return on_load(m, j, now)
        if pc == PC.SRV_CAS:
            return on_cas(m, j, now)
        if pc == PC.COMMIT:
            return post(m, j, m.tx[j].commit_in_ms)
        delay = iceberg.route(m, j, now, pc)
        if delay != AGAIN:
            return delay


timer = no_timer   # it takes no lock, so it sets no timer


OWNS = dict(effect_points=("SRV_LOAD", "SRV_CAS"), fields=("server_retries",),
            params=("server", "server_get", "server_retries", "policy_server", "jitter_server"), sources=("SERVER",))
