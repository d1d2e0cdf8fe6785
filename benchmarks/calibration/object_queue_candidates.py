"""Per-object queues as candidates for what one store does with N writers' requests on one object (issue "Writers
in rounds"), against the benchmark's own 2-16 thread figures.

    python benchmarks/calibration/object_queue_candidates.py      # prints the table; writes object_queue_candidates.md (40 s)

A loop of its own (not `sim`): N closed-loop threads, each HEAD, GET, then a conditional PUT of one object, no
retries, 300 s, each request drawn from the provider's measured set (a fixed part plus a lognormal, fitted to ONE
writer's loop: providers/*.yaml); the version the PUT expects is the HEAD's or the GET's as the provider's measured
set says (`version_from_head`), and the PUT is checked at its completion (S3, S3 Express) or halfway. Every candidate
is calibrated at one writer (each request's service is its one-writer latency, or its lognormal part) and adds no
parameter. With no queue the loop reproduces `sim`'s own figures (the `none` rows against
benchmarks/calibration/cas_bench.md). The candidates:
- none: requests to one object are served in parallel (the model's);
- put: conditional PUTs to one object are served one at a time, each for its whole latency;
- all: every request to the object (HEAD, GET, PUT) is served one at a time, each for its whole latency;
- put_variable: the PUT's fixed part is in flight in parallel (half each way), its lognormal part is served one at a
  time;
- fast_fail: as put_variable, but a PUT whose precondition no longer holds when it reaches the object is answered
  412 at once, taking no service.
The `put` candidate is also `sim`'s own per-object queue (a provider's `cas_one_at_a_time: true`, a what-if no
shipped profile has): its rows `put (sim)`, one run of 300 s each, hold the loop to the model.
"""
from __future__ import annotations

import heapq
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from sim import api  # noqa: E402
from sim.providers import load_provider, providers_dir  # noqa: E402

PROVIDERS = ("s3x", "s3", "azurex", "azure")     # gcp: its per-object limit is its own mechanism (MODEL.md)
CANDIDATES = ("none", "put", "all", "put_variable", "fast_fail")
WRITERS = (1, 2, 4, 8, 16)
DURATION_MS = 300_000.0
BENCH = json.loads((HERE / "data" / "cas_bench.json").read_text())["providers"]


class Loop:
    """One run: the object's version, its server's next free instant, the threads' events."""

    def __init__(self, provider: str, candidate: str, seed: int = 1):
        p = load_provider(provider, "measured")
        self.read = (p.get_fixed_ms, p.get_median_ms, p.get_sigma)
        self.write = (p.cas_fixed_ms, p.cas_median_ms, p.cas_sigma)
        self.head_version = bool(p.version_from_head)
        self.cf = 1.0 if p.cas_checked_at_completion else 0.5
        self.candidate, self.rng = candidate, np.random.default_rng(seed)
        self.version = self.succeeded = self.failed = 0
        self.free_at, self.events, self.n = 0.0, [], 0

    def _draw(self, kind) -> tuple[float, float]:
        fixed, median, sigma = kind
        return fixed, median * math.exp(sigma * self.rng.standard_normal())

    def _at(self, t: float, what: str, i: int, data=None) -> None:
        self.n += 1
        heapq.heappush(self.events, (t, self.n, what, i, data))

    def _served(self, t: float, service: float) -> float:
        """The instant a request reaching the object at t starts its service (FIFO, one at a time)."""
        start = max(t, self.free_at)
        self.free_at = start + service
        return start

    def _reads(self, t: float, i: int) -> None:
        """HEAD then GET; the version is captured halfway through the one that gives it."""
        (f1, v1), (f2, v2) = self._draw(self.read), self._draw(self.read)
        l1, l2 = f1 + v1, f2 + v2
        s1 = self._served(t, l1) if self.candidate == "all" else t
        s2 = self._served(s1 + l1, l2) if self.candidate == "all" else s1 + l1
        self._at((s1 + l1 / 2) if self.head_version else (s2 + l2 / 2), "capture", i, s2 + l2)

    def _put(self, t: float, i: int, expected: int) -> None:
        fixed, var = self._draw(self.write)
        if self.candidate in ("none", "put", "all"):
            start = t if self.candidate == "none" else self._served(t, fixed + var)
            self._at(start + self.cf * (fixed + var), "check", i, (expected, start + fixed + var))
            return
        arrive = t + fixed / 2
        if self.candidate == "fast_fail" and expected != self.version:
            self.failed += 1
            self._at(arrive + fixed / 2, "start", i)
            return
        done = self._served(arrive, var) + var
        self._at(done, "check", i, (expected, done + fixed / 2))

    def run(self, writers: int) -> dict:
        for i in range(writers):
            self._at(0.0, "start", i)
        expected = [0] * writers
        while self.events:
            t, _, what, i, data = heapq.heappop(self.events)
            if t > DURATION_MS:
                break
            if what == "start":
                self._reads(t, i)
            elif what == "capture":
                expected[i] = self.version
                self._at(data, "put", i)
            elif what == "put":
                self._put(t, i, expected[i])
            else:
                exp, answer = data
                ok = exp == self.version
                self.version += ok
                self.succeeded += ok
                self.failed += not ok
                self._at(answer, "start", i)
        secs, total = DURATION_MS / 1000.0, self.succeeded + self.failed
        return {"success_per_s": self.succeeded / secs, "attempts_per_s": total / secs,
                "failure_share": self.failed / max(total, 1)}


