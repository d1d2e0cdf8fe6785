"""Aggregation of the results table: replication means with 95 % CIs, the knee, the default layout.

Works on the results table alone (docs/FORMATS.md, "Results table"); no plotting here.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np
import pandas as pd
from scipy import stats

from ..knee import Point, regression_at
from ..knee.grid import grid_knee

#: success threshold of MODEL.md's knee ("success exceeds 95 %") and of the heatmap cell marking
SUCCESS_THRESHOLD = 0.95

#: standard parameter columns, always present in results.parquet (docs/FORMATS.md)
STANDARD_PARAMS = [
    "provider",
    "backend",
    "num_tables",
    "fast_append_ratio",
    "inter_arrival_ms",
    "inter_arrival_distribution",
    "catalog_latency_ms",
    "service_latency_ms",
    "table_selection",
    "zipf_alpha",
    "max_retries",
    "design",
    "scope",
    "protocol",
    "writers",
    "writers_mode",
    "interval_ms",
    "think_ms",
    "shape",
]

#: standard columns that become facets by default when they take more than one value
DEFAULT_FACET_CANDIDATES = [
    "provider",
    "catalog_latency_ms",
    "fast_append_ratio",
    "table_selection",
    "design",
    "max_retries",
]

#: bookkeeping columns: neither parameters nor metrics
META_COLUMNS = ["config_hash", "replication", "status", "error"]

# --------------------------------------------------------------------------------------------
# column classification
# --------------------------------------------------------------------------------------------

def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of finished runs (status == "ok"); all rows when there is no status column."""
    if "status" not in df.columns:
        return df
    return df[df["status"].astype(str) == "ok"]


def parameter_columns(df: pd.DataFrame) -> list[str]:
    """Standard parameter columns plus swept dotted-path columns present in ``df``."""
    std = [c for c in STANDARD_PARAMS if c in df.columns]
    dotted = [c for c in df.columns if "." in str(c) and c not in std]
    return std + dotted


def metric_columns(df: pd.DataFrame, exclude: Iterable[str] = ()) -> list[str]:
    """Numeric columns that are measurements: everything numeric except parameters,
    bookkeeping, CI and count columns and ``exclude``."""
    skip = set(parameter_columns(df)) | set(META_COLUMNS) | set(exclude) | {"n_reps", "table_rank"}
    out = []
    for c in df.columns:
        if c in skip or str(c).endswith("_ci95"):
            continue
        if pd.api.types.is_bool_dtype(df[c]):
            continue
        if pd.api.types.is_numeric_dtype(df[c]):
            out.append(c)
    return out


def _is_hashable_column(s: pd.Series) -> bool:
    if not pd.api.types.is_object_dtype(s):
        return True
    try:
        for v in s:
            hash(v)
    except TypeError:
        return False
    return True


def _hashable(df: pd.DataFrame, cols: Iterable[str]) -> pd.DataFrame:
    """Copy of df where unhashable values (lists/dicts of swept structured values) in ``cols``
    are replaced by their string form, so they can be grouped on."""
    bad = [c for c in cols if not _is_hashable_column(df[c])]
    if not bad:
        return df
    df = df.copy()
    for c in bad:
        df[c] = df[c].map(repr)
    return df


def _nunique(s: pd.Series) -> int:
    return int(s.nunique(dropna=False))


# --------------------------------------------------------------------------------------------
# aggregation over replications
# --------------------------------------------------------------------------------------------

def ci95_halfwidth(std: pd.Series | np.ndarray, n: pd.Series | np.ndarray) -> np.ndarray:
    """Student-t 95 % CI half-width from the sample std (ddof=1) and sample count; NaN for n < 2."""
    std = np.asarray(std, dtype=float)
    n = np.asarray(n, dtype=float)
    out = np.full(np.broadcast(std, n).shape, np.nan)
    ok = n >= 2
    if np.any(ok):
        nn = np.broadcast_to(n, out.shape)[ok]
        ss = np.broadcast_to(std, out.shape)[ok]
        out[ok] = stats.t.ppf(0.975, nn - 1) * ss / np.sqrt(nn)
    return out


