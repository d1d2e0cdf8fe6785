"""From a configuration to the arrays of one run (`Model`), and the random sources that keep them filled.

Every random source is its own stream (`sim.rng`). Sources are drawn in batches with the distribution objects
of `sim.latency` and `sim.workload`; the model reads them through cursors (`sim.model.draws`). When a source
could run short, the engine stops between two events and `Run.refill` keeps the unconsumed tail, appends fresh
draws from the same generator (numpy's float draws are concatenation-consistent, so batch sizes never change
the numbers) and rewinds the cursor; memory stays bounded whatever a run consumes. Arrivals are drawn the same
way, in chunks: their gaps, and each arrival's table (drawn with `integers`, always in batches of BATCH, so the
numbers are those of one long draw), operation and runtime. Nobody counts the arrivals up front: the gaps end
at the first `now + gap >= duration_ms`.

Memory is flat in the run's length: a transaction takes a free slot (a row of `tx_i`/`tx_f`) at its arrival and
keeps it until its record is handed out. When an arrival finds no free slot, the engine stops like for a refill;
every finished transaction hands its record to the run's record sink (`sim.sink`) and frees its slot, and if
that freed less than half of them, the slots double. So the slots track the transactions in flight, however
long one of them lives (runtimes are heavy-tailed: a transaction can outlive most of the run), and records reach
the sink in batches, each in id order but not in id order overall (`txn` says whose; `MemorySink` sorts). Arrays
indexed by a count of commits (the conflict table, a throttled log's buckets) grow by doubling at the same stops.
"""
from __future__ import annotations

import numpy as np

from ..config import Config
from ..latency import BATCH, LogNormal, latency_model
from ..rng import run_streams
from ..workload import IsValidatedOverwrite, inter_arrival_dist, runtime_dist, table_dist
from ..providers import load_provider
from .layout import (N_HF, N_HI, N_PF, N_PI, N_SF, N_SRC, N_ST, N_TF, N_TI, NEED_BUCKETS, NEED_HISTORY, NEED_THR,
                     NEED_TXN, O_UNFINISHED, PC_BASE, PC_DONE, PC_INIT, PC_L_BASE, PF_BURST,
                     PF_DURATION, PF_F, PF_G, PF_HI, PF_JIT_CAT, PF_JIT_TAB, PF_JIT_THR, PF_LO, PF_RATE_PER_MS,
                     PI_CKPT_INTERVAL, PI_CONFLICT, PI_HIST, PI_INLINED, PI_LOG, PI_MAX_ATTEMPTS, PI_MAX_PARALLEL,
                     PI_POL_CAT, PI_POL_TAB, PI_POL_THR, PI_READ_MD, PI_REFRESH_FIRST, PI_SCOPE_TABLE, PI_THROTTLE,
                     R_UNFINISHED, S_BACKOFF, S_CAS, S_CONFLICT, S_GAP, S_GET, S_PUT_CP, S_PUT_ML, S_PUT_TM, S_READ,
                     S_THROTTLE, SRC_STREAM, ST_ARR_BASE, ST_FREE, ST_HIST_N, ST_NEXT_TXN, ST_SEQ, ST_SEQ_STOP,
                     ST_VAL_MAX, TF_END, TF_RTEND,
                     TI_ISVO, TI_OUTCOME, TI_PC, TI_REASON, TI_TABLE, TI_TXN, TI_VALIDATED, Model)
from .draws import max_gets_per_event
from .retry import delay_table

THROTTLE_RESENDS = 64     # the resend delay table's length; later 429s in a row sleep its last (capped) delay

CHUNK = 1 << 20           # draws per refill of a source, at most (beyond what one event needs)
HIST_CHUNK = 1 << 20      # history rows per buffer
SLOTS = 1 << 14           # transaction slots at the start, at most (fewer for a run expected to be smaller)
ARRIVAL_CHUNK = 1 << 16   # arrivals' tables, operations and runtimes drawn per refill, at most
COUNT_CHUNK = 1 << 12     # first length of the arrays indexed by a count of commits
_ARRAY = {S_READ: "rd", S_CAS: "cs", S_GET: "gt", S_PUT_ML: "pm", S_PUT_TM: "pt", S_BACKOFF: "bo",
          S_CONFLICT: "cu", S_GAP: "gaps", S_PUT_CP: "pcp", S_THROTTLE: "th"}


