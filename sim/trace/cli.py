"""`sim trace import FORMAT PATH... --out FILE`: a table's own history as a trace file (docs/reference.md)."""
from __future__ import annotations

FORMATS = ("iceberg", "delta", "ducklake")


def _read(fmt: str, paths: list[str], table: str | None, skip_unknown: bool):
    from . import delta, ducklake, iceberg
    from .history import History, TraceError
    if table is not None and (len(paths) > 1 or fmt == "ducklake"):
        raise TraceError("--table names one Iceberg or Delta table: give one PATH (DuckLake's tables are named by "
                         "its catalog)")
    history, owner = History(fmt, ""), {}
    for path in paths:
        if fmt == "iceberg":
            one = iceberg.read(path, table)
        elif fmt == "delta":
            one = delta.read(path, table, skip_unknown)
        else:
            one = ducklake.read(path, skip_unknown)
        for name in {r["table"] for r in one.rows}:
            if owner.setdefault(name, path) != path:
                raise TraceError(f"{path}: its table {name!r} has the name of {owner[name]}'s: import them one at a "
                                 "time, each with its own --table")
        history.extend(one)
    return history


def cmd_import(args) -> int:
    from .history import TraceError, check_out, write_trace
    from .summary import text
    out = check_out(args.out)
    history = _read(args.format, args.paths, args.table, args.skip_unknown)
    frame = history.frame()
    print(text(history, frame))
    if len(frame) == 0:
        raise TraceError(f"{' '.join(args.paths)}: no commit to replay (see above): no trace written")
    write_trace(frame, out)
    print(f"wrote {out}")
    return 0


def add_commands(sub) -> None:
    t = sub.add_parser("trace", help="traces: a table's own commit history as a workload")
    tsub = t.add_subparsers(dest="trace_command", required=True)
    i = tsub.add_parser("import", help="read a table's commit history and write it as a trace file")
    i.add_argument("format", choices=FORMATS, help="the table format: iceberg, delta or ducklake")
    i.add_argument("paths", nargs="+", metavar="PATH",
                   help="iceberg: a metadata.json or a table folder; delta: a table folder or its _delta_log; "
                        "ducklake: its catalog (a SQLite or DuckDB file, or a postgresql:// URL). A local path or "
                        "s3://, gs://, abfs://, hdfs:// (several PATHs: one trace of all their tables)")
    i.add_argument("--out", required=True, help="the trace file to write (.parquet or .csv)")
    i.add_argument("--table", help="the table's name in the trace (one Iceberg or Delta PATH; default: its folder's)")
    i.add_argument("--skip-unknown", action="store_true",
                   help="leave out (and count) commits whose operation has no mapping, instead of stopping there")
    i.set_defaults(func=cmd_import)