def aggregate(df: pd.DataFrame, by: list[str] | None = None,
              metrics: list[str] | None = None) -> pd.DataFrame:
    """Mean over replications of every metric, with ``<metric>_ci95`` and ``n_reps``.

    Only rows with ``status == "ok"`` count. ``by`` are the grouping columns (default: every
    parameter column plus ``config_hash``, i.e. one row per configuration); NaN keys (e.g.
    ``catalog_latency_ms`` of the storage backend) form groups of their own. ``<metric>_ci95``
    is the half-width of the Student-t 95 % confidence interval of the mean over the
    replications where the metric is defined; NaN with fewer than two such replications.
    ``n_reps`` counts the ok replications of the group.
    """
    df = ok_rows(df)
    if by is None:
        by = parameter_columns(df) + (["config_hash"] if "config_hash" in df.columns else [])
    by = list(dict.fromkeys(by))                     # a key named twice (a report's load that is a group key) once
    missing = [c for c in by if c not in df.columns]
    if missing:
        raise KeyError(f"aggregate: grouping columns not in the table: {missing}")
    if metrics is None:
        metrics = metric_columns(df, exclude=by)
    else:
        metrics = [m for m in metrics if m in df.columns and m not in by]
    df = _hashable(df, by)
    num = df[metrics].apply(pd.to_numeric, errors="coerce") if metrics else df[[]]
    num = pd.concat([df[by], num], axis=1) if by else num.assign(_all=0)
    out = _means_and_cis(num.groupby(by if by else ["_all"], dropna=False, sort=True), metrics).reset_index()
    if not by:
        out = out.drop(columns="_all")
    return out.copy()   # one block per dtype: reset_index inserted a column per key (pandas warns downstream)


def _means_and_cis(g, metrics: list[str]) -> pd.DataFrame:
    """``n_reps``, then per metric its mean and ``<metric>_ci95``, one row per group of ``g``. Built from one dict:
    a frame concatenated column by column has a block per column, and pandas warns (PerformanceWarning) when
    reset_index then inserts the group keys into it."""
    cols = {"n_reps": g.size()}
    if metrics:
        mean = g[metrics].mean()
        ci = ci95_halfwidth(g[metrics].std(ddof=1).to_numpy(), g[metrics].count().to_numpy())
        for i, m in enumerate(metrics):
            cols[m] = mean[m]
            cols[f"{m}_ci95"] = pd.Series(ci[:, i], index=mean.index)
    return pd.DataFrame(cols)


# --------------------------------------------------------------------------------------------
# knee ("usable throughput")
# --------------------------------------------------------------------------------------------

def has_vo(agg: pd.DataFrame) -> pd.Series:
    """Rows where VO transactions exist: fast_append_ratio < 1 or vo_arrived > 0."""
    mask = pd.Series(False, index=agg.index)
    if "fast_append_ratio" in agg.columns:
        mask |= pd.to_numeric(agg["fast_append_ratio"], errors="coerce").lt(1).fillna(False)
    if "vo_arrived" in agg.columns:
        mask |= pd.to_numeric(agg["vo_arrived"], errors="coerce").gt(0).fillna(False)
    return mask.astype(bool)


def qualifies(agg: pd.DataFrame, threshold: float = SUCCESS_THRESHOLD) -> pd.Series:
    """Load points whose mean success (committed / window transactions that began to commit) exceeds
    ``threshold`` and, where VO transactions exist, VO success too (NaN never qualifies)."""
    ok = pd.to_numeric(agg["success_rate"], errors="coerce").gt(threshold).fillna(False)
    if "vo_success_rate" in agg.columns:
        vo_ok = pd.to_numeric(agg["vo_success_rate"], errors="coerce").gt(threshold).fillna(False)
    else:
        vo_ok = pd.Series(False, index=agg.index)
    return (ok & (~has_vo(agg) | vo_ok)).astype(bool)


