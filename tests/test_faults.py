"""Faults a sweep must survive or report in one line: a worker killed under a run (locally and on a Dask cluster),
a disk that fills up while results or the report are written."""
import contextlib
import io
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest
import yaml

from helpers import ROOT, TINY_SWEEP, results_table
from sim.report import write_report
from sim.sweep import parse, run_sweep, tasks_of
from sim.sweep.store import ResultStore

SMOKE = ROOT / "experiments" / "smoke.yaml"
EXIT_IO = 74


@pytest.fixture(scope="module")
def tiny_reference(tmp_path_factory):
    """The tiny sweep, run serially in this process: what every executor must reproduce."""
    out = tmp_path_factory.mktemp("tiny")
    outcome = run_sweep(parse(TINY_SWEEP), out, jobs=1, progress=False, log=lambda *_: None)
    assert outcome.ran == 4 and outcome.failed == 0
    write_report(out, TINY_SWEEP["report"])
    return out


def _victim() -> str:
    return tasks_of(parse(TINY_SWEEP))[0]["key"]


# ------------------------------------------------------------------------------------------------ killed worker

def test_a_worker_killed_mid_sweep_is_replaced_and_its_runs_rerun(tiny_reference, tmp_path, monkeypatch):
    """One run SIGKILLs its worker process the first time it starts (as the OOM killer would): the pool is
    rebuilt, the runs in flight rerun, and the table equals the serial one. (Workers run the simpy engine, which
    gives the fast engine's records bit for bit, so that each rebuilt pool need not load numba.)"""
    marker = tmp_path / "killed-once"
    monkeypatch.setenv("SIM_TEST_KILL_WORKER", f"{_victim()}@{marker}")
    out = tmp_path / "out"
    outcome = run_sweep(parse(TINY_SWEEP), out, jobs=2, engine="simpy", progress=False, log=lambda *_: None)
    assert marker.exists(), "the fault was not injected"
    assert (outcome.ran, outcome.failed) == (4, 0)
    pd.testing.assert_frame_equal(results_table(out), results_table(tiny_reference), check_exact=True)


def test_a_run_that_kills_every_worker_is_recorded_as_failed(tmp_path, monkeypatch):
    """A run that kills its worker every time is given up after 3 deaths, recorded with why; the rest finish."""
    monkeypatch.setenv("SIM_TEST_KILL_WORKER", _victim())
    out = tmp_path / "out"
    outcome = run_sweep(parse(TINY_SWEEP), out, jobs=2, engine="simpy", progress=False, log=lambda *_: None)
    assert (outcome.ran, outcome.failed) == (4, 1)
    df = pd.read_parquet(out / "results.parquet")
    bad = df[df.status == "failed"]
    assert len(bad) == 1 and "worker died 3 times" in bad.error.iloc[0]
    assert ResultStore(out).read(_victim())["status"] == "failed"


# ------------------------------------------------------------------------------------------------ disk full

def _cli_with_file_size_limit(limit_bytes: int, *args):
    """`python -m sim ARGS` with RLIMIT_FSIZE: a write past `limit_bytes` fails with EFBIG ("File too large"),
    as a full disk fails one with ENOSPC (Python ignores SIGXFSZ, so the write raises instead of killing the
    process). The simpy engine keeps numba, which writes its cache, out of the process."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.run([sys.executable, "-m", "sim", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, preexec_fn=limit)


def _leftovers(d: Path) -> list[Path]:
    return [p for p in d.rglob("*") if p.name.endswith((".tmp", ".old"))]


def _one_io_error(r, path: Path):
    """Exit 74 and one error line, the last on stderr (after the run's size estimate), naming the file."""
    assert r.returncode == EXIT_IO, r.stderr
    errors = [line for line in r.stderr.strip().splitlines() if not line.startswith("estimate")]
    assert errors == [f"error: cannot write {path}: File too large"], r.stderr


def test_disk_full_during_a_sweep_is_one_line_and_exit_74(tmp_path):
    """The first run file does not fit: one line naming it, exit 74, no temp file left."""
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump(TINY_SWEEP))
    out = tmp_path / "out"
    r = _cli_with_file_size_limit(2_000, "sweep", spec, "--out", out, "--jobs", "1", "--engine", "simpy",
                                  "--no-progress")
    first = sorted(tasks_of(parse(TINY_SWEEP)), key=lambda t: -t["cost"])[0]["key"]
    _one_io_error(r, out / "runs" / f"{first}.json")
    assert not list((out / "runs").glob("*.json")) and not _leftovers(tmp_path)


