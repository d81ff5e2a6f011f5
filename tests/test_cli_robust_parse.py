"""``pandas-dp describe`` reads a CSV file the same way whatever one record holds.

Issue 30, finding 4: a quote never closed in one record stopped the command with
``EOF inside string starting at row 322`` -- an exit status that depended on one
record and a message that named its row (a lower bound on the private row count).
Now each physical line is one record, parsed on its own: a malformed record (too
many fields, a quote never closed, junk after a closing quote, bytes that are not
UTF-8, a NUL byte, ...) becomes a row of missing values (or, for a bad byte inside
one field, that field's value is junk) and never swallows the records after it.
Here every such record, at the start, in the middle and at the end of the file,
gives the exit status, stderr and stdout (but for the noisy numbers) of the clean
file; nothing names a row or quotes a record.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp import cli
from pandas_dp.datasets import load_survey, survey_schema

ROOT = Path(__file__).resolve().parent.parent
HEADER = b"age,income,hours_per_week,region,smoker"
COLUMNS = ["age", "income", "hours_per_week", "region", "smoker"]

#: One malformed record each (the survey has five columns).
MALFORMED: dict[str, bytes] = {
    "too many fields": b"47,1,2,N,True,9,9,9",
    "too few fields": b"47",
    "quote never closed": b'33,12000,40,"N,True',
    "quote never closed at the end": b'33,12000,40,N,"',
    "junk after a closing quote": b'"47"x,12000,40,N,True',
    "a lone quote": b'"',
    "bytes that are not UTF-8": b"4\xff7,12000,4\xc30,N\xe9,True",
    "a NUL byte": b"4\x007,12000,40,N\x00,True",
    "a bare carriage return": b"47,12000\r,40,N,True",
    "a very long field": b"47,12000,40," + b"N" * 200_000 + b",True",
    "only delimiters": b",,,,,,,,,,,,",
    "a header again": HEADER,
}
#: Where the malformed record goes: first, row 322 (the finding's), last.
POSITIONS = [0, 321, 999]

_NUMBER = re.compile(rb"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("robust")
    schema = folder / "schema.yaml"
    cli.schema_to_yaml(survey_schema(), schema)
    text = load_survey().to_csv(index=False, lineterminator="\n").encode()
    lines = text.rstrip(b"\n").split(b"\n")
    assert lines[0] == HEADER and len(lines) == 1001
    return {"folder": folder, "schema": schema, "records": lines[1:], "baseline": {}}


def _write(path: Path, records: list[bytes], *, final_newline: bool = True) -> Path:
    body = b"\n".join([HEADER, *records]) + (b"\n" if final_newline else b"")
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(body))
    else:
        path.write_bytes(body)
    return path


def _malformed(clean: dict[str, Any], kind: str, at: int, suffix: str = ".csv") -> Path:
    records = list(clean["records"])
    records[at] = MALFORMED[kind]
    name = f"{re.sub(r'[^a-z]+', '_', kind)}_{at}{suffix}"
    return _write(clean["folder"] / name, records, final_newline=at != 999)


def _run(capsys: pytest.CaptureFixture[str], data: Path, schema: Path, *extra: str) -> tuple:
    argv = ["describe", str(data), "--schema", str(schema), "--epsilon", "1"]
    argv += ["--seed", "0", "--progress", "never", *extra]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning may depend on a record either
        code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _shape(text: str, data: Path) -> str:
    """The output without the file's name, its released numbers (nor the padding
    they change)."""
    masked = _NUMBER.sub(b"#", text.replace(data.name, "DATA").encode()).decode()
    return " ".join(masked.split())


@pytest.mark.parametrize("extra", [(), ("--by", "region", "--delta", "1e-6")])
@pytest.mark.parametrize("at", POSITIONS)
@pytest.mark.parametrize("kind", list(MALFORMED))
def test_one_malformed_record_changes_no_status_and_no_message(
    clean: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    kind: str,
    at: int,
    extra: tuple[str, ...],
) -> None:
    base = _write(clean["folder"] / "clean.csv", clean["records"])
    if extra not in clean["baseline"]:
        clean["baseline"][extra] = _run(capsys, base, clean["schema"], *extra)
    code0, out0, err0 = clean["baseline"][extra]
    assert code0 == 0 and err0 == "", err0
    data = _malformed(clean, kind, at)
    code, out, err = _run(capsys, data, clean["schema"], *extra)
    assert code == code0, err
    assert err == err0  # nothing on stderr, whatever the record holds
    assert _shape(out, data) == _shape(out0, base)
    assert "row" not in err and str(at) not in err


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_record_is_one_row_and_swallows_no_other(
    clean: dict[str, Any], kind: str
) -> None:
    schema = cli.load_schema(clean["schema"])
    base = cli.read_table(_write(clean["folder"] / "clean.csv", clean["records"]), COLUMNS, schema)
    at = 321
    frame = cli.read_table(_malformed(clean, kind, at), COLUMNS, schema)
    assert frame.shape == base.shape
    assert list(frame.dtypes.astype(str)) == list(base.dtypes.astype(str))
    others = np.arange(len(base)) != at
    pd.testing.assert_frame_equal(
        frame[others].reset_index(drop=True), base[others].reset_index(drop=True)
    )
    if kind in ("too many fields", "quote never closed", "junk after a closing quote"):
        assert frame.iloc[at].isna().all()  # a record that is not CSV: all missing


def test_a_quote_never_closed_mid_file_is_not_an_error_any_more(
    clean: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """The finding's case: the command used to stop with status 2 and name the row."""
    data = _malformed(clean, "quote never closed", 321)
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with budget:
        code, out, err = _run(capsys, data, clean["schema"])
    assert code == 0 and err == "" and "describe" in out
    assert budget.spent.epsilon == pytest.approx(1.0)


