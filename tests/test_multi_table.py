"""Commits over several tables (`workload.multi_table`; sim/model/designs/rest_tx.py, DuckLake through
sim/model/catalog.py; docs/model/multi-table.md): the draw of each commit's tables, the REST servers' multi-table
commit in closed form with constant latencies (Polaris table by table, Lakekeeper's bulk UPDATE), a conflict only
where tables meet, Polaris's deadlock between opposite table orders, DuckLake's global collision, busy runs under
the checker, and the keys' rules."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from sim.checker import check_history
from sim.config import ConfigError, config_hash, from_dict
from sim.engines.fast import FastEngine
from sim.engines.simpy_engine import SimPyEngine
from sim.model.sources import OtherTables
from sim.providers import load_provider
from sim.rules import checker_rules
from sim.run import run
from sim.workload import TableChoice

PROVIDER = str(Path(__file__).resolve().parent / "data" / "server_constant.yaml")
L, G, Q, P, R = 10.0, 3.0, 5.0, 13.0, 100.0   # database op, GET (and DELETE), manifest-list PUT, metadata PUT, runtime
NO_JITTER = {"policy": "exponential", "base_ms": 100, "jitter": 0}
SERVERS = {"polaris": {"design": "rest", "catalog": {"latency_ms": L, "server": {"variant": "polaris"}}},
           "lakekeeper": {"design": "rest-lakekeeper",
                          "catalog": {"latency_ms": L, "server": {"variant": "lakekeeper",
                                                                  "retry": {"policy": "exponential", "base_ms": 50,
                                                                            "jitter": 0}}}},
           "nessie": {"design": "rest", "catalog": {"latency_ms": L, "server": {"variant": "nessie"}}},
           "reference": {"design": "rest", "catalog": {"latency_ms": L, "server": {"variant": "reference"}}}}


def _cfg(design: dict, tables: int, k: int, writers: int = 2, seed: int = 0) -> dict:
    d = {**copy.deepcopy(design), "storage": {"provider": PROVIDER}, "seed": seed,
         "io": {"manifest_list_bytes": 0, "table_metadata_bytes": 1 << 20},
         "duration_ms": 10_000, "warmup_ms": 0, "cooldown_ms": 1_000, "drain_limit_ms": 10_000,
         "retry": {"catalog": NO_JITTER, "table": NO_JITTER},
         "workload": {"num_tables": tables, "multi_table": {"tables": k},
                      "writers": {"count": writers, "commits": 1},
                      "runtime": {"median_ms": R, "sigma": 0, "min_ms": 0}}}
    return d


def _run(d: dict, engine=SimPyEngine):
    cfg = from_dict(d)
    eng = engine(cfg, 0, record_history=True).run()
    hist = eng.history_frame()
    assert check_history(hist, **checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))) == []
    return eng.records_frame().sort_values("txn").reset_index(drop=True), hist


def _tables_of(hist, txn) -> list[int]:
    """A transaction's tables in the order its client loaded them (its reads; DuckLake's one read of the database
    names its first table, its commit's `landed` rows the others)."""
    rows = hist[(hist.txn == txn) & hist.kind.isin(["read", "landed"])]
    return list(dict.fromkeys(rows.table))


def _seeded(design: dict, tables: int, k: int, wanted) -> tuple:
    """The first seed whose two writers' table lists satisfy `wanted(first, second)`: its records and history, the
    same on both engines (the search runs the SimPy engine; the seed found runs the fast one too)."""
    for seed in range(200):
        rec, hist = _run(_cfg(design, tables, k, seed=seed))
        a, b = (_tables_of(hist, t) for t in rec.txn)
        if wanted(a, b):
            fast_rec, fast_hist = _run(_cfg(design, tables, k, seed=seed), FastEngine)
            assert fast_rec.equals(rec) and fast_hist.equals(hist)
            return rec, hist, a, b
    raise AssertionError("no seed in 0..199 draws such tables")


# ------------------------------------------------------------------------------------------ the draw

def test_other_tables_are_distinct_and_drawn_without_replacement_by_weight():
    """The Gumbel top-k is sequential sampling without replacement: the second table is t with probability
    p_t / (1 - p_first). 200,000 draws on Zipf(1.2) over 6 tables, within 4 standard errors each."""
    choice = TableChoice(6, 1.2)
    p = choice.probabilities()
    first = np.random.default_rng(1).choice(6, size=200_000, p=p)
    k, more = OtherTables(type("MT", (), {"tables": 3, "distribution": "fixed"}), choice,
                          np.random.default_rng(2)).draw(first)
    more = more.reshape(-1, 2)
    assert (k == 3).all() and (more[:, 0] != first).all() and (more[:, 1] != first).all()
    assert (more[:, 0] != more[:, 1]).all()
    for f in range(6):
        rows = more[first == f, 0]
        expected = np.where(np.arange(6) == f, 0.0, p / (1 - p[f]))
        got = np.bincount(rows, minlength=6) / len(rows)
        se = np.sqrt(expected * (1 - expected) / len(rows))
        assert np.all(np.abs(got - expected) <= 4 * se + 1e-12), (f, got, expected)


