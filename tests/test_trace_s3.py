"""`sim trace import` where the table lives: Iceberg and Delta tables their clients wrote to S3 (SeaweedFS on
free ports, started and stopped here), read through pyarrow's S3 file system with the credentials and endpoint
of the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION)."""
from __future__ import annotations

import pandas as pd
import pytest

import trace_tables
from sim.cli import main

BUCKET = "lake"
REGION = "us-east-1"


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """SeaweedFS on free ports (sim.testbed.servers: every port it opens chosen free), a bucket `lake`; stopped
    when the module's tests are done."""
    boto3 = pytest.importorskip("boto3")
    from sim.testbed import servers
    try:
        fs = servers.start_seaweedfs(tmp_path_factory.mktemp("seaweedfs"))
    except servers.ServerError as exc:
        if "not found" in str(exc):
            pytest.skip(str(exc))
        raise
    try:
        boto3.client("s3", endpoint_url=fs.s3_url, aws_access_key_id=fs.access_key,
                     aws_secret_access_key=fs.secret_key, region_name=REGION).create_bucket(Bucket=BUCKET)
        yield fs
    finally:
        fs.stop()


def _import(s3, tmp_path, fmt, url, monkeypatch, capsys):
    """`sim trace import FMT URL` with the S3 credentials and endpoint in the environment."""
    env = {"AWS_ACCESS_KEY_ID": s3.access_key, "AWS_SECRET_ACCESS_KEY": s3.secret_key, "AWS_ENDPOINT_URL": s3.s3_url,
           "AWS_REGION": REGION, "AWS_EC2_METADATA_DISABLED": "true"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "trace.parquet"
    code = main(["trace", "import", fmt, url, "--out", str(out)])
    text, err = capsys.readouterr()
    assert code == 0, err
    return pd.read_parquet(out), text


def test_delta_table_on_s3(s3, tmp_path, monkeypatch, capsys):
    pytest.importorskip("deltalake")
    options = {"AWS_ENDPOINT_URL": s3.s3_url, "AWS_ACCESS_KEY_ID": s3.access_key,
               "AWS_SECRET_ACCESS_KEY": s3.secret_key,
               "AWS_REGION": REGION, "AWS_ALLOW_HTTP": "true", "aws_conditional_put": "etag"}
    history = trace_tables.delta_table(f"s3://{BUCKET}/delta/orders", options)
    df, text = _import(s3, tmp_path, "delta", f"s3://{BUCKET}/delta/orders", monkeypatch, capsys)
    assert list(df["time_ms"]) == [float(h["timestamp"]) for h in history[:-2]]      # less VACUUM's two
    assert list(df["operation"]) == ["append"] * 3 + ["overwrite", "overwrite", "append", "compaction", "overwrite",
                                                      "schema_change", "overwrite"]
    assert f"read: delta table orders: s3://{BUCKET}/delta/orders/_delta_log, versions 0..11" in text


def test_iceberg_table_on_s3(s3, tmp_path, monkeypatch, capsys):
    pytest.importorskip("pyiceberg")
    props = {"s3.endpoint": s3.s3_url, "s3.access-key-id": s3.access_key, "s3.secret-access-key": s3.secret_key,
             "s3.region": REGION,
             "s3.path-style-access": "true"}
    table, before = trace_tables.iceberg_table(tmp_path / "catalog", f"s3://{BUCKET}/iceberg", props)
    assert table.metadata_location.startswith(f"s3://{BUCKET}/")
    df, text = _import(s3, tmp_path, "iceberg", table.metadata_location, monkeypatch, capsys)
    snaps = df[df["source"].str.startswith("snapshot ")]
    assert list(snaps["time_ms"]) == [float(s.timestamp_ms) for s in before]
    assert list(df["operation"]) == ["append"] * 3 + ["overwrite"] * 3 + ["append", "compaction", "schema_change",
                                                                          "expire_snapshots"]
    assert "and 8 earlier metadata files (8 snapshots)" in text