class Uniform:
    """U(0, 1) draws (backoff jitter, real conflicts)."""
    is_constant = False

    def draw(self, rng, n):
        return rng.random(n)


class Source:
    """One random source: its distribution, its generator and a window of its draws (or its constant)."""

    def __init__(self, dist, rng, n0=0):
        self.dist = dist
        self.rng = rng
        self.const = bool(getattr(dist, "is_constant", False))
        if self.const:   # one draw, reused (step 0); the stream is never touched again
            self.values = np.ascontiguousarray(dist.draw(rng, 1), dtype=np.float64)
        else:
            self.values = self._draw(n0)

    @property
    def step(self) -> int:
        return 0 if self.const else 1

    def _draw(self, n: int) -> np.ndarray:
        n = max(BATCH, -(-n // BATCH) * BATCH)
        return np.ascontiguousarray(self.dist.draw(self.rng, n), dtype=np.float64)

    def refill(self, cursor: int, need: int) -> np.ndarray:
        """Values from `cursor` on, with at least `need` of them; the caller rewinds its cursor to 0."""
        if self.const:
            return self.values
        tail = self.values[cursor:]
        fresh = self._draw(max(need - len(tail), min(CHUNK, max(len(self.values), BATCH))))
        self.values = np.concatenate([tail, fresh])
        return self.values


def _blank_rows(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n free transaction slots: no transaction, nothing happened yet, the outcome unfinished, no runtime end
    nor end."""
    tx_i = np.zeros((n, N_TI), dtype=np.int64)
    tx_i[:, TI_TXN] = -1
    tx_i[:, TI_OUTCOME] = O_UNFINISHED
    tx_i[:, TI_REASON] = R_UNFINISHED
    tx_f = np.zeros((n, N_TF), dtype=np.float64)
    tx_f[:, TF_RTEND] = np.nan
    tx_f[:, TF_END] = np.nan
    return tx_i, tx_f


_BLANK_I, _BLANK_F = (r[0] for r in _blank_rows(1))


class Arrivals:
    """The arrivals' own draws, chunk by chunk: table, operation and runtime of each arrival in id order."""

    def __init__(self, w, gap_dist, rng):
        self.tc = table_dist(w, gap_dist)   # bursts may be aimed at one table
        self.op = IsValidatedOverwrite(w.fast_append_ratio)
        self.rt = runtime_dist(w)
        self.rng_table, self.rng_op, self.rng_rt = rng["table"], rng["operation"], rng["runtime"]
        self.rt_const = Source(self.rt, self.rng_rt).values[0] if getattr(self.rt, "is_constant", False) else None

    def draw(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The next n (a multiple of BATCH) arrivals' tables, operations and runtimes."""
        k = n // BATCH
        tables = np.concatenate([self.tc.draw(self.rng_table, BATCH) for _ in range(k)]).astype(np.int64)
        isvo = np.concatenate([self.op.draw(self.rng_op, BATCH) for _ in range(k)]).astype(np.int64)
        if self.rt_const is not None:
            runtimes = np.full(n, self.rt_const)
        else:
            runtimes = np.ascontiguousarray(self.rt.draw(self.rng_rt, n), dtype=np.float64)
        return tables, isvo, runtimes


class Run:
    """One replication of one configuration: its `Model` arrays and their sources. Engines drive `m`."""

    def __init__(self, cfg: Config, replication: int = 0, record_history: bool = False, sink=None,
                 slots: int | None = None):
        """`sink`: where finished transactions' records go (`sim.sink`; default: kept in memory). `slots`: the
        first number of transaction slots and length of the arrays indexed by a count of commits (tests force
        tiny ones)."""
        from ..sink import MemorySink
        self.cfg = cfg
        self.window = (cfg.warmup_ms, cfg.duration_ms - cfg.cooldown_ms)
        self.sink = MemorySink() if sink is None else sink
        rng = run_streams(cfg, replication)
        w = cfg.workload
        lat = latency_model(cfg)
        src: list = [None] * N_SRC

        duration = cfg.duration_ms
        ia = w.inter_arrival
        mean = ia.mean_ms if ia.distribution != "lognormal" else LogNormal(ia.median_ms, ia.sigma).mean_ms()
        # arrivals expected: a first guess of sizes, nothing more
        n_guess = int(min(duration / mean * 1.05, 1 << 40)) if mean > 0 else 1 << 40
        # (a bursty source generates its whole sequence at its first draw, then hands out gaps, then +inf)
        gap_src = Source(inter_arrival_dist(w, duration), rng["arrival"], min(n_guess + BATCH, CHUNK))
        src[S_GAP] = gap_src
        self.arrivals = Arrivals(w, gap_src.dist, rng)
        tables, isvo, runtimes = self.arrivals.draw(min(-(-(n_guess + 1) // BATCH) * BATCH, ARRIVAL_CHUNK))

        max_attempts = cfg.max_attempts
        pol_cat, jit_cat, bo_cat = delay_table(cfg.retry.catalog, max_attempts)
        pol_tab, jit_tab, bo_tab = delay_table(cfg.retry.table, max_attempts)
        p = w.vo_conflict_probability
        conflict = p > 0.0
        self.p_conflict = p
        thr = np.zeros(1, dtype=np.float64)
        if conflict:   # grown on demand (`_grow_thr`); the entries never depend on the table's length
            thr = self._thr_entries(0, min(n_guess + 2, COUNT_CHUNK) if slots is None else slots)

        cat = cfg.catalog
        log = cfg.commit.protocol == "log"
        prof = load_provider(cfg.storage.provider)
        # a per-object limit binds conditional writes to objects in the provider (not a service's rows)
        throttled = cfg.storage.throttle and cat.backend == "storage" and prof.mutation_rate_per_s is not None
        pol_thr, jit_thr, bo_thr = delay_table(cfg.storage.throttle_retry, THROTTLE_RESENDS - 2)
        pf = np.zeros(N_PF, dtype=np.float64)
        pf[PF_F] = cat.linearization_fraction
        pf[PF_G] = 1.0 - cat.linearization_fraction
        pf[PF_DURATION] = duration
        pf[PF_LO], pf[PF_HI] = self.window
        pf[PF_JIT_CAT] = jit_cat
        pf[PF_JIT_TAB] = jit_tab
        pf[PF_JIT_THR] = jit_thr
        if throttled:
            pf[PF_RATE_PER_MS] = prof.mutation_rate_per_s / 1000.0
            pf[PF_BURST] = prof.mutation_burst
        pi = np.zeros(N_PI, dtype=np.int64)
        pi[PI_INLINED] = int(cat.table_metadata_inlined)
        pi[PI_MAX_PARALLEL] = cfg.io.max_parallel
        pi[PI_MAX_ATTEMPTS] = max_attempts
        pi[PI_REFRESH_FIRST] = int(cfg.commit.first_attempt == "refresh")
        # inlined table metadata lives in the catalog: the refresh already read it
        pi[PI_READ_MD] = int(cfg.commit.metadata_read_on_failure and not cat.table_metadata_inlined)
        pi[PI_HIST] = int(record_history)
        pi[PI_POL_CAT] = pol_cat
        pi[PI_POL_TAB] = pol_tab
        pi[PI_CONFLICT] = int(conflict)
        pi[PI_SCOPE_TABLE] = int(cat.scope == "table")
        pi[PI_LOG] = int(log)
        pi[PI_THROTTLE] = int(throttled)
        pi[PI_CKPT_INTERVAL] = cfg.commit.checkpoint_interval or 0
        pi[PI_POL_THR] = pol_thr

        # first guesses of what the run consumes (at most CHUNK); `refill` draws more when they run short
        guess = {S_READ: 3 * n_guess, S_CAS: 2 * n_guess, S_GET: 4 * n_guess, S_PUT_ML: 2 * n_guess,
                 S_PUT_TM: 2 * n_guess,
                 S_BACKOFF: n_guess if (jit_cat or jit_tab) else 0, S_CONFLICT: n_guess if conflict else 0,
                 S_PUT_CP: n_guess // max(1, cfg.commit.checkpoint_interval or 0) if log else 0,
                 S_THROTTLE: n_guess if throttled else 0}
        dists = {S_READ: lat.catalog_read, S_CAS: lat.catalog_cas, S_GET: lat.get, S_PUT_ML: lat.put_manifest_list,
                 S_PUT_TM: lat.put_table_metadata, S_BACKOFF: Uniform(), S_CONFLICT: Uniform(),
                 S_PUT_CP: lat.put_checkpoint, S_THROTTLE: Uniform()}
        for s, dist in dists.items():
            src[s] = Source(dist, rng[SRC_STREAM[s]], min(guess[s], CHUNK))
        self.sources = src

        tx_i, tx_f = _blank_rows(slots if slots is not None else min(n_guess + 1, SLOTS))
        # history buffers, column-major; a full one is set aside (`hist_chunks`) and the run goes on in a fresh
        # one, so nothing is copied before the frame is built
        hcap = min(8 * n_guess + 64, HIST_CHUNK) if record_history else 0
        self.hist_chunks: list = []
        # buckets: the catalog object or each table's pointer or next log name; with a throttled log, every entry
        # (grown on demand, `_grow_buckets`)
        n_entries = (min(n_guess + 1, COUNT_CHUNK) if slots is None else slots) if log and throttled else 1
        n_buckets = w.num_tables + (n_entries if log and throttled else 0)
        self.m = Model(
            pf=pf, pi=pi, st=np.zeros(N_ST, dtype=np.int64), cur=np.zeros(N_SRC, dtype=np.int64),
            step=np.array([src[s].step for s in range(N_SRC)], dtype=np.int64),
            rd=src[S_READ].values, cs=src[S_CAS].values, gt=src[S_GET].values, pm=src[S_PUT_ML].values,
            pt=src[S_PUT_TM].values, bo=src[S_BACKOFF].values, cu=src[S_CONFLICT].values, gaps=gap_src.values,
            thr=thr, bo_cat=bo_cat, bo_tab=bo_tab, tables=tables, isvo=isvo, runtimes=runtimes,
            tx_i=tx_i, tx_f=tx_f, free=np.arange(len(tx_i) - 1, -1, -1, dtype=np.int64),
            versions=np.zeros(w.num_tables, dtype=np.int64),
            H_i=np.zeros((N_HI, hcap), dtype=np.int64), H_f=np.zeros((N_HF, hcap), dtype=np.float64),
            lanes=np.zeros(max(1, cfg.io.max_parallel), dtype=np.float64), sf=np.zeros(N_SF, dtype=np.float64),
            pcp=src[S_PUT_CP].values, th=src[S_THROTTLE].values, bo_thr=bo_thr,
            # every bucket starts full: a full burst, last updated at -inf
            bk_tokens=np.full(n_buckets, max(1.0, pf[PF_BURST]), dtype=np.float64),
            bk_last=np.full(n_buckets, -np.inf, dtype=np.float64),
            bk_head=np.full(w.num_tables, -1, dtype=np.int64),
            bk_prev=np.full(n_entries, -1, dtype=np.int64))
        self.m.st[ST_FREE] = len(tx_i)
        self.record_history = record_history
        self.end_ms = 0.0

    @property
    def n_txn(self) -> int:
        """Transactions that have arrived so far."""
        return int(self.m.st[ST_NEXT_TXN])

    def _thr_entries(self, lo: int, hi: int) -> np.ndarray:
        """thr[lo:hi]: 1 - (1 - p) ** n, in Python floats as ever."""
        p = self.p_conflict
        return np.array([1.0 - (1.0 - p) ** n for n in range(lo, hi)], dtype=np.float64)

    def refill(self, need: int) -> None:
        """Refill the sources in the `needs` mask (GET with room for what the next event may take, by the bound
        made fresh here), swap a full history buffer for a fresh one, and make room for the next arrival and the
        next commit."""
        m = self.m
        self._validation_bound(m)
        max_gets = int(max_gets_per_event(m))
        fresh = {}
        for s in range(N_SRC):
            if need & (1 << s):
                fresh[_ARRAY[s]] = self.sources[s].refill(int(m.cur[s]), max_gets if s == S_GET else 1)
                m.cur[s] = 0
        if need & (1 << NEED_HISTORY):
            self.hist_chunks.append((m.H_i, m.H_f, int(m.st[ST_HIST_N])))
            fresh["H_i"] = np.zeros((N_HI, HIST_CHUNK), dtype=np.int64)
            fresh["H_f"] = np.zeros((N_HF, HIST_CHUNK), dtype=np.float64)
            m.st[ST_HIST_N] = 0
        if need & (1 << NEED_TXN):
            fresh.update(self._make_room(m))
        if need & (1 << NEED_THR):
            n = len(m.thr)
            fresh["thr"] = np.concatenate([m.thr, self._thr_entries(n, 2 * n)])
        if need & (1 << NEED_BUCKETS):
            n = len(m.bk_prev)
            fresh["bk_tokens"] = np.concatenate([m.bk_tokens, np.full(n, max(1.0, m.pf[PF_BURST]))])
            fresh["bk_last"] = np.concatenate([m.bk_last, np.full(n, -np.inf)])
            fresh["bk_prev"] = np.concatenate([m.bk_prev, np.full(n, -1, dtype=np.int64)])
        self.m = m._replace(**fresh)

    @staticmethod
    def _validation_bound(m) -> None:
        """ST_VAL_MAX: the most snapshots a transaction in flight has yet to validate (v[t] - TI_VALIDATED),
        counting those that validate (a rewrite's VOs; every log writer) once they have read their base snapshot
        (the ones that have not will see only later commits); `max_gets_per_event` adds the commits since."""
        tx = m.tx_i
        pc = tx[:, TI_PC]
        live = (tx[:, TI_TXN] >= 0) & (pc != PC_DONE) & (pc != PC_INIT) & (pc != PC_BASE) & (pc != PC_L_BASE)
        if m.pi[PI_LOG] == 0:
            live &= tx[:, TI_ISVO] != 0
        val = m.versions[tx[live, TI_TABLE]] - tx[live, TI_VALIDATED]
        m.st[ST_VAL_MAX] = max(0, int(val.max())) if len(val) else 0
        m.st[ST_SEQ_STOP] = m.st[ST_SEQ]

    def _make_room(self, m) -> dict:
        """Room for the next arrival: with no slot free, finished transactions hand out their records (and the
        slots double if that freed less than half of them); drawn arrivals that ran out are drawn on."""
        fresh = {}
        st = m.st
        rows = m.tx_i.shape[0]
        if st[ST_FREE] == 0:
            self.flush(m, finished_only=True)
            if st[ST_FREE] < rows // 2 + 1:
                fresh.update(self._grown(m, 2 * rows))
        a = int(st[ST_NEXT_TXN] - st[ST_ARR_BASE])
        if a >= len(m.tables):
            tables, isvo, runtimes = self.arrivals.draw(ARRIVAL_CHUNK)
            fresh["tables"] = np.concatenate([m.tables[a:], tables])
            fresh["isvo"] = np.concatenate([m.isvo[a:], isvo])
            fresh["runtimes"] = np.concatenate([m.runtimes[a:], runtimes])
            st[ST_ARR_BASE] += a
        return fresh

    @staticmethod
    def _grown(m, rows: int) -> dict:
        """The slots, `rows` of them now: the old ones where they were (engines hold slots), the new ones free."""
        old = m.tx_i.shape[0]
        tx_i, tx_f = _blank_rows(rows)
        tx_i[:old], tx_f[:old] = m.tx_i, m.tx_f
        free = np.empty(rows, dtype=np.int64)
        n = int(m.st[ST_FREE])
        free[:n] = m.free[:n]
        free[n:n + rows - old] = np.arange(rows - 1, old - 1, -1)
        m.st[ST_FREE] = n + rows - old
        return {"tx_i": tx_i, "tx_f": tx_f, "free": free}

    def flush(self, m, finished_only: bool) -> None:
        """Hand the records of the finished transactions (or, at the end, of all) to the sink, in id order, and
        free their slots."""
        from ..records import record_rows
        txn = m.tx_i[:, TI_TXN]
        used = txn >= 0
        if finished_only:
            used &= m.tx_i[:, TI_PC] == PC_DONE
        slots = np.flatnonzero(used)
        if not len(slots):
            return
        slots = slots[np.argsort(txn[slots], kind="stable")]
        self.sink.add(record_rows(m.tx_i[slots], m.tx_f[slots]))
        m.tx_i[slots], m.tx_f[slots] = _BLANK_I, _BLANK_F
        n = int(m.st[ST_FREE])
        m.free[n:n + len(slots)] = np.sort(slots)[::-1]   # the lowest slot is taken first
        m.st[ST_FREE] = n + len(slots)

    def finish(self, end_ms: float) -> None:
        self.end_ms = float(end_ms)
        m = self.m
        self.flush(m, finished_only=False)
        if self.record_history:
            self.hist_chunks.append((m.H_i, m.H_f, int(m.st[ST_HIST_N])))
        self.sink.close()
