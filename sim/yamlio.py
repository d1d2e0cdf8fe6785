"""Reading YAML the way users write numbers: `1e3` and `2e5` are floats.

PyYAML follows YAML 1.1, where a float needs a dot (`1.0e3`), so `2e5` reads as the string '2e5' and a config
refuses it. This loader adds YAML 1.2's exponent form; everything else reads as `yaml.safe_load` reads it.
"""
from __future__ import annotations

import re

import yaml


class Loader(yaml.SafeLoader):
    """SafeLoader plus YAML 1.2 floats without a dot (`1e3`, `-2.5E-3`, `5e+2`)."""


Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def load_yaml(text: str):
    return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
