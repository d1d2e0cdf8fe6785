"""A commit over several tables (`workload.multi_table`; docs/model/multi-table.md): its tables, their versions at
the client's load, and what every server's path does with them (`sim.model.designs.rest_tx`): which moved, an
attempt lost on one, the server's DELETEs of the files it wrote. Transaction j's i-th table is `Model.mt_table[at(m,
j, i)]` (its first, `tx.table`), its version at the client's load `Model.mt_base[at(m, j, i)]`."""
from . import history
from .draws import take_sum
from .jit import model_function
from .state import Src


@model_function
def at(m, j, i):
    """Index of transaction j's i-th table in `Model.mt_table` and `mt_base`."""
    return j * m.p.tables_max + i


@model_function
def moved(m, j, i):
    """Whether j's i-th table moved since the client's load of it (its requirement fails)."""
    k = at(m, j, i)
    return m.versions[m.mt_table[k]] != m.mt_base[k]


@model_function
def first_moved(m, j, lo, hi):
    """The first of j's tables lo..hi - 1 that moved since the client's load of it (-1: none)."""
    for i in range(lo, hi):
        if moved(m, j, i):
            return i
    return -1


@model_function
def sort_by_table(m, j):
    """Transaction j's tables (and their versions) by table id."""
    n = m.tx[j].ntables
    for a in range(1, n):
        b = a
        while b > 0 and m.mt_table[at(m, j, b - 1)] > m.mt_table[at(m, j, b)]:
            x, y = at(m, j, b - 1), at(m, j, b)
            m.mt_table[x], m.mt_table[y] = m.mt_table[y], m.mt_table[x]
            m.mt_base[x], m.mt_base[y] = m.mt_base[y], m.mt_base[x]
            b -= 1


@model_function
def lost_attempt(m, j, now, i, answer_in):
    """The attempt failed on table i (its requirement, or its row): counted as a table conflict, and recorded as
    that table's failed CAS."""
    tx = m.tx[j]
    tx.attempts += 1
    tx.table_conflicts += 1
    if history.on(m):
        k = at(m, j, i)
        t = m.mt_table[k]
        v = m.versions[t]
        history.cas(m, now, j, t, v, v, m.mt_base[k], False, now + answer_in)


@model_function
def deletes(m, j, n):
    """The server DELETEs n metadata files it wrote, one after another: their time."""
    m.tx[j].deletes += n
    return take_sum(m, Src.DELETE, n)


OWNS = dict(effect_points=(), fields=(), params=(), sources=())
