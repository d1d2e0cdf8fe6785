"""The error of a long read's one draw (sim/long_reads.py) against the exact sum (or max) of its draws.

    python benchmarks/long_reads.py             # writes benchmarks/long_reads.md
    python benchmarks/long_reads.py --quick     # fewer samples, fewer counts (a minute)

For every provider's GET profile in both profile sets (the distribution a long read draws from), and counts n
from just past the exact range to 100,000: the law the model draws (the model's own `_sum_ms` / `_max_ms`, fed a
dense grid of u, so its CDF and mean are computed, not sampled) against N exact sums (or maxima) of n GET draws
made with the model's own draws (`LogNormal.draw`). KS: the largest distance between the table's CDF and the
sample's; `noise`: the sample's own 95 % bound (1.36 / sqrt(N)), below which a KS figure says nothing more than
"within the sample's noise". Mean: the table's exact mean against n times the analytic mean.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim import long_reads  # noqa: E402
from sim.config import from_dict  # noqa: E402
from sim.latency import latency_model  # noqa: E402
from sim.model.io import _max_ms, _renewal_ms, _sum_ms, lanes_ms  # noqa: E402
from sim.model.state import N_SRC, Src  # noqa: E402

PROVIDERS = ("s3x", "s3", "azurex", "azure", "gcp")
COUNTS = (33, 40, 48, 64, 100, 300, 1000, 3000, 10_000, 100_000)
MAX_COUNTS = (33, 100, 1000)
LANES_COUNTS = (1500, 3700, 12_000, 50_000)   # on 1000 lanes (delta-rs's snapshot reads)
U_POINTS = 1 << 18      # the table's law on this many equally likely points


class _Reads(NamedTuple):
    """The fields of `sim.model.state.Model` a long read's draw reads."""
    lr: np.ndarray
    lr_n: np.ndarray
    draws: np.ndarray
    draw_at: np.ndarray
    cur: np.ndarray
    step: np.ndarray
    lanes: np.ndarray
    lane_n: np.ndarray
    epochs: np.ndarray


@njit(cache=True)
def _law(m, n, of_max):
    """The model's draw at every u in m.draws (its LONG source), in order."""
    out = np.empty(len(m.draws))
    for i in range(len(m.draws)):
        out[i] = _max_ms(m, n) if of_max else _sum_ms(m, n)
    return out


def table_law(dist, n: int, of_max: bool) -> np.ndarray:
    """The table's law of a read of n: its values at u = (i + 1/2) / U_POINTS, sorted (its quantiles)."""
    counts, flat = long_reads.table(dist)
    u = (np.arange(U_POINTS) + 0.5) / U_POINTS
    step = np.zeros(N_SRC, dtype=np.int64)
    step[Src.LONG] = 1
    m = _Reads(flat, counts, u, np.zeros(N_SRC, dtype=np.int64), np.zeros(N_SRC, dtype=np.int64), step,
               np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros(1))
    return np.sort(_law(m, n, of_max))


@njit(cache=True)
def _makespans(m, n, k, size, heap):
    """`size` makespans of n GETs on k lanes, drawn one after another: the model's own (`_renewal_ms`), or, with
    `heap`, the heap's (`lanes_ms`: each GET in order to the lane that frees first)."""
    out = np.empty(size)
    for i in range(size):
        ms = -1.0 if heap else _renewal_ms(m, n, k)
        if ms < 0.0:
            c = m.cur[Src.GET]
            ms = lanes_ms(m.draws, m.draw_at[Src.GET] + c, 1, n, k, m.lanes)
            m.cur[Src.GET] = c + n
        out[i] = ms
    return out


def lanes_samples(dist, n: int, k: int, size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`size` makespans of n GETs on k lanes the model's way and `size` the heap's, from independent draws."""
    counts, flat = long_reads.table(dist)
    out = []
    for heap in (False, True):
        rng = np.random.default_rng([seed, int(heap)])
        gets = dist.draw(rng, size * (n + 3 * k))
        uniforms = rng.random(size * k + 1)
        at = np.zeros(N_SRC, dtype=np.int64)
        at[Src.LONG] = len(gets)
        m = _Reads(flat, counts, np.concatenate([gets, uniforms]), at, np.zeros(N_SRC, dtype=np.int64),
                   np.ones(N_SRC, dtype=np.int64), np.zeros(k), np.zeros(k, dtype=np.int64),
                   np.zeros(n + 2 * k))
        out.append(np.sort(_makespans(m, n, k, size, heap)))
    return out[0], out[1]


def ks_two(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample KS distance of sorted samples."""
    x = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, x, side="right") / len(a)
                               - np.searchsorted(b, x, side="right") / len(b))))


