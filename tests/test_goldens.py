"""Golden digests (tests/golden/digests.json, made by tests/golden/make.py): both engines reproduce the
per-transaction records, histories and summaries pinned there, bit for bit."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
from make import compute  # noqa: E402

GOLDEN = json.loads((Path(__file__).resolve().parent / "golden" / "digests.json").read_text())


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden(name, engine):
    g = GOLDEN[name]
    got = compute(name, g["config"], g["replication"], engine)
    assert got["transactions"] == g["transactions"]
    assert got["records"] == g["records"]
    assert got["history"] == g["history"]
    assert got["summary"] == g["summary"]
