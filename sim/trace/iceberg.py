"""Iceberg: a table's commits from its metadata files (the table spec's `snapshots`, `metadata-log`).

PATH is a metadata.json or a table folder (its `metadata/` folder's newest file: `version-hint.text`, else the
highest version number). Every snapshot is a commit at its `timestamp-ms`, its `summary.operation` mapped to the
model's operation (`operation_of`). The files the `metadata-log` names are read too, when they are still there:
they give the snapshots an expiry has removed since, and the commits that added no snapshot (a schema change, an
expiry), each at its file's `last-updated-ms`. docs/FORMATS.md, "Traces", says what is read and how it maps."""
from __future__ import annotations

import re

from .history import History, TraceError, count, epoch_ms, json_object
from .location import Location

_VERSION = re.compile(r"^(?:v)?(\d+)(?:-[^.]+)?(?:\.gz)?\.metadata\.json(?:\.gz)?$")
# summary keys of an engine's or application's id, most specific first (Spark, Flink, Java's 1.4+ summaries)
_WRITER_KEYS = ("spark.app.id", "flink.job-id", "app-id", "engine-name")
_OPS = ("append", "overwrite", "delete", "replace")


def operation_of(summary: dict, where: str) -> str:
    """Iceberg's snapshot operation as the model's: `append` an append (FastAppend, MergeAppend); `overwrite` an
    overwrite (copy-on-write), or a row delta when it added delete files (Spark's merge-on-read MERGE/UPDATE,
    Flink's upserts: RowDelta commits `overwrite`); `delete` an overwrite (whole files removed), or a row delta
    when it added delete files; `replace` a compaction (RewriteFiles: data or delete files rewritten), or a
    manifest rewrite when no file was added or removed (RewriteManifests)."""
    op = summary.get("operation")
    if op is None:
        raise TraceError(f"{where}.operation: missing")
    if op not in _OPS:
        raise TraceError(f"{where}.operation: unknown operation {op!r} (Iceberg's are {', '.join(_OPS)})")
    deletes = sum(count(summary.get(k), f"{where}.{k}") or 0 for k in ("added-delete-files", "added-dvs"))
    if op == "append":
        return "append"
    if op in ("overwrite", "delete"):
        return "row_delta" if deletes else "overwrite"
    files = sum(count(summary.get(k), f"{where}.{k}") or 0
                for k in ("added-data-files", "deleted-data-files", "added-delete-files", "removed-delete-files"))
    return "compaction" if files else "rewrite_manifests"


def _writer(summary: dict) -> str:
    for key in _WRITER_KEYS:
        if summary.get(key):
            return str(summary[key])
    return ""


def _load(loc: Location) -> dict:
    meta = json_object(loc.read_text(), loc.url, "a table's metadata")
    for key in ("snapshots", "metadata-log"):
        if not isinstance(meta.get(key, []), list):
            raise TraceError(f"{loc.url}: {key}: not a list")
    return meta


def _current(folder: Location) -> tuple[Location, str]:
    """The folder's current metadata file, and a note when it was chosen by its number alone."""
    names = folder.names()
    if "version-hint.text" in names:
        hint = folder.child("version-hint.text").read_text().strip()
        for name in (f"v{hint}.metadata.json", f"v{hint}.gz.metadata.json", f"v{hint}.metadata.json.gz"):
            if name in names:
                return folder.child(name), ""
        raise TraceError(f"{folder.url}/version-hint.text: names version {hint!r}, which has no metadata file")
    numbered = sorted((int(m.group(1)), n) for n in names if (m := _VERSION.match(n)))
    if not numbered:
        raise TraceError(f"{folder.url}: no *.metadata.json in it (give the table's folder or a metadata.json)")
    top = [n for v, n in numbered if v == numbered[-1][0]]
    if len(top) > 1:
        raise TraceError(f"{folder.url}: {len(top)} metadata files of version {numbered[-1][0]} (a failed commit's "
                         f"file beside the committed one): give the one the catalog names")
    return folder.child(top[0]), (f"{folder.url}: read {top[0]}, the highest version; the catalog names the table's "
                                  "current file (give it to be sure a failed commit's file was not taken)")


def _metadata_file(url: str) -> tuple[Location, str]:
    """PATH as a metadata file: itself, or its table folder's current one (and a note if chosen by number)."""
    loc = Location.of(url)
    kind = loc.kind()
    if kind == "file":
        return loc, ""
    if kind == "missing":
        raise TraceError(f"{url}: no such file or folder")
    folder = loc.child("metadata") if loc.child("metadata").kind() == "dir" else loc
    return _current(folder)


