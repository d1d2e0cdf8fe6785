"""Invariant 7, commit locks: at most one holder of a lock at any instant, grants in request order under a FIFO
discipline, every successful CAS made by its table's lock holder; the rows a lock leaves (`lock_request`,
`lock_grant`, `lock_release`, `lock_timeout`, and a storage lock's `lock_write`)."""

from __future__ import annotations

from typing import Callable

from .rows import Event, as_bool, as_int
from .state import Ledger, Txn
from .tokens import Tokens


class Locks:
    """The run's locks (`scope` None: it has none) replayed: who holds each, and under FIFO who waits."""

    def __init__(self, ledger: Ledger, tokens: Tokens, scope: str | None, fifo: bool, on_object: bool):
        self.ledger, self.tokens = ledger, tokens
        self.flag = ledger.flag
        self.scope, self.fifo, self.on_object = scope, fifo, on_object
        self.holder: dict[int, int] = {}               # lock -> the transaction holding it
        self.queue: dict[int, list[int]] = {}          # FIFO: lock -> its waiters in request order

    def lock_of(self, table: int) -> int:
        return table if self.scope == "table" else 0

    def holder_str(self, k: int) -> str:
        h = self.holder.get(k)
        return "no one" if h is None else f"txn {h}"

    def check_commit(self, e: Event) -> None:
        """A successful CAS (checked by the catalog) made by the holder of its table's lock."""
        if self.scope is not None and self.holder.get(self.lock_of(e.table)) != e.txn:
            self.flag(7, e, f"commit to table {e.table} outside its lock (held by "
                            f"{self.holder_str(self.lock_of(e.table))})")

    def route(self, handler: Callable[[Event, Txn, int], None]) -> Callable[[Event], None]:
        """The route of a lock row kind: the checks every lock row shares, then `handler(row, its transaction,
        its lock)` if the run has a lock."""
        def check(e: Event) -> None:
            x = self.ledger.txn_of(e)
            if self.scope is None:
                self.flag(0, e, f"{e.kind} row in a run without a lock")
                return
            k, rec = self.lock_of(e.table), as_int(e.raw.seq)
            if rec != k:
                self.flag(0, e, f"{e.kind} names lock {rec} but the transaction's lock is {k} (lock scope "
                                f"{self.scope})")
            handler(e, x, k)
        return check

    def _close_request(self, e: Event, x: Txn, how: str) -> None:
        """A grant or a give-up ends the transaction's open request: it must have one."""
        if not x.lock_asked:
            self.flag(7, e, f"lock {how} without an open request")
        x.lock_asked = False

    def request(self, e: Event, x: Txn, k: int) -> None:
        if x.lock_asked:
            self.flag(7, e, "lock request while its previous one is still open")
        x.lock_asked = True
        if self.fifo:
            self.queue.setdefault(k, []).append(e.txn)

    def grant(self, e: Event, x: Txn, k: int) -> None:
        """A grant only of a free lock, and under FIFO to the first waiter."""
        self._close_request(e, x, "granted")
        if k in self.holder:
            self.flag(7, e, f"lock {k} granted while {self.holder_str(k)} holds it (two holders)")
        self.holder[k] = e.txn
        if not self.fifo:
            return
        q = self.queue.get(k, [])
        if q and q[0] != e.txn:
            self.flag(7, e, f"lock {k} granted out of request order: txn {q[0]} asked first and still waits")
        if e.txn in q:
            q.remove(e.txn)

    def release(self, e: Event, x: Txn, k: int) -> None:
        """Only the holder releases."""
        if self.holder.get(k) != e.txn:
            self.flag(7, e, f"lock {k} released by a transaction that does not hold it (held by "
                            f"{self.holder_str(k)})")
            return
        del self.holder[k]

    def write(self, e: Event, x: Txn, k: int) -> None:
        """Invariant 6 on a storage lock's object: each write (an acquire's or a release's conditional PUT) found a
        token of its mutation limit and took it (`ok`), or found none (throttled)."""
        if not self.on_object:
            self.flag(0, e, "lock_write row in a run whose lock is not a storage object")
        else:
            self.tokens.take(e, -1, throttled=not as_bool(e.raw.ok), name=("lock object", k))

    def timeout(self, e: Event, x: Txn, k: int) -> None:
        """A request given up leaves the queue; one that failed its commit attempt counts as an attempt."""
        self._close_request(e, x, "request given up")
        if self.fifo and e.txn in self.queue.get(k, []):
            self.queue[k].remove(e.txn)
        if as_int(e.raw.attempts) == 1:
            x.last_write = "lock_timeout"
            self.ledger.count_attempt(e, x, "attempt {n} (failed at its lock)")
