"""Named catalog designs (docs/MODEL.md, "Named designs"): shorthands for the keys that define a design.

A config's `design: NAME` fills these keys in under the ones the config gives (a key given wins; a retry policy
given, or a server that names its variant, replaces the design's whole). The resolved config shows every value, so
a result says what ran.
"""
from __future__ import annotations

import copy

# Iceberg's client: commit.retry.num-retries 4, sleep min(100 * 2^(k-1), 60000) ms plus up to 10 % (Tasks.java)
ICEBERG_CLIENT_RETRY = {"policy": "exponential", "base_ms": 100.0, "factor": 2.0, "max_ms": 60_000.0, "jitter": 0.1}

# the storage client that resends a 429 (docs/MODEL.md, "Storage clients' resend policies"): Iceberg's GCSFileIO
# runs Google's Java client with its default retry settings; delta-rs runs object_store's
GOOGLE_JAVA = {"throttle_retry": {"policy": "google_java"}}
OBJECT_STORE = {"throttle_retry": {"policy": "object_store"}}

# delta-rs's reads and post-commit work (docs/MODEL.md "Delta clients"): kernel DEFAULT_BUFFER_SIZE 1000; every
# entry of a snapshot read twice (the kernel's protocol and metadata replay, then the file replay); the
# `_last_checkpoint` hint; a checkpoint read as 11 ranged GETs (seen for a 100-entry checkpoint); the post-commit
# snapshot update; with max_retries 0, a moved log fails the attempt at its LIST
DELTA_RS_LOG = {"snapshot_update": True, "snapshot_max_parallel": 1000, "checkpoint_rebuild": True,
                "log_cleanup": "every_commit", "snapshot_passes": 2, "last_checkpoint_hint": True,
                "checkpoint_read_gets": 11, "post_commit_update": True, "fail_fast_without_retries": True}

