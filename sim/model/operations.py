"""Operations with read and write sets, and Iceberg's, Delta's and Hudi's rules between them (docs/MODEL.md,
"Operations and maintenance"; `workload.operations`, `maintenance`).

A table is `partitions` partitions; an operation reads and writes a set of them (`tx.parts`, one bit each): the
files an append adds, an overwrite or a row delta rewrites or deletes from, a compaction rewrites. Every commit
leaves its operation and partitions in its table's ring (`Model.ring_op`, `ring_parts`), so that a later
attempt's validation can walk what landed since its base, as Iceberg's `validationHistory` walks the snapshots
between its starting snapshot and the current one. For each commit that landed, the rule of the pair (the second
committer X against Y, which landed first) says: rebase (refresh and commit the same work again: the loop's
ordinary retry) or fatal (a ValidationException: the operation fails for good, its work lost). The rules
(`fatal`) are read from Iceberg's source (apache/iceberg @7f879b1):
- an append validates nothing: it only rebases (`FastAppend`);
- an overwrite (copy-on-write) or a row delta (merge-on-read deletes) under serializable isolation fails when Y
  added data files into its partitions (`MergingSnapshotProducer.validateAddedDataFiles`, L391-412; Spark's
  `SparkPositionDeltaWrite`, L277-291), and under either isolation when Y removed or deleted from the files it
  reads (Y an overwrite, a row delta or a compaction of its partitions: "Missing required files to delete",
  `ManifestFilterManager` L281-291; `validateNoNewDeletesForDataFiles`, L475-551; `validateAddedDVs`, L825+);
  but a row delta of equality deletes (Flink's streaming upserts) asks for no validation at all: it only rebases
  (Flink's `IcebergFilesCommitter`: "Row delta validations are not needed for streaming changes that write
  equality deletes");
- a compaction (`RewriteDataFiles`, one commit) never fails for an append, and fails when Y deleted from or
  rewrote its input files (an overwrite, a row delta or a compaction of its partitions; `BaseRewriteFiles.validate`
  L135-142, `failMissingDeletePaths`), but not for a row delta's equality deletes, which it ignores from its
  starting sequence number (`use-starting-sequence-number`, MergingSnapshotProducer L478, L538-543);
- a manifest rewrite (`BaseRewriteManifests`, L170-174, L286-298) fails when Y rewrote one of the manifests it
  replaces (an overwrite, a row delta or a compaction filter manifests; another manifest rewrite replaces them),
  not for a FastAppend's new manifest;
- an expiry (`RemoveSnapshots`) recomputes what it removes on every attempt: it never fails (L360-373);
- a schema change (`SchemaUpdate`, L473-476) commits once, against the base it read, with no retry loop
  (`attempts_allowed`): on a storage catalog any commit since its base fails it (CommitFailedException); through a
  REST server only another schema change does (its requirement is the current schema: `requirement_holds`).
Delta's rules are `fatal_delta`'s (a DELETE/UPDATE/MERGE is an overwrite, an OPTIMIZE a compaction, a metadata
change a schema change); its commits are checked as the log's attempts read them (`sim.model.delta`). DuckLake's
(a catalog that holds the file lists, `catalog.file_lists_inlined`) are `fatal_ducklake`'s (an insert is an append,
a delete or update an overwrite, a compaction a compaction, an alter a schema change), table by table. Hudi's are
`fatal_hudi`'s (an upsert is an overwrite, a clustering a compaction), checked under its commit lock
(`sim.model.designs.hudi`).
A partition stands for the files an operation touches together: two operations conflict at file level only where
their partitions meet, so a table of one partition gives every pair its worst case.

Validation reads: for each commit that landed whose snapshot X's rules read (`reads`), its manifest list and the
manifest it added, two GETs, drawn as one read (`sim.model.io.gets_ms`); an expiry's and a schema change's commits
add no snapshot and are read by no one.
"""
from .jit import model_function
from .state import Op


@model_function
def ring_len(m):
    """Commits a table's ring holds (the last R of each table's versions)."""
    return len(m.ring_op) // len(m.versions)


@model_function
def landed(m, j, t):
    """Transaction j's commit to table t just took effect (its version is v[t] now): its operation and partitions
    go into t's ring."""
    if not m.p.ops:
        return
    R = ring_len(m)
    i = t * R + (m.versions[t] - 1) % R
    tx = m.tx[j]
    m.ring_op[i] = tx.op
    m.ring_parts[i] = tx.parts


@model_function
def snapshot_of(y):
    """Whether a commit of operation y adds a snapshot (an expiry and a schema change change metadata only)."""
    return y != Op.EXPIRE_SNAPSHOTS and y != Op.SCHEMA_CHANGE


