"""Measured against predicted: `sim testbed report DIR` (and the end of `sim testbed run`).

For each stack and delay, the one-writer calibration cell gives the model's inputs (`profile`, written beside the
cell as `profile.yaml` and `provider.yaml`); each measured cell (stack, delay, retries, writers) is then run by the
model, several replications (more where the first leave a target figure's mean loose, `figures.precise`, or its CI
holding a target's edge, `figures.straddled`), and both sides' figures get a mean and a 95 % CI (Student's t over
the testbed's repetitions and over the model's replications). A cell's verdict: `cpu_bound` (its own processes or
the machine were busier than the bound, or its processes waited for a CPU longer than the one-writer cell's by more
than the wait bound: left out of the targets), else `ok` when the predicted failure share is within 5 pp of the
measured mean, successes/s within 15 % and commit p50 within 20 %, else `miss` with the targets it misses.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import yaml

from ..calibrate import CalibrationError
from ..schema import ConfigError
from .campaign import MARKER_LOCK, Grid, cell_dir, is_cpu_bound
from .figures import (CHANCE_BOUND, FIGURES, REPS_LADDER, TARGETS, bounds, chance_miss, edge_inside, mean_ci,
                      p_outside, reps_needed, within)
from .samples import Calibration
from .stacks import stack

KEYS = ["stack", "delay_ms", "retries", "writers"]


def read_grid(out: Path) -> Grid:
    """The grid a results folder was measured on (its `grid.json`); a file that is not one is one line naming it."""
    from dataclasses import fields

    from ..inputs import read_mapping
    path = out / "grid.json"
    g = read_mapping(path, "testbed grid")
    known = {f.name for f in fields(Grid)}
    if set(g) - known or "stacks" not in g:
        raise ConfigError("", f"{path}: not a testbed grid (unknown keys {sorted(set(g) - known)[:3]}, or no "
                              "stacks)")
    try:
        return Grid(**{k: tuple(v) if isinstance(v, list) else v for k, v in g.items()})
    except (TypeError, ValueError) as exc:
        raise ConfigError("", f"{path}: not a testbed grid ({exc})") from None


def _marker_lock(path: Path) -> dict | None:
    """The S3 server's marker lock the run measured (`sim.testbed.marker_lock`; None: not measured); a file that is
    not one is one line naming it."""
    if not path.exists():
        return None
    try:
        probe = json.loads(path.read_text())
        float(probe["window_ms"]), float(probe["poll_ms"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError("", f"{path}: not a marker lock measurement ({type(exc).__name__}: {exc})") from None
    return probe


def calibrate(out: Path, grid: Grid, pairs) -> dict:
    """Each (stack, delay)'s profile, fitted to its one-writer calibration cell and written beside it."""
    profiles = {}
    marker_lock = _marker_lock(out / MARKER_LOCK)
    for st, d in pairs:
        folder = cell_dir(out, grid.calibration(st, d), calibration=True)
        try:
            prof = stack(st).profile(Calibration.read(folder, marker_lock), folder)
        except CalibrationError as exc:
            raise ConfigError("", f"{folder}: its one-writer cell cannot be fitted ({exc}); measure it with more "
                              "commits (`sim testbed run --calibration-commits`)") from None
        (folder / "profile.yaml").write_text(yaml.safe_dump(prof, sort_keys=False))
        profiles[(st, d)] = prof
    return profiles


def predict_cells(out: Path, grid: Grid, profiles: dict, replications: int, cells, log=print,
                  max_replications: int = 0, measured: dict | None = None) -> pd.DataFrame:
    """The model's replications of each measured cell, `(stack, delay, retries, writers)`: the grid gives what
    its cells share (commits, payload, tables, the delay's jitter); more of them, up to `max_replications`, where
    the first do not pin the target figures (`sim.testbed.figures.precise`) or, given the cell's `measured` means
    (by cell), leave a target's edge inside their CI (`sim.testbed.figures.straddled`)."""
    from .predict import predict
    rows = []
    for cell in cells:
        st, d, retries, n = cell
        spec = grid.spec(st, n, d, retries)
        pred = predict(profiles[(st, d)], spec, replications, max_replications, (measured or {}).get(cell))
        rows.append(pred.assign(stack=st, delay_ms=d, retries="default" if retries else "off", writers=n))
        log(f"predicted {spec.label()} ({len(pred)} replications)")
    df = pd.concat(rows, ignore_index=True)
    df.to_parquet(out / "predicted.parquet")
    return df


