"""The config's shape: frozen dataclasses, one per section, each field carrying its type (the annotation), its
default and its validation rule (`_spec`), and whether it enters the config hash and the seeds."""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from ..providers import PROFILE_SETS
from ..schema import Field
from .defaults import LOCK_DISCIPLINES, LOCK_VARIANTS, REACTIONS, RESEND_CLIENTS, SERVER_VARIANTS, SERVERLESS


def _spec(default=None, *, ge=None, gt=None, le=None, lt=None, choices=None, late=False, seeded=True, hashed=True,
          earlier=None):
    """A field with its validation rule kept beside it (`sim.schema`; its type is the annotation).

    `late`: a key added after results were first published, whose default keeps the earlier behaviour; it stays
    out of the config hash (hence out of the seeds) while it has its default value, so configurations that do
    not use it keep their results; so does a resolved value equal to `earlier` (the behaviour before the key, which
    a variant's defaults fill in). `seeded=False`: the key is part of the config's identity (`config_hash`) but
    not of its random streams (`seed_hash`), so switching it (a storage throttle on or off) compares the same
    arrivals and latency draws. `hashed=False`: a label that adds nothing to the values it stands for (a named
    design, expanded into keys)."""
    meta = {"rule": Field(ge=ge, gt=gt, le=le, lt=lt, choices=choices), "late": late, "seeded": seeded,
            "hashed": hashed, "earlier": earlier}
    if isinstance(default, (dict, list)) or (dataclasses.is_dataclass(default) and not isinstance(default, type)):
        return field(default_factory=lambda d=default: copy.deepcopy(d), metadata=meta)
    return field(default=default, metadata=meta)


def _nested(cls, late=False, seeded=True, factory=None):
    return field(default_factory=factory or cls, metadata={"late": late, "seeded": seeded, "hashed": True})


@dataclass(frozen=True)
class LatencySpec:
    """A service's lognormal latency (`latency.median_ms`, `sigma`; its section's alternative is the constant
    `latency_ms`), plus an optional fixed part (`fixed_ms`: a request's fixed floor, as the measured storage
    profiles have; what `sim calibrate` fits to a database's round trips). No fixed part, or 0: the lognormal
    alone, the config's hash unchanged."""
    median_ms: float = _spec(None, gt=0)
    sigma: float = _spec(None, ge=0)
    # not seeded: a fixed part draws nothing, so a run with it and one without compare the same draws
    fixed_ms: float = _spec(None, ge=0, late=True, earlier=0.0, seeded=False)


@dataclass(frozen=True)
class RoundTrips:
    """One catalog operation as `count` round trips to its database (each a draw of the catalog's latency), the
    `effect`-th of them taking effect (at the catalog's linearization fraction of its own latency: a read's
    snapshot, a commit's check). A conflict read of 0 round trips is none: the lost commit's error says which
    conflict it was."""
    count: int = _spec(None, ge=0)
    effect: int = _spec(None, ge=1)


@dataclass(frozen=True)
class CommitRoundTrips(RoundTrips):
    """The commit's round trips; its change becomes visible at its `visible`-th (its COMMIT; unset: at its effect),
    and the row it wrote is held from its effect to then: another commit's statement on that row waits for it, then
    fails if it committed."""
    visible: int = _spec(None, ge=1)


@dataclass(frozen=True)
class CatalogRoundTrips:
    """A service catalog's operations as database round trips (`catalog.round_trips`; none given: each operation
    one round trip): the base read, the first attempt's refresh, the read after a lost commit (before the sleep),
    the read after the sleep, the commit, and the re-read right before the commit (`commit.reread_before_cas`:
    PyIceberg's SqlCatalog's load in commit_table)."""
    base: RoundTrips = _nested(RoundTrips)
    refresh: RoundTrips = _nested(RoundTrips)
    conflict: RoundTrips = _nested(RoundTrips)
    retry: RoundTrips = _nested(RoundTrips)
    commit: CommitRoundTrips = _nested(CommitRoundTrips)
    # (added after: one round trip, what the catalog's round trips filled in before it, keeps a config's hash)
    reread: RoundTrips = field(default_factory=RoundTrips, metadata={"late": True, "seeded": True, "hashed": True,
                                                                     "earlier": RoundTrips(count=1, effect=1)})


