"""The catalog object (docs/MODEL.md, "Catalog"): a global version `seq` and a version `v[t]` per table.

Only effect points touch it: a read captures (seq, v[t]); a CAS swaps iff seq == expected, and then seq and
v[t] both advance, atomically.
"""
from .jit import model_function

from .layout import ST_SEQ


@model_function
def read_seq(m, t):
    return m.st[ST_SEQ]


@model_function
def read_version(m, t):
    return m.versions[t]


@model_function
def cas(m, t, expected):
    """Conditional replace of the whole catalog: commits table t iff nobody committed since `expected`."""
    if m.st[ST_SEQ] != expected:
        return False
    m.st[ST_SEQ] = expected + 1
    m.versions[t] += 1
    return True
