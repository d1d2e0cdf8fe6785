"""Golden digests (tests/golden/digests.json, made by tests/golden/make.py): both engines reproduce the
per-transaction records, histories and summaries pinned there, bit for bit.

The fast engine reruns every golden. The SimPy engine reruns, in the default suite, each golden that
tests/test_fast_engine.py's identity tests do not run (the smoke sweep's and 4c's runs, and cases whose stored
config differs from today's, as the throttled ones, whose provider path is stored relative to the repository):
for the others, the fast engine's digests here and the identity test's equality of both engines' records and
history (the summary is a function of them) already hold the SimPy engine to the digests. Its reruns of those are
marked `slow`, and so are those of the smoke sweep's heavy runs (100 ms gaps, ~6,000 transactions, ~5 s each under
SimPy) but one a provider, replication 0 on one table: the light ones and those two keep the SimPy engine on the
smoke sweep's configurations in the default run (`python -m pytest -q -m '' tests/test_goldens.py` reruns every
golden on both engines, about 3 minutes)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
from make import compute, config_of  # noqa: E402

from test_fast_engine import identical_runs  # noqa: E402
from sim.config import config_hash

GOLDEN = json.loads((Path(__file__).resolve().parent / "golden" / "digests.json").read_text())


def _heavy_smoke(name: str, g: dict) -> bool:
    """A smoke run at 100 ms gaps other than replication 0 on one table (see the module's docstring)."""
    w = g["config"]["workload"]
    return (name.startswith("smoke_") and w["inter_arrival"]["mean_ms"] == 100.0
            and not (g["replication"] == 0 and w["num_tables"] == 1))


def _cases():
    both = identical_runs()
    for name in sorted(GOLDEN):
        g = GOLDEN[name]
        yield pytest.param(name, "fast", id=f"{name}-fast")
        covered = (config_hash(config_of(g["config"])), g["replication"]) in both or _heavy_smoke(name, g)
        yield pytest.param(name, "simpy", id=f"{name}-simpy", marks=[pytest.mark.slow] if covered else [])


@pytest.mark.parametrize("name, engine", list(_cases()))
def test_golden(name, engine):
    g = GOLDEN[name]
    got = compute(name, g["config"], g["replication"], engine)
    assert got["transactions"] == g["transactions"]
    assert got["records"] == g["records"]
    assert got["history"] == g["history"]
    assert got["summary"] == g["summary"]
