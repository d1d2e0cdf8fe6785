"""Validation of the knee search against brute force (not in CI: minutes of CPU).

1. On 10 cells of 4c, the knee search (the spec of experiments/4c-knee.yaml) against a dense grid 2 % apart
   in rate with 10 independent replications per point (no CRN). The grid is fixed per cell, independent of the
   search being validated: anchored at a rate of each cell (ANCHOR_MS, the knees of the first search, d7d4ceb)
   and extended in 2 % steps to cover the anchor +- 8 % and the reported CI plus one step. The brute-force
   crossing is the bracket [highest grid rate whose mean success (and VO success) is >= threshold, next grid
   rate]; it agrees when it overlaps the knee's reported 95 % CI. Also shown: the crossing interpolated
   linearly between the bracket's two grid means, and whether the CI contains it. Then 5 more cells the same
   way (EXTRA: where this search and the earlier pair search disagreed most).
2. With --full DIR (the output of `python -m sim sweep experiments/4c-knee.yaml --out DIR`): the cost of the
   whole 4c knee search vs the 900-run grid, the largest CI half-width / rate, and the 4c knee table beside
   the grid knees (with --grid DIR of `python -m sim sweep experiments/4c.yaml`).

3. With --time: the whole 4c knee sweep as one process (`python -m sim sweep experiments/4c-knee.yaml`) from an
   empty cache, its wall and CPU time on this machine (the machine as `benchmarks/run.py` describes it); the
   sweep's output directory is then used as --full.

Writes benchmarks/knee_validation.md.

    python benchmarks/knee_validation.py [--jobs 2] [--cache DIR] [--full DIR] [--grid DIR] [--skip-brute] [--time]
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sim.config import config_hash, from_dict, replaced
from sim.sweep import load
from sim.sweep.executors import make_executor
from sim.sweep.knee import run_searches
from sim.sweep.store import ResultStore, run_key
from sim.sweep.task import execute
from sim.knee import KneeSearch, run_success

HERE = Path(__file__).resolve().parent
CELLS = [("s3", 1, 1.0), ("s3", 20, 1.0), ("s3x", 1, 0.9), ("s3x", 50, 1.0), ("azure", 5, 0.9),
         ("azurex", 2, 0.5), ("gcp", 10, 1.0), ("gcp", 1, 0.5), ("azure", 50, 0.5), ("s3", 10, 0.9)]
#: the grid's anchor gap (ms) per cell: fixed, so the grid does not move with the search it checks
#: (gcp: 2857.14 ms = 0.35 arrivals/s, since model version 2's 1 write/s per object moved gcp's knees to about
#: 0.3-0.45 arrivals/s, and the older gcp runs are stale; every other provider's runs are unchanged by it)
ANCHOR_MS = [305.331, 61.0865, 55.581, 15.945, 162.169, 200.886, 2857.14, 2857.14, 80.7913, 73.4295]
#: 5 more cells, checked the same way: where the fit (this search) and the earlier pair search disagreed most
#: (gcp's cliffs; azurex 20 tables FA 0.9, which the pair search missed), anchored at their dense grids' middles
EXTRA = [("gcp", 1, 1.0), ("gcp", 2, 1.0), ("gcp", 5, 1.0), ("azurex", 20, 0.9), ("gcp", 50, 0.9)]
EXTRA_ANCHOR_MS = [2418.25, 2478.41, 2678.36, 72.5858, 3241.02]
STEP = 1.02
REPS = 10


def cell_config(base: dict, provider, tables, fa):
    d = {**base, "storage": {"provider": provider}}
    d["workload"] = {**base.get("workload", {}), "num_tables": tables, "fast_append_ratio": fa}
    return from_dict(d)


def brute(cfg, anchor_cps, low_cps, high_cps, ex, store, vo: bool):
    """Success over a grid 2 % apart anchored at anchor_cps and covering [low_cps, high_cps], REPS replications
    each (cached in `store`)."""
    below = int(math.ceil(math.log(anchor_cps / low_cps) / math.log(STEP)))
    above = int(math.ceil(math.log(high_cps / anchor_cps) / math.log(STEP)))
    rates = [anchor_cps * STEP ** i for i in range(-below, above + 1)]
    tasks, meta = [], {}
    for rate in rates:
        c = replaced(cfg, {"workload.inter_arrival.mean_ms": float(f"{1000 / rate:.6g}")})
        for rep in range(REPS):
            key = run_key(config_hash(c), rep)
            meta[key] = rate
            if not store.path(key).is_file():
                tasks.append({"key": key, "config": c.to_dict(), "params": {}, "replication": rep, "engine": "fast"})
    for res in ex.map_unordered(execute, tasks):
        store.write(res["key"], res)
    rows = []
    for key in meta:   # success as the search counts it: unfinished window transactions are not successful
        s = store.read(key)["summary"]
        rows.append({"rate": meta[key], "success_rate": run_success(s, ""), "vo_success_rate": run_success(s, "vo_")})
    g = pd.DataFrame(rows).groupby("rate")[["success_rate", "vo_success_rate"]].mean().reset_index()
    g["binding"] = np.minimum(g["success_rate"], g["vo_success_rate"]) if vo else g["success_rate"]
    g["passes"] = g["binding"] >= 0.95
    return g, len(tasks)


def dispersion(store_dir: Path) -> list[str]:
    """Run-to-run sd of success / the binomial sd sqrt(p (1 - p) / n), per cell and metric, over the dense
    grids' points near the knee (mean success in [0.85, 0.99]): why a binomial regression with its dispersion
    estimated from the runs (Pearson) fits these runs."""
    groups: dict = {}
    for f in sorted((store_dir / "runs").glob("*.json")):
        d = json.loads(f.read_text())
        c = d["resolved"]["config"]
        cell = (c["storage"]["provider"], c["workload"]["num_tables"], c["workload"]["fast_append_ratio"])
        groups.setdefault((cell, d["summary"]["config_hash"]), []).append(d["summary"])
    ratios: dict = {}
    for (cell, _), runs in groups.items():
        for kind in ("", "vo_") if cell[2] < 1 else ("",):
            x = np.array([run_success(r, kind) for r in runs])
            n = np.mean([r[f"{kind}arrived"] for r in runs])
            if len(runs) >= 5 and 0.85 < x.mean() < 0.99 and n > 0:
                ratios.setdefault((*cell, kind or "all"), []).append(
                    x.std(ddof=1) / math.sqrt(x.mean() * (1 - x.mean()) / n))
    lines = ["| cell | metric | points | median sd / binomial sd | range |", "|---|---|---|---|---|"]
    for (prov, nt, fa, kind), r in sorted(ratios.items()):
        lines.append(f"| {prov} {nt} tables FA {fa} | {kind} | {len(r)} | {np.median(r):.2f} | "
                     f"{min(r):.2f}-{max(r):.2f} |")
    return lines


def time_sweep() -> tuple[Path, str]:
    """Run the 4c knee sweep from an empty cache as one process: (its output dir, a markdown line with wall and
    CPU time and the machine)."""
    from run import machine     # benchmarks/run.py: this script's directory is on sys.path

    out = Path(tempfile.mkdtemp(prefix="knee-4c-"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sim", "sweep", "experiments/4c-knee.yaml", "--out", str(out), "--yes",
                    "--no-progress"], cwd=HERE.parent, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    runs = len(list((out / "runs").glob("*.json")))
    m = machine()
    return out, (f"Timed ({time.strftime('%Y-%m-%d')}): the 4c knee sweep from an empty cache, {runs} runs, report "
                 f"included: {wall:.0f} s wall, {cpu:.0f} s CPU on {m['cores']} cores ({m['cpu']}, "
                 f"{m['memory_gib']} GiB, Python {m['python']}).\n")


def grid_versions(grid_dir: Path) -> dict:
    """How many of a sweep's cached runs recorded each model version ('none': written before runs recorded it)."""
    counts: dict = {}
    for f in (grid_dir / "runs").glob("*.json"):
        v = json.loads(f.read_text()).get("run_key", {}) or {}
        v = v.get("model_version", "none")
        counts[v] = counts.get(v, 0) + 1
    return counts


