"""Figures of the report, each a PNG with its caption: heatmaps (faceted, per table rank), latency-throughput
curves, the knee picture and the design comparison; :func:`heatmap` draws one annotated heatmap on an Axes.

- ``canvas`` -- the Figure, its title, save, facet groups, FA / VO panels, replication note
- ``heat_scale`` -- what a heatmap shows: cell means, cells failing the threshold, colour scales
- ``annotated_heatmap`` -- :func:`heatmap` and its :class:`HeatmapStyle`
- ``heatmaps`` -- :func:`facet_heatmaps`, :func:`per_rank_heatmaps`
- ``curves`` -- :func:`latency_throughput_curves`
- ``knees`` -- :func:`knee_picture`, :func:`design_knees`
- ``writers`` -- :func:`writers_figures` (a writers sweep: metrics against the writer count per provider)
- ``writers_knees`` -- :func:`writers_knee_figures` (a writers-knee sweep: the knee per cell with its CI)
- ``headroom`` -- :func:`headroom_figures` (a trace's headroom sweep: each table's k per cell)

Words and number formats are ``sim.report.labels``'s.
"""

from .annotated_heatmap import HeatmapStyle, heatmap
from .curves import latency_throughput_curves
from .heat_scale import color_limits
from .headroom import headroom_figures
from .heatmaps import facet_heatmaps, per_rank_heatmaps
from .knees import design_knees, knee_picture
from .writers import writers_figures
from .writers_knees import writers_knee_figures

__all__ = ["HeatmapStyle", "heatmap", "facet_heatmaps", "per_rank_heatmaps", "color_limits",
           "latency_throughput_curves", "knee_picture", "design_knees", "writers_figures",
           "writers_knee_figures", "headroom_figures"]
