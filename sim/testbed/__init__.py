"""The testbed: real clients against real servers, measured, with the model's prediction beside each figure.

An optional extra (`pip install -e '.[testbed]'`): the clients (PyIceberg, delta-rs, DuckLake) and the servers
(PostgreSQL, SeaweedFS) are imported or started here only, never by the model or the base install.

- `servers`: PostgreSQL and SeaweedFS started on free ports (or the user's), stopped on exit, error or Ctrl-C;
- `proxy`: a delay proxy in front of each server, per writer, logging each request's latency (`wire` frames them);
- `stacks`: one real client on real servers each (iceberg-sql, iceberg-rest, delta-s3, ducklake-pg);
- `writers`: N writer processes behind a barrier, each committing M times;
- `cpu`: the CPU of writers, servers and proxy, and the machine's busy fraction;
- `cell`: one measured cell (stack, writers, delay, retries) from start to its records and its check;
- `predict`: the model's configuration of a stack from a one-writer calibration, and its prediction.
"""
