"""Where the CPU went during a measured run: the machine's busy fraction, and the CPU of each process group we
started (the servers, the proxy); the writers measure their own (`time.process_time`, every thread of theirs).
And how long each waited for a CPU: the time its threads were runnable but not running (the scheduler's run
queue, `/proc/<pid>/task/<tid>/schedstat`'s second field), which the writers read for each commit.

On two cores the clients' CPU can be the bottleneck instead of the protocol (writers then fall into lock-step
for reasons of CPU): a cell whose busy fraction is over the bound, or whose processes' wait for a CPU, as a share
of the writers' commit time, exceeds the one-writer cell's by more than a bound, is reported `cpu_bound`, not
compared.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import psutil


def run_queue_wait_s(pid: int | str = "self") -> float:
    """Seconds the threads of process `pid` (alive now) have spent runnable but waiting for a CPU; 0 where the
    kernel keeps no such count (no `schedstat`)."""
    total = 0
    base = f"/proc/{pid}/task"
    try:
        tids = os.listdir(base)
    except OSError:
        return 0.0
    for tid in tids:
        try:
            with open(f"{base}/{tid}/schedstat") as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            pass                      # a thread that ended meanwhile
    return total / 1e9


def _tree_s(pid: int) -> tuple[float, float]:
    """A process and its children, one walk: their CPU seconds (of the children that ended too, waited for:
    `children_*`), and the seconds those alive now spent waiting for a CPU (`run_queue_wait_s`)."""
    try:
        p = psutil.Process(pid)
        t = p.cpu_times()
        cpu = t.user + t.system + t.children_user + t.children_system
        wait = run_queue_wait_s(pid)
        for c in p.children(recursive=True):
            try:
                ct = c.cpu_times()
                cpu += ct.user + ct.system
            except psutil.Error:
                continue
            wait += run_queue_wait_s(c.pid)
        return cpu, wait
    except psutil.Error:
        return 0.0, 0.0


def _groups_s(groups: dict) -> dict:
    """(CPU seconds, seconds waiting for a CPU) of each group of process trees."""
    out = {}
    for name, pids in groups.items():
        trees = [_tree_s(p) for p in pids]
        out[name] = (sum(c for c, _ in trees), sum(w for _, w in trees))
    return out


@dataclass
class CpuMeter:
    """Snapshots at a run's start and end: `start()`, then `stop()` gives the figures of the interval."""
    groups: dict                 # name -> list of pids (a server's, the proxy's)
    _t0: tuple = None
    _g0: dict = None

    def start(self) -> None:
        self._t0 = psutil.cpu_times()
        self._g0 = _groups_s(self.groups)

    def stop(self) -> dict:
        t1 = psutil.cpu_times()
        total = sum(t1) - sum(self._t0)
        idle = (t1.idle - self._t0.idle) + (getattr(t1, "iowait", 0.0) - getattr(self._t0, "iowait", 0.0))
        out = {"busy_fraction": 1.0 - idle / total if total > 0 else float("nan"),
               "cpus": psutil.cpu_count()}
        for name, (cpu, wait) in _groups_s(self.groups).items():
            cpu0, wait0 = self._g0[name]
            out[f"cpu_{name}_s"] = cpu - cpu0
            out[f"wait_{name}_s"] = wait - wait0
        return out