@model_function
def removes(y):
    """Whether operation y removes or deletes from the data files of its partitions (rewrites their manifests)."""
    return y == Op.OVERWRITE or y == Op.ROW_DELTA or y == Op.COMPACTION


@model_function
def fatal(x, y, overlap, serializable, server, equality):
    """Iceberg's rule for X committing after Y landed (the module's doc): True if X fails for good. `overlap`: their
    partitions meet; `serializable`: an overwrite's and a row delta's isolation; `server`: a REST server commits;
    `equality`: row deltas write equality deletes."""
    if x == Op.SCHEMA_CHANGE:   # (on a storage catalog it commits against its base: any commit since fails it)
        return y == Op.SCHEMA_CHANGE or not server
    if x == Op.FA or x == Op.EXPIRE_SNAPSHOTS or not snapshot_of(y) or (x == Op.ROW_DELTA and equality):
        return False
    if x == Op.REWRITE_MANIFESTS:               # the manifests it replaces were rewritten
        return removes(y) or y == Op.REWRITE_MANIFESTS
    if not overlap:
        return False
    if x == Op.OVERWRITE or x == Op.ROW_DELTA:
        return removes(y) or (y == Op.FA and serializable)
    if x == Op.COMPACTION:                      # (equality deletes: not validated from its starting sequence number)
        return removes(y) and not (y == Op.ROW_DELTA and equality)
    return False


@model_function
def fatal_delta(x, y, overlap):
    """Delta's rule (Spark's ConflictChecker.scala L281-323, delta-io/delta @bb1057f) for X committing after Y
    landed: a blind append reads nothing and fails only for a metadata change; a DELETE/UPDATE/MERGE
    (WriteSerializable) fails when Y removed files it read (ConcurrentDeleteReadException: an overwrite's or an
    OPTIMIZE's on its partitions) or changed the metadata; an OPTIMIZE recommits unless Y removed its inputs
    (OptimizeTableCommand L472-504); a metadata change fails for any commit since (MetadataChangedException)."""
    if x == Op.SCHEMA_CHANGE or (y == Op.SCHEMA_CHANGE and x != Op.COMPACTION):
        return True
    if x == Op.FA or y == Op.SCHEMA_CHANGE:
        return False
    return overlap and (y == Op.OVERWRITE or y == Op.COMPACTION)


@model_function
def fatal_hudi(x, y, overlap, mor):
    """Hudi's rule (SimpleConcurrentFileWritesConflictResolutionStrategy, HoodieLockConfig's default at apache/hudi
    @04ec9f6): two writes conflict iff the file groups they mutated meet. An insert (an append) writes new file
    groups and a schema change none, so neither conflicts; an upsert (an overwrite) and a clustering (a compaction)
    conflict where their partitions meet, whichever landed first. A merge-on-read compaction (`mor`) checks nothing
    when it commits, and whether it fails an upsert is a matter of their instants' order, not of which landed first
    (`resolveConflict`: the design's `_table_services`)."""
    if x == Op.FA or y == Op.FA or x == Op.SCHEMA_CHANGE or y == Op.SCHEMA_CHANGE:
        return False
    if mor and (x == Op.COMPACTION or y == Op.COMPACTION):
        return False
    return overlap


@model_function
def fatal_ducklake(x, y, overlap, v14):
    """DuckLake's rules (`CheckForConflicts`), table by table, X retrying after Y committed to its table. DuckLake
    1.5 (duckdb/ducklake@d95d7f76, on v1.5-variegata and main: src/storage/ducklake_transaction.cpp): an insert (an
    append) fails when Y deleted from or altered the table; a delete (an overwrite) when Y inserted into, compacted
    or altered it, or deleted from the same data files (here: partitions that meet); a compaction (merge_adjacent,
    rewrite_delete) when Y deleted from or compacted it; an alter (a schema change) when Y altered it. DuckLake 1.4
    (`v14`; @3f1b372, v1.4-andium, ducklake_transaction.cpp:474-500): an insert and a delete never fail for each
    other (an insert only for an alter; a delete for a compaction, an alter or a delete of the same files); its one
    `tables_compacted` rule is the compaction's here."""
    if x == Op.FA:
        return (y == Op.OVERWRITE and not v14) or y == Op.SCHEMA_CHANGE
    if x == Op.OVERWRITE:
        return ((y == Op.FA and not v14) or y == Op.COMPACTION or y == Op.SCHEMA_CHANGE
                or (y == Op.OVERWRITE and overlap))
    if x == Op.COMPACTION:
        return y == Op.OVERWRITE or y == Op.COMPACTION
    if x == Op.SCHEMA_CHANGE:
        return y == Op.SCHEMA_CHANGE
    return False


