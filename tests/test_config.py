"""Config as data: defaults, validation with key paths, hashing, overrides."""
import pytest
import yaml

from sim import config as C


def test_defaults_are_the_documented_ones():
    c = C.from_dict({})
    assert (c.duration_ms, c.warmup_ms, c.cooldown_ms) == (3_600_000, 900_000, 900_000)
    assert c.catalog.backend == "storage" and c.storage.provider == "s3"
    assert c.workload.inter_arrival.distribution == "exponential" and c.workload.num_tables == 1
    assert c.workload.fast_append_ratio == 1.0
    assert (c.workload.runtime.median_ms, c.workload.runtime.sigma, c.workload.runtime.min_ms) == (180_000, 1.5, 30_000)
    assert c.commit.first_attempt == "refresh" and c.commit.max_retries == 10
    assert c.retry.catalog.policy == c.retry.table.policy == "immediate"


@pytest.mark.parametrize("data, path, words", [
    ({"workload": {"num_tabels": 3}}, "workload.num_tabels", "unknown key"),
    ({"workload": {"num_tables": 0}}, "workload.num_tables", ">= 1"),
    ({"workload": {"num_tables": "3"}}, "workload.num_tables", "integer"),
    ({"workload": {"fast_append_ratio": 1.5}}, "workload.fast_append_ratio", "<= 1"),
    ({"catalog": {"backend": "service", "latency_ms": -1}}, "catalog.latency_ms", ">= 0"),
    ({"catalog": {"backend": "service"}}, "catalog.latency_ms", "exactly one"),
    ({"catalog": {"latency_ms": 5}}, "catalog.latency_ms", "backend is storage"),
    ({"storage": {"provider": "s4"}}, "storage.provider", "unknown provider"),
    ({"storage": {"profile_set": "measurd"}}, "storage.profile_set", "expected one of seed, measured"),
    ({"retry": {"table": {"policy": "sometimes"}}}, "retry.table.policy", "one of"),
    ({"retry": {"table": {"policy": "fixed"}}}, "retry.table.delay_ms", "required"),
    ({"retry": {"table": {"policy": "immediate", "delay_ms": 5}}}, "retry.table.delay_ms", "not used"),
    ({"workload": {"inter_arrival": {"distribution": "lognormal", "median_ms": 50}}},
     "workload.inter_arrival.sigma", "required"),
    ({"workload": {"table_selection": {"distribution": "zipf"}}}, "workload.table_selection.alpha", "required"),
    ({"commit": {"metadata_read_on_failure": "yes"}}, "commit.metadata_read_on_failure", "true or false"),
    ({"warmup_ms": 2_000_000, "cooldown_ms": 2_000_000}, "warmup_ms", "measurement window"),
    ({"io": 5}, "io", "mapping"),
])
def test_bad_values_name_their_path(data, path, words):
    with pytest.raises(C.ConfigError) as exc:
        C.from_dict(data)
    assert exc.value.path == path
    assert words in str(exc.value)


def test_hash_is_stable_and_sensitive():
    a = C.from_dict({"workload": {"num_tables": 5}})
    assert C.config_hash(a) == C.config_hash(C.from_dict({"workload": {"num_tables": 5.0}}))   # same value, same hash
    assert C.config_hash(a) != C.config_hash(C.replaced(a, {"seed": 1}))
    assert C.config_hash(a) != C.config_hash(C.replaced(a, {"workload.num_tables": 6}))
    assert len(C.config_hash(a)) == 16


def test_exponential_policy_gets_icebergs_defaults():
    c = C.from_dict({"retry": {"table": {"policy": "exponential"}}})
    t = c.retry.table
    assert (t.base_ms, t.factor, t.max_ms, t.jitter) == (100.0, 2.0, 60_000.0, 0.1)


def test_overrides_parse_yaml_scalars():
    assert C.parse_override("workload.num_tables=5") == ("workload.num_tables", 5)
    assert C.parse_override("commit.first_attempt=stale") == ("commit.first_attempt", "stale")
    with pytest.raises(C.ConfigError):
        C.parse_override("nonsense")


