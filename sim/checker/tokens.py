"""Invariant 6, per-object mutation limits: every conditional write (`cas`, a log store's `store_write`, a storage
lock's `lock_write`) found a token in its object's bucket and took it; every one answered 429 found none."""

from __future__ import annotations

import math

from .rows import Event, as_bool, fmt_t
from .state import Design, Ledger

# Float slack on token counts: a write needs >= 1 - eps tokens; a throttled one must have had < 1 + eps.
TOKEN_EPS = 1e-9
# The engine keeps exact buckets only for a table's newest log entry names (a ring of this many); an
# older name is taken as fresh. The checker is exact; this only explains a violation if one fires.
ENGINE_ENTRY_RING = 16


class Buckets:
    """Exact per-object token buckets: rate `rate` per second, capacity `burst`; a name never written before
    starts full."""

    def __init__(self, rate_per_s: float, burst: float, refusal_tokens: float = 0.0):
        rate, burst, refusal = float(rate_per_s), float(burst), float(refusal_tokens)
        if not (rate > 0 and math.isfinite(rate) and burst > 0 and math.isfinite(burst)):
            raise ValueError(f"mutation rate and burst must be positive and finite, not {rate!r}, {burst!r}")
        if not (refusal >= 0 and math.isfinite(refusal)):
            raise ValueError(f"a refusal's tokens must be finite and >= 0, not {refusal!r}")
        self.rate_per_ms = rate / 1000.0
        self.burst = burst
        self.refusal_tokens = refusal     # a refused write takes these too (the bucket may go below zero)
        self.state: dict[tuple, tuple[float, float]] = {}   # name -> (tokens, time_ms of last update)

    def tokens(self, name: tuple, t: float) -> tuple[float, float, float]:
        """Tokens the bucket of `name` holds at time t; the level it would have without the cap (inf for
        a fresh name); the time of its previous write (-inf)."""
        prev = self.state.get(name)
        if prev is None:
            return self.burst, math.inf, -math.inf
        tokens, last = prev
        uncapped = tokens + self.rate_per_ms * max(0.0, t - last)
        return min(self.burst, uncapped), uncapped, last

    def set(self, name: tuple, t: float, tokens: float) -> None:
        self.state[name] = (tokens, t)

    def limit(self) -> str:
        refusal = f", a refusal takes {self.refusal_tokens:g}" if self.refusal_tokens else ""
        return f"rate {self.rate_per_ms * 1000:g}/s, burst {self.burst:g}{refusal}"


def object_name(design: Design, table: int, expected: int) -> tuple:
    """The object a catalog CAS expecting `expected` writes: its bucket's name."""
    if design.version_files:
        return ("version", table, expected + 1)
    if design.log:
        return ("entry", table, expected + 1)
    return ("pointer", table) if design.per_table else ("catalog",)


def describe_object(name: tuple) -> str:
    if name[0] == "log store":
        return "the log store's table"
    if name[0] == "log store reads":
        return "the log store's table (its read capacity)"
    if name[0] == "lock object":
        return f"lock object {name[1]}"
    if name[0] == "entry":
        return f"log entry {name[2]} of table {name[1]}"
    if name[0] == "version":
        return f"version file v{name[2]}.metadata.json of table {name[1]}"
    if name[0] == "pointer":
        return f"table {name[1]}'s pointer object"
    return "the catalog object"


class Tokens:
    """The buckets of a run's mutation limit (none: nothing to check), replayed at every conditional write."""

    def __init__(self, ledger: Ledger, design: Design, buckets: Buckets | None, log_store: bool,
                 reads: Buckets | None = None, client_limit: bool = False):
        self.ledger, self.design, self.buckets, self.log_store = ledger, design, buckets, log_store
        self.client_limit = client_limit               # a bucket per client too: a 429 may leave the object's full
        self.reads = reads                             # a log store's read capacity (None: not checked)
        self.flag = ledger.flag
        self.newest_entry: dict[int, int] = {}         # log: newest entry name conditionally written, per table

    def conditional_write(self, e: Event, expected: int, throttled: bool) -> None:
        """Book a catalog CAS (or its 429) to its object: the newest log entry name, its bucket."""
        if self.design.log:
            self.newest_entry[e.table] = max(self.newest_entry.get(e.table, 0), expected + 1)
        self.take(e, expected, throttled)

    def store_write(self, e: Event) -> None:
        """With Delta's DynamoDB log store: an entry's completion write takes the table's capacity."""
        x = self.ledger.txn_of(e)
        if not self.log_store:
            self.flag(0, e, "store_write row in a run without a log store")
            return
        if x.ok_cas_row < 0:
            self.flag(3, e, "completion write of an entry its transaction never created")
        self.take(e, -1, throttled=not as_bool(e.raw.ok))

    def store_read(self, e: Event) -> None:
        """With Delta's DynamoDB log store: a read (a Query, a GetItem) takes a unit of the table's read capacity;
        one given up ends its transaction `throttled`."""
        x = self.ledger.txn_of(e)
        if not self.log_store:
            self.flag(0, e, "store_read row in a run without a log store")
            return
        throttled = not as_bool(e.raw.ok)
        if throttled:
            x.last_write = "throttled"
        self.take(e, -1, throttled, name=("log store reads",), buckets=self.reads)

    def take(self, e: Event, expected: int, throttled: bool, name: tuple | None = None,
             buckets: Buckets | None = None) -> None:
        """A write needs (and takes) a token of its object's bucket; a throttled one had none."""
        b, t = buckets or self.buckets, e.time_ms
        if b is None:
            return
        if name is None:
            name = ("log store",) if self.log_store else object_name(self.design, e.table, expected)
        tokens, uncapped, last = b.tokens(name, t)
        since = f"previous write to it at t={fmt_t(last)} ms" if last > -math.inf else "first write to it"
        what = ("read of " if name[0] == "log store reads" else "conditional write to ") + describe_object(name)
        if throttled:
            # A full bucket holds exactly `burst` tokens: with burst 1 the slack alone would excuse a 429 on
            # a full (or fresh) bucket, so judge by the level the refill reached before the cap.
            had_token = (uncapped if b.burst >= 1 else tokens) >= 1 + TOKEN_EPS
            if had_token and not self.client_limit:
                self.flag(6, e, f"{what} throttled at t={fmt_t(t)} ms although its "
                                f"bucket held {tokens:.6g} tokens ({b.limit()}; {since})")
            if b.refusal_tokens and not (self.client_limit and had_token):
                b.set(name, t, tokens - b.refusal_tokens)
            return
        if tokens < 1 - TOKEN_EPS:
            self.flag(6, e, f"{what} at t={fmt_t(t)} ms found only {tokens:.6g} "
                            f"tokens but was not throttled ({b.limit()}; {since}){self._ring_note(name)}")
        b.set(name, t, max(0.0, tokens - 1.0))   # clamp: report where the excess starts, once

    def _ring_note(self, name: tuple) -> str:
        """Why the engine may have let an untokened write through: it forgets old entry names' buckets."""
        if name[0] != "entry":
            return ""
        table, entry = name[1], name[2]
        newest = self.newest_entry.get(table, entry)
        if newest - entry < ENGINE_ENTRY_RING:
            return ""
        return (f"; this name is {newest - entry} entries behind the newest name {newest} written on table "
                f"{table}: the engine keeps exact buckets only for a table's {ENGINE_ENTRY_RING} newest entry "
                f"names and takes an older one as fresh")
