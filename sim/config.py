"""Configuration as data: typed, frozen, validated, hashable.

A config file is YAML with the shape documented in docs/reference.md ("Config keys"). Every key is read by the
engine; an unknown key, a wrong type or an out-of-range value raises `ConfigError` naming the dotted key path,
so a typo is an error and never a silent default. The fully resolved config (all defaults filled in) and its
hash are stored with every result.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

import yaml

from .designs import DESIGNS, RETIRED, expand, is_whole
from .providers import ProviderError, load_provider
from .schema import ConfigError, Field, check, shape_of
from .yamlio import load_yaml


def _spec(default=None, *, ge=None, gt=None, le=None, lt=None, choices=None, late=False, seeded=True, hashed=True):
    """A field with its validation rule kept beside it (`sim.schema`; its type is the annotation).

    `late`: a key added after results were first published, whose default keeps the earlier behaviour; it stays
    out of the config hash (hence out of the seeds) while it has its default value, so configurations that do
    not use it keep their results. `seeded=False`: the key is part of the config's identity (`config_hash`) but
    not of its random streams (`seed_hash`), so switching it (a storage throttle on or off) compares the same
    arrivals and latency draws. `hashed=False`: a label that adds nothing to the values it stands for (a named
    design, expanded into keys)."""
    meta = {"rule": Field(ge=ge, gt=gt, le=le, lt=lt, choices=choices), "late": late, "seeded": seeded,
            "hashed": hashed}
    if isinstance(default, (dict, list)) or (dataclasses.is_dataclass(default) and not isinstance(default, type)):
        return field(default_factory=lambda d=default: copy.deepcopy(d), metadata=meta)
    return field(default=default, metadata=meta)


def _nested(cls, late=False, seeded=True, factory=None):
    return field(default_factory=factory or cls, metadata={"late": late, "seeded": seeded, "hashed": True})


# the storage clients' resend defaults, as their sources set them (docs/MODEL.md, "Storage clients' resend
# policies", cites the lines): object_store's RetryConfig and BackoffConfig (delta-rs); google-cloud-core's
# ServiceOptions retry settings, which Iceberg's GCSFileIO leaves as they are (6 attempts: 5 resends)
RESEND_CLIENTS = {
    "object_store": {"base_ms": 100.0, "factor": 2.0, "max_ms": 15_000.0, "max_resends": 10, "deadline_ms": 180_000.0},
    "google_java": {"base_ms": 1000.0, "factor": 2.0, "max_ms": 32_000.0, "max_resends": 5, "deadline_ms": 50_000.0},
    # the AWS SDK for Java v1's DynamoDB default: 10 retries, a throttled request sleeping an equal-jittered
    # min(500 ms x 2^(k-1), 20 s) (PredefinedRetryPolicies.DYNAMODB_DEFAULT, SDKDefaultBackoffStrategy)
    "aws_dynamodb": {"base_ms": 500.0, "factor": 2.0, "max_ms": 20_000.0, "max_resends": 10},
}


@dataclass(frozen=True)
class LatencySpec:
    """A service-catalog latency: constant (`latency_ms`) or lognormal (`latency.median_ms`, `sigma`)."""
    median_ms: float = _spec(None, gt=0)
    sigma: float = _spec(None, ge=0)


# the REST servers' commit (docs/MODEL.md, "REST servers"), each variant's defaults as its source sets them: the
# Iceberg reference server and Polaris GET the old metadata.json on every load and retry a lost database CAS 4
# times, sleeping Iceberg's Tasks backoff; Lakekeeper reads its metadata from Postgres (no GET) and retries twice,
# sleeping 50 ms x 2^(k-1) plus U[0, half of it) (no cap in its source: 100 ms, its second sleep, never binds)
SERVER_VARIANTS = {
    "reference": {"metadata_get": True, "retries": 4,
                  "retry": {"policy": "exponential", "base_ms": 100.0, "factor": 2.0, "max_ms": 60_000.0,
                            "jitter": 0.1}},
    "lakekeeper": {"metadata_get": False, "retries": 2,
                   "retry": {"policy": "exponential", "base_ms": 50.0, "factor": 2.0, "max_ms": 100.0,
                             "jitter": 0.5}},
}


@dataclass(frozen=True)
class Server:
    """A REST server's commit built from its parts (backend service): a load is a database read (the service's
    latency) plus, if `metadata_get`, a GET of metadata.json; a commit loads the base, checks the client's
    requirement, PUTs the new metadata.json and CASes the database row, retrying a lost CAS `retries` times
    after `retry`'s sleep (each retry re-loads and re-checks). `variant` fills in the others."""
    variant: str = _spec(None, choices=tuple(SERVER_VARIANTS))
    metadata_get: bool = _spec(None)
    retries: int = _spec(None, ge=0)
    retry: "RetryPolicy" = _spec(None)


