"""Invariant 8, operations with read and write sets: no committed operation has a commit landed on its table
since its base read that the format's rules (Iceberg's, Delta's, Hudi's) make fatal to it (docs/MODEL.md, "Operations and maintenance"). The
rules are written here again, as the table in MODEL.md states them, not imported: the checker shares no code
with the engine."""

from __future__ import annotations

import bisect

from .rows import Event
from .state import Ledger, Txn

# the operations that add no snapshot (their commits change metadata only), and those that remove or delete from
# the data files of their partitions
METADATA_ONLY = {"expire_snapshots", "schema_change"}
REMOVERS = {"overwrite", "row_delta", "compaction"}
# the operations whose commit must have validated every snapshot since its base read (invariant 4, as a VO's)
VALIDATED = {"vo", "overwrite", "row_delta", "compaction", "rewrite_manifests"}


def fatal(x: str, y: str, overlap: bool, serializable: bool, server: bool, equality: bool) -> bool:
    """Iceberg's table (MODEL.md): X, committing after Y landed, fails for good."""
    if x == "schema_change":
        return y == "schema_change" or not server
    if x in ("fa", "vo", "expire_snapshots") or y in METADATA_ONLY or (x == "row_delta" and equality):
        return False
    if x == "rewrite_manifests":
        return y in REMOVERS or y == "rewrite_manifests"
    if not overlap:
        return False
    if x in ("overwrite", "row_delta"):
        return y in REMOVERS or (y == "fa" and serializable)
    return x == "compaction" and y in REMOVERS and not (y == "row_delta" and equality)


def fatal_delta(x: str, y: str, overlap: bool) -> bool:
    """Delta's table (MODEL.md): a metadata change fails every commit after it but an OPTIMIZE's (which recommits),
    and fails for any commit since its own base; a blind append fails for nothing else; a DELETE/UPDATE/MERGE and
    an OPTIMIZE fail when Y removed files of their partitions."""
    if x == "schema_change":
        return True
    if y == "schema_change":
        return x != "compaction"
    if x == "fa":
        return False
    return overlap and y in ("overwrite", "compaction")


def fatal_hudi(x: str, y: str, overlap: bool, mor: bool) -> bool:
    """Hudi's (MODEL.md): two writes conflict iff the file groups they mutated meet; an insert writes new ones and a
    schema change none. A merge-on-read compaction fails no one by landing (`Conflicts.committed` orders instants)
    and checks nothing itself."""
    if mor and "compaction" in (x, y):
        return False
    return overlap and "fa" not in (x, y) and "schema_change" not in (x, y)


def fatal_ducklake(x: str, y: str, overlap: bool, v14: bool = False) -> bool:
    """DuckLake's (MODEL.md), table by table: an insert fails for a delete or an alter; a delete for an insert, a
    compaction, an alter, or a delete of the same files; a compaction for a delete or a compaction; an alter for an
    alter. DuckLake 1.4 (`v14`): an insert and a delete never fail for each other."""
    return {"fa": y == "schema_change" or (y == "overwrite" and not v14),
            "overwrite": (y in ("compaction", "schema_change") or (y == "fa" and not v14)
                          or (y == "overwrite" and overlap)),
            "compaction": y in ("overwrite", "compaction"),
            "schema_change": y == "schema_change"}.get(x, False)


class Conflicts:
    """Each table's commits (operation, partitions) in version order, and the check at each commit."""

    def __init__(self, ledger: Ledger, rules: dict | None):
        self.ledger, self.rules = ledger, rules
        self.landed: dict[int, list[tuple[str, int]]] = {}
        # Hudi: each table's clusterings or merge-on-read compactions as scheduled (their base read's row,
        # partitions), in order
        self.format = rules.get("format") if rules is not None else None
        self.hudi = self.format == "hudi"
        self.mor = self.hudi and rules.get("mor", False)
        self.scheduled: dict[int, list[tuple[int, int]]] = {}

    def base_read(self, e: Event, x: Txn) -> None:
        """X's first read: on Hudi, its instant (a clustering's or a compaction's is its schedule)."""
        x.base_read_row = e.i
        if self.hudi and x.op == "compaction":
            self.scheduled.setdefault(e.table, []).append((e.i, x.parts))

    def _scheduled_over(self, e: Event, x: Txn) -> None:
        """Hudi: an upsert may not commit if a clustering or compaction of its partitions was scheduled after its
        instant (pending or completed: `getCandidateInstants`, and `resolveConflict` passes only earlier
        compactions)."""
        rows = self.scheduled.get(e.table, [])
        for row, parts in rows[bisect.bisect_right(rows, (x.base_read_row, -1)):]:
            if parts & x.parts:
                self.ledger.flag(8, e, f"overwrite commits, but a table service of partitions {parts:#x} was scheduled "
                                       f"at row {row}, after its instant (row {x.base_read_row}; partitions "
                                       f"{x.parts:#x})")
                return

    def _fatal(self, x: str, y: str, overlap: bool) -> bool:
        """The run's format's rule: X, committing after Y landed, fails for good."""
        if self.format == "hudi":
            return fatal_hudi(x, y, overlap, self.mor)
        if self.format == "delta":
            return fatal_delta(x, y, overlap)
        if self.format == "ducklake":
            return fatal_ducklake(x, y, overlap, self.rules.get("ducklake_version") == "1.4")
        return fatal(x, y, overlap, self.rules["serializable"], self.rules["server"], self.rules["equality"])

    def committed(self, e: Event, x: Txn, v_before: int) -> None:
        """X's commit replaces v[t] = v_before: none of the commits since its base read (or since the version it
        validated from, if earlier: a compaction's batch in partial progress, from its run's start) may be fatal
        to it. A batch's run's other batches rewrote other files: they are the only compactions in its window."""
        if self.rules is None:
            return
        log = self.landed.setdefault(e.table, [])
        if self.hudi and x.op == "overwrite" and x.base_read_row is not None:
            self._scheduled_over(e, x)
        if x.base_read_version is not None:
            start = min([x.base_read_version] + [vf for vf, _ in x.validated])
            for v in range(start + 1, v_before + 1):
                y, parts = log[v - 1]
                sibling = self.rules.get("partial", False) and x.op == y == "compaction"
                overlap = (parts & x.parts) != 0 and not sibling
                if self._fatal(x.op, y, overlap):
                    self.ledger.flag(8, e, f"{x.op} commits over v[{e.table}]={v_before}, but v[{e.table}]={v} "
                                           f"({y}, partitions {parts:#x}) landed after its base read "
                                           f"(v[{e.table}]={start}) and fails it (partitions "
                                           f"{x.parts:#x})")
                    break
        log.append((x.op, x.parts))
