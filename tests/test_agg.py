"""``df.dp.agg``: several statistics in one plan, shaped like ``df.agg``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp

BOUNDS = {"a": (0.0, 100.0), "b": (0.0, 1.0)}


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {"a": rng.uniform(0, 100, 2000), "b": rng.uniform(0, 1, 2000), "c": ["x", "y"] * 1000}
    )


def test_shapes_follow_pandas(df: pd.DataFrame) -> None:
    kw = {"epsilon": 1.0, "bounds": BOUNDS, "random_state": 0}
    numeric = df[["a", "b"]]
    for func in (
        {"a": ["count", "mean", "std"], "b": "sum"},
        {"a": "mean", "b": "sum"},
        {"a": ["mean", "std"], "b": "median"},
        {"a": ["median", "mean"], "b": "median"},
        ["mean", "count"],
        ["median"],
        "mean",
        "median",
    ):
        want = numeric.agg(func)
        got = df.dp.agg(func, **kw)
        assert type(got) is type(want), func
        assert list(got.index) == list(want.index), func
        if isinstance(want, pd.DataFrame):
            assert list(got.columns) == list(want.columns), func
            assert (got.isna() == want.isna()).all().all(), func


def test_large_epsilon_recovers_pandas(df: pd.DataFrame) -> None:
    func = {"a": ["count", "mean", "std", "var"], "b": ["sum", "mean"]}
    got = df.dp.agg(func, epsilon=1e6, bounds=BOUNDS, random_state=1)
    want = df[["a", "b"]].agg(func)
    assert np.allclose(got.to_numpy(), want.to_numpy(), rtol=1e-3, atol=1e-3, equal_nan=True)


def test_one_column_shares_one_triple_and_one_charge(df: pd.DataFrame) -> None:
    """count, mean and std of a column: one pair of bound sums (its count and
    centred sum) and one centred squares measured; the whole epsilon charged once
    (the truncated mode: one count, one centred sum, one centred squares)."""
    budget = pandas_dp.PrivacyBudget(epsilon=3.0)
    t = df.dp.agg(
        {"a": ["count", "mean", "std"]}, epsilon=1.0, bounds=BOUNDS, budget=budget, random_state=2
    )
    assert budget.spent == (1.0, 0.0)
    measured = sorted(t.attrs["dp"].sensitivity.index)
    assert measured == ["a: bound_sums", "a: centred_squares"]
    t = df.dp.agg(
        {"a": ["count", "mean", "std"]},
        epsilon=1.0,
        bounds=BOUNDS,
        budget=budget,
        random_state=2,
        bounding="truncated",
    )
    assert budget.spent == (2.0, 0.0)
    measured = sorted(t.attrs["dp"].sensitivity.index)
    assert measured == ["a: centred_squares", "a: centred_sum", "a: count"]


@pytest.mark.parametrize("statistic", ["count", "sum", "mean", "var", "std"])
def test_a_single_statistic_is_the_method_release(df: pd.DataFrame, statistic: str) -> None:
    """The same plan as ``df.dp.<statistic>``: the same seeded value."""
    kw = {"epsilon": 1.0, "bounds": BOUNDS, "random_state": 5}
    if statistic == "count":  # df.dp.count counts every column: use the Series'
        kw.pop("bounds")
        alone = float(df["a"].dp.count(**kw))
    else:
        alone = float(getattr(df.dp, statistic)("a", **kw))
    assert float(df.dp.agg({"a": statistic}, **kw)["a"]) == alone


def test_interval_per_column_and_statistic(df: pd.DataFrame) -> None:
    t = df.dp.agg({"a": ["mean", "std"], "b": "sum"}, epsilon=1.0, bounds=BOUNDS, random_state=3)
    band = t.attrs["dp"].interval(0.05)
    assert list(band.index) == [("a", "mean"), ("a", "std"), ("b", "sum")]
    for (column, statistic), (lo, hi) in band.iterrows():
        assert lo <= t.loc[statistic, column] <= hi


@pytest.mark.parametrize(
    ("func", "error", "fragment"),
    [
        ({"a": "mode"}, ValueError, "unknown statistic"),
        ({"c": "median"}, TypeError, "needs numeric columns"),
        ({}, TypeError, "non-empty dict"),
        ({"c": "mean"}, TypeError, "needs numeric columns"),
        ({"zz": "mean"}, KeyError, "not in the frame"),
    ],
)
def test_errors_before_the_charge(
    df: pd.DataFrame, func: object, error: type, fragment: str
) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    with pytest.raises(error, match=fragment):
        df.dp.agg(func, epsilon=1.0, bounds=BOUNDS, budget=budget)
    assert budget.spent == (0.0, 0.0)


def test_a_count_needs_no_bounds(df: pd.DataFrame) -> None:
    counts = df.dp.agg({"c": "count", "a": "count"}, epsilon=1.0, random_state=4)
    assert counts.dtype == np.int64 and list(counts.index) == ["c", "a"]


def test_median_in_the_same_plan_and_charge(df: pd.DataFrame) -> None:
    """DESIGN's example: a median next to moments, one charge, pandas' values at a
    large epsilon (the grid's step is 100 / 128 000)."""
    budget = pandas_dp.PrivacyBudget(epsilon=3e4)
    func = {"a": ["mean", "median"], "b": "median"}
    t = df.dp.agg(func, epsilon=1e4, bounds=BOUNDS, budget=budget, random_state=6)
    assert budget.spent == (1e4, 0.0) and len(budget.ledger) == 1
    want = df[["a", "b"]].agg(func)
    assert np.allclose(t.to_numpy(), want.to_numpy(), atol=0.05, equal_nan=True)
    details = t.attrs["dp"].details
    assert details["quantiles"]["method"] == "exponential"
    assert {"a: grid_selection", "b: grid_selection", "a: bound_sums"} <= set(
        details["budget_split"]
    )


def test_median_interval_and_range(df: pd.DataFrame) -> None:
    t = df.dp.agg(
        {"a": "median", "b": ["sum", "median"]}, epsilon=1.0, bounds=BOUNDS, random_state=7
    )
    meta = t.attrs["dp"]
    band = meta.interval(0.05)
    assert list(band.index) == [("a", "median"), ("b", "sum"), ("b", "median")]
    for (column, statistic), (lo, hi) in band.iterrows():
        value = t.loc[statistic, column]
        assert lo <= value <= hi
        if statistic == "median":
            assert BOUNDS[column][0] <= lo and hi <= BOUNDS[column][1]
    assert meta.output_bounds["a median"] == BOUNDS["a"]


def test_every_column_gets_an_equal_share(df: pd.DataFrame) -> None:
    """A std column does not take six times a mean column's budget, nor a median
    column a share of its own choosing: the measurements of each column add up to
    the same epsilon."""
    for func in (
        {"a": "mean", "b": "std"},
        {"a": ["mean", "std"], "b": "median"},
        {"a": ["count", "median"], "b": "sum"},
    ):
        t = df.dp.agg(func, epsilon=2.0, bounds=BOUNDS, random_state=8)
        split = t.attrs["dp"].details["budget_split"]
        per_column = {c: sum(v for k, v in split.items() if k.startswith(f"{c}: ")) for c in "ab"}
        assert per_column["a"] == pytest.approx(1.0), func
        assert per_column["b"] == pytest.approx(1.0), func


def test_grouped_agg_with_a_median_like_pandas(df: pd.DataFrame) -> None:
    func = {"a": ["mean", "std"], "b": "median"}
    g = df.dp.groupby("c", keys=["x", "y"]).agg(func, epsilon=1e4, bounds=BOUNDS, random_state=9)
    want = df.groupby("c").agg(func)
    assert list(g.columns) == list(want.columns) and list(g.index) == list(want.index)
    assert np.allclose(g.to_numpy(), want.to_numpy(), atol=0.05)
    alone = df.dp.groupby("c", keys=["x", "y"]).agg({"b": "median"}, epsilon=1.0, bounds=BOUNDS)
    assert list(alone.columns) == ["b"] and alone.shape == (2, 1)


def test_messages_for_pandas_habits() -> None:
    """What a pandas user types first gets a message with the fix, before the charge."""
    df = pd.DataFrame({"age": np.arange(100.0), "region": ["a", "b"] * 50})
    budget = pandas_dp.PrivacyBudget(5.0)
    kw: dict[str, Any] = {"epsilon": 1.0, "bounds": (0, 100), "budget": budget}
    with pytest.raises(TypeError, match=r"df.dp.quantile\('age', 0.5\)"):
        df.dp.quantile(0.5, **kw)
    with pytest.raises(TypeError, match="statistics by name"):
        df.dp.agg({"age": np.mean}, **kw)
    with pytest.raises(TypeError, match="a Series' agg takes a statistic"):
        df["age"].dp.agg({"age": "mean"}, **kw)
    assert budget.spent == (0.0, 0.0)
    counted = df.dp.agg("count", epsilon=50.0, random_state=0)
    assert list(counted.index) == list(df.agg("count").index)  # every column, as pandas
