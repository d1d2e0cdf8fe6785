"""A grid of measured cells, one at a time, on servers started once: `sim testbed run`.

The grid is stacks x the client's retries (off, the client's defaults) x delays x writer counts x repetitions,
plus, per stack and delay, the one-writer calibration cell the model's prediction is built from (more commits, so
that its request latencies and its client CPU are well sampled). Each cell's folder holds its requests, records
and `cell.json`; a cell whose `cell.json` exists is not measured again (a rerun resumes). `measured.parquet` has a
row per cell and repetition: its figures, CPU and conservation.
"""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from .cell import CellSpec, run_cell
from .figures import figures
from .proxy import Delay
from .servers import servers_for
from .stacks import PUTS_MARKERS, SERVERS

MARKER_LOCK = "marker_lock.json"      # the S3 server's marker lock, measured after the calibration cells

# a cell whose own processes (writers, servers, proxy) or the machine kept the CPUs busier than this share of
# their capacity on average is `cpu_bound`: the clients' CPU, not the protocol, may set its figures
CPU_BOUND = 0.5
# ... or whose own processes' threads waited for a CPU (runnable, not running), as a share of the writers' time in
# their commit calls, more than this over the one-writer cell of its stack, delay and retries: a wait the model does
# not have, a quarter of the p50's 20 % tolerance. (Over the one writer's: on a virtual machine a thread woken from
# sleep waits for its CPU even when the machine is idle, a wait in the one-writer calibration too.)
CPU_WAIT_BOUND = 0.05


@dataclass(frozen=True)
class Grid:
    stacks: tuple
    writers: tuple = (1, 2, 4, 8)
    delays_ms: tuple = (5.0, 25.0)
    retries: tuple = (False, True)
    commits: int = 10
    reps: int = 3
    tables: int = 1
    zipf_alpha: float = 1.5
    payload_bytes: int = 16384
    rows_per_commit: int = 10
    jitter: float = 0.1            # the lognormal part's median, as a share of the fixed one-way delay
    jitter_sigma: float = 0.5
    calibration_commits: int = 0   # 0: the grid's largest writer count x its commits
    seed: int = 1
    marker_rounds: int = 40        # pairs at each offset of the S3 server's marker lock probe (0: not measured)

    def delay(self, fixed_ms: float) -> Delay:
        return Delay(fixed_ms, self.jitter * fixed_ms, self.jitter_sigma if self.jitter > 0 else 0.0)

    def spec(self, stack: str, writers: int, d: float, retries: bool, rep: int = 0, commits: int = 0) -> CellSpec:
        """A cell of this grid's settings: `commits` a writer (0: the grid's)."""
        return CellSpec(stack, writers, commits or self.commits, self.delay(d), retries, self.tables,
                        self.zipf_alpha, self.payload_bytes, self.rows_per_commit, self.seed, rep)

    def cells(self):
        """Repetition by repetition, so that a campaign cut short still holds whole grids."""
        for rep in range(self.reps):
            for stack in self.stacks:
                for d in self.delays_ms:
                    for retries in self.retries:
                        for n in self.writers:
                            yield self.spec(stack, n, d, retries, rep)

    def calibration(self, stack: str, d: float) -> CellSpec:
        return self.spec(stack, 1, d, False, commits=self.calibration_commits or max(self.writers) * self.commits)


def cell_dir(out: Path, spec: CellSpec, calibration: bool = False) -> Path:
    retries = "default" if spec.retries else "off"
    base = out / ("calibration" if calibration else "cells") / spec.stack / f"delay{spec.delay.fixed_ms:g}"
    if calibration:
        return base
    return base / f"retries-{retries}" / f"writers{spec.writers}" / f"rep{spec.rep}"


def cpu_wait_share(cpu: dict) -> float:
    """The writers', servers' and proxy's threads' time waiting for a CPU, over the writers' time in their commit
    calls (NaN: not measured, a cell of an earlier version)."""
    if "wait_writers_s" not in cpu or not cpu.get("commit_calls_s"):
        return float("nan")
    return (cpu["wait_writers_s"] + cpu["wait_servers_s"] + cpu["wait_proxy_s"]) / cpu["commit_calls_s"]


def is_cpu_bound(busy: float, wait_excess: float) -> bool:
    """Over either bound (a wait not measured counts as under its bound)."""
    return bool(busy > CPU_BOUND or wait_excess > CPU_WAIT_BOUND)


