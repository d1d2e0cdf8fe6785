"""Cross-field rules: what a choice fills in (a variant's defaults, a distribution's keys) and which keys it leaves
unread (an error naming the key's path, so that a config says only what runs). `_resolve` applies them all."""
from __future__ import annotations

import dataclasses

from ..providers import ProviderError, profile_of
from ..schema import ConfigError
from .defaults import (CHECKPOINT_INTERVAL, EXPONENTIAL_RESEND, EXPONENTIAL_RETRY, HMS_CHECK_LOCK_MUTEX_SHARE,
                       LINEAR_RETRY, LOCK_VARIANTS, LOG_STORE_DEFAULTS, RESEND_CLIENTS, SERVER_VARIANTS, SERVERLESS)
from .client import check_local_server, resolve_client
from .faults import resolve_faults
from .provider_identity import resolve_provider_sha256
from .round_trips import resolve_round_trips
from .trace import resolve_trace
from .types import (Catalog, Commit, Config, InterArrival, Job, Lock, LogStore, Metadata, Retry, RetryPolicy,
                    Server, Workload, Writers)


def _require(obj, path: str, needed: tuple[str, ...], forbidden: tuple[str, ...], why: str):
    for name in needed:
        if getattr(obj, name) is None:
            raise ConfigError(f"{path}.{name}", f"required when {why}")
    for name in forbidden:
        if getattr(obj, name) is not None:
            raise ConfigError(f"{path}.{name}", f"not used when {why}; remove it")


def _with_defaults(obj, **defaults):
    missing = {k: v for k, v in defaults.items() if getattr(obj, k) is None}
    return dataclasses.replace(obj, **missing) if missing else obj


def _resolve_retry(p: RetryPolicy, path: str, exponential: dict = EXPONENTIAL_RETRY) -> RetryPolicy:
    exp = ("base_ms", "factor", "max_ms", "jitter")
    if p.policy in RESEND_CLIENTS:
        raise ConfigError(f"{path}.policy", f"{p.policy} is a storage client's resend policy "
                          "(storage.throttle_retry only)")
    _require(p, path, (), ("max_resends", "deadline_ms"), "the policy is a commit's retry (storage.throttle_retry "
             "only)")
    if p.policy == "immediate":
        _require(p, path, (), ("delay_ms",) + exp, "policy is immediate")
    elif p.policy == "fixed":
        _require(p, path, ("delay_ms",), exp, "policy is fixed")
    elif p.policy == "linear":
        _require(p, path, ("base_ms",), ("delay_ms", "factor"), "policy is linear")
        p = _with_defaults(p, **LINEAR_RETRY)
    else:
        _require(p, path, (), ("delay_ms",), "policy is exponential")
        # defaults: Iceberg's (100 ms doubling to 60 s, up to 10% jitter) unless the caller gives others
        p = _with_defaults(p, **exponential)
    return p


def _resolve_resend(p: RetryPolicy, path: str = "storage.throttle_retry") -> RetryPolicy:
    """A storage client's resends: a named client's backoff with its defaults (its jitter is its own), or a
    retry policy (exponential: 1 s doubling to 32 s, jitter 1.0) with no limit unless one is given."""
    if p.policy not in RESEND_CLIENTS:
        limits = {"max_resends": p.max_resends, "deadline_ms": p.deadline_ms}
        p = _resolve_retry(dataclasses.replace(p, max_resends=None, deadline_ms=None), path, EXPONENTIAL_RESEND)
        return dataclasses.replace(p, **limits)
    _require(p, path, (), ("delay_ms", "jitter"), f"policy is {p.policy} (the client's own jitter)")
    return _with_defaults(p, **RESEND_CLIENTS[p.policy])


def _resolve_commit(cfg: Config) -> Commit:
    """The log protocol: one log per table, its checkpoint keys filled in; rewrite reads neither."""
    cat, commit = cfg.catalog, cfg.commit
    if commit.protocol != "log":
        _require(commit, "commit", (), ("checkpoint_interval", "checkpoint_bytes"), "protocol is rewrite")
        _log_only(commit)
        if commit.shape == "object":
            # the microbenchmark's one read is its conditional write's base: design file's re-read does not apply
            commit = dataclasses.replace(commit, reread_before_cas=False)
        return commit
    if commit.log_cleanup == "none" and commit.log_entries_at_start:
        raise ConfigError("commit.log_entries_at_start", "not used when log_cleanup is none; remove it")
    if commit.shape == "object":
        # the microbenchmark reads no snapshot and writes no checkpoint: a design's client switches do not apply
        commit = dataclasses.replace(commit, **{f: getattr(Commit, f) for f in LOG_CLIENT_KEYS})
    if cat.scope != "table":
        raise ConfigError("catalog.scope", "commit.protocol log keeps one log per table and no catalog object: "
                          "set catalog.scope: table (or design: log)")
    if cat.table_metadata_inlined:
        raise ConfigError("catalog.table_metadata_inlined", "not used with commit.protocol log; remove it")
    if commit.metadata_read_on_failure:
        raise ConfigError("commit.metadata_read_on_failure", "not used with commit.protocol log; remove it")
    # delta-rs: a checkpoint every 100 versions; its size as large as the table metadata by default
    return _with_defaults(commit, checkpoint_interval=CHECKPOINT_INTERVAL, checkpoint_bytes=cfg.io.table_metadata_bytes)


