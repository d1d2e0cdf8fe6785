"""Iceberg REST's commit over several tables, `POST /v1/{prefix}/transactions/commit` (docs/model/multi-table.md;
`workload.multi_table` with design rest and `catalog.server.variant` reference, polaris or nessie, or design
rest-lakekeeper).

The client (Iceberg's Java `RESTSessionCatalog.commitTransaction`) loads its k tables one after another, runs,
writes each table's manifest list, and POSTs every table's requirements (its version at the load) and updates at
once. It sends the POST once: a 409 is a `CommitFailedException` to the caller, which this model ends as an abort
(`retries_exhausted`: one attempt allowed); a 5xx a `CommitStateUnknownException`, no retry either. Nessie's
one-table commit (design rest, variant nessie, one table a commit) is the same commit on its branch, and its
client's 409 is retried as Iceberg's client retries any commit (`_conflict`).
The servers check each table's own requirement only (atomic commit, not isolation):
- Polaris (`IcebergCatalogHandler` L1340-1500): table by table in request order, a load (a database read, then
  metadata.json's GET) whose requirement check fails the request at once, then the new metadata.json's PUT; then
  one JDBC transaction with one `UPDATE ... WHERE entity_version = ?` per table, in request order, each taking the
  table's row lock (a statement that finds the row locked waits for the holder's COMMIT, then matches nothing if the
  row changed), and a COMMIT. A row that matched nothing rolls the transaction back: the metadata files written are
  DELETEd, 409, no server retry. Two transactions that lock tables in opposite orders deadlock: PostgreSQL finds it
  when the later waiter has waited `deadlock_timeout` (1 s) and fails that statement (40P01), which Polaris does not
  retry: a 500.
- Lakekeeper >= 0.10 (`server/tables.rs` L1630-1821): one database read of every table, every requirement checked
  (409 at once), the k metadata.json PUTs in parallel, then one write transaction: one bulk UPDATE of every row
  (its row locks taken one after another, here in table order, so two such UPDATEs never deadlock), then its COMMIT.
  A row that changed rolls it back: the files are DELETEd and the server retries up to 2 times (sleep, then the
  whole call again, whose requirement check then fails: a 409).
- Nessie (`IcebergApiV1GenericResource.java` L235-273, `CatalogServiceImpl.java` L470-578, `CommitRetry.java`):
  every table's change is an operation of one commit on the branch. It reads the contents at the ref's hash (one
  read: every requirement checked, a 409 at once), writes the metadata files (here in parallel: an estimate), then
  tries its commit: it reads the branch's head, fails for a key of its own changed since that hash (a conflict:
  the files DELETEd, 409), else rebases onto the head and CASes the ref from it; a CAS lost to another commit on any
  table sleeps and tries again (`_ref_sleep_ms`) for up to 5 s.
- Iceberg's reference server (`RESTCatalogAdapter.commitTransaction`, a test adapter that the iceberg-rest-fixture
  image serves): every table loaded and refreshed, its requirement checked (409 at once), its updates applied in
  memory; then each table's transaction commits in turn, its own autocommit UPDATE: not atomic. A table that moved
  since the check has its change dropped with no error (`_seq_*`): the answer is 204 whatever landed.
Each database request takes a connection of the server's pool (`sim.model.capacity`); the write transaction keeps
its connection from its first UPDATE to its COMMIT or rollback. Request counts include the server's.
"""
from .. import capacity, fifo, growth, history, multi_table
from ..capacity import ROW_LOCKS, SERVER_POOL
from ..draws import take
from ..jit import handler, model_function
from ..operations import attempts_allowed
from ..retry import delay_ms
from ..state import PC, Kind, Outcome, Reason, Src
from ..transaction import PARKED, end, pooled, start


# ------------------------------------------------------------------------------------------ the client

@model_function
def _load(m, j, i, before):
    """The client's loadTable of its i-th table `before` ms from now (a database read on the server's pool)."""
    m.tx[j].mt_i = i
    return pooled(m, j, m.p.client_pool, Src.READ, PC.MT_LOAD, before)