@dataclass(frozen=True)
class Server:
    """A REST server's commit built from its parts (backend service): a load is a database read (the service's
    latency) plus, if `metadata_get`, a GET of metadata.json; a commit loads the base, checks the client's
    requirement, PUTs the new metadata.json, re-reads the row if `reread_before_cas`, and CASes the database row,
    retrying a lost CAS `retries` times after `retry`'s sleep (each retry re-loads and re-checks; DELETEs the file
    first if `delete_on_conflict`). Its database requests take connections of a pool of `pool_connections`
    (the client's loads one of `read_pool_connections` if given), a request that waited `acquire_timeout_ms` for one
    failing its transaction (a 500), and its row locks are held by statement (an autocommit UPDATE), with
    `lock_scope: transaction` from its updates to its COMMIT, or with `lock_scope: metadata_write` across the PUT.
    A server whose table state is local to it (`load_latency` given: SeaweedFS's, its table's metadata in a filer
    entry) spends its own time on a load (`load_latency`) and on the rest of a commit up to its CAS
    (`commit_latency`), each growing by `*_per_version_ms` a table version, with no database request or provider
    PUT; `catalog.latency` is then the client's round trip to it. `variant` fills in the others."""
    variant: str = _spec(None, choices=tuple(SERVER_VARIANTS) + tuple(SERVERLESS))
    metadata_get: bool = _spec(None)
    retries: int = _spec(None, ge=0)
    retry: "RetryPolicy" = _spec(None)
    pool_connections: int = _spec(None, ge=1)
    read_pool_connections: int = _spec(None, ge=1)
    # not seeded: a timeout draws nothing, so a run with it and one without compare the same draws
    acquire_timeout_ms: float = _spec(None, gt=0, seeded=False)
    lock_scope: str = _spec(None, choices=("statement", "transaction", "metadata_write"))
    reread_before_cas: bool = _spec(None)
    delete_on_conflict: bool = _spec(None)
    load_latency: LatencySpec = _spec(None, late=True)
    commit_latency: LatencySpec = _spec(None, late=True)
    load_per_version_ms: float = _spec(None, ge=0, late=True)
    commit_per_version_ms: float = _spec(None, ge=0, late=True)


@dataclass(frozen=True)
class Lock:
    """A commit lock (docs/MODEL.md, "Locks"): `variant` names the implementation and fills in the others. Per
    table or one for every table (`scope`); its service answers each request in `latency_ms` (or the lognormal
    `latency`; HMS's defaults to the catalog's); a waiter waits by `discipline`, polling after `poll`'s sleeps
    (`lease_ms` for lease_sleep); a request not granted `timeout_ms` after it reached the service is given up, and
    asked again after `retry_wait_ms` `retries` times before the lock call fails its commit attempt. HMS only: each
    `lock()` holds the metastore's one NEXT_LOCK_ID row for `next_lock_id_share` of its round trip (0: not modelled);
    `hms_version` 3 (Hive 2 and 3; default 4) adds the metastore-wide checkLock mutex, held by every checkLock (the
    one a `lock()` ends with, and each poll) for `check_lock_mutex_share` of its round trip (default 7/13: 7 of a
    Hive 3 `lock()`'s 13 database round trips, the RPC's latency taken as its database round trips)."""
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
    # not seeded: a hold draws nothing (a share of the lock() RPC's drawn latency)
    next_lock_id_share: float = _spec(None, ge=0, lt=1, late=True, seeded=False)
    # not seeded: Hive 3's mutex draws nothing either; version 4 (no mutex) is the behaviour before the key
    hms_version: int = _spec(None, choices=(3, 4), late=True, seeded=False, earlier=4)
    check_lock_mutex_share: float = _spec(None, gt=0, lt=1, late=True, seeded=False)


