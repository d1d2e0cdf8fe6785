"""Mechanisms that only concurrency shows, compared (issue "What only concurrency shows"): each candidate's one
parameter fitted on the benchmark's 2- and 4-writer cells ONLY, then run at 1, 8 and 16 writers, the held-out
check.

    python benchmarks/calibration/concurrency_candidates.py     # prints the tables; writes concurrency_candidates.md (25 CPU min)
    python benchmarks/calibration/concurrency_candidates.py ewb_held ...   # those candidates' rows only, printed

A loop of its own (not `sim`), as object_queue_candidates.py's: N closed-loop threads, each HEAD, GET, then a
conditional PUT of one object, no retries, each request drawn from the provider's measured set (a fixed part plus a
lognormal fitted to ONE writer's loop: providers/*.yaml); the version the PUT expects is the HEAD's or the GET's as
the set says (`version_from_head`), and the PUT is checked at its completion (S3 Express) or halfway (Azure). With
no candidate the loop gives `sim`'s own figures (the `none` rows against benchmarks/calibration/cas_bench.md).

S3 Express (its successful operations slow down with writers: median 14.5 ms at 1, 23.5 ms at 16):
- queue: the check of each conditional PUT is served one at a time at the key, `s` ms each (attempts/s <= 1 / s);
- slower: a PUT sent while another PUT to the key is in flight takes `d` ms more (a service time that grows with
  contention), and `per_write`: `d` ms more per PUT in flight;
- reads_wait: a read that reaches the key while a PUT to it is in flight waits for that PUT's end (no parameter);
- winner_late: a successful PUT that another PUT overlapped is answered `d` ms after its check;
- loser_late: a PUT that fails its check is answered `d` ms after its completion (a 412 comes late).
Azure Blob and Azure Premium (failure share far below the model's, success/s flat at one writer's):
- window: the benchmark's upload through the DFS endpoint is Create (with the If-Match), Append, Flush: from a
  successful conditional write's check to its answer the blob reads empty, and a HEAD or GET that reads it then
  fails the operation at its answer (the benchmark's client: its length check; no parameter);
- busy: a conditional PUT that reaches its check while another PUT to the blob is in flight is answered 5xx with
  probability `q`
  and resent by Azure's Java client (RequestRetryOptions: 4, 12, 28 s; 4 tries, then the operation fails);
  `busy_per_write`: 1 - (1 - q)^k with k PUTs in flight;
- window_busy, window_busy_per_write: both;
- window_bucket: the window, and a per-blob token bucket of `r` writes/s (burst 1) whose refusals are 503s resent
  as above;
- early_window_busy: window_busy with the check at the first sixth of the write (the Create, the first of the
  upload's three requests, at its midpoint), so the window is its last five sixths;
- window_busy_head: window_busy with the HEAD's fixed part read off the benchmark's failed operations at 2 and 4
  writers (their median, most of them failed at the HEAD, less the HEAD's lognormal median), the GET's fixed part
  taking the rest (so one writer's loop is the same sum).
Azure Premium at 16 writers, the one held-out cell early_window_busy missed (issue "What only concurrency shows",
its last point): early_window_busy and one more mechanism, `q` and the mechanism's `d` fitted together on the grid:
- ewb_slow_writes: a write slower by `d` ms for each other write to the blob in flight at its send;
- ewb_slow_requests: every request (HEAD, GET, the write) slower by `d` ms for each other request to the blob in
  flight at its send (one partition server serves a blob: a service time growing with its load);
- ewb_held: a write that reaches its check while a winner's upload is open (its Create done, its Flush not answered)
  is held until that upload's answer, then checked (the blob's conditional writes served one at a time; `q` only);
- ewb_loser_late: a write that fails its check (412) is answered `d` ms late (the benchmark's ~0.5 s failures);
- ewb_fast_empty: a HEAD that reads the blob empty is answered at the benchmark's failed operations' median at 2
  and 4 writers (most fail at their HEAD, in 8 ms; `q` only), and ewb_fast_slow_requests: that and
  ewb_slow_requests;
- ewb_late_window: the blob reads empty `d` ms past the winner's answer too (a length that lags the Flush; past
  ~7 ms one writer reads its own window at its next HEAD, where the benchmark's one thread never fails);
- ewb_busy_fails: the write `q` picks is not resent: its operation fails `d` ms after the write's answer (the
  benchmark's failures of about 0.5 s, a quarter to a half of them at every count, in place of 4-s resends);
- ewb_loser_slow_requests: ewb_slow_requests, and a 412 answered 470 ms late (the benchmark's ~0.5 s failures:
  Premium's failure p75 511 ms at 2 and 4 threads, less the ~40 ms to the write's answer; not fitted), and
  ewb_fast_loser_slow_requests: that and ewb_fast_empty's HEAD;
- ewb_fast_loser: the failures' two classes read off the benchmark's 2- and 4-writer cells, a HEAD that reads the
  blob empty answered in ~8 ms (ewb_fast_empty's) and a 412 answered 470 ms late, and no other (`q` only);
- ewb_half_s_resends: early_window_busy whose 5xx is resent after 0.5, 1, 2 s (a schedule read off the benchmark's
  failed operations, p75 ~0.51 s, p95 ~1.05 s, p99 3.52 s at every count: 0.5 + 1 + 2; no client read here has it)
  instead of RequestRetryOptions' 4, 12, 28 s (`q` only).
Fitted: the parameter on a grid, each point 2 runs of 120 s at 2 and 4 writers, scored by the sum over those cells
of (failure share's miss / 5 pp)^2 + (success/s's miss / 15 %)^2 (the issue's tolerances); the best point then runs
2 runs of 300 s at every writer count.
"""
from __future__ import annotations

