"""Random draws as the model consumes them: pre-drawn values per source, read through a cursor. The sources'
values lie end to end in one array (`Model.draws`; source s's from `draw_at[s]`, `draw_n[s]` of them): one array
instead of one per source keeps every compiled call's arguments, and so the model's compile, small.

The arrays are refilled between events (`sim.model.build.Run.refill`), so a handler never runs short: `needs`
says, before an event, which sources could not serve the largest event there can be now. The same stop serves
the arrays that grow with the run: the transaction slots (when none is free, finished transactions hand
out their records, and the slots double if that freed too few), the arrivals' drawn tables, operations and
runtimes, the conflict table, a throttled log's buckets and the long-read table (`sim.long_reads`).
"""
from ..long_reads import EXACT_MAX
from .jit import model_function
from .operations import ring_len
from .state import HIST_ROWS_PER_EVENT, LIST_PAGE_KEYS, N_SRC, LogCleanup, Need, Src

# a GET refill leaves room for at least this many events, and one is asked for before there is room for fewer:
# what one event may draw grows with the commits since the last stop, so without slack the engines would check
# `needs` before nearly every event (a refill is free of consequence: the draws are the same numbers)
GET_EVENTS = 16
# draws one event takes of any other source at most: a lock waiter that timed out and its design's next request
# draw one source twice; Hudi's commit PUTs its metadata-table files (hudi.METADATA_TABLE_PUTS) in one event
DRAWS_PER_EVENT = 8


@model_function
def take(m, s):
    """The next draw of source `s`; a constant source (step 0) repeats its value."""
    c = m.cur[s]
    m.cur[s] = c + m.step[s]
    return m.draws[m.draw_at[s] + c]


@model_function
def take_sum(m, s, n):
    """n requests of source `s` one after another: the sum of their next n draws, in order."""
    ms = 0.0
    for _ in range(n):
        ms += take(m, s)
    return ms


#: GET draws one event takes at most when each of its long reads is one draw: up to four reads of at most
#: EXACT_MAX GETs each (a prepare's validation, a log attempt's checks, LIST and update) and a few single GETs
TABULATED_GETS_PER_EVENT = 4 * EXACT_MAX + 8


@model_function
def max_gets_per_event(m):
    """GET draws one event may take: its GETs (`gets_in_event`), or, once its long reads are one draw each (the
    table built, no read that can queue on fewer lanes than it has GETs), at most TABULATED_GETS_PER_EVENT. A long
    read queued on k lanes draws at most 3 k more than its GETs (`sim.model.io._renewal_ms`)."""
    n = gets_in_event(m)
    if len(m.lr_n) == 0 or m.p.exact_reads or m.step[Src.GET] == 0:
        return n
    k = queued_lanes(m)
    if m.p.max_parallel > 1:                        # a validation, a log's checks may queue on lanes: GET by GET
        return n + 3 * k * _passes(m)
    if 0 < k < n:                                   # a log snapshot's read may queue on its lanes (once a pass)
        return n + 3 * k * _passes(m)
    return min(n, _tabulated_gets(m))


@model_function
def _passes(m):
    """How many times a log snapshot's read reads its entries (`commit.snapshot_passes`; 1 for any other design)."""
    return m.p.snapshot_passes if m.p.log else 1


@model_function
def _tabulated_gets(m):
    """GET draws one event takes at most once its long reads are one draw each: TABULATED_GETS_PER_EVENT, or for a
    log commit's post-commit work with more passes or a checkpoint of several GETs, its update's LIST, its rebuild's
    passes and the cleanup's LIST as reads of at most EXACT_MAX GETs, and its single GETs (the passes over its own
    entry, the hint, the rebuild's LIST and HEAD, the checkpoint's GETs)."""
    if not m.p.log:
        return TABULATED_GETS_PER_EVENT
    p = m.p.snapshot_passes
    return max(TABULATED_GETS_PER_EVENT, (p + 2) * EXACT_MAX + m.p.checkpoint_read_gets + p + 10)


@model_function
def queued_lanes(m):
    """The lanes of a log snapshot's reads (`commit.snapshot_max_parallel`), which draw a long read on fewer lanes
    than GETs lane by lane (`sim.model.io.gets_on_lanes_ms`); 0 for any other design, or one lane."""
    k = m.p.snapshot_max_parallel if m.p.log and not m.p.object_shape else 0
    return k if k > 1 else 0


@model_function
def epochs_needed(m):
    """Scratch a long read on lanes may fill now: its GETs and two epochs a lane (`sim.model.io._renewal_ms`)."""
    k = queued_lanes(m)
    return gets_in_event(m) + 2 * k if k > 0 else 0


