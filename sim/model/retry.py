"""Retry policies (docs/MODEL.md, "Retry policies"): the sleep before the k-th retry of a conflict class.

Delays before jitter are tabulated per k in Python (`delay_table`), so no libm power can differ between the
interpreted and the compiled engine; jitter is one U(0, 1) draw per exponential sleep.
"""
import numpy as np

from .draws import take
from .jit import model_function
from .state import Policy, Src

CLIENTS = {"object_store": Policy.OBJECT_STORE, "google_java": Policy.GOOGLE_JAVA,
           "aws_dynamodb": Policy.AWS_DYNAMODB, "gax": Policy.GAX, "azure_java": Policy.AZURE_JAVA}


def exponential_delay_ms(base_ms: float, factor: float, max_ms: float, k: int) -> float:
    """min(base * factor^(k-1), max) before jitter; a power too large for a float is past the cap anyway."""
    try:
        return min(base_ms * factor ** (k - 1), max_ms)
    except OverflowError:
        return max_ms


def delay_table(policy, max_attempts: int) -> tuple[int, float, np.ndarray]:
    """(kind, jitter, delay before jitter for k = 0 .. max_attempts + 1) of one policy (a `RetryPolicy`), cut
    where its delays stop changing (`delay_ms` reads the last entry past the end): Delta Spark's 10,000,000
    attempts need no table of that length."""
    n = max_attempts + 2
    if policy.policy == "immediate" or policy.policy in CLIENTS:   # a storage client's backoff has no table
        return CLIENTS.get(policy.policy, Policy.IMMEDIATE), 0.0, np.zeros(min(n, 2), dtype=np.float64)
    if policy.policy == "fixed":
        return Policy.FIXED, 0.0, np.full(min(n, 2), policy.delay_ms or 0.0, dtype=np.float64)
    linear = policy.policy == "linear"
    tab = [0.0]
    for k in range(1, n):
        tab.append(min(policy.base_ms * k, policy.max_ms) if linear else
                   exponential_delay_ms(policy.base_ms, policy.factor, policy.max_ms, k))
        if k >= 2 and tab[k] == tab[k - 1]:      # capped (or factor 1): constant from here on
            break
    kind = Policy.LINEAR if linear else Policy.EXPONENTIAL
    return kind, float(policy.jitter or 0.0), np.array(tab, dtype=np.float64)


@model_function
def delay_ms(m, kind, jitter, table, k, source):
    """Sleep before the k-th retry: fixed, or min(base * factor^(k-1), max) * (1 + jitter * U), or (linear)
    min(base * k, max) + jitter * base * U, U the next draw of `source`; past the table's end, its last entry."""
    if k >= len(table):
        k = len(table) - 1
    delay = table[k]
    if kind == Policy.EXPONENTIAL and jitter != 0.0:
        delay *= 1.0 + jitter * take(m, source)
    elif kind == Policy.LINEAR and jitter != 0.0:
        delay += jitter * table[1] * take(m, source)
    return delay


@model_function
def conflict_delay(m, j, moved):
    """A client's failed commit attempt: count the conflict in its class (table: v[t] moved since the prepare;
    else catalog) and return the class's retry sleep, for the k-th conflict of the class (`retry.count_by:
    attempt`: the k-th failed attempt, DuckLake's `retry_backoff^i`)."""
    tx = m.tx[j]
    if moved:
        k = tx.table_conflicts + 1
        tx.table_conflicts = k
        if m.p.retry_by_attempt:
            k += tx.catalog_conflicts
        return delay_ms(m, m.p.policy_table, m.p.jitter_table, m.bo_tab, k, Src.BACKOFF)
    k = tx.catalog_conflicts + 1
    tx.catalog_conflicts = k
    if m.p.retry_by_attempt:
        k += tx.table_conflicts
    return delay_ms(m, m.p.policy_catalog, m.p.jitter_catalog, m.bo_cat, k, Src.BACKOFF)
