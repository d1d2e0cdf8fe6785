"""Metrics from per-transaction records (MODEL.md 'Metrics'): record columns in, flat dicts out.

Only transactions that arrive inside the measurement window count (MODEL.md 'Metrics'). Success is over those
that began to commit (`began_commit`): `success_rate` = committed / began_commit, the knee's trials. A window
transaction still in its runtime when the run ends (`_in_runtime`: it never began to commit) is no outcome of
contention: it is left out, and reported as its own share (`unfinished_in_runtime_share`); one that began to
commit and had not ended is a failure. `success_rate_finished` = committed / (committed + aborted) leaves every
unfinished one out. Latencies are of committed ones. Which unfinished transaction is still in its runtime depends
on when the run ended, so every summary takes the run's end (`end_ms`).

The records are `sim.records.record_columns`' numpy arrays (codes for `op` and `outcome`), not a DataFrame: a
sweep summarizes thousands of runs, and pandas' per-call overhead and import were most of a light run's cost.
Every figure is the same numpy reduction, over the same elements in the same order, that pandas made, so the
numbers are unchanged bit for bit.

Writers (docs/MODEL.md, `workload.writers`): a record's `writer` is -1 under open-loop arrivals, so the writer
keys are 0 (`writers_seen`) or NaN there, and `per_writer` has no rows.
"""
from __future__ import annotations

import math

import numpy as np

from .model.state import OPS, OUTCOMES, Outcome

PERCENTILES = (50, 95, 99)
FIXED_OPS = (0, 1)   # the operations every summary has a block of: FastAppend, ValidatedOverwrite
# what the window's blocks read; the other record columns are not copied
_BLOCK = ("outcome", "end_ms", "runtime_end_ms")
_SUMS = ("catalog_conflicts", "table_conflicts", "gets", "puts", "manifest_lists_read", "cases", "catalog_reads",
         "backoff_ms", "throttled")
N_OUT = len(OUTCOMES)   # outcome codes (a row of counts per group)
# what the fault figures read (`_fault_figures`)
_FAULTS = ("faults", "landed", "orphaned_files", "orphaned_bytes")
# what the lock figures read (`_lock_out`)
_LOCK = ("lock_requests", "lock_grants", "lock_timeouts", "lock_wait_ms", "lock_hold_ms")
# what the writer tallies read (`_Writers.add`): all records, not only the window's (a writer's busy time)
_WRITER = ("writer", "arrival_ms", "runtime_end_ms", "end_ms", "due_ms", "missed", "cases", "outcome", "in_window")


def _latency_out(prefix: str, mean: float, qs, name: str = "commit_latency") -> dict:
    out = {f"{prefix}{name}_mean_ms": mean}
    for p, q in zip(PERCENTILES, qs):
        out[f"{prefix}{name}_p{p}_ms"] = float(q)
    return out


def _latency(lat: np.ndarray, prefix: str, name: str = "commit_latency") -> dict:
    return _latency_out(prefix, float(lat.mean()) if lat.size else math.nan,
                        np.percentile(lat, PERCENTILES) if lat.size else [math.nan] * len(PERCENTILES), name)


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def _take(cols: dict, mask: np.ndarray, names) -> dict:
    return {k: cols[k][mask] for k in names}


def _sum(x: np.ndarray) -> float:
    """pandas' Series.sum: NaN counts as 0."""
    if x.dtype.kind == "f":
        x = np.where(np.isnan(x), 0.0, x)
    return x.sum()


def _in_runtime(outcome: np.ndarray, runtime_end_ms: np.ndarray, end_ms: float) -> np.ndarray:
    """Unfinished transactions that never began to commit: their runtime had not ended when the run ended at
    `end_ms` (NaN runtime end: the base read that starts it was still pending)."""
    return (outcome == Outcome.UNFINISHED) & ~(runtime_end_ms <= end_ms)


def _counts_out(prefix: str, n: int, n_c: int, n_a: int, n_runtime: int, window_s: float, n_other: int = 0) -> dict:
    """Counts of `n` window transactions, `n_runtime` of them still in their runtime at the end (left out of the
    success rate, whose trials are the `began_commit` others); `n_other` ended neither committed nor aborted
    (unknown, duplicated: no success)."""
    began = n - n_runtime
    return {f"{prefix}arrived": n, f"{prefix}committed": n_c, f"{prefix}aborted": n_a,
            f"{prefix}began_commit": began,
            f"{prefix}success_rate": _ratio(n_c, began),
            f"{prefix}success_rate_finished": _ratio(n_c, n_c + n_a + n_other),
            f"{prefix}throughput_cps": n_c / window_s}


