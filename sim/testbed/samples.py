"""What one writer's run shows, as samples of the model's operations: the proxy's log of a calibration cell (one
writer) cut into the requests each transaction made, grouped the way the client makes them.

- A PostgreSQL transaction (BEGIN ... COMMIT or ROLLBACK, or an autocommit statement): its round trips, each a
  sample of the database's round trip, and the whole as a sample of the operation it is (a load, a swap).
- An object's requests in a transaction: a read (a HEAD, then a GET: PyArrowFileIO) or a write (a PUT; a
  multipart upload's three requests: pyarrow; with a HEAD and a LIST before it when the client checks that the name
  is free), each timed from its first request's start to its last one's end.
- A transaction's phases: from its start to its commit call (the client's work before the commit, its base read
  included), and its CPU.
Sizes are the bytes the client sent (`bytes_out`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import numpy as np
import pandas as pd


@dataclass
class Composite:
    """One operation made of requests: their kinds in order, its start and end (ms), its bytes sent."""
    kinds: tuple
    start_ms: float
    end_ms: float
    bytes_out: int = 0
    key: str = ""
    statuses: tuple = ()

    @property
    def ms(self) -> float:
        return self.end_ms - self.start_ms


def object_key(detail: str) -> str:
    """An S3 request's object (its path, without the query)."""
    parts = detail.split(" ", 1)
    return urlsplit(parts[1] if len(parts) > 1 else parts[0]).path


def per_transaction(requests: pd.DataFrame, raw: pd.DataFrame) -> list[pd.DataFrame]:
    """Each writer transaction's requests (its writer's, started between its start and its end), in order."""
    out = []
    reqs = requests[requests["writer"] >= 0].sort_values("start_ms")
    by_writer = {w: g for w, g in reqs.groupby("writer")}
    for r in raw.sort_values(["writer", "k"]).itertuples():
        g = by_writer.get(r.writer, reqs.iloc[:0])
        out.append(g[(g["start_ms"] >= r.arrival_ms) & (g["start_ms"] <= r.end_ms)])
    return out


def pg_transactions(reqs: pd.DataFrame) -> list[Composite]:
    """PostgreSQL requests grouped into transactions: BEGIN to COMMIT/ROLLBACK (a statement outside one: alone)."""
    out, cur = [], []
    for q in reqs[reqs["server"] == "pg"].itertuples():
        cur.append(q)
        if q.kind != "begin" and (q.kind in ("commit", "rollback") or cur[0].kind != "begin"):
            out.append(Composite(tuple(c.kind for c in cur), cur[0].start_ms, cur[-1].end_ms,
                                 sum(c.bytes_out for c in cur), statuses=tuple(c.status for c in cur)))
            cur = []
    return out


def s3_operations(reqs: pd.DataFrame) -> list[Composite]:
    """S3 requests grouped by object into reads (HEAD then GET), writes (PUT; multipart start, part, complete; with
    a HEAD answered 404 and a LIST of the name just before, when the client checks the name is free) and the
    rest, each alone."""
    s3 = reqs[reqs["server"] == "s3"]
    ops: list[Composite] = []
    open_by_key: dict = {}
    for q in s3.itertuples():
        key = object_key(q.detail)
        if q.kind == "list":
            key = _listed_key(q.detail) or key
        cur = open_by_key.setdefault(key, [])
        cur.append(q)
        kinds = [c.kind for c in cur]
        done = (q.kind in ("get", "put", "cas", "mpu_complete", "delete") or
                (q.kind == "head" and q.status != "404" and _head_alone(s3, q)))
        if done:
            ops.append(Composite(tuple(kinds), cur[0].start_ms, cur[-1].end_ms, sum(c.bytes_out for c in cur), key,
                                 tuple(c.status for c in cur)))
            del open_by_key[key]
    for key, cur in open_by_key.items():
        ops.append(Composite(tuple(c.kind for c in cur), cur[0].start_ms, cur[-1].end_ms,
                             sum(c.bytes_out for c in cur), key, tuple(c.status for c in cur)))
    return sorted(ops, key=lambda c: c.start_ms)


def _listed_key(detail: str) -> str:
    """The object a LIST of `prefix=<key>/` checks (pyarrow's test of a name for a directory)."""
    from urllib.parse import parse_qs
    url = urlsplit(detail.split(" ", 1)[-1])
    prefix = parse_qs(url.query).get("prefix", [""])[0]
    bucket = url.path.strip("/")
    return f"/{bucket}/{prefix.rstrip('/')}" if prefix.endswith("/") else ""


def _head_alone(s3: pd.DataFrame, q) -> bool:
    """A HEAD answered 200 that no GET of its object follows at once (a size check after a write)."""
    later = s3[(s3["start_ms"] > q.start_ms) & (s3["start_ms"] <= q.end_ms + 50.0)]
    key = object_key(q.detail)
    return not any((r.kind == "get" and object_key(r.detail) == key) for r in later.itertuples())


@dataclass
class Calibration:
    """A calibration cell read back: its transactions (raw writer records) and each one's requests."""
    raw: pd.DataFrame
    requests: pd.DataFrame
    per_txn: list = field(default_factory=list)
    # the S3 server's lock per directory marker, measured beside the calibration (`sim.testbed.marker_lock`; None:
    # not measured)
    marker_lock: dict | None = None

    @classmethod
    def read(cls, folder, marker_lock: dict | None = None) -> "Calibration":
        from pathlib import Path
        folder = Path(folder)
        raw = pd.concat([pd.read_parquet(p) for p in sorted(folder.glob("writer-*.parquet"))], ignore_index=True)
        raw = raw.sort_values(["writer", "k"]).reset_index(drop=True)
        requests = pd.read_parquet(folder / "requests.parquet")
        return cls(raw, requests, per_transaction(requests, raw), marker_lock)

    def round_trips(self, server: str, kinds=None) -> np.ndarray:
        """Every request of a server (of these kinds) in the writer's transactions, as latencies."""
        reqs = pd.concat(self.per_txn) if self.per_txn else self.requests.iloc[:0]
        sel = reqs["server"] == server
        if kinds is not None:
            sel &= reqs["kind"].isin(kinds)
        return reqs.loc[sel, "latency_ms"].to_numpy()


def operation_samples(cal: Calibration) -> dict:
    """Every operation of the calibration cell's transactions by what it is, as latency samples (ms): PostgreSQL
    transactions by their statements (`pg:begin+select+rollback`), a PostgreSQL round trip (`pg:rt`), S3
    operations by their requests (`s3:head+get`, `s3:mpu_start+put_part+mpu_complete`, `s3:cas`), REST requests
    (`rest:load`, `rest:commit`), and each kind's server time (`server:<server>:<kind>`, where logged)."""
    out: dict = {}
    for reqs in cal.per_txn:
        for c in pg_transactions(reqs):
            out.setdefault("pg:" + "+".join(c.kinds), []).append(c.ms)
        for c in s3_operations(reqs):
            out.setdefault("s3:" + "+".join(c.kinds) + ("" if c.statuses[-1:] != ("404",) else ":404"),
                           []).append(c.ms)
        for q in reqs.itertuples():
            if q.server == "pg":
                out.setdefault("pg:rt", []).append(q.latency_ms)
            if q.server == "rest":
                out.setdefault(f"rest:{q.kind}", []).append(q.latency_ms)
            sm = getattr(q, "server_ms", float("nan"))
            if sm == sm:
                out.setdefault(f"server:{q.server}:{q.kind}", []).append(sm)
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}
