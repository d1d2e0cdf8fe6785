"""Random draws as the model consumes them: one pre-drawn array per source, read through a cursor.

The arrays are refilled between events (`sim.model.build.Run.refill`), so a handler never runs short: `needs`
says, before an event, which sources could not serve the largest event there can be now. The same stop serves
the arrays that grow with the run: the transaction slots (when none is free, finished transactions hand
out their records, and the slots double if that freed too few), the arrivals' drawn tables, operations and
runtimes, the conflict table and a throttled log's buckets.
"""
from .jit import model_function

from .layout import HIST_ROWS_PER_EVENT, NEED_BUCKETS, NEED_HISTORY, NEED_THR, NEED_TXN, PI_CKPT_INTERVAL, \
    PI_CONFLICT, PI_HIST, PI_LOG, PI_THROTTLE, S_BACKOFF, S_CAS, S_CONFLICT, S_GAP, S_GET, S_PUT_CP, S_PUT_ML, \
    S_PUT_TM, S_READ, S_THROTTLE, ST_ARR_BASE, ST_ARR_DONE, ST_FREE, ST_HIST_N, ST_NEXT_TXN, ST_SEQ, ST_SEQ_STOP, \
    ST_VAL_MAX


@model_function
def take(arr, m, s):
    """The next draw of source `s` (whose array is `arr`); a constant source (step 0) repeats its value."""
    x = arr[m.cur[s]]
    m.cur[s] += m.step[s]
    return x


@model_function
def max_gets_per_event(m):
    """GETs one event may draw: a prepare's metadata and manifest-list reads, its n - 1 validation reads, a
    metadata read after a failure (or a log's n entries to check); n is at most what a transaction in flight
    had yet to validate at the last stop (ST_VAL_MAX) plus the commits since, so it follows the transactions in
    flight, not the run's length. Or a log snapshot's checkpoint and entries: at most checkpoint_interval + 1,
    or with no checkpoints every entry of the table. Grows by at most one per event."""
    n = m.st[ST_VAL_MAX] + m.st[ST_SEQ] - m.st[ST_SEQ_STOP]
    if m.pi[PI_LOG] != 0:
        ci = m.pi[PI_CKPT_INTERVAL]
        snap = ci + 1 if ci > 0 else m.st[ST_SEQ]
        if snap > n:
            n = snap
    return n + 4


@model_function
def _short(arr, m, s, n):
    return m.step[s] != 0 and m.cur[s] + n > len(arr)


@model_function
def _arrivals_left(m):
    """Arrivals that can start before no slot is free or the drawn tables run out (all, once arrivals ended)."""
    if m.st[ST_ARR_DONE] != 0:
        return 1 << 62
    return min(m.st[ST_FREE], len(m.tables) - (m.st[ST_NEXT_TXN] - m.st[ST_ARR_BASE]))


@model_function
def _thr_left(m):
    """Events before a prepare could index `thr` past its end (n <= commits, one more per event at most); a
    table ending in 1.0 serves every larger n."""
    if m.pi[PI_CONFLICT] == 0 or m.thr[len(m.thr) - 1] >= 1.0:
        return 1 << 62
    return len(m.thr) - m.st[ST_SEQ] - 1


@model_function
def _buckets_left(m):
    """Events before a throttled log's next entry (the st[ST_SEQ]-th commit's) would have no bucket."""
    if m.pi[PI_LOG] == 0 or m.pi[PI_THROTTLE] == 0:
        return 1 << 62
    return len(m.bk_prev) - m.st[ST_SEQ]


@model_function
def needs(m):
    """Bit mask of the sources (and, bit NEED_HISTORY, the history buffer) to refill before the next event."""
    need = 0
    if _short(m.rd, m, S_READ, 1):
        need |= 1 << S_READ
    if _short(m.cs, m, S_CAS, 1):
        need |= 1 << S_CAS
    if _short(m.gt, m, S_GET, max_gets_per_event(m)):
        need |= 1 << S_GET
    if _short(m.pm, m, S_PUT_ML, 1):
        need |= 1 << S_PUT_ML
    if _short(m.pt, m, S_PUT_TM, 1):
        need |= 1 << S_PUT_TM
    if _short(m.pcp, m, S_PUT_CP, 1):
        need |= 1 << S_PUT_CP
    if m.cur[S_BACKOFF] + 1 > len(m.bo):
        need |= 1 << S_BACKOFF
    if m.cur[S_THROTTLE] + 1 > len(m.th):
        need |= 1 << S_THROTTLE
    if m.cur[S_CONFLICT] + 1 > len(m.cu):
        need |= 1 << S_CONFLICT
    if _short(m.gaps, m, S_GAP, 1):
        need |= 1 << S_GAP
    if m.pi[PI_HIST] != 0 and m.st[ST_HIST_N] + HIST_ROWS_PER_EVENT > m.H_i.shape[1]:
        need |= 1 << NEED_HISTORY
    if _arrivals_left(m) < 1:
        need |= 1 << NEED_TXN
    if _thr_left(m) < 1:
        need |= 1 << NEED_THR
    if _buckets_left(m) < 1:
        need |= 1 << NEED_BUCKETS
    return need


@model_function
def _left(arr, m, s):
    """Draws left in source s (a constant source never runs out)."""
    if m.step[s] == 0:
        return 1 << 62
    return len(arr) - m.cur[s]


@model_function
def events_before_refill(m):
    """How many events can certainly run before `needs` could be non-zero, so that an engine may skip the
    check until then (it costs about as much as a cheap event). One event takes at most one draw of each
    source but GET, at most `max_gets_per_event` GETs (which grows by at most one per event), at most
    HIST_ROWS_PER_EVENT history rows, one arrival and one commit."""
    n = min(_left(m.rd, m, S_READ), _left(m.cs, m, S_CAS), _left(m.pm, m, S_PUT_ML), _left(m.pt, m, S_PUT_TM),
            _left(m.pcp, m, S_PUT_CP), len(m.bo) - m.cur[S_BACKOFF], len(m.th) - m.cur[S_THROTTLE],
            len(m.cu) - m.cur[S_CONFLICT], _left(m.gaps, m, S_GAP), _arrivals_left(m), _thr_left(m),
            _buckets_left(m))
    if m.pi[PI_HIST] != 0:
        n = min(n, (m.H_i.shape[1] - m.st[ST_HIST_N]) // HIST_ROWS_PER_EVENT)
    if m.step[S_GET] != 0:
        gets_left = len(m.gt) - m.cur[S_GET]
        g0 = max_gets_per_event(m)
        while n > 0 and n * g0 + n * (n - 1) // 2 > gets_left:
            n //= 2
    return max(n - 1, 0)