# the log's client switches (docs/MODEL.md "Delta clients")
LOG_CLIENT_KEYS = ("snapshot_update", "snapshot_max_parallel", "checkpoint_rebuild", "log_cleanup",
                   "log_entries_at_start", "snapshot_passes", "last_checkpoint_hint", "checkpoint_read_gets",
                   "post_commit_update", "fail_fast_without_retries", "client_setup_ms",
                   "snapshot_entry_ms")


def _log_only(commit: Commit) -> None:
    """The log's own switches, which the rewrite protocol does not read, left at their defaults."""
    for name in LOG_CLIENT_KEYS:
        if getattr(commit, name) != getattr(Commit, name):
            raise ConfigError(f"commit.{name}", "not used when protocol is rewrite; remove it")


def _check_catalog(cfg: Config) -> None:
    """A storage catalog's latency is the provider's; a service catalog's is given, constant or lognormal."""
    cat = cfg.catalog
    if cat.backend == "storage":
        _require(cat, "catalog", (), ("latency_ms", "latency"), "backend is storage (the provider gives them)")
        return
    if (cat.latency_ms is None) == (cat.latency is None):
        why = f" (design {cfg.design}: the service's round trip has no public figure; give or sweep it)" \
            if cfg.design in ("rest", "rest-lakekeeper", "service-pointer") else ""
        raise ConfigError("catalog.latency_ms", "backend service needs exactly one of latency_ms "
                          f"(constant) or latency.{{median_ms, sigma}} (lognormal){why}")
    if cat.latency is not None:
        _require(cat.latency, "catalog.latency", ("median_ms", "sigma"), (), "the latency is lognormal")


def _resolve_server(cfg: Config) -> Catalog:
    """A REST server's keys: its variant's defaults under the ones given; a storage catalog has no server. (The
    microbenchmark, commit.shape object, measures the database's conditional write alone: it reads no server
    key, which a design may still fill in.)"""
    cat, path = cfg.catalog, "catalog.server"
    srv = cat.server
    if srv == Server():
        return cat
    if cat.backend != "service":
        raise ConfigError(path, "only a service catalog has a server (catalog.backend: service); remove it")
    _require(srv, path, ("variant",), (), "any catalog.server key is given")
    if srv.variant in SERVERLESS:
        raise ConfigError(f"{path}.variant", SERVERLESS[srv.variant])
    preset = SERVER_VARIANTS[srv.variant]
    srv = _with_defaults(srv, **{k: v for k, v in preset.items() if k != "retry"},
                         retry=srv.retry or RetryPolicy(**preset["retry"]))
    check_local_server(srv, path)
    if srv.lock_scope == "metadata_write":   # one transaction: its check comes before the PUT, under the row lock
        for name in ("reread_before_cas", "delete_on_conflict"):
            if getattr(srv, name):
                raise ConfigError(f"{path}.{name}", "not with lock_scope metadata_write (its one transaction "
                                  "checks the row under its lock before it writes metadata.json); set false")
    return dataclasses.replace(cat, server=dataclasses.replace(srv, retry=_resolve_retry(srv.retry,
                                                                                      f"{path}.retry")))