# the commit locks (docs/MODEL.md, "Locks"), each variant's waiting discipline and limits as its implementation sets
# them: Iceberg's HiveCatalog on the Hive Metastore (MetastoreLock: FIFO by lock id, checkLock polled every
# min(50 x 1.5^(k-1), 5000) ms plus up to 10 %, given up after 180 s, which fails the commit attempt); Hudi's
# ZooKeeper provider (Curator's InterProcessMutex: FIFO, the predecessor's deletion notifies; tryLock waits 60 s)
# and DynamoDB provider (the awslabs lock client: a GetItem every second, a free lock taken by a conditional
# PutItem; it waits 60 s plus a 60 s lease), both under Hudi's LockManager (50 more tries, 5 s apart); Iceberg's
# DynamoDbLockManager (a held lock: sleep a 15 s lease, then try again; 3 min)
LOCK_VARIANTS = {
    "hms": {"discipline": "fifo_poll", "timeout_ms": 180_000.0, "retries": 0, "retry_wait_ms": 0.0,
            "poll": {"policy": "exponential", "base_ms": 50.0, "factor": 1.5, "max_ms": 5000.0, "jitter": 0.1}},
    "zookeeper": {"discipline": "fifo_notify", "timeout_ms": 60_000.0, "retries": 50, "retry_wait_ms": 5000.0},
    "dynamodb": {"discipline": "race_poll", "timeout_ms": 120_000.0, "retries": 50, "retry_wait_ms": 5000.0,
                 "poll": {"policy": "fixed", "delay_ms": 1000.0}},
    "dynamodb-lease": {"discipline": "lease_sleep", "timeout_ms": 180_000.0, "retries": 0, "retry_wait_ms": 0.0,
                       "lease_ms": 15_000.0},
    # Hudi's storage-based lock provider (StorageBasedLockProvider): a lock object per table in the table's bucket,
    # GET every second, taken by a conditional PUT; valid 300 s from its grant (renewed every 30 s while held);
    # tryLock waits 60 s, under the LockManager as above
    "storage": {"discipline": "race_poll", "timeout_ms": 60_000.0, "retries": 50, "retry_wait_ms": 5000.0,
                "poll": {"policy": "fixed", "delay_ms": 1000.0}, "validity_ms": 300_000.0},
}
LOCK_DISCIPLINES = ("fifo_notify", "fifo_poll", "race_poll", "lease_sleep")


@dataclass(frozen=True)
class Lock:
    """A commit lock (docs/MODEL.md, "Locks"): `variant` names the implementation and fills in the others. Per
    table or one for every table (`scope`); its service answers each request in `latency_ms` (or the lognormal
    `latency`; HMS's defaults to the catalog's); a waiter waits by `discipline`, polling after `poll`'s sleeps
    (`lease_ms` for lease_sleep); a request not granted `timeout_ms` after it reached the service is given up, and
    asked again after `retry_wait_ms` `retries` times before the lock call fails its commit attempt."""
    variant: str = _spec(None, choices=tuple(LOCK_VARIANTS))
    scope: str = _spec(None, choices=("table", "global"))
    discipline: str = _spec(None, choices=LOCK_DISCIPLINES)
    latency_ms: float = _spec(None, ge=0)
    latency: LatencySpec = _spec(None)
    poll: "RetryPolicy" = _spec(None)
    lease_ms: float = _spec(None, ge=0)
    timeout_ms: float = _spec(None, gt=0)
    retries: int = _spec(None, ge=0)
    retry_wait_ms: float = _spec(None, ge=0)
    validity_ms: float = _spec(None, gt=0)


