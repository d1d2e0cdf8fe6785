"""SeaweedFS's answer to concurrent PUTs of one directory marker, measured alone (no proxy, no table format).

PyIceberg's cleanup after a failed commit deletes each file it wrote and then PUTs the empty marker of its parent
directory (`metadata/`; PyArrowFileIO on pyarrow's S3FileSystem), and the losers of a round clean up at the same
moment. In the testbed's campaign such PUTs were answered about a second late while another PUT of the same marker
was in flight (docs/testbed.md, "Results"). This probe starts the testbed's SeaweedFS, and for each of `--rounds`
rounds has `--clients` clients PUT one marker at once (its directory holding a file already, as PyIceberg's does),
then, as the control, each a marker of its own: the share answered over 500 ms late, and that latency.

    python benchmarks/testbed/marker_probe.py --clients 2 --rounds 150
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from sim.testbed.marker_lock import LATE_MS, s3_client   # (an answer over LATE_MS is late)


def _rounds(srv, clients: int, rounds: int, same: bool) -> list[float]:
    """Each PUT's latency in ms: `clients` at once each round, of one marker (`same`) or of one each."""
    s3 = [s3_client(srv) for _ in range(clients)]
    barrier = threading.Barrier(clients)
    latencies: list[float] = []

    def run(i: int) -> None:
        for r in range(rounds):
            key = f"same{r}/metadata/" if same else f"own{r}/c{i}/metadata/"
            s3[i].put_object(Bucket="probe", Key=f"{key}file-{i}", Body=b"x")     # the directory exists
            barrier.wait()
            t = time.perf_counter()
            s3[i].put_object(Bucket="probe", Key=key, Body=b"")
            latencies.append((time.perf_counter() - t) * 1000.0)
            barrier.wait()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def main() -> None:
    from sim.testbed.servers import servers_for
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=150)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d, servers_for({"s3"}, Path(d)) as srv:
        s3_client(srv).create_bucket(Bucket="probe")
        for same in (True, False):
            lat = _rounds(srv, a.clients, a.rounds, same)
            late = [x for x in lat if x > LATE_MS]
            rest = [x for x in lat if x <= LATE_MS]
            print(f"{'one marker' if same else 'own markers'}, {a.clients} clients at once: {len(lat)} PUTs, "
                  f"{len(late)} answered late ({100 * len(late) / len(lat):.1f} %"
                  + (f", median {statistics.median(late):.0f} ms" if late else "")
                  + f"), the others' median {statistics.median(rest):.1f} ms")


if __name__ == "__main__":
    main()
