"""A catalog server's finite capacity (sim/model/capacity.py; docs/MODEL.md "Server capacity"): a pool of k
connections bounds throughput and queues what it cannot serve; Lakekeeper 0.9's row lock serialises one table's
commits and reaches another table only through the pool; Lakekeeper's server retry replayed from the history.
Constant latencies (tests/data/server_constant.yaml), so every figure is exact."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim.checker import check_history
from sim.config import ConfigError, from_dict
from sim.engines.fast import FastEngine
from sim.engines.simpy_engine import SimPyEngine
from sim.model.params import params_of
from sim.providers import load_provider
from sim.rules import checker_rules

PROVIDER = str(Path(__file__).resolve().parent / "data" / "server_constant.yaml")
S, G, Q, P = 10.0, 3.0, 5.0, 5.0   # a database request; GET; manifest-list PUT and metadata PUT (0 bytes)


def _cfg(variant: str, writers: int, tables: int, commits: int, retries: int = 4, **server) -> dict:
    """Closed-loop writers, no work between commits, writer w on table w mod `tables`; the client's `retries`."""
    return {"design": "rest-lakekeeper", "storage": {"provider": PROVIDER}, "commit": {"max_retries": retries},
            "catalog": {"latency_ms": S, "server": {"variant": variant, **server}},
            "io": {"manifest_list_bytes": 0, "table_metadata_bytes": 0},
            "duration_ms": 1e9, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": 1e9,
            "workload": {"num_tables": tables, "writers": {"count": writers, "commits": commits, "tables": "owned"},
                         "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}}


def _run(d: dict, history: bool = False):
    cfg = from_dict(d)
    eng = FastEngine(cfg, 0, record_history=history).run()
    if history:
        rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
        assert check_history(eng.history_frame(), **rules) == []
    return eng.records_frame(), eng.history_frame()


# each commit holds a connection of the server's pool for 3 s (Lakekeeper's load, s; then its commit transaction:
# the updates and the COMMIT, s each, on one connection); the client's loads take a read pool that never runs out;
# the rest of a commit (two loads, the prepare's GET and PUT, the metadata PUT) is Z = 2 S + G + Q + P
D = 3 * S
Z = 2 * S + G + Q + P


@pytest.mark.parametrize("k", [1, 2, 3])
def test_pool_bounds_throughput_and_queues_the_rest(k):
    """k connections, each request served in s: commits per ms never exceed k / D (D = 3 s a commit); once the
    pool is saturated every writer's commit takes N D / k, so k more writers add D (s per request) to it."""
    steady = {}
    for n in range(1, 5 * k + 1):
        rec, _ = _run(_cfg("lakekeeper", n, n, 60, pool_connections=k, read_pool_connections=100))
        assert (rec["outcome"] == "committed").all()             # one writer a table: nothing conflicts
        assert len(rec) / rec["end_ms"].max() <= k / D
        if n == 1:
            assert (rec["end_ms"] - rec["arrival_ms"] == Z + D).all() and (rec["pool_wait_ms"] == 0).all()
        mid = rec[(rec["txn"] >= len(rec) // 4) & (rec["txn"] < 3 * len(rec) // 4)]   # past the barrier start
        steady[n] = float((mid["end_ms"] - mid["arrival_ms"]).mean())
    for n in range(4 * k, 5 * k + 1):                            # saturated: k D / (Z + D) < 4 k writers
        assert steady[n] == pytest.approx(n * D / k, rel=1e-3)
    assert steady[5 * k] - steady[4 * k] == pytest.approx(D, rel=1e-2)


def _lakekeeper_09(k: int):
    """Lakekeeper 0.9 with k connections: writers 0 and 2 on table 0, writer 1 alone on table 1; client retries
    off (a transaction is one POST)."""
    return _run(_cfg("lakekeeper-0.9", 3, 2, 30, retries=0, pool_connections=k), history=True)


def test_row_lock_serialises_one_table():
    """Table 0's two writers: their transactions hold its row lock across the PUT, one at a time (the checker's
    invariant 7 on the recorded grants and releases: no two holders, grants in request order); a commit that
    waited for the lock finds the row changed and fails."""
    rec, hist = _lakekeeper_09(3)
    t0 = rec[rec["table"] == 0]
    waited = t0[t0["lock_wait_ms"] > 0]
    assert len(waited) > 0 and (waited["outcome"] == "aborted").all()
    assert (t0["lock_grants"] == t0["lock_requests"]).all()      # (no timeout: a row lock waits as long as needed)
    # each wait ends at a release of table 0's lock by another transaction, at that instant
    locks = hist[hist["kind"].str.startswith("lock") & (hist["table"] == 0)]
    releases = set(locks.loc[locks["kind"] == "lock_release", "time_ms"])
    asked = locks[locks["kind"] == "lock_request"].set_index("txn")["time_ms"]
    granted = locks[locks["kind"] == "lock_grant"].set_index("txn")["time_ms"]
    late = granted[granted > asked.reindex(granted.index)]
    assert len(late) == len(waited) and set(late) <= releases


@pytest.mark.parametrize("k", [1, 3])
def test_another_table_waits_only_for_the_pool(k):
    """Table 1's one writer never waits for a row lock: with a connection for every writer its commits take
    exactly their uncontended time; with one connection, exactly that plus their waits for it (table 0's
    transactions hold the connection across their PUT)."""
    rec, _ = _lakekeeper_09(k)
    t1 = rec[rec["table"] == 1]
    assert (t1["outcome"] == "committed").all() and (t1["lock_wait_ms"] == 0).all()
    uncontended = 2 * S + G + Q + S + P + S        # base load, refresh, prepare, load and updates, PUT, COMMIT
    assert (t1["end_ms"] - t1["arrival_ms"] - t1["pool_wait_ms"] == uncontended).all()
    assert (t1["pool_wait_ms"] > 0).any() == (k == 1)


@pytest.mark.parametrize("engine", [FastEngine, SimPyEngine])
def test_lakekeeper_update_waits_for_the_row_holders_commit(engine):
    """Lakekeeper >= 0.10 (PostgreSQL at READ COMMITTED): writers 0 and 2 commit to table 0 at the same instants,
    writer 1 to table 1. Table 0's first updates take the row lock and hold it to their COMMIT, S later; the second's
    updates wait for that COMMIT, then find the row changed and roll back (then the server's DELETE, retry and 409;
    client retries off). Table 1's commit waits for nothing and takes its uncontended time. Both engines give the
    same records, and the checker replays the lock's requests, grants and releases (invariant 7)."""
    cfg = from_dict(_cfg("lakekeeper", 3, 2, 1, retries=0, read_pool_connections=100))
    eng = engine(cfg, 0, record_history=True).run()
    hist = eng.history_frame()
    assert check_history(hist, **checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))) == []
    rec = eng.records_frame().set_index("writer")
    first, second, alone = rec.loc[0], rec.loc[2], rec.loc[1]
    assert first.outcome == "committed" and first.lock_wait_ms == 0 and first.lock_hold_ms == S
    assert second.outcome == "aborted" and second.lock_wait_ms == S and second.lock_grants == 1
    assert alone.outcome == "committed" and alone.lock_wait_ms == 0
    assert alone.end_ms - alone.arrival_ms == first.end_ms - first.arrival_ms == Z + D
    locks = hist[hist["kind"].str.startswith("lock") & (hist["table"] == 0)]
    release = locks[(locks["txn"] == first.txn) & (locks["kind"] == "lock_release")]["time_ms"].item()
    grant = locks[(locks["txn"] == second.txn) & (locks["kind"] == "lock_grant")]["time_ms"].item()
    check = hist[(hist["txn"] == second.txn) & (hist["kind"] == "cas")]
    assert grant == release and check["time_ms"].min() == grant and not check["ok"].astype(bool).any()
    other = FastEngine if engine is SimPyEngine else SimPyEngine
    assert other(cfg, 0, record_history=True).run().records_frame().equals(eng.records_frame())


def test_lakekeeper_server_retry_replayed_from_history():
    """Lakekeeper (>= 0.10): a commit whose database check fails DELETEs its metadata.json (a GET's latency here),
    sleeps 50 + U(0, 25) ms and re-loads (a server retry: at most 2, tables.rs:104); the re-check then fails (the
    table moved), a 409, which the server does not retry: the client's own sleep (100 ms and more) comes next. A
    failed requirement at the first load is a 409 at once, never retried by the server. The second retry (100 +
    U(0, 50) ms) follows only a re-check that passes, which never happens to appends to one branch: its sleep is
    held in the delay table."""
    d = _cfg("lakekeeper", 4, 1, 40)
    d["retry"] = {"table": {"policy": "exponential", "base_ms": 100}}
    rec, hist = _run(d, history=True)
    locks = hist[hist["kind"].str.startswith("lock")]
    released = set(locks.loc[locks["kind"] == "lock_release", "time_ms"])
    sleeps, early, waited = [], 0, 0
    for _, rows in hist[(hist["kind"] != "begin") & ~hist["kind"].str.startswith("lock")].groupby("txn"):
        rows = rows.sort_values("i").reset_index(drop=True)
        for n in np.flatnonzero((rows["kind"] == "cas") & ~rows["ok"].astype(bool)):
            refresh, lost, after = rows.iloc[n - 2], rows.iloc[n], rows.iloc[n + 1]
            assert rows.iloc[n - 1]["kind"] == "prepare" and refresh["kind"] == "read"
            since = lost["time_ms"] - refresh["answer_ms"]
            at_load = abs(since - (G + Q + S / 2)) < 1e-9                # a 409 at the load, or at the commit
            at_once = abs(since - (G + Q + S + P + S / 2)) < 1e-9       # ... its updates' check at once, or after
            assert at_load or at_once or (since > G + Q + S + P + S / 2 and lost["time_ms"] in released)  # a wait
            waited += not (at_load or at_once)
            gap = after["time_ms"] - lost["answer_ms"] - S / 2
            if at_load:                                                  # the requirement failed: the client sleeps
                early += 1
                assert after["kind"] == "end" or gap >= 100.0
                continue
            assert after["kind"] == "read" and after["version"] != lost["expected"]   # the re-load: 409
            sleeps.append(gap - G)                                  # after the DELETE
            nxt = rows.iloc[n + 2]
            assert nxt["kind"] == "end" or nxt["time_ms"] - after["answer_ms"] - S / 2 >= 100.0   # no 2nd retry
    assert early > 10 and len(sleeps) > 10 and waited > 10   # not vacuous
    assert 50.0 <= min(sleeps) and max(sleeps) < 75.0 and max(sleeps) - min(sleeps) > 15.0
    assert rec["deletes"].sum() == len(sleeps)                       # one DELETE a lost commit
    _, delays = params_of(from_dict(d), False)
    assert list(delays.server[1:3]) == [50.0, 100.0] and from_dict(d).catalog.server.retry.jitter == 0.5


def test_pool_acquire_timeout_fails_the_transaction():
    """Six writers on six tables ask Lakekeeper's one write connection at once (each request holds it S): the i-th
    in line would get it after (i - 1) S, so with an acquire timeout of 2.5 S the 4th, 5th and 6th give up 2.5 S
    after they asked (sqlx's PoolTimedOut, a 500 the client does not retry): aborted, `pool_timeout`, no attempt
    and, at the server's load, no DELETE. The first three's commit transactions (updates and COMMIT, 2 S each) then
    queue for the one connection: the second's waits the timeout too and gives up after its PUT (DELETE, 500); the
    others commit."""
    timeout = 2.5 * S
    t0 = 2 * S + G + Q                                       # base load, refresh, prepare: the POST's load asks
    rec, _ = _run(_cfg("lakekeeper", 6, 6, 1, retries=0, pool_connections=1, read_pool_connections=100,
                       acquire_timeout_ms=timeout), history=True)
    rec = rec.sort_values("pool_wait_ms")
    gave_up = rec[rec["reason"] == "pool_timeout"]
    assert len(gave_up) == 4 and (gave_up["outcome"] == "aborted").all()
    assert (gave_up["pool_wait_ms"] >= timeout).all() and (gave_up["attempts"] == 0).all()
    at_load = gave_up[gave_up["deletes"] == 0]
    assert len(at_load) == 3 and (at_load["end_ms"] - at_load["arrival_ms"] == t0 + timeout).all()
    assert (at_load["pool_wait_ms"] == timeout).all()
    done = rec[rec["reason"] != "pool_timeout"]
    assert (done["outcome"] == "committed").all() and (done["pool_wait_ms"] < 2 * timeout).all()


def test_pool_timeout_after_the_put_deletes_the_file():
    """Under a load that keeps the queue long, some requests give up at the server's CAS, after its PUT: Lakekeeper
    DELETEs the metadata.json it wrote (tables.rs:1810-1825) before its 500; one that gave up at its load wrote
    nothing. The reference server's pool (ClientPoolImpl) has no timeout: its requests wait as long as they must."""
    rec, _ = _run(_cfg("lakekeeper", 12, 12, 10, retries=0, pool_connections=1, read_pool_connections=100,
                       acquire_timeout_ms=4 * S), history=True)
    gave_up = rec[rec["reason"] == "pool_timeout"]
    after_put = gave_up[gave_up["deletes"] == 1]
    assert len(after_put) > 0 and len(gave_up) > len(after_put)          # both kinds: not vacuous
    assert (after_put["puts"] == 2).all() and (gave_up.loc[gave_up["deletes"] == 0, "puts"] == 1).all()
    ref = from_dict(_cfg("reference", 12, 12, 10, retries=0, pool_connections=1))
    assert ref.catalog.server.acquire_timeout_ms is None and params_of(ref, False)[0].pool_timeout_ms == 0.0
    rec, _ = _run(_cfg("reference", 12, 12, 10, retries=0, pool_connections=1))
    assert (rec["reason"] != "pool_timeout").all() and rec["pool_wait_ms"].max() > 4 * S


def test_variants_and_their_rules():
    """Each variant's capacity as its source sets it; the JDBC catalog is named and sent to its design."""
    cfg = {"design": "rest", "catalog": {"latency_ms": 5}}
    pools = {}
    for variant in ("reference", "polaris", "lakekeeper", "lakekeeper-0.9"):
        srv = from_dict({**cfg, "catalog": {"latency_ms": 5, "server": {"variant": variant}}}).catalog.server
        pools[variant] = (srv.pool_connections, srv.read_pool_connections, srv.acquire_timeout_ms, srv.lock_scope)
    assert pools == {"reference": (2, None, None, "statement"), "polaris": (20, None, 5000.0, "statement"),
                     "lakekeeper": (5, 10, 5000.0, "transaction"), "lakekeeper-0.9": (5, 10, 5000.0, "metadata_write")}
    with pytest.raises(ConfigError, match="service-pointer"):
        from_dict({**cfg, "catalog": {"latency_ms": 5, "server": {"variant": "jdbc"}}})
    with pytest.raises(ConfigError, match="catalog.server.reread_before_cas"):
        from_dict({**cfg, "catalog": {"latency_ms": 5, "server": {"variant": "lakekeeper-0.9",
                                                                   "reread_before_cas": True}}})
    with pytest.raises(ConfigError, match="catalog.server.pool_connections"):
        from_dict({**cfg, "catalog": {"latency_ms": 5, "server": {"variant": "polaris", "pool_connections": 0}}})


# ------------------------------------------------------------------------------------------ HMS's NEXT_LOCK_ID row

def _hive(writers: int, share: float, commits: int = 40) -> dict:
    """Iceberg on HMS (design hive): closed-loop writers, writer w on its own table w (no table lock is ever
    contended), no work between commits; every lock() holds the metastore's one NEXT_LOCK_ID row `share` of its
    round trip S."""
    return {"design": "hive", "storage": {"provider": PROVIDER}, "catalog": {"latency_ms": S},
            "lock": {"next_lock_id_share": share}, "io": {"manifest_list_bytes": 0, "table_metadata_bytes": 0},
            "duration_ms": 1e9, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": 1e9,
            "workload": {"num_tables": writers, "writers": {"count": writers, "commits": commits, "tables": "owned"},
                         "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}}


def test_hms_row_default_share_and_one_writer_unchanged():
    """The row's default hold is 3 of the lock() RPC's 9 database round trips (its enqueue's SELECT ... FOR
    UPDATE to its COMMIT); within the RPC's answer (1 - f of it), so one writer's commits take what they took
    without the row, to the bit, and never wait for it."""
    assert from_dict({"design": "hive", "catalog": {"latency_ms": S}}).lock.next_lock_id_share == 3 / 9
    with_row, _ = _run(_hive(1, 3 / 9), history=True)
    without, _ = _run(_hive(1, 0.0))
    assert (with_row["pool_wait_ms"] == 0).all()
    assert (with_row["end_ms"].to_numpy() == without["end_ms"].to_numpy()).all()


def test_hms_row_serialises_every_tables_lock_calls():
    """N writers on N different tables share one NEXT_LOCK_ID row, each lock() holding it h = share x S: lock()
    calls (one a commit here) never exceed 1 / h a ms; once the row is saturated (N h above a commit's C) every
    commit takes N h: N more writers add N h, where without the row nothing would queue."""
    _serialised(lambda n, on: _hive(n, 0.45 if on else 0.0), 0.45 * S)


def _serialised(make, h: float):
    """N writers on N tables, one lock() a commit, each holding a metastore-wide unit (`make(n, True)`; without it:
    `make(n, False)`) h: at most 1 / h a ms; saturated (N h above a commit's C) every commit takes N h."""
    one, _ = _run(make(1, True))
    c = float((one["end_ms"] - one["arrival_ms"]).iloc[0])
    for n in (2, 8, 16, 24, 32):
        rec, _ = _run(make(n, True), history=n == 24)
        assert (rec["outcome"] == "committed").all() and (rec["lock_requests"] == 1).all()
        assert len(rec) / rec["end_ms"].max() <= 1 / h + 1e-12
        free, _ = _run(make(n, False))
        assert (free["pool_wait_ms"] == 0).all()
        mid = rec[(rec["txn"] >= len(rec) // 4) & (rec["txn"] < 3 * len(rec) // 4)]
        latency = (mid["end_ms"] - mid["arrival_ms"]).mean()
        if n * h > 1.2 * c:                                   # saturated: the unit is the bottleneck
            assert latency == pytest.approx(n * h, rel=0.02)
            assert mid["pool_wait_ms"].mean() > 0
            assert len(rec) / rec["end_ms"].max() >= 0.95 / h and len(free) / free["end_ms"].max() > 1.3 / h
        else:
            assert latency < 1.2 * c


@pytest.mark.parametrize("d, path", [
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"next_lock_id_share": 1.0}}, "lock.next_lock_id_share"),
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"discipline": "fifo_notify"}},
     "lock.next_lock_id_share"),
    ({"design": "hudi", "lock": {"latency_ms": 5, "next_lock_id_share": 0.3}}, "lock.next_lock_id_share"),
])
def test_hms_row_config_errors(d, path):
    with pytest.raises(ConfigError) as err:
        from_dict(d)
    assert str(err.value).startswith(path)


