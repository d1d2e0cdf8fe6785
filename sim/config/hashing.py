"""A config's identity: `config_hash` (results and caches are keyed by it) and `seed_hash` (its random streams),
both stable across processes and machines. `late` keys at their defaults stay out, so adding a key keeps the
hashes, and the results, of every config that does not use it."""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import fields

from ..providers import given_by_path
from .resolve import _resolve
from .types import Config


def _hash_view(obj, default, seeds: bool = False) -> dict:
    """The resolved config as plain data (like `to_dict`), less `late` keys that have their default value (or their
    `earlier` one) and labels (`hashed=False`); for the seeds, also less `seeded=False` keys."""
    out = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        dflt = getattr(default, f.name) if default is not None else None
        late = f.metadata.get("late") and (value == dflt or value == f.metadata.get("earlier"))
        if late or not f.metadata.get("hashed", True) \
                or (seeds and not f.metadata.get("seeded", True)):
            continue
        if dataclasses.is_dataclass(value):
            out[f.name] = _hash_view(value, dflt if dataclasses.is_dataclass(dflt) else None, seeds)
        elif value is not None:
            out[f.name] = value
    return out


@functools.lru_cache(maxsize=1)
def _defaults() -> Config:
    """The resolved default config (what `from_dict({})` gives): the values a `late` key is compared with. Its
    provider is not looked up: a providers directory of the user's own (`SIM_PROVIDERS_DIR`) need not hold s3."""
    return _resolve(Config(), provider_known=False)


def config_hash(cfg: Config) -> str:
    """Stable across processes and machines: sha256 of the canonical JSON of the resolved config (`late` keys
    at their defaults left out, see `_spec`; a user's provider file by its content, `_by_content`)."""
    return _digest(_by_content(_hash_view(cfg, _defaults())))


def seed_hash(cfg: Config) -> str:
    """What seeds a run's random streams: `config_hash` less `seeded=False` keys (equal to it for every config
    that leaves them at their defaults)."""
    return _digest(_by_content(_hash_view(cfg, _defaults(), seeds=True)))


def _by_content(view: dict) -> dict:
    """A provider given by path is its content (`storage.provider_sha256`, which does not seed), not where it
    lies: the same file in another folder is the same config."""
    storage = view.get("storage", {})
    if given_by_path(storage.get("provider", "")):
        storage.pop("provider")
    return view


def _digest(view: dict) -> str:
    """The first 16 hex digits of the sha256 of `view`'s canonical JSON."""
    blob = json.dumps(view, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
