"""value_counts, proportions, counting-query workloads and describe."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pandas_dp
from pandas_dp.histograms import METHODS

CATS = ["N", "S", "E", "W"]


@pytest.fixture
def s() -> pd.Series:
    rng = np.random.default_rng(3)
    return pd.Series(rng.choice(["N", "S", "E"], 400, p=[0.5, 0.3, 0.2]), name="region")


# --------------------------------------------------------------------------- value_counts


def test_value_counts_declared_categories_only(s: pd.Series) -> None:
    data = pd.concat([s, pd.Series(["X"] * 30, name="region")], ignore_index=True)
    vc = data.dp.value_counts(epsilon=1.0, categories=CATS, random_state=0)
    assert set(vc.index) == set(CATS)  # W (absent) is there, X (undeclared) is not
    assert vc.dtype == np.int64 and vc.name == "count" and vc.index.name == "region"
    assert (vc >= 0).all()
    other = data.dp.value_counts(epsilon=1e4, categories=CATS, other="other", random_state=0)
    assert other["other"] == 30 and other["W"] == 0
    exact = data.value_counts()
    for c in ["N", "S", "E"]:
        assert other[c] == exact[c]


def test_value_counts_sensitivity_does_not_depend_on_other(s: pd.Series) -> None:
    a = s.dp.value_counts(epsilon=1.0, categories=CATS, random_state=0).attrs["dp"]
    b = s.dp.value_counts(epsilon=1.0, categories=CATS, other="?", random_state=0).attrs["dp"]
    assert a.details["l1 sensitivity"] == b.details["l1 sensitivity"] == 2.0
    assert a.scale.iloc[0] == b.scale.iloc[0] == pytest.approx(2.0)
    ar = s.dp.value_counts(
        epsilon=1.0, categories=CATS, neighbouring="add_remove", random_state=0
    ).attrs["dp"]
    assert ar.details["l1 sensitivity"] == 1.0 and ar.scale.iloc[0] == pytest.approx(1.0)


def test_value_counts_sort_and_dropna(s: pd.Series) -> None:
    data = s.where(s.index % 10 != 0)
    vc = data.dp.value_counts(epsilon=1e4, categories=CATS, dropna=False, random_state=0)
    assert vc.index.isna().sum() == 1 and vc[vc.index.isna()].iloc[0] == 40
    assert list(vc.to_numpy()) == sorted(vc.to_numpy(), reverse=True)
    unsorted = data.dp.value_counts(epsilon=1.0, categories=CATS, sort=False, random_state=0)
    assert list(unsorted.index) == CATS
    asc = data.dp.value_counts(epsilon=1.0, categories=CATS, ascending=True, random_state=0)
    assert list(asc.to_numpy()) == sorted(asc.to_numpy())
    iv = asc.attrs["dp"].interval()
    assert list(iv.index) == list(asc.index)
    assert ((iv["lower"] <= asc) & (asc <= iv["upper"])).all()


def test_categories_from_schema_dtype_and_attached(s: pd.Series) -> None:
    schema = pa.DataFrameSchema({"region": pa.Column(str, pa.Check.isin(CATS))})
    frame = s.to_frame()
    assert (
        list(frame.dp.value_counts("region", epsilon=1.0, schema=schema, sort=False).index) == CATS
    )
    assert (
        list(schema.validate(frame).dp.value_counts("region", epsilon=1.0, sort=False).index)
        == CATS
    )
    typed = s.astype(pd.CategoricalDtype(CATS))
    assert list(typed.dp.value_counts(epsilon=1.0, sort=False).index) == CATS
    # renamed isin check
    renamed = pa.DataFrameSchema({"region": pa.Column(str, pa.Check.isin(CATS, name="ok"))})
    assert len(frame.dp.value_counts("region", epsilon=1.0, schema=renamed)) == 4


def test_missing_categories_error(s: pd.Series) -> None:
    with pytest.raises(pandas_dp.MissingBoundsError, match="categories=") as info:
        s.dp.value_counts(epsilon=1.0)
    assert "region" in str(info.value)


@pytest.mark.parametrize("cats", [[], "NS", ["N", "N"]])
def test_bad_categories(s: pd.Series, cats: object) -> None:
    with pytest.raises(ValueError):
        s.dp.value_counts(epsilon=1.0, categories=cats)


def test_other_label_must_be_new(s: pd.Series) -> None:
    with pytest.raises(ValueError, match="other"):
        s.dp.value_counts(epsilon=1.0, categories=CATS, other="N")


def test_raise_mode_validates_categories(s: pd.Series) -> None:
    bad = pd.concat([s, pd.Series(["X"], name="region")], ignore_index=True)
    with pytest.raises(pa.errors.SchemaError):
        bad.dp.value_counts(epsilon=1.0, categories=CATS, out_of_bounds="raise")


# --------------------------------------------------------------------------- proportions


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("via", ["proportions", "counts"])
@pytest.mark.parametrize("bounding", ["bit", "truncated", "none"])
def test_proportions_sum_to_one(s: pd.Series, method: str, via: str, bounding: str) -> None:
    p = s.dp.proportions(
        epsilon=0.5, categories=CATS, method=method, via=via, bounding=bounding, random_state=1
    )
    assert list(p.index) == CATS and p.name == "proportion"
    assert ((p >= 0) & (p <= 1)).all() and math.isclose(p.sum(), 1.0, abs_tol=1e-12)
    meta = p.attrs["dp"]
    assert meta.details["method"] == method and meta.details["via"] == via
    iv = meta.interval(0.05)
    assert ((iv["lower"] >= 0) & (iv["upper"] <= 1) & (iv["lower"] <= iv["upper"])).all()
    json.dumps(meta.to_dict())


@pytest.mark.parametrize("method", METHODS)
def test_proportions_accurate_with_large_epsilon(s: pd.Series, method: str) -> None:
    p = s.dp.proportions(epsilon=1e5, categories=CATS, method=method, random_state=0)
    exact = s.value_counts(normalize=True).reindex(CATS, fill_value=0.0)
    np.testing.assert_allclose(p.to_numpy(), exact.to_numpy(), atol=1e-3)


def test_hierarchical_charges_per_level(s: pd.Series) -> None:
    flat = s.dp.proportions(epsilon=1.0, categories=CATS, method="project", random_state=0)
    tree = s.dp.proportions(epsilon=1.0, categories=CATS, method="hierarchical", random_state=0)
    assert tree.attrs["dp"].details["noised levels"] == 2
    assert tree.attrs["dp"].scale.iloc[0] == pytest.approx(2 * flat.attrs["dp"].scale.iloc[0])


def test_value_counts_normalize_gives_proportions(s: pd.Series) -> None:
    p = s.dp.value_counts(normalize=True, epsilon=1.0, categories=CATS, random_state=0)
    assert math.isclose(p.sum(), 1.0) and p.attrs["dp"].statistic == "proportions"


def test_one_category_needs_no_noise(s: pd.Series) -> None:
    budget = pandas_dp.PrivacyBudget(1.0)
    p = pd.Series(["a"] * 10).dp.proportions(epsilon=1.0, categories=["a"], budget=budget)
    assert p.tolist() == [1.0] and budget.spent[0] == 0.0


def test_proportions_bad_method(s: pd.Series) -> None:
    with pytest.raises(ValueError, match="method"):
        s.dp.proportions(epsilon=1.0, categories=CATS, method="softmax")
    with pytest.raises(ValueError, match="via"):
        s.dp.proportions(epsilon=1.0, categories=CATS, via="bits")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(st.sampled_from(["a", "b", "c", None, "zz"]), min_size=1, max_size=30),
    k=st.integers(1, 6),
    method=st.sampled_from(METHODS),
    via=st.sampled_from(["proportions", "counts"]),
    bounding=st.sampled_from(["bit", "truncated", "none"]),
    epsilon=st.floats(1e-3, 1e3),
    neighbouring=st.sampled_from(["substitute", "add_remove"]),
    seed=st.integers(0, 2**31),
)
def test_proportions_properties(
    values: list,
    k: int,
    method: str,
    via: str,
    bounding: str,
    epsilon: float,
    neighbouring: str,
    seed: int,
) -> None:
    cats = ["a", "b", "c", "d", "e", "f"][:k]
    p = pd.Series(values, dtype=object).dp.proportions(
        epsilon=epsilon,
        categories=cats,
        method=method,
        via=via,
        bounding=bounding,
        neighbouring=neighbouring,
        random_state=seed,
    )
    assert len(p) == k
    assert ((p >= 0) & (p <= 1)).all() and math.isclose(p.sum(), 1.0, abs_tol=1e-9)


# --------------------------------------------------------------------------- workloads


def test_counts_workload() -> None:
    df = pd.DataFrame({"age": np.arange(100) % 60, "smoker": np.arange(100) % 3 == 0})
    queries = {
        "smokers": df.smoker,
        "old smokers": "smoker and age > 30",
        "everyone": np.ones(100, dtype=bool),
    }
    exact = pd.Series(
        {"smokers": 34, "old smokers": int((df.smoker & (df.age > 30)).sum()), "everyone": 100}
    )
    c = df.dp.counts(queries, epsilon=1e4, random_state=0)
    pd.testing.assert_series_equal(c, exact, check_names=False)
    noisy = df.dp.counts(queries, epsilon=1.0, random_state=0)
    meta = noisy.attrs["dp"]
    assert meta.scale.iloc[0] == pytest.approx(3.0)  # L1 sensitivity k = 3
    assert meta.details["l1 sensitivity"] == 3.0
    per, sim = meta.interval(0.05), meta.interval(0.05, simultaneous=True)
    assert (sim["upper"] - sim["lower"] > per["upper"] - per["lower"]).all()
    frac = df.dp.counts(queries, epsilon=1e4, normalize=True, random_state=0)
    assert frac["everyone"] == pytest.approx(1.0) and frac.dtype == np.float64


def test_counts_errors() -> None:
    df = pd.DataFrame({"age": [1, 2, 3]})
    with pytest.raises(ValueError, match="aligned"):
        df.dp.counts({"q": pd.Series([True, False, True], index=[5, 6, 7])}, epsilon=1.0)
    with pytest.raises(ValueError, match="length"):
        df.dp.counts({"q": [True, False]}, epsilon=1.0)
    with pytest.raises(TypeError, match="boolean"):
        df.dp.counts({"q": df.age}, epsilon=1.0)
    with pytest.raises(ValueError, match="empty"):
        df.dp.counts({}, epsilon=1.0)


def test_workload_simultaneous_coverage() -> None:
    """All k counts inside the simultaneous 90 % band at least 90 % of the time.

    2,000 releases; a one-sided binomial test at false-alarm rate 1e-4 allows down to
    about 87.2 %.
    """
    df = pd.DataFrame({"x": np.arange(200)})
    queries = {f"x<{t}": df.x < t for t in (10, 50, 100, 150, 199)}
    exact = np.array([10, 50, 100, 150, 199])
    hits = 0
    for seed in range(2000):
        r = df.dp.counts(queries, epsilon=0.5, random_state=seed)
        iv = r.attrs["dp"].interval(0.1, simultaneous=True)
        hits += bool(((iv["lower"] <= exact) & (exact <= iv["upper"])).all())
    assert hits / 2000 >= 0.872


# --------------------------------------------------------------------------- describe


def test_describe_splits_the_budget() -> None:
    from pandas_dp.datasets import load_survey, survey_schema

    df = load_survey()
    budget = pandas_dp.PrivacyBudget(epsilon=3.0)
    d = df.dp.describe(
        ["age", "income", "region"],
        epsilon=3.0,
        schema=survey_schema(),
        budget=budget,
        random_state=0,
    )
    assert list(d.columns) == ["age", "income", "region"]
    assert d.loc["share N":, "region"].sum() == pytest.approx(1.0)
    split = d.attrs["dp"].details["budget_split"]
    assert len(split) == 7 and sum(split.values()) == pytest.approx(3.0)
    assert budget.spent[0] == pytest.approx(3.0) and len(budget.ledger) == 1
    assert budget.ledger.loc[0, "split"] == split
    with pytest.raises(pandas_dp.BudgetExceededError):
        df.dp.describe(["age"], epsilon=0.1, schema=survey_schema(), budget=budget)
    json.dumps(d.attrs["dp"].to_dict())


def test_describe_default_columns() -> None:
    from pandas_dp.datasets import load_survey, survey_schema

    d = load_survey().dp.describe(epsilon=5.0, schema=survey_schema(), random_state=1)
    assert list(d.columns) == ["age", "income", "hours_per_week", "smoker", "region"]
