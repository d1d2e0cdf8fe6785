"""A catalog's operations as round trips to its database (docs/MODEL.md, "Operations as database round trips";
`catalog.round_trips`; design cas_db): a client that queries a SQL database itself makes each catalog operation of
several round trips, each a draw of the database's latency, one of which takes effect. DuckLake on PostgreSQL reads
its base in BEGIN, Parse (PostgreSQL's REPEATABLE READ snapshot: the effect), Describe and COPY; PyIceberg's
SqlCatalog loads a table in BEGIN, SELECT (the effect), ROLLBACK.

An operation of n round trips whose k-th takes effect draws all n latencies in order when it starts: the k-1
before it are waited out before the effect point (at the catalog's fraction f of the k-th), the rest after it
(`tx.rt_after_ms`), before the answer. A commit whose change becomes visible at a later round trip (its COMMIT)
keeps the round trips up to that one apart (`tx.rt_mid_ms`, `rt_visible_ms`, `rt_tail_ms`: design cas_db).
"""
from .draws import take
from .jit import model_function
from .state import PC, Src


@model_function
def _shape(m, pc):
    """(round trips, the one that takes effect) of the read handled at `pc`: the base read, the first attempt's
    refresh, the read after a lost commit, the read after the sleep, the re-read before the commit; any other read
    one round trip."""
    p = m.p
    if pc == PC.BASE:
        return p.rt_base_n, p.rt_base_k
    if pc == PC.REFRESH:
        return p.rt_refresh_n, p.rt_refresh_k
    if pc == PC.CONFLICT_READ:
        return p.rt_conflict_n, p.rt_conflict_k
    if pc == PC.BACKOFF_READ:
        return p.rt_retry_n, p.rt_retry_k
    if pc == PC.REREAD:
        return p.rt_reread_n, p.rt_reread_k
    return 1, 1


@model_function
def start_read(m, j, pc, before):
    """Start a catalog read `before` ms from now as its round trips: the delay to its effect point (its k-th round
    trip's, where `pc` handles it); what follows its own round trip is `tx.rt_after_ms`."""
    n, k = _shape(m, pc)
    pre = 0.0
    own = 0.0
    post = 0.0
    for i in range(1, n + 1):
        x = take(m, Src.READ)
        if i < k:
            pre += x
        elif i == k:
            own = x
        else:
            post += x
    tx = m.tx[j]
    tx.op_latency_ms = own
    tx.rt_after_ms = post
    tx.pc = pc
    return before + pre + m.p.f * own


@model_function
def start_commit(m, j, pc, before):
    """Start the commit `before` ms from now as its round trips: the delay to its effect point (its statement's
    check, where `pc` handles it); after its own round trip, those up to its COMMIT (`rt_mid_ms`), its COMMIT's
    own (`rt_visible_ms`) and those after (`rt_tail_ms`); all of them (`rt_after_ms`) are a loser's (its
    ROLLBACK's). A commit visible at its effect has them all after it (`rt_tail_ms`)."""
    p = m.p
    k = p.rt_commit_k
    vis = p.rt_commit_visible
    pre = 0.0
    own = 0.0
    mid = 0.0
    commit = 0.0
    tail = 0.0
    for i in range(1, p.rt_commit_n + 1):
        x = take(m, Src.CAS)
        if i < k:
            pre += x
        elif i == k:
            own = x
        elif i < vis:
            mid += x
        elif i == vis:
            commit = x
        else:
            tail += x
    tx = m.tx[j]
    tx.op_latency_ms = own
    tx.rt_mid_ms = mid
    tx.rt_visible_ms = commit
    tx.rt_tail_ms = tail
    tx.rt_after_ms = mid + commit + tail
    tx.pc = pc
    return before + pre + p.cf * own


OWNS = dict(effect_points=(), fields=("rt_after_ms", "rt_mid_ms", "rt_visible_ms", "rt_tail_ms"),
            params=("rt_ops", "rt_base_n", "rt_base_k", "rt_refresh_n", "rt_refresh_k", "rt_conflict_n",
                    "rt_conflict_k", "rt_retry_n", "rt_retry_k", "rt_commit_n", "rt_commit_k", "rt_commit_visible",
                    "rt_hold"), sources=())