@model_function
def _epochs_left(m):
    """Events before a long read on lanes could outgrow its scratch (`epochs_needed` grows by at most two an
    event, or `gets_growth`)."""
    if queued_lanes(m) == 0 or m.p.exact_reads or m.step[Src.GET] == 0:
        return 1 << 62
    return (len(m.epochs) - epochs_needed(m)) // max(2, gets_growth(m))


@model_function
def gets_in_event(m):
    """GETs one event may read: a prepare's metadata and manifest-list reads, its n - 1 validation reads, a
    metadata read after a failure (or a log's n entries to check); n is at most what a transaction in flight
    had yet to validate at the last stop (validate_max) plus the commits since, so it follows the transactions
    in flight, not the run's length. Or a log snapshot's checkpoint and entries: at most checkpoint_interval + 1,
    or with no checkpoints every entry of the table. Grows by at most one per event."""
    r = m.run[0]
    n = r.validate_max + r.seq - r.seq_at_stop
    if m.p.ops:                                      # a snapshot's manifest list and added manifest each
        n = 2 * n
    if m.p.log and not m.p.object_shape and not m.p.hudi:   # (Hudi reads no snapshot)
        ci = m.p.checkpoint_interval
        p = m.p.snapshot_passes                      # a snapshot's checkpoint GETs and its entries' passes
        snap = m.p.checkpoint_read_gets + p * ci if ci > 0 else p * r.seq
        if m.p.snapshot_update:                      # the checks' n GETs, a LIST and the update's passes
            n = (1 + p) * n + 1 + _pages(m)
        n = max(n, snap, _post_commit_gets(m))
        if m.p.file_system:                          # and a LIST of its whole directory (`io.log_pages_ms`)
            n += (m.p.log_entries_at_start + 2 * r.seq) // LIST_PAGE_KEYS + 1
    if m.p.tables_max > 1:                           # a commit over k tables: each one's manifest list and metadata
        n += 2 * m.p.tables_max
    return n + 4


@model_function
def _post_commit_gets(m):
    """GET draws of a log commit's post-commit work at most: a checkpoint rebuild's LIST, checkpoint and
    checkpoint_interval entries, and the cleanup's LIST pages (keys: the entries at the start and the run's)."""
    n = 0
    ci = m.p.checkpoint_interval
    p = m.p.snapshot_passes
    if m.p.checkpoint_rebuild and ci > 0:            # (with the hint, its GET and the checkpoint's HEAD)
        n += m.p.checkpoint_read_gets + p * ci + 1 + (2 if m.p.last_checkpoint_hint else 0)
    if m.p.post_commit_update:                       # a LIST from the newest checkpoint and its entry's passes
        n += 1 + _pages(m) + p
    if m.p.log_cleanup != LogCleanup.NONE:
        n += (m.p.log_entries_at_start + m.run[0].seq) // LIST_PAGE_KEYS + 1
    return n


