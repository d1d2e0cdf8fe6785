"""Shared test helpers."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args, cwd=None, timeout=900):
    """`python -m sim ARGS` in a subprocess: what a user types."""
    return subprocess.run([sys.executable, "-m", "sim", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=timeout)

# A sweep of four tiny configurations (a minute simulated each): for tests of the sweep machinery, not the model.
TINY_SWEEP = {
    "name": "tiny",
    "base": {"duration_ms": 60_000, "warmup_ms": 10_000, "cooldown_ms": 10_000, "drain_limit_ms": 60_000,
             "workload": {"inter_arrival": {"mean_ms": 500}, "runtime": {"median_ms": 1000, "sigma": 0.5,
                                                                          "min_ms": 100}}},
    "grid": {"workload.num_tables": [1, 2], "storage.provider": ["s3x", "s3"]},
    "report": {"rows": "num_tables", "cols": "provider"},
}


def results_table(d: Path, volatile=("wall_s",)):
    """DIR/results.parquet in a canonical row order, less the columns that differ between identical runs."""
    import pandas as pd
    df = pd.read_parquet(Path(d) / "results.parquet").drop(columns=list(volatile))
    return df.sort_values(["config_hash", "replication"]).reset_index(drop=True)
