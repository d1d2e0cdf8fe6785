"""What a store does with concurrent writes to one key (docs/MODEL.md, "Concurrent writes to one object"): where
S3 checks a conditional write, and which writes that moves; GCS's per-object limit under the measured set."""
from __future__ import annotations

import pytest

from sim.config import from_dict
from sim.engines import make_engine
from sim.model.params import params_of
from sim.model.state import Src

HEAD_MS = (1.0, 61.0)     # writer 0's HEAD, then writer 1's
CAS_MS = (100.0, 20.0)    # the first conditional write sent (writer 0's), then the second (writer 1's)
GET_MS = 5.0


def _two_writers(tmp_path, profile_set: str) -> dict:
    """Two writers, one op each on one object: HEAD, GET, conditional PUT. Every latency is fixed (the draws are
    set below); a sigma above 0 only makes each request a draw of its own."""
    prov = tmp_path / "checked.yaml"
    requests = ("min_latency_ms: 0.001\nget: {median_ms: 5, sigma: 0.01}\n"
                "put: {base_ms: 5, ms_per_mib: 0, sigma: 0.01}\ncas: {median_ms: 20, sigma: 0.01}\n")
    indented = "".join(f"  {line}\n" for line in requests.splitlines())
    prov.write_text(f"name: checked\ndescription: fixed latencies\n{requests}measured:\n"
                    f"  description: the same, checked at completion\n{indented}"
                    "  head: {median_ms: 5, sigma: 0.01}\n  cas_checked_at_completion: true\n")
    return {"duration_ms": 10_000, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": 10_000,
            "storage": {"provider": str(prov), "profile_set": profile_set},
            "commit": {"shape": "object", "max_retries": 0},
            "workload": {"runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0},
                         "writers": {"count": 2, "commits": 1}}}


def _run_fixed(data: dict, engine: str):
    """Run with the HEAD (under the seed set, the HEAD's GET-profile draw), GET and CAS draws fixed: writer 0
    sends its conditional write at 1 + 5 = 6 ms and it takes 100 ms; writer 1 sends its at 61 + 5 = 66 ms and it
    takes 20 ms. Their midpoints: 56 and 76 ms; their completions: 106 and 86 ms."""
    cfg = from_dict(data)
    eng = make_engine(cfg, 0, True, engine)
    m = eng.r.m
    own_head = m.p.own_head

    def fix(src, values):
        at, step = m.draw_at[src], m.step[src]
        assert step == 1
        for k, v in enumerate(values):
            m.draws[at + k] = v
    fix(Src.HEAD if own_head else Src.GET, HEAD_MS)   # the seed set's HEAD is a GET-profile draw
    fix(Src.READ, (GET_MS, GET_MS))
    fix(Src.CAS, CAS_MS)
    eng.run()
    rec = eng.records_frame().sort_values("writer")
    return rec, eng.history_frame()


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_s3_the_write_that_finishes_first_wins_whoever_started_first(tmp_path, engine):
    """S3: "the first write operation to finish succeeds" (userguide/conditional-writes.html). Writer 0 reads
    first and sends its conditional write first, but writer 1's finishes first: under the measured set (checked
    at completion) writer 1 commits and writer 0 fails; under the seed set (checked at half its latency) writer
    0's write takes effect before writer 1 reads."""
    rec, hist = _run_fixed(_two_writers(tmp_path, "measured"), engine)
    assert rec["outcome"].tolist() == ["aborted", "committed"]
    cas = hist[hist["kind"] == "cas"].sort_values("time_ms")
    assert cas["time_ms"].tolist() == pytest.approx([86.0, 106.0])      # effect points: the completions
    assert (cas["answer_ms"] == cas["time_ms"]).all()                    # the answer at once
    assert rec["end_ms"].tolist() == pytest.approx([106.0, 86.0])
    rec, hist = _run_fixed(_two_writers(tmp_path, "seed"), engine)
    cas = hist[hist["kind"] == "cas"].sort_values("time_ms")
    assert cas["time_ms"].tolist() == pytest.approx([56.0, 76.0])
    # checked at half its latency, writer 0's write takes effect (56 ms) before writer 1 reads (63.5 ms): both commit
    assert rec["outcome"].tolist() == ["committed", "committed"]
    assert rec["end_ms"].tolist() == pytest.approx([106.0, 86.0])


