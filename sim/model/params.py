"""A configuration's parameters as the model reads them (`state.Params`), and its retry delay tables."""
from __future__ import annotations

from typing import NamedTuple, get_type_hints

import numpy as np

from ..config import RESEND_CLIENTS, Config, RetryPolicy, jobs_of, operations_on, run_window, trace_data, traced
from ..config.defaults import NESSIE_COMMIT_RETRY, POSTGRES_DEADLOCK_TIMEOUT_MS, REACTIONS
from ..providers import load_provider, profile_of
from ..rules import client_limit, mutation_limit, store_read_limit
from .retry import delay_table

EXPIRE_MAX_AGE_MS = 5 * 24 * 3600 * 1000.0   # Iceberg's history.expire.max-snapshot-age-ms (TableProperties L420-427)
from .state import DISCIPLINES, LogCleanup, Params

THROTTLE_RESENDS = 64     # the resend delay table's length; later 429s in a row sleep its last (capped) delay
UNLIMITED = 1 << 62       # a resend policy with no count limit
POLLS = 1 << 20           # a lock's polls have no count limit: its poll delay table runs until its cap


class Delays(NamedTuple):
    """Retry delays before jitter, the k-th entry for the k-th retry (`sim.model.retry`)."""
    catalog: np.ndarray
    table: np.ndarray
    throttle: np.ndarray
    server: np.ndarray       # REST servers: before the server's k-th retry of a lost database CAS
    lock: np.ndarray         # locks: before the k-th poll


def params_of(cfg: Config, record_history: bool) -> tuple[Params, Delays]:
    cat = cfg.catalog
    max_attempts = cfg.max_attempts
    pol_cat, jit_cat, bo_cat = delay_table(cfg.retry.catalog, max_attempts)
    pol_tab, jit_tab, bo_tab = delay_table(cfg.retry.table, max_attempts)
    pol_thr, jit_thr, bo_thr = delay_table(throttled_client(cfg), THROTTLE_RESENDS - 2)
    srv = cfg.catalog.server
    pol_srv, jit_srv, bo_srv = delay_table(srv.retry or RetryPolicy(), srv.retries or 0)
    pol_lock, jit_lock, bo_lock = delay_table(cfg.lock.poll or RetryPolicy(), POLLS)
    profile = profile_of(cfg)
    limit = mutation_limit(cfg, profile)
    rate_per_s, burst, refusal_tokens = limit if limit is not None else (0.0, 0.0, 0.0)
    client = client_limit(cfg, profile)
    client_rate_per_s, client_burst, client_refusal_tokens = client if client is not None else (0.0, 0.0, 0.0)
    p = dict(
        f=cat.linearization_fraction, g=1.0 - cat.linearization_fraction, **_check(cfg),
        **_window(cfg),
        jitter_catalog=jit_cat, jitter_table=jit_tab, jitter_throttle=jit_thr,
        mutation_rate_per_ms=rate_per_s / 1000.0, mutation_burst=burst, mutation_refusal_tokens=refusal_tokens,
        client_rate_per_ms=client_rate_per_s / 1000.0, client_burst=client_burst,
        client_refusal_tokens=client_refusal_tokens,
        metadata_inlined=bool(cat.table_metadata_inlined), file_lists_inlined=bool(cat.file_lists_inlined),
        ducklake_14=cat.ducklake_version == "1.4", retry_by_attempt=cfg.retry.count_by == "attempt",
        **_round_trips(cfg),
        max_parallel=cfg.io.max_parallel,
        exact_reads=cfg.io.long_reads == "exact",
        max_attempts=max_attempts,
        # the microbenchmark's one read is the base of its conditional write
        refresh_first=cfg.commit.first_attempt == "refresh" and cfg.commit.shape != "object",
        # inlined table metadata lives in the catalog: the refresh already read it
        metadata_read_on_failure=bool(cfg.commit.metadata_read_on_failure and not cat.table_metadata_inlined),
        history=bool(record_history), policy_catalog=pol_cat, policy_table=pol_tab, policy_throttle=pol_thr,
        vo_conflicts=cfg.workload.vo_conflict_probability > 0.0, scope_table=cat.scope == "table",
        throttle=limit is not None or client is not None,
        checkpoint_interval=0 if cfg.commit.shape == "object" else cfg.commit.checkpoint_interval or 0,
        log=cfg.commit.protocol == "log", **_shape(cfg), **_writers(cfg), **_resends(cfg),
        **_server(cfg, pol_srv, jit_srv),
        version_files=cat.version_files, reread_before_cas=cfg.commit.reread_before_cas, **_log(cfg),
        **_lock(cfg, pol_lock, jit_lock), **_operations(cfg), **_growth(cfg, profile), **_multi_table(cfg),
        **_faults(cfg), **_contention(cfg, profile), **_client(cfg))
    p["starters"] = p["writers"] + p["jobs"]
    p["parks"] = p["lock"] or p["server"] or p["object_queue"] or p["rt_hold"]
    # one type per field whatever the config's numbers are (an int duration would compile another loop)
    return (Params(**{k: _FIELD_TYPES[k](v) for k, v in p.items()}),
            Delays(bo_cat, bo_tab, bo_thr, bo_srv, bo_lock))


