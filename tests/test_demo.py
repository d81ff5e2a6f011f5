"""``python -m pandas_dp``: the demo's output reads as a new user expects."""

from __future__ import annotations

import re

import pytest

from pandas_dp.__main__ import main
from pandas_dp.datasets import load_survey

#: A number in scientific notation, as pandas prints 45440.3 with "{:.4g}": 4.544e+04.
SCIENTIFIC = re.compile(r"\d[eE][+-]?\d")


def _run(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["--seed", "1"])
    return code, capsys.readouterr().out.splitlines()


def _table(lines: list[str]) -> list[str]:
    """The lines of the release table: from its header to the first blank line."""
    start = next(i for i, line in enumerate(lines) if "95% interval" in line)
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return lines[start + 1 : end]


def test_demo_runs_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = _run(capsys)
    assert code == 0
    assert 10 < len(lines) <= 40


def test_no_scientific_notation(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = _run(capsys)
    table = _table(lines)
    assert len(table) >= 6
    for line in table:
        assert not SCIENTIFIC.search(line), line
    # the large real numbers are in fixed point, with thousands separators
    income = next(line for line in table if line.lstrip().startswith("mean income"))
    assert re.search(r"\b\d{2},\d{3}\.\d\b", income), income


def test_smokers_is_an_integer_count(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = _run(capsys)
    (smokers,) = [line for line in _table(lines) if line.split()[0] == "smokers"]
    # smokers, private, [lower, upper], exact: all whole numbers
    match = re.fullmatch(r"\s*smokers\s+([\d,]+)\s+\[([\d,]+), ([\d,]+)\]\s+([\d,]+)\s*", smokers)
    assert match is not None, smokers
    private, lower, upper, exact = (int(g.replace(",", "")) for g in match.groups())
    assert lower <= private <= upper  # the columns were read in the right order
    assert exact == int(load_survey()["smoker"].sum())  # printed as the count it is


def test_coverage_and_privacy_are_explained(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = _run(capsys)
    text = "\n".join(lines)
    assert "1 in 20" in text
    assert "95%" in text
    # the preamble: the row count is private, the declarations are public
    head = "\n".join(lines[:5])
    assert "number of people is not published exactly" in head
    assert "never from the data" in head
