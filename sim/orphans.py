"""Processes `sim` starts end when the process that started them ends, however it ends.

A SIGKILL (the OOM killer, a scheduler's time limit, `kill -9`) leaves the parent no chance to stop its children,
and a loky worker outlives it for good: it waits on a queue whose writing end its fellow workers also hold, so it
never reads an end of file (and loky's resource trackers, which wait for every holder of their pipe to go, stay
with it). So a child calls `end_with_parent` first thing: on Linux the kernel then SIGKILLs it when its parent goes
(prctl PR_SET_PDEATHSIG; "parent" is the thread that started it, which for the sweep's workers and the compile
helper is the thread that runs the command, alive until the pool is closed); elsewhere a thread polls the parent's
pid. Dask's LocalCluster needs none of this: its worker processes end when their pipe to the parent closes.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1          # <linux/prctl.h>
POLL_S = 0.5                  # how often the fallback thread looks at its parent's pid
EXIT_ORPHANED = 70            # the exit code of a child that finds its parent already gone (EX_SOFTWARE)


def end_with_parent(parent_pid: int) -> None:
    """End this process when the process `parent_pid` (the one that started it) ends. Checked once after
    arming, for a parent that died before: the kernel only signals a death that comes later."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_PDEATHSIG): {os.strerror(err)}")
    else:   # pragma: no cover - macOS and others
        threading.Thread(target=_watch, args=(parent_pid,), name="end-with-parent", daemon=True).start()
    if os.getppid() != parent_pid:
        os._exit(EXIT_ORPHANED)


def _watch(parent_pid: int) -> None:   # pragma: no cover - the fallback where prctl is missing
    while os.getppid() == parent_pid:
        time.sleep(POLL_S)
    os._exit(EXIT_ORPHANED)
