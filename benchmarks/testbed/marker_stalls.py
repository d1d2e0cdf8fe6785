"""The late directory-marker PUTs of a testbed results folder: `python benchmarks/testbed/marker_stalls.py R`.

For every PUT of a `metadata/` marker the proxy logged (PyIceberg's cleanup, both PyIceberg stacks), how many
other PUTs of the same marker were in flight when it started, and whether it was answered over 500 ms late; a
table of the share late by delay and by that count, and the late ones' latency (docs/testbed.md, "Results").
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from sim.testbed.marker_lock import LATE_MS   # an answer over it is late


def marker_puts(out: Path) -> pd.DataFrame:
    """One row per marker PUT of every measured cell: its delay, latency and the others in flight at its start."""
    rows = []
    for f in sorted(out.glob("cells/iceberg-*/delay*/retries-*/writers*/rep*/requests.parquet")):
        r = pd.read_parquet(f)
        m = r[(r["server"] == "s3") & (r["kind"] == "put") & r["detail"].str.endswith("/metadata/")]
        m = m.sort_values("start_ms")
        start, end = m["start_ms"].to_numpy(), m["end_ms"].to_numpy()
        in_flight = np.array([((start < s + 0.5) & (end > s)).sum() - 1 for s in start], dtype=np.int64)
        rows.append(pd.DataFrame({"delay": f.parts[-5], "latency_ms": m["latency_ms"].to_numpy(),
                                  "in_flight": in_flight}))
    return pd.concat(rows, ignore_index=True)


def main() -> None:
    d = marker_puts(Path(sys.argv[1]))
    d["late"] = d["latency_ms"] > LATE_MS
    print(f"{len(d)} marker PUTs, {int(d['late'].sum())} answered over {LATE_MS:.0f} ms late")
    print(d.groupby(["delay", "in_flight"]).agg(puts=("late", "size"), late_share=("late", "mean")).round(3)
          .to_string())
    print(d[d["late"]].groupby("delay")["latency_ms"].describe().round(1).to_string())


if __name__ == "__main__":
    main()