def _resolve_lock(cfg: Config) -> Lock:
    """A lock's keys: its variant's defaults under the ones given; the service's latency given, or the catalog's
    (HMS serves both). No lock: no lock key."""
    lk, path = cfg.lock, "lock"
    if lk == Lock():
        return lk
    _require(lk, path, ("variant",), (), "any lock key is given")
    preset = LOCK_VARIANTS[lk.variant]
    if lk.variant != "hms":
        _require(lk, path, (), ("next_lock_id_share", "hms_version", "check_lock_mutex_share"),
                 f"variant is {lk.variant} (HMS's NEXT_LOCK_ID row, its version's checkLock mutex)")
    elif lk.check_lock_mutex_share is not None and lk.hms_version != 3:
        raise ConfigError(f"{path}.check_lock_mutex_share", "only Hive 2 and 3 run checkLock under a mutex: set "
                          "lock.hms_version: 3 (or remove it)")
    poll = lk.poll or (RetryPolicy(**preset["poll"]) if "poll" in preset else None)
    lk = _with_defaults(lk, scope="table", discipline=preset["discipline"], timeout_ms=preset["timeout_ms"],
                        retries=preset["retries"], retry_wait_ms=preset["retry_wait_ms"], poll=poll,
                        lease_ms=preset.get("lease_ms"), validity_ms=preset.get("validity_ms"),
                        next_lock_id_share=preset.get("next_lock_id_share"), hms_version=preset.get("hms_version"))
    if lk.hms_version == 3:
        lk = _with_defaults(lk, check_lock_mutex_share=HMS_CHECK_LOCK_MUTEX_SHARE)
    if lk.next_lock_id_share and lk.discipline != "fifo_poll":
        raise ConfigError(f"{path}.next_lock_id_share", "HMS's NEXT_LOCK_ID row is held by its lock() RPC, which "
                          "answers WAITING and is polled: discipline fifo_poll (or set 0)")
    if lk.check_lock_mutex_share and lk.discipline != "fifo_poll":
        raise ConfigError(f"{path}.check_lock_mutex_share", "Hive 3's checkLock mutex is held by its lock() and "
                          "checkLock RPCs: discipline fifo_poll")
    if lk.variant == "storage":   # a lock object in the provider: its GETs and conditional PUTs, its mutation limit
        _require(lk, path, (), ("latency_ms", "latency"), "variant is storage (the provider's latencies)")
        if lk.discipline != "race_poll":
            raise ConfigError(f"{path}.discipline", "a storage lock is polled and taken by a conditional PUT: "
                              "race_poll")
        _check_locked_commit(cfg)
        return dataclasses.replace(lk, poll=_resolve_retry(lk.poll, f"{path}.poll"))
    _require(lk, path, (), ("validity_ms",), f"variant is {lk.variant} (a storage lock's validity)")
    polled = lk.discipline in ("fifo_poll", "race_poll")
    _require(lk, path, ("poll",) if polled else (), () if polled else ("poll",), f"discipline is {lk.discipline}")
    leased = lk.discipline == "lease_sleep"
    _require(lk, path, ("lease_ms",) if leased else (), () if leased else ("lease_ms",),
             f"discipline is {lk.discipline}")
    if lk.poll is not None:
        lk = dataclasses.replace(lk, poll=_resolve_retry(lk.poll, f"{path}.poll"))
    if lk.latency_ms is None and lk.latency is None:
        cat = cfg.catalog
        if lk.variant != "hms" or cat.backend != "service":
            raise ConfigError(f"{path}.latency_ms", f"the {lk.variant} lock service's round trip has no public "
                              "figure: give lock.latency_ms or lock.latency.{median_ms, sigma}")
        lk = dataclasses.replace(lk, latency_ms=cat.latency_ms, latency=cat.latency)   # HMS serves both
    elif lk.latency_ms is not None and lk.latency is not None:
        raise ConfigError(f"{path}.latency_ms", "give one of latency_ms (constant) or latency (lognormal)")
    if lk.latency is not None:
        _require(lk.latency, f"{path}.latency", ("median_ms", "sigma"), (), "the latency is lognormal")
    _check_locked_commit(cfg)
    return lk


def _check_locked_commit(cfg: Config) -> None:
    """A lock guards Iceberg's commit on a service catalog that the client writes metadata for (the Hive
    Metastore: one table's row, the rewrite protocol, no REST server), or a timeline in storage (Hudi: the log
    protocol, no checkpoints, none of the Delta clients' switches, one attempt each time it holds the lock)."""
    cat, commit = cfg.catalog, cfg.commit
    if commit.protocol == "log":
        checks = ((cat.backend != "storage", "catalog.backend storage (Hudi's timeline)", "hudi"),
                  (commit.checkpoint_interval != 0, "commit.checkpoint_interval 0 (a timeline has no checkpoint)",
                   "hudi"),
                  (commit.first_attempt != "refresh", "commit.first_attempt refresh (it LISTs under the lock)",
                   "hudi"),
                  (any(getattr(commit, k) != getattr(Commit, k) for k in LOG_CLIENT_KEYS),
                   "none of the Delta clients' commit switches", "hudi"))
    else:
        checks = ((cat.backend != "service", "catalog.backend service (the Hive Metastore)", "hive"),
                  (cat.server != Server(), "no catalog.server (the client writes metadata.json)", "hive"),
                  (cat.table_metadata_inlined, "the client's metadata.json: no catalog.table_metadata_inlined",
                   "hive"))
    checks += ((cat.scope != "table", "catalog.scope table", "hive or hudi"),
               (commit.shape != "table", "commit.shape table", "hive or hudi"))
    for wrong, why, design in checks:
        if wrong:
            raise ConfigError("lock.variant", f"a commit lock needs {why} (or design: {design})")


