"""Command line: `sim run|check|sweep|knee|report|calibrate|testbed|trace` (or `python -m sim ...`).

Exit codes: 0 done; 1 runs failed (sweep), an invariant violated (check) or sim cannot load its commands;
2 bad input, including a run too big to start without --yes; 74 (EX_IOERR) a result file cannot be written;
130 interrupted; 141 stdout closed early (a pipe into `head`); 143 terminated (SIGTERM). Every error is one line on
stderr."""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import select
import signal
import sys
import threading
from pathlib import Path

import yaml

from . import metrics
from .config import Config, ConfigError, load, parse_override
from .results_io import WriteError, atomic_write_parquet, atomic_write_text, dumps, staged_dir

EXIT_BAD_INPUT = 2
EXIT_IO = 74            # sysexits.h EX_IOERR: results could not be written (disk full, permission denied)
EXIT_PIPE = 141         # 128 + SIGPIPE, what a shell tool's exit looks like when its reader went away


def _fmt(x, spec=".3f", unit=""):
    return "n/a" if x is None or x != x else f"{x:{spec}}{unit}"


def _summary_text(s: dict, cfg) -> str:
    lines = [
        f"config {s['config_hash']}  replication {s['replication']}  provider {cfg.storage.provider}  "
        f"backend {cfg.catalog.backend}  tables {cfg.workload.num_tables}  FA ratio {cfg.workload.fast_append_ratio:g}",
        f"window transactions: {s['arrived']} arrived, {s['committed']} committed, {s['aborted']} aborted, "
        f"{s['unfinished']} unfinished ({_fmt(100 * s['unfinished_share'], '.1f', '%')}; "
        f"{s['unfinished_in_runtime']} still in their runtime, left out of the success rate)",
        f"success rate {_fmt(s['success_rate'], '.4f')} (of finished {_fmt(s['success_rate_finished'], '.4f')})   "
        f"throughput {_fmt(s['throughput_cps'])} c/s   "
        f"offered {_fmt(s['offered_cps'])} /s",
        f"commit latency ms: mean {_fmt(s['commit_latency_mean_ms'], '.1f')}  p50 {_fmt(s['commit_latency_p50_ms'], '.1f')}"
        f"  p95 {_fmt(s['commit_latency_p95_ms'], '.1f')}  p99 {_fmt(s['commit_latency_p99_ms'], '.1f')}",
    ]
    for op in metrics.OPS:
        if s.get(f"{op}_arrived"):
            lost = (f"  work lost {_fmt(s[f'{op}_work_lost_s'], '.1f')} s" if f"{op}_work_lost_s" in s else "")
            lines.append(f"  {op.upper()}: success {_fmt(s[f'{op}_success_rate'], '.4f')} (of finished "
                         f"{_fmt(s[f'{op}_success_rate_finished'], '.4f')})  "
                         f"throughput {_fmt(s[f'{op}_throughput_cps'])} c/s  latency mean "
                         f"{_fmt(s[f'{op}_commit_latency_mean_ms'], '.1f')} ms  p99 "
                         f"{_fmt(s[f'{op}_commit_latency_p99_ms'], '.1f')} ms{lost}")
    if s["writers_seen"]:
        lines.append(_writers_text(s))
    if "trace_waiting" in s:   # a trace's writers: their rows in the window still waiting when the run ended
        lines.append(f"trace: {s['trace_waiting']} window rows still waiting for their writer at the end")
    if s["faults"]:
        lines.append(f"lost answers and 5xx: {s['faults']} commit requests; {s['unknown']} unknown outcomes "
                     f"({s['unknown_landed']} of them landed), {s['duplicated']} duplicated; orphaned "
                     f"{s['orphaned_files']} files, {s['orphaned_bytes']:,.0f} bytes")
    lines.append(f"retries: {s['catalog_conflicts']} catalog conflicts, {s['table_conflicts']} table conflicts; "
                 f"mean attempts {_fmt(s['mean_attempts'], '.2f')}")
    lines.append(f"simulated {s['sim_end_ms'] / 1000:.0f} s, {s['events']} events, wall {s['wall_s']:.2f} s")
    return "\n".join(lines)


