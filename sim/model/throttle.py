"""Per-object mutation limits (docs/MODEL.md, "Per-object mutation limits"): a token bucket per object name.

Every conditional write to one object name (the catalog object; a table's pointer object; the log entry name
that contenders race to create) needs a token from that name's bucket, refilled at `mutation_rate_per_s` up to
`mutation_burst`; a name never written has a full bucket. A request that finds no token at its effect point is
answered 429 after its latency, changes nothing but its bucket (it takes `mutation_refusal_tokens` from it, 0
unless the provider gives them: the bucket goes below zero), and is resent by the storage client after
`storage.throttle_retry`; resends are not commit attempts. A provider may give each client a bucket too
(`client_rate_per_s`: `admit_from`): a writer's, kept in its row of `Model.wr`, or under open-loop arrivals each
transaction's, in its slot.

Buckets (tokens, time of their last update): slot 0 is the catalog object, slot t table t's pointer, and, for
the log protocol, slot t the name table t's log would create next (v[t] + 1). When that name is created (the
c-th commit of the run), its bucket moves to slot num_tables + c and the table's next name starts full; a write
to an older name (a stale writer's resend) finds its bucket by walking the table's entries back from the
newest (`bk_head`, `bk_prev`), so every name keeps its own bucket for the whole run. Version files
(`catalog.version_files`) race for a fresh name per version the same way; their tables' version hints take
slots num_tables + t, and the created names follow them (from 2 num_tables on).
"""
import numpy as np

from .jit import model_function


@model_function
def on(m):
    return m.p.throttle


@model_function
def admit(m, slot, now):
    """Take a token from bucket `slot` at time `now`; False: none there, the request is throttled."""
    return take_token(m, slot, now, m.p.mutation_rate_per_ms, m.p.mutation_burst, m.p.mutation_refusal_tokens)


@model_function
def admit_from(m, slot, j, now):
    """`admit` for a conditional write of the transaction in slot j: with a bucket per client (the provider's
    `client_rate_per_s`), it needs a token of its object's bucket and of its client's (its writer's; under
    open-loop arrivals, its own), and takes one of each; refused, its client takes `client_refusal_tokens`, and
    the object, if it had no token, its `mutation_refusal_tokens`. An object with no bucket of its own (rate 0:
    gcp's measured set without its figures fitted on several writers) admits whatever its client's allows."""
    if m.p.client_rate_per_ms == 0.0:
        return admit(m, slot, now)
    b = m.bk[slot]
    whole = m.p.mutation_rate_per_ms > 0.0           # the object has a bucket of its own (else: each client's only)
    tokens = 1.0
    if whole:
        tokens = level(b.tokens, b.last_ms, now, m.p.mutation_rate_per_ms, m.p.mutation_burst)
        b.last_ms = now
    tx = m.tx[j]
    if tx.writer >= 0:
        w = m.wr[tx.writer]
        client = level(w.client_tokens, w.client_last_ms, now, m.p.client_rate_per_ms, m.p.client_burst)
    else:
        client = level(tx.client_tokens, tx.client_last_ms, now, m.p.client_rate_per_ms, m.p.client_burst)
    ok = tokens >= 1.0 and client >= 1.0
    if ok:
        client -= 1.0
    else:
        client -= m.p.client_refusal_tokens
    if whole:
        b.tokens = tokens - 1.0 if ok else tokens if tokens >= 1.0 else tokens - m.p.mutation_refusal_tokens
    if tx.writer >= 0:
        w = m.wr[tx.writer]
        w.client_tokens = client
        w.client_last_ms = now
    else:
        tx.client_tokens = client
        tx.client_last_ms = now
    return ok


@model_function
def level(tokens, last_ms, now, rate_per_ms, burst):
    """A bucket's tokens at `now`: refilled at `rate_per_ms` since `last_ms`, up to `burst`."""
    tokens = tokens + rate_per_ms * (now - last_ms)
    return burst if tokens > burst else tokens


@model_function
def take_token(m, slot, now, rate_per_ms, burst, refusal_tokens):
    """Take a token from bucket `slot`, refilled at `rate_per_ms` up to `burst`, at time `now` (False: none;
    the refusal takes `refusal_tokens`, so the bucket may go below zero and the next token comes that much
    later)."""
    b = m.bk[slot]
    tokens = level(b.tokens, b.last_ms, now, rate_per_ms, burst)
    b.last_ms = now
    if tokens >= 1.0:
        b.tokens = tokens - 1.0
        return True
    b.tokens = tokens - refusal_tokens
    return False


@model_function
def entry_slot(m, t, name):
    """The bucket of log entry `name` of table t: the next name's (slot t), or an existing entry's."""
    newest = m.versions[t]
    if name > newest:
        return t
    c = m.bk_head[t]
    for _ in range(newest - name):
        c = m.bk_prev[c]
    return _entries_base(m) + c


@model_function
def _entries_base(m):
    """The first created name's slot: the buckets before it are the next names' (and the version hints')."""
    return len(m.bk) - len(m.bk_prev)


@model_function
def hint_slot(m, t):
    """The bucket of table t's version hint (version files)."""
    return len(m.versions) + t


@model_function
def entry_created(m, t):
    """Table t's next log entry was just created (the run.seq-th commit): its bucket moves to that entry's
    slot, and the name after it starts with a full bucket."""
    c = m.run[0].seq - 1
    slot = _entries_base(m) + c
    m.bk[slot].tokens = m.bk[t].tokens
    m.bk[slot].last_ms = m.bk[t].last_ms
    m.bk_prev[c] = m.bk_head[t]
    m.bk_head[t] = c
    m.bk[t].tokens = m.p.mutation_burst
    m.bk[t].last_ms = -np.inf
