"""From a configuration to the arrays of one run (`Model`), kept filled and sized between events.

A run's parameters come from `params`, its random sources from `sources`, its transaction slots from `slots`.
When the engine stops between two events (`sim.model.draws.needs`), `Run.refill` draws on the sources that ran
short, swaps a full history buffer for a fresh one, makes room for the next arrival, grows the arrays indexed
by a count of commits (the conflict table, a throttled log's buckets) by doubling, and builds the GET profile's
long-read table once a read can be long (`sim.long_reads`). Memory is flat in the run's
length: what grows follows the transactions in flight.
"""
from __future__ import annotations

import numpy as np

from ..config import Config, jobs_of, run_window
from ..latency import BATCH
from .. import long_reads
from ..rng import run_streams
from . import growth
from . import slots as slots_mod
from .designs import design_of
from .draws import GET_EVENTS, draws_per_event, epochs_needed, gets_for
from .params import Delays, params_of
from .sources import ARRIVAL_CHUNK, CHUNK, GROWTH, Arrivals, conflict_table, expected_arrivals, sources_of
from .capacity import CHECK_LOCK_MUTEX, NEXT_LOCK_ID, ROW_LOCKS
from .log_store import READ_BUCKET
from .state import (ARRIVAL, BUCKET, HIST, JOB, LK, N_SRC, OPS, POOL, RUN, TABLE, TRACE, WR, Model, Need, Op, Params,
                    Src)
from ..trace.replay import Replay, replay
from ..trace.schema import MODEL_OPS, OPERATIONS

HIST_CHUNK = 1 << 20      # history rows per buffer
SLOTS = 1 << 14           # transaction slots at the start, at most (fewer for a run expected to be smaller)
COUNT_CHUNK = 1 << 12     # first length of the arrays indexed by a count of commits
MARKERS = 64              # a table's ring of its marker PUTs' arrivals (`sim.model.pyiceberg.marker_wait_ms`):
                          # more than the PUTs registered ahead of the clock (those of the cleanups under way)
RING = 1 << 8             # first length of each table's ring of commits (operations: `sim.model.operations`)
# what a refill reads of the transaction slots, unless it makes room for arrivals (an engine that keeps its own
# view of the slots copies these back before any refill): the fields `slots.most_to_validate` reads
VALIDATION_FIELDS = slots_mod.VALIDATION_FIELDS


