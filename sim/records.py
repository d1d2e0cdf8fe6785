"""Record and history schemas (docs/FORMATS.md), and the frames built from a finished run's arrays.

Per-transaction records and the history are kept as int/float columns with small codes while a run goes
(`sim.model.state`); metrics read those columns (`record_columns`), and strings appear only here, at the edge,
when a frame is asked for (pandas is imported then, not before: `run --json` never needs it).
"""
from __future__ import annotations

import numpy as np

from .model.state import HIST, KINDS, OPS, OUTCOMES, REASONS, TX, Kind, Outcome, Reason

RECORD_COLUMNS = ("txn", "table", "table_rank", "op", "arrival_ms", "runtime_end_ms", "end_ms", "outcome",
                  "reason", "attempts", "catalog_conflicts", "table_conflicts", "manifest_lists_read",
                  "catalog_reads", "gets", "puts", "cases", "backoff_ms", "in_window", "throttled", "writer",
                  "due_ms", "missed", "lists", "lock_requests", "lock_grants", "lock_timeouts", "lock_wait_ms",
                  "lock_hold_ms", "deletes", "pool_wait_ms", "parts", "metadata_bytes", "tables", "faults", "landed",
                  "orphaned_files", "orphaned_bytes")

HISTORY_COLUMNS = ("kind", "time_ms", "txn", "table", "op", "seq", "version", "expected", "ok", "base_version",
                   "validated_from", "validated_to", "answer_ms", "outcome", "reason", "attempts", "parts")


# the record columns `history_frame` reads (a streaming sink keeps these when the history is recorded)
HISTORY_NEEDS = ("txn", "table", "op", "outcome", "attempts", "parts")

# record columns held as codes into these labels (`record_columns`); strings in a frame
CODED = {"op": OPS, "outcome": OUTCOMES, "reason": REASONS}


def _string_dtype():
    """The dtype pandas gives a column of Python strings (object, or arrow-backed strings)."""
    import pandas as pd
    return pd.DataFrame({"s": ["x"]})["s"].dtype


def _strings(labels: tuple, codes: np.ndarray, dtype):
    """labels[codes] as a pandas array of `dtype`; through pyarrow when the dtype is arrow-backed (much faster
    than validating millions of Python strings)."""
    if getattr(dtype, "storage", None) == "pyarrow" and hasattr(dtype, "__from_arrow__"):
        import pyarrow as pa
        return dtype.__from_arrow__(pa.array(list(labels), type=pa.large_string()).take(pa.array(codes)))
    import pandas as pd
    return pd.array(np.array(labels, dtype=object)[codes], dtype=dtype)


# the transaction-slot (`TX`) fields the records are made of: a run's slots hand out these only
# (`sim.model.slots.flush`, as contiguous columns)
RECORD_FIELDS = ("txn", "table", "op", "arrival_ms", "runtime_end_ms", "end_ms", "outcome", "reason", "attempts",
                 "catalog_conflicts", "table_conflicts", "manifest_lists_read", "catalog_reads", "gets", "puts",
                 "backoff_ms", "in_window", "throttled", "writer", "due_ms", "missed", "lists", "lock_requests",
                 "lock_grants", "lock_timeouts", "lock_wait_ms", "lock_hold_ms", "deletes", "pool_wait_ms", "parts",
                 "metadata_bytes", "ntables", "faults", "landings", "orphaned_files", "orphaned_bytes")
RECORD_DTYPES = {name: TX.fields[name][0] for name in RECORD_FIELDS}


