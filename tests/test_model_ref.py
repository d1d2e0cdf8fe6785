"""The model handed to compiled code by reference (sim.engines.model_ref): compiled code reads and writes the very
arrays and parameters of the `Model` it was handed, and a field it could not read that way is refused by name."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from sim.config import from_dict
from sim.engines.fast import FastEngine, _params_record
from sim.engines.model_ref import ModelRef


@njit(cache=False)
def _touch(m):
    """Reads a parameter, an array's length and a draw; writes a record field and an array element."""
    m.run[0].seq = 7
    m.versions[len(m.versions) - 1] = 11
    return m.p.num_tables, len(m.tx), m.draws[m.draw_at[0]]


def _model():
    return FastEngine(from_dict({"workload": {"num_tables": 3}}), 0).r.m


def test_compiled_code_reads_and_writes_the_models_own_arrays():
    m = _model()
    tables, slots, draw = _touch(ModelRef(m, _params_record(m.p)))
    assert (tables, slots, draw) == (3, len(m.tx), m.draws[m.draw_at[0]])
    assert m.run[0]["seq"] == 7 and m.versions[-1] == 11


def test_two_models_of_one_layout_share_one_type_and_one_compile():
    a, b = _model(), _model()
    ra, rb = ModelRef(a, _params_record(a.p)), ModelRef(b, _params_record(b.p))
    assert ra.numba_type == rb.numba_type and len(ra.numba_type.name) < 40


def test_a_field_compiled_code_cannot_read_is_refused_by_name():
    m = _model()
    strided = m._replace(versions=np.zeros(8, dtype=np.int64)[::2])
    with pytest.raises(ValueError, match=r"Model\.versions"):
        ModelRef(strided, _params_record(m.p))