def test_uniform_count_spans_one_to_tables():
    k, more = OtherTables(type("MT", (), {"tables": 4, "distribution": "uniform"}), TableChoice(8),
                          np.random.default_rng(3)).draw(np.zeros(40_000, dtype=np.int64))
    counts = np.bincount(k, minlength=5)[1:] / len(k)
    assert np.all(np.abs(counts - 0.25) < 0.01)
    more = more.reshape(-1, 3)
    assert all((more[i, :k[i] - 1] >= 0).all() and (more[i, k[i] - 1:] == -1).all() for i in range(200))


def test_first_table_is_the_single_table_draw():
    """The other tables come from a stream of their own: each transaction's first table is the one a
    single-table run of the same seed draws."""
    one = _cfg(SERVERS["lakekeeper"], 5, 1, writers=0)
    one["workload"]["inter_arrival"] = {"distribution": "exponential", "mean_ms": 200}
    one["workload"].pop("writers")
    one["common_random_numbers"] = True   # (the workload's streams keyed by the seed, not the config)
    many = copy.deepcopy(one)
    many["workload"]["multi_table"] = {"tables": 3}
    a = SimPyEngine(from_dict(one), 0).run().records_frame().sort_values("txn")
    b = SimPyEngine(from_dict(many), 0).run().records_frame().sort_values("txn")
    assert len(a) == len(b) > 30 and (a.table.to_numpy() == b.table.to_numpy()).all()


# ------------------------------------------------------------------------------------------ the servers' commit

# one commit over 2 tables, alone: (its time, catalog reads, GETs, PUTs)
UNCONTENDED = {
    # 2 client loads (L + G each), runtime, 2 manifest lists (G + Q), per table the server's load (L + G) and PUT,
    # 2 UPDATEs, the COMMIT
    "polaris": (7 * L + 6 * G + 2 * Q + 2 * P + R, 4, 6, 4),
    # 2 client loads (no GET), runtime, 2 manifest lists, one load of both, both PUTs at once, the bulk UPDATE,
    # the COMMIT
    "lakekeeper": (5 * L + 2 * G + 2 * Q + P + R, 3, 2, 4),
    # 2 client loads (L + G each), runtime, 2 manifest lists, the server's one read of the contents, both PUTs at
    # once, its read of the branch's head, the CAS of the ref
    "nessie": (5 * L + 4 * G + 2 * Q + P + R, 4, 4, 4),
    # 2 client loads (L + G each), runtime, 2 manifest lists, per table the server's load and its transaction's
    # refresh (L + G each); then per table the commit's refresh (L + G), its PUT, the row's check and the UPDATE
    "reference": (12 * L + 10 * G + 2 * Q + 2 * P + R, 10, 10, 4),
}


@pytest.mark.parametrize("server", sorted(UNCONTENDED))
def test_uncontended_commit_is_the_sum_of_its_parts(server):
    rec, hist = _run(_cfg(SERVERS[server], 2, 2, writers=1))
    assert rec.equals(_run(_cfg(SERVERS[server], 2, 2, writers=1), FastEngine)[0])
    (row,) = rec.itertuples()
    end_ms, reads, gets, puts = UNCONTENDED[server]
    assert row.outcome == "committed" and row.attempts == 1
    assert row.end_ms - row.arrival_ms == end_ms
    assert (row.catalog_reads, row.gets, row.puts) == (reads, gets, puts)
    assert list(hist[hist.kind.isin(["cas", "landed"])].kind) == ["cas", "landed"]


@pytest.mark.parametrize("server", ["lakekeeper", "polaris", "reference"])   # (Nessie's: its ref, below)
def test_disjoint_tables_both_commit(server):
    rec, _, _, _ = _seeded(SERVERS[server], 4, 2, lambda a, b: not set(a) & set(b))
    assert list(rec.outcome) == ["committed", "committed"]
    assert (rec.end_ms - rec.arrival_ms == UNCONTENDED[server][0]).all() and (rec.lock_wait_ms == 0).all()


