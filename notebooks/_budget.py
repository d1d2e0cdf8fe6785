"""Shared set-up for the notebooks: find the repository, put it on sys.path, pick the budget.

    import _budget as B           # after the notebook's first cell has put notebooks/ on sys.path
    B.BUDGET, B.SMOKE, B.ROOT, B.RESULTS, B.shown(path)

`SIM_NOTEBOOK_BUDGET=smoke` selects the small budget (each notebook finishes in under two minutes on a
2-core machine); anything else, or unset, selects the full budget. `SIM_NOTEBOOK_RESULTS` moves the
notebooks' result directories (default `<repo>/results/notebooks`); the test suite points it at a temporary
directory so that it runs the simulations instead of reusing earlier runs.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def _find_root() -> Path:
    here = Path(__file__).resolve().parent
    for p in (here, *here.parents):
        if (p / "sim" / "api.py").is_file():
            return p
    raise RuntimeError(f"cannot find the repository (a directory holding sim/api.py) above {here}")


ROOT = _find_root()
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BUDGET = "smoke" if os.environ.get("SIM_NOTEBOOK_BUDGET", "").strip().lower() == "smoke" else "full"
SMOKE = BUDGET == "smoke"
RESULTS = Path(os.environ.get("SIM_NOTEBOOK_RESULTS") or ROOT / "results" / "notebooks").resolve()

_T0 = time.perf_counter()


def banner(what: str) -> None:
    """Print which budget is active, and what it means for this notebook."""
    how = ("SMOKE budget (SIM_NOTEBOOK_BUDGET=smoke): short runs and few replications (a reduced grid where "
           "noted); the numbers are noisy and only show that the notebook works"
           if SMOKE else "FULL budget (set SIM_NOTEBOOK_BUDGET=smoke for a quick check)")
    print(f"Budget: {how}.")
    print(f"  {what}")
    print(f"  results under: {shown(RESULTS)}")


def shown(path) -> str:
    """A path as the notebooks print it: relative to the repository, or to $SIM_NOTEBOOK_RESULTS when that moved
    the results out of it, so an executed copy (docs/notebooks/) shows no machine's directories."""
    p = Path(path).resolve()
    bases = [(ROOT, "")] if RESULTS.is_relative_to(ROOT) else [(RESULTS, "$SIM_NOTEBOOK_RESULTS"), (ROOT, "")]
    for base, name in bases:
        if p.is_relative_to(base):
            rel = p.relative_to(base).as_posix()
            return "/".join(x for x in (name, "" if rel == "." else rel) if x) or "."
    return str(p)


def elapsed() -> str:
    return f"{time.perf_counter() - _T0:.0f} s since set-up"
