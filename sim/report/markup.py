"""The report page's HTML pieces: escaping, tables, figures, and the number formats of table cells."""

from __future__ import annotations

import html
import math
from pathlib import Path

import pandas as pd

from .aggregate import format_value
from .labels import fmt_duration, fmt_number

#: what a cell shows when it has no value; every table that can show it says why beside it
DASH = "\u2013"


def e(s) -> str:
    """``s`` as HTML text."""
    return html.escape(str(s))


def table(df: pd.DataFrame, left=frozenset(), cls: str = "") -> str:
    """``df`` as an HTML table, the ``left`` columns left-aligned (labels), the others right-aligned (numbers)."""
    head = "".join(f'<th class="{"l" if c in left else ""}">{e(c)}</th>' for c in df.columns)
    body = []
    for row in df.itertuples(index=False, name=None):
        cells = "".join(f'<td class="{"l" if c in left else ""}">{e(v)}</td>' for c, v in zip(df.columns, row))
        body.append(f"<tr>{cells}</tr>")
    attr = f' class="{cls}"' if cls else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def figure(path: Path, caption: str, base: Path) -> str:
    """A PNG under ``base`` with its caption, linked to itself (relative links: the report opens from disk)."""
    rel = path.relative_to(base).as_posix()
    return (f'<figure><a href="{e(rel)}"><img src="{e(rel)}" alt="{e(path.stem)}" '
            f'loading="lazy"></a><figcaption>{e(caption)}</figcaption></figure>')


def figures(figs: list[tuple[Path, str]], base: Path) -> str:
    return "".join(figure(p, c, base) for p, c in figs)


def num(v, f=fmt_number) -> str:
    """A number cell: ``f(v)``, DASH where there is no finite value."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    return DASH if not math.isfinite(v) else f(v)


def val(v) -> str:
    """A parameter value cell: DASH for NaN."""
    return DASH if isinstance(v, float) and math.isnan(v) else format_value(v)


def pct(v) -> str:
    return num(v, lambda x: f"{100 * x:.1f} %")


def dur(v) -> str:
    return num(v, fmt_duration)
