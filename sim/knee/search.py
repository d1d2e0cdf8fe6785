"""One configuration's knee search: the two phases (`pilot`, `full`) in order, the runs they ask for, and the
answer (`result`: the knee with its CI and the metrics at it; `trace`: every point run). Throughput and
latencies at the knee come from least-squares lines on log rate (log writers) through the fit's runs, with
their 95 % prediction-of-the-mean CIs.

The writers knee (`workload.writers.count`): the fit's continuous crossing N* with its Fieller interval
[lo, hi] (`writers_crossing*`), and the knee floor(N*), the largest count whose fitted success is at least the
threshold, with the CI [floor(lo), floor(hi)] (`writers*`); N* < 1 is `below_range` (not even one writer meets
the threshold)."""
from __future__ import annotations

import math

from ..config import Config, replaced
from ..trace.replay import table_names
from .fit import Fit
from .full import FullLength
from .pilot import Pilot
from .points import Point, by_rate, success_interval, trial_rate, with_ticks
from . import headroom
from .param import ScaleParam, search_param, with_writers
from .spec import KneeSpec
from .status import Reading, read_crossing
from .stats import regression_at

#: metrics reported at the knee, with their 95 % CIs (least squares over the fit's runs); success there is the
#: fit's own (`Fit.success_at`), commits/s the knee times `Fit.commits_per_arrival` (`knee_throughput_cps`)
#: a writers knee's record also has these at the knee (each writer's cadence and load)
WRITERS_AT_KNEE = ("missed_interval_share", "commit_lag_mean_ms", "commit_lag_p99_ms", "writer_utilisation")
AT_KNEE = ("offered_cps", "commit_latency_mean_ms", "commit_latency_p99_ms", "fa_commit_latency_mean_ms",
           "fa_commit_latency_p99_ms", "vo_commit_latency_mean_ms", "vo_commit_latency_p99_ms")
#: the knee as reported (sim.knee.status), beside the search's own `status`
KNEE_KEYS = ("knee_status", "knee_reason", "knee_bound_cps", "knee_throughput_cps", "knee_throughput_cps_low",
             "knee_throughput_cps_high", "success_rate", "vo_success_rate")


#: a periodic writers' pilot window holds at least this many intervals: a backlog of late ticks builds over
#: intervals, so a pilot that sees one or two per writer passes counts whose full runs fall behind
PILOT_TICKS = 10


def _cadence_fraction(cfg: Config) -> float:
    """The pilot's share of the run that gives periodic writers PILOT_TICKS intervals in its window (0 else)."""
    w = cfg.workload.writers
    if w.count == 0 or w.mode != "periodic":
        return 0.0
    return min(1.0, PILOT_TICKS * w.interval_ms / (cfg.duration_ms - cfg.warmup_ms - cfg.cooldown_ms))


