"""Writing results to disk atomically: a reader never sees a half-written file, and a failed write (disk full,
permission denied) leaves nothing behind and surfaces as one `WriteError` naming the file.

Files get the mode a plain `open()` would give them (0666 less the umask), not the 0600 of a temp file, so a
shared results directory stays readable by the team.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # imported where a frame is written: `run --json` and the sweep's run files need no pandas
    import pandas as pd


class WriteError(Exception):
    """A result file could not be written; `path` is the file the user asked for (never a temp name)."""

    def __init__(self, path: Path, cause: OSError):
        self.path = Path(path)
        self.cause = cause
        super().__init__(f"cannot write {self.path}: {_reason(cause)}")


def _reason(cause: OSError) -> str:
    """The OS's words for the cause ("No space left on device"); pyarrow's errors carry the errno only in text."""
    m = re.search(r"\[errno (\d+)\]", str(cause))
    if m:
        return os.strerror(int(m.group(1)))
    return cause.strerror or str(cause)


def _jsonable(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item"):
        return _jsonable(obj.item())
    return obj


def dumps(obj, indent: int | None = 2) -> str:
    """JSON with NaN/inf as null, so every file is standard JSON."""
    return json.dumps(_jsonable(obj), indent=indent, sort_keys=False, allow_nan=False)


def current_umask() -> int:
    """The process umask, read without changing it (Linux: /proc/self/status), so no other thread ever sees a
    temporarily different umask; elsewhere, the set-and-restore fallback."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode `open()` would create a file with: 0666 less the umask."""
    return 0o666 & ~current_umask()


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Turn an OSError while writing `path` into a WriteError naming it."""
    try:
        yield
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(path, exc) from exc


def _mkdir(path: Path) -> None:
    with _writing(path):
        path.mkdir(parents=True, exist_ok=True)


def atomic_write_with(path: Path, write: Callable[[str], None]) -> None:
    """`write(tmp)` writes the content to a temp file beside `path`; it then gets the umask's mode and replaces
    `path` in one rename. On any failure the temp file is removed and `path` is left as it was."""
    path = Path(path)
    _mkdir(path.parent)
    tmp = None
    try:
        with _writing(path):
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            os.close(fd)
            write(tmp)
            os.chmod(tmp, file_mode())
            os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    atomic_write_with(path, write)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def atomic_write_parquet(path: Path, df: "pd.DataFrame") -> None:
    atomic_write_with(path, lambda tmp: df.to_parquet(tmp, index=False))


class ParquetStream:
    """A parquet file written row group by row group (pyarrow's ParquetWriter) with the schema of `empty`, an
    empty frame; the file appears at `path` only on `close()`, like every atomic write here."""

    def __init__(self, path: Path, empty: "pd.DataFrame"):
        import pyarrow as pa
        import pyarrow.parquet as pq
        self.path = Path(path)
        _mkdir(self.path.parent)
        self._tmp = self.path.parent / f".{self.path.name}.{os.getpid()}.tmp"
        self._schema = pa.Table.from_pandas(empty, preserve_index=False).schema
        with _writing(self.path):
            self._writer = pq.ParquetWriter(self._tmp, self._schema)

    def write(self, frame: "pd.DataFrame") -> None:
        """One row group."""
        import pyarrow as pa
        table = pa.Table.from_pandas(frame, schema=self._schema, preserve_index=False)
        with _writing(self.path):
            self._writer.write_table(table, row_group_size=max(1, len(frame)))

    def close(self) -> None:
        try:
            with _writing(self.path):
                self._writer.close()
                os.chmod(self._tmp, file_mode())
                os.replace(self._tmp, self.path)
        except BaseException:
            self._tmp.unlink(missing_ok=True)
            raise


def atomic_write_csv(path: Path, df: "pd.DataFrame") -> None:
    atomic_write_with(path, lambda tmp: df.to_csv(tmp, index=False))


@contextlib.contextmanager
def staged_dir(out: Path, *, replace: bool) -> Iterator[Path]:
    """A directory whose files appear in `out` only if the block succeeds, so a failure (a full disk halfway
    through a report) leaves `out` as it was. `replace`: `out` becomes exactly the new directory (a report);
    else the new files are moved into `out` beside what it holds (a run's --out)."""
    out = Path(out)
    staging = out.parent / f".{out.name}.{os.getpid()}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    _mkdir(staging)
    try:
        try:
            yield staging
        except WriteError as exc:   # name the file the user will look for, not its staging twin
            if exc.path.is_relative_to(staging):
                raise WriteError(out / exc.path.relative_to(staging), exc.cause) from exc.cause
            raise
        with _writing(out):
            if not out.exists():
                os.replace(staging, out)
            elif replace:
                old = out.parent / f".{out.name}.{os.getpid()}.old"
                os.replace(out, old)
                os.replace(staging, out)
                shutil.rmtree(old, ignore_errors=True)
            else:
                for entry in staging.iterdir():
                    os.replace(entry, out / entry.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
