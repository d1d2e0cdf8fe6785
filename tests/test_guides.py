"""docs/tutorial.md works as written: each of its shell blocks runs, in order, in a fresh directory, and prints
what the page quotes under it (issue "A house a newcomer can read").

A quoted output is held line by line, with three allowances: a line `...` stands for any lines (the page shows an
excerpt); wall-clock times (`wall 0.93 s`, `in 3.1 s with 2 job(s)`) are whatever this machine takes; and the
page's `/tmp/` is this test's own directory. The blocks that run in seconds (one run each) are in the default
suite; the sweeps and knee searches after them (about 30 s) run with `-m slow`.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.md"
# the blocks of the default suite: up to and including `sim check` (section 1); the rest are slow
QUICK = 5
_WALL = [(re.compile(r"wall \d+\.\d+ s"), "wall X s"), (re.compile(r" in \d+\.\d+ s with "), " in X s with ")]


def blocks(text: str) -> list[tuple[str, str | None]]:
    """Each shell block and the quoted output under it (None: the next block is another command, or none)."""
    fences = list(re.finditer(r"^```(\w*)\n(.*?)^```\n", text, re.M | re.S))
    out = []
    for i, f in enumerate(fences):
        if f.group(1) != "bash" or "pip install" in f.group(2):
            continue
        after = fences[i + 1] if i + 1 < len(fences) else None
        quoted = after.group(2) if after is not None and after.group(1) == "" else None
        out.append((f.group(2), quoted))
    return out


def _masked(line: str) -> str:
    for pattern, mask in _WALL:
        line = pattern.sub(mask, line)
    return line.rstrip()


def matches(got: list[str], want: list[str]) -> bool:
    """`want` (with `...` for any lines) against `got`, line by line after masking wall-clock times."""
    got, want = [_masked(x) for x in got], [_masked(x) for x in want]
    if not want:
        return not got
    if want[0].strip() == "...":
        return any(matches(got[k:], want[1:]) for k in range(len(got) + 1))
    return bool(got) and got[0] == want[0] and matches(got[1:], want[1:])


def _run(block: str, where: Path) -> list[list[str]]:
    """The block's output as the page may quote it: stdout alone, or with stderr (estimates, progress, errors)
    before or after it."""
    shell = block.replace("/tmp/", f"{where}/").replace("python -m sim", f"{sys.executable} -m sim")
    shell = shell.replace("| python -", f"| {sys.executable} -")
    r = subprocess.run(["bash", "-c", shell], cwd=where, capture_output=True, text=True, timeout=600)
    ways = (r.stdout, r.stderr + r.stdout, r.stdout + r.stderr)
    return [text.replace(f"{where}/", "/tmp/").splitlines() for text in ways]


def _check(todo: list[tuple[str, str | None]], where: Path) -> None:
    (where / "experiments").symlink_to(ROOT / "experiments")
    for block, quoted in todo:
        ways = _run(block, where)
        if quoted is not None:
            assert any(matches(got, quoted.splitlines()) for got in ways), \
                f"{block}\nprinted:\n" + "\n".join(ways[1])


def test_the_tutorials_first_runs_print_what_it_quotes(tmp_path):
    _check(blocks(TUTORIAL.read_text())[:QUICK], tmp_path)


@pytest.mark.slow
def test_the_whole_tutorial_prints_what_it_quotes(tmp_path):
    _check(blocks(TUTORIAL.read_text()), tmp_path)


def test_the_matcher_reads_an_excerpt_and_masks_the_clock():
    assert matches(["a", "b", "c", "wall 1.23 s"], ["a", "...", "wall 0.91 s"])
    assert not matches(["a", "b"], ["a", "c"]) and not matches(["a"], ["a", "b"])


def test_the_debugging_recipe_stops_where_it_says(tmp_path):
    """docs/howto.md, "Debug with the SimPy engine": its config, under pdb, with its breakpoint on the first
    statement of the handler it names and its condition `m.tx[j].txn == 7`, stops at transaction 7's CAS, where
    `p m.tx[j]` shows the transaction's fields by name."""
    howto = (ROOT / "docs" / "howto.md").read_text()
    block = next(b for b, _ in blocks(howto) if "python -m pdb" in b)
    config = block.split("<<'EOF'\n", 1)[1].split("EOF\n", 1)[0]
    (tmp_path / "tiny.yaml").write_text(config)
    assert "`b sim/model/iceberg.py:LINE, m.tx[j].txn == 7`" in howto and "`on_catalog_cas` in" in howto
    source = (ROOT / "sim" / "model" / "iceberg.py").read_text().splitlines()
    start = next(i for i, line in enumerate(source) if line.startswith("def on_catalog_cas("))
    line = next(i for i in range(start, len(source)) if source[i].strip().startswith("if ")) + 1
    commands = f"b sim/model/iceberg.py:{line}, m.tx[j].txn == 7\nc\np m.tx[j].txn, now\np m.tx[j]\nq\n"
    r = subprocess.run([sys.executable, "-m", "pdb", "-m", "sim", "run", str(tmp_path / "tiny.yaml"), "--engine",
                        "simpy"], input=commands, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "(Pdb) (7, 2005." in r.stdout and "Row(txn=7, table=" in r.stdout, r.stdout[-2000:]
