"""A delay proxy in front of each server, one listening port per (server, writer), that logs every request.

The kernel here has no netem, so latency is added in user space: each chunk read from either side is written on
after a draw from the stated one-way delay (a fixed part plus a lognormal, seeded), never before the chunk ahead of
it (chunks stay in order), so a round trip costs at least twice the fixed part. A port per writer tells whose
requests are whose. Each request's latency is timed as the proxy sees it: from its first byte arriving to its
answer's last byte delivered to the client, the delays both ways included (`wire` frames the protocols).

The proxy is a process of its own (spawned: its event loop must not share the writers' cores' Python lock), run
by `Proxy` as a context manager; its log is a Parquet file, one row per request.
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import multiprocessing as mp
import os
import signal
from dataclasses import asdict, dataclass
from pathlib import Path

from .servers import ServerError

LOG_COLUMNS = ("server", "writer", "conn", "seq", "kind", "detail", "status", "start_ms", "end_ms", "latency_ms",
               "server_ms", "bytes_out", "bytes_in", "tx_status", "statements")


@dataclass(frozen=True)
class Delay:
    """One way's delay of each chunk: `fixed_ms` plus a lognormal of median `median_ms` and `sigma` (none when
    `median_ms` is 0)."""
    fixed_ms: float = 0.0
    median_ms: float = 0.0
    sigma: float = 0.0

    def __post_init__(self):
        if self.fixed_ms < 0 or self.median_ms < 0 or self.sigma < 0:
            raise ValueError(f"a delay's parts must be >= 0: {self}")

    def draw_ms(self, rng) -> float:
        if self.median_ms <= 0:
            return self.fixed_ms
        return self.fixed_ms + self.median_ms * math.exp(self.sigma * rng.standard_normal())

    def label(self) -> str:
        if self.median_ms <= 0:
            return f"{self.fixed_ms:g} ms"
        return f"{self.fixed_ms:g} ms + LogNormal({self.median_ms:g} ms, {self.sigma:g})"


@dataclass(frozen=True)
class Route:
    """A listening port that forwards to `upstream` (host, port): `server` names it (s3, pg, rest), `protocol`
    frames it (s3, rest, pg), `writer` is whose connections it carries (-1: the setup's and the check's)."""
    server: str
    protocol: str
    upstream: tuple
    writer: int


class Proxy:
    """The proxy process: `with Proxy(routes, delay, seed, log) as p: p.address(i)`; on exit it stops, and its log
    (`log`) is written."""

    def __init__(self, routes: list[Route], delay: Delay, seed: int, log: Path):
        self.routes, self.delay, self.seed, self.log = list(routes), delay, seed, Path(log)
        self.ports: list[int] = []
        self.process = None
        self._conn = None

    def __enter__(self) -> "Proxy":
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, name="sim-testbed-proxy", daemon=True,
                                   args=(child, [asdict(r) for r in self.routes], asdict(self.delay), self.seed,
                                         str(self.log), os.getpid()))
        self.process.start()
        child.close()
        self._conn = parent
        try:
            if not parent.poll(30):
                raise EOFError("no answer within 30 s")
            msg = parent.recv()
        except (EOFError, OSError) as exc:
            self._kill()
            raise ServerError(f"the delay proxy did not start ({exc or 'it exited'})") from None
        if "error" in msg:
            self._kill()
            raise ServerError(f"the delay proxy did not start: {msg['error']}")
        self.ports = msg["ports"]
        return self

    def address(self, i: int) -> tuple[str, int]:
        return "127.0.0.1", self.ports[i]

    @property
    def pid(self) -> int:
        return self.process.pid

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and write the log (waiting up to 30 s for it), else kill the process."""
        if self.process is None:
            return
        with contextlib.suppress(OSError, EOFError, BrokenPipeError):
            self._conn.send("stop")
            if self._conn.poll(30):
                self._conn.recv()
        self._kill()

    def _kill(self) -> None:
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.process = None


# ------------------------------------------------------------------------------------------- the proxy's process

def _serve(conn, routes: list[dict], delay: dict, seed: int, log: str, parent_pid: int) -> None:
    from ..orphans import end_with_parent
    end_with_parent(parent_pid)                      # a SIGKILLed parent cannot stop it
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the parent stops it (a Ctrl-C reaches the whole group)
    try:
        asyncio.run(_main(conn, [Route(**{**r, "upstream": tuple(r["upstream"])}) for r in routes],
                          Delay(**delay), seed, Path(log)))
    except Exception as exc:     # noqa: BLE001 (reported to the parent, one line)
        with contextlib.suppress(OSError, BrokenPipeError):
            conn.send({"error": f"{type(exc).__name__}: {exc}"})


