"""The model's state, by name: a transaction slot (`TX`), the run's scalars (`RUN`), a history row (`HIST`), the
parameters (`Params`), the codes (`PC`, `Outcome`, ...) and the `Model` tuple that holds them.

Handlers read and write fields by name (`tx = m.tx[j]; tx.attempts += 1`, `m.run[0].seq`, `m.p.max_attempts`),
the same code in both engines: compiled by numba, a slot is a view into its structured array; interpreted (the
SimPy engine), it is a small object with the same fields (`sim.engines.view`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..rng import model_sources

I, F = np.int64, np.float64

# one transaction slot (a row of `Model.tx`): whose it is, where it waits, what it has done
TX = np.dtype([
    ("txn", I),                  # transaction id; -1 in a free slot
    ("table", I),
    ("op", I),                   # its operation (Op): a FastAppend, a ValidatedOverwrite, or with
                                 # `workload.operations` or a maintenance job an operation of docs/MODEL.md's table
    ("parts", I),                # ... and the partitions it reads and writes, one bit each (`sim.model.operations`)
    ("in_window", I),
    ("pc", I),                   # the effect point it waits for (PC)
    ("seq", I),                  # the version its next conditional write expects (catalog seq, or v[t])
    ("version", I),              # v[t] at its last read
    ("prepared", I),             # the table version its written metadata is prepared on
    ("validated", I),            # the table version it has validated (or, the log protocol, checked) up to
    ("outcome", I), ("reason", I),
    ("attempts", I), ("catalog_conflicts", I), ("table_conflicts", I), ("manifest_lists_read", I),
    ("catalog_reads", I), ("gets", I), ("puts", I),
    ("throttled", I),            # conditional writes answered 429 (resent; not attempts)
    ("throttled_in_row", I),     # 429s in a row of the request in flight
    ("request_sent_ms", F),      # ... which it first sent then (its storage client's deadline counts from it)
    ("resend_delay_ms", F),      # ... and the sleep before its last resend (a client's next sleep grows from it)
    ("arrival_ms", F), ("runtime_ms", F), ("runtime_end_ms", F), ("end_ms", F),
    ("op_latency_ms", F),        # latency of the catalog operation in flight
    ("backoff_ms", F),
    ("writer", I),               # its writer (docs/MODEL.md, "Writers"); -1 under open-loop arrivals
    ("job", I),                  # its maintenance job's row (`Model.jobs`; -1: a writer's or an arrival's)
    ("metadata_bytes", F),       # metadata growth: the size of the metadata.json its last attempt wrote (0: none)
    ("start_snapshots", I),      # ... and, with an expiry job, the snapshots its table had committed at its start
    ("due_ms", F),               # periodic writers: the tick it serves (NaN otherwise)
    ("missed", I),               # periodic writers: the writer's ticks that got no commit of their own just before
    # a client's token bucket under open-loop arrivals (each transaction its own client; `sim.model.throttle`)
    ("client_tokens", F), ("client_last_ms", F),
    # REST servers (sim.model.designs.rest)
    ("server_retries", I),       # the server's retries of the commit in flight after a lost database CAS
    # version files (sim/model/designs/fs_table.py)
    ("after_read", I),           # the effect point a version-file read hands its answer to (PC)
    ("probe", I),                # the version name its probe in flight asks for
    # log fidelity: LISTs of the log besides its catalog reads (snapshot updates, checkpoint rebuilds, cleanup)
    ("lists", I),
    # locks (sim/model/lock.py): where it goes once it holds the lock, and once it neither holds nor waits for it
    ("after_lock", I), ("after_unlock", I),
    ("lock_answer_ms", F),       # from a lock handler's `now` to when the client hears of it (a grant, a release)
    ("lock_failed", I),          # 1: its lock call gave up (timed out with no re-request left)
    ("lock_polls", I),           # polls of its request in flight
    ("lock_retries_left", I),    # re-requests left after a timeout, in this lock call
    ("lock_requested_ms", F),    # when its request in flight first reached the lock service (NaN: not yet)
    ("lock_granted_ms", F),      # when it was granted the lock it holds
    ("lock_deadline_ms", F),     # FIFO notify: when its timer gives its wait up
    ("lock_requests", I), ("lock_grants", I), ("lock_timeouts", I), ("lock_wait_ms", F), ("lock_hold_ms", F),
    ("deletes", I),              # object DELETEs (Iceberg on HMS: a losing attempt's metadata.json)
    ("commit_in_ms", F),         # Iceberg's client: from the hand-over to when its design's commit request goes out
    ("queue_next", I),           # the slot queued behind it in a lock's queue (sim/model/fifo.py; -1: none)
    ("pool_next", I),            # ... the slot queued behind it in a pool's queue (sim/model/fifo.py; -1: none)
    # a server's database capacity (sim/model/capacity.py): the pool whose connection it holds (-1: none); 1 if it
    # keeps it after the answer of its request in flight (one transaction over several requests)
    ("pool", I), ("pool_keep", I),
    ("pool_ask", I),             # the pool its next request asks a connection of ...
    ("pool_src", I), ("pool_pc", I),   # ... and that request's latency source and effect point
    ("pool_resume_pc", I),       # where it goes on after its connection's release at its request's answer ...
    ("pool_resume_ms", F),       # ... and how long after that release
    ("pool_queued_ms", F),       # when it joined its queue
    ("pool_wait_ms", F),         # time it waited for connections (HMS: its NEXT_LOCK_ID row, Hive 3 mutex), summed
    # Delta's DynamoDB log store (sim/model/log_store.py): where a transaction goes on after its read of the store
    # in flight is answered (PC), and the time from that answer to its next step
    ("store_next", I), ("store_after_ms", F),
    # Hudi: its upsert's file groups are pending clustering (REJECT_AT_WRITE) or a merge-on-read compaction was
    # scheduled on them after its instant (FAIL_AT_CHECK: its commit's conflict check fails it)
    ("rejected", I),
    ("instant", I),              # Hudi: 1 from its start lock (its instant on the timeline) until it commits
    # commits over several tables (sim/model/multi_table.py): its tables (`Model.mt_table`), the one its request in
    # flight is on (an index into them), and the table whose row lock its statement waits for (-1: none)
    ("ntables", I), ("mt_i", I), ("row_wait", I),
    ("wake_next", I),            # a parked slot woken in the same event after it (`sim.model.fifo.wake`; -1: none)
    # Nessie (sim/model/designs/rest_tx.py): the branch's head its commit attempt read, when its commit loop and the
    # attempt began
    ("ref_head", I), ("ref_t0_ms", F), ("ref_try_ms", F),
    # faults (sim/model/faults.py): its commit requests that lost their answer or were answered 5xx, the last one's
    # fault (Fault), that fault's storage-client resends in a row and when it was first sent; how many times its
    # change landed, and the table version its first landing made; what it left orphaned (an unknown outcome that
    # never landed: the files its last attempt wrote, data included)
    ("faults", I), ("fault", I), ("fault_in_row", I), ("fault_sent_ms", F), ("landings", I), ("landed_v", I),
    ("orphaned_files", I), ("orphaned_bytes", F),
    # a catalog operation as database round trips (sim/model/round_trips.py): after the effect point's own round
    # trip, the rest of the operation in flight (all of it: a lost commit's ROLLBACK); a commit that stays open to
    # its COMMIT: the round trips between, the COMMIT's own, and those after it
    ("rt_after_ms", F), ("rt_mid_ms", F), ("rt_visible_ms", F), ("rt_tail_ms", F),
    ("work_ms", F),              # the client's own time in its attempt in flight (`commit.client_work`)
])

# one writer's state (a row of `Model.wr`; `sim.model.writers`)
WR = np.dtype([
    ("started", I),              # its transactions so far (a maintenance job: its runs, its partitions' rotation)
    ("phase_ms", F),             # periodic: its ticks are at phase_ms + k interval_ms
    ("tick", I),                 # periodic: the first tick no commit has served yet
    ("due_ms", F),               # the next transaction's tick (NaN: closed loop) ...
    ("missed", I),               # ... and the ticks missed before it
    ("client_tokens", F), ("client_last_ms", F),   # its client's token bucket (`sim.model.throttle`)
    # a maintenance job's run in batches (partial progress, `sim.model.jobs`): the next batch to open (-1: no run
    # in progress), its batches open, and the run's starting version, start, work and partitions
    ("batch", I), ("open_batches", I), ("run_version", I), ("run_start_ms", F), ("run_work_ms", F),
    ("run_parts", I), ("run_snapshots", I),
    ("again_ms", F),             # after its last start, the delay to its next with no end between (-1: none)
    ("inline_table", I),         # Hudi: the table whose service it runs inline next, as its commit returns (-1: none)
    # a trace (`sim.model.trace`): its rows `Model.trace[trace_row:trace_end]` still to start
    ("trace_row", I), ("trace_end", I),
])

# one arrival drawn ahead (a row of `Model.arrivals`): its table, operation and runtime
ARRIVAL = np.dtype([("table", I), ("op", I), ("parts", I), ("runtime_ms", F),
                    ("ntables", I)])   # ... and the tables its commit spans (its others: `Model.arr_more`)

# one row of a trace replayed (a row of `Model.trace`; `sim.model.trace`): when it arrives on the simulated clock, its
# table, operation, partitions and runtime
TRACE = np.dtype([("arrival_ms", F), ("table", I), ("op", I), ("parts", I), ("runtime_ms", F)])

# one table's metadata (a row of `Model.tables`; `sim.model.growth`): snapshots retained, snapshots committed, metadata
# versions written, live manifests; and (Hudi, `sim.model.designs.hudi`) the partitions a pending clustering holds
TABLE = np.dtype([("snapshots", I), ("total", I), ("versions", I), ("manifests", I), ("clustering_parts", I),
                  ("delta_commits", I),    # ... and the commits since its last service (one run inline)
                  ("marker_puts", I)])     # its directory marker's PUTs so far (`Model.markers`)

# one maintenance job on one table (a row of `Model.jobs`; `sim.model.jobs`): its operation, table, schedule, the
# lognormal of its run time before its commit, and the partitions each run reads (a rotation of `touches`; 0: all)
JOB = np.dtype([("op", I), ("table", I), ("every_ms", F), ("median_ms", F), ("sigma", F), ("touches", I),
                ("groups", I), ("max_commits", I), ("threads", I)])   # partial progress (0 groups: one commit)

# one object's token bucket (a row of `Model.bk`; `sim.model.throttle`); and its conditional writes in flight
# (`sim.model.contention`): the latest answer of those sent and whose write it is (a slot), the latest answer of the
# others, and until when the object reads empty
BUCKET = np.dtype([("tokens", F), ("last_ms", F), ("busy_until_ms", F), ("busy_slot", I), ("busy_next_ms", F),
                   ("empty_until_ms", F)])

# one commit lock's state (a row of `Model.lk`; `sim.model.lock`)
LK = np.dtype([
    ("holder", I),               # the slot holding it (-1: free)
    ("head", I), ("tail", I),    # FIFO disciplines: the first and last slots queued for it (-1: none)
    ("expires_ms", F),           # a storage lock whose release failed: when it expires (its holder is GHOST) ...
    ("ghost_txn", I), ("ghost_table", I),   # ... and the transaction, and its table, that held it
])

# one FIFO resource of a server's database (a row of `Model.pl`; `sim.model.capacity`): a connection pool, or a
# table's row lock (a pool of one)
POOL = np.dtype([
    ("free", I),                 # units free (connections; 1 or 0 for a row lock)
    ("head", I), ("tail", I),    # the first and last slots queued for one (-1: none)
    ("holder", I),               # a row lock: the slot holding it (-1: none; a deadlock's check follows it)
])

# the run's scalars that change (`Model.run`, one row)
RUN = np.dtype([
    ("seq", I),                  # commits so far: the catalog's version under scope global
    ("open_in_window", I),       # window transactions not yet ended
    ("arrivals_done", I), ("arrivals_next", I), ("next_txn", I), ("stop", I),
    ("hist_rows", I),            # rows used in the history buffer
    ("free_slots", I),           # free slots, the top of the `free` stack
    ("arrivals_base", I),        # the index of the drawn arrival `arrivals[0]` is
    ("drawn_next", I),           # the index of the next drawn arrival to open (maintenance jobs draw none of them)
    ("validate_max", I),         # at the last stop between events, the most snapshots a transaction in flight
    ("seq_at_stop", I),          # had yet to validate; and `seq` then
    ("writers_active", I),       # writers that will start another transaction
    ("snapshots_max", I),        # metadata growth with an expiry: the most snapshots a table has retained
    # locks and server capacity: what the last handler asks of the engine besides its own next event (-1: nothing)
    ("wake", I),                 # the parked slot to run now (a FIFO-notify grant; a connection or row lock handed on;
    ("wake_last", I),            # ... the first of those woken in this event, the last one: `sim.model.fifo.wake`)
    ("timer", I),                # the slot whose timer to set, `timer_ms` from now (a parked waiter's timeout)
    ("timer_ms", F),
    ("store_free_ms", F),        # a store that serves GETs one at a time: when it has served those sent so far
])

# one history row (`Model.hist`; docs/FORMATS.md "History")
HIST = np.dtype([
    ("kind", I), ("txn", I), ("table", I), ("seq", I), ("version", I), ("expected", I), ("ok", I),
    ("base_version", I), ("validated_from", I), ("validated_to", I), ("outcome", I), ("reason", I),
    ("attempts", I), ("time_ms", F), ("answer_ms", F),
])
# history rows one event writes at most (a Lakekeeper 0.9 COMMIT: its CAS, the row lock's release and grant, the end)
HIST_ROWS_PER_EVENT = 4


class Params(NamedTuple):
    """The run's parameters, fixed for its length (`sim.model.params.params_of`)."""
    f: float                     # a catalog operation takes effect at f of its latency ...
    g: float                     # ... and its caller learns the answer (1 - f) later
    cf: float                    # a storage object's conditional write: where the store checks it (f, or 1: at its
    cg: float                    # completion, S3's "first write to finish succeeds"), and 1 - cf
    duration_ms: float
    window_lo_ms: float
    window_hi_ms: float
    jitter_catalog: float
    jitter_table: float
    jitter_throttle: float
    mutation_rate_per_ms: float  # per-object token refill (0: no limit)
    mutation_burst: float
    mutation_refusal_tokens: float  # a refused write takes this many tokens too (0: the plain bucket)
    client_rate_per_ms: float    # per-client token refill (0: no client bucket; `sim.model.throttle`)
    client_burst: float
    client_refusal_tokens: float
    metadata_inlined: bool
    file_lists_inlined: bool     # DuckLake: no manifest list or manifest to write or read; DuckLake's rules
    ducklake_14: bool            # ... DuckLake 1.4's rules (inserts and deletes of one table never conflict)
    max_parallel: int
    exact_reads: bool            # io.long_reads: exact (every read drawn request by request; `sim.model.io`)
    max_attempts: int
    refresh_first: bool
    metadata_read_on_failure: bool
    history: bool
    policy_catalog: int
    policy_table: int
    policy_throttle: int
    throttle_max_resends: int    # the storage client gives a request up at its next 429 after this many resends
    throttle_deadline_ms: float  # ... or once this long has passed since its first send (inf: never)
    throttle_base_ms: float      # object_store's and Google's clients: their first sleep, growth and cap
    throttle_factor: float
    throttle_max_ms: float
    vo_conflicts: bool
    scope_table: bool
    throttle: bool
    checkpoint_interval: int
    log: bool
    object_shape: bool           # commit.shape object: no metadata I/O, the object's read and conditional write
    head: bool                   # ... whose first read is a HEAD then a GET (a storage catalog, rewrite)
    own_head: bool               # ... the HEAD drawn from the profile's own HEAD (`Src.HEAD`), else a GET draw
    object_queue: bool           # the store serves conditional writes to one object one at a time (design cas_queue)
    head_version: bool           # ... and the conditional write expects the HEAD's version, the GET after it
                                 # reading the body (the benchmark's client on S3 and GCS: docs/MODEL.md)
    file_system: bool            # a file system: an exists() probe is a HEAD (getFileInfo, stat), not a GET draw, a
                                 # log's LIST reads its whole directory (no list-from), and a log entry is written to
                                 # a temp file first (a PUT), then renamed or linked
    create_exists: bool          # ... its create-if-absent first checks exists() (a HEAD): a rename's clients
    writers: int                 # 0: open-loop arrivals (a trace: its writers, then its rows of no writer)
    trace: bool                  # a trace replays (`sim.model.trace`): its rows are the writers' transactions
    periodic: bool
    interval_ms: float
    jitter_ms: float
    skip: bool                   # periodic: a tick that comes while its previous commit runs is dropped
    budget: int                  # transactions per writer (0: no budget)
    spread_ms: float
    owned: bool                  # writer w commits to table w mod num_tables
    num_tables: int
    # REST servers (sim/model/designs/rest.py)
    server: bool                 # the service is a REST server whose commit is built from its parts
    server_get: bool             # ... whose loads GET metadata.json after the database read
    server_retries: int          # ... which retries a lost database CAS this many times
    policy_server: int           # ... sleeping this retry policy (`Model.bo_srv`) with this jitter
    jitter_server: float
    server_reread: bool          # ... which re-reads the row before its UPDATE (a compare of its own)
    server_delete: bool          # ... which DELETEs the metadata.json it wrote when its database check fails
    row_locks: bool              # ... whose one transaction holds its row lock across the metadata.json PUT
    row_hold: bool               # ... whose commit transaction holds the row from its updates to its COMMIT
    client_pool: int             # the pool of the server's database the client's loads take (sim/model/capacity.py)
    pool_timeout_ms: float       # ... a request waiting this long for a connection is given up (0: never)
    # a service catalog's operations as database round trips (sim/model/round_trips.py, design cas_db): on; per
    # operation its round trips and the one that takes effect (the base read, the first attempt's refresh, the
    # read after a lost commit (0: none), the read after the sleep, the commit), and the commit's COMMIT, where it
    # becomes visible (after its effect: the row it wrote is held to then)
    rt_ops: bool
    rt_base_n: int
    rt_base_k: int
    rt_refresh_n: int
    rt_refresh_k: int
    rt_conflict_n: int
    rt_conflict_k: int
    rt_retry_n: int
    rt_retry_k: int
    rt_commit_n: int
    rt_commit_k: int
    rt_commit_visible: int
    rt_reread_n: int             # ... the re-read right before the commit (PyIceberg's SqlCatalog's commit_table load)
    rt_reread_k: int
    rt_hold: bool                # ... the commit's visible round trip comes after its effect's
    retry_by_attempt: bool       # a retry's sleep counts every failed attempt, not its class's (retry.count_by)
    # version files (sim/model/designs/fs_table.py) and the re-read before the CAS (sim/model/iceberg.py)
    version_files: bool
    reread_before_cas: bool
    # log fidelity (sim/model/delta.py): the snapshot update inside an attempt, the snapshot reads' parallelism,
    # the post-commit checkpoint rebuild, the expired-log cleanup (LogCleanup) and the entries at the start
    snapshot_update: bool
    snapshot_max_parallel: int
    checkpoint_rebuild: bool
    log_cleanup: int
    log_entries_at_start: int
    snapshot_passes: int         # delta-rs: a snapshot's entries read this many times, pass after pass
    last_checkpoint_hint: bool   # ... `_last_checkpoint` GET before a fresh snapshot's LIST; a new checkpoint's HEAD
    checkpoint_read_gets: int    # ... a checkpoint read as this many ranged GETs, one after another
    post_commit_update: bool     # ... the committer's snapshot updated to its entry (a LIST, its entry's passes)
    fail_fast: bool              # ... max_retries 0: an attempt whose LIST finds the log moved fails there
    client_setup_ms: float       # the client's own time before a transaction's first request and after its last
    snapshot_entry_ms: float     # delta-rs: its own time per entry in each pass of a snapshot read
    get_service_ms: float        # the store's own time per GET, serving them one at a time (0: no queue)
    # locks (sim/model/lock.py)
    lock: bool                   # commits take a lock (lock.variant)
    lock_per_table: bool         # ... one per table (else one for every table)
    lock_discipline: int         # ... how waiters wait (Discipline)
    lock_in_storage: bool        # ... an object in the provider: GET polls, conditional writes, its mutation limit
    lock_validity_ms: float      # ... whose release, if it failed, leaves it held this long after its grant
    lock_timeout_ms: float       # a request not granted this long after it reached the service is given up
    lock_retries: int            # ... and re-requested this many times, after lock_retry_wait_ms each
    lock_retry_wait_ms: float
    lock_lease_ms: float         # lease_sleep: a waiter that finds the lock held sleeps this long
    policy_lock: int             # the sleep before the k-th poll (`Model.bo_lock`) and its jitter
    jitter_lock: float
    hudi: bool                   # the log protocol under a lock: Hudi's OCC (sim/model/designs/hudi.py)
    clock_skew_wait_ms: float    # ... TrueTime's sleep under the lock per instant time generated
    log_store: bool              # Delta's DynamoDB log store: the entry's conditional PutItem commits it
    read_rate_per_ms: float      # ... its table's read capacity (units a ms; every read takes one) and burst
    read_burst: float
    hms_row_share: float         # HMS: each lock() holds the NEXT_LOCK_ID row this share of its round trip (0: none)
    hms_mutex_share: float       # HMS, Hive 3: each checkLock holds the checkLock mutex this share of its round trip
    # operations with read and write sets (`sim.model.operations`) and maintenance jobs (`sim.model.jobs`)
    ops: bool                    # conflicts decided by the format's rules against every commit since the base
    serializable: bool           # ... an overwrite or row delta's isolation (else snapshot isolation)
    equality_deletes: bool       # ... a row delta writes equality deletes (else position deletes)
    partitions: int              # ... a table's partitions (at most 62)
    jobs: int                    # maintenance job rows, after the writers' in `Model.wr` (one a job and a table)
    partial: bool                # ... a compaction commits in batches (partial progress)
    hudi_mor: bool               # ... on Hudi, a compaction is a merge-on-read compaction (not a clustering)
    inline_every: int            # ... run by the writer of every n-th commit on its table (0: not inline) ...
    inline_median_ms: float      # ... working a lognormal time
    inline_sigma: float
    starters: int                # writers + jobs: rows of `Model.wr`, each with at most one pending start
    # metadata that grows (`sim.model.growth`): on; an expiry job keeps its snapshots' times
    growth: bool
    expiring: bool
    md_base_bytes: float         # metadata.json: an empty table's, each snapshot's and its snapshot-log entry's, a
    md_snapshot_bytes: float     # metadata-log entry's, and the entries kept
    md_snapshot_log_bytes: float
    md_log_bytes: float
    md_log_max: int
    ml_base_bytes: float         # the manifest list: its header and schema, each live manifest's entry
    ml_entry_bytes: float
    merge_min_count: int         # a MergeAppend merges the manifests once this many are live (0: never, FastAppend)
    expire_max_age_ms: float
    tm_bytes: float              # the sizes the PUT and GET draws are the profile's at (io.table_metadata_bytes, ...)
    ml_bytes: float
    put_fixed_ms: float          # the PUT profile: its fixed part, median base and slope
    put_base_ms: float
    put_ms_per_byte: float
    get_ms_per_byte: float       # a GET's transfer of the bytes above its draw's size
    # commits over several tables (`sim.model.multi_table`): the most a commit spans (1: none), a Lakekeeper-style
    # bulk commit (one load of all, parallel PUTs, one UPDATE) or Polaris's table by table, and PostgreSQL's
    # deadlock_timeout (a waiting statement checks for a deadlock this long after it began to wait)
    tables_max: int
    mt_bulk: bool
    deadlock_ms: float
    mt_ref: bool                 # ... Nessie's: one commit on its branch, whose ref is CASed (and retried: `ref_*`)
    mt_seq: bool                 # ... Iceberg's reference server's: every table checked, then committed one by one
    ref_lower_ms: float
    ref_upper_ms: float
    ref_max_sleep_ms: float
    ref_timeout_ms: float
    # commit requests whose answer is lost (`sim.model.faults`; docs/MODEL.md, "Unknown outcomes"): on; the share
    # that took effect and lost their answer, and that were answered 5xx before they took effect; the client's wait
    # for a lost answer, its reaction (Reaction), whether its storage client resends a 5xx, Delta Spark's
    # idempotency check, the metadata versions a status check searches, and the data files and bytes a commit adds
    faults: bool
    lost_p: float
    error_p: float
    fault_timeout_ms: float
    reaction: int
    resends_errors: bool
    idempotency_check: bool
    status_window: int
    data_files: int
    data_bytes: float
    # concurrent conditional writes to one object (`sim.model.contention`, design cas_contended): on; a losing write
    # answered this much late (S3 Express); one that meets another in flight answered 5xx with this probability
    # (Azure); the microbenchmark's reads fail while the object reads empty, mid-write (ADLS Gen2's upload)
    contended: bool
    loser_answer_ms: float
    busy_share: float
    empty_reads: bool
    # PyIceberg's client (`commit.client: pyiceberg`, `sim.model.pyiceberg`): on; its load GETs metadata.json
    # itself (SqlCatalog: no server); the client's own time per attempt, base and per table version, and the share of
    # it spent in its commit call after that call's load (`commit.client_work`; any rewrite client's)
    pyiceberg: bool
    load_get: bool
    work_base_ms: float
    work_per_version_ms: float
    work_commit_share: float
    marker_window_ms: float      # a store that writes a directory marker under a lock per marker (SeaweedFS 4.48):
    marker_poll_ms: float        # two marker PUTs closer than the window collide, the later waits a poll (0: none)
    server_local: bool           # a REST server whose steps are local (SeaweedFS's; `catalog.server.load_latency`)
    srv_load_per_version_ms: float    # ... its load's and its commit's own time grow this much a table version
    srv_commit_per_version_ms: float
    parks: bool                  # a mechanism may park a transaction, hand a parked one on or set its timer (a lock,
                                 # a server's pools and row locks, a per-object queue): the engine reads run.wake and
                                 # run.timer after each step


