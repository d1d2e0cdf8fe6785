"""Writes experiments/designs-knee.yaml: every catalog design's knee (`sim knee`, with its 95 % CI) per provider,
FA ratio {1.0, 0.9} and table count, the comparison behind the designs notebook's verdicts.

Run `python experiments/designs_knee_gen.py` after changing a list. Cells are a zip, not a grid, for two reasons:
- Tables of a per-table design are independent: Poisson splitting makes N tables at rate r exactly N one-table
  systems at r / N, so their knee at N tables is N x the one-table knee, CI included. They run at one table only;
  `sim.report.designs_knee` scales them. `file` shares one catalog object across tables, and the REST servers
  (`rest`, `rest-lakekeeper`) their database's connection pools (docs/MODEL.md, "Server capacity"): they run at
  every table count.
- The service designs (`rest`, `rest-lakekeeper`, `service-pointer`) need the service's own database latency,
  which no public figure gives: it is swept; so are the lock designs' services' (`hive`: HMS, whose lock is the
  same service; `hudi`: ZooKeeper).
- `delta-dynamodb`'s tables share its DynamoDB table's write capacity, so it runs at every table count, on S3 and
  S3 Express only (the log store exists for S3: the others have put-if-absent), at DynamoDB's single-digit
  round trip (10 ms; no public figure).
"""
from __future__ import annotations

from pathlib import Path

import yaml

PROVIDERS = ["s3x", "s3", "azurex", "azure", "gcp"]
TABLES = [1, 10, 50]
SHARED = ["file"]                                   # one catalog object for every table
# storage only. Not log-spark: with 10,000,000 attempts and no sleep a transaction never gives up, so its success
# share measures whether the backlog drains within the run's drain limit (the knee moves with duration and
# drain), and overloaded runs cost ~ backlog x drain time; it needs a success bounded by commit latency
PER_TABLE = ["fs-table", "log"]
SERVICE = ["rest", "rest-lakekeeper", "service-pointer"]
SERVERS = ["rest", "rest-lakekeeper"]               # ... whose tables share the server's connection pools
SERVICE_LATENCY_MS = [2.0, 10.0, 50.0]              # the service's database round trip: unsourced, swept
LOCKED = {"hive": "catalog", "hudi": "lock"}        # lock designs and the section whose latency is their service's
LOG_STORE = ["delta-dynamodb"]
LOG_STORE_PROVIDERS = ["s3x", "s3"]
LOG_STORE_LATENCY_MS = 10.0


def cells() -> list[tuple[str, float | None, str, int]]:
    """(design, service latency ms or None, provider, tables)."""
    out = [(d, None, p, t) for d in SHARED for p in PROVIDERS for t in TABLES]
    out += [(d, None, p, 1) for d in PER_TABLE for p in PROVIDERS]
    out += [(d, ms, p, t) for d in SERVICE for ms in SERVICE_LATENCY_MS for p in PROVIDERS
            for t in (TABLES if d in SERVERS else [1])]
    out += [(d, ms, p, 1) for d in LOCKED for ms in SERVICE_LATENCY_MS for p in PROVIDERS]
    out += [(d, LOG_STORE_LATENCY_MS, p, t) for d in LOG_STORE for p in LOG_STORE_PROVIDERS for t in TABLES]
    return out


def _section(design: str, ms: float | None, section: str) -> dict:
    """The row's keys of one config section: its service latency goes where its design reads it."""
    if ms is None:
        return {}
    where = LOCKED.get(design, "log_store" if design in LOG_STORE else "catalog")
    return {"latency_ms": ms} if where == section else {}


def spec() -> dict:
    rows = cells()
    return {
        "name": "designs-knee",
        "description": (
            "Catalog designs as their real implementations commit (docs/MODEL.md 'Named designs'): the knee "
            "of each design x provider x FA ratio {1.0, 0.9}, 1 h runs (the model's defaults), GCS throttled by its "
            "per-object limit (under the measured set the object's bucket and each client's). file and the REST servers (their tables share the server's connection "
            "pools) run at 1, 10 and 50 tables; the other per-table designs at one table (their N-table knee is N x "
            "it: independent tables); the service designs at a database latency of "
            f"{', '.join(f'{x:g}' for x in SERVICE_LATENCY_MS)} ms (no public figure), and so the lock designs at "
            "their service's (hive: HMS; hudi: ZooKeeper); delta-dynamodb (its tables share one DynamoDB table's "
            f"write capacity) at 1, 10 and 50 tables on S3 and S3 Express, DynamoDB at {LOG_STORE_LATENCY_MS:g} ms. "
            "Written by "
            "experiments/designs_knee_gen.py; the headline table: sim.report.designs_knee.headline."),
        "base": {"workload": {"inter_arrival": {"distribution": "exponential"}}},
        "grid": {"workload.fast_append_ratio": [1.0, 0.9]},
        "zip": [{
            "design": [r[0] for r in rows],
            "catalog": [_section(r[0], r[1], "catalog") for r in rows],
            "lock": [_section(r[0], r[1], "lock") for r in rows],
            "log_store": [_section(r[0], r[1], "log_store") for r in rows],
            "storage.provider": [r[2] for r in rows],
            "workload.num_tables": [r[3] for r in rows],
        }],
        "knee": {"param": "workload.inter_arrival.mean_ms", "threshold": 0.95, "precision": 0.05,
                 "start": [20, 5000], "max_runs": 24, "halfwidth": 0.05},
        "report": {"facets": ["design", "fast_append_ratio"]},
    }


def main() -> None:
    out = Path(__file__).with_name("designs-knee.yaml")
    head = "# Generated by experiments/designs_knee_gen.py (edit the lists there, then rerun it).\n"
    out.write_text(head + yaml.safe_dump(spec(), sort_keys=False, width=120, default_flow_style=None))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
