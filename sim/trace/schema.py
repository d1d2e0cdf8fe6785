"""The trace file (docs/FORMATS.md, "Trace"): a table's history as commits, one row each, read and written here.

A trace is Parquet or CSV (by the file's extension). Required columns: `time_ms` (the commit's time in ms, any
origin: importers write Unix epoch ms), `table` (its table's name), `operation` (one of `OPERATIONS`). Optional:
`writer` (the job or application that committed it; empty or null: unknown), `runtime_ms` (its job's time from
start to commit; null: unknown), `files` and `bytes` (what it wrote; read and checked, not used by the model).
Any other column (an importer's provenance: a snapshot id, a version) is allowed and carried along unread.

Every way a trace is unusable is a `ConfigError` naming the file and the field, on one line: a missing column, a
time that is not a number, is negative, NaN or infinite, an unknown operation, an empty table name, a negative
runtime. The rows come back sorted by `time_ms` (stably: rows of one time keep the file's order).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..inputs import read_parquet
from ..results_io import atomic_write_with
from ..schema import ConfigError

#: the operations a trace names, each the model's (`sim.model.state.OPS`; an append is a FastAppend, `fa`)
OPERATIONS = ("append", "overwrite", "row_delta", "compaction", "rewrite_manifests", "expire_snapshots",
              "schema_change")
MODEL_OPS = {"append": "fa", **{op: op for op in OPERATIONS[1:]}}
REQUIRED = ("time_ms", "table", "operation")
OPTIONAL = ("writer", "runtime_ms", "files", "bytes")
COLUMNS = REQUIRED + OPTIONAL
SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


def _bad(where, field: str, what: str) -> ConfigError:
    return ConfigError("", f"{where}: {field}: {what}" if field else f"{where}: {what}")


def kind_of(path: str | Path) -> str:
    """`parquet` or `csv`, by the file's extension."""
    kind = SUFFIXES.get(Path(path).suffix.lower())
    if kind is None:
        suffix = Path(path).suffix or "no extension"
        raise _bad(path, "", f"a trace is a .parquet or .csv file (by its extension), not {suffix}")
    return kind


def read_trace(path: str | Path):
    """The trace at `path` as a DataFrame: `COLUMNS` first (names as strings, `writer` null where unknown;
    `runtime_ms`, `bytes` NaN and `files` (nullable Int64) null where unknown), then any other column as the file
    has it; sorted by `time_ms`."""
    path = Path(path)
    if kind_of(path) == "parquet":
        df = read_parquet(path, "trace")
    else:
        df = _read_csv(path)
    return checked(df, path)


def _read_csv(path: Path):
    """Every cell as text (a table named `NA` stays `NA`; an empty cell is null): `checked` converts the numbers."""
    import pandas as pd
    from ..inputs import _os_problem
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], encoding="utf-8-sig")
    except OSError as exc:
        raise _os_problem(path, "trace", exc) from None
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise _bad(path, "", f"not a readable trace (CSV) file: {' '.join(str(exc).split())}") from None


def checked(df, where):
    """`df` as a valid trace (`read_trace`'s columns and order), or a `ConfigError` naming `where` and the field."""
    import pandas as pd
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise _bad(where, missing[0], f"missing: a trace has the columns {', '.join(REQUIRED)} (and optionally "
                                      f"{', '.join(OPTIONAL)})")
    if len(df) == 0:
        raise _bad(where, "", "no rows: a trace holds at least one commit")
    n = len(df)
    out = pd.DataFrame({"time_ms": _numbers(df["time_ms"], where, "time_ms", required=True)})
    out["table"] = _names(df["table"], where, "table", required=True).array
    out["operation"] = _operations(df["operation"], where).array
    out["writer"] = (_names(df["writer"], where, "writer") if "writer" in df.columns
                     else pd.Series(np.full(n, None, dtype=object), dtype="str")).array
    out["runtime_ms"] = _numbers(df["runtime_ms"], where, "runtime_ms") if "runtime_ms" in df.columns else np.nan
    out["files"] = _counts(df["files"], where) if "files" in df.columns else pd.array([pd.NA] * n, dtype="Int64")
    out["bytes"] = _numbers(df["bytes"], where, "bytes") if "bytes" in df.columns else np.nan
    for name in df.columns:
        if name not in COLUMNS:
            out[name] = df[name].to_numpy()
    order = np.argsort(out["time_ms"].to_numpy(), kind="stable")
    return out.iloc[order].reset_index(drop=True)