def _codes(name: str, names: str, first: int = 0, kind=int):
    """A namespace of codes (a NamedTuple instance: numba reads it as constants, Python as attributes), valued
    first, first + 1, ..."""
    fields = names.split()
    return NamedTuple(name, [(f, kind) for f in fields])(*(kind(first + i) for i in range(len(fields))))


# where a transaction is suspended: the catalog effect point it waits for (docs/MODEL.md, "A transaction as
# handlers of its effect points")
PC = _codes("PC", "INIT BASE REFRESH CAS CONFLICT_READ BACKOFF_READ DONE LOG_BASE LOG_LIST LOG_CREATE"
                  " SRV_LOAD SRV_CAS"    # REST servers: the server's load of the base, its database CAS
                  " FS_HINT FS_PROBE REREAD"     # version files; the re-read before the CAS
                  # locks (sim/model/lock.py): a request, a poll, a parked waiter, an HMS waiter's cancel, a
                  # release; then Iceberg on HMS (sim/model/designs/hive.py): holding the lock, getTable,
                  # alter_table, after the unlock
                  " LOCK_REQUEST LOCK_POLL LOCK_WAIT LOCK_CANCEL UNLOCK"
                  " HIVE_LOCKED HIVE_CHECK HIVE_ALTER HIVE_UNLOCKED"
                  # Hudi (sim/model/designs/hudi.py): holding the start lock, started; holding the commit lock, the
                  # timeline's LIST, the completed instant's PUT; failed
                  " HUDI_START_LOCKED HUDI_STARTED HUDI_LOCKED HUDI_CHECK HUDI_COMMIT HUDI_FAILED"
                  " LOG_COMPLETE"   # Delta's DynamoDB log store: the completion PutItem (sim/model/log_store.py)
                  " COMMIT"         # Iceberg's client hands an attempt to its design's commit (sim/model/iceberg.py)
                  # a server's database capacity (sim/model/capacity.py): a request asks for a connection, waits
                  # for one, releases it at its answer; a REST server's re-read before its UPDATE, and its wait for a
                  # row lock (sim/model/designs/rest.py)
                  " POOL_ACQUIRE POOL_WAIT POOL_RELEASE SRV_REREAD SRV_ROW_WAIT"
                  " POOL_TIMEOUT"    # ... a request given up after its pool's acquire timeout
                  " HMS_ROW_WAIT"    # HMS: a lock() waiting for the NEXT_LOCK_ID row (sim/model/designs/hive.py)
                  # Delta's DynamoDB log store: a LIST's Query of the newest entry, an attempt's GetItem of the
                  # previous one (sim/model/log_store.py)
                  " STORE_QUERY STORE_GET"
                  # HMS, Hive 3: a checkLock (a lock()'s, after its enqueue; a poll's) waiting for the metastore's
                  # checkLock mutex, and its check under it (sim/model/designs/hive.py)
                  " HMS_MUTEX_WAIT HMS_CHECK_LOCK"
                  # a REST server's updates in its commit transaction, under the table's row lock (Lakekeeper
                  # >= 0.10: sim/model/designs/rest.py)
                  " SRV_UPDATE"
                  # commits over several tables (sim/model/designs/rest_tx.py): the client's load of one of its
                  # tables; the server's load (of one, or of all), its UPDATE of one table's row (or of all), a
                  # statement waiting for a row lock, the COMMIT, a wait that PostgreSQL found deadlocked
                  " MT_LOAD MT_SRV_LOAD MT_UPDATE MT_ROW_WAIT MT_COMMIT MT_DEADLOCK"
                  " MT_REF_HEAD MT_REF_CAS"   # ... Nessie's read of its branch's head, and the CAS of its ref
                  # ... Iceberg's reference server, table by table: a table's refresh, its row's check, its UPDATE
                  " MT_SEQ_REFRESH MT_SEQ_CHECK MT_SEQ_UPDATE"
                  " STATUS_CHECK"   # a client's refresh that looks for its own commit after a lost answer (faults)
                  # a commit on database round trips (sim/model/round_trips.py): its statement waiting for the row
                  # another open transaction wrote; its COMMIT
                  " DB_ROW_WAIT DB_COMMIT"
                  # concurrent writes to one object (design cas_contended): a conditional write's send; the
                  # microbenchmark's HEAD, whose length the client checks
                  " CAS_SEND HEAD_CHECK")

