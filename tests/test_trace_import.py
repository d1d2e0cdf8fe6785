"""`sim trace import`: each importer on a real table its own client wrote in the test (PyIceberg, delta-rs,
DuckLake), every commit's operation and timestamp read back exactly against the client's own view of the history;
a field missing, a bad timestamp or an unknown operation is one line naming the file and the field (exit 2)."""
from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest

import trace_tables
from sim.cli import main
from sim.trace import summary
from sim.trace.history import History


def _local(uri: str) -> str:
    """A local file's path from PyIceberg's URI of it."""
    from urllib.parse import urlparse
    return urlparse(uri).path


def _import(capsys, *args):
    """`sim trace import ARGS` in this process: (exit code, stdout, stderr)."""
    code = main(["trace", "import", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def _trace(capsys, tmp_path, fmt, *paths, name="trace.parquet", extra=()):
    out = tmp_path / name
    code, text, err = _import(capsys, fmt, *paths, "--out", out, *extra)
    assert code == 0 and err == "", err
    df = pd.read_parquet(out) if out.suffix == ".parquet" else pd.read_csv(out)
    return df, text


def _one_line_error(capsys, tmp_path, fmt, path, *needles):
    out = tmp_path / "bad.parquet"
    code, text, err = _import(capsys, fmt, path, "--out", out)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, (needle, err)
    assert not out.exists()
    return err


# ------------------------------------------------------------------------------------------------------ Iceberg
@pytest.fixture(scope="module")
def iceberg(tmp_path_factory):
    pytest.importorskip("pyiceberg")
    where = tmp_path_factory.mktemp("iceberg")
    table, before = trace_tables.iceberg_table(where)
    return table, before


def test_iceberg_every_snapshot_and_metadata_commit(iceberg, capsys, tmp_path):
    from pyiceberg.table.snapshots import Operation
    table, before = iceberg
    df, text = _trace(capsys, tmp_path, "iceberg", _local(table.metadata_location))
    expected = {Operation.APPEND: "append", Operation.OVERWRITE: "overwrite", Operation.DELETE: "overwrite",
                Operation.REPLACE: "compaction"}
    snaps = df[df["source"].str.startswith("snapshot ")]
    assert list(snaps["source"]) == [f"snapshot {s.snapshot_id}" for s in before]    # the expired one too
    assert list(snaps["time_ms"]) == [float(s.timestamp_ms) for s in before]
    assert list(snaps["operation"]) == [expected[s.summary.operation] for s in before]
    assert list(snaps["operation"]) == ["append"] * 3 + ["overwrite"] * 3 + ["append", "compaction"]
    assert list(snaps["files"]) == [int(s.summary.get("added-data-files") or 0) for s in before]
    rest = df[~df["source"].str.startswith("snapshot ")]
    schema_file = table.metadata.metadata_log[-1]      # the file the schema change wrote, before the expiry's
    assert list(rest["operation"]) == ["schema_change", "expire_snapshots"]
    assert list(rest["time_ms"]) == [float(schema_file.timestamp_ms), float(table.metadata.last_updated_ms)]
    assert set(df["table"]) == {"events"} and df["time_ms"].is_monotonic_increasing
    assert "trace: 10 commits on 1 table," in text
    assert "operations: append 4 (40.0 %), overwrite 3 (30.0 %)" in text


def test_iceberg_table_folder_and_its_note(iceberg, capsys, tmp_path):
    table, _ = iceberg
    folder = _local(table.location())
    df, text = _trace(capsys, tmp_path, "iceberg", folder, extra=("--table", "clicks"))
    assert len(df) == 10 and set(df["table"]) == {"clicks"}
    assert "the highest version" in text          # chosen by number: the note says to give the catalog's file


def _iceberg_copy(iceberg, tmp_path):
    table, _ = iceberg
    src = _local(table.metadata_location)
    folder = tmp_path / "metadata"
    shutil.copytree(src.rsplit("/", 1)[0], folder)
    path = folder / src.rsplit("/", 1)[1]
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("change, needles", [
    (lambda m: m["snapshots"][1].pop("timestamp-ms"), ["snapshots[1].timestamp-ms: missing"]),
    (lambda m: m["snapshots"][1].update({"timestamp-ms": "yesterday"}),
     ["snapshots[1].timestamp-ms: bad timestamp 'yesterday'"]),
    (lambda m: m["snapshots"][1].update({"timestamp-ms": 1_700_000_000}),     # seconds, not milliseconds
     ["snapshots[1].timestamp-ms: bad timestamp 1700000000"]),
    (lambda m: m["snapshots"][1]["summary"].update({"operation": "rewrite"}),
     ["snapshots[1].summary.operation: unknown operation 'rewrite'"]),
    (lambda m: m["snapshots"][1].pop("summary"), ["snapshots[1].summary: missing"]),
])
def test_iceberg_unreadable_field_is_one_line(iceberg, capsys, tmp_path, change, needles):
    path, meta = _iceberg_copy(iceberg, tmp_path)
    change(meta)
    path.write_text(json.dumps(meta))
    _one_line_error(capsys, tmp_path, "iceberg", path, path.name, *needles)


def test_iceberg_gone_metadata_files_are_said(iceberg, capsys, tmp_path):
    """Earlier metadata files deleted (write.metadata.delete-after-commit.enabled): the snapshots still in the
    files left are read, and the summary says how many files were gone; with all of them gone, the expired
    snapshot and the commits without a snapshot are not seen."""
    path, meta = _iceberg_copy(iceberg, tmp_path)
    names = [entry["metadata-file"].rsplit("/", 1)[1] for entry in meta["metadata-log"]]
    for name in names[:3]:
        (path.parent / name).unlink()
    df, text = _trace(capsys, tmp_path, "iceberg", path)
    assert "3 of the 8 metadata files its metadata-log names are gone" in text and len(df) == 10
    for name in names[3:]:
        (path.parent / name).unlink()
    df, text = _trace(capsys, tmp_path, "iceberg", path)
    assert "8 of the 8 metadata files its metadata-log names are gone" in text
    assert list(df["operation"]) == ["append"] * 2 + ["overwrite"] * 3 + ["append", "compaction"]


# -------------------------------------------------------------------------------------------------------- Delta
@pytest.fixture(scope="module")
def delta(tmp_path_factory):
    pytest.importorskip("deltalake")
    where = tmp_path_factory.mktemp("delta") / "orders"
    history = trace_tables.delta_table(str(where))
    return where, history


def test_delta_every_entry(delta, capsys, tmp_path):
    where, history = delta
    df, text = _trace(capsys, tmp_path, "delta", where, name="trace.csv")
    assert [h["operation"] for h in history] == ["WRITE"] * 3 + ["DELETE", "WRITE", "WRITE", "OPTIMIZE", "MERGE",
                                                                 "SET TBLPROPERTIES", "UPDATE", "VACUUM START",
                                                                 "VACUUM END"]
    replayed = history[:-2]              # VACUUM's entries: read, counted, not replayed
    assert list(df["source"]) == [f"version {h['version']}" for h in replayed]
    assert list(df["time_ms"]) == [float(h["timestamp"]) for h in replayed]
    assert list(df["operation"]) == ["append"] * 3 + ["overwrite", "overwrite", "append", "compaction", "overwrite",
                                                      "schema_change", "overwrite"]
    runtimes = [h.get("operationMetrics", {}).get("execution_time_ms") for h in replayed]
    assert [None if pd.isna(r) else r for r in df["runtime_ms"]] == runtimes
    assert set(df["writer"]) == {h["engineInfo"] for h in history} and set(df["table"]) == {"orders"}
    assert "read: delta table orders:" in text and "versions 0..11 (12 entries)" in text
    assert "not replayed: 1 VACUUM entry (VACUUM START), 1 VACUUM entry (VACUUM END)" in text


def test_delta_log_cleaned_up_says_what_was_read(capsys, tmp_path):
    """delta-rs's own log cleanup (a checkpoint, then cleanup_metadata under a zero retention) removes the
    entries before the checkpoint: the import reads from the oldest one left and says so."""
    deltalake = pytest.importorskip("deltalake")
    uri = str(tmp_path / "t")
    rows = trace_tables._rows([1])
    deltalake.write_deltalake(uri, rows, mode="append")
    deltalake.DeltaTable(uri).alter.set_table_properties({"delta.logRetentionDuration": "interval 0 seconds"})
    deltalake.write_deltalake(uri, rows, mode="append")
    deltalake.DeltaTable(uri).create_checkpoint()
    deltalake.write_deltalake(uri, rows, mode="append")
    deltalake.DeltaTable(uri).cleanup_metadata()
    history = sorted(deltalake.DeltaTable(uri).history(), key=lambda h: h["version"])
    df, text = _trace(capsys, tmp_path, "delta", f"{uri}/_delta_log")
    assert list(df["time_ms"]) == [float(h["timestamp"]) for h in history] and list(df["source"]) == \
        ["version 2", "version 3"]
    assert "versions 0..1 are gone" in text and "the checkpoint at 2 holds no commitInfo" in text


def _delta_copy(delta, tmp_path, version=1):
    where, _ = delta
    copy = tmp_path / "orders"
    shutil.copytree(where / "_delta_log", copy / "_delta_log")
    entry = copy / "_delta_log" / f"{version:020d}.json"
    return copy, entry, [json.loads(line) for line in entry.read_text().splitlines()]


def _commit_info(actions):
    return next(a["commitInfo"] for a in actions if "commitInfo" in a)


@pytest.mark.parametrize("change, needles", [
    (lambda a: _commit_info(a).pop("timestamp"), ["commitInfo.timestamp: missing"]),
    (lambda a: _commit_info(a).update({"timestamp": "yesterday"}), ["commitInfo.timestamp: bad timestamp"]),
    (lambda a: _commit_info(a).update({"operation": "FROBNICATE"}),
     ["commitInfo.operation: unknown operation 'FROBNICATE'"]),
    (lambda a: _commit_info(a)["operationParameters"].pop("mode"),
     ["commitInfo.operationParameters.mode: WRITE with no mode"]),
    (lambda a: a.remove(next(x for x in a if "commitInfo" in x)), ["commitInfo: missing"]),
])
def test_delta_unreadable_field_is_one_line(delta, capsys, tmp_path, change, needles):
    copy, entry, actions = _delta_copy(delta, tmp_path)
    change(actions)
    entry.write_text("\n".join(json.dumps(a) for a in actions) + "\n")
    _one_line_error(capsys, tmp_path, "delta", copy, entry.name, *needles)


def test_delta_skip_unknown_counts_what_it_left_out(delta, capsys, tmp_path):
    copy, entry, actions = _delta_copy(delta, tmp_path)
    _commit_info(actions)["operation"] = "FROBNICATE"
    entry.write_text("\n".join(json.dumps(a) for a in actions) + "\n")
    df, text = _trace(capsys, tmp_path, "delta", copy, extra=("--skip-unknown",))
    assert len(df) == 9 and "version 1" not in set(df["source"])
    assert "not replayed: 1 unknown operation 'FROBNICATE'" in text


def test_delta_entry_missing_in_the_middle(delta, capsys, tmp_path):
    copy, entry, _ = _delta_copy(delta, tmp_path, version=4)
    entry.unlink()
    _one_line_error(capsys, tmp_path, "delta", copy, "_delta_log", "entries 4..4 missing")


# ----------------------------------------------------------------------------------------------------- DuckLake
EXPECTED_DUCKLAKE = [("main.events", "append")] * 3 + [("s2.other", "append"), ("main.events", "overwrite"),
                                                        ("main.events", "overwrite"), ("main.events", "compaction"),
                                                        ("main.events", "schema_change"), ("main.events", "append"),
                                                        ("s2.other", "append")]


@pytest.fixture(scope="module")
def ducklake(tmp_path_factory):
    """The same history in a SQLite catalog and in a DuckDB one."""
    pytest.importorskip("duckdb")
    pytest.importorskip("duckdb_extension_ducklake")
    return {kind: trace_tables.ducklake_catalog(tmp_path_factory.mktemp("ducklake"), kind)
            for kind in ("sqlite", "duckdb")}


@pytest.mark.parametrize("kind", ["sqlite", "duckdb"])
def test_ducklake_every_snapshot_of_every_table(ducklake, capsys, tmp_path, kind):
    path, snaps = ducklake[kind]
    df, text = _trace(capsys, tmp_path, "ducklake", path)
    assert list(zip(df["table"], df["operation"])) == EXPECTED_DUCKLAKE
    times = {sid: us for sid, us, _ in snaps}
    assert [round(t * 1000) for t in df["time_ms"]] == [times[int(s.split()[1])] for s in df["source"]]
    by_snapshot = {sid: changes for sid, _, changes in snaps}
    assert [by_snapshot[int(s.split()[1])] for s in df["source"]] == (
        ["{tables_inserted_into=[1]}"] * 3 + ["{tables_inserted_into=[3]}", "{tables_deleted_from=[1]}",
                                              "{tables_inserted_into=[1], tables_deleted_from=[1]}", "{}",
                                              "{tables_altered=[1]}"] + ["{tables_inserted_into=[1, 3]}"] * 2)
    assert list(df["writer"])[-2:] == ["alice", "alice"] and df["writer"][:-2].isna().all()   # unknown: null
    assert "not replayed: 2 created_schema (not a commit to a table's data), 2 created_table" in text
    assert "trace: 10 commits on 2 tables" in text


def _ducklake_sql(ducklake, tmp_path, sql):
    path, _ = ducklake["sqlite"]
    copy = tmp_path / "catalog.sqlite"
    shutil.copy(path, copy)
    with sqlite3.connect(copy) as db:
        db.execute(sql)
    return copy


@pytest.mark.parametrize("sql, needles", [
    ("UPDATE ducklake_snapshot SET snapshot_time = 'yesterday' WHERE snapshot_id = 4",
     ["ducklake_snapshot.snapshot_time of snapshot 4: bad timestamp 'yesterday'"]),
    ("UPDATE ducklake_snapshot SET snapshot_time = NULL WHERE snapshot_id = 4",
     ["ducklake_snapshot.snapshot_time of snapshot 4: missing"]),
    ("UPDATE ducklake_snapshot_changes SET changes_made = 'frobnicated_table:1' WHERE snapshot_id = 4",
     ["changes_made of snapshot 4: unknown change 'frobnicated_table'"]),
    ("DELETE FROM ducklake_snapshot_changes WHERE snapshot_id = 4",
     ["ducklake_snapshot_changes: no row for snapshot 4"]),
    ("UPDATE ducklake_snapshot_changes SET changes_made = 'inserted_into_table:99' WHERE snapshot_id = 4",
     ["changes_made of snapshot 4: inserted_into_table:99: no table 99"]),
    ("DROP TABLE ducklake_snapshot_changes", ["ducklake_snapshot_changes: cannot read it"]),
])
def test_ducklake_unreadable_field_is_one_line(ducklake, capsys, tmp_path, sql, needles):
    copy = _ducklake_sql(ducklake, tmp_path, sql)
    _one_line_error(capsys, tmp_path, "ducklake", copy, "catalog.sqlite", *needles)


# ------------------------------------------------------------------------------------------------------- common
def test_several_paths_make_one_trace_and_a_name_twice_is_refused(delta, capsys, tmp_path):
    where, history = delta
    for name in ("a", "b"):
        shutil.copytree(where / "_delta_log", tmp_path / name / "_delta_log")
    df, text = _trace(capsys, tmp_path, "delta", tmp_path / "a", tmp_path / "b")
    assert len(df) == 2 * (len(history) - 2) and df["time_ms"].is_monotonic_increasing
    assert "trace: 20 commits on 2 tables" in text
    code, _, err = _import(capsys, "delta", where, f"{where}/_delta_log/", "--out", tmp_path / "t.parquet")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "its table 'orders' has the name of" in err


def test_the_base_install_imports_no_client(iceberg, delta, tmp_path):
    """The importers read metadata.json and the log with the json module and SQLite catalogs with sqlite3: the
    clients are never imported."""
    table, _ = iceberg
    where, _ = delta
    code = (f"import sys; from sim.cli import main\n"
            f"for fmt, path in [('iceberg', {table.metadata_location!r}), ('delta', {str(where)!r})]:\n"
            f"    assert main(['trace', 'import', fmt, path, '--out', {str(tmp_path / 't.parquet')!r}]) == 0\n"
            f"loaded = sorted(m for m in ('pyiceberg', 'deltalake', 'duckdb', 'psycopg2') if m in sys.modules)\n"
            f"assert not loaded, loaded\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_bad_out_and_missing_path_are_one_line(capsys, tmp_path):
    for args, needle in [(["delta", str(tmp_path), "--out", str(tmp_path / "t.txt")], "a trace is a .parquet or .csv file"),
                         (["delta", str(tmp_path / "none"), "--out", str(tmp_path / "t.csv")], "no such folder"),
                         (["iceberg", str(tmp_path), "--out", str(tmp_path / "t.csv")], "no *.metadata.json"),
                         (["ducklake", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "t.csv")], "no such file")]:
        code, _, err = _import(capsys, *args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err


def test_a_history_of_no_commit_writes_nothing(capsys, tmp_path):
    """A Delta table created without data (delta-rs's CREATE TABLE): read, nothing to replay, exit 2."""
    deltalake = pytest.importorskip("deltalake")
    deltalake.DeltaTable.create(str(tmp_path / "empty"), schema=trace_tables._rows([1]).schema)
    out = tmp_path / "t.parquet"
    code, text, err = _import(capsys, "delta", tmp_path / "empty", "--out", out)
    assert code == 2 and "no commit to replay" in err and not out.exists()
    assert "trace: no commits" in text and "not replayed: 1 table creation without data (CREATE TABLE)" in text


def _history(times_ms, tables, ops):
    h = History("test", "a test history")
    for t, table, op in zip(times_ms, tables, ops):
        h.add(t, table, op, "x")
    return h


def test_summary_rate_by_hour():
    start = 1_796_601_600_000.0      # 2026-12-07 00:00 UTC
    h = _history([start + 10, start + 20, start + 3_600_000 * 2 + 5], ["a", "b", "a"], ["append"] * 3)
    text = summary.text(h, h.frame())
    assert "trace: 3 commits on 2 tables, 2026-12-07 00:00:00.010 to 2026-12-07 02:00:00.005 UTC (2.0 h, 0.000417 commits/s)" in text
    assert "  2026-12-07 01:00       0 commits  0.0000 /s" in text       # an hour without commits is listed
    assert "busiest hour 2026-12-07 00:00 UTC: 2 commits (0.0006 /s)" in text
    day = 86_400_000
    h = _history([start + k * day for k in range(4)], ["a"] * 4, ["append"] * 4)
    text = summary.text(h, h.frame())
    assert "by hour of day (UTC), mean over 3.0 days:" in text and "  00:00       1.3 commits/h" in text
