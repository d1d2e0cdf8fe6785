"""Invariants 1 to 5 on the checker's own catalog: the versions, the reads, the CASes and their 429s, the
prepares (what each commit was based on and validated), the ends. A conditional write's token (invariant 6) is
booked with `Tokens`, a commit's lock (invariant 7) checked with `Locks`."""

from __future__ import annotations

import math

from .conflicts import VALIDATED, Conflicts
from .locks import Locks
from .rows import TIME_EPS_MS, Event, as_bool, as_float, as_int, as_str, fmt_t
from .state import Design, Ledger, Txn
from .tokens import Tokens

OUTCOMES = {"committed", "aborted", "unfinished", "unknown", "duplicated", "partial"}
ABORT_REASONS = {"retries_exhausted", "validation_failed", "throttled", "lock_timeout", "pool_timeout", "deadlock",
                 "empty_read"}
UNKNOWN_REASONS = {"lost_answer", "server_error", "self_conflict"}
PARTIAL_REASONS = {"dropped", "pool_timeout"}


def first_gap(v0: int, ranges: list[tuple[int, int]], upto: int) -> list[int]:
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


class Catalog:
    """The replayed catalog (seq = 0, v[t] = 0 at the start), changed only by the recorded CAS outcomes and
    never resynchronised to the record, so an error shows where it first happens."""

    def __init__(self, ledger: Ledger, design: Design, reread: bool, tokens: Tokens, locks: Locks,
                 conflicts: Conflicts, moved_fails: bool = False):
        self.ledger, self.tokens, self.locks, self.conflicts = ledger, tokens, locks, conflicts
        self.flag = ledger.flag
        self.per_table, self.log, self.reread = design.per_table, design.log, reread
        self.moved_fails = moved_fails
        self.multi_table, self.table_by_table = design.multi_table, design.table_by_table
        self.seq = 0                                   # successful CASes so far: the global seq
        self.v: dict[int, int] = {}                    # replayed version per table
        self.last_committed_version: dict[int, int] = {}   # recorded version of each table's latest ok CAS
        self.cas_time: dict[int, float] = {}           # each transaction's successful CAS's time
        self.last_cas_time: dict[int, float] = {}      # ... and its latest CAS's (ok or not)

    def cas_seq(self, table: int) -> int:
        """What a CAS on `table` compares `expected` with, and what rows record as seq."""
        return self.v.get(table, 0) if self.per_table else self.seq

    def state_str(self, table: int) -> str:
        v = self.v.get(table, 0)
        return f"v[{table}]={v}" if self.per_table else f"seq {self.seq}, v[{table}]={v}"

    def _answered(self, e: Event, x: Txn, what: str) -> None:
        """Invariant 5: a caller learns an answer no earlier than the operation's effect point, and
        cannot act before it has."""
        answer = as_float(e.raw.answer_ms)
        if not (answer >= e.time_ms - TIME_EPS_MS):
            self.flag(5, e, f"{what} answered at t={fmt_t(answer)} ms, before its effect point "
                            f"t={fmt_t(e.time_ms)} ms")
        x.ready_ms = max(x.ready_ms, answer)

    # ------------------------------------------------------------------------------------------ kinds

    def read(self, e: Event) -> None:
        """Invariant 5: a read returns exactly the replayed state at its effect point."""
        x = self.ledger.txn_of(e)
        r_seq, r_v = as_int(e.raw.seq), as_int(e.raw.version)
        cur_seq, cur_v = self.cas_seq(e.table), self.v.get(e.table, 0)
        if r_seq != cur_seq or r_v != cur_v:
            when = "from the future" if (r_seq > cur_seq or (r_seq == cur_seq and r_v > cur_v)) else "stale"
            self.flag(5, e, f"read returned seq {r_seq}, v[{e.table}]={r_v} but the state at its effect point "
                            f"t={fmt_t(e.time_ms)} ms was {self.state_str(e.table)} ({when})")
        self._answered(e, x, "read")
        if self.reread and x.after_prepare and r_v != x.prepare_base:
            # the re-read saw the table moved: the attempt failed before its CAS
            self.ledger.count_attempt(e, x, "attempt {n} (failed at its re-read)")
        if self.moved_fails and x.base_read_version is not None and r_v != x.prepare_base:
            # an attempt's LIST saw the log moved with no retry left: it failed there, before any check or CAS
            self.ledger.count_attempt(e, x, "attempt {n} (failed at its LIST: the log moved)")
            x.last_write = "moved"
        x.after_prepare = False
        x.resending = False
        x.last_read_seq = r_seq
        x.reads[e.table] = r_seq
        if x.base_read_version is None:
            x.base_read_version = r_v
            self.conflicts.base_read(e, x)
            if self.log:   # the base read is a prepare with nothing checked (stale first create)
                x.prepare_base = r_v

    def prepare(self, e: Event) -> None:
        """Invariant 4's groundwork: the base a transaction prepared on, and the snapshots it checked."""
        x = self.ledger.txn_of(e)
        base, cur_v, tbl, t = as_int(e.raw.base_version), self.v.get(e.table, 0), e.table, fmt_t(e.time_ms)
        if base > cur_v:
            self.flag(4, e, f"prepare based on v[{tbl}]={base}, which does not exist yet "
                            f"(v[{tbl}] was {cur_v} at t={t} ms)")
        x.prepare_base = base
        x.prepared[tbl] = base
        x.after_prepare = True
        if not (x.op in VALIDATED or self.log):
            return
        vf, vt = as_int(e.raw.validated_from), as_int(e.raw.validated_to)
        what = "log prepare" if self.log else f"{x.op.upper()} prepare"
        if vf < 0 or vt < vf:
            self.flag(0, e, f"{what} with invalid validated range ({vf}, {vt}]")
        elif vt > cur_v:
            self.flag(4, e, f"{what} checked up to v[{tbl}]={vt}, which did not exist yet "
                            f"(v[{tbl}] was {cur_v} at t={t} ms)")
        else:
            x.validated.append((vf, vt))

    def throttled(self, e: Event) -> None:
        """A conditional write answered 429: it changes nothing and is no attempt."""
        x = self.ledger.txn_of(e)
        expected = as_int(e.raw.expected)
        rec_seq, rec_v = as_int(e.raw.seq), as_int(e.raw.version)
        self._answered(e, x, "throttled request")
        self._expects_last_read(e, x, expected, "throttled conditional write", "throttled write")
        if x.ok_cas_row >= 0:
            self.flag(3, e, f"conditional write after the transaction committed at row {x.ok_cas_row}")
        x.last_write = "throttled"
        if as_bool(e.raw.ok):
            self.flag(2, e, "throttled request records ok = true (a throttled request changes nothing)")
        if rec_seq != self.cas_seq(e.table) or rec_v != self.v.get(e.table, 0):
            self.flag(2, e, f"throttled request records seq {rec_seq}, v[{e.table}]={rec_v} but the state, "
                            f"which a throttled request leaves unchanged, is {self.state_str(e.table)}")
        self.tokens.conditional_write(e, expected, throttled=True)

    def fault(self, e: Event) -> None:
        """A commit request that took effect and lost its answer (`ok`: its CAS row before; a REST server's 409 may
        come after its re-load) or was answered 5xx before it took effect (it changes nothing and is no attempt).
        Until the transaction's next read, a CAS of it is its storage client's resend."""
        x = self.ledger.txn_of(e)
        x.faults += 1
        expected = as_int(e.raw.expected)
        if as_bool(e.raw.ok):
            if not e.time_ms >= self.last_cas_time.get(e.txn, math.inf) - TIME_EPS_MS:
                self.flag(3, e, "lost answer that follows no CAS of its transaction")
            x.lost_answer = True
        else:
            self._answered(e, x, "5xx")
            self._expects_last_read(e, x, expected, "failed conditional write", "failed write")
            rec_seq, rec_v = as_int(e.raw.seq), as_int(e.raw.version)
            if rec_seq != self.cas_seq(e.table) or rec_v != self.v.get(e.table, 0):
                self.flag(2, e, f"5xx records seq {rec_seq}, v[{e.table}]={rec_v} but the state, which a request "
                                f"answered 5xx before it took effect leaves unchanged, is {self.state_str(e.table)}")
            self.tokens.conditional_write(e, expected, throttled=False)   # it took its object's token
            x.last_write = "fault"
        x.resending = True

    def cas(self, e: Event) -> None:
        """Invariants 1 and 3 at an attempt; a success also 4 (and 7 with a lock), and changes the catalog."""
        x = self.ledger.txn_of(e)
        x.last_write = "cas"
        x.after_prepare = False
        self.last_cas_time[e.txn] = e.time_ms
        expected = as_int(e.raw.expected)
        self._answered(e, x, "CAS")
        if not x.resending:                          # a storage client's resend of a faulted write is no attempt
            self.ledger.count_attempt(e, x, "CAS attempt {n}")
        self._expects_last_read(e, x, expected, "CAS", "CAS")
        self.tokens.conditional_write(e, expected, throttled=False)
        if as_bool(e.raw.ok):
            self._commit(e, x, expected)
            self.locks.check_commit(e)
        elif expected == self.cas_seq(e.table):
            self.flag(1, e, self._free_yet_failed(e, expected))
        rec_seq, rec_v = as_int(e.raw.seq), as_int(e.raw.version)
        if rec_seq != self.cas_seq(e.table) or rec_v != self.v.get(e.table, 0):
            self.flag(1, e, f"CAS records seq {rec_seq}, v[{e.table}]={rec_v} afterwards but the replayed "
                            f"state is {self.state_str(e.table)}")

    def landed(self, e: Event) -> None:
        """A commit over several tables landed on this table too, at its successful CAS (an instant the same):
        under scope table it expected the version its transaction read of the table (invariant 1) and prepared on
        (4); the table's version moves on, the global seq does not (one commit)."""
        x = self.ledger.txn_of(e)
        tbl, v_before = e.table, self.v.get(e.table, 0)
        ok_time = self.cas_time.get(e.txn)
        if not self.multi_table or x.ok_cas_row < 0 or (ok_time != e.time_ms and not self.table_by_table):
            self.flag(3, e, "landed row that does not follow, at its instant, a successful CAS of a commit over "
                            "several tables")
        if tbl in x.landed_tables:
            self.flag(3, e, f"commit lands on table {tbl} again")
        x.landed_tables.add(tbl)
        if self.table_by_table:                      # each table's landing a commit of its own
            self.seq += 1
        if self.per_table:
            expected = as_int(e.raw.expected)
            self._expects_last_read(e, x, expected, "landed commit", "landed commit")
            if expected != v_before:
                self.flag(1, e, self._taken_yet_succeeded(e, expected, v_before))
            self._serializable(e, x, v_before)
            self.locks.check_commit(e)
        self.v[tbl] = v_before + 1
        rec_v, last = as_int(e.raw.version), self.last_committed_version.get(tbl, 0)
        if rec_v != last + 1 or rec_v != self.v[tbl]:
            self.flag(4, e, f"landed commit installs v[{tbl}]={rec_v} but the replayed v[{tbl}] is {self.v[tbl]} "
                            f"and the previous commit to table {tbl} installed v[{tbl}]={last}")
        self.last_committed_version[tbl] = rec_v

    def end(self, e: Event) -> None:
        """Invariants 2 and 3: one end per transaction, its outcome and attempts true to its CASes."""
        x = self.ledger.txn_of(e)
        if x.end_row >= 0:
            self.flag(3, e, f"transaction ends again (first end at row {x.end_row})")
            return
        x.end_row = e.i
        self._outcome(e, x, as_str(e.raw.outcome), as_str(e.raw.reason))
        attempts = as_int(e.raw.attempts)
        if attempts != x.cas_count:
            self.flag(3, e, f"end reports {attempts} attempts but the transaction made {x.cas_count} CAS "
                            f"attempts (throttled requests are not attempts)")

    def final(self, e: Event) -> None:
        """Invariants 1 and 2 at the end of the run: seq counts every success, v[t] those on t."""
        f_seq, f_v = as_int(e.raw.seq), as_int(e.raw.version)
        if f_seq != self.seq:
            what = "over all tables " if self.per_table else ""
            self.ledger.add(1, e.i, -1, f"final seq is {f_seq} but there were {self.seq} successful CASes "
                                        f"{what}(seq must run 1..N without gaps)")
        replayed_v = self.v.get(e.table, 0)
        if f_v != replayed_v:
            self.ledger.add(2, e.i, -1, f"final v[{e.table}] is {f_v} but table {e.table} had {replayed_v} "
                                        f"successful CASes")

    # ------------------------------------------------------------------------------------------ their parts

    def _outcome(self, e: Event, x: Txn, outcome: str, reason: str) -> None:
        """A transaction commits iff one of its CASes succeeded; the reason fits the outcome."""
        if outcome not in OUTCOMES:
            self.flag(3, e, f"end with unknown outcome {outcome!r}")
        elif outcome in ("committed", "duplicated"):
            if (x.ok_cas_count != 1) if outcome == "committed" else (x.ok_cas_count < 2):
                self.flag(3, e, f"ends {outcome} with {x.ok_cas_count} successful CAS(es)")
            if self.table_by_table and x.landed_tables != set(x.prepared):
                self.flag(3, e, f"ends {outcome} but landed on tables {sorted(x.landed_tables)} of "
                                f"{sorted(x.prepared)}")
            if reason:
                self.flag(3, e, f"{outcome} with a reason {reason!r}")
        elif outcome == "partial":               # told committed, landed on some of its tables only
            if not self.table_by_table or not x.landed_tables < set(x.prepared) or reason not in PARTIAL_REASONS:
                self.flag(3, e, f"ends partial ({reason!r}) but landed on tables {sorted(x.landed_tables)} of "
                                f"{sorted(x.prepared)}" + ("" if self.table_by_table else
                                                           " (only a commit table by table can)"))
        elif outcome == "unknown":               # it may have landed: the history says (`outcomes_resolved`)
            if reason not in UNKNOWN_REASONS:
                self.flag(3, e, f"unknown with reason {reason!r}, expected one of {sorted(UNKNOWN_REASONS)}")
            if x.faults == 0:
                self.flag(3, e, "ends unknown but no request of it faulted")
        else:
            if x.ok_cas_row >= 0 and not (outcome == "unfinished" and (x.lost_answer or self.table_by_table)):
                self.flag(2, e, f"ends {outcome} but its CAS at row {x.ok_cas_row} succeeded (changed the catalog)")
            if outcome == "aborted" and reason not in ABORT_REASONS:
                self.flag(3, e, f"aborted with reason {reason!r}, expected one of {sorted(ABORT_REASONS)}"
                          if reason else "aborted without a reason")
            if reason in ("lock_timeout", "deadlock") and x.last_write != "lock_timeout":
                self.flag(3, e, f"ends {reason} but its last lock request was not given up for good")
            if self.moved_fails and x.last_write == "moved" and reason != "retries_exhausted":
                self.flag(3, e, f"ends {reason!r} but its attempt failed at its LIST (the log moved with no retry "
                                f"left): expected 'retries_exhausted'")
            if reason == "throttled" and x.last_write != "throttled":
                self.flag(3, e, "ends throttled (its storage client gave a request up) but its last conditional "
                                "write was not answered 429")
            if outcome == "unfinished" and reason != "unfinished":
                self.flag(3, e, f"unfinished with reason {reason!r}, expected 'unfinished'")

    def _expects_last_read(self, e: Event, x: Txn, expected: int, what_unread: str, what: str) -> None:
        """Invariant 1: a conditional write expects the seq its transaction last read (of its table, where a
        commit spans several)."""
        last = x.reads.get(e.table) if self.multi_table else x.last_read_seq
        if last is None:
            self.flag(1, e, f"{what_unread} without any prior catalog read")
        elif expected != last:
            self.flag(1, e, f"{what} expected seq {expected} but the transaction's last read saw "
                            f"seq {last}")

    def _commit(self, e: Event, x: Txn, expected: int) -> None:
        """A successful CAS: invariants 1, 3 and 4, then the success is applied to the replayed state
        (never to the recorded one)."""
        tbl = e.table
        v_before, cur = self.v.get(tbl, 0), self.cas_seq(tbl)
        if x.ok_cas_row >= 0 and not x.lost_answer:
            self.flag(3, e, f"second successful CAS (already committed at row {x.ok_cas_row})")
        x.ok_cas_count += 1
        if expected != cur:
            self.flag(1, e, self._taken_yet_succeeded(e, expected, cur))
        self._serializable(e, x, v_before)
        self.conflicts.committed(e, x, v_before)
        self.seq += 1
        self.v[tbl] = v_before + 1
        if x.ok_cas_row < 0:
            x.ok_cas_row = e.i
            self.cas_time[e.txn] = e.time_ms
        x.landed_tables.add(tbl)
        rec_v, last = as_int(e.raw.version), self.last_committed_version.get(tbl, 0)
        if rec_v != last + 1:
            self.flag(4, e, f"commit installs v[{tbl}]={rec_v} but the previous commit to table {tbl} "
                            f"installed v[{tbl}]={last} (not serial)")
        self.last_committed_version[tbl] = rec_v

    def _taken_yet_succeeded(self, e: Event, expected: int, cur: int) -> str:
        """Invariant 1, in the design's terms: a CAS succeeded although its object held `cur`, not `expected`."""
        tbl, t = e.table, fmt_t(e.time_ms)
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

    def _free_yet_failed(self, e: Event, expected: int) -> str:
        """Invariant 1, in the design's terms: a CAS failed although its object held what it expected."""
        tbl, t, cur = e.table, fmt_t(e.time_ms), expected
        if self.log:
            return (f"create of entry {expected + 1} of table {tbl}'s log failed, but the log had {cur} "
                    f"entries at t={t} ms (the entry was free)")
        if self.per_table:
            return (f"CAS on table {tbl} expected v[{tbl}]={expected} and v[{tbl}] was {cur} at t={t} ms, yet "
                    f"it failed (commits to other tables never make it fail under scope table)")
        return f"CAS expected seq {expected} and seq was {cur} at t={t} ms, yet it failed"

    def _serializable(self, e: Event, x: Txn, v_before: int) -> None:
        """Invariant 4 at a successful CAS: installed metadata is based on the version it replaces, and
        a VO (under the log protocol: any transaction) has checked every snapshot committed since its
        base read."""
        tbl, t = e.table, fmt_t(e.time_ms)
        base = x.prepared.get(tbl) if self.multi_table else x.prepare_base
        if base is None:
            self.flag(4, e, "successful CAS without any prepare")
        elif base != v_before and self.log:
            self.flag(4, e, f"lost update: created entry {v_before + 1} of table {tbl}'s log on a base of "
                            f"{base} entries, but the log had {v_before} at t={t} ms")
        elif base != v_before:
            self.flag(4, e, f"lost update: CAS installs metadata prepared on v[{tbl}]={base} but "
                            f"replaces v[{tbl}]={v_before} at t={t} ms")
        if not (x.op in VALIDATED or self.log):
            return
        if x.base_read_version is None:
            self.flag(4, e, f"{x.op.upper() or 'transaction'} commits without a base read")
            return
        gap = first_gap(x.base_read_version, x.validated, v_before)
        if gap and self.log:
            self.flag(4, e, f"{x.op.upper()} creates entry {v_before + 1} of table {tbl}'s log without checking "
                            f"entr(ies) {gap} (base read saw {x.base_read_version} entries)")
        elif gap:
            self.flag(4, e, f"{x.op.upper()} commits over v[{tbl}]={v_before} without validating snapshot(s) {gap} "
                            f"(base read saw v[{tbl}]={x.base_read_version})")
