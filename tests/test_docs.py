"""The documentation's relative links resolve (file and #anchor), nothing links outside the repository, the
README stays a short entry point, and every citation of a section of the model's reference names a heading."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CHANGES.md", ROOT / "benchmarks" / "README.md",
         ROOT / "benchmarks" / "calibration" / "README.md", *sorted((ROOT / "docs").glob("*.md")),
         *sorted((ROOT / "docs" / "model").glob("*.md"))]
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
    for page in ("README.md", "CHANGES.md", "benchmarks/README.md", "docs/tutorial.md", "docs/howto.md",
                 "docs/reference.md", "docs/knee.md", "docs/MODEL.md", "docs/model/designs.md", "docs/FORMATS.md"):
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
    documented = set(re.findall(r"^\| `([A-Za-z0-9_.]+)` \|", section, re.M))
    keys, policy_keys = _config_keys()
    assert keys - documented == set(), "config keys missing from docs/reference.md"
    assert documented - keys - policy_keys == set(), "docs/reference.md documents keys the loader rejects"



# ---- tables generated from the code (sim/docgen.py) --------------------------------------------------------------
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_generated_blocks_are_current(page):
    from sim import docgen
    text = page.read_text()
    assert docgen.render(text) == text, f"{page.relative_to(ROOT)}: a generated block is stale: python -m sim.docgen"


def test_the_designs_table_is_generated_where_the_designs_are_described():
    from sim.designs import ABOUT, DESIGNS
    assert set(ABOUT) == set(DESIGNS), "sim/designs.py: ABOUT must describe every design of DESIGNS, and no other"
    for page in ("docs/reference.md", "docs/model/designs.md"):
        text = (ROOT / page).read_text()
        assert "<!-- designs:begin -->\n" in text and "<!-- designs:end -->\n" in text, page
        for name in DESIGNS:
            assert f"| `{name}` |" in text, (page, name)

# ---- citations of MODEL.md's sections ----------------------------------------------------------------------------
# The model's reference is one document on several pages: the entry page docs/MODEL.md (its contents) and one page
# a topic under docs/model/. `docs/MODEL.md, "X"` names a section on any of them; `docs/model/P.md, "X"` one on P.
MODEL = ROOT / "docs" / "MODEL.md"
MODEL_PAGES = [MODEL, *sorted((ROOT / "docs" / "model").glob("*.md"))]
CITING = [ROOT / "README.md", *(p for d in ("sim", "experiments", "benchmarks", "docs", "notebooks")
                                for p in sorted((ROOT / d).rglob("*")) if p.is_file() and "__pycache__" not in p.parts)]
# quoted section names: "X", 'X', or YAML's ''X'' inside a single-quoted string; a name may break across two lines
_NAME = r"(?:''(?P<y>[^'\n]+(?:\n[^'\n]*)?)''|\"(?P<d>[^\"\n]+(?:\n[^\"\n]*)?)\"|'(?P<s>[^'\n]+(?:\n[^'\n]*)?)')"
# docs/MODEL.md, MODEL.md, ../docs/MODEL.md ... or docs/model/locks.md, model/locks.md ..., then a comma or a space
# (so not MODEL.md's), then one quoted name or a list of them ("A", "B" and "C")
_ANY_NAME = re.sub(r"\?P<\w>", "?:", _NAME)
_CITATION = re.compile(rf"(?<![\w.-])(?:[\w.-]+/)*(?:MODEL|model/(?P<page>[\w-]+))\.md(?:,\s*|\s+)(?:#+ *)?{_ANY_NAME}"
                       rf"(?:\s*(?:,|and)\s*(?:#+ *)?{_ANY_NAME})*")
_NAME_RE = re.compile(_NAME)


def heading_names(heading: str) -> set[str]:
    """The names a section may be cited by: its heading, less a leading number ("2." or "2.1"), a trailing
    parenthetical (the code it lives in) and trailing punctuation; or that title's part before a colon or comma
    (its subtitle's): "Delta clients" for "Delta clients: delta-rs and Delta Spark (`commit.snapshot_update`)"."""
    text = re.sub(r"^\d+(?:\.\d+)*\.?\s+", "", heading.strip())
    title = re.sub(r"\s*\([^()]*\)$", "", text).rstrip(" .:;")
    return {text, title, title.split(":", 1)[0].rstrip(), title.split(",", 1)[0].rstrip()}


def test_a_section_is_cited_by_its_title():
    assert heading_names("Locks (`lock`, `sim/model/lock.py`)") >= {"Locks"}
    assert heading_names("Delta clients: delta-rs and Delta Spark (`log_cleanup`)") >= {"Delta clients"}
    assert heading_names("One transaction, Iceberg's protocol (`sim/model/rewrite.py`)") >= {"One transaction"}
    assert heading_names("2.1 Units:") >= {"Units"}
    assert "Per-object mutation limit" not in heading_names("Per-object mutation limits (`sim/model/throttle.py`)")
    found = {name for _, name, _ in model_citations(ROOT / "sim" / "model" / "state.py")}
    assert "A transaction as handlers of its effect points" in found   # broken across two comment lines


def sections_of(page: Path) -> set[str]:
    """The names the sections of one page of the model's reference may be cited by."""
    return {name for h in _HEADING.findall(_prose(page.read_text())) for name in heading_names(h)}


def model_sections() -> set[str]:
    """The names of every section of the model's reference: docs/MODEL.md and each page of docs/model/."""
    return set().union(*(sections_of(page) for page in MODEL_PAGES))


def _text(path: Path) -> str:
    """A file's text; a notebook's as the strings of its JSON, each on the line it stands on (so lines count)."""
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        return ""
    if path.suffix != ".ipynb":
        return text
    lines = []
    for line in text.splitlines():
        item = line.strip().removesuffix(",")
        try:
            value = json.loads(item) if item.startswith('"') else ""
        except ValueError:    # a key and its value: "cell_type": "markdown"
            value = ""
        lines.append(value.rstrip("\n") if isinstance(value, str) else "")
    return "\n".join(lines)


def citations(text: str, rel: str):
    """(where, section name, page) of every citation of a section of the model's reference in `text` (a broken
    name joined up); page is None for docs/MODEL.md (any page of the reference), else the docs/model/ page named."""
    for m in _CITATION.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        for n in _NAME_RE.finditer(m.group(0)):
            name = n.group("y") or n.group("d") or n.group("s")
            yield f"{rel}:{line}", re.sub(r"\s*\n\s*(?:#+ *)?", " ", name).strip(), m.group("page")


def model_citations(path: Path):
    return citations(_text(path), path.relative_to(ROOT).as_posix())


def dangling_citations(found) -> list[str]:
    """The citations of `found` that name no heading: of docs/MODEL.md, on no page of the reference; of
    docs/model/P.md, not on P (or P no page)."""
    sections = model_sections()
    out = []
    for where, name, page in found:
        if page is None and name not in sections:
            out.append(f"{where}: {name!r}")
        elif page is not None:
            path = ROOT / "docs" / "model" / f"{page}.md"
            if not path.exists():
                out.append(f"{where}: docs/model/{page}.md: no such page")
            elif name not in sections_of(path):
                out.append(f"{where}: {name!r} is no heading of docs/model/{page}.md")
    return out


def test_model_citations_name_a_heading():
    dangling = dangling_citations(c for path in CITING for c in model_citations(path))
    assert not dangling, "citations of the model's sections that name no heading:\n" + "\n".join(dangling)


def test_a_page_citation_names_a_heading_on_that_page():
    text = ('docs/MODEL.md, "Server capacity"; docs/model/rest-servers.md, "Server capacity"; '
            '../docs/model/locks.md "Locks" and "Server capacity"; docs/model/nowhere.md, "Locks"; '
            'MODEL.md, "No such section"')
    found = list(citations(text, "x"))
    assert [(name, page) for _, name, page in found] == [
        ("Server capacity", None), ("Server capacity", "rest-servers"), ("Locks", "locks"),
        ("Server capacity", "locks"), ("Locks", "nowhere"), ("No such section", None)]
    assert dangling_citations(found) == [
        "x:1: 'Server capacity' is no heading of docs/model/locks.md", "x:1: docs/model/nowhere.md: no such page",
        "x:1: 'No such section'"]


# ---- the README's times are the benchmarks' latest -----------------------------------------------------------------
# A time as the pages print it: "2 min 33 s", "49.3 s", or a list or range sharing its unit, "54.1, 50.3 s",
# "0.50 / 0.51 s", "0.36-0.37 s".
_NUM = r"\d+(?:\.\d+)?"
_MIN = re.compile(r"(?<![\w.,/-])(\d+) min(?: (\d+) s)?(?!\w)")


def times(text: str) -> set[str]:
    """Every time in `text`, one figure each: "2 min 33 s", "49.3 s"; "54.1, 50.3 s" is "54.1 s" and "50.3 s"
    (a range, the same of its two ends)."""
    found = {f"{m} min" + (f" {s} s" if s else "") for m, s in _MIN.findall(text)}
    text = _MIN.sub(" ", text)
    for m in re.finditer(rf"(?<![\w.,/-])({_NUM}(?:\s*[,/-]\s*{_NUM})*) s(?!\w)", text):
        found |= {f"{n} s" for n in re.split(r"\s*[,/-]\s*", m.group(1))}
    return found


def test_times_reads_what_the_pages_print():
    assert times("the tests 2 min 33 s (1,573; 3 min 17 s); the grid 71.5 s, 54.1, 50.3 s and 0.50 / 0.51 s; "
                 "20 ms, 1 h, 1,329 runs 49.3 s, 23.6-23.8 s") == {
        "2 min 33 s", "3 min 17 s", "71.5 s", "54.1 s", "50.3 s", "0.50 s", "0.51 s", "49.3 s", "23.6 s", "23.8 s"}


def _latest_times() -> set[str]:
    from sim import docgen
    return set().union(*(times(f"{f['value']} ({f['detail']})") for f in docgen.latest()["figures"]))


def _readme_timing_text() -> str:
    """README.md's first section (its times) and its "Performance" section."""
    text = (ROOT / "README.md").read_text()
    first = text.split("\n## ", 1)[0]
    perf = text.split("\n## Performance\n", 1)[1].split("\n## ", 1)[0]
    return first + "\n" + perf


def test_the_readmes_times_are_the_benchmarks_latest():
    """Every time the README states (its first section and "Performance") is one of benchmarks/latest.json's, and
    the tests' and the main job's latest are the first section's."""
    latest, text = _latest_times(), _readme_timing_text()
    stale = times(text) - latest
    assert not stale, f"README.md states times that are not benchmarks/latest.json's: {sorted(stale)}"
    from sim import docgen
    first = text.split("\n## Performance\n", 1)[0]
    for f in docgen.latest()["figures"]:
        if f["id"] in ("tests", "main_job"):
            assert f["value"] in first, f"README.md's first section does not give the latest {f['id']}: {f['value']}"


def test_the_latest_figures_are_recorded_on_the_benchmarks_page():
    """benchmarks/latest.json copies figures the benchmarks page records (outside its generated block), each with
    its commit."""
    from sim import docgen
    page = (ROOT / "benchmarks" / "README.md").read_text()
    recorded = re.sub(r"<!-- latest:begin -->.*?<!-- latest:end -->", "", page, flags=re.S)
    missing = _latest_times() - times(recorded)
    assert not missing, f"benchmarks/latest.json has times benchmarks/README.md does not record: {sorted(missing)}"
    for f in docgen.latest()["figures"]:
        assert f["commit"] in recorded, f"{f['id']}: commit {f['commit']} is not on the benchmarks page"


# ---- nothing points outside the repository ------------------------------------------------------------------------
# The repository stands alone: no file cites the workplace's notes or shared folder, a machine's directories, or
# the workplace's numbering of its sources; a claim cites its public source (repo @commit path:line, a URL;
# docs/MODEL.md, "Sources") or says it was not found in public sources. /tmp/ stays allowed: the guides' scratch
# files. (The patterns are spelled in pieces so that this file, which is scanned too, does not match itself.)
SCANNED = ["README.md", "CHANGES.md", "pyproject.toml", ".ci", "docs", "sim", "notebooks", "experiments",
           "benchmarks", "providers", "tests"]
_OUTSIDE = {   # group name -> (pattern, what it points at)
    "shared": (r"(?i:\.\./" + "shared|" + r"\bshared/" + r"(?:research|seeds|hooks|MODEL\.md))",
               "the workplace's shared folder"),
    "machine": (r"(?<![\w.~-])/" + r"(?:work|home|root|Users|private/var)/", "a machine's directory"),
    "url": (r"(?i:\bfile:" + "//)", "a file URL"),
    "notes": (r"(?i:\bresearch" + r"(?:'s)? (?:notes?\b|(?:table |section )?\d[a-z]?\b)|\bthe research" + "'s\\b)",
              "the workplace's research files"),
    "seeds": (r"(?i:\bseeds? " + r"00\d\b)", "the workplace's numbering of its sources (docs/MODEL.md, \"Sources\")"),
}
_POINTER = re.compile("|".join(f"(?P<{name}>{pattern})" for name, (pattern, _) in _OUTSIDE.items()))
# what a line must hold (lower-cased) for _POINTER to match it: str.find is fast, a regex over 4 MB of text is not
_CLUES = ("../" + "shared", "shared/", "/" + "work/", "/" + "home/", "/" + "root/", "/" + "users/",
          "/" + "private/var/", "file:" + "//", "research", "seed")


def _scanned_texts(root: Path):
    """(path, text) of every text file the repository ships under SCANNED; of a notebook, its cells' sources and
    text outputs (not its images' base64, where any letters may occur)."""
    for top in SCANNED:
        base = root / top
        for path in sorted([base] if base.is_file() else base.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or ".ipynb_checkpoints" in path.parts:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, ValueError):
                continue   # a binary file (a picture, numba's cache)
            if "\0" in text:
                continue
            if path.suffix == ".ipynb":
                nb = json.loads(text)
                parts = []
                for cell in nb["cells"]:
                    parts.append("".join(cell["source"]))
                    for out in cell.get("outputs", []):
                        parts.append("".join(out.get("text", "")))
                        parts += ["".join(v) for k, v in out.get("data", {}).items() if k.startswith("text/")]
                text = "\n".join(parts)
            yield path, text


def outside_pointers(root: Path) -> list[str]:
    """`path:line: what` for each pointer outside the repository in the files under `root`."""
    found = []
    for path, text in _scanned_texts(root):
        lower = text.lower()
        if not any(clue in lower for clue in _CLUES):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            low = line.lower()
            if any(clue in low for clue in _CLUES) and (m := _POINTER.search(line)):
                found.append(f"{path.relative_to(root)}:{n}: {_OUTSIDE[m.lastgroup][1]}: {m.group(0)!r}")
    return found


def test_nothing_points_outside_the_repository():
    found = outside_pointers(ROOT)
    assert not found, "pointers outside the repository (cite the public source instead):\n" + "\n".join(found)


@pytest.mark.parametrize("line", [
    "sources: `../" + "shared/" + "research/maintenance-growth-multitable.md`", "see /" + "work/" + "shared/" + "MODEL.md",
    "as measured in /" + "home/alice/runs", "(research" + " 2e)", "research" + " table 1b", "the research" + "'s 4e",
    "a research" + " note says so", "Defaults from seed" + " 003", "(seeds" + " 001, 003, 004)",
    "open file:" + "///tmp/x.html"])
def test_a_pointer_outside_is_found(tmp_path, line):
    """Planted in a doc page, a notebook's cell and a module, each pointer fails the check; /tmp/ and the
    project's own words (a `seed` profile set, a run's seeds) do not."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(f"# A page\n\nSome text, {line}.\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "n.ipynb").write_text(json.dumps(
        {"cells": [{"cell_type": "markdown", "source": [f"A cell, {line}.\n"]}], "metadata": {}, "nbformat": 4,
         "nbformat_minor": 5}))
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "m.py").write_text(f'"""A module, {line}."""\n')
    assert sorted(f.split(":")[0] for f in outside_pointers(tmp_path)) == ["docs/page.md", "notebooks/n.ipynb",
                                                                          "sim/m.py"]
    (tmp_path / "docs" / "page.md").write_text("python -m sim run /tmp/s3-5.yaml; the seed set (profile_set: seed); "
                                               "each replication seeds its streams; researchers use it\n")
    (tmp_path / "notebooks" / "n.ipynb").unlink()
    (tmp_path / "sim" / "m.py").unlink()
    assert outside_pointers(tmp_path) == []
