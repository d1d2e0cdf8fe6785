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
}

# an exponential commit retry's defaults: Iceberg's (100 ms doubling to 60 s, up to 10% jitter)
EXPONENTIAL_RETRY = {"base_ms": 100.0, "factor": 2.0, "max_ms": 60_000.0, "jitter": 0.1}
# an exponential storage resend's defaults when no client is named: 1 s doubling to 32 s, jitter 1.0
EXPONENTIAL_RESEND = {"base_ms": 1000.0, "factor": 2.0, "max_ms": 32_000.0, "jitter": 1.0}

# the log protocol: delta-rs writes a checkpoint every 100 versions
CHECKPOINT_INTERVAL = 100

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

# Delta's S3DynamoDBLogStore creates its table with 5 write capacity units (S3DynamoDBLogStore.java l.273-274);
# DynamoDB keeps up to 300 s of unused capacity for bursts (best effort)
LOG_STORE_DEFAULTS = {"write_capacity_per_s": 5.0, "burst_s": 300.0}