@handler
def on_client_load(m, j, now):
    """The client's load of its i-th table: its effect point captures the table's version (the requirement its POST
    will carry); the next table's load follows the answer; after the last, the runtime, each table's manifest list,
    and the POST."""
    tx = m.tx[j]
    i = tx.mt_i
    k = multi_table.at(m, j, i)
    t = m.mt_table[k]
    v = m.versions[t]
    m.mt_base[k] = v
    tx.catalog_reads += 1
    answer_in = m.p.g * tx.op_latency_ms
    if m.p.server_get:
        tx.gets += 1
        answer_in += growth.get_metadata_ms(m, t)
    if i == 0:
        tx.seq = v
        tx.version = v
    if history.on(m):
        history.read(m, now, j, t, v, v, now + answer_in)
    if i + 1 < tx.ntables:
        return _load(m, j, i + 1, answer_in)
    if tx.attempts > 0:                              # a retry's refresh: the job has run
        return _post(m, j, answer_in + _prepare(m, j, now))
    tx.runtime_end_ms = now + answer_in + tx.runtime_ms
    return _post(m, j, answer_in + tx.runtime_ms + _prepare(m, j, now))


@model_function
def _prepare(m, j, now):
    """Each table's new manifest list: a GET of its current one, a PUT (the server writes metadata.json)."""
    tx = m.tx[j]
    cost = 0.0
    for i in range(tx.ntables):
        k = multi_table.at(m, j, i)
        t = m.mt_table[k]
        cost += growth.get_list_ms(m, t) + take(m, Src.PUT_ML)
        tx.gets += 1
        tx.puts += 1
        tx.manifest_lists_read += 1
        if history.on(m):
            history.prepare(m, now, j, t, m.mt_base[k], -1, -1)
    tx.prepared = tx.version
    return cost


@model_function
def _post(m, j, before):
    """The client POSTs `before` ms from now: the server's first load comes first (Lakekeeper sorts the tables it
    locks by id: here its copy of the list)."""
    tx = m.tx[j]
    tx.server_retries = 0
    if m.p.mt_bulk:
        multi_table.sort_by_table(m, j)
    return _server_load(m, j, 0, before)


@model_function
def _rejected(m, j, now, answer_in, reason):
    """The client gets the server's error `answer_in` ms from now and ends: a 409 it does not retry, or a 500
    (CommitStateUnknownException), which no one retries."""
    return end(m, j, now, Outcome.ABORTED, reason, now + answer_in)


@model_function
def _conflict(m, j, now, answer_in):
    """The client gets a 409 (CommitFailedException) `answer_in` ms from now. Over several tables it sent
    /transactions/commit once: it ends. A one-table commit (Nessie's updateTable: the same commit on its branch)
    is retried as Iceberg's client retries any commit (`attempts_allowed`): its sleep (`retry.table`), then the
    table's load again, a new manifest list and the POST."""
    tx = m.tx[j]
    if tx.attempts >= attempts_allowed(m, j):
        return _rejected(m, j, now, answer_in, Reason.EXHAUSTED)
    delay = delay_ms(m, m.p.policy_table, m.p.jitter_table, m.bo_tab, tx.table_conflicts, Src.BACKOFF)
    tx.backoff_ms += delay
    return _load(m, j, 0, answer_in + delay)


# ------------------------------------------------------------------------------------------ the server's loads

@model_function
def _server_load(m, j, i, before):
    """The server's load `before` ms from now: of table i (Polaris), or of every table at once (Lakekeeper)."""
    m.tx[j].mt_i = i
    return pooled(m, j, SERVER_POOL, Src.READ, PC.MT_SRV_LOAD, before)


