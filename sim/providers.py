"""Storage-provider latency profiles, read from `providers/<name>.yaml`.

A profile is data, not code: GET, PUT (size-dependent) and CAS lognormals with one floor, and optionally a HEAD,
a LIST and a DELETE of their own. A provider file holds one profile per profile set (`storage.profile_set`):
`seed`, the write-up's figures (its top-level keys), and `measured` (the default), one request latency per request
kind fitted to one writer's measured conditional-write loop (its `measured` section, with the loop it was fitted
to); a file with no `measured` section (a user's own, or one `sim calibrate` wrote) has one profile, which answers
both. The seed's percentile tables and the
measured loops are held against these numbers by tests/test_providers.py.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Mapping

from .inputs import read_yaml
from .schema import ConfigError, Field, check

MIB = 1024 * 1024


#: the profile sets a provider file may hold (`storage.profile_set`; docs/MODEL.md, "Storage providers")
PROFILE_SETS = ("seed", "measured")


class ProviderError(ValueError):
    pass


@dataclass(frozen=True)
class Profile:
    """One provider. Latencies in ms; PUT median grows with size: base_ms + ms_per_mib * size_MiB."""
    name: str
    description: str
    min_latency_ms: float
    get_median_ms: float
    get_sigma: float
    put_base_ms: float
    put_ms_per_mib: float
    put_sigma: float
    cas_median_ms: float
    cas_sigma: float
    # optional: each request kind's fixed part, added to its lognormal (a fixed floor plus a lognormal: the measured
    # set's; docs/MODEL.md, "Profile sets"); None: none
    get_fixed_ms: float | None = None
    put_fixed_ms: float | None = None
    cas_fixed_ms: float | None = None
    list_fixed_ms: float | None = None
    head_fixed_ms: float | None = None
    # optional: LIST latency (a log protocol's listing; else a LIST costs a GET)
    list_median_ms: float | None = None
    list_sigma: float | None = None
    # optional: HEAD latency (the microbenchmark's first request; else a HEAD is a GET-profile draw, as the seed's)
    head_median_ms: float | None = None
    head_sigma: float | None = None
    # optional: DELETE latency (an object DELETE; else a DELETE is a GET-profile draw): a request with no body, which
    # `sim calibrate` fits where a DELETE was measured
    delete_median_ms: float | None = None
    delete_sigma: float | None = None
    delete_fixed_ms: float | None = None
    # optional: per-object mutation limit, a token bucket per object name (GCS: one write per second)
    mutation_rate_per_s: float | None = None
    mutation_burst: float | None = None
    # optional: the tokens a refused (429) write takes from its bucket too (None: none, the plain bucket)
    mutation_refusal_tokens: float | None = None
    # optional: a second bucket per client (a closed-loop writer; under open-loop arrivals, each transaction): a
    # conditional write needs a token of its object's bucket and of its client's, and a refused one takes
    # `client_refusal_tokens` of its client's (docs/MODEL.md, "Concurrent writes to one object")
    client_rate_per_s: float | None = None
    client_burst: float | None = None
    client_refusal_tokens: float | None = None
    # optional: the store checks a conditional write's precondition when the write completes (S3: "the first write
    # operation to finish succeeds"), not at the catalog's linearization fraction of its latency
    cas_checked_at_completion: bool | None = None
    # optional: the microbenchmark's client expects the version its HEAD saw (its first request), not its GET's
    # (Iceberg's S3 and GCS FileIO cache the HEAD's ETag / generation; docs/MODEL.md, "The conditional-write
    # microbenchmark")
    version_from_head: bool | None = None
    # optional: the store serves conditional writes to one object one at a time, each for its whole latency, in
    # order of arrival (a what-if: no shipped profile has it; docs/MODEL.md, "Concurrent writes to one object")
    cas_one_at_a_time: bool | None = None
    # optional: the store's own time per GET, serving GETs one at a time (a self-hosted store on a small machine:
    # SeaweedFS behind its proxy): a GET of a batch waits for those ahead of it (`sim.model.io.store_wait_ms`)
    get_service_ms: float | None = None
    # optional: the store writes a directory marker (an empty PUT of `dir/`) under a lock per marker and asks again
    # for a lock it finds held after a sleep (SeaweedFS 4.48's S3 gateway: `withObjectWriteLock`, polled each 1 s):
    # two marker PUTs that reach it closer in time than the window collide and the later waits a poll
    # (`sim.model.pyiceberg.marker_wait_ms`; `sim testbed` measures both on its S3 server)
    marker_lock_window_ms: float | None = None
    marker_lock_poll_ms: float | None = None
    # optional: how the store creates a name if absent (docs/model/storage-providers.md, "File systems"): None, an
    # object store's conditional PUT (If-None-Match); "rename": a file system's rename that fails if the target
    # exists (HDFS, HopsFS: the client checks exists(), writes a temp file and renames it); "link": a POSIX hard
    # link (a local or Lustre mount, as object_store's LocalFileSystem does it); "none": no atomic create known
    create_if_absent: str | None = None
    # optional: False: the store has no conditional replace (no If-Match): a catalog object cannot be CASed
    replace_if_match: bool | None = None
    # optional: the microbenchmark's client writes an object as an upload of this many requests, the first carrying
    # the precondition (ADLS Gen2's Create with the If-Match, then Append and Flush: 3): the store checks it at the
    # first request's midpoint, 1 / (2 n) of the write, the object reads empty from there to its answer, and the
    # client fails an operation whose HEAD or GET reads it so (docs/model/concurrent-writes.md)
    upload_requests: int | None = None
    # optional, figures fitted on several writers (the measured set's `concurrency_fit`; `storage.concurrency_fit:
    # false` leaves them out): a conditional write that fails its check is answered this much later than its latency
    # (S3 Express) ...
    loser_answer_ms: float | None = None
    # ... a conditional write that reaches its check while another to the object is in flight is answered 5xx with
    # this probability (Azure), resent by the store's client on its own schedule (`busy_error_retry`) ...
    busy_error_share: float | None = None
    busy_error_retry: str | None = None
    # ... and where they were fitted (None: the profile has no figure fitted on several writers)
    concurrency_fit: str | None = None

    def put_median_ms(self, size_bytes: int) -> float:
        return self.put_base_ms + self.put_ms_per_mib * size_bytes / MIB

    def to_dict(self) -> dict:
        """The profile as data; optional keys it does not have are left out."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping) -> Profile:
        """`to_dict`'s inverse: a profile stored with a run (`resolved.provider_profile`) typed again."""
        return cls(**data)

    def digest(self) -> str:
        """A digest of the numbers the engine reads (not the name or description): a sweep's cache key covers
        it, so editing a provider file recomputes the runs that used it."""
        return profile_digest(self.to_dict())


