"""What the families of checks share, and nothing else: the catalog design they judge by (`Design`), and the
violations found so far with each transaction's record (`Ledger`)."""

from __future__ import annotations

import math
from typing import NamedTuple

from .rows import TIME_EPS_MS, Event, Violation, as_bool, as_int, as_str, fmt_t

# the operations a begin row may name (`conflicts` judges the ones after the first two)
OPERATIONS = ("fa", "vo", "overwrite", "row_delta", "compaction", "rewrite_manifests", "expire_snapshots",
              "schema_change")

# Rows a transaction may leave after its end: the unlock after the commit that ended it, an entry's completion
# write, the storage lock's PUTs. (A second `end` is flagged by the end's own check.)
AFTER_END_KINDS = ("end", "lock_release", "store_write", "lock_write")


class Design(NamedTuple):
    """The run's catalog shape, as far as more than one family needs it."""

    per_table: bool       # one object per table: scope table, or the log protocol
    log: bool             # the log protocol: a CAS creates a log entry
    version_files: bool   # a CAS creates a version file of its own
    multi_table: bool     # a transaction's commit spans several tables (its rows name any of them)
    table_by_table: bool = False   # ... committed one table after another, not atomically (Iceberg's reference server)


class Txn:
    """What the checker knows about one transaction while replaying."""

    __slots__ = (
        "txn", "begin_row", "table", "op", "max_attempts", "end_row", "cas_count", "ok_cas_row",
        "last_read_seq", "base_read_version", "prepare_base", "validated", "ready_ms", "reported", "last_write",
        "after_prepare", "lock_asked", "parts", "base_read_row", "reads", "prepared", "ok_cas_count", "faults",
        "lost_answer", "resending", "landed_tables",
    )

    def __init__(self, txn: int):
        self.txn = txn
        self.begin_row = -1          # row of the begin event, -1 if not (yet) seen
        self.table = -1
        self.op = ""
        self.max_attempts = -1
        self.end_row = -1
        self.cas_count = 0           # attempts: CASes, failed re-reads, lock requests that failed an attempt
        self.ok_cas_row = -1         # row of the (first) successful CAS
        self.last_read_seq = None    # seq observed by the latest read (what the next CAS must expect)
        self.base_read_version = None  # v[t] observed by the first read: the VO's base v0
        self.prepare_base = None     # base_version of the latest prepare
        self.validated = []          # VO: (from, to] ranges validated by its prepares
        self.ready_ms = -math.inf    # answer time of its latest read/CAS: it cannot act earlier
        self.reported = set()        # one-shot messages already emitted (avoid repeating per row)
        self.last_write = ""         # kind of its latest attempt's row (`cas`, `throttled`, `lock_timeout`)
        self.after_prepare = False   # its latest row was a prepare (the next read is a re-read, if the run has it)
        self.lock_asked = False      # it has a lock request that was neither granted nor given up
        self.parts = 0               # operations: the partitions it touches, one bit each
        self.base_read_row = None    # row of its first read (Hudi: its instant's order)
        self.reads = {}              # a commit over several tables: per table, the seq its latest read saw ...
        self.prepared = {}           # ... and the base its latest prepare of it was on
        self.ok_cas_count = 0        # its successful CASes (2: its change landed twice, a resend's doing)
        self.faults = 0              # its `fault` rows: commit requests that lost their answer or were answered 5xx
        self.lost_answer = False     # one of its CASes took effect and lost its answer
        self.resending = False       # its last conditional write faulted and no read came since: a CAS is a resend
        self.landed_tables = set()   # the tables its commit landed on (a commit over several tables)


class Ledger:
    """The violations found so far and each transaction's record, with the lifecycle checks (invariant 3) that
    every row of a transaction shares, whichever family checks the rest of it."""

    def __init__(self, multi_table: bool = False):
        self.out: list[Violation] = []
        self.txns: dict[int, Txn] = {}
        self.multi_table = multi_table

    def add(self, invariant: int, row: int, txn: int, msg: str) -> None:
        prefix = f"(txn {txn}): " if txn >= 0 else ": "
        self.out.append(Violation(invariant, row, prefix + msg))

    def flag(self, invariant: int, e: Event, msg: str) -> None:
        """A violation at the row being replayed, in the name of its transaction."""
        self.add(invariant, e.i, e.txn, msg)

    def begin(self, e: Event) -> None:
        x = self.txns.get(e.txn)
        if x is not None and x.begin_row >= 0:
            self.flag(3, e, f"transaction begins again (first begin at row {x.begin_row})")
            return
        if x is None:
            x = self.txns[e.txn] = Txn(e.txn)
        x.begin_row, x.table = e.i, e.table
        x.op = as_str(e.raw.op)
        x.parts = max(0, as_int(e.raw.parts))
        x.max_attempts = as_int(e.raw.attempts)
        x.ready_ms = e.time_ms
        if x.op not in OPERATIONS:
            self.flag(0, e, f"begin has op {x.op!r}, expected one of {', '.join(sorted(OPERATIONS))}")

    def txn_of(self, e: Event) -> Txn:
        """The transaction of a row other than `begin`, after the lifecycle checks all such rows share."""
        x = self.txns.get(e.txn)
        if x is None:
            x = self.txns[e.txn] = Txn(e.txn)
        if x.begin_row < 0 and "nobegin" not in x.reported:
            x.reported.add("nobegin")
            self.flag(3, e, f"{e.kind} event before the transaction's begin")
        if x.end_row >= 0 and e.kind not in AFTER_END_KINDS:
            self.flag(3, e, f"{e.kind} event after the transaction ended at row {x.end_row}")
        if x.begin_row >= 0 and e.table != x.table and not self.multi_table:
            self.flag(0, e, f"{e.kind} on table {e.table} but the transaction began on table {x.table}")
        # Only catalog operations are actions the caller starts; prepare and end rows are recorded at the
        # engine's processing time (docs/FORMATS.md), which may precede the answer they follow.
        if e.kind in ("read", "cas", "throttled", "fault") and e.time_ms < x.ready_ms - TIME_EPS_MS \
                and not (e.kind == "fault" and as_bool(e.raw.ok)):
            self.flag(5, e, f"{e.kind} at t={fmt_t(e.time_ms)} ms before the transaction learned the answer "
                            f"of its previous catalog operation (t={fmt_t(x.ready_ms)} ms)")
        return x

    def count_attempt(self, e: Event, x: Txn, what: str) -> None:
        """Invariant 3: one more attempt (`what`, with `{n}` for its number), within those its begin allows."""
        x.cas_count += 1
        if x.max_attempts >= 0 and x.cas_count > x.max_attempts:
            self.flag(3, e, f"{what.format(n=x.cas_count)} exceeds the {x.max_attempts} allowed")

    def unended(self) -> None:
        """Invariant 3 at the end of the history: every transaction that began ended."""
        for x in self.txns.values():
            if x.begin_row >= 0 and x.end_row < 0:
                self.add(3, x.begin_row, x.txn, "transaction never ends (no end row)")