@dataclass(frozen=True)
class LogStore:
    """Delta's external log store (docs/MODEL.md, "Delta on S3 with DynamoDB"): `kind: dynamodb` commits a log entry
    by a conditional PutItem in a DynamoDB table (round trip `latency_ms` or the lognormal `latency`), whose write
    capacity (`write_capacity_per_s` units, `burst_s` of unused capacity kept) every table using it shares; a
    throttled write is resent by the AWS SDK's policy (`retry`)."""
    kind: str = _spec(None, choices=("dynamodb",))
    latency_ms: float = _spec(None, ge=0)
    latency: LatencySpec = _spec(None)
    write_capacity_per_s: float = _spec(None, gt=0)
    burst_s: float = _spec(None, ge=0)
    retry: "RetryPolicy" = _spec(None)


@dataclass(frozen=True)
class Catalog:
    backend: str = _spec("storage", choices=("storage", "service"))
    latency_ms: float = _spec(None, ge=0)
    latency: LatencySpec = _spec(None)
    linearization_fraction: float = _spec(0.5, ge=0, le=1)
    table_metadata_inlined: bool = _spec(False)
    # global: one catalog object for all tables (a commit to any table fails every concurrent CAS); table: one
    # pointer (storage) or row (service) per table, CAS_t(expected v[t])
    scope: str = _spec("global", choices=("global", "table"), late=True)
    # backend service: the REST server's commit from its parts (none given: one latency per operation)
    server: Server = _nested(Server, late=True)
    # fs-table: a table's versions are files v{N}.metadata.json in storage; a commit creates v{N+1} if absent,
    # a reader finds the newest by the version hint and probes (docs/MODEL.md, "File-system tables")
    version_files: bool = _spec(False, late=True)


@dataclass(frozen=True)
class IO:
    max_parallel: int = _spec(1, ge=1)
    manifest_list_bytes: int = _spec(10 * 1024, ge=0)
    table_metadata_bytes: int = _spec(100 * 1024, ge=0)


@dataclass(frozen=True)
class InterArrival:
    """`bursty` is a two-state Markov-modulated Poisson process: quiet and burst periods of exponential length
    (means `quiet_ms`, `burst_ms`), Poisson arrivals with mean gap `burst_mean_ms` in bursts and a quiet rate
    derived so the long-run mean gap is `mean_ms` (so it compares with a steady run at the same load).
    `burst_table` (a popularity rank) aims the bursts' extra arrivals at that one table."""
    distribution: str = _spec("exponential", choices=("exponential", "lognormal", "constant", "bursty"))
    mean_ms: float = _spec(None, gt=0)
    median_ms: float = _spec(None, gt=0)
    sigma: float = _spec(None, ge=0)
    burst_mean_ms: float = _spec(None, gt=0)
    burst_ms: float = _spec(None, gt=0)
    quiet_ms: float = _spec(None, gt=0)
    burst_table: int = _spec(None, ge=1)


@dataclass(frozen=True)
class TableSelection:
    distribution: str = _spec("uniform", choices=("uniform", "zipf"))
    alpha: float = _spec(None, gt=0)


@dataclass(frozen=True)
class Runtime:
    median_ms: float = _spec(180_000.0, ge=0)     # 0 (with sigma 0): no work before the commit
    sigma: float = _spec(1.5, ge=0)
    min_ms: float = _spec(30_000.0, ge=0)