DESIGNS: dict[str, dict] = {
    # one catalog object in the bucket, every commit replaces it (CAS) after re-reading it right before
    # (boring-catalog's commit_table); the default model (no design) leaves the re-read out
    "file": {"catalog": {"backend": "storage", "scope": "global"},
             "commit": {"protocol": "rewrite", "reread_before_cas": True}, "storage": GOOGLE_JAVA},
    # an Iceberg REST catalog as Iceberg's reference server runs it (docs/MODEL.md, "REST servers"; variant polaris:
    # Apache Polaris): per-table CAS in a service that loads the base (a database read and a metadata.json GET),
    # checks the client's requirement, PUTs the new metadata.json, re-reads and CASes its database row, retrying a
    # lost CAS, on a pool of 2 database connections; the client writes only a manifest list per attempt. The
    # database's latency has no public figure: give catalog.latency_ms or catalog.latency.
    "rest": {"catalog": {"backend": "service", "scope": "table", "table_metadata_inlined": True,
                         "server": {"variant": "reference"}},
             "commit": {"protocol": "rewrite", "max_retries": 4},
             "retry": {"catalog": ICEBERG_CLIENT_RETRY, "table": ICEBERG_CLIENT_RETRY}, "storage": GOOGLE_JAVA},
    # Delta Lake on an object store as delta-rs runs it: put-if-absent log entries, 15 retries, no sleep,
    # a checkpoint every 100 versions; object_store resends a 429. Every attempt that read new entries updates
    # its snapshot before the put; the kernel reads a snapshot's files 1000 at a time, twice; after the commit,
    # the committer's snapshot is updated to its entry, a checkpoint is rebuilt from a fresh snapshot and the
    # expired-log cleanup LISTs the log; with no retry, an attempt that finds the log moved fails (docs/MODEL.md)
    "log": {"catalog": {"backend": "storage", "scope": "table"},
            "commit": {"protocol": "log", "max_retries": 15, "checkpoint_interval": 100, **DELTA_RS_LOG},
            "retry": {"table": {"policy": "immediate"}}, "storage": OBJECT_STORE},
    # REST server designs and the service pointer (docs/MODEL.md, "REST servers", "The service pointer"):
    # Lakekeeper's server (0.10 and later; variant lakekeeper-0.9: 0.8 to 0.9.5): metadata from Postgres (no GET),
    # two short transactions around the PUT, two retries of a lost CAS, write pool 5, read pool 10
    "rest-lakekeeper": {"catalog": {"backend": "service", "scope": "table", "table_metadata_inlined": True,
                                    "server": {"variant": "lakekeeper"}},
                        "commit": {"protocol": "rewrite", "max_retries": 4},
                        "retry": {"catalog": ICEBERG_CLIENT_RETRY, "table": ICEBERG_CLIENT_RETRY},
                        "storage": GOOGLE_JAVA},
    # Glue UpdateTable(VersionId), the JDBC catalog, S3 Tables UpdateTableMetadataLocation: the Iceberg client
    # writes metadata.json itself and the service CASes the table's metadata location (one latency per operation)
    "service-pointer": {"catalog": {"backend": "service", "scope": "table"},
                        "commit": {"protocol": "rewrite", "max_retries": 4},
                        "retry": {"catalog": ICEBERG_CLIENT_RETRY, "table": ICEBERG_CLIENT_RETRY},
                        "storage": GOOGLE_JAVA},
    # PyIceberg's SqlCatalog (apache/iceberg-python, pyiceberg/catalog/sql.py; docs/MODEL.md, "PyIceberg's commit"):
    # the service pointer as PyIceberg runs it: its load reads the row and then metadata.json, commit_table loads the
    # table again and checks the requirement itself, creates metadata.json and swaps the row (UPDATE ... WHERE
    # metadata_location = loaded); PyIceberg's retry (commit.retry.num-retries 4, Iceberg's backoff)
    "pyiceberg-sql": {"catalog": {"backend": "service", "scope": "table"},
                      "commit": {"protocol": "rewrite", "client": "pyiceberg", "reread_before_cas": True,
                                 "max_retries": 4},
                      "retry": {"catalog": ICEBERG_CLIENT_RETRY, "table": ICEBERG_CLIENT_RETRY}},
    # fs-table: Iceberg file-system tables (Hadoop tables' reads, iceberg-rust's FileCatalog commit): a commit
    # creates v{N+1}.metadata.json if absent, then writes the version hint best effort; Iceberg's client retry;
    # object_store (iceberg-rust's storage client) resends a 429
    "fs-table": {"catalog": {"backend": "storage", "scope": "table", "version_files": True},
                 "commit": {"protocol": "rewrite", "max_retries": 4},
                 "retry": {"catalog": ICEBERG_CLIENT_RETRY, "table": ICEBERG_CLIENT_RETRY}, "storage": OBJECT_STORE},
}

# log-spark: Delta Lake as Delta Spark runs it (docs/MODEL.md "Delta clients"): the first attempt creates
# readVersion + 1 without a LIST, maxCommitAttempts 10,000,000, no sleep, a checkpoint every 10 versions (then
# the expired-log cleanup), no snapshot update inside an attempt; its GCS log store runs Google's Java client
DESIGNS["log-spark"] = {
    "catalog": {"backend": "storage", "scope": "table"},
    "commit": {"protocol": "log", "first_attempt": "stale", "max_retries": 10_000_000, "checkpoint_interval": 10,
               "snapshot_max_parallel": 1000, "checkpoint_rebuild": True, "log_cleanup": "checkpoint"},
    "retry": {"table": {"policy": "immediate"}}, "storage": GOOGLE_JAVA}

