"""What a knee search is asked for: the `knee:` section of a sweep file or the `knee` command's options
(`KneeSpec`), and which config parameter sets the load."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..config import Config, ConfigError
from ..schema import Field, check

LOAD_PARAMS = ("workload.inter_arrival.mean_ms", "workload.inter_arrival.median_ms")


@dataclass(frozen=True)
class KneeSpec:
    param: str | None = None            # None: the config's inter-arrival mean (or median) in ms
    threshold: float = 0.95
    precision: float = 0.05             # the pilot stops when its bracket's hi / lo - 1 is at most this
    start: tuple[float, float] = (20.0, 5000.0)   # gap ms: the fast (high-rate) and slow ends
    min_runs: int = 4                   # full runs in the fit at least (2 degrees of freedom)
    max_runs: int = 24                  # full-length runs at most
    expansions: int = 2
    design_effect: float = 3.0          # within-run correlation, for the per-point success intervals (trace)
    common_random_numbers: bool = True
    max_points: int = 40                # pilot points at most, and full-length points at most
    halfwidth: float = 0.05             # stop when the knee's CI half-width / knee is at most this
    spread: float = 0.04                # new full runs sit at least this far (relative) from the crossing
    pilot_fraction: float = 1 / 6       # pilot runs last this share of duration, warmup and cooldown
    pilot_bias: float = 1.5             # the first full-length probe runs at the pilot's guess / this


#: the `knee:` keys (sweep file; CLI options) with their ranges, in KneeSpec's order
SPEC = {"param": Field(str, choices=LOAD_PARAMS, nullable=True), "threshold": Field(float, ge=0.0, le=1.0),
        "precision": Field(float, ge=1e-4, le=10.0), "start": Field(list, expect="[fast gap ms, slow gap ms]"),
        "min_runs": Field(int, ge=3, le=1000), "max_runs": Field(int, ge=3, le=1000),
        "expansions": Field(int, ge=0, le=10), "design_effect": Field(float, ge=1.0, le=1e6),
        "common_random_numbers": Field(bool), "max_points": Field(int, ge=2, le=1000),
        "halfwidth": Field(float, ge=1e-4, le=10.0), "spread": Field(float, ge=1e-3, le=1.0),
        "pilot_fraction": Field(float, ge=1e-3, le=1.0), "pilot_bias": Field(float, ge=0.1, le=10.0)}


def parse_spec(data: dict | None, where: str = "knee", **overrides) -> KneeSpec:
    """A `knee:` mapping (sweep file) or CLI options into a validated `KneeSpec`; errors name the key."""
    kw = {**check(SPEC, data, where), **check(SPEC, {k: v for k, v in overrides.items() if v is not None}, where)}
    if kw.get("max_runs", KneeSpec.max_runs) < kw.get("min_runs", KneeSpec.min_runs):
        raise ConfigError(f"{where}.max_runs", f"expected at least min_runs ({kw.get('min_runs', KneeSpec.min_runs)})")
    if "start" in kw:
        s = kw["start"]
        if (len(s) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in s)
                or not s[0] < s[1]):
            raise ConfigError(f"{where}.start", f"expected [fast gap ms, slow gap ms] with 0 < fast < slow, got {s!r}")
        kw["start"] = (float(s[0]), float(s[1]))
    return KneeSpec(**kw)


def load_param(cfg: Config, param: str | None = None) -> str:
    """The load parameter of `cfg`: its inter-arrival mean, or median for lognormal gaps."""
    ia = cfg.workload.inter_arrival
    want = LOAD_PARAMS[1] if ia.distribution == "lognormal" else LOAD_PARAMS[0]
    if param is not None and param != want:
        raise ConfigError("knee.param", f"{param} does not set the load of {ia.distribution} arrivals "
                          f"(use {want})")
    return want


def mean_gap_per_unit(cfg: Config) -> float:
    """Mean gap / load parameter: exp(sigma^2 / 2) for a lognormal median, else 1."""
    ia = cfg.workload.inter_arrival
    return math.exp(ia.sigma ** 2 / 2) if ia.distribution == "lognormal" else 1.0
