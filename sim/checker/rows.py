"""A history's rows as the checker reads them, the violation it reports, and the two ends of a check: loading a
history and printing a violation. Standard library and pandas only: the checker shares no code with the engine."""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import pandas as pd

REQUIRED_COLUMNS = (
    "i", "kind", "time_ms", "txn", "table", "op", "seq", "version", "expected", "ok",
    "base_version", "validated_from", "validated_to", "answer_ms", "outcome", "reason", "attempts",
)
# columns a history may lack (one written before they were): read as this value
OPTIONAL_COLUMNS = {"parts": 0}
COLUMNS = REQUIRED_COLUMNS + tuple(OPTIONAL_COLUMNS)
LOCK_KINDS = {"lock_request", "lock_grant", "lock_release", "lock_timeout", "lock_write"}
KINDS = {"begin", "read", "prepare", "cas", "throttled", "end", "final", "store_write", "store_read",
         "landed", "fault"} | LOCK_KINDS
# Float slack when comparing times that the engine computes as the same sum (start + latency).
TIME_EPS_MS = 1e-6


class Violation(NamedTuple):
    """One broken invariant: its number (0 = format), the history row `i` (-1 if global), why."""

    invariant: int
    i: int
    message: str


def as_int(x) -> int:
    """Missing ints are -1 by the format; tolerate NaN/None from a lossy writer."""
    if x is None:
        return -1
    try:
        if isinstance(x, float) and math.isnan(x):
            return -1
        return int(x)
    except (TypeError, ValueError):
        return -1


def as_str(x) -> str:
    return x if isinstance(x, str) else ""


def as_bool(x) -> bool:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return False
    return bool(x)


def as_float(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def fmt_t(t: float) -> str:
    return f"{t:g}" if abs(t) < 1e15 else repr(t)


# One history row as recorded: a field per column, in COLUMNS order.
Row = NamedTuple("Row", [(c, object) for c in COLUMNS])


class Event(NamedTuple):
    """One history row: the columns every row has, converted, and the row as recorded. Each kind converts
    the other columns it reads, so an odd value in a cell its kind leaves unused is no error."""

    i: int
    kind: str
    time_ms: float
    txn: int
    table: int
    raw: Row

    @classmethod
    def of(cls, raw: Row) -> "Event":
        return cls(as_int(raw.i), as_str(raw.kind), as_float(raw.time_ms), as_int(raw.txn), as_int(raw.table), raw)


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
