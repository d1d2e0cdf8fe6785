"""Traces: a table's history as commits (docs/FORMATS.md, "Trace"), replayed as a workload (docs/model/workload.md,
"Trace"; `workload.trace`).

- `schema`: the trace file, read and written (`read_trace`, `write_trace`), each way it is unusable one line naming
  the file and the field
- `source`: a trace file as a config and a run read it (its content's digest, its rows as codes), once per process
- `replay`: the rows a run replays: the what-ifs (`tables_scale`, `repeat`, `rate_scale`), arrivals on the
  simulated clock
- `export`: a run's commits as a trace (`sim run --trace-out`)
- the importers (`sim trace import`, `cli`): a table's own history where it lives (`iceberg`, `delta`, `ducklake`;
  its files through `location`) as commits in the model's operations (`history`), and what each found (`summary`);
  the base install imports no table format's client
"""
from .schema import OPERATIONS, read_trace, write_trace

__all__ = ["OPERATIONS", "read_trace", "write_trace"]
