"""The writers figures (cas-bench): a metric against the number of writers (threads), one line per provider,
the mean over replications with its 95 % CI as error bars; one figure per metric (and facet combination). Rates
whose means span more than a decade get a log y axis."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator, PercentFormatter

import seaborn as sns

from ..aggregate import format_value
from ..labels import facet_label, slug
from ..writers import WRITER_METRICS
from .canvas import facet_groups, new_figure, reps_note, save, suptitle

#: y-axis label per metric
_Y = {"throughput_cps": "successful conditional writes/s", "attempts_cps": "conditional writes/s (attempts)",
      "attempt_failure_share": "failed attempts (share)"}


def writers_figures(agg: pd.DataFrame, keys: list[str], out_dir) -> list[tuple[Path, str]]:
    """Per metric of WRITER_METRICS (and per combination of the facet keys, `keys[1:-1]`): x the writer count
    (`keys[-1]`, log 2 scale), one line per provider (`keys[0]`), error bars the 95 % CI half-widths. `agg` is
    `sim.report.writers.writers_table`'s. Returns ``[(path, caption), ...]``."""
    prov, facets, threads = keys[0], keys[1:-1], keys[-1]
    providers = list(dict.fromkeys(agg[prov].tolist()))      # writers_table's order
    colors = dict(zip(providers, sns.color_palette("tab10", n_colors=max(len(providers), 1))))
    out = []
    for metric, head in WRITER_METRICS.items():
        if metric not in agg.columns:
            continue
        for parts, sub in facet_groups(agg, facets):
            fig = new_figure(6.4, 4.2)
            ax = fig.subplots()
            for p in providers:
                _line(ax, sub[sub[prov] == p], threads, metric, colors[p], format_value(p))
            _axes(ax, sub, threads, metric)
            fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper", fontsize=8, frameon=False,
                       title="provider")
            label = facet_label(parts)
            suptitle(fig, f"{head.capitalize()} against writers" + (f" \u2014 {label}" if label else ""))
            path = save(fig, Path(out_dir) / f"writers_{metric}{slug(parts)}.png")
            out.append((path, _caption(head, label) + reps_note(sub, "point")))
    return out


def _line(ax, line: pd.DataFrame, threads: str, metric: str, color, label: str) -> None:
    line = line.sort_values(threads)
    x = pd.to_numeric(line[threads], errors="coerce").to_numpy(dtype=float)
    y = pd.to_numeric(line[metric], errors="coerce").to_numpy(dtype=float)
    ci = pd.to_numeric(line.get(f"{metric}_ci95", pd.Series(np.nan, index=line.index)),
                       errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0)
    if ok.any():
        ax.errorbar(x[ok], y[ok], yerr=np.where(np.isfinite(ci[ok]), ci[ok], 0.0), color=color, marker="o", ms=4,
                    lw=1.6, capsize=3, label=label)


def _axes(ax, sub: pd.DataFrame, threads: str, metric: str) -> None:
    """x: log 2, ticks at the writer counts run; y from 0 (a share: 0 to 100 %)."""
    ticks = sorted(v for v in pd.to_numeric(sub[threads], errors="coerce").dropna().unique() if v > 0)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("writers (threads)")
    ax.set_ylabel(_Y[metric])
    if metric.endswith("_share"):
        ax.set_ylim(0.0, 1.0)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    elif _spans_decades(sub[metric]):
        ax.set_yscale("log")      # providers' conditional-write rates differ by orders of magnitude
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylabel(_Y[metric] + ", log")
    else:
        ax.set_ylim(bottom=0.0)
    ax.grid(True, which="major", alpha=0.3)


def _spans_decades(values: pd.Series) -> bool:
    """Positive means whose largest is over 10x the smallest."""
    v = pd.to_numeric(values, errors="coerce").dropna()
    return bool(len(v)) and bool((v > 0).all()) and float(v.max()) > 10 * float(v.min())


def _caption(head: str, label: str) -> str:
    return (f"{head.capitalize()} against the number of writers (threads){' for ' + label if label else ''}, one "
            "line per provider: the mean over replications, error bars its 95 % confidence interval (Student t). "
            "An attempt is one conditional write; a failed one is a precondition that did not hold.")
