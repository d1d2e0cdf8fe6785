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

#: designs whose tables share one resource besides a global catalog object: the DynamoDB log store's capacity, a
#: REST server's connection pools
SHARED_DESIGNS = ("delta-dynamodb", "rest", "rest-lakekeeper")
#: the service whose round trip a design's label names (else "db", the catalog's database; HMS for `hive`)
SERVICE_NAME = {"hudi": "zk", "delta-dynamodb": "ddb"}
#: knee columns the table reads (sim.sweep.knee's knees.parquet)
KNEE, LOW, HIGH = "offered_cps", "offered_cps_low", "offered_cps_high"


def cell_knees(knees: pd.DataFrame, tables=(1, 10, 50)) -> pd.DataFrame:
    """One row per design x service latency x provider x FA ratio x table count: the knee (offered arrivals/s at
    95 % success) with its CI, `status`, and `scaled` (True: N x the one-table search)."""
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
                         "knee_cps": k * r[KNEE], "low_cps": k * r[LOW], "high_cps": k * r[HIGH],
                         "status": r["status"], "decided": bool(r["decided"]), "scaled": not shared and n > 1})
    return pd.DataFrame(rows)


def _service_ms(r) -> float:
    """The service round trip a cell's knee depends on: the catalog's database (HMS for `hive`), else a lock's or
    a log store's (`hudi`: ZooKeeper; `delta-dynamodb`: DynamoDB)."""
    ms = r["catalog_latency_ms"]
    if not math.isfinite(ms) and math.isfinite(r.get("service_latency_ms", math.nan)):
        return r["service_latency_ms"]
    return ms


def _label(row) -> str:
    """'4.81 [4.70, 4.93]'; a search that ended outside its range says so."""
    if row["status"] == "above_range":
        return "above range"
    if row["status"] == "below_range" or not math.isfinite(row["knee_cps"]):
        return "below range" if row["status"] == "below_range" else f"no knee ({row['status']})"
    text = f"{row['knee_cps']:.3g} [{row['low_cps']:.3g}, {row['high_cps']:.3g}]"
    return text if row["decided"] else text + " (undecided)"


def headline(knees: pd.DataFrame, providers=("s3x", "s3", "azurex", "azure", "gcp"), tables=(1, 10, 50)) -> pd.DataFrame:
    """The comparison as a table: rows tables x mix x design (service designs per database latency), a column
    per provider, each cell the knee [95 % CI] in offered commits/s."""
    cells = cell_knees(knees, tables)
    cells["mix"] = cells["fast_append_ratio"].map(lambda x: "FA" if x == 1.0 else f"{x * 100:.0f}/{100 - x * 100:.0f}")
    cells["design_label"] = [d if not math.isfinite(ms) else f"{d} ({SERVICE_NAME.get(d, 'db')} {ms:g} ms)"
                             for d, ms in zip(cells["design"], cells["catalog_latency_ms"])]
    cells["cell"] = cells.apply(_label, axis=1)
    table = cells.pivot_table(index=["tables", "mix", "design_label"], columns="provider", values="cell",
                              aggfunc="first")
    return table[[p for p in providers if p in table.columns]].sort_index(
        level=[0, 1, 2], ascending=[True, False, True])
