"""The knees of the REST catalog servers (docs/MODEL.md, "Server capacity"): the designs knee (open-loop
arrivals, FastAppends, the model's 1 h runs) on s3 at 1, 10 and 50 tables and on s3x at 1 table, and the writers
knee (periodic writers on one s3 table, a commit every 10 s or 60 s, ~2 s of work before each, as
experiments/writers-knee.yaml), each server variant with its database at a stated 10 ms. Each cell is one
`python -m sim knee` search (its defaults; writers from 1,128), run one after another.

    python benchmarks/server_knees.py                       # every variant; prints the tables (about 4 min)
    python benchmarks/server_knees.py --variants rest rest-lakekeeper   # the designs as such, for a checkout
                                                            # without catalog.server's capacity (model version <= 5)
    python benchmarks/server_knees.py --out DIR             # keep the searches' runs and knee.json files in DIR
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server_stress import VARIANTS  # noqa: E402

DESIGN_CELLS = (("s3", 1), ("s3x", 1), ("s3", 10), ("s3", 50))
INTERVALS_MS = (10_000, 60_000)
DESIGNS_BASE = {"workload": {"inter_arrival": {"distribution": "exponential"}, "fast_append_ratio": 1.0},
                "catalog": {"latency_ms": 10.0}}
WRITERS_BASE = {"duration_ms": 3_600_000, "warmup_ms": 600_000, "cooldown_ms": 600_000,
                "catalog": {"latency_ms": 10.0}, "storage": {"provider": "s3"},
                "workload": {"num_tables": 1, "writers": {"count": 1, "mode": "periodic", "interval_ms": 60_000},
                             "runtime": {"median_ms": 2000, "sigma": 0.5, "min_ms": 0}}}
AFTER = ("reference", "polaris", "lakekeeper", "lakekeeper-0.9")


def knee(base: dict, sets: dict, out: Path, extra: tuple[str, ...] = ()) -> dict:
    """One `sim knee` search of `base` with `sets` (PATH=VALUE overrides): its knee.json's knee."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(base, f)
    args = [sys.executable, "-m", "sim", "knee", f.name, "--jobs", "1", "--json", "--out", str(out), *extra]
    for path, value in sets.items():
        args += ["--set", f"{path}={value}"]
    done = subprocess.run(args, cwd=ROOT, check=True, capture_output=True, text=True)
    Path(f.name).unlink()
    return json.loads(done.stdout)["knee"]


def _sets(variant: str) -> dict:
    design, server = VARIANTS[variant]
    return {"design": design, **({"catalog.server.variant": server} if server else {})}


def _cell(k: dict, unit: str) -> str:
    if unit == "writers":
        lo, hi = k["writers_ci95"]
        value = f"{k['writers']} [{lo}, {hi}]"
    else:
        lo, hi = k["offered_cps_ci95"]
        value = f"{k['offered_cps']:.3g} [{lo:.3g}, {hi:.3g}]"
    return value if k.get("decided", True) else value + " (undecided)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", nargs="+", default=list(AFTER), choices=sorted(VARIANTS))
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "server-knees")
    args = ap.parse_args(argv)
    head = " | ".join(f"{p}, {n} table{'s' if n > 1 else ''}" for p, n in DESIGN_CELLS)
    rows = [f"| variant | {head} |", "|---" * (len(DESIGN_CELLS) + 1) + "|"]
    for v in args.variants:
        cells = [_cell(knee(DESIGNS_BASE, {**_sets(v), "storage.provider": p, "workload.num_tables": n},
                            args.out / f"designs-{v}-{p}-{n}"), "cps") for p, n in DESIGN_CELLS]
        rows.append(f"| {v} | " + " | ".join(cells) + " |")
    rows += ["", "| variant | " + " | ".join(f"every {i // 1000} s" for i in INTERVALS_MS) + " |",
             "|---" * (len(INTERVALS_MS) + 1) + "|"]
    for v in args.variants:
        cells = [_cell(knee(WRITERS_BASE, {**_sets(v), "workload.writers.interval_ms": i},
                            args.out / f"writers-{v}-{i}", ("--start", "1,128")), "writers") for i in INTERVALS_MS]
        rows.append(f"| {v} | " + " | ".join(cells) + " |")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