import heapq
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from sim.providers import load_provider  # noqa: E402

BENCH = json.loads((HERE / "data" / "cas_bench.json").read_text())["providers"]
AZURE_SLEEPS_MS = (4000.0, 12000.0, 28000.0)     # RequestRetryOptions' exponential delays: 4 tries
WRITERS = (1, 2, 4, 8, 16)
FIT_WRITERS = (2, 4)
CANDIDATES = {
    "s3x": {"none": (0.0,), "queue": (0.25, 0.5, 1.0, 2.0, 3.0), "slower": (1.0, 2.0, 4.0, 7.0, 10.0),
            "per_write": (0.5, 1.0, 2.0, 4.0), "reads_wait": (0.0,), "winner_late": (2.0, 4.0, 8.0, 14.0, 16.0),
            "loser_late": (3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0)},
    "azure": {"none": (0.0,), "window": (0.0,), "busy": (0.02, 0.04, 0.08, 0.15, 0.3),
              "busy_per_write": (0.02, 0.04, 0.08, 0.15), "window_busy": (0.04, 0.06, 0.07, 0.08, 0.09, 0.1, 0.12),
              "window_busy_per_write": (0.04, 0.06, 0.08, 0.1, 0.12),
              "window_bucket": (30.0, 50.0, 80.0, 120.0, 200.0),
              "early_window_busy": (0.06, 0.07, 0.08, 0.09, 0.1, 0.12),
              "window_busy_head": (0.06, 0.07, 0.08, 0.09, 0.1, 0.12)},
}
QS = (0.02, 0.04, 0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12)
SLOW_MS = (0.25, 0.5, 1.0, 2.0, 4.0, 6.0)
LOSER_LATE_MS = 470.0     # the slow failures, ~0.5 s (Premium's p75 511 ms at 2 and 4 threads), less ~40 ms
for _cand, _ds in (("ewb_slow_writes", (0.5, 1.0, 2.0, 4.0)), ("ewb_slow_requests", SLOW_MS),
                   ("ewb_held", (0.0,)), ("ewb_loser_late", (50.0, 150.0, 300.0, 470.0)),
                   ("ewb_fast_empty", (0.0,)), ("ewb_fast_slow_requests", SLOW_MS),
                   ("ewb_late_window", (2.0, 5.0, 10.0, 20.0)), ("ewb_busy_fails", (250.0, 500.0)),
                   ("ewb_loser_slow_requests", SLOW_MS), ("ewb_fast_loser_slow_requests", SLOW_MS)):
    CANDIDATES["azure"][_cand] = tuple((q, d) for q in QS for d in _ds)
