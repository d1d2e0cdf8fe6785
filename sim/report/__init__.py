"""Report of a sweep: works from the results table alone (``DIR/results.parquet``, optional
``DIR/per_table.parquet``, optional ``report:`` section of the sweep spec).

Plotting lives only in this package. The page (``html``) opens on the knee tables (``knee_html``) and draws its
heatmaps as HTML tables (``html_heatmaps``); figures are ``plots``'.

- :func:`write_report` -- write ``DIR/report/`` (index.html, knee.csv, tiers.csv, summary.csv, figures/)
- :func:`aggregate` -- replication means, ``<metric>_ci95`` (Student t), ``n_reps``
- :func:`knee_table` -- MODEL.md's knee ("usable throughput") per group
- :func:`default_layout` -- rows / cols / facets of the heatmaps
- :func:`heatmap` -- one annotated heatmap on a matplotlib Axes (for notebooks); :class:`HeatmapStyle` its options
"""

from .aggregate import aggregate, default_layout, knee_table
from .html import write_report
from .plots import HeatmapStyle, facet_heatmaps, heatmap, latency_throughput_curves, per_rank_heatmaps

__all__ = ["write_report", "aggregate", "knee_table", "default_layout", "heatmap", "HeatmapStyle",
           "facet_heatmaps", "latency_throughput_curves", "per_rank_heatmaps"]
