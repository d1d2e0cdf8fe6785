"""`sim calibrate`: the fit recovers what it drew from (sim/calibrate.py), the command end to end on a CSV and on a
proxy's parquet log (sim/calibrate_io.py), its one-line errors; and the model keys it writes for (a provider's
`delete`, a service latency's `fixed_ms`)."""
import math

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import run_cli
from test_cli_inputs import _main
from sim.calibrate import (MIN_SAMPLES, CalibrationError, Fit, compare, fit_kind, fitted_mean_ms,
                           fitted_quantiles)

N = 2000
MIB = 1 << 20

# Each case: (fixed_ms, median_ms, sigma) and its tolerances (fixed, median as a share of fixed + median; sigma
# absolute): the estimator's |bias| + 4 x its standard deviation over 30 seeds at n = 2000, rounded up
# (benchmarks/calibration/calibrate_estimators.md, "clean", censored-mle; s3: fixed -0.0026 +- 0.0089, median
# +0.0028 +- 0.0120, sigma -0.0076 +- 0.0174). A small sigma (gcp's 0.21) trades the fixed part against the
# median (a lognormal of sigma 0.2 is nearly a normal, which a shift and a scale both move), so its parts are
# loose while their sum, the distribution's median, is not.
CASES = {
    "s3": ((9.454, 5.51, 0.631), (0.04, 0.06, 0.08)),
    "s3x": ((1.315, 0.087, 0.792), (0.005, 0.008, 0.09)),
    "azure": ((19.665, 7.52, 1.042), (0.013, 0.04, 0.09)),
    "gcp": ((18.849, 37.987, 0.21), (0.27, 0.28, 0.08)),
    "no fixed part": ((0.0, 10.0, 0.5), (0.08, 0.11, 0.05)),
    "database": ((0.3, 0.9, 0.45), (0.13, 0.14, 0.08)),
}


def _draw(fixed, median, sigma, seed, n=N):
    return fixed + median * np.exp(sigma * np.random.default_rng(seed).standard_normal(n))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("case", CASES)
def test_the_fit_recovers_the_parameters_it_drew_from(case, seed):
    (fixed, median, sigma), (tol_fixed, tol_median, tol_sigma) = CASES[case]
    f = fit_kind("get", _draw(fixed, median, sigma, 100 + seed))
    scale = fixed + median
    assert abs(f.fixed_ms - fixed) <= tol_fixed * scale
    assert abs(f.median_ms - median) <= tol_median * scale
    assert abs(f.sigma - sigma) <= tol_sigma
    assert f.ms_per_mib is None and f.n == N


def _put(seed, n=N, fixed=21.009, base=12.244, slope=20.0, sigma=0.631, top=64 * MIB):
    rng = np.random.default_rng(seed)
    size = np.round(np.exp(rng.uniform(math.log(1024), math.log(top), n)))
    return fixed + (base + slope * size / MIB) * np.exp(sigma * rng.standard_normal(n)), size


@pytest.mark.parametrize("seed", [0, 1])
def test_a_sized_put_recovers_its_ms_per_mib(seed):
    """s3's measured PUT, bodies 1 KiB to 64 MiB: tolerances |bias| + 4 x the standard deviations over 30 seeds
    (calibrate_estimators.md, "The sized PUT": ms_per_mib +0.0085 +- 0.0253 relative, fixed +0.0006 +- 0.0108 and
    base -0.0006 +- 0.0144 of fixed + base, sigma +0.0046 +- 0.0155)."""
    x, size = _put(200 + seed)
    f = fit_kind("put", x, size)
    assert f.ms_per_mib_source == "fitted"
    assert abs(f.ms_per_mib / 20.0 - 1) <= 0.11
    assert abs(f.fixed_ms - 21.009) <= 0.05 * 33.253 and abs(f.median_ms - 12.244) <= 0.06 * 33.253
    assert abs(f.sigma - 0.631) <= 0.07
    rows = dict((label, err) for label, _, _, err in compare(f, x, size))
    assert abs(rows["p50"]) < 0.03 and abs(rows["mean"]) < 0.05


