"""Record and history schemas (docs/FORMATS.md), and the frames built from a finished run's arrays.

Per-transaction records and the history are kept as int/float columns with small codes while a run goes
(`sim.model.layout`); metrics read those columns (`record_columns`), and strings appear only here, at the edge,
when a frame is asked for (pandas is imported then, not before: `run --json` never needs it).
"""
from __future__ import annotations

import numpy as np

from .model.layout import (HF_ANSWER, HF_TIME, HI_ATTEMPTS, HI_BASE, HI_EXPECTED, HI_KIND, HI_OK, HI_OUTCOME,
                           HI_REASON, HI_SEQ, HI_TABLE, HI_TXN, HI_VERSION, HI_VFROM, HI_VTO, K_BEGIN, K_END,
                           K_FINAL, KINDS, N_HF, N_HI, O_NONE, O_UNFINISHED, OPS, OUTCOMES, R_NONE, R_UNFINISHED,
                           REASONS, ST_SEQ, TF_ARRIVAL, TF_BACKOFF, TF_END, TF_RTEND, TI_ATTEMPTS, TI_CATC,
                           TI_CREADS, TI_GETS, TI_INWIN, TI_ISVO, TI_MLREAD, TI_OUTCOME, TI_PUTS, TI_REASON,
                           TI_TABC, TI_TABLE, TI_THR, TI_TXN)

RECORD_COLUMNS = ("txn", "table", "table_rank", "op", "arrival_ms", "runtime_end_ms", "end_ms", "outcome",
                  "reason", "attempts", "catalog_conflicts", "table_conflicts", "manifest_lists_read",
                  "catalog_reads", "gets", "puts", "cases", "backoff_ms", "in_window", "throttled")

HISTORY_COLUMNS = ("kind", "time_ms", "txn", "table", "op", "seq", "version", "expected", "ok", "base_version",
                   "validated_from", "validated_to", "answer_ms", "outcome", "reason", "attempts")


# the record columns `history_frame` reads (a streaming sink keeps these when the history is recorded)
HISTORY_NEEDS = ("txn", "table", "op", "outcome", "attempts")

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


def record_rows(tx_i: np.ndarray, tx_f: np.ndarray) -> dict[str, np.ndarray]:
    """One array per RECORD_COLUMNS entry from transaction rows (`sim.model.layout` TI_*/TF_* columns, fresh
    copies, in id order); `op`, `outcome` and `reason` are codes into CODED's labels."""
    table = tx_i[:, TI_TABLE].copy()
    attempts = tx_i[:, TI_ATTEMPTS].copy()
    cols = {
        "txn": tx_i[:, TI_TXN].copy(),
        "table": table,
        "table_rank": table + 1,
        "op": tx_i[:, TI_ISVO].copy(),
        "arrival_ms": tx_f[:, TF_ARRIVAL].copy(),
        "runtime_end_ms": tx_f[:, TF_RTEND].copy(),
        "end_ms": tx_f[:, TF_END].copy(),
        "outcome": tx_i[:, TI_OUTCOME].copy(),
        "reason": tx_i[:, TI_REASON].copy(),
        "attempts": attempts,
        "catalog_conflicts": tx_i[:, TI_CATC].copy(),
        "table_conflicts": tx_i[:, TI_TABC].copy(),
        "manifest_lists_read": tx_i[:, TI_MLREAD].copy(),
        "catalog_reads": tx_i[:, TI_CREADS].copy(),
        "gets": tx_i[:, TI_GETS].copy(),
        "puts": tx_i[:, TI_PUTS].copy(),
        "cases": attempts.copy(),
        "backoff_ms": tx_f[:, TF_BACKOFF].copy(),
        "in_window": tx_i[:, TI_INWIN] != 0,
        "throttled": tx_i[:, TI_THR].copy(),        # conditional writes answered 429 (resent; not attempts)
    }
    assert tuple(cols) == RECORD_COLUMNS
    return cols


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


def history_frame(run):
    """The recorded history in processing order, then an `end` row per transaction still open (unfinished, in
    id order) and a `final` row per table; None if the run recorded none."""
    if not run.record_history:
        return None
    rec = run.sink.columns()   # the records of every transaction (`op`, `table`, `outcome`, `attempts`)
    versions = run.m.versions
    end = run.end_ms
    live = np.flatnonzero(rec["outcome"] == O_UNFINISHED)
    nt = len(versions)
    k = len(live)
    m = k + nt
    X_i = np.full((N_HI, m), -1, dtype=np.int64)
    X_f = np.full((N_HF, m), end, dtype=np.float64)
    X_i[HI_OK] = 0
    X_i[HI_OUTCOME] = O_NONE
    X_i[HI_REASON] = R_NONE
    X_i[HI_KIND, :k] = K_END
    X_i[HI_TXN, :k] = live
    X_i[HI_TABLE, :k] = rec["table"][live]
    X_i[HI_OUTCOME, :k] = O_UNFINISHED
    X_i[HI_REASON, :k] = R_UNFINISHED
    X_i[HI_ATTEMPTS, :k] = rec["attempts"][live]
    X_i[HI_KIND, k:] = K_FINAL
    X_i[HI_TABLE, k:] = np.arange(nt)
    X_i[HI_SEQ, k:] = run.m.st[ST_SEQ]
    X_i[HI_VERSION, k:] = versions
    X_f[HF_ANSWER, k:] = np.nan
    # fresh arrays: the frame can take views of them (copy=False) without sharing the run's state
    H_i = np.concatenate([c[0][:, :c[2]] for c in run.hist_chunks] + [X_i], axis=1)
    H_f = np.concatenate([c[1][:, :c[2]] for c in run.hist_chunks] + [X_f], axis=1)

    sdt = _string_dtype()
    kind = H_i[HI_KIND]
    txn = H_i[HI_TXN]
    is_begin = kind == K_BEGIN
    op_code = np.zeros(len(kind), dtype=np.int64)   # 0: "", 1: fa, 2: vo
    op_code[is_begin] = 1 + rec["op"][txn[is_begin]]
    cols = {
        "i": np.arange(len(kind), dtype=np.int64),
        "kind": _strings(KINDS, kind, sdt),
        "time_ms": H_f[HF_TIME],
        "txn": txn,
        "table": H_i[HI_TABLE],
        "op": _strings(("",) + OPS, op_code, sdt),
        "seq": H_i[HI_SEQ],
        "version": H_i[HI_VERSION],
        "expected": H_i[HI_EXPECTED],
        "ok": H_i[HI_OK] != 0,
        "base_version": H_i[HI_BASE],
        "validated_from": H_i[HI_VFROM],
        "validated_to": H_i[HI_VTO],
        "answer_ms": H_f[HF_ANSWER],
        "outcome": _strings(OUTCOMES, H_i[HI_OUTCOME], sdt),
        "reason": _strings(REASONS, H_i[HI_REASON], sdt),
        "attempts": H_i[HI_ATTEMPTS],
    }
    assert tuple(cols)[1:] == HISTORY_COLUMNS
    import pandas as pd
    return pd.DataFrame(cols, copy=False)
