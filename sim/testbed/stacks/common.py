"""What the stacks share: the S3 client of the setup, the rows' check, the outcome of a failed commit."""
from __future__ import annotations

from collections import Counter

from ..servers import REGION
from . import address

NAMESPACE = "testbed"


def s3_url(env: dict, writer: int) -> str:
    host, port = address(env, "s3", writer)
    return f"http://{host}:{port}"


def boto3_client(env: dict, writer: int = -1):
    import boto3
    return boto3.client("s3", endpoint_url=s3_url(env, writer), aws_access_key_id=env["s3_access_key"],
                        aws_secret_access_key=env["s3_secret_key"], region_name=REGION)


def ensure_bucket(env: dict, bucket: str) -> None:
    import botocore.exceptions
    s3 = boto3_client(env)
    try:
        s3.create_bucket(Bucket=bucket)
    except botocore.exceptions.ClientError as exc:
        if exc.response["Error"]["Code"] not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise
    warm(env, bucket)


def warm(env: dict, bucket: str, prefix: str = "") -> None:
    """A first write to a bucket waits for SeaweedFS to grow its volumes (seconds): done here, in the setup, not
    in a writer's first commit."""
    s3 = boto3_client(env)
    key = f"{prefix}warm-{env['tag']}"
    s3.put_object(Bucket=bucket, Key=key, Body=b"warm")
    s3.delete_object(Bucket=bucket, Key=key)


def keys_of(arrow_table) -> Counter:
    """Rows per (writer, k): what each commit left in a table."""
    w = arrow_table.column("writer").to_pylist()
    k = arrow_table.column("k").to_pylist()
    return Counter(zip(w, k))


def failed(reason: str, exc: BaseException, attempts=None, commit_start_ms=None):
    from ..writers import CommitOutcome
    return CommitOutcome(False, reason, attempts, commit_start_ms, f"{type(exc).__name__}: {exc}"[:500])
