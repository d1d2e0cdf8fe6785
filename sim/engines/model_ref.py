"""How the fast engine hands the `Model` to compiled code: by reference, one pointer.

numba passes a tuple to a compiled function field by field, and an array as seven machine words (meminfo, parent,
size, item size, data, shape, stride), so a `Model` of some forty arrays was some 270 words pushed on the stack at
every call of a model function that was not inlined: measured with perf on the heaviest 4c run (s3x, one table, FA
0.5, 20 ms), 61 % of the loop's samples and 75 % of the default design's `step` were those pushes
(benchmarks/README.md, "Issue 42"). A `ModelRef` is a table of (data address, length, item size) per field; compiled
code receives its address and builds each array from it where it reads `m.tx`, `m.draws`, ... (three loads the
optimizer may hoist: the table does not change during a call). The model's own code is unchanged: it reads
`m.field` either way, and the SimPy engine hands it the `Model` itself.

The referenced arrays must stay alive and unmoved during the call: a `ModelRef` holds them, and the engine builds a
new one for each call of its loop (the arrays are replaced only between calls, when they grow).
"""
from __future__ import annotations

import hashlib

import numpy as np
from llvmlite import ir
from numba import typeof
from numba.core import types
from numba.core.extending import (NativeValue, infer_getattr, lower_getattr_generic, models, register_model,
                                  typeof_impl, unbox)
from numba.core.typing.templates import AttributeTemplate
from numba.np.arrayobj import make_array, populate_array

_WORDS = 3   # per field: data address, length, item size
_I64 = ir.IntType(64)


class ModelRefType(types.Type):
    """The numba type of a `ModelRef`: its fields' names and types (an array's, or the parameters' record)."""

    def __init__(self, fields: tuple):
        self.fields = fields
        self.index = {name: i for i, (name, _) in enumerate(fields)}
        digest = hashlib.sha256(repr(fields).encode()).hexdigest()[:16]
        super().__init__(name=f"ModelRef_{digest}")   # short: it is in every compiled function's symbol

    @property
    def key(self):
        return self.fields


# the numba type of each layout seen in this process: numba's typeof of a record dtype takes a third of a
# millisecond, and an engine hands its model over some forty times a run (its arrays replaced as they grow, their
# layout unchanged), and every run of a sweep's worker has the same layouts (a memo: it holds nothing of a run)
_TYPES: dict = {}


class ModelRef:
    """A `Model` (its parameters as a one-row record array `params`) as compiled code receives it."""

    __slots__ = ("model", "params", "table", "address", "numba_type")

    def __init__(self, model, params: np.ndarray):
        arrays = [params] + [getattr(model, f) for f in model._fields[1:]]
        for name, a in zip(model._fields, arrays):
            if a.ndim != 1 or not a.flags.c_contiguous:
                raise ValueError(f"Model.{name}: a compiled model reads one-dimensional contiguous arrays")
        self.model, self.params = model, params
        self.table = np.array([(a.ctypes.data, len(a), a.itemsize) for a in arrays], dtype=np.int64).ravel()
        self.address = self.table.ctypes.data
        layout = tuple((name, a.dtype, a.flags.writeable, a.flags.aligned) for name, a in zip(model._fields, arrays))
        if layout not in _TYPES:
            kinds = [typeof(params[0])] + [typeof(a) for a in arrays[1:]]
            _TYPES[layout] = ModelRefType(tuple(zip(model._fields, kinds)))
        self.numba_type = _TYPES[layout]


@typeof_impl.register(ModelRef)
def _typeof_ref(val, c):
    return val.numba_type


@register_model(ModelRefType)
class _RefModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _I64.as_pointer())


@unbox(ModelRefType)
def _unbox_ref(typ, obj, c):
    address = c.pyapi.object_getattr_string(obj, "address")
    ptr = c.pyapi.long_as_voidptr(address)
    c.pyapi.decref(address)
    return NativeValue(c.builder.bitcast(ptr, _I64.as_pointer()))


@infer_getattr
class _RefAttributes(AttributeTemplate):
    key = ModelRefType

    def generic_resolve(self, typ, attr):
        i = typ.index.get(attr)
        return None if i is None else typ.fields[i][1]


def _word(builder, table, k):
    """The table's k-th word, loaded as invariant (it does not change while compiled code runs)."""
    load = builder.load(builder.gep(table, [ir.Constant(_I64, k)]))
    load.set_metadata("invariant.load", builder.module.add_metadata([]))
    return load


@lower_getattr_generic(ModelRefType)
def _field(context, builder, typ, table, attr):
    i = typ.index[attr]
    kind = typ.fields[i][1]
    data = _word(builder, table, _WORDS * i)
    if isinstance(kind, types.Record):               # the parameters: a record is a pointer to its bytes
        return builder.inttoptr(data, context.get_value_type(kind))
    ary = make_array(kind)(context, builder)
    itemsize = _word(builder, table, _WORDS * i + 2)
    populate_array(ary, data=builder.inttoptr(data, ary.data.type), shape=[_word(builder, table, _WORDS * i + 1)],
                   strides=[itemsize], itemsize=itemsize, meminfo=None)
    return ary._getvalue()
