"""DuckLake: every table's commits from its catalog database (`ducklake_snapshot`, `ducklake_snapshot_changes`).

PATH is the catalog: a SQLite file (read with the standard library), a DuckDB file (with the `duckdb` package) or
a PostgreSQL URL (`postgresql://...`, with psycopg2 or psycopg); `ducklake:` in front of it is dropped. Each
snapshot's `changes_made` names the tables it changed and how; one row per table it changed, at its
`snapshot_time`, `schema.table` its table's name, its `author` the writer. docs/FORMATS.md, "Traces"."""
from __future__ import annotations

import re
import tempfile
from datetime import datetime, timezone

from .history import History, TraceError
from .location import Location

# a change is KIND:VALUE, VALUE a table id or quoted names joined by dots ("main"."t"; a quote doubled inside)
_CHANGE = re.compile(r'([a-z_]+):((?:"(?:[^"]|"")*"(?:\."(?:[^"]|"")*")*)|-?\d+)(?:,|$)')
# how one snapshot's changes to a table make its operation, strongest first: a delete (with an insert: an UPDATE)
# is an overwrite (DuckLake's conflict rules are the model's for an overwrite, docs/model/ducklake.md), a
# compaction (merge_adjacent_files, rewrite_data_files) a compaction, an insert an append, an alter a schema change
_TABLE_CHANGES = (("deleted_from_table", "overwrite"), ("compacted_table", "compaction"),
                  ("inserted_into_table", "append"), ("altered_table", "schema_change"))
# changes that are not a commit to a table's data: the catalog's objects made, dropped or changed
_NOT_REPLAYED = {"created_schema", "created_table", "created_view", "dropped_schema", "dropped_table", "dropped_view",
                 "altered_view", "created_scalar_macro", "created_table_macro", "dropped_scalar_macro",
                 "dropped_table_macro"}


def parse_changes(text, where: str) -> list[tuple[str, str]]:
    """`changes_made` as (kind, value) pairs; anything else is a TraceError naming `where`."""
    if not isinstance(text, str):
        raise TraceError(f"{where}: missing")
    out, pos = [], 0
    while pos < len(text):
        m = _CHANGE.match(text, pos)
        if not m:
            raise TraceError(f"{where}: cannot read {text[pos:pos + 60]!r} (expected KIND:VALUE, ...)")
        out.append((m.group(1), m.group(2)))
        pos = m.end()
    return out


def epoch_us(value, where: str) -> int:
    """A `snapshot_time` as Unix epoch microseconds: DuckDB's and PostgreSQL's come as numbers already (see
    `_QUERIES`), SQLite's as the text DuckLake wrote ('2026-12-07 04:13:34.9401+00')."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            t = datetime.fromisoformat(value.strip())
        except ValueError:
            t = None
        if t is not None:
            t = t if t.tzinfo else t.replace(tzinfo=timezone.utc)    # DuckLake writes UTC
            delta = t - datetime(1970, 1, 1, tzinfo=timezone.utc)
            return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    raise TraceError(f"{where}: {'missing' if value is None else f'bad timestamp {value!r}'}")


_QUERIES = {
    "snapshots": "SELECT snapshot_id, {time} FROM {p}ducklake_snapshot ORDER BY snapshot_id",
    "changes": "SELECT snapshot_id, changes_made{author} FROM {p}ducklake_snapshot_changes",
    "tables": "SELECT table_id, table_name, schema_id, begin_snapshot FROM {p}ducklake_table ORDER BY begin_snapshot",
    "schemas": "SELECT schema_id, schema_name, begin_snapshot FROM {p}ducklake_schema ORDER BY begin_snapshot",
}
_TIME = {"sqlite": "snapshot_time", "duckdb": "epoch_us(snapshot_time)",
         "postgres": "(extract(epoch from snapshot_time) * 1000000)::bigint"}


def _strip(path: str) -> str:
    """`ducklake:sqlite:FILE`, `ducklake:duckdb:FILE`, `ducklake:FILE` as ATTACH takes them: the catalog's path."""
    path = path.removeprefix("ducklake:")
    for prefix in ("sqlite:", "duckdb:"):
        path = path.removeprefix(prefix)
    return path


def _connect(path: str):
    """(kind, connection, the driver's error class, a temporary copy to remove or None) of the catalog."""
    if path.startswith(("postgresql://", "postgres://", "postgres:")):
        return _postgres(path)
    loc = Location.of(path)
    if loc.kind() != "file":
        raise TraceError(f"{path}: no such file (a DuckLake catalog: a SQLite or DuckDB file, or a PostgreSQL URL)")
    local, copy = loc.path, None
    if type(loc.fs).__name__ != "LocalFileSystem":     # a catalog file where the table lives: read a copy
        with tempfile.NamedTemporaryFile(suffix=".ducklake", delete=False) as tmp:
            tmp.write(loc.read_bytes())
        local = copy = tmp.name
    with open(local, "rb") as fh:
        head = fh.read(16)
    if head.startswith(b"SQLite format 3"):
        import sqlite3
        return "sqlite", sqlite3.connect(f"file:{local}?mode=ro", uri=True), sqlite3.Error, copy
    if head[8:12] == b"DUCK":
        try:
            import duckdb
        except ImportError:
            raise TraceError(f"{path}: a DuckDB catalog; reading it needs the duckdb package (pip install duckdb)") \
                from None
        return "duckdb", duckdb.connect(local, read_only=True), duckdb.Error, copy
    raise TraceError(f"{path}: neither a SQLite nor a DuckDB database (a DuckLake catalog is one, or PostgreSQL)")