@pytest.mark.slow   # (4 s; a full disk during a sweep stays in the default run)
def test_disk_full_during_a_report_leaves_the_old_report_whole(tiny_reference, tmp_path):
    """The CSVs fit, the first figure does not: exit 74, and the report directory is the previous one, untouched
    (no half-new report, no staging directory)."""
    before = {p.relative_to(tiny_reference): p.read_bytes() for p in (tiny_reference / "report").rglob("*")
              if p.is_file()}
    assert any(p.suffix == ".png" for p in before)
    r = _cli_with_file_size_limit(10_000, "report", tiny_reference)
    assert r.returncode == EXIT_IO, r.stderr
    line, = r.stderr.strip().splitlines()
    assert line.startswith(f"error: cannot write {tiny_reference / 'report' / 'figures'}/")
    assert line.endswith(".png: File too large")
    after = {p.relative_to(tiny_reference): p.read_bytes() for p in (tiny_reference / "report").rglob("*")
             if p.is_file()}
    assert after == before and not _leftovers(tiny_reference)


def test_disk_full_in_run_out_writes_nothing(tmp_path, monkeypatch):
    """`run --out DIR --history`: the disk fills up at the last file (history.parquet; simulated in-process by a
    parquet writer raising ENOSPC on its first call: the records went before, streamed through pyarrow's
    ParquetWriter). Exit 74 naming it, and DIR is not left with the first files of a run whose output is
    incomplete."""
    import errno

    from sim import cli
    real, calls = pd.DataFrame.to_parquet, []

    def full_on_first(self, path, *a, **kw):
        calls.append(path)
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        return real(self, path, *a, **kw)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full_on_first)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(TINY_SWEEP["base"]))
    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["run", str(cfg), "--out", str(out), "--history", "--json"])
    assert code == EXIT_IO and len(calls) == 1
    assert err.getvalue().strip().splitlines()[-1] == \
        f"error: cannot write {out / 'history.parquet'}: No space left on device"
    assert not out.exists() and not _leftovers(tmp_path)


# ------------------------------------------------------------------------------------------------ killed command

KILL_GRACE_S = 10   # how long a SIGKILLed command's processes may take to end


def _alive(procs) -> list[psutil.Process]:
    """Those of `procs` still running (a zombie has ended: only its exit status waits for a reaper)."""
    out = []
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
    return out


def _session(sid: int) -> list[psutil.Process]:
    """Every process of session `sid` (the command's, and whatever it started that did not leave it)."""
    out = []
    for p in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if os.getsid(p.pid) == sid:
                out.append(p)
    return out


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def _describe(procs) -> str:
    lines = []
    for p in procs:
        with contextlib.suppress(psutil.Error):
            lines.append(f"pid {p.pid} (parent {p.ppid()}): {' '.join(_cmdline(p))[:120]}")
    return "\n".join(lines)