def test_a_one_set_file_says_its_store_checks_at_completion(tmp_path):
    """A file of one set of figures (a fitted store's: SeaweedFS's conditional PUT, the first to finish wins) gives
    `cas_checked_at_completion` at the top: its conditional writes take effect at their completion under either
    set; in a file with a measured set the key belongs there."""
    from sim.providers import ProviderError, load_provider
    prov = tmp_path / "one.yaml"
    prov.write_text("name: one\ndescription: fitted\nmin_latency_ms: 0.001\nget: {median_ms: 5, sigma: 0.01}\n"
                    "put: {base_ms: 5, ms_per_mib: 0, sigma: 0.01}\ncas: {median_ms: 20, sigma: 0.01}\n"
                    "cas_checked_at_completion: true\n")
    for profile_set in ("measured", "seed"):
        data = {"design": "log", "storage": {"provider": str(prov), "profile_set": profile_set}}
        p, _ = params_of(from_dict(data), False)
        assert (p.cf, p.cg) == (1.0, 0.0)
    _two_writers(tmp_path, "measured")                  # writes checked.yaml, a file with a measured set
    two = tmp_path / "checked.yaml"
    two.write_text(two.read_text() + "cas_checked_at_completion: true\n")
    with pytest.raises(ProviderError, match="checked.yaml.cas_checked_at_completion: in a file with a measured set"):
        load_provider(str(two), "measured")
    prov.write_text(prov.read_text() + "get_service_ms: 3.5\n")
    assert load_provider(str(prov), "seed").get_service_ms == 3.5
    three = tmp_path / "three.yaml"
    three.write_text(two.read_text().removesuffix("cas_checked_at_completion: true\n") + "get_service_ms: 2\n")
    with pytest.raises(ProviderError, match="three.yaml.get_service_ms: in a file with a measured set"):
        load_provider(str(three), "measured")


def _head_or_get(tmp_path, from_head: bool, engine: str):
    """Two writers, one op each, every latency fixed, checked at completion: writer 0's HEAD 1 ms, GET 5 ms, PUT
    20 ms (it commits at 26 ms); writer 1's HEAD 20 ms (its midpoint 10 ms), GET 20 ms (midpoint 30 ms), PUT 5 ms."""
    data = _two_writers(tmp_path, "measured")
    prov = tmp_path / "checked.yaml"
    if from_head:
        prov.write_text(prov.read_text() + "  version_from_head: true\n")
    cfg = from_dict(data)
    eng = make_engine(cfg, 0, True, engine)
    m = eng.r.m
    assert m.p.head_version == from_head
    for src, values in ((Src.HEAD, (1.0, 20.0)), (Src.READ, (5.0, 20.0)), (Src.CAS, (20.0, 5.0))):
        at = m.draw_at[src]
        m.draws[at:at + 2] = values
    eng.run()
    return eng.records_frame().sort_values("writer"), eng.history_frame()


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_the_conditional_write_expects_the_heads_version_where_the_client_takes_it(tmp_path, engine):
    """The benchmark's client on S3 and GCS sends the ETag its HEAD saw (`version_from_head`): writer 1's HEAD
    (10 ms) comes before writer 0's commit (26 ms), its GET (30 ms) after: from the HEAD its write fails; from the
    GET (Azure's client) it commits. Either way the op is HEAD + GET + PUT: the same times, the same counts."""
    rec, hist = _head_or_get(tmp_path, True, engine)
    assert rec["outcome"].tolist() == ["committed", "aborted"]
    reads = hist[(hist["kind"] == "read") & (hist["txn"] == rec["txn"].iloc[1])]
    assert reads["time_ms"].tolist() == pytest.approx([10.0])
    at_head = rec
    rec, hist = _head_or_get(tmp_path, False, engine)
    assert rec["outcome"].tolist() == ["committed", "committed"]
    reads = hist[(hist["kind"] == "read") & (hist["txn"] == rec["txn"].iloc[1])]
    assert reads["time_ms"].tolist() == pytest.approx([30.0])
    assert rec["end_ms"].tolist() == at_head["end_ms"].tolist() == pytest.approx([26.0, 45.0])
    cols = ["gets", "catalog_reads", "cases"]
    assert rec[cols].to_numpy().tolist() == at_head[cols].to_numpy().tolist()


def _queued(tmp_path, writers: int, engine: str):
    """`writers` closed-loop writers on one object, HEAD and GET 1 us, a conditional PUT of constant 10 ms, a store
    that serves conditional writes to the object one at a time (`cas_one_at_a_time`), 4 s."""
    prov = tmp_path / "queued.yaml"
    requests = ("min_latency_ms: 0\nget: {median_ms: 0.001, sigma: 0}\n"
                "put: {base_ms: 10, ms_per_mib: 0, sigma: 0}\ncas: {median_ms: 10, sigma: 0}\n")
    prov.write_text(f"name: queued\ndescription: one write at a time\n{requests}cas_one_at_a_time: true\n")
    cfg = from_dict({"duration_ms": 4_000, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": 4_000,
                     "storage": {"provider": str(prov)}, "commit": {"shape": "object", "max_retries": 0},
                     "workload": {"runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0},
                                  "writers": {"count": writers}}})
    eng = make_engine(cfg, 0, True, engine).run()
    return cfg, eng.records_frame(), eng.history_frame()


