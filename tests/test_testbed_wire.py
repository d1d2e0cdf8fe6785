"""The testbed's delay proxy and its protocol framers (sim/testbed/proxy.py, wire.py): exchanges cut where HTTP and
PostgreSQL's protocol cut them, each round trip at least twice the one-way delay, chunks in order."""
from __future__ import annotations

import http.client
import http.server
import threading

import pandas as pd
import pytest

from sim.testbed.proxy import Delay, Proxy, Route
from sim.testbed.wire import HttpFramer, PgFramer, rest_kind, s3_kind, sql_kind


def _feed(framer, client: list[bytes], server: list[bytes]):
    t = 0.0
    for c in client:
        framer.client(c, t, t + 1)
        t += 1
    for s in server:
        framer.server(s, t, t + 1)
        t += 1
    return framer.done


def test_s3_kinds():
    assert s3_kind("PUT", "/b/k", {"if-none-match": "*"}) == "cas"
    assert s3_kind("PUT", "/b/k", {}) == "put"
    assert s3_kind("PUT", "/b/k?partNumber=1&uploadId=x", {}) == "put_part"
    assert s3_kind("POST", "/b/k?uploads", {}) == "mpu_start"
    assert s3_kind("POST", "/b/k?uploadId=x", {}) == "mpu_complete"
    assert s3_kind("GET", "/b?list-type=2&prefix=a", {}) == "list"
    assert s3_kind("GET", "/b/k", {}) == "get"
    assert s3_kind("HEAD", "/b/k", {}) == "head"
    assert rest_kind("POST", "/v1/lake/namespaces/ns/tables/t", {}) == "commit"
    assert rest_kind("GET", "/v1/namespaces/ns/tables/t", {}) == "load"
    assert sql_kind("  /* x */ UPDATE t SET a=1") == "update"


def test_http_keep_alive_sized_chunked_head_and_continue():
    f = HttpFramer(s3_kind)
    done = _feed(f, [b"PUT /b/k HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", b"hel", b"lo",
                     b"HEAD /b/k HTTP/1.1\r\n\r\n", b"GET /b/k HTTP/1.1\r\n\r\n"],
                 [b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
                  b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n",
                  b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", b"0\r\n\r\n"])
    assert [(e.kind, e.status) for e in done] == [("put", "200"), ("head", "200"), ("get", "200")]
    assert done[0].bytes_out == 5


def test_http_answered_before_its_body_takes_the_next_request():
    """A conditional PUT refused at its `Expect: 100-continue` sends no body; its next request is a request."""
    f = HttpFramer(s3_kind)
    f.client(b"PUT /b/k HTTP/1.1\r\nContent-Length: 5\r\nIf-None-Match: *\r\nExpect: 100-continue\r\n\r\n", 0, 1)
    f.server(b"HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n\r\n", 2, 3)
    f.client(b"GET /b/k HTTP/1.1\r\n\r\n", 4, 5)
    f.server(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 6, 7)
    assert [(e.kind, e.status) for e in f.done] == [("cas", "412"), ("get", "200")]


def _pg(typ: bytes, body: bytes) -> bytes:
    return typ + (len(body) + 4).to_bytes(4, "big") + body


def test_pg_startup_query_batch_copy_and_error():
    startup = (8).to_bytes(4, "big") + (80877103).to_bytes(4, "big")     # SSLRequest, answered 'N'
    params = (196608).to_bytes(4, "big") + b"user\0postgres\0\0"
    hello = (len(params) + 4).to_bytes(4, "big") + params
    ready = _pg(b"Z", b"I")
    f = PgFramer()
    f.client(startup, 0, 0.5)
    f.server(b"N", 1, 1.5)
    f.client(hello, 2, 2.5)
    f.server(_pg(b"R", b"\0\0\0\0") + ready, 3, 3.5)
    f.client(_pg(b"Q", b"BEGIN\0"), 4, 4.5)
    f.server(_pg(b"C", b"BEGIN\0") + _pg(b"Z", b"T"), 5, 5.5)
    f.client(_pg(b"P", b"\0SELECT 1\0\0\0") + _pg(b"B", b"\0" * 8) + _pg(b"E", b"\0" * 5) + _pg(b"S", b""), 6, 6.5)
    f.server(_pg(b"1", b"") + _pg(b"2", b"") + _pg(b"C", b"SELECT 1\0") + _pg(b"Z", b"T"), 7, 7.5)
    f.client(_pg(b"Q", b"UPDATE t SET a=1\0"), 8, 8.5)
    f.server(_pg(b"E", b"SERROR\0C40001\0Mcould not serialize\0\0") + _pg(b"Z", b"E"), 9, 9.5)
    assert [(e.kind, e.status) for e in f.done] == [("connect", "ok"), ("begin", "ok"), ("select", "ok"),
                                                    ("update", "40001")]
    assert f.done[3].extra["tx_status"] == "E"


class _Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def echo_server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv.server_address
    srv.shutdown()
    srv.server_close()


def test_proxy_delays_each_way_and_keeps_chunks_in_order(echo_server, tmp_path):
    """Round trips through the proxy take at least twice the one-way fixed delay (as the client and the proxy's
    log see them), and a body sent in many chunks with random delays comes back byte for byte (chunks in order)."""
    import time
    fixed = 15.0
    log = tmp_path / "requests.parquet"
    with Proxy([Route("s3", "s3", tuple(echo_server), 0)], Delay(fixed, 5.0, 1.0), 7, log) as proxy:
        conn = http.client.HTTPConnection(*proxy.address(0), timeout=30)
        sent = bytes(range(256)) * 1024              # 256 KiB: several chunks each way
        walls = []
        for _ in range(3):
            t = time.monotonic()
            conn.request("POST", "/b/k", body=sent)
            got = conn.getresponse().read()
            walls.append((time.monotonic() - t) * 1000)
            assert got == sent
        conn.close()
    df = pd.read_parquet(log)
    assert len(df) == 3 and (df["bytes_out"] == len(sent)).all()
    assert min(walls) >= 2 * fixed
    assert (df["latency_ms"] >= 2 * fixed).all()
    assert (df["server_ms"] >= 0).all() and (df["server_ms"] < df["latency_ms"]).all()
