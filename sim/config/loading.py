"""Reading a config: plain data (parsed YAML, a file, `--set PATH=VALUE` overrides) checked against the types'
shape, a named design expanded into its keys, then the cross-field rules (`resolve`)."""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..designs import DESIGNS, RETIRED, expand, is_whole
from ..schema import ConfigError, check, shape_of
from ..inputs import naming, read_mapping
from ..yamlio import describe_error, load_yaml
from .resolve import _resolve
from .trace import derived_paths
from .types import Config


def build_structure(data: Mapping | None, path: str = "") -> Config:
    """Keys, types and ranges only, without the cross-field rules of `from_dict`."""
    return check(Config, data, path)


def from_dict(data: Mapping | None) -> Config:
    """Validate plain data (e.g. parsed YAML) into a resolved `Config` (a named design's keys filled in)."""
    if isinstance(data, Mapping) and data.get("design") is not None:
        name = data["design"]
        if isinstance(name, str) and name in RETIRED:
            raise ConfigError("design", RETIRED[name])
        if not isinstance(name, str) or name not in DESIGNS:    # (a mapping or list is no name, nor hashable)
            raise ConfigError("design", f"expected one of {', '.join(DESIGNS)}, got {name!r}")
        data = expand(dict(data))
    return _resolve(check(Config, data))


def load(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Config:
    """Read a YAML config, apply dotted-path overrides, validate. An empty file is an error, not every default:
    it is more often a file cut short or never saved than a choice (`{}` is every default)."""
    data = read_mapping(path, "config", "; write {} for every default")
    with naming(path, " with overrides" if overrides else ""):
        for key, value in (overrides or {}).items():
            set_path(data, key, value)
        return from_dict(data)


def set_path(data: dict, path: str, value: Any) -> None:
    """Set a dotted path in nested dicts, creating levels as needed."""
    parts = path.split(".")
    node = data
    for i, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            raise ConfigError(".".join(parts[: i + 1]), f"is a value, cannot set {path} below it")
        node = child
    node[parts[-1]] = value


def unset_path(data: dict, path: str) -> None:
    """Remove a dotted path from nested dicts, if it is there."""
    *parents, last = path.split(".")
    node = data
    for part in parents:
        node = node.get(part)
        if not isinstance(node, dict):
            return
    node.pop(last, None)


def parse_override(text: str) -> tuple[str, Any]:
    """`PATH=VALUE` with VALUE read as a YAML scalar (so `5` is an int, `true` a bool, `s3` a string)."""
    if "=" not in text:
        raise ConfigError("", f"--set expects PATH=VALUE, got {text!r}")
    path, raw = text.split("=", 1)
    try:
        return path.strip(), load_yaml(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(path.strip(), f"--set value {raw!r}: {describe_error(exc, raw)}") from None


def replaced(cfg: Config, overrides: Mapping[str, Any]) -> Config:
    """`Config.replace`: `cfg` with dotted-path overrides, validated like a file."""
    data = cfg.to_dict()
    for path in derived_paths(cfg, overrides):   # filled in by a trace whose keys change: filled in again
        unset_path(data, path)
    name = overrides.get("design")
    if isinstance(name, str) and name in DESIGNS:
        # every key is explicit in a resolved config: the design's own keys must replace them
        data = expand({**overrides_of(DESIGNS[name], data), "design": name})
    for path, value in overrides.items():
        set_path(data, path, value)
    return from_dict(data)


def overrides_of(preset: Mapping, data: dict) -> dict:
    """`data` with `preset`'s values put over it (a retry policy, a server naming its variant, whole)."""
    out = copy.deepcopy(data)
    for key, value in preset.items():
        if isinstance(value, Mapping) and not is_whole(value) and isinstance(out.get(key), dict):
            out[key] = overrides_of(value, out[key])
        else:
            out[key] = copy.deepcopy(value)
    return out


def check_path(path: str) -> bool:
    """Raise unless `path` names a key of the config shape; True if it is a section (takes a mapping)."""
    kind, walked = Config, []
    for part in path.split("."):
        known = shape_of(kind) if dataclasses.is_dataclass(kind) else {}
        walked.append(part)
        if part not in known:
            where = ".".join(walked)
            expected = f" (expected one of: {', '.join(known)})" if known else ""
            raise ConfigError(where, f"not a config key{expected}")
        kind = known[part].kind
    return dataclasses.is_dataclass(kind)
