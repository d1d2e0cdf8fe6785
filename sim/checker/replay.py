"""The driver: a history's rows in `i` order, each checked for what every row shares and handed to the family that
checks its kind (`Catalog`, `Tokens`, `Locks`); then what only the whole history shows."""

from __future__ import annotations

import math

import pandas as pd

from .cas import Catalog
from .conflicts import Conflicts
from .locks import Locks
from .rows import COLUMNS, KINDS, OPTIONAL_COLUMNS, REQUIRED_COLUMNS, TIME_EPS_MS, Event, Row, Violation, fmt_t
from .state import Design, Ledger
from .tokens import Buckets, Tokens

SCOPES = ("global", "table")
PROTOCOLS = ("rewrite", "log")


class Replay:
    """The checker's own catalog, replayed row by row (docs/MODEL.md "History and invariants").

    `row` checks what every row shares and hands the row to its kind's family, which compares the row with the
    replayed state and then applies it; `finish` checks what only the whole history shows. The families share
    only the ledger (violations, transactions) and the design; the catalog books each conditional write with the
    tokens and each commit with the locks."""

    def __init__(self, scope: str = "global", protocol: str = "rewrite",
                 mutation_rate_per_s: float | None = None, mutation_burst: float = 1.0,
                 version_files: bool = False, reread_before_cas: bool = False, lock_scope: str | None = None,
                 lock_fifo: bool = False, log_store: bool = False, lock_object: bool = False,
                 read_rate_per_s: float | None = None, read_burst: float = 1.0, mutation_refusal_tokens: float = 0.0,
                 client_limit: bool = False, operations: dict | None = None, multi_table: bool = False,
                 table_by_table: bool = False, moved_fails: bool = False):
        if lock_scope not in (None,) + SCOPES:
            raise ValueError(f"lock_scope must be None or one of {SCOPES}, not {lock_scope!r}")
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}, not {scope!r}")
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
        buckets = None if mutation_rate_per_s is None else Buckets(mutation_rate_per_s, mutation_burst,
                                                                     mutation_refusal_tokens)
        log = protocol == "log"
        design = Design(per_table=log or scope == "table", log=log, version_files=version_files,
                        multi_table=multi_table, table_by_table=table_by_table)
        self.ledger = ledger = Ledger(multi_table)
        reads = None if read_rate_per_s is None else Buckets(read_rate_per_s, read_burst)
        self.tokens = tokens = Tokens(ledger, design, buckets, log_store, reads, client_limit)
        self.locks = locks = Locks(ledger, tokens, lock_scope, lock_fifo, lock_object)
        self.catalog = catalog = Catalog(ledger, design, reread_before_cas, tokens, locks,
                                         Conflicts(ledger, operations), moved_fails)
        self.routes = {
            "begin": ledger.begin, "read": catalog.read, "prepare": catalog.prepare, "cas": catalog.cas,
            "throttled": catalog.throttled, "fault": catalog.fault, "end": catalog.end, "final": catalog.final,
            "landed": catalog.landed,
            "store_write": tokens.store_write, "store_read": tokens.store_read,
            "lock_request": locks.route(locks.request),
            "lock_grant": locks.route(locks.grant), "lock_release": locks.route(locks.release),
            "lock_timeout": locks.route(locks.timeout), "lock_write": locks.route(locks.write),
        }
        self.tables_seen: set[int] = set()
        self.final_tables: dict[int, int] = {}         # final rows per table
        self.prev_time_ms = -math.inf
        self.prev_i: int | None = None

    def row(self, e: Event) -> None:
        """Checks every row shares (unique `i`, time order, a known kind), then those of its kind."""
        flag = self.ledger.flag
        if self.prev_i is not None and e.i == self.prev_i:
            flag(0, e, f"row number i={e.i} appears more than once")
        self.prev_i = e.i
        # Invariant 5: time is non-decreasing in processing order.
        if not (e.time_ms >= self.prev_time_ms - TIME_EPS_MS):
            flag(5, e, f"time went backwards: t={fmt_t(e.time_ms)} ms after t={fmt_t(self.prev_time_ms)} ms")
        if not math.isnan(e.time_ms):
            self.prev_time_ms = max(self.prev_time_ms, e.time_ms)
        if e.kind not in KINDS:
            flag(0, e, f"unknown event kind {e.kind!r}")
            return
        if e.kind == "final":
            self.final_tables[e.table] = self.final_tables.get(e.table, 0) + 1
        else:
            self.tables_seen.add(e.table)
        self.routes[e.kind](e)

    def finish(self) -> list[Violation]:
        """The checks only the whole history answers; then every violation, sorted by row."""
        self.ledger.unended()
        add = self.ledger.add
        missing_final = sorted(self.tables_seen - set(self.final_tables))
        if missing_final:
            add(2, -1, -1, f"no final row for tables {missing_final}")
        for tbl, cnt in sorted(self.final_tables.items()):
            if cnt > 1:
                add(2, -1, -1, f"{cnt} final rows for table {tbl}")
        out = self.ledger.out
        out.sort(key=lambda viol: viol.i)
        return out


