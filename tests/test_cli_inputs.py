"""Every command given an input it cannot use: a directory, binary junk, text that is not UTF-8, an empty file, a
file cut short, a file of another format. Each is one line on stderr naming the file, exit 2, never a traceback
(docs/reference.md, "Exit codes"); a real bug still shows its traceback. Then the `sim` console script.

The commands run in this process (`sim.cli.main`), so the whole matrix takes seconds; one case and the closed
pipe run as a user's process would."""
import contextlib
import importlib.metadata
import io
import os
import random
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest
import yaml

from helpers import ROOT, TINY_SWEEP, run_cli
from sim import cli
from sim.checker import REQUIRED_COLUMNS
from sim.config import config_hash, from_dict
from sim.config import load as load_config
from sim.sweep import load as load_sweep
from test_help import COMMANDS


def _main(*argv, entry=cli.main) -> tuple[int, str, str]:
    """`python -m sim ARGV` (or another entry point's main) in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = entry([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


#: what each command reads from its first argument: a config, a sweep file, a run's history, a results directory,
#: a table's history (`trace import FORMAT PATH`)
READS = {"run": "config", "knee": "config", "sweep": "sweep", "check": "history", "report": "results",
         "calibrate": "latency log", "testbed": "testbed results", "trace": "table history"}
# a command whose first argument follows a subcommand
SUBCOMMAND = {"testbed": "report"}

CONFIG = {"duration_ms": 60_000, "warmup_ms": 10_000, "cooldown_ms": 10_000,
          "workload": {"inter_arrival": {"mean_ms": 500}, "num_tables": 2,
                       "runtime": {"median_ms": 1000, "sigma": 0.5, "min_ms": 100}}}
# flow style: a cut anywhere before the last brace leaves a mapping unclosed
VALID_YAML = {"config": yaml.safe_dump(CONFIG, default_flow_style=True, width=10_000),
              "sweep": yaml.safe_dump(TINY_SWEEP, default_flow_style=True, width=10_000)}


def _parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf)
    return buf.getvalue()


HISTORY = _parquet(pd.DataFrame({c: list(range(200)) for c in REQUIRED_COLUMNS}).astype({"kind": str}))
RESULTS = _parquet(pd.DataFrame({"config_hash": [f"{i:016x}" for i in range(50)], "replication": 0,
                                 "status": "ok", "success_rate": 0.5}))
OTHER_TABLE = _parquet(pd.DataFrame({"a": range(50), "b": 1.5}))
LATENCY_LOG = _parquet(pd.DataFrame({"server": "s3", "kind": "get", "latency_ms": [10.0 + i for i in range(50)]}))

# bytes that are no file of any kind sim reads
JUNK = {
    "binary junk": bytes(range(256)) * 4,
    "random bytes": random.Random(28).randbytes(3000),
    "control characters": b"\x00\x01\x02 seed: 1\n",
    "latin-1 text": "workload: {num_tables: 2}  # caf\xe9\n".encode("latin-1"),
    "an empty file": b"",
}


def _cut(data: bytes, fraction: float) -> bytes:
    return data[:int(len(data) * fraction)]


def _yaml_cases(kind: str) -> dict:
    text = VALID_YAML[kind].encode()
    block = yaml.safe_dump(CONFIG if kind == "config" else TINY_SWEEP, sort_keys=False).encode()
    return {**JUNK, "comments only": b"# nothing yet\n",
            **{f"cut at {f:.0%}": _cut(text, f) for f in (0.25, 0.5, 0.75, 0.98)},
            "cut mid-key": block[:block.index(b"inter_arrival") + 5],
            "a parquet file": RESULTS, "YAML syntax error": b"a: [1, 2\nb: 3\n"}


def _table_cases(valid: bytes) -> dict:
    return {**JUNK, "YAML text": VALID_YAML["config"].encode(),
            **{f"cut at {f:.0%}": _cut(valid, f) for f in (0.25, 0.5, 0.9)},
            "a table of another kind": OTHER_TABLE}


def _testbed_row(data: bytes):
    """A testbed results folder with a grid and one cell whose row.json holds `data` (None: no cell yet, the folder
    named)."""
    def put(d: Path):
        (d / "grid.json").write_text('{"stacks": ["delta-s3"]}')
        if data is None:
            return d, d
        row = d / "cells" / "delta-s3" / "delay5" / "retries-off" / "writers1" / "rep0" / "row.json"
        row.parent.mkdir(parents=True)
        row.write_bytes(data)
        return d, row
    return put


def _cases() -> list:
    """(command, case name, put): `put(tmp_path)` writes the bad input and returns (argument, the path that the
    message must name)."""
    def file(data: bytes, name: str = "input.yaml"):
        def put(d: Path):
            (d / name).write_bytes(data)
            return d / name, d / name
        return put

    def inside(name: str, data: bytes | None, extra: dict | None = None):
        """The argument is a directory holding `name` (a directory itself when `data` is None) and `extra`."""
        def put(d: Path):
            for other, content in (extra or {}).items():
                (d / other).write_bytes(content)
            (d / name).mkdir() if data is None else (d / name).write_bytes(data)
            return d, d / name
        return put

    def directory(d: Path):
        (d / "input").mkdir()
        return d / "input", d / "input"

    cases = []
    for command, kind in READS.items():
        if kind != "table history":
            cases.append((command, "a directory", directory))
        if kind in ("config", "sweep"):
            cases += [(command, name, file(data)) for name, data in _yaml_cases(kind).items()]
        elif kind == "latency log":
            cases += [(command, f"CSV: {name}", file(data, "lat.csv")) for name, data in JUNK.items()]
            cases.append((command, "a CSV of another kind", file(b"a,b\n1,2\n", "lat.csv")))
            cases += [(command, f"parquet: {name}", file(data, "log.parquet"))
                      for name, data in _table_cases(LATENCY_LOG).items()]
            cases.append((command, "neither CSV nor parquet", file(LATENCY_LOG, "log.bin")))
        elif kind == "testbed results":
            cases += [(command, f"grid.json: {name}", inside("grid.json", data)) for name, data in JUNK.items()]
            cases.append((command, "grid.json: a list", inside("grid.json", b"[1, 2]")))
            cases.append((command, "grid.json of another kind", inside("grid.json", b'{"a": 1}')))
            cases.append((command, "no cells measured", _testbed_row(None)))
            cases.append((command, "a row.json that is junk", _testbed_row(JUNK["binary junk"])))
            cases.append((command, "a row.json of another kind", _testbed_row(b'{"a": 1}')))
        elif kind == "history":
            cases.append((command, "history.parquet is a directory", inside("history.parquet", None)))
            cases += [(command, f"history.parquet: {name}", inside("history.parquet", data))
                      for name, data in _table_cases(HISTORY).items()]
            cases.append((command, "a file that is not a history", file(JUNK["binary junk"], "h.parquet")))
            cases.append((command, "config.yaml beside it: junk",
                          inside("config.yaml", JUNK["binary junk"], {"history.parquet": HISTORY})))
        elif kind == "table history":
            cases += _trace_cases(file, inside, directory)
        else:
            cases.append((command, "a file, not a directory", file(RESULTS, "results.parquet")))
            for table, valid in (("results.parquet", RESULTS), ("knees.parquet", RESULTS)):
                cases.append((command, f"{table} is a directory", inside(table, None)))
                cases += [(command, f"{table}: {name}", inside(table, data))
                          for name, data in _table_cases(valid).items()
                          if not (table == "knees.parquet" and name == "a table of another kind")]
            cases.append((command, "knees.parquet without status", inside("knees.parquet", OTHER_TABLE)))
            for extra in ("per_table.parquet", "knee_points.parquet"):
                cases += [(command, f"{extra}: {name}", inside(extra, data, {"results.parquet": RESULTS}))
                          for name, data in (("binary junk", JUNK["binary junk"]),
                                             ("cut at 50%", _cut(HISTORY, 0.5)))]
            cases += [(command, f"sweep.yaml: {name}", inside("sweep.yaml", data, {"results.parquet": RESULTS}))
                      for name, data in (("binary junk", JUNK["binary junk"]), ("an empty file", b""),
                                         ("cut at 50%", _cut(VALID_YAML["sweep"].encode(), 0.5)),
                                         ("a list", b"[1, 2]\n"), ("a bad layout", b"report: {rowz: x}\n"))]
    return cases


def _trace_cases(file, inside, directory) -> list:
    """`trace import FORMAT PATH --out FILE` on what is no table's history: `put` returns the arguments after
    `trace` (and the path the message must name)."""
    def imported(fmt: str, put, out: str = "t.parquet"):
        def args(d: Path):
            arg, named = put(d)
            return ["import", fmt, arg, "--out", d / out], (named if out.endswith(".parquet") else d / out)
        return args

    def log(entry: bytes):
        def put(d: Path):
            (d / "_delta_log").mkdir()
            (d / "_delta_log" / f"{0:020d}.json").write_bytes(entry)
            return d, d / "_delta_log" / f"{0:020d}.json"
        return put

    cases = [("trace", f"{fmt}: a directory", imported(fmt, directory)) for fmt in ("iceberg", "delta")]
    cases += [("trace", f"iceberg: {name}", imported("iceberg", file(data, "v1.metadata.json")))
              for name, data in {**JUNK, "a JSON list": b"[1, 2]", "JSON cut short": b'{"snapshots": [{"snaps',
                                 "a snapshot without its id": b'{"location": "t", "snapshots": [{}]}'}.items()]
    cases.append(("trace", "iceberg: a folder of junk metadata", imported("iceberg", inside("v1.metadata.json",
                                                                                      JUNK["binary junk"]))))
    cases += [("trace", f"delta: an entry of {name}", imported("delta", log(data)))
              for name, data in {**JUNK, "a JSON list": b"[1, 2]\n", "no commitInfo": b'{"add": {"size": 1}}\n'}.items()
              if data]
    cases += [("trace", f"ducklake: {name}", imported("ducklake", file(data, "catalog.sqlite")))
              for name, data in {**JUNK, "a parquet file": OTHER_TABLE}.items()]
    cases.append(("trace", "ducklake: a directory", imported("ducklake", directory)))
    cases.append(("trace", "--out of another kind", imported("delta", log(b"{}\n"), out="t.txt")))
    return cases


CASES = _cases()


def test_every_command_is_fed_bad_input():
    """A new command fails here until READS says what it reads (and so gets its bad inputs)."""
    assert set(READS) == {c[0] for c in COMMANDS if len(c) == 1}


def test_the_valid_inputs_are_valid(tmp_path):
    """The cut files are cuts of files that load."""
    for kind, text in VALID_YAML.items():
        p = tmp_path / f"{kind}.yaml"
        p.write_text(text)
        (load_config if kind == "config" else load_sweep)(p)
    for data in (HISTORY, RESULTS):
        pd.read_parquet(io.BytesIO(data))


@pytest.mark.parametrize("command, case, put", CASES, ids=[f"{c}-{n}" for c, n, _ in CASES])
def test_a_bad_input_is_one_line_naming_it_and_exit_2(tmp_path, monkeypatch, command, case, put):
    monkeypatch.setattr("sim.estimate.LIMIT_WALL_S", 1e-9)   # an input read as valid by mistake must not run
    arg, named = put(tmp_path)
    # `knee --max-runs 1` is refused after the config is read: a config read as valid fails below, not runs
    extra = {"run": ["--json"], "knee": ["--max-runs", "1"], "sweep": ["--dry-run"],
             "calibrate": ["--out", tmp_path / "out"]}.get(command, [])
    first = [command, SUBCOMMAND[command]] if command in SUBCOMMAND else [command]
    code, out, err = _main(*first, *(arg if isinstance(arg, list) else [arg]), *extra)
    lines = err.strip().splitlines()
    assert (code, out) == (2, ""), err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert str(named) in lines[0], err
    assert "Traceback" not in err and "<unicode string>" not in err


@pytest.mark.parametrize("command", ["run", "sweep", "knee"])
def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path, command):
    p = tmp_path / "c.yaml"
    p.write_text("duration_ms: 60000\nworkload: {num_tables: [1, 2}\n")
    code, _, err = _main(command, p)
    assert code == 2
    assert err.startswith(f"error: {p}: line 2, column 29: not valid YAML: ") and "flow sequence" in err, err


def test_option_values_that_are_not_yaml_or_numbers_are_one_line(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(VALID_YAML["config"])
    code, _, err = _main("run", p, "--set", "seed=[1")
    assert code == 2 and err.startswith("error: seed: --set value '[1': line 1, column 3: not valid YAML: ")
    code, _, err = _main("knee", p, "--start", "20,fast")
    assert (code, err) == (2, "error: --start: expected numbers separated by a comma, got '20,fast'\n")


def test_an_empty_config_is_refused_and_braces_are_every_default(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("")
    code, _, err = _main("run", p)
    assert code == 2 and err == (f"error: {p}: empty (no YAML document); a config file is a YAML mapping; "
                                 "write {} for every default\n")
    p.write_text("{}\n")
    assert config_hash(load_config(p)) == config_hash(from_dict({}))


def test_a_real_bug_keeps_its_traceback(tmp_path, monkeypatch):
    """Only input errors are caught, where the input is read: anything else propagates."""
    p = tmp_path / "c.yaml"
    p.write_text(VALID_YAML["config"])

    def broken(data):
        raise KeyError("a bug")
    monkeypatch.setattr("sim.config.loading.from_dict", broken)
    with pytest.raises(KeyError, match="a bug"):
        cli.main(["run", str(p)])


def test_a_directory_as_config_from_a_shell(tmp_path):
    """The issue's example, `run /tmp`, as a user's process: one line, exit 2."""
    r = run_cli("run", tmp_path, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: {tmp_path}: is a directory, expected a config "
                                                         "file\n")


def test_a_closed_pipe_is_no_traceback():
    """`sim sweep ... --dry-run | head -0`: stdout's reader is gone before anything is written. Exit 141 as a shell
    tool, with nothing on stderr but the command's own line; buffered output too (no PYTHONUNBUFFERED)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([sys.executable, "-m", "sim", "sweep", "experiments/smoke.yaml", "--dry-run"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == cli.EXIT_PIPE, err
    assert err.startswith("smoke: 8 configurations") and len(err.splitlines()) == 1, err


