"""Independent invariant checker for recorded histories (`history.parquet`).

The checker replays the recorded events with its own catalog state (seq = 0, v[t] = 0 at the start)
and compares every recorded observation against that replay (`Replay`: one method per history kind,
`finish` for what only the whole history shows). It deliberately imports nothing from
the simulator: a bug in the engine's bookkeeping must not be able to hide itself by also being
in the checker. Only the standard library, numpy and pandas are used.

Invariants (numbers as in docs/MODEL.md, "History and invariants"):

0. format: required columns, unique `i`, known kinds, events on the table the transaction began on.
1. CAS: a successful CAS expected the replayed seq at its effect point, a failed one did not; the
   recorded seq/version after every CAS equal the replayed ones; a CAS expects the seq its
   transaction last read; successful CASes number 1..N without gaps (final seq == N).
2. final v[t] equals the successful CASes on t; aborted/unfinished transactions changed nothing.
3. every transaction begins once, ends exactly once (with a valid outcome and reason), has no events
   before its begin or after its end, commits iff it has exactly one successful CAS, and makes no
   more CAS attempts than allowed (and as many as its end row says); one that ends `throttled` (its
   storage client gave a request up) had its last conditional write answered 429.
4. serializability: a successful CAS installs metadata prepared on the version it replaces (no lost
   update); a VO validated every snapshot between its base read and the version it replaced; in seq
   order each table's committed versions run 1, 2, 3, ...
5. reads return exactly the replayed state at their effect point (neither from the future nor
   stale); answers come no earlier than effect points; time never goes backwards in `i` order; a
   transaction does not act before it has learned the answer of its previous catalog operation.
6. per-object mutation limit (only when `mutation_rate_per_s` is given): every `cas` row (ok or not)
   found a token in its object's bucket (refilled at the rate up to the burst; a fresh name starts
   full) and took it; every `throttled` row found none.
7. locks (only when `lock_scope` is given): at most one holder of a lock at any instant (a grant only
   of a free lock, a release only by its holder); under a FIFO discipline (`lock_fifo`) grants in
   request order, a given-up request leaving the queue; every successful CAS made by the holder of its
   table's lock; a lock row names its lock (`seq`: the table, or 0 for the one global lock).

Catalog designs (MODEL.md "Catalog designs"), chosen by the keyword arguments of `check_history`:
- `scope="global"` (default): one global seq; a CAS expects seq and fails on any commit.
- `scope="table"`: one pointer per table; `read`/`cas`/`throttled` rows record seq = version = v[t];
  a CAS to t expects v[t] and only commits to t make it fail. Invariant 1 runs per table.
- `protocol="log"` (always per table): reads are LISTs of t's log, a `cas` is the put-if-absent of
  entry expected+1, and `prepare` rows carry the entries checked, for FA as well as VO; a committed
  transaction of either op must have checked every entry between its base read and the one it
  replaced. The base read counts as a prepare with nothing checked at its version (stale first
  attempt without a prepare row).
- `version_files=True` (scope table, rewrite): a `cas` creates version file expected+1 of its table, a name
  of its own per version (invariant 6's buckets, as the log's entries).
- `reread_before_cas=True` (scope global, rewrite): a read right after a prepare is the attempt's re-read;
  if it sees the table moved since that prepare, the attempt failed there, without a CAS (invariant 3 counts
  it as an attempt).
- `log_store=True` (Delta's DynamoDB log store, protocol log): the limit of invariant 6 is the store's
  table's write capacity, one bucket for every table; `store_write` rows (an entry's completion write,
  after its commit: allowed after its transaction's end) take from it too, `ok` if they found capacity.
- `lock_scope="table"|"global"` (a commit lock, `lock_fifo` for its FIFO disciplines): `lock_request`,
  `lock_grant`, `lock_release` and `lock_timeout` rows replay the locks; a release may follow its
  transaction's end (its commit ended the transaction; the unlock takes effect after), and a
  `lock_timeout` whose `attempts` is 1 failed a commit attempt (counted as one, as a CAS). With
  `lock_object=True` (Hudi's storage lock) `lock_write` rows are its object's conditional PUTs: invariant
  6 replays them on the object's bucket; a release whose PUT was throttled leaves the lock held until it
  expires, and its `lock_release` comes at the first grant after.
`throttled` rows (a conditional write answered 429) change nothing, are not attempts, and follow
the ordering rules of `cas` rows. Invariant numbers are those of MODEL.md; 6 is the checker's own.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import NamedTuple

import pandas as pd

__all__ = ["Violation", "check_history", "load_history", "format_violation", "REQUIRED_COLUMNS"]

REQUIRED_COLUMNS = (
    "i", "kind", "time_ms", "txn", "table", "op", "seq", "version", "expected", "ok",
    "base_version", "validated_from", "validated_to", "answer_ms", "outcome", "reason", "attempts",
)
LOCK_KINDS = {"lock_request", "lock_grant", "lock_release", "lock_timeout", "lock_write"}
KINDS = {"begin", "read", "prepare", "cas", "throttled", "end", "final", "store_write"} | LOCK_KINDS
SCOPES = ("global", "table")
PROTOCOLS = ("rewrite", "log")
OUTCOMES = {"committed", "aborted", "unfinished"}
ABORT_REASONS = {"retries_exhausted", "validation_failed", "throttled", "lock_timeout"}
# Float slack when comparing times that the engine computes as the same sum (start + latency).
TIME_EPS_MS = 1e-6
# Float slack on token counts: a write needs >= 1 - eps tokens; a throttled one must have had < 1 + eps.
TOKEN_EPS = 1e-9
# The engine keeps exact buckets only for a table's newest log entry names (a ring of this many); an
# older name is taken as fresh. The checker is exact; this only explains a violation if one fires.
ENGINE_ENTRY_RING = 16


class Violation(NamedTuple):
    """One broken invariant: its number (0 = format), the history row `i` (-1 if global), why."""

    invariant: int
    i: int
    message: str


class _Txn:
    """What the checker knows about one transaction while replaying."""

    __slots__ = (
        "txn", "begin_row", "table", "op", "max_attempts", "end_row", "cas_count", "ok_cas_row",
        "last_read_seq", "base_read_version", "prepare_base", "validated", "ready_ms", "reported", "last_write",
        "after_prepare", "lock_asked",
    )

    def __init__(self, txn: int):
        self.txn = txn
        self.begin_row = -1          # row of the begin event, -1 if not (yet) seen
        self.table = -1
        self.op = ""
        self.max_attempts = -1
        self.end_row = -1
        self.cas_count = 0
        self.ok_cas_row = -1         # row of the (first) successful CAS
        self.last_read_seq = None    # seq observed by the latest read (what the next CAS must expect)
        self.base_read_version = None  # v[t] observed by the first read: the VO's base v0
        self.prepare_base = None     # base_version of the latest prepare
        self.validated = []          # VO: (from, to] ranges validated by its prepares
        self.ready_ms = -math.inf    # answer time of its latest read/CAS: it cannot act earlier
        self.reported = set()        # one-shot messages already emitted (avoid repeating per row)
        self.last_write = ""         # kind of its latest conditional write row (`cas` or `throttled`)
        self.after_prepare = False   # its latest row was a prepare (the next read is a re-read, if the run has it)
        self.lock_asked = False      # it has a lock request that was neither granted nor given up


def _as_int(x) -> int:
    """Missing ints are -1 by the format; tolerate NaN/None from a lossy writer."""
    if x is None:
        return -1
    try:
        if isinstance(x, float) and math.isnan(x):
            return -1
        return int(x)
    except (TypeError, ValueError):
        return -1


def _as_str(x) -> str:
    return x if isinstance(x, str) else ""


def _as_bool(x) -> bool:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return False
    return bool(x)


def _as_float(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _fmt_t(t: float) -> str:
    return f"{t:g}" if abs(t) < 1e15 else repr(t)


def _first_gap(v0: int, ranges: list[tuple[int, int]], upto: int) -> list[int]:
    """Versions in (v0, upto] not covered by any (from, to] range, as a short list (first few)."""
    missing: list[int] = []
    covered_to = v0
    for lo, hi in sorted(r for r in ranges if r[1] > r[0]):
        if lo > covered_to:
            missing.extend(range(covered_to + 1, min(lo, upto) + 1))
        covered_to = max(covered_to, hi)
        if covered_to >= upto or len(missing) > 5:
            break
    if covered_to < upto:
        missing.extend(range(covered_to + 1, upto + 1))
    return missing[:6]


class _Buckets:
    """Exact per-object token buckets (invariant 6): rate `rate` per second, capacity `burst`; a name
    never written before starts full."""

    def __init__(self, rate_per_s: float, burst: float):
        rate, burst = float(rate_per_s), float(burst)
        if not (rate > 0 and math.isfinite(rate) and burst > 0 and math.isfinite(burst)):
            raise ValueError(f"mutation rate and burst must be positive and finite, not {rate!r}, {burst!r}")
        self.rate_per_ms = rate / 1000.0
        self.burst = burst
        self.state: dict[tuple, tuple[float, float]] = {}   # name -> (tokens, time_ms of last update)

    def tokens(self, name: tuple, t: float) -> tuple[float, float, float]:
        """Tokens the bucket of `name` holds at time t; the level it would have without the cap (inf for
        a fresh name); the time of its previous write (-inf)."""
        prev = self.state.get(name)
        if prev is None:
            return self.burst, math.inf, -math.inf
        tokens, last = prev
        uncapped = tokens + self.rate_per_ms * max(0.0, t - last)
        return min(self.burst, uncapped), uncapped, last

    def set(self, name: tuple, t: float, tokens: float) -> None:
        self.state[name] = (tokens, t)

    def limit(self) -> str:
        return f"rate {self.rate_per_ms * 1000:g}/s, burst {self.burst:g}"


def _object_name(per_table: bool, log: bool, table: int, expected: int, version_files: bool = False) -> tuple:
    if version_files:
        return ("version", table, expected + 1)
    if log:
        return ("entry", table, expected + 1)
    return ("pointer", table) if per_table else ("catalog",)


def _describe_object(name: tuple) -> str:
    if name[0] == "log store":
        return "the log store's table"
    if name[0] == "lock object":
        return f"lock object {name[1]}"
    if name[0] == "entry":
        return f"log entry {name[2]} of table {name[1]}"
    if name[0] == "version":
        return f"version file v{name[2]}.metadata.json of table {name[1]}"
    if name[0] == "pointer":
        return f"table {name[1]}'s pointer object"
    return "the catalog object"


# One history row as recorded: a field per column, in REQUIRED_COLUMNS order.
_Row = NamedTuple("_Row", [(c, object) for c in REQUIRED_COLUMNS])


class _Event(NamedTuple):
    """One history row: the columns every row has, converted, and the row as recorded. Each kind converts
    the other columns it reads, so an odd value in a cell its kind leaves unused is no error."""

    i: int
    kind: str
    time_ms: float
    txn: int
    table: int
    raw: _Row

    @classmethod
    def of(cls, raw: _Row) -> "_Event":
        return cls(_as_int(raw.i), _as_str(raw.kind), _as_float(raw.time_ms), _as_int(raw.txn),
                   _as_int(raw.table), raw)


class Replay:
    """The checker's own catalog, replayed row by row (docs/MODEL.md "History and invariants").

    `row` checks what every row shares and hands the row to the method named after its kind, which
    compares the row with the replayed state and then applies it; `finish` checks what only the
    whole history shows. The replay trusts only the order of events and the CAS outcomes, and its
    state is never resynchronised to the record, so an error shows where it first happens."""

    def __init__(self, scope: str = "global", protocol: str = "rewrite",
                 mutation_rate_per_s: float | None = None, mutation_burst: float = 1.0,
                 version_files: bool = False, reread_before_cas: bool = False, lock_scope: str | None = None,
                 lock_fifo: bool = False, log_store: bool = False, lock_object: bool = False):
        if lock_scope not in (None,) + SCOPES:
            raise ValueError(f"lock_scope must be None or one of {SCOPES}, not {lock_scope!r}")
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}, not {scope!r}")
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
        self.buckets = None if mutation_rate_per_s is None else _Buckets(mutation_rate_per_s, mutation_burst)
        self.log = protocol == "log"
        self.per_table = self.log or scope == "table"
        self.version_files = version_files
        self.reread = reread_before_cas
        self.out: list[Violation] = []
        self.seq = 0                                   # successful CASes so far: the global seq
        self.v: dict[int, int] = {}                    # replayed version per table
        self.last_committed_version: dict[int, int] = {}   # recorded version of each table's latest ok CAS
        self.newest_entry: dict[int, int] = {}         # log: newest entry name conditionally written, per table
        self.txns: dict[int, _Txn] = {}
        self.tables_seen: set[int] = set()
        self.final_tables: dict[int, int] = {}         # final rows per table
        self.prev_time_ms = -math.inf
        self.prev_i: int | None = None
        self.lock_scope, self.lock_fifo = lock_scope, lock_fifo
        self.log_store, self.lock_object = log_store, lock_object
        self.holder: dict[int, int] = {}               # lock -> the transaction holding it
        self.queue: dict[int, list[int]] = {}          # FIFO: lock -> its waiters in request order

    # ------------------------------------------------------------------------------------------ reporting

    def add(self, invariant: int, row: int, txn: int, msg: str) -> None:
        prefix = f"(txn {txn}): " if txn >= 0 else ": "
        self.out.append(Violation(invariant, row, prefix + msg))

    def flag(self, invariant: int, e: _Event, msg: str) -> None:
        """A violation at the row being replayed, in the name of its transaction."""
        self.add(invariant, e.i, e.txn, msg)

    def cas_seq(self, table: int) -> int:
        """What a CAS on `table` compares `expected` with, and what rows record as seq."""
        return self.v.get(table, 0) if self.per_table else self.seq

    def state_str(self, table: int) -> str:
        v = self.v.get(table, 0)
        return f"v[{table}]={v}" if self.per_table else f"seq {self.seq}, v[{table}]={v}"

    # ------------------------------------------------------------------------------------------ every row

    def row(self, e: _Event) -> None:
        """Checks every row shares (unique `i`, time order, a known kind), then those of its kind."""
        if self.prev_i is not None and e.i == self.prev_i:
            self.flag(0, e, f"row number i={e.i} appears more than once")
        self.prev_i = e.i
        # Invariant 5: time is non-decreasing in processing order.
        if not (e.time_ms >= self.prev_time_ms - TIME_EPS_MS):
            self.flag(5, e, f"time went backwards: t={_fmt_t(e.time_ms)} ms after t={_fmt_t(self.prev_time_ms)} ms")
        if not math.isnan(e.time_ms):
            self.prev_time_ms = max(self.prev_time_ms, e.time_ms)
        if e.kind not in KINDS:
            self.flag(0, e, f"unknown event kind {e.kind!r}")
            return
        if e.kind != "final":
            self.tables_seen.add(e.table)
        getattr(self, e.kind)(e)    # one method per kind, named after it

    def _txn_of(self, e: _Event) -> _Txn:
        """The transaction of a row other than `begin`, after the lifecycle checks all such rows share."""
        x = self.txns.get(e.txn)
        if x is None:
            x = self.txns[e.txn] = _Txn(e.txn)
        if x.begin_row < 0 and "nobegin" not in x.reported:
            x.reported.add("nobegin")
            self.flag(3, e, f"{e.kind} event before the transaction's begin")
        if x.end_row >= 0 and e.kind not in ("end", "lock_release", "store_write", "lock_write"):   # 2nd end: `end`
            self.flag(3, e, f"{e.kind} event after the transaction ended at row {x.end_row}")
        if x.begin_row >= 0 and e.table != x.table:
            self.flag(0, e, f"{e.kind} on table {e.table} but the transaction began on table {x.table}")
        # Only catalog operations are actions the caller starts; prepare and end rows are recorded at the
        # engine's processing time (docs/FORMATS.md), which may precede the answer they follow.
        if e.kind in ("read", "cas", "throttled") and e.time_ms < x.ready_ms - TIME_EPS_MS:
            self.flag(5, e, f"{e.kind} at t={_fmt_t(e.time_ms)} ms before the transaction learned the answer "
                            f"of its previous catalog operation (t={_fmt_t(x.ready_ms)} ms)")
        return x

    def _answered(self, e: _Event, x: _Txn, what: str) -> None:
        """Invariant 5: a caller learns an answer no earlier than the operation's effect point, and
        cannot act before it has."""
        answer = _as_float(e.raw.answer_ms)
        if not (answer >= e.time_ms - TIME_EPS_MS):
            self.flag(5, e, f"{what} answered at t={_fmt_t(answer)} ms, before its effect point "
                            f"t={_fmt_t(e.time_ms)} ms")
        x.ready_ms = max(x.ready_ms, answer)

    # ------------------------------------------------------------------------------------------ kinds

    def begin(self, e: _Event) -> None:
        x = self.txns.get(e.txn)
        if x is not None and x.begin_row >= 0:
            self.flag(3, e, f"transaction begins again (first begin at row {x.begin_row})")
            return
        if x is None:
            x = self.txns[e.txn] = _Txn(e.txn)
        x.begin_row, x.table = e.i, e.table
        x.op = _as_str(e.raw.op)
        x.max_attempts = _as_int(e.raw.attempts)
        x.ready_ms = e.time_ms
        if x.op not in ("fa", "vo"):
            self.flag(0, e, f"begin has op {x.op!r}, expected 'fa' or 'vo'")

    def read(self, e: _Event) -> None:
        """Invariant 5: a read returns exactly the replayed state at its effect point."""
        x = self._txn_of(e)
        r_seq, r_v = _as_int(e.raw.seq), _as_int(e.raw.version)
        cur_seq, cur_v = self.cas_seq(e.table), self.v.get(e.table, 0)
        if r_seq != cur_seq or r_v != cur_v:
            when = "from the future" if (r_seq > cur_seq or (r_seq == cur_seq and r_v > cur_v)) else "stale"
            self.flag(5, e, f"read returned seq {r_seq}, v[{e.table}]={r_v} but the state at its effect point "
                            f"t={_fmt_t(e.time_ms)} ms was {self.state_str(e.table)} ({when})")
        self._answered(e, x, "read")
        if self.reread and x.after_prepare and r_v != x.prepare_base:
            x.cas_count += 1   # the re-read saw the table moved: the attempt failed before its CAS
            if x.max_attempts >= 0 and x.cas_count > x.max_attempts:
                self.flag(3, e, f"attempt {x.cas_count} (failed at its re-read) exceeds the {x.max_attempts} allowed")
        x.after_prepare = False
        x.last_read_seq = r_seq
        if x.base_read_version is None:
            x.base_read_version = r_v
            if self.log:   # the base read is a prepare with nothing checked (stale first create)
                x.prepare_base = r_v

    def prepare(self, e: _Event) -> None:
        """Invariant 4's groundwork: the base a transaction prepared on, and the snapshots it checked."""
        x = self._txn_of(e)
        base, cur_v, tbl, t = _as_int(e.raw.base_version), self.v.get(e.table, 0), e.table, _fmt_t(e.time_ms)
        if base > cur_v:
            self.flag(4, e, f"prepare based on v[{tbl}]={base}, which does not exist yet "
                            f"(v[{tbl}] was {cur_v} at t={t} ms)")
        x.prepare_base = base
        x.after_prepare = True
        if not (x.op == "vo" or self.log):
            return
        vf, vt = _as_int(e.raw.validated_from), _as_int(e.raw.validated_to)
        what = "log prepare" if self.log else "VO prepare"
        if vf < 0 or vt < vf:
            self.flag(0, e, f"{what} with invalid validated range ({vf}, {vt}]")
        elif vt > cur_v:
            self.flag(4, e, f"{what} checked up to v[{tbl}]={vt}, which did not exist yet "
                            f"(v[{tbl}] was {cur_v} at t={t} ms)")
        else:
            x.validated.append((vf, vt))

    def throttled(self, e: _Event) -> None:
        """A conditional write answered 429: it changes nothing and is no attempt."""
        x = self._txn_of(e)
        expected = _as_int(e.raw.expected)
        rec_seq, rec_v = _as_int(e.raw.seq), _as_int(e.raw.version)
        self._answered(e, x, "throttled request")
        self._expects_last_read(e, x, expected, "throttled conditional write", "throttled write")
        if x.ok_cas_row >= 0:
            self.flag(3, e, f"conditional write after the transaction committed at row {x.ok_cas_row}")
        x.last_write = "throttled"
        if _as_bool(e.raw.ok):
            self.flag(2, e, "throttled request records ok = true (a throttled request changes nothing)")
        if rec_seq != self.cas_seq(e.table) or rec_v != self.v.get(e.table, 0):
            self.flag(2, e, f"throttled request records seq {rec_seq}, v[{e.table}]={rec_v} but the state, "
                            f"which a throttled request leaves unchanged, is {self.state_str(e.table)}")
        self._conditional_write(e, expected, throttled=True)

    def cas(self, e: _Event) -> None:
        """Invariants 1 and 3 at an attempt; a success also 4, and changes the replayed catalog."""
        x = self._txn_of(e)
        x.cas_count += 1
        x.last_write = "cas"
        x.after_prepare = False
        expected = _as_int(e.raw.expected)
        self._answered(e, x, "CAS")
        if x.max_attempts >= 0 and x.cas_count > x.max_attempts:
            self.flag(3, e, f"CAS attempt {x.cas_count} exceeds the {x.max_attempts} allowed")
        self._expects_last_read(e, x, expected, "CAS", "CAS")
        self._conditional_write(e, expected, throttled=False)
        if _as_bool(e.raw.ok):
            self._commit(e, x, expected)
            if self.lock_scope is not None and self.holder.get(self._lock_of(e.table)) != e.txn:
                self.flag(7, e, f"commit to table {e.table} outside its lock (held by "
                                f"{self._holder_str(self._lock_of(e.table))})")
        elif expected == self.cas_seq(e.table):
            self.flag(1, e, self._free_yet_failed(e, expected))
        rec_seq, rec_v = _as_int(e.raw.seq), _as_int(e.raw.version)
        if rec_seq != self.cas_seq(e.table) or rec_v != self.v.get(e.table, 0):
            self.flag(1, e, f"CAS records seq {rec_seq}, v[{e.table}]={rec_v} afterwards but the replayed "
                            f"state is {self.state_str(e.table)}")

    def end(self, e: _Event) -> None:
        """Invariants 2 and 3: one end per transaction, its outcome and attempts true to its CASes."""
        x = self._txn_of(e)
        if x.end_row >= 0:
            self.flag(3, e, f"transaction ends again (first end at row {x.end_row})")
            return
        x.end_row = e.i
        self._outcome(e, x, _as_str(e.raw.outcome), _as_str(e.raw.reason))
        attempts = _as_int(e.raw.attempts)
        if attempts != x.cas_count:
            self.flag(3, e, f"end reports {attempts} attempts but the transaction made {x.cas_count} CAS "
                            f"attempts (throttled requests are not attempts)")

    def _outcome(self, e: _Event, x: _Txn, outcome: str, reason: str) -> None:
        """A transaction commits iff one of its CASes succeeded; the reason fits the outcome."""
        if outcome not in OUTCOMES:
            self.flag(3, e, f"end with unknown outcome {outcome!r}")
        elif outcome == "committed":
            if x.ok_cas_row < 0:
                self.flag(3, e, "ends committed without a successful CAS")
            if reason:
                self.flag(3, e, f"committed with a reason {reason!r}")
        else:
            if x.ok_cas_row >= 0:
                self.flag(2, e, f"ends {outcome} but its CAS at row {x.ok_cas_row} succeeded (changed the catalog)")
            if outcome == "aborted" and reason not in ABORT_REASONS:
                self.flag(3, e, f"aborted with reason {reason!r}, expected one of {sorted(ABORT_REASONS)}"
                          if reason else "aborted without a reason")
            if reason == "lock_timeout" and x.last_write != "lock_timeout":
                self.flag(3, e, "ends lock_timeout but its last lock request was not given up for good")
            if reason == "throttled" and x.last_write != "throttled":
                self.flag(3, e, "ends throttled (its storage client gave a request up) but its last conditional "
                                "write was not answered 429")
            if outcome == "unfinished" and reason != "unfinished":
                self.flag(3, e, f"unfinished with reason {reason!r}, expected 'unfinished'")

    def store_write(self, e: _Event) -> None:
        """Invariant 6 with Delta's DynamoDB log store: an entry's completion write takes the table's capacity."""
        x = self._txn_of(e)
        if not self.log_store:
            self.flag(0, e, "store_write row in a run without a log store")
            return
        if x.ok_cas_row < 0:
            self.flag(3, e, "completion write of an entry its transaction never created")
        if self.buckets is not None:
            self._tokens(e, -1, throttled=not _as_bool(e.raw.ok))

    # ------------------------------------------------------------------------------------------ locks

    def _lock_of(self, table: int) -> int:
        return table if self.lock_scope == "table" else 0

    def _holder_str(self, k: int) -> str:
        h = self.holder.get(k)
        return "no one" if h is None else f"txn {h}"

    def _lock_row(self, e: _Event) -> tuple[_Txn, int] | None:
        """The transaction of a lock row and its lock, after the checks every lock row shares."""
        x = self._txn_of(e)
        if self.lock_scope is None:
            self.flag(0, e, f"{e.kind} row in a run without a lock")
            return None
        k, rec = self._lock_of(e.table), _as_int(e.raw.seq)
        if rec != k:
            self.flag(0, e, f"{e.kind} names lock {rec} but the transaction's lock is {k} (lock scope "
                            f"{self.lock_scope})")
        return x, k

    def lock_request(self, e: _Event) -> None:
        row = self._lock_row(e)
        if row is None:
            return
        x, k = row
        if x.lock_asked:
            self.flag(7, e, "lock request while its previous one is still open")
        x.lock_asked = True
        if self.lock_fifo:
            self.queue.setdefault(k, []).append(e.txn)

    def lock_grant(self, e: _Event) -> None:
        """Invariant 7: a grant only of a free lock, and under FIFO to the first waiter."""
        row = self._lock_row(e)
        if row is None:
            return
        x, k = row
        if not x.lock_asked:
            self.flag(7, e, "lock granted without an open request")
        x.lock_asked = False
        if k in self.holder:
            self.flag(7, e, f"lock {k} granted while {self._holder_str(k)} holds it (two holders)")
        self.holder[k] = e.txn
        if not self.lock_fifo:
            return
        q = self.queue.get(k, [])
        if q and q[0] != e.txn:
            self.flag(7, e, f"lock {k} granted out of request order: txn {q[0]} asked first and still waits")
        if e.txn in q:
            q.remove(e.txn)

    def lock_release(self, e: _Event) -> None:
        """Invariant 7: only the holder releases."""
        row = self._lock_row(e)
        if row is None:
            return
        _, k = row
        if self.holder.get(k) != e.txn:
            self.flag(7, e, f"lock {k} released by a transaction that does not hold it (held by "
                            f"{self._holder_str(k)})")
            return
        del self.holder[k]

    def lock_write(self, e: _Event) -> None:
        """Invariant 6 on a storage lock's object: each write (an acquire's or a release's conditional PUT) found a
        token of its mutation limit and took it (`ok`), or found none (throttled)."""
        row = self._lock_row(e)
        if row is None:
            return
        if not self.lock_object:
            self.flag(0, e, "lock_write row in a run whose lock is not a storage object")
        elif self.buckets is not None:
            self._tokens(e, -1, throttled=not _as_bool(e.raw.ok), name=("lock object", row[1]))

    def lock_timeout(self, e: _Event) -> None:
        """A request given up leaves the queue; one that failed its commit attempt counts as an attempt."""
        row = self._lock_row(e)
        if row is None:
            return
        x, k = row
        if not x.lock_asked:
            self.flag(7, e, "lock request given up without an open request")
        x.lock_asked = False
        if self.lock_fifo and e.txn in self.queue.get(k, []):
            self.queue[k].remove(e.txn)
        if _as_int(e.raw.attempts) == 1:
            x.cas_count += 1
            x.last_write = "lock_timeout"
            if x.max_attempts >= 0 and x.cas_count > x.max_attempts:
                self.flag(3, e, f"attempt {x.cas_count} (failed at its lock) exceeds the {x.max_attempts} allowed")

    def final(self, e: _Event) -> None:
        """Invariants 1 and 2 at the end of the run: seq counts every success, v[t] those on t."""
        self.final_tables[e.table] = self.final_tables.get(e.table, 0) + 1
        f_seq, f_v = _as_int(e.raw.seq), _as_int(e.raw.version)
        if f_seq != self.seq:
            what = "over all tables " if self.per_table else ""
            self.add(1, e.i, -1, f"final seq is {f_seq} but there were {self.seq} successful CASes "
                                 f"{what}(seq must run 1..N without gaps)")
        replayed_v = self.v.get(e.table, 0)
        if f_v != replayed_v:
            self.add(2, e.i, -1, f"final v[{e.table}] is {f_v} but table {e.table} had {replayed_v} "
                                 f"successful CASes")

    def finish(self) -> list[Violation]:
        """The checks only the whole history answers; then every violation, sorted by row."""
        for x in self.txns.values():
            if x.begin_row >= 0 and x.end_row < 0:
                self.add(3, x.begin_row, x.txn, "transaction never ends (no end row)")
        missing_final = sorted(self.tables_seen - set(self.final_tables))
        if missing_final:
            self.add(2, -1, -1, f"no final row for tables {missing_final}")
        for tbl, cnt in sorted(self.final_tables.items()):
            if cnt > 1:
                self.add(2, -1, -1, f"{cnt} final rows for table {tbl}")
        self.out.sort(key=lambda viol: viol.i)
        return self.out

    # ------------------------------------------------------------------------------------------ conditional writes

    def _expects_last_read(self, e: _Event, x: _Txn, expected: int, what_unread: str, what: str) -> None:
        """Invariant 1: a conditional write expects the seq its transaction last read."""
        if x.last_read_seq is None:
            self.flag(1, e, f"{what_unread} without any prior catalog read")
        elif expected != x.last_read_seq:
            self.flag(1, e, f"{what} expected seq {expected} but the transaction's last read saw "
                            f"seq {x.last_read_seq}")

    def _conditional_write(self, e: _Event, expected: int, throttled: bool) -> None:
        """Book a conditional write to its object: the newest log entry name, invariant 6's bucket."""
        if self.log:
            self.newest_entry[e.table] = max(self.newest_entry.get(e.table, 0), expected + 1)
        if self.buckets is not None:
            self._tokens(e, expected, throttled)

    def _tokens(self, e: _Event, expected: int, throttled: bool, name: tuple | None = None) -> None:
        """Invariant 6: a `cas` needs (and takes) a token of its object's bucket; a `throttled` row had none."""
        b, t = self.buckets, e.time_ms
        if name is None:
            name = ("log store",) if self.log_store else \
                _object_name(self.per_table, self.log, e.table, expected, self.version_files)
        tokens, uncapped, last = b.tokens(name, t)
        since = f"previous write to it at t={_fmt_t(last)} ms" if last > -math.inf else "first write to it"
        what = _describe_object(name)
        if throttled:
            # A full bucket holds exactly `burst` tokens: with burst 1 the slack alone would excuse a 429 on
            # a full (or fresh) bucket, so judge by the level the refill reached before the cap.
            if (uncapped if b.burst >= 1 else tokens) >= 1 + TOKEN_EPS:
                self.flag(6, e, f"conditional write to {what} throttled at t={_fmt_t(t)} ms although its "
                                f"bucket held {tokens:.6g} tokens ({b.limit()}; {since})")
            return
        if tokens < 1 - TOKEN_EPS:
            self.flag(6, e, f"conditional write to {what} at t={_fmt_t(t)} ms found only {tokens:.6g} "
                            f"tokens but was not throttled ({b.limit()}; {since}){self._ring_note(name)}")
        b.set(name, t, max(0.0, tokens - 1.0))   # clamp: report where the excess starts, once

    def _ring_note(self, name: tuple) -> str:
        """Why the engine may have let an untokened write through: it forgets old entry names' buckets."""
        if name[0] != "entry":
            return ""
        table, entry = name[1], name[2]
        newest = self.newest_entry.get(table, entry)
        if newest - entry < ENGINE_ENTRY_RING:
            return ""
        return (f"; this name is {newest - entry} entries behind the newest name {newest} written on table "
                f"{table}: the engine keeps exact buckets only for a table's {ENGINE_ENTRY_RING} newest entry "
                f"names and takes an older one as fresh")

    def _commit(self, e: _Event, x: _Txn, expected: int) -> None:
        """A successful CAS: invariants 1, 3 and 4, then the success is applied to the replayed state
        (never to the recorded one)."""
        tbl = e.table
        v_before, cur = self.v.get(tbl, 0), self.cas_seq(tbl)
        if x.ok_cas_row >= 0:
            self.flag(3, e, f"second successful CAS (already committed at row {x.ok_cas_row})")
        if expected != cur:
            self.flag(1, e, self._taken_yet_succeeded(e, expected, cur))
        self._serializable(e, x, v_before)
        self.seq += 1
        self.v[tbl] = v_before + 1
        if x.ok_cas_row < 0:
            x.ok_cas_row = e.i
        rec_v, last = _as_int(e.raw.version), self.last_committed_version.get(tbl, 0)
        if rec_v != last + 1:
            self.flag(4, e, f"commit installs v[{tbl}]={rec_v} but the previous commit to table {tbl} "
                            f"installed v[{tbl}]={last} (not serial)")
        self.last_committed_version[tbl] = rec_v

    def _taken_yet_succeeded(self, e: _Event, expected: int, cur: int) -> str:
        """Invariant 1, in the design's terms: a CAS succeeded although its object held `cur`, not `expected`."""
        tbl, t = e.table, _fmt_t(e.time_ms)
        if self.log and expected < cur:
            return (f"created entry {expected + 1} of table {tbl}'s log, which already existed (the log had "
                    f"{cur} entries at t={t} ms), yet it succeeded")
        if self.log:
            return (f"created entry {expected + 1} of table {tbl}'s log, but the log had only {cur} entries "
                    f"at t={t} ms (a gap), yet it succeeded")
        if self.per_table:
            return (f"CAS on table {tbl} expected v[{tbl}]={expected} but v[{tbl}] was {cur} at t={t} ms, "
                    f"yet it succeeded")
        return f"CAS expected seq {expected} but seq was {cur} at t={t} ms, yet it succeeded"

    def _free_yet_failed(self, e: _Event, expected: int) -> str:
        """Invariant 1, in the design's terms: a CAS failed although its object held what it expected."""
        tbl, t, cur = e.table, _fmt_t(e.time_ms), expected
        if self.log:
            return (f"create of entry {expected + 1} of table {tbl}'s log failed, but the log had {cur} "
                    f"entries at t={t} ms (the entry was free)")
        if self.per_table:
            return (f"CAS on table {tbl} expected v[{tbl}]={expected} and v[{tbl}] was {cur} at t={t} ms, yet "
                    f"it failed (commits to other tables never make it fail under scope table)")
        return f"CAS expected seq {expected} and seq was {cur} at t={t} ms, yet it failed"

    def _serializable(self, e: _Event, x: _Txn, v_before: int) -> None:
        """Invariant 4 at a successful CAS: installed metadata is based on the version it replaces, and
        a VO (under the log protocol: any transaction) has checked every snapshot committed since its
        base read."""
        tbl, t = e.table, _fmt_t(e.time_ms)
        if x.prepare_base is None:
            self.flag(4, e, "successful CAS without any prepare")
        elif x.prepare_base != v_before and self.log:
            self.flag(4, e, f"lost update: created entry {v_before + 1} of table {tbl}'s log on a base of "
                            f"{x.prepare_base} entries, but the log had {v_before} at t={t} ms")
        elif x.prepare_base != v_before:
            self.flag(4, e, f"lost update: CAS installs metadata prepared on v[{tbl}]={x.prepare_base} but "
                            f"replaces v[{tbl}]={v_before} at t={t} ms")
        if not (x.op == "vo" or self.log):
            return
        if x.base_read_version is None:
            self.flag(4, e, f"{x.op.upper() or 'transaction'} commits without a base read")
            return
        gap = _first_gap(x.base_read_version, x.validated, v_before)
        if gap and self.log:
            self.flag(4, e, f"{x.op.upper()} creates entry {v_before + 1} of table {tbl}'s log without checking "
                            f"entr(ies) {gap} (base read saw {x.base_read_version} entries)")
        elif gap:
            self.flag(4, e, f"VO commits over v[{tbl}]={v_before} without validating snapshot(s) {gap} "
                            f"(base read saw v[{tbl}]={x.base_read_version})")


