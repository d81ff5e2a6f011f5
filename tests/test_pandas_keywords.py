"""pandas' keywords of the moment methods where they have a private meaning
(``numeric_only``), and a clear refusal where they do not (``min_count``): pandas is
the oracle; at epsilon 10**6 the values equal its answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pandas_dp

EPS = dict(epsilon=1e6, bounds=(0, 10), random_state=0)
STATS = ["sum", "mean", "var", "std", "sem"]


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    return pd.DataFrame(
        {
            "x": rng.uniform(0, 10, 600),
            "y": rng.uniform(0, 10, 600),
            "t": rng.choice(["p", "q"], 600),
            "g": rng.choice(["a", "b"], 600),
        }
    )


@pytest.mark.parametrize("name", STATS)
def test_numeric_only_leaves_out_text_columns_like_pandas(df: pd.DataFrame, name: str) -> None:
    got = getattr(df.dp, name)(["x", "t", "y"], numeric_only=True, **EPS)
    want = getattr(df[["x", "t", "y"]], name)(numeric_only=True)
    pd.testing.assert_series_equal(got, want, rtol=1e-3, check_dtype=False)
    grouped = getattr(df.dp.groupby("g", keys=["a", "b"]), name)(
        ["x", "t"], numeric_only=True, **EPS
    )
    pd.testing.assert_frame_equal(
        grouped, getattr(df.groupby("g")[["x", "t"]], name)(numeric_only=True), rtol=1e-3
    )


def test_without_numeric_only_a_text_column_is_refused_as_by_pandas(df: pd.DataFrame) -> None:
    with pytest.raises(TypeError):
        df[["x", "t"]].mean()
    with pytest.raises(TypeError, match="numeric"):
        df.dp.mean(["x", "t"], **EPS)


def test_numeric_only_with_no_numeric_column_is_refused(df: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match="numeric_only=True leaves none"):
        df.dp.mean(["t"], numeric_only=True, **EPS)


@pytest.mark.parametrize("min_count", [1, 5, True])
def test_min_count_is_refused_before_the_charge(df: pd.DataFrame, min_count: int) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    for release in (
        lambda: df.dp.sum("x", min_count=min_count, epsilon=0.5, bounds=(0, 10), budget=budget),
        lambda: df["x"].dp.sum(min_count=min_count, epsilon=0.5, bounds=(0, 10), budget=budget),
        lambda: df.dp.groupby("g", keys=["a", "b"]).sum(
            "x", min_count=min_count, epsilon=0.5, bounds=(0, 10), budget=budget
        ),
    ):
        with pytest.raises(ValueError, match="min_count"):
            release()
    assert budget.spent == (0.0, 0.0)


def test_min_count_zero_is_pandas_default(df: pd.DataFrame) -> None:
    got = df["x"].dp.sum(min_count=0, **EPS)
    assert got == pytest.approx(df["x"].sum(min_count=0), rel=1e-6)
