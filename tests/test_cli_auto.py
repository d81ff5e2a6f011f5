"""``pandas-dp describe --auto`` (and ``--write-schema``): a file with no schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

import pandas_dp
from pandas_dp import cli
from pandas_dp.cli.auto import infer_kinds


def _raw(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.normal(45, 12, n).round(),
            "income": rng.lognormal(10, 1, n).round(2),
            "city": rng.choice(["A", "B", "C"], n),
            "smoker": np.where(rng.random(n) < 0.3, "true", "false"),
        }
    )
    df.loc[:2, "city"] = "RARE"
    df.loc[3, "age"] = np.nan
    return df


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    path = tmp_path / "raw.csv"
    _raw().to_csv(path, index=False)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_no_schema_end_to_end(
    raw: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written = tmp_path / "schema.yaml"
    code, out, err = _run(
        capsys, "describe", raw, "--epsilon", 1, "--delta", 1e-6, "--auto",
        "--write-schema", written, "--seed", 0,
    )  # fmt: skip
    assert code == 0, err
    for word in ("count", "mean", "share A", "share True", "age", "income", "city", "smoker"):
        assert word in out
    assert "share RARE" not in out
    assert "released privately first" in out
    assert "(laplace)" in out  # --auto: delta goes to the selection, not to Gaussian noise
    for statistic in ("bounds", "categories", "describe"):
        assert statistic in out
    assert "5e-07" not in out  # one text column: the selection spends all of delta
    assert "1e-06" in out
    assert f"wrote {written}" in out
    # the written schema declares what was released, in the format --schema reads
    schema = cli.load_schema(written)
    checks = {c: [type(k).__name__ for k in col.checks] for c, col in schema.columns.items()}
    assert set(checks) == {"age", "income", "city", "smoker"}
    assert len(schema.columns["age"].checks) == 1
    assert schema.columns["city"].checks[0].statistics["allowed_values"] == ["A", "B", "C"]


def test_written_schema_round_trips(raw: Path, tmp_path: Path) -> None:
    written = tmp_path / "schema.yaml"
    first = cli.describe(
        raw, None, epsilon=1.0, delta=1e-6, auto=True, write_schema=written, seed=1
    )
    again = cli.describe(raw, written, epsilon=1.0, seed=1)
    a, b = first.releases["describe"], again.releases["describe"]
    assert list(a.columns) == list(b.columns) == ["age", "income", "city", "smoker"]
    assert list(a.index) == list(b.index)
    assert first.numeric == again.numeric and first.categorical == again.categorical
    assert a.attrs["dp"].input_bounds == b.attrs["dp"].input_bounds
    # the second run spends nothing on declarations: one release
    assert list(again.budget.ledger["statistic"]) == ["describe"]
    assert first.budget.spent.epsilon == pytest.approx(1.0)
    assert first.budget.spent.delta == pytest.approx(1e-6)


def test_auto_with_a_partial_schema_fills_only_the_missing(raw: Path, tmp_path: Path) -> None:
    partial = tmp_path / "partial.yaml"
    schema = pa.DataFrameSchema(
        {
            "age": pa.Column(float, pa.Check.in_range(0, 100), nullable=True),
            "city": pa.Column(str, nullable=True),
        }
    )
    cli.schema_to_yaml(schema, partial)
    report = cli.describe(raw, partial, epsilon=1.0, delta=1e-6, auto=True, seed=0)
    table = report.releases["describe"]
    assert list(table.columns) == ["age", "city"]  # the schema's columns
    assert table.loc["max (declared)", "age"] == 100.0
    declared = table.attrs["dp"].details["auto"]["declared"]
    assert declared["bounds"] == {} and list(declared["categories"]) == ["city"]


def test_gaussian_auto_splits_delta(raw: Path) -> None:
    report = cli.describe(
        raw, None, epsilon=1.0, delta=1e-6, mechanism="gaussian", auto=True, seed=0
    )
    ledger = report.budget.ledger
    assert ledger["delta"].sum() == pytest.approx(1e-6)
    assert ledger.loc[ledger["statistic"] == "describe", "delta"].item() == pytest.approx(5e-7)


def test_types_are_read_from_the_file() -> None:
    df = pd.DataFrame(
        {
            "n": ["1", "2.5", None, " 3"],
            "b": ["true", "False", "yes", None],
            "t": ["x", "1", None, "y"],
            "empty": [None, None, None, None],
        }
    )
    assert infer_kinds(df, list(df.columns)) == {
        "n": "number",
        "b": "bool",
        "t": "text",
        "empty": "text",
    }


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--write-schema", "s.yaml"), "--write-schema writes what --auto released"),
        (("--auto", "--by", "city"), "--auto with --by is not offered yet"),
        (("--auto", "--write-schema", "/no/such/folder/s.yaml"), "folder to write it in"),
        (
            ("--mechanism", "laplace", "--delta", "1e-6"),
            "--delta is spent by the Gaussian mechanism only",
        ),
    ],
    ids=["write without auto", "by", "folder", "delta without auto"],
)
def test_refused_before_reading(
    raw: Path,
    extra: tuple[str, ...],
    message: str,
    spies: dict[str, int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    schema = [] if "--auto" in extra else ["--schema", str(raw)]
    code, _, err = _run(capsys, "describe", raw, *schema, "--epsilon", 1, *extra)
    assert code == 2
    assert message in err
    assert spies == {"header": 0, "table": 0}


def test_no_delta_with_a_text_column_is_refused_before_the_charge(
    raw: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outer = pandas_dp.PrivacyBudget(epsilon=10.0)
    written = tmp_path / "s.yaml"
    with outer:
        code, _, err = _run(
            capsys, "describe", raw, "--epsilon", 1, "--auto", "--write-schema", written
        )
    assert code == 2
    assert "needs delta > 0" in err
    assert outer.ledger.empty
    assert not written.exists()


def test_no_schema_without_auto_says_what_to_do(
    raw: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "describe", raw, "--epsilon", 1)
    assert code == 2
    assert "--auto" in err


def test_help_names_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["describe", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--auto" in out and "--write-schema" in out
    assert "publishing the file is safe" in " ".join(out.split())


def test_html_report_names_what_was_released(raw: Path, tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    code = cli.main(
        [
            "describe", str(raw), "--epsilon", "1", "--delta", "1e-6", "--auto",
            "--seed", "0", "--html", str(page),
        ]
    )  # fmt: skip
    assert code == 0
    text = page.read_text(encoding="utf-8")
    assert "Public facts used" in text
    assert text.count("(released privately)") == 3  # age, income, city (not the boolean)
    assert "never read from the data" not in text


def test_a_column_of_unique_values_is_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, written = tmp_path / "ids.csv", tmp_path / "s.yaml"
    frame = _raw(600)[["age"]].assign(id=[f"u{i}" for i in range(600)])
    frame.to_csv(path, index=False)
    code, out, err = _run(
        capsys, "describe", path, "--epsilon", 1, "--delta", 1e-6, "--auto",
        "--write-schema", written, "--seed", 0,
    )  # fmt: skip
    assert code == 0, err
    assert "Not described (no value passed the private selection of categories): ['id']" in out
    assert "share u1" not in out
    assert cli.load_schema(written).columns["id"].checks == []


def test_a_privacy_unit_in_a_partial_schema_applies_and_round_trips(tmp_path: Path) -> None:
    data, partial, written = tmp_path / "u.csv", tmp_path / "p.yaml", tmp_path / "w.yaml"
    frame = _raw(3000)
    frame["pid"] = np.arange(len(frame)) // 3
    frame.to_csv(data, index=False)
    schema = pa.DataFrameSchema(
        {"pid": pa.Column(int), "age": pa.Column(float, nullable=True)},
        metadata={"pandas_dp": {"privacy_unit": "pid", "max_rows_per_unit": 3}},
    )
    cli.schema_to_yaml(schema, partial)
    first = cli.describe(
        data, partial, epsilon=2.0, delta=1e-6, auto=True, write_schema=written, seed=0
    )
    assert set(first.budget.ledger["privacy_unit"]) == {"pid"}
    assert list(first.releases["describe"].columns) == ["age"]  # the unit is not described
    again = cli.describe(data, written, epsilon=2.0, seed=0)
    assert list(again.releases["describe"].columns) == ["age"]
    assert set(again.budget.ledger["privacy_unit"]) == {"pid"}
