"""A knee as it is reported (MODEL.md 'Metrics', docs/knee.md#reporting): a value with a bounded 95 % CI, or a
status with its bound, worded one way everywhere (`knee_text`).

- `ok`: the crossing and its CI are finite, 0 < low <= knee <= high, and all of it lies within the loads that were
  run (never extrapolated);
- `below_range`: the runs bound the knee from above only: the lightest load run already fails, or the CI is
  bounded but starts below the lightest load run while its high end lies within the loads run (`read_crossing`);
  `knee_bound_cps` is the upper bound (the commits/s the lightest load's, or the CI's high end's, trials could give);
- `above_range`: the runs bound the knee from below only: the heaviest load run still passes, or the CI is bounded
  but ends past the heaviest load run while its low end lies within the loads run; `knee_bound_cps` is the lower
  bound (threshold x the heaviest load's, or the CI's low end's, trials/s);
- `undecided`: the runs bound the knee on neither side; `knee_reason` says why, and `knee_command`, where the table
  knows one, is the command that will (a knee search on that cell).

`knee_text` words a knee in full (CSV, markdown, notebooks, the command line); `knee_short_text` is the same knee
in a table cell of a page, its why left to the cell's hover and footnote.

Trials are the window transactions that began to commit (`points.trials`); a knee in commits/s is the crossing's
offered rate times the share of arrivals that began to commit times the fitted success there (the threshold
itself when the whole mix's success binds).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

STATUSES = ("ok", "below_range", "above_range", "undecided")


@dataclass(frozen=True)
class Reading:
    """A fitted crossing read against the loads run: `status` (STATUSES), `bound` (a range status's bound, in the
    fit's unit: the CI end that lies within the loads run; NaN otherwise) and `reason` (why it is not `ok`)."""
    status: str
    bound: float = math.nan
    reason: str = ""

    def bound_cps(self, trial_share: float, threshold: float) -> float:
        """The bound of a load knee's range status in commits/s, as a grid's end points give theirs: below range,
        the trials/s at the CI's high end (`trial_share`: of arrivals, those that began to commit; the knee commits
        fewer); above range, the threshold x the trials/s at its low end (the knee commits at least as many)."""
        if self.status == "below_range":
            return self.bound * trial_share
        return threshold * self.bound * trial_share if self.status == "above_range" else math.nan


def read_crossing(knee: float, low: float, high: float, lightest: float, heaviest: float,
                  unit: str = "arrivals/s") -> Reading:
    """A fitted crossing `knee` with its 95 % CI [low, high] (offered arrivals/s, or writers) against the loads run
    [lightest, heaviest]. `ok` when the whole CI lies within them. A bounded CI that reaches past one end only is
    a bound at its other end, which lies within the loads run: the fit there is interpolated, and the knee lies
    beyond it with at least 97.5 % confidence (one tail of the 95 % CI): `above_range` from the low end when the
    CI ends past the heaviest load, `below_range` from the high end when it starts below the lightest. Otherwise
    (no crossing, an unbounded CI, one past both ends or wholly outside the loads) `undecided`: a bound there would
    be an extrapolation."""
    if not math.isfinite(knee):
        return Reading("undecided", reason="the fitted success does not fall with load")
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0:
        return Reading("undecided", reason="its 95 % CI is unbounded")
    if not low <= knee <= high:
        return Reading("undecided", reason="its 95 % CI does not hold the crossing")
    ci = f"its 95 % CI [{_num(low)}, {_num(high)}] {unit}"
    run = f"the loads run ({_num(lightest)}-{_num(heaviest)} {unit})"
    past_light, past_heavy = low < lightest, high > heaviest
    if not (past_light or past_heavy):
        return Reading("ok")
    if past_heavy and not past_light and low <= heaviest:
        return Reading("above_range", low, f"{ci} ends past the heaviest load run ({_num(heaviest)} {unit})")
    if past_light and not past_heavy and high >= lightest:
        return Reading("below_range", high, f"{ci} starts below the lightest load run ({_num(lightest)} {unit})")
    where = "reaches past both ends of" if past_light and past_heavy else "lies outside"
    return Reading("undecided", reason=f"{ci} {where} {run}")


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


@dataclass(frozen=True)
class _Knee:
    """A table row's knee, as both wordings read it."""
    status: str
    value: float
    low: float
    high: float
    bound: float
    unit: str
    fmt: Callable[[float], str]

    def ci(self) -> str:
        return f"{self.fmt(self.value)} [{self.fmt(self.low)}, {self.fmt(self.high)}] {self.unit}"

    def bound_text(self) -> str:
        """`< 0.40 c/s`, `> 40.0 c/s`, `< 1 writer`; '' without a finite bound."""
        if not math.isfinite(self.bound):
            return ""
        unit = "writer" if self.unit == "writers" and self.bound == 1 else self.unit
        return f"{'<' if self.status == 'below_range' else '>'} {self.fmt(self.bound)} {unit}"


def _knee(row, prefix: str) -> _Knee:
    status = str(_get(row, f"{prefix}knee_status", "undecided"))
    if _get(row, "unit", "") == "writers":
        value, low, high = (_get(row, k) for k in ("writers", "writers_low", "writers_high"))
        return _Knee(status, value, low, high, _get(row, "knee_bound_writers"), "writers", _writers)
    value, low, high = (_get(row, f"{prefix}knee_throughput_cps{s}") for s in ("", "_low", "_high"))
    return _Knee(status, value, low, high, _get(row, f"{prefix}knee_bound_cps"), "c/s", fmt_cps)


def knee_text(row, prefix: str = "") -> str:
    """The knee of a table row as read, one wording everywhere: `12.3 [11.0, 13.1] c/s`, `below_range (< 0.40
    c/s)`, `above_range (> 40.0 c/s)`, `undecided (its 95 % CI is unbounded)`; a row that is not `ok` and carries
    `knee_command` ends with it. Reads `<prefix>knee_status`, `<prefix>knee_throughput_cps` with `_low` / `_high`,
    `<prefix>knee_bound_cps`, `<prefix>knee_reason`, `<prefix>knee_command` (a tiers row: prefix `single_` or
    `multi_`); a writers knee (`unit` writers) reads `writers`, `writers_low`, `writers_high` and
    `knee_bound_writers`."""
    k = _knee(row, prefix)
    if k.status == "ok":
        return k.ci()
    if k.status in ("below_range", "above_range"):
        text = f"{k.status} ({k.bound_text()})" if k.bound_text() else k.status
    else:
        reason = str(_get(row, f"{prefix}knee_reason", "") or "")
        text = f"undecided ({reason})" if reason else "undecided"
    command = _get(row, f"{prefix}knee_command", "")
    return f"{text}; to bound it: {command}" if isinstance(command, str) and command else text


def knee_short_text(row, prefix: str = "") -> str:
    """`knee_text` for a table cell of a page, at most about 24 characters: `12.3 [11.0, 13.1] c/s`, `< 0.40 c/s`
    (below range), `> 40.0 c/s` (above range), `undecided`; the reason and the command are left to the cell's
    hover and footnote."""
    k = _knee(row, prefix)
    if k.status == "ok":
        return k.ci()
    if k.status in ("below_range", "above_range"):
        return k.bound_text() or k.status.replace("_", " ")
    return "undecided"


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