@dataclass(frozen=True)
class LogStore:
    """Delta's external log store (docs/MODEL.md, "Delta on S3 with DynamoDB"): `kind: dynamodb` commits a log entry
    by a conditional PutItem in a DynamoDB table (round trip `latency_ms` or the lognormal `latency`), whose write
    capacity (`write_capacity_per_s` units, `burst_s` of unused capacity kept) every table using it shares; a
    throttled write is resent by the AWS SDK's policy (`retry`); its reads (a consistent GetItem or Query, one unit
    each) take units of its read capacity (`read_capacity_per_s`, the same `burst_s`), resent by the same policy."""
    kind: str = _spec(None, choices=("dynamodb",))
    latency_ms: float = _spec(None, ge=0)
    latency: LatencySpec = _spec(None)
    write_capacity_per_s: float = _spec(None, gt=0)
    burst_s: float = _spec(None, ge=0)
    retry: "RetryPolicy" = _spec(None)
    # not seeded: switching it compares the same draws
    read_capacity_per_s: float = _spec(None, gt=0, late=True, seeded=False)


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
    # DuckLake: the tables' file lists (data and delete files) are rows of the catalog's database, as the table
    # metadata is (`table_metadata_inlined`): a commit writes and a validation reads no manifest list or manifest,
    # and DuckLake's conflict rules apply (docs/MODEL.md, "Operations and maintenance")
    file_lists_inlined: bool = _spec(False, late=True)
    # ... and the DuckLake release whose conflict rules apply (1.4: v1.4-andium; 1.5: v1.5-variegata and main,
    # since duckdb/ducklake@d95d7f76, inserts and deletes of one table conflict); filled in with file_lists_inlined
    ducklake_version: str = _spec(None, choices=("1.4", "1.5"), late=True, earlier="1.5")
    # a service catalog's operations as database round trips (docs/MODEL.md, "Catalog"); none: one each
    round_trips: CatalogRoundTrips = _nested(CatalogRoundTrips, late=True)


@dataclass(frozen=True)
class IO:
    max_parallel: int = _spec(1, ge=1)
    # a read of more than 32 GETs, serial or one a lane: one draw from its tabulated law (`tabulated`), or one draw
    # per GET (`exact`, the model before version 10; docs/MODEL.md, "Long reads"). Not seeded: both draw the same
    # streams, so `exact` gives the earlier model's results bit for bit
    long_reads: str = _spec("tabulated", choices=("tabulated", "exact"), late=True, seeded=False)
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
class Operations:
    """Operations with read and write sets (docs/MODEL.md, "Operations and maintenance"): each transaction is an
    append, an overwrite (copy-on-write DELETE/UPDATE/MERGE) or a row delta (merge-on-read deletes), with these
    shares (appends: the rest), and touches `touches` of its table's `partitions` (uniform, distinct). Whether a
    commit that landed since its base fails it (its work lost) or only makes it retry is the format's rule, not a
    draw; `isolation` is an overwrite's and a row delta's (Iceberg's Spark default: serializable)."""
    partitions: int = _spec(None, ge=1, le=62)
    touches: int = _spec(1, ge=1, le=62)
    overwrite_share: float = _spec(0.0, ge=0, le=1)
    row_delta_share: float = _spec(0.0, ge=0, le=1)
    isolation: str = _spec("serializable", choices=("serializable", "snapshot"))
    # a row delta's deletes: position deletes (Spark's MERGE/UPDATE/DELETE on merge-on-read) or equality deletes
    # (Flink's upserts), which a compaction does not validate against (RewriteDataFiles' starting sequence number)
    row_delta_deletes: str = _spec("position", choices=("position", "equality"))