def test_nessie_rebases_over_other_tables_commits():
    """Two commits on disjoint tables at once: both read the branch's head, one CASes the ref first; the other's CAS
    loses, it sleeps U[5, 25) ms plus its attempt's time (2 L: Nessie subtracts the attempt's time with the wrong
    sign), reads the head again, finds no key of its own changed, and commits (one attempt for its client)."""
    rec, _, _, _ = _seeded(SERVERS["nessie"], 4, 2, lambda a, b: not set(a) & set(b))
    first, second = sorted(rec.itertuples(), key=lambda r: r.end_ms)
    assert first.outcome == second.outcome == "committed" and first.attempts == second.attempts == 1
    assert first.end_ms - first.arrival_ms == UNCONTENDED["nessie"][0]
    assert 4 * L + 5 <= second.end_ms - first.end_ms < 4 * L + 25


def test_nessie_fails_a_commit_whose_table_moved_at_its_retry():
    rec, _, _, _ = _seeded(SERVERS["nessie"], 2, 2, lambda a, b: a == b)
    win, lose = sorted(rec.itertuples(), key=lambda r: r.end_ms if r.outcome == "committed" else np.inf)
    assert win.outcome == "committed" and lose.outcome == "aborted" and lose.reason == "retries_exhausted"
    assert (lose.attempts, lose.deletes, lose.table_conflicts) == (1, 2, 1)


def test_nessie_one_table_commit_is_retried_by_its_client():
    """Nessie's one-table commit (variant nessie, no multi_table): two writers on one table at once, 4 L + 2 G + Q
    + P + R each alone (its load L + G, the runtime, the manifest list G + Q, Nessie's read L, the metadata PUT,
    the head's read and the ref's CAS). The first CAS of the ref wins; Nessie sleeps the other's lost CAS off and
    reads the head again: its table changed, a 409 after it DELETEs the file (G). Its client, Iceberg's, retries
    after 100 ms (retry.table): the load, a new manifest list, the POST, which commits (no runtime again)."""
    d = _cfg(SERVERS["nessie"], 1, 1)
    rec, hist = _run(d)
    assert rec.equals(_run(d, engine=FastEngine)[0])
    win, lose = sorted(rec.itertuples(), key=lambda r: r.end_ms)
    assert (win.outcome, win.attempts, win.end_ms - win.arrival_ms) == ("committed", 1, 4 * L + 2 * G + Q + P + R)
    assert (lose.outcome, lose.attempts, lose.table_conflicts, lose.deletes, lose.backoff_ms) == (
        "committed", 2, 1, 1, 100.0)
    lost = hist[(hist.txn == lose.txn) & (hist.kind == "cas") & ~hist.ok.astype(bool)]
    assert len(lost) == 1
    assert lose.end_ms == pytest.approx(lost.answer_ms.iloc[0] + G + 100 + 4 * L + 2 * G + Q + P)


# the same two tables in the same order, both transactions at once: one commits; the other's UPDATE waits for its
# first row until the winner's COMMIT, finds it changed and rolls back (DELETEs its 2 files); Polaris answers 409,
# Lakekeeper sleeps 50 ms, re-loads, and its requirement fails: 409. (end, lock wait, DELETEs)
LOSER = {"polaris": (7 * L + 8 * G + 2 * Q + 2 * P + R, 2 * L, 2),
         "lakekeeper": (6 * L + 4 * G + 2 * Q + P + R + 50, L, 2)}


@pytest.mark.parametrize("server", sorted(LOSER))
def test_overlapping_tables_the_later_aborts_once(server):
    rec, hist, _, _ = _seeded(SERVERS[server], 2, 2, lambda a, b: a == b)
    win, lose = sorted(rec.itertuples(), key=lambda r: r.end_ms if r.outcome == "committed" else np.inf)
    assert win.outcome == "committed" and win.end_ms - win.arrival_ms == UNCONTENDED[server][0]
    end_ms, waited, deletes = LOSER[server]
    assert lose.outcome == "aborted" and lose.reason == "retries_exhausted" and lose.attempts == 1
    assert lose.table_conflicts == 1 and win.table_conflicts == 0
    assert (lose.end_ms - lose.arrival_ms, lose.lock_wait_ms, lose.deletes) == (end_ms, waited, deletes)


