"""`python -m sim.checker DIR_OR_HISTORY_PARQUET`: the same as `sim check DIR_OR_HISTORY_PARQUET` (the run's
config.yaml beside the history gives the design's rules; inputs checked and errors worded in one place)."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from ..cli import main as cli_main
    return cli_main(["check", *argv])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
