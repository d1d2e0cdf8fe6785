"""Reading plain data (parsed YAML) against a declared shape, so that every input file is checked the same way.

A shape maps each key to a `Field` (its type, default, range or choices, whether it is required), or is a frozen
dataclass whose fields carry their `Field` in `metadata["rule"]` and their type in the annotation. `check` reads
a mapping against it: an unknown key, a missing required key, a wrong type or an out-of-range value raises an
error naming the key's dotted path (`workload.num_tables`), so a typo is an error and never a silent default.
Rules between keys (one key needed when another has some value) are left to the format's own code, after this.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import math
import typing
from dataclasses import dataclass
from typing import Any, Callable, Mapping


class ConfigError(ValueError):
    """An input problem, with the dotted path of the offending key."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)


ABSENT = object()   # a Field's default: a key left out stays out (a dataclass fills in its own default)
MAX_INT = 2**63 - 1   # the engines hold integers in int64


@dataclass(frozen=True)
class Field:
    """One key's rule. `kind`: bool, int, float, str, list, dict, a nested shape (a mapping of key -> Field, or a
    dataclass), or None for any value. A null value is an empty section for a shape, dict or list kind, and an
    error otherwise unless `nullable`. `expect` names the expected value in a type error where the kind's own
    name (`a mapping`) says too little."""
    kind: Any = None
    default: Any = ABSENT
    required: bool = False
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple | None = None
    nullable: bool = False
    expect: str | None = None


Error = Callable[[str, str], Exception]
_NAMES = {float: "a number", int: "an integer", bool: "true or false", str: "a string", list: "a list",
          dict: "a mapping"}
_BOUNDS = (("ge", ">=", lambda a, b: a >= b), ("gt", ">", lambda a, b: a > b),
           ("le", "<=", lambda a, b: a <= b), ("lt", "<", lambda a, b: a < b))


def _is_shape(kind) -> bool:
    return isinstance(kind, Mapping) or (dataclasses.is_dataclass(kind) and isinstance(kind, type))


@functools.cache
def shape_of(cls) -> dict[str, Field]:
    """A dataclass's fields as a shape: each field's `metadata["rule"]`, typed by its annotation."""
    hints = typing.get_type_hints(cls)
    return {f.name: dataclasses.replace(f.metadata.get("rule", Field()), kind=hints[f.name])
            for f in dataclasses.fields(cls)}


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def check(shape, data, path: str = "", error: Error = ConfigError):
    """`data` read against `shape`: a dict of the keys given (normalized: an int where a float is expected is a
    float) and the defaults of those left out, or for a dataclass shape an instance of it."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise error(path, f"expected a mapping, got {data!r}")
    rules = shape_of(shape) if dataclasses.is_dataclass(shape) else shape
    for key in data:
        if key not in rules:
            raise error(_join(path, key), f"unknown key (expected one of: {', '.join(rules)})")
    out = {}
    for key, rule in rules.items():
        where = _join(path, key)
        if key in data:
            out[key] = _value(rule, data[key], where, error)
        elif rule.required:
            raise error(where, "missing")
        elif rule.default is not ABSENT:
            out[key] = copy.deepcopy(rule.default)
    return shape(**out) if dataclasses.is_dataclass(shape) else out


def _value(rule: Field, value, where: str, error: Error):
    kind = rule.kind
    if kind is None or (value is None and rule.nullable):
        return value
    if _is_shape(kind):
        return check(kind, value, where, error)
    if value is None and kind in (dict, list):
        return kind()
    if value is None:
        raise error(where, f"expected {rule.expect or _NAMES[kind]}, got null")
    value = _coerce(value, kind, rule, where, error)
    for key, sym, ok in _BOUNDS:
        bound = getattr(rule, key)
        if bound is not None and not ok(value, bound):
            raise error(where, f"expected a value {sym} {bound}, got {value!r}")
    if rule.choices is not None and value not in rule.choices:
        raise error(where, f"expected one of {', '.join(map(str, rule.choices))}, got {value!r}")
    return value


def _coerce(value, kind, rule: Field, where: str, error: Error):
    """`value` as `kind`: an integral float is an int, an int a float; a bool is neither."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int and number and isinstance(value, float) and value.is_integer():
        value = int(value)
    if kind in (int, float) and number and isinstance(value, int) and abs(value) > MAX_INT:
        size = "an integer below 2^63" if kind is int else "a number below 2^63 in size"
        raise error(where, f"expected {size}, got {value!r}")
    if kind is float and number:
        if not math.isfinite(value):
            raise error(where, f"expected a finite number, got {value!r}")
        return float(value)
    if kind is int and number and isinstance(value, int):
        return value
    if kind is list and isinstance(value, (list, tuple)):
        return value
    if kind in (bool, str, dict) and isinstance(value, kind):
        return value
    raise error(where, f"expected {rule.expect or _NAMES[kind]}, got {value!r}")
