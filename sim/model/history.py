"""Recording the history (docs/FORMATS.md, "History"): one row per catalog read, prepare, CAS, begin and end.

Callers pass the transaction's slot `j`; the row holds its id (TI_TXN)."""
import numpy as np

from .jit import model_function

from .layout import HF_ANSWER, HF_TIME, HI_ATTEMPTS, HI_BASE, HI_EXPECTED, HI_KIND, HI_OK, HI_OUTCOME, HI_REASON, \
    HI_SEQ, HI_TABLE, HI_TXN, HI_VERSION, HI_VFROM, HI_VTO, K_BEGIN, K_CAS, K_END, K_PREPARE, K_READ, K_THROTTLED, \
    O_NONE, PI_HIST, R_NONE, ST_HIST_N, TI_TXN, _FALSE, _NA, _TRUE


@model_function
def _row(m, kind, time, j, table, seq, version, expected, ok, base, vfrom, vto, answer, outcome, reason,
         attempts):
    n = m.st[ST_HIST_N]
    H, F = m.H_i, m.H_f
    H[HI_KIND, n] = kind
    H[HI_TXN, n] = m.tx_i[j, TI_TXN]
    H[HI_TABLE, n] = table
    H[HI_SEQ, n] = seq
    H[HI_VERSION, n] = version
    H[HI_EXPECTED, n] = expected
    H[HI_OK, n] = ok
    H[HI_BASE, n] = base
    H[HI_VFROM, n] = vfrom
    H[HI_VTO, n] = vto
    H[HI_OUTCOME, n] = outcome
    H[HI_REASON, n] = reason
    H[HI_ATTEMPTS, n] = attempts
    F[HF_TIME, n] = time
    F[HF_ANSWER, n] = answer
    m.st[ST_HIST_N] = n + 1


@model_function
def on(m):
    return m.pi[PI_HIST] != 0


@model_function
def begin(m, now, j, t, max_attempts):
    _row(m, K_BEGIN, now, j, t, _NA, _NA, _NA, _FALSE, _NA, _NA, _NA, np.nan, O_NONE, R_NONE, max_attempts)


@model_function
def read(m, now, j, t, seq, v, answer):
    _row(m, K_READ, now, j, t, seq, v, _NA, _FALSE, _NA, _NA, _NA, answer, O_NONE, R_NONE, _NA)


@model_function
def prepare(m, now, j, t, base, vfrom, vto):
    _row(m, K_PREPARE, now, j, t, _NA, _NA, _NA, _FALSE, base, vfrom, vto, np.nan, O_NONE, R_NONE, _NA)


@model_function
def cas(m, now, j, t, seq, v, expected, ok, answer):
    _row(m, K_CAS, now, j, t, seq, v, expected, _TRUE if ok else _FALSE, _NA, _NA, _NA, answer, O_NONE, R_NONE,
         _NA)


@model_function
def throttled(m, now, j, t, seq, v, expected, answer):
    """A conditional write answered 429: it changed nothing and was no commit attempt."""
    _row(m, K_THROTTLED, now, j, t, seq, v, expected, _FALSE, _NA, _NA, _NA, answer, O_NONE, R_NONE, _NA)


@model_function
def end(m, now, j, t, answer, outcome, reason, attempts):
    _row(m, K_END, now, j, t, _NA, _NA, _NA, _FALSE, _NA, _NA, _NA, answer, outcome, reason, attempts)
