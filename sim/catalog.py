"""The catalog object: one global version `seq` and a version per table ("catalog as file").

Only the engine's effect points touch it: a read captures (seq, v[t]); a CAS swaps iff seq == expected.
"""
from __future__ import annotations


class Catalog:
    __slots__ = ("seq", "versions")

    def __init__(self, num_tables: int):
        self.seq = 0
        self.versions = [0] * num_tables

    def read(self, table: int) -> tuple[int, int]:
        return self.seq, self.versions[table]

    def cas(self, expected: int, table: int) -> bool:
        """Conditional replace of the whole catalog: commits `table` iff nobody committed since `expected`."""
        if self.seq != expected:
            return False
        self.seq = expected + 1
        self.versions[table] += 1
        return True