def test_config_is_frozen():
    c = C.from_dict({})
    with pytest.raises(Exception):
        c.seed = 3


def test_exponential_backoff_caps_instead_of_overflowing():
    from sim.model.retry import exponential_delay_ms
    assert exponential_delay_ms(100.0, 2.0, 60_000.0, 1) == 100.0
    assert exponential_delay_ms(100.0, 2.0, 60_000.0, 3) == 400.0
    assert exponential_delay_ms(100.0, 10.0, 60_000.0, 400) == 60_000.0   # 10**399 overflows a float


# ------------------------------------------------------------------------------------- sim.schema, the validator

from sim.schema import Field, check  # noqa: E402

SHAPE = {"name": Field(str, required=True), "level": Field(int, default=3, ge=1, le=5),
         "mode": Field(str, choices=("fast", "slow")), "rate": Field(float, gt=0),
         "inner": Field({"on": Field(bool, default=False), "deep": Field({"ms": Field(float, ge=0)})})}


@pytest.mark.parametrize("data, path, words", [
    ({"name": "a", "inner": {"deep": {"msx": 1}}}, "inner.deep.msx", "unknown key (expected one of: ms)"),
    ({"name": "a", "nmae": "b"}, "nmae", "unknown key (expected one of: name, level, mode, rate, inner)"),
    ({"name": 5}, "name", "expected a string, got 5"),
    ({"name": "a", "level": "3"}, "level", "expected an integer, got '3'"),
    ({"name": "a", "level": 2.5}, "level", "expected an integer, got 2.5"),
    ({"name": "a", "level": True}, "level", "expected an integer, got True"),
    ({"name": "a", "level": 2**63}, "level", "below 2^63"),
    ({"name": "a", "level": 0}, "level", "expected a value >= 1, got 0"),
    ({"name": "a", "level": 6}, "level", "expected a value <= 5, got 6"),
    ({"name": "a", "rate": 0}, "rate", "expected a value > 0, got 0.0"),
    ({"name": "a", "rate": float("inf")}, "rate", "expected a finite number"),
    ({"name": "a", "rate": None}, "rate", "expected a number, got null"),
    ({"name": "a", "mode": "medium"}, "mode", "expected one of fast, slow, got 'medium'"),
    ({"name": "a", "inner": {"on": "yes"}}, "inner.on", "expected true or false, got 'yes'"),
    ({"name": "a", "inner": {"deep": {"ms": -1}}}, "inner.deep.ms", ">= 0"),
    ({"name": "a", "inner": [1]}, "inner", "expected a mapping, got [1]"),
    ({}, "name", "missing"),
])
def test_check_names_the_dotted_path_in_one_line(data, path, words):
    with pytest.raises(C.ConfigError) as exc:
        check(SHAPE, data)
    assert exc.value.path == path and words in str(exc.value)
    assert str(exc.value).startswith(f"{path}: ") and "\n" not in str(exc.value)


def test_check_normalizes_and_fills_defaults():
    got = check(SHAPE, {"name": "a", "rate": 2, "level": 4.0, "inner": None})
    assert got == {"name": "a", "level": 4, "rate": 2.0, "inner": {"on": False}}
    assert type(got["rate"]) is float and type(got["level"]) is int
    assert check(SHAPE, {"name": "a"}, "top") == {"name": "a", "level": 3}
    with pytest.raises(C.ConfigError) as exc:
        check(SHAPE, {"name": "a", "inner": {"deep": {"ms": "x"}}}, "top")
    assert exc.value.path == "top.inner.deep.ms"


def test_check_raises_the_callers_error():
    class Oops(ValueError):
        pass
    with pytest.raises(Oops, match=r"^f\.yaml\.level: expected a value >= 1, got 0$"):
        check(SHAPE, {"name": "a", "level": 0}, "f.yaml", lambda path, msg: Oops(f"{path}: {msg}"))