@dataclass(frozen=True)
class Writers:
    """A fixed set of writers instead of open-loop arrivals (docs/MODEL.md, "Writers"). `closed`: a writer starts
    its next transaction a think time after its last one ended (committed or aborted); `periodic`: a writer's
    commits are due every `interval_ms` (ticks at its phase + k interval), each starting U(0, jitter_ms) after its
    tick; a tick that comes while its previous commit still runs waits for it (`overrun: wait`, Flink's single
    running checkpoint) or is dropped (`skip`). `commits`: transactions per writer, then it stops.
    `start_spread_ms`: first starts (closed) or tick phases (periodic) are U(0, spread); 0 is a simultaneous
    start. `tables: owned`: writer w commits to table w mod num_tables."""
    count: int = _spec(0, ge=0, le=100_000)
    mode: str = _spec("closed", choices=("closed", "periodic"))
    think_ms: float = _spec(None, ge=0)
    think: str = _spec(None, choices=("constant", "exponential"))
    interval_ms: float = _spec(None, gt=0)
    jitter_ms: float = _spec(None, ge=0)
    overrun: str = _spec(None, choices=("wait", "skip"))
    commits: int = _spec(None, ge=1)
    start_spread_ms: float = _spec(None, ge=0)
    tables: str = _spec("shared", choices=("shared", "owned"))


@dataclass(frozen=True)
class Workload:
    inter_arrival: InterArrival = _nested(InterArrival)
    num_tables: int = _spec(1, ge=1)
    table_selection: TableSelection = _nested(TableSelection)
    fast_append_ratio: float = _spec(1.0, ge=0, le=1)
    runtime: Runtime = _nested(Runtime)
    vo_conflict_probability: float = _spec(0.0, ge=0, le=1)
    writers: Writers = _nested(Writers, late=True)


@dataclass(frozen=True)
class Commit:
    first_attempt: str = _spec("refresh", choices=("refresh", "stale"))
    max_retries: int = _spec(10, ge=0)
    metadata_read_on_failure: bool = _spec(False)
    # rewrite: Iceberg (a table conflict rewrites manifest list and table metadata); log: Delta Lake's log of
    # numbered entries, created put-if-absent, the same bytes on every attempt
    protocol: str = _spec("rewrite", choices=("rewrite", "log"), late=True)
    checkpoint_interval: int = _spec(None, ge=0)     # log: a checkpoint every n-th version (0: never)
    checkpoint_bytes: int = _spec(None, ge=0)        # log: size of a checkpoint
    # table: a table commit (metadata read and written); object: the conditional-write microbenchmark, a read of
    # the design's object (storage rewrite: HEAD + GET; log: LIST) then its conditional write, nothing else
    shape: str = _spec("table", choices=("table", "object"), late=True)
    # file: re-read the catalog after the prepare, right before the CAS; fail if this table moved, else CAS
    # against the fresh read (boring-catalog; docs/MODEL.md, "Re-read before the CAS")
    reread_before_cas: bool = _spec(False, late=True)
    # log fidelity (docs/MODEL.md "Delta clients"): delta-rs's snapshot update inside every attempt that read new
    # entries; the parallelism of snapshot reads (unset: io.max_parallel); the post-commit checkpoint rebuilt as
    # the real clients do; the expired-log cleanup's LIST, after every commit (delta-rs) or every checkpoint
    # (Delta Spark), over the entries already in the log at the start plus the run's
    snapshot_update: bool = _spec(False, late=True)
    snapshot_max_parallel: int = _spec(None, ge=1, late=True)
    checkpoint_rebuild: bool = _spec(False, late=True)
    log_cleanup: str = _spec("none", choices=("none", "every_commit", "checkpoint"), late=True)
    log_entries_at_start: int = _spec(0, ge=0, late=True)
    # Hudi (the log protocol under a lock): TrueTime's sleep under the lock per instant time generated
    # (hoodie.time.generator.max_expected_clock_skew_ms)
    clock_skew_wait_ms: float = _spec(None, ge=0, late=True)


@dataclass(frozen=True)
class RetryPolicy:
    """`immediate`; `fixed` (delay_ms); `exponential` (delay = min(base_ms * factor^(k-1), max_ms) for the
    k-th conflict of its class, then stretched by a uniform factor in [1, 1 + jitter]: Iceberg adds up to 10%).
    A storage client's resends (`storage.throttle_retry`) may also run a real client's backoff (`object_store`,
    `google_java`), and stop after `max_resends` resends or `deadline_ms` after the request's first send."""
    policy: str = _spec("immediate", choices=("immediate", "fixed", "exponential") + tuple(RESEND_CLIENTS))
    delay_ms: float = _spec(None, ge=0)
    base_ms: float = _spec(None, ge=0)
    factor: float = _spec(None, ge=1)
    max_ms: float = _spec(None, ge=0)
    jitter: float = _spec(None, ge=0)
    max_resends: int = _spec(None, ge=0, late=True)
    deadline_ms: float = _spec(None, gt=0, late=True)


