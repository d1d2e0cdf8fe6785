"""Shared test helpers."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args, cwd=None, timeout=900):
    """`python -m sim ARGS` in a subprocess: what a user types."""
    return subprocess.run([sys.executable, "-m", "sim", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=timeout)
