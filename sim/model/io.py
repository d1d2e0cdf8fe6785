"""Storage I/O inside one transaction (docs/MODEL.md, "One transaction"): serial, except a VO's validation
reads, which run on `io.max_parallel` lanes. Only the time matters between two effect points.

A read of more than `EXACT_MAX` GETs is a long read (docs/MODEL.md, "Long reads"): serial or at most one GET a
lane, its time is one draw from its tabulated law (`sim.long_reads`, `Model.lr`), not the sum or max of its draws;
a log snapshot's read queued on fewer lanes than it has GETs draws its exact makespan lane by lane, without the
heap (`gets_on_lanes_ms`). Its GETs are counted all the same.
"""
import math

from ..long_reads import EXACT_MAX, H_MEAN, H_MIN, H_SD, HEADER, LOGIT_HALF_RANGE, QUANTILES
from .draws import take
from .jit import model_function
from .state import LIST_PAGE_KEYS, Src

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
def _quantile(lr, row, logit):
    """Row `row`'s quantile at the u whose logit is `logit` (linear between the grid's columns; past its ends, its
    end columns)."""
    at = min(max((logit + LOGIT_HALF_RANGE) * _COLUMN, 0.0), QUANTILES - 1.0)
    i = min(int(at), QUANTILES - 2)
    base = HEADER + row * QUANTILES + i
    return lr[base] + (at - i) * (lr[base + 1] - lr[base])


@model_function
def _sum_ms(m, n):
    """One draw of the sum of n > EXACT_MAX GET latencies: its standardized quantile at the draw's u, interpolated
    between the tabulated counts around n in 1 / sqrt(n) (past the last, towards the normal's row)."""
    u = take(m, Src.LONG)
    logit = math.log(u) - math.log1p(-u) if u > 0.0 else -LOGIT_HALF_RANGE
    counts = m.lr_n
    last = len(counts) - 1
    a = 0
    while a < last and counts[a + 1] <= n:
        a += 1
    x = 1.0 / math.sqrt(n)
    xa = 1.0 / math.sqrt(counts[a])
    xb = 1.0 / math.sqrt(counts[a + 1]) if a < last else 0.0
    w = (xa - x) / (xa - xb)
    z = (1.0 - w) * _quantile(m.lr, a, logit) + w * _quantile(m.lr, a + 1, logit)
    lr = m.lr
    ms = n * lr[H_MEAN] + z * math.sqrt(n) * lr[H_SD]
    low = n * lr[H_MIN]
    return ms if ms > low else low


@model_function
def _max_ms(m, n):
    """One draw of the max of n > EXACT_MAX GET latencies: one GET's quantile at u^(1/n)."""
    u = take(m, Src.LONG)
    logit = -LOGIT_HALF_RANGE
    if u > 0.0:
        log_v = math.log(u) / n                      # v = u^(1/n), and its logit log v - log(1 - v)
        logit = log_v - math.log(-math.expm1(log_v)) if log_v < 0.0 else LOGIT_HALF_RANGE
    return _quantile(m.lr, len(m.lr_n) + 1, logit)


@model_function
def _select(a, size, kth):
    """The kth smallest of a[:size] (0-based), a partly reordered (Hoare's quickselect, median-of-three pivot)."""
    lo = 0
    hi = size
    while hi - lo > 1:
        x = a[lo]
        y = a[(lo + hi - 1) >> 1]
        z = a[hi - 1]
        pivot = max(min(x, y), min(max(x, y), z))
        i = lo
        j = hi - 1
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                t = a[i]
                a[i] = a[j]
                a[j] = t
                i += 1
                j -= 1
        if kth <= j:
            hi = j + 1
        elif kth >= i:
            lo = i
        else:
            return a[kth]
    return a[kth]


@model_function
def _renewal_ms(m, n, k):
    """The makespan of n > k GETs on 1 < k lanes, each GET taking the lane that frees first, with no heap: a lane's
    GETs are iid whichever it takes, so the lanes are k independent renewal processes; the last GET starts at T, the
    (n - k)-th of all their epochs, and each lane ends at its first epoch after T (or at T, a lane whose epoch at T
    the last GETs did not need). Each lane's first `skip` epochs, which lie before T but with odds below 1e-4
    (T's mean less 4 sds of a lane's count), are one draw of their sum (the table's); its next epochs are drawn
    GET by GET up to a horizon past T's likely value (its mean and 6 sds of T); T is selected among those. If a
    skipped epoch is not before T, the read is drawn again with none skipped; if the horizon falls short of T, or
    the read would fill more than its scratch (n + 2 k epochs), the read is drawn as the heap does (`lanes_ms`),
    from the same draws. Returns the makespan, or -1.0 for the heap."""
    lr = m.lr
    c = (n - k) / k
    cv = lr[H_SD] / lr[H_MEAN]
    skip = int(c - 4.0 * cv * math.sqrt(c + 1.0) - 1.0)
    skip = min(skip, m.lr_n[len(m.lr_n) - 1]) if skip >= 2 else 0
    ms = _lanes_after(m, n, k, skip)
    if ms == -2.0:                                   # a skipped epoch lies at or past T: none skipped
        ms = _lanes_after(m, n, k, 0)
    return ms


