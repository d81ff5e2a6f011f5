"""pandas' keywords on every method of ``df.dp``, ``s.dp``, the group-by and
``g[col]`` (issue 32): each keyword of pandas' method of the same name is in the
signature, and a call that passes it either reads it with pandas' meaning or is
refused before the charge with the reason (never Python's "unexpected keyword").
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandas.core.groupby import DataFrameGroupBy, SeriesGroupBy

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp import DPFrameAccessor, DPSeriesAccessor, PrivacyBudget
from pandas_dp.accessor.groupby import DPGroupBy

DF = pd.DataFrame(
    {
        "g": ["a", "b", "a", "b", "a", "b"] * 10,
        "x": np.arange(60.0) % 7,
        "y": np.arange(60.0) % 5,
        "c": ["u", "v", "v", "u", "u", "u"] * 10,
    }
)
KW: dict[str, Any] = {"epsilon": 1e6, "bounds": (0, 10), "random_state": 0}
CATS: dict[str, Any] = {"epsilon": 1e6, "random_state": 0}
G = DF.dp.groupby("g", keys=["a", "b"])

#: pandas' parameters that are not keywords of a statistic
_IGNORED = {"self", "args", "kwargs"}
PAIRS = [
    ("df.dp", DPFrameAccessor, pd.DataFrame),
    ("s.dp", DPSeriesAccessor, pd.Series),
    ("g", DPGroupBy, DataFrameGroupBy),
    ("g[col]", DPGroupBy, SeriesGroupBy),
]


def _missing(ours: Any, theirs: Any) -> list[str]:
    po = inspect.signature(ours).parameters
    pt = inspect.signature(theirs).parameters
    positional = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [p for p in pt if p not in po and p not in _IGNORED and pt[p].kind not in positional]


def test_every_pandas_keyword_of_a_method_is_in_its_signature() -> None:
    """The sweep: every public method shared with pandas takes every pandas keyword."""
    gaps = {}
    for label, ours, theirs in PAIRS:
        for name in dir(ours):
            if name.startswith("_") or not hasattr(theirs, name):
                continue
            mine, pandas = getattr(ours, name), getattr(theirs, name)
            if not (callable(mine) and callable(pandas)):
                continue
            try:
                gap = _missing(mine, pandas)
            except (TypeError, ValueError):  # (no signature to read)
                continue
            if gap:
                gaps[f"{label}.{name}"] = gap
    assert gaps == {}


REFUSED = [
    ("frame axis=1", lambda: DF.dp.mean(["x"], axis=1, **KW), "axis=1"),
    ("frame axis=columns", lambda: DF.dp.sum(["x"], axis="columns", **KW), "axis='columns'"),
    ("series axis=1", lambda: DF["x"].dp.std(axis=1, **KW), "axis=1"),
    ("cov min_periods", lambda: DF.dp.cov(["x", "y"], min_periods=3, **KW), "min_periods=3"),
    ("corr min_periods", lambda: DF.dp.corr(["x", "y"], min_periods=1, **KW), "min_periods=1"),
    ("series bins", lambda: DF["x"].dp.value_counts(bins=3, **CATS), "bins=3"),
    ("g[col] bins", lambda: G["x"].value_counts(bins=3, **CATS), "bins=3"),
]


@pytest.mark.parametrize(("case", "call", "named"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_keyword_with_no_private_meaning_is_refused_before_the_charge(
    case: str, call: Any, named: str
) -> None:
    budget = PrivacyBudget(epsilon=1e7)
    with budget, pytest.raises(ValueError, match="no private meaning") as err:
        call()
    assert named in str(err.value) and "Nothing was charged" in str(err.value)
    assert budget.spent == (0.0, 0.0)


def test_the_bins_recipe_counts_a_declared_range() -> None:
    """The way out the bins refusal names: cut a public range, count its bins."""
    lo, hi, k = 0.0, 10.0, 4
    binned = pd.cut(DF["x"].clip(lo, hi), np.linspace(lo, hi, k + 1), include_lowest=True)
    got = binned.dp.value_counts(categories="dtype", sort=False, **CATS)
    want = binned.value_counts(sort=False)
    assert list(got.index) == list(want.index)
    np.testing.assert_allclose(got.to_numpy(dtype=float), want.to_numpy(dtype=float), atol=0.5)


def test_axis_zero_is_the_default_release() -> None:
    for axis in (0, "index"):
        assert DF.dp.mean(["x", "y"], axis=axis, **KW).equals(DF.dp.mean(["x", "y"], **KW))
        assert DF["x"].dp.sum(axis=axis, **KW) == DF["x"].dp.sum(**KW)
    counted = DF.dp.count(axis=0, epsilon=1e6, random_state=0)
    assert counted.equals(DF.dp.count(epsilon=1e6, random_state=0))
    table = DF.dp.agg(["mean"], axis=0, **KW)
    assert table.equals(DF.dp.agg(["mean"], **KW))


def test_numeric_only_keeps_the_numeric_columns_like_pandas() -> None:
    frame = DF[["x", "y", "c"]]
    got = frame.dp.median(numeric_only=True, **KW)
    assert got.equals(frame.dp.median(["x", "y"], **KW))
    assert list(got.index) == list(frame.median(numeric_only=True).index)
    quantiles = frame.dp.quantile(None, 0.5, numeric_only=True, **KW)
    assert list(quantiles.index) == list(frame.quantile(0.5, numeric_only=True).index)
    cov = DF.dp.cov(numeric_only=True, **KW)
    assert list(cov.columns) == list(DF.cov(numeric_only=True).columns)
    grouped = G[["x", "c"]].median(numeric_only=True, **KW)
    want = DF.groupby("g")[["x", "c"]].median(numeric_only=True)
    assert list(grouped.columns) == list(want.columns)
    assert G.median(numeric_only=True, **KW).equals(G.median(["x", "y"], **KW))
    one = G["x"].quantile(0.5, numeric_only=True, **KW)
    assert one.equals(G["x"].quantile(0.5, **KW))
    assert DF["x"].dp.median(numeric_only=True, **KW) == DF["x"].dp.median(**KW)
    with pytest.raises(TypeError, match="not numeric"):
        DF["c"].dp.median(numeric_only=True, **KW)
    with pytest.raises(TypeError, match="none is numeric"):
        G["c"].median(numeric_only=True, **KW)


def test_describe_include_and_exclude_pick_columns_by_dtype() -> None:
    numbers = DF.dp.describe(include="number", **KW)
    assert numbers.equals(DF.dp.describe(["x", "y"], **KW))
    assert list(numbers.columns) == list(DF.describe(include="number").columns)
    excluded = DF.dp.describe(exclude=["str", "object"], **KW)
    assert list(excluded.columns) == ["x", "y"]
    grouped = G.describe(include="number", **KW)
    assert grouped.equals(G.describe(["x", "y"], **KW))
    assert DF["x"].dp.describe(include="all", **KW).equals(DF["x"].dp.describe(**KW))
    assert G["x"].describe(include="all", **KW).equals(G["x"].describe(**KW))
    with pytest.raises(TypeError, match="not both"):
        DF.dp.describe(["x"], include="number", **KW)
    with pytest.raises(ValueError, match="selects no column"):
        DF.dp.describe(include="datetime", **KW)


def test_value_counts_subset_and_every_column() -> None:
    cats = {"g": ["a", "b"], "c": ["u", "v"]}
    got = DF.dp.value_counts(subset=["c"], categories={"c": ["u", "v"]}, **CATS)
    want = DF.value_counts(subset=["c"])
    pd.testing.assert_series_equal(got, want)
    whole = DF[["g", "c"]].dp.value_counts(categories=cats, **CATS)
    pd.testing.assert_series_equal(whole.sort_index(), DF[["g", "c"]].value_counts().sort_index())
    grouped = G.value_counts(subset=["c"], categories=["u", "v"], **CATS)
    pd.testing.assert_series_equal(
        grouped.sort_index(), DF.groupby("g").value_counts(subset=["c"]).sort_index()
    )
    with pytest.raises(TypeError, match="not both"):
        DF.dp.value_counts("c", subset=["c"], categories=["u", "v"], **CATS)


def test_the_keywords_read_nothing_when_left_out() -> None:
    """At their defaults the methods release exactly as before (seeded, bit-identical)."""
    assert DF.dp.median(["x"], **KW).equals(DF.dp.median(["x"], numeric_only=None, **KW))
    assert DF.dp.describe(["x"], **KW).equals(DF.dp.describe(["x"], include=None, **KW))


def test_dropna_false_of_a_dtype_without_missing_values_has_no_missing_bucket() -> None:
    """A numpy integer or bool column holds no missing value (public, from its dtype):
    value_counts(dropna=False) has pandas' index, in the column's dtype."""
    ints: Any = pd.Series([1, 2, 2, 3, 3, 3])
    flags: Any = pd.Series([True, False, True, True])
    for s, cats in ((ints, [1, 2, 3]), (flags, [False, True])):
        got = s.dp.value_counts(dropna=False, categories=cats, **CATS)
        pd.testing.assert_series_equal(got, s.value_counts(dropna=False))
        shares = s.dp.proportions(dropna=False, categories=cats, **CATS)
        assert list(shares.index) == cats and shares.index.dtype == s.dtype
    frame: Any = pd.DataFrame({"g": ["a", "b", "a", "a"], "f": flags})
    grouped = frame.dp.groupby("g", keys=["a", "b"])["f"].value_counts(
        dropna=False, categories=[False, True], **CATS
    )
    assert [lv.dtype for lv in grouped.index.levels] == [
        lv.dtype for lv in frame.groupby("g")["f"].value_counts(dropna=False).index.levels
    ]
    floats: Any = pd.Series([1.0, 2.0, 2.0])  # a float column may hold one: always released
    counted = floats.dp.value_counts(dropna=False, categories=[1.0, 2.0], **CATS)
    assert len(counted) == 3 and np.isnan(counted.index[-1])