def _check_clock_skew(cfg: Config) -> None:
    if cfg.commit.clock_skew_wait_ms is not None and (cfg.lock.variant is None or cfg.commit.protocol != "log"):
        raise ConfigError("commit.clock_skew_wait_ms", "only with a lock and commit.protocol log (Hudi; design hudi)")


def _resolve_log_store(cfg: Config) -> LogStore:
    """The DynamoDB log store's keys: its latency given, its capacity and SDK retry defaulted; only under the log
    protocol, in storage, per table. No log store: none of its keys."""
    ls, path = cfg.log_store, "log_store"
    if ls == LogStore():
        return ls
    _require(ls, path, ("kind",), (), "any log_store key is given")
    if (ls.latency_ms is None) == (ls.latency is None):
        raise ConfigError(f"{path}.latency_ms", "the DynamoDB round trip has no public figure: give exactly one of "
                          "log_store.latency_ms or log_store.latency.{median_ms, sigma}")
    if ls.latency is not None:
        _require(ls.latency, f"{path}.latency", ("median_ms", "sigma"), (), "the latency is lognormal")
    cat, commit = cfg.catalog, cfg.commit
    for wrong, why in ((commit.protocol != "log", "commit.protocol log"),
                       (cat.backend != "storage", "catalog.backend storage"),
                       (cfg.lock.variant is not None, "no lock"), (commit.shape != "table", "commit.shape table")):
        if wrong:
            raise ConfigError(f"{path}.kind", f"Delta's DynamoDB log store needs {why} (or design: delta-dynamodb)")
    ls = _with_defaults(ls, **LOG_STORE_DEFAULTS)
    return dataclasses.replace(ls, retry=_resolve_resend(ls.retry or RetryPolicy(policy="aws_dynamodb"),
                                                          f"{path}.retry"))


def _resolve_arrivals(w: Workload) -> InterArrival:
    """Each inter-arrival distribution reads its own keys; a Poisson or constant gap defaults to 100 ms."""
    ia, p = w.inter_arrival, "workload.inter_arrival"
    bursty = ("burst_mean_ms", "burst_ms", "quiet_ms", "burst_table")
    if ia.distribution == "lognormal":
        _require(ia, p, ("median_ms", "sigma"), ("mean_ms",) + bursty, "distribution is lognormal")
    elif ia.distribution == "bursty":
        _require(ia, p, ("mean_ms", "burst_mean_ms", "burst_ms", "quiet_ms"), ("median_ms", "sigma"),
                 "distribution is bursty")
        b, q = ia.burst_ms, ia.quiet_ms
        if b / ia.burst_mean_ms > (b + q) / ia.mean_ms:
            raise ConfigError(f"{p}.burst_mean_ms", f"bursts alone bring more arrivals than the mean rate allows "
                              f"({b / ia.burst_mean_ms:g} per burst vs {(b + q) / ia.mean_ms:g} per burst+quiet cycle)"
                              "; raise burst_mean_ms or quiet_ms, or lower mean_ms")
        if ia.burst_table is not None and ia.burst_table > w.num_tables:
            raise ConfigError(f"{p}.burst_table", f"rank {ia.burst_table} but there are {w.num_tables} tables")
    else:
        _require(ia, p, (), ("median_ms", "sigma") + bursty, f"distribution is {ia.distribution}")
        ia = _with_defaults(ia, mean_ms=100.0)
    return ia


def _check_tables(w: Workload) -> None:
    ts = w.table_selection
    if ts.distribution == "zipf":
        _require(ts, "workload.table_selection", ("alpha",), (), "distribution is zipf")
    else:
        _require(ts, "workload.table_selection", (), ("alpha",), "distribution is uniform")


