"""Metrics from per-transaction records (MODEL.md 'Metrics'): record columns in, flat dicts out.

Only transactions that arrive inside the measurement window count; unfinished ones are counted and reported
(their share), and left out of success rate and latency.

The records are `sim.records.record_columns`' numpy arrays (codes for `op` and `outcome`), not a DataFrame: a
sweep summarizes thousands of runs, and pandas' per-call overhead and import were most of a light run's cost.
Every figure is the same numpy reduction, over the same elements in the same order, that pandas made, so the
numbers are unchanged bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

from .model.layout import O_ABORTED, O_COMMITTED, O_UNFINISHED, OPS

PERCENTILES = (50, 95, 99)
# what the window's blocks read; the other record columns are not copied
_BLOCK = ("outcome", "end_ms", "runtime_end_ms")
_SUMS = ("catalog_conflicts", "table_conflicts", "gets", "puts", "manifest_lists_read", "cases", "catalog_reads",
         "backoff_ms", "throttled")


def _latency(lat: np.ndarray, prefix: str) -> dict:
    out = {f"{prefix}commit_latency_mean_ms": float(lat.mean()) if lat.size else math.nan}
    qs = np.percentile(lat, PERCENTILES) if lat.size else [math.nan] * len(PERCENTILES)
    for p, q in zip(PERCENTILES, qs):
        out[f"{prefix}commit_latency_p{p}_ms"] = float(q)
    return out


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def _take(cols: dict, mask: np.ndarray, names) -> dict:
    return {k: cols[k][mask] for k in names}


def _sum(x: np.ndarray) -> float:
    """pandas' Series.sum: NaN counts as 0."""
    if x.dtype.kind == "f":
        x = np.where(np.isnan(x), 0.0, x)
    return x.sum()


def _block(cols: dict, window_s: float, prefix: str) -> dict:
    outcome = cols["outcome"]
    committed = outcome == O_COMMITTED
    n_c, n_a = int(committed.sum()), int((outcome == O_ABORTED).sum())
    lat = (cols["end_ms"] - cols["runtime_end_ms"])[committed]
    out = {
        f"{prefix}arrived": len(outcome), f"{prefix}committed": n_c, f"{prefix}aborted": n_a,
        f"{prefix}success_rate": _ratio(n_c, n_c + n_a),
        f"{prefix}throughput_cps": n_c / window_s,
    }
    out.update(_latency(lat, prefix))
    return out


def _window(cols: dict, window_ms: tuple[float, float], names) -> tuple[dict, float]:
    return _take(cols, cols["in_window"], names), (window_ms[1] - window_ms[0]) / 1000.0


def summarize(cols: dict, window_ms: tuple[float, float]) -> dict:
    """The run's flat summary over window transactions (`cols`: `sim.records.record_columns`)."""
    df, window_s = _window(cols, window_ms, _BLOCK + _SUMS + ("op", "attempts"))
    out = _block(df, window_s, "")
    n = len(df["outcome"])
    out["offered_cps"] = n / window_s
    unfinished = int((df["outcome"] == O_UNFINISHED).sum())
    out["unfinished"] = unfinished
    out["unfinished_share"] = _ratio(unfinished, n)
    op = df["op"]
    for code, name in enumerate(OPS):
        out.update(_block(_take(df, op == code, _BLOCK), window_s, f"{name}_"))
    cat, tab = int(df["catalog_conflicts"].sum()), int(df["table_conflicts"].sum())
    attempts = df["attempts"][df["outcome"] != O_UNFINISHED]
    committed = out["committed"]
    out.update({
        "catalog_conflicts": cat, "table_conflicts": tab, "catalog_conflict_share": _ratio(cat, cat + tab),
        "mean_attempts": float(attempts.mean()) if len(attempts) else math.nan,
        "gets_per_commit": _ratio(float(_sum(df["gets"])), committed),
        "puts_per_commit": _ratio(float(_sum(df["puts"])), committed),
        "manifest_lists_read_per_commit": _ratio(float(_sum(df["manifest_lists_read"])), committed),
        "cases_per_commit": _ratio(float(_sum(df["cases"])), committed),
        "catalog_reads_per_commit": _ratio(float(_sum(df["catalog_reads"])), committed),
        "backoff_ms_per_commit": _ratio(float(_sum(df["backoff_ms"])), committed),
        "throttled": int(_sum(df["throttled"])),
        "throttled_per_commit": _ratio(float(_sum(df["throttled"])), committed),
    })
    return out


def per_table(cols: dict, window_ms: tuple[float, float]) -> list[dict]:
    """Per popularity rank: what Zipf runs are judged by. Ranks in order, each rank's transactions in id order
    (as pandas' groupby gave them)."""
    df, window_s = _window(cols, window_ms, _BLOCK + ("table_rank", "catalog_conflicts", "table_conflicts"))
    rank = df["table_rank"]
    order = np.argsort(rank, kind="stable")
    ranks, starts = np.unique(rank[order], return_index=True)
    rows = []
    for r, idx in zip(ranks, np.split(order, starts[1:])):
        part = {k: v[idx] for k, v in df.items()}
        b = _block(part, window_s, "")
        rows.append({
            "table_rank": int(r), "arrived": b["arrived"], "committed": b["committed"], "aborted": b["aborted"],
            "success_rate": b["success_rate"], "throughput_cps": b["throughput_cps"],
            "commit_latency_mean_ms": b["commit_latency_mean_ms"], "commit_latency_p99_ms": b["commit_latency_p99_ms"],
            "catalog_conflicts": int(part["catalog_conflicts"].sum()),
            "table_conflicts": int(part["table_conflicts"].sum()),
        })
    return rows


def nested(summary: dict) -> dict:
    """The `run --json` view: MODEL.md's metrics grouped for reading."""
    def lat(prefix):
        return {k: summary[f"{prefix}commit_latency_{k}_ms"] for k in ("mean", "p50", "p95", "p99")}

    def counts(prefix):
        return {k: summary[f"{prefix}{k}"] for k in ("arrived", "committed", "aborted")}

    return {
        "success_rate": summary["success_rate"],
        "throughput_cps": summary["throughput_cps"],
        "offered_cps": summary["offered_cps"],
        "commit_latency_ms": lat(""),
        "per_op": {op: {"success_rate": summary[f"{op}_success_rate"],
                        "throughput_cps": summary[f"{op}_throughput_cps"],
                        "commit_latency_ms": lat(f"{op}_"), "transactions": counts(f"{op}_")} for op in OPS},
        "retries": {"catalog_conflicts": summary["catalog_conflicts"], "table_conflicts": summary["table_conflicts"],
                    "catalog_conflict_share": summary["catalog_conflict_share"]},
        "transactions": {**counts(""), "unfinished": summary["unfinished"],
                         "unfinished_share": summary["unfinished_share"]},
        "io_per_commit": {"gets": summary["gets_per_commit"], "puts": summary["puts_per_commit"],
                          "cases": summary["cases_per_commit"], "catalog_reads": summary["catalog_reads_per_commit"],
                          "manifest_lists_read": summary["manifest_lists_read_per_commit"],
                          "backoff_ms": summary["backoff_ms_per_commit"],
                          "throttled": summary["throttled_per_commit"]},
        "mean_attempts": summary["mean_attempts"],
    }
