"""PyIceberg's client commit loop (`commit.client: pyiceberg`; docs/model/pyiceberg.md), the parts where it differs
from Iceberg's Java client (`sim.model.iceberg`, which calls these): PyIceberg 0.12's `Transaction.commit_transaction`
and fast append (apache/iceberg-python@30730987 pyiceberg/table/__init__.py:1081-1225,
table/update/snapshot.py:229-460).

- No refresh before the first attempt: its requirement is the base its job loaded (`Table.append` starts from the
  Table's metadata in memory). A load through SqlCatalog reads metadata.json too (catalog/sql.py:224-242,
  `catalog.read_answer_ms`); SeaweedFS's REST server answers its load from the table's entry.
- An attempt's prepare (its snapshot producer's `_commit`): the client's own time, then the parent's manifest list
  read in parallel with the new manifest's write (a PUT, then a HEAD for its length), then the manifest list's PUT.
- SqlCatalog's `commit_table` (catalog/sql.py:478-566) loads the table (the re-read, `commit.reread_before_cas`)
  and its metadata.json, checks the requirement (a moved table fails there, nothing written), creates the new
  metadata.json (PyArrow checks the name first: a HEAD answered 404 and a LIST), then swaps the row.
- A failed attempt (CommitFailedException) is not followed by a read: the client sleeps its retry policy's delay,
  refreshes (a load) and prepares again (a new manifest and manifest list; the data file is kept), every time.
- After a success it deletes the failed attempts' manifests and manifest lists; after a final failure every
  attempt's (`_cleanup_uncommitted`, `_clean_all_uncommitted`): each file a HEAD, a DELETE and the PUT of an empty
  directory marker (PyArrowFileIO on pyarrow's S3FileSystem), one after another, inside the call.
"""
from . import growth, history
from .draws import take, take_sum
from .jit import model_function
from .retry import conflict_delay
from .state import PC, Src
from .transaction import next_read

FILES_PER_ATTEMPT = 2    # an attempt's manifest and manifest list
REQUESTS_PER_DELETE = 3  # PyArrowFileIO.delete on S3: HEAD, DELETE, PUT of the parent's directory marker


@model_function
def work_ms(m, j, v):
    """The client's own time for transaction j's attempt based on table version v (`commit.client_work`): its line in
    the version times a lognormal factor of median 1 (a constant 1 with sigma 0), kept for its commit call."""
    w = (m.p.work_base_ms + m.p.work_per_version_ms * v) * take(m, Src.WORK)
    m.tx[j].work_ms = w
    return w


@model_function
def prepare_ms(m, j, now, v):
    """The attempt's snapshot producer on table version v: the client's work (less the share it spends in its
    commit call), then the parent's manifest list (none before the table's first snapshot) read beside the manifest's
    PUT and HEAD, then the manifest list's PUT. Returns its time."""
    tx = m.tx[j]
    t = tx.table
    tx.prepared = v
    w = work_ms(m, j, v)
    if m.p.reread_before_cas:
        w -= m.p.work_commit_share * w
    manifest = take(m, Src.PUT_ML) + take(m, Src.HEAD)
    tx.puts += 1
    tx.gets += 1
    if v > 0 or m.tables[t].snapshots > 0:
        parent = growth.get_list_ms(m, t)
        tx.gets += 1
        tx.manifest_lists_read += 1
        if parent > manifest:
            manifest = parent
    tx.puts += 1
    cost = w + manifest + growth.put_list_ms(m, j)
    if history.on(m):
        history.prepare(m, now, j, t, v, -1, -1)
    return cost


@model_function
def in_commit_ms(m, j):
    """SqlCatalog's commit_table after its load: the client's share of its work there (parsing, checking, building
    the new metadata)."""
    return m.p.work_commit_share * m.tx[j].work_ms


@model_function
def write_metadata_ms(m, j, now):
    """The new metadata.json, created with overwrite off: PyArrow's check of the name (a HEAD answered 404, then a
    LIST of it as a directory), then its write."""
    tx = m.tx[j]
    tx.gets += 1
    tx.lists += 1
    tx.puts += 1
    return take(m, Src.HEAD) + take(m, Src.LIST) + growth.put_metadata_ms(m, j, now)


@model_function
def retry(m, j, pending):
    """A failed attempt, answered `pending` ms from now: the retry policy's sleep, then a refresh (no read first)."""
    tx = m.tx[j]
    delay = conflict_delay(m, j, True)
    tx.backoff_ms += delay
    return next_read(m, j, PC.BACKOFF_READ, pending + delay)


@model_function
def cleanup_ms(m, j, committed, start_ms):
    """The files the transaction's attempts wrote and no commit keeps, deleted before the call returns, from
    `start_ms` on: the failed attempts' after a success, every attempt's after a final failure. Returns their time
    (0 for Iceberg's Java client, which the model leaves them to). On a store with a marker lock, each marker PUT
    may wait its polls (`marker_wait_ms`)."""
    if not m.p.pyiceberg:
        return 0.0
    tx = m.tx[j]
    files = FILES_PER_ATTEMPT * (tx.attempts - 1 if committed else tx.attempts)
    if files <= 0:
        return 0.0
    tx.deletes += files
    if m.p.marker_window_ms <= 0.0:
        return take_sum(m, Src.HEAD, REQUESTS_PER_DELETE * files)
    t = start_ms
    for _ in range(files):
        t += take(m, Src.HEAD) + take(m, Src.HEAD)      # the file's HEAD, its DELETE
        put = take(m, Src.HEAD)                         # the marker's PUT, at the store half way through
        t += marker_wait_ms(m, tx.table, t + 0.5 * put) + put
    return t - start_ms


@model_function
def call_end_ms(m, j, committed, answer_ms):
    """When the call returns whose last answer came at `answer_ms`: after PyIceberg's cleanup (`cleanup_ms`)."""
    return answer_ms + cleanup_ms(m, j, committed, answer_ms)


@model_function
def marker_wait_ms(m, t, arrive_ms):
    """A PUT of table t's `metadata/` marker reaching the store at `arrive_ms`, on a store that writes a marker
    under a lock per marker and polls a lock it finds held (SeaweedFS 4.48: `withObjectWriteLock`, a filer lock
    asked again after a 1 s sleep): it waits a poll while another of the table's marker PUTs is closer in time than
    the window (the provider's `marker_lock_window_ms`, measured as the area under the late share of two PUTs against
    their offset), then is registered in the table's ring. Of two PUTs computed out of time order the later computed
    waits, where the later to arrive would: one of the two, as in the store. Returns the wait."""
    window = m.p.marker_window_ms
    k = len(m.markers) // len(m.tables)
    base = t * k
    wait = 0.0
    i = 0
    while i < k:
        if abs(arrive_ms + wait - m.markers[base + i]) < window:
            wait += m.p.marker_poll_ms
            i = 0
        else:
            i += 1
    tb = m.tables[t]
    m.markers[base + tb.marker_puts % k] = arrive_ms + wait
    tb.marker_puts += 1
    return wait


# what PyIceberg's client owns (its effect points are Iceberg's client's: `sim.model.iceberg` routes them)
OWNS = dict(effect_points=(), fields=("work_ms",),
            params=("pyiceberg", "load_get", "work_base_ms", "work_per_version_ms", "work_commit_share",
                    "marker_window_ms", "marker_poll_ms"),
            sources=("LIST", "WORK"))
