"""iceberg-sql: PyIceberg's SqlCatalog on PostgreSQL, the warehouse on the S3 server.

A transaction is a batch job's: load the table (the base), append the rows (`Table.append`: the data file, its
manifest and the manifest list written, then `commit_table`: load again, check the requirements, write
metadata.json, `UPDATE ... WHERE metadata_location = old`, COMMIT). PyIceberg retries a failed commit itself
(`commit.retry.num-retries`, default 4; 0 turns it off); each `commit_table` call is an attempt, counted by
wrapping the catalog's method in the writer's process.
"""
from __future__ import annotations

from . import address
from .common import ensure_bucket, s3_url
from .pyiceberg_writer import PyIcebergWriter, create_tables, verify_tables

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


def setup(env: dict, tables: list[str]) -> None:
    ensure_bucket(env, BUCKET)
    create_tables(env, catalog(env, -1), tables)


def open_writer(env: dict, writer: int) -> PyIcebergWriter:
    return PyIcebergWriter(env, writer, catalog(env, writer))


def verify(env: dict, tables: list[str]) -> dict:
    return verify_tables(catalog(env, -1), tables)


# ------------------------------------------------------------------------------------- the model of the stack

def profile(cal, folder) -> dict:
    """The model's inputs from one writer (`stacks.pyiceberg_calibration`): PyArrowFileIO's read, write, HEAD and
    LIST as the provider's `get`, `put`, `head` and `list`; a PostgreSQL round trip as the catalog's latency (each
    load and the swap three of them); the data file's encoding and write as the runtime; the client's own time per
    attempt, a line in the table's snapshots, and its share spent in commit_table; the S3 server's marker lock,
    where measured (`sim.testbed.marker_lock`: PyIceberg's cleanup PUTs directory markers)."""
    from ..marker_lock import provider_keys
    from ..profile import lognormal, provider_file, runtime
    from .pyiceberg_calibration import catalog_samples, client_work, decompose, storage_samples
    s = storage_samples(cal)
    fits = {kind: lognormal(v, kind) for kind, v in s.items()}
    fits["cas"] = fits["put"]     # (no storage CAS: the database swaps)
    provider = provider_file("iceberg-sql", fits, folder / "provider.yaml",
                             "PyArrowFileIO's composite reads, writes, HEADs and LISTs (docs/model/pyiceberg.md)",
                             provider_keys(cal.marker_lock))
    rows = decompose(cal, sql=True)
    return {"provider": str(provider), "catalog_latency": lognormal(catalog_samples(cal)),
            "runtime": runtime([r["runtime_ms"] for r in rows]), "client_work": client_work(rows, sql=True)}


def model_config(profile: dict, spec) -> dict:
    """Design pyiceberg-postgres: PyIceberg's loop on SqlCatalog's PostgreSQL round trips, its retries on (4) or
    off."""
    return {"design": "pyiceberg-postgres", "storage": {"provider": profile["provider"]},
            "catalog": {"latency": profile["catalog_latency"]},
            "commit": {"max_retries": 4 if spec.retries else 0, "client_work": profile["client_work"]},
            "workload": {"runtime": profile["runtime"]}}
