"""The designs comparison's table from a knee sweep: per-table designs are scaled from their one-table knee
(N independent tables), the shared catalog file is read at each table count."""
import math

import pandas as pd
import pytest

from sim.report.designs_knee import cell_knees, headline


def _row(design, scope, tables, knee, low, high, status="ok", latency=math.nan, provider="s3", fa=1.0,
         bound=math.nan):
    return {"design": design, "scope": scope, "num_tables": tables, "catalog_latency_ms": latency,
            "provider": provider, "fast_append_ratio": fa, "knee_throughput_cps": knee,
            "knee_throughput_cps_low": low, "knee_throughput_cps_high": high, "knee_status": status,
            "knee_bound_cps": bound, "knee_reason": "", "decided": True}


def test_per_table_designs_scale_with_tables_and_the_file_does_not():
    knees = pd.DataFrame([_row("file", "global", 1, 2.0, 1.9, 2.1), _row("file", "global", 50, 9.0, 8.5, 9.4),
                          _row("log", "table", 1, 5.0, 4.8, 5.2)])
    cells = cell_knees(knees, tables=(1, 50)).set_index(["design", "tables"])
    cols = ["knee_throughput_cps", "knee_throughput_cps_low", "knee_throughput_cps_high"]
    assert cells.loc[("log", 50), cols].tolist() == pytest.approx([250, 240, 260])
    assert bool(cells.loc[("log", 50), "scaled"]) and not bool(cells.loc[("log", 1), "scaled"])
    assert cells.loc[("file", 50), "knee_throughput_cps"] == 9.0 and not bool(cells.loc[("file", 50), "scaled"])
    assert ("file", 10) not in cells.index          # not searched at 10 tables: no cell


def test_a_rest_server_is_read_at_each_table_count():
    """A REST server's tables share its database's connections (docs/MODEL.md, "Server capacity"): no scaling."""
    knees = pd.DataFrame([_row("rest", "table", 1, 3.0, 2.9, 3.1, latency=10.0),
                          _row("rest", "table", 50, 27.0, 25.0, 28.0, latency=10.0)])
    cells = cell_knees(knees, tables=(1, 50)).set_index(["design", "tables"])
    assert cells.loc[("rest", 50), "knee_throughput_cps"] == 27.0 and not bool(cells.loc[("rest", 50), "scaled"])


def test_a_per_table_design_searched_at_several_tables_is_refused():
    knees = pd.DataFrame([_row("log", "table", 10, 5.0, 4.8, 5.2)])
    with pytest.raises(ValueError, match="one table"):
        cell_knees(knees)


def test_headline_labels_ranges_and_service_latencies():
    knees = pd.DataFrame([_row("rest", "table", 1, 3.0, 2.9, 3.1, latency=10.0),
                          _row("file", "global", 1, math.nan, math.nan, math.nan, status="above_range", bound=40.0),
                          _row("log", "table", 1, 0.5, 0.45, 0.55, provider="gcp", fa=0.9)])
    t = headline(knees, tables=(1,))
    assert t.loc[(1, "FA", "rest (db 10 ms)"), "s3"] == "3.00 [2.90, 3.10] c/s"
    assert t.loc[(1, "FA", "file"), "s3"] == "above_range (> 40.0 c/s)"
    assert t.loc[(1, "90/10", "log"), "gcp"] == "0.50 [0.45, 0.55] c/s"