# hive: Iceberg's HiveCatalog on the Hive Metastore (docs/MODEL.md, "Iceberg on the Hive Metastore"): the client
# writes metadata.json, then takes HMS's table lock (FIFO, polled 50 ms x 1.5 up to 5 s, 180 s timeout), compares
# the table's metadata location with its base inside it (getTable), alters the table and unlocks; a loser deletes its
# metadata.json before unlocking; Iceberg's client retry. HMS's latency (every RPC: getTable, lock, checkLock,
# alter_table, unlock) has no public figure: give catalog.latency_ms or catalog.latency. HMS without the lock
# (`iceberg.engine.hive.lock-enabled=false`, HIVE-26882: one alter_table whose expected metadata location HMS
# compares in its database) is design service-pointer.
DESIGNS["hive"] = {
    "catalog": {"backend": "service", "scope": "table"},
    "commit": {"protocol": "rewrite", "max_retries": 4},
    "retry": {"catalog": ICEBERG_CLIENT_RETRY, "table": ICEBERG_CLIENT_RETRY}, "storage": GOOGLE_JAVA,
    "lock": {"variant": "hms"}}

# hudi: Apache Hudi's optimistic concurrency control (docs/MODEL.md, "Hudi"): a timeline of completed instants in
# storage; a write takes the table's lock to start (TrueTime's 200 ms, its heartbeat and .requested PUTs) and to
# commit (the timeline's LIST, a GET per instant completed since it started and the conflict check, the metadata
# table's files, TrueTime again, the completed instant's PUT); a conflict fails the write (no retry, Hudi's
# default). The lock is ZooKeeper's (Hudi's default provider: FIFO, notified); its round trip has no public figure:
# give lock.latency_ms or lock.latency. lock.variant dynamodb is Hudi's DynamoDB provider, storage its storage-based
# lock (a lock object in the table's bucket, at the provider's latencies and under its per-object limit).
DESIGNS["hudi"] = {
    "catalog": {"backend": "storage", "scope": "table"},
    "commit": {"protocol": "log", "max_retries": 0, "checkpoint_interval": 0, "clock_skew_wait_ms": 200.0},
    "lock": {"variant": "zookeeper"}}

# delta-dynamodb: Delta Lake on S3 with Delta's S3DynamoDBLogStore (docs/MODEL.md, "Delta on S3 with DynamoDB"): Delta
# Spark's commit loop (log-spark's keys) whose put-if-absent is a conditional PutItem in a DynamoDB table (no lock:
# the loser retries at the next version), preceded by HEADs, a GetItem and the entry's temp PUT, followed by its copy
# into the log and a completion PutItem; the table's 5 write capacity units (Delta creates it so) are shared by
# every Delta table using it, and a throttled write is resent by the AWS SDK. DynamoDB's round trip has no public
# figure: give log_store.latency_ms or log_store.latency.
DESIGNS["delta-dynamodb"] = {
    **DESIGNS["log-spark"], "log_store": {"kind": "dynamodb"}}

# ducklake: DuckLake (duckdb/ducklake, docs/MODEL.md "DuckLake"): every table's metadata and file lists are rows of
# one SQL database; a commit is one database transaction that inserts the next global snapshot id, so any two
# concurrent commits collide whatever tables they touch (scope global). Its first attempt inserts its start
# snapshot's successor without a re-read; a retry sleeps 100 ms x U[0.5, 1) x 1.5^i (i every failed attempt),
# re-reads the snapshot and the changes since its start, applies DuckLake's rules and inserts the next id;
# ducklake_max_retry_count 10: 10 attempts in every release (1.4, 1.5: `i + 1 >= max_retry_count`, dl@3f1b372
# src/storage/ducklake_transaction.cpp:1486). The database's round trip has no public figure: give
# catalog.latency_ms or catalog.latency.
DUCKLAKE_RETRY = {"policy": "exponential", "base_ms": 50.0, "factor": 1.5, "max_ms": 60_000.0, "jitter": 1.0}
DESIGNS["ducklake"] = {
    "catalog": {"backend": "service", "scope": "global", "table_metadata_inlined": True, "file_lists_inlined": True},
    "commit": {"protocol": "rewrite", "first_attempt": "stale", "max_retries": 9},
    "retry": {"catalog": DUCKLAKE_RETRY, "table": DUCKLAKE_RETRY, "count_by": "attempt"}}