def _resolve_writers(w: Workload) -> Writers:
    """Each mode reads its own keys; open-loop arrivals (count 0) read none of them."""
    wr, p = w.writers, "workload.writers"
    closed, periodic = ("think_ms", "think"), ("interval_ms", "jitter_ms", "overrun")
    if wr.count == 0:
        _require(wr, p, (), closed + periodic + ("commits", "start_spread_ms"), "count is 0 (open-loop arrivals)")
        if wr.mode != "closed" or wr.tables != "shared":
            raise ConfigError(f"{p}.{'mode' if wr.mode != 'closed' else 'tables'}",
                              "not used when count is 0 (open-loop arrivals); remove it")
        return wr
    if w.inter_arrival != InterArrival():
        raise ConfigError("workload.inter_arrival", "not used with workload.writers (the writers set the load); "
                          "remove it")
    if wr.mode == "closed":
        _require(wr, p, (), periodic, "mode is closed")
        return _with_defaults(wr, think_ms=0.0, think="constant", start_spread_ms=0.0)
    _require(wr, p, ("interval_ms",), closed, "mode is periodic")
    return _with_defaults(wr, jitter_ms=0.0, overrun="wait", start_spread_ms=wr.interval_ms)


def _check_shape(cfg: Config) -> None:
    """The microbenchmark's operation has no table and no snapshot to validate: FastAppends only."""
    if cfg.commit.shape == "object" and cfg.workload.fast_append_ratio != 1.0:
        raise ConfigError("workload.fast_append_ratio", "commit.shape object writes no table: FastAppends only "
                          "(set 1.0)")
    rt = cfg.workload.runtime
    if rt.median_ms == 0 and rt.sigma != 0:
        raise ConfigError("workload.runtime.sigma", "a runtime of median 0 is no work at all: set sigma 0")


def _check_version_files(cfg: Config) -> None:
    """Version files are a storage table's own metadata files: per table, Iceberg's protocol, not inlined."""
    cat, commit, path = cfg.catalog, cfg.commit, "catalog.version_files"
    if not cat.version_files:
        return
    for wrong, why in ((cat.backend != "storage", "needs catalog.backend storage (the files are in the bucket)"),
                       (cat.scope != "table", "needs catalog.scope table (each table has its own versions)"),
                       (commit.protocol != "rewrite", "needs commit.protocol rewrite (Iceberg's table metadata)"),
                       (cat.table_metadata_inlined, "the version file is the table metadata: remove "
                                                    "catalog.table_metadata_inlined"),
                       (commit.shape != "table", "commit.shape object benchmarks one object, not version files")):
        if wrong:
            raise ConfigError(path, f"{why} (or design: fs-table)")


def _check_file_lists(cfg: Config) -> None:
    """File lists in the catalog's database are DuckLake's: a service holding the table metadata too, Iceberg-like
    commits of the whole table (its rules know inserts, deletes, compactions and alters)."""
    cat, path = cfg.catalog, "catalog.file_lists_inlined"
    if not cat.file_lists_inlined:
        return
    ops, m = cfg.workload.operations, cfg.maintenance
    for wrong, why in ((cat.backend != "service", "needs catalog.backend service (the database)"),
                       (not cat.table_metadata_inlined, "needs catalog.table_metadata_inlined (the database holds "
                                                        "the table metadata too)"),
                       (cfg.commit.protocol != "rewrite", "needs commit.protocol rewrite"),
                       (cfg.commit.shape != "table", "needs commit.shape table"),
                       (cat.server != Server() or cfg.lock.variant is not None,
                        "a database the clients query themselves: no catalog.server, no lock"),
                       (ops.row_delta_share > 0, "DuckLake's deletes are overwrite_share here (delete files, "
                                                 "no row deltas): remove workload.operations.row_delta_share"),
                       (any(getattr(m, n).every_ms is not None for n in ("rewrite_manifests", "expire_snapshots")),
                        "DuckLake has no manifests to rewrite, and its snapshot expiry is not modelled"),
                       (m.compaction.partial_progress, "partial progress is Iceberg's RewriteDataFiles option"),
                       (cfg.metadata.growth, "metadata growth is Iceberg's metadata.json")):
        if wrong:
            raise ConfigError(path, f"{why} (or design: ducklake)")


