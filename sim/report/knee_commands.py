"""The commands that bound the knees a grid cannot (sim.knee.status: `undecided`, `below_range`, `above_range`):
the sweep's base written beside the report as a config file (`report/base.yaml`), and `sim knee` on it with one
cell's swept values as `--set` overrides."""
from __future__ import annotations

import shlex
from pathlib import Path

import pandas as pd
import yaml

from ..results_io import atomic_write_text
from .aggregate import format_value

BASE_NAME = "base.yaml"


def write_base_config(results_dir: Path, out: Path) -> str | None:
    """Write the sweep's base config (from `results_dir/sweep.yaml`) to `out/base.yaml`; return the path a command
    names it by, `results_dir/report/base.yaml` (`out` is the report's staging directory), or None when the results
    directory has no sweep file."""
    sweep = Path(results_dir) / "sweep.yaml"
    if not sweep.is_file():
        return None
    base = (yaml.safe_load(sweep.read_text()) or {}).get("base") or {}
    atomic_write_text(Path(out) / BASE_NAME, "# the sweep's base config (sweep.yaml): `sim knee` on it bounds a "
                      "cell's knee\n" + yaml.safe_dump(base, sort_keys=False))
    return str(Path(results_dir) / "report" / BASE_NAME)


def knee_command(config: str, runs: pd.DataFrame, load: str) -> str:
    """`sim knee` on one group's configuration: `config` (the sweep's base) with the swept config paths that are
    constant over the group's runs (every dotted-path column but the load's) as --set overrides."""
    sets = []
    for c in runs.columns:
        if "." not in str(c) or c == load or str(c).endswith(("inter_arrival.mean_ms", "inter_arrival.median_ms")):
            continue
        values = runs[c].dropna().unique()
        if len(values) == 1:
            sets.append(f"--set {shlex.quote(f'{c}={format_value(values[0])}')}")
    return " ".join(["sim knee", shlex.quote(str(config)), *sets])
