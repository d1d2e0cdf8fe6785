"""Writes `lake.sqlite`, the DuckLake history notebooks/your_tables.ipynb imports: a real catalog, committed to by
DuckLake itself (duckdb 1.4.4, its ducklake extension; `pip install -e '.[testbed]'`), in real time.

Three tables, four jobs, one connection taking each job's commit when it is due (the commits are the jobs', their
times the clock's): `clicks` a stream inserting every 0.25 s (jittered), `orders` change data (an insert a second,
an UPDATE every 5 s), `customers` a batch reload (DELETE then INSERT in one transaction) every 30 s, and maintenance
(`ducklake_merge_adjacent_files` on clicks every 60 s, an ALTER of orders once). Each commit names its job as its
author. The data files go to a temporary folder, deleted after: the history is the catalog's.

    python notebooks/data/make_lake.py [--minutes 4]
"""
from __future__ import annotations

import argparse
import heapq
import importlib
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _connect(catalog: Path, data: Path):
    import duckdb
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for name in ("ducklake", "sqlite_scanner"):
        folder = Path(importlib.import_module(f"duckdb_extension_{name}").__file__).parent / "extensions"
        con.execute(f"LOAD '{next(folder.glob(f'*/{name}.duckdb_extension'))}'")
    con.execute(f"ATTACH 'ducklake:sqlite:{catalog}' AS lake (DATA_PATH '{data}/')")
    con.execute("USE lake")
    return con


def _commit(con, author: str, *statements) -> None:
    con.execute("BEGIN")
    for sql, params in statements:
        con.execute(sql, params)
    con.execute("CALL lake.set_commit_message(?, ?)", [author, statements[0][0].split()[0].lower()])
    con.execute("COMMIT")


def jobs(rng):
    """(job, first due s, its period s, jitter as a share of the period, the commit) of each recurring commit."""
    n = iter(range(10**9))
    return [
        ("ingest", 0.0, 0.25, 0.4, lambda: [("INSERT INTO clicks SELECT range + ?, 'view' FROM range(50)",
                                            [next(n) * 50])]),
        ("cdc", 0.1, 1.0, 0.2, lambda: [("INSERT INTO orders (id, amount) VALUES (?, ?)",
                                        [next(n), float(rng.uniform(1, 99))])]),
        ("cdc", 2.5, 5.0, 0.2, lambda: [("UPDATE orders SET amount = amount * 1.01 WHERE id % 7 = ?",
                                        [int(rng.integers(7))])]),
        ("batch", 10.0, 30.0, 0.0, lambda: [("DELETE FROM customers", []),
                                            ("INSERT INTO customers SELECT range, 'c' || range FROM range(200)", [])]),
        ("maintenance", 45.0, 60.0, 0.0, lambda: [("CALL ducklake_merge_adjacent_files('lake', 'clicks')", [])]),
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=4.0)
    p.add_argument("--out", default=str(HERE / "lake.sqlite"))
    args = p.parse_args()
    out = Path(args.out)
    out.unlink(missing_ok=True)
    rng = np.random.default_rng(56)
    with tempfile.TemporaryDirectory() as data:
        con = _connect(out, Path(data))
        con.execute("CREATE TABLE clicks (id BIGINT, kind VARCHAR)")
        con.execute("CREATE TABLE orders (id BIGINT, amount DOUBLE)")
        con.execute("CREATE TABLE customers (id BIGINT, name VARCHAR)")
        start, end = time.monotonic(), time.monotonic() + 60 * args.minutes
        table = jobs(rng)
        due = [(start + first, k) for k, (_, first, *_rest) in enumerate(table)]
        heapq.heapify(due)
        altered = False
        while due[0][0] < end:
            at, k = heapq.heappop(due)
            time.sleep(max(0.0, at - time.monotonic()))
            author, _, period, jitter, statements = table[k]
            if author == "maintenance" and not altered:   # once: a schema change on orders
                _commit(con, author, ("ALTER TABLE orders ADD COLUMN note VARCHAR", []))
                altered = True
            _commit(con, author, *statements())
            heapq.heappush(due, (at + period * (1 + jitter * rng.uniform(-1, 1)), k))
        con.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