@pytest.mark.parametrize("order", ["same", "opposite"])
def test_reference_server_drops_a_moved_tables_change_and_answers_204(order):
    """Iceberg's reference server checks every table's requirement, then commits each table's transaction in turn.
    Two commits over the same two tables at once both pass the checks; the first UPDATE of a table lands, the other's
    finds the row changed (CommitFailedException), sleeps 100 ms (Tasks), refreshes, finds the table moved, and has
    nothing left to commit (its updates were applied to the first pass's copy): its change to that table is dropped,
    and the answer is 204 all the same. In the same order the later commit lands nowhere; in opposite orders each
    lands on its first table only."""
    want = (lambda a, b: a == b) if order == "same" else (lambda a, b: a == b[::-1])
    rec, hist, a, b = _seeded(SERVERS["reference"], 2, 2, want)
    assert set(rec.reason) <= {"", "dropped"} and (rec.table_conflicts == 0).all()
    if order == "same":
        win, lose = sorted(rec.itertuples(), key=lambda r: -r.landed)
        assert (win.outcome, win.landed, win.attempts) == ("committed", 2, 1)
        assert (lose.outcome, lose.landed, lose.attempts) == ("partial", 0, 0)
        assert win.end_ms - win.arrival_ms == UNCONTENDED["reference"][0]
    else:
        assert list(rec.outcome) == ["partial", "partial"] and list(rec.landed) == [1, 1]
    assert not hist[hist.kind == "cas"].ok.eq(False).any()     # no failed CAS row: nothing told the client


def test_polaris_opposite_orders_deadlock_one_fails_after_deadlock_timeout():
    """Each transaction's first UPDATE locks its first table; each second UPDATE waits for the other's: PostgreSQL's
    check, `deadlock_timeout` (1 s) into the first wait, fails that statement (40P01) and Polaris answers 500; the
    other's UPDATE then gets its row, unchanged, and commits."""
    rec, hist, a, b = _seeded(SERVERS["polaris"], 2, 2, lambda a, b: a == b[::-1])
    (victim,) = rec[rec.outcome == "aborted"].itertuples()
    (other,) = rec[rec.outcome == "committed"].itertuples()
    assert victim.reason == "deadlock" and victim.attempts == 1 and victim.deletes == 2
    assert victim.table_conflicts == other.table_conflicts == 0
    assert victim.lock_wait_ms == other.lock_wait_ms == 1000.0 and victim.lock_timeouts == 1
    assert victim.end_ms - victim.arrival_ms == 7 * L + 8 * G + 2 * Q + 2 * P + R + 1000 - L
    assert other.end_ms - other.arrival_ms == UNCONTENDED["polaris"][0] + 1000
    gave_up = hist[hist.kind == "lock_timeout"]
    assert list(gave_up.txn) == [victim.txn]


def test_lakekeeper_locks_by_table_so_opposite_orders_do_not_deadlock():
    rec, _, a, b = _seeded(SERVERS["lakekeeper"], 2, 2, lambda a, b: a == b[::-1])
    assert sorted(rec.outcome) == ["aborted", "committed"] and set(rec.reason) == {"", "retries_exhausted"}
    assert rec.lock_wait_ms.max() == L


DUCKLAKE = {"design": "ducklake", "catalog": {"latency_ms": L}}


def test_ducklake_disjoint_tables_still_collide():
    """DuckLake inserts the next global snapshot id: two commits on disjoint tables collide; the loser re-reads
    (its tables did not move), sleeps its retry, and commits."""
    rec, hist, _, _ = _seeded(DUCKLAKE, 4, 2, lambda a, b: not set(a) & set(b))
    assert list(rec.outcome) == ["committed", "committed"]
    assert sorted(rec.attempts) == [1, 2] and sorted(rec.catalog_conflicts) == [0, 1]
    assert sorted(rec.table_conflicts) == [0, 0]
    assert (hist.kind == "landed").sum() == 2


# ------------------------------------------------------------------------------------------ busy runs

BUSY = {"polaris": SERVERS["polaris"], "lakekeeper": SERVERS["lakekeeper"], "nessie": SERVERS["nessie"],
        "reference": SERVERS["reference"], "ducklake": DUCKLAKE}


def _busy(design: dict) -> dict:
    d = {**copy.deepcopy(design), "duration_ms": 120_000, "warmup_ms": 10_000, "cooldown_ms": 10_000,
         "workload": {"num_tables": 5, "inter_arrival": {"distribution": "exponential", "mean_ms": 150},
                      "runtime": {"median_ms": 1000, "sigma": 0.5, "min_ms": 0},
                      "multi_table": {"tables": 3, "distribution": "uniform"}}}
    d["catalog"]["latency_ms"] = 10.0
    return d


@pytest.mark.parametrize("design", sorted(BUSY))
def test_busy_runs_hold_the_invariants(design):
    """Under load, the checker's invariants (a commit's every table unmoved since its client's load: invariant 1 on
    its CAS and landed rows; locks held while it commits; outcomes true to the rows)."""
    rec, hist = _run(_busy(BUSY[design]))
    assert len(rec) > 500 and (rec.outcome == "committed").sum() > 50
    if design != "ducklake":
        assert (rec.outcome == "aborted").sum() > 50


