"""``pandas-dp describe`` shows the shares of a numeric answer scale (issue 33).

A column declared ``isin([1, 2, 3, 4, 5])`` in the schema gets describe's numeric
rows and the share of each value (``shares="auto"``): the text table prints them
under the column, the HTML report lists them with their intervals beside the
categorical columns' shares.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

from pandas_dp import cli

VALUES = [1, 2, 3, 4, 5]


@pytest.fixture
def likert(tmp_path: Path) -> dict[str, Path]:
    """A CSV with an answer scale ``q``, a bounded ``age`` and a categorical ``region``."""
    rng = np.random.default_rng(3)
    n = 3000
    frame = pd.DataFrame(
        {
            "q": rng.choice(VALUES, n, p=[0.1, 0.1, 0.2, 0.3, 0.3]),
            "age": rng.uniform(18, 90, n).round(1),
            "region": rng.choice(["N", "S"], n),
        }
    )
    schema = pa.DataFrameSchema(
        {
            "q": pa.Column(int, pa.Check.isin(VALUES)),
            "age": pa.Column(float, pa.Check.in_range(18, 90)),
            "region": pa.Column(str, pa.Check.isin(["N", "S"])),
        }
    )
    out = {"csv": tmp_path / "likert.csv", "schema": tmp_path / "likert.yaml"}
    frame.to_csv(out["csv"], index=False)
    cli.schema_to_yaml(schema, out["schema"])
    return out


def _run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str]:
    code = cli.main([str(a) for a in argv])
    return code, capsys.readouterr().out


def test_text_report_prints_the_scales_shares(
    likert: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["describe", likert["csv"], "--schema", likert["schema"], "--epsilon", 50]
    code, out = _run(capsys, *argv, "--seed", 0)
    assert code == 0
    truth = pd.read_csv(likert["csv"])["q"].value_counts(normalize=True)
    for v in VALUES:
        line = next(x for x in out.split("\n") if re.match(rf"share {v}\s", x))
        cells = line[len(f"share {v}") :].split()
        assert len(cells) == 1  # q's share; age and region have none for this value
        assert float(cells[0]) == pytest.approx(truth[v], abs=0.02)
    assert re.search(r"^share N\s+\S+$", out, re.MULTILINE)  # region's, as before
    code, out = _run(capsys, *argv, "--seed", 0, "--intervals")
    assert code == 0 and "share 5" in out and "NaN" not in out


def test_html_report_lists_the_scales_shares(likert: dict[str, Path], tmp_path: Path) -> None:
    report = cli.describe(likert["csv"], likert["schema"], epsilon=1.0, seed=1)
    page = tmp_path / "report.html"
    cli.write_html(report, page)
    html = page.read_text()
    assert "Shares: answer scales and categorical columns" in html
    assert "q: shares, 95% intervals" in html and "region: shares, 95% intervals" in html
    # the numeric table holds the numeric rows only; the shares are in the shares' table
    numeric = html.split("<h3>Numeric columns</h3>", 1)[1].split("</table>", 1)[0]
    assert "mean" in numeric and "share " not in numeric
    shares = html.split("<h3>Shares: answer scales", 1)[1].split("</table>", 1)[0]
    assert shares.count(">q<") == len(VALUES)  # one row per declared value


def test_the_bundled_example_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    # the README's first command: the survey declares no numeric answer scale
    code, out = _run(capsys, "describe", "--example", "--epsilon", 1, "--seed", 0)
    assert code == 0
    assert not re.search(r"^share \d", out, re.MULTILINE)
    assert re.search(r"^share N\s", out, re.MULTILINE)


def test_shares_flag(likert: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["describe", likert["csv"], "--schema", likert["schema"], "--epsilon", 5, "--seed", 0]
    code, auto = _run(capsys, *argv)
    assert code == 0 and "share 5" in auto
    code, same = _run(capsys, *argv, "--shares", "auto")
    assert code == 0 and same == auto  # the default, the very same call
    code, none = _run(capsys, *argv, "--shares", "none")
    assert code == 0 and "share 5" not in none and re.search(r"^share N\s", none, re.M)
    code, every = _run(capsys, *argv, "--shares", "all")
    assert code == 0 and "share 5" in every


def test_shares_and_histogram_flags_refused_before_anything_is_spent(
    likert: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["describe", likert["csv"], "--schema", likert["schema"], "--epsilon", 1]
    store = tmp_path / "budget.sqlite"
    shared = ["--budget-store", store, "--budget-name", "b", "--budget-epsilon", 5]
    code = cli.main([str(a) for a in [*argv, "--by", "region", "--shares", "none", *shared]])
    assert code == 2 and "--shares none: with --by" in capsys.readouterr().err
    html = tmp_path / "r.html"
    code = cli.main([str(a) for a in [*argv, "--html", html, "--histogram-bins", 1, *shared]])
    assert code == 2 and "--histogram-bins: histogram must be" in capsys.readouterr().err
    assert not html.exists()
    assert not store.exists()  # refused before the durable budget was even opened
    assert cli.main([str(a) for a in [*argv, "--histogram-bins", 0]]) == 2  # no --html
    assert "--histogram-bins: histogram must be" in capsys.readouterr().err


def test_histogram_bins_drawn(likert: dict[str, Path], tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    argv = ["describe", likert["csv"], "--schema", likert["schema"], "--epsilon", 1]
    assert (
        cli.main([str(a) for a in [*argv, "--seed", 0, "--html", html, "--histogram-bins", 8]]) == 0
    )
    page = html.read_text()
    for column in ("q", "age"):  # every numeric column, an answer scale too
        svg = page.split(f"{column}: noisy histogram", 1)[1].split("</svg>", 1)[0]
        assert svg.count('class="bar"') == 8
