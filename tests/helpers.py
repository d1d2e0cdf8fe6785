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


class Rows:
    """Rows of a frame as numpy columns (`rows.kind`, `rows.time_ms`); a mask or a slice selects some of them.
    Per-transaction checks loop over thousands of transactions: a pandas selection costs ~0.1-1 ms, these
    cost microseconds, so the same assertions run in seconds instead of minutes."""

    def __init__(self, cols: dict):
        self.cols = cols

    def __getattr__(self, name):
        try:
            return self.__dict__["cols"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, sel) -> "Rows":
        return Rows({k: v[sel] for k, v in self.cols.items()})

    def __len__(self) -> int:
        return len(next(iter(self.cols.values())))


def groups(df, by: str = "txn") -> dict:
    """{value: Rows} for each value of column `by`, in ascending order, each group's rows in frame order (as
    `df.groupby(by)`)."""
    import numpy as np
    keys = df[by].to_numpy()
    order = np.argsort(keys, kind="stable")
    cols = {c: df[c].to_numpy()[order] for c in df.columns}
    keys = keys[order]
    bounds = np.r_[np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]), len(keys)] if len(keys) else [0]
    return {keys[a].item(): Rows({c: v[a:b] for c, v in cols.items()}) for a, b in zip(bounds[:-1], bounds[1:])}


def by_txn(records) -> dict:
    """{txn: the record as a named tuple} (what `records.set_index("txn").loc[txn]` gives, without its cost)."""
    return dict(zip(records["txn"].tolist(), records.itertuples(index=False)))


def run_both_checked(data: dict):
    """One run of `data` on both engines, their records equal, the history checked clean: the records by txn."""
    from sim.checker import check_history
    from sim.config import from_dict
    from sim.providers import load_provider
    from sim.rules import checker_rules
    from sim.run import run
    cfg = from_dict(data)
    fast, ref = run(cfg, 0, history=True), run(cfg, 0, history=True, engine="simpy")
    assert fast.records.equals(ref.records)
    rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
    assert check_history(fast.history, **rules) == []
    return fast.records.sort_values("txn").reset_index(drop=True)
