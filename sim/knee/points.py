"""The points a knee search runs: one load level (offered rate, or writers) and its parameter value, the runs
there, and each checked metric's success interval; and where log(failure share) between two points reaches the
allowed share."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .stats import mean_ci95, wilson


@dataclass(eq=False)
class Point:
    load: float                                   # the level: offered arrivals/s (load knee), writers (writers knee)
    value: float                                  # the parameter that sets it (gap ms; writer count)
    pilot: bool = False                           # a short pilot run (locates the knee, never in its fit)
    runs: list[dict] = field(default_factory=list)   # summaries, in the order of `reps`
    reps: list[int] = field(default_factory=list)    # the replication index of each run asked for
    checks: dict = field(default_factory=dict)    # metric prefix -> (mean, low, high)

    @property
    def rate_cps(self) -> float:
        """The load knee's name of the level (offered arrivals/s)."""
        return self.load

    @property
    def n(self) -> int:
        return len(self.runs)

    def passes(self, thr: float) -> bool:
        return all(c[0] >= thr for c in self.checks.values())

    def decision(self, thr: float) -> str:
        """'pass' or 'fail' when the interval excludes the threshold, else 'undecided'."""
        if any(c[2] < thr for c in self.checks.values()):
            return "fail"
        if all(c[1] >= thr for c in self.checks.values()):
            return "pass"
        return "undecided"

    def margin(self, thr: float) -> float:
        """log(failure share / allowed failure share) of the binding metric: < 0 passes."""
        worst = 0.0
        for prefix, (m, *_) in self.checks.items():
            n = sum(trials(r, prefix) for r in self.runs)
            worst = max(worst, max(1.0 - m, 0.5 / max(n, 1)))
        return math.log(worst / max(1.0 - thr, 1e-9))


def trials(run: dict, prefix: str) -> float:
    """A run's success trials of one kind: its window transactions that began to commit (`began_commit`, MODEL.md
    'Metrics'; one still in its runtime when the run ended is left out). A summary without the count (a
    synthetic one, or a results table of a model before version 5) has every window arrival as a trial."""
    n = run.get(f"{prefix}began_commit")
    return run.get(f"{prefix}arrived", 0) if n is None or n != n else n   # (a headroom's table with no window
                                                                          # transaction in a run has no keys)


def trial_rate(p: Point) -> float:
    """A point's trials (window transactions that began to commit) per second: its level (offered /s) times their
    share of its arrivals."""
    arrived = sum(r["arrived"] for r in p.runs)
    return p.load * sum(trials(r, "") for r in p.runs) / arrived if arrived else p.load


def with_ticks(summary: dict) -> dict:
    """A periodic writers' run counts its ticks as its trials: a tick succeeds only when a commit of its own
    served it and committed, so a tick merged into a later commit (overrun wait) or dropped (skip) is not a
    success, and a run that keeps its writers' commits succeeding by letting them fall behind does not pass.
    Every window transaction of periodic writers serves a tick, so the missed ticks are arrived x share /
    (1 - share) (share: the missed share of ticks), added to the trials (`began_commit`). Other runs are
    returned as they are."""
    share = summary.get("missed_interval_share", math.nan)
    if share is None or math.isnan(share) or share <= 0.0:
        return summary
    missed = int(round(summary["arrived"] * share / (1.0 - share)))
    return {**summary, "arrived": summary["arrived"] + missed, "began_commit": trials(summary, "") + missed}


def run_success(run: dict, prefix: str) -> float:
    """A run's success share of one kind over its trials (`trials`: window transactions that began to commit, so
    one that began and had not ended when the run stopped is a failure: a run stopped while transactions are stuck
    in gcp's 429 resends must not pass, as the finished-only `success_rate_finished` might); per kind too. 1 when
    none of that kind began to commit."""
    n = trials(run, prefix)
    return run.get(f"{prefix}committed", 0) / n if n else 1.0


def success_interval(runs: list[dict], prefix: str, design_effect: float) -> tuple[float, float, float]:
    """(mean, low, high) of `prefix` success over a point's runs (`run_success`): Wilson's interval with the
    design effect, widened to the runs' Student-t interval when there are several. For the trace's decisions;
    the knee's CI comes from the fit."""
    committed = sum(r.get(f"{prefix}committed", 0) for r in runs)
    n = sum(trials(r, prefix) for r in runs)
    if n == 0:
        return 1.0, 1.0, 1.0   # nothing of this kind began to commit: nothing failed either
    lo, hi = wilson(committed / design_effect, n / design_effect)
    mean, half = mean_ci95([run_success(r, prefix) for r in runs])
    if not math.isnan(half):
        lo, hi = min(lo, mean - half), max(hi, mean + half)
    return mean, lo, hi


def point_at(points: dict[float, Point], param, value, pilot: bool) -> Point:
    """The point of `points` (keyed by level) at parameter `value`, made if new. The value is rounded by
    `param` (a gap to 6 significant digits; a writer count to an integer), so a level asked for twice is one
    point (and one config hash)."""
    value = param.canon(value)
    level = param.level(value)
    if level not in points:
        points[level] = Point(level, value, pilot)
    return points[level]


def by_rate(points: dict[float, Point]) -> list[Point]:
    """The points that have runs, least load first."""
    return sorted((p for p in points.values() if p.n), key=lambda p: p.load)


def log_crossing(lo: Point, hi: Point, thr: float, clip: float = 0.0, margin=None) -> float:
    """log level where log(failure share) interpolated linearly in log level between lo and hi reaches the
    allowed share (failure grows like a power of the load below the knee), t kept in [clip, 1 - clip];
    `margin(point)`: its log(failure share / allowed), by default from its runs' mean."""
    a, b = math.log(lo.load), math.log(hi.load)
    ga, gb = (margin(lo), margin(hi)) if margin else (lo.margin(thr), hi.margin(thr))
    t = min(1 - clip, max(clip, -ga / (gb - ga))) if gb > ga else 0.5
    return a + t * (b - a)