def profile_digest(profile: dict) -> str:
    """`Profile.digest` of a profile stored as plain data (a run file's `resolved.provider_profile`). Words about the
    numbers (a name, a description, where a fit comes from) are not digested."""
    values = {k: v if isinstance(v, str) else float(v) for k, v in profile.items()
              if k not in ("name", "description", "concurrency_fit")}
    blob = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def providers_dir() -> Path:
    """`$SIM_PROVIDERS_DIR`, else the repository's `providers/` beside the package."""
    env = os.environ.get("SIM_PROVIDERS_DIR")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "providers"


def available() -> list[str]:
    return sorted(p.stem for p in providers_dir().glob("*.yaml"))


def _lognormal(median_ms: Field) -> dict:
    """A request's latency: fixed_ms (optional, 0 unless given) + LogNormal(ln(median_ms), sigma)."""
    return {"median_ms": median_ms, "sigma": Field(float, required=True, ge=0), "fixed_ms": Field(float, ge=0)}


#: how a store creates a name if absent (`Profile.create_if_absent`): put (an object store's If-None-Match, the
#: default), rename (a file system's rename that fails if the target exists), link (a POSIX hard link), none
CREATE_IF_ABSENT = ("put", "rename", "link", "none")
_NUMBER = Field(float, required=True, ge=0)
_MEDIAN = Field(float, required=True, gt=0)
_REQUESTS = {
    "min_latency_ms": _NUMBER, "get": Field(_lognormal(_MEDIAN), required=True),
    "put": Field({"base_ms": _MEDIAN, "ms_per_mib": _NUMBER, "sigma": _NUMBER, "fixed_ms": Field(float, ge=0)},
                 required=True),
    "cas": Field(_lognormal(_MEDIAN), required=True),
    "list": Field(_lognormal(_NUMBER)),   # optional: LIST latency
    "delete": Field(_lognormal(_MEDIAN)),   # optional: DELETE latency (else a GET draw)
    # optional: how a name is created if absent, and whether an object can be replaced if it matches (file systems)
    "create_if_absent": Field(str, choices=CREATE_IF_ABSENT), "replace_if_match": Field(bool),
}
_FIGURE = Field(float, gt=0)
# what a measured set was fitted to: one writer's conditional-write loop (read by the tests and
# benchmarks/calibration/profiles_fit.py, never by the model)
LOOP = {"source": Field(str, required=True), "threads": Field(int, required=True, ge=1),
        "median_ms": Field(float, required=True, gt=0), "mean_ms": Field(float, required=True, gt=0),
        "p95_ms": Field(float, required=True, gt=0), "p99_ms": Field(float, required=True, gt=0),
        "min_ms": Field(float, required=True, gt=0), "ops_per_s": _FIGURE,
        "p5_ms": _FIGURE, "p10_ms": _FIGURE, "p25_ms": _FIGURE, "p75_ms": _FIGURE, "p90_ms": _FIGURE,
        "operations": Field(int, ge=1)}   # the loop's operations measured (its minimum is their least)