def _store_commit_needs(cfg: Config) -> tuple[str, tuple[str, ...]] | None:
    """What a design that commits through the store needs of it: why, and the ways of creating a name if absent
    that serve it (`Profile.create_if_absent`; none: it replaces an object if it matches); None: nothing."""
    cat, commit = cfg.catalog, cfg.commit
    if cfg.lock.variant == "storage":
        return "a storage lock takes its object by a conditional PUT", ("put",)
    if cat.backend != "storage" or cfg.lock.variant is not None or cfg.log_store.kind is not None:
        return None                  # a service, a lock or a log store commits: the store only holds files
    if cat.version_files:            # iceberg-rust's copy-if-not-exists; Hadoop tables' exists + rename
        return "this design creates its version files if absent", ("put", "rename", "link")
    if commit.protocol == "log":
        if commit.first_attempt == "stale":   # Delta Spark: HDFSLogStore renames; on a local mount, one JVM only
            return "Delta Spark's log store creates each entry by a rename that fails if it exists", ("put", "rename")
        return "delta-rs creates each log entry if absent", ("put", "rename", "link")
    return "this design replaces its catalog object only if it matches (If-Match)", ()


_STORE_HAS = {"none": "documents no conditional write", "rename": "is a file system with no If-Match",
              "link": "creates a name atomically only by hard link (a rename there replaces the target)"}


def _check_store_commits(cfg: Config, prof) -> None:
    """A design that commits through the store runs only where the store gives the conditional write it needs
    (docs/model/storage-providers.md, "File systems"): a file system has no If-Match; on a local or Lustre mount
    only a hard link creates a name atomically; a store with no documented conditional write gives none."""
    needs = _store_commit_needs(cfg)
    if needs is None:
        return
    why, creates = needs
    create = prof.create_if_absent or "put"
    if (creates and create not in creates) or (not creates and prof.replace_if_match is False):
        has = _STORE_HAS.get(create, "has no If-Match")
        raise ConfigError("storage.provider", f"{cfg.storage.provider!r} {has}, and {why}: choose a design that "
                          "commits in a service (e.g. design: rest) or another provider")


def _check_reread(cat: Catalog, commit: Commit) -> None:
    """The re-read guards one catalog object that every table's commit replaces (a catalog as a file), or is
    PyIceberg's SqlCatalog's load in its commit call (`commit.client: pyiceberg`, its rules)."""
    if commit.client == "pyiceberg":
        return
    if commit.reread_before_cas and (cat.scope != "global" or commit.protocol != "rewrite"
                                     or commit.shape != "table"):
        raise ConfigError("commit.reread_before_cas", "only with catalog.scope global, commit.protocol rewrite "
                          "and commit.shape table (a catalog as one file; design: file), or with commit.client "
                          "pyiceberg (design: pyiceberg-sql)")


JOBS = ("compaction", "rewrite_manifests", "expire_snapshots", "schema_change")


def jobs_of(cfg: Config) -> list[tuple[str, object]]:
    """The maintenance jobs the config runs (`maintenance.<name>` with every_ms given), in JOBS order."""
    return [(name, getattr(cfg.maintenance, name)) for name in JOBS
            if getattr(cfg.maintenance, name).every_ms is not None]


def operations_on(cfg: Config) -> bool:
    """Whether the format's rules decide conflicts (docs/MODEL.md, "Operations and maintenance"):
    `workload.operations` given, or a maintenance job."""
    return (cfg.workload.operations.partitions is not None or bool(jobs_of(cfg))
            or cfg.maintenance.compaction.inline_after_commits is not None)


def _check_operations(cfg: Config) -> None:
    """Operations with read and write sets: one way to say what conflicts (the rules, not a drawn probability), on
    the designs that run Iceberg's client (docs/MODEL.md, "Operations and maintenance")."""
    if not operations_on(cfg):
        return
    w, ops, path = cfg.workload, cfg.workload.operations, "workload.operations"
    delta = cfg.commit.protocol == "log"
    for wrong, key, why in (
            (w.vo_conflict_probability > 0, "workload.vo_conflict_probability",
             "drawn conflicts are not used with operations (the format's rules decide); remove it"),
            (w.fast_append_ratio != 1.0, "workload.fast_append_ratio",
             f"not used with operations: give {path}.overwrite_share and row_delta_share"),
            (ops.overwrite_share + ops.row_delta_share > 1.0, f"{path}.row_delta_share",
             "overwrite_share + row_delta_share must be at most 1 (appends are the rest)"),
            (ops.touches > (ops.partitions or 1), f"{path}.touches",
             f"an operation touches at most the table's {ops.partitions or 1} partitions"),
            (cfg.commit.shape != "table", "commit.shape", "operations need a table (commit.shape table)"),
            (delta and ops.row_delta_share > 0, f"{path}.row_delta_share",
             "on a log (Delta, Hudi) a DELETE/UPDATE/MERGE or an upsert is an overwrite here (overwrite_share); "
             "deletion vectors and merge-on-read log files are not modelled")):
        if wrong:
            raise ConfigError(key, why)
    for name, job in jobs_of(cfg):
        if delta and name in ("rewrite_manifests", "expire_snapshots"):
            raise ConfigError(f"maintenance.{name}", "Iceberg's; a Delta log or Hudi timeline has no such commit "
                                                     "(OPTIMIZE, clustering: maintenance.compaction)")
        if (job.partitions or 0) > (ops.partitions or 1):
            raise ConfigError(f"maintenance.{name}.partitions",
                              f"more than the table's {ops.partitions or 1} partitions ({path}.partitions)")
        if job.median_ms == 0 and job.sigma != 0:
            raise ConfigError(f"maintenance.{name}.sigma", "a run of median 0 is no work at all: set sigma 0")


