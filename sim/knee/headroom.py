"""A trace's headroom (docs/knee.md, "Headroom"): the knee over `workload.trace.rate_scale`, per table.

The history takes k times its load while every table's success, and the whole history's, is at least the
threshold: a headroom search checks each table's success beside the whole's (the knee is the lowest crossing, the
first table to break; `binding_table` names it). A table is checked when a full-length run at k = 1 holds at least
`MIN_TABLE_COMMITS` of its commits in the window (fewer: its success is too noisy to place a crossing; it is listed
as not checked). The short pilot checks the whole history's success only (its runs hold a sixth of the commits).

Each table's own k (`readings`) is read off every full-length run of the search by the same fit (a binomial
regression on log k) and reported as every knee is (`sim.knee.status`): a value with its 95 % CI, or a range status
with its bound, so a table that never failed in the loads run reads `above_range (> k)`.

A trace's rows that had not started when a run ended (their writer still busy: `trace_waiting`) count as failed
trials, of their table and of the whole (`with_waiting`): a history whose jobs cannot keep up does not take that
load, however well the commits that did start fare.
"""
from __future__ import annotations

import math

import numpy as np

from ..config import Config, trace_data
from .fit import logistic_crossing
from .points import trials
from .status import read_crossing

#: a table is checked when a full-length run at k = 1 holds at least this many of its commits in the window
MIN_TABLE_COMMITS = 50
#: the whole history's row of `readings` (its table_rank 0)
WHOLE = "(all tables)"


def prefix(rank: int) -> str:
    """The summary keys' prefix of the table of popularity rank `rank` (its index + 1)."""
    return f"table{rank}_"


def rank_of(prefix_: str) -> int:
    """The table rank a `prefix` names (0: none, the whole history's "")."""
    return int(prefix_[len("table"):-1]) if prefix_.startswith("table") else 0


def window_commits(cfg: Config) -> np.ndarray:
    """Per table of the replay (each copy's): its commits in the measurement window at k = 1, from the history's
    rates (each table's commits per period times the window's length)."""
    data, t = trace_data(cfg), cfg.workload.trace
    per_period = np.bincount(data.table, minlength=len(data.tables)).astype(float)
    window = cfg.duration_ms - cfg.warmup_ms - cfg.cooldown_ms
    return np.tile(per_period * window / t.period_ms, t.tables_scale)


def checked_tables(cfg: Config) -> tuple[str, ...]:
    """The prefixes of the tables a headroom search checks (`MIN_TABLE_COMMITS`)."""
    return tuple(prefix(i + 1) for i, n in enumerate(window_commits(cfg)) if n >= MIN_TABLE_COMMITS)


def with_waiting(summary: dict) -> dict:
    """A trace run's summary with its rows still waiting for their writer at its end (`trace_waiting`) as failed
    trials; other summaries as they are."""
    w = summary.get("trace_waiting", 0) or 0
    if w <= 0:
        return summary
    return {**summary, "arrived": summary["arrived"] + w, "began_commit": trials(summary, "") + w}


def table_keys(per_table: list[dict]) -> dict:
    """A run's per-table rows as summary keys (`table<rank>_arrived`, `_began_commit`, `_committed`), its rows still
    waiting for their writer counted as failed trials."""
    out = {}
    for row in per_table:
        w = row.get("trace_waiting", 0) or 0
        p = prefix(int(row["table_rank"]))
        out.update({f"{p}arrived": row["arrived"] + w, f"{p}began_commit": trials(row, "") + w,
                    f"{p}committed": row["committed"]})
    return out


def readings(cfg: Config, runs: list[tuple[float, dict]], checked: tuple[str, ...], base_cps: float,
             threshold: float) -> list[dict]:
    """The whole history's headroom (`WHOLE`), then each table's, most commits first: its own crossing over the
    full-length `runs` ((log level, summary) pairs) read against the loads run, in k (`k`, `k_low`, `k_high`,
    `k_status`, `k_bound`, `k_reason`); `checked` False for a table with too few commits to check."""
    from ..trace.replay import table_names
    names, commits = table_names(cfg), window_commits(cfg)
    xs = [x for x, _ in runs]
    lo, hi = (math.exp(min(xs)), math.exp(max(xs))) if xs else (math.nan, math.nan)
    rows = [("", WHOLE, 0, float(commits.sum()), True)]
    rows += [(prefix(i + 1), name, i + 1, float(n), prefix(i + 1) in checked)
             for i, (name, n) in enumerate(zip(names, commits))]
    out = []
    for p, name, rank, n, check in rows:
        row = {"table": name, "table_rank": rank, "window_commits": n, "checked": check}
        row.update(_reading(xs, [r.get(f"{p}committed", 0) for _, r in runs],
                            [trials(r, p) for _, r in runs], threshold, lo, hi,
                            base_cps))
        out.append(row)
    return out


def _reading(xs, committed, n, threshold, lightest, heaviest, base_cps) -> dict:
    """One table's crossing, in k (the level over `base_cps`), as `read_crossing` reads it."""
    nan = math.nan
    if not xs:
        return {"k": nan, "k_low": nan, "k_high": nan, "k_status": "undecided", "k_bound": nan,
                "k_reason": "no full-length run"}
    c = logistic_crossing(xs, committed, n, threshold)
    failed = any(t and k < threshold * t for k, t in zip(committed, n))
    if not failed:   # it passed in every run: it breaks past the most load run, if at all
        return {"k": nan, "k_low": nan, "k_high": nan, "k_status": "above_range", "k_bound": heaviest / base_cps,
                "k_reason": "it passed in every full-length run"}
    knee, low, high = (math.exp(v) if math.isfinite(v) else (0.0 if v < 0 else math.inf)
                       for v in (c.x, c.low, c.high))
    reading = read_crossing(knee if math.isfinite(c.x) else nan, low, high, lightest, heaviest)
    ok = reading.status == "ok"
    return {"k": knee / base_cps if ok else nan, "k_low": low / base_cps if ok else nan,
            "k_high": high / base_cps if ok else nan, "k_status": reading.status,
            "k_bound": reading.bound / base_cps, "k_reason": reading.reason}


def k_text(row: dict) -> str:
    """A table's (or a search's) headroom as read: `2.41x [2.30, 2.52]`, `> 16x`, `< 0.25x`, `undecided`."""
    status = row["k_status"]
    if status == "ok":
        return f"{_k(row['k'])}x [{_k(row['k_low'])}, {_k(row['k_high'])}]"
    if status in ("above_range", "below_range"):
        return f"{'>' if status == 'above_range' else '<'} {_k(row['k_bound'])}x"
    return "undecided"


def _k(v: float) -> str:
    return "\u2013" if not math.isfinite(v) else f"{v:.3g}"