def record_columns_of(f: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One array per RECORD_COLUMNS entry from the RECORD_FIELDS of transactions in id order (`f`: field -> its
    values, contiguous arrays the records may keep); `op`, `outcome` and `reason` are codes into CODED's labels."""
    cols = {
        "txn": f["txn"],
        "table": f["table"],
        "table_rank": f["table"] + 1,
        "op": f["op"],
        "arrival_ms": f["arrival_ms"],
        "runtime_end_ms": f["runtime_end_ms"],
        "end_ms": f["end_ms"],
        "outcome": f["outcome"],
        "reason": f["reason"],
        "attempts": f["attempts"],
        "catalog_conflicts": f["catalog_conflicts"],
        "table_conflicts": f["table_conflicts"],
        "manifest_lists_read": f["manifest_lists_read"],
        "catalog_reads": f["catalog_reads"],
        "gets": f["gets"],
        "puts": f["puts"],
        "cases": f["attempts"].copy(),
        "backoff_ms": f["backoff_ms"],
        "in_window": f["in_window"] != 0,
        "throttled": f["throttled"],        # conditional writes answered 429 (resent; not attempts)
        "writer": f["writer"],
        "due_ms": f["due_ms"],
        "missed": f["missed"],
        "lists": f["lists"],                # log: LISTs besides its catalog reads
        # locks: its requests (one per lock call, one more per re-request after a timeout), grants, timeouts, the
        # time its requests waited and the time it held the lock, each summed over its attempts
        "lock_requests": f["lock_requests"],
        "lock_grants": f["lock_grants"],
        "lock_timeouts": f["lock_timeouts"],
        "lock_wait_ms": f["lock_wait_ms"],
        "lock_hold_ms": f["lock_hold_ms"],
        "deletes": f["deletes"],            # object DELETEs (Iceberg on HMS, REST servers: a lost one's file)
        "pool_wait_ms": f["pool_wait_ms"],  # REST connections; HMS's NEXT_LOCK_ID row, Hive 3 mutex: queued
        "parts": f["parts"],                # operations: the partitions it touches, one bit each (else 0)
        "metadata_bytes": f["metadata_bytes"],   # metadata growth: its last metadata.json's size (else 0)
        "tables": np.maximum(f["ntables"], 1),   # the tables its commit spans (`workload.multi_table`)
        # faults (docs/MODEL.md, "Unknown outcomes"): its commit requests that lost their answer or were answered 5xx;
        # how many times its change landed (the truth an unknown outcome hides; 2: duplicated); what it orphaned
        "faults": f["faults"],
        "landed": f["landings"],
        "orphaned_files": f["orphaned_files"],
        "orphaned_bytes": f["orphaned_bytes"],
    }
    assert tuple(cols) == RECORD_COLUMNS
    return cols


def empty_columns(names=RECORD_COLUMNS) -> dict[str, np.ndarray]:
    """The record columns `names` of no transaction, with their dtypes."""
    cols = record_columns_of({k: np.zeros(0, dtype=dt) for k, dt in RECORD_DTYPES.items()})
    return {k: v for k, v in cols.items() if k in names}


def record_columns(run) -> dict[str, np.ndarray]:
    """The finished run's records, one array per RECORD_COLUMNS entry in id order, as its sink kept them (all
    columns in memory; a streaming sink keeps only those it was asked to)."""
    return run.sink.columns()


def records_frame_of(cols: dict[str, np.ndarray]):
    """The records DataFrame (RECORD_COLUMNS, strings for the coded columns) of `record_columns`' arrays."""
    import pandas as pd
    sdt = _string_dtype()
    frame = {k: _strings(CODED[k], v, sdt) if k in CODED else v for k, v in cols.items()}
    return pd.DataFrame(frame, copy=False)


def records_frame(run):
    """One row per transaction (RECORD_COLUMNS), in transaction-id order."""
    return records_frame_of(record_columns(run))


def _unfinished_and_final(run, rec: dict) -> np.ndarray:
    """An `end` row per transaction still open at the end of the run (unfinished, in id order), then a `final`
    row per table (its version, the catalog's seq)."""
    versions = run.m.versions
    live = np.flatnonzero(rec["outcome"] == Outcome.UNFINISHED)
    k, nt = len(live), len(versions)
    X = np.zeros(k + nt, dtype=HIST)
    for name in ("txn", "table", "seq", "version", "expected", "base_version", "validated_from", "validated_to",
                 "attempts"):
        X[name] = -1
    X["time_ms"] = X["answer_ms"] = run.end_ms
    X["outcome"], X["reason"] = Outcome.NONE, Reason.NONE
    e, f = X[:k], X[k:]
    e["kind"], e["txn"], e["table"] = Kind.END, live, rec["table"][live]
    e["outcome"], e["reason"], e["attempts"] = Outcome.UNFINISHED, Reason.UNFINISHED, rec["attempts"][live]
    f["kind"], f["table"], f["seq"], f["version"] = Kind.FINAL, np.arange(nt), run.m.run[0]["seq"], versions
    f["answer_ms"] = np.nan
    return X


def history_frame(run):
    """The recorded history in processing order, then an `end` row per transaction still open (unfinished, in
    id order) and a `final` row per table; None if the run recorded none."""
    if not run.record_history:
        return None
    rec = run.sink.columns()   # the records of every transaction (`op`, `table`, `outcome`, `attempts`)
    H = np.concatenate([h[:n] for h, n in run.hist_chunks] + [_unfinished_and_final(run, rec)])
    sdt = _string_dtype()
    kind, txn = H["kind"], H["txn"]
    is_begin = kind == Kind.BEGIN
    op_code = np.zeros(len(kind), dtype=np.int64)   # 0: "", then OPS' codes + 1
    op_code[is_begin] = 1 + rec["op"][txn[is_begin]]
    cols = {"i": np.arange(len(kind), dtype=np.int64), "kind": _strings(KINDS, kind, sdt),
            "time_ms": H["time_ms"], "txn": txn, "table": H["table"], "op": _strings(("",) + OPS, op_code, sdt)}
    cols.update({k: H[k] for k in ("seq", "version", "expected")})
    cols["ok"] = H["ok"] != 0
    cols.update({k: H[k] for k in ("base_version", "validated_from", "validated_to", "answer_ms")})
    parts = np.zeros(len(kind), dtype=np.int64)     # a begin row's: its transaction's partitions
    parts[is_begin] = rec["parts"][txn[is_begin]]
    cols.update(outcome=_strings(OUTCOMES, H["outcome"], sdt), reason=_strings(REASONS, H["reason"], sdt),
                attempts=H["attempts"], parts=parts)
    assert tuple(cols)[1:] == HISTORY_COLUMNS
    import pandas as pd
    return pd.DataFrame(cols, copy=False)
