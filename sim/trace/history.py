"""A table's commit history as the importers read it: one row per commit, in the model's operations.

Every importer (`iceberg`, `delta`, `ducklake`) builds a `History`: its commits, what range of the history it read
(`notes`: what is gone, what it could not see) and what it read but does not replay (`skipped`, by kind: a table's
creation, a view's change). A field it cannot read is a `TraceError`: one line naming the file and the field,
never a guess. `write_trace` writes the trace file, through `sim.trace.schema` (docs/FORMATS.md, "Trace")."""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..schema import ConfigError
from .schema import OPERATIONS      # the model's operation names (docs/model/operations-and-maintenance.md)

COLUMNS = {"time_ms": "float64", "table": "string", "operation": "string", "writer": "string",
           "runtime_ms": "float64", "files": "Int64", "bytes": "float64", "source": "string"}
# timestamps are Unix epoch milliseconds between 2000 and 2200: anything else is a field written in other units
# (seconds, microseconds) or garbage, and is refused rather than read as a date nobody committed on
_MIN_MS, _MAX_MS = 946_684_800_000, 7_258_118_400_000


class TraceError(ConfigError):
    """A history that cannot be read: one line naming the file and the field (the CLI's exit 2)."""

    def __init__(self, message: str):
        super().__init__("", message)


@dataclass
class History:
    """What an importer read: `rows` (dicts of COLUMNS' keys), `read` (one line: what was read), `notes` (what is
    gone or not seen), `skipped` (commits read and not replayed, by kind)."""
    kind: str
    read: str
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)

    def add(self, time_ms: float, table: str, operation: str, source: str, writer: str = "",
            runtime_ms: float | None = None, files: int | None = None, bytes_: float | None = None) -> None:
        assert operation in OPERATIONS, operation
        self.rows.append({"time_ms": float(time_ms), "table": table, "operation": operation, "writer": writer or "",
                          "runtime_ms": math.nan if runtime_ms is None else float(runtime_ms),
                          "files": files, "bytes": math.nan if bytes_ is None else float(bytes_),
                          "source": source})

    def extend(self, other: "History") -> None:
        self.rows += other.rows
        self.notes += other.notes
        self.skipped.update(other.skipped)
        self.read = f"{self.read}; {other.read}" if self.read else other.read

    def frame(self):
        """The trace: one row per commit, by time (ties in the order read)."""
        import pandas as pd
        df = pd.DataFrame(self.rows, columns=list(COLUMNS))
        df = df.astype(COLUMNS)
        return df.sort_values("time_ms", kind="stable").reset_index(drop=True)


def json_object(text: str, where: str, what: str) -> dict:
    """`text` parsed as one JSON object, or a TraceError naming `where`: not JSON, or not `what` (an object)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise TraceError(f"{where}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise TraceError(f"{where}: not {what} (a JSON object)")
    return value


def epoch_ms(value, where: str) -> float:
    """A timestamp field in Unix epoch milliseconds (a JSON integer), or a TraceError naming `where`."""
    if value is None:
        raise TraceError(f"{where}: missing")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TraceError(f"{where}: bad timestamp {value!r} (expected Unix epoch milliseconds, an integer)")
    if not _MIN_MS <= value <= _MAX_MS:
        raise TraceError(f"{where}: bad timestamp {value} (not Unix epoch milliseconds between 2000 and 2200)")
    return float(value)


def count(value, where: str) -> int | None:
    """An optional count (Iceberg's summary strings, Delta's metrics): None when absent, else a non-negative int."""
    if value is None:
        return None
    try:
        n = int(value) if not isinstance(value, (bool, float)) else None
    except (TypeError, ValueError):
        n = None
    if n is None or n < 0:
        raise TraceError(f"{where}: {value!r} is not a count")
    return n


def check_out(path: str) -> Path:
    """The trace file's path, checked before anything is read: parquet or CSV, by its extension."""
    from .schema import kind_of
    kind_of(path)
    return Path(path)


def write_trace(frame, path: str | Path) -> None:
    """Write the trace (sim.trace.schema's writer: checked as a trace is read, parquet or CSV by extension,
    atomically)."""
    from .schema import write_trace as write
    write(frame, path)
