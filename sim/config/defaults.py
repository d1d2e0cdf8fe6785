"""The numbers real systems set, each with its source: the storage clients' resend policies, the REST servers',
locks' and log store's variants, Iceberg's and delta-rs's defaults. Plain data: the types read the variants'
names as their choices, the cross-field rules fill them in under the keys a config gives."""
from __future__ import annotations

# the storage clients' resend defaults, as their sources set them (docs/MODEL.md, "Storage clients' resend
# policies", cites the lines): object_store's RetryConfig and BackoffConfig (delta-rs); google-cloud-core's
# ServiceOptions retry settings, which Iceberg's GCSFileIO leaves as they are (6 attempts: 5 resends)
RESEND_CLIENTS = {
    "object_store": {"base_ms": 100.0, "factor": 2.0, "max_ms": 15_000.0, "max_resends": 10, "deadline_ms": 180_000.0},
    "google_java": {"base_ms": 1000.0, "factor": 2.0, "max_ms": 32_000.0, "max_resends": 5, "deadline_ms": 50_000.0},
    # the AWS SDK for Java v1's DynamoDB default: 10 retries, a throttled request sleeping an equal-jittered
    # min(500 ms x 2^(k-1), 20 s) (PredefinedRetryPolicies.DYNAMODB_DEFAULT, SDKDefaultBackoffStrategy)
    "aws_dynamodb": {"base_ms": 500.0, "factor": 2.0, "max_ms": 20_000.0, "max_resends": 10},
    # Google's Java client before its own backoff (google-cloud-storage 2.4x, the conditional-write benchmark's):
    # gax's ExponentialRetryAlgorithm with google-cloud-core's settings, a full-jittered sleep U[0, delay)
    "gax": {"base_ms": 1000.0, "factor": 2.0, "max_ms": 32_000.0, "max_resends": 5, "deadline_ms": 50_000.0},
    # Azure's Java v12 storage client (RequestRetryOptions' defaults): 4 tries, the k-th resend after
    # (2^k - 1) x 4 s, at most 120 s, no jitter; it resends 500 and 503
    "azure_java": {"base_ms": 4000.0, "factor": 2.0, "max_ms": 120_000.0, "max_resends": 3},
}

# an exponential commit retry's defaults: Iceberg's (100 ms doubling to 60 s, up to 10% jitter)
# how a client meets a commit request whose answer it lost, or a 5xx (`faults.client`; docs/MODEL.md, "Unknown
# outcomes"): Iceberg's status check (Hive, Glue: one refresh, its commit searched among the current and the last
# write.metadata.previous-versions-max metadata files); the REST client's CommitStateUnknown (one refresh for an
# append); an error to the caller (delta-rs, the JDBC catalog); the storage client resends the request (Delta Spark)
REACTIONS = ("status_check", "reconcile", "error", "resend")

EXPONENTIAL_RETRY = {"base_ms": 100.0, "factor": 2.0, "max_ms": 60_000.0, "jitter": 0.1}
# a linear commit retry's defaults (no cap below a minute, no jitter) unless the caller gives others
LINEAR_RETRY = {"max_ms": 60_000.0, "jitter": 0.0}
# an exponential storage resend's defaults when no client is named: 1 s doubling to 32 s, jitter 1.0
EXPONENTIAL_RESEND = {"base_ms": 1000.0, "factor": 2.0, "max_ms": 32_000.0, "jitter": 1.0}

# the log protocol: delta-rs writes a checkpoint every 100 versions
CHECKPOINT_INTERVAL = 100

