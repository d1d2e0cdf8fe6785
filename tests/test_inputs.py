"""Odd inputs a new user will try: a config that is not a mapping, floats written `2e5`, a config that would run
for hours, a broken install, and random YAML trees. Each ends in exit 0 or 2 with one line, never a traceback."""
import contextlib
import io
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import TINY_SWEEP, run_cli
from sim import cli
from sim.config import load
from sim.sweep import load as load_sweep


def _main(*argv) -> tuple[int, str, str]:
    """`python -m sim ARGV` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


SMALL = "duration_ms: 6e4\nwarmup_ms: 1e4\ncooldown_ms: 1.0e+4\nworkload: {runtime: {median_ms: 1e3, min_ms: 1e2}}\n"


@pytest.mark.parametrize("text, kind", [("[]", "list"), ("- 1\n- 2\n", "list"), ("5", "int"), ("hello", "str")])
def test_a_config_that_is_not_a_mapping_exits_2(tmp_path, text, kind):
    p = tmp_path / "c.yaml"
    p.write_text(text)
    code, out, err = _main("run", p, "--json")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"error: {p}: a config must be a mapping, got {kind} {yaml.safe_load(text)!r}"]


def test_floats_with_an_exponent_are_numbers(tmp_path):
    """YAML 1.1 (PyYAML) reads `2e5` as a string; sim reads it as YAML 1.2 and users mean: a number."""
    p = tmp_path / "c.yaml"
    p.write_text(SMALL)
    cfg = load(p)
    assert (cfg.duration_ms, cfg.warmup_ms, cfg.workload.runtime.median_ms) == (60_000, 10_000, 1_000)
    assert cli.parse_override("workload.inter_arrival.mean_ms=2e2") == ("workload.inter_arrival.mean_ms", 200.0)
    code, _, err = _main("run", p, "--set", "workload.inter_arrival.mean_ms=5e2", "--json")
    assert code == 0, err
    s = tmp_path / "s.yaml"
    s.write_text(yaml.safe_dump({**TINY_SWEEP, "grid": {}}) + "\ngrid: {workload.inter_arrival.mean_ms: [1e3, 2e3]}\n")
    assert [p.config.workload.inter_arrival.mean_ms for p in load_sweep(s).points] == [1000.0, 2000.0]


def test_a_runaway_config_is_refused_with_its_estimate(tmp_path):
    """duration_ms 10,000x too large (a typo): exit 2 before anything runs, with arrivals, time and memory. On
    code without the guard the run would start and take hours: the timeout turns that into a failure. (A large
    run streams its records, so its memory no longer grows with it; its run time does.)"""
    p = tmp_path / "c.yaml"
    p.write_text("duration_ms: 3.6e10\n")
    try:
        r = run_cli("run", p, "--out", tmp_path / "out", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("a run estimated at ~360 M arrivals started without a word")
    assert r.returncode == 2, r.stderr
    err = r.stderr.strip().splitlines()[-1]
    assert err.startswith("error: this run looks too big: ~360,000,000 arrivals") and "--yes" in err, err
    assert "of run time" in err and "of memory" in err and "run time above" in err
    assert not (tmp_path / "out").exists()


def test_the_runaway_guard_applies_to_sweeps_and_yes_overrides_it(tmp_path, monkeypatch):
    monkeypatch.setattr("sim.estimate.LIMIT_WALL_S", 1e-9)     # every run is "too long"
    s = tmp_path / "s.yaml"
    s.write_text(yaml.safe_dump(TINY_SWEEP))
    code, out, err = _main("sweep", s, "--out", tmp_path / "out", "--jobs", "1", "--no-report", "--no-progress")
    assert code == 2 and "looks too big" in err and "--yes" in err and "heaviest" in out
    assert not (tmp_path / "out").exists()
    code, _, err = _main("sweep", s, "--out", tmp_path / "out", "--jobs", "1", "--no-report", "--no-progress",
                         "--yes")
    assert code == 0, err
    c = tmp_path / "c.yaml"
    c.write_text(SMALL)
    assert _main("run", c)[0] == 2
    assert _main("run", c, "--yes")[0] == 0


def test_a_broken_sweep_module_is_shown_not_hidden(monkeypatch):
    """A dependency of the sweep commands fails to import: the CLI says so (exit 1) instead of quietly losing
    `sweep` and `report`."""
    monkeypatch.setitem(sys.modules, "sim.sweep.cli", None)    # importing it now raises ImportError
    code, out, err = _main("sweep", "experiments/smoke.yaml", "--dry-run")
    assert code == 1 and out == ""
    assert err.startswith("error: cannot load sim's commands:") and "sim.sweep.cli" in err
    assert len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------ fuzz

KEYS = ["duration_ms", "warmup_ms", "cooldown_ms", "drain_limit_ms", "seed", "catalog", "backend", "latency_ms",
        "latency", "median_ms", "sigma", "storage", "provider", "io", "max_parallel", "workload", "inter_arrival",
        "distribution", "mean_ms", "num_tables", "table_selection", "alpha", "fast_append_ratio", "runtime",
        "min_ms", "commit", "max_retries", "retry", "table", "policy", "delay_ms", "base_ms", "factor", "jitter",
        "nonsense", 0, True, None, 1.5]
SCALARS = (st.none() | st.booleans() | st.integers(-5, 50) | st.integers() | st.floats()
           | st.sampled_from(["s3", "s3x", "exponential", "lognormal", "zipf", "fixed", "service", "2e5", "1e3",
                              "", "~", "[", "immediate", "exponential", "bursty"]) | st.text(max_size=8))
TREES = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=3)
                     | st.dictionaries(st.sampled_from(KEYS), kids, max_size=4), max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=TREES | st.dictionaries(st.sampled_from(KEYS), TREES, max_size=5))
def test_random_yaml_trees_never_show_a_traceback(tree):
    """Any YAML tree: exit 0 (it ran) or 2 (one line naming the problem). The runaway guard, lowered to a tenth
    of a second of estimated run time, keeps valid trees from starting long simulations."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.yaml"
        p.write_text(yaml.safe_dump(tree))
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("sim.estimate.LIMIT_WALL_S", 0.1)
            code, _, err = _main("run", p, "--json")
    assert code in (0, 2), err
    assert "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) <= 2 and err.strip().splitlines()[-1].startswith("error: "), err
