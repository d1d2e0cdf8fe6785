"""Storage-provider latency profiles, read from `providers/<name>.yaml`.

A profile is data, not code: GET, PUT (size-dependent) and CAS lognormals with one floor. The seed's
percentile tables are held against these numbers by tests/test_providers.py.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from .yamlio import load_yaml

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


_KEYS = {
    "name": str, "description": str, "min_latency_ms": float,
    "get": {"median_ms": float, "sigma": float},
    "put": {"base_ms": float, "ms_per_mib": float, "sigma": float},
    "cas": {"median_ms": float, "sigma": float},
}
_OPTIONAL = {"list": {"median_ms": float, "sigma": float}, "mutation_rate_per_s": float, "mutation_burst": float}


def _check(data, schema, where):
    if not isinstance(data, dict):
        raise ProviderError(f"{where}: expected a mapping")
    for key in data:
        if key not in schema:
            raise ProviderError(f"{where}.{key}: unknown key (expected one of: {', '.join(schema)})")
    for key, kind in schema.items():
        if key not in data:
            raise ProviderError(f"{where}.{key}: missing")
        value = data[key]
        if isinstance(kind, dict):
            _check(value, kind, f"{where}.{key}")
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ProviderError(f"{where}.{key}: expected a number >= 0, got {value!r}")
        elif not isinstance(value, kind):
            raise ProviderError(f"{where}.{key}: expected a string, got {value!r}")


@functools.lru_cache(maxsize=64)
def _load_file(path: str, mtime_ns: int) -> Profile:
    """Cached per file version (`mtime_ns`): an edited provider file is read again, even in a notebook."""
    try:
        data = load_yaml(Path(path).read_text())
    except yaml.YAMLError as exc:
        raise ProviderError(f"{Path(path).name}: not valid YAML: {exc}") from None
    where = Path(path).name
    if isinstance(data, dict):
        optional = {k: data.pop(k) for k in list(data) if k in _OPTIONAL}
        _check(optional, {k: v for k, v in _OPTIONAL.items() if k in optional}, where)
    _check(data, _KEYS, where)
    rate = optional.get("mutation_rate_per_s")
    burst = optional.get("mutation_burst")
    if rate is not None and rate <= 0:
        raise ProviderError(f"{where}.mutation_rate_per_s: expected a number > 0, got {rate!r}")
    if burst is not None and (rate is None or burst < 1):
        raise ProviderError(f"{where}.mutation_burst: needs mutation_rate_per_s and a value >= 1, got {burst!r}")
    lst = optional.get("list")
    if data["get"]["median_ms"] <= 0 or data["cas"]["median_ms"] <= 0 or data["put"]["base_ms"] <= 0:
        raise ProviderError(f"{Path(path).name}: medians must be > 0")
    return Profile(
        name=data["name"], description=data["description"], min_latency_ms=float(data["min_latency_ms"]),
        get_median_ms=float(data["get"]["median_ms"]), get_sigma=float(data["get"]["sigma"]),
        put_base_ms=float(data["put"]["base_ms"]), put_ms_per_mib=float(data["put"]["ms_per_mib"]),
        put_sigma=float(data["put"]["sigma"]),
        cas_median_ms=float(data["cas"]["median_ms"]), cas_sigma=float(data["cas"]["sigma"]),
        list_median_ms=None if lst is None else float(lst["median_ms"]),
        list_sigma=None if lst is None else float(lst["sigma"]),
        mutation_rate_per_s=None if rate is None else float(rate),
        mutation_burst=None if rate is None else float(1.0 if burst is None else burst),
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