# a per-object mutation limit: a token bucket (burst 1 unless given), a refused write taking
# `mutation_refusal_tokens` of it (0 unless given)
_LIMIT = {"mutation_rate_per_s": Field(float, gt=0), "mutation_burst": Field(float, ge=1),
          "mutation_refusal_tokens": Field(float, ge=0),
          # and, optionally, a bucket per client besides the object's (burst 1 and refusal 0 unless given)
          "client_rate_per_s": Field(float, gt=0), "client_burst": Field(float, ge=1),
          "client_refusal_tokens": Field(float, ge=0)}
_CLIENT = ("client_rate_per_s", "client_burst", "client_refusal_tokens")
#: the storage clients whose own resend schedule a store's busy answers may name (`sim.config.RESEND_CLIENTS`)
BUSY_RETRY_CLIENTS = ("object_store", "google_java", "aws_dynamodb", "gax", "azure_java")
# figures fitted on several writers (a measured set's `concurrency_fit`; docs/model/concurrent-writes.md): where they
# were fitted, and each mechanism's figure
CONCURRENCY_FIT = {"source": Field(str, required=True), "loser_answer_ms": Field(float, gt=0),
                   "busy_error_share": Field(float, gt=0, le=1),
                   "busy_error_retry": Field(str, choices=BUSY_RETRY_CLIENTS),
                   "mutation_rate_per_s": Field(float, gt=0), "mutation_burst": Field(float, ge=1)}
# a store's lock per directory marker (`Profile.marker_lock_window_ms`): the window and the poll, given together
_MARKER_LOCK = {"marker_lock_window_ms": Field(float, gt=0), "marker_lock_poll_ms": Field(float, gt=0)}
SHAPE = {
    "name": Field(str, required=True), "description": Field(str, required=True), **_REQUESTS,
    "head": Field(_lognormal(_MEDIAN)),   # optional: a HEAD (exists()) of its own, else a GET draw
    # optional: a per-object mutation limit; a measured set may give its own
    **_LIMIT,
    "cas_one_at_a_time": Field(bool),
    # optional, in a file of one set of figures (no `measured` section): its store checks a conditional write at
    # its completion (a fitted store's: SeaweedFS's, the first conditional PUT to finish wins), and serves GETs one
    # at a time, this long each
    "cas_checked_at_completion": Field(bool), "get_service_ms": Field(float, gt=0), **_MARKER_LOCK,
    # optional: the measured set, with a HEAD of its own and the loop it was fitted to
    # and, optionally, where its store checks a conditional write and a per-object limit of its own (the
    # provider's otherwise)
    "measured": Field({"description": Field(str, required=True), "loop": Field(LOOP),
                       "head": Field(_lognormal(_MEDIAN), required=True), **_REQUESTS,
                       "cas_checked_at_completion": Field(bool), "version_from_head": Field(bool),
                       "get_service_ms": Field(float, gt=0), **_MARKER_LOCK,
                       "cas_one_at_a_time": Field(bool), "upload_requests": Field(int, ge=2), **_LIMIT,
                       "concurrency_fit": Field(CONCURRENCY_FIT)}),
}


def _error(path: str, message: str) -> ProviderError:
    return ProviderError(f"{path}: {message}")


@dataclass(frozen=True)
class ProviderFile:
    """A provider file read: its profile per set, the measured set without its figures fitted on several writers
    (`unfitted`), and the loop its measured set was fitted to (None: none)."""
    profiles: dict
    loop: dict | None
    unfitted: Profile | None = None


