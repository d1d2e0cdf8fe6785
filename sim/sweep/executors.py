"""Executors: how a sweep's runs are spread over processes or machines. Each is a thin layer over the pure
function `sim.sweep.task.execute`; results do not depend on which one runs them.

A worker process can die under a run (the OOM killer's SIGKILL, a crash in compiled code). The executors rerun
what it was running (the local pool is loky's, built to survive dead workers: with the standard library's
ProcessPoolExecutor a sweep hung once in CI after a worker was killed, and Python 3.11 lacks later fixes to that
pool's teardown, e.g. CPython gh-125451); a run that keeps killing workers is given up after `MAX_WORKER_DEATHS` and handed to
`on_lost(task, reason)`, which makes its failure record, and the sweep goes on. The other way round, a sweep killed
by SIGKILL takes its local workers with it (`sim.orphans`).
"""
from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool

from loky import ProcessPoolExecutor

from ..orphans import end_with_parent

MAX_WORKER_DEATHS = 3
# how long a pool being closed waits for loky's manager thread to finish starting (polls x seconds)
STARTING_POLLS, STARTING_POLL_S = 100, 0.01

OnLost = Callable[[dict, str], dict]


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _died(n: int) -> str:
    return (f"worker died {n} times running this configuration (killed by a signal, e.g. SIGKILL from the "
            "OOM killer, or crashed)")


class SerialExecutor:
    """In-process, one run at a time: for --jobs 1, debugging and profiling."""

    def map_unordered(self, fn: Callable, tasks: Iterable, on_lost: OnLost | None = None) -> Iterator:
        for task in tasks:
            yield fn(task)

    def close(self):
        pass


class LocalExecutor:
    """Worker processes on this machine. At most 2 x jobs tasks are queued at a time, so memory stays flat
    however long the sweep, and Ctrl-C loses only what is in flight.

    A dead worker breaks the whole pool, and every task in flight fails with it, guilty or not. The pool is
    rebuilt and those tasks rerun one at a time, so a further death is the running task's for sure; a task
    that has been in flight at `max_deaths` deaths is given up."""

    def __init__(self, jobs: int, max_deaths: int = MAX_WORKER_DEATHS):
        self.jobs = jobs
        self.max_deaths = max_deaths
        self.pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.jobs, initializer=end_with_parent, initargs=(os.getpid(),))

    def _rebuild(self) -> None:
        self.pool.shutdown(wait=False, kill_workers=True)
        self.pool = self._new_pool()

    def map_unordered(self, fn: Callable, tasks: Iterable, on_lost: OnLost | None = None) -> Iterator:
        it = iter(tasks)
        pending: dict = {}                 # future -> task
        suspects: deque = deque()          # tasks in flight when a worker died, to rerun alone
        deaths: dict[int, int] = {}        # id(task) -> deaths while it was in flight
        while True:
            while suspects:
                yield from self._rerun_alone(fn, suspects, deaths, on_lost)
            while len(pending) < 2 * self.jobs and (task := next(it, None)) is not None:
                pending[self.pool.submit(fn, task)] = task
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            broken = any(isinstance(f.exception(), BrokenProcessPool) for f in done)
            if broken:
                done = {f for f in pending if f.done() and f.exception() is None}   # finished before the death
                for fut, task in pending.items():
                    if fut not in done:
                        deaths[id(task)] = deaths.get(id(task), 0) + 1
                        suspects.append(task)
                self._rebuild()
            for fut in done:
                del pending[fut]
                yield fut.result()
            if broken:
                pending.clear()

    def _rerun_alone(self, fn: Callable, suspects: deque, deaths: dict, on_lost: OnLost | None) -> Iterator:
        task = suspects.popleft()
        n = deaths[id(task)]
        if n >= self.max_deaths:
            if on_lost is None:
                raise BrokenProcessPool(_died(n))
            yield on_lost(task, _died(n))
            return
        try:
            result = self.pool.submit(fn, task).result()
        except BrokenProcessPool:
            deaths[id(task)] = n + 1
            suspects.appendleft(task)
            self._rebuild()
            return
        yield result

    def close(self):
        """Stop the workers and wait for them: a reaped worker's CPU time counts in this process's children's
        (what `benchmarks/run.py` measures), and none is left behind after Ctrl-C."""
        for _ in range(STARTING_POLLS):
            try:
                self.pool.shutdown(wait=True, kill_workers=True)
                return
            except RuntimeError:
                # Ctrl-C or SIGTERM came while loky started its manager thread (in `Thread.start`'s wait): the
                # thread is starting, and joins once it has; a fresh-clone CI saw "cannot join thread before it is
                # started" end a terminated sweep with exit 1
                time.sleep(STARTING_POLL_S)
        self.pool.shutdown(wait=True, kill_workers=True)


class DaskExecutor:
    """One Dask task per run, on a scheduler (`address`) or on a LocalCluster of `jobs` single-threaded
    worker processes. Needs the `dask` extra. The scheduler reschedules the tasks of a worker that dies; one
    that has killed `distributed.scheduler.allowed-failures` + 1 workers comes back as KilledWorker and is
    given up."""

    def __init__(self, jobs: int, address: str | None = None):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise RuntimeError("--executor dask needs Dask: pip install -e '.[dask]'") from exc
        self.cluster = None
        if address:
            self.client = Client(address)
        else:
            self.cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                        dashboard_address=None)
            self.client = Client(self.cluster)
        self.jobs = jobs

    def map_unordered(self, fn: Callable, tasks: Iterable, on_lost: OnLost | None = None) -> Iterator:
        from dask.distributed import as_completed
        from distributed.scheduler import KilledWorker
        it = iter(tasks)
        window = max(2 * self.jobs, 2 * sum(self.client.nthreads().values()))
        task_of = {}

        def submit(task):
            fut = self.client.submit(fn, task, pure=False)
            task_of[fut.key] = task
            return fut

        ac = as_completed([submit(t) for _, t in zip(range(window), it)])
        for fut in ac:
            task = task_of.pop(fut.key)
            try:
                result = fut.result()
            except KilledWorker as exc:
                if on_lost is None:
                    raise
                result = on_lost(task, f"Dask workers died running this configuration ({exc})")
            yield result
            fut.release()
            nxt = next(it, None)
            if nxt is not None:
                ac.add(submit(nxt))

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(kind: str, jobs: int, scheduler: str | None = None):
    if kind == "dask":
        return DaskExecutor(jobs, scheduler)
    if kind != "local":
        raise ValueError(f"unknown executor {kind!r} (expected local or dask)")
    if scheduler:
        raise ValueError("--scheduler goes with --executor dask")
    return SerialExecutor() if jobs == 1 else LocalExecutor(jobs)
