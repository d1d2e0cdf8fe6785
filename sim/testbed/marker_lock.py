"""The S3 server's answer to two PUTs of one directory marker close in time: its marker lock's window and poll.

PyIceberg's cleanup after a failed commit PUTs the empty `metadata/` marker after each file it deletes, and the
losers of a round clean up together. SeaweedFS 4.48's S3 gateway writes a marker under a lock per object on its filer
(`withObjectWriteLock`); a PUT that finds the lock held is told "lock already owned", sleeps a second
(`LiveLock.AttemptToLock`, weed/cluster/lock_client.go) and asks again. The model (`sim.model.pyiceberg`) needs two
figures of the server, measured here alone, with no proxy and no table format:
- the window: from one thread, two pre-signed PUTs of one marker on open connections, the second `offset` ms after
  the first, at offsets 0, step, ..., max; the share of pairs with an answer over `LATE_MS` at each offset, and the
  area under that curve (trapezoids): two PUTs closer in time than it collide, one waits;
- the poll: the late answers' median less the on-time answers' median.
A server with no such lock answers none late: window 0, and the model has no marker lock.
"""
from __future__ import annotations

import http.client
import selectors
import statistics
import time
from urllib.parse import urlsplit

LATE_MS = 500.0
BUCKET = "warehouse"            # iceberg-sql's bucket (created if absent), under a prefix of the probe's own
PREFIX = "sim-marker-probe/"


def _answer_times(socks: dict) -> dict:
    """When each socket first has its answer to read (perf_counter), whichever answers first."""
    sel = selectors.DefaultSelector()
    for sock, name in socks.items():
        sel.register(sock, selectors.EVENT_READ, name)
    answered = {}
    try:
        while len(answered) < len(socks):
            events = sel.select(timeout=30.0)
            if not events:
                raise TimeoutError("a marker PUT had no answer in 30 s")
            for key, _ in events:
                answered[key.data] = time.perf_counter()
                sel.unregister(key.fileobj)
    finally:
        sel.close()
    return answered


def _presigned(s3, key: str) -> tuple[str, bytes]:
    """A pre-signed PUT of `key` with an empty body: its URL, and the request as raw bytes."""
    url = s3.generate_presigned_url("put_object", Params={"Bucket": BUCKET, "Key": key}, ExpiresIn=600)
    u = urlsplit(url)
    return url, f"PUT {u.path}?{u.query} HTTP/1.1\r\nHost: {u.netloc}\r\nContent-Length: 0\r\n\r\n".encode()


def pair_ms(url: str, first: bytes, second: bytes, offset_ms: float) -> tuple[float, float]:
    """Send `first`, spin `offset_ms`, send `second` (to the host of `url`, http or https, on connections opened
    first): each answer's latency in ms from its own send."""
    u = urlsplit(url)
    conn = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
    a, b = conn(u.hostname, u.port, timeout=30), conn(u.hostname, u.port, timeout=30)
    a.connect()
    b.connect()
    try:
        t_a = time.perf_counter()
        a.sock.sendall(first)
        while (time.perf_counter() - t_a) * 1000.0 < offset_ms:
            pass
        t_b = time.perf_counter()
        b.sock.sendall(second)
        answered = _answer_times({a.sock: "a", b.sock: "b"})
        for sock in (a.sock, b.sock):
            r = http.client.HTTPResponse(sock)
            r.begin()
            r.read()
            if r.status != 200:
                raise RuntimeError(f"a marker PUT was answered {r.status}")
        return (answered["a"] - t_a) * 1000.0, (answered["b"] - t_b) * 1000.0
    finally:
        a.close()
        b.close()


def measure(s3, rounds: int = 40, step_ms: float = 0.25, max_ms: float = 3.0, log=None) -> dict:
    """The marker lock of the server behind boto3 client `s3`: `window_ms`, `poll_ms` (NaN with no late answer),
    the pairs measured and the curve (offset, share of pairs late)."""
    if rounds < 1 or not 0.0 < step_ms <= max_ms:
        raise ValueError(f"marker lock probe: rounds {rounds}, step {step_ms} ms, max {max_ms} ms")
    try:
        s3.create_bucket(Bucket=BUCKET)
    except (s3.exceptions.BucketAlreadyOwnedByYou, s3.exceptions.BucketAlreadyExists):
        pass
    offsets = [i * step_ms for i in range(int(round(max_ms / step_ms)) + 1)]
    curve, late, on_time = [], [], []
    try:
        for offset in offsets:
            n_late = _offset(s3, offset, rounds, late, on_time)
            curve.append((offset, n_late / rounds))
            if log:
                log(f"marker lock: offset {offset:.2f} ms, {n_late}/{rounds} pairs late")
    finally:
        _remove(s3)
    window = sum(step_ms * (a[1] + b[1]) / 2.0 for a, b in zip(curve, curve[1:]))
    poll = statistics.median(late) - statistics.median(on_time) if late and on_time else float("nan")
    return {"window_ms": window, "poll_ms": poll, "pairs": rounds * len(offsets), "late": len(late),
            "late_median_ms": statistics.median(late) if late else float("nan"),
            "on_time_median_ms": statistics.median(on_time) if on_time else float("nan"),
            "rounds": rounds, "step_ms": step_ms, "max_ms": max_ms, "curve": curve}


def _offset(s3, offset: float, rounds: int, late: list, on_time: list) -> int:
    """`rounds` pairs at one offset, each of a fresh marker: the pairs with a late answer; each answer's latency
    appended to `late` or `on_time`."""
    n_late = 0
    for r in range(rounds):
        key = f"{PREFIX}o{offset:.3f}-r{r}-{time.time_ns()}/metadata/"
        s3.put_object(Bucket=BUCKET, Key=f"{key}file", Body=b"x")     # its directory holds a file, as PyIceberg's
        url, first = _presigned(s3, key)
        la, lb = pair_ms(url, first, _presigned(s3, key)[1], offset)
        n_late += max(la, lb) > LATE_MS
        for x in (la, lb):
            (late if x > LATE_MS else on_time).append(x)
    return n_late


def _remove(s3) -> None:
    """The probe's objects, deleted (its markers and files under PREFIX)."""
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=PREFIX):
        keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if keys:
            s3.delete_objects(Bucket=BUCKET, Delete={"Objects": keys, "Quiet": True})


def s3_client(servers):
    """A boto3 client of the testbed's S3 server (`servers_for`'s: ours or the user's), reached directly, not
    proxied, that sends each request once."""
    import boto3
    from botocore.config import Config

    from .servers import REGION
    cred = servers.credentials()
    return boto3.client("s3", endpoint_url=servers.fs.s3_url, aws_access_key_id=cred["s3_access_key"],
                        aws_secret_access_key=cred["s3_secret_key"], region_name=REGION,
                        config=Config(retries={"max_attempts": 1}, signature_version="s3v4"))


def measure_servers(servers, rounds: int = 40, log=None, **kw) -> dict:
    """`measure` on the testbed's S3 server (`s3_client`)."""
    return measure(s3_client(servers), rounds, log=log, **kw)


def provider_keys(probe: dict | None) -> dict:
    """The provider file's keys for a measured marker lock (none measured, or none found: no keys)."""
    if not probe or not probe["window_ms"] > 0.0 or not probe["poll_ms"] > 0.0:
        return {}
    return {"marker_lock_window_ms": round(probe["window_ms"], 4), "marker_lock_poll_ms": round(probe["poll_ms"], 2)}
