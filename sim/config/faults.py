"""The rules of `faults` (docs/model/unknown-outcomes.md): which commits can lose their answer as modelled, and the
client's reaction a design fills in when a rate is above 0; below, every other key of the section is unread."""
from __future__ import annotations

import dataclasses

from ..providers import profile_of
from ..schema import ConfigError
from .types import Config, Faults

# each named design's client meets a lost answer so (docs/MODEL.md, "Unknown outcomes"): design file's storage client
# (taken as Google's Java client, its `storage.throttle_retry`) and Delta Spark's resend the conditional write; Glue's
# and HMS's Iceberg client checks the commit's status; the REST client reconciles a CommitStateUnknown; delta-rs
# returns the error
FAULT_CLIENTS = {"file": "resend", "service-pointer": "status_check", "rest": "reconcile",
                 "rest-lakekeeper": "reconcile", "log": "error", "log-spark": "resend"}


def _fault_design(cfg: Config) -> str | None:
    """Why a config's commit cannot lose its answer as modelled (None: it can): faults are modelled on the commit
    of a storage object (a catalog's CAS, a log's put-if-absent), a service pointer and a REST server's one-table
    POST."""
    cat, commit = cfg.catalog, cfg.commit
    if cfg.lock.variant is not None or cfg.log_store.kind is not None:
        return "a locked commit or Delta's DynamoDB log store"
    if cat.version_files or cat.file_lists_inlined or commit.shape == "object":
        return "file-system tables, DuckLake or the microbenchmark"
    if cfg.workload.multi_table.tables > 1 or cat.server.variant == "nessie":
        return "a commit over several tables or Nessie's"
    if profile_of(cfg).cas_one_at_a_time and cat.backend == "storage" and commit.protocol == "rewrite":
        return "a store that serves conditional writes one at a time"
    return None


def resolve_faults(cfg: Config, provider_known: bool) -> Faults:
    """A fault rate above 0 fills in the client's reaction (its design's); below, every other key is unread."""
    f, path = cfg.faults, "faults"
    rates = f.commit.lost_answer, f.commit.server_error
    if sum(rates) == 0.0:
        for fld in dataclasses.fields(Faults):
            if fld.name != "commit" and getattr(f, fld.name) != getattr(Faults(), fld.name):
                raise ConfigError(f"{path}.{fld.name}", "not used unless faults.commit has a rate above 0; remove it")
        return f
    if sum(rates) > 1.0:
        raise ConfigError(f"{path}.commit.server_error", f"lost_answer + server_error is {sum(rates):g}, above 1")
    why = _fault_design(cfg) if provider_known else None
    if why is not None:
        raise ConfigError(f"{path}.commit", f"lost answers are not modelled for {why}: designs file, "
                                            f"service-pointer, rest, rest-lakekeeper, log and log-spark")
    client = f.client or FAULT_CLIENTS.get(cfg.design) or _fault_client(cfg)
    clients = ("resend", "error") if cfg.catalog.backend == "storage" else \
        ("reconcile", "error") if cfg.catalog.server.variant is not None else ("status_check", "error")
    if client not in clients:
        raise ConfigError(f"{path}.client", f"this catalog's client meets a lost answer as one of {', '.join(clients)}")
    if f.idempotency_check and (cfg.commit.protocol != "log" or client != "resend"):
        raise ConfigError(f"{path}.idempotency_check", "Delta Spark's: a log whose client resends (client resend)")
    return dataclasses.replace(f, client=client)


def _fault_client(cfg: Config) -> str:
    """The reaction of a config's client that names no design: a storage catalog's conditional write is resent by
    its storage client; a log's client (delta-rs's keys) returns the error; a REST server's client reconciles; a
    service pointer's checks the status."""
    if cfg.commit.protocol == "log":
        return "error"
    if cfg.catalog.backend == "storage":
        return "resend"
    return "reconcile" if cfg.catalog.server.variant is not None else "status_check"
