"""Group-by calls shaped like pandas' answers, pandas as the oracle (issue 32's crashes):
``agg`` with one statistic in a list, grouping by a Series, ``g[col].quantile(q)``.
At epsilon 10**6 the values equal pandas' too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp

EPS = dict(epsilon=1e6, bounds=(0, 10), random_state=0)


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame(
        {
            "x": rng.uniform(0, 10, 400),
            "y": rng.uniform(0, 10, 400),
            "g": rng.choice(["a", "b"], 400),
        }
    )


AGG: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "dict, one in a list": (
        lambda g: g.agg({"x": ["std"]}, **EPS),
        lambda p: p.agg({"x": ["std"]}),
    ),
    "list of one": (lambda g: g.agg(["mean"], **EPS), lambda p: p.agg(["mean"])),
    "column, list of one": (lambda g: g["x"].agg(["sum"], **EPS), lambda p: p["x"].agg(["sum"])),
    "dict, two": (
        lambda g: g.agg({"x": ["mean", "std"]}, **EPS),
        lambda p: p.agg({"x": ["mean", "std"]}),
    ),
    "dict of strings": (
        lambda g: g.agg({"x": "mean", "y": "sum"}, **EPS),
        lambda p: p.agg({"x": "mean", "y": "sum"}),
    ),
    "column, string": (lambda g: g["x"].agg("mean", **EPS), lambda p: p["x"].agg("mean")),
    "string": (lambda g: g.agg("var", **EPS), lambda p: p.agg("var")),
}


@pytest.mark.parametrize("name", sorted(AGG))
def test_grouped_agg_has_pandas_shape(df: pd.DataFrame, name: str) -> None:
    ours, theirs = AGG[name]
    got = ours(df.dp.groupby("g", keys=["a", "b"]))
    want = theirs(df.groupby("g"))
    assert type(got) is type(want)
    if isinstance(want, pd.DataFrame):
        assert list(got.columns) == list(want.columns)
        assert got.columns.nlevels == want.columns.nlevels
        pd.testing.assert_frame_equal(got, want, rtol=1e-3, check_dtype=False)
    else:
        pd.testing.assert_series_equal(got, want, rtol=1e-3, check_dtype=False)


def test_groupby_a_named_series_like_pandas(df: pd.DataFrame) -> None:
    got = df.dp.groupby(df["g"], keys=["a", "b"]).mean("x", **EPS)
    pd.testing.assert_series_equal(got, df.groupby(df["g"])["x"].mean(), rtol=1e-4)
    high = (df["x"] > 5).rename("high")
    both = df.dp.groupby(["g", high], keys={"g": ["a", "b"], "high": [False, True]})
    counts = both.count(epsilon=1e6, random_state=0)["x"]
    want = df.groupby(["g", high]).size()
    assert list(counts.index) == list(want.index)
    assert counts.tolist() == want.tolist()


def test_groupby_an_unnamed_series_is_refused_before_the_charge(df: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match="named Series"):
        df.dp.groupby(pd.Series(df["g"].to_numpy()), keys=["a", "b"]).mean(
            "x", epsilon=0.5, bounds=(0, 10), budget=budget
        )
    assert budget.spent == (0.0, 0.0)


@pytest.mark.parametrize("q", [0.5, [0.25, 0.75]])
def test_selected_column_quantile_takes_q_first(df: pd.DataFrame, q: Any) -> None:
    got = df.dp.groupby("g", keys=["a", "b"])["x"].quantile(q, epsilon=1e5, bounds=(0, 10))
    want = df.groupby("g")["x"].quantile(q)
    assert list(got.index) == list(want.index)
    for (key, *level), value in zip(want.index.to_flat_index().map(_key), got, strict=True):
        rank = float((df.loc[df["g"] == key, "x"] <= value).mean())
        share = level[0] if level else q
        assert abs(rank - share) <= 0.02  # a quantile of the group's values (no interpolation)


def _key(index_entry: Any) -> tuple[Any, ...]:
    return index_entry if isinstance(index_entry, tuple) else (index_entry,)


def test_a_numeric_label_after_selection_stays_a_column() -> None:
    frame = pd.DataFrame({0: np.linspace(0, 10, 200), "g": ["a", "b"] * 100})
    got = frame.dp.groupby("g", keys=["a", "b"])[[0]].quantile(
        [0], 0.5, epsilon=1e5, bounds=(0, 10)
    )
    labels = [got.name] if isinstance(got, pd.Series) else list(got.columns)
    assert labels == [0]  # the column 0, not the quantile 0
    assert list(got.index) == ["a", "b"]