class KneeSearch:
    """One configuration's knee. `pending()` lists the (point, replication) runs needed next, `config_of(point)`
    the config to run, `feed()` takes a run's summary; `done` when finished; `result()` the flat knee record.
    Two phases (sim.knee): short pilot runs bracket the knee, then independent full-length runs walk to the
    crossing and are added around it until a binomial regression over them puts it in a narrow enough CI."""

    def __init__(self, cfg: Config, spec: KneeSpec = KneeSpec()):
        self.spec = spec
        self.param = search_param(cfg, spec.param, spec.start, spec.expansions)   # sim.knee.param
        if self.param.integer:
            cfg = with_writers(cfg, self.param.start[0])
        crn = {"common_random_numbers": True} if spec.common_random_numbers else {}
        self.base = replaced(cfg, crn)
        f = max(spec.pilot_fraction, _cadence_fraction(cfg))
        self.pilot_base = self.base if f >= 1 else replaced(self.base, dict(
            duration_ms=cfg.duration_ms * f, warmup_ms=cfg.warmup_ms * f, cooldown_ms=cfg.cooldown_ms * f))
        self.check = ("", "vo_") if cfg.workload.fast_append_ratio < 1 else ("",)
        self.pilot_check = self.check
        self.tables: tuple[str, ...] = ()    # a headroom's tables checked beside the whole (`sim.knee.headroom`)
        if isinstance(self.param, ScaleParam):
            self.tables = headroom.checked_tables(cfg)
            self.check = self.check + self.tables
        self.stage = "pilot"           # pilot -> full
        self.status = "searching"
        self.error = ""
        self.pilot = Pilot(spec, self.param)
        self.full = FullLength(spec, self.param, self.check, self.pilot, lenient=self.tables)

    def config_of(self, p: Point) -> Config:
        return replaced(self.pilot_base if p.pilot else self.base, {self.param.path: p.value})

    def hours_of(self, p: Point) -> float:
        return p.n * (self.pilot_base if p.pilot else self.base).duration_ms / 3_600_000

    def feed(self, point: Point, summary: dict | None, error: str = "") -> None:
        """A run of `point` finished (`summary`), or failed (None, `error`: the search ends as failed)."""
        if summary is None:
            self.status, self.error = "failed", error
            return
        point.runs.append(with_ticks(summary))
        point.checks = {c: success_interval(point.runs, c, self.spec.design_effect)
                        for c in (self.pilot_check if point.pilot else self.check)}

    def summary_of(self, result: dict) -> dict:
        """A run's summary as this search reads it (`result`: a finished run's stored record): a headroom's with
        its trace rows still waiting counted as failures, and its tables' counts (`sim.knee.headroom`)."""
        if not isinstance(self.param, ScaleParam):
            return result["summary"]
        return {**headroom.with_waiting(result["summary"]), **headroom.table_keys(result.get("per_table", []))}

    @property
    def done(self) -> bool:
        return self.status != "searching"

    def pending(self) -> list[tuple[Point, int]]:
        """Runs needed before the search can move on (empty when done)."""
        for _ in range(10_000):      # each step asks for a run, or ends the search
            if self.done:
                break
            phase = self.pilot if self.stage == "pilot" else self.full
            need = [(p, p.reps[p.n]) for p in phase.points.values() if len(p.reps) > p.n]
            if need:
                return need
            (self._step_pilot if self.stage == "pilot" else self._step_full)()
        else:
            self.status, self.error = "failed", "knee search made no progress"
        return []

    def _step_pilot(self) -> None:
        guess = self.pilot.step()
        if self.pilot.censored == "above_range" and (self.param.integer or isinstance(self.param, ScaleParam)):
            # writers: a short run's window holds only the transactions that began in it, so where each lasts
            # longer than that window (closed-loop hive on gcp, 256 writers: 15 min in HMS's lock queue) it holds
            # the few that got through (2 of 2 committed, where a full run commits 13 of 774): one full-length run
            # at the most writers decides, its walk stopping `above_range` when it passes. A trace likewise: its
            # pilot replays a sixth of the history k times faster, its runtimes not (a day's sixth at 512x is 28 s
            # of runs of 30 s: no contention in it)
            self.stage = "full"
            self.full.probe(max(p.value for p in self.pilot.points.values()))
        elif self.pilot.censored:
            self.status = self.pilot.censored
        elif guess is not None:
            self.stage = "full"
            bias = self.param.pilot_bias if self.spec.pilot_bias is None else self.spec.pilot_bias
            self.full.probe(self.param.value_at(guess / bias))

    def _step_full(self) -> None:
        self.full.step()
        stopped = self.full.stopped
        if stopped:
            self.status = stopped if stopped in ("max_points", "below_range", "above_range") else "ok"

    def _points(self) -> list[Point]:
        return [p for p in (*self.pilot.points.values(), *self.full.points.values()) if p.n]

    # -- the answer
    def result(self) -> dict:
        """The flat knee record (JSON-able; NaN where undefined)."""
        pts = self._points()
        out = {"status": self.status, "error": self.error, "param": self.param.path, "threshold": self.spec.threshold,
               "precision": self.spec.precision, "halfwidth_target": self.spec.halfwidth,
               "common_random_numbers": self.spec.common_random_numbers,
               "runs": sum(p.n for p in pts), "points": len(pts),
               "pilot_runs": sum(p.n for p in pts if p.pilot), "full_runs": self.full.runs(),
               "probes": len(self.full.probes), "stopped": self.full.stopped}
        out["simulated_hours"] = sum(self.hours_of(p) for p in pts)
        knee = low = high = math.nan
        fit = self.full.fit if self.status in ("ok", "max_points") else None
        if fit is not None:
            knee, low, high = fit.knee()
        out.update(self._no_knee(fit) if math.isnan(knee) else self._at_knee(fit, knee, low, high))
        if self.param.integer and knee < 1:
            out["status"] = "below_range"      # not even one writer meets the threshold
        out.update(self._reported(out, fit, knee, low, high))
        if isinstance(self.param, ScaleParam):
            out.update(self._scale_record(out, fit))
        return writers_record(out) if self.param.integer else out

    def _scale_record(self, record: dict, fit: Fit | None) -> dict:
        """A headroom's knee in k (`rate_scale`, its CI), and the table whose success binds it (`binding_table`;
        empty: the whole history's, or none)."""
        base = self.param.base_cps
        binding = ""
        if fit is not None and fit.binding is not None:
            active = [(c.x, p) for p, c in fit.crossings.items() if not c.all_pass and not math.isnan(c.x)]
            binding = min(active)[1] if active else ""
        rank = headroom.rank_of(binding)
        table = table_names(self.base)[rank - 1] if rank else ""
        return {"rate_scale": record["offered_cps"] / base, "rate_scale_low": record["offered_cps_low"] / base,
                "rate_scale_high": record["offered_cps_high"] / base, "base_cps": base, "binding_table": table}

    def headroom(self) -> list[dict]:
        """Each table's headroom over the search's full-length runs, the whole history's first
        (`sim.knee.headroom.readings`); none unless the search moves a trace's rate_scale."""
        if not isinstance(self.param, ScaleParam):
            return []
        runs = [(math.log(p.load), r) for p in self.full.points.values() for r in p.runs]
        return headroom.readings(self.base, runs, self.tables, self.param.base_cps, self.spec.threshold)

    def _reported(self, record: dict, fit: Fit | None, knee: float, low: float, high: float) -> dict:
        """The knee as reported (sim.knee.status) beside the search's `record`: `knee_status` with `knee_reason` and
        the bound of a range status (`knee_bound_cps`; writers: `knee_bound_writers`), the commits/s at the knee
        with its CI scaled alike, and the fitted success of each kind there; every value NaN unless `ok`."""
        status, writers = record["status"], self.param.integer
        bound_key = "knee_bound_writers" if writers else "knee_bound_cps"
        pts = by_rate({p.load: p for p in self._points()})
        out = {"knee_status": "undecided", "knee_reason": "", bound_key: math.nan,
               **{k: math.nan for k in KNEE_KEYS[3:]}}
        if status == "below_range":     # the lightest load fails (writers: one writer)
            return {**out, "knee_status": "below_range", bound_key: 1.0 if writers else trial_rate(pts[0])}
        if status == "above_range":     # the heaviest passes; a pilot point's crossing sits pilot_bias too high
            top = pts[-1]
            bound = top.load if writers else (self.spec.threshold * trial_rate(top)
                                              / (self.param.pilot_bias if top.pilot else 1.0))
            return {**out, "knee_status": "above_range", bound_key: bound}
        if fit is None:
            why = {"failed": f"the search failed: {self.error}", "max_points": "no full-length bracket in the points "
                   "allowed", "searching": "the search has not ended"}.get(status, status)
            return {**out, "knee_reason": why}
        levels = [math.exp(x) for x, _ in fit.runs] + [p.load for p in pts]     # the loads run, pilots' too
        reading = read_crossing(knee, low, high, min(levels), max(levels), self.param.unit)
        if reading.status != "ok":
            return {**out, "knee_status": reading.status, "knee_reason": reading.reason,
                    bound_key: self._bound(reading, fit)}
        x = math.log(knee)
        factor = fit.commits_per_arrival(x)
        if writers:   # the CI is in writers: commits/s only at the knee, from its offered rate there
            out["knee_throughput_cps"] = record["measured_offered_cps"] * factor
        else:
            out.update(knee_throughput_cps=knee * factor, knee_throughput_cps_low=low * factor,
                       knee_throughput_cps_high=high * factor)
        return {**out, "knee_status": "ok", "success_rate": fit.success_at("", x),
                "vo_success_rate": fit.success_at("vo_", x)}

    def _bound(self, reading: Reading, fit: Fit) -> float:
        """A range status read off the fit's CI (`status.read_crossing`) in the knee's unit. Writers: the knee
        floor(N*) with N* >= low is more than floor(low) - 1, with N* <= high less than floor(high) + 1; commits/s
        as the grid knee's (`Reading.bound_cps`)."""
        if not self.param.integer:
            return reading.bound_cps(fit.trial_share(), self.spec.threshold)
        if reading.status == "above_range":
            return float(math.floor(reading.bound) - 1)
        return float(math.floor(reading.bound) + 1) if reading.status == "below_range" else math.nan

    @staticmethod
    def _no_knee(fit: Fit | None) -> dict:
        out = {"offered_cps": math.nan, "offered_cps_low": math.nan, "offered_cps_high": math.nan,
               "value": math.nan, "fit_runs": len(fit.runs) if fit else 0, "decided": False}
        out.update({k: math.nan for m in AT_KNEE if m != "offered_cps" for k in (m, f"{m}_ci95")})
        out.update({"measured_offered_cps": math.nan, "measured_offered_cps_ci95": math.nan})
        out["ci95_halfwidth_rel"] = math.nan
        return out

    def _at_knee(self, fit: Fit, knee: float, low: float, high: float) -> dict:
        """The knee, its CI, and every AT_KNEE metric there by least squares on log rate over the fit's runs."""
        hw = fit.halfwidth()
        target = self.param.halfwidth_target(knee, self.spec.halfwidth)
        out = {"offered_cps": knee, "offered_cps_low": low, "offered_cps_high": high,
               "value": self.param.knee_value(knee), "fit_runs": len(fit.runs),
               "decided": bool(hw <= target and fit.binding.inside), "ci95_halfwidth_rel": hw}
        xs = [x for x, _ in fit.runs]
        at = math.log(self.param.knee_value(knee) if self.param.integer and knee >= 1 else knee)
        for m in AT_KNEE + (WRITERS_AT_KNEE if self.param.integer else ()):
            key = "measured_offered_cps" if m == "offered_cps" else m
            out[key], out[f"{key}_ci95"] = regression_at(xs, [r.get(m) for _, r in fit.runs], at)
        return out

    def trace(self) -> list[dict]:
        """Every point run: phase (pilot; fit: in the final fit's window; full), rate, parameter value, runs,
        success interval, decision."""
        thr = self.spec.threshold
        fit = self.full.fit
        in_fit = {id(r) for _, r in fit.runs} if fit is not None else set()
        rows = []
        for p in sorted(self._points(), key=lambda p: (not p.pilot, p.load)):
            phase = "pilot" if p.pilot else "fit" if any(id(r) in in_fit for r in p.runs) else "full"
            row = {"phase": phase, self.param.load_key: p.value if self.param.integer else p.load, "value": p.value,
                   "runs": p.n, "decision": p.decision(thr), "passes": p.passes(thr)}
            for c, (m, lo, hi) in p.checks.items():
                row.update({f"{c}success_rate": m, f"{c}success_low": lo, f"{c}success_high": hi})
            rows.append(row)
        return rows


def writers_record(out: dict) -> dict:
    """A writers knee's record from the generic one (whose `offered_cps*` hold the crossing in writers): the
    knee floor(N*) with [floor(lo), floor(hi)], the crossing N* with its interval, `unit`; `offered_cps*` NaN
    (the offered rate at the knee is `measured_offered_cps`)."""
    crossing = [out.pop(k) for k in ("offered_cps", "offered_cps_low", "offered_cps_high")]
    knee = [math.floor(x) if math.isfinite(x) else x for x in crossing]
    head = {k: out.pop(k) for k in ("status", "error", "param")}
    for k in (k for m in WRITERS_AT_KNEE for k in (m, f"{m}_ci95")):
        out.setdefault(k, math.nan)
    return {**head, "unit": "writers", **dict(zip(("writers", "writers_low", "writers_high"), knee)),
            **dict(zip(("writers_crossing", "writers_crossing_low", "writers_crossing_high"), crossing)),
            "offered_cps": math.nan, "offered_cps_low": math.nan, "offered_cps_high": math.nan, **out}
