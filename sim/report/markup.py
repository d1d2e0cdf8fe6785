"""The report page's HTML pieces: escaping, tables, figures, and the number formats of table cells."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .aggregate import format_value
from .labels import fmt_duration, fmt_number

#: what a cell shows when it has no value; every table that can show it says why beside it
DASH = "\u2013"


def e(s) -> str:
    """``s`` as HTML text."""
    return html.escape(str(s))


@dataclass(frozen=True)
class Cell:
    """A table cell whose text leaves something out: `title`, what it says in full (shown on hover), and `note`,
    the id of the footnote that says why, marked `mark`."""
    text: str
    title: str = ""
    note: str = ""
    mark: str = ""

    def html(self) -> str:
        link = f'<sup><a href="#{e(self.note)}">{e(self.mark)}</a></sup>' if self.note else ""
        return e(self.text) + link


def _td(value, cls: str) -> str:
    if isinstance(value, Cell):
        title = f' title="{e(value.title)}"' if value.title else ""
        return f'<td class="{cls}"{title}>{value.html()}</td>'
    return f'<td class="{cls}">{e(value)}</td>'


def table(df: pd.DataFrame, left=frozenset(), cls: str = "") -> str:
    """``df`` as an HTML table, the ``left`` columns left-aligned (labels), the others right-aligned (numbers); a
    `Cell` value keeps its hover and footnote mark."""
    head = "".join(f'<th class="{"l" if c in left else ""}">{e(c)}</th>' for c in df.columns)
    body = []
    for row in df.itertuples(index=False, name=None):
        cells = "".join(_td(v, "l" if c in left else "") for c, v in zip(df.columns, row))
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
