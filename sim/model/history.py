"""Recording the history (docs/FORMATS.md, "History"): one row per catalog read, prepare, CAS, begin and end.

Callers pass the transaction's slot `j`; the row holds its id (`tx.txn`)."""
import numpy as np

from .jit import model_function
from .state import FALSE, NA, TRUE, Kind, Outcome, Reason


@model_function
def _row(m, kind, time, j, table, seq, version, expected, ok, base, vfrom, vto, answer, outcome, reason,
         attempts):
    _row_of(m, kind, time, m.tx[j].txn, table, seq, version, expected, ok, base, vfrom, vto, answer, outcome,
            reason, attempts)


@model_function
def _row_of(m, kind, time, txn, table, seq, version, expected, ok, base, vfrom, vto, answer, outcome, reason,
            attempts):
    r = m.run[0]
    n = r.hist_rows
    h = m.hist[n]
    h.kind = kind
    h.txn = txn
    h.table = table
    h.seq = seq
    h.version = version
    h.expected = expected
    h.ok = ok
    h.base_version = base
    h.validated_from = vfrom
    h.validated_to = vto
    h.outcome = outcome
    h.reason = reason
    h.attempts = attempts
    h.time_ms = time
    h.answer_ms = answer
    r.hist_rows = n + 1


@model_function
def on(m):
    return m.p.history


@model_function
def begin(m, now, j, t, max_attempts):
    _row(m, Kind.BEGIN, now, j, t, NA, NA, NA, FALSE, NA, NA, NA, np.nan, Outcome.NONE, Reason.NONE, max_attempts)


@model_function
def read(m, now, j, t, seq, v, answer):
    _row(m, Kind.READ, now, j, t, seq, v, NA, FALSE, NA, NA, NA, answer, Outcome.NONE, Reason.NONE, NA)


@model_function
def prepare(m, now, j, t, base, vfrom, vto):
    _row(m, Kind.PREPARE, now, j, t, NA, NA, NA, FALSE, base, vfrom, vto, np.nan, Outcome.NONE, Reason.NONE, NA)


@model_function
def cas(m, now, j, t, seq, v, expected, ok, answer):
    _row(m, Kind.CAS, now, j, t, seq, v, expected, TRUE if ok else FALSE, NA, NA, NA, answer, Outcome.NONE,
         Reason.NONE, NA)


@model_function
def landed_too(m, now, j, t, seq, v, expected, answer):
    """A commit over several tables landed on its other table t too, at its successful CAS: t's version is v now; it
    expected t at `expected` (a REST server's per-table requirement; NA under one catalog version, DuckLake's)."""
    _row(m, Kind.LANDED, now, j, t, seq, v, expected, TRUE, NA, NA, NA, answer, Outcome.NONE, Reason.NONE, NA)


@model_function
def throttled(m, now, j, t, seq, v, expected, answer):
    """A conditional write answered 429: it changed nothing and was no commit attempt."""
    _row(m, Kind.THROTTLED, now, j, t, seq, v, expected, FALSE, NA, NA, NA, answer, Outcome.NONE, Reason.NONE, NA)


@model_function
def fault(m, now, j, t, seq, v, expected, took_effect, reason, answer):
    """A commit request's fault at its effect point (`sim.model.faults`): its answer lost (`ok`: it took effect, its
    CAS row just before says whether it swapped) or a 5xx before it took effect (nothing changed, no attempt)."""
    _row(m, Kind.FAULT, now, j, t, seq, v, expected, TRUE if took_effect else FALSE, NA, NA, NA, answer, Outcome.NONE,
         reason, NA)


@model_function
def end(m, now, j, t, answer, outcome, reason, attempts):
    _row(m, Kind.END, now, j, t, NA, NA, NA, FALSE, NA, NA, NA, answer, outcome, reason, attempts)


@model_function
def store_write(m, now, j, t, ok, answer):
    """Delta's DynamoDB log store: an entry's completion PutItem at its effect point (not a commit attempt; it
    takes write capacity: `ok` if it found some, else it was throttled)."""
    _row(m, Kind.STORE_WRITE, now, j, t, NA, NA, NA, TRUE if ok else FALSE, NA, NA, NA, answer, Outcome.NONE,
         Reason.NONE, NA)


@model_function
def store_read(m, now, j, t, ok, answer):
    """Delta's DynamoDB log store: a read (a LIST's Query, an attempt's GetItem) at its effect point: `ok` if it
    found read capacity, else it was throttled."""
    _row(m, Kind.STORE_READ, now, j, t, NA, NA, NA, TRUE if ok else FALSE, NA, NA, NA, answer, Outcome.NONE,
         Reason.NONE, NA)


@model_function
def lock_write(m, now, j, t, k, ok):
    """A storage lock's write to its lock object (an acquire's or a release's conditional PUT) at its effect point:
    `ok` if it found a token of the object's mutation limit, else it was answered 429."""
    _row(m, Kind.LOCK_WRITE, now, j, t, k, NA, NA, TRUE if ok else FALSE, NA, NA, NA, np.nan, Outcome.NONE,
         Reason.NONE, NA)


@model_function
def lock_expired(m, now, txn, t, k):
    """A storage lock whose release failed expired: the release of its (ended) holder `txn`, at the first touch
    after its validity."""
    _row_of(m, Kind.LOCK_RELEASE, now, txn, t, k, NA, NA, FALSE, NA, NA, NA, np.nan, Outcome.NONE, Reason.NONE, 0)


@model_function
def lock(m, kind, now, j, t, k, ends_attempt):
    """A lock row (`Kind.LOCK_*`): lock k requested, granted, released or given up at its effect point; a given-up
    request that failed the commit attempt it was for (no re-request left) has `attempts` 1."""
    _row(m, kind, now, j, t, k, NA, NA, FALSE, NA, NA, NA, np.nan, Outcome.NONE, Reason.NONE, ends_attempt)