def _check_partial_progress(cfg: Config) -> None:
    """Partial progress is Iceberg's RewriteDataFiles option: a compaction's, on a design that runs Iceberg's
    client; its batches need the run's file groups."""
    defaults = {f.name: f.default for f in dataclasses.fields(Job)}
    for name in JOBS:
        job, path = getattr(cfg.maintenance, name), f"maintenance.{name}"
        if not job.partial_progress:
            for key in ("groups", "max_commits", "threads"):
                if getattr(job, key) != defaults[key]:
                    raise ConfigError(f"{path}.{key}", "not used unless partial_progress is true; remove it")
            continue
        for wrong, key, why in (
                (name != "compaction", f"{path}.partial_progress", "RewriteDataFiles' option: a compaction's only"),
                (cfg.commit.protocol == "log", f"{path}.partial_progress",
                 "Iceberg's RewriteDataFiles option; an OPTIMIZE or a clustering commits once"),
                (job.groups is None, f"{path}.groups",
                 "required with partial_progress: the file groups a run rewrites (its input bytes / "
                 "max-file-group-size-bytes, 100 GB by default)")):
            if wrong:
                raise ConfigError(key, why)


def _check_hudi_services(cfg: Config) -> None:
    """A merge-on-read compaction and a service run inline are Hudi's (design hudi), a compaction job's; inline, a
    writer runs it (no schedule of its own)."""
    hudi = cfg.lock.variant is not None and cfg.commit.protocol == "log"
    for name in JOBS:
        job = getattr(cfg.maintenance, name)
        for key, used in (("action", job.action != "clustering"), ("inline_after_commits", job.inline_after_commits)):
            path = f"maintenance.{name}.{key}"
            if not used:
                continue
            if name != "compaction":
                raise ConfigError(path, f"Hudi's table service's: maintenance.compaction.{key} only")
            if not hudi:
                raise ConfigError(path, "a Hudi table's (design hudi); Iceberg's and Delta's compactions have one "
                                        "kind and a schedule")
    job = cfg.maintenance.compaction
    if job.inline_after_commits is not None:
        if job.every_ms is not None:
            raise ConfigError("maintenance.compaction.every_ms", "a compaction runs inline (inline_after_commits) or "
                                                                 "on a schedule, not both")
        if cfg.workload.writers.count == 0:
            raise ConfigError("maintenance.compaction.inline_after_commits",
                              "runs in a writer's commit path: give workload.writers")
        if job.partitions is not None:
            raise ConfigError("maintenance.compaction.partitions", "a service run inline plans the whole table; "
                                                                   "remove it")


def _check_multi_table(cfg: Config) -> None:
    """Commits over several tables go where a catalog has a multi-table commit: an Iceberg REST server's
    /transactions/commit (the reference server, Polaris, Lakekeeper >= 0.10, Nessie) or DuckLake's database;
    appends only, each table apart. Nessie's one-table commit is the same commit on its branch (`variant` the path):
    appends only too."""
    mt, w, path = cfg.workload.multi_table, cfg.workload, "workload.multi_table"
    nessie = cfg.catalog.server.variant == "nessie"   # one commit on its branch, whatever the tables: appends only
    if mt.tables == 1:
        if mt.distribution != "fixed":
            raise ConfigError(f"{path}.distribution", "one table a commit has nothing to draw; remove it")
        if not nessie:
            return
    srv = cfg.catalog.server.variant
    ducklake = bool(cfg.catalog.file_lists_inlined)
    if not ducklake and srv not in ("reference", "polaris", "lakekeeper", "nessie"):
        known = "no multi-table commit" if srv is None else f"server {srv}'s"
        raise ConfigError(f"{path}.tables", f"a commit over several tables needs a catalog with a multi-table commit "
                          f"as modelled: design rest (catalog.server.variant reference, polaris or nessie), design "
                          f"rest-lakekeeper, or design ducklake ({known} is not modelled)")
    for wrong, key, why in ((mt.tables > w.num_tables, "tables", f"spans more tables than workload.num_tables "
                             f"({w.num_tables})"),
                            (w.fast_append_ratio != 1.0, "tables", "appends only: set workload.fast_append_ratio 1"),
                            (operations_on(cfg), "tables", "appends only: remove workload.operations"),
                            (any(getattr(cfg.maintenance, n).every_ms is not None
                                 or getattr(cfg.maintenance, n).inline_after_commits is not None for n in JOBS),
                             "tables", "maintenance jobs commit one table each: remove maintenance"),
                            (w.writers.tables == "owned" and mt.tables > 1, "tables", "a writer that owns one "
                             "table commits to it alone: workload.writers.tables shared"),
                            (cfg.metadata.growth, "tables", "metadata growth is per table's commits: remove "
                                                            "metadata.growth"),
                            (cfg.workload.vo_conflict_probability > 0, "tables", "appends only: remove "
                                                                                 "workload.vo_conflict_probability")):
        if wrong:
            if mt.tables == 1:
                raise ConfigError("catalog.server.variant", f"Nessie's commit is modelled for appends only ({why})")
            raise ConfigError(f"{path}.{key}", why)


