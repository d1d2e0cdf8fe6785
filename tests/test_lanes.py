"""The lanes of a parallel round of GETs: each GET takes the lane that frees first, in order. The heap in
`sim.model.io.lanes_ms` must give exactly the wall time of the direct scan over every lane."""
import numpy as np
from hypothesis import given, settings, strategies as st

from sim.model.io import lanes_ms


def scan_ms(draws, c0, s, n, k):
    """The definition, O(n k): every GET scans the lanes for the first that frees (lowest index on ties)."""
    lanes = [draws[c0 + s * i] for i in range(min(k, n))]
    for i in range(len(lanes), n):
        b = min(range(len(lanes)), key=lambda a: (lanes[a], a))
        lanes[b] += draws[c0 + s * i]
    return max(lanes) if k > 1 else sum(draws[c0 + s * i] for i in range(n))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 60), st.integers(1, 70), st.sampled_from([0, 1, 2, 3]), st.integers(0, 5),
       st.integers(0, 2**32 - 1), st.booleans())
def test_heap_lanes_equal_the_scan_bit_for_bit(n, k, s, c0, seed, ties):
    rng = np.random.default_rng(seed)
    draws = rng.lognormal(1.0, 0.6, size=c0 + max(s, 1) * n + 1)
    if ties:                                         # equal lane ends: which lane takes the GET must not matter
        draws = np.round(draws)
    lanes = np.zeros(k)
    assert lanes_ms(draws, c0, s, n, k, lanes) == scan_ms(draws, c0, s, n, k)
