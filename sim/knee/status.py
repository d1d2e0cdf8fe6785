"""A knee as it is reported (MODEL.md 'Metrics', docs/knee.md#reporting): a value with a bounded 95 % CI, or a
status with its bound, worded one way everywhere (`knee_text`).

- `ok`: the crossing and its CI are finite, 0 < low <= knee <= high, and all of it lies within the loads that were
  run (never extrapolated);
- `below_range`: the lightest load run already fails, so the knee lies below it: `knee_bound_cps` is an upper
  bound (the commits/s the lightest load's trials could give);
- `above_range`: the heaviest load run still passes, so the knee lies above it: `knee_bound_cps` is a lower bound
  (threshold x the heaviest load's trials/s);
- `undecided`: the loads bracket the crossing but the runs do not bound it; `knee_reason` says why, and
  `knee_command`, where the table knows one, is the command that will (a knee search on that cell).

Trials are the window transactions that began to commit (`points.trials`); a knee in commits/s is the crossing's
offered rate times the share of arrivals that began to commit times the fitted success there (the threshold
itself when the whole mix's success binds).
"""
from __future__ import annotations

import math

STATUSES = ("ok", "below_range", "above_range", "undecided")


def undecided_reason(knee: float, low: float, high: float, lightest: float, heaviest: float,
                     unit: str = "arrivals/s") -> str:
    """Why a fitted crossing `knee` with CI [low, high] (offered arrivals/s, or writers) is not a bounded knee
    within the loads run [lightest, heaviest]; '' when it is one (status `ok`)."""
    if not math.isfinite(knee):
        return "the fitted success does not fall with load"
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0:
        return "its 95 % CI is unbounded"
    if not low <= knee <= high:
        return "its 95 % CI does not hold the crossing"
    run = f"the loads run ({_num(lightest)}-{_num(heaviest)} {unit})"
    if knee < lightest or knee > heaviest:
        return f"the fitted crossing ({_num(knee)} {unit}) lies outside {run}"
    if low < lightest or high > heaviest:
        return f"its 95 % CI [{_num(low)}, {_num(high)}] {unit} reaches past {run}"
    return ""


def fmt_cps(v: float) -> str:
    """A rate as the knee tables show it: 0.43, 4.81, 46.3, 312."""
    if not math.isfinite(v):
        return "\u2013"
    return f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}" if abs(v) < 100 else f"{v:.0f}"


def _num(v: float) -> str:
    return f"{v:.3g}"


def _get(row, key: str, default=math.nan):
    v = row.get(key, default) if hasattr(row, "get") else default
    return default if v is None else v


def _writers(v: float) -> str:
    return str(int(v)) if math.isfinite(v) else "\u2013"


def knee_text(row, prefix: str = "") -> str:
    """The knee of a table row as read, one wording everywhere: `12.3 [11.0, 13.1] c/s`, `below_range (< 0.40
    c/s)`, `above_range (> 40.0 c/s)`, `undecided (its 95 % CI is unbounded)`; a row that is not `ok` and carries
    `knee_command` ends with it. Reads `<prefix>knee_status`, `<prefix>knee_throughput_cps` with `_low` / `_high`,
    `<prefix>knee_bound_cps`, `<prefix>knee_reason`, `<prefix>knee_command` (a tiers row: prefix `single_` or
    `multi_`); a writers knee (`unit` writers) reads `writers`, `writers_low`, `writers_high` and
    `knee_bound_writers`."""
    status = str(_get(row, f"{prefix}knee_status", "undecided"))
    writers = _get(row, "unit", "") == "writers"
    if writers:
        value, low, high = (_get(row, k) for k in ("writers", "writers_low", "writers_high"))
        bound = _get(row, "knee_bound_writers")
        unit, fmt = "writers", _writers
    else:
        value, low, high = (_get(row, f"{prefix}knee_throughput_cps{s}") for s in ("", "_low", "_high"))
        bound = _get(row, f"{prefix}knee_bound_cps")
        unit, fmt = "c/s", fmt_cps
    if status == "ok":
        return f"{fmt(value)} [{fmt(low)}, {fmt(high)}] {unit}"
    if writers and bound == 1:
        unit = "writer"
    if status == "below_range":
        text = f"below_range (< {fmt(bound)} {unit})" if math.isfinite(bound) else "below_range"
    elif status == "above_range":
        text = f"above_range (> {fmt(bound)} {unit})" if math.isfinite(bound) else "above_range"
    else:
        reason = str(_get(row, f"{prefix}knee_reason", "") or "")
        text = f"undecided ({reason})" if reason else "undecided"
    command = _get(row, f"{prefix}knee_command", "")
    return f"{text}; to bound it: {command}" if isinstance(command, str) and command else text


def gain_text(row) -> str:
    """A tier's multi-table gain as read (`sim.report.aggregate.gain`): `4.0x [0.53x, 8.4x]`, `above_range (> 2.1x)`,
    `below_range (< 0.50x)`, or `undecided` (a knee on either side that bounds nothing)."""
    status = str(_get(row, "gain_status", "undecided"))
    def x(v: float) -> str:
        if not math.isfinite(v):
            return "\u2013"
        return f"{v:.2f}x" if v < 1 else f"{v:.1f}x" if v < 10 else f"{v:.0f}x"
    if status == "ok":
        return f"{x(_get(row, 'gain'))} [{x(_get(row, 'gain_low'))}, {x(_get(row, 'gain_high'))}]"
    if status in ("above_range", "below_range"):
        return f"{status} ({'>' if status == 'above_range' else '<'} {x(_get(row, 'gain_bound'))})"
    return "undecided"