# numpy ints, not Python ints, for codes passed to helpers: numba types a Python int constant passed to a helper as
# a literal and compiles one specialization of the helper per value
Kind = _codes("Kind", "BEGIN READ PREPARE CAS END FINAL THROTTLED LOCK_REQUEST LOCK_GRANT LOCK_RELEASE LOCK_TIMEOUT"
                      " STORE_WRITE LOCK_WRITE STORE_READ"
                      " LANDED"    # a commit over several tables landed on another of its tables too
                      " FAULT", kind=I)   # a commit request's answer lost, or a 5xx before it took effect (faults)
KINDS = tuple(k.lower() for k in Kind._fields)
# unknown: the client ended without learning whether its change landed (the history knows); duplicated: it landed
# twice and the client was told it committed (docs/MODEL.md, "Unknown outcomes"); partial: a commit over several
# tables that the client was told committed landed on some of them only (Iceberg's reference server)
Outcome = _codes("Outcome", "NONE COMMITTED ABORTED UNFINISHED UNKNOWN DUPLICATED PARTIAL", kind=I)
OUTCOMES = ("", "committed", "aborted", "unfinished", "unknown", "duplicated", "partial")
# empty_read: the microbenchmark's client read the object empty, mid-write, and failed its operation
Reason = _codes("Reason", "NONE EXHAUSTED VALIDATION UNFINISHED THROTTLED LOCK_TIMEOUT POOL_TIMEOUT DEADLOCK"
                          " LOST_ANSWER SERVER_ERROR SELF_CONFLICT DROPPED EMPTY_READ", kind=I)