def _limit(d: dict, where: str, inherited: dict | None = None) -> dict:
    """A set's per-object mutation limit: its own keys, else the one it inherits (the provider's). A bucket per
    client may stand alone (gcp's measured set without its object's bucket, which is fitted on several writers)."""
    rate = d.get("mutation_rate_per_s")
    for key in ("mutation_burst", "mutation_refusal_tokens"):
        if key in d and rate is None:
            raise _error(f"{where}.{key}", "needs mutation_rate_per_s")
    client = d.get("client_rate_per_s")
    for key in _CLIENT[1:]:
        if key in d and client is None:
            raise _error(f"{where}.{key}", "needs client_rate_per_s")
    if rate is None and client is None and inherited is not None:
        return inherited
    # no refusal cost, no client bucket: left out of the profile (None), so a plain bucket's profile and digest
    # stay as they were
    return dict(mutation_rate_per_s=rate, mutation_burst=None if rate is None else d.get("mutation_burst", 1.0),
                mutation_refusal_tokens=d.get("mutation_refusal_tokens") or None,
                client_rate_per_s=client, client_burst=None if client is None else d.get("client_burst", 1.0),
                client_refusal_tokens=None if client is None else d.get("client_refusal_tokens", 0.0))


def _profile(name: str, description: str, d: dict, limit: dict) -> Profile:
    """One set's profile from its checked keys (`_REQUESTS`, and a HEAD and a check point if it has them)."""
    lst, head, delete = d.get("list", {}), d.get("head", {}), d.get("delete", {})
    if ("marker_lock_window_ms" in d) != ("marker_lock_poll_ms" in d):
        raise _error(f"{name}.marker_lock_window_ms", "give it with marker_lock_poll_ms (the store's lock per marker)")
    return Profile(
        name=name, description=description, min_latency_ms=d["min_latency_ms"],
        get_median_ms=d["get"]["median_ms"], get_sigma=d["get"]["sigma"],
        put_base_ms=d["put"]["base_ms"], put_ms_per_mib=d["put"]["ms_per_mib"], put_sigma=d["put"]["sigma"],
        cas_median_ms=d["cas"]["median_ms"], cas_sigma=d["cas"]["sigma"],
        list_median_ms=lst.get("median_ms"), list_sigma=lst.get("sigma"),
        head_median_ms=head.get("median_ms"), head_sigma=head.get("sigma"),
        delete_median_ms=delete.get("median_ms"), delete_sigma=delete.get("sigma"),
        delete_fixed_ms=delete.get("fixed_ms"),
        get_fixed_ms=d["get"].get("fixed_ms"), put_fixed_ms=d["put"].get("fixed_ms"),
        cas_fixed_ms=d["cas"].get("fixed_ms"), list_fixed_ms=lst.get("fixed_ms"), head_fixed_ms=head.get("fixed_ms"),
        cas_checked_at_completion=d.get("cas_checked_at_completion") or None,
        version_from_head=d.get("version_from_head") or None,
        cas_one_at_a_time=d.get("cas_one_at_a_time") or None, get_service_ms=d.get("get_service_ms"),
        marker_lock_window_ms=d.get("marker_lock_window_ms"), marker_lock_poll_ms=d.get("marker_lock_poll_ms"),
        create_if_absent=None if d.get("create_if_absent", "put") == "put" else d["create_if_absent"],
        replace_if_match=None if d.get("replace_if_match", True) else False,
        upload_requests=d.get("upload_requests"), **limit)


def _fitted(p: Profile, fit: dict | None, where: str) -> Profile:
    """A measured set's profile with its figures fitted on several writers (its `concurrency_fit`), which replace
    or join its own: a per-object limit's object bucket, a late loser, a busy store."""
    if fit is None:
        return p
    if "busy_error_retry" in fit and "busy_error_share" not in fit:
        raise _error(f"{where}.concurrency_fit.busy_error_retry", "needs busy_error_share")
    if "busy_error_share" in fit and "busy_error_retry" not in fit:
        raise _error(f"{where}.concurrency_fit.busy_error_share", "needs busy_error_retry (its client's resends)")
    if "mutation_burst" in fit and "mutation_rate_per_s" not in fit:
        raise _error(f"{where}.concurrency_fit.mutation_burst", "needs mutation_rate_per_s")
    if "mutation_rate_per_s" in fit and p.client_rate_per_s is None:
        raise _error(f"{where}.concurrency_fit.mutation_rate_per_s", "the object's bucket of a set with a bucket per "
                     "client (client_rate_per_s)")
    limit = {}
    if "mutation_rate_per_s" in fit:
        limit = dict(mutation_rate_per_s=fit["mutation_rate_per_s"], mutation_burst=fit.get("mutation_burst", 1.0))
    return replace(p, loser_answer_ms=fit.get("loser_answer_ms"), busy_error_share=fit.get("busy_error_share"),
                   busy_error_retry=fit.get("busy_error_retry"), concurrency_fit=fit["source"], **limit)


