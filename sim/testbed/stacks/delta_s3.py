"""delta-s3: delta-rs (the `deltalake` package) appends to a table on the S3 server, committing each log entry
by a conditional put (`If-None-Match: *`; object_store's `conditional_put: etag`).

A transaction is one `write_deltalake(mode="append")` call: it loads the table's snapshot (LIST of the log,
GETs), writes the data file, then commits (LIST, GETs of new entries, the put-if-absent of the next entry),
retrying a lost race itself `max_commit_retries` times (delta-rs's default 15; 0 turns it off). Its retries run
in compiled code, so its attempts are read from the proxy's log: each put-if-absent is one.
"""
from __future__ import annotations

from ..writers import CommitOutcome
from . import payload
from .common import ensure_bucket, failed, keys_of, s3_url

SERVERS = ("s3",)
BUCKET = "delta"


def storage_options(env: dict, writer: int) -> dict:
    return {"AWS_ENDPOINT_URL": s3_url(env, writer), "AWS_ACCESS_KEY_ID": env["s3_access_key"],
            "AWS_SECRET_ACCESS_KEY": env["s3_secret_key"], "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true",
            "aws_conditional_put": "etag"}


def uri(table: str) -> str:
    return f"s3://{BUCKET}/{table}"


def setup(env: dict, tables: list[str]) -> None:
    from deltalake import DeltaTable
    ensure_bucket(env, BUCKET)
    schema = payload(env, 0, 0).schema
    for t in tables:
        DeltaTable.create(uri(t), schema=schema, storage_options=storage_options(env, -1))


def attempts(committed: bool, requests: dict, retries: bool) -> int:
    """A committed transaction's attempts are its put-if-absent requests (its last one won); one that failed used
    every attempt delta-rs allows (16, or 1 with its retries off), whose last may end before its PUT: delta-rs
    gives up as soon as the attempt's LIST shows another commit when it has no retry left."""
    if committed:
        return requests.get("s3:cas", 0)
    return 16 if retries else 1


class Writer:
    def __init__(self, env: dict, writer: int):
        from deltalake import CommitProperties, DeltaTable
        self.env, self.writer = env, writer
        self.options = storage_options(env, writer)
        self.props = None if env["retries"] else CommitProperties(max_commit_retries=0)
        for t in env["tables"]:          # warm the client (its runtime, its connections)
            DeltaTable(uri(t), storage_options=self.options).version()

    def payload(self, k: int):
        return payload(self.env, self.writer, k)

    def commit(self, table: str, data) -> CommitOutcome:
        from deltalake import write_deltalake
        from deltalake.exceptions import CommitFailedError
        try:
            write_deltalake(uri(table), data, mode="append", storage_options=self.options,
                            commit_properties=self.props)
        except CommitFailedError as exc:
            return failed("retries_exhausted", exc)
        return CommitOutcome(True)

    def close(self) -> None:
        pass


def open_writer(env: dict, writer: int) -> Writer:
    return Writer(env, writer)


def verify(env: dict, tables: list[str]) -> dict:
    """Per table: its commits after the create (the version) and the rows of each (writer, k)."""
    from deltalake import DeltaTable
    out = {}
    for t in tables:
        dt = DeltaTable(uri(t), storage_options=storage_options(env, -1))
        rows = dt.to_pyarrow_table(columns=["writer", "k"])
        out[t] = {"versions": dt.version(), "keys": keys_of(rows)}
    return out


# ------------------------------------------------------------------------------------- the model of the stack

def _data_put_to_commit(reqs):
    """From the data file's PUT to the commit's first LIST after it (the write and the client's work between)."""
    put = reqs[(reqs["kind"] == "put") & ~reqs["detail"].str.contains("_delta_log")]
    if put.empty:
        return float("nan")
    t0 = put["start_ms"].iloc[0]
    after = reqs[(reqs["kind"] == "list") & (reqs["start_ms"] > t0)]
    return float(after["start_ms"].iloc[0] - t0) if not after.empty else float("nan")


def profile(cal, folder) -> dict:
    """The model's inputs from one writer (baseline: today's design `log`): each S3 request kind (a GET, a LIST,
    the data PUT, the put-if-absent) as the provider's, SeaweedFS checking a conditional PUT at its completion
    (the first to finish wins); the data PUT and the client's work before the commit as the runtime."""
    import numpy as np
    from ..profile import lognormal, provider_file, runtime
    reqs = [r for r in cal.per_txn]
    allr = __import__("pandas").concat(reqs)
    by = {k: allr.loc[allr["kind"] == k, "latency_ms"].to_numpy() for k in ("get", "list", "put", "cas")}
    fits = {k: lognormal(v) for k, v in by.items() if len(v) >= 30}
    fits["_flags"] = {"cas_checked_at_completion": True}
    provider = provider_file("delta-s3", fits, folder / "provider.yaml", "SeaweedFS's S3 through delta-rs")
    work = np.array([_data_put_to_commit(r) for r in reqs])
    return {"provider": str(provider), "runtime": runtime(work[np.isfinite(work)])}


def model_config(profile: dict, spec) -> dict:
    return {"design": "log", "storage": {"provider": profile["provider"]},
            "commit": {"max_retries": 15 if spec.retries else 0},
            "workload": {"runtime": profile["runtime"]}}
