"""A compiled engine: the model of `sim.engine` (the SimPy reference), bit for bit, in a numba kernel.

Why it gives the same numbers. Every random source is its own stream (`sim.rng`), and the reference hands out
each source's draws in stream order (`sim.latency.Sampler`). So the wrapper draws every source up front in
Python, with the same distribution objects and numpy expressions the reference uses, and the kernel consumes
them with one cursor per source, in the order the reference does. Constant distributions consume no draws,
as in the reference. When a source runs short, the kernel stops between two events, the wrapper draws more
from the same generator (numpy's draws are concatenation-consistent for these float sources; the table
source, drawn with `integers`, is drawn up front in the reference's batches of 1024) and the kernel resumes
where it stopped. Everything Python computes with `**` (backoff delays, validation-conflict thresholds) is
computed in Python and passed as tables, so no libm difference can creep in.

Why it processes events in the same order. SimPy pops events by (time, priority, eid), eid being a counter
bumped at every schedule; a new process starts with an URGENT Initialize at the current time, a timeout is
NORMAL. The kernel keeps a binary heap on the same key and schedules in the same order as the reference
(the reference's process-termination events are no-ops and are left out: that keeps the relative order of
all other eids). Every event time is computed with the same float operations in the same order
(`now + (pending + f * L)` and so on; no fast-math, so nothing is fused or reassociated).

The kernel's cost grows with catalog operations, like the reference's: a prepare that validates n snapshots
is one event whatever n (its n - 1 GET draws are summed, or spread over `io.max_parallel` lanes, in a loop).

Arrivals are known before the run: the gaps come from one stream and end the arrivals at the first
`now + gap >= duration_ms` (a bursty source hands out its pre-generated sequence, then +inf), so the wrapper
counts the transactions first and draws their table (from `table_dist`, which aims bursts), operation
and runtime up front. Per-transaction state lives in two arrays (ints, floats) with a program counter that
says where the transaction's process is suspended; the history, when asked for, goes to column-major buffers
with small int codes for kinds, outcomes and reasons, turned into strings when the frame is built.

`tests/test_fast_engine.py` holds records and histories equal to the reference's, exactly, over configs that
cover every branch and over generated ones.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit

from .config import Config
from .engine import HISTORY_COLUMNS, RECORD_COLUMNS, _Uniform
from .latency import BATCH, LogNormal, latency_model
from .retry import exponential_delay_ms
from .rng import run_streams
from .workload import IsValidatedOverwrite, inter_arrival_dist, runtime_dist, table_dist

# ---------------------------------------------------------------------------------------------- codes
# transaction program counters: where its process is suspended
PC_INIT, PC_BASE, PC_REFRESH1, PC_CAS, PC_FAILREAD, PC_BACKOFFREAD, PC_DONE = 0, 1, 2, 3, 4, 5, 6
# history kinds, outcomes, reasons
KINDS = ("begin", "read", "prepare", "cas", "end", "final")
K_BEGIN, K_READ, K_PREPARE, K_CAS, K_END, K_FINAL = map(np.int64, range(6))
OUTCOMES = ("", "committed", "aborted", "unfinished")
O_NONE, O_COMMITTED, O_ABORTED, O_UNFINISHED = map(np.int64, range(4))
REASONS = ("", "retries_exhausted", "validation_failed", "unfinished")
R_NONE, R_EXHAUSTED, R_VALIDATION, R_UNFINISHED = map(np.int64, range(4))
# retry policy kinds
P_IMMEDIATE, P_FIXED, P_EXPONENTIAL = 0, 1, 2
# heap "who": >= 0 a transaction; else:
W_ARRIVALS, W_WATCHDOG, W_STOP = np.int64(-1), np.int64(-2), np.int64(-3)
URGENT, NORMAL = 0, 1
# numpy ints, not Python ints: numba types a Python int constant passed to a helper as a literal and compiles
# one specialization of the helper per value
_NA, _FALSE, _TRUE = np.int64(-1), np.int64(0), np.int64(1)
_PRIO_SHIFT = np.int64(1) << np.int64(62)   # heap key = priority * 2^62 + eid

# per-transaction int columns
TI_TABLE, TI_ISVO, TI_INWIN, TI_PC, TI_SEQ, TI_V, TI_PREPARED, TI_VALIDATED, TI_OUTCOME, TI_REASON, \
    TI_ATTEMPTS, TI_CATC, TI_TABC, TI_MLREAD, TI_CREADS, TI_GETS, TI_PUTS = range(17)
N_TI = 17
# per-transaction float columns
TF_ARRIVAL, TF_RUNTIME, TF_RTEND, TF_END, TF_L, TF_BACKOFF = range(6)
N_TF = 6
# history int columns (time and answer are the two float columns)
HI_KIND, HI_TXN, HI_TABLE, HI_SEQ, HI_VERSION, HI_EXPECTED, HI_OK, HI_BASE, HI_VFROM, HI_VTO, HI_OUTCOME, \
    HI_REASON, HI_ATTEMPTS = range(13)
N_HI = 13

# random sources, in the kernel's cursor array
S_READ, S_CAS, S_GET, S_PUT_ML, S_PUT_TM, S_BACKOFF, S_CONFLICT, S_GAP = range(8)
N_SRC = 8
_SRC_STREAM = ("catalog_read", "catalog_cas", "get", "put_manifest_list", "put_table_metadata", "backoff",
               "validation_conflict", "arrival")

# integer state (kept between kernel calls)
ST_EID, ST_HEAP, ST_SEQ, ST_OPEN, ST_ARR_DONE, ST_STOPPED, ST_ARR_PC, ST_NEXT_TXN, ST_HIST_N, ST_NEED, \
    ST_NEED_GET, ST_STARTED, ST_DONE = range(13)
N_ST = 13
# float state
SF_NOW, SF_END = 0, 1
# kernel parameters
PF_F, PF_G, PF_DURATION, PF_LO, PF_HI, PF_WATCHDOG, PF_JIT_CAT, PF_JIT_TAB = range(8)
PI_INLINED, PI_MAX_PARALLEL, PI_MAX_ATTEMPTS, PI_REFRESH_FIRST, PI_READ_MD, PI_HIST, PI_POL_CAT, PI_POL_TAB, \
    PI_CONFLICT = range(9)

STATUS_DONE, STATUS_NEED, STATUS_EMPTY = 0, 1, 3
HIST_ROWS_PER_EVENT = 4   # an event writes at most 3 history rows (read, prepare, end)
CHUNK = 1 << 20           # draws per refill of a source, at most (beyond what one event needs)
HIST_CHUNK = 1 << 20      # history rows per buffer


# ---------------------------------------------------------------------------------------------- kernel
@njit(cache=True)
def _push(h_t, h_k, h_w, size, t, key, who):
    """Binary min-heap on (time, key): key = priority * 2^62 + eid, so the order is SimPy's."""
    i = size
    while i > 0:
        p = (i - 1) >> 1
        pt = h_t[p]
        if pt < t or (pt == t and h_k[p] < key):
            break
        h_t[i] = pt
        h_k[i] = h_k[p]
        h_w[i] = h_w[p]
        i = p
    h_t[i] = t
    h_k[i] = key
    h_w[i] = who
    return size + 1


