"""ducklake-pg: DuckLake (duckdb with its ducklake and postgres extensions) with its catalog in PostgreSQL, its data
files on local disk.

A transaction is one `INSERT INTO` a lake table in its own DuckDB transaction: DuckLake writes the data file,
then commits in one PostgreSQL transaction that inserts the next snapshot id (the lake's primary key: any two
concurrent commits collide) and the table's changes. DuckLake retries a failed commit itself
(`ducklake_max_retry_count`, default 10; 0 turns it off); its retries run in compiled code, so its attempts
are read from the proxy's log: each transaction that inserts a snapshot row is one.
"""
from __future__ import annotations

from pathlib import Path

from ..writers import CommitOutcome
from . import address, payload
from .common import failed, keys_of

SERVERS = ("pg",)


def _extension(package: str, name: str) -> str:
    import importlib
    mod = importlib.import_module(package)
    found = sorted(Path(mod.__file__).parent.glob(f"extensions/*/{name}.duckdb_extension"))
    if not found:
        raise RuntimeError(f"{package} holds no {name}.duckdb_extension")
    return str(found[-1])


def database(env: dict) -> str:
    return f"lake_{env['tag']}".lower()


def connect(env: dict, writer: int):
    """A DuckDB connection with the lake attached through the writer's proxied port."""
    import duckdb
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    for package, name in (("duckdb_extension_postgres_scanner", "postgres_scanner"),
                          ("duckdb_extension_ducklake", "ducklake")):
        con.execute(f"INSTALL '{_extension(package, name)}'")
        con.execute(f"LOAD {name}")
    host, port = address(env, "pg", writer)
    pg = env["pg"]
    pw = f" password={pg['password']}" if pg["password"] else ""
    data = Path(env["workdir"]) / "ducklake-data"
    con.execute(f"ATTACH 'ducklake:postgres:dbname={database(env)} host={host} port={port} user={pg['user']}{pw}' "
                f"AS lake (DATA_PATH '{data}/')")
    con.execute("SET threads = 1")    # DuckDB's other threads spin while a query waits on the network: CPU, no work
    if not env["retries"]:
        con.execute("SET ducklake_max_retry_count = 0")
    return con


def setup(env: dict, tables: list[str]) -> None:
    import psycopg2
    host, port = address(env, "pg", -1)
    pg = env["pg"]
    c = psycopg2.connect(host=host, port=port, user=pg["user"], password=pg["password"] or None,
                         dbname=pg["dbname"])
    c.autocommit = True
    c.cursor().execute(f"CREATE DATABASE {database(env)}")
    c.close()
    con = connect(env, -1)
    for t in tables:
        con.execute(f"CREATE TABLE lake.{t} (writer INTEGER, k INTEGER, \"row\" INTEGER, data BLOB)")
    con.close()


def attempts(committed: bool, requests: dict, retries: bool) -> int:
    """Each attempt is a PostgreSQL transaction of its own, ended by its COMMIT (won) or a ROLLBACK (lost)."""
    return requests.get("pg:commit", 0) + requests.get("pg:rollback", 0)


class Writer:
    def __init__(self, env: dict, writer: int):
        self.env, self.writer = env, writer
        self.con = connect(env, writer)
        for t in env["tables"]:
            self.con.execute(f"SELECT count(*) FROM lake.{t}").fetchall()

    def payload(self, k: int):
        return payload(self.env, self.writer, k)

    def commit(self, table: str, data) -> CommitOutcome:
        import duckdb
        self.con.register("batch", data)
        try:
            self.con.execute(f"INSERT INTO lake.{table} SELECT * FROM batch")
        except duckdb.Error as exc:
            return failed("retries_exhausted", exc)
        finally:
            self.con.unregister("batch")
        return CommitOutcome(True)

    def close(self) -> None:
        self.con.close()


def open_writer(env: dict, writer: int) -> Writer:
    return Writer(env, writer)


def verify(env: dict, tables: list[str]) -> dict:
    """Per table: the snapshots that inserted into it (DuckLake's `tables_inserted_into`, by table id), and the
    rows of each (writer, k)."""
    con = connect(env, -1)
    ids = dict(con.execute("SELECT table_name, table_id FROM __ducklake_metadata_lake.ducklake_table "
                           "WHERE end_snapshot IS NULL").fetchall())
    inserted = [str(x) for (lst,) in con.execute(
        "SELECT changes['tables_inserted_into'] FROM ducklake_snapshots('lake')").fetchall() for x in (lst or [])]
    out = {}
    for t in tables:
        rows = con.execute(f"SELECT writer, k FROM lake.{t}").fetch_arrow_table()
        out[t] = {"versions": inserted.count(str(ids[t])), "keys": keys_of(rows)}
    con.close()
    return out


# ------------------------------------------------------------------------------------- the model of the stack

# the request kinds of a round trip the client follows with its next one at once (BEGIN, a query's Parse and
# Describe, the commit's batch): the gaps after them are the client's own time per round trip; after the other
# COPYs comes DuckDB's work (the data file, the batch's statements), and after COMMIT the call's return
FOLLOWED = ("begin", "select", "other", "update", "insert")


def profile(cal, folder) -> dict:
    """The model's inputs from one writer (design ducklake-postgres): a PostgreSQL round trip as the client's loop
    sees it (the proxy's latency, fitted as `fixed_ms + LogNormal`, plus the client's median time from a round
    trip's answer to its next request where nothing else runs between them), and the client's own work (the
    transaction's duration less its round trips so counted) as the runtime."""
    import numpy as np
    from ..profile import lognormal, runtime
    lat, gaps, work = [], [], []
    for r, reqs in zip(cal.raw.itertuples(), cal.per_txn):
        pg = reqs[reqs["server"] == "pg"].sort_values("start_ms")
        if pg.empty:
            continue
        lat.extend(pg["latency_ms"])
        start, end = pg["start_ms"].to_numpy(), pg["end_ms"].to_numpy()
        after = start[1:] - end[:-1]
        gaps.extend(after[np.isin(pg["kind"].to_numpy()[:-1], FOLLOWED)])
        work.append((r.end_ms - r.arrival_ms, float(pg["latency_ms"].sum()), len(pg)))
    gap = float(np.median(gaps)) if gaps else 0.0
    rt = lognormal(np.asarray(lat))
    rt["fixed_ms"] += gap
    runtime_ms = [d - s - n * gap for d, s, n in work]
    return {"round_trip": rt, "client_gap_ms": gap, "runtime": runtime(np.maximum(runtime_ms, 0.0)),
            "round_trips_per_commit": float(np.median([n for _, _, n in work]))}


def model_config(profile: dict, spec) -> dict:
    """DuckLake 1.4.4 on PostgreSQL (design ducklake-postgres; 1.4's conflict rules): `ducklake_max_retry_count` 10
    is 10 attempts (9 retries); 0, the retries off, one."""
    return {"design": "ducklake-postgres",
            "catalog": {"latency": profile["round_trip"], "ducklake_version": "1.4"},
            "commit": {"max_retries": 9 if spec.retries else 0},
            "workload": {"runtime": profile["runtime"]}}
