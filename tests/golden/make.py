"""Golden digests: per-transaction records and run summaries of fixed configurations, pinned across commits.

`python tests/golden/make.py --repin` recomputes the digests of the configurations stored in
`tests/golden/digests.json` (each entry's own "config" and "replication"), holding their transaction counts: after
a column or summary key joins `pinned.json`, or when a change of results is intended (the commit says why).
`python tests/golden/make.py --afresh NAME ...` recomputes the named stored entries from their own configs,
letting their transaction counts move: for a change of results that also changes how many transactions a run
has (a new model version; the commit lists each entry's numbers before and after).
`python tests/golden/make.py --cases` pins every identity case (`case_*`) afresh from the config `configs()` builds
today, stored or not, leaving the other entries (smoke, 4c, and HISTORICAL's) as they are: after the cases' shared
settings change (their window went from two simulated minutes to one on 2026-11-27).
`python tests/golden/make.py --new` pins the configurations `configs()` builds that are not stored yet (new
cases), leaving the stored ones as they are.
`python tests/golden/make.py` pins afresh the configurations `configs()` builds today, which are not those stored
(cases added since; configs that now spell out throttle, scope and protocol, case_provider_gcp's throttle no longer
off): a new set of goldens, not a re-pin.
`tests/test_goldens.py` holds both engines to the digests.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

FOUR_C = {   # light 4c cells (1 h simulated), every provider, both mixes
    "4c_s3_1_fa_500": {"storage.provider": "s3", "workload.num_tables": 1, "workload.fast_append_ratio": 1.0,
                       "workload.inter_arrival.mean_ms": 500},
    "4c_s3x_20_0.9_1000": {"storage.provider": "s3x", "workload.num_tables": 20, "workload.fast_append_ratio": 0.9,
                           "workload.inter_arrival.mean_ms": 1000},
    "4c_gcp_5_0.5_2000": {"storage.provider": "gcp", "workload.num_tables": 5, "workload.fast_append_ratio": 0.5,
                          "workload.inter_arrival.mean_ms": 2000},
    "4c_azure_2_0.9_1000": {"storage.provider": "azure", "workload.num_tables": 2, "workload.fast_append_ratio": 0.9,
                            "workload.inter_arrival.mean_ms": 1000},
    "4c_azurex_50_1.0_2000": {"storage.provider": "azurex", "workload.num_tables": 50,
                              "workload.fast_append_ratio": 1.0, "workload.inter_arrival.mean_ms": 2000},
}


# entries kept as pinned, whatever today's case: a test reads them for what they pinned
HISTORICAL = {"case_provider_gcp"}   # throttle off, pinned before the throttle existed (tests/test_designs.py)

# what was pinned: later columns and summary keys (new mechanisms' counters) are left out of the digests
PINNED = json.loads((HERE / "pinned.json").read_text())


def digest_frame(df: pd.DataFrame, columns=None) -> str:
    """sha256 over column names, dtypes' kinds and exact values (floats by their bits; strings as UTF-8)."""
    h = hashlib.sha256()
    for name in columns or df.columns:
        col = df[name]
        h.update(name.encode() + b"\0")
        if col.dtype.kind in "biuf":
            arr = np.ascontiguousarray(col.to_numpy())
            h.update(arr.dtype.kind.encode())
            h.update(arr.astype(np.float64 if arr.dtype.kind == "f" else np.int64).tobytes())
        else:
            h.update(b"s")
            h.update("\x1f".join(map(str, col.tolist())).encode())
    return h.hexdigest()


def digest_summary(summary: dict) -> str:
    s = {k: summary[k] for k in PINNED["summary"]}
    return hashlib.sha256(json.dumps(s, sort_keys=True, default=repr).encode()).hexdigest()


def configs() -> dict[str, tuple[dict, int]]:
    """name -> (config data, replication)."""
    from test_fast_engine import BASE, CASES, merge
    from sim.config import from_dict, set_path
    from sim.sweep.runner import tasks_of
    from sim.sweep.spec import load as load_sweep

    out = {f"case_{name}": (portable(merge(BASE, d)), 0) for name, d in sorted(CASES.items())}
    out["case_retry_mixed_md_r1"] = (portable(merge(BASE, CASES["retry_mixed_md"])), 1)
    sweep = load_sweep(ROOT / "experiments" / "smoke.yaml")
    for task in tasks_of(sweep):
        out[f"smoke_{task['key']}"] = (task["config"], task["replication"])
    for name, paths in FOUR_C.items():       # as 4c (the seed set), and under the measured set (the default)
        for profile_set, key in (("seed", name), ("measured", name.replace("4c_", "4c_measured_"))):
            data = yaml.safe_load((ROOT / "experiments" / "4c.yaml").read_text())["base"]
            for p, v in {**paths, "storage.profile_set": profile_set}.items():
                set_path(data, p, v)
            out[key] = (from_dict(data).to_dict(), 0)
    return out