@njit(cache=True)
def _pop_fix(h_t, h_k, h_w, size):
    """Remove the root (already read by the caller); returns the new size."""
    size -= 1
    if size == 0:
        return 0
    t = h_t[size]
    key = h_k[size]
    who = h_w[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        r = c + 1
        if r < size and (h_t[r] < h_t[c] or (h_t[r] == h_t[c] and h_k[r] < h_k[c])):
            c = r
        if h_t[c] < t or (h_t[c] == t and h_k[c] < key):
            h_t[i] = h_t[c]
            h_k[i] = h_k[c]
            h_w[i] = h_w[c]
            i = c
        else:
            break
    h_t[i] = t
    h_k[i] = key
    h_w[i] = who
    return size


@njit(cache=True)
def _hist(H_i, H_f, n, kind, time, txn, table, seq, version, expected, ok, base, vfrom, vto, answer, outcome,
          reason, attempts):
    H_i[HI_KIND, n] = kind
    H_i[HI_TXN, n] = txn
    H_i[HI_TABLE, n] = table
    H_i[HI_SEQ, n] = seq
    H_i[HI_VERSION, n] = version
    H_i[HI_EXPECTED, n] = expected
    H_i[HI_OK, n] = ok
    H_i[HI_BASE, n] = base
    H_i[HI_VFROM, n] = vfrom
    H_i[HI_VTO, n] = vto
    H_i[HI_OUTCOME, n] = outcome
    H_i[HI_REASON, n] = reason
    H_i[HI_ATTEMPTS, n] = attempts
    H_f[0, n] = time
    H_f[1, n] = answer
    return n + 1


@njit(cache=True)
def _parallel(gt, c0, s, n, k, lanes):
    """Wall time of the n GETs gt[c0], gt[c0 + s], ... (s = 0: a constant) on k lanes, as
    `Engine._parallel_gets` computes it."""
    if k == 1:
        tot = 0.0
        for i in range(n):
            tot += gt[c0 + s * i]
        return tot
    if k >= n:
        m = gt[c0]
        for i in range(1, n):
            if gt[c0 + s * i] > m:
                m = gt[c0 + s * i]
        return m
    for i in range(k):
        lanes[i] = gt[c0 + s * i]
    for i in range(k, n):
        # heapreplace(lanes, lanes[0] + d): the smallest lane takes the next GET; which of equal lanes
        # does is irrelevant to the multiset of lane ends
        b = 0
        for a in range(1, k):
            if lanes[a] < lanes[b]:
                b = a
        lanes[b] = lanes[b] + gt[c0 + s * i]
    m = lanes[0]
    for a in range(1, k):
        if lanes[a] > m:
            m = lanes[a]
    return m


@njit(cache=True, nogil=True)
def _kernel(pf, pi, st_i, st_f, cur, step, rd, cs, gt, pm, pt, bo, cu, gaps, thr, bo_cat, bo_tab,
            tables, isvo, runtimes, tx_i, tx_f, versions, h_t, h_k, h_w, H_i, H_f, lanes):
    f = pf[PF_F]
    g = pf[PF_G]
    duration = pf[PF_DURATION]
    lo = pf[PF_LO]
    hi = pf[PF_HI]
    jit_cat = pf[PF_JIT_CAT]
    jit_tab = pf[PF_JIT_TAB]
    inlined = pi[PI_INLINED] != 0
    max_parallel = pi[PI_MAX_PARALLEL]
    max_attempts = pi[PI_MAX_ATTEMPTS]
    refresh_first = pi[PI_REFRESH_FIRST] != 0
    read_md = pi[PI_READ_MD] != 0
    hist = pi[PI_HIST] != 0
    pol_cat = pi[PI_POL_CAT]
    pol_tab = pi[PI_POL_TAB]
    conflict = pi[PI_CONFLICT] != 0

    eid = st_i[ST_EID]
    hsize = st_i[ST_HEAP]
    cat_seq = st_i[ST_SEQ]
    open_in_window = st_i[ST_OPEN]
    arrivals_done = st_i[ST_ARR_DONE] != 0
    stopped = st_i[ST_STOPPED] != 0
    arr_pc = st_i[ST_ARR_PC]
    next_txn = st_i[ST_NEXT_TXN]
    hn = st_i[ST_HIST_N]
    now = st_f[SF_NOW]

    c_rd = cur[S_READ]
    c_cs = cur[S_CAS]
    c_gt = cur[S_GET]
    c_pm = cur[S_PUT_ML]
    c_pt = cur[S_PUT_TM]
    c_bo = cur[S_BACKOFF]
    c_cu = cur[S_CONFLICT]
    c_gap = cur[S_GAP]
    s_rd = step[S_READ]
    s_cs = step[S_CAS]
    s_gt = step[S_GET]
    s_pm = step[S_PUT_ML]
    s_pt = step[S_PUT_TM]
    s_gap = step[S_GAP]

    if st_i[ST_STARTED] == 0:
        st_i[ST_STARTED] = 1
        # env.process(arrivals): Initialize, URGENT at 0; then the watchdog timeout
        hsize = _push(h_t, h_k, h_w, hsize, 0.0, URGENT * _PRIO_SHIFT + eid, W_ARRIVALS)
        eid += 1
        hsize = _push(h_t, h_k, h_w, hsize, pf[PF_WATCHDOG], NORMAL * _PRIO_SHIFT + eid, W_WATCHDOG)
        eid += 1

    status = STATUS_DONE
    while True:
        # ------------------------------------------------------------- enough draws for one more event?
        need = 0
        if s_rd != 0 and c_rd + 1 > rd.shape[0]:
            need |= 1 << S_READ
        if s_cs != 0 and c_cs + 1 > cs.shape[0]:
            need |= 1 << S_CAS
        need_get = cat_seq + 4
        if s_gt != 0 and c_gt + need_get > gt.shape[0]:
            need |= 1 << S_GET
        if s_pm != 0 and c_pm + 1 > pm.shape[0]:
            need |= 1 << S_PUT_ML
        if s_pt != 0 and c_pt + 1 > pt.shape[0]:
            need |= 1 << S_PUT_TM
        if c_bo + 1 > bo.shape[0]:
            need |= 1 << S_BACKOFF
        if c_cu + 1 > cu.shape[0]:
            need |= 1 << S_CONFLICT
        if hist and hn + HIST_ROWS_PER_EVENT > H_i.shape[1]:
            need |= 1 << N_SRC
        if need != 0:
            st_i[ST_NEED] = need
            st_i[ST_NEED_GET] = need_get
            status = STATUS_NEED
            break

        # ------------------------------------------------------------- next event
        if hsize == 0:   # cannot happen (the watchdog is always there); SimPy would raise
            status = STATUS_EMPTY
            break
        now = h_t[0]
        who = h_w[0]
        hsize = _pop_fix(h_t, h_k, h_w, hsize)

        if who >= 0:
            j = who
            t = tx_i[j, TI_TABLE]
            pc = tx_i[j, TI_PC]
            do_prep = False
            go_cas = False
            ended = False
            outcome = O_NONE
            reason = R_NONE
            end_ms = 0.0
            pending = 0.0
            v = 0
            if pc == PC_INIT:
                L = rd[c_rd]
                c_rd += s_rd
                tx_f[j, TF_L] = L
                hsize = _push(h_t, h_k, h_w, hsize, now + f * L, NORMAL * _PRIO_SHIFT + eid, j)
                eid += 1
                tx_i[j, TI_PC] = PC_BASE
            elif pc == PC_BASE:
                seq = cat_seq
                v = versions[t]
                tx_i[j, TI_SEQ] = seq
                tx_i[j, TI_V] = v
                tx_i[j, TI_CREADS] = 1
                L = tx_f[j, TF_L]
                if hist:
                    hn = _hist(H_i, H_f, hn, K_READ, now, j, t, seq, v, _NA, _FALSE, _NA, _NA, _NA, now + g * L,
                               O_NONE, R_NONE, _NA)
                tx_i[j, TI_VALIDATED] = v
                runtime = tx_f[j, TF_RUNTIME]
                tx_f[j, TF_RTEND] = now + g * L + runtime
                pending = g * L + runtime
                if refresh_first:
                    L = rd[c_rd]
                    c_rd += s_rd
                    tx_f[j, TF_L] = L
                    hsize = _push(h_t, h_k, h_w, hsize, now + (pending + f * L), NORMAL * _PRIO_SHIFT + eid, j)
                    eid += 1
                    tx_i[j, TI_PC] = PC_REFRESH1
                else:
                    do_prep = True
                    go_cas = True
            elif pc == PC_REFRESH1 or pc == PC_BACKOFFREAD:
                seq = cat_seq
                v = versions[t]
                tx_i[j, TI_SEQ] = seq
                tx_i[j, TI_V] = v
                tx_i[j, TI_CREADS] += 1
                L = tx_f[j, TF_L]
                if hist:
                    hn = _hist(H_i, H_f, hn, K_READ, now, j, t, seq, v, _NA, _FALSE, _NA, _NA, _NA, now + g * L,
                               O_NONE, R_NONE, _NA)
                pending = g * L
                if pc == PC_REFRESH1:
                    do_prep = True
                else:
                    do_prep = v != tx_i[j, TI_PREPARED]
                go_cas = True
            elif pc == PC_CAS:
                attempts = tx_i[j, TI_ATTEMPTS] + 1
                tx_i[j, TI_ATTEMPTS] = attempts
                expected = tx_i[j, TI_SEQ]
                ok = cat_seq == expected
                if ok:
                    cat_seq = expected + 1
                    versions[t] += 1
                L = tx_f[j, TF_L]
                if hist:
                    hn = _hist(H_i, H_f, hn, K_CAS, now, j, t, cat_seq, versions[t], expected,
                               _TRUE if ok else _FALSE, _NA, _NA, _NA, now + g * L, O_NONE, R_NONE, _NA)
                if ok:
                    ended = True
                    outcome = O_COMMITTED
                    reason = R_NONE
                    end_ms = now + g * L
                elif attempts >= max_attempts:
                    ended = True
                    outcome = O_ABORTED
                    reason = R_EXHAUSTED
                    end_ms = now + g * L
                else:
                    L2 = rd[c_rd]
                    c_rd += s_rd
                    tx_f[j, TF_L] = L2
                    hsize = _push(h_t, h_k, h_w, hsize, now + (g * L + f * L2), NORMAL * _PRIO_SHIFT + eid, j)
                    eid += 1
                    tx_i[j, TI_PC] = PC_FAILREAD
            else:  # PC_FAILREAD: the refresh after a failed CAS tells the conflict class
                seq = cat_seq
                v = versions[t]
                tx_i[j, TI_SEQ] = seq
                tx_i[j, TI_V] = v
                tx_i[j, TI_CREADS] += 1
                L2 = tx_f[j, TF_L]
                if hist:
                    hn = _hist(H_i, H_f, hn, K_READ, now, j, t, seq, v, _NA, _FALSE, _NA, _NA, _NA, now + g * L2,
                               O_NONE, R_NONE, _NA)
                pending = g * L2
                if v != tx_i[j, TI_PREPARED]:
                    k = tx_i[j, TI_TABC] + 1
                    tx_i[j, TI_TABC] = k
                    pol = pol_tab
                    delay = bo_tab[k]
                    jit = jit_tab
                else:
                    k = tx_i[j, TI_CATC] + 1
                    tx_i[j, TI_CATC] = k
                    pol = pol_cat
                    delay = bo_cat[k]
                    jit = jit_cat
                if pol == P_EXPONENTIAL:
                    if jit != 0.0:
                        delay *= 1.0 + jit * bo[c_bo]
                        c_bo += 1
                if read_md:
                    pending += gt[c_gt]
                    c_gt += s_gt
                    tx_i[j, TI_GETS] += 1
                if delay > 0.0:
                    tx_f[j, TF_BACKOFF] += delay
                    L2 = rd[c_rd]
                    c_rd += s_rd
                    tx_f[j, TF_L] = L2
                    hsize = _push(h_t, h_k, h_w, hsize, now + (pending + delay + f * L2),
                                  NORMAL * _PRIO_SHIFT + eid, j)
                    eid += 1
                    tx_i[j, TI_PC] = PC_BACKOFFREAD
                else:
                    do_prep = v != tx_i[j, TI_PREPARED]
                    go_cas = True

            if do_prep:   # Engine._prepare(x, v)
                tx_i[j, TI_PREPARED] = v
                cost = 0.0
                if not inlined:
                    cost += gt[c_gt]
                    c_gt += s_gt
                    tx_i[j, TI_GETS] += 1
                cost += gt[c_gt]
                c_gt += s_gt
                tx_i[j, TI_GETS] += 1
                tx_i[j, TI_MLREAD] += 1
                vfrom = -1
                vto = -1
                aborted = False
                if tx_i[j, TI_ISVO] != 0:
                    vfrom = tx_i[j, TI_VALIDATED]
                    vto = v
                    n = v - vfrom
                    if n > 1:
                        cost += _parallel(gt, c_gt, s_gt, n - 1, max_parallel, lanes)
                        c_gt += s_gt * (n - 1)
                        tx_i[j, TI_GETS] += n - 1
                        tx_i[j, TI_MLREAD] += n - 1
                    tx_i[j, TI_VALIDATED] = v
                    if conflict and n > 0:
                        u = cu[c_cu]
                        c_cu += 1
                        if u < thr[n]:
                            aborted = True
                if not aborted:
                    cost += pm[c_pm]
                    c_pm += s_pm
                    tx_i[j, TI_PUTS] += 1
                    if not inlined:
                        cost += pt[c_pt]
                        c_pt += s_pt
                        tx_i[j, TI_PUTS] += 1
                if hist:
                    hn = _hist(H_i, H_f, hn, K_PREPARE, now, j, t, _NA, _NA, _NA, _FALSE, v, vfrom, vto, np.nan,
                               O_NONE, R_NONE, _NA)
                if aborted:
                    ended = True
                    outcome = O_ABORTED
                    reason = R_VALIDATION
                    end_ms = now + pending - (-cost)
                    go_cas = False
                else:
                    pending += cost

            if go_cas:
                L = cs[c_cs]
                c_cs += s_cs
                tx_f[j, TF_L] = L
                hsize = _push(h_t, h_k, h_w, hsize, now + (pending + f * L), NORMAL * _PRIO_SHIFT + eid, j)
                eid += 1
                tx_i[j, TI_PC] = PC_CAS

            if ended:   # Engine._end
                tx_i[j, TI_PC] = PC_DONE
                tx_i[j, TI_OUTCOME] = outcome
                tx_i[j, TI_REASON] = reason
                tx_f[j, TF_END] = end_ms
                if hist:
                    hn = _hist(H_i, H_f, hn, K_END, now, j, t, _NA, _NA, _NA, _FALSE, _NA, _NA, _NA, end_ms,
                               outcome, reason, tx_i[j, TI_ATTEMPTS])
                if tx_i[j, TI_INWIN] != 0:
                    open_in_window -= 1
                    if open_in_window == 0 and arrivals_done and not stopped:
                        stopped = True
                        hsize = _push(h_t, h_k, h_w, hsize, now, NORMAL * _PRIO_SHIFT + eid, W_STOP)
                        eid += 1

        elif who == W_ARRIVALS:
            if arr_pc == 2:   # after `yield env.timeout(duration - env.now)`
                arrivals_done = True
                if open_in_window == 0 and not stopped:
                    stopped = True
                    hsize = _push(h_t, h_k, h_w, hsize, now, NORMAL * _PRIO_SHIFT + eid, W_STOP)
                    eid += 1
            else:
                if arr_pc == 1:   # an arrival
                    j = next_txn
                    next_txn += 1
                    inwin = lo <= now < hi
                    t = tables[j]
                    tx_i[j, TI_TABLE] = t
                    tx_i[j, TI_ISVO] = isvo[j]
                    tx_i[j, TI_INWIN] = 1 if inwin else 0
                    tx_i[j, TI_PC] = PC_INIT
                    tx_f[j, TF_ARRIVAL] = now
                    tx_f[j, TF_RUNTIME] = runtimes[j]
                    if inwin:
                        open_in_window += 1
                    if hist:
                        hn = _hist(H_i, H_f, hn, K_BEGIN, now, j, t, _NA, _NA, _NA, _FALSE, _NA, _NA, _NA, np.nan,
                                   O_NONE, R_NONE, max_attempts)
                    hsize = _push(h_t, h_k, h_w, hsize, now, URGENT * _PRIO_SHIFT + eid, j)
                    eid += 1
                gap = gaps[c_gap]
                c_gap += s_gap
                if now + gap >= duration:
                    hsize = _push(h_t, h_k, h_w, hsize, now + (duration - now), NORMAL * _PRIO_SHIFT + eid,
                                  W_ARRIVALS)
                    arr_pc = 2
                else:
                    hsize = _push(h_t, h_k, h_w, hsize, now + gap, NORMAL * _PRIO_SHIFT + eid, W_ARRIVALS)
                    arr_pc = 1
                eid += 1
        elif who == W_WATCHDOG:
            if not stopped:
                stopped = True
                hsize = _push(h_t, h_k, h_w, hsize, now, NORMAL * _PRIO_SHIFT + eid, W_STOP)
                eid += 1
        else:   # the stop event: env.run(until=stop) returns
            st_i[ST_DONE] = 1
            st_f[SF_END] = now
            status = STATUS_DONE
            break

    st_i[ST_EID] = eid
    st_i[ST_HEAP] = hsize
    st_i[ST_SEQ] = cat_seq
    st_i[ST_OPEN] = open_in_window
    st_i[ST_ARR_DONE] = 1 if arrivals_done else 0
    st_i[ST_STOPPED] = 1 if stopped else 0
    st_i[ST_ARR_PC] = arr_pc
    st_i[ST_NEXT_TXN] = next_txn
    st_i[ST_HIST_N] = hn
    st_f[SF_NOW] = now
    cur[S_READ] = c_rd
    cur[S_CAS] = c_cs
    cur[S_GET] = c_gt
    cur[S_PUT_ML] = c_pm
    cur[S_PUT_TM] = c_pt
    cur[S_BACKOFF] = c_bo
    cur[S_CONFLICT] = c_cu
    cur[S_GAP] = c_gap
    return status


@njit(cache=True)
def _count_arrivals(gaps, step, duration):
    """Arrivals the reference makes from these gaps (`now + gap >= duration` ends them), or -1 if the gaps
    run out first."""
    now = 0.0
    c = 0
    n = 0
    while True:
        if step != 0 and c >= gaps.shape[0]:
            return -1
        gap = gaps[c]
        c += step
        if now + gap >= duration:
            return n
        now = now + gap
        n += 1


# ---------------------------------------------------------------------------------------------- wrapper
class _Source:
    """One random source: its distribution, its generator and a window of its draws (or its constant).

    The kernel consumes `values` from a cursor; when it runs short, `refill` keeps the unconsumed tail, appends
    fresh draws and rewinds the cursor, so memory stays bounded whatever a run consumes."""

    def __init__(self, dist, rng, n0=0):
        self.dist = dist
        self.rng = rng
        self.const = bool(getattr(dist, "is_constant", False))
        self.consumed = 0   # draws before values[0]
        if self.const:   # Sampler serves dist.draw(rng, 1)[0] and never touches the rng again
            self.values = np.ascontiguousarray(dist.draw(rng, 1), dtype=np.float64)
        else:
            self.values = self._draw(n0)

    @property
    def step(self) -> int:
        return 0 if self.const else 1

    def _draw(self, n: int) -> np.ndarray:
        n = max(BATCH, -(-n // BATCH) * BATCH)
        return np.ascontiguousarray(self.dist.draw(self.rng, n), dtype=np.float64)

    def refill(self, cursor: int, need: int) -> np.ndarray:
        """Values from `cursor` on, with at least `need` of them; the caller rewinds its cursor to 0."""
        if self.const:
            return self.values
        tail = self.values[cursor:]
        fresh = self._draw(max(need - len(tail), min(CHUNK, max(len(self.values), BATCH))))
        self.consumed += cursor
        self.values = np.concatenate([tail, fresh])
        return self.values


def _string_dtype():
    """The dtype pandas gives a column of Python strings in `DataFrame.from_records` (what the reference gets)."""
    return pd.DataFrame.from_records([("x",)], columns=["s"])["s"].dtype


def _strings(labels: tuple, codes: np.ndarray, dtype):
    """labels[codes] as a pandas array of `dtype`; through pyarrow when the dtype is arrow-backed (much faster
    than validating millions of Python strings)."""
    if getattr(dtype, "storage", None) == "pyarrow" and hasattr(dtype, "__from_arrow__"):
        import pyarrow as pa
        return dtype.__from_arrow__(pa.array(list(labels), type=pa.large_string()).take(pa.array(codes)))
    return pd.array(np.array(labels, dtype=object)[codes], dtype=dtype)


def _backoff_table(policy, max_attempts: int) -> tuple[int, float, np.ndarray]:
    """(kind, jitter, delay before jitter for k = 0..max_attempts) of one class, computed as `sim.retry.Backoff`
    does (the same Python function)."""
    tab = np.zeros(max_attempts + 2, dtype=np.float64)
    if policy.policy == "immediate":
        return P_IMMEDIATE, 0.0, tab
    if policy.policy == "fixed":
        tab[:] = policy.delay_ms or 0.0
        return P_FIXED, 0.0, tab
    for k in range(1, len(tab)):
        tab[k] = exponential_delay_ms(policy.base_ms, policy.factor, policy.max_ms, k)
    return P_EXPONENTIAL, float(policy.jitter or 0.0), tab


class FastEngine:
    """Same interface and same results as `sim.engine.Engine`, compiled."""

    def __init__(self, cfg: Config, replication: int = 0, record_history: bool = False):
        self.cfg = cfg
        self.replication = replication
        self.record_history = record_history
        self.window = (cfg.warmup_ms, cfg.duration_ms - cfg.cooldown_ms)
        self.end_ms = 0.0
        self._n_txn = 0
        self._tx_i = np.zeros((0, N_TI), dtype=np.int64)
        self._tx_f = np.zeros((0, N_TF), dtype=np.float64)
        self._history = None

    # -------------------------------------------------------------------------------------- running
    def run(self) -> "FastEngine":
        cfg = self.cfg
        rng = run_streams(cfg, self.replication)
        w = cfg.workload
        lat = latency_model(cfg)
        cat = cfg.catalog
        src = [None] * N_SRC

        # arrivals: as many gaps as the reference draws, hence the number of transactions
        duration = cfg.duration_ms
        ia = w.inter_arrival
        mean = ia.mean_ms if ia.distribution != "lognormal" else LogNormal(ia.median_ms, ia.sigma).mean_ms()
        # (a bursty source generates its whole sequence at its first draw, then hands out gaps, then +inf)
        gap_src = _Source(inter_arrival_dist(w, duration), rng["arrival"], int(duration / mean * 1.05) + BATCH)
        while True:
            gaps = gap_src.values
            n_txn = _count_arrivals(gaps, gap_src.step, duration)
            if n_txn >= 0:
                break
            gaps = gap_src.refill(0, 2 * len(gaps))
            gap_src.consumed = 0
        src[S_GAP] = gap_src
        tables = np.empty(0, dtype=np.int64)
        isvo = np.empty(0, dtype=np.int64)
        runtimes = np.empty(0, dtype=np.float64)
        if n_txn > 0:   # drawn in the reference's batches (integers are buffered per call)
            k = -(-n_txn // BATCH)
            tc = table_dist(w, gap_src.dist)   # bursts may be aimed at one table
            tables = np.concatenate([tc.draw(rng["table"], BATCH) for _ in range(k)]).astype(np.int64)
            op = IsValidatedOverwrite(w.fast_append_ratio)
            isvo = np.concatenate([op.draw(rng["operation"], BATCH) for _ in range(k)]).astype(np.int64)
            rt = _Source(runtime_dist(w), rng["runtime"], n_txn)
            runtimes = np.full(n_txn, rt.values[0]) if rt.const else rt.values

        max_attempts = cfg.max_attempts
        pol_cat, jit_cat, bo_cat = _backoff_table(cfg.retry.catalog, max_attempts)
        pol_tab, jit_tab, bo_tab = _backoff_table(cfg.retry.table, max_attempts)
        p = w.vo_conflict_probability
        conflict = p > 0.0
        thr = np.zeros(1, dtype=np.float64)
        if conflict and isvo.any():
            # 1 - (1 - p) ** n for every n a prepare can see (n <= number of commits <= transactions)
            thr = np.array([1.0 - (1.0 - p) ** n for n in range(n_txn + 2)], dtype=np.float64)

        f = cat.linearization_fraction
        pf = np.zeros(8, dtype=np.float64)
        pf[PF_F] = f
        pf[PF_G] = 1.0 - f
        pf[PF_DURATION] = duration
        pf[PF_LO], pf[PF_HI] = self.window
        pf[PF_WATCHDOG] = cfg.duration_ms + cfg.drain_limit_ms
        pf[PF_JIT_CAT] = jit_cat
        pf[PF_JIT_TAB] = jit_tab
        pi = np.zeros(9, dtype=np.int64)
        pi[PI_INLINED] = int(cat.table_metadata_inlined)
        pi[PI_MAX_PARALLEL] = cfg.io.max_parallel
        pi[PI_MAX_ATTEMPTS] = max_attempts
        pi[PI_REFRESH_FIRST] = int(cfg.commit.first_attempt == "refresh")
        pi[PI_READ_MD] = int(cfg.commit.metadata_read_on_failure and not cfg.catalog.table_metadata_inlined)
        pi[PI_HIST] = int(self.record_history)
        pi[PI_POL_CAT] = pol_cat
        pi[PI_POL_TAB] = pol_tab
        pi[PI_CONFLICT] = int(conflict)

        # first guesses of what the run consumes (at most CHUNK); the kernel asks for more when they run short
        guess = {S_READ: 3 * n_txn, S_CAS: 2 * n_txn, S_GET: 4 * n_txn, S_PUT_ML: 2 * n_txn, S_PUT_TM: 2 * n_txn,
                 S_BACKOFF: n_txn if (jit_cat or jit_tab) else 0, S_CONFLICT: n_txn if conflict else 0}
        src[S_READ] = _Source(lat.catalog_read, rng["catalog_read"], min(guess[S_READ], CHUNK))
        src[S_CAS] = _Source(lat.catalog_cas, rng["catalog_cas"], min(guess[S_CAS], CHUNK))
        src[S_GET] = _Source(lat.get, rng["get"], min(guess[S_GET], CHUNK))
        src[S_PUT_ML] = _Source(lat.put_manifest_list, rng["put_manifest_list"], min(guess[S_PUT_ML], CHUNK))
        src[S_PUT_TM] = _Source(lat.put_table_metadata, rng["put_table_metadata"], min(guess[S_PUT_TM], CHUNK))
        src[S_BACKOFF] = _Source(_Uniform(), rng["backoff"], min(guess[S_BACKOFF], CHUNK))
        src[S_CONFLICT] = _Source(_Uniform(), rng["validation_conflict"], min(guess[S_CONFLICT], CHUNK))
        arrays = {s: src[s].values for s in range(N_SRC)}
        cur = np.zeros(N_SRC, dtype=np.int64)
        step = np.array([src[s].step for s in range(N_SRC)], dtype=np.int64)

        st_i = np.zeros(N_ST, dtype=np.int64)
        st_f = np.zeros(2, dtype=np.float64)
        tx_i = np.zeros((n_txn, N_TI), dtype=np.int64)
        tx_i[:, TI_OUTCOME] = O_UNFINISHED
        tx_i[:, TI_REASON] = R_UNFINISHED
        tx_f = np.zeros((n_txn, N_TF), dtype=np.float64)
        tx_f[:, TF_RTEND] = np.nan
        tx_f[:, TF_END] = np.nan
        versions = np.zeros(w.num_tables, dtype=np.int64)
        cap = n_txn + 8
        h_t = np.zeros(cap, dtype=np.float64)
        h_k = np.zeros(cap, dtype=np.int64)
        h_w = np.zeros(cap, dtype=np.int64)
        # history buffers, column-major (one row per column of the frame); a full one is set aside and the
        # kernel goes on in a fresh one, so nothing is copied before the frame is built
        hcap = min(8 * n_txn + 64, HIST_CHUNK) if self.record_history else 0
        H_i = np.zeros((N_HI, hcap), dtype=np.int64)
        H_f = np.zeros((2, hcap), dtype=np.float64)
        hist_chunks = []
        lanes = np.zeros(max(1, cfg.io.max_parallel), dtype=np.float64)

        while True:
            status = _kernel(pf, pi, st_i, st_f, cur, step, arrays[S_READ], arrays[S_CAS], arrays[S_GET],
                             arrays[S_PUT_ML], arrays[S_PUT_TM], arrays[S_BACKOFF], arrays[S_CONFLICT], gaps, thr,
                             bo_cat, bo_tab, tables, isvo, runtimes, tx_i, tx_f, versions, h_t, h_k, h_w, H_i, H_f,
                             lanes)
            if status == STATUS_DONE:
                break
            if status == STATUS_EMPTY:
                raise RuntimeError('No scheduled events left but "until" event was not triggered')
            need = int(st_i[ST_NEED])
            for s in (S_READ, S_CAS, S_GET, S_PUT_ML, S_PUT_TM, S_BACKOFF, S_CONFLICT):
                if need & (1 << s):
                    arrays[s] = src[s].refill(int(cur[s]), int(st_i[ST_NEED_GET]) if s == S_GET else 1)
                    cur[s] = 0
            if need & (1 << N_SRC):
                hist_chunks.append((H_i, H_f, int(st_i[ST_HIST_N])))
                H_i = np.zeros((N_HI, HIST_CHUNK), dtype=np.int64)
                H_f = np.zeros((2, HIST_CHUNK), dtype=np.float64)
                st_i[ST_HIST_N] = 0

        self.end_ms = float(st_f[SF_END])
        # draws consumed per stream (a constant source consumes none)
        self.draws_consumed = {_SRC_STREAM[s]: 0 if src[s].const else src[s].consumed + int(cur[s])
                               for s in range(N_SRC)}
        self._n_txn, self._tx_i, self._tx_f = n_txn, tx_i, tx_f
        if self.record_history:
            hist_chunks.append((H_i, H_f, int(st_i[ST_HIST_N])))
            self._history = (hist_chunks, int(st_i[ST_SEQ]), versions)
        return self

    # -------------------------------------------------------------------------------------- frames
    def _make_records(self, n, tx_i, tx_f) -> pd.DataFrame:
        if n == 0:
            df = pd.DataFrame.from_records([], columns=RECORD_COLUMNS)
            return df.sort_values("txn", kind="stable").reset_index(drop=True)
        sdt = _string_dtype()
        table = tx_i[:, TI_TABLE].copy()
        attempts = tx_i[:, TI_ATTEMPTS].copy()
        cols = {
            "txn": np.arange(n, dtype=np.int64),
            "table": table,
            "table_rank": table + 1,
            "op": _strings(("fa", "vo"), tx_i[:, TI_ISVO], sdt),
            "arrival_ms": tx_f[:, TF_ARRIVAL].copy(),
            "runtime_end_ms": tx_f[:, TF_RTEND].copy(),
            "end_ms": tx_f[:, TF_END].copy(),
            "outcome": _strings(OUTCOMES, tx_i[:, TI_OUTCOME], sdt),
            "reason": _strings(REASONS, tx_i[:, TI_REASON], sdt),
            "attempts": attempts,
            "catalog_conflicts": tx_i[:, TI_CATC].copy(),
            "table_conflicts": tx_i[:, TI_TABC].copy(),
            "manifest_lists_read": tx_i[:, TI_MLREAD].copy(),
            "catalog_reads": tx_i[:, TI_CREADS].copy(),
            "gets": tx_i[:, TI_GETS].copy(),
            "puts": tx_i[:, TI_PUTS].copy(),
            "cases": attempts.copy(),
            "backoff_ms": tx_f[:, TF_BACKOFF].copy(),
            "in_window": tx_i[:, TI_INWIN] != 0,
        }
        assert tuple(cols) == RECORD_COLUMNS
        return pd.DataFrame(cols, copy=False)

    def _make_history(self, chunks, tx_i, seq, versions) -> pd.DataFrame:
        end = self.end_ms
        # still open at the end: unfinished, in arrival (= id) order; then one `final` row per table
        live = np.flatnonzero(tx_i[:, TI_OUTCOME] == O_UNFINISHED)
        nt = len(versions)
        k = len(live)
        m = k + nt
        X_i = np.full((N_HI, m), -1, dtype=np.int64)
        X_f = np.full((2, m), end, dtype=np.float64)
        X_i[HI_OK] = 0
        X_i[HI_OUTCOME] = O_NONE
        X_i[HI_REASON] = R_NONE
        X_i[HI_KIND, :k] = K_END
        X_i[HI_TXN, :k] = live
        X_i[HI_TABLE, :k] = tx_i[live, TI_TABLE]
        X_i[HI_OUTCOME, :k] = O_UNFINISHED
        X_i[HI_REASON, :k] = R_UNFINISHED
        X_i[HI_ATTEMPTS, :k] = tx_i[live, TI_ATTEMPTS]
        X_i[HI_KIND, k:] = K_FINAL
        X_i[HI_TABLE, k:] = np.arange(nt)
        X_i[HI_SEQ, k:] = seq
        X_i[HI_VERSION, k:] = versions
        X_f[1, k:] = np.nan
        # fresh arrays: the frame can take views of them (copy=False) without sharing the engine's state
        H_i = np.concatenate([c[0][:, :c[2]] for c in chunks] + [X_i], axis=1)
        H_f = np.concatenate([c[1][:, :c[2]] for c in chunks] + [X_f], axis=1)

        sdt = _string_dtype()
        kind = H_i[HI_KIND]
        txn = H_i[HI_TXN]
        is_begin = kind == K_BEGIN
        op_code = np.zeros(len(kind), dtype=np.int64)   # 0: "", 1: fa, 2: vo
        op_code[is_begin] = 1 + tx_i[txn[is_begin], TI_ISVO]
        cols = {
            "i": np.arange(len(kind), dtype=np.int64),
            "kind": _strings(KINDS, kind, sdt),
            "time_ms": H_f[0],
            "txn": txn,
            "table": H_i[HI_TABLE],
            "op": _strings(("", "fa", "vo"), op_code, sdt),
            "seq": H_i[HI_SEQ],
            "version": H_i[HI_VERSION],
            "expected": H_i[HI_EXPECTED],
            "ok": H_i[HI_OK] != 0,
            "base_version": H_i[HI_BASE],
            "validated_from": H_i[HI_VFROM],
            "validated_to": H_i[HI_VTO],
            "answer_ms": H_f[1],
            "outcome": _strings(OUTCOMES, H_i[HI_OUTCOME], sdt),
            "reason": _strings(REASONS, H_i[HI_REASON], sdt),
            "attempts": H_i[HI_ATTEMPTS],
        }
        assert tuple(cols)[1:] == HISTORY_COLUMNS
        return pd.DataFrame(cols, copy=False)

    def records_frame(self) -> pd.DataFrame:
        """One row per transaction (RECORD_COLUMNS), in transaction-id order."""
        return self._make_records(self._n_txn, self._tx_i, self._tx_f)

    def history_frame(self) -> pd.DataFrame | None:
        """The recorded history (docs/FORMATS.md), in processing order, or None if not recorded."""
        if self._history is None:
            return None
        chunks, seq, versions = self._history
        return self._make_history(chunks, self._tx_i, seq, versions)
