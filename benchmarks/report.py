"""The report phase of a sweep: `python -m sim report DIR` in a fresh process, and the page it writes.

    python benchmarks/report.py DIR                    # writes benchmarks/report.json
    python benchmarks/report.py DIR --repo ../other --out /tmp/before.json   # another checkout, e.g. before a change

DIR is a finished sweep's results directory (e.g. `results/4c`, 900 runs); it is copied to a temporary directory
first, since a report replaces DIR/report. Each of `--repeat` reports is timed as a whole (wall, user + system CPU
of the child, peak RSS), with the load average before it. Then the page: its figures (`<img>`), heatmap tables,
tables, HTML and PNG bytes, and its height at 1400 px, estimated (no browser here): images at their displayed
size, table rows, headings and text lines at the page's font sizes, heatmap panels wrapped into rows as a flex
box wraps them.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the page's geometry at a 1400 px window (sim/report/html.py's CSS): content width, line heights (px)
WIDTH, LINE, CHAR = 1368.0, 22.4, 7.6
SMALL_LINE, ROW, HEAT_ROW, HEAT_CELL, HEAT_GAP = 20.2, 26.0, 21.4, 39.4, 25.6
HEIGHTS = {"h1": 48.0, "h2": 95.0, "h3": 50.0}


def timed(cmd: list[str], env: dict, cwd: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)    # cwd: `-m` imports its sim
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return {"wall_s": round(wall, 2), "cpu_s": round(after.ru_utime - before.ru_utime
                                                       + after.ru_stime - before.ru_stime, 2),
            "max_rss_mb": round(after.ru_maxrss / 1024), "load_before": round(load, 2)}


def png_size(path: Path) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


class Page(HTMLParser):
    """The blocks of index.html in order, each with its estimated height; heatmap panels wrapped as flex items."""

    def __init__(self, report: Path):
        super().__init__()
        self.report, self.height, self.counts = report, 0.0, {"img": 0, "heatmap_tables": 0, "tables": 0}
        self.text, self.in_text, self.table, self.panels = [], None, None, None
        self.feed((report / "index.html").read_text())

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in HEIGHTS:
            self.height += HEIGHTS[tag]
        elif tag in ("p", "figcaption", "li") and self.table is None:
            self.in_text, self.text = tag, []
        elif tag == "img":
            self.counts["img"] += 1
            w, h = png_size(self.report / a["src"])
            self.height += h * min(1.0, WIDTH / w) + 2 * 16
        elif tag == "div" and a.get("class") == "panels":
            self.panels = []
        elif tag == "table":
            heat = a.get("class") == "hm"
            self.counts["heatmap_tables" if heat else "tables"] += 1
            self.table = {"heat": heat, "rows": 0, "cols": 0}
        elif tag == "tr" and self.table is not None:
            self.table["rows"] += 1
        elif tag in ("td", "th") and self.table is not None and self.table["rows"] == 2:
            self.table["cols"] += 1

    def handle_endtag(self, tag):
        if tag == self.in_text:
            lines = max(1, -(-len("".join(self.text)) * CHAR // WIDTH))
            self.height += lines * (SMALL_LINE if tag == "figcaption" else LINE) + (0 if tag == "li" else 16)
            self.in_text = None
        elif tag == "table" and self.table is not None:
            t, self.table = self.table, None
            if t["heat"] and self.panels is not None:     # a panel: its caption, two header rows, its rows
                self.panels.append((40 + t["cols"] * HEAT_CELL, SMALL_LINE + 2 * 18 + (t["rows"] - 2) * HEAT_ROW))
            else:
                self.height += t["rows"] * ROW + 16
        elif tag == "div" and self.panels is not None:
            self.height += wrapped(self.panels)
            self.panels = None

    def handle_data(self, data):
        if self.in_text:
            self.text.append(data)


def wrapped(panels: list[tuple[float, float]]) -> float:
    """The height of flex items (width, height) wrapped into rows of WIDTH, HEAT_GAP apart."""
    total, row_w, row_h = 0.0, 0.0, 0.0
    for w, h in panels:
        if row_w and row_w + HEAT_GAP + w > WIDTH:
            total, row_w, row_h = total + row_h + 10, 0.0, 0.0
        row_w, row_h = row_w + (HEAT_GAP if row_w else 0) + w, max(row_h, h)
    return total + row_h


def page_stats(report: Path) -> dict:
    page = Page(report)
    pngs = list((report / "figures").glob("*.png"))
    return {**page.counts, "height_px_estimated": round(page.height, -2),
            "html_kb": round((report / "index.html").stat().st_size / 1024),
            "png_files": len(pngs), "png_mb": round(sum(p.stat().st_size for p in pngs) / 2**20, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results_dir")
    ap.add_argument("--repo", default=str(ROOT), help="checkout whose `sim` writes the report (default: this one)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "report.json"))
    a = ap.parse_args()
    repo = Path(a.repo).resolve()
    env = {**os.environ, "PYTHONPATH": str(repo)}
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / Path(a.results_dir).resolve().name
        shutil.copytree(a.results_dir, work, ignore=shutil.ignore_patterns("report"))
        for _ in range(a.repeat):
            runs.append(timed([sys.executable, "-m", "sim", "report", str(work)], env, repo))
            print(runs[-1], file=sys.stderr)
        page = page_stats(work / "report")
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    doc = {"date": time.strftime("%Y-%m-%d"), "repo_commit": commit, "results_dir": str(a.results_dir),
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.machine()},
           "runs": runs, "page": page}
    Path(a.out).write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