def measured_means(done: pd.DataFrame) -> dict:
    """Each measured cell's target figures' means, by `(stack, delay, retries, writers)` as `predict_cells` keys
    its cells."""
    return {(st, float(d), r == "default", int(n)): {fig: float(g[fig].mean()) for fig in TARGETS}
            for (st, d, r, n), g in done.groupby(KEYS)}


def _verdict(row: dict, machine_busy: bool) -> str:
    busy = max(row["own_busy_fraction"], row["busy_fraction"] if machine_busy else 0.0)
    if is_cpu_bound(busy, row["cpu_wait_excess"]):
        return "cpu_bound"
    missed = [fig for fig in TARGETS if not within(fig, row[f"measured_{fig}"], row[f"predicted_{fig}"])]
    return "ok" if not missed else "miss: " + ", ".join(missed)


def _wait_shares(measured: pd.DataFrame) -> dict:
    """Each cell's mean CPU-wait share, by `KEYS` (none where its cells were measured before it was)."""
    if "cpu_wait_share" not in measured:
        return {}
    return {key: float(g["cpu_wait_share"].mean()) for key, g in measured.groupby(KEYS)}


def compare(measured: pd.DataFrame, predicted: pd.DataFrame, machine_busy: bool = True) -> pd.DataFrame:
    """One row per cell: each figure's measured and predicted mean and CI, the busy fractions, the CPU-wait share
    and its excess over the one-writer cell of the same stack, delay and retries, the verdict."""
    measured = measured[~measured["calibration"]]
    waits = _wait_shares(measured)
    nan = float("nan")
    rows = []
    for key, g in measured.groupby(KEYS):
        p = predicted
        for k, v in zip(KEYS, key):
            p = p[p[k] == v]
        row = dict(zip(KEYS, key), reps=len(g), replications=len(p),
                   own_busy_fraction=float(g["own_busy_fraction"].mean()),
                   busy_fraction=float(g["busy_fraction"].mean()),
                   cpu_wait_share=waits.get(key, nan),
                   cpu_wait_excess=waits.get(key, nan) - waits.get((*key[:3], 1), nan),
                   conserved=bool(g["conserved"].all()))
        for fig in FIGURES:
            for side, df in (("measured", g), ("predicted", p)):
                m, lo, hi = mean_ci(df[fig], *bounds(fig))
                row.update({f"{side}_{fig}": m, f"{side}_{fig}_lo": lo, f"{side}_{fig}_hi": hi})
        row["verdict"] = _verdict(row, machine_busy)
        row["edge_in_ci"] = ", ".join(_edge_in_ci(row))
        row["chance_miss"] = chance_miss(p, len(g)) if len(p) else float("nan")
        row["reps_needed"] = reps_needed(p) if len(p) else float("nan")
        row["p_outside"], row["p_figure"] = p_outside(p, len(g), {f: row[f"measured_{f}"] for f in TARGETS})
        rows.append(row)
    return pd.DataFrame(rows)


def _edge_in_ci(row: dict) -> list[str]:
    """The target figures whose target edge (the measured mean less or plus the target) lies inside the
    prediction's 95 % CI: there the verdict rests on the model's own sampling, whichever way it went."""
    return [fig for fig in TARGETS
            if edge_inside(fig, row[f"measured_{fig}"], row[f"predicted_{fig}_lo"], row[f"predicted_{fig}_hi"])]


def _fmt(m, lo, hi, spec) -> str:
    if m != m:
        return "-"
    if lo != lo:
        return f"{m:{spec}}"
    return f"{m:{spec}} [{lo:{spec}}, {hi:{spec}}]"


