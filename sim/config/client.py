"""The rules of the client's commit loop (`commit.client`, `commit.client_work`; docs/model/pyiceberg.md) and of a
REST server whose table state is local to it (`catalog.server.load_latency`, `commit_latency`: SeaweedFS's)."""
from __future__ import annotations

import dataclasses

from ..schema import ConfigError
from .types import ClientWork, Commit, Config, LatencySpec, Server


def _latency(spec: LatencySpec | None, path: str) -> None:
    if spec is not None and (spec.median_ms is None or spec.sigma is None):
        raise ConfigError(f"{path}.{'median_ms' if spec.median_ms is None else 'sigma'}",
                          "required: a latency is a lognormal (median_ms, sigma) plus fixed_ms")


def check_local_server(srv: Server, path: str = "catalog.server") -> None:
    """A server whose table state is local (SeaweedFS's filer entry): both its step latencies, and none of a
    database server's keys (no GET of metadata.json, no re-read, no pool, no row lock held past a statement)."""
    _latency(srv.load_latency, f"{path}.load_latency")
    _latency(srv.commit_latency, f"{path}.commit_latency")
    if srv.variant == "seaweedfs" and srv.load_latency is None:
        raise ConfigError(f"{path}.load_latency", "SeaweedFS's own time per load (and commit_latency, its commit's up "
                          "to its CAS) has no public figure: give or calibrate them (sim testbed)")
    if (srv.load_latency is None) != (srv.commit_latency is None):
        missing = "commit_latency" if srv.commit_latency is None else "load_latency"
        raise ConfigError(f"{path}.{missing}", "a server with local steps needs both load_latency and commit_latency")
    if srv.load_latency is None:
        for name in ("load_per_version_ms", "commit_per_version_ms"):
            if getattr(srv, name) is not None:
                raise ConfigError(f"{path}.{name}", "only with a server whose steps are local (load_latency)")
        return
    for name, wrong in (("metadata_get", srv.metadata_get), ("reread_before_cas", srv.reread_before_cas),
                        ("pool_connections", srv.pool_connections is not None),
                        ("read_pool_connections", srv.read_pool_connections is not None),
                        ("acquire_timeout_ms", srv.acquire_timeout_ms is not None),
                        ("lock_scope", srv.lock_scope not in (None, "statement"))):
        if wrong:
            raise ConfigError(f"{path}.{name}", "not with a server whose steps are local (load_latency): it reads "
                              "no metadata.json, re-reads nothing and has no database pool or row lock; remove it")


def resolve_client(cfg: Config) -> Commit:
    """PyIceberg's loop: a FastAppend's, on a service catalog (a REST server, or SqlCatalog's row with its load in
    commit_table, `reread_before_cas`); its first attempt is against the base its job loaded (first_attempt stale).
    `client_work.commit_share` is spent after such a load only."""
    commit, cat = cfg.commit, cfg.catalog
    if commit.client_work.commit_share > 0 and not (commit.client == "pyiceberg" and commit.reread_before_cas):
        raise ConfigError("commit.client_work.commit_share", "only PyIceberg's SqlCatalog checks its requirements in "
                          "its commit call (commit.client pyiceberg with reread_before_cas); remove it")
    if commit.client_work != ClientWork() and commit.protocol != "rewrite":
        raise ConfigError("commit.client_work", "Iceberg's clients' (commit.protocol rewrite); remove it")
    if commit.client == "java":
        return commit
    path = "commit.client"
    server = cat.server != Server()
    w = cfg.workload
    for wrong, why in (
            (commit.protocol != "rewrite" or commit.shape != "table", "commit.protocol rewrite and commit.shape table"),
            (cat.backend != "service" or cat.scope != "table", "a service catalog of one row a table (catalog.backend "
                                                               "service, scope table: design pyiceberg-sql or rest)"),
            (not server and not commit.reread_before_cas, "SqlCatalog's load in commit_table: "
                                                          "commit.reread_before_cas true (design pyiceberg-sql)"),
            (not server and cat.table_metadata_inlined, "its own metadata.json: no catalog.table_metadata_inlined"),
            (server and commit.reread_before_cas, "no commit.reread_before_cas with a REST server (it checks)"),
            (commit.metadata_read_on_failure, "no read after a failed attempt: no commit.metadata_read_on_failure"),
            (w.fast_append_ratio != 1.0 or w.vo_conflict_probability > 0, "FastAppends only (its fast append)"),
            (w.multi_table.tables > 1, "one table a commit"),
            (cfg.faults.commit.lost_answer + cfg.faults.commit.server_error > 0, "no faults (not modelled)"),
            (cfg.lock.variant is not None or cat.file_lists_inlined, "no lock, not DuckLake")):
        if wrong:
            raise ConfigError(path, f"pyiceberg models PyIceberg's fast append and needs {why}")
    from .resolve import operations_on
    if operations_on(cfg):
        raise ConfigError(path, "pyiceberg models PyIceberg's fast append: no workload.operations or maintenance")
    return dataclasses.replace(commit, first_attempt="stale")
