"""Reading YAML the way users write numbers: `1e3` and `2e5` are floats.

PyYAML follows YAML 1.1, where a float needs a dot (`1.0e3`), so `2e5` reads as the string '2e5' and a config
refuses it. This loader adds YAML 1.2's exponent form; everything else reads as `yaml.safe_load` reads it.
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from .schema import ConfigError


class Loader(yaml.SafeLoader):
    """SafeLoader plus YAML 1.2 floats without a dot (`1e3`, `-2.5E-3`, `5e+2`)."""


Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def load_yaml(text: str):
    return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass


def load_yaml_file(path: Path, kind: str):
    """An input file's YAML; a missing file or bad YAML is a `ConfigError` naming the file (`kind`: config,
    sweep)."""
    try:
        return load_yaml(path.read_text())
    except FileNotFoundError:
        raise ConfigError("", f"{kind} file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ConfigError("", f"{path}: not valid YAML: {exc}") from None