def _wait(share: float, excess: float) -> str:
    if share != share:
        return "-"
    return f"{share:.3f} ({excess:+.3f})" if excess == excess else f"{share:.3f}"


def _edge_note(figs: str) -> str:
    return f" (the {figs} target's edge inside the model's CI)" if figs else ""


def markdown(comp: pd.DataFrame) -> str:
    """The comparison as one markdown table per stack: measured / predicted per figure, and the verdict ("runs":
    the testbed's repetitions and the model's replications; "cpu wait": the share of the writers' commit time
    their cell's processes waited for a CPU, then its excess over the one-writer cell's; "-": not measured)."""
    lines = []
    specs = {"failure_share": ".2f", "successes_per_s": ".2f", "attempts_per_s": ".2f", "commit_p50_ms": ".0f",
             "commit_p99_ms": ".0f"}
    for st, g in comp.groupby("stack", sort=False):
        lines += [f"### {st}", "", "| delay ms | retries | writers | runs | busy (own / machine) | cpu wait | "
                  + " | ".join(f"{f} measured | predicted" for f in FIGURES) + " | verdict |",
                  "|" + "---|" * (7 + 2 * len(FIGURES))]
        for r in g.itertuples():
            d = r._asdict()
            cells = [_fmt(d[f"{s}_{f}"], d[f"{s}_{f}_lo"], d[f"{s}_{f}_hi"], specs[f])
                     for f in FIGURES for s in ("measured", "predicted")]
            lines.append(f"| {r.delay_ms:g} | {r.retries} | {r.writers} | {r.reps} / {r.replications} | "
                         f"{r.own_busy_fraction:.2f} / "
                         f"{r.busy_fraction:.2f} | {_wait(r.cpu_wait_share, r.cpu_wait_excess)} | "
                         + " | ".join(cells) + f" | {r.verdict}{_edge_note(r.edge_in_ci)} |")
        lines.append("")
    judged = _judged(comp)
    if "chance_miss" in comp and len(judged):
        lines += [f"A model exactly right would miss {expected_misses(comp):.2f} of these {len(judged)} judged cells on "
                  "average: its replications drawn as each cell's repetitions, judged by the targets (`chance_miss` in "
                  "comparison.csv: each cell's chance).", ""]
    short = short_cells(comp)
    if len(short):
        named = "; ".join(f"{r.stack} {r.delay_ms:g} ms {r.writers} writers retries {r.retries}: "
                          f"{_reps(r.reps_needed)}" for r in short.head(SHORT_NAMED).itertuples())
        more = f"; and {len(short) - SHORT_NAMED} more" if len(short) > SHORT_NAMED else ""
        lines += [f"{len(short)} judged cells have fewer repetitions than a model exactly right needs to be called a "
                  f"miss at most {CHANCE_BOUND * 100:g} % of the time (`reps_needed` in comparison.csv; measure them "
                  f"again with `sim testbed run --reps N` into the same folder): {named}{more}.", ""]
    least = least_p(comp)
    if least and least.p >= 1.0:
        lines += [f"Every measured mean of the judged cells' {least.figures} target figures lies within its target of "
                  "the prediction (`p_outside` 1 in comparison.csv).", ""]
    elif least:
        p, r, figs, bound = least
        lines += [f"The least `p_outside` of the judged cells' {figs} target figures: {p:.4f} ({r.stack}, "
                  f"{r.delay_ms:g} ms, {r.writers} writers, retries {r.retries}, {r.p_figure}): were every prediction "
                  "at its target's edge, a measured mean this far outside would come by the measurement's noise "
                  f"alone in at most {bound:.2f} of such comparisons (Bonferroni: {figs} x p).", ""]
    return "\n".join(lines)


def _judged(comp: pd.DataFrame) -> pd.DataFrame:
    """The cells the targets judge: not `cpu_bound`."""
    return comp[comp["verdict"] != "cpu_bound"]


class LeastP(NamedTuple):
    """The judged cells' least `p_outside`, its row, the target figures tested, and at most how often the
    measurement's noise alone would show one as small among them (Bonferroni: figures x p)."""
    p: float
    row: pd.Series
    figures: int
    bound: float