def portable(data: dict) -> dict:
    """A provider file of this repository named by its path relative to the repository, not to this machine:
    the path is part of the config's hash (its seeds), so a golden pinned with an absolute path would load, and
    reproduce, only in the checkout it was pinned in; a trace file likewise (its path is not hashed, but a
    golden's stored config must load anywhere)."""
    provider = data.get("storage", {}).get("provider")
    if isinstance(provider, str) and Path(provider).is_absolute() and Path(provider).is_relative_to(ROOT):
        data = {**data, "storage": {**data["storage"], "provider": Path(provider).relative_to(ROOT).as_posix()}}
    trace = data.get("workload", {}).get("trace", {}).get("path")   # (not hashed: a trace is its content)
    if isinstance(trace, str) and Path(trace).is_absolute() and Path(trace).is_relative_to(ROOT):
        w = data["workload"]
        data = {**data, "workload": {**w, "trace": {**w["trace"], "path": Path(trace).relative_to(ROOT).as_posix()}}}
    return data


def config_of(data: dict):
    """A stored config, its relative provider paths read from the repository whatever the working directory."""
    from sim.config import from_dict
    with contextlib.chdir(ROOT):
        return from_dict(data)


def compute(name: str, data: dict, replication: int, engine: str) -> dict:
    """Digests of one run (from the repository: a relative provider path is read when the run starts, too)."""
    from sim.run import run
    with contextlib.chdir(ROOT):
        r = run(config_of(data), replication, history=True, engine=engine)
    return {"records": digest_frame(r.records, PINNED["records"]),
            "history": digest_frame(r.history, PINNED["history"]),
            "summary": digest_summary(r.summary), "transactions": int(len(r.records))}


def _entry(name: str, data: dict, replication: int) -> dict:
    """A golden entry: the config and replication it runs, and the fast engine's digests of that run."""
    return {"config": data, "replication": replication, **compute(name, data, replication, "fast")}


def repin(path: Path = HERE / "digests.json") -> None:
    """Recompute the digests of the configurations stored in `path`, in place; a transaction count that moves
    stops it (a re-pin changes what is digested, never what runs)."""
    golden = json.loads(path.read_text())
    for name, g in golden.items():
        got = compute(name, g["config"], g["replication"], "fast")
        if got["transactions"] != g["transactions"]:
            raise SystemExit(f"{name}: {got['transactions']} transactions, pinned {g['transactions']}; nothing written")
        changed = [k for k in ("records", "history", "summary") if got[k] != g[k]]
        g.update(got)
        print(name, g["transactions"], "changed: " + (", ".join(changed) or "none"), flush=True)
    path.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")


def afresh(names: list[str], path: Path = HERE / "digests.json") -> None:
    """Recompute the named stored entries (their stored config and replication), transaction counts free."""
    golden = json.loads(path.read_text())
    for name in names:
        g = golden[name]
        before = g["transactions"]
        g.update(compute(name, g["config"], g["replication"], "fast"))
        print(name, f"transactions {before} -> {g['transactions']}", flush=True)
    path.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")


def pin_new(path: Path = HERE / "digests.json") -> None:
    """Pin the configurations `configs()` builds that `path` does not hold yet (new cases), leaving every
    stored one as it is."""
    golden = json.loads(path.read_text())
    for name, (data, rep) in configs().items():
        if name not in golden:
            golden[name] = _entry(name, data, rep)
            print(name, golden[name]["transactions"], flush=True)
    path.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")


def pin_cases(path: Path = HERE / "digests.json") -> None:
    """Pin every `case_*` configuration `configs()` builds afresh (stored or new); every other entry stays."""
    golden = json.loads(path.read_text())
    for name, (data, rep) in configs().items():
        if name.startswith("case_") and name not in HISTORICAL:
            before = golden.get(name, {}).get("transactions")
            golden[name] = _entry(name, data, rep)
            print(name, f"transactions {before} -> {golden[name]['transactions']}", flush=True)
    path.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")


def pin_afresh() -> None:
    out = {}
    for name, (data, rep) in configs().items():
        out[name] = _entry(name, data, rep)
        print(name, out[name]["transactions"], flush=True)
    (HERE / "digests.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repin", action="store_true", help="recompute the stored configurations' digests")
    ap.add_argument("--new", action="store_true", help="pin only the configurations not stored yet")
    ap.add_argument("--cases", action="store_true", help="pin every identity case afresh, the rest as stored")
    ap.add_argument("--afresh", nargs="+", metavar="NAME", help="recompute these stored entries, counts free")
    args = ap.parse_args()
    if args.afresh:
        afresh(args.afresh)
    elif args.repin:
        repin()
    elif args.new:
        pin_new()
    elif args.cases:
        pin_cases()
    else:
        pin_afresh()
