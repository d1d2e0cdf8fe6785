"""What a resolved configuration implies, written once: whether a per-object mutation limit binds its conditional
writes (the model's throttle applies it), and the rules its history is checked against (`sim check`, tests,
sweeps). Both read the typed config and provider profile; a run's stored resolved config (plain data,
`sim.run.resolved_config`) is typed again at the one edge where it is read back, `of_stored`."""
from __future__ import annotations

from typing import Mapping

from .config import Config, build_structure, operations_on
from .providers import Profile


def mutation_limit(cfg: Config, profile: Profile | None) -> tuple[float, float, float] | None:
    """(rate per second, burst, tokens a refused write takes) of the provider's per-object mutation limit if it
    binds this run's conditional
    writes: objects in the provider (backend storage, not a service's rows), `storage.throttle` not false, and a
    provider that has a limit; or, with Delta's DynamoDB log store, its table's write capacity (units per second,
    and the unused capacity kept for bursts). Else None (also with no profile known)."""
    store, lock = cfg.log_store, cfg.lock
    if store.kind == "dynamodb":   # the one limit: the DynamoDB table's write capacity (S3 has none)
        rate = float(store.write_capacity_per_s)
        return rate, max(1.0, rate * float(store.burst_s)), 0.0
    rate = None if profile is None else profile.mutation_rate_per_s
    if not _limits_bind(cfg) or rate is None:
        return None
    burst, refusal = profile.mutation_burst, profile.mutation_refusal_tokens
    return float(rate), 1.0 if burst is None else float(burst), float(refusal or 0.0)


def _limits_bind(cfg: Config) -> bool:
    """Whether a provider's per-object limits bind this run's conditional writes: objects in the provider (backend
    storage, not a service's rows), `storage.throttle` not false, no lock but a storage lock (a locked commit writes
    fresh names unconditionally: Hudi's instants; a storage lock writes its object)."""
    return cfg.catalog.backend == "storage" and cfg.storage.throttle and cfg.lock.variant in (None, "storage")


def client_limit(cfg: Config, profile: Profile | None) -> tuple[float, float, float] | None:
    """(rate per second, burst, tokens a refused write takes) of the provider's bucket per client, if the
    provider's per-object limits bind this run's conditional writes (not a DynamoDB log store's capacity) and the
    provider has one (with its object's bucket, or alone); else None."""
    if cfg.log_store.kind == "dynamodb" or profile is None or profile.client_rate_per_s is None:
        return None
    if not _limits_bind(cfg):
        return None
    return float(profile.client_rate_per_s), float(profile.client_burst), float(profile.client_refusal_tokens)


def store_read_limit(cfg: Config) -> tuple[float, float] | None:
    """(units per second, burst) of Delta's DynamoDB log store's read capacity, with the write capacity's burst
    (the unused capacity kept, at least one unit); None without a store."""
    if cfg.log_store.kind != "dynamodb":
        return None
    rate = float(cfg.log_store.read_capacity_per_s)
    return rate, max(1.0, rate * float(cfg.log_store.burst_s))


def checker_rules(cfg: Config, profile: Profile | None) -> dict:
    """Keyword arguments of `sim.checker.check_history` for a run of `cfg` on `profile`: its CAS scope, commit
    protocol (the log protocol is always per table), mutation limit, version files, re-read before the CAS, and
    lock (its scope, and whether its discipline grants in request order; a REST server whose one transaction holds
    its row lock across the metadata.json write: that lock, per table, FIFO), and operations' rules."""
    catalog, commit, lock = cfg.catalog, cfg.commit, cfg.lock
    multi = cfg.workload.multi_table.tables > 1
    row_locks = ((catalog.server.lock_scope in ("metadata_write", "transaction")
                  or (multi and catalog.server.variant in ("polaris", "lakekeeper"))) and commit.shape == "table")
    rt = catalog.round_trips.commit
    held = rt.visible is not None and rt.visible > rt.effect    # a commit on round trips open to its COMMIT
    rules = {"scope": "table" if commit.protocol == "log" else catalog.scope, "protocol": commit.protocol,
             "mutation_rate_per_s": None, "mutation_burst": 1.0, "mutation_refusal_tokens": 0.0,
             "client_limit": client_limit(cfg, profile) is not None,
             "version_files": catalog.version_files, "reread_before_cas": commit.reread_before_cas,
             "lock_scope": (lock.scope if lock.variant is not None else "table" if row_locks else
                            catalog.scope if held else None),
             "log_store": cfg.log_store.kind is not None,
             "lock_fifo": lock.discipline in ("fifo_notify", "fifo_poll") or row_locks or held,
             "lock_object": lock.variant == "storage", "read_rate_per_s": None, "read_burst": 1.0,
             "operations": ({"serializable": cfg.workload.operations.isolation == "serializable",
                             "server": catalog.server.variant is not None,
                             "equality": cfg.workload.operations.row_delta_deletes == "equality",
                             "format": ("ducklake" if catalog.file_lists_inlined else
                                        "iceberg" if commit.protocol != "log" else
                                        "hudi" if lock.variant is not None else "delta"),
                             "ducklake_version": catalog.ducklake_version,
                             "partial": cfg.maintenance.compaction.partial_progress,
                             "mor": cfg.maintenance.compaction.action == "compaction"}
                            if operations_on(cfg) else None),
             "multi_table": multi, "table_by_table": multi and catalog.server.variant == "reference",
             "moved_fails": (commit.protocol == "log" and commit.fail_fast_without_retries
                             and cfg.max_attempts == 1)}
    reads = store_read_limit(cfg)
    if reads is not None:
        rules["read_rate_per_s"], rules["read_burst"] = reads
    limit = mutation_limit(cfg, profile)
    if limit is not None:
        rules["mutation_rate_per_s"], rules["mutation_burst"], rules["mutation_refusal_tokens"] = limit
    return rules


def of_stored(resolved: Mapping) -> tuple[Config, Profile | None]:
    """A run's stored resolved config (a run directory's config.yaml) typed again: its keys and types checked
    (it was resolved when it ran: no cross-field rule runs again and no provider file is read), and the provider
    profile it ran on, if one is stored."""
    profile = resolved.get("provider_profile")
    return build_structure(resolved["config"], "config"), Profile.from_dict(profile) if profile else None
