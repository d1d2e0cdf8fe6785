"""Delta Lake: a table's commits from its log (`_delta_log/NNNNNNNNNNNNNNNNNNNN.json`, one entry per commit).

Each entry's `commitInfo` gives the commit's time (`inCommitTimestamp` when the table has in-commit timestamps,
else `timestamp`), its `operation` (with `operationParameters.mode` for a WRITE) mapped to the model's
(`operation_of`), its engine (`engineInfo`, or the application of a `txn` action) and its run time
(`operationMetrics.executionTimeMs`, delta-rs's `execution_time_ms`); its `add` actions the files and bytes
added. Entries a log cleanup removed are gone (a checkpoint holds no commitInfo): the history read starts at the
oldest entry still there, and the summary says so. docs/FORMATS.md, "Traces"."""
from __future__ import annotations

import re

from .history import History, TraceError, count, epoch_ms, json_object
from .location import Location

_ENTRY = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(?:\.\d+\.\d+)?(?:\.[^.]+)?\.parquet$")
# Delta Spark's DeltaOperations names and delta-rs's, by the model's operation (docs/FORMATS.md, "Traces")
_OVERWRITES = {"DELETE", "UPDATE", "MERGE", "TRUNCATE", "RESTORE", "REPLACE TABLE", "REPLACE TABLE AS SELECT",
               "CREATE OR REPLACE TABLE", "CREATE OR REPLACE TABLE AS SELECT"}
_ROW_LEVEL = {"DELETE", "UPDATE", "MERGE"}
_METADATA = {"SET TBLPROPERTIES", "UNSET TBLPROPERTIES", "ADD COLUMNS", "CHANGE COLUMN", "CHANGE COLUMNS",
             "REPLACE COLUMNS", "RENAME COLUMN", "DROP COLUMNS", "ADD CONSTRAINT", "DROP CONSTRAINT",
             "UPGRADE PROTOCOL", "ADD FEATURE", "DROP FEATURE", "CLUSTER BY", "UPDATE SCHEMA"}
_FIXED = {"CREATE TABLE AS SELECT": "append", "OPTIMIZE": "compaction", "REORG": "compaction",
          **{op: "overwrite" for op in _OVERWRITES}, **{op: "schema_change" for op in _METADATA}}
_MODES = {"WRITE": ("mode", {"Append": "append", "ErrorIfExists": "append", "Ignore": "append",
                             "Overwrite": "overwrite"}),
          "STREAMING UPDATE": ("outputMode", {"Append": "append", "Complete": "overwrite", "Update": "overwrite"})}
# a table's creation without data (no add actions) is no commit the model replays
_CREATIONS = {"CREATE TABLE", "CONVERT", "CLONE"}
# VACUUM's entries record a file cleanup outside the log: they change no file the table reads, and the model's
# Delta designs have no commit without data (it refuses an expire_snapshots there): counted, not replayed
_VACUUM = {"VACUUM START", "VACUUM END"}


def operation_of(info: dict, actions: dict, where: str) -> str | None:
    """The model's operation of one entry (None: not replayed, a table's creation without data or VACUUM's entries).
    A WRITE by its mode (Append, and the first write's ErrorIfExists or Ignore: an append; Overwrite: an
    overwrite), a streaming update by its output mode; DELETE, UPDATE, MERGE an overwrite (copy-on-write), a row
    delta when they wrote deletion vectors; OPTIMIZE and REORG a compaction; a metadata or protocol change a schema
    change."""
    op = info.get("operation")
    if not isinstance(op, str) or not op:
        raise TraceError(f"{where}.operation: missing")
    if op in _MODES:
        key, modes = _MODES[op]
        mode = (info.get("operationParameters") or {}).get(key)
        if mode not in modes:
            raise TraceError(f"{where}.operationParameters.{key}: {op} with "
                             f"{'no mode' if mode is None else f'unknown mode {mode!r}'} (known: {', '.join(modes)})")
        return modes[mode]
    if op in _ROW_LEVEL and actions["deletion_vectors"]:
        return "row_delta"
    if op in _FIXED:
        return _FIXED[op]
    if op in _VACUUM or (op in _CREATIONS and not actions["files"]):
        return None
    raise TraceError(f"{where}.operation: unknown operation {op!r} (docs/FORMATS.md lists the ones mapped; "
                     "--skip-unknown leaves such commits out, counted)")


