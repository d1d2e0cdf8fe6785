"""`python -m sim.checker DIR_OR_FILE`: print violations, exit 1 if any (debug convenience)."""

from __future__ import annotations

import sys

from .replay import check_history
from .rows import format_violation, load_history


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m sim.checker DIR_OR_HISTORY_PARQUET", file=sys.stderr)
        return 2
    try:
        hist = load_history(argv[0])
    except (OSError, ValueError) as exc:    # missing, a directory, not parquet (pyarrow's ArrowInvalid: ValueError)
        print(f"error: {argv[0]}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    viols = check_history(hist)
    for viol in viols:
        print(format_violation(viol))
    print(f"{len(viols)} violation(s)" if viols else "all invariants hold")
    return 1 if viols else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