def _postgres(url: str):
    dsn = url.removeprefix("postgres:") if "://" not in url else url
    try:
        import psycopg2 as driver
    except ImportError:
        try:
            import psycopg as driver
        except ImportError:
            raise TraceError(f"{url}: a PostgreSQL catalog; reading it needs psycopg2 or psycopg "
                             "(pip install psycopg2-binary)") from None
    try:
        return "postgres", driver.connect(dsn), driver.Error, None
    except driver.Error as exc:       # a server that does not answer, a bad login
        raise TraceError(f"{url}: cannot connect: {str(exc).strip().splitlines()[0]}") from None


def _fetch(con, kind: str, error, path: str) -> dict:
    """The catalog's rows the history needs, each query's failure one line naming its table."""
    out = {}
    for name, query in _QUERIES.items():
        table = query.split("FROM {p}", 1)[1].split()[0]
        try:
            cur = con.cursor()
            if name == "changes":
                cur.execute(f"SELECT * FROM {table} WHERE 1 = 0")
                has_author = "author" in [d[0] for d in cur.description]
                query = query.replace("{author}", ", author" if has_author else "")
            cur.execute(query.format(p="", time=_TIME[kind]))
            out[name] = cur.fetchall()
        except error as exc:
            raise TraceError(f"{path}: {table}: cannot read it ({str(exc).strip().splitlines()[0]}); is it a "
                             "DuckLake catalog?") from None
    return out


def _names(rows: dict) -> dict:
    """table_id -> `schema.table`, each by its latest name (a rename begins a new row)."""
    schemas = {sid: name for sid, name, _ in rows["schemas"]}
    return {tid: f"{schemas.get(sid, sid)}.{name}" for tid, name, sid, _ in rows["tables"]}


def _snapshot(history: History, sid: int, time_ms: float, pairs, names: dict, author, where: str,
              skip_unknown: bool) -> None:
    kinds: dict[int, set] = {}
    for kind, value in pairs:
        if kind in _NOT_REPLAYED:
            history.skipped[f"{kind} (not a commit to a table's data)"] += 1
        elif kind not in dict(_TABLE_CHANGES):
            if not skip_unknown:
                raise TraceError(f"{where}: unknown change {kind!r} (known: "
                                 f"{', '.join(sorted(_NOT_REPLAYED | set(dict(_TABLE_CHANGES))))}; --skip-unknown "
                                 "leaves it out, counted)")
            history.skipped[f"unknown change {kind!r}"] += 1
        elif not value.lstrip("-").isdigit() or int(value) not in names:
            raise TraceError(f"{where}: {kind}:{value}: no table {value} in ducklake_table")
        else:
            kinds.setdefault(int(value), set()).add(kind)
    if not pairs:
        history.skipped["snapshot with no change listed"] += 1
    for tid, made in kinds.items():
        op = next(op for kind, op in _TABLE_CHANGES if kind in made)
        history.add(time_ms, names[tid], op, f"snapshot {sid}", writer=author or "")


def read(path: str, skip_unknown: bool = False) -> History:
    """Every snapshot still in the catalog, one row per table it changed."""
    import os
    path = _strip(path)
    kind, con, error, copy = _connect(path)
    try:
        rows = _fetch(con, kind, error, path)
    finally:
        con.close()
        if copy:
            os.unlink(copy)
    names = _names(rows)
    changes = {r[0]: (r[1], r[2] if len(r) > 2 else None) for r in rows["changes"]}
    history = History("ducklake", "")
    ids = [sid for sid, _ in rows["snapshots"]]
    for sid, value in rows["snapshots"]:
        time_ms = epoch_us(value, f"{path}: ducklake_snapshot.snapshot_time of snapshot {sid}") / 1000
        if sid not in changes:
            raise TraceError(f"{path}: ducklake_snapshot_changes: no row for snapshot {sid}")
        text, author = changes[sid]
        where = f"{path}: ducklake_snapshot_changes.changes_made of snapshot {sid}"
        _snapshot(history, sid, time_ms, parse_changes(text, where), names, author, where, skip_unknown)
    if not ids:
        raise TraceError(f"{path}: ducklake_snapshot: no snapshots")
    history.read = (f"ducklake catalog {path}: snapshots {ids[0]}..{ids[-1]} ({len(ids)} snapshots, "
                    f"{len(names)} tables)")
    gone = ids[-1] - ids[0] + 1 - len(ids)
    if gone:
        history.notes.append(f"{gone} snapshot ids between {ids[0]} and {ids[-1]} are gone (ducklake_expire_snapshots):"
                             " their commits are not in the trace")
    return history
