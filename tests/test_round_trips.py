"""A catalog's operations as database round trips (sim/model/round_trips.py, design cas_db; docs/MODEL.md,
"Operations as database round trips"): each operation its round trips, one taking effect; a commit that holds the
row it wrote to its COMMIT, the first statement winning and the others waiting for its COMMIT. Constant latencies,
so every figure is exact, on both engines, with the checker replaying each history."""
from __future__ import annotations

from pathlib import Path

import pytest

from sim.api import config
from sim.checker import check_history
from sim.config import ConfigError
from sim.engines import make_engine
from sim.providers import profile_of
from sim.records import records_frame
from sim.rules import checker_rules

L, R = 10.0, 100.0          # a database round trip; the client's work before its commit
PROVIDER = str(Path(__file__).resolve().parent / "data" / "server_constant.yaml")   # GET 3 ms, PUT 5 ms
ENGINES = ["fast", "simpy"]


def _cfg(writers: int, commits: int, retries: int | None = None, **keys) -> dict:
    d = {"design": "ducklake-postgres", "catalog": {"latency_ms": L},
         "duration_ms": 1e7, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": 1e7,
         "workload": {"writers": {"count": writers, "commits": commits, "think_ms": 0.0, "start_spread_ms": 0.0},
                      "runtime": {"median_ms": R, "sigma": 0, "min_ms": 0}}}
    if retries is not None:
        d["commit"] = {"max_retries": retries}
    return config(d, **keys)


def _run(cfg, engine: str, runtimes=None):
    """The run's records (by transaction id), its history checked; `runtimes`: each transaction's, in order."""
    eng = make_engine(cfg, 0, history=True, engine=engine)
    if runtimes is not None:
        eng.r.m.arrivals["runtime_ms"][:len(runtimes)] = runtimes
    eng.run()
    violations = check_history(eng.history_frame(), **checker_rules(cfg, profile_of(cfg)))
    assert not violations, violations[:3]
    return records_frame(eng.r).set_index("txn")


@pytest.mark.parametrize("engine", ENGINES)
def test_an_uncontended_ducklake_commit_is_eight_round_trips(engine):
    """BEGIN, Parse (the snapshot), Describe, COPY, the two stats COPYs, then the runtime, the batch and COMMIT: one
    writer's every commit takes 8 L + R, one attempt, one catalog read."""
    rec = _run(_cfg(1, 5), engine)
    assert (rec["outcome"] == "committed").all() and (rec["attempts"] == 1).all()
    assert (rec["end_ms"] - rec["arrival_ms"] == 8 * L + R).all()
    assert (rec["catalog_reads"] == 1).all() and (rec["lock_wait_ms"] == 0).all()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_sql_catalog_commit_in_transactions(engine):
    """PyIceberg's SqlCatalog shape on the service pointer: a load is BEGIN, SELECT, ROLLBACK; the swap BEGIN, UPDATE,
    COMMIT. Uncontended: 3 L (load) + R + 3 L (refresh) + the prepare's two GETs and two PUTs + 3 L (swap)."""
    rts = {"base": {"count": 3, "effect": 2}, "refresh": {"count": 3, "effect": 2},
           "commit": {"count": 3, "effect": 2, "visible": 3}}
    cfg = config({"design": "service-pointer", "storage": {"provider": PROVIDER},
                  "catalog": {"latency_ms": L, "round_trips": rts},
                  "io": {"manifest_list_bytes": 0, "table_metadata_bytes": 0},
                  "duration_ms": 1e7, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": 1e7,
                  "workload": {"writers": {"count": 1, "commits": 4, "think_ms": 0.0},
                               "runtime": {"median_ms": R, "sigma": 0, "min_ms": 0}}})
    rec = _run(cfg, engine)
    assert (rec["end_ms"] - rec["arrival_ms"] == 9 * L + R + 2 * 3.0 + 2 * 5.0).all()
    assert (rec["catalog_reads"] == 2).all() and (rec["attempts"] == 1).all()


