"""``python -m sim.report DIR [--spec SWEEP.yaml]``: write DIR/report/ and print index.html's path."""

from __future__ import annotations

import argparse


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.report", description=__doc__)
    ap.add_argument("results_dir")
    ap.add_argument("--spec", help="sweep file whose 'report:' section sets rows/cols/facets")
    a = ap.parse_args(argv)
    spec_report = None
    if a.spec:
        from pathlib import Path

        from ..yamlio import load_yaml
        spec_report = (load_yaml(Path(a.spec).read_text()) or {}).get("report")
    from . import write_report
    print(write_report(a.results_dir, spec_report, progress=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