REASONS = ("", "retries_exhausted", "validation_failed", "unfinished", "throttled", "lock_timeout",
           "pool_timeout", "deadlock", "lost_answer", "server_error", "self_conflict", "dropped", "empty_read")
# a commit request's fault (`sim.model.faults`): none, its answer lost after it took effect, a 5xx before it did
Fault = _codes("Fault", "NONE LOST ERROR", kind=I)
# how a client meets a commit whose answer it lost (`faults.client`)
Reaction = _codes("Reaction", "STATUS_CHECK RECONCILE ERROR RESEND")   # (`sim.config.defaults.REACTIONS`)
# operations: a FastAppend and a ValidatedOverwrite (whose conflicts are drawn), then the operations whose conflicts
# the format's rules decide (`sim.model.operations`; docs/MODEL.md, "Operations and maintenance")
Op = _codes("Op", "FA VO OVERWRITE ROW_DELTA COMPACTION REWRITE_MANIFESTS EXPIRE_SNAPSHOTS SCHEMA_CHANGE", kind=I)
OPS = tuple(o.lower() for o in Op._fields)
NA, FALSE, TRUE = I(-1), I(0), I(1)
# retry policies; the last two only as storage clients' resend policies (`sim.model.resend`)
Policy = _codes("Policy", "IMMEDIATE FIXED EXPONENTIAL OBJECT_STORE GOOGLE_JAVA AWS_DYNAMODB GAX AZURE_JAVA"
                          " LINEAR")   # (a commit retry: base x k plus an additive jitter; SeaweedFS's server)