def test_a_put_whose_bodies_do_not_vary_is_size_blind_unless_told():
    x, size = _put(3, top=200 * 1024)           # 1 KiB to 200 KiB: less than a MiB apart
    blind = fit_kind("put", x, size)
    assert (blind.ms_per_mib, blind.ms_per_mib_source) == (0.0, "size-blind")
    held = fit_kind("put", x, size, ms_per_mib=20.0)
    assert (held.ms_per_mib, held.ms_per_mib_source) == (20.0, "given")
    assert abs(held.median_ms - 12.244) <= 0.1 * 33.253       # the median at 0 bytes, with the slope held
    assert fit_kind("put", x).ms_per_mib_source == "size-blind"   # no sizes at all
    assert fit_kind("cas", x, size).ms_per_mib is None          # only the PUT has a size term


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shift=st.floats(0.5, 500.0), scale=st.floats(0.01, 100.0))
def test_shifting_the_samples_shifts_the_fixed_part_and_scaling_them_scales_it(seed, shift, scale):
    """The fit is equivariant: every sample + c is the fixed part + c, the rest unchanged; every sample x k
    is fixed and median x k, sigma unchanged (to the optimiser's tolerance)."""
    x = _draw(9.454, 5.51, 0.631, seed, n=400)
    f, moved, scaled = fit_kind("get", x), fit_kind("get", x + shift), fit_kind("get", x * scale)
    assert moved.fixed_ms == pytest.approx(f.fixed_ms + shift, rel=1e-4, abs=1e-4 * 15)
    assert moved.median_ms == pytest.approx(f.median_ms, rel=1e-3)
    assert moved.sigma == pytest.approx(f.sigma, rel=1e-3)
    assert (scaled.fixed_ms, scaled.median_ms) == pytest.approx((f.fixed_ms * scale, f.median_ms * scale), rel=1e-3)
    assert scaled.sigma == pytest.approx(f.sigma, rel=1e-3)


def test_the_fitted_quantiles_are_the_models():
    """An unsized fit's quantiles are `sim.latency.LogNormal`'s (what a run draws); a sized one's of one body size
    are those of its median at that size."""
    from sim.latency import LogNormal
    f = Fit("get", 100, 9.454, 5.51, 0.631)
    ps = np.array([0.05, 0.5, 0.99])
    assert np.allclose(fitted_quantiles(f, ps), LogNormal(5.51, 0.631, 0.0, 9.454).ppf(ps), rtol=1e-12)
    put = Fit("put", 100, 21.0, 12.0, 0.6, ms_per_mib=20.0, ms_per_mib_source="fitted")
    at = LogNormal(12.0 + 20.0 * 2, 0.6, 0.0, 21.0)
    assert np.allclose(fitted_quantiles(put, ps, np.full(50, 2 * MIB)), at.ppf(ps), rtol=1e-9)
    assert fitted_mean_ms(put, np.full(50, 2 * MIB)) == pytest.approx(at.mean_ms(), rel=1e-12)


def test_too_few_or_bad_samples_are_refused():
    with pytest.raises(CalibrationError, match=f"has {MIN_SAMPLES - 1} samples; a fit needs at least {MIN_SAMPLES}"):
        fit_kind("get", np.ones(MIN_SAMPLES - 1))
    with pytest.raises(CalibrationError, match="finite number > 0"):
        fit_kind("get", np.r_[_draw(1, 1, 0.5, 0, 50), 0.0])


# ---- the command -------------------------------------------------------------------------------------------------

