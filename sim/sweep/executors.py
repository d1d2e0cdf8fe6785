"""Executors: how a sweep's runs are spread over processes or machines. Each is a thin layer over the pure
function `sim.sweep.task.execute`; results do not depend on which one runs them."""
from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class SerialExecutor:
    """In-process, one run at a time: for --jobs 1, debugging and profiling."""

    def map_unordered(self, fn: Callable, tasks: Iterable) -> Iterator:
        for task in tasks:
            yield fn(task)

    def close(self):
        pass


class LocalExecutor:
    """Worker processes on this machine. At most 2 x jobs tasks are queued at a time, so memory stays flat
    however long the sweep, and Ctrl-C loses only what is in flight."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))

    def map_unordered(self, fn: Callable, tasks: Iterable) -> Iterator:
        it = iter(tasks)
        pending = set()
        for task in it:
            pending.add(self.pool.submit(fn, task))
            if len(pending) >= 2 * self.jobs:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(self.pool.submit(fn, nxt))

    def close(self):
        self.pool.shutdown(wait=False, cancel_futures=True)


class DaskExecutor:
    """One Dask task per run, on a scheduler (`address`) or on a LocalCluster of `jobs` single-threaded
    worker processes. Needs the `dask` extra."""

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

    def map_unordered(self, fn: Callable, tasks: Iterable) -> Iterator:
        from dask.distributed import as_completed
        it = iter(tasks)
        window = max(2 * self.jobs, 2 * sum(self.client.nthreads().values()))
        first = [self.client.submit(fn, t, pure=False) for _, t in zip(range(window), it)]
        ac = as_completed(first)
        for fut in ac:
            yield fut.result()
            fut.release()
            nxt = next(it, None)
            if nxt is not None:
                ac.add(self.client.submit(fn, nxt, pure=False))

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
