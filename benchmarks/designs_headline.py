"""The designs comparison's headline table (benchmarks/designs_headline.md) from the designs knee sweep.

    python -m sim sweep experiments/designs-knee.yaml --out results/designs-knee
    python benchmarks/designs_headline.py [--knees results/designs-knee/knees.parquet]
    python benchmarks/designs_headline.py --knees K.parquet --designs rest rest-lakekeeper   # replace those rows
    python benchmarks/designs_headline.py --keep-as "## Model version 8: the seed set"   # keep today's below

With `--designs`, the knees file holds a sweep of those designs' rows only (a model change that moved only them):
their rows of the table are replaced, the others kept, and a note says which rows come from which model version.

Every cell is a knee search's crossing (offered commits/s at 95 % success) with its 95 % CI; per-table designs
are searched at one table and scaled N x (sim.report.designs_knee). The previous table (model version 3, grid
knees: the best qualifying load point of experiments/designs.yaml) is kept below it for comparison.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim.report.designs_knee import headline  # noqa: E402

OUT = ROOT / "benchmarks" / "designs_headline.md"
PREVIOUS = "## Model version 3: grid knees"


def _markdown(table: pd.DataFrame) -> str:
    cols = list(table.columns)
    lines = ["| tables | mix | design | " + " | ".join(cols) + " |", "|---|---|---|" + "---|" * len(cols)]
    for (tables, mix, design), row in table.iterrows():
        lines.append(f"| {tables} | {mix} | {design} | " + " | ".join("-" if pd.isna(row[c]) else str(row[c])
                                                                      for c in cols) + " |")
    return "\n".join(lines)


def _rows(md: str) -> tuple[list[str], dict]:
    """A headline file's table: its header lines and its rows keyed by (tables, mix, design label)."""
    lines = md.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("| tables |"))
    rows = {}
    for line in lines[i + 2:]:
        if not line.startswith("| "):
            break
        tables, mix, label = (c.strip() for c in line.split("|")[1:4])
        rows[(int(tables), mix, label)] = line
    return lines[i:i + 2], rows


def _order(key: tuple) -> tuple:
    """The table's order: table count, FA before mixes, design label."""
    tables, mix, label = key
    return tables, mix != "FA", mix, label


def replace_designs(old: str, new_table: str, designs: list[str], note: str) -> str:
    """`old`'s headline table with the rows of `designs` taken from `new_table`, `note` after its first
    paragraph."""
    header, rows = _rows(old)
    rows = {k: v for k, v in rows.items() if k[2].split(" (")[0] not in designs}
    rows.update(_rows(new_table)[1])
    table = "\n".join(header + [rows[k] for k in sorted(rows, key=_order)])
    start = old.index(header[0])
    end = old.find("\n\n", start)
    intro = old[:start].rstrip("\n")
    paragraphs = intro.split("\n\n")
    if paragraphs[-1].startswith("Rows of "):            # an earlier replacement's note
        intro = "\n\n".join(paragraphs[:-1])
    return intro + "\n\n" + note + "\n\n" + table + (old[end:] if end >= 0 else "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--knees", default=str(ROOT / "results" / "designs-knee" / "knees.parquet"))
    ap.add_argument("--designs", nargs="+", help="replace only these designs' rows (the knees file's)")
    ap.add_argument("--keep-as", metavar="HEADING", help="keep the current headline below the new one, under "
                    "this heading (a model change that moved every row: the table before it, for comparison)")
    args = ap.parse_args()
    knees = pd.read_parquet(args.knees)
    if args.designs:
        from sim.version import MODEL_VERSION
        note = (f"Rows of {', '.join(f'`{d}`' for d in args.designs)}: model version {MODEL_VERSION} (success over "
                f"the transactions that began to commit), searched at every table count; {len(knees)} searches, "
                f"{int(knees['runs'].sum())} runs, {int(knees['decided'].sum())} decided.")
        OUT.write_text(replace_designs(OUT.read_text(), _markdown(headline(knees)), args.designs, note))
        print(f"wrote {OUT}")
        return
    from sim.version import MODEL_VERSION
    decided = int(knees["decided"].sum())
    old = OUT.read_text() if OUT.exists() else ""
    previous = old[old.index(PREVIOUS):] if PREVIOUS in old else ""
    if args.keep_as:
        kept = old[old.index("\n\n") + 2:old.index(PREVIOUS) if PREVIOUS in old else len(old)].rstrip("\n")
        previous = f"{args.keep_as}\n\n{kept}\n\n{previous}"
    head = (
        "# Catalog designs: headline knees\n\n"
        "Knee: the offered rate (commits/s) at which 95 % of the window's transactions commit (an unfinished one "
        "counts as failed), with its 95 % CI, from `sim knee`'s search per cell (docs/knee.md), model version "
        f"{MODEL_VERSION} on the default profile set (`measured` since version 9): `python -m sim sweep "
        "experiments/designs-knee.yaml`, then "
        "`python benchmarks/designs_headline.py`. "
        f"{len(knees)} searches, {int(knees['runs'].sum())} runs, {decided} decided (CI half-width at most 5 % "
        "of the knee); an undecided cell stopped at its run budget with a wider CI. Per-table designs are searched "
        "at one table and scaled N x (independent tables); `file` and `delta-dynamodb` (its tables share one "
        "DynamoDB table's write capacity) at each table count. `rest`, `rest-lakekeeper`, `service-pointer`, "
        "`hive`: the service's database latency (db; HMS for `hive`, whose lock is the same service) has no public "
        "figure and is swept; so is ZooKeeper's for `hudi` (zk); DynamoDB's for `delta-dynamodb` (ddb) is 10 ms, "
        "on S3 and S3 Express only. `hive`'s many undecided cells are not a short budget: its success is bistable "
        "in load (docs/knee.md, \"Measured\"). `log-spark` is left out (its transactions never give up: see "
        "experiments/designs_knee_gen.py).\n\n")
    OUT.write_text(head + _markdown(headline(knees)) + "\n\n" + previous)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