def _frame(seed=0, n=600):
    """A proxy's log of one writer: s3 requests (HEAD, GET, sized PUTs, conditional PUTs) and pg round trips."""
    rng = np.random.default_rng(seed)
    parts = []

    def add(server, kind, lat, size=None):
        parts.append(pd.DataFrame({"server": server, "kind": kind, "latency_ms": lat,
                                   "bytes_out": np.zeros(len(lat), dtype=np.int64) if size is None else
                                   size.astype(np.int64)}))

    for kind in ("HEAD", "GET"):
        add("s3", kind, 9.454 + 5.51 * np.exp(0.631 * rng.standard_normal(n)))
    x, size = _put(seed, n)
    add("s3", "PUT", x, size)
    add("s3", "CAS", 21.0 + 12.2 * np.exp(0.631 * rng.standard_normal(n)))
    add("pg", "commit", 0.3 + 0.9 * np.exp(0.45 * rng.standard_normal(n)))
    add("pg", "select", 0.2 + 0.4 * np.exp(0.3 * rng.standard_normal(n)))
    df = pd.concat(parts, ignore_index=True)
    m = len(df)
    return df.assign(bytes_in=np.int64(100), status=np.int64(200), writer=np.int64(0),
                     start_ms=np.arange(m, dtype=np.float64))


def test_calibrate_a_parquet_log_end_to_end(tmp_path):
    """The proxy's columns (the object store's kinds, the database's as `pg.kind`): exit 0, a provider file sim
    loads (a HEAD of its own, the PUT's ms per MiB fitted) and catalog profiles a config takes; a run on both."""
    from sim.config import from_dict
    from sim.providers import load_provider
    log = tmp_path / "proxy.parquet"
    _frame().to_parquet(log)
    r = run_cli("calibrate", log, "--out", tmp_path / "cal", "--name", "mine")
    assert r.returncode == 0, r.stderr
    for kind in ("head", "get", "put", "cas", "pg.commit", "pg.select"):
        assert f"\n{kind} (" in "\n" + r.stdout
    assert r.stdout.count("  p99 ") == 6 and "ms/MiB (fitted)" in r.stdout
    prof = load_provider(str(tmp_path / "cal" / "mine.yaml"), "measured")
    assert prof.name == "mine" and prof.head_median_ms is not None and prof.list_median_ms is None
    assert abs(prof.put_ms_per_mib / 20 - 1) < 0.2 and prof.min_latency_ms == min(
        prof.get_fixed_ms, prof.head_fixed_ms, prof.put_fixed_ms, prof.cas_fixed_ms)
    catalog = yaml.safe_load((tmp_path / "cal" / "catalog.yaml").read_text())
    assert set(catalog) == {"pg.commit", "pg.select"}
    lat = catalog["pg.commit"]["catalog"]["latency"]
    assert set(lat) == {"fixed_ms", "median_ms", "sigma"} and abs(lat["fixed_ms"] + lat["median_ms"] - 1.2) < 0.1
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"duration_ms": 60_000, "warmup_ms": 0, "cooldown_ms": 0,
                                   "storage": {"provider": str(tmp_path / "cal" / "mine.yaml")},
                                   "catalog": {"backend": "service", **catalog["pg.commit"]["catalog"]}}))
    from_dict(yaml.safe_load(cfg.read_text()))       # the fragment is a valid catalog section
    run = run_cli("run", cfg, "--json")
    assert run.returncode == 0, run.stderr
    out = yaml.safe_load(run.stdout)
    assert out["transactions"]["committed"] > 0
    assert out["config"]["provider_profile"]["name"] == "mine"


def test_the_python_api_takes_a_log_in_memory(tmp_path):
    """What a testbed calls: its proxy's frame as samples (the same as from its parquet file), fitted and written."""
    from sim.calibrate_io import calibrate_samples, read_samples, samples_of_frame
    from sim.providers import load_provider
    df = _frame(2, n=200)
    df.to_parquet(tmp_path / "log.parquet")
    samples = samples_of_frame(df)
    on_disk = read_samples(tmp_path / "log.parquet")
    assert list(samples) == list(on_disk) == ["head", "get", "put", "cas", "pg.commit", "pg.select"]
    assert all(np.array_equal(samples[k].latency_ms, on_disk[k].latency_ms) for k in samples)
    assert samples["put"].size_bytes is not None and samples["get"].size_bytes is None
    result = calibrate_samples(samples, tmp_path / "out", "mem", "the testbed's proxy", kinds=["get", "put", "pg.commit"])
    assert list(result.fits) == ["get", "put", "pg.commit"]
    assert load_provider(str(result.provider_path), "seed").name == "mem"
    assert result.catalog_path.is_file() and "pg.commit (200 samples)" in result.report