def _others(oc) -> int:
    """Of a row of outcome counts, those that ended neither committed nor aborted."""
    return int(oc[Outcome.UNKNOWN] + oc[Outcome.DUPLICATED] + oc[Outcome.PARTIAL])


def _fault_figures(outcome: np.ndarray, cols: dict) -> dict:
    """The window's commit requests that lost their answer or were answered 5xx (`faults`), the outcomes whose
    client was not told what landed (`unknown`, of which `unknown_landed` did land; `duplicated`; `partial`: a commit
    over several tables that landed on some only), and what unknown outcomes orphaned."""
    unknown = outcome == Outcome.UNKNOWN
    return {"faults": int(cols["faults"].sum()), "unknown": int(unknown.sum()),
            "unknown_landed": int((unknown & (cols["landed"] > 0)).sum()),
            "duplicated": int((outcome == Outcome.DUPLICATED).sum()),
            "partial": int((outcome == Outcome.PARTIAL).sum()),
            "orphaned_files": int(cols["orphaned_files"].sum()), "orphaned_bytes": float(cols["orphaned_bytes"].sum())}


def _block(cols: dict, window_s: float, prefix: str, end_ms: float) -> dict:
    outcome = cols["outcome"]
    committed = outcome == Outcome.COMMITTED
    n_c, n_a = int(committed.sum()), int((outcome == Outcome.ABORTED).sum())
    n_runtime = int(_in_runtime(outcome, cols["runtime_end_ms"], end_ms).sum())
    lat = (cols["end_ms"] - cols["runtime_end_ms"])[committed]
    n_other = int(np.isin(outcome, (Outcome.UNKNOWN, Outcome.DUPLICATED, Outcome.PARTIAL)).sum())
    out = _counts_out(prefix, len(outcome), n_c, n_a, n_runtime, window_s, n_other)
    out.update(_latency(lat, prefix))
    return out


def _window(cols: dict, window_ms: tuple[float, float], names) -> tuple[dict, float]:
    return _take(cols, cols["in_window"], names), (window_ms[1] - window_ms[0]) / 1000.0


def _lock_out(counts: tuple[int, int, int], window_s: float, wait: tuple[float, int, float],
              hold: tuple[float, int, float]) -> dict:
    """Lock figures of the window's transactions: requests, grants (per second: over every lock; per table in
    `per_table`, each table's own lock under lock.scope table) and timeouts; a transaction's lock wait (its requests'
    waits summed) over those that asked for the lock, and its hold (summed over its grants) over those granted it,
    each as (sum, count, P99)."""
    requests, grants, timeouts = counts
    return {"lock_requests": requests, "lock_grants": grants, "lock_timeouts": timeouts,
            "lock_grants_cps": grants / window_s,
            "lock_wait_mean_ms": _ratio(wait[0], wait[1]), "lock_wait_p99_ms": wait[2],
            "lock_hold_mean_ms": _ratio(hold[0], hold[1]), "lock_hold_p99_ms": hold[2]}


def _lock_figures(df: dict, window_s: float) -> dict:
    asked, granted = df["lock_requests"] > 0, df["lock_grants"] > 0
    wait, hold = df["lock_wait_ms"][asked], df["lock_hold_ms"][granted]
    p99 = lambda x: float(np.percentile(x, 99)) if x.size else math.nan   # noqa: E731
    return _lock_out((int(df["lock_requests"].sum()), int(df["lock_grants"].sum()), int(df["lock_timeouts"].sum())),
                     window_s, (float(wait.sum()), wait.size, p99(wait)), (float(hold.sum()), hold.size, p99(hold)))


def op_codes(cfg) -> tuple[int, ...]:
    """The operations whose blocks a run's summary has (`sim.model.state.OPS` codes): the FastAppend's and the
    ValidatedOverwrite's always; with operations also those the config can run (a trace's: those it holds)."""
    from .config import jobs_of, operations_on, trace_data, traced
    if not operations_on(cfg):
        return FIXED_OPS
    ops = cfg.workload.operations
    extra = [OPS.index(name) for name, share in (("overwrite", ops.overwrite_share), ("row_delta", ops.row_delta_share))
             if share > 0]
    extra += [OPS.index(n) for n in (trace_data(cfg).operations if traced(cfg) else ()) if n != "append"]
    return tuple(dict.fromkeys(FIXED_OPS + tuple(extra) + tuple(OPS.index(name) for name, _ in jobs_of(cfg))))


def _op_extras(name: str, lost_ms: float, attempts: int, finished: int) -> dict:
    """An operation's work lost (the whole time of its transactions that failed: a job's run and its commit) and
    its attempts per finished transaction."""
    return {f"{name}_work_lost_s": lost_ms / 1000.0, f"{name}_mean_attempts": _ratio(attempts, finished)}


