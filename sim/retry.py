"""Retry policies, one per conflict class (catalog conflict, table conflict)."""
from __future__ import annotations

from .config import RetryPolicy


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
        delay = min(self.base_ms * self.factor ** (k - 1), self.max_ms)
        if self.jitter:
            delay *= 1.0 + self.jitter * self._uniform()
        return delay
