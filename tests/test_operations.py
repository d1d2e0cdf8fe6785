"""Operations with read and write sets and maintenance jobs (docs/MODEL.md, "Operations and maintenance").

The conflict table cell by cell: two transactions on one table, constant latencies, Y landing while X works; X's
outcome is the rule's (committed after a rebase, or failed for good), on both engines. Then what the rules imply
over whole runs (appends never fail for a compaction; an expiry through a REST server never gets a 409), the
checker's invariant 8 on recorded histories, and the jobs' schedule."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.api import config, run
from sim.checker import check_history
from sim.engines import make_engine
from sim.model.state import OPS, Op
from sim.records import records_frame
from sim.rules import checker_rules
from sim.providers import profile_of

KINDS = ("fa", "overwrite", "row_delta", "compaction", "rewrite_manifests", "expire_snapshots", "schema_change")

# the cells where X (row) fails for good after Y (column) landed in the same partitions, serializable isolation,
# on a storage catalog (design file): docs/MODEL.md's table
FATAL = ({(x, y) for x in ("overwrite", "row_delta") for y in ("fa", "overwrite", "row_delta", "compaction")}
         | {("compaction", y) for y in ("overwrite", "row_delta", "compaction")}
         | {("rewrite_manifests", y) for y in ("overwrite", "row_delta", "compaction", "rewrite_manifests")}
         | {("schema_change", y) for y in KINDS})
# through a REST server a schema change's requirement is the current schema only
FATAL_REST = {c for c in FATAL if c[0] != "schema_change"} | {("schema_change", "schema_change")}

SCRIPT = {"duration_ms": 2500, "warmup_ms": 0, "cooldown_ms": 100, "drain_limit_ms": 60_000,
          "storage": {"provider": "instant"},
          "workload": {"inter_arrival": {"distribution": "constant", "mean_ms": 1000},
                       "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0},
                       "operations": {"partitions": 2}}}


def _scripted(x: str, y: str, engine: str, x_parts: int = 1, y_parts: int = 1, y_outcome: str = "committed",
              **keys):
    """X arrives at 1 s and works 5 s; Y arrives at 2 s and commits at once (or ends as `y_outcome` says): X's
    record."""
    cfg = config(SCRIPT, **keys)
    eng = make_engine(cfg, 0, history=True, engine=engine)
    arr = eng.r.m.arrivals
    arr[0] = (0, OPS.index(x), x_parts, 5000.0, 1)
    arr[1] = (0, OPS.index(y), y_parts, 3000.0, 1)
    eng.run()
    rec = records_frame(eng.r)
    violations = check_history(eng.history_frame(), **checker_rules(cfg, profile_of(cfg)))
    assert not violations, violations[:3]
    assert list(rec["txn"]) == [0, 1] and rec["outcome"].iloc[1] == y_outcome
    return rec.iloc[0]


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("x, y", list(itertools.product(KINDS, KINDS)))
def test_cell_on_a_storage_catalog(x, y, engine):
    """Design file (Iceberg's client, a catalog object): X rebases or fails for good, as the table says."""
    got = _scripted(x, y, engine)
    if (x, y) in FATAL:
        assert (got.outcome, got.reason) == ("aborted", "validation_failed")
    else:
        assert got.outcome == "committed"


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("x, y", [(x, y) for x in ("schema_change", "expire_snapshots", "compaction", "overwrite")
                                  for y in ("fa", "overwrite", "schema_change")])
def test_cell_through_a_rest_server(x, y, engine):
    """Through a REST server the client's rules are the same, but a schema change fails only for another."""
    got = _scripted(x, y, engine, design="rest", **{"catalog.latency_ms": 1.0})
    assert (got.outcome == "aborted") == ((x, y) in FATAL_REST)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("x", ["overwrite", "row_delta", "compaction", "rewrite_manifests"])
def test_other_partitions_rebase(x, engine):
    """Y in other partitions than X's: X rebases, but for a manifest rewrite (manifests span partitions)."""
    got = _scripted(x, "overwrite", engine, x_parts=1, y_parts=2)
    assert (got.outcome == "aborted") == (x == "rewrite_manifests")


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_snapshot_isolation_lets_an_overwrite_rebase_over_an_append(engine):
    got = _scripted("overwrite", "fa", engine, **{"workload.operations.isolation": "snapshot"})
    assert got.outcome == "committed"


DELTA_KINDS = ("fa", "overwrite", "compaction", "schema_change")
DELTA_FATAL = ({(x, y) for x in ("overwrite", "compaction") for y in ("overwrite", "compaction")}
               | {("fa", "schema_change"), ("overwrite", "schema_change")}
               | {("schema_change", y) for y in DELTA_KINDS})


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("x, y", list(itertools.product(DELTA_KINDS, DELTA_KINDS)))
def test_cell_on_a_delta_log(x, y, engine):
    """Delta's log (delta-rs's design `log`): a blind append, a DELETE/UPDATE/MERGE (an overwrite), an OPTIMIZE (a
    compaction), a metadata change, as Delta's conflict checker decides."""
    got = _scripted(x, y, engine, design="log")
    assert (got.outcome == "aborted") == ((x, y) in DELTA_FATAL)


HUDI_FATAL = {(x, y) for x in ("overwrite", "compaction") for y in ("overwrite", "compaction")}


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("x, y", list(itertools.product(DELTA_KINDS, DELTA_KINDS)))
def test_cell_on_a_hudi_timeline(x, y, engine):
    """Hudi's OCC: an upsert (overwrite) and a clustering (compaction) fail where the file groups they mutated meet;
    an insert (append) writes new file groups and a schema change none. An upsert into file groups a clustering
    holds pending is rejected at its write (SparkRejectUpdateStrategy): there the clustering commits."""
    rejected = (x, y) == ("compaction", "overwrite")
    got = _scripted(x, y, engine, design="hudi", y_outcome="aborted" if rejected else "committed",
                    **{"lock.latency_ms": 1.0})
    assert (got.outcome == "aborted") == ((x, y) in HUDI_FATAL and not rejected)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("y, y_parts, rejected", [("overwrite", 1, True), ("overwrite", 2, False), ("fa", 1, False)])
def test_hudi_rejects_an_upsert_into_file_groups_pending_clustering(engine, y, y_parts, rejected):
    """A clustering of partition 0 starts at 1 s and works 5 s: an upsert of partition 0 starting at 2 s (3 s of
    work) is rejected at once, before its work; one of partition 1 and an insert are not; once the clustering
    completed, upserts of partition 0 write again."""
    cfg = config(SCRIPT, design="hudi", **{"lock.latency_ms": 1.0, "duration_ms": 9000})
    eng = make_engine(cfg, 0, history=True, engine=engine)
    arr = eng.r.m.arrivals
    arr["op"], arr["parts"], arr["runtime_ms"], arr["table"] = Op.OVERWRITE, 1, 0.0, 0
    arr[0] = (0, Op.COMPACTION, 1, 5000.0, 1)
    arr[1] = (0, OPS.index(y), y_parts, 0.0, 1)
    eng.run()
    assert not check_history(eng.history_frame(), **checker_rules(cfg, profile_of(cfg)))
    rec = records_frame(eng.r).set_index("txn")
    assert rec.loc[0, "outcome"] == "committed"
    assert (rec.loc[1, "outcome"], rec.loc[1, "reason"]) == (("aborted", "validation_failed") if rejected
                                                             else ("committed", ""))
    if rejected:
        assert rec.loc[1, "end_ms"] - rec.loc[1, "arrival_ms"] < 1000    # before its 3 s of work
    late = rec[rec["arrival_ms"] > rec.loc[0, "end_ms"] + 1]
    assert len(late) >= 2 and (late["outcome"] == "committed").all()


MOR = {"maintenance.compaction.action": "compaction"}
MOR_FATAL = {("overwrite", "overwrite"), ("overwrite", "compaction")}


@pytest.mark.parametrize("engine", ["fast", pytest.param("simpy", marks=pytest.mark.slow)])
@pytest.mark.parametrize("x, y", list(itertools.product(DELTA_KINDS, DELTA_KINDS)))
def test_cell_on_a_hudi_merge_on_read_timeline(x, y, engine):
    """Hudi merge-on-read (`maintenance.compaction.action: compaction`): a compaction checks nothing when it commits;
    an upsert fails for one scheduled after its instant (here Y's, at 2 s) and passes one scheduled before (X's, at
    1 s: the upsert writes its log files into the new file slice); upserts still conflict on shared file groups."""
    got = _scripted(x, y, engine, design="hudi", **{"lock.latency_ms": 1.0}, **MOR)
    assert (got.outcome == "aborted") == ((x, y) in MOR_FATAL)


def _hudi_pair(engine, first, second, first_runtime_ms, second_runtime_ms, **keys):
    """`first` (partition 0) arrives at 1 s, `second` (partition 0) at 2 s, with the runtimes given; the others
    touch partition 1. Both transactions' records, after the checker passed the history."""
    cfg = config(SCRIPT, design="hudi", **{"lock.latency_ms": 1.0, "duration_ms": 20_000}, **keys)
    eng = make_engine(cfg, 0, history=True, engine=engine)
    arr = eng.r.m.arrivals
    arr["op"], arr["parts"], arr["runtime_ms"], arr["table"] = Op.OVERWRITE, 2, 0.0, 0
    arr[0] = (0, OPS.index(first), 1, first_runtime_ms, 1)
    arr[1] = (0, OPS.index(second), 1, second_runtime_ms, 1)
    eng.run()
    assert not check_history(eng.history_frame(), **checker_rules(cfg, profile_of(cfg)))
    return records_frame(eng.r).set_index("txn").loc[[0, 1]]


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("keys", [MOR, {}], ids=["compaction", "clustering"])
def test_hudi_upsert_fails_for_a_table_service_scheduled_after_it_while_still_pending(engine, keys):
    """An upsert (instant at 1 s, 5 s of work) and a compaction or clustering of its file groups scheduled at 2 s
    and still working at the upsert's commit (10 s): the pending instant after the upsert's is a conflict candidate,
    so the upsert fails at its check, after its work; the service then commits."""
    rec = _hudi_pair(engine, "overwrite", "compaction", 5000.0, 10_000.0, **keys)
    assert (rec.loc[0, "outcome"], rec.loc[0, "reason"]) == ("aborted", "validation_failed")
    assert rec.loc[0, "end_ms"] - rec.loc[0, "arrival_ms"] > 5000      # after its work
    assert rec.loc[1, "outcome"] == "committed"


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_hudi_upsert_after_a_compactions_instant_commits_before_or_after_it(engine):
    """An upsert whose instant follows a compaction's commits whether the compaction completes before it (1 s of
    work) or after it (10 s): merge-on-read writes its log files into the new file slice. A clustering instead
    rejects it at its write."""
    for runtime_ms in (1000.0, 10_000.0):
        rec = _hudi_pair(engine, "compaction", "overwrite", runtime_ms, 3000.0, **MOR)
        assert (rec["outcome"] == "committed").all(), runtime_ms
    rec = _hudi_pair(engine, "compaction", "overwrite", 10_000.0, 3000.0)
    assert (rec.loc[1, "outcome"], rec.loc[1, "reason"]) == ("aborted", "validation_failed")


def test_checker_flags_an_upsert_over_a_later_scheduled_compaction():
    """Invariant 8 on Hudi knows the instants' order, not only what landed: a compaction (instant at 1 s, 10 s of
    work) and an upsert (instant at 2 s) both commit; the same history with their operations swapped has an upsert
    committing over a compaction scheduled after its instant, and is flagged."""
    cfg = config(SCRIPT, design="hudi", **{"lock.latency_ms": 1.0, "duration_ms": 20_000}, **MOR)
    eng = make_engine(cfg, 0, history=True, engine="fast")
    arr = eng.r.m.arrivals
    arr["op"], arr["parts"], arr["runtime_ms"], arr["table"] = Op.OVERWRITE, 2, 0.0, 0
    arr[0] = (0, Op.COMPACTION, 1, 10_000.0, 1)
    arr[1] = (0, Op.OVERWRITE, 1, 3000.0, 1)
    eng.run()
    rules = checker_rules(cfg, profile_of(cfg))
    hist = eng.history_frame()
    assert not check_history(hist, **rules)
    begins = hist["kind"] == "begin"
    swapped = hist.copy()
    swapped.loc[begins & (hist["txn"] == 0), "op"] = "overwrite"
    swapped.loc[begins & (hist["txn"] == 1), "op"] = "compaction"
    found = check_history(swapped, **rules)
    assert [v.invariant for v in found] == [8] and "scheduled" in found[0].message, found


@pytest.mark.parametrize("keys, path", [({"maintenance.compaction.action": "compaction"}, "maintenance.compaction.action"),
                                        ({"maintenance.expire_snapshots.action": "compaction", "design": "hudi"},
                                         "maintenance.expire_snapshots.action")])
def test_a_merge_on_read_compaction_is_a_hudi_compactions(keys, path):
    with pytest.raises(Exception, match=path.replace(".", r"\.")):
        config(SCRIPT, **keys)


INLINE = {"duration_ms": 600_000, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": 600_000, "design": "hudi",
          "storage": {"provider": "instant"}, "lock": {"latency_ms": 1.0},
          "workload": {"writers": {"count": 1}, "runtime": {"median_ms": 10_000, "sigma": 0, "min_ms": 0},
                       "operations": {"partitions": 2, "overwrite_share": 1.0}},
          "maintenance": {"compaction": {"inline_after_commits": 3, "median_ms": 30_000, "sigma": 0}}}


@pytest.mark.parametrize("engine", ["fast", pytest.param("simpy", marks=pytest.mark.slow)])
@pytest.mark.parametrize("action", ["compaction", "clustering"])
def test_hudi_runs_a_table_service_inline_every_nth_commit(engine, action):
    """`inline_after_commits: 3` (hoodie.compact.inline): the writer's every third commit returns through a
    compaction (or clustering) of the whole table that it schedules and runs, 30 s of work; its next write starts as
    that ends, and no write of its own conflicts with it (the writer is busy). Constant times: the writer's
    transactions run 3 writes (10 s each and the commit's lock calls), then the service, over and over."""
    cfg = config(INLINE, **{"maintenance.compaction.action": action})
    eng = make_engine(cfg, 0, history=True, engine=engine)
    eng.run()
    assert not check_history(eng.history_frame(), **checker_rules(cfg, profile_of(cfg)))
    rec = records_frame(eng.r).sort_values("arrival_ms")
    assert (rec["outcome"] == "committed").all() and (rec["writer"] == 0).all()
    ops = rec["op"].tolist()
    assert ops[:8] == ["overwrite"] * 3 + ["compaction"] + ["overwrite"] * 3 + ["compaction"]
    assert all(op == ("compaction" if i % 4 == 3 else "overwrite") for i, op in enumerate(ops))
    assert (rec["arrival_ms"].iloc[1:].to_numpy() == pytest.approx(rec["end_ms"].iloc[:-1].to_numpy()))
    service = rec[rec["op"] == "compaction"]
    assert ((service["end_ms"] - service["arrival_ms"]) > 30_000).all()
    assert (service["parts"] == 0b11).all()


@pytest.mark.parametrize("keys, path", [
    ({"design": "file"}, "maintenance.compaction.inline_after_commits"),
    ({"maintenance.compaction.every_ms": 60_000}, "maintenance.compaction.every_ms"),
    ({"workload.writers": {"count": 0}}, "maintenance.compaction.inline_after_commits"),
    ({"maintenance.compaction.partitions": 1}, "maintenance.compaction.partitions"),
    ({"maintenance.expire_snapshots.inline_after_commits": 2}, "maintenance.expire_snapshots.inline_after_commits")])
def test_inline_services_are_a_hudi_writers(keys, path):
    with pytest.raises(Exception, match=path.replace(".", r"\.")):
        config(INLINE, **keys)


DUCKLAKE_KINDS = ("fa", "overwrite", "compaction", "schema_change")
DUCKLAKE_FATAL = ({("fa", "overwrite"), ("fa", "schema_change"), ("overwrite", "fa"), ("overwrite", "overwrite"),
                   ("overwrite", "compaction"), ("overwrite", "schema_change"), ("compaction", "overwrite"),
                   ("compaction", "compaction"), ("schema_change", "schema_change")})
DUCKLAKE = {"design": "ducklake", "catalog.latency_ms": 1.0}


@pytest.mark.parametrize("engine", ["fast", pytest.param("simpy", marks=pytest.mark.slow)])
@pytest.mark.parametrize("x, y", list(itertools.product(DUCKLAKE_KINDS, DUCKLAKE_KINDS)))
def test_cell_on_a_ducklake_catalog(x, y, engine):
    """DuckLake (CheckForConflicts, table by table): an insert (append), a delete (overwrite), a compaction and an
    alter (schema change), X retrying after Y committed to its table, as DuckLake's rules decide; a delete fails
    for a delete only on the same files (here both in partition 0)."""
    got = _scripted(x, y, engine, **DUCKLAKE)
    assert (got.outcome == "aborted") == ((x, y) in DUCKLAKE_FATAL)
    if got.outcome == "committed":
        assert got.attempts == 2 and got.puts == 0 and got.gets == 0   # its stale first insert lost; no files


@pytest.mark.parametrize("design", ["ducklake", "ducklake-postgres"])
@pytest.mark.parametrize("x, y", list(itertools.product(DUCKLAKE_KINDS, DUCKLAKE_KINDS)))
def test_cell_on_ducklake_1_4(x, y, design):
    """DuckLake 1.4 (v1.4-andium): an insert and a delete never fail for each other, the rest as 1.5's; on
    PostgreSQL's round trips too."""
    got = _scripted(x, y, "fast", design=design, **{"catalog.latency_ms": 1.0, "catalog.ducklake_version": "1.4"})
    fatal = DUCKLAKE_FATAL - {("fa", "overwrite"), ("overwrite", "fa")}
    assert (got.outcome == "aborted") == ((x, y) in fatal)


def test_ducklake_sleeps_by_its_failed_attempts():
    """DuckLake's i counts every failed attempt (`retry.count_by: attempt`, design ducklake): a catalog conflict,
    then two table conflicts sleep 50 (1 + U) x 1.5^(k - 1) for k = 1, 2, 3, where each class counting its own
    gives k = 1, 1, 2 (the same draws: the key is not seeded)."""
    from sim.engines.view import view
    from sim.model.retry import conflict_delay
    sleeps = {}
    for count_by in ("class", "attempt"):
        cfg = config({}, design="ducklake", **{"catalog.latency_ms": 1.0, "retry.count_by": count_by})
        m = view(make_engine(cfg, 0, engine="simpy").r.m)
        sleeps[count_by] = [conflict_delay(m, 0, moved) for moved in (False, True, True)]
    c, a = sleeps["class"], sleeps["attempt"]
    assert a[0] == c[0] and a[1] == pytest.approx(1.5 * c[1]) and a[2] == pytest.approx(1.5 * c[2])
    assert 50.0 <= a[0] < 100.0 and 75.0 <= a[1] < 150.0 and 112.5 <= a[2] < 225.0


def test_ducklake_commits_collide_across_tables_and_retry_after_its_backoff():
    """Every DuckLake commit inserts the next global snapshot id: an insert into table 1 that started before an
    insert into table 0 committed loses its first attempt (a catalog conflict), sleeps 100 ms x U[0.5, 1], re-reads
    and commits; one on another table that started after it commits at once."""
    cfg = config(SCRIPT, **DUCKLAKE, **{"workload.num_tables": 2})
    eng = make_engine(cfg, 0, history=True, engine="fast")
    arr = eng.r.m.arrivals
    arr["op"], arr["parts"], arr["runtime_ms"], arr["table"] = Op.FA, 1, 0.0, 0
    arr[0] = (1, Op.FA, 1, 5000.0, 1)        # table 1, from 1 s, commits at about 6 s
    arr[1] = (0, Op.FA, 1, 3000.0, 1)        # table 0, from 2 s, commits at about 5 s
    eng.run()
    assert not check_history(eng.history_frame(), **checker_rules(cfg, profile_of(cfg)))
    rec = records_frame(eng.r).set_index("txn")
    assert (rec["outcome"] == "committed").all()
    assert (rec.loc[0, "attempts"], rec.loc[0, "catalog_conflicts"], rec.loc[0, "table_conflicts"]) == (2, 1, 0)
    assert 50.0 <= rec.loc[0, "backoff_ms"] <= 100.0
    assert rec.loc[1, "attempts"] == 1 and (rec.loc[2:, "attempts"] == 1).all()


@pytest.mark.parametrize("keys, path", [
    ({"catalog.table_metadata_inlined": False}, "catalog.file_lists_inlined"),
    ({"workload.operations.row_delta_share": 0.5}, "catalog.file_lists_inlined"),
    ({"maintenance.expire_snapshots.every_ms": 60_000}, "catalog.file_lists_inlined"),
    ({"design": "file", "catalog.file_lists_inlined": True, "catalog.latency_ms": None},
     "catalog.file_lists_inlined")])
def test_file_lists_in_the_catalog_are_ducklakes(keys, path):
    with pytest.raises(Exception, match=path.replace(".", r"\.")):
        config(SCRIPT, **{k: v for k, v in {**DUCKLAKE, **keys}.items() if v is not None})


def test_delta_cells_on_other_partitions_and_its_dynamodb_store():
    """An OPTIMIZE recommits over a MERGE elsewhere in the table; the DynamoDB log store runs the same checks."""
    assert _scripted("compaction", "overwrite", "fast", x_parts=1, y_parts=2, design="log").outcome == "committed"
    keys = {"design": "delta-dynamodb", "log_store.latency_ms": 1.0}
    assert _scripted("compaction", "overwrite", "fast", **keys).reason == "validation_failed"
    assert _scripted("compaction", "fa", "fast", **keys).outcome == "committed"


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_a_compaction_rebases_over_equality_deletes(engine):
    """Flink's upserts write equality deletes, which RewriteDataFiles does not validate from its starting sequence
    number, and Flink commits them with no validation of their own; Spark's position deletes fail a compaction,
    and an overwrite still fails over any row delta."""
    keys = {"workload.operations.row_delta_deletes": "equality"}
    assert _scripted("compaction", "row_delta", engine, **keys).outcome == "committed"
    for y in ("fa", "overwrite", "row_delta", "compaction"):
        assert _scripted("row_delta", y, engine, **keys).outcome == "committed", y
    assert _scripted("overwrite", "row_delta", engine, **keys).outcome == "aborted"


@pytest.mark.parametrize("design", ["fs-table", "hive"])
def test_cells_on_other_iceberg_designs(design):
    """Version files and a Hive lock run the same client: a fatal and a rebase cell each."""
    keys = {"design": design, **({"catalog.latency_ms": 1.0} if design == "hive" else {})}
    assert _scripted("compaction", "overwrite", "fast", **keys).reason == "validation_failed"
    assert _scripted("compaction", "fa", "fast", **keys).outcome == "committed"


BUSY = {"duration_ms": 900_000, "warmup_ms": 60_000, "cooldown_ms": 60_000,
        "workload": {"inter_arrival": {"distribution": "exponential", "mean_ms": 1000},
                     "runtime": {"median_ms": 2000, "sigma": 0.5, "min_ms": 100},
                     "operations": {"partitions": 4, "overwrite_share": 0.1, "row_delta_share": 0.05}},
        "commit": {"max_retries": 30},
        "maintenance": {"compaction": {"every_ms": 120_000, "median_ms": 60_000, "sigma": 0.5},
                        "rewrite_manifests": {"every_ms": 300_000, "median_ms": 10_000},
                        "expire_snapshots": {"every_ms": 200_000, "median_ms": 1_000},
                        "schema_change": {"every_ms": 250_000}}}


@pytest.mark.parametrize("design, keys", [("file", {}), ("rest", {"catalog.latency_ms": 5.0}),
                                          ("fs-table", {}), ("hive", {"catalog.latency_ms": 5.0}),
                                          ("file", {"maintenance.compaction.partial_progress": True,
                                                    "maintenance.compaction.groups": 12}),
                                          ("log", {"workload.operations.row_delta_share": 0.0,
                                                   "maintenance.rewrite_manifests": {},
                                                   "maintenance.expire_snapshots": {},
                                                   "maintenance.schema_change": {}}),
                                          *(("hudi", {"lock.latency_ms": 5.0, "workload.operations.row_delta_share": 0.0,
                                                      "maintenance.rewrite_manifests": {},
                                                      "maintenance.expire_snapshots": {},
                                                      "maintenance.compaction.action": action})
                                            for action in ("clustering", "compaction")),
                                          ("ducklake", {"catalog.latency_ms": 5.0,
                                                        "workload.operations.row_delta_share": 0.0,
                                                        "maintenance.rewrite_manifests": {},
                                                        "maintenance.expire_snapshots": {}})])
def test_whole_runs_keep_the_rules(design, keys):
    """Busy runs of every operation and job the format has: the checker's invariants hold (8: no committed operation
    over a commit its rules make fatal), appends never fail for the rules (on a Delta log, with no metadata change:
    one would fail them), and compactions do; on Hudi a clustering or compaction wins against the upserts (the
    upserts of its file groups fail, whichever committed first), and the upserts fail; on DuckLake an insert fails
    for a delete of its table."""
    cfg = config(BUSY, design=design, **keys)
    r = run(cfg, history=True, stream=False)
    assert not check_history(r.history, **checker_rules(cfg, profile_of(cfg)))
    rec = r.records
    assert set(rec["op"]) >= {"fa", "overwrite", "compaction"}
    failed = rec["reason"] == "validation_failed"
    assert (failed & (rec["op"] == "fa")).any() == (design == "ducklake")
    assert (failed & (rec["op"] == "compaction")).any() == (design != "hudi")
    assert (failed & (rec["op"] == "overwrite")).any()


def test_an_expiry_through_a_rest_server_never_gets_a_409():
    """Its requirement is the table's uuid: however busy the table, it commits with no 409 (the server's own retries
    of a lost database CAS re-apply it to the table as it is then)."""
    cfg = config(BUSY, design="rest", **{"catalog.latency_ms": 5.0, "workload.inter_arrival.mean_ms": 200})
    rec = run(cfg, stream=False).records
    exp = rec[(rec["op"] == "expire_snapshots") & (rec["outcome"] != "unfinished")]
    assert len(exp) >= 3 and (exp["outcome"] == "committed").all()
    assert (exp["catalog_conflicts"] + exp["table_conflicts"] == 0).all() and (exp["backoff_ms"] == 0).all()
    assert (exp["attempts"] > 1).any()             # a server retry did commit one
    fa = rec[rec["op"] == "fa"]
    assert (fa["attempts"] > 1).mean() > 0.1     # the appends did conflict with each other


def test_jobs_run_one_at_a_time_on_their_ticks():
    """A job longer than its period: a run starts at the first tick after the last one ended, one per table."""
    cfg = config({"duration_ms": 3_600_000, "warmup_ms": 0, "cooldown_ms": 1000,
                  "storage": {"provider": "instant"},
                  "workload": {"num_tables": 3, "inter_arrival": {"distribution": "constant", "mean_ms": 3_600_000}},
                  "maintenance": {"compaction": {"every_ms": 100_000, "median_ms": 250_000}}})
    rec = run(cfg, stream=False).records
    jobs = rec[rec["op"] == "compaction"].sort_values("arrival_ms")
    for _, runs in jobs.groupby("table"):
        starts, ends = runs["arrival_ms"].to_numpy(), runs["end_ms"].to_numpy()
        phase = starts[0]
        assert np.all(starts[1:] > ends[:-1])                       # one at a time
        ticks = (starts - phase) / 100_000
        assert np.allclose(ticks, np.round(ticks))                   # on its ticks
        assert np.all(np.ceil((ends[:-1] - phase) / 100_000) == ticks[1:])   # the first tick after the last ended
    assert jobs["table"].nunique() == 3


def test_jobs_draw_none_of_the_arrivals_draws():
    """With common random numbers, the arrivals' tables, operations, partitions and times are the same with and
    without jobs (a job's run takes a transaction id, not an arrival's draws)."""
    a = run(config({**BUSY, "maintenance": {}, "common_random_numbers": True}), stream=False).records
    b = run(config({**BUSY, "common_random_numbers": True}), stream=False).records
    cols = ["table", "op", "parts", "arrival_ms"]
    mine = b[~b["op"].isin(["compaction", "rewrite_manifests", "expire_snapshots", "schema_change"])]
    assert np.array_equal(a[cols].to_numpy(), mine[cols].to_numpy())


def test_operations_off_keep_the_fixed_summary():
    """Without operations a summary has the FastAppend's and ValidatedOverwrite's blocks only (goldens pin them)."""
    s = run(config({"duration_ms": 120_000, "warmup_ms": 10_000, "cooldown_ms": 10_000})).summary
    assert "fa_success_rate" in s and "vo_success_rate" in s and "compaction_success_rate" not in s
    assert Op.FA == 0 and Op.VO == 1


def _partial_run(engine: str, threads: int, row_delta_parts: int = 0):
    """One compaction run in partial progress (20 s of work, 10 file groups, a batch each, from `threads` threads,
    its start within the first second) beside appends every second on a table of two partitions: the run's first
    five groups are partition 0's, the last five partition 1's. With `row_delta_parts`, the arrival at 11 s is a
    row delta of those partitions. Returns the first run's batches, in commit order, and all records."""
    cfg = config(SCRIPT, **{"duration_ms": 30_000, "maintenance.compaction": {
        "every_ms": 1000, "median_ms": 20_000, "partial_progress": True, "groups": 10, "threads": threads}})
    eng = make_engine(cfg, 0, history=True, engine=engine)
    arr = eng.r.m.arrivals
    arr["op"], arr["parts"], arr["runtime_ms"], arr["table"] = Op.FA, 1, 0.0, 0
    if row_delta_parts:
        arr[10] = (0, Op.ROW_DELTA, row_delta_parts, 0.0, 1)
    eng.run()
    assert not check_history(eng.history_frame(), **checker_rules(cfg, profile_of(cfg)))
    rec = records_frame(eng.r)
    batches = rec[(rec["op"] == "compaction") & (rec["arrival_ms"] < 20_000)].sort_values("end_ms")
    assert len(batches) == 10
    return batches, rec


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("row_delta_parts, failed", [(0b11, [5, 6, 7, 8, 9]), (0b10, [5, 6, 7, 8, 9]),
                                                     (0b01, [])])
def test_partial_progress_loses_only_the_failed_batches(engine, row_delta_parts, failed):
    """A row delta lands at 11 s, between batch 4's commit (ready by 10 s) and batch 5's (12 s): the batches before
    it stay committed, those after it fail where their partitions meet its (each validates from the run's starting
    snapshot), and each failed batch loses its own share of the run's work (2 s) and its commit, not the run's."""
    batches, rec = _partial_run(engine, threads=1, row_delta_parts=row_delta_parts)
    delta = rec[rec["op"] == "row_delta"].iloc[0]
    assert delta["outcome"] == "committed" and 10_000 < delta["end_ms"] < 12_000
    assert (batches["end_ms"].iloc[:5] < delta["end_ms"]).all() and (batches["end_ms"].iloc[5:] > delta["end_ms"]).all()
    assert [i for i, o in enumerate(batches["outcome"]) if o == "aborted"] == failed
    lost = (batches["end_ms"] - batches["arrival_ms"])[batches["outcome"] == "aborted"]
    assert np.all((lost >= 2000) & (lost < 2100))   # its 2 s of the run's 20 s, and its commit


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_partial_progress_batches_done_together_race_but_rebase(engine):
    """Five threads finish five groups at once: their five batches commit at once, conflict with each other on
    the catalog and rebase (their files are apart, though in one partition), all ten committed."""
    batches, _ = _partial_run(engine, threads=5)
    assert (batches["outcome"] == "committed").all()
    assert (batches["attempts"] > 1).sum() >= 4     # of five at once, the first wins each round


@pytest.mark.parametrize("keys, path", [
    ({"maintenance.expire_snapshots": {"every_ms": 1000, "partial_progress": True, "groups": 4}},
     "maintenance.expire_snapshots.partial_progress"),
    ({"maintenance.compaction": {"every_ms": 1000, "partial_progress": True}}, "maintenance.compaction.groups"),
    ({"maintenance.compaction": {"every_ms": 1000, "groups": 4}}, "maintenance.compaction.groups"),
    ({"design": "log", "maintenance.compaction": {"every_ms": 1000, "partial_progress": True, "groups": 4}},
     "maintenance.compaction.partial_progress")])
def test_partial_progress_is_a_compactions_and_icebergs(keys, path):
    with pytest.raises(Exception, match=path.replace(".", r"\.")):
        config(SCRIPT, **keys)


@settings(deadline=None)
@given(groups=st.integers(1, 200), max_commits=st.integers(1, 20), threads=st.integers(1, 16),
       partitions=st.integers(1, 62), work_ms=st.one_of(st.just(0.0), st.floats(1e-3, 1e7)))
def test_partial_progress_batches_cover_the_run(groups, max_commits, threads, partitions, work_ms):
    """A run's batches: ceil(groups / ceil(groups / max_commits)) of them, their partitions cover the run's and
    follow its order, each ready no earlier than the one before, the last at the end of the run's work, and no more
    of them ready at once than the threads finish groups at once (a run of some work: a microsecond or more, as the
    model's times are milliseconds; a subnormal work rounds every wave onto one time)."""
    from sim.model import jobs
    from sim.model.state import JOB, WR
    jb, wr = np.zeros(1, JOB).view(np.recarray)[0], np.zeros(1, WR).view(np.recarray)[0]
    jb.groups, jb.max_commits, jb.threads = groups, max_commits, threads
    wr.run_parts, wr.run_work_ms, wr.run_start_ms = (1 << partitions) - 1, work_ms, 0.0
    per, n = jobs._batches.py_func(jb)
    assert n == -(-groups // -(-groups // max_commits)) and n <= max_commits
    parts = [jobs._batch_parts.py_func(jb, wr, b) for b in range(n)]
    assert all(p != 0 for p in parts) and np.bitwise_or.reduce(parts) == wr.run_parts
    high, low = (lambda p: int(p).bit_length() - 1), (lambda p: (int(p) & -int(p)).bit_length() - 1)
    assert all(high(a) <= low(b) for a, b in zip(parts, parts[1:]))
    ready = [jobs._ready_ms.py_func(jb, wr, b) for b in range(n)]
    assert ready == sorted(ready) and ready[-1] == pytest.approx(work_ms)
    _, counts = np.unique(ready, return_counts=True)
    assert counts.max() <= threads or work_ms == 0.0      # (a run of no work has every batch ready at its start)