def model_put(provider: str, writers: int, where: Path) -> dict:
    """`sim`'s per-object queue: the provider's file with `cas_one_at_a_time: true` in its measured set, the
    microbenchmark (experiments/cas-bench-measured.yaml's base) at `writers` writers, one run."""
    text = (providers_dir() / f"{provider}.yaml").read_text().replace("\nmeasured:\n", "\nmeasured:\n  cas_one_at_a_time: true\n")
    path = where / f"{provider}.yaml"
    path.write_text(text)
    cfg = {"duration_ms": DURATION_MS, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": DURATION_MS,
           "storage": {"provider": str(path)}, "commit": {"shape": "object", "max_retries": 0},
           "workload": {"writers": {"count": writers}, "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}}
    s = api.run(cfg, 0).summary
    return {"success_per_s": s["throughput_cps"], "failure_share": s["attempt_failure_share"]}


def table() -> str:
    rows = ["| provider | candidate | " + " | ".join(f"{n} writers: failure share, success/s" for n in WRITERS) + " |",
            "|---|---|" + "---|" * len(WRITERS)]
    for prov in PROVIDERS:
        bench = [BENCH[prov][str(n)] for n in WRITERS]
        rows.append(f"| {prov} | benchmark | " + " | ".join(
            f"{100 * b['failure_share']:.0f} %, {b['success_per_s']:.3g}" for b in bench) + " |")
        for cand in CANDIDATES:
            got = [Loop(prov, cand).run(n) for n in WRITERS]
            rows.append(f"| {prov} | {cand} | " + " | ".join(
                f"{100 * g['failure_share']:.0f} %, {g['success_per_s']:.3g}" for g in got) + " |")
            if cand == "put":
                with tempfile.TemporaryDirectory() as where:
                    got = [model_put(prov, n, Path(where)) for n in WRITERS]
                rows.append(f"| {prov} | put (sim) | " + " | ".join(
                    f"{100 * g['failure_share']:.0f} %, {g['success_per_s']:.3g}" for g in got) + " |")
    return "\n".join(rows) + "\n"


def main() -> None:
    text = table()
    print(text)
    head = __doc__.split("\n\n", 2)[2]
    (HERE / "object_queue_candidates.md").write_text(
        "# Per-object queue candidates (`benchmarks/calibration/object_queue_candidates.py`)\n\n" + head + "\n" + text)


if __name__ == "__main__":
    main()
