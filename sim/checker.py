"""Independent invariant checker for recorded histories (`history.parquet`).

The checker replays the recorded events with its own catalog state (seq = 0, v[t] = 0 at the start)
and compares every recorded observation against that replay. It deliberately imports nothing from
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
   more CAS attempts than allowed (and as many as its end row says).
4. serializability: a successful CAS installs metadata prepared on the version it replaces (no lost
   update); a VO validated every snapshot between its base read and the version it replaced; in seq
   order each table's committed versions run 1, 2, 3, ...
5. reads return exactly the replayed state at their effect point (neither from the future nor
   stale); answers come no earlier than effect points; time never goes backwards in `i` order; a
   transaction does not act before it has learned the answer of its previous catalog operation.
6. per-object mutation limit (only when `mutation_rate_per_s` is given): every `cas` row (ok or not)
   found a token in its object's bucket (refilled at the rate up to the burst; a fresh name starts
   full) and took it; every `throttled` row found none.

Catalog designs (MODEL.md "Catalog designs"), chosen by the keyword arguments of `check_history`:
- `scope="global"` (default): one global seq; a CAS expects seq and fails on any commit.
- `scope="table"`: one pointer per table; `read`/`cas`/`throttled` rows record seq = version = v[t];
  a CAS to t expects v[t] and only commits to t make it fail. Invariant 1 runs per table.
- `protocol="log"` (always per table): reads are LISTs of t's log, a `cas` is the put-if-absent of
  entry expected+1, and `prepare` rows carry the entries checked, for FA as well as VO; a committed
  transaction of either op must have checked every entry between its base read and the one it
  replaced. The base read counts as a prepare with nothing checked at its version (stale first
  attempt without a prepare row).
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
KINDS = {"begin", "read", "prepare", "cas", "throttled", "end", "final"}
SCOPES = ("global", "table")
PROTOCOLS = ("rewrite", "log")
OUTCOMES = {"committed", "aborted", "unfinished"}
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
        "last_read_seq", "base_read_version", "prepare_base", "validated", "ready_ms", "reported",
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
        self.rate_per_ms = rate_per_s / 1000.0
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


def _object_name(per_table: bool, log: bool, table: int, expected: int) -> tuple:
    if log:
        return ("entry", table, expected + 1)
    return ("pointer", table) if per_table else ("catalog",)


def _describe_object(name: tuple) -> str:
    if name[0] == "entry":
        return f"log entry {name[2]} of table {name[1]}"
    if name[0] == "pointer":
        return f"table {name[1]}'s pointer object"
    return "the catalog object"


def check_history(history: pd.DataFrame, *, scope: str = "global", protocol: str = "rewrite",
                  mutation_rate_per_s: float | None = None, mutation_burst: float = 1.0) -> list[Violation]:
    """Replay `history` (FORMATS.md "History") and return every invariant violation, sorted by row.

    `scope` (`global` | `table`) and `protocol` (`rewrite` | `log`) are the run's `catalog.scope` and
    `commit.protocol` (`log` is always per table); `mutation_rate_per_s` / `mutation_burst` the
    per-object mutation limit the run enforced (None: not checked). An empty list means all checked
    invariants hold. The replay trusts only the order of events and the CAS outcomes; every observed
    value (read state, seq/version after a CAS, final state) is compared against the checker's own
    catalog state, which is never resynchronised to the record, so an error shows where it first happens.
    """
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, not {scope!r}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
    buckets = None
    if mutation_rate_per_s is not None:
        rate, burst = float(mutation_rate_per_s), float(mutation_burst)
        if not (rate > 0 and math.isfinite(rate) and burst > 0 and math.isfinite(burst)):
            raise ValueError(f"mutation rate and burst must be positive and finite, not {rate!r}, {burst!r}")
        buckets = _Buckets(rate, burst)
    log = protocol == "log"
    per_table = log or scope == "table"

    out: list[Violation] = []

    missing_cols = [c for c in REQUIRED_COLUMNS if c not in history.columns]
    if missing_cols:
        return [Violation(0, -1, f"history lacks columns {missing_cols}")]
    if len(history) == 0:
        return [Violation(2, -1, "history is empty (no final rows)")]

    h = history.sort_values("i", kind="stable")
    cols = {c: h[c].tolist() for c in REQUIRED_COLUMNS}
    n = len(h)

    # Replayed catalog state and per-table commit bookkeeping.
    seq = 0
    v: dict[int, int] = {}
    ok_cas_total = 0
    last_committed_version: dict[int, int] = {}   # recorded version of each table's latest ok CAS
    newest_entry: dict[int, int] = {}             # log: newest entry name conditionally written, per table
    txns: dict[int, _Txn] = {}
    tables_seen: set[int] = set()
    final_tables: dict[int, int] = {}
    prev_time = -math.inf
    prev_i = None

    def add(inv: int, row: int, txn: int, msg: str) -> None:
        prefix = f"(txn {txn}): " if txn >= 0 else ": "
        out.append(Violation(inv, row, prefix + msg))

    def cas_seq(table: int) -> int:
        """What a CAS on `table` compares `expected` with, and what rows record as seq."""
        return v.get(table, 0) if per_table else seq

    def state_str(table: int) -> str:
        return f"v[{table}]={v.get(table, 0)}" if per_table else f"seq {seq}, v[{table}]={v.get(table, 0)}"

    def rec_str(table: int, r_seq: int, r_v: int) -> str:
        return f"seq {r_seq}, v[{table}]={r_v}"

    def token_check(row: int, txn_id: int, table: int, expected: int, t: float, throttled: bool) -> None:
        """Invariant 6: a `cas` needs (and takes) a token of its object's bucket; a `throttled` row had none."""
        name = _object_name(per_table, log, table, expected)
        tokens, uncapped, last = buckets.tokens(name, t)
        since = f"previous write to it at t={_fmt_t(last)} ms" if last > -math.inf else "first write to it"
        limit = f"rate {buckets.rate_per_ms * 1000:g}/s, burst {buckets.burst:g}"
        what = _describe_object(name)
        if throttled:
            # A full bucket holds exactly `burst` tokens: with burst 1 the slack alone would excuse a 429 on
            # a full (or fresh) bucket, so judge by the level the refill reached before the cap.
            if (uncapped if buckets.burst >= 1 else tokens) >= 1 + TOKEN_EPS:
                add(6, row, txn_id, f"conditional write to {what} throttled at t={_fmt_t(t)} ms although its "
                                    f"bucket held {tokens:.6g} tokens ({limit}; {since})")
            return
        if tokens < 1 - TOKEN_EPS:
            note = ""
            if name[0] == "entry" and newest_entry.get(table, name[2]) - name[2] >= ENGINE_ENTRY_RING:
                note = (f"; this name is {newest_entry[table] - name[2]} entries behind the newest name "
                        f"{newest_entry[table]} written on table {table}: the engine keeps exact buckets only "
                        f"for a table's {ENGINE_ENTRY_RING} newest entry names and takes an older one as fresh")
            add(6, row, txn_id, f"conditional write to {what} at t={_fmt_t(t)} ms found only {tokens:.6g} "
                                f"tokens but was not throttled ({limit}; {since}){note}")
        buckets.set(name, t, max(0.0, tokens - 1.0))   # clamp: report where the excess starts, once

    for k in range(n):
        row = _as_int(cols["i"][k])
        kind = _as_str(cols["kind"][k])
        t = _as_float(cols["time_ms"][k])
        txn_id = _as_int(cols["txn"][k])
        table = _as_int(cols["table"][k])

        if prev_i is not None and row == prev_i:
            add(0, row, txn_id, f"row number i={row} appears more than once")
        prev_i = row

        # Invariant 5: time is non-decreasing in processing order.
        if not (t >= prev_time - TIME_EPS_MS):
            add(5, row, txn_id, f"time went backwards: t={_fmt_t(t)} ms after t={_fmt_t(prev_time)} ms")
        if not math.isnan(t):
            prev_time = max(prev_time, t)

        if kind not in KINDS:
            add(0, row, txn_id, f"unknown event kind {kind!r}")
            continue

        if kind == "final":
            final_tables[table] = final_tables.get(table, 0) + 1
            f_seq, f_v = _as_int(cols["seq"][k]), _as_int(cols["version"][k])
            if f_seq != ok_cas_total:
                what = "over all tables " if per_table else ""
                add(1, row, -1, f"final seq is {f_seq} but there were {ok_cas_total} successful CASes "
                                f"{what}(seq must run 1..N without gaps)")
            replayed_v = v.get(table, 0)
            if f_v != replayed_v:
                add(2, row, -1, f"final v[{table}] is {f_v} but table {table} had {replayed_v} "
                                f"successful CASes")
            continue

        tables_seen.add(table)
        x = txns.get(txn_id)
        if kind == "begin":
            if x is not None and x.begin_row >= 0:
                add(3, row, txn_id, f"transaction begins again (first begin at row {x.begin_row})")
                continue
            if x is None:
                x = txns[txn_id] = _Txn(txn_id)
            x.begin_row, x.table = row, table
            x.op = _as_str(cols["op"][k])
            x.max_attempts = _as_int(cols["attempts"][k])
            x.ready_ms = t
            if x.op not in ("fa", "vo"):
                add(0, row, txn_id, f"begin has op {x.op!r}, expected 'fa' or 'vo'")
            continue

        # Any other event of a transaction.
        if x is None:
            x = txns[txn_id] = _Txn(txn_id)
        if x.begin_row < 0 and "nobegin" not in x.reported:
            x.reported.add("nobegin")
            add(3, row, txn_id, f"{kind} event before the transaction's begin")
        if x.end_row >= 0 and kind != "end":   # a second end is reported below
            add(3, row, txn_id, f"{kind} event after the transaction ended at row {x.end_row}")
        if x.begin_row >= 0 and table != x.table:
            add(0, row, txn_id, f"{kind} on table {table} but the transaction began on table {x.table}")

        # Only catalog operations are actions the caller starts; prepare and end rows are recorded at the
        # engine's processing time (docs/FORMATS.md), which may precede the answer they follow.
        if kind in ("read", "cas", "throttled") and t < x.ready_ms - TIME_EPS_MS:
            add(5, row, txn_id, f"{kind} at t={_fmt_t(t)} ms before the transaction learned the answer "
                                f"of its previous catalog operation (t={_fmt_t(x.ready_ms)} ms)")

        if kind == "read":
            r_seq, r_v = _as_int(cols["seq"][k]), _as_int(cols["version"][k])
            cur_seq, cur_v = cas_seq(table), v.get(table, 0)
            if r_seq != cur_seq or r_v != cur_v:
                when = ("from the future" if (r_seq > cur_seq or (r_seq == cur_seq and r_v > cur_v))
                        else "stale")
                add(5, row, txn_id, f"read returned {rec_str(table, r_seq, r_v)} but the state at its "
                                    f"effect point t={_fmt_t(t)} ms was {state_str(table)} ({when})")
            _check_answer(add, row, txn_id, "read", t, _as_float(cols["answer_ms"][k]))
            x.last_read_seq = r_seq
            if x.base_read_version is None:
                x.base_read_version = r_v
                if log:   # the base read is a prepare with nothing checked (stale first create)
                    x.prepare_base = r_v
            x.ready_ms = max(x.ready_ms, _as_float(cols["answer_ms"][k]))

        elif kind == "prepare":
            base = _as_int(cols["base_version"][k])
            cur_v = v.get(table, 0)
            if base > cur_v:
                add(4, row, txn_id, f"prepare based on v[{table}]={base}, which does not exist yet "
                                    f"(v[{table}] was {cur_v} at t={_fmt_t(t)} ms)")
            x.prepare_base = base
            vf, vt = _as_int(cols["validated_from"][k]), _as_int(cols["validated_to"][k])
            if x.op == "vo" or log:
                what = "log prepare" if log else "VO prepare"
                if vf < 0 or vt < vf:
                    add(0, row, txn_id, f"{what} with invalid validated range ({vf}, {vt}]")
                elif vt > cur_v:
                    add(4, row, txn_id, f"{what} checked up to v[{table}]={vt}, which did not exist yet "
                                        f"(v[{table}] was {cur_v} at t={_fmt_t(t)} ms)")
                else:
                    x.validated.append((vf, vt))

        elif kind == "throttled":
            expected = _as_int(cols["expected"][k])
            rec_seq, rec_v = _as_int(cols["seq"][k]), _as_int(cols["version"][k])
            answer = _as_float(cols["answer_ms"][k])
            _check_answer(add, row, txn_id, "throttled request", t, answer)
            x.ready_ms = max(x.ready_ms, answer)
            if x.last_read_seq is None:
                add(1, row, txn_id, "throttled conditional write without any prior catalog read")
            elif expected != x.last_read_seq:
                add(1, row, txn_id, f"throttled write expected seq {expected} but the transaction's last "
                                    f"read saw seq {x.last_read_seq}")
            if x.ok_cas_row >= 0:
                add(3, row, txn_id, f"conditional write after the transaction committed at row {x.ok_cas_row}")
            if _as_bool(cols["ok"][k]):
                add(2, row, txn_id, "throttled request records ok = true (a throttled request changes nothing)")
            if rec_seq != cas_seq(table) or rec_v != v.get(table, 0):
                add(2, row, txn_id, f"throttled request records {rec_str(table, rec_seq, rec_v)} but the "
                                    f"state, which a throttled request leaves unchanged, is {state_str(table)}")
            if log:
                newest_entry[table] = max(newest_entry.get(table, 0), expected + 1)
            if buckets is not None:
                token_check(row, txn_id, table, expected, t, throttled=True)

        elif kind == "cas":
            x.cas_count += 1
            expected = _as_int(cols["expected"][k])
            ok = _as_bool(cols["ok"][k])
            rec_seq, rec_v = _as_int(cols["seq"][k]), _as_int(cols["version"][k])
            answer = _as_float(cols["answer_ms"][k])
            _check_answer(add, row, txn_id, "CAS", t, answer)
            x.ready_ms = max(x.ready_ms, answer)

            if x.max_attempts >= 0 and x.cas_count > x.max_attempts:
                add(3, row, txn_id, f"CAS attempt {x.cas_count} exceeds the {x.max_attempts} allowed")
            if x.last_read_seq is None:
                add(1, row, txn_id, "CAS without any prior catalog read")
            elif expected != x.last_read_seq:
                add(1, row, txn_id, f"CAS expected seq {expected} but the transaction's last read saw "
                                    f"seq {x.last_read_seq}")
            if log:
                newest_entry[table] = max(newest_entry.get(table, 0), expected + 1)
            if buckets is not None:
                token_check(row, txn_id, table, expected, t, throttled=False)

            v_before = v.get(table, 0)
            cur = cas_seq(table)
            if ok:
                if x.ok_cas_row >= 0:
                    add(3, row, txn_id, f"second successful CAS (already committed at row {x.ok_cas_row})")
                if expected != cur:
                    if log and expected < cur:
                        add(1, row, txn_id, f"created entry {expected + 1} of table {table}'s log, which "
                                            f"already existed (the log had {cur} entries at t={_fmt_t(t)} ms), "
                                            f"yet it succeeded")
                    elif log:
                        add(1, row, txn_id, f"created entry {expected + 1} of table {table}'s log, but the log "
                                            f"had only {cur} entries at t={_fmt_t(t)} ms (a gap), yet it succeeded")
                    elif per_table:
                        add(1, row, txn_id, f"CAS on table {table} expected v[{table}]={expected} but "
                                            f"v[{table}] was {cur} at t={_fmt_t(t)} ms, yet it succeeded")
                    else:
                        add(1, row, txn_id, f"CAS expected seq {expected} but seq was {seq} at "
                                            f"t={_fmt_t(t)} ms, yet it succeeded")
                _check_serializable(add, row, txn_id, x, table, v_before, t, log)
                # Apply the recorded success to the replayed state (never to the recorded one).
                seq += 1
                v[table] = v_before + 1
                ok_cas_total += 1
                if x.ok_cas_row < 0:
                    x.ok_cas_row = row
                last = last_committed_version.get(table, 0)
                if rec_v != last + 1:
                    add(4, row, txn_id, f"commit installs v[{table}]={rec_v} but the previous commit to "
                                        f"table {table} installed v[{table}]={last} (not serial)")
                last_committed_version[table] = rec_v
            elif expected == cur:
                if log:
                    add(1, row, txn_id, f"create of entry {expected + 1} of table {table}'s log failed, but "
                                        f"the log had {cur} entries at t={_fmt_t(t)} ms (the entry was free)")
                elif per_table:
                    add(1, row, txn_id, f"CAS on table {table} expected v[{table}]={expected} and v[{table}] "
                                        f"was {cur} at t={_fmt_t(t)} ms, yet it failed (commits to other "
                                        f"tables never make it fail under scope table)")
                else:
                    add(1, row, txn_id, f"CAS expected seq {expected} and seq was {seq} at t={_fmt_t(t)} ms, "
                                        f"yet it failed")
            if rec_seq != cas_seq(table) or rec_v != v.get(table, 0):
                add(1, row, txn_id, f"CAS records {rec_str(table, rec_seq, rec_v)} afterwards but the "
                                    f"replayed state is {state_str(table)}")

        elif kind == "end":
            if x.end_row >= 0:
                add(3, row, txn_id, f"transaction ends again (first end at row {x.end_row})")
                continue
            x.end_row = row
            outcome, reason = _as_str(cols["outcome"][k]), _as_str(cols["reason"][k])
            attempts = _as_int(cols["attempts"][k])
            if outcome not in OUTCOMES:
                add(3, row, txn_id, f"end with unknown outcome {outcome!r}")
            elif outcome == "committed":
                if x.ok_cas_row < 0:
                    add(3, row, txn_id, "ends committed without a successful CAS")
                if reason:
                    add(3, row, txn_id, f"committed with a reason {reason!r}")
            else:
                if x.ok_cas_row >= 0:
                    add(2, row, txn_id, f"ends {outcome} but its CAS at row {x.ok_cas_row} succeeded "
                                        f"(changed the catalog)")
                if outcome == "aborted" and not reason:
                    add(3, row, txn_id, "aborted without a reason")
                if outcome == "unfinished" and reason != "unfinished":
                    add(3, row, txn_id, f"unfinished with reason {reason!r}, expected 'unfinished'")
            if attempts != x.cas_count:
                add(3, row, txn_id, f"end reports {attempts} attempts but the transaction made "
                                    f"{x.cas_count} CAS attempts (throttled requests are not attempts)")

    # Global checks after the replay.
    for x in txns.values():
        if x.begin_row >= 0 and x.end_row < 0:
            add(3, x.begin_row, x.txn, "transaction never ends (no end row)")
    missing_final = sorted(tables_seen - set(final_tables))
    if missing_final:
        add(2, -1, -1, f"no final row for tables {missing_final}")
    for tbl, cnt in sorted(final_tables.items()):
        if cnt > 1:
            add(2, -1, -1, f"{cnt} final rows for table {tbl}")

    out.sort(key=lambda viol: viol.i)
    return out


