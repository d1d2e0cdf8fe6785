"""`python -m sim sweep FILE` and `python -m sim report DIR`."""
from __future__ import annotations

import sys
from pathlib import Path

from ..config import ConfigError


def cmd_sweep(args) -> int:
    from ..estimate import Limits
    from . import load, run_sweep

    sweep = load(args.file)
    if args.replications is not None and args.replications < 1:
        raise ConfigError("--replications", "expected an integer >= 1")
    if args.jobs is not None and args.jobs < 1:
        raise ConfigError("--jobs", "expected an integer >= 1")
    if args.scheduler and args.executor != "dask":
        raise ConfigError("--scheduler", "goes with --executor dask")
    if args.dry_run and sweep.knee is not None:
        print(len(sweep.points))
        print(f"{sweep.name}: {len(sweep.points)} cells, one knee search each ({sweep.knee}); axes: "
              f"{', '.join(sweep.paths) or 'none'}", file=sys.stderr)
        return 0
    searched = sweep.report.get("knees") == "search"
    if args.dry_run:
        n_points = len(sweep.points)
        reps = args.replications or sweep.replications
        print(n_points)
        then = ("; then a knee search of each cell whose grid knee is not ok within +-5 % (how many, the grid "
                "says)") if searched and not args.no_report else ""
        print(f"{sweep.name}: {n_points} configurations x {reps} replication(s) = {n_points * reps} runs; "
              f"axes: {', '.join(sweep.paths) or 'none'}{then}", file=sys.stderr)
        return 0
    out = Path(args.out) if args.out else Path("results") / sweep.name
    if sweep.knee is not None:
        return _knee_sweep(sweep, out, args)
    if searched and not args.no_report:
        return _grid_then_searches(sweep, out, args)
    outcome = run_sweep(sweep, out, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler,
                        force=args.force, replications=args.replications, engine=args.engine,
                        progress=not args.no_progress, limits=None if args.yes else Limits.default())
    print(_grid_line(outcome, out, args))
    if not args.no_report:
        _report(sweep, out, args)
    return 1 if outcome.failed else 0


def _grid_line(outcome, out: Path, args) -> str:
    from .executors import default_jobs
    return (f"{outcome.total} runs: {outcome.reused} reused, {outcome.ran} ran ({outcome.failed} failed) "
            f"in {outcome.wall_s:.1f} s with {args.jobs or default_jobs()} job(s); results: {out / 'results.parquet'}")


def _report(sweep, out: Path, args) -> None:
    """Write a grid sweep's report; print where, then its knees' statuses (and the command for any left open)."""
    from ..report import write_report
    from ..report.knee_commands import unbounded_note
    print(f"report: {write_report(out, sweep.report or None, progress=not args.no_progress)}")
    note = unbounded_note(out)
    if note:
        print(note)


def _grid_then_searches(sweep, out: Path, args) -> int:
    """`report: {knees: search}`: the grid, then a knee search of every cell its knee leaves open or wider than
    +-5 % (sim.sweep.open_knees), under one progress bar; then the report, once, with the searched knees in place.
    A search phase that stops on an error keeps the grid's results and still writes the report (with the grid's
    knees where no search answered): exit 1. Ctrl-C or SIGTERM stops it with the grid's results and every finished
    run kept (a rerun reuses them)."""
    from ..estimate import Limits
    from ..results_io import WriteError
    from . import run_sweep
    from .open_knees import search_open_knees
    from .progress import RunProgress

    searched, error = None, ""
    with RunProgress(not args.no_progress, "grid") as bar:
        outcome = run_sweep(sweep, out, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler,
                            force=args.force, replications=args.replications, engine=args.engine, log=bar.write,
                            limits=None if args.yes else Limits.default(), bar=bar)
        bar.phase("knee searches")
        try:
            searched = search_open_knees(out, sweep.report, jobs=args.jobs, executor=args.executor,
                                         scheduler=args.scheduler, engine=args.engine, force=args.force,
                                         progress=bar)
        except WriteError:
            raise
        except Exception as exc:        # any other failure of the phase: the grid's results and report stand
            error = str(exc) if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {exc}"
    print(_grid_line(outcome, out, args))
    print("knee searches: stopped on an error (below)" if error else _searches_line(searched))
    if error:
        print(f"error: the knee searches stopped: {error}; the report keeps the grid's knees where no search "
              "answered (rerun to resume: finished runs are kept)", file=sys.stderr)
    _report(sweep, out, args)
    failed_searches = searched is not None and bool((searched.knees["status"] == "failed").any())
    return 1 if outcome.failed or error or failed_searches else 0