def summarize(cols: dict, window_ms: tuple[float, float], end_ms: float, ops: tuple[int, ...] = None) -> dict:
    """The run's flat summary over window transactions (`cols`: `sim.records.record_columns`) of a run that ended
    at `end_ms`; a block for each operation in `ops` (`op_codes`; unset: FIXED_OPS)."""
    ops = FIXED_OPS if ops is None else ops
    df, window_s = _window(cols, window_ms, _BLOCK + _SUMS + ("op", "attempts", "arrival_ms") + _LOCK + _FAULTS)
    out = _block(df, window_s, "", end_ms)
    op = df["op"]
    blocks = [_block(_take(df, op == code, _BLOCK), window_s, f"{OPS[code]}_", end_ms) for code in ops]
    fin, aborted = df["outcome"] != Outcome.UNFINISHED, df["outcome"] == Outcome.ABORTED
    blocks += [_op_extras(OPS[code], math.fsum((df["end_ms"] - df["arrival_ms"])[aborted & (op == code)]),
                          int(df["attempts"][fin & (op == code)].sum()), int((fin & (op == code)).sum()))
               for code in ops if code not in FIXED_OPS]
    attempts = df["attempts"][df["outcome"] != Outcome.UNFINISHED]
    sums = {k: _sum(df[k]) for k in _SUMS}
    out = _summary_out(out, window_s, int((df["outcome"] == Outcome.UNFINISHED).sum()), blocks,
                       float(attempts.mean()) if len(attempts) else math.nan, sums)
    aborted = df["outcome"] == Outcome.ABORTED
    out.update(_latency((df["end_ms"] - df["runtime_end_ms"])[aborted], "", "aborted_latency"))
    writers = _Writers(window_ms)
    lag = writers.add(_take(cols, slice(None), _WRITER))
    out.update(writers.summary(out["throughput_cps"], float(lag.mean()) if lag.size else math.nan,
                               float(np.percentile(lag, 99)) if lag.size else math.nan))
    out.update(_lock_figures(df, window_s))
    out.update(_fault_figures(df["outcome"], df))
    return out


def _summary_out(out: dict, window_s: float, unfinished: int, blocks: list[dict], mean_attempts: float,
                 sums: dict) -> dict:
    """The summary's keys in order: the whole window's block `out`, then per op, conflicts, I/O per commit."""
    n = out["arrived"]
    out["offered_cps"] = n / window_s
    out["unfinished"] = unfinished
    out["unfinished_share"] = _ratio(unfinished, n)
    in_runtime = n - out["began_commit"]
    out["unfinished_in_runtime"] = in_runtime
    out["unfinished_in_runtime_share"] = _ratio(in_runtime, n)
    for b in blocks:
        out.update(b)
    cat, tab = int(sums["catalog_conflicts"]), int(sums["table_conflicts"])
    committed = out["committed"]
    out.update({
        "catalog_conflicts": cat, "table_conflicts": tab, "catalog_conflict_share": _ratio(cat, cat + tab),
        "mean_attempts": mean_attempts,
        "gets_per_commit": _ratio(float(sums["gets"]), committed),
        "puts_per_commit": _ratio(float(sums["puts"]), committed),
        "manifest_lists_read_per_commit": _ratio(float(sums["manifest_lists_read"]), committed),
        "cases_per_commit": _ratio(float(sums["cases"]), committed),
        "catalog_reads_per_commit": _ratio(float(sums["catalog_reads"]), committed),
        "backoff_ms_per_commit": _ratio(float(sums["backoff_ms"]), committed),
        "throttled": int(sums["throttled"]),
        "throttled_per_commit": _ratio(float(sums["throttled"]), committed),
        # conditional writes: a committed transaction's last one succeeded, every other one failed
        "attempts_cps": float(sums["cases"]) / window_s,
        "attempt_failure_share": _ratio(float(sums["cases"]) - committed, float(sums["cases"])),
    })
    return out


def per_table(cols: dict, window_ms: tuple[float, float], end_ms: float) -> list[dict]:
    """Per popularity rank: what Zipf runs are judged by. Ranks in order, each rank's transactions in id order
    (as pandas' groupby gave them)."""
    df, window_s = _window(cols, window_ms, _BLOCK + ("table_rank", "catalog_conflicts", "table_conflicts",
                                                       "lock_grants"))
    rank = df["table_rank"]
    order = np.argsort(rank, kind="stable")
    ranks, starts = np.unique(rank[order], return_index=True)
    rows = []
    for r, idx in zip(ranks, np.split(order, starts[1:])):
        part = {k: v[idx] for k, v in df.items()}
        rows.append(_table_row(int(r), _block(part, window_s, "", end_ms), int(part["catalog_conflicts"].sum()),
                               int(part["table_conflicts"].sum()), int(part["lock_grants"].sum()) / window_s))
    return rows


