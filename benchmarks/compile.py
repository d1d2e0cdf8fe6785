"""The cold compile: each design's first `sim run` after an install, in a fresh process, from an empty cache.

    python benchmarks/compile.py                  # every design, in the order below; writes benchmarks/compile.json
    python benchmarks/compile.py --each-alone     # also each design alone from an empty cache
    python benchmarks/compile.py --repo DIR       # another checkout (its `sim`), e.g. one before a change

Each run is `python -m sim run CONFIG --json` in a fresh process, timed as a whole (wall, user + system CPU of the
child, peak RSS): first the default design from an empty numba cache, then each further design with the caches
of the ones before it (what a user who tries the designs one after another pays), then a warm run. The numba
cache is a fresh `NUMBA_CACHE_DIR` per series, so the checkout's own cache is left alone.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent

BASE = {"duration_ms": 600_000, "warmup_ms": 60_000, "cooldown_ms": 60_000,
        "storage": {"provider": "s3"},
        "workload": {"num_tables": 5, "fast_append_ratio": 0.9,
                     "inter_arrival": {"distribution": "exponential", "mean_ms": 500},
                     "runtime": {"median_ms": 20_000, "sigma": 1.0, "min_ms": 5_000}}}
# one named design per model design (sim.model.designs), the default first; a service's latency is stated
DESIGNS = {
    "cas": {},
    "fs_table": {"design": "fs-table"},
    "rest": {"design": "rest", "catalog": {"latency_ms": 10}},
    "log": {"design": "log"},
    "delta_dynamodb": {"design": "delta-dynamodb", "log_store": {"latency_ms": 10}},
    "hive": {"design": "hive", "catalog": {"latency_ms": 10}},
    "hudi": {"design": "hudi", "lock": {"latency_ms": 10}},
    "rest_tx": {"design": "rest-lakekeeper", "catalog": {"latency_ms": 10},
                "workload": {"fast_append_ratio": 1.0, "multi_table": {"tables": 2}}},
    "cas_db": {"design": "ducklake-postgres", "catalog": {"latency_ms": 10}},
}


def config_file(tmp: Path, name: str) -> Path:
    data = {**BASE, **{k: v for k, v in DESIGNS[name].items() if k != "workload"},
            "workload": {**BASE["workload"], **DESIGNS[name].get("workload", {})}}
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def timed(cmd: list[str], env: dict, cwd: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.strip().splitlines()[-1:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    said = [line for line in proc.stderr.splitlines() if line.startswith("compiling")]
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mib": round(after.ru_maxrss / 1024),
            "said": said}


def series(repo: Path, names: list[str], tmp: Path) -> list[dict]:
    cache = Path(tempfile.mkdtemp(prefix="numba-cache-", dir=tmp))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    rows = []
    for name in names:
        cfg = config_file(tmp, name)
        cold = timed([sys.executable, "-m", "sim", "run", str(cfg), "--json", "--yes"], env, repo)
        warm = timed([sys.executable, "-m", "sim", "run", str(cfg), "--json", "--yes"], env, repo)
        rows.append({"design": name, "first_use": cold, "warm": warm})
        print(f"{name:15s} first use {cold['cpu_s']:6.1f} s CPU {cold['wall_s']:6.1f} s wall   "
              f"warm {warm['cpu_s']:5.1f} s CPU   {cold['said'][:1]}", flush=True)
    shutil.rmtree(cache, ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=ROOT, help="the checkout to time (default: this one)")
    ap.add_argument("--each-alone", action="store_true", help="also each design alone from an empty cache")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "compile.json")
    ap.add_argument("--designs", nargs="+", choices=list(DESIGNS), help="these designs only, in this order")
    args = ap.parse_args()
    names = args.designs or list(DESIGNS)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        print("one after another, from an empty cache:")
        rows = series(args.repo.resolve(), names, tmp)
        alone = []
        if args.each_alone:
            print("each alone, from an empty cache:")
            alone = [series(args.repo.resolve(), [n], tmp)[0] for n in names]
    total = sum(r["first_use"]["cpu_s"] for r in rows)
    print(f"all designs: {total:.1f} s CPU")
    machine = f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}"
    out = {"date": time.strftime("%Y-%m-%d"), "machine": machine,
           "python": platform.python_version(), "repo": args.repo.name, "one_after_another": rows,
           "each_alone": alone, "all_designs_cpu_s": round(total, 1)}
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
