"""What the two PyIceberg stacks share: their tables' creation (the client's retries off or at its defaults), a
writer that appends through its catalog, one `commit_table` call an attempt (counted by wrapping the catalog's
method in the writer's process), and the check of each table's snapshots and rows."""
from __future__ import annotations

from ..writers import CommitOutcome, now_ms
from . import payload
from .common import NAMESPACE, failed, keys_of


def table_properties(env: dict) -> dict:
    """Retries off: `commit.retry.num-retries` 0; on: PyIceberg's defaults, nothing set."""
    return {} if env["retries"] else {"commit.retry.num-retries": "0"}


def create_tables(env: dict, catalog, tables: list[str]) -> None:
    """The namespace and each table, empty, with the writers' payload's schema; the catalog's pool closed after."""
    catalog.create_namespace_if_not_exists(NAMESPACE)
    schema = payload(env, 0, 0).schema
    for t in tables:
        catalog.create_table(f"{NAMESPACE}.{t}", schema=schema, properties=table_properties(env))
    dispose_of(catalog)


class PyIcebergWriter:
    def __init__(self, env: dict, writer: int, catalog):
        self.env, self.writer, self.catalog = env, writer, catalog
        commit_table = catalog.commit_table
        self.calls: list[float] = []

        def counted(*args, **kwargs):
            self.calls.append(now_ms())
            return commit_table(*args, **kwargs)
        catalog.commit_table = counted
        for t in env["tables"]:           # warm the connections (a job's first connect is not a commit's)
            catalog.load_table(f"{NAMESPACE}.{t}")

    def payload(self, k: int):
        return payload(self.env, self.writer, k)

    def commit(self, table: str, data) -> CommitOutcome:
        from pyiceberg.exceptions import CommitFailedException
        self.calls = []
        tbl = self.catalog.load_table(f"{NAMESPACE}.{table}")
        try:
            tbl.append(data)
        except CommitFailedException as exc:
            return failed("retries_exhausted", exc, len(self.calls), self._first())
        return CommitOutcome(True, attempts=len(self.calls), commit_start_ms=self._first())

    def _first(self):
        return self.calls[0] if self.calls else None

    def close(self) -> None:
        dispose_of(self.catalog)


def dispose_of(catalog) -> None:
    """A SqlCatalog's connection pool closed (a RestCatalog holds none)."""
    engine = getattr(catalog, "engine", None)
    if engine is not None:
        engine.dispose()


def verify_tables(catalog, tables: list[str]) -> dict:
    """Per table: its snapshots and the rows of each (writer, k) read back from its data files."""
    out = {}
    for t in tables:
        tbl = catalog.load_table(f"{NAMESPACE}.{t}")
        rows = tbl.scan(selected_fields=("writer", "k")).to_arrow()
        out[t] = {"versions": len(tbl.metadata.snapshots), "keys": keys_of(rows)}
    dispose_of(catalog)
    return out