@pytest.mark.parametrize("engine", ENGINES)
def test_the_first_batch_wins_and_the_others_wait_for_its_commit(engine):
    """Three writers from one start, retries off: their batches meet at 6.5 L + R. The first takes the snapshot row
    and COMMITs L later (8 L + R); the others wait for that COMMIT (L), fail their check, and end after the rest of
    their batch's round trip and their ROLLBACK (9 L + R)."""
    rec = _run(_cfg(3, 1, retries=0), engine)
    won = rec["outcome"] == "committed"
    assert won.sum() == 1 and (rec.loc[~won, "reason"] == "retries_exhausted").all()
    assert (rec.loc[won, "end_ms"] == 8 * L + R).all() and (rec.loc[won, "lock_wait_ms"] == 0).all()
    assert (rec.loc[~won, "end_ms"] == 9 * L + R).all() and (rec.loc[~won, "lock_wait_ms"] == L).all()
    assert (rec["attempts"] == 1).all()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_batch_after_the_winners_commit_fails_at_once(engine):
    """A writer whose batch comes after the other's COMMIT (its runtime 5 L longer) waits for nothing: its check
    fails at once, and it ends after its ROLLBACK, 6.5 L + R + 5 L + 1.5 L."""
    rec = _run(_cfg(2, 1, retries=0), engine, runtimes=[R, R + 5 * L])
    assert rec.loc[0, "outcome"] == "committed" and rec.loc[1, "outcome"] == "aborted"
    assert rec.loc[1, "end_ms"] == 13 * L + R and rec.loc[1, "lock_wait_ms"] == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_loser_sleeps_then_retries_in_nine_round_trips(engine):
    """The loser's ROLLBACK, then no read: it sleeps 100 ms x U[0.5, 1), then BEGIN, the changes query and the
    latest snapshot again (7 round trips, the snapshot at the second), the batch and COMMIT."""
    rec = _run(_cfg(2, 1), engine)
    lost = rec[rec["attempts"] == 2].iloc[0]
    assert (rec["outcome"] == "committed").all() and sorted(rec["attempts"]) == [1, 2]
    assert 50.0 <= lost["backoff_ms"] < 100.0
    assert lost["end_ms"] == pytest.approx(9 * L + R + lost["backoff_ms"] + 9 * L, abs=1e-9)
    assert lost["catalog_reads"] == 2 and lost["table_conflicts"] == 1


def test_an_atomic_commit_holds_no_row():
    """A commit visible at its own round trip (an autocommit statement) takes no lock: a loser of the same instant
    fails at once."""
    cfg = _cfg(2, 1, retries=0, **{"catalog.round_trips.commit": {"count": 2, "effect": 1, "visible": 1}})
    rec = _run(cfg, "fast")
    assert (rec["lock_requests"] == 0).all()
    assert sorted(rec["end_ms"] - rec["arrival_ms"]) == [8 * L + R, 8 * L + R]


@pytest.mark.parametrize("keys, path", [
    ({"design": "file", "catalog.round_trips.base": {"count": 2, "effect": 1}}, "catalog.round_trips"),
    ({"catalog.round_trips.base": {"effect": 1}}, "catalog.round_trips.base.count"),
    ({"catalog.round_trips.base": {"count": 3}}, "catalog.round_trips.base.effect"),
    ({"catalog.round_trips.base": {"count": 2, "effect": 3}}, "catalog.round_trips.base.effect"),
    ({"catalog.round_trips.retry": {"count": 0}}, "catalog.round_trips.retry.count"),
    ({"catalog.round_trips.conflict": {"count": 0, "effect": 1}}, "catalog.round_trips.conflict.effect"),
    ({"catalog.round_trips.base": {"count": 2, "effect": 1, "visible": 2}}, "catalog.round_trips.base"),
    ({"catalog.round_trips.commit": {"count": 3, "effect": 2, "visible": 1}}, "catalog.round_trips.commit.visible"),
    ({"faults.commit.lost_answer": 0.1}, "catalog.round_trips"),
    ({"design": "service-pointer", "catalog.ducklake_version": "1.4"}, "catalog.ducklake_version"),
])
def test_round_trip_keys_are_checked(keys, path):
    """Each operation's keys on their own (design ducklake: no round trips of its own to merge with)."""
    d = {"design": "ducklake", "catalog.latency_ms": L, "catalog.round_trips.commit": {"count": 2, "effect": 1},
         **keys}
    if d["design"] == "file":
        d.pop("catalog.latency_ms")
    with pytest.raises(ConfigError, match=path.replace(".", r"\.")):
        config({}, **d)


def test_service_latency_with_a_fixed_part():
    """`catalog.latency.fixed_ms`: a round trip's network delay under its lognormal; its mean is the sum."""
    from sim.latency import latency_model
    cfg = config({}, design="ducklake", **{"catalog.latency": {"median_ms": 5.0, "sigma": 0.0, "fixed_ms": 50.0}})
    assert latency_model(cfg).catalog_read.mean_ms() == 55.0
