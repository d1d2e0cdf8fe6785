"""Golden digests (tests/golden/digests.json, made by tests/golden/make.py): both engines reproduce the
per-transaction records, histories and summaries pinned there, bit for bit.

The fast engine reruns every golden. The SimPy engine reruns, in the default suite, each golden that
tests/test_fast_engine.py's identity tests do not run (the smoke sweep's and 4c's runs, and cases whose stored
config differs from today's, as the throttled ones, whose provider path is stored relative to the repository):
for the others, the fast engine's digests here and the identity test's equality of both engines' records and
history (the summary is a function of them) already hold the SimPy engine to the digests. Its reruns of those are
marked `slow` (`python -m pytest -q -m '' tests/test_goldens.py` reruns every golden on both engines, about 3
minutes)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
from make import compute, config_of  # noqa: E402

from test_fast_engine import identical_runs  # noqa: E402

GOLDEN = json.loads((Path(__file__).resolve().parent / "golden" / "digests.json").read_text())


def _cases():
    both = identical_runs()
    for name in sorted(GOLDEN):
        g = GOLDEN[name]
        yield pytest.param(name, "fast", id=f"{name}-fast")
        covered = (config_of(g["config"]).hash, g["replication"]) in both
        yield pytest.param(name, "simpy", id=f"{name}-simpy", marks=[pytest.mark.slow] if covered else [])


@pytest.mark.parametrize("name, engine", list(_cases()))
def test_golden(name, engine):
    g = GOLDEN[name]
    got = compute(name, g["config"], g["replication"], engine)
    assert got["transactions"] == g["transactions"]
    assert got["records"] == g["records"]
    assert got["history"] == g["history"]
    assert got["summary"] == g["summary"]