def test_a_dataclass_is_a_shape_typed_by_its_annotations():
    rp = check(C.RetryPolicy, {"policy": "fixed", "delay_ms": 5})
    assert rp == C.RetryPolicy(policy="fixed", delay_ms=5.0) and type(rp.delay_ms) is float
    with pytest.raises(C.ConfigError, match="^x.factor: expected a value >= 1, got 0.5$"):
        check(C.RetryPolicy, {"factor": 0.5}, "x")
    assert C.check_path("retry.table") is True and C.check_path("retry.table.policy") is False
    with pytest.raises(C.ConfigError) as exc:
        C.check_path("retry.tabel.policy")
    assert exc.value.path == "retry.tabel"


@pytest.mark.parametrize("data, path", [
    ({"design": {}}, "design"), ({"design": ["log"]}, "design"), ({"design": "lgo"}, "design"),
    ({"commit": {"protocol": "log"}}, "catalog.scope"),
    ({"design": "log", "catalog": {"table_metadata_inlined": True}}, "catalog.table_metadata_inlined"),
    ({"workload": {"inter_arrival": {"distribution": "bursty", "mean_ms": 10, "burst_mean_ms": 1, "burst_ms": 100,
                                     "quiet_ms": 100}}}, "workload.inter_arrival.burst_mean_ms"),
    ({"storage": {"throttle_retry": {"policy": "fixed"}}}, "storage.throttle_retry.delay_ms"),
    ({"catalog": {"latency": None}}, "catalog.latency"),       # a null section is an empty one, still unread
])
def test_cross_field_rules_name_their_path(data, path):
    with pytest.raises(C.ConfigError) as exc:
        C.from_dict(data)
    assert exc.value.path == path


_MEASURED = {"description": "m", "min_latency_ms": 1, "head": {"median_ms": 2, "sigma": 0.1},
             "get": {"median_ms": 2, "sigma": 0.1}, "put": {"base_ms": 6, "ms_per_mib": 10, "sigma": 0.2},
             "cas": {"median_ms": 9, "sigma": 0.1}}


