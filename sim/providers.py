"""Storage-provider latency profiles, read from `providers/<name>.yaml`.

A profile is data, not code: GET, PUT (size-dependent) and CAS lognormals with one floor. The seed's
percentile tables are held against these numbers by tests/test_providers.py.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping

from .inputs import read_yaml
from .schema import ConfigError, Field, check

MIB = 1024 * 1024


class ProviderError(ValueError):
    pass


@dataclass(frozen=True)
class Profile:
    """One provider. Latencies in ms; PUT median grows with size: base_ms + ms_per_mib * size_MiB."""
    name: str
    description: str
    min_latency_ms: float
    get_median_ms: float
    get_sigma: float
    put_base_ms: float
    put_ms_per_mib: float
    put_sigma: float
    cas_median_ms: float
    cas_sigma: float
    # optional: LIST latency (a log protocol's listing; else a LIST costs a GET)
    list_median_ms: float | None = None
    list_sigma: float | None = None
    # optional: per-object mutation limit, a token bucket per object name (GCS: one write per second)
    mutation_rate_per_s: float | None = None
    mutation_burst: float | None = None

    def put_median_ms(self, size_bytes: int) -> float:
        return self.put_base_ms + self.put_ms_per_mib * size_bytes / MIB

    def to_dict(self) -> dict:
        """The profile as data; optional keys it does not have are left out."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping) -> Profile:
        """`to_dict`'s inverse: a profile stored with a run (`resolved.provider_profile`) typed again."""
        return cls(**data)

    def digest(self) -> str:
        """A digest of the numbers the engine reads (not the name or description): a sweep's cache key covers
        it, so editing a provider file recomputes the runs that used it."""
        return profile_digest(self.to_dict())


def profile_digest(profile: dict) -> str:
    """`Profile.digest` of a profile stored as plain data (a run file's `resolved.provider_profile`)."""
    values = {k: float(v) for k, v in profile.items() if k not in ("name", "description")}
    blob = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def providers_dir() -> Path:
    """`$SIM_PROVIDERS_DIR`, else the repository's `providers/` beside the package."""
    env = os.environ.get("SIM_PROVIDERS_DIR")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "providers"


def available() -> list[str]:
    return sorted(p.stem for p in providers_dir().glob("*.yaml"))


def _lognormal(median_ms: Field) -> dict:
    return {"median_ms": median_ms, "sigma": Field(float, required=True, ge=0)}


_NUMBER = Field(float, required=True, ge=0)
_MEDIAN = Field(float, required=True, gt=0)
SHAPE = {
    "name": Field(str, required=True), "description": Field(str, required=True), "min_latency_ms": _NUMBER,
    "get": Field(_lognormal(_MEDIAN), required=True),
    "put": Field({"base_ms": _MEDIAN, "ms_per_mib": _NUMBER, "sigma": _NUMBER}, required=True),
    "cas": Field(_lognormal(_MEDIAN), required=True),
    # optional: LIST latency; a per-object mutation limit (a token bucket, burst 1 unless given)
    "list": Field(_lognormal(_NUMBER)), "mutation_rate_per_s": Field(float, gt=0), "mutation_burst": Field(float, ge=1),
}


def _error(path: str, message: str) -> ProviderError:
    return ProviderError(f"{path}: {message}")


@functools.lru_cache(maxsize=64)
def _load_file(path: str, mtime_ns: int) -> Profile:
    """Cached per file version (`mtime_ns`): an edited provider file is read again, even in a notebook."""
    where = Path(path).name
    try:
        data = read_yaml(path, "provider")
    except ConfigError as exc:
        raise ProviderError(str(exc)) from None
    d = check(SHAPE, data, where, _error)
    rate, lst = d.get("mutation_rate_per_s"), d.get("list", {})
    if "mutation_burst" in d and rate is None:
        raise _error(f"{where}.mutation_burst", "needs mutation_rate_per_s")
    return Profile(
        name=d["name"], description=d["description"], min_latency_ms=d["min_latency_ms"],
        get_median_ms=d["get"]["median_ms"], get_sigma=d["get"]["sigma"],
        put_base_ms=d["put"]["base_ms"], put_ms_per_mib=d["put"]["ms_per_mib"], put_sigma=d["put"]["sigma"],
        cas_median_ms=d["cas"]["median_ms"], cas_sigma=d["cas"]["sigma"],
        list_median_ms=lst.get("median_ms"), list_sigma=lst.get("sigma"),
        mutation_rate_per_s=rate, mutation_burst=None if rate is None else d.get("mutation_burst", 1.0),
    )


def load_provider(name: str) -> Profile:
    """A profile by name (`s3`) or by path to a YAML file of the same shape."""
    path = Path(name)
    if path.suffix not in (".yaml", ".yml"):
        path = providers_dir() / f"{name}.yaml"
    if not path.is_file():
        raise ProviderError(f"unknown provider {name!r} (expected one of: {', '.join(available())}, "
                            "or a path to a provider .yaml)")
    return _load_file(str(path.resolve()), path.stat().st_mtime_ns)