@model_function
def _lanes_after(m, n, k, skip):
    """`_renewal_ms` with each lane's first `skip` epochs one sum (0: none): the makespan, -1.0 (use the heap) or
    -2.0 (a skipped epoch is not before T); the draws' cursors move only with a makespan."""
    lr = m.lr
    c = (n - k) / k
    horizon = lr[H_MEAN] * (c + 1.0) + 6.0 * lr[H_SD] * math.sqrt((c + 1.0) / k)
    at = m.draw_at[Src.GET] + m.cur[Src.GET]
    long_at = m.cur[Src.LONG]
    cap = n + 2 * k
    used = 0
    total = 0
    first = 0.0                                      # the latest skipped epoch of any lane
    for lane in range(k):
        t = _sum_ms(m, skip) if skip > 0 else 0.0
        m.lanes[lane] = t
        if t > first:
            first = t
        count = 0
        while True:
            t += m.draws[at + used]
            used += 1
            if t > horizon:
                break
            if total == cap:
                m.cur[Src.LONG] = long_at
                return -1.0
            m.epochs[total] = t
            total += 1
            count += 1
        m.lane_n[lane] = count
    starts = n - k - k * skip                        # epochs drawn one by one up to T
    if starts < 1 or total < starts:
        m.cur[Src.LONG] = long_at
        return -2.0 if skip > 0 else -1.0
    last = _select(m.epochs, total, starts - 1)      # T: when the last GET starts
    if first >= last:
        m.cur[Src.LONG] = long_at
        return -2.0
    before = 0
    for i in range(total):
        if m.epochs[i] < last:
            before += 1
    tied = starts - before                           # lanes with an epoch at T that start one of the last GETs
    ms = 0.0
    for lane in range(k):
        t = m.lanes[lane]
        for i in range(m.lane_n[lane] + 1):
            t += m.draws[at + i]
            if t > last:
                break
            if t == last:
                if tied == 0:
                    break
                tied -= 1
        at += m.lane_n[lane] + 1
        if t > ms:
            ms = t
    m.cur[Src.GET] += used
    return ms


@model_function
def _from_table(m):
    """Whether a long read is drawn from its table: one is built, the GET profile is not a constant (whose sums
    are exact GET by GET) and `io.long_reads` is not `exact`."""
    return len(m.lr_n) > 0 and m.step[Src.GET] != 0 and not m.p.exact_reads


@model_function
def reads_ms(m, n, k):
    """n > 0 GETs, at most k at a time: their wall time. A long read (n > EXACT_MAX) serial or one GET a lane is
    one draw from its table (their sum; their max); any other read is drawn GET by GET (a constant GET profile too:
    its sums are exact), on lanes by the heap (`lanes_ms`)."""
    if n > EXACT_MAX and _from_table(m):
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
def gets_on_lanes_ms(m, j, n, k):
    """`gets_on_ms` for a log snapshot's reads on their own lanes: a long read on fewer lanes than GETs draws its
    exact makespan lane by lane (`_renewal_ms`), not GET by GET on the heap. Only the log's snapshot reads call it:
    the renewal's code, linked into every function up the call chain, lengthens each design's first compile (it
    took the default design's from 28.7 to 41.6 s of CPU when every read on lanes went through it)."""
    if 1 < k < n and n > EXACT_MAX and _from_table(m):
        ms = _renewal_ms(m, n, k)
        if ms >= 0.0:
            m.tx[j].gets += n
            return ms
    return gets_on_ms(m, j, n, k)


@model_function
def store_wait_ms(m, at, n):
    """A batch of n GETs sent together at `at` (a log snapshot's pass) to a store that serves GETs one at a time,
    `get_service_ms` (s) each (the provider's; 0: no queue): the first waits for the GETs sent before it to be
    served (the store's backlog then), each next one s more, so the last answer comes backlog + (n - 1) s later
    than it would alone. The store's backlog grows by n s. A batch books the store when its transaction's handler
    computes it, at most a few requests ahead of its sending: batches are served in that order."""
    s = m.p.get_service_ms
    if s == 0.0:
        return 0.0
    r = m.run[0]
    wait = r.store_free_ms - at
    if wait < 0.0:
        wait = 0.0
    r.store_free_ms = at + wait + n * s
    return wait + (n - 1) * s


@model_function
def gets_ms(m, j, n):
    """n > 0 GETs by transaction j, at most io.max_parallel at a time: their wall time."""
    return gets_on_ms(m, j, n, m.p.max_parallel)


@model_function
def list_ms(m, j, pages):
    """A LIST outside an effect point (of a log, a timeline), its pages one after another, each a GET's latency."""
    m.tx[j].lists += pages
    return reads_ms(m, pages, 1)


@model_function
def log_pages_ms(m, j):
    """A LIST of transaction j's log at an effect point lists from its newest checkpoint (Delta's listFrom): the
    entries since it, and the checkpoint, LIST_PAGE_KEYS keys a page. The pages before the last are read first
    (`list_ms`); the last, with the newest entries, is the effect point. With a checkpoint every < 1000 versions
    there is one page: nothing here. (The entries counted from the run's start, as the snapshot reads count them;
    `log_entries_at_start` are the cleanup's, older than any checkpoint.) On a file system both clients list the
    whole directory and filter it (HDFSLogStore's listStatus; object_store's list with no offset there): every
    entry and checkpoint in it."""
    ci = m.p.checkpoint_interval
    v = m.versions[m.tx[j].table]
    newest = (v // ci) * ci if ci > 0 else 0
    keys = v - newest + (1 if newest > 0 else 0)
    if m.p.file_system:
        keys = m.p.log_entries_at_start + v + (v // ci if ci > 0 else 0)
    if keys <= LIST_PAGE_KEYS or m.p.object_shape:
        return 0.0
    return list_ms(m, j, (keys - 1) // LIST_PAGE_KEYS)
