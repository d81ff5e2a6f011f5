"""``bounds="auto"`` through the accessors: the range released privately, then the
statistic on it, each charged and in the ledger; public errors before any charge."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pandas_dp


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 20_000
    return pd.DataFrame(
        {
            "age": rng.normal(45, 15, n).clip(0, None),
            "income": rng.lognormal(10, 0.8, n),
            "pid": rng.integers(0, 8000, n),
        }
    )


CALLS = {
    "mean": lambda d, **kw: d.dp.mean("age", **kw),
    "std": lambda d, **kw: d.dp.std(["age", "income"], **kw),
    "series median": lambda d, **kw: d["income"].dp.median(**kw),
    "quantile": lambda d, **kw: d.dp.quantile("age", [0.25, 0.75], **kw),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_bounds_then_the_release_share_the_epsilon(df: pd.DataFrame, name: str) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=2.0)
    out = CALLS[name](df, epsilon=1.0, bounds="auto", random_state=1, budget=budget)
    ledger = budget.ledger
    assert ledger["statistic"].tolist()[0] == "bounds"
    assert len(ledger) == 2
    assert ledger["epsilon"].sum() == pytest.approx(1.0)
    assert budget.spent[0] == pytest.approx(1.0)
    record = out.attrs["dp"]
    assert record.details["bounds_release"]["epsilon"] == pytest.approx(0.3)
    lo, hi = next(iter(record.input_bounds.values()))
    assert lo <= 0.0 and hi >= df["age"].quantile(0.99)  # the mass is inside


def test_the_estimate_is_close_at_large_n(df: pd.DataFrame) -> None:
    got = df.dp.mean("age", epsilon=1.0, bounds="auto", random_state=2)
    assert got == pytest.approx(df["age"].mean(), abs=0.5)
    med = df["income"].dp.median(epsilon=1.0, bounds="auto", random_state=3)
    assert med == pytest.approx(df["income"].median(), rel=0.05)


@pytest.mark.parametrize(
    "call",
    [
        lambda d, b: d.dp.mean("age", epsilon=1.0, bounds="auto", method="direct", budget=b),
        lambda d, b: d.dp.var("age", -1, epsilon=1.0, bounds="auto", budget=b),
        lambda d, b: d.dp.median("age", epsilon=1.0, bounds="auto", method="bogus", budget=b),
        lambda d, b: d.dp.median("age", epsilon=1.0, bounds="auto", bins=1, budget=b),
        lambda d, b: d.dp.median("age", epsilon=1.0, bounds="auto", interval="no", budget=b),
        lambda d, b: d.dp.mean("age", epsilon=1.0, bounds="auto", out_of_bounds="raise", budget=b),
        lambda d, b: d.dp.mean("age", epsilon=5.0, bounds="auto", budget=b),
    ],
    ids=["direct", "ddof", "method", "bins", "interval", "raise", "over budget"],
)
def test_public_errors_come_before_any_charge(df: pd.DataFrame, call: object) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=2.0)
    with pytest.raises((ValueError, TypeError, RuntimeError)):
        call(df, budget)  # type: ignore[operator]
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


def test_with_a_privacy_unit(df: pd.DataFrame) -> None:
    dp = df.dp(privacy_unit="pid", max_rows_per_unit=3)
    got = dp.mean("age", epsilon=2.0, bounds="auto", random_state=5)
    assert got == pytest.approx(df["age"].mean(), abs=2.0)


def test_dask_equals_the_in_memory_release(df: pd.DataFrame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    want = df.dp.mean("age", epsilon=1.0, bounds="auto", random_state=6)
    got = dd.from_pandas(df, npartitions=7).dp.mean(
        "age", epsilon=1.0, bounds="auto", random_state=6
    )
    assert float(got) == float(want)


@pytest.mark.parametrize(
    "call",
    [
        lambda d, b: d.dp.cov(["age", "income"], epsilon=1.0, bounds="auto", budget=b),
    ],
    ids=["cov"],  # (describe offers bounds="auto" now: tests/test_describe_auto.py)
)
def test_releases_without_auto_bounds_say_so(df: pd.DataFrame, call: object) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=2.0)
    d = df.assign(g=np.where(df["pid"] % 2 == 0, "a", "b"))
    with pytest.raises(ValueError, match=r"bounds='auto'.*not by this release"):
        call(d, budget)  # type: ignore[operator]
    assert budget.ledger.empty


GROUPED = {
    "mean": lambda g, **kw: g.mean("age", **kw),
    "median": lambda g, **kw: g.median("income", **kw),
    "agg": lambda g, **kw: g.agg({"age": ["mean", "std"], "income": "median"}, **kw),
}


@pytest.mark.parametrize("keys", [["a", "b"], "private"], ids=["declared", "private"])
@pytest.mark.parametrize("name", sorted(GROUPED))
def test_grouped_auto_bounds(df: pd.DataFrame, name: str, keys: object) -> None:
    """One range per column over every group's rows, then the grouped release."""
    d = df.assign(g=np.where(df["pid"] % 2 == 0, "a", "b"))
    budget = pandas_dp.PrivacyBudget(epsilon=2.0, delta=1e-5)
    g = d.dp.groupby("g", keys=keys, delta=1e-6 if keys == "private" else 0.0)
    out = GROUPED[name](g, epsilon=1.0, bounds="auto", random_state=3, budget=budget)
    statistics = budget.ledger["statistic"].tolist()
    assert statistics[0] == "bounds" and len(statistics) == 2
    assert budget.spent[0] == pytest.approx(1.0)
    assert out.attrs["dp"].details["bounds_release"]["epsilon"] == pytest.approx(0.3)
    assert sorted(out.index) == ["a", "b"]
    if name == "mean":
        want = d.groupby("g")["age"].mean()
        assert np.allclose(out.to_numpy(), want.to_numpy(), atol=1.0)


def test_frame_agg_with_auto_bounds(df: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=2.0)
    out = df.dp.agg(
        {"age": ["mean", "median"]}, epsilon=1.0, bounds="auto", random_state=4, budget=budget
    )
    assert budget.ledger["statistic"].tolist()[0] == "bounds"
    assert out.loc["mean", "age"] == pytest.approx(df["age"].mean(), abs=1.0)


def test_grouped_public_errors_come_before_any_charge(df: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=2.0)
    g = df.assign(g="a").dp.groupby("g", keys=["a"])
    with pytest.raises(ValueError):
        g.var("age", epsilon=1.0, bounds="auto", ddof=-1, budget=budget)
    with pytest.raises(ValueError):
        g.median("age", epsilon=1.0, bounds="auto", method="bogus", budget=budget)
    assert budget.ledger.empty