CANDIDATES["azure"]["ewb_half_s_resends"] = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6)
CANDIDATES["azure"]["ewb_fast_loser"] = QS
HALF_S_SLEEPS_MS = (500.0, 1000.0, 2000.0)   # read off the failures' quantiles: ~0.5, ~1, 3.5 s (0.5 + 1 + 2)
CANDIDATES["azurex"] = dict(CANDIDATES["azure"])
BUSY = ("busy", "window_busy", "early_window_busy", "window_busy_head")
SLOW_REQUESTS = ("ewb_slow_requests", "ewb_fast_slow_requests", "ewb_loser_slow_requests",
                 "ewb_fast_loser_slow_requests")


def shown(par) -> str:
    """A fitted parameter as the table shows it: q, or q and d."""
    return f"{par[0]:g}, {par[1]:g}" if isinstance(par, tuple) else f"{par:g}"


class Loop:
    """One run of N threads on one object: its version, the threads' events, each thread's PUT in flight."""

    def __init__(self, provider: str, candidate: str, par: float, seed: int, duration_ms: float):
        p = load_provider(provider, "measured")
        self.head = (p.head_fixed_ms, p.head_median_ms, p.head_sigma)
        self.read = (p.get_fixed_ms, p.get_median_ms, p.get_sigma)
        self.write = (p.cas_fixed_ms, p.cas_median_ms, p.cas_sigma)
        self.head_version = bool(p.version_from_head)
        self.cf = 1.0 if p.cas_checked_at_completion else 0.5
        self.par, self.d = par if isinstance(par, tuple) else (par, 0.0)
        self.cand, self.rng, self.duration_ms = candidate, np.random.default_rng(seed), duration_ms
        self.window = "window" in candidate or candidate.startswith("ewb_")
        if candidate == "early_window_busy" or candidate.startswith("ewb_"):
            self.cf = 1.0 / 6.0
        self.req_end: dict = {}          # thread -> its request in flight's answer (ewb_slow_requests)
        self.fast_ms = float(np.mean([BENCH[provider][str(n)]["failure_p50_ms"] for n in FIT_WRITERS]))
        if candidate == "window_busy_head":          # the HEAD's median: the failed operations' at 2 and 4 writers
            median = np.mean([BENCH[provider][str(n)]["failure_p50_ms"] for n in (2, 4)])
            fixed = median - self.head[1]
            self.read = (self.read[0] + self.head[0] - fixed, self.read[1], self.read[2])
            self.head = (fixed, self.head[1], self.head[2])
        self.version = self.ok = self.failed = self.n = 0
        self.events: list = []
        self.in_flight: dict = {}        # thread -> its PUT's answer time
        self.free_at = self.empty_until = self.tokens_last = 0.0
        self.tokens = 1.0

    def _draw(self, kind) -> float:
        fixed, median, sigma = kind
        return fixed + median * math.exp(sigma * self.rng.standard_normal())

    def _at(self, t: float, what: str, i: int, data=None) -> None:
        self.n += 1
        heapq.heappush(self.events, (t, self.n, what, i, data))

    def _others(self, i: int, t: float) -> list:
        return [a for w, a in self.in_flight.items() if w != i and a > t]

    def _requests(self, i: int, t: float) -> int:
        """Other threads' requests to the object in flight at t."""
        return sum(1 for w, a in self.req_end.items() if w != i and a > t)

    def _slowed(self, i: int, t: float, latency: float) -> float:
        """A request sent at t: its latency, and its answer booked (ewb_slow_requests: d ms per other in flight)."""
        if self.cand in SLOW_REQUESTS:
            latency += self.d * self._requests(i, t)
            self.req_end[i] = t + latency
        return latency

    def _send(self, t: float, i: int, expected: int, tries: int) -> None:
        L = self._slowed(i, t, self._draw(self.write))
        others = self._others(i, t)
        if self.cand == "slower" and others:
            L += self.par
        elif self.cand == "per_write":
            L += self.par * len(others)
        elif self.cand == "ewb_slow_writes":
            L += self.d * len(others)
        self.in_flight[i] = t + L
        if self.cand == "ewb_held" and t + self.cf * L < self.empty_until:   # held until the open upload's answer
            check = self.empty_until
            self.in_flight[i] = check + (1 - self.cf) * L
            self._at(check, "check", i, (expected, self.in_flight[i], tries, bool(others)))
            return
        if self.cand == "queue":                     # the check served one at a time, par ms each
            start = max(t + self.cf * L, self.free_at)
            self.free_at = start + self.par
            self.in_flight[i] = self.free_at + (1 - self.cf) * L
            self._at(self.free_at, "check", i, (expected, self.in_flight[i], tries, bool(others)))
            return
        self._at(t + self.cf * L, "check", i, (expected, t + L, tries, bool(others)))

    def _busy(self, t: float, others: list) -> bool:
        """Whether the store answers a PUT at its check (t), while `others` are in flight, 5xx."""
        if self.cand in BUSY or self.cand.startswith("ewb_"):
            return bool(others) and self.rng.random() < self.par
        if self.cand in ("busy_per_write", "window_busy_per_write"):
            return bool(others) and self.rng.random() < 1 - (1 - self.par) ** len(others)
        if self.cand == "window_bucket":
            self.tokens = min(1.0, self.tokens + self.par / 1000.0 * (t - self.tokens_last))
            self.tokens_last = t
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return False
            return True
        return False

    def _start(self, t: float, i: int) -> None:
        h, g = self._draw(self.head), self._draw(self.read)
        h = self._slowed(i, t, h)
        head_at = t + h / 2
        if self.cand == "reads_wait":                 # the HEAD captures once the PUTs in flight at it end
            others = self._others(i, head_at)
            head_at = min(others) if others else head_at
        if self.window:
            self._at(head_at, "head", i, (h, g))
            return
        capture = head_at if self.head_version else head_at + h / 2 + g / 2
        self._at(capture, "capture", i, capture + (g / 2 if not self.head_version else h / 2 + g))

    def _check(self, t: float, i: int, data) -> None:
        expected, answer, tries, overlapped = data
        if self._busy(t, self._others(i, t)):
            if self.cand == "ewb_busy_fails":
                self._end(answer + self.d, i, False)
                return
            sleeps = HALF_S_SLEEPS_MS if self.cand == "ewb_half_s_resends" else AZURE_SLEEPS_MS
            if tries <= len(sleeps):
                self._at(answer + sleeps[tries - 1], "resend", i, (expected, tries + 1))
                return
            self._end(answer, i, False)
            return
        good = expected == self.version
        self.version += good
        if good and self.window:
            self.empty_until = answer + (self.d if self.cand == "ewb_late_window" else 0.0)
        if good and self.cand == "winner_late" and overlapped:
            answer += self.par
        if not good and self.cand == "loser_late":
            answer += self.par
        if not good and self.cand == "ewb_loser_late":
            answer += self.d
        if not good and ("loser_slow" in self.cand or self.cand == "ewb_fast_loser"):
            answer += LOSER_LATE_MS
        self._end(answer, i, good)

    def _end(self, t: float, i: int, good: bool) -> None:
        self.ok += good
        self.failed += not good
        self._at(t, "start", i)

    def run(self, writers: int) -> dict:
        """Every thread starts at 0; events in time order (ties in order of scheduling) until the run's end."""
        self.events = [(0.0, i, "start", i, None) for i in range(writers)]
        self.n, expected = writers, [0] * writers
        while self.events and self.events[0][0] <= self.duration_ms:
            t, _, what, i, data = heapq.heappop(self.events)
            if what == "start":
                self._start(t, i)
            elif what == "head":                     # the window: a HEAD that reads the blob empty fails
                h, g = data
                if t < self.empty_until:          # ewb_fast_empty: answered at the failures' median from its send
                    fast = "fast" in self.cand
                    self._end(max(t, t - h / 2 + self.fast_ms) if fast else t + h / 2, i, False)
                else:
                    g = self._slowed(i, t + h / 2, g)
                    self._at(t + h / 2 + g / 2, "get", i, g)
            elif what == "get":
                if t < self.empty_until:
                    self._end(t + data / 2, i, False)
                else:
                    self._at(t, "capture", i, t + data / 2)
            elif what == "capture":
                expected[i] = self.version
                self._at(data, "put", i)
            elif what == "put":
                self._send(t, i, expected[i], 1)
            elif what == "resend":
                self._send(t, i, data[0], data[1])
            else:
                self._check(t, i, data)
        secs, total = self.duration_ms / 1000.0, self.ok + self.failed
        return {"failure_share": self.failed / max(total, 1), "success_per_s": self.ok / secs,
                "attempts_per_s": total / secs}