@functools.lru_cache(maxsize=64)
def _load_file(path: str, mtime_ns: int) -> ProviderFile:
    """Cached per file version (`mtime_ns`): an edited provider file is read again, even in a notebook."""
    where = Path(path).name
    try:
        data = read_yaml(path, "provider")
    except ConfigError as exc:
        raise ProviderError(str(exc)) from None
    d = check(SHAPE, data, where, _error)
    limit = _limit(d, where)
    seed = _queue_checked(_profile(d["name"], d["description"], d, limit), where)
    measured = d.get("measured")
    if measured is None:        # one set of figures (a user's own file): it answers either set
        return ProviderFile({"seed": seed, "measured": seed}, None)
    for key in ("cas_checked_at_completion", "get_service_ms", *_MARKER_LOCK):   # the seed set has no store mechanism
        if key in d:
            raise _error(f"{where}.{key}", f"in a file with a measured set, give it there (measured.{key})")
    mine = _queue_checked(_profile(d["name"], measured["description"], measured,
                                   _limit(measured, f"{where}.measured", limit)), f"{where}.measured")
    fit = measured.get("concurrency_fit")
    return ProviderFile({"seed": seed, "measured": _fitted(mine, fit, f"{where}.measured")}, measured.get("loop"),
                        unfitted=mine if fit is not None else None)


def _queue_checked(p: Profile, where: str) -> Profile:
    """A per-object queue of conditional writes and a per-object mutation limit are not modelled together (a
    throttled write would have to hold its place in the queue across its client's resends)."""
    if p.cas_one_at_a_time and p.mutation_rate_per_s is not None:
        raise _error(f"{where}.cas_one_at_a_time", "not with a per-object mutation limit (mutation_rate_per_s)")
    return p


def given_by_path(name: str) -> bool:
    """Whether `storage.provider` names a file by its path (a .yaml or .yml), not a provider by name."""
    return Path(name).suffix in (".yaml", ".yml")


def _provider_path(name: str) -> Path:
    """A provider file by name (`s3`) or by path to a YAML file of the same shape."""
    path = Path(name)
    if not given_by_path(name):
        path = providers_dir() / f"{name}.yaml"
    if not path.is_file():
        raise ProviderError(f"unknown provider {name!r} (expected one of: {', '.join(available())}, "
                            "or a path to a provider .yaml)")
    return path


def _provider_file(name: str) -> ProviderFile:
    path = _provider_path(name)
    return _load_file(str(path.resolve()), path.stat().st_mtime_ns)


def provider_sha256(name: str) -> str | None:
    """The sha256 of a provider file given by path: what a config's hash holds of it instead of the path, so that
    its results follow its content, wherever it lies. None for a provider by name (the repository's own, or one
    of `$SIM_PROVIDERS_DIR`), which its name identifies (and a results folder's run keys, its profile)."""
    if not given_by_path(name):
        return None
    path = _provider_path(name).resolve()
    return _file_sha256(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _file_sha256(path: str, mtime_ns: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_provider(name: str, profile_set: str, concurrency_fit: bool = True) -> Profile:
    """A provider's profile of one set (`storage.profile_set`), by name (`s3`) or by path to a YAML file; with
    `concurrency_fit` false, without the set's figures fitted on several writers (its `concurrency_fit`)."""
    f = _provider_file(name)
    if not concurrency_fit and profile_set == "measured" and f.unfitted is not None:
        return f.unfitted
    return f.profiles[profile_set]


def profile_of(cfg) -> Profile:
    """The profile a config runs on: its provider's (`storage.provider`) of its set (`storage.profile_set`), with
    its figures fitted on several writers unless `storage.concurrency_fit` is false."""
    return load_provider(cfg.storage.provider, cfg.storage.profile_set, cfg.storage.concurrency_fit)


def measured_loop(name: str) -> dict | None:
    """The single-writer loop a provider's measured set was fitted to (its `measured.loop`), or None."""
    return _provider_file(name).loop
