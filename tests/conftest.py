import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


def run_cli(*args, cwd=None):
    """`python -m sim ARGS` in a subprocess: what a user types."""
    import subprocess
    return subprocess.run([sys.executable, "-m", "sim", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=600)