@handler
def on_server_load(m, j, now):
    """The server's load: its requirement check. Lakekeeper checks every table, then PUTs the k metadata.json in
    parallel and runs its write transaction; Polaris checks table i, PUTs its metadata.json, then loads the next
    table or, after the last, runs its JDBC transaction. A table that moved: 409 (Polaris first DELETEs the files
    it wrote)."""
    tx = m.tx[j]
    tx.catalog_reads += 1
    answer_in = m.p.g * tx.op_latency_ms
    first = tx.server_retries == 0
    if m.p.mt_seq:
        return _seq_load(m, j, now, answer_in)
    if m.p.mt_bulk or m.p.mt_ref:
        failed = multi_table.first_moved(m, j, 0, tx.ntables)
        if failed >= 0:
            return _requirement_failed(m, j, now, failed, answer_in, 0, first)
        put = 0.0
        for i in range(tx.ntables):
            put = max(put, growth.put_metadata_ms(m, j, now))
        tx.puts += tx.ntables
        if m.p.mt_ref:
            tx.ref_t0_ms = now + answer_in + put
            return _ref_attempt(m, j, answer_in + put)
        return _update(m, j, answer_in + put)
    i = tx.mt_i
    if m.p.server_get:
        tx.gets += 1
        answer_in += growth.get_metadata_ms(m, m.mt_table[multi_table.at(m, j, i)])
    if multi_table.moved(m, j, i):
        return _requirement_failed(m, j, now, i, answer_in, i, first)
    tx.puts += 1
    put = growth.put_metadata_ms(m, j, now)
    if i + 1 < tx.ntables:
        return _server_load(m, j, i + 1, answer_in + put)
    return _update(m, j, answer_in + put)


@model_function
def _requirement_failed(m, j, now, i, answer_in, written, first):
    """Table i's requirement failed at the server's load: the attempt's outcome is a 409, after the server
    DELETEs the `written` metadata files it wrote (Polaris)."""
    if first:
        multi_table.lost_attempt(m, j, now, i, answer_in)
    elif history.on(m):                              # (a server retry's load: its attempt was counted)
        t = m.mt_table[multi_table.at(m, j, i)]
        history.read(m, now, j, t, m.versions[t], m.versions[t], now + answer_in)
    return _conflict(m, j, now, answer_in + multi_table.deletes(m, j, written))


# ------------------------------------------------------------------------------------------ the write transaction

@model_function
def _update(m, j, before):
    """The write transaction's first UPDATE `before` ms from now, on a connection of the pool that it keeps to its
    COMMIT or rollback."""
    m.tx[j].mt_i = 0
    return pooled(m, j, SERVER_POOL, Src.CAS, PC.MT_UPDATE, before)


@handler
def on_update(m, j, now):
    """An UPDATE reaches its rows: Lakekeeper's one statement takes every row lock in turn, Polaris's statement
    its table's (`mt_i` rows are held); a row held by another transaction is waited for (parked)."""
    tx = m.tx[j]
    capacity.keep(m, j, True)
    t = m.mt_table[multi_table.at(m, j, tx.mt_i)]
    while capacity.lock_row(m, j, now, t):
        tx.mt_i += 1
        if not m.p.mt_bulk or tx.mt_i == tx.ntables:
            return _matched(m, j, now, m.p.g * tx.op_latency_ms)
        t = m.mt_table[multi_table.at(m, j, tx.mt_i)]
    tx.row_wait = t
    tx.pc = PC.MT_ROW_WAIT
    fifo.ask_timer(m, j, m.p.deadlock_ms)
    return PARKED


@handler
def on_row_granted(m, j, now):
    """A statement that waited for a row lock gets it (its holder committed or rolled back): Polaris's statement
    checks its row as it is now; Lakekeeper's goes on to its next row."""
    tx = m.tx[j]
    tx.row_wait = -1
    tx.mt_i += 1
    if m.p.mt_bulk and tx.mt_i < tx.ntables:
        return on_update(m, j, now)
    return _matched(m, j, now, m.p.g * tx.op_latency_ms)


@model_function
def _matched(m, j, now, answer_in):
    """The statement holds its rows (`mt_i` of them): their WHERE is checked against the rows as they are. All
    matched: Polaris's next UPDATE, or the COMMIT, on the same connection. One did not (a table moved since the
    client's load): the transaction rolls back."""
    tx = m.tx[j]
    failed = multi_table.first_moved(m, j, 0 if m.p.mt_bulk else tx.mt_i - 1, tx.mt_i)
    if failed >= 0:
        return _rolled_back(m, j, now, failed, answer_in)
    if tx.mt_i < tx.ntables:
        return start(m, j, Src.CAS, PC.MT_UPDATE, answer_in)
    return start(m, j, Src.CAS, PC.MT_COMMIT, answer_in)


