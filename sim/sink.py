"""Where a run's records go as its transactions finish (`sim.model.slots.flush` hands out their slots in batches,
each in id order, the fields a sink asks for placed where it says, `room`): kept in memory (`MemorySink`, every
run's default: exact summaries from whole columns), or summarized on the fly and optionally written to parquet row
group by row group (`StreamSink`), so that memory stays flat however long the run."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .records import RECORD_COLUMNS, RECORD_DTYPES, RECORD_FIELDS, empty_columns, record_columns_of


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


EXPECTED_MOST = 1 << 18   # the most records room is made for before any is handed in


def fields_of(block: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """RECORD_FIELDS' columns of n records: views of the rows of `block` (their words)."""
    return {name: block[i, :n].view(RECORD_DTYPES[name]) for i, name in enumerate(RECORD_FIELDS)}


def _room_for(n: int) -> np.ndarray:
    """Room for n records' fields, a row a field. The in-memory sink makes room for the records a run is expected
    to hand in from the start: an array this size is mapped afresh (its pages faulted in and zeroed), and growing
    it by doubling from nothing copied 100-240 ms of a heavy run in this machine's slow moments."""
    return np.empty((len(RECORD_FIELDS), n), dtype=np.int64)


class MemorySink:
    """Every record kept: `columns()` is `sim.records.record_columns` of the whole run. Transaction ids are 0, 1,
    ... in the order transactions open, each handed out once (`sim.model.slots.flush`), so each record's fields go
    straight to its id's place: no batch is copied again, nor sorted (which, at a heavy run's end, took as long as
    handing the records out)."""

    fields = RECORD_FIELDS   # what it asks of the slots it is handed

    def __init__(self, expected: int = 0):
        """`expected`: the records the run is expected to hand in (room for them from the start)."""
        self._block = _room_for(min(expected, EXPECTED_MOST))   # a field's values by id, as words
        self._count = 0           # records handed in
        self._ids = 0             # the highest id handed in, plus one
        self._cols: dict | None = None

    def room(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the records of transactions `ids` (ascending) go: field f of record k at block[f, cols[k]]."""
        self._ids = max(self._ids, int(ids[-1]) + 1)
        had = self._block.shape[1]
        if self._ids > had:
            grown = _room_for(max(self._ids, 2 * had))
            grown[:, :had] = self._block
            self._block = grown
        return self._block, ids

    def add(self, out: np.ndarray, at: np.ndarray) -> None:
        """The records `room` placed are in."""
        self._count += len(at)
        self._cols = None

    def columns(self) -> dict[str, np.ndarray]:
        if self._cols is None:
            if self._count != self._ids:
                raise RuntimeError(f"{self._count} records handed in for transaction ids 0..{self._ids - 1}")
            self._cols = record_columns_of(fields_of(self._block, self._ids))
        return self._cols

    def close(self) -> None:
        pass


ROW_GROUP_ROWS = 1 << 18   # records per parquet row group


class StreamSink:
    """Records summarized as they come (`sim.metrics.StreamSummary`, if `summarize`), written to `parquet_path`
    in row groups of `row_group_rows` if given (in the order they come: batches of finished transactions, each
    in id order), and only the columns in `keep` kept (the history frame needs a few; a run small enough keeps
    all, for its exact summary)."""

    fields = RECORD_FIELDS   # what it asks of the slots it is handed

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

    def room(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fresh room for these records, in their order (`MemorySink.room`)."""
        return _room_for(len(ids)), np.arange(len(ids))

    def add(self, out: np.ndarray, at: np.ndarray) -> None:
        cols = record_columns_of(fields_of(out, len(at)))
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