@dataclass(frozen=True)
class Retry:
    catalog: RetryPolicy = _nested(RetryPolicy)
    table: RetryPolicy = _nested(RetryPolicy)


@dataclass(frozen=True)
class Storage:
    provider: str = _spec("s3")
    # the provider's per-object mutation limits (conditional writes to one object name), if it has any
    throttle: bool = _spec(True, late=True, seeded=False)
    # the storage client's resend policy for a request answered 429: by default Google's Java client's (the
    # default design, `file`, is Iceberg's GCSFileIO)
    throttle_retry: RetryPolicy = _nested(RetryPolicy, late=True, seeded=False,
                                          factory=lambda: RetryPolicy(policy="google_java"))


@dataclass(frozen=True)
class Config:
    duration_ms: float = _spec(3_600_000.0, gt=0)
    warmup_ms: float = _spec(900_000.0, ge=0)
    cooldown_ms: float = _spec(900_000.0, ge=0)
    drain_limit_ms: float = _spec(3_600_000.0, ge=0)
    seed: int = _spec(0, ge=0)
    # workload streams keyed by (seed, replication, source) instead of the config hash (sim.rng.run_streams)
    common_random_numbers: bool = _spec(False, late=True)
    # a named catalog design (sim/designs.py): its keys are filled in under the ones given; the resolved config
    # shows every value it set
    design: str = _spec(None, hashed=False)
    catalog: Catalog = _nested(Catalog)
    storage: Storage = _nested(Storage)
    io: IO = _nested(IO)
    workload: Workload = _nested(Workload)
    commit: Commit = _nested(Commit)
    retry: Retry = _nested(Retry)
    # a commit lock (Iceberg on the Hive Metastore, Hudi's lock providers); none by default
    lock: Lock = _nested(Lock, late=True)
    # Delta's DynamoDB log store; none by default
    log_store: LogStore = _nested(LogStore, late=True)

    def to_dict(self) -> dict:
        """The resolved config as plain data; keys that do not apply (None) are left out."""
        return _prune(dataclasses.asdict(self))

    @property
    def hash(self) -> str:
        return config_hash(self)

    @property
    def max_attempts(self) -> int:
        return self.commit.max_retries + 1

    def replace(self, **overrides: Any) -> "Config":
        """A copy with dotted-path overrides, validated like a file: `cfg.replace(**{"workload.num_tables": 5})`."""
        data = self.to_dict()
        name = overrides.get("design")
        if isinstance(name, str) and name in DESIGNS:
            # every key is explicit in a resolved config: the design's own keys must replace them
            data = expand({**overrides_of(DESIGNS[name], data), "design": name})
        for path, value in overrides.items():
            set_path(data, path, value)
        return from_dict(data)


def overrides_of(preset: Mapping, data: dict) -> dict:
    """`data` with `preset`'s values put over it (a retry policy, a server naming its variant, whole)."""
    out = copy.deepcopy(data)
    for key, value in preset.items():
        if isinstance(value, Mapping) and not is_whole(value) and isinstance(out.get(key), dict):
            out[key] = overrides_of(value, out[key])
        else:
            out[key] = copy.deepcopy(value)
    return out


def _prune(d):
    """Keys that do not apply left out: None values, and sections with nothing left (an unused server)."""
    if isinstance(d, dict):
        out = {k: _prune(v) for k, v in d.items() if v is not None}
        return {k: v for k, v in out.items() if v != {}}
    return d


# ----------------------------------------------------------------------------------------------- cross-field rules

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


def _resolve_retry(p: RetryPolicy, path: str, base_ms=100.0, factor=2.0, max_ms=60_000.0, jitter=0.1) -> RetryPolicy:
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
    else:
        _require(p, path, (), ("delay_ms",), "policy is exponential")
        # defaults: Iceberg's (100 ms doubling to 60 s, up to 10% jitter) unless the caller gives others
        p = _with_defaults(p, base_ms=base_ms, factor=factor, max_ms=max_ms, jitter=jitter)
    return p


