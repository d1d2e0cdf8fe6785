"""Fixtures shared by test modules."""
import pytest

from helpers import ROOT
from sim.sweep import load, run_sweep


@pytest.fixture(scope="session")
def smoke_reference(tmp_path_factory):
    """experiments/smoke.yaml run serially in this process: the table every executor must reproduce."""
    out = tmp_path_factory.mktemp("smoke")
    outcome = run_sweep(load(ROOT / "experiments" / "smoke.yaml"), out, jobs=1, progress=False, log=lambda *_: None)
    assert outcome.failed == 0 and outcome.ran == 16
    return out
