"""From a configuration to the arrays of one run (`Model`), and the random sources that keep them filled.

Every random source is its own stream (`sim.rng`). Sources are drawn in batches with the distribution objects
of `sim.latency` and `sim.workload`; the model reads them through cursors (`sim.model.draws`). When a source
could run short, the engine stops between two events and `Run.refill` keeps the unconsumed tail, appends fresh
draws from the same generator (numpy's float draws are concatenation-consistent, so batch sizes never change
the numbers) and rewinds the cursor; memory stays bounded whatever a run consumes. Arrivals are known before
the run: the gaps end at the first `now + gap >= duration_ms`, so the transactions are counted first and their
table, operation and runtime drawn up front (the table source, drawn with `integers`, in batches of BATCH).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import Config
from ..latency import BATCH, LogNormal, latency_model
from ..rng import run_streams
from ..workload import IsValidatedOverwrite, inter_arrival_dist, runtime_dist, table_dist
from ..providers import load_provider
from .layout import (N_HF, N_HI, N_PF, N_PI, N_SF, N_SRC, N_ST, N_TF, N_TI, NEED_HISTORY, O_UNFINISHED, PF_BURST,
                     PF_DURATION, PF_F, PF_G, PF_HI, PF_JIT_CAT, PF_JIT_TAB, PF_JIT_THR, PF_LO, PF_RATE_PER_MS,
                     PI_CKPT_INTERVAL, PI_CONFLICT, PI_HIST, PI_INLINED, PI_LOG, PI_MAX_ATTEMPTS, PI_MAX_PARALLEL,
                     PI_POL_CAT, PI_POL_TAB, PI_POL_THR, PI_READ_MD, PI_REFRESH_FIRST, PI_SCOPE_TABLE, PI_THROTTLE,
                     R_UNFINISHED, S_BACKOFF, S_CAS, S_CONFLICT, S_GAP, S_GET, S_PUT_CP, S_PUT_ML, S_PUT_TM, S_READ,
                     S_THROTTLE, SRC_STREAM, ST_HIST_N, TF_END, TF_RTEND, TI_OUTCOME, TI_REASON, Model)
from .retry import delay_table

THROTTLE_RESENDS = 64     # the resend delay table's length; later 429s in a row sleep its last (capped) delay

CHUNK = 1 << 20           # draws per refill of a source, at most (beyond what one event needs)
HIST_CHUNK = 1 << 20      # history rows per buffer
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


@njit(cache=True)
def _count_arrivals(gaps, step, duration):
    """Arrivals these gaps make (`now + gap >= duration` ends them), or -1 if the gaps run out first."""
    now = 0.0
    c = 0
    n = 0
    while True:
        if step != 0 and c >= gaps.shape[0]:
            return -1
        gap = gaps[c]
        c += step
        if now + gap >= duration:
            return n
        now = now + gap
        n += 1


class Run:
    """One replication of one configuration: its `Model` arrays and their sources. Engines drive `m`."""

    def __init__(self, cfg: Config, replication: int = 0, record_history: bool = False):
        self.cfg = cfg
        self.window = (cfg.warmup_ms, cfg.duration_ms - cfg.cooldown_ms)
        rng = run_streams(cfg, replication)
        w = cfg.workload
        lat = latency_model(cfg)
        src: list = [None] * N_SRC

        duration = cfg.duration_ms
        ia = w.inter_arrival
        mean = ia.mean_ms if ia.distribution != "lognormal" else LogNormal(ia.median_ms, ia.sigma).mean_ms()
        # (a bursty source generates its whole sequence at its first draw, then hands out gaps, then +inf)
        gap_src = Source(inter_arrival_dist(w, duration), rng["arrival"], int(duration / mean * 1.05) + BATCH)
        while True:
            n_txn = _count_arrivals(gap_src.values, gap_src.step, duration)
            if n_txn >= 0:
                break
            gap_src.refill(0, 2 * len(gap_src.values))
        src[S_GAP] = gap_src
        tables = np.empty(0, dtype=np.int64)
        isvo = np.empty(0, dtype=np.int64)
        runtimes = np.empty(0, dtype=np.float64)
        if n_txn > 0:
            k = -(-n_txn // BATCH)
            tc = table_dist(w, gap_src.dist)   # bursts may be aimed at one table
            tables = np.concatenate([tc.draw(rng["table"], BATCH) for _ in range(k)]).astype(np.int64)
            op = IsValidatedOverwrite(w.fast_append_ratio)
            isvo = np.concatenate([op.draw(rng["operation"], BATCH) for _ in range(k)]).astype(np.int64)
            rt = Source(runtime_dist(w), rng["runtime"], n_txn)
            runtimes = np.full(n_txn, rt.values[0]) if rt.const else rt.values

        max_attempts = cfg.max_attempts
        pol_cat, jit_cat, bo_cat = delay_table(cfg.retry.catalog, max_attempts)
        pol_tab, jit_tab, bo_tab = delay_table(cfg.retry.table, max_attempts)
        p = w.vo_conflict_probability
        conflict = p > 0.0
        thr = np.zeros(1, dtype=np.float64)
        if conflict and isvo.any():
            # 1 - (1 - p) ** n for every n a prepare can see (n <= number of commits <= transactions)
            thr = np.array([1.0 - (1.0 - p) ** n for n in range(n_txn + 2)], dtype=np.float64)

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
        guess = {S_READ: 3 * n_txn, S_CAS: 2 * n_txn, S_GET: 4 * n_txn, S_PUT_ML: 2 * n_txn, S_PUT_TM: 2 * n_txn,
                 S_BACKOFF: n_txn if (jit_cat or jit_tab) else 0, S_CONFLICT: n_txn if conflict else 0,
                 S_PUT_CP: n_txn // max(1, cfg.commit.checkpoint_interval or 0) if log else 0,
                 S_THROTTLE: n_txn if throttled else 0}
        dists = {S_READ: lat.catalog_read, S_CAS: lat.catalog_cas, S_GET: lat.get, S_PUT_ML: lat.put_manifest_list,
                 S_PUT_TM: lat.put_table_metadata, S_BACKOFF: Uniform(), S_CONFLICT: Uniform(),
                 S_PUT_CP: lat.put_checkpoint, S_THROTTLE: Uniform()}
        for s, dist in dists.items():
            src[s] = Source(dist, rng[SRC_STREAM[s]], min(guess[s], CHUNK))
        self.sources = src

        tx_i = np.zeros((n_txn, N_TI), dtype=np.int64)
        tx_i[:, TI_OUTCOME] = O_UNFINISHED
        tx_i[:, TI_REASON] = R_UNFINISHED
        tx_f = np.zeros((n_txn, N_TF), dtype=np.float64)
        tx_f[:, TF_RTEND] = np.nan
        tx_f[:, TF_END] = np.nan
        # history buffers, column-major; a full one is set aside (`hist_chunks`) and the run goes on in a fresh
        # one, so nothing is copied before the frame is built
        hcap = min(8 * n_txn + 64, HIST_CHUNK) if record_history else 0
        self.hist_chunks: list = []
        # buckets: the catalog object or each table's pointer or next log name; with a throttled log, every entry
        n_buckets = w.num_tables + (n_txn + 1 if log and throttled else 0)
        self.n_txn = n_txn
        self.m = Model(
            pf=pf, pi=pi, st=np.zeros(N_ST, dtype=np.int64), cur=np.zeros(N_SRC, dtype=np.int64),
            step=np.array([src[s].step for s in range(N_SRC)], dtype=np.int64),
            rd=src[S_READ].values, cs=src[S_CAS].values, gt=src[S_GET].values, pm=src[S_PUT_ML].values,
            pt=src[S_PUT_TM].values, bo=src[S_BACKOFF].values, cu=src[S_CONFLICT].values, gaps=gap_src.values,
            thr=thr, bo_cat=bo_cat, bo_tab=bo_tab, tables=tables, isvo=isvo, runtimes=runtimes,
            tx_i=tx_i, tx_f=tx_f, versions=np.zeros(w.num_tables, dtype=np.int64),
            H_i=np.zeros((N_HI, hcap), dtype=np.int64), H_f=np.zeros((N_HF, hcap), dtype=np.float64),
            lanes=np.zeros(max(1, cfg.io.max_parallel), dtype=np.float64), sf=np.zeros(N_SF, dtype=np.float64),
            pcp=src[S_PUT_CP].values, th=src[S_THROTTLE].values, bo_thr=bo_thr,
            # every bucket starts full: a full burst, last updated at -inf
            bk_tokens=np.full(n_buckets, max(1.0, pf[PF_BURST]), dtype=np.float64),
            bk_last=np.full(n_buckets, -np.inf, dtype=np.float64),
            bk_head=np.full(w.num_tables, -1, dtype=np.int64),
            bk_prev=np.full(n_txn + 1 if log and throttled else 1, -1, dtype=np.int64))
        self.record_history = record_history
        self.end_ms = 0.0

    def refill(self, need: int, max_gets: int) -> None:
        """Refill the sources in the `needs` mask (`max_gets`: GETs the next event may take) and swap a full
        history buffer for a fresh one."""
        m = self.m
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
        self.m = m._replace(**fresh)

    def finish(self, end_ms: float) -> None:
        self.end_ms = float(end_ms)
        if self.record_history:
            m = self.m
            self.hist_chunks.append((m.H_i, m.H_f, int(m.st[ST_HIST_N])))