def _writers_text(s: dict) -> str:
    """The writers' line: only runs with writers have one (open-loop output is unchanged)."""
    line = (f"writers: {s['writers_seen']}, {_fmt(s['commits_per_writer_cps'])} c/s each, utilisation "
            f"{_fmt(100 * s['writer_utilisation'], '.1f', '%')}; attempts {_fmt(s['attempts_cps'])} /s, "
            f"{_fmt(100 * s['attempt_failure_share'], '.1f', '%')} failed")
    if s["commit_lag_mean_ms"] == s["commit_lag_mean_ms"]:
        line += (f"; commit lag mean {_fmt(s['commit_lag_mean_ms'], '.1f')} ms  p99 "
                 f"{_fmt(s['commit_lag_p99_ms'], '.1f')} ms, missed intervals "
                 f"{_fmt(100 * s['missed_interval_share'], '.1f', '%')}")
    return line


@contextlib.contextmanager
def _numba_without_scipy_blas():
    """numba's first compiled call (loading the cached kernel) imports scipy.linalg only to see whether BLAS is
    there for `np.cov`-style inner products, which the engine never calls; that import was 0.25 s of CPU of a
    ~1 s `sim run` (measured, benchmarks/run.py). Hide it for this process's first dispatch: numba then uses its
    own loop for those products, and anything else that needs BLAS (np.dot) still imports scipy when compiled."""
    name = "scipy.linalg.cython_blas"
    if name in sys.modules:
        yield
        return
    sys.modules[name] = None     # import raises ImportError: numba notes "no BLAS" and goes on
    try:
        yield
    finally:
        if sys.modules.get(name, 0) is None:
            del sys.modules[name]


def cmd_run(args) -> int:
    from .estimate import Limits, estimate, guard
    from .run import run

    overrides = dict(parse_override(s) for s in args.set or [])
    if args.seed is not None:
        overrides["seed"] = args.seed
    cfg = load(args.config, overrides)
    est = estimate(cfg, history=args.history)
    print(f"estimate: {est.describe()}", file=sys.stderr)
    _say_concurrency_fit(cfg)
    guard(est, None if args.yes else Limits.default(), "this run")
    if args.engine == "fast":
        _first_compile(cfg)
    keep = False if args.trace_out else None   # a trace is made of the records: they are kept
    if args.trace_out:
        from .trace.schema import kind_of
        kind_of(args.trace_out)               # a bad name is refused before the run
    if args.out:
        with staged_dir(Path(args.out), replace=False) as out:   # all files, or none
            # the records stream to parquet in row groups as transactions finish
            with _numba_without_scipy_blas():
                result = run(cfg, args.replication, history=args.history, engine=args.engine,
                             records_path=out / "transactions.parquet", stream=keep)
            atomic_write_text(out / "summary.json", dumps({**result.summary, "per_table": result.per_table,
                                                                "per_writer": result.per_writer}))
            atomic_write_text(out / "config.yaml", yaml.safe_dump(result.resolved, sort_keys=False))
            if result.history is not None:
                atomic_write_parquet(out / "history.parquet", result.history)
    else:
        with _numba_without_scipy_blas():
            result = run(cfg, args.replication, history=args.history, engine=args.engine, stream=keep)
    if args.trace_out:
        from .trace import write_trace
        from .trace.export import trace_of
        write_trace(trace_of(cfg, result.columns), args.trace_out)
    if args.json:
        print(dumps({**metrics.nested(result.summary), "config_hash": result.summary["config_hash"],
                     "replication": args.replication, "events": result.summary["events"],
                     "wall_s": result.summary["wall_s"], "config": result.resolved}, indent=None))
    else:
        print(_summary_text(result.summary, cfg))
        if args.out:
            print(f"wrote {args.out}")
        if args.trace_out:
            print(f"wrote {args.trace_out}")
    return 0


