"""Metadata that grows with the table's age (docs/MODEL.md, "Metadata that grows"; `metadata.growth`).

An Iceberg table's metadata.json holds every retained snapshot, a snapshot-log entry each, and the last
`metadata_log_max` metadata-log entries, and is rewritten whole by every commit; its manifest list holds one entry
per live manifest. Per table (`Model.tables`): the snapshots retained, the metadata versions written, the live
manifests. Sizes (our formula over Iceberg's fields, its constants from the FSx for Lustre post: docs/MODEL.md,
"Sources"): metadata.json = base_bytes + snapshots x (snapshot_bytes + snapshot_log_bytes) + min(versions,
metadata_log_max) x metadata_log_bytes; the manifest list = list_base_bytes + manifests x manifest_entry_bytes.

What a size costs: a PUT's draw is the profile's at `io.*_bytes` (its median base + ms_per_mib x size), so a PUT of
s bytes is that draw with its lognormal part scaled by median(s) / median(io size): the same law as a profile built
at s. A GET's profile has no size term: a GET of s bytes adds (s - io size) x the PUT's ms per byte when s is
larger (`transfer_ms_per_mib` overrides the slope; no public GET-by-size measurement).

Commits change the state at their effect point (`landed`): a snapshot (any operation but an expiry and a schema
change) adds one, and one manifest (merged into one once `manifest_merge_min_count` are live, Java's MergeAppend);
a compaction or a manifest rewrite leaves one manifest; every commit writes a metadata version. An expiry keeps the
snapshots committed within its `max_age_ms` (at least one): their commit times are kept per table in a ring
(`Model.snap_ms`, grown between events), only when an expiry job runs; with one, and growth off, the snapshots
are still counted, for the validations an expiry can break (`history_gap`).
"""
from .draws import take
from .jit import model_function
from .operations import snapshot_of
from .state import Op, Src


@model_function
def metadata_bytes(m, t):
    """Table t's metadata.json size now."""
    tb = m.tables[t]
    p = m.p
    return (p.md_base_bytes + tb.snapshots * (p.md_snapshot_bytes + p.md_snapshot_log_bytes)
            + min(tb.versions, p.md_log_max) * p.md_log_bytes)


@model_function
def list_bytes(m, t):
    """Table t's manifest list size now."""
    return m.p.ml_base_bytes + m.tables[t].manifests * m.p.ml_entry_bytes


@model_function
def _put_ms(m, src, size, at_size):
    """A PUT of `size` bytes from source `src`, whose draws are the profile's at `at_size` bytes."""
    p = m.p
    d = take(m, src)
    scale = (p.put_base_ms + size * p.put_ms_per_byte) / (p.put_base_ms + at_size * p.put_ms_per_byte)
    return p.put_fixed_ms + (d - p.put_fixed_ms) * scale


@model_function
def _get_ms(m, size, at_size):
    """A GET of `size` bytes: a GET draw, plus the transfer of what it has above `at_size`."""
    d = take(m, Src.GET)
    if size > at_size:
        d += (size - at_size) * m.p.get_ms_per_byte
    return d


@model_function
def put_metadata_ms(m, j, now):
    """Transaction j's PUT now of its table's new metadata.json (its size: the table's with its commit in it)."""
    if not m.p.growth:
        return take(m, Src.PUT_TM)
    tx = m.tx[j]
    size = _new_size(m, tx.table, tx.op, now)
    tx.metadata_bytes = size
    return _put_ms(m, Src.PUT_TM, size, m.p.tm_bytes)


@model_function
def _new_size(m, t, op, now):
    """The metadata.json a commit of `op` to table t writes now: a snapshot and its log entry more (an expiry's:
    the snapshots it removes fewer; a schema change's: neither), and a metadata-log entry."""
    p = m.p
    tb = m.tables[t]
    size = metadata_bytes(m, t)
    if tb.versions >= p.md_log_max:                  # the oldest metadata-log entry falls off
        size -= p.md_log_bytes
    size += p.md_log_bytes
    if op == Op.EXPIRE_SNAPSHOTS:
        return size - (tb.snapshots - _kept(m, t, now)) * (p.md_snapshot_bytes + p.md_snapshot_log_bytes)
    if not snapshot_of(op):
        return size
    return size + p.md_snapshot_bytes + p.md_snapshot_log_bytes


