"""How a cell's start branches, measured and modelled: the attempt at which the start's first loser first commits.

The writers of a cell start together and their first calls collide. The first loser (of the writers whose first
call needed more than one attempt, the one whose call ended first) then retries while another commits call after
call. Whether it wins back within `--within` attempts decides the rest of a short run. For DuckLake at 25 ms with 2
writers (10 commits a writer) the two branches give failure shares of about 0.35 and 0.23, so a cell's mean of 10
runs is mostly how many took each branch.

For each results folder: the measured runs that took the early branch, the model's rate over `--replications`
replications of the same cell from that folder's own one-writer calibration (its `profile.yaml`, written by
`sim testbed report`), and a two-sided binomial test of the one against the other. Then the folders pooled: the
measured count against the sum of each folder's runs times its model's rate.

    python benchmarks/testbed/first_loser.py DLR4 --stack ducklake-pg --delay 25 --writers 2 --retries default
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def early(attempts: list[int], within: int) -> int:
    """Runs whose first loser won back by attempt `within` (not those with no loser, nor one that gave up)."""
    return sum(1 for a in attempts if 1 < a <= within)


def folder_row(out: Path, a: argparse.Namespace) -> dict:
    import yaml

    from sim import api
    from sim.testbed.campaign import cell_dir
    from sim.testbed.figures import first_loser_attempt
    from sim.testbed.predict import config_of
    from sim.testbed.report import read_grid
    grid = read_grid(out)
    spec = grid.spec(a.stack, a.writers, a.delay, a.retries == "default")
    profile_path = cell_dir(out, grid.calibration(a.stack, a.delay), calibration=True) / "profile.yaml"
    if not profile_path.is_file():
        raise SystemExit(f"{profile_path}: no profile; run `sim testbed report {out}` first")
    cell = cell_dir(out, spec).parent
    runs = sorted(cell.glob("rep*/transactions.parquet"), key=lambda p: int(p.parent.name[3:]))
    if not runs:
        raise SystemExit(f"{cell}: no measured repetitions")
    measured = [first_loser_attempt(pd.read_parquet(p)) for p in runs]
    cfg = api.config(config_of(yaml.safe_load(profile_path.read_text()), spec))
    modelled = [first_loser_attempt(api.run(cfg, r, stream=False).records) for r in range(a.replications)]
    return {"folder": out.name, "runs": len(measured), "early": early(measured, a.within),
            "model_rate": early(modelled, a.within) / len(modelled), "replications": len(modelled),
            "measured_attempts": " ".join(map(str, measured))}


def main() -> None:
    from scipy.stats import binomtest
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path, help="results folders of `sim testbed run`, reported")
    ap.add_argument("--stack", default="ducklake-pg")
    ap.add_argument("--delay", type=float, default=25.0, help="the fixed one-way delay, ms")
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--retries", choices=("off", "default"), default="default")
    ap.add_argument("--within", type=int, default=6, help="the early branch: a first win at this attempt or before")
    ap.add_argument("--replications", type=int, default=1000)
    a = ap.parse_args()
    rows = pd.DataFrame([folder_row(f, a) for f in a.folders])
    rows["measured_rate"] = rows["early"] / rows["runs"]
    rows["binomial_p"] = [binomtest(int(r.early), int(r.runs), r.model_rate).pvalue for r in rows.itertuples()]
    print(rows[["folder", "runs", "early", "measured_rate", "model_rate", "replications", "binomial_p"]]
          .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for r in rows.itertuples():
        print(f"{r.folder}: first win at attempt {r.measured_attempts} (-1: gave up)")
    if len(rows) > 1:
        n, k = int(rows["runs"].sum()), int(rows["early"].sum())
        expected = float((rows["runs"] * rows["model_rate"]).sum())
        print(f"pooled: {k} of {n} ({k / n:.3f}) against {expected:.1f} expected ({expected / n:.3f}); binomial p = "
              f"{binomtest(k, n, expected / n).pvalue:.3f}")


if __name__ == "__main__":
    main()
