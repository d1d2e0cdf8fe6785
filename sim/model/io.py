"""Storage I/O inside one transaction (docs/MODEL.md, "One transaction"): serial, except a VO's validation
reads, which run on `io.max_parallel` lanes. Only the time matters between two effect points."""
from .draws import take
from .jit import model_function
from .state import Src


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
def gets_on_ms(m, j, n, k):
    """n > 0 GETs by transaction j, at most k at a time: their wall time."""
    c = m.cur[Src.GET]
    s = m.step[Src.GET]
    ms = lanes_ms(m.draws, m.draw_at[Src.GET] + c, s, n, k, m.lanes)
    m.cur[Src.GET] = c + s * n
    m.tx[j].gets += n
    return ms


@model_function
def gets_ms(m, j, n):
    """n > 0 GETs by transaction j, at most io.max_parallel at a time: their wall time."""
    return gets_on_ms(m, j, n, m.p.max_parallel)


@model_function
def list_ms(m, j, pages):
    """A LIST outside an effect point (of a log, a timeline), its pages one after another, each a GET draw."""
    ms = 0.0
    for _ in range(pages):
        ms += take(m, Src.GET)
    m.tx[j].lists += pages
    return ms