@dataclass(frozen=True)
class MultiTable:
    """Commits over several tables at once (docs/model/multi-table.md): every transaction spans k tables, k =
    `tables` (`distribution: fixed`) or uniform on 1..`tables`; the first drawn as a single-table commit's table is,
    the others distinct, by the same table selection. Each commit goes to its catalog's multi-table path: Iceberg
    REST's `POST /v1/{prefix}/transactions/commit` as Polaris or Lakekeeper runs it, or DuckLake's one database
    transaction. Appends only (workload.fast_append_ratio 1)."""
    tables: int = _spec(1, ge=1, le=8)
    distribution: str = _spec("fixed", choices=("fixed", "uniform"))


@dataclass(frozen=True)
class Trace:
    """A history replayed instead of drawn arrivals (docs/model/workload.md, "Trace"): the commits of the trace
    file at `path` (docs/FORMATS.md, "Trace"), each a transaction of its operation on its table arriving at its
    commit time less its runtime (its own, else a draw of `workload.runtime`); a writer's commits one at a time.
    The file's content is the config's identity (`sha256`, filled in; the path is not hashed). What-ifs:
    `rate_scale` k times the load (the gaps between arrivals divided by k), `tables_scale` the history on k times
    the tables (copy c shifted by c / k of `period_ms`), `repeat` the history looped n times, `period_ms` apart.
    `start_ms`: the trace's time that is the replay's 0 (default: its earliest known start). With a trace,
    `duration_ms`, `warmup_ms` and `cooldown_ms` are on the history's clock (`sim.config.trace`)."""
    path: str = _spec(None, hashed=False)
    sha256: str = _spec(None)
    # not seeded: every k replays the same draws (runtimes, partitions, latencies), k times faster
    rate_scale: float = _spec(1.0, gt=0, le=1e6, seeded=False)
    tables_scale: int = _spec(1, ge=1, le=10_000)
    repeat: int = _spec(1, ge=1, le=100_000)
    start_ms: float = _spec(None)
    period_ms: float = _spec(None, gt=0)


@dataclass(frozen=True)
class Workload:
    inter_arrival: InterArrival = _nested(InterArrival)
    num_tables: int = _spec(1, ge=1)
    table_selection: TableSelection = _nested(TableSelection)
    fast_append_ratio: float = _spec(1.0, ge=0, le=1)
    runtime: Runtime = _nested(Runtime)
    vo_conflict_probability: float = _spec(0.0, ge=0, le=1)
    writers: Writers = _nested(Writers, late=True)
    operations: Operations = _nested(Operations, late=True)
    multi_table: MultiTable = _nested(MultiTable, late=True)
    # a history replayed instead of drawn arrivals (docs/model/workload.md, "Trace"); none by default
    trace: Trace = _nested(Trace, late=True)


@dataclass(frozen=True)
class Job:
    """A maintenance job (docs/MODEL.md, "Operations and maintenance"), on every table: a run starts every
    `every_ms` (each table's phase U(0, every_ms)), unless the last run on that table still runs (its tick is
    skipped); it works a lognormal time (`median_ms`, `sigma`) from its base read to its commit, which then runs
    the client's commit loop; it reads and rewrites `partitions` of its table's partitions, in rotation (unset: all
    of them)."""
    every_ms: float = _spec(None, gt=0)
    median_ms: float = _spec(0.0, ge=0)
    sigma: float = _spec(0.0, ge=0)
    partitions: int = _spec(None, ge=1, le=62)
    # expire_snapshots: the snapshots it keeps (history.expire.max-snapshot-age-ms; unset: 5 days)
    max_age_ms: float = _spec(None, gt=0)
    # compaction: RewriteDataFiles' partial progress (partial-progress.enabled): a run's `groups` file groups
    # (its input bytes / max-file-group-size-bytes, 100 GB by default: no default here, it is the table's) are
    # rewritten by `threads` threads (max-concurrent-file-group-rewrites) and committed in batches of
    # ceil(groups / max_commits) (partial-progress.max-commits), each as its groups are done
    partial_progress: bool = _spec(False, late=True)
    groups: int = _spec(None, ge=1, late=True)
    max_commits: int = _spec(10, ge=1, late=True)
    threads: int = _spec(5, ge=1, late=True)
    # compaction on Hudi (design hudi): a clustering (a replacecommit of the file groups it rewrites; Hudi's
    # copy-on-write tables and merge-on-read's too) or a merge-on-read compaction (a compaction instant: base and
    # log files into a new file slice; `action: compaction`)
    action: str = _spec("clustering", choices=("clustering", "compaction"), late=True)
    # ... run in a writer's commit path instead of on a schedule (`hoodie.compact.inline`, `hoodie.clustering.inline`):
    # the writer whose commit is the n-th delta commit on its table since the last service schedules and runs it
    # before it returns (Hudi's defaults: 5, `hoodie.compact.inline.max.delta.commits`; 4 for clustering)
    inline_after_commits: int = _spec(None, ge=1, late=True)


