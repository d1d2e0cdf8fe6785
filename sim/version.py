"""The model's version, part of every sweep run's cache key (sim/sweep/store.py).

Bump MODEL_VERSION whenever the results of an existing configuration change: a model or engine change that is
not bit-identical (tests/test_goldens.py fails). A rerun of a sweep then recomputes its runs and says why,
instead of silently mixing results of two models. Changes that keep every existing result (a new key whose
default keeps the old behaviour, a faster engine with the same records) leave it alone.
"""

# 2: per-object mutation limits (gcp: 1 write/s) are on by default, so gcp results change; every other
#    existing configuration keeps its results (goldens)
# 3: a storage client gives a throttled request up (a count of resends or a deadline, then the transaction ends
#    aborted, reason `throttled`), and resends with its own backoff: by default Google's Java client's (file,
#    pointer, rest), object_store's for design log. Throttled results (gcp) change; every other configuration
#    keeps its results (goldens)
# 4: the designs as their real implementations commit: design rest is Iceberg's reference server / Polaris (its
#    load, metadata.json GET and PUT, database CAS and server retries; rest-lakekeeper, service-pointer new);
#    design log is delta-rs (the snapshot update in every attempt, parallel snapshot reads, the checkpoint
#    rebuilt, the log cleanup's LIST; log-spark new); design file re-reads the catalog before its CAS
#    (boring-catalog); pointer is retired (fs-table new). Results of configs naming rest, log or file change;
#    every configuration that names no design keeps its results (goldens)
# 5: success is committed / window transactions that began to commit (MODEL.md 'Metrics'): one still in its runtime
#    when the run ends (the runtime's long tail: about 1.3 % of a light s3 run's) is left out and reported as its own
#    share (`unfinished_in_runtime_share`), instead of counting as a failure. Every run's records and histories keep
#    their values (goldens); summaries with such a transaction change (`success_rate`, per kind, per table, per
#    writer), and so do knees (their trials are `began_commit`)
# 6: REST servers with finite capacity (sim/model/capacity.py): every database request takes a connection of the
#    server's pool (reference 2, polaris 20, lakekeeper write 5 and read 10) and waits for one in order; the
#    reference server re-reads its row before the CAS; Lakekeeper and Polaris DELETE a lost commit's metadata.json;
#    Lakekeeper 0.9's row lock across the PUT (variants polaris, lakekeeper-0.9 new). Results of configs naming
#    rest or rest-lakekeeper (or a catalog.server) change; every other configuration keeps its results (goldens)
# 7: a server's connection pools give a request up after their acquire timeout (polaris, lakekeeper, lakekeeper-0.9:
#    5 s; the reference server's ClientPoolImpl has none): the server answers 500, which the Iceberg client does not
#    retry, so the transaction ends aborted (`pool_timeout`). Results of runs where a request of those variants
#    waited 5 s for a connection change (overloaded servers); every other run keeps its results (goldens)
# 8: the lock services' own capacity: every HMS lock() holds the metastore's one NEXT_LOCK_ID row (a pool of one
#    shared by every table) a third of its round trip (`lock.next_lock_id_share`); Delta's DynamoDB log store's reads
#    (each LIST's Query, each attempt's GetItem) take its table's 5 read units a second (`read_capacity_per_s`),
#    resent when throttled. Results of configs naming hive (lock.variant hms) or delta-dynamodb change; every
#    other configuration keeps its results (goldens)
# 9: the default profile set is `measured` (storage.profile_set): a config that names no set runs each request kind
#    at its own latency, fitted to one writer's measured loop, where it ran the write-up's figures; a provider file
#    with one set of figures answers either set. Configs naming `seed` (the write-up's experiments) keep their
#    results (goldens, which now name it)
#    (still 9: gcp's measured set gained its own limit, two buckets, on 2026-11-27: provider data, not model code;
#    a sweep's cache key holds the provider profile's digest, so gcp's runs are recomputed and no other's)
# 10: a long read (more than 32 GETs of one profile, serial or one GET a lane: a validation's manifest lists, a log's
#    entries, a LIST's pages) is one draw from its tabulated law (sim/long_reads.py; docs/MODEL.md "Long reads"), not
#    n draws; queued on fewer lanes than GETs, its exact makespan is drawn lane by lane (renewal processes, not the
#    heap). Runs with one change (their GET draws shift); `io.long_reads: exact` gives version 9's results bit for
#    bit (every golden entry checked), and every run without a long read keeps its results (goldens)
# 11: writers in rounds (issue "Writers in rounds"): the measured profile set's requests are each a fixed part plus a
#    lognormal, fitted to one writer's whole loop (min to p99; benchmarks/calibration/profiles_fit.md), so every run under the
#    measured set changes; the microbenchmark's conditional write expects the version its HEAD saw where the
#    benchmark's client does (S3, S3 Express, GCS: `version_from_head`); Lakekeeper >= 0.10's commit transaction
#    holds the table's row from its updates to its COMMIT (a second database round trip; `lock_scope:
#    transaction`), and a concurrent commit's updates wait for it. Configs naming the seed set keep their results,
#    and so does every golden entry on it (tests/golden: the entries that moved are listed in the commit)
# 12: tables that age (issue "Tables that age"): Hudi rejects an upsert into file groups a pending clustering holds
#    (SparkRejectUpdateStrategy); an expiry that removed the snapshot after a validation's start fails it ("Cannot
#    determine history"); a Delta log's LIST at an effect point reads its pages past 1000 entries since its newest
#    checkpoint; a compaction may commit in batches (partial progress, a new key). Results of configs with a Hudi
#    clustering job and upserts, an expiry job and validating operations, or a log without checkpoints past 1000
#    entries change; every other configuration keeps its results (goldens, all bit for bit)
# 13: Hudi's table services against upserts as its default conflict strategy orders them: a clustering scheduled
#    after an upsert's instant fails the upsert at its conflict check, pending or completed by then (it is a
#    candidate; before, only a completed one was, so the upsert could commit and fail the clustering); and the
#    merge-on-read compaction (`maintenance.compaction.action: compaction`, a new key): checks nothing, fails the
#    upserts whose instants precede its own; either may run inline in a writer's commit path
#    (`inline_after_commits`, a new key). Results of configs with a Hudi clustering job and upserts change;
#    every other configuration keeps its results (goldens, all bit for bit)
# 14: design ducklake makes 10 attempts (max_retries 9: ducklake_max_retry_count 10 in DuckLake 1.4 and 1.5) and its
#     sleep's 1.5^i counts every failed attempt (retry.count_by: attempt); a catalog on its database's round trips
#     (catalog.round_trips, design ducklake-postgres) is new. Results of configs naming ducklake change where a
#     transaction exhausts its attempts or meets both conflict classes; every other configuration keeps its results
# 15: what only concurrency shows (issue "What only concurrency shows"): under the measured set S3 Express answers a
#    losing conditional write 8 ms late; Azure and Azure Premium answer a write that meets another in flight 5xx
#    (0.11, 0.095; resent 4, 12, 28 s by Azure's Java client), and their upload leaves the blob empty from a winner's
#    check to its answer, which fails the microbenchmark's reads there (design cas_contended). The figures fitted on
#    several writers are marked (`measured.concurrency_fit`; `storage.concurrency_fit: false` leaves them out).
#    Results of design cas (file, the default model) under the measured set on s3x, azure and azurex change; the
#    seed set, every other provider and design, and every one-writer run keep theirs (goldens: the entries that
#    moved are listed in the commit)
# 16: delta-rs as its 1.6 release runs (traced from its source and on the wire against SeaweedFS): design log reads
#    every snapshot entry twice (the kernel's replay, then the file replay), GETs the `_last_checkpoint` hint before a
#    fresh snapshot's LIST and HEADs a new checkpoint, reads a checkpoint in 11 ranged GETs, updates the committer's
#    snapshot to its entry after every commit, and with max_retries 0 fails an attempt whose LIST finds the log moved
#    (five new keys, late); a snapshot update's LIST pages from the newest checkpoint; the client's setup per call
#    (commit.client_setup_ms) and a store that serves GETs one at a time (a provider's get_service_ms), both off unless
#    given. Results of design log (and of configs that set the keys) change; every other configuration keeps its
#    results
# 17: two client or store costs measured on the testbed, both off unless given: a store that writes a directory
#    marker under a lock per marker (a provider's marker_lock_window_ms and marker_lock_poll_ms: SeaweedFS 4.48,
#    PyIceberg's cleanup) and delta-rs's own time per snapshot entry in each pass (commit.snapshot_entry_ms). No
#    configuration that leaves them out changes its results (goldens, all bit for bit)
# 18: a provider given by path counts by its content, not its path (storage.provider_sha256, filled in): its runs'
#    seeds no longer hold the path, so a results folder copied or moved (a testbed report's fitted provider.yaml)
#    gives the same runs. Results of configs naming a provider by path change (their draws); every configuration
#    naming a provider by name keeps its results (goldens: the 18 cases on tests/data's providers re-pinned)
MODEL_VERSION = 18
