"""Sweep files: a base config, a grid (cartesian product), optional zip groups, replications, report layout.

A sweep expands to `Point`s, each a validated `Config` and the swept values that made it. Every path in
`grid` and `zip` must name a config key: a typo is an error naming the path, before anything runs.
"""
from __future__ import annotations

import copy
import functools
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..config import Config, ConfigError, build_structure, check_path, config_hash, set_path
from ..config import from_dict as config_from_dict
from ..knee import LOAD_PARAMS, WRITERS_PARAM, parse_spec, search_param
from ..knee.param import SCALE_PARAM
from ..schema import Field, check
from ..inputs import naming, read_mapping

# a report layout's values are column names (facets: a list of them), which the report checks against the results;
# `knees`: where a grid report's knees come from: `grid` (read off the grid; the default) or `search` (`sim sweep`
# then searches every knee its grid leaves open or wider than +-5 %: sim.sweep.open_knees)
REPORT = {"rows": Field(), "cols": Field(), "facets": Field(), "title": Field(),
          "knees": Field(str, choices=("grid", "search"))}
SHAPE = {
    "name": Field(str), "description": Field(default=""),
    "base": Field(dict, default={}, expect="a mapping (an engine config)"),
    "grid": Field(dict, default={}, expect="a mapping of dotted config paths to lists of values"),
    "zip": Field(list, default=[], expect="a list of groups (mappings of paths to equal-length lists)"),
    "replications": Field(int, default=1, ge=1), "report": Field(REPORT, default={}), "knee": Field(dict),
}


@dataclass(frozen=True)
class Point:
    params: dict          # dotted path -> value, for the swept paths only
    config: Config

    @property
    def hash(self) -> str:
        return config_hash(self.config)


@dataclass(frozen=True)
class Sweep:
    name: str
    description: str
    base: dict
    axes: tuple           # tuple of tuples of (path, values) moving together; one inner tuple per axis
    replications: int
    report: dict
    source: dict          # the file as read, for storing beside results
    knee: object = None   # a sim.knee.KneeSpec when the file has a `knee:` section: each cell gets its knee

    @property
    def paths(self) -> list[str]:
        return [p for axis in self.axes for p, _ in axis]

    @functools.cached_property
    def points(self) -> list[Point]:
        """Every configuration, in grid order (first axis slowest); expanded and validated once."""
        out = []
        ranges = [range(len(axis[0][1])) for axis in self.axes]
        for combo in itertools.product(*ranges):
            data = copy.deepcopy(self.base)
            params = {}
            for axis, k in zip(self.axes, combo):
                for path, values in axis:
                    set_path(data, path, copy.deepcopy(values[k]))
                    params[path] = label(values[k])
            try:
                cfg = config_from_dict(data)
            except ConfigError as exc:
                where = ", ".join(f"{p}={v!r}" for p, v in params.items())
                raise ConfigError(exc.path, f"{exc.message} (at grid point {where})") from None
            out.append(Point(params, cfg))
        return out


def label(value: Any) -> Any:
    """A swept value as a results-table cell: scalars as they are, a mapping as compact flow YAML."""
    if isinstance(value, dict):
        return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000).strip()
    return value


def _err(path: str, msg: str):
    raise ConfigError(path, msg)


def _values(path: str, where: str, values: Any) -> list:
    if not isinstance(values, list) or not values:
        _err(where, f"expected a non-empty list of values for {path}")
    return values


def _check_path(path: str, where: str, values: list):
    """A swept path names a config key; a section (e.g. `retry.table`) takes mappings as values."""
    if not isinstance(path, str) or not path:
        _err(where, f"expected a dotted config path, got {path!r}")
    try:
        section = check_path(path)
    except ConfigError as exc:
        _err(f"{where}.{path}", exc.message)
    if section and not all(isinstance(v, dict) for v in values):
        _err(f"{where}.{path}", "names a section: its values must be mappings")


