"""The engine: SimPy processes running MODEL.md's commit protocol against one catalog.

Design (why it is fast and still exact): other transactions can observe a transaction only at catalog effect
points, a read's state capture and a CAS's check-and-swap. The engine schedules events there and nowhere
else. Everything a transaction does between two of its effect points (the rest of a read's round trip, the
runtime, backoff sleeps, a whole prepare with its GETs and PUTs, the first part of the CAS round trip) touches
no shared state, so it is summed into one timeout; a prepare that validates n snapshots draws the n GETs in one
batch and combines them (a sum, or the makespan of `io.max_parallel` lanes), never n events. The cost of a run
therefore grows with catalog operations (about two events per attempt), not with I/O requests.

State lives in the `Engine` instance (explicit `simpy.Environment`, no globals); randomness comes from one
stream per source (`sim.rng`), drawn in batches (`sim.latency.Sampler`).
"""
from __future__ import annotations

import heapq

import numpy as np
import pandas as pd
import simpy

from .catalog import Catalog
from .config import Config
from .latency import Sampler, latency_model
from .retry import Backoff
from .rng import run_streams
from .workload import WorkloadSamplers


class _Uniform:
    """U(0, 1) draws, batched like every other source."""
    is_constant = False

    def draw(self, rng, n):
        return rng.random(n)


class Txn:
    """One transaction's bookkeeping; becomes a record when it ends (or at the end of the run)."""
    __slots__ = ("id", "table", "is_vo", "runtime_ms", "arrival_ms", "in_window", "runtime_end_ms",
                 "end_ms", "outcome", "reason", "attempts", "catalog_conflicts", "table_conflicts",
                 "manifest_lists_read", "catalog_reads", "gets", "puts", "backoff_ms", "validated")

    def __init__(self, id_, table, is_vo, runtime_ms, arrival_ms, in_window):
        self.id = id_
        self.table = table
        self.is_vo = is_vo
        self.runtime_ms = runtime_ms
        self.arrival_ms = arrival_ms
        self.in_window = in_window
        self.runtime_end_ms = float("nan")
        self.end_ms = float("nan")
        self.outcome = "unfinished"
        self.reason = "unfinished"
        self.attempts = 0
        self.catalog_conflicts = 0
        self.table_conflicts = 0
        self.manifest_lists_read = 0
        self.catalog_reads = 0
        self.gets = 0
        self.puts = 0
        self.backoff_ms = 0.0
        self.validated = 0

    def record(self) -> tuple:
        return (self.id, self.table, self.table + 1, "vo" if self.is_vo else "fa", self.arrival_ms,
                self.runtime_end_ms, self.end_ms, self.outcome, self.reason, self.attempts,
                self.catalog_conflicts, self.table_conflicts, self.manifest_lists_read, self.catalog_reads,
                self.gets, self.puts, self.attempts, self.backoff_ms, self.in_window)


RECORD_COLUMNS = ("txn", "table", "table_rank", "op", "arrival_ms", "runtime_end_ms", "end_ms", "outcome",
                  "reason", "attempts", "catalog_conflicts", "table_conflicts", "manifest_lists_read",
                  "catalog_reads", "gets", "puts", "cases", "backoff_ms", "in_window")

HISTORY_COLUMNS = ("kind", "time_ms", "txn", "table", "op", "seq", "version", "expected", "ok", "base_version",
                   "validated_from", "validated_to", "answer_ms", "outcome", "reason", "attempts")


