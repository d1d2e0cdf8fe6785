"""File-system tables (design `fs-table`, `catalog.version_files`) and the re-read before the CAS (design `file`,
`commit.reread_before_cas`): request counts and times in closed form (docs/MODEL.md, "File-system tables",
"Re-read before the CAS").

Constant latencies on a hand-made provider: a GET (the version hint's, an exists() probe, a catalog read) takes
G, a PUT (the version hint, the manifest list, the table metadata) P, a conditional write C; each takes effect
at half its latency. No work between the base read and the commit.
"""
from __future__ import annotations

import pytest

from sim.checker import check_history
from sim.config import ConfigError, config_hash, from_dict
from sim.designs import DESIGNS, ICEBERG_CLIENT_RETRY
from sim.providers import load_provider
from sim.rules import checker_rules
from sim.run import run

from helpers import run_both_checked

G, P, C = 5.0, 7.0, 20.0
PREPARE = 2 * G + 2 * P          # GET table metadata, GET manifest list, PUT manifest list, PUT table metadata
NO_WORK = {"median_ms": 0, "sigma": 0, "min_ms": 0}


def _provider(tmp_path, limit: str = "") -> str:
    prov = tmp_path / "const.yaml"
    prov.write_text("name: const\ndescription: constant latencies\nmin_latency_ms: 1\n"
                    f"get: {{median_ms: {G}, sigma: 0}}\nput: {{base_ms: {P}, ms_per_mib: 0, sigma: 0}}\n"
                    f"cas: {{median_ms: {C}, sigma: 0}}\n{limit}")
    return str(prov)


def _one_writer(tmp_path, design: str, commits: int, limit: str = "") -> dict:
    """One writer committing `commits` times back to back: nothing contends."""
    return {"duration_ms": 3_600_000, "warmup_ms": 0, "cooldown_ms": 1_000, "drain_limit_ms": 0,
            "design": design, "storage": {"provider": _provider(tmp_path, limit)},
            "workload": {"runtime": NO_WORK, "writers": {"count": 1, "commits": commits}}}


_run = run_both_checked   # both engines' records, equal; the history checked clean


def test_fs_table_fresh_hint(tmp_path):
    """Each read is the hint's GET and one probe (a miss: the hint is fresh); the commit is the table metadata's
    PUT (the temp file), the create of v{N+1} and the hint's PUT."""
    rec = _run(_one_writer(tmp_path, "fs-table", 5))
    assert (rec["outcome"] == "committed").all()
    read_ms = G + G                                  # hint, miss
    assert (rec["end_ms"] - rec["arrival_ms"]).tolist() == pytest.approx([2 * read_ms + PREPARE + C + P] * 5)
    assert rec["catalog_reads"].tolist() == [2] * 5   # the misses: base read, refresh
    assert rec["gets"].tolist() == [2 + 2] * 5        # two hint GETs, the prepare's two GETs
    assert rec["puts"].tolist() == [3] * 5            # manifest list, table metadata (temp), hint
    assert rec["throttled"].sum() == 0


def test_fs_table_stale_hint_and_a_bucket_per_version_name(tmp_path):
    """A throttled hint: every object allows one write, then none. The first commit's hint PUT lands (the hint
    names v1), every later one is answered 429 and ignored, so the i-th transaction probes v2..vi (hits) and
    v(i+1) (the miss) at each read. Every version file is a fresh name with its own bucket: no create is
    throttled, where one pointer object per table would be after its first write."""
    limit = "mutation_rate_per_s: 1.0e-9\nmutation_burst: 1\n"
    n = 6
    rec = _run(_one_writer(tmp_path, "fs-table", n, limit))
    assert (rec["outcome"] == "committed").all() and rec["throttled"].sum() == 0
    hint = [min(1, i) for i in range(n)]             # before the i-th transaction: v[t] = i
    hits = [i - h for i, h in zip(range(n), hint)]
    assert (rec["end_ms"] - rec["arrival_ms"]).tolist() == pytest.approx(
        [2 * (G + (k + 1) * G) + PREPARE + C + P for k in hits])
    assert rec["gets"].tolist() == [2 * (1 + k) + 2 for k in hits]
    assert rec["catalog_reads"].tolist() == [2] * n
    # the same keys with one object per table (no version files): the second create is throttled
    data = _one_writer(tmp_path, None, n, limit)
    del data["design"]
    data["catalog"] = {"scope": "table"}
    assert _run(data)["throttled"].iloc[1] > 0