# random sources, the index of each in `Model.draws` (docs/MODEL.md, "Randomness"): declared in `sim.rng.SOURCES`
SRC_SOURCES = model_sources()           # the sources' declarations, in `Src` order
Src = _codes("Src", " ".join(s.code for s in SRC_SOURCES))
N_SRC = len(Src)
# bits of the `needs` mask past the sources': the history buffer is full; the next arrival has no free slot or no
# drawn table; the conflict table could be indexed past its end; a throttled log's next entry has no bucket; a
# read could be long (`sim.long_reads`) and its table is not built yet; a long read on lanes could outgrow its
# scratch (`Model.epochs`); a validation could read a commit its table's ring (`Model.ring_op`) no longer holds; a
# table could retain more snapshots than its ring of their times (`Model.snap_ms`) holds
Need = _codes("Need", "HISTORY TXN THR BUCKETS LONG_READS EPOCHS RING SNAPSHOTS", first=N_SRC)
ArrivalsAt = _codes("ArrivalsAt", "NEXT CLOSE", first=1)   # the arrivals' pending event
# log fidelity: when the expired-log cleanup LISTs the log (`commit.log_cleanup`)
LogCleanup = _codes("LogCleanup", "NONE EVERY_COMMIT CHECKPOINT")
# locks: how a waiter waits (docs/MODEL.md, "Locks")
Discipline = _codes("Discipline", "FIFO_NOTIFY FIFO_POLL RACE_POLL LEASE_SLEEP")
DISCIPLINES = tuple(d.lower() for d in Discipline._fields)
LIST_PAGE_KEYS = 1000    # keys per LIST page: S3 ListObjectsV2's and GCS objects.list's most (docs/MODEL.md)


