"""The report's heatmap figures: one file per facet combination of a metric (FA / VO panels for a mix), and the
per-table-rank heatmaps of Zipf runs. Each comes with its caption."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..aggregate import SUCCESS_THRESHOLD, format_value, has_vo
from ..labels import axis_label, facet_label, kind, lower_first, metric_description, metric_title, slug, \
    value_unit_note
from .annotated_heatmap import heatmap, panel_size
from .canvas import facet_groups, new_figure, panel_metrics, reps_note, save, suptitle
from .heat_scale import color_limits, rank_groups


def _figure_of_panels(sub: pd.DataFrame, rows: str, cols: str, n_panels: int):
    """A Figure of ``n_panels`` heatmaps side by side, and its Axes."""
    w, h = panel_size(sub, rows, cols)
    fig = new_figure(w * n_panels, h + 0.3)
    return fig, fig.subplots(1, n_panels, squeeze=False)[0]


# --------------------------------------------------------------------------------------------
# faceted heatmaps
# --------------------------------------------------------------------------------------------

def facet_heatmaps(agg: pd.DataFrame, metric: str, layout: dict, out_dir, per_op: bool = True,
                   mark_below: float | None = None, prefix: str | None = None,
                   ) -> list[tuple[Path, str]]:
    """One PNG per combination of ``layout["facets"]``: a heatmap of ``metric`` with
    ``layout["rows"]`` x ``layout["cols"]``; for a mix (fast_append_ratio < 1) success-rate and
    latency metrics get FA and VO panels side by side. Colour scales are shared by all
    figures of the metric. Returns ``[(path, caption), ...]``."""
    out_dir = Path(out_dir)
    rows, cols, facets = layout["rows"], layout["cols"], list(layout.get("facets", []))
    thr = SUCCESS_THRESHOLD if mark_below is None else mark_below
    # shared colour scales across facets: overall and FA panels share one, VO panels another
    scale = {metric: color_limits(agg, [metric, "fa_" + metric])}
    scale["fa_" + metric] = scale[metric]
    scale["vo_" + metric] = color_limits(agg, ["vo_" + metric])
    out = []
    for parts, sub in facet_groups(agg, facets):
        panels = panel_metrics(sub, metric, per_op)
        fig, axes = _figure_of_panels(sub, rows, cols, len(panels))
        for ax, m in zip(axes, panels):
            heatmap(sub, m, rows, cols, ax=ax, mark_below=thr, vmin=scale[m][0], vmax=scale[m][1])
        label = facet_label(parts)
        suptitle(fig, metric_title(metric) + (f" \u2014 {label}" if label else ""))
        path = save(fig, out_dir / f"{prefix or metric}{slug(parts)}.png")
        out.append((path, _heatmap_caption(metric, panels, rows, cols, label, thr, sub)))
    return out


def _heatmap_caption(metric, panels, rows, cols, label, thr, sub) -> str:
    where = f" for {label}" if label else ""
    load = "; load falls from left to right" if "inter_arrival" in cols else ""
    s = (f"{metric_description(metric)}{where}, by {axis_label(rows)} (rows) and "
         f"{axis_label(cols)} (columns{load}).")
    if len(panels) > 1:
        s += " Left: FastAppend (FA) transactions; right: ValidatedOverwrite (VO) transactions."
    elif panels[0].startswith("vo_"):
        s += " All transactions are ValidatedOverwrite (VO)."
    unit = value_unit_note(metric)
    if unit:
        s += f" Cell labels: {unit}."
    if kind(metric) == "latency":
        s += " Colour scale is logarithmic."
    elif kind(metric) == "rate" and thr is not False:
        s += f" Colours diverge at {thr:.0%}: green above, yellow to red below."
    if thr is not False:
        s += _marking_sentence(panels, thr, sub)
    s += " Grey 'n/a' cells: undefined (e.g. no commits) or not run."
    return s + reps_note(sub)


def _marking_sentence(panels: list[str], thr: float, sub: pd.DataFrame) -> str:
    if len(panels) > 1:
        return (f" Hatched, framed cells: the success rate of the panel's operation is at or "
                f"below {thr:.0%}.")
    if panels[0].startswith("vo_"):
        return f" Hatched, framed cells: VO success rate at or below {thr:.0%}."
    if bool(has_vo(sub).any()):
        return (f" Hatched, framed cells: success rate or VO success rate at or below {thr:.0%}, "
                "i.e. not usable for the knee.")
    return f" Hatched, framed cells: success rate at or below {thr:.0%} (not usable for the knee)."


# --------------------------------------------------------------------------------------------
# per-rank heatmaps (Zipf)
# --------------------------------------------------------------------------------------------

def per_rank_heatmaps(per_table_agg: pd.DataFrame, layout: dict, out_dir,
                      metrics: tuple[str, ...] = ("success_rate", "commit_latency_p99_ms"),
                      max_ranks: int = 20, mark_below: float | None = None,
                      ) -> list[tuple[Path, str]]:
    """Zipf runs (table_selection == "zipf") of the aggregated per-table table: one PNG per
    combination of the facets and ``layout["rows"]`` (num_tables > 1), panels for ``metrics``
    (default success rate and P99 latency) by table rank (y; 1 = most popular) x
    ``layout["cols"]``. Cells are marked where that rank's success rate is at or below the
    threshold. Ranks beyond ``max_ranks`` are left out. Returns ``[(path, caption), ...]``."""
    df, groups = rank_groups(per_table_agg, layout, max_ranks)
    cols = layout["cols"]
    thr = SUCCESS_THRESHOLD if mark_below is None else mark_below
    metrics = [m for m in metrics if m in df.columns]
    lims = {m: color_limits(df, [m]) for m in metrics}
    out = []
    for parts, sub, n_ranks in groups:
        fig, axes = _figure_of_panels(sub, "table_rank", cols, len(metrics))
        for ax, m in zip(axes, metrics):
            heatmap(sub, m, "table_rank", cols, ax=ax, mark_below=thr, mark_col="success_rate",
                    vmin=lims[m][0], vmax=lims[m][1])
        label = facet_label(parts)
        suptitle(fig, "Per table rank (Zipf)" + (f" \u2014 {label}" if label else ""))
        path = save(fig, Path(out_dir) / f"per_rank{slug(parts)}.png")
        out.append((path, _per_rank_caption(sub, metrics, cols, label, thr, n_ranks, max_ranks)))
    return out


def _per_rank_caption(sub: pd.DataFrame, metrics: list[str], cols: str, label: str, thr: float,
                      n_ranks: int, max_ranks: int) -> str:
    alpha = ""
    if "zipf_alpha" in sub.columns and sub["zipf_alpha"].notna().any():
        alpha = f" (alpha = {', '.join(format_value(a) for a in sorted(sub['zipf_alpha'].dropna().unique()))})"
    cap = (f"Zipf table selection{alpha}{(', ' + label) if label else ''}: per-table "
           f"{' and '.join(lower_first(metric_title(m)) for m in metrics)} by table popularity "
           f"rank (rows; 1 = most popular) and {axis_label(cols)} (columns"
           f"{'; load falls from left to right' if 'inter_arrival' in cols else ''}). "
           f"Hatched, framed cells: that table's success rate is at or below {thr:.0%}. "
           "Grey 'n/a': no decided (or no committed) transactions on that table.")
    if n_ranks > max_ranks:
        cap += f" Ranks {max_ranks + 1}\u2013{n_ranks} are not shown."
    return cap + reps_note(sub)