@model_function
def reads(x, y):
    """Whether X's validation reads Y's snapshot (its manifest list and added manifests): an overwrite's and a row
    delta's read every snapshot's added files and deletes, a compaction's and a manifest rewrite's only those of
    snapshots that removed or deleted (`VALIDATE_ADDED_DELETE_FILES_OPERATIONS`); appends, expiries and schema
    changes validate nothing."""
    if not snapshot_of(y):
        return False
    if x == Op.OVERWRITE or x == Op.ROW_DELTA:
        return True
    if x == Op.COMPACTION or x == Op.REWRITE_MANIFESTS:
        return removes(y)
    return False


@model_function
def validate(m, j, vfrom, vto):
    """Transaction j validates its table's commits (vfrom, vto]: (whether one is fatal to it, how many snapshots
    it reads). It stops at the first fatal one, as Iceberg's validation throws there."""
    tx = m.tx[j]
    x = tx.op
    t = tx.table
    R = ring_len(m)
    n = 0
    for v in range(vfrom + 1, vto + 1):
        i = t * R + (v - 1) % R
        y = m.ring_op[i]
        if reads(x, y):
            n += 1
        # (in partial progress a compaction's batches rewrite files apart from its run's other batches, the only
        # compactions that can land in its window: a job runs on its table one run at a time)
        sibling = m.p.partial and x == Op.COMPACTION and y == Op.COMPACTION
        overlap = (m.ring_parts[i] & tx.parts) != 0 and not sibling
        if m.p.hudi:
            if fatal_hudi(x, y, overlap, m.p.hudi_mor):
                return True, n
        elif m.p.log:
            if fatal_delta(x, y, overlap):
                return True, n
        elif m.p.file_lists_inlined:
            if fatal_ducklake(x, y, overlap, m.p.ducklake_14):
                return True, n
        elif fatal(x, y, overlap, m.p.serializable, m.p.server, m.p.equality_deletes):
            return True, n
    return False, n


@model_function
def walks_history(m, j):
    """Whether transaction j's validation walks the snapshots back to its starting one (`validationHistory`): an
    overwrite's, a position-delete row delta's and a compaction's; an append, a manifest rewrite, an expiry, a
    schema change and Flink's equality-delete row delta validate no history."""
    x = m.tx[j].op
    return x == Op.OVERWRITE or x == Op.COMPACTION or (x == Op.ROW_DELTA and not m.p.equality_deletes)


@model_function
def validates(m, j):
    """Whether transaction j's attempts run the rules: with operations, any but an Iceberg append (a Delta blind
    append still fails for a metadata change, a DuckLake insert for a delete)."""
    return m.p.ops and (m.tx[j].op != Op.FA or m.p.log or m.p.file_lists_inlined)


@model_function
def server_rebases(m, j):
    """Whether a REST server applies transaction j's update to the table as it loads it (an expiry, a schema change:
    their requirements do not pin the version), so that its own retry of a lost database CAS can commit: each of
    its CASes is then an attempt of its own."""
    op = m.tx[j].op
    return m.p.ops and m.p.server and (op == Op.EXPIRE_SNAPSHOTS or op == Op.SCHEMA_CHANGE)


@model_function
def attempts_allowed(m, j):
    """Attempts transaction j may make: an Iceberg schema change commits once (`SchemaUpdate.commit` has no retry
    loop; Delta's metadata change and DuckLake's alter run the commit's loop like any commit); where
    a REST server rebases it, each request's CASes (the server's retries) count."""
    n = m.p.max_attempts
    if m.p.ops and m.tx[j].op == Op.SCHEMA_CHANGE and not m.p.log and not m.p.file_lists_inlined:
        n = 1
    if m.p.server and m.p.tables_max > 1:          # Iceberg's client sends /transactions/commit once
        n = 1
    if server_rebases(m, j):
        n *= 1 + m.p.server_retries
    return n


@model_function
def requirement_holds(m, j, seq):
    """A REST server's check of the client's requirements against its load (table version `seq`): the table
    unmoved (`assert-ref-snapshot-id`), but an expiry asserts only the table's uuid and a schema change only the
    current schema (`UpdateRequirements`, L92-210): the server then applies them to the table as it loaded it."""
    tx = m.tx[j]
    if not m.p.ops or (tx.op != Op.EXPIRE_SNAPSHOTS and tx.op != Op.SCHEMA_CHANGE):
        return seq == tx.seq
    if tx.op == Op.SCHEMA_CHANGE:
        t = tx.table
        R = ring_len(m)
        for v in range(tx.version + 1, m.versions[t] + 1):
            if m.ring_op[t * R + (v - 1) % R] == Op.SCHEMA_CHANGE:
                return False
    return True


# what operations own: their transaction field and parameters (the ring is `Model.ring_op`, `ring_parts`)
OWNS = dict(effect_points=(), fields=("op", "parts"),
            params=("ops", "serializable", "equality_deletes", "partitions", "file_lists_inlined", "ducklake_14"),
            sources=())
