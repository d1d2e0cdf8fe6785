"""Reading YAML the way users write numbers: `1e3` and `2e5` are floats.

PyYAML follows YAML 1.1, where a float needs a dot (`1.0e3`), so `2e5` reads as the string '2e5' and a config
refuses it. This loader adds YAML 1.2's exponent form; everything else reads as `yaml.safe_load` reads it.
A YAML error is told in one line (`describe_error`); reading the file it came from is `sim.inputs`.
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


def describe_error(exc: yaml.YAMLError, text: str) -> str:
    """One line for a YAML error: where (line, column) and what, without PyYAML's `in "<unicode string>"`
    and its multi-line excerpt."""
    if isinstance(exc, yaml.reader.ReaderError):       # a character YAML does not allow (binary data)
        line = text[:exc.position].count("\n") + 1
        return f"line {line}: not valid YAML: character #x{exc.character:04x} is not allowed"
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return "not valid YAML: " + " ".join(str(exc).split())
    what = exc.problem or exc.context or "syntax error"
    context, cmark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if exc.problem and context:
        what += f" ({context}{f' from line {cmark.line + 1}' if cmark is not None else ''})"
    return f"line {mark.line + 1}, column {mark.column + 1}: not valid YAML: {what}"
