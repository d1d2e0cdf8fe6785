"""Reading the files a user names (configs, sweep files, provider files, histories, results tables).

Each way such a file can be unusable (missing, a directory, not UTF-8, not valid YAML, empty, not parquet, cut
short, without the columns its kind has) is a `ConfigError` naming the file and what is wrong, which the command
line prints as one line with exit 2. Only these input errors are caught, where the file is read: any other
exception is a bug and keeps its traceback."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterable

import yaml

from .schema import ConfigError
from .yamlio import describe_error, load_yaml


def _bad(path: Path, what: str) -> ConfigError:
    return ConfigError("", f"{path}: {what}")


def _os_problem(path: Path, kind: str, exc: OSError) -> ConfigError:
    if isinstance(exc, FileNotFoundError):
        return ConfigError("", f"{kind} file not found: {path}")
    if isinstance(exc, IsADirectoryError):
        return _bad(path, f"is a directory, expected a {kind} file")
    return _bad(path, f"cannot read it: {exc.strerror or exc}")


def read_text(path: str | Path, kind: str, form: str = "YAML") -> str:
    """The file's text, read as UTF-8 (YAML's encoding, and a CSV's here; a leading byte-order mark is dropped)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _os_problem(path, kind, exc) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise _bad(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}, offset {exc.start}); "
                         f"a {kind} file is {form} in UTF-8") from None


def read_yaml(path: str | Path, kind: str):
    """The file's YAML document (None for an empty file or one of comments only)."""
    path = Path(path)
    text = read_text(path, kind)
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise _bad(path, describe_error(exc, text)) from None
    except RecursionError:     # PyYAML composes nested collections recursively
        raise _bad(path, "not valid YAML: nested too deeply") from None


def read_mapping(path: str | Path, kind: str, empty_hint: str = "") -> dict:
    """The file's YAML document, which must be a mapping; an empty file is an error (`empty_hint` says what to
    write instead)."""
    path = Path(path)
    data = read_yaml(path, kind)
    if data is None:
        raise _bad(path, f"empty (no YAML document); a {kind} file is a YAML mapping{empty_hint}")
    if not isinstance(data, dict):
        raise _bad(path, f"a {kind} must be a mapping, got {type(data).__name__} {data!r:.60}")
    return data


@contextlib.contextmanager
def naming(path: str | Path, note: str = ""):
    """A `ConfigError` raised inside (a key of the file's content is wrong) also names the file: `workload:
    expected a mapping, got 'inter' (in c.yaml)`; its key path stays first."""
    try:
        yield
    except ConfigError as exc:
        if str(path) in exc.message:
            raise
        raise ConfigError(exc.path, f"{exc.message} (in {path}{note})") from None


def _parquet_file(path: str | Path, kind: str) -> Path:
    """`path`, unless it is a directory (which pyarrow would read as a partitioned data set)."""
    path = Path(path)
    if path.is_dir():
        raise _bad(path, f"is a directory, expected a {kind} file")
    return path


def _parquet_problem(path: Path, kind: str, exc: Exception) -> ConfigError:
    if isinstance(exc, OSError) and exc.errno is not None:
        return _os_problem(path, kind, exc)
    # pyarrow says "Could not open Parquet input source '<path>': <why>": keep the why, on one line
    why = " ".join(str(exc).split())
    head = f"'{path}': "
    why = why.split(head, 1)[1] if head in why else why
    return _bad(path, f"not a readable {kind} (parquet) file: {why}")


def _require(path: Path, kind: str, columns: Iterable[str], need: Iterable[str]) -> None:
    have = set(columns)
    missing = [c for c in need if c not in have]
    if missing:
        shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
        raise _bad(path, f"not a {kind}: it lacks the column(s) {shown}")


def read_parquet(path: str | Path, kind: str, need: Iterable[str] = ()):
    """The parquet file as a pandas DataFrame; `need`: columns every file of its kind has."""
    import pandas as pd
    import pyarrow as pa

    path = _parquet_file(path, kind)
    try:
        df = pd.read_parquet(path)
    except (OSError, pa.ArrowException) as exc:
        raise _parquet_problem(path, kind, exc) from None
    _require(path, kind, df.columns, need)
    return df


def check_parquet(path: str | Path, kind: str, need: Iterable[str] = ()) -> None:
    """Raise unless the file is parquet with the `need` columns: its footer and schema only, for a caller that
    reads the whole file elsewhere."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = _parquet_file(path, kind)
    try:
        names = pq.read_schema(path).names
    except (OSError, pa.ArrowException) as exc:
        raise _parquet_problem(path, kind, exc) from None
    _require(path, kind, names, need)