def _searches_line(searched) -> str:
    """What the search phase did: its searches and their knees' statuses, the runs they took, where they are."""
    if searched is None:
        return "knee searches: none (every grid knee is ok within +-5 %, or the grid has no knee table)"
    knees, o = searched.knees, searched.outcome
    hours = float(knees["simulated_hours"].sum())
    return (f"{len(knees)} knee searches of the cells the grid leaves open or wider than +-5 % "
            f"({_status_counts(knees)}): {o.runs} runs ({o.new_runs} new), {hours:.0f} simulated hours, "
            f"{o.wall_s:.1f} s; results: {searched.path}")


def _knee_sweep(sweep, out: Path, args) -> int:
    from .knee import run_knee_sweep
    knees, outcome = run_knee_sweep(sweep, sweep.knee, out, jobs=args.jobs, executor=args.executor,
                                    scheduler=args.scheduler, engine=args.engine, force=args.force,
                                    log=None if args.no_progress else _stderr)
    hours = float(knees["simulated_hours"].sum())
    print(f"{len(knees)} knees ({_status_counts(knees)}): {outcome.runs} runs "
          f"({outcome.new_runs} new), {hours:.0f} simulated hours, {outcome.wall_s:.1f} s; "
          f"results: {out / 'knees.parquet'}")
    if not args.no_report:
        from ..report import write_report
        print(f"report: {write_report(out, sweep.report or None, progress=not args.no_progress)}")
    return 1 if (knees["status"] == "failed").any() else 0


def _status_counts(knees) -> str:
    """How many knees have each status as reported (`knee_status`: a finished search may still leave its knee
    `undecided`), and how many searches failed."""
    column = "knee_status" if "knee_status" in knees.columns else "status"
    counts = knees[column].value_counts()
    text = ", ".join(f"{int(n)} {status}" for status, n in counts.items())
    failed = int((knees["status"] == "failed").sum())
    return text + (f"; {failed} searches failed" if failed and column != "status" else "")


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


def cmd_knee(args) -> int:
    """`python -m sim knee CONFIG`: one configuration's knee (sim.knee), its runs cached under --out."""
    from ..config import load, parse_override
    from ..knee import KneeSearch, parse_spec
    from ..results_io import atomic_write_text, dumps
    from .knee import knee_json, run_searches

    cfg = load(args.config, dict(parse_override(s) for s in args.set or []))
    spec = parse_spec({}, where="--", param=args.param, threshold=args.threshold, precision=args.precision,
                      max_runs=args.max_runs, halfwidth=args.halfwidth,
                      start=_numbers("--start", args.start) if args.start else None,
                      common_random_numbers=False if args.no_crn else None)
    search = KneeSearch(cfg, spec)
    out = Path(args.out) if args.out else Path("results") / f"knee-{Path(args.config).stem}"
    outcome = run_searches([search], out, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler,
                           engine=args.engine, force=args.force, log=None if args.json else _stderr)
    rec = {**outcome.results[0], "new_runs": outcome.new_runs}
    doc = knee_json(search, rec)
    atomic_write_text(out / "knee.json", dumps(doc))
    if args.json:
        print(dumps(doc, indent=None))
    else:
        k = doc["knee"]
        lo, hi = k["offered_cps_ci95"]
        where = (f"{_f(k['offered_cps'])} arrivals/s (95 % CI {_f(lo)} .. {_f(hi)}) at {k['param']} = {_f(k['value'])}"
                 if "writers" not in k else _writers_line(k))
        print(f"knee {k['knee_text']}; search {k['status']}: {where}; success {_f(k['success_rate'], '.4f')} "
              f"(fitted); commit latency mean "
              f"{_f(k['commit_latency']['all']['mean_ms']['value'], '.1f')} ms, P99 "
              f"{_f(k['commit_latency']['all']['p99_ms']['value'], '.1f')} ms")
        if "tables" in doc:   # a trace's headroom: the first screen says it per table
            from ..report.headroom import headroom_lines
            print("\n".join(headroom_lines(doc)))
        print(f"{doc['runs']} runs ({outcome.new_runs} new), {doc['simulated_hours']:.1f} simulated hours, "
              f"common random numbers {'on' if doc['common_random_numbers'] else 'off'}; wrote {out / 'knee.json'}")
    return 0 if rec["status"] != "failed" else 1