def _say_concurrency_fit(cfg) -> None:
    """One line on stderr when the run uses figures fitted on several writers (a provider's `concurrency_fit`)."""
    from .model.params import concurrency_fit_in
    where = concurrency_fit_in(cfg)
    if where is not None:
        print(f"this run uses figures fitted on several writers ({cfg.storage.provider}: {where}); "
              "storage.concurrency_fit: false leaves them out", file=sys.stderr)


def _first_compile(cfg) -> None:
    """A design's first run after an install compiles its loop on two cores, as a sweep does
    (`sim.engines.fast.compile_designs`); once it is cached, nothing (the run loads it)."""
    from .engines.fast import cached_loops, compile_designs
    from .model.designs import design_of_config
    design = design_of_config(cfg)
    if design not in cached_loops(design):
        with _numba_without_scipy_blas():
            compile_designs([cfg])


def cmd_check(args) -> int:
    """Check DIR/history.parquet; DIR/config.yaml (written by `run --out`), if present, says which catalog
    design the run had (catalog.scope, commit.protocol) and whether a per-object mutation limit applied
    (backend storage, storage.throttle not false, a provider rate): the checker verifies those rules too."""
    from .checker import REQUIRED_COLUMNS, check_history, format_violation, outcomes_resolved
    from .inputs import read_mapping, read_parquet
    from .rules import checker_rules, of_stored

    path = Path(args.dir)
    if not (path / "history.parquet").exists() and not path.is_file():
        raise ConfigError("", f"no history.parquet in {path} (record one with `run --history --out DIR`)")
    run_dir = path if path.is_dir() else path.parent
    rules = checker_rules(Config(), None)   # no config.yaml: the default design, no mutation limit
    cfg_path = run_dir / "config.yaml"
    if cfg_path.is_file():
        stored = read_mapping(cfg_path, "run's config")
        try:
            rules = checker_rules(*of_stored(stored))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ConfigError("", f"cannot read the run's design from {cfg_path}: {exc!r}") from None
    hist = read_parquet(path / "history.parquet" if path.is_dir() else path, "history", REQUIRED_COLUMNS)
    try:
        violations = check_history(hist, **rules)
    except ValueError as exc:
        raise ConfigError("", f"{cfg_path}: {exc}") from None
    if violations:
        print(format_violation(violations[0]))
        if len(violations) > 1:
            print(f"({len(violations) - 1} more violations)")
        return 1
    n_tx = int((hist["kind"] == "begin").sum())
    rate = rules["mutation_rate_per_s"]
    refusal = rules["mutation_refusal_tokens"]
    throttle = ("no throttle" if rate is None and not rules["client_limit"] else "a bucket per client"
                if rate is None else (f"throttle {rate:g}/s burst {rules['mutation_burst']:g}"
                                      + (f" refusal {refusal:g}" if refusal else "")
                                      + (", a bucket per client" if rules["client_limit"] else "")))
    lock = "no lock" if rules["lock_scope"] is None else \
        f"lock per {'table' if rules['lock_scope'] == 'table' else 'catalog'}{', FIFO' if rules['lock_fifo'] else ''}"
    ops = "" if rules["operations"] is None else ", operations' rules"
    print(f"ok: every invariant holds ({len(hist)} history rows, {n_tx} transactions; scope {rules['scope']}, "
          f"protocol {rules['protocol']}, {throttle}, {lock}{ops})")
    told = outcomes_resolved(hist)
    if len(told):
        print("outcomes its clients did not learn, resolved from the history: " + ", ".join(
            f"{n} {outcome} {what}" for (outcome, what), n in told.groupby(["outcome", "resolved"]).size().items()))
    return 0


