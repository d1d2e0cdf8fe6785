"""Benchmark: memory flat in run length (issue 11). `python -m sim run CONFIG --json`, and with `--out`, for 1, 10
and 100 simulated hours at 100 arrivals/s (s3x, 20 tables, FastAppend ratio 0.9, exponential gaps of mean
10 ms), each in a fresh process; prints the peak resident memory (the child's own `ru_maxrss`, from `wait4`)
and CPU seconds (user + system) of each, and writes benchmarks/memory.md.

    python benchmarks/memory.py                 # 1, 10 and 100 h (the 100-hour runs take CPU minutes each)
    python benchmarks/memory.py --hours 1 10    # a subset
    python benchmarks/memory.py --hours 100 --modes out --md /tmp/out.md   # one command (run two at once)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ("storage: {provider: s3x}\nworkload:\n  num_tables: 20\n  fast_append_ratio: 0.9\n"
          "  inter_arrival: {distribution: exponential, mean_ms: 10}\nduration_ms: %d\n")


def measure(cmd: list[str]) -> dict:
    """Run `cmd` in a fresh process; its peak RSS (MiB), CPU seconds and stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        text = out.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({status}): {' '.join(cmd)}")
    return {"peak_rss_mib": ru.ru_maxrss / 1024, "cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": wall, "stdout": text}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hours", type=int, nargs="+", default=[1, 10, 100])
    ap.add_argument("--modes", nargs="+", choices=("json", "out"), default=["json", "out"],
                    help="json: `run --json`; out: `run --json --out DIR`")
    ap.add_argument("--md", default=str(ROOT / "benchmarks" / "memory.md"), help="write the table here")
    args = ap.parse_args()
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="sim-memory-"))
    try:
        warm = scratch / "warm.yaml"   # compile, or load the numba cache, outside the measured processes
        warm.write_text(CONFIG % 120_000 + "warmup_ms: 10000\ncooldown_ms: 10000\n")
        measure([sys.executable, "-m", "sim", "run", str(warm), "--json"])
        for hours in args.hours:
            cfg = scratch / f"{hours}h.yaml"
            cfg.write_text(CONFIG % (hours * 3_600_000))
            base = [sys.executable, "-m", "sim", "run", str(cfg), "--json"]
            modes = {"json": ("--json", []), "out": ("--json --out", ["--out", str(scratch / f"out{hours}")])}
            for mode, extra in (modes[k] for k in args.modes):
                r = measure(base + extra)
                s = json.loads(r["stdout"])
                row = {"hours": hours, "mode": mode, "arrived": s["transactions"]["arrived"],
                       "peak_rss_mib": r["peak_rss_mib"], "cpu_s": r["cpu_s"], "wall_s": r["wall_s"],
                       "p99_ms": s["commit_latency_ms"]["p99"]}
                if extra:
                    row["parquet_mib"] = (scratch / f"out{hours}" / "transactions.parquet").stat().st_size / 2**20
                    shutil.rmtree(scratch / f"out{hours}")
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    lines = ["# Memory flat in run length (issue 11)", "",
             f"`python benchmarks/memory.py` on {platform.node()} ({os.cpu_count()} cores, "
             f"{platform.processor() or platform.machine()}, Python {platform.python_version()}), "
             f"{time.strftime('%Y-%m-%d', time.gmtime())}; s3x, 20 tables, FA 0.9, exponential gaps mean 10 ms "
             "(100 arrivals/s); fresh process per row, JIT cache warm. Peak RSS is the child's `ru_maxrss`; CPU is "
             "user + system seconds of the whole process (import, cache load, run, output).", "",
             "| simulated h | command | window arrivals | peak RSS MiB | CPU s | wall s | p99 ms |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['hours']} | `run {r['mode']}` | {r['arrived']:,} | {r['peak_rss_mib']:,.0f} | "
                     f"{r['cpu_s']:,.1f} | {r['wall_s']:,.1f} | {r['p99_ms']:.1f} |")
    Path(args.md).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
