"""`sim testbed run`: measure real clients against real servers, and put the model's prediction beside each figure."""
from __future__ import annotations

import sys
from pathlib import Path

from ..config import ConfigError


def _numbers(text: str, what: str, kind, least, noun: str) -> tuple:
    """A comma-separated list of `kind` values, each >= `least`; anything else one line naming the option."""
    try:
        vals = tuple(kind(x) for x in text.split(","))
    except ValueError:
        raise ConfigError(what, f"expected comma-separated {noun}, got {text!r}") from None
    if any(v < least for v in vals):
        raise ConfigError(what, f"every value must be >= {least}")
    return vals


def _ints(text: str, what: str) -> tuple:
    return _numbers(text, what, int, 1, "integers")


def _floats(text: str, what: str) -> tuple:
    return _numbers(text, what, float, 0, "numbers")


def grid_of(args):
    from .campaign import Grid
    from .stacks import STACKS
    stacks = tuple(args.stacks.split(","))
    for s in stacks:
        if s not in STACKS:
            raise ConfigError("--stacks", f"unknown stack {s!r} (one of {', '.join(STACKS)})")
    if args.marker_rounds < 0:
        raise ConfigError("--marker-rounds", f"expected an integer >= 0, got {args.marker_rounds}")
    retries = tuple({"off": False, "default": True}.get(x, None) for x in args.retries.split(","))
    if None in retries:
        raise ConfigError("--retries", "expected off, default or off,default")
    return Grid(stacks, _ints(args.writers, "--writers"), _floats(args.delays, "--delays"), retries,
                args.commits, args.reps, args.tables, args.zipf_alpha, args.payload_bytes, args.rows_per_commit,
                args.jitter, args.jitter_sigma, args.calibration_commits, args.seed, args.marker_rounds)


def cmd_run(args) -> int:
    try:
        from . import campaign
    except ImportError as exc:      # the clients are an extra
        raise ConfigError("", f"the testbed needs its extra: pip install -e '.[testbed]' ({exc})") from None
    from .servers import ServerError
    grid = grid_of(args)
    out = Path(args.out)
    try:
        campaign.run_grid(grid, out, log=lambda s: print(s, flush=True), postgres_url=args.postgres,
                          s3_endpoint=args.s3_endpoint, iceberg_url=args.iceberg_url)
    except ServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"measured: {out / 'measured.parquet'}")
    return 0


def cmd_report(args) -> int:
    from .report import expected_misses, least_p, report, short_cells
    out = Path(args.dir)
    if not out.is_dir():
        raise ConfigError("", f"{out}: not a directory (a results folder of `sim testbed run`)")
    if args.replications < 2:
        raise ConfigError("--replications", "expected an integer >= 2 (a CI needs two)")
    if args.max_replications < args.replications:
        raise ConfigError("--max-replications", f"expected an integer >= --replications ({args.replications})")
    comp = report(out, args.replications, machine_busy=not args.own_busy_only, log=lambda s: None,
                  max_replications=args.max_replications)
    print((out / "comparison.md").read_text())
    counts = comp["verdict"].map(lambda v: v.split(":")[0]).value_counts().to_dict()
    print(f"cells: {len(comp)}; " + ", ".join(f"{k} {v}" for k, v in counts.items())
          + f" (a model exactly right: {expected_misses(comp):.2f} misses{_least(least_p(comp))}; "
          f"{len(short_cells(comp))} short of repetitions); "
          f"{out / 'comparison.md'}, {out / 'comparison.png'}")
    return 0


def _least(least) -> str:
    return "" if least is None else f"; least p_outside {least.p:.4f}, by noise alone in at most {least.bound:.2f}"


def add_commands(sub) -> None:
    t = sub.add_parser("testbed", help="real clients against real servers, measured beside the model's prediction")
    tsub = t.add_subparsers(dest="testbed_command", required=True)
    r = tsub.add_parser("run", help="measure a grid of cells (stacks x retries x delays x writers x repetitions)")
    r.add_argument("--stacks", default="iceberg-sql,iceberg-rest,delta-s3,ducklake-pg",
                   help="comma-separated: iceberg-sql, iceberg-rest, delta-s3, ducklake-pg (default: all)")
    r.add_argument("--writers", default="1,2,4,8", help="writer counts (default 1,2,4,8)")
    r.add_argument("--delays", default="5,25", help="one-way delays' fixed parts in ms (default 5,25)")
    r.add_argument("--jitter", type=float, default=0.1,
                   help="each chunk's delay adds a lognormal whose median is this share of the fixed part (0.1)")
    r.add_argument("--jitter-sigma", type=float, default=0.5, help="that lognormal's sigma (0.5)")
    r.add_argument("--retries", default="off,default", help="the client's retries: off, default, or both (default)")
    r.add_argument("--commits", type=int, default=10, help="commits per writer (10)")
    r.add_argument("--reps", type=int, default=3, help="repetitions of each cell (3)")
    r.add_argument("--tables", type=int, default=1, help="tables; several are chosen by a Zipf draw (1)")
    r.add_argument("--zipf-alpha", type=float, default=1.5, help="the tables' Zipf exponent (1.5)")
    r.add_argument("--payload-bytes", type=int, default=16384, help="bytes appended by each commit (16384)")
    r.add_argument("--rows-per-commit", type=int, default=10, help="rows appended by each commit (10)")
    r.add_argument("--calibration-commits", type=int, default=0,
                   help="the one-writer calibration cell's commits (default: largest writer count x commits)")
    r.add_argument("--seed", type=int, default=1, help="seeds the delays, the payloads and the table choices")
    r.add_argument("--marker-rounds", type=int, default=40,
                   help="with a PyIceberg stack: pairs at each offset of the S3 server's directory-marker lock probe, "
                        "run after the calibration cells (40; 0: not measured, the model has no marker lock)")
    r.add_argument("--out", default="results/testbed", help="results folder (default results/testbed)")
    r.add_argument("--postgres", help="use this PostgreSQL (postgresql://USER[:PASSWORD]@HOST[:PORT]/DB) instead of "
                   "starting one")
    r.add_argument("--s3-endpoint", help="use this S3 endpoint (credentials: AWS_ACCESS_KEY_ID, "
                   "AWS_SECRET_ACCESS_KEY) instead of starting SeaweedFS")
    r.add_argument("--iceberg-url", help="with --s3-endpoint: the Iceberg REST catalog for iceberg-rest")
    r.set_defaults(func=cmd_run)
    p = tsub.add_parser("report", help="calibrate on the one-writer cells, predict every cell, compare")
    p.add_argument("dir", help="a results folder of `sim testbed run`")
    p.add_argument("--replications", type=int, default=30,
                   help="the model's replications of each cell, at least (30: a p50 between two modes needs them)")
    p.add_argument("--max-replications", type=int, default=3000,
                   help="more replications, as many again at a time up to this, where the first leave a target "
                        "figure's 95 %% CI wider than a quarter of its target or holding its edge (3000; "
                        "--replications: none more)")
    p.add_argument("--own-busy-only", action="store_true",
                   help="judge cpu_bound on the run's own processes only (a machine shared with other work)")
    p.set_defaults(func=cmd_report)
