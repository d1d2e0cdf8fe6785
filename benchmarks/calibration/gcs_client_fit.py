"""GCS's soft limit as two buckets, the object's and each client's (docs/MODEL.md, "Concurrent writes to one
object"): the client's fitted to ONE writer (gcs_refusal_fit.py), the object's rate fitted on ONE multi-writer
point (4 threads' success/s), every other writer count a prediction of the model against the benchmark.

    python benchmarks/calibration/gcs_client_fit.py          # prints the tables; writes gcs_client_fit.md (about 20 s)

Why two buckets: a bucket whose refusals cost tokens fits one writer and collapses from 4 writers when it is the
object's (gcs_refusal_fit.md: 0.007 success/s at 4 threads against 1.156), because every writer's refusals sink
it; kept per client, a writer's refusals sink only its own, and the object's bucket, which forgets refusals, sets
how many writes a second the object takes. At one writer the object's bucket (burst 10, assumed) does not bind,
so the one-writer fit stands as it was. The object's rate is the one figure only concurrency shows: fitted on the
4-thread point (success/s 1.156) over a grid, 20 runs of 300 s a point; the table then runs each writer count 5
times (the benchmark's 5 runs), for today's bucket, the object-wide debt, and the two buckets. The model's runs
are seeded by their config, which names a temporary provider file: a rerun gives figures within their noise (the
scan's 4-writer success/s rises about 0.03 a grid step of 0.05 /s, so the fitted rate may move by a step).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from gcs_limit_fit import with_limit  # noqa: E402
from gcs_refusal_fit import MEASURED_WRITERS, TODAY, _closer, _writers_table, model_point  # noqa: E402

CLIENT = dict(client_rate_per_s=3.15, client_burst=6.0, client_refusal_tokens=2.25)   # gcs_refusal_fit.md's point
DEBT = (3.15, 6.0, 2.25)             # the same bucket, the object's (gcs_refusal_fit.md: collapses from 4 writers)
OBJECT_BURSTS = (10.0, 20.0)         # the first is gcp's; the second shows what the assumed burst moves
RATES_PER_S = np.round(np.arange(1.4, 2.31, 0.05), 2)
FIT_WRITERS, FIT_RUNS = 4, 20


def with_two_buckets(rate: float, burst: float, where: Path) -> str:
    """providers/gcp.yaml with its measured set's object bucket (rate, burst) and CLIENT's bucket."""
    return with_limit(rate, burst, where, client=CLIENT)


def fit_rate(burst: float, where: Path) -> tuple[float, list[tuple[float, float]]]:
    """The object's rate whose 4-writer success/s is closest to the benchmark's, and the scan."""
    want = MEASURED_WRITERS[FIT_WRITERS]["succ_s"]
    scan = [(r, model_point(with_two_buckets(r, burst, where), FIT_WRITERS, replications=FIT_RUNS)["succ_s"])
            for r in RATES_PER_S]
    return min(scan, key=lambda x: abs(x[1] - want))[0], scan


def main() -> None:
    preds, scans = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        preds[TODAY] = {w: model_point(with_limit(1, 1, where), w) for w in MEASURED_WRITERS}
        preds["the object's debt (3.15 /s, burst 6, cost 2.25)"] = {
            w: model_point(with_limit(DEBT[0], DEBT[1], where, DEBT[2]), w) for w in MEASURED_WRITERS}
        for burst in OBJECT_BURSTS:
            rate, scans[burst] = fit_rate(burst, where)
            preds[f"two buckets: object {rate:g} /s, burst {burst:g}; client 3.15 /s, burst 6, cost 2.25"] = {
                w: model_point(with_two_buckets(rate, burst, where), w) for w in MEASURED_WRITERS}
    want = MEASURED_WRITERS[FIT_WRITERS]["succ_s"]
    lines = [f"The object's rate fitted at {FIT_WRITERS} writers (measured success/s {want}; {FIT_RUNS} runs of "
             "300 s a point):", "", "| object burst | " + " | ".join(f"{r:g} /s" for r in RATES_PER_S) + " |",
             "|---|" + "---|" * len(RATES_PER_S)]
    lines += [f"| {b:g} | " + " | ".join(f"{s:.3f}" for _, s in scans[b]) + " |" for b in OBJECT_BURSTS]
    lines += ["", "Each writer count 5 runs of 300 s (experiments/cas-bench-measured.yaml, gcp); success "
              "latencies from the HEAD to the end; the benchmark's figures: endive analysis/distributions.json, "
              "GCP CAS per_thread:", ""] + _writers_table(preds) + [""]
    lines += [f"Closer to the benchmark than today's bucket at 2, 4, 8, 16 writers: {name}: "
              f"{_closer(preds[TODAY], p)}" for name, p in preds.items() if name != TODAY]
    text = "\n".join(lines)
    print(text)
    (HERE / "gcs_client_fit.md").write_text(
        "# GCS's soft limit: the object's bucket and each client's (`benchmarks/calibration/gcs_client_fit.py`)\n\n"
        + text + "\n")


if __name__ == "__main__":
    main()
