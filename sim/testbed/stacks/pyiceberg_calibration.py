"""PyIceberg's transactions as the model's operations (docs/model/pyiceberg.md): a one-writer calibration cell's
requests cut into what `commit.client: pyiceberg` draws, and the client's own time per attempt left over.

Each operation is calibrated as the composite PyArrowFileIO makes of it (docs/decisions.md, "PyArrowFileIO's
requests: composites"), timed by the proxy from its first request's start to its last one's end:
- a read (metadata.json, the parent's manifest list): a HEAD, then one ranged GET: the provider's `get`;
- a write (manifest, manifest list, metadata.json): a multipart upload of three requests, the part with its
  100-continue wait: the provider's `put`;
- a HEAD alone (a manifest's length after its write; the name check before metadata.json is created, answered
  404): the provider's `head`; the LIST of that name as a directory: its `list`;
- a SqlCatalog load or swap: BEGIN, the statement, ROLLBACK or COMMIT, each round trip a draw of the catalog's
  latency (design pyiceberg-postgres: the statement takes effect, the swap visible at its COMMIT);
- the job's data file (encoding it, its multipart upload and its length's HEAD), from the base load's end to that
  HEAD's end: the runtime;
- what is left of a transaction's time once these are taken out is the client's own (`commit.client_work`): its
  CPU and its interpreter between requests, fitted as a line in the table's snapshots.
"""
from __future__ import annotations

import numpy as np

from ..samples import Calibration, object_key, pg_transactions, s3_operations


def _ops(reqs):
    """A transaction's operations by role (`None` where it has none): S3 composites by object and PostgreSQL
    transactions in order, REST requests by kind."""
    s3 = s3_operations(reqs)
    by = {"meta_reads": [c for c in s3 if c.kinds == ("head", "get") and c.key.endswith(".metadata.json")],
          "list_read": [c for c in s3 if c.kinds == ("head", "get") and "/snap-" in c.key],
          "data": [c for c in s3 if c.key.endswith(".parquet")],
          "manifest": [c for c in s3 if c.key.endswith(".avro") and "/snap-" not in c.key],
          "list_write": [c for c in s3 if "/snap-" in c.key and c.kinds[0] == "mpu_start"],
          "meta_write": [c for c in s3 if c.key.endswith(".metadata.json") and "mpu_start" in c.kinds],
          "pg": pg_transactions(reqs)}
    rest = reqs[reqs["server"] == "rest"]
    by["rest_load"] = [r for r in rest.itertuples() if r.kind == "load"]
    by["rest_commit"] = [r for r in rest.itertuples() if r.kind == "commit"]
    return by


def _round_trips(c, reqs):
    """A PostgreSQL transaction as the model draws it: its span, and `ms` the sum of its round trips."""
    from types import SimpleNamespace
    pg = reqs[(reqs["server"] == "pg") & (reqs["start_ms"] >= c.start_ms) & (reqs["start_ms"] <= c.end_ms)]
    return SimpleNamespace(start_ms=c.start_ms, end_ms=c.end_ms, ms=float(pg["latency_ms"].sum()))


def _span(cs) -> float:
    return max(c.end_ms for c in cs) - min(c.start_ms for c in cs)


def decompose(cal: Calibration, sql: bool) -> list[dict]:
    """Per committed first-attempt transaction: its version (k: the table's snapshots at its base, one writer), its
    time, its runtime sample and what the model draws for the rest; `work_ms` is the remainder, `in_commit_ms` the
    client's time inside SqlCatalog's commit_table (between its requests)."""
    out = []
    for rec, reqs in zip(cal.raw.itertuples(), cal.per_txn):
        if not rec.committed or rec.attempts != 1:
            continue
        o = _ops(reqs.sort_values("start_ms"))
        data_end = max(c.end_ms for c in o["data"])
        manifest = _span(o["manifest"])
        parallel = max(manifest, _span(o["list_read"])) if o["list_read"] else manifest
        list_write = _span(o["list_write"])
        if sql:     # (a PostgreSQL transaction as its round trips: the client's time between them is its own)
            load, reload, swap = (_round_trips(c, reqs) for c in (o["pg"][0], o["pg"][-2], o["pg"][-1]))
            base_read, commit_read = o["meta_reads"][0], o["meta_reads"][-1]
            write = o["meta_write"][-1]
            runtime = data_end - base_read.end_ms
            inside = (swap.end_ms - reload.start_ms) - (reload.ms + commit_read.ms + write.ms + swap.ms)
            drawn = (load.ms + base_read.ms + parallel + list_write + reload.ms + commit_read.ms + write.ms
                     + swap.ms)
        else:
            load, post = o["rest_load"][0], o["rest_commit"][-1]
            runtime = data_end - load.end_ms
            inside = 0.0
            drawn = load.latency_ms + parallel + list_write + post.latency_ms
        total = rec.end_ms - rec.arrival_ms
        out.append({"k": int(rec.k), "total_ms": total, "runtime_ms": runtime,
                    "work_ms": total - drawn - runtime, "in_commit_ms": inside})
    return out