@model_function
def _pages(m):
    """LIST pages before the last that a snapshot update's LIST may read (`sim.model.io.log_pages_ms`): the
    entries since the newest checkpoint, or with none every entry (all of the directory on a file system)."""
    ci = m.p.checkpoint_interval
    keys = ci + 1 if 0 < ci else m.run[0].seq
    if m.p.file_system:
        keys = m.p.log_entries_at_start + m.run[0].seq + (m.run[0].seq // ci if ci > 0 else 0)
    return keys // LIST_PAGE_KEYS


@model_function
def draws_per_event(m, s):
    """Draws of source s (not GET) one event may take: DRAWS_PER_EVENT, and for a long read's uniform also one a
    lane of the two long reads on lanes an event may have (`sim.model.io._renewal_ms`)."""
    if s == Src.LONG:
        return DRAWS_PER_EVENT + (1 + _passes(m)) * queued_lanes(m)
    if s == Src.HEAD and m.p.pyiceberg:              # PyIceberg's cleanup: 3 requests for each of 2 files an attempt
        return DRAWS_PER_EVENT + 6 * m.p.max_attempts
    return max(DRAWS_PER_EVENT, m.p.tables_max + 1)   # (a commit over k tables: a PUT or a DELETE each)


@model_function
def gets_for(m, n):
    """GETs that n events may draw at most (`max_gets_per_event` grows by at most `gets_growth` per event)."""
    return n * max_gets_per_event(m) + gets_growth(m) * (n * (n - 1) // 2)


@model_function
def gets_growth(m):
    """How much `gets_in_event` may grow in one event: 1, and with a log's passes (`commit.snapshot_passes`) or
    snapshot update, or operations' validations, more."""
    growth = 2 if m.p.ops else 1
    if m.p.log:
        growth = max(growth, m.p.snapshot_passes + (1 if m.p.snapshot_update else 0))
    return growth


@model_function
def _left(m, s):
    """Draws left in source s (a constant source never runs out)."""
    if m.step[s] == 0:
        return 1 << 62
    return m.draw_n[s] - m.cur[s]


@model_function
def _arrivals_left(m):
    """Arrivals that can start before no slot is free or the drawn tables run out (all, once arrivals ended, unless
    maintenance jobs still start transactions: then the slots free)."""
    r = m.run[0]
    if r.arrivals_done != 0:
        return r.free_slots if m.p.jobs > 0 else 1 << 62
    if m.p.trace:                                    # (a trace's rows are all there: none is drawn)
        return r.free_slots
    return min(r.free_slots, len(m.arrivals) - (r.drawn_next - r.arrivals_base))


@model_function
def _ring_left(m):
    """Events before a validation could read a commit older than its table's ring holds: it reads back at most
    validate_max commits from the last stop's versions, plus one per event since (`gets_in_event`'s bound)."""
    if not m.p.ops:
        return 1 << 62
    r = m.run[0]
    return ring_len(m) - (r.validate_max + r.seq - r.seq_at_stop) - 1


@model_function
def snapshots_left(m):
    """Events before a table could retain more snapshots than its ring of their times holds (`sim.model.growth`: one
    more per event at most)."""
    if not m.p.expiring:
        return 1 << 62
    return len(m.snap_ms) // len(m.tables) - m.run[0].snapshots_max - 1


@model_function
def _thr_left(m):
    """Events before a prepare could index `thr` past its end (n <= commits, one more per event at most); a
    table ending in 1.0 serves every larger n."""
    if not m.p.vo_conflicts or m.thr[len(m.thr) - 1] >= 1.0:
        return 1 << 62
    return len(m.thr) - m.run[0].seq - 1


@model_function
def _buckets_left(m):
    """Events before a throttled log's (or version files') next entry (the run.seq-th commit's) would have no
    bucket."""
    if not (m.p.log or m.p.version_files) or not m.p.throttle or m.p.log_store or m.p.lock:
        return 1 << 62
    return len(m.bk_prev) - m.run[0].seq


@model_function
def _long_reads_left(m):
    """Events before a read could be long (more than EXACT_MAX GETs) with its table not built yet (a read's GETs
    are at most `gets_in_event`, which grows by at most two per event)."""
    if len(m.lr_n) > 0 or m.step[Src.GET] == 0 or m.p.exact_reads:
        return 1 << 62
    return (EXACT_MAX - gets_in_event(m)) // max(2, gets_growth(m))


@model_function
def _hist_left(m):
    """Events before the history buffer could overflow."""
    if not m.p.history:
        return 1 << 62
    per = HIST_ROWS_PER_EVENT
    if m.p.tables_max > 1:   # a COMMIT over k tables: its CAS, k - 1 landed rows, k releases and grants, its end
        per = 3 * m.p.tables_max + 2
    if m.p.faults:           # ... and a faulted request's row
        per += 1
    return (len(m.hist) - m.run[0].hist_rows) // per


@model_function
def needs(m):
    """Bit mask of the sources (Src) and buffers (Need) to refill before the next event."""
    need = 0
    for s in range(N_SRC):
        if _left(m, s) < (gets_for(m, GET_EVENTS) if s == Src.GET else draws_per_event(m, s)):
            need |= 1 << s
    if _hist_left(m) < 1:
        need |= 1 << Need.HISTORY
    if _arrivals_left(m) < 1:
        need |= 1 << Need.TXN
    if _thr_left(m) < 1:
        need |= 1 << Need.THR
    if _ring_left(m) < 1:
        need |= 1 << Need.RING
    if snapshots_left(m) < 1:
        need |= 1 << Need.SNAPSHOTS
    if _buckets_left(m) < 1:
        need |= 1 << Need.BUCKETS
    if _long_reads_left(m) < 1:
        need |= 1 << Need.LONG_READS
    if _epochs_left(m) < 1:
        need |= 1 << Need.EPOCHS
    return need


@model_function
def events_before_refill(m):
    """How many events can certainly run before `needs` could be non-zero, so that an engine may skip the
    check until then (it costs about as much as a cheap event). One event takes at most DRAWS_PER_EVENT draws of
    each source but GET, at most `max_gets_per_event` GETs (which grows by at most one per event), at most
    HIST_ROWS_PER_EVENT history rows, one arrival and one commit."""
    n = min(_arrivals_left(m), _thr_left(m), _buckets_left(m), _hist_left(m), _long_reads_left(m),
            _epochs_left(m), _ring_left(m), snapshots_left(m))
    for s in range(N_SRC):
        if s != Src.GET:
            n = min(n, _left(m, s) // draws_per_event(m, s))
    if m.step[Src.GET] != 0:
        gets_left = _left(m, Src.GET)
        while n > 0 and gets_for(m, n) > gets_left:
            n //= 2
    return max(n - 1, 0)