@model_function
def put_list_ms(m, j):
    """Transaction j's PUT of its new manifest list (the live manifests and its own)."""
    if not m.p.growth:
        return take(m, Src.PUT_ML)
    return _put_ms(m, Src.PUT_ML, list_bytes(m, m.tx[j].table) + m.p.ml_entry_bytes, m.p.ml_bytes)


@model_function
def get_metadata_ms(m, t):
    """A GET of table t's metadata.json."""
    if not m.p.growth:
        return take(m, Src.GET)
    return _get_ms(m, metadata_bytes(m, t), m.p.tm_bytes)


@model_function
def get_list_ms(m, t):
    """A GET of table t's current manifest list."""
    if not m.p.growth:
        return take(m, Src.GET)
    return _get_ms(m, list_bytes(m, t), m.p.ml_bytes)


@model_function
def landed(m, j, t, now):
    """Transaction j's commit to table t took effect now: its snapshot, manifests, metadata version; an expiry
    keeps the snapshots younger than its max age. Kept with growth, or with an expiry job (whose removals can break
    a validation's history: `history_gap`)."""
    if not m.p.growth and not m.p.expiring:
        return
    tb = m.tables[t]
    op = m.tx[j].op
    tb.versions += 1
    if op == Op.EXPIRE_SNAPSHOTS:
        tb.snapshots = _kept(m, t, now)
        return
    if not snapshot_of(op):
        return
    tb.snapshots += 1
    tb.total += 1
    if m.p.expiring:
        Q = len(m.snap_ms) // len(m.tables)
        m.snap_ms[t * Q + (tb.total - 1) % Q] = now
        r = m.run[0]
        r.snapshots_max = max(r.snapshots_max, tb.snapshots)
    if op == Op.COMPACTION or op == Op.REWRITE_MANIFESTS:
        tb.manifests = 1
    else:
        tb.manifests += 1
        if 0 < m.p.merge_min_count <= tb.manifests:
            tb.manifests = 1


@model_function
def history_gap(m, j):
    """Whether an expiry removed the snapshot committed right after transaction j's starting snapshot, so that its
    validation cannot walk from the current snapshot back to its start: Iceberg's "Cannot determine history between
    starting snapshot ... and the last known ancestor" (MergingSnapshotProducer.validationHistory, a
    ValidationException). The expired snapshots are a table's oldest."""
    tx = m.tx[j]
    tb = m.tables[tx.table]
    return tb.total > tx.start_snapshots and tb.total - tb.snapshots > tx.start_snapshots


@model_function
def _kept(m, t, now):
    """Table t's snapshots an expiry now keeps: those committed at or after now - max age, at least one (all of
    them when no expiry job keeps their times)."""
    tb = m.tables[t]
    if not m.p.expiring:
        return tb.snapshots
    Q = len(m.snap_ms) // len(m.tables)
    cutoff = now - m.p.expire_max_age_ms
    n = tb.snapshots
    while n > 1 and m.snap_ms[t * Q + (tb.total - n) % Q] < cutoff:
        n -= 1
    return n


def initial_times(n: int, age_ms: float) -> list:
    """The commit times of a table's n snapshots at the start, evenly spread over the age before 0 (the last at 0)."""
    if n == 0:
        return []
    step = age_ms / n
    return [-(n - 1 - k) * step for k in range(n)]


# what metadata growth owns
OWNS = dict(effect_points=(), fields=("metadata_bytes", "start_snapshots"),
            params=("growth", "expiring", "md_base_bytes", "md_snapshot_bytes", "md_snapshot_log_bytes", "md_log_bytes",
                    "md_log_max", "ml_base_bytes", "ml_entry_bytes", "merge_min_count", "expire_max_age_ms",
                    "tm_bytes", "ml_bytes", "put_fixed_ms", "put_base_ms", "put_ms_per_byte", "get_ms_per_byte"),
            sources=())
