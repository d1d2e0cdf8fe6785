"""The designs comparison from a knee sweep (experiments/designs-knee.yaml): one knee with its 95 % CI per
design x provider x FA ratio x table count, per-table designs scaled from their one-table knee.

Tables of a per-table design are independent (Poisson splitting), so N tables at rate r are N one-table systems
at r / N: the N-table knee is N x the one-table knee, its CI too. Only a design whose tables share something is
searched at each table count: one catalog object (`file`, catalog scope global), one global lock, one DynamoDB
log store's write capacity (`delta-dynamodb`), or one REST server's database connections (`rest`,
`rest-lakekeeper`: docs/MODEL.md, "Server capacity").
"""
from __future__ import annotations

import math

import pandas as pd

from ..knee.status import knee_text

#: designs whose tables share one resource besides a global catalog object: the DynamoDB log store's capacity, a
#: REST server's connection pools
SHARED_DESIGNS = ("delta-dynamodb", "rest", "rest-lakekeeper")
#: the service whose round trip a design's label names (else "db", the catalog's database; HMS for `hive`)
SERVICE_NAME = {"hudi": "zk", "delta-dynamodb": "ddb"}
#: the knee columns the table reads (sim.sweep.knee's knees.parquet: sim.knee.search's record), scaled N x for a
#: per-table design at N tables
SCALED = ("knee_bound_cps", "knee_throughput_cps", "knee_throughput_cps_low", "knee_throughput_cps_high")


def cell_knees(knees: pd.DataFrame, tables=(1, 10, 50)) -> pd.DataFrame:
    """One row per design x service latency x provider x FA ratio x table count: the knee (commits/s at 95 %
    success) with its CI, or its status with its bound (`knee_status`, `knee_reason`, `knee_bound_cps`, as
    sim.knee.status words them), `decided` (the CI met the search's half-width target) and `scaled` (True: N x the
    one-table search)."""
    rows = []
    for _, r in knees.iterrows():
        shared = r["scope"] == "global" or r["design"] in SHARED_DESIGNS
        for n in tables:
            if shared and r["num_tables"] != n:
                continue
            if not shared and r["num_tables"] != 1:
                raise ValueError(f"a per-table design ({r['design']}) searched at {r['num_tables']} tables: "
                                 "run it at one table (its N-table knee is N x the one-table knee)")
            k = 1 if shared else n
            rows.append({"design": r["design"], "catalog_latency_ms": _service_ms(r),
                         "provider": r["provider"], "fast_append_ratio": r["fast_append_ratio"], "tables": n,
                         "knee_status": r["knee_status"], "knee_reason": r.get("knee_reason", ""),
                         **{c: k * r[c] for c in SCALED},
                         "decided": bool(r["decided"]), "scaled": not shared and n > 1})
    return pd.DataFrame(rows)


def _service_ms(r) -> float:
    """The service round trip a cell's knee depends on: the catalog's database (HMS for `hive`), else a lock's or
    a log store's (`hudi`: ZooKeeper; `delta-dynamodb`: DynamoDB)."""
    ms = r["catalog_latency_ms"]
    if not math.isfinite(ms) and math.isfinite(r.get("service_latency_ms", math.nan)):
        return r["service_latency_ms"]
    return ms


def _label(row) -> str:
    """The knee as `sim.knee.status.knee_text` words it; an `ok` knee whose CI is wider than the search's
    half-width target says so."""
    text = knee_text(row)
    return text if row["knee_status"] != "ok" or row["decided"] else text + " (CI wider than the target)"


def headline(knees: pd.DataFrame, providers=("s3x", "s3", "azurex", "azure", "gcp"), tables=(1, 10, 50)) -> pd.DataFrame:
    """The comparison as a table: rows tables x mix x design (service designs per database latency), a column
    per provider, each cell the knee [95 % CI] in commits/s, or its status with its bound."""
    cells = cell_knees(knees, tables)
    cells["mix"] = cells["fast_append_ratio"].map(lambda x: "FA" if x == 1.0 else f"{x * 100:.0f}/{100 - x * 100:.0f}")
    cells["design_label"] = [d if not math.isfinite(ms) else f"{d} ({SERVICE_NAME.get(d, 'db')} {ms:g} ms)"
                             for d, ms in zip(cells["design"], cells["catalog_latency_ms"])]
    cells["cell"] = cells.apply(_label, axis=1)
    table = cells.pivot_table(index=["tables", "mix", "design_label"], columns="provider", values="cell",
                              aggfunc="first")
    return table[[p for p in providers if p in table.columns]].sort_index(
        level=[0, 1, 2], ascending=[True, False, True])