def blank_table_row(rank: int) -> dict:
    """A per-table row of a table with no window transaction (a trace's, whose rows all waited for their writer)."""
    return _table_row(rank, {**_counts_out("", 0, 0, 0, 0, 1.0), **_latency(np.zeros(0), "")}, 0, 0, 0.0)


def _table_row(rank: int, b: dict, cat: int, tab: int, lock_grants_cps: float) -> dict:
    return {"table_rank": rank, "arrived": b["arrived"], "committed": b["committed"], "aborted": b["aborted"],
            "began_commit": b["began_commit"], "success_rate": b["success_rate"],
            "success_rate_finished": b["success_rate_finished"],
            "throughput_cps": b["throughput_cps"],
            "commit_latency_mean_ms": b["commit_latency_mean_ms"], "commit_latency_p99_ms": b["commit_latency_p99_ms"],
            "catalog_conflicts": cat, "table_conflicts": tab, "lock_grants_cps": lock_grants_cps}


def per_writer(cols: dict, window_ms: tuple[float, float], end_ms: float) -> list[dict]:
    """Per writer (ids in order; none under open-loop arrivals): its window transactions' counts and rates, its
    utilisation and, for periodic writers, its commit lag and missed intervals."""
    writers = _Writers(window_ms)
    writers.add(_take(cols, slice(None), _WRITER))
    return writers.rows(end_ms)


class _Writers:
    """Per-writer tallies, added chunk by chunk (any order): the window transactions' outcomes, conditional
    writes, commit lags and missed ticks; and the time each writer spends inside a transaction within the
    window, from all its records (a transaction that started before the window can fill part of it). Counts
    are exact; float sums add per-chunk sums (per writer, bincount's order)."""

    def __init__(self, window_ms: tuple[float, float]):
        self.lo, self.hi = window_ms
        self.window_s = (self.hi - self.lo) / 1000.0
        self.seen = np.zeros(0, dtype=bool)
        self.outcomes = np.zeros((0, N_OUT), dtype=np.int64)
        self.cases, self.due, self.missed = (np.zeros(0, dtype=np.int64) for _ in range(3))
        self.busy_ms, self.lag_ms = np.zeros(0), np.zeros(0)
        # the unfinished window transactions' writers and runtime ends: which were still in their runtime is known
        # once the run's end is (`rows`)
        self.open_writer: list[np.ndarray] = []
        self.open_runtime_end_ms: list[np.ndarray] = []

    def _grow(self, n: int) -> None:
        old = len(self.seen)
        if n <= old:
            return
        for name in ("seen", "outcomes", "cases", "due", "missed", "busy_ms", "lag_ms"):
            a = getattr(self, name)
            grown = np.zeros((n,) + a.shape[1:], dtype=a.dtype)
            grown[:old] = a
            setattr(self, name, grown)

    def add(self, cols: dict) -> np.ndarray:
        """Tally a chunk of records; returns the commit lags (arrival - due) of its window transactions."""
        w = cols["writer"]
        mine = w >= 0
        if not mine.any():
            return np.zeros(0)
        n = int(w[mine].max()) + 1
        self._grow(n)
        wr = w[mine]
        self.seen[wr] = True
        end = cols["end_ms"][mine]
        end = np.minimum(np.where(np.isnan(end), self.hi, end), self.hi)   # unfinished: busy to the window's end
        busy = np.clip(end - np.maximum(cols["arrival_ms"][mine], self.lo), 0.0, None)
        self.busy_ms[:n] += np.bincount(wr, weights=busy, minlength=n)
        win = mine & (cols["in_window"] != 0)
        ww = w[win]
        self.outcomes[:n] += np.bincount(ww * N_OUT + cols["outcome"][win], minlength=N_OUT * n).reshape(n, N_OUT)
        still = cols["outcome"][win] == Outcome.UNFINISHED
        self.open_writer.append(ww[still])
        self.open_runtime_end_ms.append(cols["runtime_end_ms"][win][still])
        self.cases[:n] += np.bincount(ww, weights=cols["cases"][win], minlength=n).astype(np.int64)
        self.missed[:n] += np.bincount(ww, weights=cols["missed"][win], minlength=n).astype(np.int64)
        due = cols["due_ms"][win]
        has = ~np.isnan(due)
        lag = cols["arrival_ms"][win][has] - due[has]
        self.lag_ms[:n] += np.bincount(ww[has], weights=lag, minlength=n)
        self.due[:n] += np.bincount(ww[has], minlength=n)
        return lag

    def utilisation(self) -> np.ndarray:
        """Per writer seen: its busy share of the window."""
        return self.busy_ms[self.seen] / (self.hi - self.lo)

    def summary(self, throughput_cps: float, lag_mean_ms: float, lag_p99_ms: float) -> dict:
        n = int(self.seen.sum())
        missed, due = int(self.missed.sum()), int(self.due.sum())
        return {"writers_seen": n, "commits_per_writer_cps": _ratio(throughput_cps, n),
                "writer_utilisation": float(self.utilisation().mean()) if n else math.nan,
                "commit_lag_mean_ms": lag_mean_ms, "commit_lag_p99_ms": lag_p99_ms,
                "missed_interval_share": _ratio(missed, missed + due)}

    def rows(self, end_ms: float) -> list[dict]:
        """Per writer seen, of a run that ended at `end_ms`."""
        n = len(self.seen)
        writer = np.concatenate([np.zeros(0, dtype=np.int64), *self.open_writer])
        runtime_end = np.concatenate([np.zeros(0), *self.open_runtime_end_ms])
        in_runtime = np.bincount(writer[_in_runtime(np.full(len(writer), Outcome.UNFINISHED), runtime_end, end_ms)],
                                 minlength=n)
        rows = []
        for w, util in zip(np.flatnonzero(self.seen), self.utilisation()):
            oc, due, missed = self.outcomes[w], int(self.due[w]), int(self.missed[w])
            b = _counts_out("", int(oc.sum()), int(oc[Outcome.COMMITTED]), int(oc[Outcome.ABORTED]),
                            int(in_runtime[w]), self.window_s, _others(oc))
            rows.append({"writer": int(w), **b, "attempts_cps": int(self.cases[w]) / self.window_s,
                         "utilisation": float(util), "commit_lag_mean_ms": _ratio(float(self.lag_ms[w]), due),
                         "missed_interval_share": _ratio(missed, missed + due)})
        return rows


