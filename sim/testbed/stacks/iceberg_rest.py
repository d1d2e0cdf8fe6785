"""iceberg-rest: PyIceberg's RestCatalog on SeaweedFS's own Iceberg REST catalog (a table bucket is a catalog;
OAuth tokens for the S3 key), the data on its S3 gateway.

A transaction is a batch job's: load the table (GET the table: the base), append the rows (the data file, its
manifest and the manifest list written by the client, then the commit POST with its requirements: the server
checks them, writes metadata.json and moves the table's pointer). PyIceberg retries a 409 itself
(`commit.retry.num-retries`, default 4; 0 turns it off); each `commit_table` call (a POST) is an attempt, counted
by wrapping the catalog's method in the writer's process.
"""
from __future__ import annotations

from ..servers import ServerError
from ..writers import CommitOutcome, now_ms
from . import address, payload
from .common import NAMESPACE, failed, keys_of, s3_url, warm
from .iceberg_sql import table_properties


def bucket(env: dict) -> str:
    """The run's table bucket (a catalog): one for every cell (each bucket takes volumes of its own), the cells'
    tables named apart."""
    return "testbed-lake"


def catalog(env: dict, writer: int):
    from pyiceberg.catalog.rest import RestCatalog
    host, port = address(env, "rest", writer)
    return RestCatalog("testbed", **{
        "uri": f"http://{host}:{port}",
        "warehouse": f"s3://{bucket(env)}",
        "credential": f"{env['s3_access_key']}:{env['s3_secret_key']}",
        "s3.endpoint": s3_url(env, writer),
        "s3.access-key-id": env["s3_access_key"],
        "s3.secret-access-key": env["s3_secret_key"],
        "s3.region": "us-east-1",
        "s3.path-style-access": "true",
        "s3.force-virtual-addressing": "false",
    })


def setup(env: dict, tables: list[str]) -> None:
    from ..servers import SeaweedFS
    if not env.get("weed_master"):
        raise ServerError("iceberg-rest needs SeaweedFS's master to create its table bucket")
    SeaweedFS("", master=env["weed_master"]).table_bucket(bucket(env))
    cat = catalog(env, -1)
    cat.create_namespace_if_not_exists(NAMESPACE)
    schema = payload(env, 0, 0).schema
    for t in tables:
        cat.create_table(f"{NAMESPACE}.{t}", schema=schema, properties=table_properties(env))
    warm(env, bucket(env), f"{NAMESPACE}/{tables[0]}/data/")    # (a table bucket takes writes under a table only)


class Writer:
    def __init__(self, env: dict, writer: int):
        self.env, self.writer = env, writer
        self.catalog = cat = catalog(env, writer)
        commit_table = cat.commit_table
        self.calls: list[float] = []

        def counted(*args, **kwargs):     # one call an attempt: one POST
            self.calls.append(now_ms())
            return commit_table(*args, **kwargs)
        cat.commit_table = counted
        for t in env["tables"]:
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
            return failed("retries_exhausted", exc, len(self.calls), self.calls[0] if self.calls else None)
        return CommitOutcome(True, attempts=len(self.calls), commit_start_ms=self.calls[0] if self.calls else None)

    def close(self) -> None:
        pass


def open_writer(env: dict, writer: int) -> Writer:
    return Writer(env, writer)


def verify(env: dict, tables: list[str]) -> dict:
    cat = catalog(env, -1)
    out = {}
    for t in tables:
        tbl = cat.load_table(f"{NAMESPACE}.{t}")
        rows = tbl.scan(selected_fields=("writer", "k")).to_arrow()
        out[t] = {"versions": len(tbl.metadata.snapshots), "keys": keys_of(rows)}
    return out


# ------------------------------------------------------------------------------------- the model of the stack

def profile(cal, folder) -> dict:
    """The model's inputs from one writer (baseline: today's design `rest`, its server's keys set as SeaweedFS's
    source has them where a key exists): the client's REST load as the catalog's latency; PyArrowFileIO's read
    and write as the provider's GET and PUT; the job's work before its commit call as the runtime, less what the
    model's prepare does there."""
    import numpy as np
    from ..profile import lognormal, provider_file, runtime
    from ..samples import operation_samples
    s = operation_samples(cal)
    read, write = s["s3:head+get"], s["s3:mpu_start+put_part+mpu_complete"]
    fits = {"get": lognormal(read), "put": lognormal(write), "head": lognormal(s["s3:head"])}
    provider = provider_file("iceberg-rest", fits, folder / "provider.yaml", "PyArrowFileIO reads and writes")
    before = (cal.raw["commit_start_ms"] - cal.raw["arrival_ms"]).to_numpy()
    work = before - np.median(s["rest:load"]) - np.median(read) - np.median(write)
    return {"provider": str(provider), "catalog_latency": lognormal(s["rest:load"]), "runtime": runtime(work)}


def model_config(profile: dict, spec) -> dict:
    server = {"variant": "reference", "metadata_get": False, "retries": 2, "pool_connections": 1000,
              "reread_before_cas": False, "delete_on_conflict": True,
              "retry": {"policy": "exponential", "base_ms": 50.0, "factor": 2.0, "max_ms": 100.0, "jitter": 0.5}}
    return {"design": "rest", "storage": {"provider": profile["provider"]},
            "catalog": {"latency": profile["catalog_latency"], "server": server},
            "commit": {"first_attempt": "stale", "max_retries": 4 if spec.retries else 0},
            "workload": {"runtime": profile["runtime"]}}
