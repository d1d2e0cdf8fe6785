"""GCS's per-object limit under the measured set (docs/MODEL.md, "Concurrent writes to one object"): the token
bucket's rate and burst, fitted to the ONE-writer conditional-write loop, with the benchmark's client resending
each 429 (gax's schedule, `storage.throttle_retry.policy: gax`).

    python benchmarks/calibration/gcs_limit_fit.py [--ops 20000]     # prints the grid's best; writes gcs_limit_fit.md

What is fitted: `mutation_rate_per_s` and `mutation_burst` of gcp's measured set, nothing else (the requests'
latencies are the measured set's, fitted to the loop's body by profiles_fit.py). The objective: the largest
relative error over the loop's median, mean, p95 and p99 (providers/gcp.yaml, measured.loop), over a grid, each
point one writer's run of `--ops` operations (the same random streams at every point). Two to 16 writers are
the model's prediction (experiments/cas-bench-measured.yaml), not fitted.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from sim.config import from_dict, set_path  # noqa: E402
from sim.providers import measured_loop  # noqa: E402
from sim.run import run  # noqa: E402

RATES_PER_S = np.round(np.arange(1.0, 3.01, 0.1), 2)
BURSTS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0)
FIGURES = (("median_ms", 50), ("mean_ms", None), ("p95_ms", 95), ("p99_ms", 99))


def one_writer(provider_path: str, ops: int) -> tuple[np.ndarray, dict]:
    """experiments/cas-bench-measured.yaml at one writer on `provider_path`, about `ops` operations: each
    committed operation's time from its HEAD to its end, and the run's summary."""
    data = yaml.safe_load((ROOT / "experiments" / "cas-bench-measured.yaml").read_text())["base"]
    duration = ops * measured_loop("gcp")["mean_ms"]
    for path, value in {"storage.provider": provider_path, "duration_ms": duration,
                        "drain_limit_ms": duration}.items():
        set_path(data, path, value)
    r = run(from_dict(data), 0, engine="fast")
    rec = r.records
    done = rec[rec["outcome"] == "committed"]
    return (done["end_ms"] - done["arrival_ms"]).to_numpy(), r.summary


def figures(x: np.ndarray, summary: dict) -> dict:
    out = {k: float(np.mean(x)) if q is None else float(np.percentile(x, q)) for k, q in FIGURES}
    out["ops_per_s"] = summary["throughput_cps"]
    out["throttled_per_op"] = summary["throttled"] / max(1, summary["committed"] + summary["aborted"])
    return out


def with_limit(rate: float, burst: float, where: Path, refusal_tokens: float = 0.0, client: dict | None = None) -> str:
    """providers/gcp.yaml with its measured set's limit set to (rate, burst, the tokens a refusal takes), and a
    bucket per client if `client` gives one (`client_rate_per_s`, ...), written under `where`."""
    data = yaml.safe_load((ROOT / "providers" / "gcp.yaml").read_text())
    data["measured"]["mutation_rate_per_s"] = float(rate)
    data["measured"]["mutation_burst"] = float(burst)
    for key in ("mutation_refusal_tokens", "client_rate_per_s", "client_burst", "client_refusal_tokens",
                "concurrency_fit"):
        data["measured"].pop(key, None)     # the provider's own limit left out: only what is given here
    if refusal_tokens:
        data["measured"]["mutation_refusal_tokens"] = float(refusal_tokens)
    data["measured"].update(client or {})
    name = f"gcp_{rate:g}_{burst:g}_{refusal_tokens:g}" + ("_client" if client else "")
    path = where / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def worst(got: dict, loop: dict) -> float:
    return max(abs(got[k] / loop[k] - 1) for k, _ in FIGURES)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", type=int, default=20_000)
    args = ap.parse_args()
    loop = measured_loop("gcp")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for rate in RATES_PER_S:
            for burst in BURSTS:
                got = figures(*one_writer(with_limit(rate, burst, Path(tmp)), args.ops))
                rows.append((worst(got, loop), float(rate), burst, got))
    rows.sort(key=lambda r: r[0])
    head = ["| rate /s | burst | median ms | mean ms | p95 ms | p99 ms | ops/s | 429s per op | largest error |",
            "|---|---|---|---|---|---|---|---|---|",
            f"| measured | | {loop['median_ms']:.1f} | {loop['mean_ms']:.1f} | {loop['p95_ms']:.0f} | "
            f"{loop['p99_ms']:.0f} | {loop['ops_per_s']:.2f} | | |"]
    body = [f"| {rate:g} | {burst:g} | {g['median_ms']:.1f} | {g['mean_ms']:.1f} | {g['p95_ms']:.0f} | "
            f"{g['p99_ms']:.0f} | {g['ops_per_s']:.2f} | {g['throttled_per_op']:.2f} | {100 * w:.1f} % |"
            for w, rate, burst, g in rows[:10]]
    text = "\n".join(head + body)
    print(text)
    (HERE / "gcs_limit_fit.md").write_text(
        "# GCS's per-object limit, fitted to one writer (`benchmarks/calibration/gcs_limit_fit.py`)\n\n"
        f"The grid's ten best (rate x burst over {len(RATES_PER_S)} x {len(BURSTS)} points, {args.ops} operations "
        "each, one writer, the measured set's requests, gax's resends), by the largest relative error over the "
        "median, mean, p95 and p99:\n\n" + text + "\n")


if __name__ == "__main__":
    main()
