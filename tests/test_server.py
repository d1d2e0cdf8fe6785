"""REST servers (sim.model.designs.rest; docs/MODEL.md "REST servers") and the service pointer: request counts and
timing in closed form with constant latencies, the server's retry of a lost database CAS, the presets' numbers
as the docs cite them, and the keys' rules."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from sim.checker import check_history
from sim.config import ConfigError, from_dict, replaced
from sim.engines.simpy_engine import SimPyEngine
from sim.providers import load_provider
from sim.rules import checker_rules

DOCS = Path(__file__).resolve().parent.parent / "docs"
PROVIDER = str(Path(__file__).resolve().parent / "data" / "server_constant.yaml")
L, G, Q, P, R = 10.0, 3.0, 5.0, 13.0, 100.0   # database op, GET, manifest-list PUT, metadata PUT (1 MiB), runtime
NO_JITTER = {"policy": "exponential", "base_ms": 100, "jitter": 0}


def _cfg(design: str, writers: int = 1, **over) -> dict:
    d = {"design": design, "catalog": {"latency_ms": L}, "storage": {"provider": PROVIDER},
         "io": {"manifest_list_bytes": 0, "table_metadata_bytes": 1 << 20},
         "duration_ms": 10_000, "warmup_ms": 0, "cooldown_ms": 1_000, "drain_limit_ms": 10_000,
         "retry": {"catalog": NO_JITTER, "table": NO_JITTER},
         "workload": {"writers": {"count": writers, "commits": 1},
                      "runtime": {"median_ms": R, "sigma": 0, "min_ms": 0}}}
    for path, value in over.items():
        node = d
        *head, last = path.split(".")
        for part in head:
            node = node.setdefault(part, {})
        node[last] = copy.deepcopy(value)
    return d


def _run(d: dict):
    cfg = from_dict(d)
    eng = SimPyEngine(cfg, 0, record_history=True).run()
    hist = eng.history_frame()
    assert check_history(hist, **checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))) == []
    return eng.records_frame().sort_values("end_ms").reset_index(drop=True), hist


# uncontended: (end time from the start, catalog reads, GETs, PUTs) of one commit
UNCONTENDED = {
    # base load (L + G), runtime, refresh (L + G), prepare (GET + PUT manifest list), the server's load (L + G),
    # its metadata.json PUT, its re-read of the row, its database CAS
    "rest": (5 * L + 4 * G + Q + P + R, 4, 4, 2),
    # no metadata GET; its commit transaction is two requests, the updates (with the check) and the COMMIT
    "rest-lakekeeper": (5 * L + G + Q + P + R, 3, 1, 2),
    # base read, runtime, refresh, prepare (GET metadata, GET manifest list, PUT both), the service's CAS
    "service-pointer": (3 * L + 2 * G + Q + P + R, 2, 2, 2),
}


@pytest.mark.parametrize("design", sorted(UNCONTENDED))
def test_uncontended_commit_is_the_sum_of_its_parts(design):
    rec, _ = _run(_cfg(design))
    end_ms, reads, gets, puts = UNCONTENDED[design]
    (row,) = rec.itertuples()
    assert row.outcome == "committed" and row.attempts == 1
    assert row.end_ms - row.arrival_ms == end_ms
    assert (row.catalog_reads, row.gets, row.puts) == (reads, gets, puts)


# two writers start together on one table: both pass the server's check, both PUT (and re-read), one wins the
# database CAS; the loser's server (Lakekeeper: after DELETEing its metadata.json, drawn as a GET) sleeps its first
# retry sleep, re-loads, and the re-check fails (409); the client sleeps 100 ms, refreshes, prepares again and
# commits. Lakekeeper's loser first waits for the row lock until the winner's COMMIT (L, as long as the COMMIT its own
# first commit never sends), then its check fails. (end of the loser, its catalog reads, GETs, PUTs, DELETEs)
LOST = {
    "rest": (UNCONTENDED["rest"][0] + 100 + (L + G) + 100 + (L + G) + (G + Q) + (L + G) + P + 2 * L, 8, 8, 4, 0),
    "rest-lakekeeper": (UNCONTENDED["rest-lakekeeper"][0] + G + 50 + L + 100 + L + (G + Q) + L + P + 2 * L,
                        6, 2, 4, 1),
}
# the loser's history: its base read, refresh, prepare, (the server's re-read,) the lost CAS, the server's re-load,
# the client's refresh, prepare, (re-read,) CAS
KINDS = {"rest": ["begin", "read", "read", "prepare", "read", "cas", "read", "read", "prepare", "read", "cas", "end"],
         "rest-lakekeeper": ["begin", "read", "read", "prepare", "cas", "read", "read", "prepare", "cas", "end"]}


@pytest.mark.parametrize("design", sorted(LOST))
def test_lost_race_409_after_server_sleep_and_reload(design):
    d = _cfg(design, writers=2, **{"catalog.server.retry": {"policy": "exponential",
                                                            "base_ms": 100 if design == "rest" else 50,
                                                            "jitter": 0}})
    rec, hist = _run(d)
    win, lose = rec.itertuples()
    assert win.end_ms - win.arrival_ms == UNCONTENDED[design][0]
    end_ms, reads, gets, puts, deletes = LOST[design]
    assert lose.outcome == "committed" and lose.attempts == 2 and lose.table_conflicts == 1
    assert lose.end_ms - lose.arrival_ms == end_ms
    assert lose.backoff_ms == 100.0            # the client's sleep only; the server's is not the client's
    assert (lose.catalog_reads, lose.gets, lose.puts, lose.deletes) == (reads, gets, puts, deletes)
    # one failed CAS row (the database's) and one read row (the server's re-load) on the loser's first attempt
    mine = hist[hist.txn == lose.txn]
    if design == "rest-lakekeeper":      # its updates waited for the row lock until the winner's COMMIT released it
        locks = hist[hist.kind.str.startswith("lock")]
        released = locks[(locks.txn == win.txn) & (locks.kind == "lock_release")].time_ms.min()
        mine_locks = locks[locks.txn == lose.txn]
        asked, granted = (mine_locks[mine_locks.kind == k].time_ms.min() for k in ("lock_request", "lock_grant"))
        assert granted == released == asked + L and lose.lock_wait_ms == L
        assert mine[mine.kind == "cas"].time_ms.min() == granted           # then its check fails, at once
        mine = mine[~mine.kind.str.startswith("lock")]
    assert list(mine.kind) == KINDS[design]
    at = KINDS[design].index("cas")
    lost, reload, refresh = (mine.iloc[i] for i in (at, at + 1, at + 2))
    sleep_ms = 100.0 if design == "rest" else 50.0 + G                  # (Lakekeeper DELETEs its file first)
    assert not lost.ok and reload.time_ms - lost.answer_ms == sleep_ms + L / 2     # the server's sleep, re-load
    assert reload.answer_ms - reload.time_ms == L / 2 + (G if design == "rest" else 0.0)   # 409 after the load
    assert refresh.time_ms - reload.answer_ms == 100.0 + L / 2                  # the client's sleep, no read first


def test_no_server_retries_409_at_the_cas_answer():
    rec, _ = _run(_cfg("rest", writers=2, **{"catalog.server.retries": 0}))
    _, lose = rec.itertuples()
    first_409 = UNCONTENDED["rest"][0]
    assert lose.end_ms - lose.arrival_ms == first_409 + 100 + (L + G) + (G + Q) + (L + G) + P + 2 * L


def test_early_409_has_no_put():
    """A commit that lands between a client's refresh and its server's load is a 409 at the load: no PUT, and
    the answer comes after the load (L + G)."""
    # the second arrival's refresh takes effect 118 ms after it starts, its server's load 139 ms after: 40 ms
    # after the first, whose CAS takes effect 175 ms after its start, falls in between
    rec, _ = _run(_two_arrivals(_cfg("rest"), gap_ms=40.0))
    first, second = rec.itertuples()
    assert second.arrival_ms - first.arrival_ms == 40.0
    assert first.end_ms - first.arrival_ms == UNCONTENDED["rest"][0]
    # first attempt: base load, runtime, refresh, GET + PUT manifest list, the server's load, 409 (no PUT);
    # then the client's sleep, a refresh, a new prepare, the load, the PUT, the CAS
    t409 = 2 * (L + G) + R + (G + Q) + (L + G)
    assert second.end_ms - second.arrival_ms == t409 + 100 + (L + G) + (G + Q) + (L + G) + P + 2 * L
    assert (second.attempts, second.catalog_reads, second.gets, second.puts) == (2, 6, 7, 3)


def _two_arrivals(d: dict, gap_ms: float) -> dict:
    """Open-loop constant arrivals `gap_ms` apart, two of them before the run ends."""
    d = copy.deepcopy(d)
    d["workload"].pop("writers")
    d["workload"]["inter_arrival"] = {"distribution": "constant", "mean_ms": gap_ms}
    d.update(duration_ms=2.5 * gap_ms, warmup_ms=0, cooldown_ms=0)
    return d


def test_plain_service_reads_no_server():
    """`catalog.backend: service` without catalog.server: one latency per operation, as before."""
    d = _cfg("rest")
    d.pop("design")
    d["catalog"].update(backend="service", scope="table", table_metadata_inlined=True)
    rec, _ = _run(d)
    (row,) = rec.itertuples()
    assert row.end_ms - row.arrival_ms == 3 * L + G + Q + R
    assert (row.catalog_reads, row.gets, row.puts) == (2, 1, 1)
    assert "server" not in from_dict(d).to_dict()["catalog"]


DESIGN_OF = {"reference": "`rest`", "lakekeeper": "`rest-lakekeeper`"}


def _preset_row(variant: str) -> str:
    """The row of docs/model/rest-servers.md's table of REST server variants for `variant`, from its resolved
    config."""
    srv = from_dict({"design": "rest", "catalog": {"latency_ms": 10, "server": {"variant": variant}}}).catalog.server
    r = srv.retry

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"
    sleep = f"min({r.base_ms:g} × {r.factor:g}^(k−1), {r.max_ms:g}) × (1 + {r.jitter:g} U)"
    return (f"| `{variant}` | {DESIGN_OF.get(variant, '-')} | {yes(srv.metadata_get)} | {yes(srv.reread_before_cas)} "
            f"| {yes(srv.delete_on_conflict)} | {srv.retries} | {sleep} | {srv.pool_connections} | "
            f"{srv.read_pool_connections or '-'} | {srv.lock_scope} |")


@pytest.mark.parametrize("variant", ["reference", "polaris", "lakekeeper", "lakekeeper-0.9"])
def test_presets_are_the_numbers_the_docs_cite(variant):
    assert _preset_row(variant) in (DOCS / "model" / "rest-servers.md").read_text()
    for design, name in DESIGN_OF.items():
        assert from_dict({"design": name.strip("`"), "catalog": {"latency_ms": 10}}).catalog.server.variant == design


def test_service_pointer_preset():
    cfg = from_dict({"design": "service-pointer", "catalog": {"latency_ms": 10}})
    assert (cfg.catalog.backend, cfg.catalog.scope, cfg.catalog.table_metadata_inlined) == ("service", "table", False)
    assert cfg.catalog.server.variant is None and cfg.max_attempts == 5
    assert cfg.retry.table.base_ms == 100 and cfg.retry.table.jitter == 0.1


def test_server_keys_rules():
    with pytest.raises(ConfigError, match="catalog.server"):
        from_dict({"catalog": {"server": {"variant": "reference"}}})          # a storage catalog has no server
    with pytest.raises(ConfigError, match="catalog.server.variant"):
        from_dict({"catalog": {"backend": "service", "latency_ms": 5, "server": {"retries": 1}}})
    with pytest.raises(ConfigError, match="catalog.server.retry"):
        from_dict({"design": "rest", "catalog": {"latency_ms": 5, "server": {"retry": {"policy": "object_store"}}}})
    given = from_dict({"design": "rest", "catalog": {"latency_ms": 5, "server": {"metadata_get": False}}})
    assert (given.catalog.server.metadata_get, given.catalog.server.retries) == (False, 4)


def test_a_server_naming_its_variant_is_replaced_whole():
    """A variant's defaults are its own: switching design or variant never keeps another variant's numbers."""
    lake = from_dict({"design": "rest-lakekeeper", "catalog": {"latency_ms": 5}})
    ref = replaced(lake, {"design": "rest"}).catalog.server
    assert (ref.variant, ref.metadata_get, ref.retries, ref.retry.base_ms) == ("reference", True, 4, 100.0)
    given = from_dict({"design": "rest", "catalog": {"latency_ms": 5, "server": {"variant": "lakekeeper"}}})
    assert given.catalog.server == lake.catalog.server


def test_sweep_names_the_design_its_keys_amount_to():
    from sim.sweep.task import design_of
    keys = {"catalog": {"backend": "service", "scope": "table", "latency_ms": 5, "table_metadata_inlined": True}}
    assert design_of(from_dict(keys)) == "rest"                    # as before: one latency per operation
    keys["catalog"]["server"] = {"variant": "lakekeeper"}
    assert design_of(from_dict(keys)) == "rest-lakekeeper"