#: latencies read at the knee: least squares on log rate over the fit's runs (`ok` rows only)
_KNEE_VALUES = {
    "latency_mean_ms": "commit_latency_mean_ms",
    "p99_ms": "commit_latency_p99_ms",
    "fa_latency_mean_ms": "fa_commit_latency_mean_ms",
    "vo_latency_mean_ms": "vo_commit_latency_mean_ms",
    "fa_p99_ms": "fa_commit_latency_p99_ms",
    "vo_p99_ms": "vo_commit_latency_p99_ms",
}
#: knee_table's value columns (floats), after the group keys, knee_status and knee_reason; knee_command (a string:
#: empty for `ok` rows or when no command is known), n_points and n_qualifying follow
_KNEE_FLOAT_COLUMNS = (["knee_bound_cps", "knee_offered_cps", "knee_offered_cps_low", "knee_offered_cps_high",
                        "knee_throughput_cps", "knee_throughput_cps_low", "knee_throughput_cps_high",
                        "knee_inter_arrival", "knee_success_rate", "knee_vo_success_rate", *_KNEE_VALUES,
                        "max_throughput_cps", "max_throughput_inter_arrival"])
#: the counts the grid knee's fit reads per run (the began_commit ones when the results table has them)
_COUNTS = ("arrived", "committed", "began_commit", "vo_arrived", "vo_committed", "vo_began_commit")


def knee_table(df: pd.DataFrame, group_by: list[str], load: str = "inter_arrival_ms",
               threshold: float = SUCCESS_THRESHOLD, at_knee: Iterable[str] = (),
               command_for: Callable[[pd.DataFrame, dict], str] | None = None) -> pd.DataFrame:
    """MODEL.md's knee per group, read off the grid by the knee search's fit (`sim.knee.grid`): the offered
    rate where success (committed / window transactions that began to commit; for a mix, VO success too) crosses
    ``threshold``, interpolated by the binomial regression over the runs of the grid points near the crossing,
    with its 95 % CI; or a status with its bound (`sim.knee.status`).

    ``df`` is the raw results table (one run per row: the fit's runs) or :func:`aggregate`'s output (recognised
    by ``n_reps``; each point's replications then pool into one run of their summed counts). ``group_by`` holds
    every parameter that varies except ``load``. ``command_for``: given a group's runs and its row, the command
    that will bound or narrow its knee, or "" (`sim.report.knee_commands`: ``sim knee`` on the sweep's base with
    the group's swept values as ``--set``), in ``knee_command``.

    Columns: the group keys; ``knee_status`` (ok, below_range, above_range, undecided) and ``knee_reason`` (why
    undecided); ``knee_bound_cps`` (commits/s: below_range, the knee is below it; above_range, above it; NaN
    otherwise); ``knee_offered_cps`` with ``_low``/``_high`` (the crossing, arrivals/s, and its CI);
    ``knee_throughput_cps`` with ``_low``/``_high`` (commits/s at the knee and the CI scaled the same:
    ``sim.knee.grid.GridKnee.commit_factor``); ``knee_inter_arrival`` (the ``load`` value at the crossing,
    interpolated in log-log); ``knee_success_rate`` and ``knee_vo_success_rate`` (the fitted success at the knee:
    the threshold where that kind binds); the _KNEE_VALUES latencies and ``at_knee`` metrics
    (``<m>_at_knee``) at the knee; every knee value NaN unless ``ok``; ``max_throughput_cps`` and
    ``max_throughput_inter_arrival`` (regardless of success); ``knee_command``; ``n_points`` and
    ``n_qualifying`` (points whose mean success exceeds the threshold)."""
    group_by, at_knee = list(group_by), list(at_knee)
    raw = "n_reps" not in df.columns
    agg = aggregate(df, group_by + [load]) if raw else df
    agg = _hashable(agg, group_by).reset_index(drop=True)
    agg = agg.assign(_q=qualifies(agg, threshold), _tp=pd.to_numeric(agg["throughput_cps"], errors="coerce"))
    runs = _hashable(ok_rows(df), group_by) if raw else agg
    groups = agg.groupby(group_by, dropna=False, sort=True) if group_by else [((), agg)]
    run_groups = ({_key(k): r for k, r in runs.groupby(group_by, dropna=False, sort=True)} if group_by
                  else {(): runs})
    rows = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        part = run_groups.get(_key(key), runs.iloc[:0])
        row = {**dict(zip(group_by, key)), **_grid_knee(part, g, load, threshold, at_knee, pooled=not raw),
               **_max_throughput_point(g, load), "n_points": len(g), "n_qualifying": int(g["_q"].sum())}
        row["knee_command"] = command_for(part, row) if command_for else ""
        rows.append(row)
    extra = [f"{m}_at_knee" for m in at_knee]
    out = pd.DataFrame(rows, columns=group_by + ["knee_status", "knee_reason"] + _KNEE_FLOAT_COLUMNS + extra
                       + ["knee_command", "n_points", "n_qualifying"])
    for c in _KNEE_FLOAT_COLUMNS + extra:
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    return out