def _window(cfg: Config) -> dict:
    """The run's length and measurement window on the simulated clock (a trace's: divided by its rate_scale)."""
    duration, lo, hi = run_window(cfg)
    return dict(duration_ms=duration, window_lo_ms=lo, window_hi_ms=hi)


def throttled_client(cfg: Config) -> RetryPolicy:
    """The resend policy of the client whose conditional writes a limit throttles: the storage client's, or with
    Delta's DynamoDB log store the AWS SDK's (its table's capacity is the one limit; S3 has none); on a store that
    answers 5xx under concurrent writes and has no limit (Azure), its own client's (`busy_error_retry`, with that
    client's defaults: `sim.config.RESEND_CLIENTS`)."""
    if cfg.log_store.kind is not None:
        return cfg.log_store.retry
    profile = profile_of(cfg)
    if _contention(cfg, profile)["busy_share"] > 0.0 and mutation_limit(cfg, profile) is None \
            and client_limit(cfg, profile) is None:
        name = profile.busy_error_retry
        return RetryPolicy(policy=name, **RESEND_CLIENTS[name])
    return cfg.storage.throttle_retry


def concurrency_fit_in(cfg: Config) -> str | None:
    """Where the figures fitted on several writers that this run uses come from (its provider's measured set's
    `concurrency_fit`), or None: a late loser or a busy store on a storage catalog's CAS, an object's bucket that
    binds its writes; none with `storage.concurrency_fit: false`."""
    profile = profile_of(cfg)
    if profile.concurrency_fit is None:
        return None
    c = _contention(cfg, profile)
    unfitted = load_provider(cfg.storage.provider, cfg.storage.profile_set, concurrency_fit=False)
    bucket = profile.mutation_rate_per_s != unfitted.mutation_rate_per_s and mutation_limit(cfg, profile) is not None
    return profile.concurrency_fit if c["loser_answer_ms"] > 0.0 or c["busy_share"] > 0.0 or bucket else None


def _contention(cfg: Config, profile) -> dict:
    """Concurrent conditional writes to one object of a storage catalog's CAS (design cas_contended;
    `sim.model.contention`): a loser answered late, a busy answer, reads that find the object empty mid-write
    (the microbenchmark's, whose client checks the length it reads). None unless the provider's set has them."""
    cas_object = (cfg.catalog.backend == "storage" and cfg.commit.protocol == "rewrite"
                  and not cfg.catalog.version_files and not profile.cas_one_at_a_time
                  and cfg.log_store.kind is None and cfg.lock.variant is None)
    loser = (profile.loser_answer_ms or 0.0) if cas_object else 0.0
    busy = (profile.busy_error_share or 0.0) if cas_object else 0.0
    empty = _upload(cfg, profile) is not None
    return dict(contended=loser > 0.0 or busy > 0.0 or empty, loser_answer_ms=loser, busy_share=busy,
                empty_reads=empty)


def _check(cfg: Config) -> dict:
    """Where a conditional write of a storage object takes effect: where every catalog operation does, or at its
    completion where the provider's set says its store checks the precondition then (S3: "the first write
    operation to finish succeeds"), or, in an upload of n requests (`upload_requests`), at its first request's. A
    service's CAS and a DynamoDB log store's PutItem are no storage object's; the locked designs' commits (hive,
    hudi) keep f (their lock objects' writes are left out)."""
    f = cfg.catalog.linearization_fraction
    profile = profile_of(cfg)
    if (profile.cas_checked_at_completion and cfg.catalog.backend == "storage"
            and cfg.log_store.kind is None and cfg.lock.variant is None):
        f = 1.0
    n = _upload(cfg, profile)
    if n is not None:           # an upload of n requests: checked at its first request's effect point
        f = f / n
    return dict(cf=f, cg=1.0 - f)


