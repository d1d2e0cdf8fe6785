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
from . import address
from .common import NAMESPACE, s3_url, warm
from .pyiceberg_writer import PyIcebergWriter, create_tables, verify_tables


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
    create_tables(env, catalog(env, -1), tables)
    warm(env, bucket(env), f"{NAMESPACE}/{tables[0]}/data/")    # (a table bucket takes writes under a table only)


def open_writer(env: dict, writer: int) -> PyIcebergWriter:
    return PyIcebergWriter(env, writer, catalog(env, writer))


def verify(env: dict, tables: list[str]) -> dict:
    return verify_tables(catalog(env, -1), tables)


# ------------------------------------------------------------------------------------- the model of the stack

def profile(cal, folder) -> dict:
    """The model's inputs from one writer (`stacks.pyiceberg_calibration`): PyArrowFileIO's read, write and HEAD as
    the provider's `get`, `put` and `head`; the client's round trip to SeaweedFS's REST server as the catalog's
    latency and the server's own time per load and per commit as its steps' (each growing with the table's
    snapshots); the data file's encoding and write as the runtime; the client's own time per attempt, a line in the
    table's snapshots; the S3 server's marker lock, where measured."""
    from ..marker_lock import provider_keys
    from ..profile import lognormal, provider_file, runtime
    from .pyiceberg_calibration import client_work, decompose, rest_samples, storage_samples
    s = storage_samples(cal)
    fits = {kind: lognormal(v, kind) for kind, v in s.items() if len(v) > 0}
    fits["cas"] = fits["put"]
    provider = provider_file("iceberg-rest", fits, folder / "provider.yaml",
                             "PyArrowFileIO's composite reads, writes and HEADs (docs/model/pyiceberg.md)",
                             provider_keys(cal.marker_lock))
    rest = rest_samples(cal, s["head"])
    rows = decompose(cal, sql=False)

    def own(x):     # a server step's own time: fitted, or (a log without server_ms) its median beyond the round trip
        return lognormal(x) if hasattr(x, "__len__") else {"median_ms": float(x), "sigma": 0.0}
    return {"provider": str(provider), "catalog_latency": lognormal(rest["network"]),
            "load_latency": own(rest["load"]), "commit_latency": own(rest["commit"]),
            "load_per_version_ms": rest["load_per_version"], "commit_per_version_ms": rest["commit_per_version"],
            "runtime": runtime([r["runtime_ms"] for r in rows]), "client_work": client_work(rows, sql=False)}


def model_config(profile: dict, spec) -> dict:
    """Design rest with SeaweedFS's server (`catalog.server.variant: seaweedfs`) and PyIceberg's client, its
    retries on (4) or off."""
    server = {"variant": "seaweedfs", "load_latency": profile["load_latency"],
              "commit_latency": profile["commit_latency"], "load_per_version_ms": profile["load_per_version_ms"],
              "commit_per_version_ms": profile["commit_per_version_ms"]}
    return {"design": "rest", "storage": {"provider": profile["provider"]},
            "catalog": {"latency": profile["catalog_latency"], "server": server},
            "commit": {"client": "pyiceberg", "max_retries": 4 if spec.retries else 0,
                       "client_work": profile["client_work"]},
            "workload": {"runtime": profile["runtime"]}}