def _check_metadata(cfg: Config) -> None:
    """Metadata growth is Iceberg's table metadata; an expiry's max age is the expiry's alone."""
    md = cfg.metadata
    for name in JOBS:
        if name != "expire_snapshots" and getattr(cfg.maintenance, name).max_age_ms is not None:
            raise ConfigError(f"maintenance.{name}.max_age_ms", "only an expiry keeps snapshots by age; remove it")
    if not md.growth:
        for f in dataclasses.fields(Metadata):
            if f.name != "growth" and getattr(md, f.name) != f.default:
                raise ConfigError(f"metadata.{f.name}", "not used unless metadata.growth is true; remove it")
        return
    if cfg.commit.protocol != "rewrite" or cfg.commit.shape != "table":
        raise ConfigError("metadata.growth", "Iceberg's metadata only so far: commit.protocol rewrite, commit.shape "
                                             "table (a Delta log's growth is its checkpoint interval)")


def _resolve(cfg: Config, provider_known: bool = True) -> Config:
    """Cross-field rules: fill what depends on a choice and reject keys that the choice leaves unread;
    `provider_known=False` leaves the provider unchecked (the defaults, which name s3 but never run)."""
    cfg = resolve_trace(cfg)
    commit = _resolve_commit(cfg)
    _check_catalog(cfg)
    catalog = _resolve_server(cfg)
    _check_shape(cfg)
    _check_version_files(cfg)
    _check_file_lists(cfg)
    _check_reread(cfg.catalog, commit)
    commit = resolve_client(dataclasses.replace(cfg, commit=commit))
    _check_clock_skew(cfg)
    _check_tables(cfg.workload)
    _check_operations(cfg)
    _check_metadata(cfg)
    _check_partial_progress(cfg)
    _check_hudi_services(cfg)
    _check_multi_table(cfg)
    try:
        if provider_known:
            _check_store_commits(cfg, profile_of(cfg))
    except ProviderError as exc:
        raise ConfigError("storage.provider", str(exc)) from None
    workload = dataclasses.replace(cfg.workload, writers=_resolve_writers(cfg.workload))
    if workload.writers.count == 0 and workload.trace.path is None:   # (a trace's rows are its arrivals)
        workload = dataclasses.replace(workload, inter_arrival=_resolve_arrivals(cfg.workload))
    if cfg.warmup_ms + cfg.cooldown_ms >= cfg.duration_ms:
        raise ConfigError("warmup_ms", f"warmup_ms + cooldown_ms ({cfg.warmup_ms + cfg.cooldown_ms:g}) must be "
                          f"below duration_ms ({cfg.duration_ms:g}) to leave a measurement window")
    retry = dataclasses.replace(cfg.retry, catalog=_resolve_retry(cfg.retry.catalog, "retry.catalog"),
                                table=_resolve_retry(cfg.retry.table, "retry.table"))
    storage = dataclasses.replace(cfg.storage, throttle_retry=_resolve_resend(cfg.storage.throttle_retry),
                                  provider_sha256=resolve_provider_sha256(cfg) if provider_known else None)
    catalog = resolve_round_trips(cfg, catalog)
    return dataclasses.replace(cfg, workload=workload, retry=retry, storage=storage, commit=commit, catalog=catalog,
                               lock=_resolve_lock(cfg), log_store=_resolve_log_store(cfg),
                               faults=resolve_faults(cfg, provider_known))