# the REST servers' commit and capacity (docs/MODEL.md, "REST servers", "Server capacity"), each variant's defaults
# as its source sets them:
# - reference: Iceberg's reference server (RESTCatalogServer on a JdbcCatalog): every load GETs the old
#   metadata.json; doCommit PUTs, re-reads the row and UPDATEs it (JdbcTableOperations.java:103-160); 4 retries of
#   Tasks' backoff (CatalogHandlers.java:604-660); one JdbcClientPool of `clients` = 2 connections
#   (CatalogProperties.java:123-124) for every request; autocommit statements
# - polaris: the same commit and retry (CatalogHandlerUtils.java:393-418, ICEBERG_COMMIT_MAX_RETRIES 4), a failed
#   commit DELETEs its metadata.json (LocalIcebergCatalog.java:1966-2058); Quarkus's Agroal pool, 20 connections
#   (quarkus.datasource.jdbc.max-size, which Polaris does not set); autocommit statements
# - lakekeeper (>= 0.10): metadata from Postgres (no GET); a short write-pool transaction loads, the PUT runs with
#   no transaction open, a second one commits (tables.rs:1630-1806); a lost commit DELETEs its file (1810-1825) and
#   is retried twice, sleeping 50 ms x 2^(k-1) plus U[0, half of it) (104, 1366-1384); write pool 5, read pool 10
#   (lakekeeper-storage-postgres config.rs:56-57); the client's loadTable takes the read pool (load_table.rs:184)
# - lakekeeper-0.9 (0.8.0 to 0.9.5): one write-pool transaction loads, UPDATEs (row locks), PUTs and COMMITs
#   (v0.9.5 catalog/tables.rs:1196-1324): its connection and row locks are held across the PUT; retry sleeps 50 x
#   attempt ms (1180): 50 then 100, the exponential below exactly; same pools (config.rs:484-485)
# - pool acquire timeouts: Lakekeeper's `pg_acquire_timeout` 5 s (lakekeeper-storage-postgres config.rs:58,
#   lib.rs:305; v0.9.5 config.rs:486, lakekeeper-bin main.rs:146), Agroal's under Quarkus 5 s
#   (`quarkus.datasource.jdbc.acquisition-timeout`, DataSourceJdbcRuntimeConfig `@WithDefault("5S")`; Polaris does
#   not set it); Iceberg's ClientPoolImpl waits with no limit (none for the reference server)
ICEBERG_SERVER_RETRY = {"policy": "exponential", "base_ms": 100.0, "factor": 2.0, "max_ms": 60_000.0, "jitter": 0.1}
SERVER_VARIANTS = {
    "reference": {"metadata_get": True, "retries": 4, "retry": ICEBERG_SERVER_RETRY, "pool_connections": 2,
                  "lock_scope": "statement", "reread_before_cas": True, "delete_on_conflict": False},
    "polaris": {"metadata_get": True, "retries": 4, "retry": ICEBERG_SERVER_RETRY, "pool_connections": 20,
                "acquire_timeout_ms": 5000.0, "lock_scope": "statement", "reread_before_cas": True,
                "delete_on_conflict": True},
    "lakekeeper": {"metadata_get": False, "retries": 2,
                   "retry": {"policy": "exponential", "base_ms": 50.0, "factor": 2.0, "max_ms": 100.0, "jitter": 0.5},
                   "pool_connections": 5, "read_pool_connections": 10, "acquire_timeout_ms": 5000.0,
                   "lock_scope": "transaction", "reread_before_cas": False, "delete_on_conflict": True},
    # Nessie's Iceberg REST (its version store on JDBC, on Quarkus as Polaris: Agroal's pool of 20, 5 s to acquire):
    # a commit retries the branch's ref, not a lost row (NESSIE_COMMIT_RETRY); multi-table commits only
    "nessie": {"metadata_get": True, "retries": 0, "retry": ICEBERG_SERVER_RETRY, "pool_connections": 20,
               "acquire_timeout_ms": 5000.0, "lock_scope": "statement", "reread_before_cas": False,
               "delete_on_conflict": True},
    "lakekeeper-0.9": {"metadata_get": False, "retries": 2,
                       "retry": {"policy": "exponential", "base_ms": 50.0, "factor": 2.0, "max_ms": 100.0,
                                 "jitter": 0.0},
                       "pool_connections": 5, "read_pool_connections": 10, "acquire_timeout_ms": 5000.0,
                       "lock_scope": "metadata_write", "reread_before_cas": False, "delete_on_conflict": False},
    # SeaweedFS's Iceberg REST catalog (seaweedfs/seaweedfs weed/s3api/iceberg, 4.44+2 @cc8364a03; 4.48 observed the
    # same): a table is a filer entry whose extended attribute holds the whole metadata, so a load reads no
    # metadata.json (s3tables/handler_table.go:503-670) and the commit writes it inline in the filer
    # (iceberg/metadata_files.go:30-134); the CAS is an UpdateEntry with ExpectedExtended under the filer's per-path
    # lock (s3tables/filer_ops.go:72-112; weed/server/filer_grpc_server.go:622-710); a lost CAS deletes the staged
    # file and is retried with `maxCommitAttempts` 3 (2 retries), sleeping 50 ms x attempt + U[0, 25) ms
    # (iceberg/handlers_commit.go:91, 346-349; commit_helpers.go:24-27); no database, so no pool: its steps take
    # `load_latency` and `commit_latency`, which have no public figure (give or calibrate them)
    "seaweedfs": {"metadata_get": False, "retries": 2,
                  "retry": {"policy": "linear", "base_ms": 50.0, "max_ms": 100.0, "jitter": 0.5},
                  "lock_scope": "statement", "reread_before_cas": False, "delete_on_conflict": True},
}
# catalogs with no server of their own: naming one as catalog.server.variant says which design it is
SERVERLESS = {"jdbc": "the JDBC catalog has no server: the Iceberg client writes metadata.json and UPDATEs the "
                      "database itself, each client with its own pool (clients = 2): design service-pointer"}

