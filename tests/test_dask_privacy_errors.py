"""Dask failures never quote private values (issue 30, finding 2).

A lazily read CSV is parsed only inside ``dask.compute``, after the budget is
charged: one record holding text in a column Dask inferred as numeric from the first
block makes that compute fail, and Dask's and pandas' messages print the record's
value (and sometimes its row). The Dask accessor must

* refuse, before the charge and before reading a row, what the collection's meta
  (its public dtypes) already rules out: a non-numeric column asked for a numeric
  statistic, a column the frame does not have;
* turn any failure inside the engine's compute into a content-free
  :class:`~pandas_dp.errors.ComputeError` that names only public facts (the
  statistic, the columns read, their meta dtypes) and says what to fix, with no
  chained exception (neither ``__cause__`` nor ``__context__``) carrying the value.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

import pandas_dp  # noqa: E402
from pandas_dp import errors  # noqa: E402
from pandas_dp.engines import dask as dask_engine  # noqa: E402

SECRET = "secret-value-123"
ROWS = 4_000
BAD_ROW = 3_500  # deep in the file: far past the block Dask infers the dtypes from
BLOCKSIZE = 4_000  # bytes: ~6 partitions, the bad record in a late one
BOUNDS = {"x": (0, 100)}
KEYS = ["a", "b"]


@pytest.fixture(autouse=True)
def _synchronous() -> Iterator[None]:
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture
def csv(tmp_path: Path) -> Path:
    """A numeric column ``x`` (whole numbers) and a text key ``k``; one record of
    ``x`` deep in the file holds text."""
    lines = ["x,k"] + [f"{i % 90},{KEYS[i % 2]}" for i in range(ROWS)]
    lines[1 + BAD_ROW] = f"{SECRET},a"
    path = tmp_path / "data.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


#: How the frame is read: dtypes inferred from the first block (x: int64, the bad
#: record is caught by Dask's dtype check), or declared numeric (x: float64, the
#: bad record is caught by pandas' parser).
READERS: dict[str, Callable[[Path], Any]] = {
    "inferred": lambda p: dd.read_csv(p, blocksize=BLOCKSIZE),
    "declared float": lambda p: dd.read_csv(p, blocksize=BLOCKSIZE, dtype={"x": "float64"}),
}

#: Every kind of release the Dask accessor offers, each with its ε.
RELEASES: dict[str, Callable[[Any, Any], Any]] = {
    "mean": lambda d, b: d.dp.mean("x", epsilon=0.5, bounds=BOUNDS, budget=b),
    "sum": lambda d, b: d.dp.sum("x", epsilon=0.5, bounds=BOUNDS, budget=b),
    "std": lambda d, b: d.dp.std("x", epsilon=0.5, bounds=BOUNDS, budget=b),
    "count": lambda d, b: d.dp.count(epsilon=0.5, budget=b),
    "len": lambda d, b: d.dp.len(epsilon=0.5, budget=b),
    "describe": lambda d, b: d.dp.describe(
        epsilon=0.5, bounds=BOUNDS, categories={"k": KEYS}, budget=b
    ),
    "quantile": lambda d, b: d.dp.quantile("x", 0.5, epsilon=0.5, bounds=BOUNDS, budget=b),
    "median": lambda d, b: d.dp.median("x", epsilon=0.5, bounds=BOUNDS, budget=b),
    # the text column alone: read_csv parses every column of a block all the same
    "value_counts": lambda d, b: d.dp.value_counts("k", epsilon=0.5, categories=KEYS, budget=b),
    "series mean": lambda d, b: d["x"].dp.mean(epsilon=0.5, bounds=BOUNDS, budget=b),
    "series len": lambda d, b: d["x"].dp.len(epsilon=0.5, budget=b),
    "groupby mean": lambda d, b: d.dp.groupby("k", keys=KEYS).mean(
        "x", epsilon=0.5, bounds=BOUNDS, budget=b
    ),
    "groupby agg": lambda d, b: d.dp.groupby("k", keys=KEYS).agg(
        {"x": ["mean", "std"]}, epsilon=0.5, bounds=BOUNDS, budget=b
    ),
    "private keys len": lambda d, b: d.dp.groupby("k", keys="private", delta=1e-6).len(
        epsilon=0.5, budget=b
    ),
}


def _content_free(exc: BaseException) -> None:
    """No data value, no row number, and no chained exception that could hold one."""
    message = str(exc)
    shown = "".join(traceback.format_exception(exc))
    for text in (message, shown):
        assert SECRET not in text
        assert "secret" not in text.lower()
    # the only digits in the message are those of dtype names (int64, float64):
    # no row, position or line number
    assert not re.search(r"\d", re.sub(r"[A-Za-z]+\d+", "", message)), message
    assert exc.__cause__ is None
    assert exc.__context__ is None
    assert exc.__suppress_context__


def _computes() -> Any:
    """A Dask callback counting the graphs run."""

    class Computes(dask.callbacks.Callback):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.runs = 0

        def _start(self, dsk: Any) -> None:
            self.runs += 1

    return Computes()


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("name", list(RELEASES))
def test_failure_after_the_charge_is_content_free(csv: Path, reader: str, name: str) -> None:
    ddf = READERS[reader](csv)
    assert ddf.npartitions > 3  # lazy: the bad record is far from the first block
    budget = pandas_dp.PrivacyBudget(epsilon=10.0, delta=1e-3)
    with pytest.raises(errors.ComputeError) as info:
        RELEASES[name](ddf, budget)
    exc = info.value
    assert isinstance(exc, errors.PandasDPError)
    assert isinstance(exc, RuntimeError)
    _content_free(exc)
    message = str(exc)
    assert "'x'" in message or "'k'" in message  # the columns read, by name
    assert "to_numeric" in message and "dtype=" in message  # how to fix it
    assert "charged" in message
    # charged once, before the data were read; the charge stands
    assert len(budget.ledger) == 1
    assert budget.remaining[0] == pytest.approx(9.5)


def test_message_names_the_statistic_columns_and_meta_dtype(csv: Path) -> None:
    ddf = READERS["inferred"](csv)
    with pytest.raises(errors.ComputeError) as info:
        ddf.dp.mean("x", epsilon=0.5, bounds=BOUNDS)
    message = str(info.value)
    assert "mean" in message
    assert "'x' (int64)" in message
    assert info.value.columns == {"x": "int64"}


def test_public_length_failure_is_content_free_and_charges_nothing(csv: Path) -> None:
    """neighbouring='substitute' computes len(ddf) before the charge: that read can
    fail too, with nothing charged."""
    ddf = READERS["inferred"](csv)
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with pytest.raises(errors.ComputeError) as info:
        ddf.dp.mean("x", epsilon=0.5, bounds=BOUNDS, neighbouring="substitute", budget=budget)
    _content_free(info.value)
    assert "nothing was charged" in str(info.value)
    assert budget.remaining == (10.0, 0.0)
    assert len(budget.ledger) == 0


def test_vanished_file_is_a_generic_error(csv: Path) -> None:
    ddf = dd.read_csv(csv, blocksize=BLOCKSIZE, dtype={"x": "string"})
    ddf["x"] = dd.to_numeric(ddf["x"], errors="coerce")
    csv.unlink()
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with pytest.raises(errors.ComputeError) as info:
        ddf.dp.mean("x", epsilon=0.5, bounds=BOUNDS, budget=budget)
    _content_free(info.value)
    assert str(csv) not in str(info.value)  # generic: the cause is withheld
    assert len(budget.ledger) == 1


def test_the_suggested_fix_works(csv: Path) -> None:
    """Text read as text, then coerced: the bad record becomes a missing value."""
    ddf = dd.read_csv(csv, blocksize=BLOCKSIZE, dtype={"x": "string"})
    ddf["x"] = dd.to_numeric(ddf["x"], errors="coerce")
    for release in ("mean", "describe", "groupby mean", "value_counts"):
        RELEASES[release](ddf, None)


def test_the_engine_alone_is_content_free(csv: Path) -> None:
    """The engine's own entry points raise the same error (no statistic named)."""
    ddf = READERS["inferred"](csv)
    with pytest.raises(errors.ComputeError) as info:
        dask_engine.moments(ddf["x"], 0.0, 100.0, squares=False)
    _content_free(info.value)