def check_history(history: pd.DataFrame, *, scope: str = "global", protocol: str = "rewrite",
                  mutation_rate_per_s: float | None = None, mutation_burst: float = 1.0,
                  version_files: bool = False, reread_before_cas: bool = False, lock_scope: str | None = None,
                  lock_fifo: bool = False, log_store: bool = False, lock_object: bool = False,
                  read_rate_per_s: float | None = None, read_burst: float = 1.0,
                  mutation_refusal_tokens: float = 0.0, client_limit: bool = False,
                  operations: dict | None = None, multi_table: bool = False,
                  table_by_table: bool = False, moved_fails: bool = False) -> list[Violation]:
    """Replay `history` (FORMATS.md "History") and return every invariant violation, sorted by row.

    `scope` (`global` | `table`) and `protocol` (`rewrite` | `log`) are the run's `catalog.scope` and
    `commit.protocol` (`log` is always per table); `mutation_rate_per_s` / `mutation_burst` the
    per-object mutation limit the run enforced (None: not checked), `mutation_refusal_tokens` what a refused write
    took of it, `client_limit` whether a bucket per client limited them too (a 429 then need not find its object's
    bucket empty; the client's buckets are not replayed); `version_files`, `reread_before_cas`
    the run's `catalog.version_files` and `commit.reread_before_cas`; `lock_scope` the run's `lock.scope`
    (None: no lock) and `lock_fifo` whether its discipline grants in request order; `log_store` whether it ran
    Delta's DynamoDB log store, and `read_rate_per_s` / `read_burst` its table's read capacity (None: not checked);
    `lock_object` whether its lock is an object in storage (the mutation limit binds its writes); `operations` the
    rules of invariant 8 (`{"serializable": bool, "server": bool, "equality": bool, "format": "iceberg" | "delta" |
    "hudi", "partial": bool, "mor": bool}`; None: operations off); `multi_table` whether a commit may span several
    tables (its rows then name any of them, and a `landed` row each other table it committed), `table_by_table`
    whether such a commit lands one table after another (Iceberg's reference server: a `landed` row comes at its
    table's own instant, each a commit of its own, and a commit told committed may have landed on some of its tables
    only: `partial`); `moved_fails` whether a log attempt whose LIST finds the log moved fails there (delta-rs with no
    retry: counted as an attempt, and the transaction ends `retries_exhausted`). An empty list
    means all checked invariants hold. The replay trusts only the order of events and the CAS outcomes; every observed
    value (read state, seq/version after a CAS, final state) is compared against the checker's own
    catalog state, which is never resynchronised to the record, so an error shows where it first happens.
    """
    replay = Replay(scope, protocol, mutation_rate_per_s, mutation_burst, version_files, reread_before_cas,
                    lock_scope, lock_fifo, log_store, lock_object, read_rate_per_s, read_burst,
                    mutation_refusal_tokens, client_limit, operations, multi_table, table_by_table, moved_fails)
    history = history.assign(**{c: v for c, v in OPTIONAL_COLUMNS.items() if c not in history.columns})
    missing_cols = [c for c in REQUIRED_COLUMNS if c not in history.columns]
    if missing_cols:
        return [Violation(0, -1, f"history lacks columns {missing_cols}")]
    if len(history) == 0:
        return [Violation(2, -1, "history is empty (no final rows)")]
    h = history.sort_values("i", kind="stable")
    for raw in zip(*(h[c].tolist() for c in COLUMNS)):
        replay.row(Event.of(Row._make(raw)))
    return replay.finish()


def outcomes_resolved(history: pd.DataFrame) -> pd.DataFrame:
    """What each transaction whose client was not told a plain outcome really did, from the history: one row per
    transaction that ended `unknown` or `duplicated`, with its times landed (its successful CASes) and what that
    makes it (`not committed`, `committed`, `committed 2 times`, ...)."""
    ends = history[history["kind"] == "end"].set_index("txn")
    told = ends[ends["outcome"].isin(["unknown", "duplicated"])]
    landed = history[(history["kind"] == "cas") & history["ok"].astype(bool)].groupby("txn").size()
    n = landed.reindex(told.index, fill_value=0).astype("int64")
    what = n.map(lambda k: "not committed" if k == 0 else "committed" if k == 1 else f"committed {k} times")
    return pd.DataFrame({"txn": told.index.to_numpy(), "outcome": told["outcome"].to_numpy(),
                         "reason": told["reason"].to_numpy(), "landed": n.to_numpy(), "resolved": what.to_numpy()})
