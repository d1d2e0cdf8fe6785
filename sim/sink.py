"""Where a run's records go as its transactions finish (`sim.model.slots.flush` hands out their slots in batches,
each in id order): kept in memory (`MemorySink`, every run's default: exact summaries from whole columns), or
summarized on the fly and optionally written to parquet row group by row group (`StreamSink`), so that memory
stays flat however long the run."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .records import RECORD_COLUMNS, empty_columns, record_rows


def _concat(chunks: list[dict], names) -> dict[str, np.ndarray]:
    if not chunks:
        return empty_columns(names)
    return {k: np.concatenate([c[k] for c in chunks]) for k in names}


def _by_id(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The records in transaction-id order (they come in batches, each in id order, as transactions finish)."""
    txn = cols["txn"]
    if len(txn) < 2 or (txn[1:] > txn[:-1]).all():
        return cols
    order = np.argsort(txn, kind="stable")
    return {k: v[order] for k, v in cols.items()}


class MemorySink:
    """Every record kept: `columns()` is `sim.records.record_columns` of the whole run."""

    def __init__(self):
        self._chunks: list[dict] = []
        self._cols: dict | None = None

    def add(self, slots: np.ndarray) -> None:
        self._chunks.append(record_rows(slots))
        self._cols = None

    def columns(self) -> dict[str, np.ndarray]:
        if self._cols is None:
            self._cols = _by_id(_concat(self._chunks, RECORD_COLUMNS))
            self._chunks = [self._cols]
        return self._cols

    def close(self) -> None:
        pass


ROW_GROUP_ROWS = 1 << 18   # records per parquet row group


class StreamSink:
    """Records summarized as they come (`sim.metrics.StreamSummary`, if `summarize`), written to `parquet_path`
    in row groups of `row_group_rows` if given (in the order they come: batches of finished transactions, each
    in id order), and only the columns in `keep` kept (the history frame needs a few; a run small enough keeps
    all, for its exact summary)."""

    def __init__(self, window_ms: tuple[float, float], num_tables: int, parquet_path: Path | None = None,
                 row_group_rows: int = ROW_GROUP_ROWS, keep: tuple = (), summarize: bool = True,
                 ops: tuple | None = None):
        from .metrics import FIXED_OPS, StreamSummary
        self.summary = StreamSummary(window_ms, num_tables, ops or FIXED_OPS) if summarize else None
        self.path = None if parquet_path is None else Path(parquet_path)
        self.row_group_rows = row_group_rows
        self.keep = tuple(keep)
        self._kept: list[dict] = []
        self._pending: list[dict] = []
        self._pending_rows = 0
        self._writer = None

    def add(self, slots: np.ndarray) -> None:
        cols = record_rows(slots)
        if self.summary is not None:
            self.summary.add(cols)
        if self.keep:
            self._kept.append({k: cols[k] for k in self.keep})
        if self.path is not None:
            self._pending.append(cols)
            self._pending_rows += len(cols["txn"])
            if self._pending_rows >= self.row_group_rows:
                self._write(self.row_group_rows)

    def _write(self, rows: int | None) -> None:
        """Write full row groups of `rows` records from what is pending (None: all of it, at the end)."""
        from .records import records_frame_of
        from .results_io import ParquetStream
        cols = _concat(self._pending, RECORD_COLUMNS)
        n = len(cols["txn"])
        step = rows or max(n, 1)
        upto = n if rows is None else n - n % step
        if self._writer is None:
            self._writer = ParquetStream(self.path, records_frame_of({k: v[:0] for k, v in cols.items()}))
        for a in range(0, upto, step):
            self._writer.write(records_frame_of({k: v[a:a + step] for k, v in cols.items()}))
        rest = {k: v[upto:] for k, v in cols.items()}
        self._pending, self._pending_rows = [rest], n - upto

    def columns(self) -> dict[str, np.ndarray]:
        """The kept columns of every record, in id order."""
        return _by_id(_concat(self._kept, self.keep))

    def close(self) -> None:
        if self.path is not None:
            self._write(None)
            self._writer.close()
