"""The notebooks: committed without outputs, they run headless (smoke budget) without a cell error, and neither
they nor their executed copies in docs/notebooks/ print a machine's directories.

Each notebook is executed with nbclient on the `python3` kernel, from notebooks/, with
SIM_NOTEBOOK_BUDGET=smoke (each finishes in under two minutes on a 2-core machine) and SIM_NOTEBOOK_RESULTS
pointing at a temporary directory, so that the simulations really run instead of reusing earlier results.
The default suite runs none of them whole (each is `slow`: `python -m pytest -q -m '' tests/test_notebooks.py` runs
them all); it checks that each is committed clean and that its executed copy prints no machine path.
"""
from __future__ import annotations

from pathlib import Path

import re

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = ["retry_policies.ipynb", "provider_tour.ipynb", "catalog_designs.ipynb", "writers.ipynb", "maintenance.ipynb",
             "multi_table.ipynb", "file_systems.ipynb", "unknown_outcomes.ipynb", "your_tables.ipynb"]

CELL_TIMEOUT_S = 900          # generous: the first cell that runs a sweep may compile the engine


def _read(name: str):
    return nbformat.read(NOTEBOOK_DIR / name, as_version=4)


#: an absolute path of some machine (the notebooks print paths relative to the repository: _budget.shown)
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|home|tmp|root|Users|private|var/folders)/")


def _printed(nb) -> list[str]:
    """Every text a notebook's code cells printed or displayed (not images)."""
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            out.append(o.get("text", ""))
            out += [v if isinstance(v, str) else "".join(v) for k, v in o.get("data", {}).items()
                    if k.startswith("text/")]
            out += o.get("traceback", [])
    return out


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_executed_copies_print_no_machine_paths(name):
    nb = nbformat.read(ROOT / "docs" / "notebooks" / name, as_version=4)
    texts = _printed(nb)
    assert texts, f"docs/notebooks/{name} holds no outputs: not an executed copy"
    found = [m.group(0) + t[m.end():m.end() + 40] for t in texts for m in [MACHINE_PATH.search(t)] if m]
    assert not found, f"docs/notebooks/{name} prints machine paths: {found[:3]}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_without_outputs(name):
    nb = _read(name)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, f"{name}: cells {dirty} carry outputs or execution counts; strip them before committing"


@pytest.mark.slow   # each a whole notebook's sweeps (20-60 s); committed clean is checked by default
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_headless(name, tmp_path, monkeypatch):
    monkeypatch.setenv("SIM_NOTEBOOK_BUDGET", "smoke")
    monkeypatch.setenv("SIM_NOTEBOOK_RESULTS", str(tmp_path / "results"))
    nb = _read(name)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:   # names the cell and the traceback
        pytest.fail(f"{name}: a cell raised:\n{exc}")
    errors = [(i, o.get("ename"), o.get("evalue")) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{name}: cell errors {errors}"
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    first = "".join(o.get("text", "") for o in first_code.get("outputs", []) if o.get("output_type") == "stream")
    assert "SMOKE budget" in first, f"{name}: the first code cell must print the active budget, got {first!r}"
    leaks = [t for t in _printed(nb) if str(tmp_path) in t or str(ROOT) in t]
    assert not leaks, f"{name}: prints a machine path (use _budget.shown): {leaks[0][:200]!r}"
