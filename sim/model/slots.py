"""Transaction slots: a transaction takes a free slot (a row of `Model.tx`) at its arrival and keeps it until its
record is handed to the run's sink.

When an arrival finds no free slot, the engine stops like for a refill; every finished transaction hands its
record to the sink and frees its slot, and if that freed less than half of them, the slots double. So the slots
track the transactions in flight, however long one of them lives (runtimes are heavy-tailed: a transaction can
outlive most of the run), and records reach the sink in batches, each in id order but not in id order overall
(`txn` says whose; `sim.sink.MemorySink` sorts).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .state import PC, TX, Op, Outcome, Reason


def _blank_row() -> np.ndarray:
    """One free slot: no transaction, nothing happened yet, the outcome unfinished, no runtime end nor end."""
    tx = np.zeros(1, dtype=TX)
    tx["txn"] = -1
    tx["outcome"] = Outcome.UNFINISHED
    tx["reason"] = Reason.UNFINISHED
    tx["runtime_end_ms"] = np.nan
    tx["end_ms"] = np.nan
    tx["writer"] = -1
    tx["due_ms"] = np.nan
    tx["pool"] = -1
    tx["wake_next"] = -1
    return tx


# every field is 8 bytes: rows are copied and blanked as int64 words (numpy copies a structured row field by field,
# ~2.5x slower on a run's records)
WORDS = TX.itemsize // 8
assert TX.itemsize == 8 * len(TX.names)
_BLANK_WORDS = _blank_row().view(np.int64)


def blank(n: int) -> np.ndarray:
    """n free slots (`_blank_row`), written row by row as words in one pass."""
    tx = np.empty(n, dtype=TX)
    _words(tx)[:] = _BLANK_WORDS
    return tx


def _words(tx: np.ndarray) -> np.ndarray:
    return tx.view(np.int64).reshape(len(tx), WORDS)


def _offset(name: str) -> int:
    """Where TX field `name` is in a row's words."""
    return TX.fields[name][1] // 8


VALIDATION_FIELDS = ("txn", "pc", "table", "validated", "op")   # what `most_to_validate` reads of a slot
_TXN, _PC, _TABLE, _VALIDATED, _OP = (_offset(f) for f in VALIDATION_FIELDS)


def most_to_validate(tx: np.ndarray, versions: np.ndarray, appends_validate: bool) -> int:
    """The most snapshots a transaction in flight has yet to validate (its table's version less its `validated`),
    counting only those that have read their base snapshot (the others will see only later commits), and appends
    only if they validate (`appends_validate`: a log's writers do). One pass over the slots' rows: reading each
    field as its own strided column took a heavy run's tens of thousands of slots a pass a field."""
    return int(_most_to_validate(_words(tx), versions, appends_validate))


@njit(cache=True, nogil=True)
def _most_to_validate(words, versions, appends_validate):
    most = 0
    for i in range(words.shape[0]):
        if words[i, _TXN] < 0:
            continue
        pc = words[i, _PC]
        if pc == PC.DONE or pc == PC.INIT or pc == PC.BASE or pc == PC.LOG_BASE:
            continue
        if not appends_validate and words[i, _OP] == Op.FA:
            continue
        most = max(most, versions[words[i, _TABLE]] - words[i, _VALIDATED])
    return most


def grown(m, rows: int) -> dict:
    """The slots, `rows` of them now: the old ones where they were (engines hold slots), the new ones free."""
    old = len(m.tx)
    tx = np.empty(rows, dtype=TX)
    _words(tx)[:old] = _words(m.tx)
    _words(tx)[old:] = _BLANK_WORDS
    free = np.empty(rows, dtype=np.int64)
    r = m.run[0]
    n = int(r["free_slots"])
    free[:n] = m.free[:n]
    free[n:n + rows - old] = np.arange(rows - 1, old - 1, -1)
    r["free_slots"] = n + rows - old
    K = len(m.mt_table) // old                      # each slot's tables (commits over several tables)
    mt = {name: np.concatenate([getattr(m, name), np.zeros((rows - old) * K, dtype=np.int64)])
          for name in ("mt_table", "mt_base")}
    return {"tx": tx, "free": free, **mt}


def flush(m, sink, finished_only: bool) -> None:
    """Hand the records of the finished transactions to the sink, in id order, and free their slots; at the run's
    end (`finished_only` false), hand over every record and leave the slots as they are. The sink gets the fields
    it asks for (`sink.fields`), each record's where the sink places it (`sink.room`), gathered from the slots' rows
    in one compiled pass (a row is 87 words, a record reads 36: copying whole rows, then each field out of them,
    was a tenth of a heavy run)."""
    words = _words(m.tx)
    used = words[:, _TXN] >= 0
    if finished_only:
        used &= words[:, _PC] == PC.DONE
    slots = np.flatnonzero(used)                       # ascending
    if not len(slots):
        return
    txn = words[slots, _TXN]
    by_id = np.argsort(txn, kind="stable")
    order = slots[by_id]
    out, cols = sink.room(txn[by_id])
    _gather(words, order, _fields_at(sink.fields), out, cols, _BLANK_WORDS, finished_only)
    sink.add(out, cols)
    if not finished_only:   # the run's end: no slot is taken again (blanking them was a tenth of a heavy run's end)
        return
    r = m.run[0]
    n = int(r["free_slots"])
    m.free[n:n + len(slots)] = slots[::-1]   # the lowest slot is taken first
    r["free_slots"] = n + len(slots)


_FIELDS_AT: dict = {}


def _fields_at(names: tuple) -> np.ndarray:
    """The offsets of the TX fields `names` in a row's words."""
    if names not in _FIELDS_AT:
        _FIELDS_AT[names] = np.array([_offset(n) for n in names], dtype=np.int64)
    return _FIELDS_AT[names]


@njit(cache=True, nogil=True)
def _gather(words, order, at, out, cols, blank, blank_them):
    """out[f, cols[k]] = words[order[k], at[f]]; then the rows `order` are blanked, if `blank_them`. Scalar loops
    only: blanking a row by slice assignment took numba 2.2 s of CPU to compile, this whole function 0.16 s."""
    for k in range(order.shape[0]):
        s = order[k]
        c = cols[k]
        for f in range(at.shape[0]):
            out[f, c] = words[s, at[f]]
        if blank_them:
            for i in range(words.shape[1]):
                words[s, i] = blank[i]