@model_function
def _release_rows(m, j, now):
    """The transaction's COMMIT or rollback releases the row locks it holds (its first `mt_i` tables); each goes to
    its first waiter, run now in the order released."""
    tx = m.tx[j]
    for i in range(tx.mt_i):
        capacity.unlock_row(m, j, now, m.mt_table[multi_table.at(m, j, i)])
    tx.mt_i = 0
    capacity.keep(m, j, False)


@model_function
def _rolled_back(m, j, now, i, answer_in):
    """A row matched nothing (table i moved): the transaction rolls back, releasing its rows; the server DELETEs the
    k metadata files and retries where it does (Lakekeeper), else the client gets a 409."""
    tx = m.tx[j]
    if tx.server_retries == 0:                       # (a retry's load fails before: a table never moves back)
        multi_table.lost_attempt(m, j, now, i, answer_in)
    _release_rows(m, j, now)
    pending = answer_in + multi_table.deletes(m, j, tx.ntables)
    r = tx.server_retries + 1
    if r > m.p.server_retries or not m.p.mt_bulk:
        return _conflict(m, j, now, pending)
    tx.server_retries = r
    sleep = delay_ms(m, m.p.policy_server, m.p.jitter_server, m.bo_srv, r, Src.SERVER)
    return _server_load(m, j, 0, pending + sleep)


@handler
def on_commit(m, j, now):
    """The COMMIT: every table's new version becomes visible at once (one commit of the run), and its row locks
    are released."""
    _landed(m, j, now)
    _release_rows(m, j, now)
    return end(m, j, now, Outcome.COMMITTED, Reason.NONE, now + m.p.g * m.tx[j].op_latency_ms)


@model_function
def _landed(m, j, now):
    """The commit lands on every one of its tables at once: one commit of the run (its CAS row on its first table,
    a `landed` row on each other)."""
    tx = m.tx[j]
    if tx.server_retries == 0 or m.p.mt_ref:         # (Nessie's retries of its ref are the server's own)
        tx.attempts += 1
    answer_in = m.p.g * tx.op_latency_ms
    m.run[0].seq += 1
    for i in range(tx.ntables):
        k = multi_table.at(m, j, i)
        t = m.mt_table[k]
        m.versions[t] += 1
        if history.on(m):
            v = m.versions[t]
            if i == 0:
                history.cas(m, now, j, t, v, v, m.mt_base[k], True, now + answer_in)
            else:
                history.landed_too(m, now, j, t, v, v, m.mt_base[k], now + answer_in)


@handler
def on_deadlock(m, j, now):
    """PostgreSQL found this statement's wait deadlocked (40P01): the statement fails and the transaction rolls
    back, releasing its rows; the server DELETEs the files it wrote and answers 500, which no one retries."""
    tx = m.tx[j]
    if tx.server_retries == 0:
        tx.attempts += 1
    answer_in = m.p.g * tx.op_latency_ms
    _release_rows(m, j, now)
    return _rejected(m, j, now, answer_in + multi_table.deletes(m, j, tx.ntables), Reason.DEADLOCK)


# ------------------------------------------------------------------------------------------ the reference server

@model_function
def _seq_load(m, j, now, answer_in):
    """Iceberg's reference server (`RESTCatalogAdapter.commitTransaction`), its first pass: each table is loaded
    (a read of its row, then its metadata.json's GET), then a transaction made on it, which refreshes it (both
    again); the request's requirement is checked against that refresh (409 at once: nothing written yet) and its
    updates applied in memory. After the last table, each table's transaction commits in turn."""
    tx = m.tx[j]
    i = tx.mt_i // 2                                 # (two loads a table: `mt_i` counts them)
    tx.gets += 1
    answer_in += growth.get_metadata_ms(m, m.mt_table[multi_table.at(m, j, i)])
    if tx.mt_i % 2 == 1 and multi_table.moved(m, j, i):
        return _requirement_failed(m, j, now, i, answer_in, 0, True)
    if tx.mt_i + 1 < 2 * tx.ntables:
        return _server_load(m, j, tx.mt_i + 1, answer_in)
    return _seq_refresh(m, j, 0, answer_in)