def _resolve_resend(p: RetryPolicy, path: str = "storage.throttle_retry") -> RetryPolicy:
    """A storage client's resends: a named client's backoff with its defaults (its jitter is its own), or a
    retry policy (exponential: 1 s doubling to 32 s, jitter 1.0) with no limit unless one is given."""
    if p.policy not in RESEND_CLIENTS:
        limits = {"max_resends": p.max_resends, "deadline_ms": p.deadline_ms}
        p = _resolve_retry(dataclasses.replace(p, max_resends=None, deadline_ms=None), path, base_ms=1000.0,
                           factor=2.0, max_ms=32_000.0, jitter=1.0)
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
    return _with_defaults(commit, checkpoint_interval=100, checkpoint_bytes=cfg.io.table_metadata_bytes)


# the log's client switches (docs/MODEL.md "Delta clients")
LOG_CLIENT_KEYS = ("snapshot_update", "snapshot_max_parallel", "checkpoint_rebuild", "log_cleanup",
                   "log_entries_at_start")


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
    preset = SERVER_VARIANTS[srv.variant]
    srv = _with_defaults(srv, metadata_get=preset["metadata_get"], retries=preset["retries"],
                         retry=srv.retry or RetryPolicy(**preset["retry"]))
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
    poll = lk.poll or (RetryPolicy(**preset["poll"]) if "poll" in preset else None)
    lk = _with_defaults(lk, scope="table", discipline=preset["discipline"], timeout_ms=preset["timeout_ms"],
                        retries=preset["retries"], retry_wait_ms=preset["retry_wait_ms"], poll=poll,
                        lease_ms=preset.get("lease_ms"), validity_ms=preset.get("validity_ms"))
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


# Delta's S3DynamoDBLogStore creates its table with 5 write capacity units (S3DynamoDBLogStore.java l.273-274);
# DynamoDB keeps up to 300 s of unused capacity for bursts (best effort)
LOG_STORE_DEFAULTS = {"write_capacity_per_s": 5.0, "burst_s": 300.0}


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


def _check_reread(cat: Catalog, commit: Commit) -> None:
    """The re-read guards one catalog object that every table's commit replaces (a catalog as a file)."""
    if commit.reread_before_cas and (cat.scope != "global" or commit.protocol != "rewrite"
                                     or commit.shape != "table"):
        raise ConfigError("commit.reread_before_cas", "only with catalog.scope global, commit.protocol rewrite "
                          "and commit.shape table (a catalog as one file; design: file)")


def _resolve(cfg: Config) -> Config:
    """Cross-field rules: fill what depends on a choice and reject keys that the choice leaves unread."""
    commit = _resolve_commit(cfg)
    _check_catalog(cfg)
    catalog = _resolve_server(cfg)
    _check_shape(cfg)
    _check_version_files(cfg)
    _check_reread(cfg.catalog, commit)
    _check_clock_skew(cfg)
    _check_tables(cfg.workload)
    try:
        load_provider(cfg.storage.provider)
    except ProviderError as exc:
        raise ConfigError("storage.provider", str(exc)) from None
    workload = dataclasses.replace(cfg.workload, writers=_resolve_writers(cfg.workload))
    if workload.writers.count == 0:
        workload = dataclasses.replace(workload, inter_arrival=_resolve_arrivals(cfg.workload))
    if cfg.warmup_ms + cfg.cooldown_ms >= cfg.duration_ms:
        raise ConfigError("warmup_ms", f"warmup_ms + cooldown_ms ({cfg.warmup_ms + cfg.cooldown_ms:g}) must be "
                          f"below duration_ms ({cfg.duration_ms:g}) to leave a measurement window")
    retry = Retry(catalog=_resolve_retry(cfg.retry.catalog, "retry.catalog"),
                  table=_resolve_retry(cfg.retry.table, "retry.table"))
    storage = dataclasses.replace(cfg.storage, throttle_retry=_resolve_resend(cfg.storage.throttle_retry))
    return dataclasses.replace(cfg, workload=workload, retry=retry, storage=storage, commit=commit, catalog=catalog,
                               lock=_resolve_lock(cfg), log_store=_resolve_log_store(cfg))