def check_history(history: pd.DataFrame, *, scope: str = "global", protocol: str = "rewrite",
                  mutation_rate_per_s: float | None = None, mutation_burst: float = 1.0,
                  version_files: bool = False, reread_before_cas: bool = False, lock_scope: str | None = None,
                  lock_fifo: bool = False, log_store: bool = False, lock_object: bool = False) -> list[Violation]:
    """Replay `history` (FORMATS.md "History") and return every invariant violation, sorted by row.

    `scope` (`global` | `table`) and `protocol` (`rewrite` | `log`) are the run's `catalog.scope` and
    `commit.protocol` (`log` is always per table); `mutation_rate_per_s` / `mutation_burst` the
    per-object mutation limit the run enforced (None: not checked); `version_files`, `reread_before_cas`
    the run's `catalog.version_files` and `commit.reread_before_cas`; `lock_scope` the run's `lock.scope`
    (None: no lock) and `lock_fifo` whether its discipline grants in request order; `log_store` whether it ran
    Delta's DynamoDB log store; `lock_object` whether its lock is an object in storage (the mutation limit binds its
    writes). An empty list means all checked
    invariants hold. The replay trusts only the order of events and the CAS outcomes; every observed
    value (read state, seq/version after a CAS, final state) is compared against the checker's own
    catalog state, which is never resynchronised to the record, so an error shows where it first happens.
    """
    replay = Replay(scope, protocol, mutation_rate_per_s, mutation_burst, version_files, reread_before_cas,
                    lock_scope, lock_fifo, log_store, lock_object)
    missing_cols = [c for c in REQUIRED_COLUMNS if c not in history.columns]
    if missing_cols:
        return [Violation(0, -1, f"history lacks columns {missing_cols}")]
    if len(history) == 0:
        return [Violation(2, -1, "history is empty (no final rows)")]
    h = history.sort_values("i", kind="stable")
    for raw in zip(*(h[c].tolist() for c in REQUIRED_COLUMNS)):
        replay.row(_Event.of(_Row._make(raw)))
    return replay.finish()


def load_history(path) -> pd.DataFrame:
    """Read `history.parquet` from a run directory, or from the file itself."""
    p = Path(path)
    if p.is_dir():
        p = p / "history.parquet"
    return pd.read_parquet(p)


def format_violation(v: Violation) -> str:
    """One human line, e.g. `invariant 1 violated at row 17 (txn 4): CAS expected seq 3 ...`."""
    where = f"at row {v.i}" if v.i >= 0 else "(global)"
    msg = v.message
    sep = " " if msg.startswith("(") else ": "
    if msg.startswith(": "):
        msg, sep = msg[2:], ": "
    return f"invariant {v.invariant} violated {where}{sep}{msg}"


def _main(argv: list[str]) -> int:
    """`python -m sim.checker DIR_OR_FILE`: print violations, exit 1 if any (debug convenience)."""
    if len(argv) != 1:
        print("usage: python -m sim.checker DIR_OR_HISTORY_PARQUET", file=sys.stderr)
        return 2
    viols = check_history(load_history(argv[0]))
    for viol in viols:
        print(format_violation(viol))
    print(f"{len(viols)} violation(s)" if viols else "all invariants hold")
    return 1 if viols else 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