def nested(summary: dict) -> dict:
    """The `run --json` view: MODEL.md's metrics grouped for reading."""
    def lat(prefix):
        return {k: summary[f"{prefix}commit_latency_{k}_ms"] for k in ("mean", "p50", "p95", "p99")}

    def counts(prefix):
        return {k: summary[f"{prefix}{k}"] for k in ("arrived", "began_commit", "committed", "aborted")}

    return {
        "success_rate": summary["success_rate"],
        "success_rate_finished": summary["success_rate_finished"],
        "throughput_cps": summary["throughput_cps"],
        "offered_cps": summary["offered_cps"],
        "commit_latency_ms": lat(""),
        "per_op": {op: {"success_rate": summary[f"{op}_success_rate"],
                        "success_rate_finished": summary[f"{op}_success_rate_finished"],
                        "throughput_cps": summary[f"{op}_throughput_cps"],
                        "commit_latency_ms": lat(f"{op}_"), "transactions": counts(f"{op}_")}
                   for op in OPS if f"{op}_success_rate" in summary},
        "retries": {"catalog_conflicts": summary["catalog_conflicts"], "table_conflicts": summary["table_conflicts"],
                    "catalog_conflict_share": summary["catalog_conflict_share"]},
        "transactions": {**counts(""), "unfinished": summary["unfinished"],
                         "unfinished_share": summary["unfinished_share"],
                         "unfinished_in_runtime": summary["unfinished_in_runtime"],
                         "unfinished_in_runtime_share": summary["unfinished_in_runtime_share"]},
        "io_per_commit": {"gets": summary["gets_per_commit"], "puts": summary["puts_per_commit"],
                          "cases": summary["cases_per_commit"], "catalog_reads": summary["catalog_reads_per_commit"],
                          "manifest_lists_read": summary["manifest_lists_read_per_commit"],
                          "backoff_ms": summary["backoff_ms_per_commit"],
                          "throttled": summary["throttled_per_commit"]},
        "mean_attempts": summary["mean_attempts"],
        "writers": {"count": summary["writers_seen"], "commits_per_writer_cps": summary["commits_per_writer_cps"],
                    "utilisation": summary["writer_utilisation"], "attempts_cps": summary["attempts_cps"],
                    "attempt_failure_share": summary["attempt_failure_share"],
                    "aborted_latency_ms": {k: summary[f"aborted_latency_{k}_ms"] for k in ("mean", "p50", "p95",
                                                                                           "p99")},
                    "commit_lag_ms": {k: summary[f"commit_lag_{k}_ms"] for k in ("mean", "p99")},
                    "missed_interval_share": summary["missed_interval_share"]},
        "faults": {k: summary[k] for k in ("faults", "unknown", "unknown_landed", "duplicated", "partial",
                                           "orphaned_files", "orphaned_bytes")},
    }