# ------------------------------------------------------------------------------------------ Hive 3's checkLock mutex

def _hive3(writers: int, mutex: float | None, tables: int | None = None, row: float = 0.0, commits: int = 40) -> dict:
    """`_hive` under Hive 3 (`lock.hms_version: 3`): every checkLock holds the metastore's checkLock mutex `mutex`
    of its round trip S (None: version 4, no mutex); the NEXT_LOCK_ID row `row` (0: not modelled, the mutex alone);
    `tables` tables (default: one a writer), writer w on table w mod `tables`."""
    d = _hive(writers, row, commits)
    if mutex is not None:
        d["lock"].update(hms_version=3, check_lock_mutex_share=mutex)
    if tables is not None:
        d["workload"].update(num_tables=tables, writers={"count": writers, "commits": commits, "tables": "owned"})
    return d


def test_hms3_config_default_and_hash():
    """Version 4 is the default and hashes as before the key; version 3 fills in the mutex's hold, 7 of a Hive 3
    lock()'s 13 database round trips."""
    from sim.config.hashing import config_hash
    base = {"design": "hive", "catalog": {"latency_ms": S}}
    assert from_dict(base).lock.hms_version == 4 and from_dict(base).lock.check_lock_mutex_share is None
    assert config_hash(from_dict(base)) == config_hash(from_dict({**base, "lock": {"hms_version": 4}}))
    three = from_dict({**base, "lock": {"hms_version": 3}})
    assert three.lock.check_lock_mutex_share == 7 / 13
    assert config_hash(three) != config_hash(from_dict(base))


