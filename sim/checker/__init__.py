"""Independent invariant checker for recorded histories (`history.parquet`).

The checker replays the recorded events with its own catalog state (seq = 0, v[t] = 0 at the start)
and compares every recorded observation against that replay. It deliberately imports nothing from
the simulator: a bug in the engine's bookkeeping must not be able to hide itself by also being
in the checker. Only the standard library, numpy and pandas are used.

One module per family of invariants, and the parts they share:
- `replay.py`: `check_history` and `Replay`, the driver: the checks every row shares, then the row to the family
  of its kind; `finish` for what only the whole history shows.
- `cas.py`: `Catalog`, invariants 1 to 5: versions, reads, CASes and their 429s, prepares and validation, ends.
- `tokens.py`: `Tokens`, invariant 6: the per-object mutation limits' token buckets, `store_write` rows.
- `locks.py`: `Locks`, invariant 7: lock requests, grants, releases, timeouts, a storage lock's `lock_write` rows.
- `state.py`: what the families share: the design, the violations and each transaction's record (`Ledger`).
- `rows.py`: a row as read, `Violation`, `load_history`, `format_violation`.

Invariants (numbers as in docs/MODEL.md, "History and invariants"):

0. format: required columns, unique `i`, known kinds, events on the table the transaction began on.
1. CAS: a successful CAS expected the replayed seq at its effect point, a failed one did not; the
   recorded seq/version after every CAS equal the replayed ones; a CAS expects the seq its
   transaction last read; successful CASes number 1..N without gaps (final seq == N).
2. final v[t] equals the successful CASes on t; aborted/unfinished transactions changed nothing.
3. every transaction begins once, ends exactly once (with a valid outcome and reason), has no events
   before its begin or after its end, commits iff it has exactly one successful CAS, and makes no
   more CAS attempts than allowed (and as many as its end row says); one that ends `throttled` (its
   storage client gave a request up) had its last conditional write answered 429.
4. serializability: a successful CAS installs metadata prepared on the version it replaces (no lost
   update); a VO validated every snapshot between its base read and the version it replaced; in seq
   order each table's committed versions run 1, 2, 3, ...
5. reads return exactly the replayed state at their effect point (neither from the future nor
   stale); answers come no earlier than effect points; time never goes backwards in `i` order; a
   transaction does not act before it has learned the answer of its previous catalog operation.
6. per-object mutation limit (only when `mutation_rate_per_s` is given): every `cas` row (ok or not)
   found a token in its object's bucket (refilled at the rate up to the burst; a fresh name starts
   full) and took it; every `throttled` row found none (and took `mutation_refusal_tokens`, if given), unless a
   bucket per client limited the writes too (`client_limit`: its 429 may come from the client's bucket).
7. locks (only when `lock_scope` is given): at most one holder of a lock at any instant (a grant only
   of a free lock, a release only by its holder); under a FIFO discipline (`lock_fifo`) grants in
   request order, a given-up request leaving the queue; every successful CAS made by the holder of its
   table's lock; a lock row names its lock (`seq`: the table, or 0 for the one global lock).

Catalog designs (docs/MODEL.md, "Named designs"), chosen by the keyword arguments of `check_history`:
- `scope="global"` (default): one global seq; a CAS expects seq and fails on any commit.
- `scope="table"`: one pointer per table; `read`/`cas`/`throttled` rows record seq = version = v[t];
  a CAS to t expects v[t] and only commits to t make it fail. Invariant 1 runs per table.
- `protocol="log"` (always per table): reads are LISTs of t's log, a `cas` is the put-if-absent of
  entry expected+1, and `prepare` rows carry the entries checked, for FA as well as VO; a committed
  transaction of either op must have checked every entry between its base read and the one it
  replaced. The base read counts as a prepare with nothing checked at its version (stale first
  attempt without a prepare row).
- `version_files=True` (scope table, rewrite): a `cas` creates version file expected+1 of its table, a name
  of its own per version (invariant 6's buckets, as the log's entries).
- `reread_before_cas=True` (scope global, rewrite): a read right after a prepare is the attempt's re-read;
  if it sees the table moved since that prepare, the attempt failed there, without a CAS (invariant 3 counts
  it as an attempt).
- `moved_fails=True` (protocol log; delta-rs with `commit.max_retries: 0`): a read after the base read that sees
  the log moved since the transaction's last prepare (or its base read) failed the attempt there, without a check
  or a CAS (invariant 3 counts it as an attempt), and the transaction ends `retries_exhausted`.
- `log_store=True` (Delta's DynamoDB log store, protocol log): the limit of invariant 6 is the store's
  table's write capacity, one bucket for every table; `store_write` rows (an entry's completion write,
  after its commit: allowed after its transaction's end) take from it too, `ok` if they found capacity;
  `store_read` rows (a Query, a GetItem) take from its read capacity (`read_rate_per_s`, `read_burst`), and
  one throttled is the last request of a transaction that ends `throttled` when its client gave it up.
- `lock_scope="table"|"global"` (a commit lock, `lock_fifo` for its FIFO disciplines): `lock_request`,
  `lock_grant`, `lock_release` and `lock_timeout` rows replay the locks; a release may follow its
  transaction's end (its commit ended the transaction; the unlock takes effect after), and a
  `lock_timeout` whose `attempts` is 1 failed a commit attempt (counted as one, as a CAS). With
  `lock_object=True` (Hudi's storage lock) `lock_write` rows are its object's conditional PUTs: invariant
  6 replays them on the object's bucket; a release whose PUT was throttled leaves the lock held until it
  expires, and its `lock_release` comes at the first grant after.
`throttled` rows (a conditional write answered 429) change nothing, are not attempts, and follow
the ordering rules of `cas` rows. `fault` rows (docs/MODEL.md, "Unknown outcomes"): `ok` 1, the answer of
its last CAS was lost (a REST server's 409 may come after its re-load); `ok` 0, a conditional write answered 5xx
before it took effect (like a 429: nothing changed, no attempt, its token taken). Until the transaction's next read,
a CAS of it is its storage client's resend (no attempt). A transaction ends `duplicated` iff two or more of its
CASes succeeded (the second after a lost answer), `unknown` only after a fault, landed or not: `outcomes_resolved`
says which, from the history. Invariant numbers are those of MODEL.md; 6 is the checker's own.
"""

from .replay import Replay, check_history, outcomes_resolved
from .rows import REQUIRED_COLUMNS, Violation, format_violation, load_history

__all__ = ["Violation", "check_history", "load_history", "format_violation", "outcomes_resolved", "REQUIRED_COLUMNS"]
