"""delta-s3: delta-rs (the `deltalake` package) appends to a table on the S3 server, committing each log entry
by a conditional put (`If-None-Match: *`; object_store's `conditional_put: etag`).

A transaction is one `write_deltalake(mode="append")` call: it loads the table's snapshot (LIST of the log,
GETs), writes the data file, then commits (LIST, GETs of new entries, the put-if-absent of the next entry),
retrying a lost race itself `max_commit_retries` times (delta-rs's default 15; 0 turns it off). Its retries run
in compiled code, so its attempts are read from the proxy's log: each put-if-absent is one.
"""
from __future__ import annotations

import numpy as np

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
# Design log is delta-rs as this stack runs it (docs/model/delta-log.md): per call, the `_last_checkpoint` hint's
# GET, the base LIST, two passes of GETs over the log's entries, the data file's PUT, the attempt's LIST (with no
# retry it fails there if the log moved), the put-if-absent, the post-commit update (a LIST, two GETs of its entry)
# and the cleanup LIST. One writer's calibration is cut into those steps; each step's sample runs from the end of
# the step before it to its own end, so the client's own time between two dependent requests is the next one's.

def steps(reqs) -> list[dict]:
    """One transaction's requests as the client's steps, in order: a request, or a pass of log-entry GETs in flight
    together (`pass`); kinds `hint` (GET _last_checkpoint), `list`, `pass`, `data` (the data file's PUT), `cas`."""
    out: list[dict] = []
    for q in reqs.sort_values("start_ms").itertuples():
        entry = q.kind == "get" and q.detail.endswith(".json")
        if entry and out and out[-1]["kind"] == "pass" and q.start_ms < out[-1]["end_ms"]:
            out[-1]["end_ms"] = max(out[-1]["end_ms"], q.end_ms)
            out[-1]["gets"] += 1
            continue
        kind = ("pass" if entry else "hint" if q.kind == "get" and q.detail.endswith("_last_checkpoint")
                else "data" if q.kind == "put" and "_delta_log" not in q.detail else q.kind)
        out.append({"kind": kind, "start_ms": q.start_ms, "end_ms": q.end_ms, "gets": 1,
                    "server_ms": float(getattr(q, "server_ms", float("nan")))})
    return out


# one writer's committed call, step by step (no conflict: its attempt reads no new entry)
ONE_WRITER = ("hint", "list", "pass", "pass", "data", "list", "cas", "list", "pass", "pass", "list")


def _effect(s: dict, prev_end_ms: float, step_ms: float) -> float:
    """Where in its step (from the step before it ends to its own end) a request takes effect at the server: after
    the client's gap and the request's way there, at the end of the server's own time; each way taken as half of
    the rest of its latency (the proxy's delays are the same both ways)."""
    way_ms = (s["end_ms"] - s["start_ms"] - s["server_ms"]) / 2.0
    return (s["start_ms"] - prev_end_ms + way_ms + s["server_ms"]) / step_ms


def step_samples(cal) -> dict:
    """Per model input, one sample per committed one-writer call (ms): `setup` (before the hint's GET and after the
    cleanup LIST), `get` (the hint, the post-commit update's LIST and two GETs, the cleanup LIST: a GET draw each in
    the model), `list` (the base and the attempt's LIST, effect points), `cas`, `runtime` (after the base read's
    passes to the data PUT's end), `pass` with its GETs (the base read's passes), and `effect`: where in its step
    the base LIST, the attempt's LIST and the put-if-absent take effect at the store (`_effect`)."""
    out: dict = {k: [] for k in ("setup", "get", "list", "cas", "runtime", "pass", "pass_gets", "put", "effect")}
    for r, reqs in zip(cal.raw.itertuples(), cal.per_txn):
        st = steps(reqs)
        if not r.committed or tuple(s["kind"] for s in st) != ONE_WRITER:
            continue
        ends = [s["end_ms"] for s in st]
        step = np.diff([st[0]["start_ms"]] + ends)
        out["setup"].append(st[0]["start_ms"] - r.arrival_ms + r.end_ms - ends[-1])
        out["get"] += [step[i] for i in (0, 7, 8, 9, 10)]
        out["list"] += [step[1], step[5]]
        out["cas"].append(step[6])
        out["runtime"].append(step[4])
        out["put"].append(st[4]["end_ms"] - st[4]["start_ms"])
        out["pass"] += [step[2], step[3]]
        out["pass_gets"] += [st[2]["gets"], st[3]["gets"]]
        out["effect"] += [_effect(st[i], ends[i - 1], step[i]) for i in (1, 5, 6)]
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def expected_max_ms(fit: dict, n: int) -> float:
    """The mean of the largest of n requests of a fitted kind (`fixed_ms` + LogNormal(`median_ms`, `sigma`))."""
    from scipy.stats import norm
    u = (np.arange(4000) + 0.5) / 4000.0             # E max = integral of F^-1(u) d(u^n)
    q = fit["fixed_ms"] + fit["median_ms"] * np.exp(fit["sigma"] * norm.ppf(u))
    return float(np.sum(q * n * u ** (n - 1)) / 4000.0)