def test_busy_nessie_one_table_commits_hold_the_invariants():
    """Nessie's one-table commit under load: its client's retries (up to 5 attempts) land every commit whose
    attempts did not run out, and the checker holds every CAS to the table it loaded; both engines alike."""
    d = _busy(BUSY["nessie"])
    d["workload"]["multi_table"] = {"tables": 1}
    rec, hist = _run(d)
    assert rec.equals(_run(d, FastEngine)[0])
    began = rec[rec.outcome != "unfinished"]
    assert len(began) > 500 and (began.attempts > 1).sum() > 20 and began.attempts.max() <= 5
    assert (began[began.outcome == "aborted"].attempts == 5).all()


def test_slots_that_grow_keep_each_commits_tables():
    """A run that starts with 2 transaction slots (they double as commits pile up, each slot's tables and versions
    with them) gives the records of one that starts with room."""
    cfg = from_dict(_busy(BUSY["polaris"]))
    assert run(cfg, 0, engine="simpy", stream=False).records.equals(
        run(cfg, 0, engine="simpy", stream=False, slots=2).records)


# Polaris overloaded: 3 tables, every commit on all 3 in its own drawn order, 50 arrivals/s, jobs of ~50 ms on S3
# Express, a 5 ms database: its JDBC transactions hold their connections while they wait for row locks
OVERLOADED = {"design": "rest", "catalog": {"latency_ms": 5.0, "server": {"variant": "polaris"}},
              "duration_ms": 30_000, "warmup_ms": 5_000, "cooldown_ms": 5_000, "storage": {"provider": "s3x"},
              "workload": {"num_tables": 3, "inter_arrival": {"distribution": "exponential", "mean_ms": 20},
                           "runtime": {"median_ms": 50, "sigma": 0.5, "min_ms": 0}, "multi_table": {"tables": 3}}}


def test_overloaded_polaris_deadlocks_and_runs_out_of_connections():
    """Opposite orders meet in the UPDATE phase: PostgreSQL fails one of each cycle (`deadlock`); transactions that
    wait for rows keep their connections, so others give their wait for one up (`pool_timeout`). The checker holds
    every lock row (a deadlock's give-up is a `lock_timeout` that failed its attempt)."""
    rec, hist = _run(OVERLOADED)
    reasons = rec.reason.value_counts()
    assert reasons["deadlock"] > 20 and reasons["pool_timeout"] > 500 and reasons["retries_exhausted"] > 20
    gave_up = hist[hist.kind == "lock_timeout"]
    assert len(gave_up) == reasons["deadlock"] and (gave_up.attempts == 1).all()


@pytest.mark.slow
@pytest.mark.parametrize("design", sorted(BUSY))
def test_both_engines_give_the_same_busy_run(design):
    a_rec, a_hist = _run(_busy(BUSY[design]), SimPyEngine)
    b_rec, b_hist = _run(_busy(BUSY[design]), FastEngine)
    assert a_rec.equals(b_rec) and a_hist.equals(b_hist)


# ------------------------------------------------------------------------------------------ the keys

def test_one_table_keeps_every_result():
    assert config_hash(from_dict({})) == config_hash(from_dict({"workload": {"multi_table": {"tables": 1}}}))


@pytest.mark.parametrize("given, path, words", [
    ({"workload": {"num_tables": 4, "multi_table": {"tables": 2}}}, "workload.multi_table.tables",
     "needs a catalog with a multi-table commit"),
    ({**SERVERS["polaris"], "workload": {"num_tables": 2, "multi_table": {"tables": 3}}},
     "workload.multi_table.tables", "more tables than"),
    ({**SERVERS["polaris"], "workload": {"num_tables": 4, "fast_append_ratio": 0.9, "multi_table": {"tables": 2}}},
     "workload.multi_table.tables", "appends only"),
    ({"design": "rest-lakekeeper", "catalog": {"latency_ms": 10, "server": {"variant": "lakekeeper-0.9"}},
      "workload": {"num_tables": 4, "multi_table": {"tables": 2}}}, "workload.multi_table.tables", "lakekeeper-0.9"),
    ({"workload": {"multi_table": {"distribution": "uniform"}}}, "workload.multi_table.distribution", "remove it"),
    ({**SERVERS["nessie"], "workload": {"fast_append_ratio": 0.9}}, "catalog.server.variant", "appends only"),
])
def test_keys_rules(given, path, words):
    with pytest.raises(ConfigError) as err:
        from_dict(given)
    assert err.value.path == path and words in str(err.value)