def _key(key) -> tuple:
    """A group key as a dict key: a tuple, NaN spelled so that it equals itself."""
    key = key if isinstance(key, tuple) else (key,)
    return tuple("<nan>" if isinstance(v, float) and math.isnan(v) else v for v in key)


def _grid_points(runs: pd.DataFrame, load: str, pooled: bool, values: Iterable[str] = ()) -> list:
    """The knee search's points of one group: one per ``load`` value, at its mean offered rate, each run a
    summary of its counts (``pooled``: an aggregated row, its means times n_reps) and of the ``values`` read at
    the knee. Only those columns are read, as numbers (a results table has about 100 columns, and building a
    dict of each whole row was most of a report's knee table)."""
    counts = [c for c in _COUNTS if c in runs.columns or not c.endswith("began_commit")]
    values = [c for c in dict.fromkeys(values) if c in runs.columns and c not in counts]
    num = {c: pd.to_numeric(runs[c], errors="coerce").to_numpy(float) if c in runs.columns
           else np.zeros(len(runs)) for c in counts + values}
    rate = pd.to_numeric(runs["offered_cps"], errors="coerce").to_numpy(float)
    reps = pd.to_numeric(runs["n_reps"], errors="coerce").to_numpy(float) if pooled else np.ones(len(runs))
    for c in counts:
        num[c] = np.where(np.isfinite(num[c]), num[c] * reps, 0.0)
    pts = []
    for value, idx in runs.groupby(load, sort=True).indices.items():
        r = float(rate[idx].mean())
        if not r > 0:
            continue
        recs = [{c: float(num[c][i]) for c in counts + values} for i in idx]
        pts.append(Point(r, value, runs=recs))
    return pts


def _grid_knee(runs: pd.DataFrame, g: pd.DataFrame, load: str, threshold: float, at_knee: list[str],
               pooled: bool) -> dict:
    """One group's knee (`sim.knee.grid.grid_knee`) and the values at it (NaN unless `ok`)."""
    check = ("", "vo_") if bool(has_vo(g).any()) else ("",)
    values = {**_KNEE_VALUES, **{f"{m}_at_knee": m for m in at_knee}}
    k = grid_knee(_grid_points(runs, load, pooled, values.values()), threshold, check)
    factor = k.commit_factor()
    out = {"knee_status": k.status, "knee_reason": k.reason, "knee_bound_cps": k.bound_cps,
           "knee_offered_cps": k.knee, "knee_offered_cps_low": k.low, "knee_offered_cps_high": k.high,
           "knee_throughput_cps": k.knee * factor, "knee_throughput_cps_low": k.low * factor,
           "knee_throughput_cps_high": k.high * factor, "knee_inter_arrival": _load_at(g, load, k.knee),
           "knee_success_rate": k.success_at_knee(""), "knee_vo_success_rate": k.success_at_knee("vo_")}
    for name, col in values.items():
        out[name] = (regression_at([x for x, _ in k.fit.runs], [r.get(col) for _, r in k.fit.runs],
                                   math.log(k.knee))[0] if k.status == "ok" else math.nan)
    return out


