"""The model's prediction of a measured cell: the stack's model (`model_config`, from its one-writer calibration)
run as the cell ran, N closed-loop writers of M commits each from a common start, with no think time.

The model reads nothing of the testbed but this config; the figures are computed from its records as from the
measured ones (`figures`).
"""
from __future__ import annotations

import copy

import pandas as pd

from .cell import CellSpec
from .figures import figures, precise, straddled
from .stacks import stack

# a cell's run ends when its writers have made their commits; these bounds are never reached
DURATION_MS = 36_000_000.0


def merge(base: dict, over: dict) -> dict:
    """`over` laid onto `base`, nested dicts merged key by key."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def cell_config(spec: CellSpec) -> dict:
    """What every stack's prediction of this cell shares: its writers, tables and length."""
    workload = {"num_tables": spec.tables,
                "writers": {"count": spec.writers, "commits": spec.commits, "think_ms": 0.0, "start_spread_ms": 0.0}}
    if spec.tables > 1:
        workload["table_selection"] = {"distribution": "zipf", "alpha": spec.zipf_alpha}
    return {"duration_ms": DURATION_MS, "warmup_ms": 0.0, "cooldown_ms": 0.0, "drain_limit_ms": DURATION_MS,
            "seed": spec.seed, "workload": workload}


def config_of(profile: dict, spec: CellSpec) -> dict:
    return merge(cell_config(spec), stack(spec.stack).model_config(profile, spec))


def predict(profile: dict, spec: CellSpec, replications: int, max_replications: int = 0,
            measured: dict | None = None) -> pd.DataFrame:
    """One row of figures per model replication of the cell: `replications`, then (up to `max_replications`)
    as many more at a time until the target figures' means are `precise` and, given the cell's `measured` means,
    no target's edge lies inside their CI (`straddled`): the verdict is then the model's, not its sampling's.
    Replication r is the same run whatever the count, so the rows are a pure function of the arguments."""
    from .. import api
    cfg = api.config(config_of(profile, spec))
    rows = []
    while True:
        for r in range(len(rows), len(rows) + replications):
            res = api.run(cfg, r, stream=False)
            rows.append({"replication": r, **figures(res.records)})
        df = pd.DataFrame(rows)
        if len(rows) + replications > max_replications or (precise(df) and not straddled(df, measured or {})):
            return df