def test_an_object_stores_kind_that_is_no_storage_kind_is_named_and_refused(tmp_path):
    """A `server` column: a database's `DELETE` is `pg.DELETE` (never the store's delete); the store's `post` is
    `s3.post`, neither the provider's nor the catalog's, refused unless --kinds leaves it out."""
    from sim.calibrate_io import samples_of_frame
    df = _frame(4, n=60)
    df.loc[df.kind == "select", "kind"] = "DELETE"
    df.loc[df.kind == "CAS", "kind"] = "post"
    assert list(samples_of_frame(df)) == ["head", "get", "put", "pg.DELETE", "pg.commit", "s3.post"]
    log = tmp_path / "log.parquet"
    df.to_parquet(log)
    code, _, err = _main("calibrate", log, "--out", tmp_path / "out")
    assert code == 2 and "kind 's3.post': the object store's, but not one of its request kinds" in err, err
    code, out, err = _main("calibrate", log, "--out", tmp_path / "out", "--kinds", "get", "put", "pg.DELETE")
    assert code == 0, err
    assert list(yaml.safe_load((tmp_path / "out" / "catalog.yaml").read_text())) == ["pg.DELETE"]


def test_calibrate_a_csv_end_to_end(tmp_path):
    """A user's CSV (kind, latency_ms, bytes; no server): storage kinds by name in any case, any other kind the
    catalog's; no conditional PUT measured, so the provider's is the PUT's at 0 bytes, and says so."""
    from sim.providers import load_provider
    df = _frame(1)
    df = df[df.kind != "CAS"].assign(kind=lambda d: d.kind.where(d.server == "s3", "catalog_" + d.kind))
    csv = tmp_path / "lat.csv"
    df.rename(columns={"bytes_out": "bytes"})[["kind", "latency_ms", "bytes"]].to_csv(csv, index=False)
    r = run_cli("calibrate", csv, "--out", tmp_path / "out", "--kinds", "get", "put", "catalog_commit")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "out" / "lat.yaml").read_text()
    assert "# - cas: none measured: the PUT's at 0 bytes" in text and "head" not in text.split("name:")[1]
    prof = load_provider(str(tmp_path / "out" / "lat.yaml"), "seed")
    assert (prof.cas_fixed_ms, prof.cas_median_ms, prof.cas_sigma) == (prof.put_fixed_ms, prof.put_base_ms,
                                                                       prof.put_sigma)
    assert list(yaml.safe_load((tmp_path / "out" / "catalog.yaml").read_text())) == ["catalog_commit"]
    assert "catalog_select" not in r.stdout


