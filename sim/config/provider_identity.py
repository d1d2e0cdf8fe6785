"""A provider given by path is identified by its file's content (`storage.provider_sha256`, filled in), not by
where the file lies: the config's hash holds the digest instead of the path (`sim.config.hashing`), and neither
seeds a run (docs/model/randomness.md)."""
from __future__ import annotations

from ..providers import provider_sha256
from ..schema import ConfigError
from .types import Config


def resolve_provider_sha256(cfg: Config) -> str | None:
    """The provider file's content sha256 (None: a provider by name); given, it must be the file's."""
    digest = provider_sha256(cfg.storage.provider)
    given = cfg.storage.provider_sha256
    if given is not None and given != digest:
        raise ConfigError("storage.provider_sha256", f"{cfg.storage.provider} has changed: its content's sha256 is "
                          f"{str(digest)[:16]}.., not {given[:16]}.. (remove provider_sha256 to run the file as it "
                          "is now)")
    return digest
