"""Real tables written by the real clients (PyIceberg, delta-rs, DuckLake), for the trace importers' tests: each
with appends, an overwrite or a delete, a compaction and a schema change, and what the client itself says its
history is (its own view, to compare the import with)."""
from __future__ import annotations

import os
from pathlib import Path


def _rows(ids):
    import pyarrow as pa
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([str(i) for i in ids])})


def iceberg_table(where: Path, warehouse: str | None = None, props: dict | None = None):
    """A PyIceberg table (SqlCatalog on SQLite; the warehouse a folder, or `warehouse`, an s3:// URL with `props`)
    with three appends, a delete (copy-on-write: PyIceberg commits it as `overwrite`), an overwrite by filter
    (PyIceberg's `delete` and `overwrite` snapshots and an `append`, in one transaction), a compaction, a schema
    change and an expiry of the first snapshot. Returns (table, the snapshots before the expiry).

    PyIceberg 0.12 has no compaction (its summary refuses `replace`: "Operation not implemented"): the compaction
    here is PyIceberg's own overwrite producer committing a `replace` snapshot that swaps the table's data files
    for one file of the same rows, its summary the one PyIceberg computes for that change, its operation
    `replace` (the operation Java's RewriteFiles commits)."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import EqualTo, LessThan
    from pyiceberg.io.pyarrow import _dataframe_to_data_files
    from pyiceberg.table.snapshots import Operation, Summary
    from pyiceberg.table.update.snapshot import _OverwriteFiles
    from pyiceberg.types import StringType

    class _Rewrite(_OverwriteFiles):
        def _summary(self, snapshot_properties=None):
            self._operation = Operation.OVERWRITE
            try:
                summary = super()._summary(snapshot_properties or {})
            finally:
                self._operation = Operation.REPLACE
            return Summary(operation=Operation.REPLACE, **summary.additional_properties)

    where.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("test", uri=f"sqlite:///{where}/catalog.db", warehouse=warehouse or where.as_uri(),
                         **(props or {}))
    catalog.create_namespace("db")
    t = catalog.create_table("db.events", schema=_rows([1]).schema)
    for ids in ([1, 2, 3], [4, 5], [6]):
        t.append(_rows(ids))
    t.delete(EqualTo("id", 2))
    t.overwrite(_rows([7, 8]), overwrite_filter=LessThan("id", 5))
    with t.transaction() as tx:
        rewrite = _Rewrite(operation=Operation.REPLACE, transaction=tx, io=t.io)
        for task in t.scan().plan_files():
            rewrite.delete_data_file(task.file)
        for f in _dataframe_to_data_files(table_metadata=tx.table_metadata, df=t.scan().to_arrow(), io=t.io):
            rewrite.append_data_file(f)
        rewrite.commit()
    with t.update_schema() as update:
        update.add_column("w", StringType())
    before = t.snapshots()
    t.maintenance.expire_snapshots().by_id(before[0].snapshot_id).commit()
    return catalog.load_table("db.events"), before


def delta_table(uri: str, storage_options: dict | None = None):
    """A delta-rs table: three appends, a DELETE, an overwrite, an append, OPTIMIZE (compaction), MERGE, SET
    TBLPROPERTIES, UPDATE and a VACUUM (its START and END entries). Returns the client's history, oldest first."""
    from deltalake import DeltaTable, write_deltalake
    opts = {"storage_options": storage_options} if storage_options else {}
    for ids in ([1, 2, 3], [4, 5], [6]):
        write_deltalake(uri, _rows(ids), mode="append", **opts)
    DeltaTable(uri, **opts).delete("id = 2")
    write_deltalake(uri, _rows([7, 8]), mode="overwrite", **opts)
    write_deltalake(uri, _rows([9]), mode="append", **opts)
    DeltaTable(uri, **opts).optimize.compact()
    (DeltaTable(uri, **opts).merge(_rows([9, 10]), "s.id = t.id", source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    DeltaTable(uri, **opts).alter.set_table_properties({"delta.appendOnly": "false"})
    DeltaTable(uri, **opts).update({"v": "'x'"}, predicate="id = 7")
    DeltaTable(uri, **opts).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    return sorted(DeltaTable(uri, **opts).history(), key=lambda h: h["version"])


def _extension(name: str) -> str:
    import importlib
    module = importlib.import_module(f"duckdb_extension_{name}")
    folder = Path(module.__file__).parent / "extensions"
    return str(next(folder.glob(f"*/{name}.duckdb_extension")))


def ducklake_connect(catalog: str, data: Path):
    """DuckDB with the ducklake extension of the duckdb_extension_ducklake package (no download), the lake
    attached as `lake` and in use."""
    import duckdb
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for name in ("ducklake", "sqlite_scanner"):
        con.execute(f"LOAD '{_extension(name)}'")
    con.execute(f"ATTACH 'ducklake:{catalog}' AS lake (DATA_PATH '{data}{os.sep}')")
    con.execute("USE lake")
    return con


def ducklake_catalog(where: Path, kind: str = "sqlite"):
    """A DuckLake catalog (SQLite, or a DuckDB file) with two tables in two schemas: inserts, a DELETE, an UPDATE,
    merge_adjacent_files (compaction), an ALTER, a commit over both tables with an author. Returns (catalog path,
    the client's snapshots: (snapshot_id, epoch microseconds, changes as text))."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / ("catalog.sqlite" if kind == "sqlite" else "catalog.ducklake")
    con = ducklake_connect(f"sqlite:{path}" if kind == "sqlite" else str(path), where / "data")
    con.execute("CREATE TABLE events (id BIGINT, v VARCHAR)")
    con.execute("CREATE SCHEMA s2")
    con.execute("CREATE TABLE s2.other (x INTEGER)")
    for ids in ([1, 2, 3], [4, 5], [6]):
        con.execute("INSERT INTO events SELECT unnest(?), 'x'", [ids])
    con.execute("INSERT INTO s2.other VALUES (1)")
    con.execute("DELETE FROM events WHERE id = 2")
    con.execute("UPDATE events SET v = 'y' WHERE id = 4")
    con.execute("CALL ducklake_merge_adjacent_files('lake')")
    con.execute("ALTER TABLE events ADD COLUMN w INTEGER")
    con.execute("BEGIN")
    con.execute("INSERT INTO events VALUES (10, 'a', 1)")
    con.execute("INSERT INTO s2.other VALUES (2)")
    con.execute("CALL lake.set_commit_message('alice', 'two tables')")
    con.execute("COMMIT")
    snaps = con.execute("SELECT snapshot_id, epoch_us(snapshot_time), changes::VARCHAR "
                        "FROM ducklake_snapshots('lake') ORDER BY snapshot_id").fetchall()
    con.close()
    return path, snaps
