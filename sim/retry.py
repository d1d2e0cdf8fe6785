"""Retry policies, one per conflict class (catalog conflict, table conflict)."""
from __future__ import annotations

from .config import RetryPolicy


def exponential_delay_ms(base_ms: float, factor: float, max_ms: float, k: int) -> float:
    """min(base * factor^(k-1), max) before jitter; a power too large for a float is past the cap anyway."""
    try:
        return min(base_ms * factor ** (k - 1), max_ms)
    except OverflowError:
        return max_ms


class Backoff:
    """Delay before the k-th retry of one conflict class (k = 1, 2, ...); jitter draws come from `uniform`."""
    __slots__ = ("kind", "delay_ms", "base_ms", "factor", "max_ms", "jitter", "_uniform")

    def __init__(self, policy: RetryPolicy, uniform):
        self.kind = policy.policy
        self.delay_ms = policy.delay_ms or 0.0
        self.base_ms = policy.base_ms
        self.factor = policy.factor
        self.max_ms = policy.max_ms
        self.jitter = policy.jitter or 0.0
        self._uniform = uniform

    def __call__(self, k: int) -> float:
        if self.kind == "immediate":
            return 0.0
        if self.kind == "fixed":
            return self.delay_ms
        delay = exponential_delay_ms(self.base_ms, self.factor, self.max_ms, k)
        if self.jitter:
            delay *= 1.0 + self.jitter * self._uniform()
        return delay
