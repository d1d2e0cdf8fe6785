"""The headroom figure (docs/knee.md, "Headroom"): per cell of a headroom sweep, each table's k (how many times the
history's load it takes before its success falls below the threshold) with its 95 % CI, the whole history's row
on top, then the tables from the first to break; a range status is an arrow at its bound, a table with too few
commits to check is left out; the history's own load (k = 1) is a line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..labels import facet_label, slug
from .canvas import facet_groups, new_figure, save, suptitle

_MARK = {"ok": "o", "above_range": ">", "below_range": "<"}


def headroom_figures(tables: pd.DataFrame, keys: list[str], out_dir) -> list[tuple[Path, str]]:
    """One figure per cell (the combinations of `keys`) of `knee_tables.parquet`'s rows; [(path, caption)]."""
    out = []
    for parts, sub in facet_groups(tables, keys):
        rows = sub[sub["checked"] & sub["k_status"].isin(list(_MARK))].copy()
        if rows.empty:
            continue
        rows["x"] = np.where(rows["k_status"] == "ok", rows["k"], rows["k_bound"])
        whole = rows["table_rank"] == 0
        rows = pd.concat([rows[whole], rows[~whole].sort_values("x", kind="stable")])   # top to bottom
        fig = new_figure(6.4, 1.2 + 0.28 * len(rows))
        ax = fig.subplots()
        y = np.arange(len(rows))
        for status, mark in _MARK.items():
            m = (rows["k_status"] == status).to_numpy()
            if not m.any():
                continue
            if status == "ok":
                lo, hi = rows["k_low"].to_numpy()[m], rows["k_high"].to_numpy()[m]
                x = rows["x"].to_numpy()[m]
                ax.errorbar(x, y[m], xerr=[x - lo, hi - x], fmt=mark, color="C0", capsize=3, label="k [95 % CI]")
            else:
                ax.plot(rows["x"].to_numpy()[m], y[m], mark, color="C1" if status == "above_range" else "C3",
                        label="above the loads run" if status == "above_range" else "below the loads run")
        ax.axvline(1.0, color="0.6", lw=1, ls="--")
        ax.set_xscale("log")
        ax.set_yticks(y, rows["table"].tolist(), fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("k: times the history's load")
        fig.legend(loc="outside lower center", ncols=3, fontsize=7, frameon=False)
        label = facet_label(parts)
        suptitle(fig, "Headroom per table" + (f" \u2014 {label}" if label else ""))
        path = save(fig, Path(out_dir) / f"headroom{slug(parts)}.png")
        cap = ("Each table's k where its success falls below the threshold, with its 95 % CI: the whole history's on "
               "top, then the tables from the first to break (a range status is an arrow at its bound; the dashed "
               "line is the history's own load)")
        out.append((path, cap + (f"; {label}." if label else ".")))
    return out
