"""``pandas-dp describe``'s text output: intervals, reliability marks, blank cells,
declared order, ``--version``, ``--quantile-method`` and help that matches the output."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

import pandas_dp
from pandas_dp import cli
from pandas_dp.cli.report_html import format_estimate
from pandas_dp.cli.report_text import MARK, text_table
from pandas_dp.stats.describe import DESCRIBE_METHOD
from pandas_dp.stats.quantiles.releases import METHODS

ROOT = Path(__file__).resolve().parent.parent
#: The rows of a describe table (the shares aside), as the command prints them.
STAT_ROWS = ["count", "mean", "std", "min (declared)", "25%", "50%", "75%", "max (declared)"]


def _run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _section(out: str, title: str) -> list[str]:
    """The lines of the table titled ``title`` (header first), up to the blank line."""
    lines = out.split("\n")
    start = lines.index(title) + 1
    end = lines.index("", start)
    return lines[start:end]


def _row(table: list[str], label: str) -> str:
    """The printed line of the row ``label`` (its text after the label)."""
    hits = [line[len(label) :] for line in table if re.match(rf"{re.escape(label)}\s", line)]
    assert len(hits) == 1, (label, table)
    return hits[0]


@pytest.fixture
def small(tmp_path: Path) -> dict[str, Path]:
    """A CSV whose columns come in another order than its schema declares them, with
    categories declared in a non-alphabetical order."""
    rng = np.random.default_rng(5)
    n = 3000
    frame = pd.DataFrame(
        {
            "score": rng.uniform(0, 10, n).round(2),
            "flag": rng.random(n) < 0.3,
            "site": rng.choice(["c", "a", "b"], n, p=[0.5, 0.3, 0.2]),
            "tier": rng.choice(["z", "y"], n),
        }
    )
    schema = pa.DataFrameSchema(
        {
            "site": pa.Column(str, pa.Check.isin(["c", "a", "b"])),
            "score": pa.Column(float, pa.Check.in_range(0, 10)),
            "tier": pa.Column(str, pa.Check.isin(["z", "y"])),
            "flag": pa.Column(bool),
        }
    )
    out = {"csv": tmp_path / "small.csv", "schema": tmp_path / "small.yaml"}
    frame.to_csv(out["csv"], index=False)
    cli.schema_to_yaml(schema, out["schema"])
    return out


# ----------------------------------------------------------------------------- --version


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--version")
    assert code == 0, err
    assert out == f"pandas-dp {pandas_dp.__version__}\n"


def test_version_subprocess() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pandas_dp.cli", "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"pandas-dp {pandas_dp.__version__}"


# ----------------------------------------------------------------------------- --intervals


def test_intervals_are_the_releases(capsys: pytest.CaptureFixture[str]) -> None:
    """Every printed estimate is followed by the interval its release records."""
    code, out, err = _run(
        capsys, "describe", "--example", "--epsilon", 1, "--seed", 4, "--intervals"
    )
    assert code == 0, err
    with cli.example_paths_context() as (data, schema):
        release = cli.describe(data, schema, epsilon=1.0, seed=4).releases["describe"]
    intervals = release.attrs["dp"].interval(0.05)
    table = _section(out, "describe")
    shown = 0
    for (row, column), (lower, upper) in intervals.iterrows():
        text, band = format_estimate(release.loc[row, column], lower, upper)
        line = _row(table, str(row))
        if band is None:  # a declared bound: no interval
            assert text in line
            continue
        assert f"{text} {band}" in line, (row, column, line)
        shown += 1
    assert shown >= 20  # counts, means, stds, percentiles and shares
    assert "in brackets after it, its 95% interval" in " ".join(out.split())
    # without the flag: the numbers only
    code, plain, err = _run(capsys, "describe", "--example", "--epsilon", 1, "--seed", 4)
    assert code == 0, err
    assert " – " not in "\n".join(_section(plain, "describe"))
    assert "--intervals prints each with its 95% interval" in " ".join(plain.split())


def test_intervals_by(small: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["describe", small["csv"], "--schema", small["schema"], "--epsilon", 1]
    code, out, err = _run(capsys, *argv, "--by", "tier", "--seed", 2, "--intervals")
    assert code == 0, err
    report = cli.describe(small["csv"], small["schema"], epsilon=1.0, by=["tier"], seed=2)
    agg = report.releases["agg"]
    table = _section(out, "count, mean and std by tier")
    bands = agg.attrs["dp"].interval(0.05)
    for key in ("z", "y"):
        line = _row(table, key)
        for statistic in ("count", "mean", "std"):
            lower, upper = bands.loc[(key, "score", statistic)]
            text, band = format_estimate(agg.loc[key, ("score", statistic)], lower, upper)
            assert f"{text} {band}" in line
    shares = report.releases["proportions site"]
    table = _section(out, "shares of site within tier")
    bands = shares.attrs["dp"].interval(0.05)
    for key in ("z", "y"):
        line = _row(table, key)
        for category in ("c", "a", "b"):
            lower, upper = bands.loc[(key, category)]
            text, band = format_estimate(shares.loc[(key, category)], lower, upper)
            assert f"{text} {band}" in line


# ----------------------------------------------------------------------------- marks


def _expected_marks(release: pd.DataFrame, fraction: float) -> dict[tuple[str, str], bool]:
    """Which cells of a describe release should be marked, from its intervals and
    its printed declared range (max - min declared; 1 for a share)."""
    out = {}
    for (row, column), (lower, upper) in release.attrs["dp"].interval(0.05).iterrows():
        if row == "count":
            out[(row, column)] = False
            continue
        if str(row).startswith("share "):
            span = 1.0
        else:
            span = release.loc["max (declared)", column] - release.loc["min (declared)", column]
        out[(row, column)] = upper - lower > fraction * span
    return out


@pytest.mark.parametrize("fraction", [0.25, 0.05, 0.6])
def test_marks_follow_the_interval_widths(fraction: float) -> None:
    with cli.example_paths_context() as (data, schema):
        release = cli.describe(data, schema, epsilon=1.0, seed=0).releases["describe"]
    text, marked = text_table("describe", release, release, unreliable=fraction)
    expected = _expected_marks(release, fraction)
    got = {cell: text.loc[cell].endswith(MARK) for cell in expected}
    assert got == expected
    assert marked == sum(expected.values())
    if fraction == 0.25:  # the example at epsilon 1: wide percentiles, narrow means
        assert got[("25%", "age")] and not got[("mean", "age")]
    # marks only on cells with an interval: never on a blank cell or a count
    assert not any(t.endswith(MARK) for t in text.loc["count"])
    assert not any(t.strip() == MARK for t in text.to_numpy().ravel())


def test_marks_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "describe", "--example", "--epsilon", 1, "--seed", 0)
    assert code == 0, err
    with cli.example_paths_context() as (data, schema):
        release = cli.describe(data, schema, epsilon=1.0, seed=0).releases["describe"]
    count = sum(_expected_marks(release, 0.25).values())
    assert count > 0
    table = "\n".join(_section(out, "describe"))
    assert table.count(MARK) == count
    flat = " ".join(out.split())
    assert f"{MARK} {count} values: the 95% interval is wider than 25% of the declared" in flat
    # a stated fraction
    code, out, err = _run(
        capsys, "describe", "--example", "--epsilon", 1, "--seed", 0, "--unreliable", 0.05
    )
    assert code == 0, err
    more = sum(_expected_marks(release, 0.05).values())
    assert more > count
    assert "\n".join(_section(out, "describe")).count(MARK) == more
    assert "wider than 5% of the declared range" in " ".join(out.split())
    # off: no mark, no footnote about it
    code, out, err = _run(
        capsys, "describe", "--example", "--epsilon", 1, "--seed", 0, "--unreliable", "off"
    )
    assert code == 0, err
    assert MARK not in "\n".join(_section(out, "describe"))
    assert "declared range" not in out.split("PrivacyBudget(")[0]


def test_no_mark_says_so(small: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["describe", small["csv"], "--schema", small["schema"], "--columns", "site"]
    code, out, err = _run(capsys, *argv, "--epsilon", 5, "--seed", 0)
    assert code == 0, err
    assert MARK not in "\n".join(_section(out, "describe"))
    assert f"No value is marked {MARK}: every 95% interval is at most 25%" in " ".join(out.split())


def test_marks_by(small: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Grouped tables are marked against the schema's range [0, 10]; counts never."""
    argv = ["describe", small["csv"], "--schema", small["schema"], "--by", "tier"]
    code, out, err = _run(capsys, *argv, "--epsilon", 0.02, "--seed", 1, "--unreliable", 0.1)
    assert code == 0, err
    report = cli.describe(small["csv"], small["schema"], epsilon=0.02, by=["tier"], seed=1)
    agg = report.releases["agg"]
    bands = agg.attrs["dp"].interval(0.05)
    table = _section(out, "count, mean and std by tier")
    expected = 0
    for (_, column, statistic), (lower, upper) in bands.iterrows():
        assert column == "score"
        expected += statistic != "count" and upper - lower > 0.1 * 10.0
    shares = report.releases["proportions site"].attrs["dp"].interval(0.05)
    expected_shares = int(((shares["upper"] - shares["lower"]) > 0.1).sum())
    assert "\n".join(table).count(MARK) == expected
    assert "\n".join(_section(out, "shares of site within tier")).count(MARK) == expected_shares
    assert expected + expected_shares > 0


