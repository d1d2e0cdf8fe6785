"""``python -m sim.report DIR [--spec SWEEP.yaml]``: the same as ``sim report DIR [--spec SWEEP.yaml]`` (one
command line, so its inputs are checked and its errors worded in one place)."""

from __future__ import annotations

import sys


def main(argv=None) -> int:
    from ..cli import main as cli_main
    return cli_main(["report", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