@model_function
def _seq_refresh(m, j, i, before):
    """Table i's transaction commits (`commitSimpleTransaction`) `before` ms from now: first it refreshes the table
    (`applyUpdates`: a read of its row, then metadata.json's GET)."""
    m.tx[j].mt_i = i
    return pooled(m, j, SERVER_POOL, Src.READ, PC.MT_SEQ_REFRESH, before)


@handler
def on_seq_refresh(m, j, now):
    """The refresh of table i: a table that moved since the first pass's check is taken as it is now, and the
    transaction's pending updates replayed on it: there are none (the request's were applied to the first pass's
    copy), so there is nothing to commit, and table i's change is dropped with no error. Else its metadata.json's
    PUT, then the commit's check of the row (JdbcTableOperations.doCommit)."""
    tx = m.tx[j]
    i = tx.mt_i
    k = multi_table.at(m, j, i)
    t = m.mt_table[k]
    tx.catalog_reads += 1
    tx.gets += 1
    answer_in = m.p.g * tx.op_latency_ms + growth.get_metadata_ms(m, t)
    if history.on(m):
        history.read(m, now, j, t, m.versions[t], m.versions[t], now + answer_in)
    if m.versions[t] != m.mt_base[k]:
        return _seq_next(m, j, now, i, answer_in)
    tx.puts += 1
    return pooled(m, j, SERVER_POOL, Src.READ, PC.MT_SEQ_CHECK, answer_in + growth.put_metadata_ms(m, j, now))


@handler
def on_seq_check(m, j, now):
    """The commit's check: the row's metadata location against the base's (a read of the row): a table that moved is
    a CommitFailedException; else the UPDATE."""
    tx = m.tx[j]
    t = m.mt_table[multi_table.at(m, j, tx.mt_i)]
    tx.catalog_reads += 1
    answer_in = m.p.g * tx.op_latency_ms
    if history.on(m):
        history.read(m, now, j, t, m.versions[t], m.versions[t], now + answer_in)
    if m.versions[t] != m.mt_base[multi_table.at(m, j, tx.mt_i)]:
        return _seq_retry(m, j, answer_in)
    return pooled(m, j, SERVER_POOL, Src.CAS, PC.MT_SEQ_UPDATE, answer_in)


@handler
def on_seq_update(m, j, now):
    """The UPDATE ... WHERE metadata_location = the base's (autocommit): table i's change lands, a commit of the run
    of its own, or a CommitFailedException."""
    tx = m.tx[j]
    i = tx.mt_i
    k = multi_table.at(m, j, i)
    t = m.mt_table[k]
    answer_in = m.p.g * tx.op_latency_ms
    if m.versions[t] != m.mt_base[k]:
        return _seq_retry(m, j, answer_in)
    m.versions[t] += 1
    m.run[0].seq += 1
    tx.landings += 1
    if tx.landings == 1:                             # the POST's one attempt, recorded at its first landing
        tx.attempts += 1
    if history.on(m):
        v = m.versions[t]
        if tx.landings == 1:
            history.cas(m, now, j, t, v, v, m.mt_base[k], True, now + answer_in)
        else:
            history.landed_too(m, now, j, t, v, v, m.mt_base[k], now + answer_in)
    return _seq_next(m, j, now, i, answer_in)


@model_function
def _seq_retry(m, j, answer_in):
    """A CommitFailedException: `Tasks`' sleep (the server's retry policy), then the refresh again, which finds the
    table moved: its change is dropped (the metadata.json written stays, orphaned)."""
    tx = m.tx[j]
    tx.server_retries += 1
    sleep = delay_ms(m, m.p.policy_server, m.p.jitter_server, m.bo_srv, tx.server_retries, Src.SERVER)
    return _seq_refresh(m, j, tx.mt_i, answer_in + sleep)


@model_function
def _seq_next(m, j, now, i, answer_in):
    """Table i's transaction is done (landed, or its change dropped): the next table's, or after the last the
    answer, 204 whatever was dropped: committed, or `partial` (reason `dropped`) with `landings` of its tables."""
    tx = m.tx[j]
    tx.server_retries = 0
    if i + 1 < tx.ntables:
        return _seq_refresh(m, j, i + 1, answer_in)
    if tx.landings == tx.ntables:
        return end(m, j, now, Outcome.COMMITTED, Reason.NONE, now + answer_in)
    return end(m, j, now, Outcome.PARTIAL, Reason.DROPPED, now + answer_in)