# ----------------------------------------------------------------------------- blanks


def test_blank_cells_not_nan(small: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "describe", "--example", "--epsilon", 1, "--seed", 0)
    assert code == 0, err
    assert "NaN" not in out and "nan" not in out
    assert "None" not in out  # the ledger's empty cells too
    table = _section(out, "describe")
    # the mean row holds the three numeric columns' means and nothing else
    assert len(_row(table, "mean").split()) == 3
    assert len(_row(table, "share N").split()) == 1
    argv = ["describe", small["csv"], "--schema", small["schema"], "--epsilon", 1]
    for extra in ([], ["--by", "tier"], ["--intervals"], ["--by", "tier", "--intervals"]):
        code, out, err = _run(capsys, *argv, "--seed", 0, *extra)
        assert code == 0, err
        assert "NaN" not in out and "nan" not in out, extra


# ----------------------------------------------------------------------------- order


def _header(table: list[str]) -> list[str]:
    return table[0].split()


def test_schema_order_kept(small: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Columns in the schema's order (not numeric first, not the file's order);
    categories in their declared order."""
    argv = ["describe", small["csv"], "--schema", small["schema"], "--epsilon", 1]
    code, out, err = _run(capsys, *argv, "--seed", 0)
    assert code == 0, err
    table = _section(out, "describe")
    assert _header(table) == ["site", "score", "tier", "flag"]
    shares = [line.split()[1] for line in table if line.startswith("share ")]
    assert shares == ["c", "a", "b", "z", "y", "False", "True"]


def test_columns_order_kept(small: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["describe", small["csv"], "--schema", small["schema"], "--epsilon", 1]
    code, out, err = _run(capsys, *argv, "--columns", "flag", "score", "site", "--seed", 0)
    assert code == 0, err
    assert _header(_section(out, "describe")) == ["flag", "score", "site"]
    code, out, err = _run(capsys, *argv, "--columns", "tier", "site", "--intervals", "--seed", 0)
    assert code == 0, err
    assert _header(_section(out, "describe")) == ["tier", "site"]


def test_by_categories_in_declared_order(
    small: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["describe", small["csv"], "--schema", small["schema"], "--epsilon", 1]
    code, out, err = _run(capsys, *argv, "--by", "tier", "--seed", 0)
    assert code == 0, err
    # declared c, a, b: not sorted
    assert _header(_section(out, "shares of site within tier")) == ["site", "c", "a", "b"]
    assert _header(_section(out, "shares of flag within tier")) == ["flag", "False", "True"]
    # the release itself is untouched: its intervals still read
    report = cli.describe(small["csv"], small["schema"], epsilon=1.0, by=["tier"], seed=0)
    report.releases["proportions site"].attrs["dp"].interval(0.05)


# ----------------------------------------------------------------------------- help


def test_help_names_every_printed_row(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "describe", "--example", "--epsilon", 1, "--seed", 0)
    assert code == 0
    table = _section(out, "describe")
    printed = [re.split(r"\s{2,}", line.strip())[0] for line in table[1:]]
    stats = [r for r in printed if not r.startswith("share ")]
    assert stats == STAT_ROWS  # what the help lists, in this order
    assert len(printed) > len(stats)
    code, help_text, _ = _run(capsys, "describe", "--help")
    assert code == 0
    flat = " ".join(help_text.split())
    positions = [flat.index(r) for r in STAT_ROWS]
    assert positions == sorted(positions)
    assert "share <category>" in flat and "blank" in flat
    by_out = cli.main(["describe", "--example", "--epsilon", "1", "--by", "region"])
    assert by_out == 0
    assert "count, mean and std by region" in capsys.readouterr().out
    assert "With --by: for each declared key, the count, mean and std" in flat
    assert "no percentiles" in flat
    assert f"A '{MARK}' after a value marks a 95% interval wider than --unreliable" in flat
    assert f"{{{','.join(METHODS)}}}" in flat and f"default {DESCRIBE_METHOD}" in flat
    assert "--intervals" in flat


# ----------------------------------------------------------------------------- --quantile-method


@pytest.mark.parametrize("method", METHODS)
def test_quantile_method_reaches_describe(method: str, capsys: pytest.CaptureFixture[str]) -> None:
    with cli.example_paths_context() as (data, schema):
        report = cli.describe(
            data, schema, epsilon=1.0, columns=["age"], seed=0, quantile_method=method
        )
    details = report.releases["describe"].attrs["dp"].details
    assert details["percentile estimator"]["method"] == method
    argv = ["describe", "--example", "--epsilon", 1, "--columns", "age", "--seed", 0]
    code, out, err = _run(capsys, *argv, "--quantile-method", method)
    assert code == 0, err
    again = _run(capsys, *argv, "--quantile-method", method)[1]
    assert out == again  # seeded: reproducible
    default = _run(capsys, *argv)[1]
    assert (out == default) == (method == DESCRIBE_METHOD)


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--unreliable", "0"], "argument --unreliable: expected a positive fraction"),
        (["--unreliable", "-0.5"], "such as 0.25 (a quarter of it), or 'off'"),
        (["--unreliable", "wide"], "got 'wide'"),
        (["--unreliable", "nan"], "expected a positive fraction"),
        (["--quantile-method", "median"], "argument --quantile-method: invalid choice: 'median'"),
        (["--quantile-method", "tree", "--by", "region"], "drop --quantile-method or --by"),
    ],
)
def test_bad_flags_before_reading_or_charging(
    extra: list[str],
    message: str,
    spies: dict[str, int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "budget.sqlite"
    outer = pandas_dp.PrivacyBudget(epsilon=10.0)
    argv = ["describe", "--example", "--epsilon", "1", "--budget-store", str(store)]
    argv += ["--budget-name", "s", "--budget-epsilon", "5", *extra]
    with outer:
        code, out, err = _run(capsys, *argv)
    assert code == 2
    assert message in err
    assert err.startswith("usage: pandas-dp describe")
    assert out == ""
    assert spies == {"header": 0, "table": 0}
    assert outer.spent.epsilon == 0.0
    assert not store.exists()


def test_describe_checks_the_quantile_method_too(spies: dict[str, int]) -> None:
    with cli.example_paths_context() as (data, schema):
        with pytest.raises(cli.CLIError, match="one of"):
            cli.describe(data, schema, epsilon=1.0, quantile_method="median")
        with pytest.raises(cli.CLIError, match="no percentiles"):
            cli.describe(data, schema, epsilon=1.0, by=["region"], quantile_method="tree")
    assert spies == {"header": 0, "table": 0}


# ----------------------------------------------------------------------------- subprocess


def test_subprocess_intervals_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["describe", "--example", "--epsilon", "1", "--seed", "7", "--intervals"]
    argv += ["--columns", "age", "region"]
    done = subprocess.run(
        [sys.executable, "-m", "pandas_dp.cli", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    assert done.stdout == out  # seeded: reproducible across processes
    table = _section(out, "describe")
    assert _header(table) == ["age", "region"]
    assert re.search(r"\(\d[\d.,]* – \d[\d.,]*\)", _row(table, "mean"))
    assert "NaN" not in out