def _numbers(option: str, text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise ConfigError(option, f"expected numbers separated by a comma, got {text!r}") from None


def _writers_line(k: dict) -> str:
    """The writers knee and its CI, then the fitted crossing and its CI."""
    (lo, hi), (clo, chi) = k["writers_ci95"], k["writers_crossing_ci95"]
    return (f"{_f(k['writers'], '.0f')} writers (95 % CI {_f(lo, '.0f')} .. {_f(hi, '.0f')}; crossing "
            f"{_f(k['writers_crossing'], '.2f')}, CI {_f(clo, '.2f')} .. {_f(chi, '.2f')}) of {k['param']}")


def _f(x, spec=".3f"):
    return "n/a" if x is None or x != x else f"{x:{spec}}"


#: what `report DIR` reads (sim/report/html.py): a knee sweep's knees or else a sweep's results, with columns
#: every such table has, and the tables it reads when they are there
REPORT_TABLES = (("knees.parquet", "knees table", ("status",)),
                 ("results.parquet", "results table", ("config_hash", "replication", "status")))
REPORT_EXTRAS = (("per_table.parquet", "per-table results"), ("knee_points.parquet", "knee points table"))


def cmd_report(args) -> int:
    """Every file the report reads is checked first, so a results directory that is not one (or is damaged) is
    one line naming the file, not a traceback from the middle of the report."""
    from ..inputs import check_parquet
    from ..report import write_report
    from .spec import stored_layout

    d = Path(args.dir)
    if d.exists() and not d.is_dir():
        raise ConfigError("", f"{d}: not a directory; `report DIR` takes the results directory of a sweep")
    main = next(((name, kind, need) for name, kind, need in REPORT_TABLES if (d / name).exists()), None)
    if main is None:
        raise ConfigError("", f"no results.parquet in {d} (run `python -m sim sweep FILE --out {d}` first)")
    name, kind, need = main
    check_parquet(d / name, kind, need)
    for name, kind in REPORT_EXTRAS:
        if (d / name).exists():
            check_parquet(d / name, kind)
    layout = Path(args.spec) if args.spec else d / "sweep.yaml"
    spec = stored_layout(layout) if args.spec or layout.exists() else None
    print(f"report: {write_report(d, spec or None, progress=True)}")
    from ..report.knee_commands import unbounded_note
    note = unbounded_note(d)
    if note:
        print(note)
    return 0


def add_commands(sub) -> None:
    s = sub.add_parser("sweep", help="run a sweep file and write results and report")
    s.add_argument("file", help="sweep YAML (experiments/*.yaml)")
    s.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    s.add_argument("--out", help="results directory (default: results/<sweep name>)")
    s.add_argument("--replications", type=int, help="override the file's replications")
    s.add_argument("--dry-run", action="store_true", help="print the number of configurations; run nothing")
    s.add_argument("--force", action="store_true", help="recompute runs already in the results directory")
    s.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="local (processes on this machine, default) or dask (one Dask task per run)")
    s.add_argument("--scheduler", help="Dask scheduler address (with --executor dask); default: a LocalCluster")
    s.add_argument("--engine", choices=("fast", "simpy"), default="fast",
                   help="fast (compiled, default) or simpy (reference); results are identical")
    s.add_argument("--no-report", action="store_true", help="skip writing the report")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--yes", action="store_true",
                   help="run even if the heaviest configuration is estimated above the time or memory limit")
    s.set_defaults(func=cmd_sweep)

    k = sub.add_parser("knee", help="find one configuration's knee (usable throughput) with a 95 %% CI")
    k.add_argument("config", help="config YAML")
    k.add_argument("--set", action="append", metavar="PATH=VALUE", help="override a config value (repeatable)")
    k.add_argument("--param", help="load parameter (default: workload.writers.count when the config has writers, "
                   "else workload.inter_arrival.mean_ms, or median_ms)")
    k.add_argument("--threshold", type=float, help="success threshold (default 0.95)")
    k.add_argument("--precision", type=float, help="the short pilot stops when its bracket's hi/lo - 1 is at most "
                   "this (0.05)")
    k.add_argument("--halfwidth", type=float, help="stop when the knee's 95 %% CI half-width / knee is at most this "
                   "(0.05)")
    k.add_argument("--start", help="start bracket as FAST_MS,SLOW_MS gaps (default 20,5000), or FEWEST,MOST "
                   "writers (default 1,64)")
    k.add_argument("--max-runs", type=int, help="full-length runs at most (default 24)")
    k.add_argument("--no-crn", action="store_true", help="without common random numbers")
    k.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    k.add_argument("--out", help="run cache and knee.json (default: results/knee-<config name>)")
    k.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    k.add_argument("--force", action="store_true", help="recompute runs already in the cache")
    k.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="local (processes on this machine, default) or dask (one Dask task per run)")
    k.add_argument("--scheduler", help="Dask scheduler address (with --executor dask)")
    k.add_argument("--engine", choices=("fast", "simpy"), default="fast",
                   help="fast (compiled, default) or simpy (reference); results are identical")
    k.set_defaults(func=cmd_knee)

    r = sub.add_parser("report", help="write DIR/report/ from DIR/results.parquet")
    r.add_argument("dir", metavar="DIR", help="a sweep's results directory (results.parquet, or a knee sweep's "
                   "knees.parquet; sweep.yaml's report: layout)")
    r.add_argument("--spec", metavar="SWEEP.yaml", help="take the report: layout (rows, cols, facets) from this "
                   "sweep file instead of DIR/sweep.yaml")
    r.set_defaults(func=cmd_report)
