"""`python -m sim sweep FILE` and `python -m sim report DIR`."""
from __future__ import annotations

import sys
from pathlib import Path

from ..config import ConfigError


def cmd_sweep(args) -> int:
    from ..estimate import Limits
    from . import load, run_sweep
    from .executors import default_jobs

    sweep = load(args.file)
    if args.replications is not None and args.replications < 1:
        raise ConfigError("--replications", "expected an integer >= 1")
    if args.jobs is not None and args.jobs < 1:
        raise ConfigError("--jobs", "expected an integer >= 1")
    if args.scheduler and args.executor != "dask":
        raise ConfigError("--scheduler", "goes with --executor dask")
    if args.dry_run:
        n_points = len(sweep.points)
        reps = args.replications or sweep.replications
        print(n_points)
        print(f"{sweep.name}: {n_points} configurations x {reps} replication(s) = {n_points * reps} runs; "
              f"axes: {', '.join(sweep.paths) or 'none'}", file=sys.stderr)
        return 0
    out = Path(args.out) if args.out else Path("results") / sweep.name
    outcome = run_sweep(sweep, out, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler,
                        force=args.force, replications=args.replications, engine=args.engine,
                        progress=not args.no_progress, limits=None if args.yes else Limits.default())
    print(f"{outcome.total} runs: {outcome.reused} reused, {outcome.ran} ran ({outcome.failed} failed) "
          f"in {outcome.wall_s:.1f} s with {args.jobs or default_jobs()} job(s); results: {out / 'results.parquet'}")
    if not args.no_report:
        from ..report import write_report
        index = write_report(out, sweep.report or None)
        print(f"report: {index}")
    return 1 if outcome.failed else 0


def cmd_report(args) -> int:
    from ..report import write_report
    from ..yamlio import load_yaml

    d = Path(args.dir)
    if not (d / "results.parquet").is_file():
        raise ConfigError("", f"no results.parquet in {d} (run `python -m sim sweep FILE --out {d}` first)")
    spec = None
    if (d / "sweep.yaml").is_file():
        spec = (load_yaml((d / "sweep.yaml").read_text()) or {}).get("report")
    print(f"report: {write_report(d, spec or None)}")
    return 0


def add_commands(sub) -> None:
    s = sub.add_parser("sweep", help="run a sweep file and write results and report")
    s.add_argument("file", help="sweep YAML (experiments/*.yaml)")
    s.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    s.add_argument("--out", help="results directory (default: results/<sweep name>)")
    s.add_argument("--replications", type=int, help="override the file's replications")
    s.add_argument("--dry-run", action="store_true", help="print the number of configurations; run nothing")
    s.add_argument("--force", action="store_true", help="recompute runs already in the results directory")
    s.add_argument("--executor", choices=("local", "dask"), default="local")
    s.add_argument("--scheduler", help="Dask scheduler address (with --executor dask); default: a LocalCluster")
    s.add_argument("--engine", choices=("fast", "simpy"), default="fast",
                   help="fast (compiled, default) or simpy (reference); results are identical")
    s.add_argument("--no-report", action="store_true", help="skip writing the report")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--yes", action="store_true",
                   help="run even if the heaviest configuration is estimated above the time or memory limit")
    s.set_defaults(func=cmd_sweep)

    r = sub.add_parser("report", help="write DIR/report/ from DIR/results.parquet")
    r.add_argument("dir")
    r.set_defaults(func=cmd_report)
