"""The Liu (2019) reproduction (``benchmarks/liu2019.py``, the README's command):
its re-implementation of Liu's procedures from the library's building blocks
releases exactly what the public API releases for the same seed, so its "naive"
variant differs from the library only in the scale it is meant to change."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import liu2019


def test_the_reimplementation_matches_the_public_api() -> None:
    lines = liu2019.self_check(2019)
    assert len(lines) == 4  # simulation 1 and 2, bit and truncated
    assert not [line for line in lines if "MISMATCH" in line], lines