@dataclass(frozen=True)
class Maintenance:
    """Maintenance jobs beside the writers, each off unless its `every_ms` is given: Iceberg's RewriteDataFiles
    (`compaction`, one commit, or batches with `partial_progress`), RewriteManifests, ExpireSnapshots and a schema
    change."""
    compaction: Job = _nested(Job)
    rewrite_manifests: Job = _nested(Job)
    expire_snapshots: Job = _nested(Job)
    schema_change: Job = _nested(Job)


@dataclass(frozen=True)
class Metadata:
    """Metadata that grows with the table's age (docs/MODEL.md, "Metadata that grows"), Iceberg's: metadata.json
    holds every retained snapshot and the last metadata-log entries, the manifest list one entry per live manifest;
    every PUT and GET of them costs by its size. Off unless `growth`. Sizes in bytes; the defaults from the FSx for
    Lustre post (docs/MODEL.md, "Sources": an empty table's metadata.json 1,289 B, 2,188 B after one snapshot; its
    manifest list of one entry 3,727 B) and Iceberg's defaults; a table may start with snapshots of an age."""
    growth: bool = _spec(False)
    base_bytes: float = _spec(1289.0, ge=0)
    snapshot_bytes: float = _spec(681.0, ge=0)
    snapshot_log_bytes: float = _spec(65.0, ge=0)
    metadata_log_bytes: float = _spec(153.0, ge=0)
    metadata_log_max: int = _spec(100, ge=0)            # write.metadata.previous-versions-max
    list_base_bytes: float = _spec(3527.0, ge=0)
    manifest_entry_bytes: float = _spec(200.0, ge=0)
    manifest_merge_min_count: int = _spec(None, ge=2)   # Java's MergeAppend (commit.manifest.min-count-to-merge);
                                                        # unset: FastAppend, never merged
    snapshots_at_start: int = _spec(0, ge=0)
    age_at_start_ms: float = _spec(0.0, ge=0)           # their commit times, evenly spread over it
    transfer_ms_per_mib: float = _spec(None, ge=0)      # a GET's per-byte cost (unset: the PUT's ms_per_mib)