def _row(i: int) -> str:
    return f"row {i + 1}"


def _numbers(col, where, name: str, required: bool = False) -> np.ndarray:
    """A column of numbers >= 0 as float64 (null: NaN, an error if `required`)."""
    import pandas as pd
    if pd.api.types.is_datetime64_any_dtype(col) or pd.api.types.is_timedelta64_dtype(col):
        raise _bad(where, name, f"expected numbers of ms, got {col.dtype}")
    if pd.api.types.is_bool_dtype(col):
        raise _bad(where, name, "expected numbers of ms, got true/false")
    x = pd.to_numeric(col, errors="coerce")
    null = col.isna().to_numpy()
    bad = x.isna().to_numpy() & ~null
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _bad(where, name, f"not a number in {_row(i)} ({col.iloc[i]!r})")
    values = x.to_numpy(dtype=np.float64, na_value=np.nan)
    if required and np.isnan(values).any():
        i = int(np.flatnonzero(np.isnan(values))[0])
        raise _bad(where, name, f"empty (null or NaN) in {_row(i)}: every commit has a time")
    with np.errstate(invalid="ignore"):
        wrong = np.isinf(values) | (values < 0)
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise _bad(where, name, f"{values[i]!r} in {_row(i)}: expected a finite number >= 0")
    return values


def _counts(col, where):
    """`files`: whole numbers >= 0, nullable (Int64)."""
    import pandas as pd
    values = _numbers(col, where, "files")
    whole = np.isnan(values) | (values == np.floor(values))
    if not whole.all():
        i = int(np.flatnonzero(~whole)[0])
        raise _bad(where, "files", f"{values[i]!r} in {_row(i)}: expected a whole number")
    return pd.Series(values).astype("Int64").array


def _names(col, where, name: str, required: bool = False):
    """A column of names as strings (null or blank: null, an error if `required`)."""
    import pandas as pd
    text = pd.Series(col.to_numpy(), dtype="str")     # (arrow-backed strings; a null stays null)
    blank = (text.isna() | text.str.strip().eq("").fillna(False)).to_numpy(dtype=bool)
    if required and blank.any():
        raise _bad(where, name, f"empty in {_row(int(np.flatnonzero(blank)[0]))}: every commit names its {name}")
    return text.where(~blank) if blank.any() else text


def _operations(col, where):
    values = _names(col, where, "operation", required=True)
    known = values.isin(OPERATIONS).to_numpy()
    if not known.all():
        i = int(np.flatnonzero(~known)[0])
        raise _bad(where, "operation", f"unknown operation {values.iloc[i]!r} in {_row(i)} (expected one of "
                                       f"{', '.join(OPERATIONS)})")
    return values


def write_trace(df, path: str | Path) -> None:
    """Write `df` (a trace's columns; checked as `read_trace` checks a file) to `path`, Parquet or CSV by its
    extension, atomically. Floats are written exactly (CSV: the shortest text that reads back the same double)."""
    path = Path(path)
    kind = kind_of(path)
    out = checked(df, "the trace to write")
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        table = pa.Table.from_pandas(out, preserve_index=False)
        atomic_write_with(path, lambda tmp: pq.write_table(table, tmp))
    else:
        atomic_write_with(path, lambda tmp: out.to_csv(tmp, index=False, float_format=None))