def _load_at(g: pd.DataFrame, load: str, knee_cps: float) -> float:
    """The ``load`` value at offered rate ``knee_cps``: log load interpolated on log offered rate."""
    rate = pd.to_numeric(g["offered_cps"], errors="coerce").to_numpy(float)
    value = pd.to_numeric(g[load], errors="coerce").to_numpy(float)
    keep = (rate > 0) & (value > 0)
    if math.isnan(knee_cps) or keep.sum() < 2:
        return math.nan
    order = np.argsort(rate[keep])
    return float(np.exp(np.interp(math.log(knee_cps), np.log(rate[keep][order]), np.log(value[keep][order]))))


def _max_throughput_point(g: pd.DataFrame, load: str) -> dict:
    """The group's highest throughput regardless of success, and its ``load`` value."""
    tp = g["_tp"]
    if not tp.notna().any():
        return {"max_throughput_cps": np.nan, "max_throughput_inter_arrival": np.nan}
    i = tp.idxmax()
    return {"max_throughput_cps": tp[i], "max_throughput_inter_arrival": g.loc[i, load]}


# --------------------------------------------------------------------------------------------
# layout
# --------------------------------------------------------------------------------------------

def _same_partition(df: pd.DataFrame, a: str, b: str) -> bool:
    """True if columns a and b determine each other (e.g. ``workload.num_tables`` and
    ``num_tables``), so b adds no grouping beyond a."""
    return _determines(df, a, b) and _determines(df, b, a)


def varying_parameters(df: pd.DataFrame) -> list[str]:
    """Parameter columns that take more than one value, leaving out dotted-path columns that
    merely mirror a standard column (or an earlier dotted one). A design comes first: a report names a swept design,
    not the max_retries or backend that come with it."""
    df = _hashable(df, parameter_columns(df))
    out: list[str] = []
    for c in sorted(parameter_columns(df), key=lambda c: c != "design"):
        if _nunique(df[c]) <= 1:
            continue
        if any(_same_partition(df, o, c) for o in out):
            continue
        out.append(c)
    return out


def default_layout(df: pd.DataFrame) -> dict:
    """Heatmap layout: ``rows`` = num_tables, ``cols`` = inter_arrival_ms, ``facets`` = the
    standard columns among provider, catalog_latency_ms, fast_append_ratio, table_selection,
    design, max_retries that take more than one value, less one an earlier facet determines (a design's
    max_retries), then any other parameter that varies, so that no heatmap cell pools different
    configurations."""
    rows, cols = "num_tables", "inter_arrival_ms"
    sub = _hashable(df, parameter_columns(df))
    facets: list[str] = []
    for c in DEFAULT_FACET_CANDIDATES:
        if c in df.columns and _nunique(df[c]) > 1 and not any(_determines(sub, f, c) for f in facets):
            facets.append(c)
    return dict(rows=rows, cols=cols, facets=facets + _unplaced_parameters(df, [rows, cols] + facets))


def _determines(df: pd.DataFrame, a: str, b: str) -> bool:
    """True if column a determines b (each value of a goes with one value of b)."""
    return _jointly_determine(df, [a], b)


def _unplaced_parameters(df: pd.DataFrame, placed: list[str]) -> list[str]:
    """Varying parameters that no ``placed`` column (nor an earlier one of these) determines: each must be a
    facet too, or a heatmap cell would pool different configurations."""
    sub = _hashable(df, parameter_columns(df))
    extra: list[str] = []
    for c in varying_parameters(df):
        keys = [k for k in placed + extra if k in sub.columns]
        if c in placed or any(_same_partition(sub, k, c) for k in keys) or _jointly_determine(sub, keys, c):
            continue
        extra.append(c)
    return extra


def _jointly_determine(df: pd.DataFrame, keys: list[str], c: str) -> bool:
    """True if the columns `keys` together determine c (each combination of their values goes with one value of c):
    then c splits no cell they define (a design on an axis and the backend it comes with)."""
    if not keys:
        return False
    try:
        return df.groupby(keys, dropna=False)[c].nunique(dropna=False).max() <= 1
    except TypeError:
        return False


