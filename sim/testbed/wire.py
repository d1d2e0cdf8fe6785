"""Where one request ends and the next begins, on the wire: HTTP/1.1 (S3, the Iceberg REST catalog) and
PostgreSQL's protocol. The proxy feeds each connection's bytes, both ways, to a framer, which tells it each
exchange's kind, status and size; the proxy times them.

Both protocols answer requests in order on a connection: a framer queues the requests it has seen the client send
and completes the oldest when the server's answer to it has been read whole. Neither changes a byte.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit


@dataclass
class Exchange:
    """One request and its answer on a connection. `start_ms`: the request's first byte reached the proxy;
    `end_ms`: the answer's last byte is delivered to the client (its delay included). `sent_ms`: the request's
    last byte reached the server; `answered_ms`: the answer's first byte came back from it (their difference is
    the server's own time, no delay in it)."""
    kind: str
    detail: str
    start_ms: float
    bytes_out: int = 0
    bytes_in: int = 0
    status: str = ""
    end_ms: float = float("nan")
    sent_ms: float = float("nan")
    answered_ms: float = float("nan")
    extra: dict = field(default_factory=dict)

    @property
    def server_ms(self) -> float:
        return self.answered_ms - self.sent_ms


# -------------------------------------------------------------------------------------------------------- HTTP

_HEAD_END = b"\r\n\r\n"
_REQUEST_LINE = re.compile(rb"^(GET|PUT|POST|HEAD|DELETE|OPTIONS|PATCH) /")