@dataclass(frozen=True)
class ClientWork:
    """The client's own time per commit attempt (its CPU and interpreter, between its requests): `base_ms` plus
    `per_version_ms` for each version the table has at the attempt's base (PyIceberg deep-copies the whole table
    metadata some 18 times an append), spent in the prepare; with a client that checks its requirements itself
    after loading the table in its commit call (PyIceberg's SqlCatalog, `commit.reread_before_cas`),
    `commit_share` of it is spent there, after that load. Each attempt's is that line times a lognormal factor of
    median 1 and spread `sigma` (the interpreter's and the scheduler's; 0: a constant). 0: none (the model before
    the key)."""
    base_ms: float = _spec(0.0, ge=0)
    per_version_ms: float = _spec(0.0, ge=0)
    commit_share: float = _spec(0.0, ge=0, le=1)
    sigma: float = _spec(0.0, ge=0, late=True)


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
    # delta-rs's kernel reads (docs/MODEL.md "Delta clients"): a snapshot's entries read this many times, pass after
    # pass (the kernel's protocol and metadata replay, then delta-rs's file replay: 2); the `_last_checkpoint` hint
    # read before each fresh snapshot's LIST and a HEAD of a new checkpoint before it is written; a checkpoint read as
    # this many ranged GETs one after another; the committer's snapshot updated to its own entry after the commit;
    # with max_retries 0, an attempt whose LIST finds the log moved fails there, before any check or put
    snapshot_passes: int = _spec(1, ge=1, le=4, late=True)
    last_checkpoint_hint: bool = _spec(False, late=True)
    checkpoint_read_gets: int = _spec(1, ge=1, le=1000, late=True)
    post_commit_update: bool = _spec(False, late=True)
    fail_fast_without_retries: bool = _spec(False, late=True)
    # the client's own time before a transaction's first request and after its last one, charged before the first
    # (delta-rs called with a table URI: the table object built afresh, its log store, object store and HTTP
    # client), a constant
    client_setup_ms: float = _spec(0.0, ge=0, late=True)
    # the client's own time per entry in each pass of a snapshot read, after the pass's GETs (delta-rs: decoding
    # and replaying each entry; one writer's passes grow by it: `pass_get_ms` in `sim testbed`'s delta-s3 profile)
    snapshot_entry_ms: float = _spec(0.0, ge=0, late=True)
    # Hudi (the log protocol under a lock): TrueTime's sleep under the lock per instant time generated
    # (hoodie.time.generator.max_expected_clock_skew_ms)
    clock_skew_wait_ms: float = _spec(None, ge=0, late=True)
    # the client's commit loop: Iceberg's Java client (`java`) or PyIceberg's (`pyiceberg`: no refresh before the
    # first attempt, the table loaded with its metadata.json, no read after a failed attempt, the manifest list read
    # beside the manifest's write, the failed attempts' files deleted after a success; docs/model/pyiceberg.md)
    client: str = _spec("java", choices=("java", "pyiceberg"), late=True)
    client_work: ClientWork = _nested(ClientWork, late=True)


@dataclass(frozen=True)
class RetryPolicy:
    """`immediate`; `fixed` (delay_ms); `exponential` (delay = min(base_ms * factor^(k-1), max_ms) for the
    k-th conflict of its class, then stretched by a uniform factor in [1, 1 + jitter]: Iceberg adds up to 10%);
    `linear` (delay = min(base_ms * k, max_ms) + jitter * base_ms * U: SeaweedFS's 50 ms x attempt + U[0, 25)).
    A storage client's resends (`storage.throttle_retry`) may also run a real client's backoff (`object_store`,
    `google_java`), and stop after `max_resends` resends or `deadline_ms` after the request's first send."""
    policy: str = _spec("immediate", choices=("immediate", "fixed", "exponential", "linear") + tuple(RESEND_CLIENTS))
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
    # the k of a sleep's policy: the conflict's count in its class (class), or every failed attempt's (attempt:
    # DuckLake's `retry_backoff^i`, i the attempt). Not seeded: it draws nothing, so switching it compares the same
    # draws
    count_by: str = _spec("class", choices=("class", "attempt"), late=True, seeded=False)


