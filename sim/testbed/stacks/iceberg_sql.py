"""iceberg-sql: PyIceberg's SqlCatalog on PostgreSQL, the warehouse on the S3 server.

A transaction is a batch job's: load the table (the base), append the rows (`Table.append`: the data file, its
manifest and the manifest list written, then `commit_table`: load again, check the requirements, write
metadata.json, `UPDATE ... WHERE metadata_location = old`, COMMIT). PyIceberg retries a failed commit itself
(`commit.retry.num-retries`, default 4; 0 turns it off); each `commit_table` call is an attempt, counted by
wrapping the catalog's method in the writer's process.
"""
from __future__ import annotations

from ..writers import CommitOutcome, now_ms
from . import address, payload
from .common import NAMESPACE, ensure_bucket, failed, keys_of, s3_url

SERVERS = ("pg", "s3")
BUCKET = "warehouse"


def catalog(env: dict, writer: int):
    from pyiceberg.catalog.sql import SqlCatalog
    host, port = address(env, "pg", writer)
    pg = env["pg"]
    auth = pg["user"] + (f":{pg['password']}" if pg["password"] else "")
    return SqlCatalog("testbed", **{
        "uri": f"postgresql+psycopg2://{auth}@{host}:{port}/{pg['dbname']}",
        "warehouse": f"s3://{BUCKET}/iceberg",
        "s3.endpoint": s3_url(env, writer),
        "s3.access-key-id": env["s3_access_key"],
        "s3.secret-access-key": env["s3_secret_key"],
        "s3.region": "us-east-1",
        "s3.force-virtual-addressing": "false",
    })


def table_properties(env: dict) -> dict:
    """Retries off: `commit.retry.num-retries` 0; on: PyIceberg's defaults, nothing set."""
    return {} if env["retries"] else {"commit.retry.num-retries": "0"}


def setup(env: dict, tables: list[str]) -> None:
    ensure_bucket(env, BUCKET)
    cat = catalog(env, -1)
    cat.create_namespace_if_not_exists(NAMESPACE)
    schema = payload(env, 0, 0).schema
    for t in tables:
        cat.create_table(f"{NAMESPACE}.{t}", schema=schema, properties=table_properties(env))
    cat.engine.dispose()


class Writer:
    def __init__(self, env: dict, writer: int):
        self.env, self.writer = env, writer
        self.catalog = cat = catalog(env, writer)
        commit_table = cat.commit_table
        self.calls: list[float] = []

        def counted(*args, **kwargs):     # one call an attempt: each ends in its UPDATE or a failed check
            self.calls.append(now_ms())
            return commit_table(*args, **kwargs)
        cat.commit_table = counted
        for t in env["tables"]:           # warm the connection pools (a job's first connect is not a commit's)
            cat.load_table(f"{NAMESPACE}.{t}")

    def payload(self, k: int):
        return payload(self.env, self.writer, k)

    def commit(self, table: str, data) -> CommitOutcome:
        from pyiceberg.exceptions import CommitFailedException
        self.calls = []
        tbl = self.catalog.load_table(f"{NAMESPACE}.{table}")
        try:
            tbl.append(data)
        except CommitFailedException as exc:
            return failed("retries_exhausted", exc, len(self.calls), self._first())
        return CommitOutcome(True, attempts=len(self.calls), commit_start_ms=self._first())

    def _first(self):
        return self.calls[0] if self.calls else None

    def close(self) -> None:
        self.catalog.engine.dispose()


def open_writer(env: dict, writer: int) -> Writer:
    return Writer(env, writer)


def verify(env: dict, tables: list[str]) -> dict:
    """Per table: its snapshots and the rows of each (writer, k) read back from its data files."""
    cat = catalog(env, -1)
    out = {}
    for t in tables:
        tbl = cat.load_table(f"{NAMESPACE}.{t}")
        rows = tbl.scan(selected_fields=("writer", "k")).to_arrow()
        out[t] = {"versions": len(tbl.metadata.snapshots), "keys": keys_of(rows)}
    cat.engine.dispose()
    return out


# ------------------------------------------------------------------------------------- the model of the stack

def profile(cal, folder) -> dict:
    """The model's inputs from one writer (baseline: today's design `service-pointer`, the client's first attempt
    against its base; commit_table's own load is not in it): PyArrowFileIO's read (a
    HEAD and a GET) and write (a multipart upload) as the provider's GET and PUT; a PostgreSQL transaction (3 round
    trips) as the catalog's latency; the job's work before its commit call as the runtime, less what the model's
    prepare does there (a manifest list read and write)."""
    import numpy as np
    from ..profile import lognormal, provider_file, runtime
    from ..samples import operation_samples
    s = operation_samples(cal)
    read, write = s["s3:head+get"], s["s3:mpu_start+put_part+mpu_complete"]
    fits = {"get": lognormal(read), "put": lognormal(write), "head": lognormal(s["s3:head"])}
    provider = provider_file("iceberg-sql", fits, folder / "provider.yaml", "PyArrowFileIO reads and writes")
    pg = np.concatenate([s["pg:begin+select+rollback"], s["pg:begin+update+commit"]])
    before = (cal.raw["commit_start_ms"] - cal.raw["arrival_ms"]).to_numpy()
    work = before - np.median(s["pg:begin+select+rollback"]) - np.median(read) - np.median(write)
    return {"provider": str(provider), "catalog_latency": lognormal(pg), "runtime": runtime(work),
            "client_cpu_ms": float(cal.raw["cpu_ms"].median())}


def model_config(profile: dict, spec) -> dict:
    return {"design": "service-pointer", "storage": {"provider": profile["provider"]},
            "catalog": {"latency": profile["catalog_latency"]},
            "commit": {"first_attempt": "stale", "max_retries": 4 if spec.retries else 0},
            "workload": {"runtime": profile["runtime"]}}
