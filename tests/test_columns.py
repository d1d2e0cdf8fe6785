"""The standard parameter columns a results table is written with (sim.sweep.task.standard_columns) are the
ones the report expects (sim.report.aggregate.STANDARD_PARAMS), in the same order. Two lists because the report
reads the results table alone and imports nothing of the sweep; this test keeps them one."""
import pytest

from sim.config import from_dict
from sim.report.aggregate import STANDARD_PARAMS
from sim.sweep.task import standard_columns


@pytest.mark.parametrize("data", [
    {},
    {"catalog": {"backend": "service", "latency_ms": 5},
     "workload": {"table_selection": {"distribution": "zipf", "alpha": 1.2}}},
    {"workload": {"inter_arrival": {"distribution": "lognormal", "median_ms": 200, "sigma": 1.0}}},
    {"design": "log"},
    {"workload": {"writers": {"count": 4, "mode": "periodic", "interval_ms": 1000}}, "commit": {"shape": "object"}},
], ids=["defaults", "service_zipf", "lognormal", "log", "writers"])
def test_written_columns_are_the_reported_ones(data):
    assert list(standard_columns(from_dict(data))) == STANDARD_PARAMS