# ducklake-postgres: DuckLake with its catalog in PostgreSQL through duckdb's postgres extension (docs/MODEL.md,
# "DuckLake"): each operation is its round trips (a query is Parse, Describe and COPY; the commit's writes one
# batch). The base read is BEGIN, Parse (PostgreSQL's REPEATABLE READ snapshot: its effect), Describe, the COPY of
# the latest snapshot, and the two stats COPYs the commit reads in the same snapshot; the commit is the batch (its
# check: the first batch takes the next snapshot id's row) and COMMIT (visible), the row held from one to the
# other, a loser's last round trip its ROLLBACK; no read before the sleep; after it BEGIN, the changes query (3) and
# the latest snapshot again (3), the snapshot at the changes query's Parse
DESIGNS["ducklake-postgres"] = {
    **DESIGNS["ducklake"],
    "catalog": {**DESIGNS["ducklake"]["catalog"],
                "round_trips": {"base": {"count": 6, "effect": 2}, "conflict": {"count": 0},
                                "retry": {"count": 7, "effect": 2}, "commit": {"count": 2, "effect": 1, "visible": 2}}}}

# pyiceberg-postgres: PyIceberg's SqlCatalog on PostgreSQL (SQLAlchemy over psycopg2; docs/MODEL.md, "PyIceberg's
# commit"): every SQLAlchemy session is its round trips, each statement one (simple-query protocol): a load is BEGIN,
# SELECT (its effect), ROLLBACK (the base, the refresh after the sleep, commit_table's own load); the swap is BEGIN,
# UPDATE ... WHERE metadata_location = old (its check, the row locked), COMMIT (visible), a loser's last its
# ROLLBACK; no read after a failed attempt. catalog.latency is then one round trip
PG_LOAD = {"count": 3, "effect": 2}
DESIGNS["pyiceberg-postgres"] = {
    **DESIGNS["pyiceberg-sql"],
    "catalog": {**DESIGNS["pyiceberg-sql"]["catalog"], "round_trips": {
        "base": PG_LOAD, "retry": PG_LOAD, "reread": PG_LOAD, "conflict": {"count": 0},
        "commit": {"count": 3, "effect": 2, "visible": 3}}}}

# what real system each design is, one line each: the designs table of docs/reference.md and docs/MODEL.md is
# rendered from these and DESIGNS (`markdown`, `python -m sim.docgen`)
ABOUT = {
    "file": "boring-catalog: every table in one catalog object in the bucket, re-read right before its CAS",
    "rest": "an Iceberg REST catalog as Iceberg's reference server runs it, on 2 database connections "
            "(`catalog.server.variant: polaris`: Apache Polaris); needs `catalog.latency_ms` or `catalog.latency` "
            "(its database's)",
    "rest-lakekeeper": "Lakekeeper's Iceberg REST server, 0.10 and later: metadata from Postgres (no GET), 2 retries "
                       "of a lost database CAS, write pool 5, read pool 10 (`catalog.server.variant: lakekeeper-0.9`: "
                       "0.8 to 0.9.5); needs `catalog.latency_ms` or `catalog.latency`",
    "service-pointer": "a service that CASes the metadata location the Iceberg client wrote: Glue "
                       "UpdateTable(VersionId), the JDBC catalog, S3 Tables; needs `catalog.latency_ms` or "
                       "`catalog.latency`",
    "pyiceberg-sql": "PyIceberg's SqlCatalog: the client loads the row and metadata.json, checks its requirement in "
                     "commit_table, writes metadata.json and swaps the row; needs `catalog.latency_ms` or "
                     "`catalog.latency` (the database's)",
    "pyiceberg-postgres": "PyIceberg's SqlCatalog on PostgreSQL: `pyiceberg-sql` with each load and the swap its "
                          "round trips (BEGIN, the statement, ROLLBACK or COMMIT), the row held from the UPDATE to "
                          "its COMMIT; needs `catalog.latency_ms` or `catalog.latency` (a round trip's)",
    "fs-table": "Iceberg file-system tables (Hadoop tables, iceberg-rust's FileCatalog): v{N+1}.metadata.json "
                "created if absent, then the version hint",
    "log": "Delta Lake on an object store as delta-rs commits: put-if-absent log entries",
    "log-spark": "Delta Lake as Delta Spark commits (its GCS log store, Google's Java client)",
    "hive": "Iceberg's HiveCatalog on the Hive Metastore: alter_table under HMS's table lock (without the lock: "
            "`service-pointer`), every lock() holding the metastore's one NEXT_LOCK_ID row; needs "
            "`catalog.latency_ms` or `catalog.latency` (HMS's, its lock's too)",
    "hudi": "Apache Hudi's optimistic concurrency control under a ZooKeeper lock; needs `lock.latency_ms` or "
            "`lock.latency`",
    "delta-dynamodb": "Delta Lake on S3 with Delta Spark's S3DynamoDBLogStore: the put-if-absent is a conditional "
                      "PutItem in a DynamoDB table of 5 write and 5 read units a second shared by every table; needs "
                      "`log_store.latency_ms` or `log_store.latency`",
    "ducklake": "DuckLake: every table's metadata and file lists in one SQL database, each commit inserting the next "
                "global snapshot id (any two concurrent commits collide); needs `catalog.latency_ms` or "
                "`catalog.latency` (the database's)",
    "ducklake-postgres": "DuckLake with its catalog in PostgreSQL (duckdb's postgres extension): each operation its "
                         "round trips, the first batch holding the snapshot row to its COMMIT; needs "
                         "`catalog.latency_ms` or `catalog.latency` (a PostgreSQL round trip)",
}

