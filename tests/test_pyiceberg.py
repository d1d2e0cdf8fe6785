"""PyIceberg's client (`commit.client: pyiceberg`, sim/model/pyiceberg.py; docs/model/pyiceberg.md) on SqlCatalog
(design pyiceberg-sql) and on SeaweedFS's REST server (design rest, `catalog.server.variant: seaweedfs`), and the
client's own time per attempt (`commit.client_work`): each path in closed form with constant latencies, the
checker replaying every history, and the keys' rules."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from test_server import _run, _two_arrivals

from sim.config import ConfigError, RetryPolicy, from_dict
from sim.model.retry import delay_table

PROVIDER = str(Path(__file__).resolve().parent / "data" / "pyiceberg_constant.yaml")
L, G, H, LS, P, R = 10.0, 3.0, 1.5, 2.0, 5.0, 100.0   # catalog round trip, read, HEAD, LIST, write, runtime
BASE_W, PER_V, SHARE = 20.0, 2.0, 0.25                 # the client's work: base, per table version, commit share
A, C = 2.0, 6.0                                       # SeaweedFS's own time per load, per commit up to its CAS
NO_JITTER = {"policy": "exponential", "base_ms": 100, "jitter": 0}
CLEANUP = 2 * 3 * H                                   # a failed attempt's manifest and list: HEAD, DELETE, PUT each


def _set(d: dict, path: str, value) -> None:
    node = d
    *head, last = path.split(".")
    for part in head:
        node = node.setdefault(part, {})
    node[last] = copy.deepcopy(value)


def _cfg(kind: str, writers: int = 1, commits: int = 1, **over) -> dict:
    d = {"storage": {"provider": PROVIDER}, "io": {"manifest_list_bytes": 0, "table_metadata_bytes": 0},
         "duration_ms": 10_000, "warmup_ms": 0, "cooldown_ms": 1_000, "drain_limit_ms": 10_000,
         "retry": {"catalog": NO_JITTER, "table": NO_JITTER},
         "workload": {"writers": {"count": writers, "commits": commits},
                      "runtime": {"median_ms": R, "sigma": 0, "min_ms": 0}}}
    if kind == "sql":
        d.update(design="pyiceberg-sql", catalog={"latency_ms": L},
                 commit={"client_work": {"base_ms": BASE_W, "per_version_ms": PER_V, "commit_share": SHARE}})
    else:
        d.update(design="rest", commit={"client": "pyiceberg",
                                        "client_work": {"base_ms": BASE_W, "per_version_ms": PER_V}},
                 catalog={"latency_ms": L, "server": {
                     "variant": "seaweedfs", "load_latency": {"median_ms": A, "sigma": 0},
                     "commit_latency": {"median_ms": C, "sigma": 0},
                     "retry": {"policy": "linear", "base_ms": 50, "jitter": 0}}})
    for path, value in over.items():
        _set(d, path, value)
    return d


def _work(v: int) -> float:
    return BASE_W + PER_V * v


def sql_uncontended(v: int) -> float:
    """Load (row, metadata.json), runtime, prepare (work less its share, the manifest's PUT and HEAD beside the
    parent's list read, none at v 0; the list's PUT), commit_table (row, metadata.json, its share of the work, the
    name's HEAD and LIST, the write), the swap."""
    parallel = max(P + H, G) if v > 0 else P + H
    return (L + G) + R + (1 - SHARE) * _work(v) + parallel + P + (L + G) + SHARE * _work(v) + (H + LS + P) + L


def rest_uncontended(v: int) -> float:
    """Load (the round trip, the server's own load), runtime, prepare, the POST (round trip, load, commit)."""
    parallel = max(P + H, G) if v > 0 else P + H
    return (L + A) + R + _work(v) + parallel + P + (L + A + C)


@pytest.mark.parametrize("kind", ["sql", "rest"])
def test_uncontended_commits_are_the_sum_of_their_parts(kind):
    """One writer, three commits: each the sum of its parts, the client's work growing with the table's version."""
    rec, _ = _run(_cfg(kind, commits=3))
    form = sql_uncontended if kind == "sql" else rest_uncontended
    assert list(rec.outcome) == ["committed"] * 3 and list(rec.attempts) == [1, 1, 1]
    assert list(rec.end_ms - rec.arrival_ms) == [form(v) for v in range(3)]
    first, second = rec.iloc[0], rec.iloc[1]
    if kind == "sql":     # two loads; reads: 2 metadata.json, the manifest's HEAD, the name's HEAD (+ parent list)
        assert (first.catalog_reads, first.gets, first.puts, first.lists) == (2, 4, 3, 1)
        assert (second.gets, second.manifest_lists_read) == (5, 1)
    else:                 # the client's load and the server's; the server writes metadata.json (a put)
        assert (first.catalog_reads, first.gets, first.puts, first.lists) == (2, 1, 3, 0)
    assert first.deletes == 0


def test_sql_lost_swap_retries_without_a_read_then_cleans_up():
    """Two writers start together: both pass commit_table's check, both swap, one wins. The loser reads nothing:
    it sleeps 100 ms, refreshes (row and metadata.json), prepares on version 1, commits, then deletes its first
    attempt's manifest and manifest list (3 requests each)."""
    rec, hist = _run(_cfg("sql", writers=2))
    win, lose = rec.iloc[0], rec.iloc[1]
    assert win.end_ms - win.arrival_ms == sql_uncontended(0)
    retry = 100 + (L + G) + (1 - SHARE) * _work(1) + max(P + H, G) + P + (L + G) + SHARE * _work(1) + (H + LS + P) + L
    assert (lose.outcome, lose.attempts) == ("committed", 2)
    assert lose.end_ms - lose.arrival_ms == sql_uncontended(0) + retry + CLEANUP
    assert (lose.catalog_reads, lose.deletes, lose.backoff_ms) == (4, 2, 100.0)
    mine = hist[hist.txn == lose.txn]
    assert list(mine.kind) == ["begin", "read", "prepare", "read", "cas", "read", "prepare", "read", "cas", "end"]
    lost, refresh = mine.iloc[4], mine.iloc[5]
    assert not lost.ok and refresh.time_ms - lost.answer_ms == 100 + L / 2     # no read between: the sleep


def test_sql_retries_off_loser_deletes_its_files():
    """Retries off: the loser's one failed attempt is given up, after deleting its manifest and manifest list."""
    rec, _ = _run(_cfg("sql", writers=2, **{"commit.max_retries": 0}))
    lose = rec.iloc[1]
    assert (lose.outcome, lose.reason, lose.attempts) == ("aborted", "retries_exhausted", 1)
    assert lose.end_ms - lose.arrival_ms == sql_uncontended(0) + CLEANUP and lose.deletes == 2


def test_sql_moved_table_fails_the_requirement_before_writing():
    """A commit that lands between a job's load and its commit_table's load fails commit_table's requirement:
    after that load and its metadata.json read, with no metadata.json written."""
    gap = 40.0
    rec, _ = _run(_two_arrivals(_cfg("sql"), gap))
    first, second = rec.iloc[0], rec.iloc[1]
    assert second.arrival_ms - first.arrival_ms == gap
    at_check = (L + G) + R + (1 - SHARE) * _work(0) + (P + H) + P + (L + G) + SHARE * _work(0)
    retry = 100 + (L + G) + (1 - SHARE) * _work(1) + max(P + H, G) + P + (L + G) + SHARE * _work(1) + (H + LS + P) + L
    assert second.end_ms - second.arrival_ms == at_check + retry + CLEANUP
    assert (second.attempts, second.puts, second.lists) == (2, 5, 1)   # the first attempt wrote no metadata.json


def test_rest_lost_cas_server_sleeps_then_409():
    """SeaweedFS: both POSTs pass the server's check, the first CAS wins; the loser's server deletes its staged
    metadata.json (a local step), sleeps 50 ms, re-loads and answers 409; the client sleeps 100 ms, refreshes,
    prepares and POSTs again, then deletes its first attempt's files."""
    rec, hist = _run(_cfg("rest", writers=2))
    win, lose = rec.iloc[0], rec.iloc[1]
    assert win.end_ms - win.arrival_ms == rest_uncontended(0)
    t409 = rest_uncontended(0) - L / 2 + A + 50 + A + L / 2
    retry = 100 + (L + A) + _work(1) + max(P + H, G) + P + (L + A + C)
    assert lose.end_ms - lose.arrival_ms == t409 + retry + CLEANUP
    assert (lose.attempts, lose.catalog_reads, lose.deletes, lose.puts, lose.backoff_ms) == (2, 5, 3, 6, 100.0)
    mine = hist[hist.txn == lose.txn]
    lost = mine[mine.kind == "cas"].iloc[0]
    reload = mine.iloc[list(mine.kind).index("cas") + 1]
    assert not lost.ok and reload.kind == "read" and reload.time_ms - lost.time_ms == A + 50


def test_rest_early_409_at_the_servers_load():
    """A commit that lands before a POST reaches the server fails it at the server's load: 409 after the load,
    nothing written."""
    rec, _ = _run(_two_arrivals(_cfg("rest"), 20.0))
    second = rec.iloc[1]
    t409 = (L + A) + R + _work(0) + (P + H) + P + (L + A)
    retry = 100 + (L + A) + _work(1) + max(P + H, G) + P + (L + A + C)
    assert second.end_ms - second.arrival_ms == t409 + retry + CLEANUP
    assert (second.attempts, second.puts, second.deletes) == (2, 5, 2)


def test_client_work_in_the_java_prepare():
    """`commit.client_work` with Iceberg's Java client: its prepare takes the work too (0 by default)."""
    d = {"design": "service-pointer", "catalog": {"latency_ms": L}, "storage": {"provider": PROVIDER},
         "io": {"manifest_list_bytes": 0, "table_metadata_bytes": 0}, "duration_ms": 10_000, "warmup_ms": 0,
         "cooldown_ms": 1_000, "drain_limit_ms": 10_000,
         "workload": {"writers": {"count": 1, "commits": 2}, "runtime": {"median_ms": R, "sigma": 0, "min_ms": 0}}}
    plain, _ = _run(d)
    _set(d, "commit.client_work", {"base_ms": BASE_W, "per_version_ms": PER_V})
    worked, _ = _run(d)
    spent = (worked.end_ms - worked.arrival_ms) - (plain.end_ms - plain.arrival_ms)
    assert list(spent) == [_work(0), _work(1)]


def test_linear_retry_and_the_seaweedfs_preset():
    """SeaweedFS's server sleeps 50 ms x attempt + U[0, 25) ms (policy linear) before each of its 2 retries."""
    kind, jitter, table = delay_table(RetryPolicy(policy="linear", base_ms=50.0, max_ms=1000.0, jitter=0.5), 2)
    assert list(table[:3]) == [0.0, 50.0, 100.0] and jitter == 0.5
    d = _cfg("rest")
    d["catalog"]["server"].pop("retry")
    srv = from_dict(d).catalog.server
    assert (srv.retries, srv.retry.policy, srv.retry.base_ms, srv.retry.jitter) == (2, "linear", 50.0, 0.5)
    assert (srv.metadata_get, srv.delete_on_conflict, srv.reread_before_cas) == (False, True, False)


@pytest.mark.parametrize("path, value, message", [
    ("catalog.server.load_latency", None, "load_latency"),
    ("catalog.server.pool_connections", 4, "pool_connections"),
    ("catalog.server.metadata_get", True, "metadata_get"),
])
def test_local_server_rules(path, value, message):
    d = _cfg("rest")
    if value is None:
        d["catalog"]["server"].pop("load_latency")
    else:
        _set(d, path, value)
    with pytest.raises(ConfigError, match=message):
        from_dict(d)


@pytest.mark.parametrize("over, message", [
    ({"commit.reread_before_cas": False}, "reread_before_cas"),
    ({"workload.fast_append_ratio": 0.5}, "FastAppends"),
    ({"catalog.table_metadata_inlined": True}, "inlined"),
])
def test_pyiceberg_rules(over, message):
    with pytest.raises(ConfigError, match=message):
        from_dict(_cfg("sql", **over))


def test_commit_share_only_with_sqlcatalog():
    d = _cfg("rest")
    _set(d, "commit.client_work.commit_share", 0.2)
    with pytest.raises(ConfigError, match="commit_share"):
        from_dict(d)


def test_pyiceberg_first_attempt_is_stale():
    assert from_dict(_cfg("sql")).commit.first_attempt == "stale"


def test_defaults_leave_configs_unchanged():
    """The new keys at their defaults keep a config's hash (late keys)."""
    from sim.config import config_hash
    d = {"design": "service-pointer", "catalog": {"latency_ms": L}}
    e = copy.deepcopy(d)
    e["commit"] = {"client": "java", "client_work": {"base_ms": 0.0}}
    e["catalog"]["latency_ms"] = L
    assert config_hash(from_dict(d)) == config_hash(from_dict(e))
    assert np.isfinite(sql_uncontended(0))


def test_seaweedfs_steps_grow_with_the_table():
    """`load_per_version_ms` and `commit_per_version_ms`: the client's load, the POST's load and its commit each grow
    with the table's version at the time."""
    lpv, cpv = 0.5, 1.5
    rec, _ = _run(_cfg("rest", commits=3, **{"catalog.server.load_per_version_ms": lpv,
                                             "catalog.server.commit_per_version_ms": cpv}))
    assert list(rec.end_ms - rec.arrival_ms) == [rest_uncontended(v) + (2 * lpv + cpv) * v for v in range(3)]


def test_client_work_spread_is_a_lognormal_factor_of_median_one():
    """`client_work.sigma`: each attempt's work is its line times a lognormal factor, median 1, log sd sigma (200
    commits of one writer; tolerances about 4 standard errors)."""
    n, sigma = 200, 0.3
    d = _cfg("rest", commits=n, **{"commit.client_work.sigma": sigma, "commit.client_work.per_version_ms": 0.0,
                                   "duration_ms": 100_000, "drain_limit_ms": 100_000})
    rec, _ = _run(d)
    spent = (rec.end_ms - rec.arrival_ms).to_numpy() - np.array([rest_uncontended(v) - _work(v) for v in range(n)])
    logs = np.log(spent / BASE_W)
    assert abs(np.median(logs)) < 0.1 and abs(np.std(logs) / sigma - 1) < 0.2


def test_testbed_mappings_give_configs_the_model_runs():
    """The testbed's stack mappings (`model_config`) from a profile of the calibration's form load and run; the
    client's work is fitted as its line and spread (`client_work`)."""
    from sim.testbed.cell import CellSpec, Delay
    from sim.testbed.stacks import iceberg_rest, iceberg_sql
    from sim.testbed.stacks.pyiceberg_calibration import _at_version_0, client_work
    rng = np.random.default_rng(1)
    rows = [{"k": k, "work_ms": (30 + 2 * k) * float(np.exp(0.2 * rng.standard_normal())), "in_commit_ms": 10.0}
            for k in range(40)]
    work = client_work(rows, sql=True)
    assert abs(work["per_version_ms"] - 2) < 0.5 and abs(work["sigma"] - 0.2) < 0.08 and 0 < work["commit_share"] < 1
    slope, at0 = _at_version_0(np.arange(40.0), 5 + 0.5 * np.arange(40.0), 0.0)
    assert abs(slope - 0.5) < 1e-9 and np.allclose(at0, 5.0)
    lat = {"fixed_ms": 5.0, "median_ms": 2.0, "sigma": 0.3}
    rt = {"median_ms": 50.0, "sigma": 0.1, "min_ms": 40.0}
    spec = CellSpec(stack="iceberg-sql", writers=2, commits=2, delay=Delay(5.0, 0.5, 0.5), retries=True)
    for mod, prof in ((iceberg_sql, {"provider": PROVIDER, "catalog_latency": lat, "runtime": rt,
                                     "client_work": work}),
                      (iceberg_rest, {"provider": PROVIDER, "catalog_latency": lat, "load_latency": lat,
                                      "commit_latency": lat, "load_per_version_ms": 0.1,
                                      "commit_per_version_ms": 0.3, "runtime": rt,
                                      "client_work": {k: v for k, v in work.items() if k != "commit_share"}})):
        d = mod.model_config(prof, spec)
        d.update(duration_ms=10_000, warmup_ms=0, cooldown_ms=1_000, drain_limit_ms=10_000)
        d["workload"]["writers"] = {"count": 2, "commits": 2}
        rec, _ = _run(d)
        assert len(rec) == 4 and (rec.outcome == "committed").sum() >= 3


def test_pyiceberg_postgres_round_trips_and_the_row_held_to_commit():
    """Design pyiceberg-postgres: each load and the swap three round trips (the latency one); two writers' UPDATEs
    meet: the first holds the row to its COMMIT, the second waits for it (one round trip), fails, and its ROLLBACK
    answers it; then the sleep and a retry whose operations are round trips too."""
    d = _cfg("sql", writers=2)
    d["design"] = "pyiceberg-postgres"
    rec, hist = _run(d)
    win, lose = rec.iloc[0], rec.iloc[1]
    uncontended = sql_uncontended(0) + 6 * L
    assert win.end_ms - win.arrival_ms == uncontended
    retry = (3 * L + G) + (1 - SHARE) * _work(1) + max(P + H, G) + P + (3 * L + G) + SHARE * _work(1) \
        + (H + LS + P) + 3 * L
    assert lose.end_ms - lose.arrival_ms == uncontended + L + 100 + retry + CLEANUP
    assert (lose.attempts, lose.lock_wait_ms, lose.deletes) == (2, L, 2)


def _marker_provider(tmp_path, window_ms: float, poll_ms: float) -> str:
    """The constant provider with a lock per directory marker (SeaweedFS 4.48's; `sim.testbed.marker_lock`)."""
    prov = tmp_path / "marker_lock.yaml"
    prov.write_text(Path(PROVIDER).read_text() + f"marker_lock_window_ms: {window_ms}\nmarker_lock_poll_ms: {poll_ms}\n")
    return str(prov)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_two_losers_cleaning_up_together_one_waits_the_marker_locks_poll(tmp_path, engine):
    """Retries off, three writers start together: one commits, two lose at the same moment and clean up together
    (HEAD, DELETE, marker PUT per file, all constant). Their first marker PUTs reach the store at the same instant:
    with a marker lock one of them waits exactly one poll, its second PUT then clear of the other's; without one
    (or with another client) both end together. Both engines, the same records."""
    from sim.engines import make_engine
    POLL = 1000.0

    def run(provider):
        cfg = from_dict(_cfg("sql", writers=3, **{"commit.max_retries": 0, "storage.provider": provider}))
        return make_engine(cfg, 0, False, engine).run().records_frame().sort_values("end_ms").reset_index(drop=True)
    rec = run(_marker_provider(tmp_path, 0.5, POLL))
    lost = rec[rec.outcome == "aborted"]
    assert len(lost) == 2 and (lost.end_ms - lost.arrival_ms).tolist() == [sql_uncontended(0) + CLEANUP,
                                                                          sql_uncontended(0) + CLEANUP + POLL]
    plain = run(PROVIDER)
    assert (plain[plain.outcome == "aborted"].end_ms - plain.arrival_ms.iloc[0]).nunique() == 1
    committed = rec[rec.outcome == "committed"]
    assert committed.end_ms.tolist() == plain[plain.outcome == "committed"].end_ms.tolist()


def test_a_marker_lock_is_given_whole(tmp_path):
    """The window and the poll go together: one alone is an error naming the key."""
    from sim.providers import ProviderError, load_provider
    prov = tmp_path / "half.yaml"
    prov.write_text(Path(PROVIDER).read_text() + "marker_lock_window_ms: 0.5\n")
    with pytest.raises(ProviderError, match="marker_lock_window_ms: give it with marker_lock_poll_ms"):
        load_provider(str(prov), "measured")
    assert load_provider(_marker_provider(tmp_path, 0.5, 1000.0), "measured").marker_lock_poll_ms == 1000.0
