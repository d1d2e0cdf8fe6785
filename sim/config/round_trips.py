"""The rules of `catalog.round_trips` (docs/model/catalog.md, "Operations as database round trips"): a service
catalog whose clients query its database themselves, each operation a number of round trips, one of them its
effect; and of `catalog.ducklake_version`, the release whose conflict rules a DuckLake catalog runs."""
from __future__ import annotations

import dataclasses

from ..schema import ConfigError
from .types import Catalog, CatalogRoundTrips, CommitRoundTrips, Config, RoundTrips, Server

PATH = "catalog.round_trips"
OPERATIONS = ("base", "refresh", "conflict", "retry", "commit", "reread")
ONE = RoundTrips(count=1, effect=1)


def resolve_round_trips(cfg: Config, cat: Catalog) -> Catalog:
    """Each operation's round trips filled in (one, its effect, where not given); a commit's change visible at its
    effect unless `visible` says later; the keys read only by a service catalog the Iceberg client queries itself."""
    cat = _ducklake_version(cat)
    rts = cat.round_trips
    if rts == CatalogRoundTrips():
        return cat
    _check_where(cfg)
    filled = {name: _operation(getattr(rts, name), f"{PATH}.{name}", name) for name in OPERATIONS}
    return dataclasses.replace(cat, round_trips=CatalogRoundTrips(**filled))


def _check_where(cfg: Config) -> None:
    cat, commit = cfg.catalog, cfg.commit
    for wrong, why in ((cat.backend != "service", "needs catalog.backend service (a database's round trips)"),
                       (cat.server != Server(), "a REST server's requests are its own (catalog.server): remove it"),
                       (commit.protocol != "rewrite" or commit.shape != "table",
                        "needs commit.protocol rewrite and commit.shape table"),
                       (cfg.lock.variant is not None, "not with a commit lock"),
                       (cfg.workload.multi_table.tables > 1 and not cat.file_lists_inlined,
                        "a commit over several tables is DuckLake's only (catalog.file_lists_inlined)"),
                       (cfg.faults.commit.lost_answer + cfg.faults.commit.server_error > 0.0,
                        "lost answers are not modelled on a database's round trips")):
        if wrong:
            raise ConfigError(PATH, why)


def _operation(rt: RoundTrips, path: str, name: str) -> RoundTrips:
    """One operation's round trips: `count` (at least 1; a conflict read may be 0: none), the `effect`-th taking
    effect (needed when there are several), a commit's `visible`-th making it visible (from its effect on)."""
    if rt == type(rt)():
        return CommitRoundTrips(count=1, effect=1, visible=1) if name == "commit" else ONE
    if rt.count is None:
        raise ConfigError(f"{path}.count", "required when any of its keys is given")
    least = 0 if name == "conflict" else 1
    if rt.count < least:
        raise ConfigError(f"{path}.count", f"at least {least}")
    if rt.count == 0:
        if rt.effect is not None:
            raise ConfigError(f"{path}.effect", "not used when count is 0 (no read); remove it")
        return rt
    if rt.effect is None and rt.count > 1:
        raise ConfigError(f"{path}.effect", "required when count is above 1: which round trip takes effect")
    effect = rt.effect or 1
    if effect > rt.count:
        raise ConfigError(f"{path}.effect", f"{effect} is past its {rt.count} round trips")
    if name != "commit":
        return dataclasses.replace(rt, effect=effect)
    visible = effect if rt.visible is None else rt.visible
    if not effect <= visible <= rt.count:
        raise ConfigError(f"{path}.visible", f"between its effect ({effect}) and its count ({rt.count})")
    return dataclasses.replace(rt, effect=effect, visible=visible)


def _ducklake_version(cat: Catalog) -> Catalog:
    """DuckLake's rules are a release's: the latest's (1.5) unless given; no DuckLake, no version."""
    if not cat.file_lists_inlined:
        if cat.ducklake_version is not None:
            raise ConfigError("catalog.ducklake_version", "DuckLake's only (catalog.file_lists_inlined); remove it")
        return cat
    return dataclasses.replace(cat, ducklake_version=cat.ducklake_version or "1.5")
