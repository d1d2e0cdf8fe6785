"""The S3 server's lock per directory marker as the testbed hands it to the model (`sim.testbed.marker_lock`): the
provider keys of a measurement, and a provider file written with them read back. (Measured on the testbed's
SeaweedFS: tests/test_testbed.py.)"""
from __future__ import annotations

import math

import pytest

from sim.providers import load_provider
from sim.testbed.marker_lock import provider_keys
from sim.testbed.profile import provider_file

FIT = {"fixed_ms": 10.0, "median_ms": 2.0, "sigma": 0.2}


@pytest.mark.parametrize("probe, keys", [
    (None, {}),                                                   # not measured
    ({"window_ms": 0.0, "poll_ms": math.nan}, {}),                # measured: no PUT late, no lock
    ({"window_ms": 0.503125, "poll_ms": 1001.4932}, {"marker_lock_window_ms": 0.5031, "marker_lock_poll_ms": 1001.49}),
])
def test_a_measured_lock_becomes_the_providers_keys(probe, keys):
    assert provider_keys(probe) == keys


def test_the_testbeds_provider_file_with_a_marker_lock_is_read_back(tmp_path):
    """The fitted provider (both sets the same figures) carries the lock in its measured set; the model reads it."""
    keys = provider_keys({"window_ms": 0.5, "poll_ms": 1001.0})
    path = provider_file("probe", {"get": FIT, "put": FIT}, tmp_path / "provider.yaml", "a test", keys)
    measured = load_provider(path, "measured")
    assert (measured.marker_lock_window_ms, measured.marker_lock_poll_ms) == (0.5, 1001.0)
    assert load_provider(path, "seed").marker_lock_window_ms is None      # the seed set has no store mechanism


def test_a_negative_count_of_probe_pairs_is_one_line(capsys):
    from sim import cli
    assert cli.main(["testbed", "run", "--marker-rounds", "-1"]) == 2
    assert capsys.readouterr().err == "error: --marker-rounds: expected an integer >= 0, got -1\n"


def test_a_server_the_probe_cannot_reach_leaves_no_marker_lock(tmp_path):
    """The probe is the run's side measurement: a server it cannot use is one logged line, no file, no lock (the
    report's provider then has no marker keys)."""
    from types import SimpleNamespace

    from sim.testbed.campaign import MARKER_LOCK, _marker_lock
    from sim.testbed.servers import free_ports
    port, = free_ports(1)          # (nothing listens on it)
    servers = SimpleNamespace(fs=SimpleNamespace(s3_url=f"http://127.0.0.1:{port}"),
                              credentials=lambda: {"s3_access_key": "k", "s3_secret_key": "s"})
    lines = []
    _marker_lock(servers, tmp_path, 2, lines.append)
    assert not (tmp_path / MARKER_LOCK).exists()
    assert len(lines) == 1 and lines[0].startswith("marker lock of the S3 server: not measured (")


def test_the_window_is_the_area_under_the_late_share_and_the_poll_a_late_answers_extra(monkeypatch):
    """`measure` with the pair stubbed: a pair is late (its second answer 1,003 ms after its send, the first's 2 ms)
    while the offset is under 0.6 ms, else both 2 ms. Offsets 0, 0.25, ..., 1: late shares 1, 1, 1, 0, 0, whose
    area by trapezoids is 0.625 ms; the poll is 1,001 ms."""
    import sim.testbed.marker_lock as ml

    class S3:
        exceptions = type("exc", (), {"BucketAlreadyOwnedByYou": KeyError, "BucketAlreadyExists": KeyError})

        def create_bucket(self, **kw):
            pass

        def put_object(self, **kw):
            pass

        def generate_presigned_url(self, *a, **kw):
            return "http://127.0.0.1:1/warehouse/k?X-Amz-Signature=s"

        def get_paginator(self, name):
            return type("pages", (), {"paginate": lambda self, **kw: [{}]})()

    monkeypatch.setattr(ml, "pair_ms", lambda url, a, b, offset: (2.0, 1003.0 if offset < 0.6 else 2.0))
    probe = ml.measure(S3(), rounds=4, step_ms=0.25, max_ms=1.0)
    assert [share for _, share in probe["curve"]] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert probe["window_ms"] == pytest.approx(0.625) and probe["poll_ms"] == pytest.approx(1001.0)
    assert (probe["pairs"], probe["late"]) == (20, 12)


def test_a_results_folders_marker_lock_that_is_not_one_is_one_line(tmp_path):
    from sim.schema import ConfigError
    from sim.testbed.report import _marker_lock
    assert _marker_lock(tmp_path / "marker_lock.json") is None
    bad = tmp_path / "marker_lock.json"
    bad.write_text('{"window_ms": 0.5}')
    with pytest.raises(ConfigError, match=r"marker_lock.json: not a marker lock measurement \(KeyError: 'poll_ms'\)"):
        _marker_lock(bad)
    bad.write_text('{"window_ms": 0.6, "poll_ms": NaN}')          # (none late: json.dumps writes NaN)
    assert _marker_lock(bad)["window_ms"] == 0.6