async def _main(conn, routes: list[Route], delay: Delay, seed: int, log: Path) -> None:
    import numpy as np

    loop = asyncio.get_running_loop()
    rows: list[tuple] = []
    counter = itertools.count()      # one stream a connection and direction, the k-th of the seed's
    streams = (np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(k,))) for k in counter)
    servers = []
    for route in routes:
        def factory(route=route):
            return _Client(loop, route, delay, streams, rows)
        servers.append(await loop.create_server(factory, "127.0.0.1", 0))
    conn.send({"ports": [s.sockets[0].getsockname()[1] for s in servers]})
    stop = asyncio.Event()
    loop.add_reader(conn.fileno(), stop.set)
    await stop.wait()
    loop.remove_reader(conn.fileno())
    for s in servers:
        s.close()
    _write_log(rows, log)
    conn.send({"rows": len(rows)})


def _write_log(rows: list[tuple], log: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    cols = list(zip(*rows)) if rows else [[] for _ in LOG_COLUMNS]
    types = {"writer": pa.int64(), "conn": pa.int64(), "seq": pa.int64(), "start_ms": pa.float64(),
             "end_ms": pa.float64(), "latency_ms": pa.float64(), "server_ms": pa.float64(), "bytes_out": pa.int64(),
             "bytes_in": pa.int64(),
             "statements": pa.int64()}
    table = pa.table({name: pa.array(list(c), type=types.get(name, pa.string())) for name, c in zip(LOG_COLUMNS, cols)})
    log.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, log)


class _Side:
    """One direction of a connection: chunks written on at their due times, in order."""

    def __init__(self, loop, delay: Delay, rng):
        self.loop, self.delay, self.rng = loop, delay, rng
        self.last_s = 0.0
        self.transport = None
        self.held: list[tuple[float, bytes]] = []    # chunks due before the far side's connection is open

    def due_s(self) -> float:
        """When a chunk read now is written on: after its delay, and strictly after the chunk ahead of it."""
        due = self.loop.time() + self.delay.draw_ms(self.rng) / 1000.0
        self.last_s = due = max(due, self.last_s + 1e-6)
        return due

    def send_at(self, due: float, data: bytes) -> None:
        if self.transport is None:
            self.held.append((due, data))
        else:
            self.loop.call_at(due, self._write, data)

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def attach(self, transport) -> None:
        self.transport = transport
        for due, data in self.held:
            self.loop.call_at(due, self._write, data)
        self.held = []

    def close_after_last(self) -> None:
        def close():
            if self.transport is not None:
                self.transport.close()
        self.loop.call_at(max(self.last_s, self.loop.time()) + 1e-6, close)


_CONN_IDS = iter(range(1 << 62))


def _framer(protocol: str):
    from .wire import HttpFramer, PgFramer, rest_kind, s3_kind
    if protocol == "pg":
        return PgFramer()
    return HttpFramer(s3_kind if protocol == "s3" else rest_kind)


class _Client(asyncio.Protocol):
    """A client's connection to a route's port, and ours to its server."""

    def __init__(self, loop, route: Route, delay: Delay, streams, rows: list):
        self.loop, self.route, self.rows = loop, route, rows
        self.conn_id = next(_CONN_IDS)
        self.framer = _framer(route.protocol)
        self.up = _Side(loop, delay, next(streams))     # client -> server
        self.down = _Side(loop, delay, next(streams))   # server -> client
        self.logged = 0

    def connection_made(self, transport) -> None:
        self.down.attach(transport)
        transport.set_write_buffer_limits(high=1 << 26)
        self.loop.create_task(self._connect())

    async def _connect(self) -> None:
        try:
            host, port = self.route.upstream
            await self.loop.create_connection(lambda: _Upstream(self), host, port)
        except OSError:
            self.down.transport.close()

    def data_received(self, data: bytes) -> None:
        due = self.up.due_s()
        self.framer.client(data, self.loop.time() * 1000.0, due * 1000.0)
        self.up.send_at(due, data)

    def from_server(self, data: bytes) -> None:
        due = self.down.due_s()
        self.framer.server(data, self.loop.time() * 1000.0, due * 1000.0)
        self._log_done()
        self.down.send_at(due, data)

    def _log_done(self) -> None:
        for ex in self.framer.done[self.logged:]:
            self.rows.append((self.route.server, self.route.writer, self.conn_id, self.logged, ex.kind, ex.detail,
                              ex.status, ex.start_ms, ex.end_ms, ex.end_ms - ex.start_ms, ex.server_ms, ex.bytes_out,
                              ex.bytes_in, ex.extra.get("tx_status", ""), ex.extra.get("statements", 1)))
            self.logged += 1

    def eof_received(self):
        self.up.close_after_last()
        return True

    def connection_lost(self, exc) -> None:
        self.up.close_after_last()


class _Upstream(asyncio.Protocol):
    def __init__(self, client: _Client):
        self.client = client

    def connection_made(self, transport) -> None:
        transport.set_write_buffer_limits(high=1 << 26)
        self.client.up.attach(transport)

    def data_received(self, data: bytes) -> None:
        self.client.from_server(data)

    def eof_received(self):
        self.client.down.close_after_last()
        return True

    def connection_lost(self, exc) -> None:
        self.client.down.close_after_last()
