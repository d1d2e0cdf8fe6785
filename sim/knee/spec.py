"""What a knee search is asked for: the `knee:` section of a sweep file or the `knee` command's options
(`KneeSpec`); which parameter it moves is `param`'s."""
from __future__ import annotations

from dataclasses import dataclass

from ..config import ConfigError
from ..schema import Field, check
from .param import LOAD_PARAMS, SCALE_PARAM, WRITERS_PARAM


@dataclass(frozen=True)
class KneeSpec:
    param: str | None = None            # None: a trace's rate_scale if the config replays one, the writer count
                                        # if it has writers, else the config's inter-arrival mean (or median) in ms
    threshold: float = 0.95
    precision: float = 0.05             # the pilot stops when its bracket's hi / lo - 1 is at most this
    start: tuple | None = None          # gap ms: the fast (high-rate) and slow ends, or the fewest and most
                                        # writers; None: [20, 5000] ms, [1, 64] writers
    min_runs: int = 4                   # full runs in the fit at least (2 degrees of freedom)
    max_runs: int = 24                  # full-length runs at most
    expansions: int = 2
    design_effect: float = 3.0          # within-run correlation, for the per-point success intervals (trace)
    common_random_numbers: bool = True
    max_points: int = 40                # pilot points at most, and full-length points at most
    halfwidth: float = 0.05             # stop when the knee's CI half-width / knee is at most this
    spread: float = 0.04                # new full runs sit at least this far (relative) from the crossing
    pilot_fraction: float = 1 / 6       # pilot runs last this share of duration, warmup and cooldown
    pilot_bias: float | None = None     # the first full-length probe runs at the pilot's guess / this; None:
                                        # 1.5 for the load (4c), 1 for writers (benchmarks/calibration/writers_knee_fit.md)


#: the `knee:` keys (sweep file; CLI options) with their ranges, in KneeSpec's order
SPEC = {"param": Field(str, choices=(*LOAD_PARAMS, WRITERS_PARAM, SCALE_PARAM), nullable=True),
        "threshold": Field(float, ge=0.0, le=1.0), "precision": Field(float, ge=1e-4, le=10.0),
        "start": Field(list, expect="[fast gap ms, slow gap ms], [fewest, most writers] or [least, most "
                                    "rate_scale]"),
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
            raise ConfigError(f"{where}.start", f"expected [fast gap ms, slow gap ms] with 0 < fast < slow (or "
                              f"[fewest, most writers], or [least, most rate_scale]), got {s!r}")
        kw["start"] = (float(s[0]), float(s[1]))
    return KneeSpec(**kw)

