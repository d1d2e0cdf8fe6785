"""Commit requests whose answer the client does not get (docs/MODEL.md, "Unknown outcomes"; `faults`).

A commit request (the conditional write of the catalog or of a log entry, a REST server's commit POST) may take
effect and lose its answer (a timeout: the client waits `faults.timeout_ms`, then gives the request up), or be
answered 5xx before it takes effect. What the client does next is its source's (`faults.client`):
- status_check (Iceberg on Glue and HMS, BaseMetastoreTableOperations.checkCommitStatus): one refresh, its new
  metadata searched among the current and the last previous-versions-max ones: found, committed; else unknown.
- reconcile (Iceberg's REST client): a 5xx is a CommitStateUnknownException, reconciled by one refresh when the
  commit adds one snapshot (RESTTableOperations): found, committed; else unknown. A timeout is a RESTException:
  unknown, unchecked.
- error (delta-rs; the JDBC catalog): the error goes to the caller: unknown.
- resend (Delta Spark on S3A or GCS; design `file`, its storage client taken as Google's Java client): the storage
  client resends the request; a resend that finds the commit already there fails like a conflict, and the client's
  conflict path meets its own change (`sim.model.iceberg`, `sim.model.delta`): a blind append commits it again
  (duplicated), an operation that read the table conflicts with it (unknown, `self_conflict`); Delta Spark's
  idempotency check, when on, takes its own entry for its success.
Every storage client resends a 5xx (object_store retries every 5xx, Google's and the AWS SDKs theirs), under the
policy and limits that resend a 429 (`storage.throttle_retry`); given up, the error goes to the caller: unknown.
"""
from . import catalog, growth, history
from .draws import take
from .jit import handler, model_function
from .resend import GIVE_UP, next_delay_ms
from .state import PC, Fault, Op, Outcome, Reaction, Reason, Src
from .transaction import end, next_read, next_write, read_catalog


@model_function
def draw(m, j):
    """The fault of transaction j's commit request at its effect point (`Fault`); none, and nothing drawn, without
    faults. A request answered ends its run of resends."""
    if not m.p.faults:
        return Fault.NONE
    u = take(m, Src.FAULT)
    tx = m.tx[j]
    f = Fault.NONE
    if u < m.p.lost_p:
        f = Fault.LOST
    elif u < m.p.lost_p + m.p.error_p:
        f = Fault.ERROR
    if f == Fault.NONE:
        tx.fault_in_row = 0
        return f
    tx.faults += 1
    tx.fault = f
    return f


@model_function
def resent(m, j):
    """Whether transaction j's conditional write at its effect point is its storage client's resend of a faulted
    request (no attempt of its client's)."""
    return m.p.faults and m.tx[j].fault_in_row > 0


@model_function
def _record(m, j, now, f, answer):
    """The history's row for a faulted request at its effect point (`ok`: it took effect, its answer lost)."""
    if history.on(m):
        tx = m.tx[j]
        t = tx.table
        reason = Reason.LOST_ANSWER if f == Fault.LOST else Reason.SERVER_ERROR
        history.fault(m, now, j, t, catalog.read_seq(m, t), catalog.read_version(m, t), tx.seq, f == Fault.LOST,
                      reason, answer)


@model_function
def lost(m, j, now, answer, pc):
    """Transaction j's commit request took effect now (swapped or not) and its answer, due at `answer`, is lost: the
    client's reaction once its timeout has passed. `pc`: the request's effect point, where a resend goes."""
    _record(m, j, now, Fault.LOST, answer)
    wait = answer - now + m.p.fault_timeout_ms
    r = m.p.reaction
    if r == Reaction.RESEND:
        return _resend(m, j, now, wait, pc, Reason.LOST_ANSWER)
    if r == Reaction.STATUS_CHECK:
        return next_read(m, j, PC.STATUS_CHECK, wait)
    return unknown(m, j, now, Reason.LOST_ANSWER, now + wait)