# ------------------------------------------------------------------------------------------ streaming
# relative accuracy of streamed percentiles (`LogHistogram`): the summary's, and the per-table p99's
ALPHA_SUMMARY = 1e-4
ALPHA_TABLE = 1e-3


class LogHistogram:
    """Counts of non-negative values in log-spaced buckets, one row per group, for percentiles within a relative
    error `alpha` (the buckets of DDSketch: value x > 0 in bucket k = ceil(log_gamma x), gamma = (1 + alpha) /
    (1 - alpha), read back as 2 gamma^k / (gamma + 1); zero is its own bucket, read back exactly). np.percentile
    interpolates linearly between two order statistics; interpolating between their buckets' values with the
    same weights errs by at most alpha times the exact percentile (up to float rounding), as the values are
    >= 0. Memory: rows x the buckets between the smallest and largest value seen (4,600 per 10^4 of range at
    alpha 1e-3), whatever the number of values."""

    def __init__(self, alpha: float, rows: int):
        self.gamma = (1.0 + alpha) / (1.0 - alpha)
        self._log_gamma = math.log(self.gamma)
        self.rows = rows
        self.zeros = np.zeros(rows, dtype=np.int64)
        self.lo = 0                                   # bucket index of counts[:, 0]
        self.counts = np.zeros((rows, 0), dtype=np.int64)

    def add(self, row: np.ndarray, x: np.ndarray) -> None:
        pos = x > 0.0
        self.zeros += np.bincount(row[~pos], minlength=self.rows)
        row, x = row[pos], x[pos]
        if not len(x):
            return
        k = np.ceil(np.log(x) / self._log_gamma).astype(np.int64)
        lo, hi = int(k.min()), int(k.max()) + 1
        width = self.counts.shape[1]
        if width == 0:
            self.lo, width = lo, 0
        if lo < self.lo or hi > self.lo + width:   # widen the bucket range to cover the new values
            new_lo = min(lo, self.lo)
            new_w = max(hi, self.lo + width) - new_lo
            grown = np.zeros((self.rows, new_w), dtype=np.int64)
            grown[:, self.lo - new_lo:self.lo - new_lo + width] = self.counts
            self.counts, self.lo = grown, new_lo
        w = self.counts.shape[1]
        self.counts += np.bincount(row * w + (k - self.lo), minlength=self.rows * w).reshape(self.rows, w)

    def percentiles(self, rows, qs) -> list[float]:
        """np.percentile's linear percentiles `qs` of the values in `rows` (NaN if none), within alpha."""
        zeros = int(self.zeros[rows].sum())
        cum = np.cumsum(np.concatenate([[zeros], self.counts[rows].sum(axis=0)]))
        n = int(cum[-1]) if len(cum) else 0
        if n == 0:
            return [math.nan] * len(qs)
        k = np.arange(self.lo - 1, self.lo + self.counts.shape[1], dtype=np.float64)
        value = np.where(np.arange(len(cum)) == 0, 0.0, 2.0 * self.gamma ** k / (self.gamma + 1.0))
        out = []
        for q in qs:
            h = (n - 1) * q / 100.0
            i = int(math.floor(h))
            a = value[np.searchsorted(cum, i, side="right")]
            b = value[np.searchsorted(cum, min(i + 1, n - 1), side="right")]
            out.append(float(a + (b - a) * (h - i)))
        return out