# ------------------------------------------------------------------------------------------ Nessie's ref

@model_function
def _ref_attempt(m, j, before):
    """Nessie's commit attempt `before` ms from now: a read of the branch's head, then the CAS of its ref."""
    return pooled(m, j, SERVER_POOL, Src.READ, PC.MT_REF_HEAD, before)


@handler
def on_ref_head(m, j, now):
    """Nessie reads the branch's head: a key of the commit changed since the hash it loaded (a table moved since the
    client's load) is a conflict, a 409 after the files are DELETEd; else the commit is rebased onto the head and
    its ref CASed from it."""
    tx = m.tx[j]
    tx.catalog_reads += 1
    answer_in = m.p.g * tx.op_latency_ms
    tx.ref_try_ms = now - m.p.f * tx.op_latency_ms
    failed = multi_table.first_moved(m, j, 0, tx.ntables)
    if failed >= 0:
        multi_table.lost_attempt(m, j, now, failed, answer_in)
        return _conflict(m, j, now, answer_in + multi_table.deletes(m, j, tx.ntables))
    tx.ref_head = m.run[0].seq
    return pooled(m, j, SERVER_POOL, Src.CAS, PC.MT_REF_CAS, answer_in)


@handler
def on_ref_cas(m, j, now):
    """The CAS of the branch's ref from the head the attempt read: committed, or (another commit moved the head)
    Nessie's retry: its sleep, then another attempt; past its timeout the commit fails (the files DELETEd; a 5xx
    the client does not retry)."""
    tx = m.tx[j]
    answer_in = m.p.g * tx.op_latency_ms
    if m.run[0].seq == tx.ref_head:
        _landed(m, j, now)
        return end(m, j, now, Outcome.COMMITTED, Reason.NONE, now + answer_in)
    tx.server_retries += 1
    sleep = _ref_sleep_ms(m, j, now + answer_in)
    if sleep < 0.0:
        return _rejected(m, j, now, answer_in + multi_table.deletes(m, j, tx.ntables), Reason.EXHAUSTED)
    return _ref_attempt(m, j, answer_in + sleep)


@model_function
def _ref_sleep_ms(m, j, at):
    """Nessie's sleep before its r-th retry, learnt `at` (`CommitRetry.TryLoopState`): U[lower, upper), both bounds
    doubled after each sleep while the upper stays within max_sleep (then the upper is max_sleep), cut to the time
    left; it then subtracts the last attempt's time, taken as start minus now, a negative: so it adds it. -1: past
    its timeout."""
    tx = m.tx[j]
    total = at - tx.ref_t0_ms
    if total > m.p.ref_timeout_ms:
        return -1.0
    lower, upper = m.p.ref_lower_ms, m.p.ref_upper_ms
    for _ in range(tx.server_retries - 1):
        if 2.0 * upper <= m.p.ref_max_sleep_ms:
            lower *= 2.0
            upper *= 2.0
        else:
            upper = m.p.ref_max_sleep_ms
    sleep = lower + (upper - lower) * take(m, Src.SERVER)
    sleep = min(m.p.ref_timeout_ms - total, sleep)
    return max(1.0, sleep + (at - tx.ref_try_ms))


@model_function
def _deadlocked(m, j):
    """Whether j's wait closes a cycle: the holder of the row it waits for waits for a row whose holder ... is j."""
    x = j
    for _ in range(len(m.tx)):
        t = m.tx[x].row_wait
        if t < 0:
            return False
        x = m.pl[ROW_LOCKS + t].holder
        if x == j:
            return True
        if x < 0:
            return False
    return False


