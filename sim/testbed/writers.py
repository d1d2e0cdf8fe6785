"""N writer processes behind a barrier, each committing M times through a real client.

Each writer is a process of its own, started with `spawn` (delta-rs's runtime refuses a forked child, and a
spawned one shares nothing with its parent), with its own proxy ports (so the proxy knows whose requests are
whose). It opens its client and loads its tables, waits at the barrier with the others and the parent (which
starts its CPU meters as the barrier opens), then, at the start time the parent set (a moment after the barrier
opens, so that every writer is awake and none starts ahead because it woke first), commits M times in a closed
loop: each commit to a table chosen by a seeded Zipf draw (one table: always it), its outcome, attempts, client
CPU and the time its threads waited for a CPU recorded. Its records and log go to files named by its index; a
writer that fails to start is one line naming its log.
"""
from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from .servers import ServerError

START_TIMEOUT_S = 180.0
# how long after the barrier opens the writers start together: long enough for every process to have woken up
START_DELAY_MS = 100.0


@dataclass(frozen=True)
class WriterSpec:
    """What one writer process needs (picklable): the stack, its servers' proxied addresses and settings
    (`env`), its index, the commits it makes and the tables it chooses among."""
    stack: str
    env: dict
    writer: int
    commits: int
    tables: tuple
    zipf_alpha: float
    seed: int
    out: str


@dataclass
class CommitOutcome:
    """What a client's commit call came to: `committed`, else the reason (`retries_exhausted`, `conflict`, or
    `error`: not a conflict), its commit attempts (None: the stack counts them from the proxy's log), and when its
    commit began (the client's own work before it is the transaction's runtime; None: unknown)."""
    committed: bool
    reason: str = ""
    attempts: int | None = None
    commit_start_ms: float | None = None
    message: str = ""
    extra: dict = field(default_factory=dict)


def now_ms() -> float:
    """The clock every process of a run shares (CLOCK_MONOTONIC: the proxy's loop uses it too)."""
    return time.monotonic() * 1000.0


def _table_choice(spec: WriterSpec):
    import numpy as np
    rng = np.random.default_rng([spec.seed, spec.writer])
    n = len(spec.tables)
    if n == 1:
        return lambda: 0
    w = np.arange(1, n + 1, dtype=float) ** -spec.zipf_alpha
    p = w / w.sum()
    return lambda: int(rng.choice(n, p=p))


def _writer_main(spec: WriterSpec, barrier, start_at, log_path: str, parent_pid: int) -> None:
    from ..orphans import end_with_parent
    end_with_parent(parent_pid)          # a SIGKILLed parent cannot stop it
    with open(log_path, "a", buffering=1) as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            _commit_loop(spec, barrier, start_at)
        except BaseException:
            traceback.print_exc()
            with contextlib.suppress(Exception):
                barrier.abort()
            raise


def _until(t_ms: float) -> None:
    """Sleep until the shared clock reads `t_ms` (the last millisecond spun, for a common start within ~0.1 ms)."""
    while (left := t_ms - now_ms()) > 1.0:
        time.sleep((left - 1.0) / 1000.0)
    while now_ms() < t_ms:
        pass


def _commit_loop(spec: WriterSpec, barrier, start_at) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from .cpu import run_queue_wait_s
    from .stacks import stack
    client = stack(spec.stack).open_writer(spec.env, spec.writer)
    choose = _table_choice(spec)
    barrier.wait(timeout=START_TIMEOUT_S)
    _until(start_at.value)
    rows = []
    for k in range(spec.commits):
        table = choose()
        data = client.payload(k)
        wait0, cpu0, t0 = run_queue_wait_s(), time.process_time(), now_ms()
        try:
            out = client.commit(spec.tables[table], data)
        except Exception as exc:     # noqa: BLE001 (a client's unexpected failure: recorded, the loop goes on)
            out = CommitOutcome(False, "error", message=f"{type(exc).__name__}: {exc}"[:500])
        t1, cpu1, wait1 = now_ms(), time.process_time(), run_queue_wait_s()
        rows.append({"writer": spec.writer, "k": k, "table": table, "arrival_ms": t0, "end_ms": t1,
                     "commit_start_ms": out.commit_start_ms if out.commit_start_ms is not None else float("nan"),
                     "committed": out.committed, "reason": "" if out.committed else out.reason,
                     "attempts": -1 if out.attempts is None else out.attempts, "cpu_ms": 1000.0 * (cpu1 - cpu0),
                     "cpu_wait_ms": max(0.0, 1000.0 * (wait1 - wait0)),   # (< 0: a thread ended)
                     "message": out.message})
    client.close()
    pq.write_table(pa.Table.from_pylist(rows), spec.out)


@dataclass
class Writers:
    """The writer processes of one run: `start()` returns when all are ready at the barrier; `release()` opens
    it; `join()` waits for them and returns their records' paths. Stopped (killed) on error or interrupt."""
    specs: list
    workdir: Path
    processes: list = field(default_factory=list)
    barrier: object = None
    start_at: object = None

    def start(self) -> None:
        ctx = mp.get_context("spawn")
        self.barrier = ctx.Barrier(len(self.specs) + 1)
        self.start_at = ctx.Value("d", 0.0, lock=False)
        for spec in self.specs:
            log = self.workdir / f"writer-{spec.writer}.log"
            p = ctx.Process(target=_writer_main, args=(spec, self.barrier, self.start_at, str(log), os.getpid()),
                            daemon=True, name=f"sim-testbed-writer-{spec.writer}")
            p.start()
            self.processes.append((p, log))

    def release(self) -> float:
        """Wait for every writer at the barrier and open it; the time they all start (`START_DELAY_MS` later)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            while self.barrier.n_waiting < len(self.specs):     # (the start time is set once every writer is ready)
                if self.barrier.broken or time.monotonic() > deadline or \
                        any(p.exitcode not in (None, 0) for p, _ in self.processes):
                    raise RuntimeError
                time.sleep(0.01)
            self.start_at.value = now_ms() + START_DELAY_MS
            self.barrier.wait(timeout=START_TIMEOUT_S)
        except Exception:        # threading.BrokenBarrierError: a writer failed before it was ready
            raise self._failure("failed to start") from None
        _until(self.start_at.value)
        return self.start_at.value

    def join(self, timeout_s: float) -> list[Path]:
        deadline = time.monotonic() + timeout_s
        for p, log in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                raise ServerError(f"writer {p.name} did not finish within {timeout_s:.0f} s: see {log}")
            if p.exitcode != 0:
                raise self._failure("exited with an error")
        return [Path(s.out) for s in self.specs]

    def _failure(self, what: str) -> ServerError:
        for p, log in self.processes:
            if p.exitcode not in (None, 0):
                lines = [ln for ln in Path(log).read_text(errors="replace").splitlines() if ln.strip()]
                last = f"; last line: {lines[-1][:200]}" if lines else ""
                return ServerError(f"writer {p.name} {what}: see {log}{last}")
        return ServerError(f"a writer {what}: see {self.workdir}/writer-*.log")

    def stop(self) -> None:
        for p, _ in self.processes:
            if p.is_alive():
                p.kill()
        for p, _ in self.processes:
            p.join(timeout=10)

