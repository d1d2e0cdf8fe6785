"""Benchmark: per-configuration cost on a fixed set of 4c configurations, then the full 4c sweep.

    python benchmarks/run.py                  # all parts; writes benchmarks/results.json and prints tables
    python benchmarks/run.py --skip-sweep     # configurations and the one-run process only
    python benchmarks/run.py --published      # also the published-setup 4c sweep (5 replications, 4500 runs)
    python benchmarks/run.py --engine simpy   # the reference engine instead of the compiled one
    python benchmarks/run.py --skip-compile --skip-configurations --skip-sweep --out /tmp/one.json   # one run only

Each configuration runs in a fresh process (one at a time, so nothing else competes for the core) and reports
wall seconds of the run itself, events (arrivals + catalog reads + CASes, the engine's unit of work),
events/s, transactions/s and the process's peak resident memory. The compile time of the fast engine
(cold: empty numba cache; warm: cache on disk) is measured separately. The sweep part runs
`python -m sim sweep experiments/4c.yaml` at the default parallelism into a scratch directory, sampling the
resident memory of the sweep's processes, and its CPU seconds (the sweep process and its workers).

One run as a user meets it: `python -m sim run LIGHT --json` as a whole process, `--repeat` times, wall and CPU
(min and median), beside the floor any numba program pays: a process that imports numpy and numba, calls one
cached compiled function and exits without collecting garbage (as `sim` does). Its imports alone, timed inside a
process (no interpreter start, no exit): every module `sim run` imports before it runs, beside numpy and numba;
and `python -X importtime -m sim run LIGHT --json`, the modules' own (self) times summed by package. Whether
sim's modules are compiled afresh in every process (PYTHONDONTWRITEBYTECODE set, no .pyc beside them) is
recorded: it moves the import figures. On a shared machine wall time measures the neighbours; CPU time does not.
"""
from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from sim.config import replaced

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROVIDERS = ("s3x", "s3", "gcp")
TABLES = (1, 20)
MIXES = (1.0, 0.9)
LOADS_MS = (20, 50, 200, 1000)
# the light configuration (#11): s3, 1 table, 90/10, 200 ms, 1 h
LIGHT = ("storage: {provider: s3}\nworkload:\n  num_tables: 1\n  fast_append_ratio: 0.9\n"
         "  inter_arrival: {distribution: exponential, mean_ms: 200}\n")
# every module `sim run` imports before its run starts (sim.cli; then its run command's sim.estimate and sim.run,
# which imports the engine), and the import floor of any numba program
SIM_IMPORTS = ("import sim.entry; sim.entry._settings(); "   # as `python -m sim` starts: one BLAS thread, no collector
               "import sim.cli, sim.estimate, sim.run, sim.engines.fast")
FLOOR_IMPORTS = "import numpy, numba"
# -X importtime's self times summed by the first group whose prefix names the module; the rest ("other") is the
# standard library, yaml (numba imports it too) and the bare `scipy` of numba's version check
IMPORT_GROUPS = (("numpy", ("numpy",)), ("numba", ("numba", "llvmlite")), ("sim.model", ("sim.model",)),
                 ("sim", ("sim",)))
NUMBA_FLOOR = ("import gc, sys, numpy as np; from numba import njit\n"
               "sys.modules['scipy.linalg.cython_blas'] = None   # as `sim run` does (sim/cli.py)\n"
               "@njit(cache=True)\ndef f(x):\n    return x + 1\nf(np.int64(1))\n"
               "gc.freeze()   # no garbage collection at exit, as `sim` (sim/cli.py, `exiting`)\n")


def _one(args):
    """Run one configuration in this (fresh) process; return its figures."""
    provider, tables, fa, ia, engine = args
    from sim import config
    from sim.run import run
    cfg = config.from_dict({"catalog": {"backend": "storage"}, "storage": {"provider": provider},
                            "workload": {"num_tables": tables, "fast_append_ratio": fa,
                                         "inter_arrival": {"distribution": "exponential", "mean_ms": ia}}})
    if engine == "fast":   # compile (or load the cache) outside the timed region
        run(replaced(cfg, dict(duration_ms=60_000, warmup_ms=10_000, cooldown_ms=10_000)), engine=engine)
    t0 = time.perf_counter()
    res = run(cfg, engine=engine)
    wall = time.perf_counter() - t0
    s = res.summary
    return {"provider": provider, "num_tables": tables, "fast_append_ratio": fa, "inter_arrival_ms": ia,
            "wall_s": wall, "events": s["events"], "events_per_s": s["events"] / wall,
            "transactions": s["transactions_total"], "transactions_per_s": s["transactions_total"] / wall,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "success_rate": s["success_rate"], "throughput_cps": s["throughput_cps"]}


