"""A stack's calibration: the model's inputs fitted to one writer's run, and written as a provider file plus the
config keys the stack's model reads.

Each stack module says which samples are which of the model's latencies (`profile(cal)`), and how a cell maps
onto the model (`model_config(profile, spec)`); here are the fits they share: a request kind's latency as the
measured profile set's `fixed_ms + LogNormal(median_ms, sigma)` (`sim.calibrate.fit_kind`), a runtime as the
model's lognormal with its floor.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..calibrate import fit_kind


def lognormal(samples_ms, kind: str = "latency") -> dict:
    """`{fixed_ms, median_ms, sigma}` of samples (the measured set's form)."""
    f = fit_kind(kind if kind in ("get", "head", "list", "cas", "delete") else "latency",
                 np.asarray(samples_ms, dtype=float))
    return {"fixed_ms": float(f.fixed_ms), "median_ms": float(f.median_ms), "sigma": float(f.sigma)}


def runtime(samples_ms) -> dict:
    """The model's runtime (`workload.runtime`: a lognormal floored at `min_ms`) of one writer's measured work
    before its commit: its median and spread from the samples' logs, its floor their least."""
    x = np.asarray(samples_ms, dtype=float)
    x = x[np.isfinite(x)]
    lo = max(float(x.min()), 0.0)
    logs = np.log(np.maximum(x, 1e-3))
    return {"median_ms": float(np.exp(np.median(logs))), "sigma": float(max(1.4826 * np.median(
        np.abs(logs - np.median(logs))), 0.0)), "min_ms": lo}


def provider_file(name: str, fits: dict, path: Path, note: str, flags: dict | None = None) -> str:
    """A provider file (the providers/ format) from per-kind fits (`get`, `put`, `cas`, and optionally `head`,
    `list`, `delete`); a kind not measured costs what its nearest measured kind does (a CAS a PUT, a HEAD a GET).
    The same figures answer both profile sets; `flags` (how the store checks a conditional write) are the
    measured set's keys."""
    import yaml
    get = fits["get"]
    put = fits.get("put", fits.get("cas"))
    cas = fits.get("cas", put)
    body = {"min_latency_ms": min(v["fixed_ms"] for v in fits.values()),
            "get": get, "put": {"fixed_ms": put["fixed_ms"], "base_ms": put["median_ms"], "ms_per_mib": 0.0,
                                "sigma": put["sigma"]},
            "cas": cas}
    body["head"] = fits.get("head", get)       # (the measured set has one; unmeasured, a GET's)
    for kind in ("list", "delete"):
        if kind in fits:
            body[kind] = fits[kind]
    doc = {"name": name, "description": note, **body,
           "measured": {"description": note, **body, **(flags or {})}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# fitted by `sim testbed` from one writer's requests through the delay proxy: {note}\n"
                    + yaml.safe_dump(doc, sort_keys=False))
    return str(path.resolve())


def ms(x: float) -> float:
    return float(round(x, 3)) if math.isfinite(x) else x
