"""What a resolved configuration implies, written once: whether a per-object mutation limit binds its conditional
writes (the model's throttle applies it), and the rules its history is checked against (`sim check`, tests,
sweeps). Both read the resolved config as stored with every result (`sim.run.resolved_config`): plain data."""
from __future__ import annotations


def mutation_limit(config: dict, profile: dict) -> tuple[float, float] | None:
    """(rate per second, burst) of the provider's per-object mutation limit if it binds this run's conditional
    writes: objects in the provider (backend storage, not a service's rows), `storage.throttle` not false, and a
    provider that has a limit; or, with Delta's DynamoDB log store, its table's write capacity (units per second,
    and the unused capacity kept for bursts). Else None."""
    catalog, storage, lock, store = (config.get(k) or {} for k in ("catalog", "storage", "lock", "log_store"))
    if store.get("kind") == "dynamodb":   # the one limit: the DynamoDB table's write capacity (S3 has none)
        rate = float(store["write_capacity_per_s"])
        return rate, max(1.0, rate * float(store["burst_s"]))
    rate = profile.get("mutation_rate_per_s")
    if catalog.get("backend", "storage") != "storage" or storage.get("throttle", True) is False or rate is None:
        return None
    if lock.get("variant") and lock["variant"] != "storage":   # a locked commit writes fresh names unconditionally
        return None                                             # (Hudi's instants); a storage lock writes its object
    burst = profile.get("mutation_burst")
    return float(rate), 1.0 if burst is None else float(burst)


def checker_rules(resolved: dict) -> dict:
    """Keyword arguments of `sim.checker.check_history` for a run: its CAS scope, commit protocol (the log
    protocol is always per table), mutation limit, version files, re-read before the CAS, and lock (its scope,
    and whether its discipline grants in request order)."""
    config = resolved["config"]
    catalog, commit, lock = (config.get(k) or {} for k in ("catalog", "commit", "lock"))
    protocol = commit.get("protocol") or "rewrite"
    rules = {"scope": "table" if protocol == "log" else catalog.get("scope") or "global", "protocol": protocol,
             "mutation_rate_per_s": None, "mutation_burst": 1.0,
             "version_files": bool(catalog.get("version_files")),
             "reread_before_cas": bool(commit.get("reread_before_cas")),
             "lock_scope": lock.get("scope") if lock.get("variant") else None,
             "log_store": (config.get("log_store") or {}).get("kind") is not None,
             "lock_fifo": lock.get("discipline") in ("fifo_notify", "fifo_poll"),
             "lock_object": lock.get("variant") == "storage"}
    limit = mutation_limit(config, resolved.get("provider_profile") or {})
    if limit is not None:
        rules["mutation_rate_per_s"], rules["mutation_burst"] = limit
    return rules