def build_parser(prog: str = "python -m sim") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run one configuration")
    r.add_argument("config", help="config YAML")
    r.add_argument("--set", action="append", metavar="PATH=VALUE", help="override a config value (repeatable)")
    r.add_argument("--seed", type=int, help="override the config's seed")
    r.add_argument("--replication", type=int, default=0, help="replication index (seeds its own streams)")
    r.add_argument("--out", help="write transactions.parquet, summary.json, config.yaml here")
    r.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    r.add_argument("--history", action="store_true", help="record the history (with --out: history.parquet)")
    r.add_argument("--engine", choices=("fast", "simpy"), default="fast",
                   help="fast (compiled, default) or simpy (the reference implementation); identical results")
    r.add_argument("--yes", action="store_true", help="run even if the estimate is above the time or memory limit")
    r.add_argument("--trace-out", metavar="PATH", help="write the run's commits as a trace (.parquet or .csv)")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("check", help="check a recorded history against MODEL.md's invariants")
    c.add_argument("dir", help="directory with history.parquet (from `run --history --out DIR`), or the file")
    c.set_defaults(func=cmd_check)

    from .sweep.cli import add_commands   # a broken dependency is an error, never a missing command
    add_commands(sub)
    from .calibrate_io import add_command
    add_command(sub)
    from .testbed.cli import add_commands as add_testbed   # (imports none of the testbed's clients)
    add_testbed(sub)
    from .trace.cli import add_commands as add_trace   # (imports none of the table formats' clients)
    add_trace(sub)
    return p


class Terminated(BaseException):
    """SIGTERM (a batch system's cancel, `kill`): raised in the main thread, so a sweep's `finally` stops its
    worker processes as after Ctrl-C, instead of leaving them running their tasks with no one to collect them.
    A BaseException, as KeyboardInterrupt: code that catches Exception (a run recorded as failed, a library's
    own handlers) must let it through."""


def _terminate(signum, frame):
    raise Terminated


@contextlib.contextmanager
def _sigterm_raises():
    """While a command runs, SIGTERM raises `Terminated` (only the main thread may set a handler)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv=None, prog: str = "python -m sim") -> int:
    try:
        parser = build_parser(prog)
    except ImportError as exc:
        print(f"error: cannot load sim's commands: {exc} (a broken install? pip install -e .)", file=sys.stderr)
        return 1
    args = parser.parse_args(argv)
    with _sigterm_raises():
        return _run(args)


def _collector(args) -> None:
    """Python's garbage collector, off since the process started (`sim.entry`): back on, what is loaded so far kept
    out of its passes (frozen), for every command but a `run` on the compiled engine. Such a run makes no reference
    cycles (its Python side is arrays, records and dicts, freed as they go) and its process ends with it; a SimPy
    run's events and processes do make cycles, and a sweep's or a search's process lives long. (Called in a
    process that has it on, `main` leaves it be.)"""
    if not gc.isenabled() and not (args.func is cmd_run and args.engine == "fast"):
        gc.freeze()
        gc.enable()


def _run(args) -> int:
    """Run the parsed command: its exit code, a known failure as one line on stderr."""
    try:
        _collector(args)
        code = args.func(args)
        sys.stdout.flush()      # a closed pipe is then a BrokenPipeError here, not a warning at exit
        return code
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except WriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_IO
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:     # `sim run ... | head`: the reader is gone; stop without a word, as a shell tool does
        if not _stdout_gone():
            raise               # some other pipe: a bug to see
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # else the flush at exit raises again
        return EXIT_PIPE


def _stdout_gone() -> bool:
    """Whether stdout is a pipe without a reader (poll reports an error on its write end)."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):    # no fileno (captured), or no poll on this platform
        return False


def console() -> int:
    """The `sim` console script (pyproject.toml's [project.scripts]): `python -m sim` under its own name."""
    return exiting(main(prog="sim"))


def exiting(code: int) -> int:
    """`code`, in a process about to exit. Python's exit runs its garbage collector over every object still alive
    (numba's typing registries and dispatchers: some 115 k), about 0.3 s of a light `sim run` (benchmarks/run.py);
    frozen, they are left to the OS. The exit still runs atexit handlers, flushes stdout and stderr and joins
    threads; what it skips are finalizers of reference cycles, which Python never promised at exit."""
    gc.freeze()
    return code