@pytest.mark.parametrize("edit, message", [
    ({"bogus": 1}, "p.yaml.bogus: unknown key (expected one of: name, description, min_latency_ms, get, put, cas, "
                   "list, delete, create_if_absent, replace_if_match, head, mutation_rate_per_s, mutation_burst, "
                   "mutation_refusal_tokens, client_rate_per_s, "
                   "client_burst, client_refusal_tokens, cas_one_at_a_time, cas_checked_at_completion, get_service_ms, "
                   "marker_lock_window_ms, marker_lock_poll_ms, measured)"),
    ({"measured": {"description": "m", "min_latency_ms": 1, "get": {"median_ms": 2, "sigma": 0.1},
                   "put": {"base_ms": 6, "ms_per_mib": 10, "sigma": 0.2}, "cas": {"median_ms": 9, "sigma": 0.1}}},
     "p.yaml.measured.head: missing"),
    ({"measured": {"description": "m", "min_latency_ms": 1, "head": {"median_ms": 2, "sigma": 0.1},
                   "get": {"median_ms": 2, "sigma": 0.1}, "put": {"base_ms": 6, "ms_per_mib": 10, "sigma": 0.2},
                   "cas": {"median_ms": 9, "sigma": 0.1}, "loop": {"source": "x", "threads": 1}}},
     "p.yaml.measured.loop.median_ms: missing"),
    ({"get": {"median_ms": 0, "sigma": 0.3}}, "p.yaml.get.median_ms: expected a value > 0, got 0.0"),
    ({"cas": {"median_ms": 20}}, "p.yaml.cas.sigma: missing"),
    ({"create_if_absent": "copy"}, "p.yaml.create_if_absent: expected one of put, rename, link, none, got 'copy'"),
    ({"list": {"median_ms": 3, "sigma": "x"}}, "p.yaml.list.sigma: expected a number, got 'x'"),
    ({"delete": {"median_ms": 0, "sigma": 0.1}}, "p.yaml.delete.median_ms: expected a value > 0, got 0.0"),
    ({"mutation_burst": 2}, "p.yaml.mutation_burst: needs mutation_rate_per_s"),
    ({"mutation_rate_per_s": 1, "mutation_burst": 0.5}, "p.yaml.mutation_burst: expected a value >= 1, got 0.5"),
    ({"mutation_refusal_tokens": 1}, "p.yaml.mutation_refusal_tokens: needs mutation_rate_per_s"),
    ({"mutation_rate_per_s": 1, "mutation_refusal_tokens": -1},
     "p.yaml.mutation_refusal_tokens: expected a value >= 0, got -1.0"),
    ({"client_burst": 2}, "p.yaml.client_burst: needs client_rate_per_s"),   # (a client's bucket may stand alone)
    ({"measured": {**_MEASURED, "concurrency_fit": {"loser_answer_ms": 2}}},
     "p.yaml.measured.concurrency_fit.source: missing"),
    ({"measured": {**_MEASURED, "concurrency_fit": {"source": "x", "busy_error_share": 0.1}}},
     "p.yaml.measured.concurrency_fit.busy_error_share: needs busy_error_retry (its client's resends)"),
    ({"measured": {**_MEASURED, "concurrency_fit": {"source": "x", "busy_error_share": 1.5,
                                                    "busy_error_retry": "azure_java"}}},
     "p.yaml.measured.concurrency_fit.busy_error_share: expected a value <= 1, got 1.5"),
    ({"measured": {**_MEASURED, "concurrency_fit": {"source": "x", "busy_error_share": 0.1,
                                                    "busy_error_retry": "azure"}}},
     "p.yaml.measured.concurrency_fit.busy_error_retry: expected one of object_store, google_java, aws_dynamodb, "
     "gax, azure_java, got 'azure'"),
    ({"measured": {**_MEASURED, "concurrency_fit": {"source": "x", "mutation_rate_per_s": 2}}},
     "p.yaml.measured.concurrency_fit.mutation_rate_per_s: the object's bucket of a set with a bucket per client "
     "(client_rate_per_s)"),
    ({"mutation_rate_per_s": 1, "client_burst": 2}, "p.yaml.client_burst: needs client_rate_per_s"),
    ({"mutation_rate_per_s": 1, "client_rate_per_s": 1, "client_refusal_tokens": -1},
     "p.yaml.client_refusal_tokens: expected a value >= 0, got -1.0"),
])
def test_a_bad_provider_file_names_its_key(tmp_path, edit, message):
    from sim.providers import ProviderError, load_provider
    good = {"name": "p", "description": "test", "min_latency_ms": 1, "get": {"median_ms": 2.5, "sigma": 0.5},
            "put": {"base_ms": 6, "ms_per_mib": 10, "sigma": 0.2}, "cas": {"median_ms": 22, "sigma": 0.2}}
    ok = tmp_path / "ok.yaml"
    ok.write_text(yaml.safe_dump({**good, "list": {"median_ms": 3, "sigma": 0.1}, "mutation_rate_per_s": 2}))
    prof = load_provider(str(ok), "seed")
    assert (prof.list_median_ms, prof.mutation_rate_per_s, prof.mutation_burst) == (3.0, 2.0, 1.0)
    p = tmp_path / "p.yaml"    # another file: the profile cache is keyed by path and mtime
    p.write_text(yaml.safe_dump({**good, **edit}))
    with pytest.raises(ProviderError) as exc:
        load_provider(str(p), "seed")
    assert str(exc.value) == message


def test_a_providers_directory_of_ones_own_needs_no_s3(tmp_path, monkeypatch):
    """`SIM_PROVIDERS_DIR` pointing at a folder holding only the user's provider: a config naming it resolves and
    hashes (the defaults, which name s3, are not looked up there); one left on the default s3 says s3 is unknown."""
    from pathlib import Path
    from sim.config import ConfigError, from_dict
    root = Path(__file__).resolve().parent.parent
    mine = (root / "providers" / "s3.yaml").read_text().replace("name: s3\n", "name: myprovider\n")
    (tmp_path / "myprovider.yaml").write_text(mine)
    monkeypatch.setenv("SIM_PROVIDERS_DIR", str(tmp_path))
    cfg = from_dict({"storage": {"provider": "myprovider"}})
    assert cfg.storage.provider == "myprovider" and len(C.config_hash(cfg)) == 16
    with pytest.raises(ConfigError, match="unknown provider 's3'"):
        from_dict({})