def test_fs_table_loser_reads_the_winners_hint(tmp_path):
    """Two transactions on one table 20 ms apart: the second prepared on v0 and creates v1, which the first
    created meanwhile: a table conflict (an attempt spent, no throttle). Its conflict read comes after the
    winner's hint PUT ended: the hint names v1, the probe of v2 misses; it prepares again at once and
    creates v2."""
    data = {"duration_ms": 50, "warmup_ms": 0, "cooldown_ms": 1, "design": "fs-table",
            "storage": {"provider": _provider(tmp_path)}, "retry": {"table": {"policy": "immediate"}},
            "workload": {"inter_arrival": {"distribution": "constant", "mean_ms": 20}, "runtime": NO_WORK}}
    rec = _run(data)
    a, b = rec.iloc[0], rec.iloc[1]
    read_ms = 2 * G                                                 # hint, miss
    a_cas_ms = a["arrival_ms"] + 2 * read_ms + PREPARE + C / 2
    assert a["end_ms"] == pytest.approx(a_cas_ms + C / 2 + P)
    b_fail_ms = b["arrival_ms"] + 2 * read_ms + PREPARE + C          # its create's answer
    assert b_fail_ms - C / 2 > a_cas_ms
    assert b_fail_ms + G / 2 > a_cas_ms + C / 2 + P               # its hint GET after the winner's hint PUT
    assert b["end_ms"] == pytest.approx(b_fail_ms + read_ms + PREPARE + C + P)
    assert (b["attempts"], b["table_conflicts"], b["catalog_reads"]) == (2, 1, 3)
    assert (b["gets"], b["puts"]) == (3 + 2 * 2, 2 * 2 + 1)          # 3 hints, 2 prepares; the hint PUT once


def test_reread_closed_form(tmp_path):
    """design file: the catalog is read again after the prepare, right before the CAS (one GET more than the
    default model's commit, which has no re-read)."""
    rec = _run(_one_writer(tmp_path, "file", 3))
    assert (rec["end_ms"] - rec["arrival_ms"]).tolist() == pytest.approx([3 * G + PREPARE + C] * 3)
    assert rec["catalog_reads"].tolist() == [3] * 3 and rec["gets"].tolist() == [2] * 3
    data = _one_writer(tmp_path, None, 3)
    del data["design"]
    plain = _run(data)
    assert (plain["end_ms"] - plain["arrival_ms"]).tolist() == pytest.approx([2 * G + PREPARE + C] * 3)
    assert plain["catalog_reads"].tolist() == [2] * 3


def test_reread_sees_the_table_moved(tmp_path):
    """Two transactions on one table 20 ms apart: the first's CAS lands between the second's refresh and its
    re-read, so the second's attempt fails at the re-read, before any CAS (an attempt spent, a table
    conflict); it prepares again at once (immediate retries), re-reads and commits."""
    data = {"duration_ms": 50, "warmup_ms": 0, "cooldown_ms": 1, "design": "file",
            "storage": {"provider": _provider(tmp_path)},
            "workload": {"inter_arrival": {"distribution": "constant", "mean_ms": 20}, "runtime": NO_WORK}}
    rec = _run(data)
    a, b = rec.iloc[0], rec.iloc[1]
    a_cas_ms = a["arrival_ms"] + 3 * G + PREPARE + C / 2
    b_reread_ms = b["arrival_ms"] + 2 * G + PREPARE + G / 2
    assert b["arrival_ms"] + 2 * G - G / 2 < a_cas_ms < b_reread_ms
    assert a["end_ms"] == pytest.approx(a_cas_ms + C / 2)
    assert b["end_ms"] == pytest.approx(b_reread_ms + G / 2 + PREPARE + G + C)
    assert (b["attempts"], b["table_conflicts"], b["catalog_conflicts"]) == (2, 1, 0)
    assert (b["catalog_reads"], b["gets"], b["puts"]) == (4, 4, 4)


