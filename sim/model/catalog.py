"""The catalog (docs/MODEL.md, "Catalog"): a version v[t] per table and, with scope
`global`, one catalog object whose version `seq` every commit advances.

Only effect points touch it: a read captures (seq, v[t]); a CAS swaps iff the version it expected is current.
With scope `table` each table's pointer (or catalog row) is its own object: a read sees v[t], a commit to t is
CAS_t(expected v[t]), and commits to other tables never make it fail. `run.seq` counts every commit either
way (under scope `table` it is no one's CAS version).
"""
from .draws import take
from . import growth, history, operations
from .jit import model_function
from .state import Src


@model_function
def read_seq(m, t):
    """The version a CAS on t's object must expect: the catalog's seq, or v[t] under scope table."""
    if m.p.scope_table:
        return m.versions[t]
    return m.run[0].seq


@model_function
def read_version(m, t):
    return m.versions[t]


@model_function
def cas(m, j, t, expected, now):
    """Transaction j commits table t now iff its object still has version `expected` (the whole catalog's, or t's
    pointer's); its operation goes into t's ring (`sim.model.operations`), its snapshot into t's metadata
    (`sim.model.growth`)."""
    if read_seq(m, t) != expected:
        return False
    m.run[0].seq += 1
    m.versions[t] += 1
    tx = m.tx[j]
    tx.landings += 1                 # (twice: a resent commit that landed again, `sim.model.faults`)
    if tx.landings == 1:
        tx.landed_v = m.versions[t]
    operations.landed(m, j, t)
    growth.landed(m, j, t, now)
    if m.p.tables_max > 1:
        _landed_too(m, j)
    return True


@model_function
def _landed_too(m, j):
    """A commit over several tables (DuckLake's one database transaction, `workload.multi_table`) lands on its
    other tables too, in the same snapshot."""
    K = m.p.tables_max
    for i in range(1, m.tx[j].ntables):
        m.versions[m.mt_table[j * K + i]] += 1


@model_function
def record_landed_too(m, j, now, answer):
    """The history's `landed` rows of a commit over several tables, after its CAS's row."""
    K = m.p.tables_max
    for i in range(1, m.tx[j].ntables):
        t = m.mt_table[j * K + i]
        history.landed_too(m, now, j, t, m.run[0].seq, m.versions[t], -1, answer)


@model_function
def object_of(m, t):
    """The object a conditional write to commit t replaces: the one catalog object (0), or t's pointer."""
    if m.p.scope_table:
        return t
    return 0


@model_function
def local_load_ms(m, t):
    """A server whose steps are local (SeaweedFS's) loads table t: its own time, growing with the table's version
    (the whole metadata is in the entry it reads)."""
    return take(m, Src.SRV_LOAD) + m.p.srv_load_per_version_ms * m.versions[t]


@model_function
def read_answer_ms(m, j, L):
    """From a client read's effect point to its answer: the rest of the read (latency L; on database round trips,
    those after it too) and, where a REST server answers it with a load that GETs metadata.json
    (`catalog.server.metadata_get`), that GET; where the server's steps are local (`catalog.server.load_latency`),
    its own time loading the table; where the client reads metadata.json itself after the catalog's row (PyIceberg's
    SqlCatalog), that GET."""
    pending = m.p.g * L
    if m.p.rt_ops:                   # the operation's round trips after its effect's (`sim.model.round_trips`)
        pending += m.tx[j].rt_after_ms
    if m.p.server and m.p.server_get:
        m.tx[j].gets += 1
        pending += growth.get_metadata_ms(m, m.tx[j].table)
    if m.p.server_local:
        pending += local_load_ms(m, m.tx[j].table)
    if m.p.load_get:
        m.tx[j].gets += 1
        pending += growth.get_metadata_ms(m, m.tx[j].table)
    return pending