def _upload(cfg: Config, profile) -> int | None:
    """The requests of the microbenchmark's conditional write where its client uploads an object in several (the
    provider's `upload_requests`: ADLS Gen2's Create, Append, Flush), else None: only the benchmark's client is
    known to (commit.shape object, a storage catalog's CAS)."""
    n = profile.upload_requests
    if n is None or cfg.commit.shape != "object" or cfg.catalog.backend != "storage" or profile.cas_one_at_a_time \
            or cfg.commit.protocol != "rewrite" or cfg.catalog.version_files or cfg.lock.variant is not None:
        return None
    return n


def _resends(cfg: Config) -> dict:
    """The throttled client's limits (none unless given) and its backoff's numbers (`sim.model.resend`)."""
    r = throttled_client(cfg)
    return dict(throttle_max_resends=UNLIMITED if r.max_resends is None else r.max_resends,
                throttle_deadline_ms=np.inf if r.deadline_ms is None else r.deadline_ms,
                throttle_base_ms=r.base_ms or 0.0, throttle_factor=r.factor or 1.0, throttle_max_ms=r.max_ms or 0.0)


def _server(cfg: Config, policy: int, jitter: float) -> dict:
    """A REST server's parts and its database's capacity (`sim.model.designs.rest`, `sim.model.capacity`; none
    unless catalog.server names a variant)."""
    srv = cfg.catalog.server
    # the microbenchmark (commit.shape object) times the database's conditional write alone
    on = srv.variant is not None and cfg.commit.shape == "table"
    return dict(server=on, server_get=bool(srv.metadata_get), server_retries=srv.retries or 0, policy_server=policy,
                jitter_server=jitter, server_reread=on and bool(srv.reread_before_cas),
                server_delete=on and bool(srv.delete_on_conflict), row_locks=on and srv.lock_scope == "metadata_write",
                row_hold=on and srv.lock_scope == "transaction",
                client_pool=1 if srv.read_pool_connections else 0, server_local=on and srv.load_latency is not None,
                srv_load_per_version_ms=srv.load_per_version_ms or 0.0,
                srv_commit_per_version_ms=srv.commit_per_version_ms or 0.0,
                pool_timeout_ms=(srv.acquire_timeout_ms or 0.0) if on else 0.0)


def _round_trips(cfg: Config) -> dict:
    """A service catalog's operations as database round trips (`sim.model.round_trips`; none given: one each, the
    design's own path): per operation its count and the one that takes effect; the commit's visible one."""
    rts = cfg.catalog.round_trips
    on = rts.commit.count is not None
    out = {"rt_ops": on}
    for name in ("base", "refresh", "conflict", "retry", "commit", "reread"):
        rt = getattr(rts, name)
        out[f"rt_{name}_n"] = rt.count if on else 1
        out[f"rt_{name}_k"] = (rt.effect or 0) if on else 1
    out["rt_commit_visible"] = rts.commit.visible if on else 1
    out["rt_hold"] = on and rts.commit.visible > rts.commit.effect
    return out


def _lock(cfg: Config, policy: int, jitter: float) -> dict:
    """A commit lock's scope, discipline and limits (`sim.model.lock`; none unless lock.variant is given)."""
    lk = cfg.lock
    return dict(lock=lk.variant is not None, lock_per_table=lk.scope != "global",
                lock_discipline=DISCIPLINES.index(lk.discipline or "fifo_poll"),
                lock_in_storage=lk.variant == "storage",
                lock_timeout_ms=lk.timeout_ms or 0.0, lock_validity_ms=lk.validity_ms or 0.0,
                lock_retries=lk.retries or 0,
                lock_retry_wait_ms=lk.retry_wait_ms or 0.0, lock_lease_ms=lk.lease_ms or 0.0, policy_lock=policy,
                jitter_lock=jitter, hudi=lk.variant is not None and cfg.commit.protocol == "log",
                clock_skew_wait_ms=cfg.commit.clock_skew_wait_ms or 0.0, log_store=cfg.log_store.kind is not None,
                hms_row_share=(lk.next_lock_id_share or 0.0) if lk.variant == "hms" else 0.0,
                hms_mutex_share=(lk.check_lock_mutex_share or 0.0) if lk.variant == "hms" else 0.0,
                **_store_reads(cfg))