def _table_name(meta: dict, loc: Location) -> str:
    location = meta.get("location")
    if not isinstance(location, str) or not location.strip("/"):
        raise TraceError(f"{loc.url}: location: missing (a table's metadata names its location)")
    return location.rstrip("/").rsplit("/", 1)[-1]


def _ids(meta: dict, loc: Location) -> dict:
    """snapshot-id -> (index, snapshot) of a metadata file's snapshots."""
    out = {}
    for j, snap in enumerate(meta.get("snapshots", [])):
        sid = snap.get("snapshot-id") if isinstance(snap, dict) else None
        if isinstance(sid, bool) or not isinstance(sid, int):
            raise TraceError(f"{loc.url}: snapshots[{j}].snapshot-id: missing or not an integer")
        out[sid] = (j, snap)
    return out


def _snapshot(history: History, table: str, loc: Location, j: int, sid: int, snap: dict) -> None:
    where = f"{loc.url}: snapshots[{j}]"
    summary = snap.get("summary")
    if not isinstance(summary, dict):
        raise TraceError(f"{where}.summary: missing")
    op = operation_of(summary, f"{where}.summary")
    files = sum(count(summary.get(k), f"{where}.summary.{k}") or 0 for k in ("added-data-files", "added-delete-files"))
    size = count(summary.get("added-files-size"), f"{where}.summary.added-files-size")
    history.add(epoch_ms(snap.get("timestamp-ms"), f"{where}.timestamp-ms"), table, op, f"snapshot {sid}",
                writer=_writer(summary), files=files, bytes_=size)


def _without_snapshot(history: History, table: str, before: dict, after: dict, loc: Location) -> None:
    """A commit that added no snapshot, from the two metadata files around it: a schema change (a new current
    schema), else an expiry (snapshots removed), else a change the model has no operation for (properties, specs,
    sort orders, refs), counted as skipped."""
    if set(_ids(after, loc)) - set(_ids(before, loc)):
        return
    schema = ("current-schema-id", "schema", "schemas")
    if any(before.get(k) != after.get(k) for k in schema):
        op = "schema_change"
    elif set(_ids(before, loc)) - set(_ids(after, loc)):
        op = "expire_snapshots"
    else:
        history.skipped["metadata change without a snapshot or schema (properties, specs, sort orders, refs)"] += 1
        return
    name = loc.path.rsplit("/", 1)[-1]
    history.add(epoch_ms(after.get("last-updated-ms"), f"{loc.url}: last-updated-ms"), table, op, f"metadata {name}")


def _earlier(current: Location, meta: dict) -> list:
    """(location, metadata or None if gone) of each file the metadata-log names, looked for beside the current
    file (where a table keeps them, wherever it was written from)."""
    folder = current.parent()
    out = []
    for i, entry in enumerate(meta.get("metadata-log", [])):
        name = entry.get("metadata-file") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise TraceError(f"{current.url}: metadata-log[{i}].metadata-file: missing")
        loc = folder.child(name.rstrip("/").rsplit("/", 1)[-1])
        out.append((loc, _load(loc) if loc.kind() == "file" else None))
    return out


def read(url: str, table: str | None = None) -> History:
    """The table's commits: every snapshot any readable metadata file holds, and the commits without one."""
    current, note = _metadata_file(url)
    meta = _load(current)
    table = table or _table_name(meta, current)
    versions = _earlier(current, meta) + [(current, meta)]
    history = History("iceberg", "")
    seen = set()
    for loc, m in reversed(versions):
        if m is None:
            continue
        for sid, (j, snap) in _ids(m, loc).items():
            if sid not in seen:
                seen.add(sid)
                _snapshot(history, table, loc, j, sid, snap)
    for (_, before), (loc, after) in zip(versions, versions[1:]):
        if before is not None and after is not None:
            _without_snapshot(history, table, before, after, loc)
    gone = sum(m is None for _, m in versions)
    history.read = (f"iceberg table {table}: {current.url} and {len(versions) - 1 - gone} earlier metadata files "
                    f"({len(seen)} snapshots)")
    history.notes += [note] if note else []
    if gone:
        history.notes.append(f"{table}: {gone} of the {len(versions) - 1} metadata files its metadata-log names are "
                             "gone (write.metadata.delete-after-commit.enabled): commits without a snapshot (schema "
                             "changes, expiries) are seen only between two files still there")
    lost = _expired(meta, seen)
    if lost:
        history.notes.append(f"{table}: {lost} snapshots of the snapshot-log are in no metadata file read (expired): "
                             "their operations are unknown, they are not in the trace")
    return history


def _expired(meta: dict, seen: set) -> int:
    log = meta.get("snapshot-log", [])
    return sum(1 for e in log if isinstance(e, dict) and e.get("snapshot-id") not in seen)
