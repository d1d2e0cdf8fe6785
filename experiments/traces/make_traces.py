"""The synthetic traces of `experiments/` (docs/FORMATS.md, "Trace"): a day of a lakehouse's commits, made up, with
the shape real histories have, so that the trace workload can be tried without one of your own.

    python experiments/traces/make_traces.py      # writes experiments/traces/example.parquet (deterministic)

`synthetic(rows, seed, tables, writers)`: a day of `rows` commits (epoch ms, from 2026-01-01 00:00 UTC) on
`tables` tables of Zipf(1.1) popularity; open-loop commits (appends 85 %, overwrites 10 %, row deltas 5 %) at a
rate that swings by half over the day (its peak at 14:00); `writers` named jobs, each committing every 5 to 60
minutes to its own tables (an hourly MERGE is an overwrite), one commit at a time; a nightly compaction of every
table at 02:00 and an expiry at 03:00 (each a job of its own, `maintenance-<table>`). Half the rows carry their
job's runtime (lognormal, median 30 s; a compaction's 10 min), the rest leave it to `workload.runtime`.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

DAY_MS = 24 * 3_600_000.0
EPOCH_MS = 1_767_225_600_000.0   # 2026-01-01 00:00 UTC
HERE = Path(__file__).resolve().parent


def _open_loop(rng, n: int) -> np.ndarray:
    """n times over the day, the rate swinging by half (thinning a uniform Poisson process)."""
    out = []
    while sum(len(x) for x in out) < n:
        t = rng.uniform(0, DAY_MS, 2 * n)
        keep = rng.random(2 * n) < (1 + 0.5 * np.cos(2 * np.pi * (t / DAY_MS - 14 / 24))) / 1.5
        out.append(t[keep])
    return np.sort(np.concatenate(out)[:n])


def _jobs(rng, writers: int, tables: list[str], budget: int) -> pd.DataFrame:
    """`writers` named jobs, each every 5-60 min to its own tables, about `budget` commits in all."""
    rows = []
    each = max(1, budget // max(writers, 1))
    for w in range(writers):
        every = DAY_MS / each
        mine = [tables[(w + k * writers) % len(tables)] for k in range(1 + w % 3)]
        t = np.arange(rng.uniform(0, every), DAY_MS, every) + rng.normal(0, every / 20, 1)
        op = "overwrite" if w % 4 == 0 else "append"
        rows.append(pd.DataFrame({"time_ms": np.clip(t, 0, DAY_MS - 1), "table": rng.choice(mine, len(t)),
                                  "operation": op, "writer": f"job-{w:02d}"}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def _maintenance(tables: list[str]) -> pd.DataFrame:
    """A nightly compaction of every table at 02:00 and an expiry at 03:00, a minute apart table by table."""
    n = len(tables)
    at = np.arange(n) * 60_000.0
    return pd.concat([pd.DataFrame({"time_ms": 2 * 3_600_000 + at, "table": tables, "operation": "compaction",
                                    "writer": [f"maintenance-{t}" for t in tables], "runtime_ms": 600_000.0}),
                      pd.DataFrame({"time_ms": 3 * 3_600_000 + at, "table": tables, "operation": "expire_snapshots",
                                    "writer": [f"maintenance-{t}" for t in tables], "runtime_ms": 20_000.0})],
                     ignore_index=True)


def synthetic(rows: int, seed: int = 0, tables: int = 40, writers: int = 12) -> pd.DataFrame:
    """A day of about `rows` commits (module docstring)."""
    rng = np.random.default_rng(seed)
    names = [f"table_{i:02d}" for i in range(tables)]
    maint = _maintenance(names)
    jobs = _jobs(rng, writers, names, rows // 5)
    n = max(rows - len(maint) - len(jobs), 0)
    p = np.arange(1, tables + 1, dtype=float) ** -1.1
    free = pd.DataFrame({"time_ms": _open_loop(rng, n), "table": rng.choice(names, n, p=p / p.sum()),
                         "operation": rng.choice(["append", "overwrite", "row_delta"], n, p=[0.85, 0.10, 0.05]),
                         "writer": None})
    df = pd.concat([free, jobs], ignore_index=True)
    known = rng.random(len(df)) < 0.5
    df["runtime_ms"] = np.where(known, 30_000.0 * np.exp(rng.normal(0, 1.0, len(df))), np.nan)
    df = pd.concat([df, maint], ignore_index=True)
    df["time_ms"] = EPOCH_MS + df["time_ms"]
    return df.sort_values("time_ms", kind="stable").reset_index(drop=True)


def main() -> None:
    sys.path.insert(0, str(HERE.parent.parent))
    from sim.trace import write_trace
    path = HERE / "example.parquet"
    write_trace(synthetic(6_000, seed=0, tables=12, writers=6), path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
