"""The designs as peers (sim/model/designs/; docs/MODEL.md, "Designs and mechanisms"): each effect point, field,
parameter and random source has one owner; a design's step routes its own effect points; no design imports
another; every named design runs the model design MODEL.md says."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from sim import designs as named
from sim.config import from_dict
from sim.model import (capacity, delta, faults, fifo, growth, iceberg, jobs, lock, log_store, multi_table,
                       operations, pyiceberg, round_trips)
from sim.model.designs import DESIGNS, design_of_config
from sim.model.state import PC, TX, Params, Src

MECHANISMS = {"iceberg": iceberg, "delta": delta, "lock": lock, "log_store": log_store, "capacity": capacity,
              "fifo": fifo, "operations": operations, "jobs": jobs, "growth": growth, "faults": faults,
              "multi_table": multi_table, "pyiceberg": pyiceberg, "round_trips": round_trips}
CORE = {"INIT", "DONE"}   # every transaction's start and end (sim/model/transaction.py)
# MODEL.md's table: the model design each named design runs
NAMED = {"file": "cas", "service-pointer": "cas", "rest": "rest", "rest-lakekeeper": "rest", "fs-table": "fs_table",
         "log": "log", "log-spark": "log", "delta-dynamodb": "delta_dynamodb", "hive": "hive", "hudi": "hudi",
         "ducklake": "cas", "pyiceberg-sql": "cas", "ducklake-postgres": "cas_db",
         "pyiceberg-postgres": "cas_db"}
# the latency a named design needs stated (its service's round trip has no public figure)
STATED = {"rest": {"catalog": {"latency_ms": 10}}, "rest-lakekeeper": {"catalog": {"latency_ms": 10}},
          "service-pointer": {"catalog": {"latency_ms": 10}}, "hive": {"catalog": {"latency_ms": 10}},
          "hudi": {"lock": {"latency_ms": 10}}, "delta-dynamodb": {"log_store": {"latency_ms": 10}},
          "ducklake": {"catalog": {"latency_ms": 10}}, "pyiceberg-sql": {"catalog": {"latency_ms": 10}},
          "ducklake-postgres": {"catalog": {"latency_ms": 10}}, "pyiceberg-postgres": {"catalog": {"latency_ms": 10}}}


def _owners(kind: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, mod in [*MECHANISMS.items(), *DESIGNS.items()]:
        for item in mod.OWNS.get(kind, ()):
            out.setdefault(item, []).append(name)
    return out


def test_every_effect_point_has_its_owner():
    owners = _owners("effect_points")
    for pc in PC._fields:
        who = owners.get(pc, [])
        mechanisms = [w for w in who if w in MECHANISMS]
        if pc in CORE:
            assert not who, f"{pc} is every transaction's, yet owned by {who}"
        elif mechanisms:
            assert who == mechanisms[:1], f"{pc}: a mechanism's effect point must have no other owner: {who}"
        else:
            assert who, f"effect point {pc} has no owner (a design's or a mechanism's OWNS)"


@pytest.mark.parametrize("kind, names", [("fields", TX.names), ("params", Params._fields), ("sources", Src._fields)])
def test_owned_state_exists_and_has_one_owner(kind, names):
    for item, who in _owners(kind).items():
        assert item in names, f"{who} declare {kind} {item!r}, which does not exist"
        assert len(who) == 1, f"{kind} {item!r} has several owners: {who}"


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_a_design_routes_its_own_effect_points(name):
    mod = DESIGNS[name]
    step = inspect.getsource(mod.step.py_func)
    for pc in mod.OWNS["effect_points"]:
        assert f"PC.{pc}" in step, f"design {name} owns {pc} but its step does not route it"
    assert callable(mod.timer)
    # a later design: <= 30 s more (measured 2026-11-28: rest 17, hive 18, log 22 s once operations and metadata
    # growth sat under every prepare and commit; 9, 10, 8 s before)
    assert isinstance(mod.COMPILE_S, int) and 0 < mod.COMPILE_S <= 30


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_no_design_imports_another(name):
    tree = ast.parse(Path(inspect.getfile(DESIGNS[name])).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("sim.model.designs") for a in node.names), ast.unparse(node)
        if isinstance(node, ast.ImportFrom):
            # `from . import x`, `from .x import y`, `from ..designs ...`: the designs package, so a sibling
            assert node.level != 1, f"design {name} imports from its own package: {ast.unparse(node)}"
            assert not (node.level == 2 and (node.module or "").startswith("designs")), ast.unparse(node)
            assert not (node.level == 0 and (node.module or "").startswith("sim.model.designs")), ast.unparse(node)


@pytest.mark.parametrize("design", sorted(NAMED))
def test_named_designs_run_their_model_design(design):
    assert set(NAMED) == set(named.DESIGNS)
    cfg = from_dict({"design": design, **STATED.get(design, {})})
    assert design_of_config(cfg) == NAMED[design]


def test_the_default_model_is_the_cas_design():
    assert design_of_config(from_dict({})) == "cas"
