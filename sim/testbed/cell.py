"""One measured cell: a stack, N writers x M commits, a delay, the client's retries off or on.

The servers are up (`servers`); a cell starts the proxy with a port per (server, writer), creates fresh tables
through it, starts the writers, opens the barrier with the CPU meters, waits, reads the tables back, and turns the
writers' records and the proxy's log into the simulator's record schema. Nothing lost or doubled: every commit a
writer was told succeeded is in its table once, with all its rows, and nothing else is.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .cpu import CpuMeter
from .proxy import Delay, Proxy, Route
from .servers import ServerError
from .stacks import SERVERS, stack
from .writers import Writers, WriterSpec

PROTOCOL = {"pg": "pg", "s3": "s3", "rest": "rest"}


@dataclass(frozen=True)
class CellSpec:
    stack: str
    writers: int
    commits: int
    delay: Delay
    retries: bool
    tables: int = 1
    zipf_alpha: float = 1.5
    payload_bytes: int = 16384
    rows_per_commit: int = 10
    seed: int = 1
    rep: int = 0

    def label(self) -> str:
        return (f"{self.stack} writers={self.writers} delay={self.delay.label()} "
                f"retries={'default' if self.retries else 'off'} rep={self.rep}")


@dataclass
class CellResult:
    spec: CellSpec
    records: pd.DataFrame
    requests: pd.DataFrame
    cpu: dict
    conservation: dict
    extra: dict = field(default_factory=dict)


def _routes(servers, names, writers: int) -> list[Route]:
    return [Route(name, PROTOCOL[name], servers.upstream(name), w) for name in names for w in range(-1, writers)]


def _env(spec: CellSpec, servers, proxy: Proxy, routes: list[Route], tables: list[str], tag: str,
         workdir: Path) -> dict:
    by_server: dict = {}
    for i, r in enumerate(routes):
        by_server.setdefault(r.server, {})[str(r.writer)] = list(proxy.address(i))
    return {"routes": by_server, "tables": tables, "retries": spec.retries, "payload_bytes": spec.payload_bytes,
            "rows_per_commit": spec.rows_per_commit, "seed": spec.seed, "tag": tag, "workdir": str(workdir),
            **servers.credentials()}


def run_cell(spec: CellSpec, servers, workdir: Path, tag: str, timeout_s: float = 3600.0) -> CellResult:
    """Measure one cell in `workdir` (its writers' logs, records and the proxy's log stay there)."""
    workdir.mkdir(parents=True, exist_ok=True)
    mod = stack(spec.stack)
    names = SERVERS[spec.stack]
    tables = [f"{tag}_t{i}" for i in range(spec.tables)]
    routes = _routes(servers, names, spec.writers)
    with Proxy(routes, spec.delay, spec.seed * 1000 + spec.rep, workdir / "requests.parquet") as proxy:
        env = _env(spec, servers, proxy, routes, tables, tag, workdir)
        mod.setup(env, tables)
        specs = [WriterSpec(spec.stack, env, w, spec.commits, tuple(tables), spec.zipf_alpha, spec.seed * 1000 +
                            spec.rep, str(workdir / f"writer-{w}.parquet")) for w in range(spec.writers)]
        writers = Writers(specs, workdir)
        meter = CpuMeter({"servers": servers.pids(), "proxy": [proxy.pid]})
        try:
            writers.start()
            t0 = writers.release()
            meter.start()
            paths = writers.join(timeout_s)
            cpu = meter.stop()
        finally:
            writers.stop()
        check = mod.verify(env, tables)
    requests = pd.read_parquet(workdir / "requests.parquet")
    raw = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    # time 0: the barrier opened (a writer may have started its first commit before the parent woke up)
    records = to_records(raw, requests, spec, min(t0, float(raw["arrival_ms"].min())), mod)
    cpu["cpu_writers_s"] = float(raw["cpu_ms"].sum() / 1000.0)
    cpu["wait_writers_s"] = float(raw["cpu_wait_ms"].sum() / 1000.0)
    cpu["commit_calls_s"] = float((raw["end_ms"] - raw["arrival_ms"]).sum() / 1000.0)
    result = CellResult(spec, records, requests, cpu, conservation(raw, check, tables, spec.rows_per_commit))
    (workdir / "cell.json").write_text(json.dumps({"spec": {**asdict(spec), "delay": asdict(spec.delay)},
                                                   "cpu": cpu, "conservation": result.conservation}, indent=1))
    records.to_parquet(workdir / "transactions.parquet")
    return result


def conservation(raw: pd.DataFrame, check: dict, tables: list[str], rows_per_commit: int) -> dict:
    """Whether each table holds exactly the commits its writers were told succeeded: one version each, each
    with all its rows, and nothing else (lost: told committed, not there; doubled: there twice, or there and
    told it failed)."""
    told = {t: Counter() for t in tables}
    for r in raw[raw["committed"]].itertuples():
        told[tables[r.table]][(r.writer, r.k)] += rows_per_commit
    lost = doubled = 0
    versions_ok = True
    for t in tables:
        found = check[t]["keys"]
        lost += sum(1 for key in told[t] if found.get(key, 0) < rows_per_commit)
        doubled += sum(1 for key, n in found.items() if n > told[t].get(key, 0))
        versions_ok &= check[t]["versions"] == len(told[t])
    return {"ok": bool(lost == 0 and doubled == 0 and versions_ok), "lost": lost, "doubled": doubled,
            "versions": {t: int(check[t]["versions"]) for t in tables},
            "committed": {t: len(told[t]) for t in tables}}


def _counts(requests: pd.DataFrame, raw: pd.DataFrame) -> pd.DataFrame:
    """Each transaction's requests by kind (those its writer started between its arrival and its end)."""
    out = []
    by_writer = {w: g.sort_values("start_ms") for w, g in requests[requests["writer"] >= 0].groupby("writer")}
    for r in raw.itertuples():
        g = by_writer.get(r.writer)
        if g is None:
            out.append(Counter())
            continue
        lo, hi = np.searchsorted(g["start_ms"].to_numpy(), [r.arrival_ms, r.end_ms])
        out.append(Counter((g["server"].to_numpy()[lo:hi] + ":" + g["kind"].to_numpy()[lo:hi]).tolist()))
    return out