# the commit locks (docs/MODEL.md, "Locks"), each variant's waiting discipline and limits as its implementation sets
# them: Iceberg's HiveCatalog on the Hive Metastore (MetastoreLock: FIFO by lock id, checkLock polled every
# min(50 x 1.5^(k-1), 5000) ms plus up to 10 %, given up after 180 s, which fails the commit attempt); Hudi's
# ZooKeeper provider (Curator's InterProcessMutex: FIFO, the predecessor's deletion notifies; tryLock waits 60 s)
# and DynamoDB provider (the awslabs lock client: a GetItem every second, a free lock taken by a conditional
# PutItem; it waits 60 s plus a 60 s lease), both under Hudi's LockManager (50 more tries, 5 s apart); Iceberg's
# DynamoDbLockManager (a held lock: sleep a 15 s lease, then try again; 3 min)
LOCK_VARIANTS = {
    "hms": {"discipline": "fifo_poll", "timeout_ms": 180_000.0, "retries": 0, "retry_wait_ms": 0.0,
            "poll": {"policy": "exponential", "base_ms": 50.0, "factor": 1.5, "max_ms": 5000.0, "jitter": 0.1},
            "next_lock_id_share": 3 / 9, "hms_version": 4},
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
# HMS's NEXT_LOCK_ID row (Hive 4: EnqueueLockFunction, its own transaction, TxnLockManager.enqueueLock's
# @Transactional): a lock() with no Hive transaction (Iceberg's) runs 9 database round trips, 5 to enqueue (INSERT
# HIVE_LOCKS; SELECT NL_NEXT ... FOR UPDATE; the batch of two UPDATEs; SAVEPOINT; COMMIT) and 4 to check
# (CheckLockFunction: the lock's rows, the conflict query, the UPDATE, COMMIT); the row is held from the SELECT FOR
# UPDATE to the COMMIT, about 3 of them. Assumed (no published figure): the RPC's round trip is its database round
# trips, so the row is held 3/9 of it
# Hive 2 and 3's checkLock mutex (TxnHandler.checkLock, `acquireLock(MUTEX_KEY.CheckLock)`: a SELECT ... FOR
# UPDATE of its AUX_TABLE row on a connection of its own, released by that connection's rollback): a lock() with no
# Hive transaction runs 13 database round trips in Hive 3.1 (5 to enqueue, 8 to check), the mutex held across 7 of
# them (the FOR UPDATE's answer, the lock's rows, SAVEPOINT, the conflict query, the time, the UPDATE, COMMIT, the
# rollback's send); a poll runs 12 (4 to heartbeat). Assumed as for the row: the RPC's round trip is its database
# round trips, so the mutex is held 7/13 of it
HMS_CHECK_LOCK_MUTEX_SHARE = 7 / 13
LOCK_DISCIPLINES = ("fifo_notify", "fifo_poll", "race_poll", "lease_sleep")

# Delta's S3DynamoDBLogStore creates its table with 5 read and 5 write capacity units (S3DynamoDBLogStore.java
# l.273-274, `provisionedThroughput.rcu` and `.wcu`); DynamoDB keeps up to 300 s of unused capacity for bursts
# (best effort)
LOG_STORE_DEFAULTS = {"write_capacity_per_s": 5.0, "read_capacity_per_s": 5.0, "burst_s": 300.0}

# PostgreSQL's deadlock_timeout (postgresql.conf, default 1 s): a statement that has waited this long for a lock
# checks whether its wait closes a cycle, and if so fails (SQLSTATE 40P01); the servers' own configs leave it
POSTGRES_DEADLOCK_TIMEOUT_MS = 1000.0

# Nessie's commit loop (projectnessie/nessie, CommitRetry.java; StoreConfig defaults): a commit whose CAS of the
# branch's ref lost to another commit (no key of its own changed) sleeps U[lower, upper) ms, both bounds doubling
# while the upper stays within max_sleep (then the upper is max_sleep), and tries again, for at most timeout ms
NESSIE_COMMIT_RETRY = {"lower_ms": 5.0, "upper_ms": 25.0, "max_sleep_ms": 250.0, "timeout_ms": 5000.0}