@model_function
def timer(m, j, now):
    """A parked waiter's timer: a row lock's wait checks for a deadlock `deadlock_timeout` after it began (found:
    out of the row's queue, it runs now at `MT_DEADLOCK`); a connection's wait its pool's acquire timeout."""
    tx = m.tx[j]
    if tx.pc != PC.MT_ROW_WAIT:
        return capacity.on_timer(m, j, now)
    if tx.pool_queued_ms + m.p.deadlock_ms != now or not _deadlocked(m, j):
        return False
    fifo.remove(m, m.pl[ROW_LOCKS + tx.row_wait], j, True)
    tx.lock_wait_ms += now - tx.pool_queued_ms      # (a wait given up: counted as a lock's timed-out request)
    tx.lock_timeouts += 1
    if history.on(m):
        history.lock(m, Kind.LOCK_TIMEOUT, now, j, tx.row_wait, tx.row_wait, 1 if tx.server_retries == 0 else 0)
    tx.row_wait = -1
    tx.pc = PC.MT_DEADLOCK
    return True


@handler
def on_pool_timeout(m, j, now):
    """A request gave its wait for a connection up: the server answers 500 (after DELETEing the metadata files it
    wrote: all of them if its write transaction waited, Polaris's of the tables it loaded if a load did), which the
    client does not retry (`pool_timeout`)."""
    tx = m.tx[j]
    if tx.landings > 0:                              # (the reference server: some tables committed before)
        return end(m, j, now, Outcome.PARTIAL, Reason.POOL_TIMEOUT, now)
    answer_in = 0.0
    if tx.pool_pc == PC.MT_UPDATE or tx.pool_pc == PC.MT_REF_HEAD or tx.pool_pc == PC.MT_REF_CAS:
        answer_in = multi_table.deletes(m, j, tx.ntables)
    elif tx.pool_pc == PC.MT_SRV_LOAD and not m.p.mt_bulk:
        answer_in = multi_table.deletes(m, j, tx.mt_i)
    return end(m, j, now, Outcome.ABORTED, Reason.POOL_TIMEOUT, now + answer_in)


@handler
def step(m, j, now):
    """Transaction j's handler for the event it waits at: its pool's, or an effect point, whose connection is
    released at its answer (but the write transaction's)."""
    pc = m.tx[j].pc
    if capacity.owns(pc):
        return capacity.route(m, j, now, pc)
    release_in = capacity.answer_in(m, j)
    if pc == PC.INIT:
        delay = _load(m, j, 0, 0.0)
    elif pc == PC.MT_LOAD:
        delay = on_client_load(m, j, now)
    elif pc == PC.MT_SRV_LOAD:
        delay = on_server_load(m, j, now)
    elif pc == PC.MT_UPDATE:
        delay = on_update(m, j, now)
    elif pc == PC.MT_ROW_WAIT:
        delay = on_row_granted(m, j, now)
    elif pc == PC.MT_COMMIT:
        delay = on_commit(m, j, now)
    elif pc == PC.MT_DEADLOCK:
        delay = on_deadlock(m, j, now)
    elif pc == PC.MT_REF_HEAD:
        delay = on_ref_head(m, j, now)
    elif pc == PC.MT_REF_CAS:
        delay = on_ref_cas(m, j, now)
    elif pc == PC.MT_SEQ_REFRESH:
        delay = on_seq_refresh(m, j, now)
    elif pc == PC.MT_SEQ_CHECK:
        delay = on_seq_check(m, j, now)
    elif pc == PC.MT_SEQ_UPDATE:
        delay = on_seq_update(m, j, now)
    else:
        delay = on_pool_timeout(m, j, now)
    return capacity.after_effect(m, j, release_in, delay)


# its loop's first compile, CPU s on 2 cores, when another design's mechanisms are cached (benchmarks/compile.py,
# 2026-11-29: 12.8 s with its first run): the engine's `compiling the model ...` line quotes it
COMPILE_S = 11

OWNS = dict(effect_points=("MT_LOAD", "MT_SRV_LOAD", "MT_UPDATE", "MT_ROW_WAIT", "MT_COMMIT", "MT_DEADLOCK",
                          "MT_REF_HEAD", "MT_REF_CAS", "MT_SEQ_REFRESH", "MT_SEQ_CHECK", "MT_SEQ_UPDATE"),
            fields=("ntables", "mt_i", "row_wait", "ref_head", "ref_t0_ms", "ref_try_ms"),
            params=("tables_max", "mt_bulk", "deadlock_ms", "mt_ref", "mt_seq", "ref_lower_ms", "ref_upper_ms",
                    "ref_max_sleep_ms", "ref_timeout_ms"), sources=())
