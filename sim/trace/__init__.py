"""Traces: a table's own commit history as a workload (docs/FORMATS.md, "Traces").

The importers read each format's history where the table lives (`iceberg`, `delta`, `ducklake`; files through
`location`), as commits in the model's operations (`history`), and print what they found (`summary`);
`sim trace import` (`cli`) writes the trace file. The base install imports no table format's client."""