# designs that were removed, and why: naming one is an error that says what to use instead
RETIRED = {"pointer": "pointer was removed: no real catalog CASes one pointer object per table; use "
                      "fs-table (Iceberg file-system tables) or service-pointer (Glue, JDBC, S3 Tables)"}


def is_whole(value: dict) -> bool:
    """A mapping that replaces the one under it whole: a retry policy, or a REST server or lock naming its variant
    (whose defaults are the variant's, not another's)."""
    return "policy" in value or "variant" in value


def _under(preset: dict, given: dict) -> dict:
    out = copy.deepcopy(preset)
    for key, value in given.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and not is_whole(value):
            out[key] = _under(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def expand(data: dict) -> dict:
    """`data` with its design's keys filled in under it (`data` unchanged if it names none)."""
    name = data.get("design")
    if name is None:
        return data
    return _under(DESIGNS[name], data)


def markdown() -> str:
    """The named designs as a markdown table: name, the real system, the keys the design sets."""
    rows = ["| design | what it models | key settings |", "|---|---|---|"]
    rows += [f"| `{name}` | {ABOUT[name]} | {_settings(keys)} |" for name, keys in DESIGNS.items()]
    return "\n".join(rows) + "\n"


def _settings(keys: dict) -> str:
    """`a.b: value` for each key a preset sets; a retry policy (a whole mapping) as `policy(key value, ...)`."""
    flat: dict[str, object] = {}

    def walk(d: dict, prefix: str) -> None:
        for key, value in d.items():
            if isinstance(value, dict) and "policy" not in value:
                walk(value, f"{prefix}{key}.")
            else:
                flat[prefix + key] = value
    walk(keys, "")
    groups: list[tuple[list[str], object]] = []    # keys in a row with one retry policy share it
    for key, value in flat.items():
        if groups and isinstance(value, dict) and value == groups[-1][1]:
            groups[-1][0].append(key)
        else:
            groups.append(([key], value))
    return ", ".join(f"`{', '.join(ks)}: {_value(v)}`" for ks, v in groups)


def _value(value) -> str:
    """A preset's value as a config would spell it (true, 100, not True, 100.0)."""
    if isinstance(value, dict):
        rest = ", ".join(f"{k} {_value(v)}" for k, v in value.items() if k != "policy")
        return f"{value['policy']}({rest})" if rest else value["policy"]
    if isinstance(value, bool):
        return str(value).lower()
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