def service_ms(get_fit: dict, gets, pass_ms) -> float:
    """The store's own time per GET that one writer's passes show (it serves them one at a time): each pass's
    time less what its GETs would take alone (the fitted GET's largest of n), against its GETs less one, the
    slope (Theil-Sen); at least 0.01 ms."""
    from scipy.stats import theilslopes
    extra = np.array([t - expected_max_ms(get_fit, int(n)) for n, t in zip(gets, pass_ms)])
    return max(float(theilslopes(extra, np.asarray(gets) - 1.0)[0]), 0.01)


def profile(cal, folder) -> dict:
    """The model's inputs from one writer: SeaweedFS's requests as delta-rs meets them (a provider: GET, LIST,
    the put-if-absent, the data PUT), where in its latency a LIST or
    the put-if-absent takes effect at SeaweedFS (the catalog's linearization fraction: a conditional PUT is checked
    when its upload completes, the first to finish wins, which for a log entry's few bytes is when it reaches the
    store, half a round trip before its answer), the client's setup per call, and its work between the base read and
    the commit (parquet encoding, the data PUT) as the runtime. One writer's passes grow by `pass_get_ms` an entry
    (`service_ms`): the client's own time per entry (`commit.snapshot_entry_ms`), not a store serving every
    writer's GETs one at a time (`get_service_ms`: at 25 ms each way a first attempt takes 782 ms (median) at 4
    writers and 794 at 8, as at 1, where that queue made it 1,598; docs/decisions.md, "SeaweedFS behind the
    testbed's proxy")."""
    from ..profile import lognormal, provider_file, runtime
    s = step_samples(cal)
    if len(s["cas"]) < 10:
        raise ValueError(f"delta-s3 calibration: {len(s['cas'])} committed one-writer calls in their usual steps, "
                         "need 10")
    fits = {"get": lognormal(s["get"], "get"), "list": lognormal(s["list"], "list"),
            "cas": lognormal(s["cas"], "cas"), "put": lognormal(s["put"])}
    effect = s["effect"][np.isfinite(s["effect"])]
    provider = provider_file("delta-s3", fits, folder / "provider.yaml",
                             "SeaweedFS's S3 through delta-rs 1.6, each request from the step before it ends", {})
    return {"provider": provider, "runtime": runtime(s["runtime"]),
            "pass_get_ms": round(service_ms(fits["get"], s["pass_gets"], s["pass"]), 3),
            "client_setup_ms": float(np.median(s["setup"])),
            "linearization_fraction": float(np.clip(np.median(effect), 0.0, 1.0)) if len(effect) else 0.5,
            "calls": int(len(s["cas"]))}


def model_config(profile: dict, spec) -> dict:
    """Design log (delta-rs) on the fitted provider, as the cell ran: delta-rs's 15 retries or none (its failure at
    the attempt's LIST included), the effect point, the client's setup, its time per entry and its runtime."""
    return {"design": "log", "storage": {"provider": profile["provider"]},
            "catalog": {"linearization_fraction": profile["linearization_fraction"]},
            "commit": {"max_retries": 15 if spec.retries else 0, "client_setup_ms": profile["client_setup_ms"],
                       "snapshot_entry_ms": profile["pass_get_ms"]},
            "workload": {"runtime": profile["runtime"]}}