def _store_reads(cfg: Config) -> dict:
    """The DynamoDB log store's read capacity (`sim.model.log_store`, `sim.rules.store_read_limit`): units a ms and
    the burst kept; none without a store."""
    reads = store_read_limit(cfg)
    if reads is None:
        return dict(read_rate_per_ms=0.0, read_burst=0.0)
    rate_per_s, burst = reads
    return dict(read_rate_per_ms=rate_per_s / 1000.0, read_burst=burst)


def _log(cfg: Config) -> dict:
    """The log's snapshot update, snapshot reads (parallelism, passes, the checkpoint's GETs, the `_last_checkpoint`
    hint), post-commit work and a no-retry attempt's early failure (`sim.model.delta`)."""
    c = cfg.commit
    return dict(snapshot_update=c.snapshot_update,
                snapshot_max_parallel=c.snapshot_max_parallel or cfg.io.max_parallel,
                checkpoint_rebuild=c.checkpoint_rebuild, log_cleanup=getattr(LogCleanup, c.log_cleanup.upper()),
                log_entries_at_start=c.log_entries_at_start, snapshot_passes=c.snapshot_passes,
                last_checkpoint_hint=c.last_checkpoint_hint, checkpoint_read_gets=c.checkpoint_read_gets,
                post_commit_update=c.post_commit_update,
                fail_fast=c.fail_fast_without_retries and cfg.max_attempts == 1, client_setup_ms=c.client_setup_ms,
                snapshot_entry_ms=c.snapshot_entry_ms, get_service_ms=profile_of(cfg).get_service_ms or 0.0)


def _marker_lock(cfg: Config) -> dict:
    """A store that writes a directory marker under a lock per marker (the provider's `marker_lock_window_ms` and
    `marker_lock_poll_ms`; `sim.model.pyiceberg.marker_wait_ms`); none: 0."""
    prof = profile_of(cfg)
    return dict(marker_window_ms=prof.marker_lock_window_ms or 0.0, marker_poll_ms=prof.marker_lock_poll_ms or 0.0)


def _shape(cfg: Config) -> dict:
    obj = cfg.commit.shape == "object"
    head = obj and cfg.catalog.backend == "storage" and cfg.commit.protocol == "rewrite"
    prof = profile_of(cfg)
    own = head and prof.head_median_ms is not None
    # an object's conditional write of design cas (a storage catalog, rewrite, no version files)
    cas_object = cfg.catalog.backend == "storage" and cfg.commit.protocol == "rewrite" and not cfg.catalog.version_files
    create = prof.create_if_absent
    return dict(object_shape=obj, head=head, own_head=own, object_queue=cas_object and bool(prof.cas_one_at_a_time),
                head_version=own and cas_object and bool(prof.version_from_head),
                file_system=create in ("rename", "link"), create_exists=create == "rename")


def _operations(cfg: Config) -> dict:
    """Operations with read and write sets and maintenance jobs (`sim.model.operations`, `sim.model.jobs`): one job
    row per job and table."""
    ops = cfg.workload.operations
    return dict(ops=operations_on(cfg), serializable=ops.isolation == "serializable",
                equality_deletes=ops.row_delta_deletes == "equality",
                partitions=ops.partitions or 1, jobs=len(jobs_of(cfg)) * cfg.workload.num_tables,
                partial=any(job.partial_progress for _, job in jobs_of(cfg)),
                hudi_mor=cfg.maintenance.compaction.action == "compaction",
                inline_every=cfg.maintenance.compaction.inline_after_commits or 0,
                inline_median_ms=cfg.maintenance.compaction.median_ms,
                inline_sigma=cfg.maintenance.compaction.sigma)


