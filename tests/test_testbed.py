"""The testbed end to end: real servers started by the fixture (PostgreSQL, SeaweedFS), real clients, the record
schema, nothing lost or doubled, and every process it started gone afterwards.

The default suite runs the smoke test (PyIceberg's SqlCatalog, 2 writers x 5 commits, no delay); `-m slow` runs one
cell of every stack with the client's retries off and at their defaults. CI installs the clients (`.[dev]` has the
testbed extra) and Debian's PostgreSQL: these tests do not skip there."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pytest

from sim.records import RECORD_COLUMNS
from sim.testbed.cell import CellSpec, run_cell
from sim.testbed.figures import figures
from sim.testbed.proxy import Delay
from sim.testbed.servers import ServerError, servers_for, start_postgres


def _ours(workdir) -> list[psutil.Process]:
    """Processes alive that belong to a run in `workdir` (servers started there, writers, the proxy)."""
    me = psutil.Process()
    found = []
    for p in psutil.process_iter(["cmdline", "pid"]):
        try:
            cmd = " ".join(p.info["cmdline"] or [])
            if str(workdir) in cmd or (p.pid != me.pid and me in p.parents() and "sim-testbed" in p.name()):
                found.append(p)
        except psutil.Error:
            pass
    return found


def _children() -> set[int]:
    """This process's children, but multiprocessing's resource tracker: started with the first spawned writer's
    barrier, it serves this process for its life and exits with it."""
    out = set()
    for c in psutil.Process().children(recursive=True):
        try:
            if "resource_tracker" not in " ".join(c.cmdline()):
                out.add(c.pid)
        except psutil.Error:
            pass
    return out


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """PostgreSQL and SeaweedFS, started in a folder named relative to the working directory (as `--out results/x`
    names it): each server runs in a folder of its own, so every path it is given must still name the same one."""
    workdir = tmp_path_factory.mktemp("testbed")
    before, cwd = _children(), os.getcwd()
    os.chdir(workdir.parent)
    try:
        with servers_for({"pg", "s3"}, Path(workdir.name)) as srv:
            os.chdir(cwd)
            yield srv, workdir
    finally:
        os.chdir(cwd)
    left = [p for p in _ours(workdir)] + [psutil.Process(p) for p in _children() - before if psutil.pid_exists(p)]
    left = [p for p in left if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, f"processes left running: {[(p.pid, ' '.join(p.cmdline())[:120]) for p in left]}"


def _check_records(records: pd.DataFrame, spec: CellSpec) -> None:
    assert list(records.columns[:len(RECORD_COLUMNS)]) == list(RECORD_COLUMNS)
    assert len(records) == spec.writers * spec.commits
    assert set(records["outcome"]) <= {"committed", "aborted"}
    assert (records["attempts"] >= 1).all()
    assert (records["end_ms"] >= records["arrival_ms"]).all()
    assert (records["arrival_ms"] >= 0).all()
    if not spec.retries:
        assert (records["attempts"] == 1).all()


def test_smoke_pyiceberg_sql_two_writers(servers, tmp_path):
    """PyIceberg's SqlCatalog on the fixture's PostgreSQL, the warehouse on SeaweedFS: 2 writers x 5 commits with no
    delay and retries off. Every commit told committed is in the table once with all its rows, nothing else is;
    the records have the simulator's schema; the figures are rates in [0, 1] and positive times."""
    srv, _ = servers
    spec = CellSpec("iceberg-sql", 2, 5, Delay(0.0), False, payload_bytes=2048, rows_per_commit=4)
    result = run_cell(spec, srv, tmp_path / "cell", tag="smoke")
    assert result.conservation["ok"], result.conservation
    assert result.conservation["committed"]["smoke_t0"] == int((result.records["outcome"] == "committed").sum())
    assert result.conservation["versions"]["smoke_t0"] == result.conservation["committed"]["smoke_t0"]
    _check_records(result.records, spec)
    fig = figures(result.records)
    assert 0.0 <= fig["failure_share"] <= 1.0 and fig["successes_per_s"] > 0 and fig["commit_p50_ms"] > 0
    assert {"pg", "s3"} <= set(result.requests["server"])
    assert (result.requests["latency_ms"] > 0).all()
    assert result.cpu["cpu_writers_s"] > 0 and 0.0 <= result.cpu["busy_fraction"] <= 1.0
    assert (result.records["cpu_wait_ms"] >= 0).all()
    assert 0.0 <= result.cpu["wait_writers_s"] <= result.cpu["commit_calls_s"] * 2   # (a writer's threads)
    assert result.cpu["wait_servers_s"] >= 0 and result.cpu["wait_proxy_s"] >= 0
    assert not [p for p in psutil.Process().children(recursive=True) if "sim-testbed" in p.name()]


