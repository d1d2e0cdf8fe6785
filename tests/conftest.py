"""Fixtures shared by test modules."""
import os

import pytest

from helpers import ROOT
from sim.config import from_dict
from sim.engines.fast import compile_designs
from sim.sweep import load, run_sweep

# one config per model design (sim.model.designs), the default first: its first compile builds every mechanism
ONE_PER_DESIGN = [{}, {"design": "fs-table"}, {"design": "rest", "catalog": {"latency_ms": 10}}, {"design": "log"},
                  {"design": "delta-dynamodb", "log_store": {"latency_ms": 10}},
                  {"design": "hive", "catalog": {"latency_ms": 10}}, {"design": "hudi", "lock": {"latency_ms": 10}}]


@pytest.fixture(scope="session", autouse=True)
def compiled_designs(request):
    """A whole suite compiles every design's loop before its first test, each worker its share (after the
    default design, which compiles the mechanisms they share), then loads the others from numba's cache: on a
    cold cache the two workers compile side by side instead of one waiting on the other's compile mid-suite.
    A run of a few tests compiles only what it uses."""
    if len(request.session.items) < 100:
        return
    k = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:])
    n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    first, *rest = ONE_PER_DESIGN
    mine = rest[k::n]
    order = [first, *mine, *(c for c in rest if c not in mine)]
    compile_designs([from_dict(c) for c in order], say=lambda *_: None)


@pytest.fixture(scope="session")
def smoke_reference(tmp_path_factory):
    """experiments/smoke.yaml run serially in this process: the table every executor must reproduce."""
    out = tmp_path_factory.mktemp("smoke")
    outcome = run_sweep(load(ROOT / "experiments" / "smoke.yaml"), out, jobs=1, progress=False, log=lambda *_: None)
    assert outcome.failed == 0 and outcome.ran == 16
    return out