def interpolated_crossing(g, lo_b: float, hi_b: float) -> float:
    """Where the binding mean success, linear in log rate between the bracket's grid points, reaches 0.95."""
    if not (0 < lo_b and math.isfinite(hi_b)):
        return math.nan
    sa, sb = (float(g.loc[g["rate"] == r, "binding"].iloc[0]) for r in (lo_b, hi_b))
    t = (sa - 0.95) / (sa - sb) if sa > sb else 0.5
    return math.exp(math.log(lo_b) + t * (math.log(hi_b) - math.log(lo_b)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default="/tmp/knee-validation")
    ap.add_argument("--half-span", type=float, default=0.08,
                    help="brute grid covers knee / (1 + this) .. knee x (1 + this), and the CI plus one step")
    ap.add_argument("--full", help="results dir of the 4c knee sweep")
    ap.add_argument("--grid", help="results dir of the 4c grid sweep (for the grid knees)")
    ap.add_argument("--skip-brute", action="store_true")
    ap.add_argument("--knee-cache", help="run cache of the knee searches (default: --full, else CACHE/knee)")
    ap.add_argument("--time", action="store_true", help="time the 4c knee sweep from an empty cache (as --full)")
    args = ap.parse_args(argv)
    timing = ""
    if args.time:
        full, timing = time_sweep()
        args.full = str(full)
        print(timing, flush=True)
    sweep = load(HERE.parent / "experiments" / "4c-knee.yaml")
    spec = sweep.knee
    out = [f"# Knee search validation\n\nSpec: {spec}\n"]
    if not args.skip_brute:
        cells, anchors = CELLS + EXTRA, ANCHOR_MS + EXTRA_ANCHOR_MS
        cfgs = [cell_config(sweep.base, *c) for c in cells]
        searches = [KneeSearch(c, spec) for c in cfgs]
        cache = Path(args.knee_cache or args.full or Path(args.cache) / "knee")
        res = run_searches(searches, cache, jobs=args.jobs)
        ex = make_executor("local", args.jobs)
        store = ResultStore(Path(args.cache) / "brute")
        lines = ["| cell | knee (arrivals/s) | knee 95 % CI | half-width | brute-force crossing | agrees | "
                 "interpolated crossing | in CI | search runs | simulated hours | brute runs |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]
        agree = inside = agree_x = inside_x = brute_runs = new_brute = 0
        try:
            for i, ((prov, nt, fa), gap, cfg, rec) in enumerate(zip(cells, anchors, cfgs, res.results)):
                if i == len(CELLS):
                    lines.append(f"| *{len(EXTRA)} more cells* | | | | | | | | | | |")
                if rec["status"] != "ok":
                    lines.append(f"| {prov} {nt} tables FA {fa} | {rec['status']} | | | | | | | {rec['runs']} | | |")
                    continue
                hs, anchor = 1 + args.half_span, 1000 / gap
                g, new = brute(cfg, anchor, min(anchor / hs, rec["offered_cps_low"] / STEP),
                               max(anchor * hs, rec["offered_cps_high"] * STEP), ex, store, fa < 1)
                new_brute += new
                brute_runs += len(g) * REPS
                passing = g[g["passes"]]["rate"]
                lo_b = passing.max() if len(passing) else 0.0
                above = g[g["rate"] > lo_b]["rate"]
                hi_b = above.min() if len(above) else math.inf     # inf: passes over the whole grid
                ok = (lo_b <= rec["offered_cps_high"]) and (hi_b >= rec["offered_cps_low"])
                x = interpolated_crossing(g, lo_b, hi_b)
                within = rec["offered_cps_low"] <= x <= rec["offered_cps_high"]
                first = i < len(CELLS)
                agree += bool(ok) if first else 0
                inside += bool(within) if first else 0
                agree_x += bool(ok) if not first else 0
                inside_x += bool(within) if not first else 0
                lines.append(f"| {prov} {nt} tables FA {fa} | {rec['offered_cps']:.3f} | "
                             f"[{rec['offered_cps_low']:.3f}, {rec['offered_cps_high']:.3f}] | "
                             f"{rec['ci95_halfwidth_rel']:.1%} | [{lo_b:.3f}, {hi_b:.3f}] | {'yes' if ok else 'NO'} | "
                             f"{x:.3f} | {'yes' if within else 'NO'} | {rec['runs']} | {rec['simulated_hours']:.2f} | "
                             f"{len(g) * REPS} |")
                print(lines[-1], flush=True)
        finally:
            ex.close()
        out += [f"## Against a dense grid (2 % apart, {REPS} replications, covering the anchor x (1 +- "
                f"{args.half_span}) and the CI plus a step)\n",
                *lines, f"\n{agree} of {len(CELLS)} cells agree within the reported CI (brute-force bracket overlaps "
                f"it); the interpolated brute-force crossing lies inside the CI in {inside} of {len(CELLS)}. The {len(EXTRA)} "
                f"more cells: {agree_x} and {inside_x} of {len(EXTRA)}. The "
                f"searches cost {sum(r['runs'] for r in res.results)} runs, "
                f"{sum(r['simulated_hours'] for r in res.results):.1f} simulated hours; the dense grid "
                f"{brute_runs} runs ({new_brute} run for this validation, the rest cached).\n",
                "## Run-to-run noise against binomial noise (the dense grids' points with mean success 0.85-0.99)\n",
                *dispersion(Path(args.cache) / "brute"), ""]
    if args.full:
        knees = pd.read_parquet(Path(args.full) / "knees.parquet")
        ok = knees[knees["knee_status"] == "ok"]
        out += ["## Full 4c knee search\n",
                f"{len(knees)} cells ({len(ok)} ok; knee statuses: {knees['knee_status'].value_counts().to_dict()}; "
                f"searches: {knees['status'].value_counts().to_dict()}); "
                f"{int(knees['runs'].sum())} runs ({int(knees['pilot_runs'].sum())} of them short pilot runs), "
                f"{knees['simulated_hours'].sum():.1f} simulated hours "
                "(the grid: 900 runs, 900 simulated hours); CI half-width / rate: median "
                f"{ok['ci95_halfwidth_rel'].median():.4f}, max {ok['ci95_halfwidth_rel'].max():.4f}; "
                f"cells above 5 %: {int((ok['ci95_halfwidth_rel'] > 0.05).sum())}; full-length runs per cell: "
                f"median {ok['full_runs'].median():g}, max {ok['full_runs'].max():g} (in the fit: median "
                f"{ok['fit_runs'].median():g}); stopped by: "
                f"{knees['stopped'].value_counts().to_dict()}.\n"]
        table = knees[["provider", "num_tables", "fast_append_ratio", "status", "knee_status", "offered_cps",
                       "offered_cps_low", "offered_cps_high", "ci95_halfwidth_rel", "knee_throughput_cps",
                       "knee_throughput_cps_low", "knee_throughput_cps_high", "full_runs", "fit_runs", "stopped",
                       "runs", "simulated_hours"]].copy()
        if args.grid:
            from sim.report.aggregate import knee_table
            res = pd.read_parquet(Path(args.grid) / "results.parquet")
            gk = knee_table(res, ["provider", "num_tables", "fast_append_ratio"])
            keys = ["provider", "num_tables", "fast_append_ratio"]
            gk = gk[keys + [c for c in gk.columns if c.startswith("knee_")]]
            table = table.merge(gk.rename(columns={c: f"grid_{c}" for c in gk.columns if c not in keys}),
                                on=keys, how="left")
        table.to_csv(HERE / "knee_4c.csv", index=False)
        from sim.knee.status import knee_text
        md = ["| provider | tables | FA ratio | knee [95 % CI] | offered arrivals/s [95 % CI] | half-width "
              "| full runs (in fit) | stopped | runs | simulated hours | grid knee [95 % CI] | grid knee at ms |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for _, r in table.iterrows():
            grid = knee_text(r, "grid_") if "grid_knee_status" in r else "-"
            md.append(f"| {r['provider']} | {r['num_tables']} | {r['fast_append_ratio']} | {knee_text(r)} | "
                      f"{r['offered_cps']:.3g} [{r['offered_cps_low']:.3g}, {r['offered_cps_high']:.3g}] | "
                      f"{r['ci95_halfwidth_rel']:.1%} | {r['full_runs']} ({r['fit_runs']}) | {r['stopped']} | "
                      f"{r['runs']} | {r['simulated_hours']:.2f} | {grid} | "
                      f"{r.get('grid_knee_inter_arrival', float('nan')):.4g} |")
        note = "No grid given (--grid): no grid knees.\n"
        if args.grid:
            versions = grid_versions(Path(args.grid))
            note = ("Grid knees come from a 4c grid sweep (`python -m sim sweep experiments/4c.yaml`): its runs' "
                    f"recorded model versions "
                    f"{versions}. A run without one predates model version 2 (gcp's 1 write/s per object), so "
                    "its gcp grid knees would be stale.\n")
        out[-1] += timing
        (HERE / "knee_4c.md").write_text(out[-1] + "\n" + note + "\n" + "\n".join(md) + "\n")
        out.append("4c knees beside the grid knees: benchmarks/knee_4c.md and knee_4c.csv.\n")
    if not args.skip_brute:
        (HERE / "knee_validation.md").write_text("\n".join(out) + "\n")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