def cell_row(spec: CellSpec, records: pd.DataFrame, cpu: dict, conservation: dict, calibration: bool) -> dict:
    fig = figures(records)
    own = (cpu["cpu_writers_s"] + cpu["cpu_servers_s"] + cpu["cpu_proxy_s"]) / (cpu["cpus"] * fig["span_s"])
    return {"stack": spec.stack, "delay_ms": spec.delay.fixed_ms, "retries": "default" if spec.retries else "off",
            "writers": spec.writers, "rep": spec.rep, "commits": spec.commits, "calibration": calibration, **fig,
            "busy_fraction": cpu["busy_fraction"], "own_busy_fraction": own,
            # (the wait bound is the report's: it needs the one-writer cell's wait)
            "cpu_wait_share": cpu_wait_share(cpu),
            "cpu_bound": bool(max(own, cpu["busy_fraction"]) > CPU_BOUND),
            "cpu_writers_s": cpu["cpu_writers_s"], "cpu_servers_s": cpu["cpu_servers_s"],
            "cpu_proxy_s": cpu["cpu_proxy_s"], "client_cpu_ms_per_attempt": 1000 * cpu["cpu_writers_s"] / max(
                1, fig["attempts"]), "conserved": conservation["ok"], "lost": conservation["lost"],
            "doubled": conservation["doubled"]}


def _measure(spec: CellSpec, servers, folder: Path, tag: str, calibration: bool, log) -> dict:
    done = folder / "row.json"
    if done.exists():
        return json.loads(done.read_text())
    t = time.monotonic()
    result = run_cell(spec, servers, folder, tag)
    row = cell_row(spec, result.records, result.cpu, result.conservation, calibration)
    done.write_text(json.dumps(row))
    log(f"{'calibration ' if calibration else ''}{spec.label()}: {row['committed']}/{row['transactions']} committed, "
        f"failure share {row['failure_share']:.3f}, {row['successes_per_s']:.2f} c/s, p50 "
        f"{row['commit_p50_ms']:.0f} ms, busy {row['own_busy_fraction']:.2f}/{row['busy_fraction']:.2f}, "
        f"cpu wait {row['cpu_wait_share']:.3f}"
        f"{' cpu_bound' if row['cpu_bound'] else ''}{'' if row['conserved'] else ' NOT CONSERVED'} "
        f"({time.monotonic() - t:.0f} s)")
    return row


def _marker_lock(servers, out: Path, rounds: int, log) -> None:
    """The S3 server's lock per directory marker (`sim.testbed.marker_lock`), once per results folder."""
    import http.client

    import botocore.exceptions

    from .marker_lock import measure_servers
    done = out / MARKER_LOCK
    if done.exists():
        return
    t = time.monotonic()
    try:
        probe = measure_servers(servers, rounds)
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError, OSError, http.client.HTTPException,
            RuntimeError) as exc:     # (the server's, the network's): the model then has no marker lock
        log(f"marker lock of the S3 server: not measured ({type(exc).__name__}: {exc}); the model has none")
        return
    done.write_text(json.dumps(probe, indent=1))
    log(f"marker lock of the S3 server: window {probe['window_ms']:.3f} ms, poll {probe['poll_ms']:.0f} ms, "
        f"{probe['late']} late answers in {probe['pairs']} pairs ({time.monotonic() - t:.0f} s)")


def run_grid(grid: Grid, out: Path, log=print, postgres_url=None, s3_endpoint=None, iceberg_url=None) -> pd.DataFrame:
    """Measure the calibration cells, then the grid; write `measured.parquet`; return it."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "grid.json").write_text(json.dumps(asdict(grid), indent=1))
    names = {s for stack in grid.stacks for s in SERVERS[stack]}
    rows = []
    workdir = out / "servers" / time.strftime("%Y%m%d-%H%M%S")
    with servers_for(names, workdir, postgres_url, s3_endpoint, iceberg_url) as servers:
        for i, stack in enumerate(grid.stacks):
            for j, d in enumerate(grid.delays_ms):
                spec = grid.calibration(stack, d)
                rows.append(_measure(spec, servers, cell_dir(out, spec, True), f"k{i}_{j}", True, log))
        if grid.marker_rounds and any(s in PUTS_MARKERS for s in grid.stacks):
            _marker_lock(servers, out, grid.marker_rounds, log)
        for n, spec in enumerate(grid.cells()):
            rows.append(_measure(spec, servers, cell_dir(out, spec), f"c{n}", False, log))
    for data in ("pg", "weed"):       # the servers' data (their logs stay)
        shutil.rmtree(workdir / data, ignore_errors=True)
    df = pd.DataFrame(rows)
    df.to_parquet(out / "measured.parquet")
    return df