def _headers(head: bytes) -> tuple[str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return lines[0], hdrs


def s3_kind(method: str, target: str, hdrs: dict[str, str]) -> str:
    """An S3 request's kind, as the model's request kinds: head, get, list, put, cas (a conditional PUT),
    delete, and the multipart upload's steps."""
    url = urlsplit(target)
    q = parse_qs(url.query, keep_blank_values=True)
    path = [p for p in url.path.split("/") if p]
    if method == "HEAD":
        return "head"
    if method == "GET":
        if len(path) <= 1 or "list-type" in q or "prefix" in q or "delimiter" in q:
            return "list"
        return "get"
    if method == "PUT":
        if "partNumber" in q:
            return "put_part"
        if len(path) <= 1:
            return "bucket"
        if "if-none-match" in hdrs or "if-match" in hdrs:
            return "cas"
        return "copy" if "x-amz-copy-source" in hdrs else "put"
    if method == "POST":
        if "uploads" in q:
            return "mpu_start"
        if "uploadId" in q:
            return "mpu_complete"
        if "delete" in q:
            return "delete"
    if method == "DELETE":
        return "delete"
    return method.lower()


_REST_TABLE = re.compile(r"^/v1/(?:[^/]+/)?namespaces/[^/]+/tables/[^/]+$")


def rest_kind(method: str, target: str, hdrs: dict[str, str]) -> str:
    """An Iceberg REST catalog request's kind: load (GET a table), commit (POST a table), token, config..."""
    path = urlsplit(target).path
    if path.endswith("/oauth/tokens"):
        return "token"
    if path.endswith("/config"):
        return "config"
    if _REST_TABLE.match(path):
        return {"GET": "load", "POST": "commit", "HEAD": "exists", "DELETE": "drop"}.get(method, method.lower())
    if path.endswith("/transactions/commit"):
        return "commit_tx"
    return f"{method.lower()}_other"


class HttpFramer:
    """HTTP/1.1 exchanges on one connection (keep-alive, `Expect: 100-continue`, chunked or sized bodies)."""

    def __init__(self, kind_of):
        self.kind_of = kind_of
        self.req_buf = b""
        self.req_body_left = 0       # bytes of the current request's body still to come (-1: chunked)
        self.resp_buf = b""
        self.resp_body_left = 0
        self.resp_chunked = False
        self.pending: deque[Exchange] = deque()     # requests sent, oldest first, not yet answered
        self.answering: Exchange | None = None      # the exchange whose final answer is being read
        self.done: list[Exchange] = []
        self.body_owner: Exchange | None = None     # the request whose body is still coming

    # client -> server; `due_ms`: when this chunk reaches the server
    def client(self, data: bytes, now_ms: float, due_ms: float = float("nan")) -> None:
        self._client(data, now_ms)
        if self.pending:
            self.pending[-1].sent_ms = due_ms

    def _client(self, data: bytes, now_ms: float) -> None:
        while data:
            if self.req_body_left and self.body_owner is not None and self.body_owner.status \
                    and _REQUEST_LINE.match(data):
                self.req_body_left = 0       # answered before its body (a failed `Expect: 100-continue`):
                continue                     # the client sent no body, this is its next request
            if self.req_body_left > 0:
                take = min(len(data), self.req_body_left)
                self.req_body_left -= take
                self.pending[-1].bytes_out += take
                data = data[take:]
                continue
            if self.req_body_left == -1:      # a chunked request body: consumed whole (rare from these clients)
                self.pending[-1].bytes_out += len(data)
                if data.endswith(b"0\r\n\r\n"):
                    self.req_body_left = 0
                return
            self.req_buf += data
            data = b""
            end = self.req_buf.find(_HEAD_END)
            if end < 0:
                return
            head, rest = self.req_buf[:end], self.req_buf[end + 4:]
            self.req_buf = b""
            line, hdrs = _headers(head)
            method, target = (line.split(" ") + ["", ""])[:2]
            ex = Exchange(self.kind_of(method, target, hdrs), f"{method} {target}"[:200], now_ms)
            ex.extra["method"] = method
            self.pending.append(ex)
            self.body_owner = ex
            if hdrs.get("transfer-encoding", "").lower() == "chunked":
                self.req_body_left = -1
            else:
                self.req_body_left = int(hdrs.get("content-length", "0") or 0)
            data = rest

    # server -> client; `now_ms`: this chunk came from the server, `deliver_ms`: it reaches the client
    def server(self, data: bytes, now_ms: float, deliver_ms: float) -> None:
        while data:
            if self.answering is None:
                self.resp_buf += data
                data = b""
                end = self.resp_buf.find(_HEAD_END)
                if end < 0:
                    return
                head, data = self.resp_buf[:end], self.resp_buf[end + 4:]
                self.resp_buf = b""
                line, hdrs = _headers(head)
                status = (line.split(" ") + [""])[1]
                if status.startswith("1"):       # 100 Continue: an interim answer, the final one follows
                    continue
                if not self.pending:
                    continue                     # an answer to nothing we saw (never on these protocols)
                ex = self.answering = self.pending.popleft()
                ex.answered_ms = now_ms
                ex.status = status
                ex.bytes_in += len(head) + 4
                self.resp_chunked = hdrs.get("transfer-encoding", "").lower() == "chunked"
                no_body = ex.extra.get("method") == "HEAD" or status in ("204", "304")
                self.resp_body_left = 0 if no_body or self.resp_chunked else int(hdrs.get("content-length", "0") or 0)
                if not self.resp_chunked and self.resp_body_left == 0:
                    self._finish(deliver_ms)
                continue
            ex = self.answering
            if self.resp_chunked:
                ex.bytes_in += len(data)
                self.resp_buf += data
                data = b""
                if self.resp_buf.endswith(b"0\r\n\r\n"):
                    self.resp_buf = b""
                    self._finish(deliver_ms)
                elif len(self.resp_buf) > 16:
                    self.resp_buf = self.resp_buf[-16:]
                continue
            take = min(len(data), self.resp_body_left)
            ex.bytes_in += take
            self.resp_body_left -= take
            data = data[take:]
            if self.resp_body_left == 0:
                self._finish(deliver_ms)

    def _finish(self, deliver_ms: float) -> None:
        ex = self.answering
        ex.end_ms = deliver_ms
        self.done.append(ex)
        self.answering = None


# ---------------------------------------------------------------------------------------------------- PostgreSQL

_SSL_REQUEST, _GSS_REQUEST, _CANCEL = 80877103, 80877104, 80877102
_FIRST_WORD = re.compile(r"\s*(?:/\*.*?\*/\s*)*([A-Za-z]+)", re.S)


def sql_kind(sql: str) -> str:
    """A statement's kind: its first keyword, lower-cased (select, insert, update, begin, commit, ...)."""
    m = _FIRST_WORD.match(sql)
    return m.group(1).lower() if m else "other"


class PgFramer:
    """PostgreSQL's protocol (v3) on one connection: the startup (kind `connect`, to the first ReadyForQuery),
    then one exchange per simple Query or per extended-protocol batch up to its Sync, each ended by the server's
    ReadyForQuery. COPY's data messages belong to the exchange that started them."""

    def __init__(self):
        self.cbuf = b""
        self.sbuf = b""
        self.startup = True
        self.ssl_answer_due = 0           # single-byte answers to an SSL/GSS request still to read
        self.open: Exchange | None = None         # the client's batch being sent (until its Query or Sync)
        self.pending: deque[Exchange] = deque()   # batches sent, each awaiting its ReadyForQuery
        self.done: list[Exchange] = []

    def client(self, data: bytes, now_ms: float, due_ms: float = float("nan")) -> None:
        self._client(data, now_ms)
        last = self.open if self.open is not None else (self.pending[-1] if self.pending else None)
        if last is not None:
            last.sent_ms = due_ms

    def _client(self, data: bytes, now_ms: float) -> None:
        self.cbuf += data
        while True:
            if self.startup and not self.pending and self.open is None:
                if len(self.cbuf) < 8:
                    return
                n = int.from_bytes(self.cbuf[:4], "big")
                code = int.from_bytes(self.cbuf[4:8], "big")
                if len(self.cbuf) < n:
                    return
                self.cbuf = self.cbuf[n:]
                if code in (_SSL_REQUEST, _GSS_REQUEST):
                    self.ssl_answer_due += 1
                    continue
                if code == _CANCEL:
                    return
                self.pending.append(Exchange("connect", "startup", now_ms, bytes_out=n))
                continue
            if len(self.cbuf) < 5:
                return
            typ = chr(self.cbuf[0])
            n = int.from_bytes(self.cbuf[1:5], "big")
            if len(self.cbuf) < 1 + n:
                return
            body, self.cbuf = self.cbuf[5:1 + n], self.cbuf[1 + n:]
            self._client_message(typ, body, now_ms, 1 + n)

    def _client_message(self, typ: str, body: bytes, now_ms: float, size: int) -> None:
        if typ in ("d", "c", "f", "p") and self.pending and self.open is None:   # COPY data, auth: the exchange
            self.pending[-1].bytes_out += size                                   # already waiting
            return
        if typ == "X":
            return
        if self.open is None:
            self.open = Exchange("other", "", now_ms)
        ex = self.open
        ex.bytes_out += size
        if typ in ("Q", "P"):
            sql = body[body.index(b"\0") + 1:] if typ == "P" else body
            text = sql.split(b"\0", 1)[0].decode("utf-8", "replace")
            if ex.kind == "other":
                ex.kind, ex.detail = sql_kind(text), " ".join(text.split())[:200]
            else:
                ex.extra["statements"] = ex.extra.get("statements", 1) + 1
        if typ in ("Q", "S"):
            self.pending.append(ex)
            self.open = None

    def server(self, data: bytes, now_ms: float, deliver_ms: float) -> None:
        if self.pending and self.pending[0].answered_ms != self.pending[0].answered_ms and not self.ssl_answer_due:
            self.pending[0].answered_ms = now_ms
        self.sbuf += data
        while self.sbuf:
            if self.ssl_answer_due:
                self.sbuf = self.sbuf[1:]
                self.ssl_answer_due -= 1
                continue
            if len(self.sbuf) < 5:
                return
            typ = chr(self.sbuf[0])
            n = int.from_bytes(self.sbuf[1:5], "big")
            if len(self.sbuf) < 1 + n:
                return
            body, self.sbuf = self.sbuf[5:1 + n], self.sbuf[1 + n:]
            if not self.pending:
                continue
            ex = self.pending[0]
            ex.bytes_in += 1 + n
            if typ == "E" and not ex.status:
                ex.status = _sqlstate(body)
            elif typ == "Z":
                ex.extra["tx_status"] = body[:1].decode()
                ex.status = ex.status or "ok"
                ex.end_ms = deliver_ms
                self.done.append(self.pending.popleft())
                self.startup = False
                if self.pending and self.sbuf:            # the next answer's first byte is in this chunk
                    self.pending[0].answered_ms = now_ms


def _sqlstate(body: bytes) -> str:
    """An ErrorResponse's SQLSTATE (its `C` field): 40001 serialization failure, 23505 unique violation, ..."""
    for part in body.split(b"\0"):
        if part[:1] == b"C":
            return part[1:].decode("ascii", "replace")
    return "error"
