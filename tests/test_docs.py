"""The documentation's relative links resolve (file and #anchor), nothing links outside the repository, and the
README stays a short entry point."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "benchmarks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 150

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def _prose(text: str) -> str:
    """The text less fenced code blocks (their lines kept blank, so headings inside them do not count)."""
    return _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def anchors(path: Path) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped (hyphens and underscores kept), spaces to hyphens,
    a repeated id numbered -1, -2, ..."""
    seen: dict[str, int] = {}
    out = set()
    for heading in _HEADING.findall(_prose(path.read_text())):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
        slug = "".join(c for c in text if c.isalnum() or c in "-_ ").replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(path: Path) -> list[str]:
    return _LINK.findall(_CODE.sub("", _prose(path.read_text())))


def test_the_pages_exist():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    for page in ("README.md", "benchmarks/README.md", "docs/tutorial.md", "docs/howto.md", "docs/reference.md",
                 "docs/knee.md", "docs/MODEL.md", "docs/FORMATS.md"):
        assert page in names


def test_readme_is_short():
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines (at most {README_MAX_LINES}): move detail to docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_stay_in_the_repository_and_resolve(page):
    bad = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            bad.append(f"{target}: links outside the repository")
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            bad.append(f"{target}: no file {dest}")
        elif not dest.is_relative_to(ROOT):
            bad.append(f"{target}: outside the repository")
        elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
            bad.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not bad, f"{page.relative_to(ROOT)}:\n" + "\n".join(bad)


def test_the_anchor_rule_matches_githubs():
    page = ROOT / "docs" / "reference.md"
    got = anchors(page)
    for slug in ("knee-one-configurations-knee", "exit-codes", "config-keys", "retry-policies"):
        assert slug in got
    assert "history-historyparquet-written-by-run---history-checked-by-python--m-sim-check-dir" in \
        anchors(ROOT / "docs" / "FORMATS.md")


def _config_keys() -> tuple[set[str], set[str]]:
    """Every dotted key the config loader accepts, and the keys of a retry policy (a value of several keys)."""
    import dataclasses

    from sim.config import Config, RetryPolicy
    from sim.schema import shape_of

    def walk(cls, prefix=""):
        for name, rule in shape_of(cls).items():
            kind = rule.kind
            if dataclasses.is_dataclass(kind) and kind is not RetryPolicy:
                yield from walk(kind, f"{prefix}{name}.")
            else:
                yield prefix + name
    return set(walk(Config)), {f.name for f in dataclasses.fields(RetryPolicy)}


def test_the_reference_documents_every_config_key_and_no_other():
    text = (ROOT / "docs" / "reference.md").read_text()
    section = text.split("\n## Config keys\n", 1)[1].split("\n### Named designs\n", 1)[0]
    documented = set(re.findall(r"^\| `([A-Za-z_.]+)` \|", section, re.M))
    keys, policy_keys = _config_keys()
    assert keys - documented == set(), "config keys missing from docs/reference.md"
    assert documented - keys - policy_keys == set(), "docs/reference.md documents keys the loader rejects"
