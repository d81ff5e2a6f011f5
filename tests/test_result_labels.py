"""A release's label axes keep the frame's column structure, like pandas (issue 32):
tuple column labels stay a flat Index of tuples, MultiIndex columns keep their level
names, and grouped ``agg``/``describe`` over MultiIndex columns get one level per
column level plus the statistic's. Dask gives the in-memory release."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp.result.labels import like_frame_columns

KW: dict[str, Any] = dict(epsilon=1e6, bounds=(0.0, 2.0), random_state=0)
VALUES = [("v", "a"), ("v", "b")]


def _frame(multi: bool) -> pd.DataFrame:
    df = pd.DataFrame(
        {"a": np.linspace(0, 1, 40), "b": np.linspace(1, 2, 40), "k": ["x", "y"] * 20}
    )
    labels = [*VALUES, ("k", "1")]
    if multi:
        df.columns = pd.MultiIndex.from_tuples(labels, names=["outer", "inner"])
    else:
        df.columns = pd.Index(labels, tupleize_cols=False)
    return df


def _axes(obj: Any) -> list[tuple[int, list[Any]]]:
    axes = [obj.index] if isinstance(obj, pd.Series) else [obj.index, obj.columns]
    return [(a.nlevels, list(a.names)) for a in axes]


CALLS = {
    "mean": (lambda d: d.dp.mean(VALUES, **KW), lambda d: d[VALUES].mean()),
    "quantile": (lambda d: d.dp.quantile(VALUES, 0.5, **KW), lambda d: d[VALUES].quantile(0.5)),
    "quantile-list": (
        lambda d: d.dp.quantile(VALUES, [0.2, 0.8], **KW),
        lambda d: d[VALUES].quantile([0.2, 0.8]),
    ),
    "cov": (lambda d: d.dp.cov(VALUES, **KW), lambda d: d[VALUES].cov()),
    "describe": (lambda d: d.dp.describe(VALUES, **KW), lambda d: d[VALUES].describe()),
    "count": (
        lambda d: d[VALUES].dp.count(epsilon=1e6, random_state=0),
        lambda d: d[VALUES].count(),
    ),
    "grouped-mean": (
        lambda d: d.dp.groupby(("k", "1"), keys=["x", "y"]).mean(VALUES, **KW),
        lambda d: d.groupby(("k", "1"))[VALUES].mean(),
    ),
}


@pytest.mark.parametrize("multi", [False, True], ids=["tuples", "multiindex"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_label_axes_like_pandas(call: str, multi: bool) -> None:
    ours, theirs = CALLS[call]
    df = _frame(multi)
    got, want = ours(df), theirs(df)
    assert _axes(got) == _axes(want)
    if call != "describe":  # (describe's extremes are the declared bounds)
        assert got.shape == want.shape
    assert "dp" in got.attrs  # the record survives the relabelling


def test_grouped_agg_over_multiindex_columns_has_their_levels() -> None:
    df = _frame(multi=True)
    g = df.dp.groupby(("k", "1"), keys=["x", "y"])
    got = g.agg({("v", "a"): ["mean", "std"]}, **KW)
    want = df.groupby(("k", "1")).agg({("v", "a"): ["mean", "std"]})
    assert got.columns.tolist() == want.columns.tolist()
    assert list(got.columns.names) == list(want.columns.names) == ["outer", "inner", None]
    named = g.agg(m=(("v", "a"), "mean"), s=(("v", "b"), "std"), **KW)
    assert named.columns.tolist() == ["m", "s"]
    np.testing.assert_allclose(named["m"], want[("v", "a", "mean")], rtol=1e-4)


def test_row_index_left_alone_where_it_holds_keys_or_values() -> None:
    """``rows=False`` (a group-by's keys, value_counts' values): only columns change."""
    columns = pd.MultiIndex.from_tuples(VALUES, names=["outer", "inner"])
    out = pd.DataFrame([[1.0, 2.0]], index=pd.MultiIndex.from_tuples(VALUES[:1]))
    out.columns = pd.MultiIndex.from_tuples(VALUES)
    like_frame_columns(out, columns, rows=False)
    assert list(out.index.names) == [None, None]
    assert list(out.columns.names) == ["outer", "inner"]


def test_plain_labels_and_unhashable_axes_are_left_alone() -> None:
    out = pd.Series([1.0], index=pd.Index(["x"]))
    assert like_frame_columns(out, pd.Index(["x"])) is out
    assert out.index.tolist() == ["x"]
    columns = pd.Index([("v", "a")], tupleize_cols=False)
    odd = pd.Series([1.0], index=pd.Index([[1]], dtype=object))  # an unhashable label
    assert like_frame_columns(odd, columns).index.tolist() == [[1]]


def test_dask_releases_equal_in_memory_with_tuple_labels() -> None:
    dd = pytest.importorskip("dask.dataframe")
    df = _frame(multi=False)
    ddf = dd.from_pandas(df, npartitions=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ours in (CALLS["mean"][0], CALLS["quantile"][0], CALLS["grouped-mean"][0]):
            pd.testing.assert_frame_equal(
                pd.DataFrame(ours(df)), pd.DataFrame(ours(ddf)), check_exact=True
            )
