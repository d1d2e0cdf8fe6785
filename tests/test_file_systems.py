"""File-system providers (docs/model/storage-providers.md, "File systems"): which designs each store can run, and
what a file system's create-if-absent sends, in closed form with constant latencies on hand-made providers (a
GET takes G, a HEAD H, a PUT P, the rename or link C; each takes effect at half its latency), both engines.
"""
from __future__ import annotations

import pytest

from sim.config import ConfigError, from_dict, set_path
from sim.providers import load_provider

from helpers import run_both_checked

G, H, P, C = 5.0, 2.0, 7.0, 20.0
PREPARE = 2 * G + 2 * P          # GET table metadata, GET manifest list, PUT manifest list, PUT table metadata
NO_WORK = {"median_ms": 0, "sigma": 0, "min_ms": 0}
FILE_SYSTEMS = {"hdfs": "rename", "hopsfs": "rename", "fsx-lustre": "link"}


def _provider(tmp_path, create: str) -> str:
    prov = tmp_path / f"const-{create}.yaml"
    keys = "" if create == "put" else f"create_if_absent: {create}\nreplace_if_match: false\n"
    prov.write_text(f"name: const-{create}\ndescription: constant latencies\nmin_latency_ms: 1\n"
                    f"get: {{median_ms: {G}, sigma: 0}}\nhead: {{median_ms: {H}, sigma: 0}}\n"
                    f"put: {{base_ms: {P}, ms_per_mib: 0, sigma: 0}}\ncas: {{median_ms: {C}, sigma: 0}}\n{keys}")
    return str(prov)


def _one_writer(provider: str, design: str, commits: int, **paths) -> dict:
    """One writer committing `commits` times back to back: nothing contends."""
    data = {"duration_ms": 3_600_000, "warmup_ms": 0, "cooldown_ms": 1_000, "drain_limit_ms": 0,
            "design": design, "storage": {"provider": provider},
            "workload": {"runtime": NO_WORK, "writers": {"count": 1, "commits": commits}}}
    for path, value in paths.items():
        set_path(data, path, value)
    return data


_run = run_both_checked   # both engines' records, equal; the history checked clean


@pytest.mark.parametrize("name", [*FILE_SYSTEMS, "flashblade"])
def test_each_new_provider_says_how_it_creates_a_name(name):
    prof = load_provider(name, "measured")
    assert prof == load_provider(name, "seed")          # one set of figures: a what-if, no measured loop
    assert prof.create_if_absent == FILE_SYSTEMS.get(name, "none")
    assert prof.replace_if_match is False and prof.head_median_ms is not None


@pytest.mark.parametrize("provider, design", [
    ("hdfs", "file"), ("hopsfs", "file"), ("fsx-lustre", "file"), ("fsx-lustre", "log-spark"),
    ("flashblade", "file"), ("flashblade", "fs-table"), ("flashblade", "log"), ("flashblade", "log-spark")])
def test_a_design_is_refused_where_the_store_lacks_its_conditional_write(provider, design):
    with pytest.raises(ConfigError) as err:
        from_dict({"design": design, "storage": {"provider": provider}})
    assert err.value.path == "storage.provider" and provider in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("provider, design", [
    ("hdfs", "fs-table"), ("hdfs", "log"), ("hdfs", "log-spark"), ("hopsfs", "log-spark"),
    ("fsx-lustre", "log"), ("fsx-lustre", "fs-table"), ("flashblade", "delta-dynamodb")])
def test_a_design_runs_where_the_store_gives_its_conditional_write(provider, design):
    data = {"design": design, "storage": {"provider": provider}}
    if design == "delta-dynamodb":
        data["log_store"] = {"latency_ms": 5}
    assert from_dict(data).storage.provider == provider
    for service in ("rest", "hive"):                 # a service commits: any store holds its files
        assert from_dict({"design": service, "storage": {"provider": provider}, "catalog": {"latency_ms": 5}})


@pytest.mark.parametrize("create, extra_ms, gets", [("put", 0.0, 0), ("rename", H, 1), ("link", 0.0, 0)])
def test_fs_table_creates_after_an_exists_check_by_rename(tmp_path, create, extra_ms, gets):
    """Each read is the hint's GET and one exists() probe that misses (a GET on an object store, a HEAD on a file
    system); a rename's commit checks exists() first (a HEAD): Hadoop tables' renameToFinal."""
    rec = _run(_one_writer(_provider(tmp_path, create), "fs-table", 5))
    probe = G if create == "put" else H
    assert (rec["outcome"] == "committed").all()
    read_ms = G + probe
    assert (rec["end_ms"] - rec["arrival_ms"]).tolist() == pytest.approx(
        [2 * read_ms + PREPARE + extra_ms + C + P] * 5)
    assert rec["gets"].tolist() == [4 + gets] * 5     # two hint GETs, the prepare's two, the exists() check
    assert rec["puts"].tolist() == [3] * 5            # manifest list, table metadata (temp), hint


@pytest.mark.parametrize("design, create", [("log", "rename"), ("log", "link"), ("log-spark", "rename")])
def test_a_log_entry_is_a_temp_file_then_a_rename_or_link(tmp_path, design, create):
    """The same writer on an object store and on a file system: each entry costs a temp file's PUT more, and by
    rename an exists() check (a HEAD) before it; nothing else moves (the log stays under one LIST page). (Delta
    Spark by hard link is refused: its log store on a local mount is safe within one JVM only.)"""
    obj = _run(_one_writer(_provider(tmp_path, "put"), design, 8))
    fs = _run(_one_writer(_provider(tmp_path, create), design, 8))
    exists = create == "rename"
    assert (obj["outcome"] == "committed").all() and (fs["outcome"] == "committed").all()
    assert (fs["end_ms"] - fs["arrival_ms"] - (obj["end_ms"] - obj["arrival_ms"])).tolist() == pytest.approx(
        [P + (H if exists else 0.0)] * 8)
    assert (fs["puts"] - obj["puts"]).tolist() == [1] * 8
    assert (fs["gets"] - obj["gets"]).tolist() == [int(exists)] * 8
    assert fs["lists"].equals(obj["lists"])


def test_a_log_list_on_a_file_system_reads_the_whole_directory(tmp_path):
    """With 2,500 entries left by earlier commits (`commit.log_entries_at_start`) and a checkpoint every 10: an
    object store's LIST starts at the newest checkpoint (one page); a file system's lists the directory, 2,500 +
    v entries and v // 10 checkpoints, 1,000 a page: the pages before the last are read first, a GET each."""
    at_start = {"commit.log_entries_at_start": 2_500, "commit.checkpoint_interval": 10}
    obj = _run(_one_writer(_provider(tmp_path, "put"), "log-spark", 4, **at_start))
    fs = _run(_one_writer(_provider(tmp_path, "rename"), "log-spark", 4, **at_start))
    # Delta Spark's first attempt creates without a LIST: one LIST a transaction, its snapshot read's
    assert (obj["catalog_reads"] == 1).all() and (fs["catalog_reads"] == 1).all()
    pages_before_last = [(2_500 + v + v // 10 - 1) // 1_000 for v in range(4)]
    assert (fs["lists"] - obj["lists"]).tolist() == pages_before_last
    assert (fs["end_ms"] - fs["arrival_ms"] - (obj["end_ms"] - obj["arrival_ms"])).tolist() == pytest.approx(
        [n * G + P + H for n in pages_before_last])