def test_compressed_files_read_alike(
    clean: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    base = _write(clean["folder"] / "clean.csv.gz", clean["records"])
    code0, out0, err0 = _run(capsys, base, clean["schema"])
    data = _malformed(clean, "quote never closed", 321, suffix=".csv.gz")
    code, out, err = _run(capsys, data, clean["schema"])
    assert (code, err) == (code0, err0) == (0, "")
    assert _shape(out, data) == _shape(out0, base)


def test_a_damaged_file_fails_without_quoting_it(
    clean: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """A compressed file cut short is a property of the file, not of one record: one
    line, status 2, nothing charged, no traceback and no content in the message."""
    whole = gzip.compress(b"\n".join([HEADER, *clean["records"]]) + b"\n")
    data = clean["folder"] / "cut.csv.gz"
    data.write_bytes(whole[: len(whole) // 2])
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with budget:
        code, out, err = _run(capsys, data, clean["schema"])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and "nothing was charged" in err
    assert budget.spent.epsilon == 0.0


def test_an_empty_file_is_a_clear_error(
    clean: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    data = clean["folder"] / "empty.csv"
    data.write_bytes(b"")
    code, out, err = _run(capsys, data, clean["schema"])
    assert code == 2 and out == "" and "no header" in err


def test_parquet_with_odd_values_reads_alike(
    clean: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyarrow")
    df = load_survey()
    base = clean["folder"] / "clean.parquet"
    df.to_parquet(base, index=False)
    code0, out0, err0 = _run(capsys, base, clean["schema"])
    odd = df.astype({"region": object})
    odd.loc[321, ["age", "income"]] = [np.inf, np.nan]
    odd.loc[321, "region"] = "N" * 100_000
    data = clean["folder"] / "odd.parquet"
    odd.to_parquet(data, index=False)
    code, out, err = _run(capsys, data, clean["schema"])
    assert (code, err) == (code0, err0) == (0, "")
    assert _shape(out, data) == _shape(out0, base)


def test_subprocess_prints_nothing_on_stderr_for_a_malformed_record(
    clean: dict[str, Any],
) -> None:
    data = _malformed(clean, "quote never closed", 321)
    done = subprocess.run(
        [sys.executable, "-W", "default", "-m", "pandas_dp.cli", "describe", str(data),
         "--schema", str(clean["schema"]), "--epsilon", "1", "--progress", "never"],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_carriage_returns_alone_never_put_records_in_the_header(
    clean: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """Lines ending with a bare ``\\r`` are no line breaks: such a file has its header
    and no records -- never a header whose "names" quote the records."""
    data = clean["folder"] / "mac.csv"
    data.write_bytes(b"\r".join([HEADER, *clean["records"][:50]]) + b"\r")
    assert cli.read_header(data) == COLUMNS
    schema = cli.load_schema(clean["schema"])
    assert len(cli.read_table(data, COLUMNS, schema)) == 0
    code, _, err = _run(capsys, data, clean["schema"])
    assert code == 0 and err == ""


def test_a_quote_or_a_line_break_is_no_delimiter(
    clean: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    base = _write(clean["folder"] / "clean.csv", clean["records"])
    code, out, err = _run(capsys, base, clean["schema"], "--sep", '"')
    assert code == 2 and out == "" and "cannot be a CSV delimiter" in err