def exact_sample(dist, n: int, size: int, rng, of_max: bool) -> np.ndarray:
    """`size` exact sums (or maxima) of n draws, drawn in chunks."""
    out = np.empty(size)
    chunk = max(1, (1 << 24) // n)
    for a in range(0, size, chunk):
        b = min(size, a + chunk)
        x = dist.draw(rng, (b - a) * n).reshape(b - a, n)
        out[a:b] = x.max(axis=1) if of_max else x.sum(axis=1)
    return np.sort(out)


def ks(quantiles: np.ndarray, sample: np.ndarray) -> float:
    """The largest distance between the CDF of equally likely `quantiles` and the sample's empirical CDF."""
    f = np.searchsorted(quantiles, sample, side="right") / len(quantiles)
    f_left = np.searchsorted(quantiles, sample, side="left") / len(quantiles)
    i = np.arange(1, len(sample) + 1) / len(sample)
    return float(max(np.max(np.abs(f - i)), np.max(np.abs(f_left - (i - 1 / len(sample))))))


def samples_for(n: int, quick: bool) -> int:
    """Sample sizes: 200,000 sums up to n = 1000, fewer beyond (about 2e9 draws at most a row)."""
    size = 200_000 if n <= 1000 else 50_000 if n <= 10_000 else 5_000
    return size // 10 if quick else size


def rows(quick: bool):
    rng = np.random.default_rng(20261128)
    counts = COUNTS[:7] if quick else COUNTS
    for provider in PROVIDERS:
        for profile_set in ("seed", "measured"):
            dist = latency_model(from_dict({"storage": {"provider": provider, "profile_set": profile_set}})).get
            for of_max, ns in ((False, counts), (True, MAX_COUNTS)):
                for n in ns:
                    t = time.perf_counter()
                    law = table_law(dist, n, of_max)
                    size = samples_for(n, quick)
                    sample = exact_sample(dist, n, size, rng, of_max)
                    exact_mean = n * dist.mean_ms() if not of_max else float(sample.mean())
                    yield {"provider": provider, "set": profile_set, "read": "max" if of_max else "sum", "n": n,
                           "median_ms": dist.median_ms, "sigma": dist.sigma, "floor_ms": dist.floor_ms,
                           "ks": ks(law, sample), "noise": 1.36 / math.sqrt(size), "samples": size,
                           "mean_error": float(law.mean() / exact_mean - 1.0), "s": time.perf_counter() - t}
            for n in (LANES_COUNTS[:2] if quick else LANES_COUNTS):
                t = time.perf_counter()
                size = (2_000 if quick else 20_000) if n <= 12_000 else (500 if quick else 5_000)
                model, heap = lanes_samples(dist, n, 1000, size)
                yield {"provider": provider, "set": profile_set, "read": "lanes", "n": n,
                       "median_ms": dist.median_ms, "sigma": dist.sigma, "floor_ms": dist.floor_ms,
                       "ks": ks_two(model, heap), "noise": 1.36 * math.sqrt(2 / size), "samples": size,
                       "mean_error": float(model.mean() / heap.mean() - 1.0), "s": time.perf_counter() - t}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "long_reads.md"))
    args = ap.parse_args()
    out = []
    for r in rows(args.quick):
        print(f"{r['provider']:7s} {r['set']:8s} {r['read']} n={r['n']:6d} KS {r['ks']:.4f} (noise {r['noise']:.4f})"
              f" mean {100 * r['mean_error']:+.3f} % ({r['s']:.1f} s)", flush=True)
        out.append(r)
    write(out, Path(args.out), args.quick)


def write(out: list[dict], path: Path, quick: bool) -> None:
    worst = max(out, key=lambda r: r["ks"] - r["noise"])
    lines = [
        "# Long reads: one draw against the exact sum of draws",
        "",
        "`python benchmarks/long_reads.py`" + (" --quick" if quick else "") + " (sim/long_reads.py; docs/MODEL.md,"
        " \"Long reads\"). Each row: the law the model draws for a read of n GETs (the sum, serial; the max, one GET a"
        " lane) against N exact sums or maxima of n GET draws; `lanes`, a read of n GETs on 1000 lanes as the model"
        " draws it (lane by lane, each lane's first epochs one sum from the table) against N makespans of the heap"
        " (each GET in order to the lane that frees first). KS is the largest CDF distance; `noise` the sample's own"
        " 95 % bound (1.36 / sqrt N; two samples: 1.36 sqrt(2 / N)): a KS at or below it is within what the"
        " samples can resolve. The sum's mean error is against n x the analytic mean; the max's and the lanes'"
        " against the sample's mean.",
        "",
        f"Largest KS: {worst['ks']:.4f} (noise {worst['noise']:.4f}); largest KS above its noise: "
        f"{max(r['ks'] - r['noise'] for r in out):+.4f}; largest |mean error| of a sum: "
        f"{100 * max(abs(r['mean_error']) for r in out if r['read'] == 'sum'):.3f} %.",
        "",
        "| provider | set | GET (median ms, sigma, floor ms) | read | n | KS | noise | N | mean error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in out:
        lines.append(f"| {r['provider']} | {r['set']} | {r['median_ms']:g}, {r['sigma']:g}, {r['floor_ms']:g} | "
                     f"{r['read']} | {r['n']:,} | {r['ks']:.4f} | {r['noise']:.4f} | {r['samples']:,} | "
                     f"{100 * r['mean_error']:+.3f} % |")
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