#: Numeric statistics of a column whose meta dtype is text: refused from the meta.
TEXT_META: dict[str, Callable[[Any, Any], Any]] = {
    "mean": RELEASES["mean"],
    "sum": RELEASES["sum"],
    "quantile": RELEASES["quantile"],
    "median": RELEASES["median"],
    "describe": RELEASES["describe"],
    "groupby mean": RELEASES["groupby mean"],
    "groupby describe": lambda d, b: d.dp.groupby("k", keys=KEYS).describe(
        epsilon=0.5, bounds=BOUNDS, budget=b
    ),
    "series mean": RELEASES["series mean"],
    "agg": lambda d, b: d.dp.agg({"x": ["mean"]}, epsilon=0.5, bounds=BOUNDS, budget=b),
}


@pytest.mark.parametrize("dtype", ["string", "object"])
@pytest.mark.parametrize("name", list(TEXT_META))
def test_text_meta_is_refused_before_the_charge(csv: Path, dtype: str, name: str) -> None:
    ddf = dd.read_csv(csv, blocksize=BLOCKSIZE, dtype={"x": dtype})
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with _computes() as seen, pytest.raises(TypeError) as info:
        TEXT_META[name](ddf, budget)
    assert budget.remaining == (10.0, 0.0)
    assert seen.runs == 0  # nothing read
    message = str(info.value)
    assert SECRET not in message
    assert "'x'" in message and "numeric" in message
    assert "dd.to_numeric" in message  # the Dask way to fix it


def test_missing_column_is_refused_before_the_charge(csv: Path) -> None:
    ddf = READERS["inferred"](csv)
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with _computes() as seen, pytest.raises(KeyError, match="'y'"):
        ddf.dp.mean("y", epsilon=0.5, bounds={"y": (0, 1)}, budget=budget)
    assert budget.remaining == (10.0, 0.0)
    assert seen.runs == 0


def test_counts_of_text_columns_are_not_refused(csv: Path) -> None:
    """A count reads no value: a text column's meta does not refuse it."""
    ddf = dd.read_csv(csv, blocksize=BLOCKSIZE, dtype={"x": "string"})
    ddf.dp.agg({"x": ["count"]}, epsilon=0.5)
    ddf["x"].dp.agg(["count"], epsilon=0.5)
    ddf.dp.groupby("k", keys=KEYS).agg({"x": "count"}, epsilon=0.5)