def configurations(engine: str) -> list[dict]:
    ctx = mp.get_context("spawn")
    rows = []
    for combo in itertools.product(PROVIDERS, TABLES, MIXES, LOADS_MS):
        with ctx.Pool(1) as pool:            # a fresh process per configuration: honest peak memory
            row = pool.apply(_one, ((*combo, engine),))
        rows.append(row)
        print(f"  {row['provider']:>4} tables={row['num_tables']:>2} fa={row['fast_append_ratio']:.1f} "
              f"ia={row['inter_arrival_ms']:>4} ms: {row['wall_s']:6.2f} s  {row['events']:>9,} events  "
              f"{row['events_per_s'] / 1e6:5.2f} M ev/s  {row['peak_rss_mib']:5.0f} MiB", flush=True)
    return rows


def compile_times() -> dict:
    """Cold (empty numba cache) and warm (cached) first-call time of the fast engine, in fresh processes."""
    code = ("import time; t=time.perf_counter(); from sim import config; from sim.run import run; "
            "run(config.from_dict({'duration_ms': 60000, 'warmup_ms': 10000, 'cooldown_ms': 10000}));"
            "print(time.perf_counter()-t)")
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for label in ("cold_s", "warm_s"):
            r = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                               check=True)
            out[label] = float(r.stdout.strip().splitlines()[-1])
    return out


def _timed(cmd: list[str], **kw) -> tuple[float, float]:
    """(wall s, CPU s of the child and its children) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _import_time(imports: str, **kw) -> tuple[float, float]:
    """(wall s, CPU s) of `imports` in a fresh process, timed inside it: no interpreter start, no exit."""
    code = (f"import time; w, c = time.perf_counter(), time.process_time(); {imports}; "
            "print(time.perf_counter() - w, time.process_time() - c)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, **kw).stdout
    wall, cpu = map(float, out.split())
    return wall, cpu


def _min_median(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"min": xs[0], "median": xs[len(xs) // 2], "n": len(xs)}


def _import_groups(text: str) -> dict:
    """Seconds of `-X importtime` output (`text`): each module's self time, summed by `IMPORT_GROUPS`, and in all.
    numba's group holds what its first compiled call imports too (its lowering registries)."""
    out = dict.fromkeys([g for g, _ in IMPORT_GROUPS] + ["other", "total"], 0.0)
    for line in text.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if m is None:   # the header, and the run's own stderr
            continue
        name = m[2]
        group = next((g for g, prefixes in IMPORT_GROUPS
                      if any(name == p or name.startswith(p + ".") for p in prefixes)), "other")
        out[group] += int(m[1]) / 1e6
        out["total"] += int(m[1]) / 1e6
    return out


