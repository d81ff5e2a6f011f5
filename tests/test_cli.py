"""``pandas-dp describe``: the command line, end to end on CSV and Parquet files."""

from __future__ import annotations

import io
import os
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
from pandas_dp.datasets import load_survey, survey_schema

ROOT = Path(__file__).resolve().parent.parent


def _has_parquet_engine() -> bool:
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


needs_parquet = pytest.mark.skipif(
    not _has_parquet_engine(), reason="no Parquet engine (pyarrow) installed"
)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """The survey as CSV (and Parquet, with pyarrow) next to its YAML schema."""
    df = load_survey()
    out = {"csv": tmp_path / "survey.csv", "schema": tmp_path / "schema.yaml"}
    df.to_csv(out["csv"], index=False)
    cli.schema_to_yaml(survey_schema(), out["schema"])
    if _has_parquet_engine():
        out["parquet"] = tmp_path / "survey.parquet"
        df.to_parquet(out["parquet"], index=False)
    return out


def _run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ----------------------------------------------------------------------------- success


def test_csv_end_to_end(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    outer = pandas_dp.PrivacyBudget(epsilon=10.0)
    with outer:
        code, out, err = _run(
            capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1
        )
    assert code == 0, err
    for word in ("count", "mean", "std", "share N", "share True", "age", "income"):
        assert word in out
    assert "PrivacyBudget('pandas-dp describe', epsilon=1" in out
    assert "spent epsilon=1" in out
    # the command's budget is charged, and every enclosing one with it: exactly once
    assert outer.spent.epsilon == pytest.approx(1.0)
    assert list(outer.ledger["statistic"]) == ["describe"]
    # secure noise by default
    assert "insecure" not in out


@needs_parquet
def test_parquet_gives_the_csv_release(files: dict[str, Path]) -> None:
    from_csv = cli.describe(files["csv"], files["schema"], epsilon=1.0, seed=3)
    from_parquet = cli.describe(files["parquet"], files["schema"], epsilon=1.0, seed=3)
    a, b = from_csv.releases["describe"], from_parquet.releases["describe"]
    # same data, same seed: the same noisy table, whatever the file format
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["age", "income", "hours_per_week", "region", "smoker"]
    assert from_parquet.budget.spent.epsilon == pytest.approx(1.0)


@needs_parquet
def test_parquet_via_main(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(
        capsys,
        "describe",
        files["parquet"],
        "--schema",
        files["schema"],
        "--epsilon",
        0.5,
        "--columns",
        "age",
        "region",
    )
    assert code == 0, err
    assert "share W" in out and "income" not in out.split("PrivacyBudget")[0]


def test_example_is_the_bundled_survey(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "describe", "--example", "--epsilon", 1, "--seed", 1)
    assert code == 0, err
    assert out.startswith("pandas-dp describe: survey.csv, epsilon 1 (laplace), seed 1")
    assert "insecure" in out  # a seed is announced as such


def test_by_groups_on_the_schema_keys(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    outer = pandas_dp.PrivacyBudget(epsilon=10.0)
    with outer:
        code, out, err = _run(
            capsys,
            "describe",
            files["csv"],
            "--schema",
            files["schema"],
            "--epsilon",
            2,
            "--by",
            "region",
            "--seed",
            0,
        )
    assert code == 0, err
    assert "count, mean and std by region" in out
    assert "shares of smoker within region" in out
    table = out.split("count, mean and std by region")[1].split("shares of")[0]
    for key in ("E", "N", "S", "W"):
        assert f"\n{key} " in table
    # one agg over the numeric columns, one proportions per categorical column,
    # epsilon split equally, the total exactly the budget
    assert list(outer.ledger["statistic"]) == ["agg", "proportions"]
    assert outer.ledger["epsilon"].tolist() == pytest.approx([1.0, 1.0])
    assert outer.spent.epsilon == pytest.approx(2.0)


def test_by_report_shapes(files: dict[str, Path]) -> None:
    report = cli.describe(files["csv"], files["schema"], epsilon=1.0, by=["region"], seed=0)
    agg = report.releases["agg"]
    assert list(agg.index) == ["E", "N", "S", "W"]
    assert list(agg.columns.get_level_values(1).unique()) == ["count", "mean", "std"]
    shares = report.releases["proportions smoker"]
    np.testing.assert_allclose(shares.groupby(level=0).sum().to_numpy(), 1.0)


def test_gaussian_with_delta(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(
        capsys,
        "describe",
        files["csv"],
        "--schema",
        files["schema"],
        "--epsilon",
        1,
        "--delta",
        1e-6,
        "--columns",
        "age",
    )
    assert code == 0, err
    assert "gaussian" in out


# ----------------------------------------------------------------------------- HTML


def test_html_report(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.html"
    code, _, err = _run(
        capsys,
        "describe",
        files["csv"],
        "--schema",
        files["schema"],
        "--epsilon",
        1,
        "--html",
        report,
        "--seed",
        0,
    )
    assert code == 0, err
    text = report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    # inline SVG interval charts (the means side by side, then one per described
    # column), nothing fetched from elsewhere
    assert text.count('<svg class="forest"') == 6
    assert "http://" not in text and "https://" not in text
    for column in ("age", "income", "hours_per_week", "region", "smoker"):
        assert f"<figcaption>{column}</figcaption>" in text
    assert "Budget ledger" in text and "pandas-dp describe" in text
    assert "Declared public facts" in text and "[18, 90]" in text
    assert "95% intervals" in text and "insecure" in text
    assert "Metadata of each release" in text and "sensitivity" in text


def test_html_report_by(files: dict[str, Path], tmp_path: Path) -> None:
    report = cli.describe(files["csv"], files["schema"], epsilon=1.0, by=["region"], seed=0)
    path = tmp_path / "by.html"
    cli.write_html(report, path)
    text = path.read_text(encoding="utf-8")
    # a mean per key for each numeric column, the shares of smoker per key
    assert text.count('<svg class="forest"') == 4
    assert "declared keys: E, N, S, W" in text
    assert ">agg<" in text and ">proportions<" in text


def test_html_folder_missing_is_refused_before_reading(
    files: dict[str, Path], spies: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys,
        "describe",
        files["csv"],
        "--schema",
        files["schema"],
        "--epsilon",
        1,
        "--html",
        files["csv"].parent / "nowhere" / "r.html",
    )
    assert code == 2 and "does not exist" in err
    assert spies == {"header": 0, "table": 0}


# ----------------------------------------------------------------------------- errors

BAD_SCHEMAS = {
    "not yaml": ("columns: [unclosed\n", "not valid YAML"),
    "not a schema": ("- just\n- a list\n", "not a pandera DataFrameSchema"),
    "no columns": ("name: survey\n", "'columns'"),
    "unknown dtype": (
        "schema_type: dataframe\ncolumns:\n  age:\n    dtype: no_such_type\n",
        "not a valid pandera schema",
    ),
    "bad unit metadata": (
        "schema_type: dataframe\ncolumns:\n  age:\n    dtype: float64\n"
        "metadata:\n  pandas_dp:\n    privacy_units: pid\n",
        "unknown key",
    ),
}


@pytest.mark.parametrize("case", list(BAD_SCHEMAS))
def test_bad_schema_file(
    case: str,
    files: dict[str, Path],
    spies: dict[str, int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    text, message = BAD_SCHEMAS[case]
    files["schema"].write_text(text, encoding="utf-8")
    outer = pandas_dp.PrivacyBudget(epsilon=10.0)
    with outer:
        code, out, err = _run(
            capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1
        )
    assert code == 2
    assert message in err and str(files["schema"]) in err
    assert "Traceback" not in err and out == ""
    assert len(err.strip().splitlines()) == 1
    # nothing charged, the data file not even opened
    assert outer.spent.epsilon == 0.0 and outer.ledger.empty
    assert spies == {"header": 0, "table": 0}


def test_missing_schema_file(
    files: dict[str, Path], spies: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys, "describe", files["csv"], "--schema", files["csv"].parent / "no.yaml",
        "--epsilon", 1,
    )  # fmt: skip
    assert code == 2 and "does not exist" in err and "no.yaml" in err
    assert spies == {"header": 0, "table": 0}


def test_missing_data_file(
    files: dict[str, Path], spies: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys, "describe", files["csv"].parent / "nope.csv", "--schema", files["schema"],
        "--epsilon", 1,
    )  # fmt: skip
    assert code == 2 and "nope.csv" in err and "does not exist" in err
    assert "Traceback" not in err
    assert spies["table"] == 0


def test_unknown_file_type(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    other = files["csv"].with_suffix(".xlsx")
    other.write_text("x", encoding="utf-8")
    code, _, err = _run(capsys, "describe", other, "--schema", files["schema"], "--epsilon", 1)
    assert code == 2 and "unknown file type" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--columns", "age", "nope"], "['nope'] are not declared in the schema"),
        (["--by", "nope"], "['nope'] are not declared in the schema"),
        (["--by", "age"], "--by age"),  # numeric: no declared keys
        (["--columns", "region", "--by", "region"], "both described and grouped by"),
        (["--epsilon", "-1"], "--epsilon must be a positive number"),
        (["--delta", "1e-6", "--mechanism", "laplace"], "Gaussian mechanism only"),
        (["--mechanism", "gaussian"], "needs a positive --delta"),
        (["--seed", "-3"], "--seed must be a non-negative integer"),
        (["--sep", ";;"], "--sep must be one character"),
    ],
)
def test_usage_errors_before_reading(
    extra: list[str],
    message: str,
    files: dict[str, Path],
    spies: dict[str, int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    outer = pandas_dp.PrivacyBudget(epsilon=10.0)
    with outer:
        code, out, err = _run(
            capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1, *extra
        )
    assert code == 2, out
    assert message in err, err
    assert "Traceback" not in err
    assert spies["table"] == 0 and outer.ledger.empty


def test_declared_column_missing_from_the_file(
    files: dict[str, Path], spies: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    load_survey().drop(columns="income").to_csv(files["csv"], index=False)
    code, _, err = _run(
        capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1
    )
    assert code == 2 and "['income'] are declared but not in the data file" in err
    assert spies == {"header": 1, "table": 0}  # the header only


def test_argparse_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "describe", "--example")  # no --epsilon
    assert code == 2 and "--epsilon" in err
    code, _, err = _run(capsys, "describe", "--epsilon", 1)  # no data
    assert code == 2 and "--example" in err
    code, _, err = _run(capsys, "describe", "--example", "--schema", "x.yaml", "--epsilon", 1)
    assert code == 2 and "no DATA and no --schema" in err


# ----------------------------------------------------------------------------- reading


def test_data_values_never_raise(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stray text in a numeric column, a 'maybe' in a boolean one: missing, not errors."""
    df = load_survey().astype({"age": object, "smoker": object})
    df.loc[3, "age"] = "unknown"
    df.loc[5, "smoker"] = "maybe"
    data, schema = tmp_path / "d.csv", tmp_path / "s.yaml"
    df.to_csv(data, index=False)
    cli.schema_to_yaml(survey_schema(), schema)
    frame = cli.read_table(data, ["age", "smoker"], cli.load_schema(schema))
    assert frame["age"].dtype == np.float64 and np.isnan(frame.loc[3, "age"])
    assert str(frame["smoker"].dtype) == "boolean" and frame["smoker"].isna().sum() == 1
    code, _, err = _run(capsys, "describe", data, "--schema", schema, "--epsilon", 1)
    assert code == 0, err


def test_a_malformed_file_is_a_clean_error_and_bad_bytes_are_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A byte that is not UTF-8 is a junk value (read, not fatal); a quote never
    closed makes its one record a row of missing values (it was a traceback, then an
    error naming the row: issue 30; see tests/test_cli_robust_parse.py)."""
    schema = tmp_path / "s.yaml"
    cli.schema_to_yaml(survey_schema(), schema)
    rows = [f"{20 + i % 50},{'NSEW'[i % 4]}".encode() for i in range(200)]
    bad_byte, bad_quote = tmp_path / "byte.csv", tmp_path / "quote.csv"
    bad_byte.write_bytes(b"age,region\n" + b"\n".join([*rows, b"44,S\xe9"]) + b"\n")
    bad_quote.write_bytes(b"age,region\n" + b"\n".join([*rows[:150], b'33,"N', *rows[150:]]))
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with budget:
        code, _, err = _run(
            capsys, "describe", bad_byte, "--schema", schema, "--epsilon", 1,
            "--columns", "age", "region",
        )  # fmt: skip
        assert code == 0, err
        code, _, err = _run(
            capsys, "describe", bad_quote, "--schema", schema, "--epsilon", 1,
            "--columns", "age", "region",
        )  # fmt: skip
    assert code == 0 and err == ""
    assert budget.spent.epsilon == pytest.approx(2.0)  # both runs


def test_chunks_and_progress(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # 80 copies of the survey, ~4 MB: pandas reads a CSV in blocks of 256 KiB, so the
    # percentage (bytes consumed) moves in steps of about 6 %
    path = files["csv"].with_name("big.csv")
    pd.concat([load_survey()] * 80, ignore_index=True).to_csv(path, index=False)
    schema = cli.load_schema(files["schema"])
    columns = ["age", "income", "region", "smoker"]
    whole = cli.read_table(path, columns, schema, progress="never")
    assert whole.shape == (80_000, 4)
    monkeypatch.setattr(cli.reading, "CHUNK_ROWS", 5_000)
    stream = io.StringIO()
    chunked = cli.read_table(path, columns, schema, progress="always", stream=stream)
    pd.testing.assert_frame_equal(whole, chunked)
    lines = stream.getvalue().splitlines()
    # not a terminal: one line per 10 % step reached, ending at 100 %
    assert len(lines) >= 5 and lines[-1].endswith("100%"), lines
    assert all(line.startswith("reading big.csv:") for line in lines)
    # "auto" shows nothing before its delay has passed; "never" nothing at all
    for meter in (cli.Progress("x", "auto", after=1e9, stream=(quiet := io.StringIO())),
                  cli.Progress("x", "never", stream=quiet)):  # fmt: skip
        meter.update(0.5)
        meter.close()
    assert quiet.getvalue() == ""


@needs_parquet
def test_parquet_progress(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli.reading, "CHUNK_ROWS", 100)
    stream = io.StringIO()
    frame = cli.read_table(
        files["parquet"], ["age"], cli.load_schema(files["schema"]), progress="always",
        stream=stream,
    )  # fmt: skip
    assert frame.shape == (1000, 1)
    assert stream.getvalue().splitlines()[-1].endswith("100%")


def test_parquet_without_pyarrow_is_a_clear_error(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path = files["csv"].with_suffix(".parquet")
    path.write_bytes(b"PAR1")
    code, _, err = _run(capsys, "describe", path, "--schema", files["schema"], "--epsilon", 1)
    assert code == 2 and 'pip install "pandas-dp[parquet]"' in err


# ----------------------------------------------------------------------------- schema files


def test_bundled_schema_round_trips() -> None:
    _, path = cli.example_paths()
    bundled = pa.DataFrameSchema.from_yaml(path.read_text(encoding="utf-8"))
    assert bundled == survey_schema()
    # the file is what schema_to_yaml writes (the default string dtype spelled portably)
    written = cli.schema_to_yaml(survey_schema())
    assert written is not None
    lines = path.read_text(encoding="utf-8").splitlines(True)
    body = "".join(line for line in lines if not line.startswith("#"))
    portable = written.replace("dtype: string[pyarrow]", "dtype: str").replace(
        "dtype: string[python]", "dtype: str"
    )
    assert body == portable


def test_unit_metadata_survives_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = pa.DataFrameSchema(
        {
            "pid": pa.Column(int),
            "age": pa.Column(float, pa.Check.in_range(0, 100)),
            "region": pa.Column(str, pa.Check.isin(["N", "S"])),
        },
        metadata={"pandas_dp": {"privacy_unit": "pid", "max_rows_per_unit": 2}},
    )
    # pandera's own to_yaml drops it; schema_to_yaml keeps it
    assert "metadata" not in schema.to_yaml()
    path = tmp_path / "unit.yaml"
    cli.schema_to_yaml(schema, path)
    back = cli.load_schema(path)
    assert back.metadata == schema.metadata
    assert back.columns["region"].checks == schema.columns["region"].checks
    rng = np.random.default_rng(0)
    data = tmp_path / "unit.csv"
    pd.DataFrame(
        {
            "pid": np.repeat(np.arange(300), 2),
            "age": rng.uniform(20, 80, 600),
            "region": rng.choice(["N", "S"], 600),
        }
    ).to_csv(data, index=False)
    report = cli.describe(data, path, epsilon=1.0, seed=0)
    d = report.releases["describe"]
    assert list(d.columns) == ["age", "region"]  # the unit column is not described
    # a unit holding up to 2 rows doubles the sensitivity of the bound sums (which
    # give the count): 2 R in L1
    assert d.attrs["dp"].sensitivity["age: bound_sums"] == pytest.approx(200.0)
    code, out, _ = _run(
        capsys, "describe", data, "--schema", path, "--epsilon", 1, "--by", "region"
    )
    assert code == 0 and "by region" in out


# ----------------------------------------------------------------------------- a real process


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["MPLBACKEND"] = "Agg"
    return env


def test_subprocess_end_to_end(files: dict[str, Path], tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    done = subprocess.run(
        [sys.executable, "-m", "pandas_dp.cli", "describe", str(files["csv"]), "--schema",
         str(files["schema"]), "--epsilon", "1", "--by", "region", "--html", str(report)],
        capture_output=True, text=True, env=_env(), timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "count, mean and std by region" in done.stdout
    assert report.is_file()


def test_subprocess_bad_schema_exit_2(files: dict[str, Path]) -> None:
    files["schema"].write_text("columns: [unclosed\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pandas_dp.cli", "describe", str(files["csv"]), "--schema",
         str(files["schema"]), "--epsilon", "1"],
        capture_output=True, text=True, env=_env(), timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("pandas-dp describe: error: schema file")
    assert "Traceback" not in done.stderr


UNUSABLE_DECLARATIONS = {
    "infinite bound": (
        "  age:\n    dtype: float64\n    in_range: {min_value: 0, max_value: .inf}\n",
        "the upper bound of column 'age' is inf",
    ),
    "empty isin": (
        "  region:\n    dtype: str\n    isin: []\n",
        "declares no categories for column 'region'",
    ),
}


@pytest.mark.parametrize("case", list(UNUSABLE_DECLARATIONS))
def test_unusable_declarations_are_one_line_errors(
    case: str,
    files: dict[str, Path],
    spies: dict[str, int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A schema that parses but declares an unusable bound or an empty isin: a one-line
    error naming the schema file, exit 2, nothing read but the header, nothing charged."""
    text, message = UNUSABLE_DECLARATIONS[case]
    files["schema"].write_text(f"schema_type: dataframe\ncolumns:\n{text}", encoding="utf-8")
    outer = pandas_dp.PrivacyBudget(epsilon=10.0)
    with outer:
        code, out, err = _run(
            capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1
        )
    assert code == 2 and out == ""
    assert message in err and str(files["schema"]) in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert outer.spent.epsilon == 0.0 and outer.ledger.empty
    assert spies == {"header": 1, "table": 0}


def test_by_without_keys_says_what_to_declare_in_the_yaml(
    files: dict[str, Path], spies: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1,
        "--by", "age",
    )  # fmt: skip
    assert code == 2
    assert "--by age" in err and "YAML schema" in err and "isin" in err, err
    assert "categories=" not in err and "pass " not in err
    assert spies["table"] == 0


def test_semicolon_file_hints_at_sep_and_reads_with_it(
    files: dict[str, Path], spies: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    load_survey().to_csv(files["csv"], index=False, sep=";")
    code, _, err = _run(
        capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1
    )
    assert code == 2 and "declared but not in the data file" in err
    assert "holds ';'" in err and "--sep ';'" in err, err
    assert spies == {"header": 1, "table": 0}
    outer = pandas_dp.PrivacyBudget(epsilon=10.0)
    with outer:
        code, out, err = _run(
            capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1,
            "--sep", ";", "--columns", "age", "--seed", 0,
        )  # fmt: skip
    assert code == 0, err
    assert "age" in out and outer.spent.epsilon == pytest.approx(1.0)


def test_tab_separated_hint_and_sep_by_name(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    load_survey().to_csv(files["csv"], index=False, sep="\t")
    code, _, err = _run(
        capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1
    )
    assert code == 2 and "--sep tab" in err
    code, _, err = _run(
        capsys, "describe", files["csv"], "--schema", files["schema"], "--epsilon", 1,
        "--sep", "tab", "--columns", "age", "--seed", 0,
    )  # fmt: skip
    assert code == 0, err


def test_sep_is_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "describe", "--help")
    assert code == 0 and "--sep CHAR" in out and "delimiter" in out


def test_keys_of_several_group_columns_read_as_text(files: dict[str, Path]) -> None:
    """Keys of a group-by of two columns show each key's values joined, not a tuple."""
    report = cli.describe(
        files["csv"], files["schema"], epsilon=1.0, by=["region", "smoker"], seed=0
    )
    text = report.declarations.to_string()
    assert "('" not in text
    assert "declared keys: E, False; E, True; N, False" in text