def test_hms3_mutex_serialises_every_tables_checklocks():
    """N writers on N different tables (no table lock contended: one lock() a commit, no poll) share Hive 3's
    mutex, each checkLock holding it h = share x S: checkLocks never exceed 1 / h a ms; once it is saturated (N h
    above a commit's C) every commit takes N h, the wait recorded in `pool_wait_ms`. Version 4: nothing queues."""
    _serialised(lambda n, on: _hive3(n, 0.45 if on else None), 0.45 * S)


def test_hms3_row_then_mutex_one_writer():
    """One writer: a lock() holds the row (3/9 of S) then the mutex (7/13 of S), 0.87 S from its effect point in
    all, which ends before its next request's effect point (the rest of its round trip and f of the next, S): it
    never waits, and its commits take what they took under version 4 (to rounding: the wait is split at the
    release)."""
    four, _ = _run(_hive3(1, None, row=3 / 9), history=True)
    three, _ = _run(_hive3(1, 7 / 13, row=3 / 9), history=True)
    assert (three["pool_wait_ms"] == 0).all()
    np.testing.assert_allclose(three["end_ms"].to_numpy(), four["end_ms"].to_numpy(), rtol=0, atol=1e-9)


def test_hms3_polls_wait_for_the_mutex():
    """Each writer has at most one checkLock asking for the mutex, so with N writers and no row modelled one
    checkLock waits at most (N - 1) h: a commit that waited longer waited at more than one, a poll's. Writers sharing
    a table (answered WAITING, polling) do; writers alone on theirs (one lock() a commit) never do."""
    tables, writers = 20, 24                     # writer w on table w mod 20: tables 0-3 have two writers each
    h = 0.45 * S
    rec, _ = _run(_hive3(writers, 0.45, tables=tables), history=True)
    shared = rec[rec["table"] < writers - tables]
    own = rec[rec["table"] >= writers - tables]
    assert (own["pool_wait_ms"] <= (writers - 1) * h + 1e-9).all() and own["pool_wait_ms"].mean() > 0
    assert (shared["pool_wait_ms"] > (writers - 1) * h + 1e-9).any()


@pytest.mark.parametrize("d, path", [
    ({"design": "hudi", "lock": {"latency_ms": 5, "hms_version": 3}}, "lock.hms_version"),
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"hms_version": 2}}, "lock.hms_version"),
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"check_lock_mutex_share": 0.5}},
     "lock.check_lock_mutex_share"),
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"hms_version": 3, "check_lock_mutex_share": 1.0}},
     "lock.check_lock_mutex_share"),
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"hms_version": 3, "discipline": "fifo_notify",
                                                                "next_lock_id_share": 0}},
     "lock.check_lock_mutex_share"),
])
def test_hms3_config_errors(d, path):
    with pytest.raises(ConfigError) as err:
        from_dict(d)
    assert str(err.value).startswith(path)
    assert "\n" not in str(err.value)