def cell(provider: str, candidate: str, par: float, writers: int, runs: int, duration_ms: float) -> dict:
    got = [Loop(provider, candidate, par, seed, duration_ms).run(writers) for seed in range(1, runs + 1)]
    return {k: float(np.mean([g[k] for g in got])) for k in got[0]}


def miss(provider: str, writers: int, got: dict) -> tuple[float, float]:
    """The failure share's miss in pp and success/s's in %, against the benchmark."""
    b = BENCH[provider][str(writers)]
    return (100 * (got["failure_share"] - b["failure_share"]),
            100 * (got["success_per_s"] / b["success_per_s"] - 1))


def score(provider: str, cells: dict) -> float:
    return sum((fs / 5) ** 2 + (s / 15) ** 2 for fs, s in (miss(provider, n, g) for n, g in cells.items()))


def fit(provider: str, candidate: str) -> tuple[float, float]:
    """The grid point scored best on the fitted cells, and its score."""
    scored = [(score(provider, {n: cell(provider, candidate, par, n, 2, 120_000.0) for n in FIT_WRITERS}), par)
              for par in CANDIDATES[provider][candidate]]
    best, par = min(scored)
    return par, best


def table(only: tuple = ()) -> str:
    """Every candidate's row, or only those named."""
    rows = ["| provider | candidate | fitted parameter | score on 2, 4 | " + " | ".join(
        f"{n} writers: failure share, success/s" for n in WRITERS) + " | largest held-out miss (8, 16) |",
        "|---|---|---|---|" + "---|" * len(WRITERS) + "---|"]
    for prov in CANDIDATES:
        bench = [BENCH[prov][str(n)] for n in WRITERS]
        rows.append(f"| {prov} | benchmark | | | " + " | ".join(
            f"{100 * b['failure_share']:.1f} %, {b['success_per_s']:.3g}" for b in bench) + " | |")
        for cand in (c for c in CANDIDATES[prov] if not only or c in only):
            par, best = fit(prov, cand)
            got = {n: cell(prov, cand, par, n, 2, 300_000.0) for n in WRITERS}
            held = [miss(prov, n, got[n]) for n in (8, 16)]
            worst = f"{max(abs(fs) for fs, _ in held):.1f} pp, {max(abs(s) for _, s in held):.0f} %"
            rows.append(f"| {prov} | {cand} | {shown(par)} | {best:.2f} | " + " | ".join(
                f"{100 * got[n]['failure_share']:.1f} %, {got[n]['success_per_s']:.3g}"
                + (" *" if n in FIT_WRITERS else "") for n in WRITERS) + f" | {worst} |")
            print(rows[-1], flush=True)
    return "\n".join(rows) + "\n"


def main() -> None:
    if sys.argv[1:]:                   # the rows of the candidates named, printed; the table file left alone
        table(tuple(sys.argv[1:]))
        return
    text = table()
    head = __doc__.split("\n\n", 2)[2]
    (HERE / "concurrency_candidates.md").write_text(
        "# Mechanisms only concurrency shows, compared (`benchmarks/calibration/concurrency_candidates.py`)\n\n"
        + head + "\nCells marked * are the fitted ones.\n\n" + text)


if __name__ == "__main__":
    main()