@model_function
def failed(m, j, now, answer, pc):
    """Transaction j's commit request is answered 5xx at `answer`, nothing changed: a storage client resends it; a
    service's client checks the status (Iceberg's REST client: for a commit that adds one snapshot), or fails."""
    _record(m, j, now, Fault.ERROR, answer)
    wait = answer - now
    r = m.p.reaction
    if m.p.resends_errors:
        return _resend(m, j, now, wait, pc, Reason.SERVER_ERROR)
    if r == Reaction.STATUS_CHECK or (r == Reaction.RECONCILE and adds_one_snapshot(m.tx[j].op)):
        return next_read(m, j, PC.STATUS_CHECK, wait)
    return unknown(m, j, now, Reason.SERVER_ERROR, now + wait)


@model_function
def adds_one_snapshot(op):
    """Whether a commit's updates are one snapshot's add (the REST client's reconcile applies): every operation's
    but an expiry's and a schema change's."""
    return op != Op.EXPIRE_SNAPSHOTS and op != Op.SCHEMA_CHANGE


@model_function
def _resend(m, j, now, wait, pc, reason):
    """The storage client resends the request `wait` ms from now plus its policy's sleep, or gives it up (its
    resends counted from the request's first send, as for a 429): the error goes to the caller."""
    tx = m.tx[j]
    k = tx.fault_in_row + 1
    tx.fault_in_row = k
    if k == 1:
        tx.fault_sent_ms = now - m.p.cf * tx.op_latency_ms
    delay = next_delay_ms(m, j, k, now + wait - tx.fault_sent_ms)
    if delay == GIVE_UP:
        return unknown(m, j, now, reason, now + wait)
    return next_write(m, j, pc, wait + delay)


@handler
def on_status_check(m, j, now):
    """The client's refresh after a lost answer or a 5xx: its read's effect point sees the table's version, then
    (where the client reads it) its metadata.json. It finds its commit iff that landed and at most the window's
    versions came after (Iceberg's status check: the current metadata and the metadata log's; REST's: the
    snapshots, every one): committed; else the outcome stays unknown."""
    tx = m.tx[j]
    L = tx.op_latency_ms
    v = read_catalog(m, j, now, L)
    answer = now + catalog.read_answer_ms(m, j, L)
    if not m.p.metadata_inlined:
        answer += growth.get_metadata_ms(m, tx.table)
        tx.gets += 1
    if tx.landings > 0 and v - tx.landed_v <= m.p.status_window:
        return end(m, j, now, committed(m, j), Reason.NONE, answer)
    reason = Reason.LOST_ANSWER if tx.fault == Fault.LOST else Reason.SERVER_ERROR
    return unknown(m, j, now, reason, answer)


@model_function
def committed(m, j):
    """A commit its client was told of: `duplicated` if its change landed more than once (a resend's doing)."""
    return Outcome.DUPLICATED if m.tx[j].landings > 1 else Outcome.COMMITTED


@model_function
def unknown(m, j, now, reason, end_ms):
    """The client ends without learning whether its change landed. One that never landed orphans what its last
    attempt wrote: its data (`faults.data_*`) and, on a catalog that is not a log, the manifest list and the
    metadata.json its client wrote. Nothing deletes them (Iceberg cleans only a known failure; a Delta client never
    its data) until an orphan-file sweep."""
    tx = m.tx[j]
    if tx.landings == 0:
        files = m.p.data_files
        size = m.p.data_bytes
        if not m.p.log and not m.p.file_lists_inlined:
            files += 1
            size += m.p.ml_bytes
        if not m.p.log and not m.p.metadata_inlined:
            files += 1
            size += tx.metadata_bytes if tx.metadata_bytes > 0.0 else m.p.tm_bytes
        tx.orphaned_files = files
        tx.orphaned_bytes = size
    return end(m, j, now, Outcome.UNKNOWN, reason, end_ms)


@model_function
def met_own(m, j, checked, v):
    """Whether transaction j's conflict check of versions (checked, v] meets its own landed change (a resend found
    it there)."""
    tx = m.tx[j]
    return tx.landings > 0 and checked < tx.landed_v <= v


OWNS = dict(effect_points=("STATUS_CHECK",),
            fields=("faults", "fault", "fault_in_row", "fault_sent_ms", "landings", "landed_v", "orphaned_files",
                    "orphaned_bytes"),
            params=("faults", "lost_p", "error_p", "fault_timeout_ms", "reaction", "resends_errors",
                    "idempotency_check", "status_window", "data_files", "data_bytes"),
            sources=("FAULT",))