def _entry(loc: Location) -> tuple[dict, dict]:
    """An entry's commitInfo and what its other actions say: files and bytes added, deletion vectors, txn app."""
    info, actions = None, {"files": 0, "bytes": 0, "deletion_vectors": False, "app": ""}
    for n, line in enumerate(loc.read_text().splitlines(), 1):
        if not line.strip():
            continue
        action = json_object(line, f"{loc.url}: line {n}", "an action")
        if isinstance(action.get("commitInfo"), dict):
            info = action["commitInfo"]
        add = action.get("add")
        if isinstance(add, dict):
            actions["files"] += 1
            actions["bytes"] += count(add.get("size"), f"{loc.url}: line {n}: add.size") or 0
            actions["deletion_vectors"] |= bool(add.get("deletionVector"))
        if isinstance(action.get("txn"), dict) and action["txn"].get("appId"):
            actions["app"] = str(action["txn"]["appId"])
    if info is None:
        raise TraceError(f"{loc.url}: commitInfo: missing (the entry has no commitInfo action)")
    return info, actions


def _runtime_ms(info: dict, where: str) -> float | None:
    metrics = info.get("operationMetrics") or {}
    for key in ("executionTimeMs", "execution_time_ms"):
        if key in metrics:
            return count(metrics[key], f"{where}.operationMetrics.{key}")
    return None


def _log(url: str) -> Location:
    loc = Location.of(url)
    kind = loc.kind()
    if kind == "missing":
        raise TraceError(f"{url}: no such folder")
    if kind == "file":
        raise TraceError(f"{url}: a file; give the table's folder or its _delta_log")
    if loc.name == "_delta_log":
        return loc
    log = loc.child("_delta_log")
    if log.kind() != "dir":
        raise TraceError(f"{url}: no _delta_log in it (give a Delta table's folder)")
    return log


def _versions(log: Location) -> tuple[list[int], list[int]]:
    names = log.names()
    entries = sorted(int(m.group(1)) for n in names if (m := _ENTRY.match(n)))
    checkpoints = sorted({int(m.group(1)) for n in names if (m := _CHECKPOINT.match(n))})
    if not entries:
        raise TraceError(f"{log.url}: no commit entries (NNNNNNNNNNNNNNNNNNNN.json) in it")
    gaps = [v for v in range(entries[0], entries[-1] + 1) if v not in set(entries)]
    if gaps:
        raise TraceError(f"{log.url}: entries {gaps[0]}..{gaps[-1]} missing between {entries[0]} and {entries[-1]} "
                         f"({len(gaps)} versions): a log is never cut in the middle (copied in part?)")
    return entries, checkpoints


def read(url: str, table: str | None = None, skip_unknown: bool = False) -> History:
    """Every commit of the table's log still there."""
    log = _log(url)
    table = table or log.parent().name
    entries, checkpoints = _versions(log)
    history = History("delta", f"delta table {table}: {log.url}, versions {entries[0]}..{entries[-1]} "
                               f"({len(entries)} entries)")
    for version in entries:
        loc = log.child(f"{version:020d}.json")
        info, actions = _entry(loc)
        where = f"{loc.url}: commitInfo"
        try:
            op = operation_of(info, actions, where)
        except TraceError:
            if not skip_unknown or not isinstance(info.get("operation"), str):
                raise
            history.skipped[f"unknown operation {info['operation']!r}"] += 1
            continue
        if op is None:
            what = "VACUUM entry" if info["operation"] in _VACUUM else "table creation without data"
            history.skipped[f"{what} ({info['operation']})"] += 1
            continue
        ict = "inCommitTimestamp" in info
        time_ms = epoch_ms(info.get("inCommitTimestamp" if ict else "timestamp"),
                           f"{where}.{'inCommitTimestamp' if ict else 'timestamp'}")
        writer = actions["app"] or str(info.get("engineInfo") or info.get("clientVersion") or "")
        history.add(time_ms, table, op, f"version {version}", writer=writer,
                    runtime_ms=_runtime_ms(info, where), files=actions["files"], bytes_=actions["bytes"])
    if entries[0] > 0:
        before = [c for c in checkpoints if c <= entries[0]]
        checkpoint = f"; the checkpoint at {before[-1]} holds no commitInfo" if before else ""
        history.notes.append(f"{table}: versions 0..{entries[0] - 1} are gone from {log.url} (log retention, "
                             f"delta.logRetentionDuration){checkpoint}: the history read starts at version {entries[0]}")
    return history
