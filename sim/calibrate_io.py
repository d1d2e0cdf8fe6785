"""`sim calibrate INPUT --out DIR`: request latencies measured at one writer (a CSV, or a delay proxy's parquet log)
fitted per request kind (`sim.calibrate`), written as a provider file (`DIR/NAME.yaml`) and the catalog's latency
profiles (`DIR/catalog.yaml`), with each percentile's error printed.

A storage request kind is one of `sim.calibrate.STORAGE_KINDS` (case aside); any other kind is a catalog's (a
database round trip). In a log with a `server` column, the rows of servers other than the object store
(`--storage-server`, `s3`) are the catalog's, named `server.kind` (`pg.commit`), so a database's kind never passes
for a storage one; an object store's kind that is no storage kind (`s3.post`) must be left out (`--kinds`). Only these columns are read: `kind`, `latency_ms`, the request body's bytes (`bytes` or
`bytes_out`, for the PUT's ms per MiB) and `server`; any other is left alone.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from .schema import ConfigError

#: the body-size columns, in the order looked for: a CSV's `bytes`, the proxy log's `bytes_out`
SIZE_COLUMNS = ("bytes", "bytes_out")


def _bad(where: str, what: str) -> ConfigError:
    return ConfigError("", f"{where}: {what}")


def _numbers(column, name: str, where: str, row, missing_ok: bool = False):
    """A column as float64; a value that is not a number (or, unless `missing_ok`, a missing one) is an error
    naming its row (`row(i)`: "line 5" of a CSV, "row 4" of a parquet file)."""
    import numpy as np
    import pandas as pd
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    blank = column.isna().to_numpy() | (column.astype(str).str.strip() == "").to_numpy()
    wrong = np.isnan(values) & ~(blank if missing_ok else np.zeros(len(values), dtype=bool))
    if wrong.any():
        i = int(np.argmax(wrong))
        raise _bad(where, f"{name} on {row(i)} is not a number: {column.iloc[i]!r}")
    return values


def _kind_names(df, storage_server: str):
    """Each row's kind: a storage kind in lower case; any other as given. With a `server` column, every kind but
    the object store's storage kinds is `server.kind` (an object store's kind that is no storage kind too, which
    `select` refuses)."""
    from .calibrate import STORAGE_KINDS
    kinds = df["kind"].astype(str).str.strip()
    lower = kinds.str.lower()
    storage = lower.isin(STORAGE_KINDS)
    named = lower.where(storage, kinds)
    if "server" in df.columns:
        server = df["server"].astype(str).str.strip()
        named = named.where(storage & (server == storage_server), server + "." + kinds)
    return named.to_numpy()


def samples_of_frame(df, where: str = "samples", storage_server: str = "s3", row=lambda i: f"row {i + 1}") -> dict:
    """Per request kind, its `sim.calibrate.Samples` from a table of requests (columns `kind`, `latency_ms`, and
    optionally `bytes` or `bytes_out`, and `server`): storage kinds first in the provider file's order, then the
    catalog's by name. What the testbed calls with its proxy's log in memory."""
    import numpy as np

    from .calibrate import SIZED_KINDS, STORAGE_KINDS, Samples
    missing = [c for c in ("kind", "latency_ms") if c not in df.columns]
    if missing:
        raise _bad(where, f"not a latency log: it lacks the column(s) {', '.join(missing)} (it has: "
                          f"{', '.join(map(str, df.columns)) or 'none'})")
    if len(df) == 0:
        raise _bad(where, "no requests in it")
    latency = _numbers(df["latency_ms"], "latency_ms", where, row)
    bad = ~(latency > 0) | ~np.isfinite(latency)
    if bad.any():
        i = int(np.argmax(bad))
        raise _bad(where, f"latency_ms on {row(i)} is {df['latency_ms'].iloc[i]!r}; a latency is a number > 0 ms")
    size_col = next((c for c in SIZE_COLUMNS if c in df.columns), None)
    sizes = None if size_col is None else _numbers(df[size_col], size_col, where, row, missing_ok=True)
    names = _kind_names(df, storage_server)
    order = [k for k in STORAGE_KINDS if k in set(names)] + sorted(set(names) - set(STORAGE_KINDS))
    out = {}
    for kind in order:
        mask = names == kind
        size = None
        if kind in SIZED_KINDS and sizes is not None and not np.isnan(sizes[mask]).all():
            size = sizes[mask]
            if np.isnan(size).any() or (size < 0).any():
                i = int(np.flatnonzero(mask)[np.argmax(np.isnan(size) | (size < 0))])
                raise _bad(where, f"{size_col} on {row(i)} is {df[size_col].iloc[i]!r}: every {kind} needs its "
                                  "body's bytes (>= 0), or none does")
        out[kind] = Samples(latency[mask], size)
    return out


def read_samples(path: str | Path, storage_server: str = "s3") -> dict:
    """`samples_of_frame` of a CSV (`.csv`: a header row, then `kind, latency_ms[, bytes]`) or a parquet log."""
    import pandas as pd

    from .inputs import read_parquet, read_text
    path = Path(path)
    if path.suffix.lower() == ".csv":
        import io
        text = read_text(path, "latency", "CSV")
        try:
            df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise _bad(str(path), f"not a CSV of kind, latency_ms[, bytes]: {' '.join(str(exc).split())}") from None
        df.columns = [str(c).strip() for c in df.columns]
        return samples_of_frame(df, str(path), storage_server, row=lambda i: f"line {i + 2}")
    if path.suffix.lower() != ".parquet":
        raise _bad(str(path), "expected a .csv (kind, latency_ms[, bytes]) or a .parquet proxy log")
    return samples_of_frame(read_parquet(path, "latency log"), str(path), storage_server)


def _num(x: float) -> str:
    return repr(float(x))


def _profile(fit, *, base: bool = False, ms_per_mib: float | None = None) -> str:
    """One request profile as the provider file writes it (flow style)."""
    if base:
        return (f"{{fixed_ms: {_num(fit.fixed_ms)}, base_ms: {_num(fit.median_ms)}, ms_per_mib: "
                f"{_num(ms_per_mib)}, sigma: {_num(fit.sigma)}}}")
    return f"{{fixed_ms: {_num(fit.fixed_ms)}, median_ms: {_num(fit.median_ms)}, sigma: {_num(fit.sigma)}}}"


def _size_span(samples) -> str:
    s = samples.size_bytes
    return "" if s is None else f", bodies {_bytes(s.min())} to {_bytes(s.max())}"


def _bytes(n: float) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def storage_profiles(fits: dict, samples: dict, ms_per_mib: float | None = None,
                     where: str = "samples") -> tuple[dict, list[str]]:
    """The provider file's request keys (`get`, `put`, `cas`, and `head`, `list`, `delete` if measured) as YAML
    flow mappings, and a line per key saying where it came from. A provider needs a GET and a PUT and a
    conditional PUT: a missing GET is the HEAD's (one round trip each on a small object), a missing conditional PUT
    the PUT's at 0 bytes and a missing PUT the conditional PUT's (a precondition assumed to cost nothing
    measurable: the measured set's assumptions, docs/model/storage-providers.md)."""
    from .calibrate import STORAGE_KINDS
    have = {k: f.rounded() for k, f in fits.items() if k in STORAGE_KINDS}
    _provider_kinds(list(have), where)
    keys, notes = {}, []

    def measured(kind):
        f = have[kind]
        extra = ""
        if f.ms_per_mib is not None:
            extra = f"; ms_per_mib {f.ms_per_mib_source}" + (" (0: the bodies span less than 1 MiB)"
                                                              if f.ms_per_mib_source == "size-blind" else "")
        return f"{kind}: {f.n} samples{_size_span(samples[kind])}{extra}"

    for kind in STORAGE_KINDS:
        if kind in have:
            f = have[kind]
            keys[kind] = _profile(f, base=True, ms_per_mib=f.ms_per_mib) if kind == "put" else _profile(f)
            notes.append(measured(kind))
    if "get" not in keys:
        keys["get"] = keys["head"]
        notes.append("get: none measured: the HEAD's (one round trip each)")
    if "put" not in keys:
        slope = 0.0 if ms_per_mib is None else ms_per_mib
        keys["put"] = _profile(have["cas"], base=True, ms_per_mib=slope)
        notes.append(f"put: none measured: the conditional PUT's, ms_per_mib {_num(slope)} "
                     f"({'given' if ms_per_mib is not None else 'size-blind'})")
    if "cas" not in keys:
        keys["cas"] = _profile(have["put"])
        notes.append("cas: none measured: the PUT's at 0 bytes (a precondition assumed to cost nothing measurable)")
    for kind in ("head", "list", "delete"):
        if kind not in keys:
            notes.append(f"{kind}: none measured: a {kind.upper()} costs a GET draw")
    floor = min(f.fixed_ms for f in have.values())
    return {"min_latency_ms": _num(floor), **{k: keys[k] for k in STORAGE_KINDS if k in keys}}, notes


def _provider_kinds(kinds: list, where: str) -> None:
    """A provider file needs a GET (or a HEAD) and a PUT (or a conditional PUT) among the storage kinds."""
    for one, other, what in (("get", "head", "GET"), ("put", "cas", "PUT")):
        if one not in kinds and other not in kinds:
            raise _bad(where, f"no {one} or {other} requests among the storage kinds ({', '.join(kinds)}): a "
                              f"provider needs a {what}'s latency")


def provider_yaml(fits: dict, samples: dict, name: str, source: str, day: str,
                  ms_per_mib: float | None = None) -> str:
    """The provider file (`providers/*.yaml`'s format, one set of figures, which answers either profile set)."""
    keys, notes = storage_profiles(fits, samples, ms_per_mib, source)
    lines = [f"# Fitted by `sim calibrate` from {source} on {day}: each request kind fixed_ms + LogNormal(median_ms,",
             "# sigma) (the PUT's median base_ms + ms_per_mib x MiB), by maximum likelihood with each kind's fastest",
             "# 1 % censored (docs/howto.md, \"Calibrate a provider from your own measurements\"). One set of",
             "# figures: it answers either storage.profile_set. min_latency_ms: the least fixed part.",
             *(f"# - {n}" for n in notes),
             f"name: {name}", f"description: \"{name}: request latencies fitted by sim calibrate from "
                              f"{Path(source).name} ({day})\""]
    lines += [f"{k}: {v}" for k, v in keys.items()]
    return "\n".join(lines) + "\n"


def catalog_yaml(fits: dict, source: str, day: str) -> str:
    """One `catalog: {latency: {...}}` fragment per catalog kind, under the kind's name."""
    from .calibrate import STORAGE_KINDS
    lines = [f"# Catalog latencies fitted by `sim calibrate` from {source} on {day}: per database request kind,",
             "# fixed_ms + LogNormal(median_ms, sigma) (a service catalog's `catalog.latency`; a lock's or a log",
             "# store's `latency` takes the same keys). Use one in a config with `catalog: {backend: service}`:",
             "# paste its `catalog:` mapping, or",
             "#   sim run CONFIG --set catalog.backend=service --set 'catalog.latency={fixed_ms: ..., median_ms: ...,",
             "#   sigma: ...}'"]
    for kind, fit in fits.items():
        if kind in STORAGE_KINDS:
            continue
        f = fit.rounded()
        lines += [f"{_yaml_key(kind)}:   # {f.n} samples", f"  catalog: {{latency: {_profile(f)}}}"]
    return "\n".join(lines) + "\n"


def _yaml_key(kind: str) -> str:
    """The kind as a YAML key: as it is if plain (`pg.commit`), else quoted (a JSON string is a YAML scalar)."""
    import json
    import re
    return kind if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", kind) else json.dumps(kind)


def report(fits: dict, samples: dict) -> str:
    """Per kind: its samples, its fitted parameters, then each percentile's (and the mean's) sample value, fitted
    value and relative error, as written (rounded)."""
    from .calibrate import CENSORED_SHARE, compare
    out = []
    for kind, fit in fits.items():
        f = fit.rounded()
        median = f"median {f.median_ms:g} ms" + ("" if f.ms_per_mib is None else
                                                 f" + {f.ms_per_mib:g} ms/MiB ({f.ms_per_mib_source})")
        out.append(f"{kind} ({f.n} samples{_size_span(samples[kind])}): fixed {f.fixed_ms:g} ms + LogNormal("
                   f"{median}, sigma {f.sigma:g}); the fastest {100 * CENSORED_SHARE:g} % (<= "
                   f"{fit.censored_below_ms:.4g} ms) censored")
        out.append(f"  {'':5} {'sample ms':>11} {'fitted ms':>11} {'error':>8}")
        for label, got, model, err in compare(f, samples[kind].latency_ms, samples[kind].size_bytes):
            out.append(f"  {label:5} {got:11.4g} {model:11.4g} {100 * err:+7.1f} %")
    return "\n".join(out)


@dataclass(frozen=True)
class Calibration:
    """What `calibrate` fitted and wrote: the fits per kind, the report, and the files (None: not written)."""
    fits: dict
    report: str
    provider_path: Path | None
    catalog_path: Path | None


def select(samples: dict, kinds, where: str, storage_server: str = "s3") -> dict:
    """The kinds to fit: `kinds` (each must be there), else all; each with at least MIN_SAMPLES samples, and none
    of the object store's that is no storage kind (`s3.post`: neither the provider's nor the catalog's)."""
    from .calibrate import MIN_SAMPLES, STORAGE_KINDS
    if kinds:
        absent = [k for k in kinds if k not in samples]
        if absent:
            raise _bad(where, f"no requests of kind {', '.join(map(repr, absent))} (it has: {', '.join(samples)})")
        samples = {k: samples[k] for k in samples if k in set(kinds)}
    for kind, s in samples.items():
        if kind.startswith(f"{storage_server}."):
            raise _bad(where, f"kind {kind!r}: the object store's, but not one of its request kinds "
                              f"({', '.join(STORAGE_KINDS)}); name the kinds to fit with --kinds")
        if len(s.latency_ms) < MIN_SAMPLES:
            raise _bad(where, f"kind {kind!r} has {len(s.latency_ms)} samples; a fit needs at least {MIN_SAMPLES} "
                              "(name the kinds to fit with --kinds)")
    return samples


def calibrate(input_path: str | Path, out: str | Path, name: str | None = None, kinds=None,
              ms_per_mib: float | None = None, storage_server: str = "s3") -> Calibration:
    """Read INPUT, then `calibrate_samples` (`sim calibrate`); NAME defaults to INPUT's name less its suffix."""
    name = name or Path(input_path).stem
    _check_options(name, ms_per_mib)
    samples = read_samples(input_path, storage_server)
    return calibrate_samples(samples, out, name, str(input_path), kinds, ms_per_mib, storage_server)


def _check_options(name: str, ms_per_mib: float | None) -> None:
    if not name or "/" in name or name.startswith("."):
        raise ConfigError("--name", f"expected a file name without a directory, got {name!r}")
    if ms_per_mib is not None and not ms_per_mib >= 0:
        raise ConfigError("--ms-per-mib", f"expected a number >= 0, got {ms_per_mib!r}")


def calibrate_samples(samples: dict, out: str | Path, name: str, source: str, kinds=None,
                      ms_per_mib: float | None = None, storage_server: str = "s3") -> Calibration:
    """Fit `samples` (`samples_of_frame`'s; `source` names where they came from) and write DIR/NAME.yaml if any
    storage kind was fitted, DIR/catalog.yaml if any catalog kind was, both or neither (a failed write leaves DIR
    as it was)."""
    from .calibrate import STORAGE_KINDS, fit_samples
    from .providers import ProviderError, load_provider
    from .results_io import atomic_write_text, staged_dir
    _check_options(name, ms_per_mib)
    samples = select(samples, kinds, source, storage_server)
    storage_kinds = [k for k in samples if k in STORAGE_KINDS]
    if storage_kinds:
        _provider_kinds(storage_kinds, source)
    fits = fit_samples(samples, ms_per_mib)
    day = datetime.date.today().isoformat()
    catalog = any(k not in STORAGE_KINDS for k in fits)
    provider_text = provider_yaml(fits, samples, name, source, day, ms_per_mib) if storage_kinds else None
    out = Path(out)
    with staged_dir(out, replace=False) as staged:
        if provider_text is not None:
            atomic_write_text(staged / f"{name}.yaml", provider_text)
            try:   # what it wrote is a provider file sim reads
                load_provider(str(staged / f"{name}.yaml"), "measured")
            except ProviderError as exc:
                raise AssertionError(f"sim calibrate wrote a provider file sim cannot read: {exc}") from None
        if catalog:
            atomic_write_text(staged / "catalog.yaml", catalog_yaml(fits, source, day))
    return Calibration(fits, report(fits, samples), out / f"{name}.yaml" if provider_text is not None else None,
                       out / "catalog.yaml" if catalog else None)


def cmd_calibrate(args) -> int:
    from .calibrate import CalibrationError
    try:
        result = calibrate(args.input, args.out, args.name, args.kinds, args.ms_per_mib, args.storage_server)
    except CalibrationError as exc:
        raise ConfigError("", f"{args.input}: {exc}") from None
    print(result.report)
    for path in (result.provider_path, result.catalog_path):
        if path is not None:
            print(f"wrote {path}")
    if result.provider_path is not None:
        print(f"run on it: sim run CONFIG --set storage.provider={result.provider_path}")
    return 0


def add_command(sub) -> None:
    c = sub.add_parser("calibrate", help="fit request latencies measured at one writer to a provider file and "
                                         "catalog latency profiles")
    c.add_argument("input", help="a CSV (header; kind, latency_ms[, bytes]) or a parquet proxy log (kind, "
                                 "latency_ms, bytes_out, server, ...)")
    c.add_argument("--out", required=True, help="directory for NAME.yaml (the provider) and catalog.yaml")
    c.add_argument("--name", help="the provider's name and file name (default: INPUT's name without suffix)")
    c.add_argument("--kinds", nargs="+", metavar="KIND", help="fit only these request kinds (default: every kind)")
    c.add_argument("--ms-per-mib", type=float, help="hold the PUT's ms per MiB at this value instead of fitting it "
                                                    "(used too when the PUTs' bodies span less than 1 MiB)")
    c.add_argument("--storage-server", default="s3", help="in a log with a server column, the object store's name "
                                                          "(default s3); other servers' kinds are the catalog's")
    c.set_defaults(func=cmd_calibrate)
