"""The stacks: each a real client on real servers, seen through the delay proxy.

A stack module (imported by name: the others' clients are never imported) has:
- `SERVERS`: which servers it needs (`pg`, `s3`, `rest`), each reached through its own proxied port per writer;
- `setup(env, tables)`: create its catalog and tables, as the setup's route (writer -1);
- `open_writer(env, writer)`: a writer's client (`payload(k)`, `commit(table, data) -> CommitOutcome`, `close()`);
- `verify(env, tables)`: the tables' committed versions and rows, read back after the run;
- `attempts(log)`: for clients whose retries run inside compiled code, each transaction's attempts are its
  commit requests in the proxy's log (`attempt_requests`: the requests that are attempts).

`env` (a plain dict, so it pickles into a spawned writer) holds every server's proxied address per writer, the
credentials, the payload's size and whether the client's retries are on.
"""
from __future__ import annotations

import importlib

STACKS = {
    "iceberg-sql": "iceberg_sql",
    "iceberg-rest": "iceberg_rest",
    "delta-s3": "delta_s3",
    "ducklake-pg": "ducklake_pg",
}
# each stack's servers, known without importing its client
SERVERS = {"iceberg-sql": ("pg", "s3"), "iceberg-rest": ("rest", "s3"), "delta-s3": ("s3",), "ducklake-pg": ("pg",)}
# the stacks whose client PUTs directory markers on S3 (PyArrowFileIO, after each delete of PyIceberg's cleanup): the
# S3 server's marker lock is measured for them (`sim.testbed.marker_lock`)
PUTS_MARKERS = ("iceberg-sql", "iceberg-rest")


def stack(name: str):
    if name not in STACKS:
        raise KeyError(f"unknown stack {name!r} (one of {', '.join(STACKS)})")
    return importlib.import_module(f"{__name__}.{STACKS[name]}")


def address(env: dict, server: str, writer: int) -> tuple[str, int]:
    """The proxied (host, port) of `server` for `writer` (-1: the setup's and the check's)."""
    host, port = env["routes"][server][str(writer)]
    return host, int(port)


def payload(env: dict, writer: int, k: int):
    """The rows a writer appends at its k-th commit: `rows_per_commit` rows whose bytes column holds
    `payload_bytes` in all, random (parquet does not shrink it), seeded by (writer, k); the row ids say whose."""
    import numpy as np
    import pyarrow as pa
    n = int(env["rows_per_commit"])
    size = max(1, int(env["payload_bytes"]) // n)
    rng = np.random.default_rng([int(env["seed"]), writer + 1, k])
    blob = rng.integers(0, 256, size=n * size, dtype=np.uint8).tobytes()
    return pa.table({
        "writer": pa.array([writer] * n, pa.int32()),
        "k": pa.array([k] * n, pa.int32()),
        "row": pa.array(range(n), pa.int32()),
        "data": pa.array([blob[i * size:(i + 1) * size] for i in range(n)], pa.binary()),
    })