def test_designs_resolve_to_the_documented_keys():
    """docs/MODEL.md, "Named designs": fs-table and file as cited there."""
    fs = from_dict({"design": "fs-table"})
    assert (fs.catalog.backend, fs.catalog.scope, fs.catalog.version_files) == ("storage", "table", True)
    assert (fs.commit.protocol, fs.commit.max_retries, fs.commit.reread_before_cas) == ("rewrite", 4, False)
    for p in (fs.retry.catalog, fs.retry.table):
        assert {k: getattr(p, k) for k in ICEBERG_CLIENT_RETRY} == ICEBERG_CLIENT_RETRY
    assert fs.storage.throttle_retry.policy == "object_store"
    f = from_dict({"design": "file"})
    assert (f.catalog.scope, f.commit.reread_before_cas, f.storage.throttle_retry.policy) == \
        ("global", True, "google_java")
    assert not from_dict({}).commit.reread_before_cas and not from_dict({}).catalog.version_files
    assert "pointer" not in DESIGNS


def test_keys_are_checked():
    with pytest.raises(ConfigError, match="fs-table.*service-pointer"):
        from_dict({"design": "pointer"})
    for bad in ({"catalog": {"version_files": True}},                                     # scope global
                {"catalog": {"version_files": True, "scope": "table", "table_metadata_inlined": True}},
                {"design": "fs-table", "commit": {"protocol": "log"}}):
        with pytest.raises(ConfigError, match="catalog.version_files"):
            from_dict(bad)
    with pytest.raises(ConfigError, match="commit.reread_before_cas"):
        from_dict({"catalog": {"scope": "table"}, "commit": {"reread_before_cas": True}})
    # the microbenchmark (cas-bench) on design file: its one read is the base of its write, so no re-read
    bench = from_dict({"design": "file", "commit": {"shape": "object"}})
    assert not bench.commit.reread_before_cas
    assert config_hash(bench) == config_hash(from_dict({"commit": {"shape": "object"}}))
    # late keys: configs that leave them alone keep their hash
    assert config_hash(from_dict({"catalog": {"version_files": False}})) == config_hash(from_dict({}))
    assert config_hash(from_dict({"commit": {"reread_before_cas": False}})) == config_hash(from_dict({}))


def test_checker_rules_name_the_design(tmp_path):
    """The checker judges these histories by the design's rules: a re-read that ended an attempt is an attempt
    (without the rule the end row's attempts exceed the CASes), and each version file is its own bucket
    (judged as one object per table, the creates after the first would have needed a token)."""
    data = {"duration_ms": 50, "warmup_ms": 0, "cooldown_ms": 1, "design": "file",
            "storage": {"provider": _provider(tmp_path)},
            "workload": {"inter_arrival": {"distribution": "constant", "mean_ms": 20}, "runtime": NO_WORK}}
    cfg = from_dict(data)
    h = run(cfg, 0, history=True).history
    rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
    assert rules["reread_before_cas"] and check_history(h, **rules) == []
    assert [v.invariant for v in check_history(h, **{**rules, "reread_before_cas": False})] == [3]
    limit = "mutation_rate_per_s: 1.0e-9\nmutation_burst: 1\n"
    cfg = from_dict(_one_writer(tmp_path, "fs-table", 3, limit))
    h = run(cfg, 0, history=True).history
    rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
    assert rules["version_files"] and check_history(h, **rules) == []
    assert {v.invariant for v in check_history(h, **{**rules, "version_files": False})} == {6}