def to_records(raw: pd.DataFrame, requests: pd.DataFrame, spec: CellSpec, t0: float, mod) -> pd.DataFrame:
    """The writers' transactions in the simulator's record schema (docs/FORMATS.md), times from the barrier's
    opening; the columns the testbed adds (`cpu_ms`, `cpu_wait_ms`, `message`, the request counts by kind) after
    them."""
    from ..records import RECORD_COLUMNS
    raw = raw.sort_values(["arrival_ms", "writer"]).reset_index(drop=True)
    counts = _counts(requests, raw)
    attempts = raw["attempts"].to_numpy()
    committed = raw["committed"].to_numpy()
    if hasattr(mod, "attempts"):       # retries inside compiled code: counted from the log
        attempts = np.array([mod.attempts(bool(ok), c, spec.retries) for ok, c in zip(committed, counts)])
    n = len(raw)

    def count(kinds):
        return np.array([sum(c.get(k, 0) for k in kinds) for c in counts], dtype=np.int64)
    cols = {
        "txn": np.arange(n), "table": raw["table"].to_numpy(), "table_rank": raw["table"].to_numpy() + 1,
        "op": "fa", "arrival_ms": raw["arrival_ms"] - t0,
        "runtime_end_ms": raw["commit_start_ms"] - t0, "end_ms": raw["end_ms"] - t0,
        "outcome": np.where(committed, "committed", "aborted"), "reason": raw["reason"].to_numpy(),
        "attempts": attempts, "catalog_conflicts": 0, "table_conflicts": attempts - committed,
        "manifest_lists_read": 0, "catalog_reads": count(("pg:select", "rest:load")),
        "gets": count(("s3:get", "s3:head")), "puts": count(("s3:put", "s3:cas", "s3:put_part", "s3:mpu_start")),
        "cases": attempts, "backoff_ms": np.nan, "in_window": True, "throttled": 0, "writer": raw["writer"],
        "due_ms": np.nan, "missed": 0, "lists": count(("s3:list",)), "deletes": count(("s3:delete",)),
        "tables": 1, "landed": committed.astype(np.int64),
    }
    df = pd.DataFrame({c: cols.get(c, 0) for c in RECORD_COLUMNS})
    df["cpu_ms"] = raw["cpu_ms"].to_numpy()
    df["cpu_wait_ms"] = raw["cpu_wait_ms"].to_numpy()
    df["k"] = raw["k"].to_numpy()
    df["message"] = raw["message"].to_numpy()
    df["requests"] = [json.dumps(dict(sorted(c.items()))) for c in counts]
    return df


def check_spec(spec: CellSpec) -> None:
    if spec.writers < 1 or spec.commits < 1 or spec.tables < 1:
        raise ServerError(f"a cell needs writers, commits and tables >= 1: {spec.label()}")