class Run:
    """One replication of one configuration: its `Model` arrays and their sources. Engines drive `m`."""

    def __init__(self, cfg: Config, replication: int, record_history: bool, sink, slots: int | None = None):
        """`sink`: where finished transactions' records go (`sim.sink`). `slots`: the first number of transaction
        slots and length of the arrays indexed by a count of commits (tests force tiny ones)."""
        self.cfg = cfg
        self.window = run_window(cfg)[1:]
        self.sink = sink
        self.record_history = record_history
        self.end_ms = 0.0
        self.hist_chunks: list = []   # full history buffers set aside: nothing is copied before the frame
        rng = run_streams(cfg, replication)
        n_guess = expected_arrivals(cfg)
        p, delays = params_of(cfg, record_history)
        self.design = design_of(p)   # which model design runs (`sim.model.designs`): its handlers, its loop
        self.sources = sources_of(cfg, p, rng, n_guess)
        self.drawn = Drawn([s.values for s in self.sources])   # every source's values, end to end (`Model.draws`)
        # the arrivals' draws, or a trace's rows (`sim.trace.replay`), which draw only their runtimes and partitions
        self.arrivals = None if p.trace else Arrivals(cfg, self.sources[Src.GAP].dist, rng)   # bursts may aim
        self.replay = replay(cfg, rng["runtime"], rng["partitions"]) if p.trace else None   # ... at a table
        self.p_conflict = cfg.workload.vo_conflict_probability
        self.m = self._model(cfg, p, delays, n_guess, slots)

    def _model(self, cfg: Config, p: Params, delays: Delays, n_guess: int, slots: int | None) -> Model:
        counted = min(n_guess + 1, COUNT_CHUNK) if slots is None else slots
        n_slots = min(n_guess + 1, SLOTS) if slots is None else slots
        thr_len = min(n_guess + 2, COUNT_CHUNK) if slots is None else slots
        if self.arrivals is None:   # (a trace: its rows, `Model.trace`)
            drawn, more = np.zeros(1, dtype=ARRIVAL), np.zeros(0, dtype=np.int64)
        else:
            drawn, more = _drawn(*self.arrivals.draw(min(-(-(n_guess + 1) // BATCH) * BATCH, ARRIVAL_CHUNK)))
        n_tables = cfg.workload.num_tables
        # a throttled log (or version files) keeps a bucket per entry (version file) name; version files also
        # one per table's version hint, after the next names (sim.model.throttle)
        # (a DynamoDB store: one bucket; a locked design: its lock objects', the tables' buckets)
        per_name = (p.log or p.version_files) and p.throttle and not p.log_store and not p.lock
        n_entries = counted if per_name else 1
        n_buckets = n_tables + (n_tables if p.version_files and p.throttle else 0) + (n_entries if per_name else 0)
        if p.log_store:   # its table's write capacity (bucket 0) and read capacity (READ_BUCKET)
            n_buckets = max(n_buckets, READ_BUCKET + 1)
        tx = slots_mod.blank(n_slots)
        run = np.zeros(1, dtype=RUN)
        run["free_slots"] = n_slots
        run["writers_active"] = p.writers
        run["snapshots_max"] = cfg.metadata.snapshots_at_start
        run["wake"] = run["timer"] = -1
        n_locks = n_tables if p.lock and p.lock_per_table else 1
        lanes = max(1, cfg.io.max_parallel, p.snapshot_max_parallel)
        src = self.sources
        return Model(
            p=p, run=run, tx=tx, free=np.arange(n_slots - 1, -1, -1, dtype=np.int64),
            versions=np.zeros(n_tables, dtype=np.int64),
            hist=np.zeros(min(8 * n_guess + 64, HIST_CHUNK) if self.record_history else 0, dtype=HIST),
            **self.drawn.arrays(), cur=np.zeros(N_SRC, dtype=np.int64),
            step=np.array([s.step for s in src], dtype=np.int64),
            arrivals=drawn, arr_more=more,
            mt_table=np.zeros(n_slots * p.tables_max, dtype=np.int64),
            mt_base=np.zeros(n_slots * p.tables_max, dtype=np.int64),
            # grown on demand (`refill`); the entries never depend on the table's length
            thr=conflict_table(self.p_conflict, 0, thr_len) if p.vo_conflicts else np.zeros(1),
            bo_cat=delays.catalog, bo_tab=delays.table, bo_thr=delays.throttle,
            lanes=np.zeros(lanes, dtype=np.float64), lane_n=np.zeros(lanes, dtype=np.int64),
            epochs=np.zeros(0, dtype=np.float64),
            # every bucket starts full: a full burst, last updated at -inf
            bk=_buckets(n_buckets, p),
            bk_head=np.full(n_tables, -1, dtype=np.int64),
            bk_prev=np.full(n_entries, -1, dtype=np.int64),
            wr=_writers(p, self.replay), bo_srv=delays.server,
            hints=np.zeros(n_tables, dtype=np.int64), bo_lock=delays.lock,
            lk=_free_locks(n_locks), pl=_pools(cfg, p),
            lr=np.zeros(0, dtype=np.float64), lr_n=np.zeros(0, dtype=np.int64),   # built once a read can be long
            ring_op=np.zeros(n_tables * (min(counted, RING) if p.ops else 1), dtype=np.int64),
            ring_parts=np.zeros(n_tables * (min(counted, RING) if p.ops else 1), dtype=np.int64),
            jobs=_jobs(cfg), tables=_tables(cfg), snap_ms=_snapshot_times(cfg, p), trace=_trace_rows(self.replay),
            markers=np.full(n_tables * (MARKERS if p.marker_window_ms > 0.0 else 1), -np.inf))

    @property
    def n_txn(self) -> int:
        """Transactions that have arrived so far."""
        return int(self.m.run[0]["next_txn"])

    def refill(self, need: int, now_ms: float = 0.0) -> None:
        """Refill the sources in the `needs` mask (GET with room for what the next event may take, by the bound
        made fresh here), swap a full history buffer for a fresh one, and make room for the next arrival and the
        next commit. `now_ms`: the run's time, or a little before it (sizes the draws, `Source.refill`)."""
        m = self.m
        share_left = self._share_left(now_ms)
        self._validation_bound(m)
        view = m._replace(run=m.run.view(np.recarray))   # model functions read the run's row by attribute
        gets = int(gets_for(view, GET_EVENTS))
        fresh = {}
        if need & ((1 << N_SRC) - 1):
            for s in range(N_SRC):
                if need & (1 << s):
                    least = gets if s == Src.GET else GET_EVENTS * int(draws_per_event(view, s))
                    self.drawn.put(s, self.sources[s].refill(int(m.cur[s]), least, share_left))
                    m.cur[s] = 0
            fresh.update(self.drawn.arrays())
        if need & (1 << Need.HISTORY):
            self.hist_chunks.append((m.hist, int(m.run[0]["hist_rows"])))
            fresh["hist"] = np.zeros(HIST_CHUNK, dtype=HIST)
            m.run[0]["hist_rows"] = 0
        if need & (1 << Need.TXN):
            fresh.update(self._make_room(m))
        if need & (1 << Need.THR):
            n = len(m.thr)
            fresh["thr"] = np.concatenate([m.thr, conflict_table(self.p_conflict, n, 2 * n)])
        if need & (1 << Need.LONG_READS):
            counts, flat = long_reads.table(self.sources[Src.GET].dist)   # (cached: copies, the run's own)
            fresh["lr_n"], fresh["lr"] = counts.copy(), flat.copy()
        if need & (1 << Need.EPOCHS):   # room for twice what a read may need now (`draws.epochs_needed`)
            fresh["epochs"] = np.zeros(2 * int(epochs_needed(view)))
        if need & (1 << Need.RING):
            fresh["ring_op"], fresh["ring_parts"] = _grown_ring(m)
        if need & (1 << Need.SNAPSHOTS):
            fresh["snap_ms"] = _grown_snapshot_times(m)
        if need & (1 << Need.BUCKETS):
            n = len(m.bk_prev)
            fresh["bk"] = np.concatenate([m.bk, _full_buckets(n, m.p.mutation_burst)])
            fresh["bk_prev"] = np.concatenate([m.bk_prev, np.full(n, -1, dtype=np.int64)])
        self.m = m._replace(**fresh)

    def _share_left(self, now_ms: float) -> float | None:
        """The run's time to come over its time so far, to its arrivals' end (None at its start). Past that end a
        run drains what is in flight, at a far lower rate: an overloaded run reaches its drain limit, yet projecting
        to that limit drew a third more than 4c's heaviest s3 run used (18.0 M draws against 13.4 M; 14.1 M
        projecting to the arrivals' end), the draws past it sized by `sources.LEAST_SHARE` instead."""
        if now_ms <= 0:
            return None
        return max(run_window(self.cfg)[0] - now_ms, 0.0) / now_ms

    @staticmethod
    def _validation_bound(m) -> None:
        """run.validate_max: the most snapshots a transaction in flight has yet to validate (v[t] - validated),
        counting those that validate (a rewrite's VOs; every log writer) once they have read their base snapshot
        (the ones that have not will see only later commits); `gets_in_event` adds the commits since."""
        most = slots_mod.most_to_validate(m.tx, m.versions, bool(m.p.log))
        if m.p.partial:                              # a run in progress: its batches validate from its start
            runs = m.wr[m.p.writers:]
            running = runs["batch"] >= 0
            val = m.versions[m.jobs["table"][running]] - runs["run_version"][running]
            most = max(most, int(val.max()) if len(val) else 0)
        r = m.run[0]
        r["validate_max"] = most
        r["seq_at_stop"] = r["seq"]

    def _make_room(self, m) -> dict:
        """Room for the next arrival: with no slot free, finished transactions hand out their records (and the
        slots double if that freed less than half of them); drawn arrivals that ran out are drawn on."""
        fresh = {}
        r = m.run[0]
        rows = len(m.tx)
        if r["free_slots"] == 0:
            slots_mod.flush(m, self.sink, finished_only=True)
            if r["free_slots"] < rows // 2 + 1:
                fresh.update(slots_mod.grown(m, 2 * rows))
        a = int(r["drawn_next"] - r["arrivals_base"])
        if a >= len(m.arrivals):
            drawn, more = _drawn(*self.arrivals.draw(ARRIVAL_CHUNK))
            fresh["arrivals"] = np.concatenate([m.arrivals[a:], drawn])
            fresh["arr_more"] = np.concatenate([m.arr_more[a * (m.p.tables_max - 1):], more])
            r["arrivals_base"] += a
        return fresh

    def trace_waiting(self) -> np.ndarray:
        """Per table: a trace's rows arriving in the window that had not started when the run ended (their writer
        still busy: `sim.model.trace`)."""
        m = self.m
        rows = np.concatenate([np.arange(a, b) for a, b in zip(m.wr["trace_row"][:m.p.writers],
                                                                m.wr["trace_end"][:m.p.writers])] + [np.zeros(0, int)])
        t = m.trace[rows]
        lo, hi = self.window
        inside = (t["arrival_ms"] >= lo) & (t["arrival_ms"] < hi)
        return np.bincount(t["table"][inside], minlength=len(m.versions))

    def finish(self, end_ms: float) -> None:
        self.end_ms = float(end_ms)
        m = self.m
        slots_mod.flush(m, self.sink, finished_only=False)
        if self.record_history:
            self.hist_chunks.append((m.hist, int(m.run[0]["hist_rows"])))
        self.sink.close()


class Drawn:
    """The sources' values end to end in one array (`Model.draws`: source s's `draw_n[s]` values from `draw_at[s]`),
    each source in a segment with room to spare, so that a refill writes its own segment only (a heavy run refills
    hundreds of times; copying every source's values each time was a fifth of its time); a source that outgrows its
    segment has every segment laid out again, its own with twice the room and a whole refill's more (a refill draws
    8 times what the source held, up to CHUNK: room for only twice had the heaviest 4c run lay its draws out again 9
    times, 81 ms of its 1.15 s). A segment starts with room for its first refill: without it every run laid its draws
    out again at its first refills (2.4 lay-outs a run over a seventh of 4c, 1.1 with it). Room is never zeroed:
    a source's values are read up to its `draw_n` only."""

    def __init__(self, values: list):
        self.n = np.array([len(v) for v in values], dtype=np.int64)
        self.room = self.n + np.minimum(GROWTH * self.n, CHUNK)   # room for its first refill
        self._lay_out(values)

    def _lay_out(self, values: list) -> None:
        self.at = np.zeros(len(values), dtype=np.int64)
        np.cumsum(self.room[:-1], out=self.at[1:])
        self.draws = np.empty(int(self.room.sum()), dtype=np.float64)
        for s, v in enumerate(values):
            self.draws[self.at[s]:self.at[s] + len(v)] = v
            self.n[s] = len(v)

    def put(self, s: int, values: np.ndarray) -> None:
        """Source s's values are now `values`."""
        if len(values) <= self.room[s]:
            self.draws[self.at[s]:self.at[s] + len(values)] = values
            self.n[s] = len(values)
            return
        keep = [self.draws[self.at[i]:self.at[i] + self.n[i]] for i in range(len(self.n))]   # (views: the old
        keep[s] = values                                                                      # array lives on in them)
        self.room[s] = 2 * len(values) + CHUNK
        self._lay_out(keep)

    def arrays(self) -> dict:
        """`Model`'s fields: new array objects (an engine's view of the draws is remade when its array is new)."""
        return {"draws": self.draws[:], "draw_at": self.at.copy(), "draw_n": self.n.copy()}


def _free_locks(n: int) -> np.ndarray:
    """n locks, each free, with no one queued and no expiry."""
    lk = np.zeros(n, dtype=LK)
    lk["holder"] = lk["head"] = lk["tail"] = lk["ghost_txn"] = lk["ghost_table"] = -1
    lk["expires_ms"] = np.inf
    return lk


def _pools(cfg: Config, p: Params) -> np.ndarray:
    """A server's database (`sim.model.capacity`): its pool, its read pool (none: 0 connections), then with row
    locks one per table, each free; no one queued. HMS (design hive): row NEXT_LOCK_ID is its NEXT_LOCK_ID row,
    row CHECK_LOCK_MUTEX Hive 3's checkLock mutex. A store that serves conditional writes to one object one at a
    time: one queue per object from OBJECT_QUEUES on, each free."""
    srv = cfg.catalog.server
    rows = (p.row_locks or p.row_hold or p.object_queue or (p.server and p.tables_max > 1)   # (a JDBC transaction's)
            or p.rt_hold)    # a commit on database round trips that holds its row to its COMMIT
    pl = np.zeros(ROW_LOCKS + (cfg.workload.num_tables if rows else 0), dtype=POOL)
    pl["head"] = pl["tail"] = pl["holder"] = -1
    if p.server:
        pl["free"][:ROW_LOCKS] = srv.pool_connections or 0, srv.read_pool_connections or 0   # (local steps: none)
    pl["free"][ROW_LOCKS:] = 1
    if p.hms_row_share > 0.0:   # HMS: its one NEXT_LOCK_ID row, a pool of one
        pl["free"][NEXT_LOCK_ID] = 1
    if p.hms_mutex_share > 0.0:   # HMS, Hive 3: its checkLock mutex, a pool of one
        pl["free"][CHECK_LOCK_MUTEX] = 1
    return pl


def _drawn(tables, ops, parts, runtimes, ntables, more) -> tuple[np.ndarray, np.ndarray]:
    """Arrivals drawn ahead as ARRIVAL rows, and their other tables (`Model.arr_more`)."""
    out = np.empty(len(tables), dtype=ARRIVAL)
    out["table"], out["op"], out["parts"], out["runtime_ms"], out["ntables"] = tables, ops, parts, runtimes, ntables
    return out, more


def _jobs(cfg: Config) -> np.ndarray:
    """One JOB row per maintenance job and table, job by job (`sim.model.jobs`)."""
    rows = [(getattr(Op, name.upper()), t, job.every_ms, job.median_ms, job.sigma, job.partitions or 0,
             job.groups if job.partial_progress else 0, job.max_commits, job.threads)
            for name, job in jobs_of(cfg) for t in range(cfg.workload.num_tables)]
    return np.array(rows, dtype=JOB)


def _tables(cfg: Config) -> np.ndarray:
    """One TABLE row per table, of the age the config starts it at (`sim.model.growth`)."""
    md = cfg.metadata
    tb = np.zeros(cfg.workload.num_tables, dtype=TABLE)
    n = md.snapshots_at_start
    merge = md.manifest_merge_min_count
    tb["snapshots"] = tb["total"] = tb["versions"] = n
    tb["manifests"] = n if not merge else (n - 1) % (merge - 1) + 1 if n else 0   # (a merge leaves one)
    return tb


def _snapshot_times(cfg: Config, p: Params) -> np.ndarray:
    """With an expiry: each table's ring of its snapshots' commit times, its start snapshots' filled in."""
    n_tables = cfg.workload.num_tables
    if not p.expiring:
        return np.zeros(n_tables, dtype=np.float64)
    n = cfg.metadata.snapshots_at_start
    Q = max(RING, 1 << int(n + RING).bit_length())
    ring = np.zeros((n_tables, Q), dtype=np.float64)
    ring[:, :n] = growth.initial_times(n, cfg.metadata.age_at_start_ms)
    return ring.ravel()


def _grown_snapshot_times(m) -> np.ndarray:
    """Each table's ring of snapshot times twice as long, its retained snapshots' times where they belong in it."""
    return _doubled(m.snap_ms, m.tables["total"], m.tables["snapshots"])


def _grown_ring(m) -> tuple[np.ndarray, np.ndarray]:
    """Each table's ring of commits twice as long, the last R commits of each where they belong in it
    (`sim.model.operations`: table t's version v at t * R + (v - 1) % R)."""
    R = len(m.ring_op) // len(m.versions)
    kept = np.minimum(m.versions, R)
    return _doubled(m.ring_op, m.versions, kept), _doubled(m.ring_parts, m.versions, kept)


def _doubled(ring: np.ndarray, newest, kept) -> np.ndarray:
    """A flat ring of per-table rows (table t's entry k at t * R + (k - 1) % R) twice as long: each table's entries
    newest[t] - kept[t] + 1 .. newest[t] where they belong in it."""
    n = len(newest)
    R = len(ring) // n
    old, new = ring.reshape(n, R), np.zeros((n, 2 * R), dtype=ring.dtype)
    for t in range(n):
        k = np.arange(int(newest[t]) - int(kept[t]) + 1, int(newest[t]) + 1)
        new[t, (k - 1) % (2 * R)] = old[t, (k - 1) % R]
    return new.ravel()


def _writers(p: Params, rows: Replay | None) -> np.ndarray:
    """One row per writer, then per maintenance job and table (one blank row if none), its client's bucket
    full; a trace's writers with their rows (`Replay.starts`: each named writer's, then those of no writer)."""
    wr = np.zeros(max(1, p.starters), dtype=WR)
    wr["client_tokens"], wr["client_last_ms"] = p.client_burst, -np.inf
    wr["batch"], wr["again_ms"], wr["inline_table"] = -1, -1.0, -1
    if rows is not None:
        wr["trace_row"][:p.writers], wr["trace_end"][:p.writers] = rows.starts[:-1], rows.starts[1:]
    return wr


def _trace_rows(rows: Replay | None) -> np.ndarray:
    """A trace's rows (`Model.trace`, `sim.model.trace`), the model's codes for their operations; none without."""
    if rows is None:
        return np.zeros(0, dtype=TRACE)
    out = np.empty(len(rows.arrival_ms), dtype=TRACE)
    codes = np.array([OPS.index(MODEL_OPS[op]) for op in OPERATIONS], dtype=np.int64)
    out["arrival_ms"], out["table"], out["op"] = rows.arrival_ms, rows.table, codes[rows.operation]
    out["parts"], out["runtime_ms"] = rows.parts, rows.runtime_ms
    return out


def _buckets(n: int, p: Params) -> np.ndarray:
    """The run's token buckets, each full: the mutation limit's, and a DynamoDB log store's read capacity."""
    bk = _full_buckets(n, p.mutation_burst)
    if p.log_store:
        bk[READ_BUCKET] = _full_buckets(1, p.read_burst)[0]
    return bk


def _full_buckets(n: int, burst: float) -> np.ndarray:
    """n token buckets, each full (a whole burst, at least one token), last updated at -inf."""
    bk = np.empty(n, dtype=BUCKET)
    bk["tokens"], bk["last_ms"] = max(1.0, burst), -np.inf
    bk["busy_until_ms"], bk["busy_slot"], bk["busy_next_ms"], bk["empty_until_ms"] = -np.inf, -1, -np.inf, -np.inf
    return bk