def resolve_layout(df: pd.DataFrame, spec_report: dict | None = None) -> tuple[dict, list[str]]:
    """Layout from the sweep spec's ``report:`` section, completed by :func:`default_layout`.

    Returns ``(layout, notes)``: unknown columns are dropped with a note, and parameters that
    vary but are not on an axis or facet are appended to the facets (with a note) so that
    cells never pool different configurations.
    """
    notes: list[str] = []
    base = default_layout(df)
    layout = dict(base)
    spec_report = dict(spec_report or {})
    for key in ("rows", "cols"):
        v = spec_report.get(key)
        if v is None:
            continue
        if v in df.columns:
            layout[key] = v
        else:
            notes.append(f"report.{key} = {v!r} is not a column of the results table; "
                         f"using {base[key]!r}.")
    if spec_report.get("facets") is not None:
        f = spec_report["facets"]
        f = [f] if isinstance(f, str) else list(f)
        unknown = [c for c in f if c not in df.columns]
        if unknown:
            notes.append(f"report.facets: {unknown} are not columns of the results table; ignored.")
        layout["facets"] = [c for c in f if c in df.columns and c not in (layout["rows"], layout["cols"])]
    layout["facets"] = [c for c in layout["facets"] if c not in (layout["rows"], layout["cols"])]
    if spec_report.get("facets") is None:           # a default facet that the axes given determine splits nothing
        sub = _hashable(df, parameter_columns(df))
        layout["facets"] = [c for c in layout["facets"]
                            if not any(a in sub.columns and _determines(sub, a, c) for a in (layout["rows"],
                                                                                             layout["cols"]))]
    extra = _unplaced_parameters(df, [layout["rows"], layout["cols"]] + layout["facets"])
    if extra and spec_report.get("facets") is not None:
        notes.append(f"Also faceted by {extra}: they vary in this sweep but are not in "
                     "report.facets, and pooling them would mix configurations.")
    layout["facets"] = layout["facets"] + extra
    return layout, notes


def knee_group_columns(layout: dict) -> list[str]:
    """Grouping of the knee search for a layout: every facet and the row axis (the column
    axis is the load)."""
    return [c for c in layout["facets"] if c != layout["rows"]] + [layout["rows"]]


def format_value(v) -> str:
    """Compact label of a parameter value: 20.0 -> '20', NaN -> 'n/a'."""
    if v is None:
        return "n/a"
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return "n/a"
        if float(v).is_integer():
            return str(int(v))
        return f"{v:g}"
    return str(v)


# --------------------------------------------------------------------------------------------
# knee picture data and tiers (from a knee search's knees.parquet, or from the grid knee table)
# --------------------------------------------------------------------------------------------

def knee_commits(knees: pd.DataFrame) -> pd.DataFrame:
    """``knees`` with ``knee_cps`` (commits/s at the knee) and its 95 % band ``knee_cps_low/high``: the knee table's
    ``knee_throughput_cps`` with ``_low``/``_high`` (the grid knee table, :func:`knee_table`, and a knee search's
    knees.parquet carry them alike: the offered-rate CI scaled by the commits per arrival at the knee, so the
    band says where the knee lies); NaN unless ``knee_status`` is ``ok``."""
    out = knees.copy()
    ok = out["knee_status"].astype(str).eq("ok")
    for c, src in (("knee_cps", "knee_throughput_cps"), ("knee_cps_low", "knee_throughput_cps_low"),
                   ("knee_cps_high", "knee_throughput_cps_high")):
        out[c] = pd.to_numeric(out[src], errors="coerce").where(ok)
    return out


def knee_picture_layout(knees: pd.DataFrame) -> dict:
    """x = num_tables; one line per provider (or per the first other design column that varies); facets by
    FA ratio (the mix) when it varies."""
    varying = [c for c in DEFAULT_FACET_CANDIDATES if c in knees.columns and _nunique(knees[c]) > 1]
    hue = next((c for c in varying if c != "fast_append_ratio"), None)
    facet = "fast_append_ratio" if "fast_append_ratio" in varying else None
    return {"x": "num_tables", "hue": hue, "facet": facet}


