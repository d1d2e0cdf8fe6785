"""A storage client's resends of a request answered 429 (docs/MODEL.md, "Storage clients' resend policies").

Each client sleeps, resends, and gives the request up after a count of resends or a deadline counted from its
first send; the request then fails, and the commit with it. `object_store` (delta-rs), `google_java` (Iceberg's
GCSFileIO), `gax` (Google's Java client before its own backoff) and `azure_java` (Azure's Java v12 client) run
their sources' backoff; the retry policies of `sim.model.retry` (today's `exponential` and the others) run their
table, with no limit unless one is given.
"""
import numpy as np

from .draws import take
from .jit import model_function
from .retry import delay_ms
from .state import Policy, Src

GIVE_UP = -1.0   # the client's answer for a request it gives up


@model_function
def _object_store(m, j, k):
    """object_store's `Backoff::next` (client/backoff.rs): the first sleep is init_backoff, each later one
    U(init_backoff, base x the previous one), capped at max_backoff."""
    p = m.p
    tx = m.tx[j]
    d = p.throttle_base_ms
    if k > 1:
        hi = p.throttle_factor * tx.resend_delay_ms
        d = d + (hi - d) * take(m, Src.THROTTLE)
        if d > p.throttle_max_ms:
            d = p.throttle_max_ms
    tx.resend_delay_ms = d
    return d


@model_function
def _google_java(m, j, k, elapsed_ms):
    """java-storage's `Backoff.nextBackoff`: the first sleep's baseline is the initial delay, each later one's the
    multiplier x the previous sleep; the sleep is the baseline plus U(0, baseline), capped at the maximum delay
    and at the time left before the deadline."""
    p = m.p
    tx = m.tx[j]
    d = p.throttle_base_ms
    if k > 1:
        d = p.throttle_factor * tx.resend_delay_ms
    d = d + d * take(m, Src.THROTTLE)
    if d > p.throttle_max_ms:
        d = p.throttle_max_ms
    left = p.throttle_deadline_ms - elapsed_ms
    if d > left:
        d = left
    tx.resend_delay_ms = d
    return d


@model_function
def _aws_dynamodb(m, k):
    """The AWS SDK for Java v1's throttled-request backoff (SDKDefaultBackoffStrategy, equal jitter): the k-th
    resend sleeps c/2 + U(0, c/2), c = min(base x factor^(k-1), max)."""
    p = m.p
    c = p.throttle_base_ms
    for _ in range(k - 1):                           # products, not a power: the same float in both engines
        c *= p.throttle_factor
        if c >= p.throttle_max_ms:
            break
    if c > p.throttle_max_ms:
        c = p.throttle_max_ms
    return 0.5 * c + 0.5 * c * take(m, Src.THROTTLE)


@model_function
def _gax(m, j, k):
    """gax's `ExponentialRetryAlgorithm.createNextAttempt`: the k-th resend's delay is the initial delay, then the
    multiplier x the previous delay (before jitter, whole ms), capped at the maximum; the sleep is
    `nextLong(delay)`, uniform over the whole ms in [0, delay)."""
    p = m.p
    tx = m.tx[j]
    d = p.throttle_base_ms
    if k > 1:
        d = np.floor(p.throttle_factor * tx.resend_delay_ms)
        if d > p.throttle_max_ms:
            d = p.throttle_max_ms
    tx.resend_delay_ms = d
    return np.floor(d * take(m, Src.THROTTLE))


@model_function
def _azure_java(m, k):
    """Azure's Java v12 `RequestRetryOptions.calculateDelayInMs` (exponential): the k-th resend (try k + 1)
    sleeps (factor^k - 1) x the retry delay, capped at the maximum; no jitter."""
    p = m.p
    c = 1.0
    for _ in range(k):                               # products, not a power: the same float in both engines
        c *= p.throttle_factor
    d = (c - 1.0) * p.throttle_base_ms
    if d > p.throttle_max_ms:
        d = p.throttle_max_ms
    return d


@model_function
def next_delay_ms(m, j, k, elapsed_ms):
    """The sleep before resending transaction j's request, answered its k-th 429 in a row `elapsed_ms` after its
    first send; GIVE_UP once k - 1 resends reached the limit, or past the deadline (object_store: elapsed >
    deadline; Google's client: elapsed >= deadline)."""
    p = m.p
    kind = p.policy_throttle
    if k > p.throttle_max_resends:
        return GIVE_UP
    if kind == Policy.GOOGLE_JAVA:
        if elapsed_ms >= p.throttle_deadline_ms:
            return GIVE_UP
        return _google_java(m, j, k, elapsed_ms)
    if kind == Policy.GAX:                           # shouldRetry: no time left once the sleep is added
        d = _gax(m, j, k)
        if elapsed_ms + d >= p.throttle_deadline_ms:
            return GIVE_UP
        return d
    if kind == Policy.AZURE_JAVA:                    # no deadline: only tryTimeout, per try
        return _azure_java(m, k)
    if elapsed_ms > p.throttle_deadline_ms:
        return GIVE_UP
    if kind == Policy.OBJECT_STORE:
        return _object_store(m, j, k)
    if kind == Policy.AWS_DYNAMODB:
        return _aws_dynamodb(m, k)
    return delay_ms(m, kind, p.jitter_throttle, m.bo_thr, k, Src.THROTTLE)