def _axes(grid: dict, zips: list) -> tuple:
    """One axis per grid path; one per zip group, its paths moving together."""
    axes = []
    for path, values in grid.items():
        values = _values(path, f"grid.{path}", values)
        _check_path(path, "grid", values)
        axes.append(((path, tuple(values)),))
    for i, group in enumerate(zips):
        if not isinstance(group, dict) or not group:
            _err(f"zip[{i}]", "expected a mapping of dotted config paths to lists")
        axis = []
        for path, values in group.items():
            vals = tuple(_values(path, f"zip[{i}].{path}", values))
            _check_path(path, f"zip[{i}]", list(vals))
            axis.append((path, vals))
        lengths = {len(vals) for _, vals in axis}
        if len(lengths) != 1:
            _err(f"zip[{i}]", f"lists must have equal lengths, got {sorted(lengths)}")
        axes.append(tuple(axis))
    seen = [p for axis in axes for p, _ in axis]
    dup = {p for p in seen if seen.count(p) > 1}
    if dup:
        _err("grid", f"path swept twice: {', '.join(sorted(dup))}")
    return tuple(axes)


def parse(data: dict, *, source_name: str = "sweep") -> Sweep:
    if not isinstance(data, dict):
        _err("", "a sweep file must be a mapping")
    d = check(SHAPE, data)
    build_structure(d["base"], "base")    # the base's keys and types; cross-field rules wait for the grid points
    axes = _axes(d["grid"], d["zip"])
    name = d.get("name", source_name)
    if not name or "/" in name:
        _err("name", f"expected a plain name, got {name!r}")
    knee = _knee_spec(d, [p for axis in axes for p, _ in axis])
    _check_searched_knees(d["report"], knee, [p for axis in axes for p, _ in axis])
    sweep = Sweep(name=name, description=str(d["description"]), base=d["base"], axes=axes,
                  replications=d["replications"], report=d["report"], source=data, knee=knee)
    sweep.points  # validate every grid point now, before anything runs
    if knee is not None:
        for point in sweep.points:
            search_param(point.config, knee.param, knee.start, knee.expansions)
    return sweep


def _knee_spec(data: dict, swept: list[str]):
    """The `knee:` section (sim.knee.parse_spec); the grid must then leave the load axis (and the writer count, and
    a trace's rate_scale) alone."""
    if "knee" not in data:
        return None
    spec = parse_spec(data["knee"])
    for path in swept:
        if path in (*LOAD_PARAMS, WRITERS_PARAM, SCALE_PARAM) or path in ("workload.inter_arrival",
                                                                          "workload.writers"):
            _err(f"grid.{path}", "is the load axis, which the knee search moves; remove it from the grid "
                 "(or drop the knee: section)")
    return spec


def _check_searched_knees(report: dict, knee, swept: list[str]) -> None:
    """`report: {knees: search}` searches the knees a grid reads off its load axis: the grid must sweep the load,
    and a `knee:` sweep searches every cell already."""
    if report.get("knees") != "search":
        return
    if knee is not None:
        _err("report.knees", "search is for a grid sweep's knees; a sweep with a knee: section searches every "
             "cell already (drop one of them)")
    if not any(path in LOAD_PARAMS for path in swept):
        _err("report.knees", f"search needs a grid that sweeps the load ({' or '.join(LOAD_PARAMS)}): its knees "
             "are read off it")


def stored_layout(path: str | Path) -> dict:
    """The `report:` section of a results directory's `sweep.yaml` (the sweep file as the sweep read it),
    checked; the rest is left alone (the grid is not expanded again, and a key a later sim dropped is no error)."""
    data = read_mapping(path, "sweep")
    with naming(path):
        return check(REPORT, data.get("report"), "report")


def load(path: str | Path) -> Sweep:
    path = Path(path)
    data = read_mapping(path, "sweep")
    with naming(path):
        return parse(data, source_name=path.stem)