def least_p(comp: pd.DataFrame) -> LeastP | None:
    """The judged cells' least `p_outside` (`LeastP`); None without them."""
    if "p_outside" not in comp:
        return None
    judged = _judged(comp)
    judged = judged[judged["p_outside"].notna()]
    if not len(judged):
        return None
    figs = len(judged) * len(TARGETS)
    r = judged.loc[judged["p_outside"].idxmin()]
    return LeastP(float(r.p_outside), r, figs, min(1.0, figs * float(r.p_outside)))


SHORT_NAMED = 5     # the cells short of repetitions the markdown names, the likeliest to miss by chance first


def _reps(n: float) -> str:
    return f"{n:.0f}" if n == n else f"over {REPS_LADDER[-1]}"


def short_cells(comp: pd.DataFrame) -> pd.DataFrame:
    """The judged cells measured with fewer repetitions than their `reps_needed` (or over the ladder's last; a cell
    the model did not run has none), the likeliest to miss by chance first."""
    if "reps_needed" not in comp:
        return comp.iloc[:0]
    judged = _judged(comp)
    need = judged["reps_needed"]
    short = judged[(judged["replications"] > 0) & (need.isna() | (need > judged["reps"]))]
    return short.sort_values("chance_miss", ascending=False)


def expected_misses(comp: pd.DataFrame) -> float:
    """The misses a model exactly right would show among the cells judged (not `cpu_bound`): their `chance_miss`
    summed."""
    return float(_judged(comp)["chance_miss"].sum())


ROW_KEYS = ("stack", "delay_ms", "retries", "writers", "calibration", "own_busy_fraction", "busy_fraction",
            "conserved") + FIGURES


def measured_rows(out: Path) -> pd.DataFrame:
    """Every measured cell's row (`row.json` beside its records): a grid still being measured has the cells done.
    A row that is not one is one line naming it."""
    from ..inputs import read_mapping
    rows = []
    for p in sorted(out.glob("**/row.json")):
        row = read_mapping(p, "testbed cell row")
        missing = [k for k in ROW_KEYS if k not in row]
        if missing:
            raise ConfigError("", f"{p}: not a testbed cell's row (no {', '.join(missing[:3])})")
        rows.append(row)
    if not any(not r["calibration"] for r in rows):
        raise ConfigError("", f"{out}: no measured cells (measure with `sim testbed run --out {out}`)")
    return pd.DataFrame(rows)


def report(out: Path, replications: int = 30, machine_busy: bool = True, log=print,
           max_replications: int = 3000) -> pd.DataFrame:
    """Calibrate, predict and compare the cells measured in `out` (by one grid or several run into it); write
    comparison.{parquet,csv,md} and the figure. Each cell's prediction: `replications` runs of the model, and
    more, up to `max_replications`, until its target figures are pinned (`sim.testbed.figures.precise`) and their
    CIs hold no target's edge (`sim.testbed.figures.straddled`)."""
    grid = read_grid(out)
    measured = measured_rows(out)
    done = measured[~measured["calibration"]]
    cells = sorted({(r.stack, float(r.delay_ms), r.retries == "default", int(r.writers)) for r in done.itertuples()})
    pairs = sorted({(st, d) for st, d, _, _ in cells})
    missing = [st for st, d in pairs
               if not (cell_dir(out, grid.calibration(st, d), calibration=True) / "row.json").is_file()]
    if missing:
        raise ConfigError("", f"{out}: the calibration cell of {missing[0]} is not measured yet")
    profiles = calibrate(out, grid, pairs)
    predicted = predict_cells(out, grid, profiles, replications, cells, log, max_replications,
                              measured_means(done))
    comp = compare(measured, predicted, machine_busy)
    comp.to_parquet(out / "comparison.parquet")
    comp.to_csv(out / "comparison.csv", index=False)
    (out / "comparison.md").write_text(markdown(comp))
    from ..report.testbed import comparison_figure
    comparison_figure(comp, out / "comparison.png")
    return comp
