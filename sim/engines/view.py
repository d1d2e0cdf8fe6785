"""The model's state as the SimPy engine's handlers see it: the same fields, made of Python numbers.

Interpreted, a structured array's row has no attribute access (`np.recarray` gives it at ~35 us a step), and
numpy scalars cost 2-3x a Python number per operation. So the handlers run on a view: every row of a
structured array (a transaction slot, the run's scalars) is a small `__slots__` object with the row's fields,
other arrays are lists, and Python ints and floats compute exactly what numpy's
scalars do (IEEE doubles, 64-bit ints that never overflow here). History rows are objects made as they are
written. What the handlers write is copied back into the run's arrays before a refill and at the end, the only
times anything outside the model reads them.
"""
from __future__ import annotations

import operator

import numpy as np

from ..model.state import HIST, Model

_CLASSES = {}


def _repr(row) -> str:
    """`Row(txn=7, table=0, ...)`: every field by name (what a debugger's `p m.tx[j]` shows)."""
    return "Row(" + ", ".join(f"{k}={getattr(row, k, '?')!r}" for k in row.__slots__) + ")"


def row_class(dtype: np.dtype) -> type:
    """A class with `__slots__` named after the dtype's fields (one per dtype), built from a row's values."""
    if dtype not in _CLASSES:
        names = dtype.names
        body = "".join(f"    self.{k} = {k}\n" for k in names)   # plain assignments: ~10x a setattr loop
        scope: dict = {}
        exec(f"def __init__(self, {', '.join(names)}):\n{body}", scope)
        _CLASSES[dtype] = type("Row", (), {"__slots__": names, "__init__": scope["__init__"], "__repr__": _repr})
    return _CLASSES[dtype]


def rows_of(arr: np.ndarray) -> list:
    cls = row_class(arr.dtype)
    return [cls(*t) for t in arr.tolist()]


def write_rows(rows: list, arr: np.ndarray, fields: tuple | None = None) -> None:
    """Copy the row objects' fields (all, or `fields`) into the structured array."""
    if not len(rows):
        return
    if fields is None:
        get = operator.attrgetter(*arr.dtype.names)
        arr[:] = np.array([get(r) for r in rows], dtype=arr.dtype)
        return
    for k in fields:
        arr[k] = [getattr(r, k) for r in rows]


class HistoryRows:
    """The history buffer as handlers write it: `hist[n]` is a fresh row object, kept until `write` copies it
    into row n of the buffer."""

    def __init__(self, arr: np.ndarray):
        self.arr = arr
        self.cls = row_class(HIST)
        self.get = operator.attrgetter(*HIST.names)
        self.written: list = []

    def __len__(self) -> int:
        return len(self.arr)

    def __getitem__(self, n: int):
        row = self.cls.__new__(self.cls)
        self.written.append((n, row))
        return row

    def write(self) -> None:
        for n, row in self.written:
            self.arr[n] = self.get(row)
        self.written.clear()


# structured arrays whose rows are objects
_RECORDS = ("tx", "run", "wr", "lk", "pl", "bk", "arrivals", "jobs", "tables", "trace")
# what handlers write (copied back); every other field is read only, rebuilt only when its array is replaced
_STATE = ("run", "tx", "free", "versions", "cur", "bk", "bk_head", "bk_prev", "wr", "hints", "lk", "pl", "ring_op",
          "ring_parts", "tables", "snap_ms", "mt_table", "mt_base", "markers")
_SLOTS = ("tx", "free")


def _view_of(name: str, value):
    if name in _RECORDS:
        return rows_of(value)
    if name == "hist":
        return HistoryRows(value)
    if name == "p":
        return value
    return value.tolist()


def view(m: Model, before: Model | None = None, old: Model | None = None, keep_slots: bool = False) -> Model:
    """The view of the run's `m`. `before`: the run's arrays the view `old` was made of; a field whose array was
    not replaced since (and that handlers do not write) keeps its old view, and so do the slots (`tx`, `free`)
    with `keep_slots` (the refill in between left them as they were)."""
    fields = {}
    for name in Model._fields:
        value = getattr(m, name)
        if keep_slots and name in _SLOTS and value is getattr(before, name):
            fields[name] = getattr(old, name)
            continue
        if before is not None and name not in _STATE and name != "hist":
            if value is getattr(before, name):
                fields[name] = getattr(old, name)
                continue
        fields[name] = _view_of(name, value)
    return Model(**fields)


def write_back(v: Model, m: Model, slot_fields: tuple | None = None) -> None:
    """Copy what the handlers wrote in the view `v` into the run's arrays `m`: of the transaction slots, only
    `slot_fields` if given (and not the free stack), for a refill that reads only those."""
    for name in _STATE:
        if name in _RECORDS:
            write_rows(getattr(v, name), getattr(m, name), slot_fields if name == "tx" else None)
        elif slot_fields is None or name not in _SLOTS:
            getattr(m, name)[:] = getattr(v, name)
    v.hist.write()
