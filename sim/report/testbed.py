"""The testbed's figure: each stack's measured figures (points, 95 % CIs) beside the model's prediction (lines,
bands) against the number of writers, one row per stack, one column per figure, a line style per delay and
retry setting."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PANELS = (("failure_share", "failure share"), ("successes_per_s", "successes/s"),
          ("attempts_per_s", "attempts/s"), ("commit_p50_ms", "commit p50 (ms)"), ("commit_p99_ms", "commit p99 (ms)"))


def comparison_figure(comp, path: Path) -> Path:
    stacks = list(dict.fromkeys(comp["stack"]))
    fig, axes = plt.subplots(len(stacks), len(PANELS), figsize=(4 * len(PANELS), 3.2 * len(stacks)), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, st in enumerate(stacks):
        g = comp[comp["stack"] == st]
        for k, ((delay, retries), c) in enumerate(g.groupby(["delay_ms", "retries"])):
            c = c.sort_values("writers")
            color = colors[k % len(colors)]
            label = f"{delay:g} ms, retries {retries}"
            for j, (fig_name, title) in enumerate(PANELS):
                ax = axes[i][j]
                m = c[f"measured_{fig_name}"]
                err = [(m - c[f"measured_{fig_name}_lo"]).fillna(0), (c[f"measured_{fig_name}_hi"] - m).fillna(0)]
                ax.errorbar(c["writers"], m, yerr=err, fmt="o", color=color, capsize=3,
                            label=f"{label} measured" if j == 0 else None)
                ax.plot(c["writers"], c[f"predicted_{fig_name}"], "-", color=color,
                        label=f"{label} predicted" if j == 0 else None)
                ax.fill_between(c["writers"], c[f"predicted_{fig_name}_lo"], c[f"predicted_{fig_name}_hi"],
                                color=color, alpha=0.15)
                bound = c["verdict"] == "cpu_bound"
                if bound.any():
                    ax.plot(c.loc[bound, "writers"], m[bound], "x", color="black", markersize=9)
                ax.set_xscale("log", base=2)
                ax.set_title(f"{st}: {title}", fontsize=9)
                ax.set_xlabel("writers")
        axes[i][0].legend(fontsize=6)
    fig.suptitle("measured (points, 95 % CI; x: cpu_bound) against predicted (lines, 95 % CI bands)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