class Engine:
    """One replication of one configuration. `run()` returns per-transaction records (and the history)."""

    def __init__(self, cfg: Config, replication: int = 0, record_history: bool = False):
        self.cfg = cfg
        self.env = simpy.Environment()
        self.catalog = Catalog(cfg.workload.num_tables)
        rng = run_streams(cfg, replication)
        self.workload = WorkloadSamplers(cfg.workload, rng, cfg.duration_ms)

        lat = latency_model(cfg)
        self.get = Sampler(lat.get, rng["get"])
        self.put_ml = Sampler(lat.put_manifest_list, rng["put_manifest_list"])
        self.put_tm = Sampler(lat.put_table_metadata, rng["put_table_metadata"])
        self.catalog_read = Sampler(lat.catalog_read, rng["catalog_read"])
        self.catalog_cas = Sampler(lat.catalog_cas, rng["catalog_cas"])
        uniform_backoff = Sampler(_Uniform(), rng["backoff"])
        self.backoff = {"catalog": Backoff(cfg.retry.catalog, uniform_backoff),
                        "table": Backoff(cfg.retry.table, uniform_backoff)}
        self.conflict_u = Sampler(_Uniform(), rng["validation_conflict"])

        self.f = cfg.catalog.linearization_fraction
        self.inlined = cfg.catalog.table_metadata_inlined
        self.max_parallel = cfg.io.max_parallel
        self.max_attempts = cfg.max_attempts
        self.refresh_first = cfg.commit.first_attempt == "refresh"
        # inlined table metadata lives in the catalog: the refresh already read it
        self.read_md_on_failure = cfg.commit.metadata_read_on_failure and not self.inlined
        self.p_conflict = cfg.workload.vo_conflict_probability
        self.window = (cfg.warmup_ms, cfg.duration_ms - cfg.cooldown_ms)

        self.live: dict[int, Txn] = {}
        self.records: list[tuple] = []
        self.history: list[tuple] | None = [] if record_history else None
        self.open_in_window = 0
        self.arrivals_done = False
        self.stop = self.env.event()
        self.end_ms = 0.0

    # ------------------------------------------------------------------------------------------ running
    def run(self) -> "Engine":
        env = self.env
        env.process(self._arrivals())
        watchdog = env.timeout(self.cfg.duration_ms + self.cfg.drain_limit_ms)
        watchdog.callbacks.append(self._stop)
        env.run(until=self.stop)
        self.end_ms = env.now
        for x in self.live.values():  # still open at the end: unfinished
            self.records.append(x.record())
            if self.history is not None:
                self._hist("end", x.id, x.table, answer_ms=env.now, outcome="unfinished", reason="unfinished",
                           attempts=x.attempts)
        self.live.clear()
        if self.history is not None:
            seq = self.catalog.seq
            for t, v in enumerate(self.catalog.versions):
                self._hist("final", -1, t, seq=seq, version=v)
        return self

    def records_frame(self) -> pd.DataFrame:
        """One row per transaction (RECORD_COLUMNS), in transaction-id order."""
        df = pd.DataFrame.from_records(self.records, columns=RECORD_COLUMNS)
        return df.sort_values("txn", kind="stable").reset_index(drop=True)

    def history_frame(self) -> pd.DataFrame | None:
        """The recorded history (docs/FORMATS.md), in processing order, or None if not recorded."""
        if self.history is None:
            return None
        df = pd.DataFrame.from_records(self.history, columns=HISTORY_COLUMNS)
        df.insert(0, "i", np.arange(len(df), dtype=np.int64))
        return df

    def _stop(self, _event=None):
        if not self.stop.triggered:
            self.stop.succeed()

    def _arrivals(self):
        env, w = self.env, self.workload
        duration = self.cfg.duration_ms
        lo, hi = self.window
        hist = self.history is not None
        i = 0
        while True:
            gap = w.gap()
            if env.now + gap >= duration:
                break
            yield env.timeout(gap)
            now = env.now
            in_window = lo <= now < hi
            x = Txn(i, w.table(), w.is_vo(), w.runtime(), now, in_window)
            i += 1
            if in_window:
                self.open_in_window += 1
            self.live[x.id] = x
            if hist:
                self._hist("begin", x.id, x.table, op="vo" if x.is_vo else "fa", attempts=self.max_attempts)
            env.process(self._txn(x))
        yield env.timeout(duration - env.now)
        self.arrivals_done = True
        if self.open_in_window == 0:
            self._stop()

    # ------------------------------------------------------------------------------------------ protocol
    def _txn(self, x: Txn):
        """MODEL.md 'One transaction'. `pending` is the time from now until the caller is ready for its next
        catalog operation; each `yield` jumps straight to the next effect point."""
        env, cat, f = self.env, self.catalog, self.f
        g = 1.0 - f
        read_lat, cas_lat = self.catalog_read, self.catalog_cas
        hist = self.history is not None
        t = x.table

        L = read_lat()                                   # base snapshot
        yield env.timeout(f * L)
        seq, v = cat.seq, cat.versions[t]
        x.catalog_reads = 1
        if hist:
            self._hist("read", x.id, t, seq=seq, version=v, answer_ms=env.now + g * L)
        x.validated = v
        x.runtime_end_ms = env.now + g * L + x.runtime_ms
        pending = g * L + x.runtime_ms

        if self.refresh_first:                           # first attempt: refresh (Iceberg) or stale (seed)
            L = read_lat()
            yield env.timeout(pending + f * L)
            seq, v = cat.seq, cat.versions[t]
            x.catalog_reads += 1
            if hist:
                self._hist("read", x.id, t, seq=seq, version=v, answer_ms=env.now + g * L)
            pending = g * L
        prepared = v
        cost = self._prepare(x, v)
        if cost < 0:
            return self._end(x, "aborted", "validation_failed", env.now + pending - cost)
        pending += cost

        while True:
            L = cas_lat()
            yield env.timeout(pending + f * L)
            x.attempts += 1
            expected = seq
            ok = cat.seq == expected
            if ok:
                cat.seq = expected + 1
                cat.versions[t] += 1
            if hist:
                self._hist("cas", x.id, t, seq=cat.seq, version=cat.versions[t], expected=expected, ok=ok,
                           answer_ms=env.now + g * L)
            if ok:
                return self._end(x, "committed", "", env.now + g * L)
            if x.attempts >= self.max_attempts:
                return self._end(x, "aborted", "retries_exhausted", env.now + g * L)

            L2 = read_lat()                              # refresh: tells the conflict class
            yield env.timeout(g * L + f * L2)
            seq, v = cat.seq, cat.versions[t]
            x.catalog_reads += 1
            if hist:
                self._hist("read", x.id, t, seq=seq, version=v, answer_ms=env.now + g * L2)
            pending = g * L2
            if v != prepared:
                x.table_conflicts += 1
                delay = self.backoff["table"](x.table_conflicts)
            else:
                x.catalog_conflicts += 1
                delay = self.backoff["catalog"](x.catalog_conflicts)
            if self.read_md_on_failure:
                pending += self.get()
                x.gets += 1
            if delay > 0.0:                              # sleep, then refresh again before re-CASing
                x.backoff_ms += delay
                L2 = read_lat()
                yield env.timeout(pending + delay + f * L2)
                seq, v = cat.seq, cat.versions[t]
                x.catalog_reads += 1
                if hist:
                    self._hist("read", x.id, t, seq=seq, version=v, answer_ms=env.now + g * L2)
                pending = g * L2
            if v != prepared:                            # table moved: re-prepare on the new version
                prepared = v
                cost = self._prepare(x, v)
                if cost < 0:
                    return self._end(x, "aborted", "validation_failed", env.now + pending - cost)
                pending += cost
            # else a catalog conflict: re-CAS the files already written, against the fresh seq

    def _prepare(self, x: Txn, v: int) -> float:
        """I/O time of one prepare based on table version `v`; negative (minus the time spent) if a VO's
        validation finds a real conflict and aborts."""
        cost = 0.0
        if not self.inlined:
            cost += self.get()                           # table metadata
            x.gets += 1
        cost += self.get()                               # current manifest list
        x.gets += 1
        x.manifest_lists_read += 1
        vfrom = vto = -1
        aborted = False
        if x.is_vo:
            vfrom, vto = x.validated, v
            n = v - x.validated                          # snapshots not validated yet; the newest is read above
            if n > 1:
                cost += self._parallel_gets(n - 1)
                x.gets += n - 1
                x.manifest_lists_read += n - 1
            x.validated = v
            p = self.p_conflict
            if p > 0.0 and n > 0 and self.conflict_u() < 1.0 - (1.0 - p) ** n:
                aborted = True
        if not aborted:
            cost += self.put_ml()
            x.puts += 1
            if not self.inlined:
                cost += self.put_tm()
                x.puts += 1
        if self.history is not None:
            self._hist("prepare", x.id, x.table, base_version=v, validated_from=vfrom, validated_to=vto)
        return -cost if aborted else cost

    def _parallel_gets(self, n: int) -> float:
        """Wall time of n GETs on `io.max_parallel` lanes, each taking the next free lane in order."""
        draws = self.get.take(n)
        k = self.max_parallel
        if k == 1:
            total = 0.0   # left to right, as the fast engine; sum() is compensated from Python 3.12 on
            for d in draws:
                total += d
            return total
        if k >= n:
            return max(draws)
        lanes = draws[:k]
        heapq.heapify(lanes)
        for d in draws[k:]:
            heapq.heapreplace(lanes, lanes[0] + d)
        return max(lanes)

    def _end(self, x: Txn, outcome: str, reason: str, end_ms: float) -> None:
        x.outcome, x.reason, x.end_ms = outcome, reason, end_ms
        del self.live[x.id]
        self.records.append(x.record())
        if self.history is not None:
            self._hist("end", x.id, x.table, answer_ms=end_ms, outcome=outcome, reason=reason, attempts=x.attempts)
        if x.in_window:
            self.open_in_window -= 1
            if self.open_in_window == 0 and self.arrivals_done:
                self._stop()

    def _hist(self, kind, txn, table, *, op="", seq=-1, version=-1, expected=-1, ok=False, base_version=-1,
              validated_from=-1, validated_to=-1, answer_ms=float("nan"), outcome="", reason="", attempts=-1):
        self.history.append((kind, self.env.now, txn, table, op, seq, version, expected, ok, base_version,
                             validated_from, validated_to, answer_ms, outcome, reason, attempts))