def _sigkill_leaves_nothing(args, ready, env=None):
    """Start `python -m sim ARGS` in a session of its own, wait until `ready(children)` (its processes at work),
    SIGKILL it, and assert that none of its processes outlives it by more than KILL_GRACE_S. Whatever is left is
    killed, so a failure leaves nothing behind."""
    proc = subprocess.Popen([sys.executable, "-m", "sim", *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    main, tree = psutil.Process(proc.pid), set()
    try:
        deadline = time.monotonic() + 240
        while True:
            with contextlib.suppress(psutil.NoSuchProcess):
                tree.update(main.children(recursive=True))
            if ready(_alive(tree)):
                break
            assert proc.poll() is None, f"the command ended (exit {proc.returncode}) before it was ready"
            assert time.monotonic() < deadline, "timed out waiting for the command's processes"
            time.sleep(0.05)
        tree.update(main.children(recursive=True))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + KILL_GRACE_S
        while (_alive(tree) or _alive(_session(proc.pid))) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _alive(tree) + [p for p in _alive(_session(proc.pid)) if p not in tree]
        assert not left, f"{KILL_GRACE_S} s after `sim {args[0]}` was SIGKILLed:\n{_describe(left)}"
    finally:
        for p in _alive(tree) + _alive(_session(proc.pid)):
            with contextlib.suppress(psutil.Error):
                p.kill()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _workers_at_work(out: Path, n: int = 2, worker: str = "loky.backend.popen_loky_posix"):
    """Ready when `n` workers (processes whose command line holds `worker`) are alive and a run is written (they
    are past their start, running runs)."""
    def ready(procs):
        workers = [p for p in procs if worker in " ".join(_cmdline(p))]
        return len(workers) >= n and any((out / "runs").glob("*.json"))
    return ready


def test_a_sweep_killed_by_sigkill_takes_its_workers_with_it(tmp_path):
    """`kill -9` of a sweep (as the OOM killer or a scheduler's time limit would): its two workers, mid-run, and
    loky's resource trackers end within seconds; without `sim.orphans` they stayed for good, with parent 1.
    (The simpy engine: no compile before the workers start; 24 light runs: the first is written soon, many remain.)"""
    spec = tmp_path / "sweep.yaml"
    spec.write_text(yaml.safe_dump({**TINY_SWEEP, "base": {**TINY_SWEEP["base"], "duration_ms": 120_000},
                                    "grid": {"workload.num_tables": list(range(1, 13)),
                                             "storage.provider": ["s3x", "s3"]}}))
    out = tmp_path / "out"
    _sigkill_leaves_nothing(["sweep", spec, "--out", out, "--jobs", "2", "--engine", "simpy", "--no-report",
                             "--no-progress"], _workers_at_work(out))


def test_a_knee_search_killed_by_sigkill_takes_its_workers_with_it(tmp_path):
    """The same for `sim knee`, whose searches run on the same pool."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({**yaml.safe_load(SMOKE.read_text())["base"], "storage": {"provider": "s3"}}))
    out = tmp_path / "out"
    _sigkill_leaves_nothing(["knee", cfg, "--out", out, "--jobs", "2", "--engine", "simpy"], _workers_at_work(out))


def test_a_sweep_killed_while_it_compiles_takes_its_compile_helper_with_it(tmp_path):
    """A first compile (an empty numba cache) forks a helper that compiles a design's step for some 10-20 s: a
    sweep killed meanwhile takes it with it."""
    def ready(procs):   # the helper is a fork: the sweep's own command line
        return any(_cmdline(p) == main_cmdline for p in procs)

    out = tmp_path / "out"
    args = ["sweep", SMOKE, "--out", out, "--jobs", "2", "--no-report", "--no-progress"]
    main_cmdline = [sys.executable, "-m", "sim", *map(str, args)]
    _sigkill_leaves_nothing(args, ready, env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")})


@pytest.mark.slow   # a LocalCluster's start (the loky pool's case stays in the default run)
def test_a_dask_sweep_killed_by_sigkill_takes_its_local_cluster_with_it(tmp_path):
    """`--executor dask` on its own LocalCluster: the worker processes end with the sweep (Dask's own pipe to the
    parent, `distributed.process.AsyncProcess`)."""
    pytest.importorskip("dask.distributed")
    out = tmp_path / "out"
    _sigkill_leaves_nothing(["sweep", SMOKE, "--out", out, "--jobs", "2", "--engine", "simpy", "--executor", "dask",
                             "--no-report", "--no-progress"], _workers_at_work(out, worker="spawn_main"))


# ------------------------------------------------------------------------------------------------ Dask

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(pred, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow   # a Dask cluster; the local executor's killed run is tested by default (test_sweep.py)
def test_distributed_sweep_survives_a_killed_worker(smoke_reference, tmp_path):
    """A real cluster on loopback: a scheduler and two single-threaded workers, each its own process (no nanny,
    so a killed worker stays dead). One worker is SIGKILLed once runs are being written; the sweep completes and
    its table equals the local executor's."""
    pytest.importorskip("dask.distributed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    dask = [sys.executable, "-m", "distributed.cli.dask_worker"]
    procs = []
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                                       "127.0.0.1", "--port", str(port), "--no-dashboard"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        workers = [subprocess.Popen(dask + [address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
                                            "--no-dashboard", "--name", f"w{i}"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(2)]
        procs += workers
        from distributed import Client
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        out = tmp_path / "dask"
        sweep = subprocess.Popen([sys.executable, "-m", "sim", "sweep", str(SMOKE), "--out", str(out),
                                  "--executor", "dask", "--scheduler", address, "--no-report", "--no-progress"],
                                 cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(sweep)
        runs = out / "runs"
        _wait_for(lambda: runs.is_dir() and len(list(runs.glob("*.json"))) >= 2 or sweep.poll() is not None,
                  180, "the first runs")
        written_at_kill = len(list(runs.glob("*.json")))
        workers[0].send_signal(signal.SIGKILL)
        stdout, stderr = sweep.communicate(timeout=300)
        assert sweep.returncode == 0, stderr
        assert written_at_kill < 16, "the sweep ended before the worker was killed"
        pd.testing.assert_frame_equal(results_table(out), results_table(smoke_reference), check_exact=True)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=30)


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(d.name))
    return out


@pytest.mark.slow   # (5 s; a killed worker stays in the default run)
@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs Linux's /proc")
def test_sigterm_ends_a_sweep_and_its_workers(tmp_path):
    """SIGTERM (a batch system's cancel, `kill`) ends a sweep as Ctrl-C does: exit 143, one line, and its worker
    processes stopped with it (they ran on, orphaned, until their task ended: up to minutes of CPU)."""
    spec = {**TINY_SWEEP, "base": {**TINY_SWEEP["base"], "duration_ms": 3_600_000},
            "grid": {"workload.num_tables": [1, 2, 3, 4], "storage.provider": ["s3x", "s3"]}}
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(spec))
    sweep = subprocess.Popen([sys.executable, "-m", "sim", "sweep", str(path), "--out", str(tmp_path / "out"),
                              "--jobs", "2", "--no-report", "--no-progress"], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: len(_children(sweep.pid)) >= 2 or sweep.poll() is not None, 60, "the workers")
        workers = _children(sweep.pid)
        assert sweep.poll() is None, sweep.communicate()
        sweep.send_signal(signal.SIGTERM)
        _, stderr = sweep.communicate(timeout=60)
        # "terminated" is the sweep's line; loky's resource tracker (its own process) may warn after it of a
        # semaphore the killed workers left
        assert sweep.returncode == 143 and "terminated" in stderr.splitlines(), stderr
        _wait_for(lambda: not any(Path(f"/proc/{p}").exists() for p in workers), 30, "the workers to stop")
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait(timeout=30)


def test_closing_a_pool_whose_manager_thread_is_starting():
    """Ctrl-C or SIGTERM inside loky's `Thread.start` leaves its manager thread starting, and a join then raises
    "cannot join thread before it is started" (a terminated sweep ended with exit 1, not 143): closing the pool
    waits for the thread and shuts the pool down."""
    from sim.sweep.executors import LocalExecutor
    ex = LocalExecutor(1)
    real, calls = ex.pool.shutdown, []

    def starting_once(**kw):
        calls.append(kw)
        if len(calls) == 1:
            raise RuntimeError("cannot join thread before it is started")
        return real(**kw)

    ex.pool.shutdown = starting_once
    ex.close()
    assert calls == [{"wait": True, "kill_workers": True}] * 2
