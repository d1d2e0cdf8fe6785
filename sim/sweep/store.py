"""The results directory of a sweep: one JSON file per (config hash, replication), written atomically.

`DIR/runs/<hash>-r<replication>.json` holds a finished run (summary, per-table rows, resolved config);
`.failed.json` a run that raised. A rerun skips finished runs and retries failed ones; a killed sweep loses
only the runs in flight, because a file appears whole (rename) or not at all.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..results_io import atomic_write_text, dumps


def run_key(config_hash: str, replication: int) -> str:
    return f"{config_hash}-r{replication}"


class ResultStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.runs = self.root / "runs"

    def path(self, key: str, failed: bool = False) -> Path:
        return self.runs / (f"{key}.failed.json" if failed else f"{key}.json")

    def is_done(self, key: str) -> bool:
        return self.path(key).is_file()

    def write(self, key: str, payload: dict) -> None:
        failed = payload.get("status") != "ok"
        atomic_write_text(self.path(key, failed), dumps(payload))
        if not failed:
            self.path(key, failed=True).unlink(missing_ok=True)

    def read(self, key: str) -> dict | None:
        for failed in (False, True):
            p = self.path(key, failed)
            if p.is_file():
                return json.loads(p.read_text())
        return None