def _growth(cfg: Config, profile) -> dict:
    """Metadata that grows (`sim.model.growth`): the table's sizes, and the PUT profile that prices them."""
    md, expire = cfg.metadata, cfg.maintenance.expire_snapshots
    mib = 1024.0 * 1024.0
    per_byte = profile.put_ms_per_mib / mib
    return dict(growth=md.growth, expiring=expire.every_ms is not None,
                md_base_bytes=md.base_bytes, md_snapshot_bytes=md.snapshot_bytes,
                md_snapshot_log_bytes=md.snapshot_log_bytes, md_log_bytes=md.metadata_log_bytes,
                md_log_max=md.metadata_log_max, ml_base_bytes=md.list_base_bytes,
                ml_entry_bytes=md.manifest_entry_bytes, merge_min_count=md.manifest_merge_min_count or 0,
                expire_max_age_ms=expire.max_age_ms or EXPIRE_MAX_AGE_MS,
                tm_bytes=cfg.io.table_metadata_bytes, ml_bytes=cfg.io.manifest_list_bytes,
                put_fixed_ms=profile.put_fixed_ms or 0.0, put_base_ms=profile.put_base_ms, put_ms_per_byte=per_byte,
                get_ms_per_byte=per_byte if md.transfer_ms_per_mib is None else md.transfer_ms_per_mib / mib)


def _multi_table(cfg: Config) -> dict:
    """Commits over several tables (`sim.model.designs.rest_tx`): the most a commit spans; Lakekeeper's bulk commit,
    Nessie's commit of its branch's ref, or Polaris's table by table; PostgreSQL's deadlock_timeout (its default:
    the servers' configs leave it); Nessie's retry of its ref."""
    variant, ref = cfg.catalog.server.variant, NESSIE_COMMIT_RETRY
    return dict(tables_max=cfg.workload.multi_table.tables, mt_bulk=variant == "lakekeeper",
                deadlock_ms=POSTGRES_DEADLOCK_TIMEOUT_MS, mt_ref=variant == "nessie",
                mt_seq=variant == "reference" and cfg.workload.multi_table.tables > 1, ref_lower_ms=ref["lower_ms"],
                ref_upper_ms=ref["upper_ms"], ref_max_sleep_ms=ref["max_sleep_ms"], ref_timeout_ms=ref["timeout_ms"])


def _faults(cfg: Config) -> dict:
    """Commit requests that lose their answer (`sim.model.faults`): the rates, the client's wait and reaction; a
    storage client resends a 5xx (every SDK's default retry covers 5xx); a status check searches the current and the
    last write.metadata.previous-versions-max metadata files (metadata.metadata_log_max), a REST reconcile the
    refreshed table's snapshots (every one)."""
    f = cfg.faults
    reaction = REACTIONS.index(f.client) if f.client is not None else 0
    window = cfg.metadata.metadata_log_max if f.client == "status_check" else 1 << 62
    return dict(faults=f.commit.lost_answer + f.commit.server_error > 0.0, lost_p=f.commit.lost_answer,
                error_p=f.commit.server_error, fault_timeout_ms=f.timeout_ms, reaction=reaction,
                resends_errors=cfg.catalog.backend == "storage", idempotency_check=f.idempotency_check,
                status_window=window, data_files=f.data_files, data_bytes=f.data_bytes)


def _client(cfg: Config) -> dict:
    """The client's commit loop (`sim.model.pyiceberg`), its own time per attempt (`commit.client_work`) and the
    store's lock per marker its cleanup meets."""
    c, cat = cfg.commit, cfg.catalog
    py = c.client == "pyiceberg"
    w = c.client_work
    return dict(pyiceberg=py, load_get=py and cat.server.variant is None and not cat.table_metadata_inlined,
                work_base_ms=w.base_ms, work_per_version_ms=w.per_version_ms, work_commit_share=w.commit_share,
                **_marker_lock(cfg))


def _writers(cfg: Config) -> dict:
    """Writers (`sim.model.writers`); a trace's starters (`sim.model.trace`): its named writers (each copy's, with
    `tables_scale`), then its rows of no writer."""
    w = cfg.workload.writers
    periodic = w.count > 0 and w.mode == "periodic"
    count = len(trace_data(cfg).writers) * cfg.workload.trace.tables_scale + 1 if traced(cfg) else w.count
    return dict(writers=count, trace=traced(cfg), periodic=periodic, interval_ms=w.interval_ms if periodic else 0.0,
                jitter_ms=w.jitter_ms if periodic else 0.0, skip=periodic and w.overrun == "skip",
                budget=w.commits or 0, spread_ms=w.start_spread_ms or 0.0, owned=w.tables == "owned",
                num_tables=cfg.workload.num_tables)


_FIELD_TYPES = get_type_hints(Params)
