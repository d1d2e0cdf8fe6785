"""The testbed's SeaweedFS's lock per directory marker, measured alone: `sim.testbed.marker_lock.measure`.

Two PUTs of one marker from one thread, the second `offset` ms after the first: the share of pairs with an answer
late at each offset, the window (the area under that curve) and the poll (a late answer's extra time). `sim testbed
run` measures the same on its S3 server and the report's PyIceberg profiles give it to the model.

    python benchmarks/testbed/marker_window.py --rounds 40 --step-ms 0.25 --max-ms 3
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path


def main() -> None:
    from sim.testbed.marker_lock import measure_servers
    from sim.testbed.servers import servers_for
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40, help="pairs at each offset")
    ap.add_argument("--step-ms", type=float, default=0.25)
    ap.add_argument("--max-ms", type=float, default=3.0)
    ap.add_argument("--json", help="write the measurement here too")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d, servers_for({"s3"}, Path(d)) as srv:
        probe = measure_servers(srv, a.rounds, log=lambda s: print(s, flush=True), step_ms=a.step_ms,
                                max_ms=a.max_ms)
    print(f"window {probe['window_ms']:.3f} ms, poll {probe['poll_ms']:.1f} ms (late answers' median "
          f"{probe['late_median_ms']:.1f} ms, on time {probe['on_time_median_ms']:.2f} ms), "
          f"{probe['late']} late answers of {2 * probe['pairs']}")
    if a.json:
        Path(a.json).write_text(json.dumps(probe, indent=1))


if __name__ == "__main__":
    main()