# ------------------------------------------------------------------------------------------------ console script

SCRIPT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["sim"]


def test_the_sim_script_is_python_m_sim_under_its_name(monkeypatch, capsys):
    """pyproject.toml's `sim` entry point resolves, and it is the command line, its usage naming `sim` (the report
    prints `sim knee ...` commands)."""
    entry = importlib.metadata.EntryPoint("sim", SCRIPT, "console_scripts").load()
    monkeypatch.setattr(sys, "argv", ["sim", "--help"])
    with pytest.raises(SystemExit) as exc:
        entry()
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("usage: sim [-h] {run,check,sweep,knee,report,calibrate,testbed,trace} ...")


def test_the_installed_sim_script_runs():
    """Where this checkout is installed with the script (a fresh `pip install -e .`, as CI does), `sim --help` runs
    from the interpreter's bin directory."""
    installed = [e for e in importlib.metadata.entry_points(group="console_scripts", name="sim")]
    if not installed:
        pytest.skip("the installed metadata predates the `sim` script: pip install -e . installs it")
    assert [e.value for e in installed] == [SCRIPT]
    script = Path(sys.executable).parent / "sim"
    proc = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: sim "), proc.stderr


SPEC_CASES = {"missing": None, "a directory": "dir", "binary junk": JUNK["binary junk"], "an empty file": b"",
              "cut at 50%": _cut(VALID_YAML["sweep"].encode(), 0.5), "a bad layout": b"report: {rowz: x}\n"}


@pytest.mark.parametrize("case", list(SPEC_CASES))
def test_report_spec_is_one_line_and_exit_2(tmp_path, case):
    """`sim report DIR --spec FILE`: its sweep file is checked like DIR's own."""
    (tmp_path / "results.parquet").write_bytes(RESULTS)
    spec, data = tmp_path / "spec.yaml", SPEC_CASES[case]
    if data == "dir":
        spec.mkdir()
    elif data is not None:
        spec.write_bytes(data)
    code, out, err = _main("report", tmp_path, "--spec", spec)
    assert (code, out) == (2, ""), err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and str(spec) in err, err


def test_python_m_sim_checker_gives_one_line_and_exit_2(tmp_path):
    """The checker's own entry (it imports nothing of the simulator, so not `sim check`) words a bad input the
    same way: one line naming the file, exit 2."""
    from sim.checker.__main__ import main as checker_main

    bad = tmp_path / "h.parquet"
    bad.write_bytes(JUNK["binary junk"])
    for arg in (tmp_path / "missing", bad, tmp_path):
        code, out, err = _main(arg, entry=checker_main)
        assert (code, out) == (2, "") and len(err.splitlines()) == 1 and str(arg) in err, err
        assert "Traceback" not in err