#: a knee row's columns a tier takes (prefixed `single_` / `multi_`): what `sim.knee.status.knee_text` reads
TIER_COLUMNS = ("knee_status", "knee_reason", "knee_bound_cps", "knee_throughput_cps", "knee_throughput_cps_low",
                "knee_throughput_cps_high", "knee_command")


def tiers_table(knees: pd.DataFrame, layout: dict) -> pd.DataFrame:
    """The write-up's tiers: per line (provider) and mix, the single-table knee and the knee at the most tables
    (``single_`` / ``multi_`` + TIER_COLUMNS: each a knee with its band in commits/s, or a status with its bound;
    `sim.knee.status.knee_text(row, prefix)` words them), and the multi-table gain (:func:`gain`)."""
    x = layout["x"]
    keys = [c for c in (layout["hue"], layout["facet"]) if c]
    rows = []
    for key, g in (knees.groupby(keys, dropna=False, sort=True) if keys else [((), knees)]):
        key = key if isinstance(key, tuple) else (key,)
        g = g.sort_values(x)
        row = dict(zip(keys, key))
        for tag, r in (("single", g.iloc[0]), ("multi", g.iloc[-1])):
            row[f"{tag}_tables"] = r[x]
            row.update({f"{tag}_{c}": r.get(c, np.nan if c.endswith("_cps") or "_cps_" in c else "")
                        for c in TIER_COLUMNS})
        row.update(gain(row))
        rows.append(row)
    return pd.DataFrame(rows)


def gain(tier: dict) -> dict:
    """The multi-table knee over the single-table one: ``gain_status`` ok with ``gain`` and its band [multi low /
    single high, multi high / single low] when both are ``ok``; ``above_range`` with ``gain_bound`` (the gain
    exceeds it) when the multi-table knee is above range or the single-table one below range and the other side
    bounds it; ``below_range`` symmetrically; else ``undecided``."""
    st = {t: str(tier[f"{t}_knee_status"]) for t in ("single", "multi")}
    v = {t: float(tier[f"{t}_knee_throughput_cps"]) for t in ("single", "multi")}
    lo = {t: float(tier[f"{t}_knee_throughput_cps_low"]) for t in ("single", "multi")}
    hi = {t: float(tier[f"{t}_knee_throughput_cps_high"]) for t in ("single", "multi")}
    bound = {t: float(tier[f"{t}_knee_bound_cps"]) for t in ("single", "multi")}
    out = {"gain_status": "undecided", "gain": np.nan, "gain_low": np.nan, "gain_high": np.nan, "gain_bound": np.nan}
    # a lower bound of the multi-table knee over an upper bound of the single-table one: the gain exceeds it
    m_lo = lo["multi"] if st["multi"] == "ok" else bound["multi"] if st["multi"] == "above_range" else np.nan
    s_hi = hi["single"] if st["single"] == "ok" else bound["single"] if st["single"] == "below_range" else np.nan
    m_hi = hi["multi"] if st["multi"] == "ok" else bound["multi"] if st["multi"] == "below_range" else np.nan
    s_lo = lo["single"] if st["single"] == "ok" else bound["single"] if st["single"] == "above_range" else np.nan
    if st["multi"] == st["single"] == "ok":
        out.update(gain_status="ok", gain=v["multi"] / v["single"], gain_low=m_lo / s_hi, gain_high=m_hi / s_lo)
    elif st["multi"] == "above_range" or st["single"] == "below_range":
        if m_lo > 0 and s_hi > 0:
            out.update(gain_status="above_range", gain_bound=m_lo / s_hi)
    elif st["multi"] == "below_range" or st["single"] == "above_range":
        if m_hi > 0 and s_lo > 0:
            out.update(gain_status="below_range", gain_bound=m_hi / s_lo)
    return out
