"""Config as data: defaults, validation with key paths, hashing, overrides."""
import pytest

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
    assert a.hash == C.from_dict({"workload": {"num_tables": 5.0}}).hash   # same value, same hash
    assert a.hash != a.replace(seed=1).hash
    assert a.hash != a.replace(**{"workload.num_tables": 6}).hash
    assert len(a.hash) == 16


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
