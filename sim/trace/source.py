"""A trace file as a config and a run read it: its content's digest (part of the config's identity, so a sweep's
cache follows the file's content, not its name), its rows as arrays with codes, and the facts the config's rules
need. A file is read once per process and version of it (its path, size and modification time)."""
from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..schema import ConfigError
from .schema import OPERATIONS, read_trace


@dataclass(frozen=True, eq=False)
class TraceData:
    """A trace's rows in time order. Tables are numbered by their commits, most first (ties by name), so a table's
    index + 1 is its popularity rank (the per-table results' `table_rank`); writers by name."""
    path: str
    sha256: str
    time_ms: np.ndarray          # float64, sorted
    table: np.ndarray            # int64 index into `tables`
    tables: tuple[str, ...]
    operation: np.ndarray        # int64 index into schema.OPERATIONS
    runtime_ms: np.ndarray       # float64, NaN where unknown
    writer: np.ndarray           # int64 index into `writers`, -1 where unknown
    writers: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.time_ms)

    @property
    def operations(self) -> tuple[str, ...]:
        """The operations the trace holds, in `OPERATIONS` order."""
        present = np.unique(self.operation)
        return tuple(OPERATIONS[i] for i in present)

    def first_start_ms(self) -> float:
        """The earliest start the trace knows: a row's time less its runtime where it has one, else its time."""
        rt = np.where(np.isnan(self.runtime_ms), 0.0, self.runtime_ms)
        return float(np.min(self.time_ms - rt))

    def mean_gap_ms(self) -> float:
        """The mean gap between its commits (0 for a single commit)."""
        n = len(self)
        return float(self.time_ms[-1] - self.time_ms[0]) / (n - 1) if n > 1 else 0.0


def digest(path: str | Path) -> str:
    """sha256 of the file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load(path: str | Path) -> TraceData:
    """The trace at `path` (read once per version of the file in this process)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise ConfigError("", f"trace file not found: {p}") from None
    except OSError as exc:
        raise ConfigError("", f"{p}: cannot read it: {exc.strerror or exc}") from None
    return _load(str(p.resolve()), st.st_size, st.st_mtime_ns, str(p))


@functools.lru_cache(maxsize=8)
def _load(resolved: str, size: int, mtime_ns: int, shown: str) -> TraceData:
    import pandas as pd
    df = read_trace(shown)
    tables, table = _by_commits(df["table"].to_numpy())
    writers = tuple(sorted(df["writer"].dropna().unique().tolist()))
    writer = pd.Categorical(df["writer"], categories=writers).codes.astype(np.int64)   # (-1: no writer)
    operation = pd.Categorical(df["operation"], categories=OPERATIONS).codes.astype(np.int64)
    return TraceData(shown, digest(shown), df["time_ms"].to_numpy(np.float64), table, tables, operation,
                     df["runtime_ms"].to_numpy(np.float64), writer, writers)


def _by_commits(names: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """The table names, most commits first (ties by name), and each row's index into them."""
    uniq, inverse, counts = np.unique(np.asarray(names, dtype=str), return_inverse=True, return_counts=True)
    order = np.lexsort((uniq, -counts))
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    return tuple(uniq[order].tolist()), rank[inverse].astype(np.int64)