@dataclass(frozen=True)
class Storage:
    provider: str = _spec("s3")
    # a provider given by path: its file's content's sha256, filled in; the config's hash holds it instead of the
    # path (`sim.providers.provider_sha256`). Neither seeds a run: a results folder moved or copied gives the same
    # runs, and two files of a what-if compare the same draws
    provider_sha256: str = _spec(None, late=True, seeded=False)
    # the provider file's set of request latencies: `measured` (the default), one latency per request kind fitted
    # to one writer's measured conditional-write loop; `seed`, the write-up's figures (its experiments name it).
    # Not seeded: both sets scale the same draws, so switching compares like with like
    profile_set: str = _spec("measured", choices=PROFILE_SETS, late=True, seeded=False)
    # the provider's per-object mutation limits (conditional writes to one object name), if it has any
    throttle: bool = _spec(True, late=True, seeded=False)
    # the storage client's resend policy for a request answered 429: by default Google's Java client's (the
    # default design, `file`, is Iceberg's GCSFileIO)
    throttle_retry: RetryPolicy = _nested(RetryPolicy, late=True, seeded=False,
                                          factory=lambda: RetryPolicy(policy="google_java"))
    # the measured set's figures fitted on several writers (its `concurrency_fit`: S3 Express's late losers, Azure's
    # busy answers, GCS's object bucket); false leaves them out, and the run rests on one writer's fit and
    # documented constants alone (docs/model/concurrent-writes.md)
    concurrency_fit: bool = _spec(True, late=True, seeded=False)


@dataclass(frozen=True)
class RequestFaults:
    """One request kind's faults: the share of its requests that took effect and lost their answer (a timeout: the
    client never hears), and the share answered 5xx before they took effect. No rate of either on any commit
    endpoint was found in public sources: 0 unless given."""
    lost_answer: float = _spec(0.0, ge=0, le=1)
    server_error: float = _spec(0.0, ge=0, le=1)


@dataclass(frozen=True)
class Faults:
    """Requests whose outcome the client does not learn (docs/MODEL.md, "Unknown outcomes"). Only the commit
    request has one to lose: the conditional write of the catalog or of a log entry, a REST server's commit POST.
    Reads and a commit's other writes are idempotent: a storage client resends them, at a cost in time only. The
    client's keys are not seeded: switching one compares the same arrivals and draws."""
    commit: RequestFaults = _nested(RequestFaults)
    # how long the client waits for a lost answer before it gives the request up: 30 s, the AWS SDK's and
    # object_store's default request timeout (docs/MODEL.md, "Unknown outcomes")
    timeout_ms: float = _spec(30_000.0, gt=0, seeded=False)
    # how the client meets an answer it lost or a 5xx: its design's (filled in when a fault rate is above 0)
    client: str = _spec(None, choices=REACTIONS, seeded=False)
    # Delta Spark's commit.idempotencyCheck.enabled (internal, off by default): a resent entry that finds its own
    # commit there is a success, not a conflict
    idempotency_check: bool = _spec(False, seeded=False)
    # the data files a commit adds and their bytes, orphaned with its metadata when it never lands: the table's own
    # (no default workload has one), counted only when given
    data_files: int = _spec(0, ge=0, seeded=False)
    data_bytes: float = _spec(0.0, ge=0, seeded=False)


@dataclass(frozen=True)
class Config:
    # unset: 1 h, or with a trace its whole history (`resolve`: on the history's clock, docs/model/workload.md)
    duration_ms: float = _spec(None, gt=0)
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
    # maintenance jobs beside the writers; none by default
    maintenance: Maintenance = _nested(Maintenance, late=True)
    # metadata that grows with the table's age; off by default
    metadata: Metadata = _nested(Metadata, late=True)
    # commit requests that lose their answer; none by default
    faults: Faults = _nested(Faults, late=True)

    def to_dict(self) -> dict:
        """The resolved config as plain data; keys that do not apply (None) are left out."""
        return _prune(dataclasses.asdict(self))

    @property
    def max_attempts(self) -> int:
        return self.commit.max_retries + 1


def _prune(d):
    """Keys that do not apply left out: None values, and sections with nothing left (an unused server)."""
    if isinstance(d, dict):
        out = {k: _prune(v) for k, v in d.items() if v is not None}
        return {k: v for k, v in out.items() if v != {}}
    return d