def one_run(repeat: int) -> dict:
    """`python -m sim run LIGHT --json` as a whole process, the numba floor process, and the imports of each,
    alternately."""
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "light.yaml"
        cfg.write_text(LIGHT)
        floor = Path(d) / "floor.py"
        floor.write_text(NUMBA_FLOOR)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        sim_cmd = [sys.executable, "-m", "sim", "run", str(cfg), "--json"]
        _timed(sim_cmd, cwd=ROOT, env=env)                     # fill the caches (numba's, the OS's)
        _timed([sys.executable, str(floor)], cwd=d)
        load = os.getloadavg()
        runs, floors, bare, imports, floor_imports, groups = [], [], [], [], [], []
        for _ in range(repeat):
            runs.append(_timed(sim_cmd, cwd=ROOT, env=env))
            floors.append(_timed([sys.executable, str(floor)], cwd=d))
            bare.append(_timed([sys.executable, "-c", "pass"]))
            imports.append(_import_time(SIM_IMPORTS, cwd=ROOT, env=env))
            floor_imports.append(_import_time(FLOOR_IMPORTS, cwd=d))
            r = subprocess.run([sys.executable, "-X", "importtime", *sim_cmd[1:]], cwd=ROOT, env=env,
                               capture_output=True, text=True, check=True)
            groups.append(_import_groups(r.stderr))
    out = {}
    for name, xs in (("sim_run", runs), ("numba_floor", floors), ("python", bare), ("sim_imports", imports),
                     ("floor_imports", floor_imports)):
        out[name] = {"wall_s": _min_median([w for w, _ in xs]), "cpu_s": _min_median([c for _, c in xs])}
    out["importtime_s"] = {g: _min_median([x[g] for x in groups]) for g in groups[0]}
    out["load_average"] = {"before": list(load), "after": list(os.getloadavg())}
    out["bytecode"] = {k: os.environ.get(k) for k in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    return out


def _tree_rss_mib(pid: int) -> tuple[float, float]:
    """(parent RSS, parent + children RSS) in MiB, from /proc."""
    def rss(p):
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            return 0.0
        return 0.0

    def children(p):
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                kids = [int(c) for c in fh.read().split()]
        except OSError:
            return []
        return kids + [g for k in kids for g in children(k)]

    parent = rss(pid)
    return parent, parent + sum(rss(c) for c in children(pid))


def full_sweep(engine: str, sweep_file: str = "experiments/4c.yaml", replications: int | None = None) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-4c-"))
    cmd = [sys.executable, "-m", "sim", "sweep", sweep_file, "--out", str(out), "--force",
           "--no-report", "--no-progress", "--engine", engine]
    if replications:
        cmd += ["--replications", str(replications)]
    samples = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def sample():
        while proc.poll() is None:
            done = len(list((out / "runs").glob("*.json"))) if (out / "runs").is_dir() else 0
            samples.append((time.perf_counter() - t0, done, *_tree_rss_mib(proc.pid)))
            time.sleep(2.0)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    th.join()
    if proc.returncode != 0:
        raise SystemExit(f"sweep failed ({proc.returncode}):\n{stderr[-2000:]}")
    import pandas as pd
    df = pd.read_parquet(out / "results.parquet")
    shutil.rmtree(out, ignore_errors=True)
    # memory at 10 %, 50 % and the end of the sweep: flat means it does not grow with the sweep's length
    def at(frac):
        eligible = [s for s in samples if s[1] >= frac * len(df)]
        return eligible[0] if eligible else samples[-1]
    return {"sweep": sweep_file, "runs": len(df), "configurations": int(df.config_hash.nunique()),
            "failed": int((df.status != "ok").sum()), "wall_s": wall,
            "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "jobs": len(os.sched_getaffinity(0)), "sum_of_run_wall_s": float(df.wall_s.sum()),
            "max_run_wall_s": float(df.wall_s.max()),
            "slowest": df.sort_values("wall_s").iloc[-1][["provider", "num_tables", "fast_append_ratio",
                                                          "inter_arrival_ms", "wall_s"]].to_dict(),
            "parent_rss_mib_at_10_50_100pct": [round(at(f)[2], 1) for f in (0.1, 0.5, 1.0)],
            "tree_rss_mib_at_10_50_100pct": [round(at(f)[3], 1) for f in (0.1, 0.5, 1.0)],
            "tree_rss_mib_max": round(max(s[3] for s in samples), 1) if samples else None,
            "summary_line": stdout.strip().splitlines()[-1] if stdout.strip() else ""}


def machine() -> dict:
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpu": cpu, "cores": len(os.sched_getaffinity(0)), "memory_gib": round(mem, 1),
            "python": platform.python_version(), "platform": platform.platform()}


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = [f"Measured {res['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python {m['python']}; "
             f"engine `{res['engine']}`; 1 h simulated per configuration, 1 replication.", ""]
    if "compile" in res:
        c = res["compile"]
        lines += [f"JIT compile of the fast engine: {c['cold_s']:.1f} s cold (empty cache), "
                  f"{c['warm_s']:.1f} s with the cache (first call in a fresh process, imports included).", ""]
    if res.get("configurations"):
        lines += ["| provider | tables | FA ratio | inter-arrival ms | wall s | events | M events/s | txn/s | peak RSS MiB |",
                  "|---|---|---|---|---|---|---|---|---|"]
    for r in res.get("configurations", []):
        lines.append(f"| {r['provider']} | {r['num_tables']} | {r['fast_append_ratio']:.1f} | {r['inter_arrival_ms']} | "
                     f"{r['wall_s']:.2f} | {r['events']:,} | {r['events_per_s'] / 1e6:.2f} | "
                     f"{r['transactions_per_s']:,.0f} | {r['peak_rss_mib']:.0f} |")
    if "one_run" in res:
        o = res["one_run"]

        def mm(x):
            return f"{x['min']:.2f} / {x['median']:.2f}"
        lines += ["", f"One run as a process (`python -m sim run LIGHT --json`: s3, 1 table, 90/10, 200 ms, 1 h), "
                  f"min / median of {o['sim_run']['wall_s']['n']}: **{mm(o['sim_run']['wall_s'])} s wall**, "
                  f"{mm(o['sim_run']['cpu_s'])} s CPU. The floor of any numba program (import numpy and numba, "
                  f"call one cached function, exit without collecting garbage): "
                  f"{mm(o['numba_floor']['wall_s'])} s wall, "
                  f"{mm(o['numba_floor']['cpu_s'])} s CPU; a bare `python -c pass`: {mm(o['python']['cpu_s'])} s CPU."]
        if "sim_imports" in o:
            t = o["importtime_s"]
            lines += ["", f"Its imports (`{SIM_IMPORTS}`, timed in the process): "
                      f"**{mm(o['sim_imports']['wall_s'])} s wall**, "
                      f"{mm(o['sim_imports']['cpu_s'])} s CPU; `{FLOOR_IMPORTS}`: "
                      f"{mm(o['floor_imports']['wall_s'])} s wall, {mm(o['floor_imports']['cpu_s'])} s CPU. "
                      f"`-X importtime` of the run, self times by package (min / median, s): "
                      + ", ".join(f"{g} {mm(v)}" for g, v in t.items())
                      + f". Load average {o['load_average']['before'][0]:.1f} before, "
                      f"{o['load_average']['after'][0]:.1f} after; bytecode environment {o['bytecode']}."]
    for key, label in (("sweep", "Full 4c sweep"), ("published", "Published-setup 4c sweep")):
        if key not in res:
            continue
        s = res[key]
        lines += ["", f"{label} ({s['configurations']} configurations, {s['runs']} runs, {s['failed']} failed) with "
                  f"{s['jobs']} jobs: **{s['wall_s']:.0f} s wall** ({s['wall_s'] / 60:.1f} min), {s['cpu_s']:.0f} s CPU "
                  f"(the sweep and its workers); sum of run times {s['sum_of_run_wall_s']:.0f} s; "
                  f"slowest configuration {s['max_run_wall_s']:.2f} s "
                  f"({s['slowest']['provider']}, {s['slowest']['num_tables']} tables, FA {s['slowest']['fast_append_ratio']}, "
                  f"{s['slowest']['inter_arrival_ms']:g} ms). Resident memory of the sweep's parent process at 10 %, 50 %, "
                  f"100 % of the runs: {s['parent_rss_mib_at_10_50_100pct']} MiB; of the whole process tree: "
                  f"{s['tree_rss_mib_at_10_50_100pct']} MiB (max {s['tree_rss_mib_max']} MiB)."]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=("fast", "simpy"), default="fast")
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--skip-configurations", action="store_true")
    ap.add_argument("--skip-compile", action="store_true", help="no cold/warm compile timing (a minute of CPU)")
    ap.add_argument("--published", action="store_true", help="also the published-setup 4c, 5 replications")
    ap.add_argument("--repeat", type=int, default=7, help="one-run processes timed (min and median)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results.json"))
    args = ap.parse_args(argv)
    res = {"date": time.strftime("%Y-%m-%d"), "machine": machine(), "engine": args.engine}
    if args.engine == "fast" and not args.skip_compile:
        res["compile"] = compile_times()
        print(f"compile: {res['compile']}", flush=True)
    if not args.skip_configurations:
        print("configurations:", flush=True)
        res["configurations"] = configurations(args.engine)
    if args.engine == "fast":
        res["one_run"] = one_run(args.repeat)
        print(f"one run: {res['one_run']}", flush=True)
    if not args.skip_sweep:
        print("full 4c sweep ...", flush=True)
        res["sweep"] = full_sweep(args.engine)
    if args.published:
        print("published-setup 4c sweep, 5 replications ...", flush=True)
        res["published"] = full_sweep(args.engine, "experiments/published/4c.yaml", 5)
    Path(args.out).write_text(json.dumps(res, indent=2, default=float))
    md = markdown(res)
    Path(args.out).with_suffix(".md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
