"""The model's version, part of every sweep run's cache key (sim/sweep/store.py).

Bump MODEL_VERSION whenever the results of an existing configuration change: a model or engine change that is
not bit-identical (tests/test_goldens.py fails). A rerun of a sweep then recomputes its runs and says why,
instead of silently mixing results of two models. Changes that keep every existing result (a new key whose
default keeps the old behaviour, a faster engine with the same records) leave it alone.
"""

# 2: per-object mutation limits (gcp: 1 write/s) are on by default, so gcp results change; every other
#    existing configuration keeps its results (goldens)
# 3: a storage client gives a throttled request up (a count of resends or a deadline, then the transaction ends
#    aborted, reason `throttled`), and resends with its own backoff: by default Google's Java client's (file,
#    pointer, rest), object_store's for design log. Throttled results (gcp) change; every other configuration
#    keeps its results (goldens)
MODEL_VERSION = 3