def storage_samples(cal: Calibration) -> dict:
    """The provider's kinds as PyArrowFileIO's composites (module doc), the data file's left out (the runtime's)."""
    reads, writes, heads, lists = [], [], [], []
    for reqs in cal.per_txn:
        s3 = reqs[reqs["server"] == "s3"].sort_values("start_ms")
        for c in s3_operations(s3):
            if c.kinds == ("head", "get"):
                reads.append(c.ms)
        keys = s3["detail"].map(object_key)
        for key, g in s3.groupby(keys):
            if key.endswith(".parquet"):
                continue
            starts, ends = g[g["kind"] == "mpu_start"], g[g["kind"] == "mpu_complete"]
            if len(starts) and len(ends):
                writes.append(float(ends["end_ms"].max() - starts["start_ms"].min()))
        for c in s3_operations(s3):
            if c.kinds == ("head",) or (c.kinds[:1] == ("head",) and c.statuses[:1] == ("404",)):
                heads.append(c.ms if c.kinds == ("head",) else _first_latency(s3, c))
        lists.extend(s3.loc[s3["kind"] == "list", "latency_ms"])
    return {k: np.asarray(v, dtype=float) for k, v in
            (("get", reads), ("put", writes), ("head", heads), ("list", lists))}


def _first_latency(s3, c) -> float:
    """The HEAD that starts a composite (the name check's, answered 404)."""
    row = s3[(s3["start_ms"] == c.start_ms) & (s3["kind"] == "head")]
    return float(row["latency_ms"].iloc[0])


def catalog_samples(cal: Calibration) -> np.ndarray:
    """SqlCatalog's PostgreSQL round trips (each statement of its loads and swaps: BEGIN, SELECT, ROLLBACK; BEGIN,
    UPDATE, COMMIT), one a sample."""
    out = []
    for reqs in cal.per_txn:
        out.extend(reqs.loc[reqs["server"] == "pg", "latency_ms"])
    return np.asarray(out, dtype=float)


def client_work(rows: list[dict], sql: bool) -> dict:
    """`commit.client_work` from the transactions' remainders: a least-squares line in the table's snapshots (its
    first transaction left out: the writer's first append pays one-time costs), floored at 0, and the spread of the
    remainders about it as a lognormal factor's sigma (a robust one: 1.4826 x the median absolute deviation of their
    logs); with SqlCatalog the share spent inside commit_table."""
    k = np.array([r["k"] for r in rows if r["k"] > 0], dtype=float)
    w = np.array([r["work_ms"] for r in rows if r["k"] > 0], dtype=float)
    slope, base = np.polyfit(k, w, 1) if len(k) > 2 else (0.0, float(np.median(w)))
    if slope < 0:
        slope, base = 0.0, float(np.median(w))
    line = max(float(base), 0.0) + slope * k
    ok = (line > 0) & (w > 0)
    logs = np.log(w[ok] / line[ok])
    sigma = 1.4826 * float(np.median(np.abs(logs - np.median(logs)))) if ok.sum() > 2 else 0.0
    out = {"base_ms": round(max(float(base), 0.0), 3), "per_version_ms": round(float(slope), 4),
           "sigma": round(sigma, 4)}
    if sql:
        inside = np.median([r["in_commit_ms"] for r in rows])
        out["commit_share"] = round(float(min(max(inside / max(np.median(w), 1e-9), 0.0), 1.0)), 4)
    return out


def _at_version_0(k: np.ndarray, ms: np.ndarray, least: float) -> tuple[float, np.ndarray]:
    """A server step's growth with the table's snapshots (Theil-Sen's slope, robust to a loaded machine's outliers;
    at least `least`, at least 0) and its samples brought to version 0 by their line's ratio (they stay positive)."""
    from scipy.stats import theilslopes
    slope, intercept = theilslopes(ms, k)[:2]
    slope = max(float(slope), least, 0.0)
    base = max(float(np.median(ms - slope * k)), 0.01)
    return slope, ms * base / (base + slope * k)


def rest_samples(cal: Calibration, heads: np.ndarray) -> dict:
    """SeaweedFS's REST requests: the client's round trip to it (the proxy's latency less the server's own time,
    `server_ms`) and the server's own time per load and per commit beyond a load, each a line in the table's
    snapshots (its slope `*_per_version`, the samples brought to version 0 for the lognormal's fit:
    `_at_version_0`); the commit's beyond its load is that share of each POST's own time (the two are not timed
    apart). Without
    `server_ms` in the log (an older run) the round trip is the proxy's, as a HEAD alone shows it, and the server's
    times are the REST requests' medians beyond it (constants, no growth)."""
    rows = []
    for rec, reqs in zip(cal.raw.itertuples(), cal.per_txn):
        for q in reqs[reqs["server"] == "rest"].itertuples():
            rows.append((rec.k, q.kind, q.latency_ms, getattr(q, "server_ms", np.nan)))
    k, kind, lat, own = (np.array(c) for c in zip(*rows))
    load, commit = kind == "load", kind == "commit"
    if np.all(np.isfinite(own[load | commit])):
        net = (lat - own)[load | commit]
        b_load, at0_load = _at_version_0(k[load], own[load], 0.0)
        b_total, at0_commit = _at_version_0(k[commit], own[commit], b_load)
        # the POST's own time less its load's, as the same share of each sample (the two are not timed apart)
        share = max(1.0 - float(np.median(at0_load)) / float(np.median(at0_commit)), 0.01)
        return {"network": net, "load": at0_load, "commit": share * at0_commit,
                "load_per_version": round(b_load, 4), "commit_per_version": round(b_total - b_load, 4)}
    rt = float(np.median(heads))
    own_load = max(float(np.median(lat[load])) - rt, 0.01)
    own_commit = max(float(np.median(lat[commit])) - rt - own_load, 0.01)
    return {"network": heads, "load": own_load, "commit": own_commit, "load_per_version": 0.0,
            "commit_per_version": 0.0}