def _check_answer(add, row: int, txn: int, what: str, t: float, answer: float) -> None:
    """Invariant 5: a caller learns an answer no earlier than the operation's effect point."""
    if not (answer >= t - TIME_EPS_MS):
        add(5, row, txn, f"{what} answered at t={_fmt_t(answer)} ms, before its effect point "
                         f"t={_fmt_t(t)} ms")


def _check_serializable(add, row: int, txn: int, x: _Txn, table: int, v_before: int, t: float,
                        log: bool = False) -> None:
    """Invariant 4 at a successful CAS: installed metadata is based on the version it replaces, and
    a VO (under the log protocol: any transaction) has checked every snapshot committed since its
    base read."""
    if x.prepare_base is None:
        add(4, row, txn, "successful CAS without any prepare")
    elif x.prepare_base != v_before:
        if log:
            add(4, row, txn, f"lost update: created entry {v_before + 1} of table {table}'s log on a base "
                             f"of {x.prepare_base} entries, but the log had {v_before} at t={_fmt_t(t)} ms")
        else:
            add(4, row, txn, f"lost update: CAS installs metadata prepared on v[{table}]={x.prepare_base} "
                             f"but replaces v[{table}]={v_before} at t={_fmt_t(t)} ms")
    if x.op == "vo" or log:
        if x.base_read_version is None:
            add(4, row, txn, f"{x.op.upper() or 'transaction'} commits without a base read")
            return
        gap = _first_gap(x.base_read_version, x.validated, v_before)
        if gap and log:
            add(4, row, txn, f"{x.op.upper()} creates entry {v_before + 1} of table {table}'s log without "
                             f"checking entr(ies) {gap} (base read saw {x.base_read_version} entries)")
        elif gap:
            add(4, row, txn, f"VO commits over v[{table}]={v_before} without validating snapshot(s) "
                             f"{gap} (base read saw v[{table}]={x.base_read_version})")


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
