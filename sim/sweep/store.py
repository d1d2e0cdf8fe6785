"""The results directory of a sweep: one JSON file per (config hash, replication), written atomically.

`DIR/runs/<hash>-r<replication>.json` holds a finished run (summary, per-table rows, resolved config, and the
ingredients of its cache key); `.failed.json` a run that raised. A rerun reuses a finished run only if its whole
key matches: the config hash and replication (the file name), the digest of the provider profile it ran on and
the model version. Otherwise it recomputes the run and says why. A killed sweep loses only the runs in flight,
because a file appears whole (rename) or not at all.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..config import config_hash
from ..providers import profile_of
from ..results_io import atomic_write_text, dumps
from ..version import MODEL_VERSION


@dataclass(frozen=True)
class RunKey:
    """What a run's result depends on. The config hash (which seeds the run) names the provider but not its
    numbers, nor the model's version; the key covers both, so neither an edited providers/*.yaml nor an upgraded
    sim reuses stale runs."""
    config_hash: str
    replication: int
    provider: str
    profile_digest: str
    model_version: int

    @property
    def name(self) -> str:
        """The run file's name (without .json)."""
        return run_key(self.config_hash, self.replication)

    def ingredients(self) -> dict:
        return asdict(self)

    @classmethod
    def expected(cls, cfg, replication: int) -> "RunKey":
        """The key a run of `cfg` would have now: this sim's model version, the provider profile on disk."""
        provider = cfg.storage.provider
        return cls(config_hash(cfg), replication, provider, profile_of(cfg).digest(), MODEL_VERSION)


def run_key(config_hash: str, replication: int) -> str:
    return f"{config_hash}-r{replication}"


def stale_reason(stored: dict | None, key: RunKey) -> str:
    """Why a finished run's stored key ingredients do not match `key` ("" if they do)."""
    if not stored:
        return "written by a sim that did not record the provider profile and model version"
    why = []
    if stored.get("model_version") != key.model_version:
        why.append(f"model version {stored.get('model_version')} -> {key.model_version}")
    if stored.get("profile_digest") != key.profile_digest:
        why.append(f"provider {key.provider} changed (profile digest {str(stored.get('profile_digest'))[:8]}.. "
                   f"-> {key.profile_digest[:8]}..)")
    return "; ".join(why)


class ResultStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.runs = self.root / "runs"

    def path(self, name: str, failed: bool = False) -> Path:
        return self.runs / (f"{name}.failed.json" if failed else f"{name}.json")

    def check(self, key: RunKey) -> tuple[bool, str]:
        """(reusable, why not): a finished run is reusable when its stored key matches; why not is "" for a
        run never finished (nothing to explain), else the reason it is recomputed."""
        p = self.path(key.name)
        if not p.is_file():
            return False, ""
        try:
            stored = json.loads(p.read_text()).get("run_key")
        except (OSError, ValueError):
            return False, "unreadable run file"
        why = stale_reason(stored, key)
        return not why, why

    def write(self, name: str, payload: dict) -> None:
        failed = payload.get("status") != "ok"
        atomic_write_text(self.path(name, failed), dumps(payload))
        if not failed:
            self.path(name, failed=True).unlink(missing_ok=True)

    def read(self, name: str) -> dict | None:
        for failed in (False, True):
            p = self.path(name, failed)
            if p.is_file():
                return json.loads(p.read_text())
        return None
