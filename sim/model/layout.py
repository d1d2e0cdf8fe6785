"""The model's state layout: what one run's arrays hold, column by column, and the codes written in them.

The model keeps all of its state in flat numpy arrays gathered in one `Model` tuple, so that the same handler
functions run as plain Python (the SimPy engine) and compiled inside a numba event loop (the fast engine).
Scalars that change live in the `st_i` / `st_f` arrays; a column index names each.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

# numpy ints, not Python ints: numba types a Python int constant passed to a helper as a literal and compiles
# one specialization of the helper per value
_NA, _FALSE, _TRUE = np.int64(-1), np.int64(0), np.int64(1)

# ---------------------------------------------------------------------------------------------- program counters
# where a transaction is suspended: the catalog effect point it waits for (docs/MODEL.md, "One transaction")
PC_INIT, PC_BASE, PC_REFRESH1, PC_CAS, PC_FAILREAD, PC_BACKOFFREAD, PC_DONE = 0, 1, 2, 3, 4, 5, 6
# the log protocol's (docs/MODEL.md, "Commit protocol"): its snapshot LIST, an attempt's LIST, its create
PC_L_BASE, PC_L_LIST, PC_L_CREATE = 7, 8, 9

# ---------------------------------------------------------------------------------------------- codes
KINDS = ("begin", "read", "prepare", "cas", "end", "final", "throttled")
K_BEGIN, K_READ, K_PREPARE, K_CAS, K_END, K_FINAL, K_THROTTLED = map(np.int64, range(7))
OUTCOMES = ("", "committed", "aborted", "unfinished")
O_NONE, O_COMMITTED, O_ABORTED, O_UNFINISHED = map(np.int64, range(4))
REASONS = ("", "retries_exhausted", "validation_failed", "unfinished")
R_NONE, R_EXHAUSTED, R_VALIDATION, R_UNFINISHED = map(np.int64, range(4))
OPS = ("fa", "vo")
# retry policy kinds
P_IMMEDIATE, P_FIXED, P_EXPONENTIAL = 0, 1, 2

# ---------------------------------------------------------------------------------------------- per-transaction columns
TI_TABLE, TI_ISVO, TI_INWIN, TI_PC, TI_SEQ, TI_V, TI_PREPARED, TI_VALIDATED, TI_OUTCOME, TI_REASON, \
    TI_ATTEMPTS, TI_CATC, TI_TABC, TI_MLREAD, TI_CREADS, TI_GETS, TI_PUTS, TI_THR, TI_THR_K, TI_TXN = range(20)
N_TI = 20                 # TI_THR: requests answered 429; TI_THR_K: 429s in a row of the request in flight
# TI_TXN: the transaction id, -1 in a free slot. Rows are slots (`sim.model.build`): a transaction takes a free one
# at its arrival and keeps it until its record is handed out; handlers and engines use the slot, history the id
TF_ARRIVAL, TF_RUNTIME, TF_RTEND, TF_END, TF_L, TF_BACKOFF = range(6)
N_TF = 6

# ---------------------------------------------------------------------------------------------- history columns
HI_KIND, HI_TXN, HI_TABLE, HI_SEQ, HI_VERSION, HI_EXPECTED, HI_OK, HI_BASE, HI_VFROM, HI_VTO, HI_OUTCOME, \
    HI_REASON, HI_ATTEMPTS = range(13)
N_HI = 13
HF_TIME, HF_ANSWER = 0, 1
N_HF = 2
HIST_ROWS_PER_EVENT = 4   # one event writes at most 3 history rows (read, prepare, end)

# ---------------------------------------------------------------------------------------------- random sources
S_READ, S_CAS, S_GET, S_PUT_ML, S_PUT_TM, S_BACKOFF, S_CONFLICT, S_GAP, S_PUT_CP, S_THROTTLE = range(10)
N_SRC = 10
SRC_STREAM = ("catalog_read", "catalog_cas", "get", "put_manifest_list", "put_table_metadata", "backoff",
              "validation_conflict", "arrival", "put_checkpoint", "throttle")
NEED_HISTORY = N_SRC       # bit of the `needs` mask: the history buffer is full
NEED_TXN = N_SRC + 1       # ... the next arrival has no free slot or no drawn table/operation/runtime
NEED_THR = N_SRC + 2       # ... the conflict table `thr` could be indexed past its end
NEED_BUCKETS = N_SRC + 3   # ... a throttled log's next entry has no bucket yet

# ---------------------------------------------------------------------------------------------- run state
ST_SEQ, ST_OPEN, ST_ARR_DONE, ST_ARR_PC, ST_NEXT_TXN, ST_HIST_N, ST_STOP, ST_FREE, ST_ARR_BASE, ST_VAL_MAX, \
    ST_SEQ_STOP = range(11)
N_ST = 11                 # ST_FREE: free slots (on the `free` stack); ST_ARR_BASE: the id of tables[0];
# ST_VAL_MAX: at the last stop between events (st[ST_SEQ] was ST_SEQ_STOP then), the most snapshots a transaction
# in flight had yet to validate
ARR_NEXT, ARR_CLOSE = 1, 2            # the arrivals' pending event: the next arrival, or the end of arrivals
SF_NOW = 0
N_SF = 1

# ---------------------------------------------------------------------------------------------- parameters
PF_F, PF_G, PF_DURATION, PF_LO, PF_HI, PF_JIT_CAT, PF_JIT_TAB, PF_RATE_PER_MS, PF_BURST, PF_JIT_THR = range(10)
N_PF = 10
PI_INLINED, PI_MAX_PARALLEL, PI_MAX_ATTEMPTS, PI_REFRESH_FIRST, PI_READ_MD, PI_HIST, PI_POL_CAT, PI_POL_TAB, \
    PI_CONFLICT, PI_SCOPE_TABLE, PI_THROTTLE, PI_CKPT_INTERVAL, PI_POL_THR, PI_LOG = range(14)
N_PI = 14


class Model(NamedTuple):
    """Everything one run's handlers read and write. Arrays only (a tuple's scalars are immutable)."""
    pf: np.ndarray          # float parameters (PF_*)
    pi: np.ndarray          # int parameters (PI_*)
    st: np.ndarray          # run state (ST_*)
    cur: np.ndarray         # per random source: the cursor of its next draw
    step: np.ndarray        # per random source: 1, or 0 for a constant (its one value is reused)
    rd: np.ndarray          # draws: catalog read latency
    cs: np.ndarray          # catalog CAS latency
    gt: np.ndarray          # storage GET latency
    pm: np.ndarray          # PUT of a manifest list
    pt: np.ndarray          # PUT of table metadata
    bo: np.ndarray          # U(0, 1) for backoff jitter
    cu: np.ndarray          # U(0, 1) for real VO conflicts
    gaps: np.ndarray        # inter-arrival gaps
    thr: np.ndarray         # P(a real conflict among n snapshots) for n = 0, 1, ... (the last one for any larger n
                            # once it is 1.0)
    bo_cat: np.ndarray      # backoff before jitter for the k-th catalog conflict
    bo_tab: np.ndarray      # ... for the k-th table conflict
    tables: np.ndarray      # per arrival from id st[ST_ARR_BASE] on: table id
    isvo: np.ndarray        # ... 1 for a ValidatedOverwrite
    runtimes: np.ndarray    # ... runtime
    tx_i: np.ndarray        # per transaction slot (TI_TXN: whose), int columns (TI_*)
    tx_f: np.ndarray        # ... float columns (TF_*)
    free: np.ndarray        # the free slots, a stack of st[ST_FREE]
    versions: np.ndarray    # the catalog: v[t] per table (the global seq is st[ST_SEQ])
    H_i: np.ndarray         # history buffer, int columns (HI_*), column-major
    H_f: np.ndarray         # history buffer, float columns (HF_*)
    lanes: np.ndarray       # scratch: io.max_parallel lane end times
    sf: np.ndarray          # float run state (SF_*)
    pcp: np.ndarray         # draws: PUT of a checkpoint (log protocol)
    th: np.ndarray          # U(0, 1) for the jitter of a throttled request's resend
    bo_thr: np.ndarray      # resend delay before jitter after the k-th 429 in a row
    bk_tokens: np.ndarray   # per-object token buckets (sim.model.throttle): tokens
    bk_last: np.ndarray     # ... time of the last update
    bk_head: np.ndarray     # per table: the run's commit index of its newest log entry (-1: none)
    bk_prev: np.ndarray     # per commit index: the one of the previous entry of the same table