@pytest.mark.slow
def test_seaweedfs_makes_the_later_of_two_close_marker_puts_wait_a_second(tmp_path):
    """SeaweedFS 4.48's lock per directory marker, as `sim testbed run` measures it (`sim.testbed.marker_lock`): two
    PUTs of one marker at most 1 ms apart, 16 pairs at each of 3 offsets. Some pair collides (the window is over 0 and
    under the offsets' span) and the later waits the lock client's 1 s sleep. If this fails, the server no longer
    locks markers so: the model's `marker_lock_*` keys for it are stale. (Slow: on a machine the default suite keeps
    busy, the two PUTs' spread in time is the scheduler's, not the offset's.)"""
    from sim.testbed.marker_lock import measure_servers
    with servers_for({"s3"}, tmp_path) as srv:
        probe = measure_servers(srv, rounds=16, step_ms=0.5, max_ms=1.0)
    assert probe["pairs"] == 48 and 0.0 < probe["window_ms"] <= 1.0, probe["curve"]
    assert 990.0 <= probe["poll_ms"] <= 1100.0, probe


def test_a_failed_start_is_one_line_naming_its_log(tmp_path, monkeypatch):
    """initdb failing (a bin folder whose initdb exits 1): one ServerError line naming the server's log."""
    fake = tmp_path / "bin"
    fake.mkdir()
    for name in ("initdb", "postgres", "pg_isready"):
        (fake / name).write_text("#!/bin/sh\necho 'initdb: cannot create directory: Permission denied' >&2\nexit 1\n")
        os.chmod(fake / name, 0o755)
    monkeypatch.setattr("sim.testbed.servers.postgres_bindir", lambda: fake)
    with pytest.raises(ServerError) as err:
        start_postgres(tmp_path / "work")
    msg = str(err.value)
    assert "\n" not in msg and "postgres.log" in msg and "Permission denied" in msg


STACK_CELLS = [(s, r) for s in ("iceberg-sql", "iceberg-rest", "delta-s3", "ducklake-pg") for r in (False, True)]


@pytest.mark.slow
@pytest.mark.parametrize("stack,retries", STACK_CELLS)
def test_stack_cell(stack, retries, tmp_path_factory):
    """One cell of each stack, its client's retries off and at their defaults: 3 writers x 3 commits with a 2 ms
    delay. Conservation, the schema; with retries on, a transaction that did not commit made every attempt its
    client allows (PyIceberg 1 + 4, delta-rs 1 + 15, DuckLake 10), with them off one."""
    workdir = tmp_path_factory.mktemp(f"tb-{stack}")
    names = {"iceberg-sql": {"pg", "s3"}, "iceberg-rest": {"s3"}, "delta-s3": {"s3"}, "ducklake-pg": {"pg"}}[stack]
    spec = CellSpec(stack, 3, 3, Delay(2.0), retries, payload_bytes=2048, rows_per_commit=4)
    with servers_for(names, workdir) as srv:
        result = run_cell(spec, srv, workdir / "cell", tag=f"s{int(retries)}")
    assert result.conservation["ok"], result.conservation
    _check_records(result.records, spec)
    lost = result.records[result.records["outcome"] != "committed"]
    allowed = {"iceberg-sql": 5, "iceberg-rest": 5, "delta-s3": 16, "ducklake-pg": 10}[stack] if retries else 1
    assert (lost["attempts"] == allowed).all(), lost[["writer", "attempts", "reason"]]
    assert not _ours(workdir)
    assert np.isfinite(figures(result.records)["commit_p50_ms"])


@pytest.mark.slow
def test_a_testbed_run_killed_by_sigkill_takes_its_servers_and_writers_with_it(tmp_path):
    """`kill -9` of `sim testbed run` while its writers commit: PostgreSQL (started as its own user, in a session
    of its own), the proxy and the writers all end within seconds (`sim.orphans`, armed in each). (The killed run
    cannot remove its PostgreSQL folder: the test does.)"""
    import glob
    import shutil
    import tempfile

    from test_faults import _cmdline, _sigkill_leaves_nothing
    pattern = f"{tempfile.gettempdir()}/sim-testbed-pg-*"
    before = set(glob.glob(pattern))

    def ready(procs):
        cmds = [" ".join(_cmdline(p)) for p in procs]
        return any("postgres" in c and "-D" in c for c in cmds) and sum("spawn_main" in c for c in cmds) >= 3

    _sigkill_leaves_nothing(["testbed", "run", "--stacks", "ducklake-pg", "--writers", "2", "--delays", "20",
                             "--reps", "1", "--commits", "200", "--calibration-commits", "200", "--out",
                             tmp_path / "out"], ready)
    for d in set(glob.glob(pattern)) - before:
        shutil.rmtree(d, ignore_errors=True)
