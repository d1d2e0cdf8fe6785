"""Storage I/O inside one transaction (docs/MODEL.md, "One transaction"): serial, except a VO's validation
reads, which run on `io.max_parallel` lanes. Only the time matters between two effect points.

A read of more than `EXACT_MAX` GETs, serial or at most one per lane, is a long read (docs/MODEL.md, "Long reads"):
its time is one draw from its tabulated law (`sim.long_reads`, `Model.lr`), not the sum or max of its draws; a
read that queues on fewer lanes than it has GETs is drawn GET by GET. Its GETs are counted all the same.
"""
import math

from ..long_reads import EXACT_MAX, H_MEAN, H_MIN, H_SD, HEADER, LOGIT_HALF_RANGE, QUANTILES
from .draws import take
from .jit import model_function
from .state import Src

_COLUMN = (QUANTILES - 1) / (2.0 * LOGIT_HALF_RANGE)   # quantile columns per unit of logit


@model_function
def lanes_ms(draws, c0, s, n, k, lanes):
    """Wall time of the n GETs draws[c0], draws[c0 + s], ... (s = 0: a constant) on k lanes, each GET taking
    the lane that frees first, in order."""
    if k == 1:
        tot = 0.0
        for i in range(n):
            tot += draws[c0 + s * i]
        return tot
    if k >= n:
        m = draws[c0]
        for i in range(1, n):
            if draws[c0 + s * i] > m:
                m = draws[c0 + s * i]
        return m
    for i in range(k):
        lanes[i] = draws[c0 + s * i]
    for i in range(k // 2 - 1, -1, -1):
        _sift_down(lanes, i, k)
    for i in range(k, n):
        # the lane that frees first (the heap's root) takes the next GET; which of equal lanes does is
        # irrelevant to the multiset of lane ends
        lanes[0] = lanes[0] + draws[c0 + s * i]
        _sift_down(lanes, 0, k)
    m = lanes[0]
    for a in range(1, k):
        if lanes[a] > m:
            m = lanes[a]
    return m


@model_function
def _sift_down(h, i, k):
    """Restores the min-heap h[:k] below position i (numba's heapq takes lists, and the loop allocates nothing):
    a round of n GETs on k lanes costs n log k, not n k (a log snapshot update reads thousands of entries on
    1000 lanes)."""
    v = h[i]
    while True:
        c = 2 * i + 1
        if c >= k:
            break
        if c + 1 < k and h[c + 1] < h[c]:
            c += 1
        if h[c] >= v:
            break
        h[i] = h[c]
        i = c
    h[i] = v


@model_function
def _column(logit):
    """Where a logit lies on the quantile grid: its column, as a float."""
    at = (logit + LOGIT_HALF_RANGE) * _COLUMN
    if at <= 0.0:
        return 0.0
    if at >= QUANTILES - 1:
        return QUANTILES - 1.0
    return at


@model_function
def _quantile(lr, row, at):
    """Row `row`'s quantile at column `at` (linear between columns)."""
    i = min(int(at), QUANTILES - 2)
    base = HEADER + row * QUANTILES + i
    return lr[base] + (at - i) * (lr[base + 1] - lr[base])


@model_function
def _sum_ms(m, n):
    """One draw of the sum of n > EXACT_MAX GET latencies: its standardized quantile at the draw's u, interpolated
    between the tabulated counts around n in 1 / sqrt(n) (past the last, towards the normal's row)."""
    u = take(m, Src.LONG)
    at = _column(math.log(u) - math.log1p(-u)) if u > 0.0 else 0.0
    counts = m.lr_n
    last = len(counts) - 1
    a = 0
    while a < last and counts[a + 1] <= n:
        a += 1
    x = 1.0 / math.sqrt(n)
    xa = 1.0 / math.sqrt(counts[a])
    xb = 1.0 / math.sqrt(counts[a + 1]) if a < last else 0.0
    w = (xa - x) / (xa - xb)
    z = (1.0 - w) * _quantile(m.lr, a, at) + w * _quantile(m.lr, a + 1, at)
    lr = m.lr
    ms = n * lr[H_MEAN] + z * math.sqrt(n) * lr[H_SD]
    low = n * lr[H_MIN]
    return ms if ms > low else low


@model_function
def _max_ms(m, n):
    """One draw of the max of n > EXACT_MAX GET latencies: one GET's quantile at u^(1/n)."""
    u = take(m, Src.LONG)
    at = 0.0
    if u > 0.0:
        log_v = math.log(u) / n                      # v = u^(1/n), and its logit log v - log(1 - v)
        at = _column(log_v - math.log(-math.expm1(log_v))) if log_v < 0.0 else QUANTILES - 1.0
    return _quantile(m.lr, len(m.lr_n) + 1, at)


@model_function
def reads_ms(m, n, k):
    """n > 0 GETs, at most k at a time: their wall time. A long read (n > EXACT_MAX, serial or one GET a lane) is
    one draw from its table; any other read is drawn GET by GET (a constant GET profile, too: its sums are exact)."""
    if n > EXACT_MAX and len(m.lr_n) > 0 and m.step[Src.GET] != 0 and not m.p.exact_reads:
        if k == 1:
            return _sum_ms(m, n)
        if k >= n:
            return _max_ms(m, n)
    c = m.cur[Src.GET]
    s = m.step[Src.GET]
    ms = lanes_ms(m.draws, m.draw_at[Src.GET] + c, s, n, k, m.lanes)
    m.cur[Src.GET] = c + s * n
    return ms


@model_function
def gets_on_ms(m, j, n, k):
    """n > 0 GETs by transaction j, at most k at a time: their wall time."""
    ms = reads_ms(m, n, k)
    m.tx[j].gets += n
    return ms


@model_function
def gets_ms(m, j, n):
    """n > 0 GETs by transaction j, at most io.max_parallel at a time: their wall time."""
    return gets_on_ms(m, j, n, m.p.max_parallel)


@model_function
def list_ms(m, j, pages):
    """A LIST outside an effect point (of a log, a timeline), its pages one after another, each a GET's latency."""
    m.tx[j].lists += pages
    return reads_ms(m, pages, 1)
