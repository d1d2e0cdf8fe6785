"""Metadata that grows with the table's age (docs/MODEL.md, "Metadata that grows"): metadata.json's size follows its
formula commit by commit and falls at an expiry, a table can start old, a PUT costs by its size as the provider's
profile says, commits get slower as the table ages, both engines agree."""
from __future__ import annotations

import numpy as np
import pytest

from sim.api import config, run
from sim.checker import check_history
from sim.providers import profile_of
from sim.rules import checker_rules

DAY_MS = 86_400_000.0
SNAP = 681 + 65          # a snapshot and its snapshot-log entry (the FSx for Lustre post's table, Iceberg's format)
LOG = 153                # a metadata-log entry

ONE_A_MINUTE = {"duration_ms": 3 * DAY_MS, "warmup_ms": 3_600_000, "cooldown_ms": 3_600_000,
                "storage": {"provider": "instant"},
                "workload": {"writers": {"count": 1, "mode": "periodic", "interval_ms": 60_000},
                             "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}},
                "metadata": {"growth": True}}


def _size(snapshots: int, versions: int) -> int:
    return 1289 + snapshots * SNAP + min(versions, 100) * LOG


def test_metadata_bytes_follow_the_formula_commit_by_commit():
    """One writer alone: its k-th commit writes the metadata.json of k snapshots and k versions."""
    rec = run(config(ONE_A_MINUTE, duration_ms=DAY_MS, warmup_ms=0, cooldown_ms=1000), stream=False).records
    assert (rec["outcome"] == "committed").all() and (rec["attempts"] == 1).all()
    k = np.arange(1, len(rec) + 1)
    assert np.array_equal(rec["metadata_bytes"].to_numpy(), 1289 + k * SNAP + np.minimum(k, 100) * LOG)


def test_a_table_can_start_old():
    cfg = config(ONE_A_MINUTE, duration_ms=600_000, warmup_ms=0, cooldown_ms=1000,
                 **{"metadata.snapshots_at_start": 5000, "metadata.age_at_start_ms": 5 * DAY_MS})
    first = run(cfg, stream=False).records.iloc[0]
    assert first.metadata_bytes == _size(5001, 5001)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_an_expiry_keeps_its_max_age_and_the_size_falls(engine):
    """Daily expiry keeping one day: a commit a minute leaves 1,440 snapshots (plus the one committed at the
    expiry's own instant, at most) after each expiry a day into the run (the first one's day holds start snapshots,
    spread thinner), and the next commit's metadata.json is that size."""
    cfg = config(ONE_A_MINUTE, **{"metadata.snapshots_at_start": 5000, "metadata.age_at_start_ms": 5 * DAY_MS,
                                  "maintenance.expire_snapshots": {"every_ms": DAY_MS, "max_age_ms": DAY_MS}})
    r = run(cfg, history=True, stream=False, engine=engine)
    assert not check_history(r.history, **checker_rules(cfg, profile_of(cfg)))
    rec = r.records.sort_values("end_ms")
    exp = rec[rec["op"] == "expire_snapshots"]
    assert len(exp) == 3 and (exp["outcome"] == "committed").all()
    for i, (_, e) in enumerate(exp.iterrows()):
        after = rec[(rec["op"] == "fa") & (rec["end_ms"] > e.end_ms)].iloc[0]
        kept = (after.metadata_bytes - 1289 - 100 * LOG) / SNAP - 1
        assert (1439 <= kept <= 1442) if i > 0 else (1000 < kept < 1440), (i, kept)
        before = rec[(rec["op"] == "fa") & (rec["end_ms"] < e.end_ms)].iloc[-1]
        assert before.metadata_bytes > after.metadata_bytes
        assert e.metadata_bytes < before.metadata_bytes          # the expiry writes the shrunk metadata.json


def test_a_put_costs_by_size_as_the_profile_says():
    """On s3's measured set a PUT's median is base + 20 ms/MiB x size, and a GET pays the same slope for the bytes
    above its draw's: a table of 40,000 snapshots (~28 MiB of metadata.json, read then written by each commit)
    pays about twice 20 ms/MiB x 28 MiB more per commit than a young one (the PUT's lognormal skews it up)."""
    young = run(config(ONE_A_MINUTE, duration_ms=DAY_MS / 2, **{"storage.provider": "s3"})).summary
    old = run(config(ONE_A_MINUTE, duration_ms=DAY_MS / 2, **{"storage.provider": "s3",
                                                                "metadata.snapshots_at_start": 40_000})).summary
    mib = _size(40_000, 40_000) / 2 ** 20
    extra = old["commit_latency_p50_ms"] - young["commit_latency_p50_ms"]
    assert 0.9 * 40 * mib < extra < 1.4 * 40 * mib, (extra, 40 * mib)


def test_commits_get_slower_as_the_table_ages():
    """No expiry: every commit rewrites a larger metadata.json, so the mean commit latency rises day by day; with a
    daily expiry keeping a day metadata.json stops growing, and only the manifest list still does (a FastAppend's
    manifests are never merged: 1,440 entries a day), a fraction of the rise."""
    def daily_mean(extra):
        rec = run(config(ONE_A_MINUTE, duration_ms=6 * DAY_MS, **{"storage.provider": "s3"}, **extra),
                  stream=False).records
        fa = rec[(rec["op"] == "fa") & (rec["outcome"] == "committed")]
        return ((fa["end_ms"] - fa["runtime_end_ms"]).groupby(fa["arrival_ms"] // DAY_MS).mean()).to_numpy()
    grow = daily_mean({})
    assert np.all(np.diff(grow) > 0), grow
    kept = daily_mean({"maintenance.expire_snapshots": {"every_ms": DAY_MS, "max_age_ms": DAY_MS}})
    assert kept[-1] < grow[-1] and 0 < kept[-1] - kept[2] < 0.25 * (grow[-1] - grow[2]), (kept, grow)


def test_growth_needs_its_switch():
    from sim.config import ConfigError
    with pytest.raises(ConfigError, match="metadata.snapshots_at_start: not used unless metadata.growth"):
        config({"metadata": {"snapshots_at_start": 10}})
    with pytest.raises(ConfigError, match="maintenance.compaction.max_age_ms"):
        config({"maintenance": {"compaction": {"every_ms": 1000, "max_age_ms": 5}}})


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("partial", [{}, {"partial_progress": True, "groups": 12}])
def test_rings_grown_between_events_change_nothing(monkeypatch, engine, partial):
    """The per-table rings (commits for the rules, snapshot times for an expiry) start at 4 entries and double between
    events as a compaction's window and the retained snapshots need (in partial progress, from its run's start,
    batches not yet open included): the records are those of rings that never grow."""
    from sim.model import build
    cfg = config(ONE_A_MINUTE, duration_ms=DAY_MS / 2, **{
        "workload.operations": {"partitions": 2, "overwrite_share": 0.3},
        "maintenance.compaction": {"every_ms": 3_600_000, "median_ms": 1_800_000, **partial},
        "maintenance.expire_snapshots": {"every_ms": 7_200_000, "max_age_ms": 3_600_000}})
    wide = run(cfg, stream=False, engine=engine).records
    monkeypatch.setattr(build, "RING", 4)
    grown = []
    for name in ("_grown_ring", "_grown_snapshot_times"):
        f = getattr(build, name)
        monkeypatch.setattr(build, name, lambda m, f=f, name=name: (grown.append(name), f(m))[1])
    narrow = run(cfg, stream=False, engine=engine).records
    assert {"_grown_ring", "_grown_snapshot_times"} <= set(grown)
    assert narrow.equals(wide) and (wide["op"] == "compaction").any()


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("max_age_ms, outcome", [(5_000, "aborted"), (60_000, "committed")])
def test_an_expiry_inside_a_compactions_window_fails_it(engine, max_age_ms, outcome):
    """A 30 s compaction beside an append a second: an expiry that commits at about 20 s keeping 5 s removes the
    snapshot right after the compaction's start, so its validation cannot walk back to it ("Cannot determine history
    between starting snapshot", a ValidationException: its work lost, though appends alone never fail it); one
    keeping 60 s removes nothing in the window. No metadata growth needed: with an expiry the snapshots are counted."""
    cfg = config({"duration_ms": 40_000, "warmup_ms": 0, "cooldown_ms": 100, "storage": {"provider": "instant"},
                  "workload": {"inter_arrival": {"distribution": "constant", "mean_ms": 1000},
                               "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0},
                               "operations": {"partitions": 1}},
                  "maintenance": {"compaction": {"every_ms": 1000, "median_ms": 30_000},
                                  "expire_snapshots": {"every_ms": 1000, "median_ms": 20_000,
                                                       "max_age_ms": max_age_ms}}})
    rec = run(cfg, stream=False, engine=engine).records
    first = rec[rec["op"] == "compaction"].iloc[0]
    expiry = rec[rec["op"] == "expire_snapshots"].iloc[0]
    assert expiry["outcome"] == "committed" and expiry["end_ms"] < first["end_ms"]
    assert first["outcome"] == outcome
    if outcome == "aborted":
        assert first["reason"] == "validation_failed"
    assert (rec["op"] == "fa").sum() > 30 and (rec[rec["op"] == "fa"]["outcome"] == "committed").all()
