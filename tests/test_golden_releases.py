"""Seeded releases stay bit-identical (the invariant of the core's re-lay, issue 31).

Each case of ``tests/golden/make_golden.py`` is run and compared exactly with the
record in ``tests/golden/releases.json``: values (floats as hex), index, columns,
dtype and the 95 % interval. A failure means a seeded release changed: if that was
intended, re-record (``python tests/golden/make_golden.py``) and say so in the
changelog; otherwise it is a regression.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "golden"
_spec = importlib.util.spec_from_file_location("make_golden", HERE / "make_golden.py")
assert _spec is not None and _spec.loader is not None
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)

RECORD = json.loads((HERE / "releases.json").read_text())


def test_every_case_is_recorded() -> None:
    assert sorted(RECORD) == sorted(golden.CASES)


@pytest.mark.parametrize("name", sorted(golden.CASES))
def test_seeded_release_is_bit_identical(name: str) -> None:
    assert golden.run_case(name) == RECORD[name]