def build_structure(data: Mapping | None, path: str = "") -> Config:
    """Keys, types and ranges only, without the cross-field rules of `from_dict`."""
    return check(Config, data, path)


def from_dict(data: Mapping | None) -> Config:
    """Validate plain data (e.g. parsed YAML) into a resolved `Config` (a named design's keys filled in)."""
    if isinstance(data, Mapping) and data.get("design") is not None:
        name = data["design"]
        if isinstance(name, str) and name in RETIRED:
            raise ConfigError("design", RETIRED[name])
        if not isinstance(name, str) or name not in DESIGNS:    # (a mapping or list is no name, nor hashable)
            raise ConfigError("design", f"expected one of {', '.join(DESIGNS)}, got {name!r}")
        data = expand(dict(data))
    return _resolve(check(Config, data))


def load(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Config:
    """Read a YAML config, apply dotted-path overrides, validate."""
    path = Path(path)
    try:
        data = load_yaml(path.read_text())
    except FileNotFoundError:
        raise ConfigError("", f"config file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ConfigError("", f"{path}: not valid YAML: {exc}") from None
    if data is None:          # an empty file: every default
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("", f"{path}: a config must be a mapping, got {type(data).__name__} {data!r:.60}")
    for key, value in (overrides or {}).items():
        set_path(data, key, value)
    return from_dict(data)


def set_path(data: dict, path: str, value: Any) -> None:
    """Set a dotted path in nested dicts, creating levels as needed."""
    parts = path.split(".")
    node = data
    for i, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            raise ConfigError(".".join(parts[: i + 1]), f"is a value, cannot set {path} below it")
        node = child
    node[parts[-1]] = value


def parse_override(text: str) -> tuple[str, Any]:
    """`PATH=VALUE` with VALUE read as a YAML scalar (so `5` is an int, `true` a bool, `s3` a string)."""
    if "=" not in text:
        raise ConfigError("", f"--set expects PATH=VALUE, got {text!r}")
    path, raw = text.split("=", 1)
    try:
        return path.strip(), load_yaml(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(path.strip(), f"--set value is not valid YAML: {exc}") from None


def _hash_view(obj, default, seeds: bool = False) -> dict:
    """The resolved config as plain data (like `to_dict`), less `late` keys that have their default value and
    labels (`hashed=False`); for the seeds, also less `seeded=False` keys."""
    out = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        dflt = getattr(default, f.name) if default is not None else None
        if (f.metadata.get("late") and value == dflt) or not f.metadata.get("hashed", True) \
                or (seeds and not f.metadata.get("seeded", True)):
            continue
        if dataclasses.is_dataclass(value):
            out[f.name] = _hash_view(value, dflt if dataclasses.is_dataclass(dflt) else None, seeds)
        elif value is not None:
            out[f.name] = value
    return out


@functools.lru_cache(maxsize=1)
def _defaults() -> "Config":
    return from_dict({})


def config_hash(cfg: Config) -> str:
    """Stable across processes and machines: sha256 of the canonical JSON of the resolved config (`late` keys
    at their defaults left out, see `_spec`)."""
    blob = json.dumps(_hash_view(cfg, _defaults()), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def seed_hash(cfg: Config) -> str:
    """What seeds a run's random streams: `config_hash` less `seeded=False` keys (equal to it for every config
    that leaves them at their defaults)."""
    blob = json.dumps(_hash_view(cfg, _defaults(), seeds=True), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def check_path(path: str) -> bool:
    """Raise unless `path` names a key of the config shape; True if it is a section (takes a mapping)."""
    kind, walked = Config, []
    for part in path.split("."):
        known = shape_of(kind) if dataclasses.is_dataclass(kind) else {}
        walked.append(part)
        if part not in known:
            where = ".".join(walked)
            expected = f" (expected one of: {', '.join(known)})" if known else ""
            raise ConfigError(where, f"not a config key{expected}")
        kind = known[part].kind
    return dataclasses.is_dataclass(kind)