def _csv(tmp_path, text, name="bad.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _rows(kind, n, start=10.0):
    return "".join(f"{kind},{start + i * 0.1}\n" for i in range(n))


@pytest.mark.parametrize("content, message", [
    ("kind,latency\nget,1\n", "not a latency log: it lacks the column(s) latency_ms (it has: kind, latency)"),
    ("kind,latency_ms\n" + _rows("get", 40) + "get,fast\n", "latency_ms on line 42 is not a number: 'fast'"),
    ("kind,latency_ms\n" + _rows("get", 40) + "get,-1\n", "latency_ms on line 42 is '-1'; a latency is a number > 0"),
    ("kind,latency_ms\n" + _rows("get", 40) + _rows("delete", 12),
     "kind 'delete' has 12 samples; a fit needs at least 30 (name the kinds to fit with --kinds)"),
    ("kind,latency_ms\n", "no requests in it"),
    ("kind,latency_ms,bytes\n" + _rows("get", 40) + "put,20,100\nput,21,\n",
     "bytes on line 43 is '': every put needs its body's bytes (>= 0), or none does"),
    ("kind,latency_ms\n" + _rows("catalog_commit", 40) + _rows("put", 40),
     "no get or head requests among the storage kinds (put): a provider needs a GET's latency"),
])
def test_a_bad_input_is_one_line(tmp_path, content, message):
    code, out, err = _main("calibrate", _csv(tmp_path, content), "--out", tmp_path / "out")
    assert (code, out) == (2, "") and err.count("\n") == 1 and err.startswith(f"error: {tmp_path / 'bad.csv'}: ")
    assert message in err, err
    assert not (tmp_path / "out").exists()


def test_other_bad_inputs_are_one_line(tmp_path):
    good = _csv(tmp_path, "kind,latency_ms\n" + _rows("get", 40))
    for args, message in [
        (("--kinds", "put"), "no requests of kind 'put' (it has: get)"),
        (("--name", "a/b"), "--name: expected a file name without a directory"),
        (("--ms-per-mib", "-1"), "--ms-per-mib: expected a number >= 0"),
    ]:
        code, _, err = _main("calibrate", good, "--out", tmp_path / "out", *args)
        assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


# ---- the model keys it writes for --------------------------------------------------------------------------------

def test_a_provider_delete_profile_is_the_delete_draw_else_a_get(tmp_path):
    from sim.config import from_dict
    from sim.latency import LogNormal, latency_model
    from sim.providers import load_provider
    base = {"name": "d", "description": "x", "min_latency_ms": 1, "get": {"median_ms": 2, "sigma": 0.1},
            "put": {"base_ms": 5, "ms_per_mib": 1, "sigma": 0.1}, "cas": {"median_ms": 9, "sigma": 0.1}}
    plain, with_delete = tmp_path / "plain.yaml", tmp_path / "del.yaml"
    plain.write_text(yaml.safe_dump(base))
    with_delete.write_text(yaml.safe_dump({**base, "delete": {"fixed_ms": 3, "median_ms": 4, "sigma": 0.2}}))
    lat = latency_model(from_dict({"storage": {"provider": str(with_delete)}}))
    assert lat.delete == LogNormal(4.0, 0.2, 1.0, 3.0)
    assert latency_model(from_dict({"storage": {"provider": str(plain)}})).delete == lat.get
    assert load_provider(str(plain), "seed").digest() != load_provider(str(with_delete), "seed").digest()
    assert "delete_median_ms" not in load_provider(str(plain), "seed").to_dict()   # shipped digests unchanged


@pytest.mark.parametrize("section, data", [
    ("catalog", {"catalog": {"backend": "service"}}),
    ("lock", {"design": "hudi", "lock": {"variant": "zookeeper"}}),
    ("log_store", {"design": "delta-dynamodb", "log_store": {}}),
])
def test_a_service_latency_takes_a_fixed_part(section, data):
    """`fixed_ms` adds to every draw, to the bit, on the same random stream (not seeded); absent or 0 it leaves
    the config's hash alone."""
    from sim.config import config_hash, from_dict, seed_hash
    from sim.latency import latency_model

    def cfg(**fixed):
        return from_dict({**data, section: {**data[section], "latency": {"median_ms": 5.0, "sigma": 0.3, **fixed}}})

    plain, zero, fixed = cfg(), cfg(fixed_ms=0), cfg(fixed_ms=2.5)
    assert config_hash(plain) == config_hash(zero) != config_hash(fixed)
    assert seed_hash(plain) == seed_hash(fixed)
    field = {"catalog": "catalog_cas", "lock": "lock", "log_store": "log_store"}[section]
    a = getattr(latency_model(plain), field).draw(np.random.default_rng(7), 1000)
    b = getattr(latency_model(fixed), field).draw(np.random.default_rng(7), 1000)
    assert np.array_equal(b, 2.5 + a)
