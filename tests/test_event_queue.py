"""The fast engine's event queue (`sim.engines.queue`): whatever the pushes, pops and growths, it pops in the order
of one binary heap on (time, key), exactly: near and far times, ties in time, times past the ring and infinity."""
from __future__ import annotations

import heapq
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from sim.engines import queue

RING_MS = queue.QUANTUM_MS * queue.BUCKETS

# a delay: within a bucket, a few buckets ahead, around the ring's reach, past it, or never
delays = st.one_of(
    st.floats(0.0, queue.QUANTUM_MS),
    st.floats(0.0, 50 * queue.QUANTUM_MS),
    st.floats(RING_MS - 3 * queue.QUANTUM_MS, RING_MS + 3 * queue.QUANTUM_MS),
    st.floats(0.0, 5 * RING_MS),
    st.sampled_from([0.0, queue.QUANTUM_MS, RING_MS, math.inf]),
)
# a step: push one event (its delay from the last popped time), or pop one, or grow the queue
steps = st.lists(st.one_of(delays.map(lambda d: ("push", d)), st.just(("pop", 0.0)), st.just(("grow", 0.0))),
                 max_size=300)


@settings(max_examples=150, deadline=None)
@given(steps=steps, cap=st.integers(1, 8))
def test_pops_in_the_single_heaps_order(steps, cap):
    h_t, h_k, h_w, qs = queue.new(cap)
    hot, now, key = 0, 0.0, 0
    ref = []
    for kind, delay in steps:
        if kind == "grow" or (kind == "push" and queue.room(qs, hot) == 0):
            cap *= 2
            h_t, h_k, h_w, qs = queue.grown(h_t, h_k, h_w, qs, hot, cap)
        if kind == "push":
            t = now + delay
            hot = queue.push(h_t, h_k, h_w, qs, hot, t, key, key % 7)
            heapq.heappush(ref, (t, key, key % 7))
            key += 1
        elif kind == "pop" and ref:
            hot = queue.ready(h_t, h_k, h_w, qs, hot)
            assert (h_t[0], h_k[0], h_w[0]) == heapq.heappop(ref)
            now = h_t[0]
            hot = queue.pop(h_t, h_k, h_w, hot)
        assert queue.pending(qs, hot) == len(ref)
    while ref:                                    # drain: the rest in order, then nothing
        hot = queue.ready(h_t, h_k, h_w, qs, hot)
        assert (h_t[0], h_k[0], h_w[0]) == heapq.heappop(ref)
        hot = queue.pop(h_t, h_k, h_w, hot)
    assert hot == 0 and queue.move(h_t, h_k, h_w, qs) == 0


def test_far_events_wait_in_buckets_not_in_the_heap():
    """Events further than the current bucket cost no heap entry: ten thousand runtimes minutes away (a
    lognormal of median 3 min, as 4c's), and once the first bucket with events is current the hot heap holds its
    events only."""
    h_t, h_k, h_w, qs = queue.new(20_000)
    times = np.random.default_rng(0).lognormal(math.log(180_000.0), 1.5, 10_000)
    hot = 0
    for key, t in enumerate(times):
        hot = queue.push(h_t, h_k, h_w, qs, hot, float(t), key, key)
    assert hot == 0 and queue.pending(qs, hot) == 10_000
    hot = queue.move(h_t, h_k, h_w, qs)
    first = np.floor(times / queue.QUANTUM_MS) == math.floor(times.min() / queue.QUANTUM_MS)
    assert hot == int(first.sum()) and h_t[0] == times.min()
