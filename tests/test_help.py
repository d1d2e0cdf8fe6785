"""Every command's `--help` works from an installed, non-editable copy of the package.

argparse %-formats help strings, so a bare '%' in one (say "95 % CI") is a traceback, and only when someone asks
for help; an editable install or the repository on sys.path also hides a module the package build leaves out.
The copy is what setuptools puts in a wheel (`build_py` from pyproject.toml): pip cannot build a wheel here with
--no-build-isolation, because the venv has no `wheel` package, and with isolation it would need the network."""
import argparse
import os
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT
from sim.cli import build_parser


def _commands(parser: argparse.ArgumentParser, path=()) -> list[tuple[str, ...]]:
    """Every command path the parser accepts, from the parser itself, so a new (sub)command is covered."""
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, path + (name,))
    return found


COMMANDS = _commands(build_parser())


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> dict:
    """Environment whose `import sim` is a fresh build of this checkout, run from a directory outside it."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "sim", src / "sim", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                    "--build-lib", str(target)], cwd=src, check=True, capture_output=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    return {"env": env, "cwd": tmp_path_factory.mktemp("elsewhere"), "target": target}


def _python(installed, *args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=installed["env"],
                          cwd=installed["cwd"], timeout=120)


def test_the_installed_copy_is_imported_and_has_every_command(installed):
    probe = ("import sim, sim.cli, argparse; print(sim.__file__); p = sim.cli.build_parser(); "
             "print(sorted(next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices))")
    proc = _python(installed, "-c", probe)
    assert proc.returncode == 0, proc.stderr
    where, names = proc.stdout.splitlines()
    assert where == str(installed["target"] / "sim" / "__init__.py")
    assert names == str(sorted(c[0] for c in COMMANDS if len(c) == 1))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "sim")
def test_help(installed, command):
    proc = _python(installed, "-m", "sim", *command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: {' '.join(('python -m sim',) + command)} ")
    assert proc.stderr == ""