class Model(NamedTuple):
    """Everything one run's handlers read and write."""
    p: Params
    run: np.ndarray         # RUN, one row
    tx: np.ndarray          # TX, one row per slot
    free: np.ndarray        # the free slots, a stack of run.free_slots
    versions: np.ndarray    # the catalog: v[t] per table (the global seq is run.seq)
    hist: np.ndarray        # HIST rows, run.hist_rows of them used
    draws: np.ndarray       # every random source's drawn values, end to end (`sim.model.draws`): source s's
    draw_at: np.ndarray     # start at draw_at[s], draw_n[s] of them, read at draw_at[s] + cur[s], stepping step[s]
    draw_n: np.ndarray      # (0: a constant source, its one value reused)
    cur: np.ndarray
    step: np.ndarray
    arrivals: np.ndarray    # ARRIVAL, per drawn arrival from index run.arrivals_base on: its table, operation, runtime
    thr: np.ndarray         # P(a real conflict among n snapshots) for n = 0, 1, ... (the last one for any larger n
                            # once it is 1.0)
    bo_cat: np.ndarray      # backoff before jitter for the k-th catalog conflict
    bo_tab: np.ndarray      # ... for the k-th table conflict
    bo_thr: np.ndarray      # resend delay before jitter after the k-th 429 in a row
    lanes: np.ndarray       # scratch: io.max_parallel lane end times; ...
    lane_n: np.ndarray      # ... and each lane's epochs in a long read on lanes (`sim.model.io`), whose epochs
    epochs: np.ndarray      # ... lie here (grown between events to hold the largest read's)
    bk: np.ndarray          # BUCKET, per-object token buckets (sim.model.throttle): tokens, last update
    bk_head: np.ndarray     # per table: the run's commit index of its newest log entry (-1: none)
    bk_prev: np.ndarray     # per commit index: the one of the previous entry of the same table
    wr: np.ndarray          # WR, one row per writer (one blank row under open-loop arrivals)
    bo_srv: np.ndarray      # REST servers: sleep before jitter before the server's k-th retry of a lost CAS
    hints: np.ndarray       # version files: per table, the version its version hint names
    bo_lock: np.ndarray     # locks: the sleep before jitter before the k-th poll
    lk: np.ndarray          # LK, one row per lock (`sim.model.lock`)
    pl: np.ndarray          # POOL, a server's connection pools then its tables' row locks (`sim.model.capacity`)
    lr: np.ndarray          # the GET profile's long-read table (`sim.long_reads`: header, then rows of quantiles) ...
    lr_n: np.ndarray        # ... and the counts its rows tabulate (empty: not built yet)
    ring_op: np.ndarray     # operations: per table, its last commits' operations (Op) and partitions, table t's
    ring_parts: np.ndarray  # version v at t * R + (v - 1) % R, R = len // tables (`sim.model.operations`)
    jobs: np.ndarray        # JOB, one row per maintenance job and table (`sim.model.jobs`)
    tables: np.ndarray      # TABLE, one row per table (`sim.model.growth`)
    arr_more: np.ndarray    # commits over several tables: drawn arrival a's other tables at a * (tables_max - 1) + i
    mt_table: np.ndarray    # ... slot j's i-th table at j * tables_max + i (its first is `tx.table`) ...
    mt_base: np.ndarray     # ... and that table's version at the client's load of it
    snap_ms: np.ndarray     # with an expiry: table t's k-th snapshot's commit time at t * Q + (k - 1) % Q
    trace: np.ndarray       # TRACE, a trace's rows: each writer's in arrival order, then those of no writer
    markers: np.ndarray     # a store's marker lock (`sim.model.pyiceberg.marker_wait_ms`): table t's k-th marker PUT's
                            # arrival at the store at t * MARKERS + k % MARKERS (-inf: none yet)
