"""Text keys keep their column's dtype, as pandas keeps it (issue 32): a
``string[pyarrow]`` key column gives a ``string`` key index (a key column with
``as_index=False``), a ``str`` one a ``str`` index; on Dask, text that Dask itself
converted to ``string[pyarrow]`` keeps pandas' ``str`` (the in-memory release)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import pandas_dp  # noqa: F401

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

KW: dict[str, Any] = dict(epsilon=1e6, bounds=(0, 5), random_state=0)


def _frame(text: str) -> Any:
    return pd.DataFrame(
        {
            "k": pd.array(["a", "b", "a", "b", "a"], dtype=text),  # type: ignore[call-overload]
            "j": pd.array(["u", "u", "v", "v", "u"], dtype=text),  # type: ignore[call-overload]
            "x": [1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )


@pytest.mark.parametrize("text", ["str", "string[pyarrow]"])
def test_key_index_dtype_is_pandas(text: str) -> None:
    df = _frame(text)
    g = df.dp.groupby("k", keys=["a", "b"])
    cases = [
        (g.mean("x", **KW), df.groupby("k")["x"].mean()),
        (g["x"].describe(**KW), df.groupby("k")["x"].describe()),
        (
            df.dp.groupby(["k", "j"], keys={"k": ["a", "b"], "j": ["u", "v"]}).size(
                epsilon=1e6, random_state=0
            ),
            df.groupby(["k", "j"]).size(),
        ),
        (
            df["k"].dp.value_counts(epsilon=1e6, categories=["a", "b"], random_state=0),
            df["k"].value_counts(),
        ),
        (
            df.dp.proportions("k", epsilon=1e6, categories=["a", "b"], random_state=0),
            df["k"].value_counts(normalize=True),
        ),
    ]
    for got, want in cases:
        if isinstance(want.index, pd.MultiIndex):
            assert [lv.dtype for lv in got.index.levels] == [lv.dtype for lv in want.index.levels]
        else:
            assert got.index.dtype == want.index.dtype, (got.index.dtype, want.index.dtype)
    flat = df.dp.groupby("k", keys=["a", "b"], as_index=False).mean("x", **KW)
    assert flat["k"].dtype == df.groupby("k", as_index=False)["x"].mean()["k"].dtype


def test_dask_converted_text_keeps_the_in_memory_dtype() -> None:
    """Dask's ``convert-string`` makes every text column ``string[pyarrow]``; the keys
    stay ``str``, so that the release equals the in-memory one of the ``str`` frame."""
    df = _frame("str")
    want = df.dp.groupby("k", keys=["a", "b"]).mean("x", **KW)
    with dask.config.set({"dataframe.convert-string": True}):
        ddf = dd.from_pandas(df, npartitions=2)
        assert str(ddf["k"].dtype) == "string"
        got = ddf.dp.groupby("k", keys=["a", "b"]).mean("x", **KW)
        counts = ddf["k"].dp.value_counts(epsilon=1e6, categories=["a", "b"], random_state=0)
    pd.testing.assert_series_equal(got, want)
    assert counts.index.dtype == df["k"].value_counts().index.dtype


def test_dask_without_conversion_keeps_the_column_dtype() -> None:
    df = _frame("string[pyarrow]")
    want = df.dp.groupby("k", keys=["a", "b"]).mean("x", **KW)
    with dask.config.set({"dataframe.convert-string": False}):
        got = dd.from_pandas(df, npartitions=2).dp.groupby("k", keys=["a", "b"]).mean("x", **KW)
    assert str(got.index.dtype) == "string"
    pd.testing.assert_series_equal(got, want)
