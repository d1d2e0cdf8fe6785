"""How a model function is declared: plain Python for the SimPy engine, and compiled into the fast engine's
loop (numba `register_jitable`). The loop compiles without numba's reference counting (`_nrt=False`, it
allocates nothing), so passing the `Model` tuple of arrays to a handler costs no atomic operations.

`handler` marks the few functions called from one place each (the effect-point handlers, and `step`, which
dispatches to them from the loop): they are inlined at numba's IR level, since a call flattens the whole
`Model` tuple (some 20 arrays of 7 words each, and the parameters) into arguments; inlining `step` into the loop made the cheapest events
(a FastAppend's catalog conflict) 1.5-1.9x faster. Small helpers are left to LLVM's inliner (inlining them at IR
level would multiply numba's compile time).
"""
from numba.extending import register_jitable

model_function = register_jitable


def handler(fn):
    # a fresh register_jitable(...) per function: numba pops `inline` from the options it was given, so a
    # shared decorator object would inline only the first function it decorates
    return register_jitable(inline="always")(fn)