@pytest.mark.parametrize("engine", ["fast", pytest.param("simpy", marks=pytest.mark.slow)])  # (each compares both)
def test_a_per_object_queue_serves_one_write_at_a_time(tmp_path, engine):
    """A queue of conditional writes with constant service s = 10 ms: attempts/s = 1 / s whatever the writers
    (reads take 1 us); from two writers on a write waits its turn, and a loser's answer comes after the winner's
    (FIFO: the write that beat it was served first). Both engines, the same records; the checker holds the history."""
    from sim.checker import check_history
    from sim.providers import load_provider
    from sim.rules import checker_rules
    for n in (1, 2, 4, 8):
        cfg, rec, hist = _queued(tmp_path, n, engine)
        done = (rec["end_ms"] <= 4_000).sum()                  # attempts answered in the 4 s
        assert done / 4.0 == pytest.approx(100.0, rel=0.01), n  # a second: 1 / s
        assert (rec["pool_wait_ms"] > 0).any() == (n > 1)
        rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
        assert check_history(hist, **rules) == []
        cas = hist[hist["kind"] == "cas"].sort_values("time_ms")
        won = cas[cas["ok"].astype(bool)]
        for _, lost in cas[~cas["ok"].astype(bool)].iterrows():
            before = won[won["time_ms"] < lost["time_ms"]]
            assert lost["answer_ms"] > before["answer_ms"].iloc[-1]
        assert (n == 1) == cas["ok"].astype(bool).all()
    other = "simpy" if engine == "fast" else "fast"
    assert _queued(tmp_path, 4, other)[1].equals(rec := _queued(tmp_path, 4, engine)[1]) and len(rec) > 0


NEEDS = {"rest": ("catalog",), "service-pointer": ("catalog",), "hive": ("catalog", "lock"),
         "hudi": ("lock",), "delta-dynamodb": ("log_store",)}   # round trips with no public figure


def test_where_the_check_applies():
    """At completion only for a storage object's conditional write under a set that says so (S3 and S3 Express,
    measured); a service's CAS, a DynamoDB log store's PutItem and the locked designs keep the catalog's
    fraction; the seed set is unchanged (cf = f, cg = g)."""
    def p(**over):
        return params_of(from_dict(over), False)[0]
    for prov in ("s3", "s3x"):
        q = p(**{"storage": {"provider": prov, "profile_set": "measured"}})
        assert (q.cf, q.cg, q.f) == (1.0, 0.0, 0.5)
        q = p(**{"storage": {"provider": prov, "profile_set": "seed"}})
        assert (q.cf, q.cg) == (q.f, q.g)
    for prov in ("azure", "azurex", "gcp"):
        q = p(**{"storage": {"provider": prov, "profile_set": "measured"}})
        assert (q.cf, q.cg) == (q.f, q.g)
    for design in ("rest", "service-pointer", "delta-dynamodb", "hive", "hudi"):
        over = {"catalog": {"latency_ms": 5}, "log_store": {"latency_ms": 5}, "lock": {"latency_ms": 5}}
        over = {k: v for k, v in over.items() if k in NEEDS.get(design, ())}
        q = p(**{"design": design, "storage": {"provider": "s3", "profile_set": "measured"}, **over})
        assert (q.cf, q.cg) == (q.f, q.g), design
    for design in ("file", "log", "fs-table"):
        q = p(**{"design": design, "storage": {"provider": "s3", "profile_set": "measured"}})
        assert q.cf == 1.0, design


def test_a_measured_set_may_have_a_limit_of_its_own(tmp_path):
    """A measured set's `mutation_rate_per_s` and `mutation_burst` replace the provider's under that set only;
    without them it inherits the provider's; a burst with no rate is an error naming its path."""
    from sim.providers import ProviderError, load_provider
    base = ("name: lim\ndescription: d\nmin_latency_ms: 1\nget: {median_ms: 5, sigma: 0.1}\n"
            "put: {base_ms: 5, ms_per_mib: 0, sigma: 0.1}\ncas: {median_ms: 20, sigma: 0.1}\n"
            "mutation_rate_per_s: 1\n")
    measured = ("measured:\n  description: m\n  min_latency_ms: 1\n  get: {median_ms: 5, sigma: 0.1}\n"
                "  head: {median_ms: 5, sigma: 0.1}\n  put: {base_ms: 5, ms_per_mib: 0, sigma: 0.1}\n"
                "  cas: {median_ms: 20, sigma: 0.1}\n")
    own, inherit, bad = (tmp_path / f"{n}.yaml" for n in ("own", "inherit", "bad"))
    own.write_text(base + measured + "  mutation_rate_per_s: 2.5\n  mutation_burst: 4\n")
    inherit.write_text(base + measured)
    bad.write_text(base + measured + "  mutation_burst: 4\n")
    seed, m = load_provider(str(own), "seed"), load_provider(str(own), "measured")
    assert (seed.mutation_rate_per_s, seed.mutation_burst) == (1.0, 1.0)
    assert (m.mutation_rate_per_s, m.mutation_burst) == (2.5, 4.0)
    m = load_provider(str(inherit), "measured")
    assert (m.mutation_rate_per_s, m.mutation_burst) == (1.0, 1.0)
    with pytest.raises(ProviderError, match=r"bad.yaml.measured.mutation_burst: needs mutation_rate_per_s"):
        load_provider(str(bad), "measured")
