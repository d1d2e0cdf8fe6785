"""Per-object mutation limits (docs/MODEL.md, "Per-object mutation limit"): a token bucket per object name.

Every conditional write to one object name (the catalog object; a table's pointer object; the log entry name
that contenders race to create) needs a token from that name's bucket, refilled at `mutation_rate_per_s` up to
`mutation_burst`. A request that finds no token at its effect point is answered 429 after its latency, changes
nothing, and is resent by the storage client after `storage.throttle_retry`; resends are not commit attempts.

Buckets live in three arrays (tokens, time of the last update, the name a slot holds). The catalog object is
slot 0, a table's pointer slot t; a log entry (t, k) takes slot t * RING + k % RING, so a table keeps the
buckets of its RING newest entry names, and an older name is taken as unused (a full bucket): contenders race
for the name after the newest they listed, so a name RING entries behind the newest sees no more writes.
"""
from .jit import model_function
from .layout import PF_BURST, PF_RATE_PER_MS, PI_THROTTLE

RING = 16


@model_function
def on(m):
    return m.pi[PI_THROTTLE] != 0


@model_function
def admit(m, slot, name, now):
    """Take a token of object `name` (kept in bucket `slot`) at time `now`; False: the request is throttled."""
    burst = m.pf[PF_BURST]
    if m.bk_name[slot] != name:        # a name this slot has not held: a fresh, full bucket
        m.bk_name[slot] = name
        m.bk_tokens[slot] = burst
        m.bk_last[slot] = now
    tokens = m.bk_tokens[slot] + m.pf[PF_RATE_PER_MS] * (now - m.bk_last[slot])
    if tokens > burst:
        tokens = burst
    m.bk_last[slot] = now
    if tokens >= 1.0:
        m.bk_tokens[slot] = tokens - 1.0
        return True
    m.bk_tokens[slot] = tokens
    return False