class StreamSummary:
    """`summarize`, `per_table` and `per_writer`, accumulated over chunks of records (any order of chunks):
    counts and integer sums are exact; means and float sums add per-chunk sums exactly (math.fsum), so they
    differ from numpy's one-pass mean only by numpy's own rounding; percentiles come from `LogHistogram`
    (relative error at most ALPHA_SUMMARY, per-table p99 ALPHA_TABLE); the per-writer figures are the same
    `_Writers` tallies as in memory (utilisation needs every record of a writer: exact per-writer sums)."""

    def __init__(self, window_ms: tuple[float, float], num_tables: int, ops: tuple[int, ...] = FIXED_OPS):
        self.window_s = (window_ms[1] - window_ms[0]) / 1000.0
        self.T = num_tables
        self.ops = ops
        G = len(OPS) * num_tables               # group: table * len(OPS) + op
        self.outcomes = np.zeros((G, N_OUT), dtype=np.int64)
        self.op_lost: list[np.ndarray] = []      # per chunk, per op: aborted window transactions' whole time
        self.op_attempts = np.zeros((len(OPS), 2), dtype=np.int64)   # per op: attempts, finished transactions
        self.open_group: list[np.ndarray] = []          # unfinished window transactions: group, runtime end
        self.open_runtime_end_ms: list[np.ndarray] = []
        self.lat_sums: list[np.ndarray] = []    # per chunk, per group: sum of committed latencies
        self.hist_op = LogHistogram(ALPHA_SUMMARY, len(OPS))
        self.hist_table = LogHistogram(ALPHA_TABLE, num_tables)
        self.sums = {k: 0 for k in _SUMS if k != "backoff_ms"}
        self.backoff: list[float] = []
        self.conflicts = np.zeros((num_tables, 2), dtype=np.int64)   # catalog, table conflicts per table
        self.attempts = [0, 0]                   # sum, count over finished window transactions
        self.total = {"transactions": 0, "catalog_reads": 0, "cases": 0}
        self.aborted_sums: list[float] = []      # per chunk: sum of aborted window transactions' latencies
        self.hist_aborted = LogHistogram(ALPHA_SUMMARY, 1)
        self.writers = _Writers(window_ms)
        self.lag_sums: list[float] = []          # per chunk: sum of commit lags
        self.hist_lag = LogHistogram(ALPHA_SUMMARY, 1)
        self.lock_counts = np.zeros(3, dtype=np.int64)   # requests, grants, timeouts
        self.lock_grants = np.zeros(num_tables, dtype=np.int64)
        self.lock_sums: dict[str, list[float]] = {"lock_wait_ms": [], "lock_hold_ms": []}
        self.lock_n = {"lock_wait_ms": 0, "lock_hold_ms": 0}
        self.hist_lock = LogHistogram(ALPHA_SUMMARY, 2)   # row 0: waits, row 1: holds
        self.faults: dict = _fault_figures(np.zeros(0, dtype=np.int64), {k: np.zeros(0) for k in _FAULTS})

    def add(self, cols: dict) -> None:
        self.total["transactions"] += len(cols["txn"])
        self.total["catalog_reads"] += int(cols["catalog_reads"].sum())
        self.total["cases"] += int(cols["cases"].sum())
        w = cols["in_window"]
        table, op, outcome = cols["table"][w], cols["op"][w], cols["outcome"][w]
        g = table * len(OPS) + op
        G = len(OPS) * self.T
        self.outcomes += np.bincount(g * N_OUT + outcome, minlength=G * N_OUT).reshape(G, N_OUT)
        f = _fault_figures(outcome, {k: cols[k][w] for k in _FAULTS})
        self.faults = {k: self.faults.get(k, 0) + v for k, v in f.items()}
        still = outcome == Outcome.UNFINISHED     # in its runtime or not: known once the run's end is (`_in_runtime`)
        self.open_group.append(g[still])
        self.open_runtime_end_ms.append(cols["runtime_end_ms"][w][still])
        c = outcome == Outcome.COMMITTED
        lat = (cols["end_ms"][w] - cols["runtime_end_ms"][w])[c]
        self.lat_sums.append(np.bincount(g[c], weights=lat, minlength=G))
        self.hist_op.add(op[c], lat)
        self.hist_table.add(table[c], lat)
        for k in self.sums:
            self.sums[k] += int(cols[k][w].sum())
        self.backoff.append(float(_sum(cols["backoff_ms"][w])))
        for i, k in enumerate(("catalog_conflicts", "table_conflicts")):
            self.conflicts[:, i] += np.bincount(table, weights=cols[k][w], minlength=self.T).astype(np.int64)
        fin = outcome != Outcome.UNFINISHED
        self.attempts[0] += int(cols["attempts"][w][fin].sum())
        self.attempts[1] += int(fin.sum())
        self.op_attempts[:, 0] += np.bincount(op[fin], weights=cols["attempts"][w][fin],
                                              minlength=len(OPS)).astype(np.int64)
        self.op_attempts[:, 1] += np.bincount(op[fin], minlength=len(OPS))
        a = outcome == Outcome.ABORTED
        self.op_lost.append(np.bincount(op[a], weights=(cols["end_ms"][w] - cols["arrival_ms"][w])[a],
                                        minlength=len(OPS)))
        self._add_aborted_and_writers(cols, w, outcome)
        self._add_lock(cols, w, table)

    def _add_lock(self, cols: dict, w: np.ndarray, table: np.ndarray) -> None:
        grants = cols["lock_grants"][w]
        self.lock_counts += [int(cols["lock_requests"][w].sum()), int(grants.sum()),
                             int(cols["lock_timeouts"][w].sum())]
        self.lock_grants += np.bincount(table, weights=grants, minlength=self.T).astype(np.int64)
        for row, (name, by) in enumerate((("lock_wait_ms", "lock_requests"), ("lock_hold_ms", "lock_grants"))):
            x = cols[name][w][cols[by][w] > 0]
            self.lock_sums[name].append(float(x.sum()))
            self.lock_n[name] += x.size
            self.hist_lock.add(np.full(x.size, row, dtype=np.int64), x)

    def _add_aborted_and_writers(self, cols: dict, w: np.ndarray, outcome: np.ndarray) -> None:
        a = outcome == Outcome.ABORTED
        lat = (cols["end_ms"][w] - cols["runtime_end_ms"][w])[a]
        self.aborted_sums.append(float(lat.sum()))
        self.hist_aborted.add(np.zeros(len(lat), dtype=np.int64), lat)
        lag = self.writers.add({k: cols[k] for k in _WRITER})
        self.lag_sums.append(float(lag.sum()))
        self.hist_lag.add(np.zeros(len(lag), dtype=np.int64), lag)

    def _in_runtime(self, end_ms: float) -> np.ndarray:
        """Per group, the window transactions still in their runtime when the run ended at `end_ms`."""
        g = np.concatenate([np.zeros(0, dtype=np.int64), *self.open_group])
        runtime_end = np.concatenate([np.zeros(0), *self.open_runtime_end_ms])
        return np.bincount(g[_in_runtime(np.full(len(g), Outcome.UNFINISHED), runtime_end, end_ms)],
                           minlength=len(OPS) * self.T)

    def _block(self, groups: np.ndarray, hist: LogHistogram, rows, prefix: str, in_runtime: np.ndarray) -> dict:
        oc = self.outcomes[groups].sum(axis=0)
        n_c = int(oc[Outcome.COMMITTED])
        lat_sum = math.fsum(np.stack(self.lat_sums)[:, groups].ravel()) if self.lat_sums else 0.0
        out = _counts_out(prefix, int(oc.sum()), n_c, int(oc[Outcome.ABORTED]), int(in_runtime[groups].sum()),
                          self.window_s, _others(oc))
        out.update(_latency_out(prefix, lat_sum / n_c if n_c else math.nan, hist.percentiles(rows, PERCENTILES)))
        return out

    def summary(self, end_ms: float) -> dict:
        """`summarize`'s keys, in its order, for a run that ended at `end_ms`."""
        G = np.arange(len(OPS) * self.T)
        left = self._in_runtime(end_ms)
        out = self._block(G, self.hist_op, list(range(len(OPS))), "", left)
        blocks = [self._block(G[G % len(OPS) == code], self.hist_op, [code], f"{OPS[code]}_", left)
                  for code in self.ops]
        lost = np.stack(self.op_lost) if self.op_lost else np.zeros((1, len(OPS)))
        blocks += [_op_extras(OPS[code], math.fsum(lost[:, code]), int(self.op_attempts[code, 0]),
                              int(self.op_attempts[code, 1])) for code in self.ops if code not in FIXED_OPS]
        sums = {**self.sums, "backoff_ms": math.fsum(self.backoff)}
        n_fin = self.attempts[1]
        out = _summary_out(out, self.window_s, int(self.outcomes[:, Outcome.UNFINISHED].sum()), blocks,
                           self.attempts[0] / n_fin if n_fin else math.nan, sums)
        n_a = out["aborted"]
        out.update(_latency_out("", math.fsum(self.aborted_sums) / n_a if n_a else math.nan,
                                self.hist_aborted.percentiles([0], PERCENTILES), "aborted_latency"))
        n_lag = int(self.writers.due.sum())
        out.update(self.writers.summary(out["throughput_cps"], math.fsum(self.lag_sums) / n_lag if n_lag else math.nan,
                                        self.hist_lag.percentiles([0], [99])[0]))
        wait, hold = ((math.fsum(self.lock_sums[k]), self.lock_n[k], self.hist_lock.percentiles([row], [99])[0])
                      for row, k in enumerate(("lock_wait_ms", "lock_hold_ms")))
        out.update(_lock_out(tuple(int(c) for c in self.lock_counts), self.window_s, wait, hold))
        out.update(self.faults)
        return out

    def per_table(self, end_ms: float) -> list[dict]:
        """`per_table`'s rows: ranks with window transactions, in order."""
        left = self._in_runtime(end_ms)
        rows = []
        for t in range(self.T):
            groups = np.arange(t * len(OPS), (t + 1) * len(OPS))
            if self.outcomes[groups].sum() == 0:
                continue
            rows.append(_table_row(t + 1, self._block(groups, self.hist_table, [t], "", left),
                                   int(self.conflicts[t, 0]), int(self.conflicts[t, 1]),
                                   int(self.lock_grants[t]) / self.window_s))
        return rows

    def per_writer(self, end_ms: float) -> list[dict]:
        """`per_writer`'s rows (exact: per-writer tallies)."""
        return self.writers.rows(end_ms)
