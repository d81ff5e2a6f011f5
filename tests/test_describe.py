"""describe: count, mean, std, percentiles and declared bounds, one plan, one charge."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp import PrivacyBudget

RNG = np.random.default_rng(5)
DF = pd.DataFrame({"x": RNG.uniform(0, 100, 20_000), "y": RNG.normal(50, 10, 20_000)})
BOUNDS = {"x": (0.0, 100.0), "y": (0.0, 100.0)}


def test_rows_like_pandas_with_declared_bounds() -> None:
    d = DF.dp.describe(epsilon=100.0, bounds=BOUNDS, random_state=0)
    assert list(d.index) == [
        "count",
        "mean",
        "std",
        "min (declared)",
        "25%",
        "50%",
        "75%",
        "max (declared)",
    ]
    assert d.loc["min (declared)"].tolist() == [0.0, 0.0]
    assert d.loc["max (declared)"].tolist() == [100.0, 100.0]
    exact = DF.describe()
    for row in ("25%", "50%", "75%"):
        assert np.all(np.abs(d.loc[row] - exact.loc[row]) < 0.5), row


@pytest.mark.parametrize("percentiles", [[0.1, 0.9], [0.9, 0.1, 0.5], []])
def test_percentiles_keyword_follows_pandas(percentiles: list[float]) -> None:
    """The rows pandas prints for these percentiles (pandas 3: only those given;
    pandas 2 adds the median), the declared bounds for min and max."""
    d = DF.dp.describe(percentiles=percentiles, epsilon=100.0, bounds=BOUNDS, random_state=0)
    rows = [r for r in DF.describe(percentiles=percentiles).index if r.endswith("%")]
    assert [r for r in d.index if r.endswith("%")] == rows
    values = d.loc[rows, "x"].to_numpy()
    assert np.all(np.diff(values) >= 0)
    exact = DF.describe(percentiles=percentiles).loc[rows, "x"].to_numpy()
    assert np.all(np.abs(values - exact) < 1.0)


@pytest.mark.parametrize("bad", [[1.5], [-0.1], ["a"], [0.2, 0.2]])
def test_bad_percentiles_raise_before_the_charge(bad: list[object]) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match="percentiles"):
        DF.dp.describe(percentiles=bad, epsilon=1.0, bounds=BOUNDS, budget=budget)
    assert budget.spent[0] == 0.0


def test_one_charge_and_a_grid_measurement_per_column() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    d = DF.dp.describe(epsilon=1.0, bounds=BOUNDS, budget=budget, random_state=0)
    assert len(budget.ledger) == 1 and budget.spent[0] == pytest.approx(1.0)
    split = d.attrs["dp"].details["budget_split"]
    assert {"x: grid_selection", "y: grid_selection"} <= set(split)
    assert sum(split.values()) == pytest.approx(1.0)


def test_split_gives_count_mean_and_std_at_least_their_old_shares() -> None:
    # The old describe: three releases at epsilon/3 (a count; a one-stage mean at
    # 1:2 and a std at 5:4:9). Each measurement of the shared one must be at least as
    # precise as the most precise one of those releases, so count, mean and std are
    # no noisier than there; the percentiles get a quarter (issue 33). The bound sums at a
    # share f give the count and the centred sum the noise variance of a separate
    # count (sensitivity 1) and sum (sensitivity R/2) at a share f / sqrt(2) each.
    w = pandas_dp.stats.numeric.MOMENT_WEIGHTS
    old = [{"count": 1.0}, {"count": 1.0, "centred_sum": 2.0}, w["var_separate"]]
    for epsilon, measured in ((1.0, "bound_sums"), (20.0, "count")):
        d = pd.DataFrame({"x": [1.0, 2.0], "r": ["a", "b"]}).dp.describe(
            epsilon=epsilon, bounds={"x": (0, 10)}, categories={"r": ["a", "b"]}, random_state=0
        )
        split = d.attrs["dp"].details["budget_split"]
        column = sum(v for k, v in split.items() if k.startswith("x: "))
        share = {k.removeprefix("x: "): v / column for k, v in split.items() if k.startswith("x: ")}
        assert measured in share
        if measured == "bound_sums":
            assert "count" not in share and "centred_sum" not in share
            share["count"] = share["centred_sum"] = share["bound_sums"] / math.sqrt(2)
        for stat in ("count", "centred_sum", "centred_squares"):
            needed = max(r.get(stat, 0.0) / sum(r.values()) / 3 for r in old)
            assert share[stat] >= needed - 1e-12, (stat, share[stat], needed)
        grid = share["grid_selection"] + share["interval_counts"]
        assert grid == pytest.approx(
            w["describe" if measured == "bound_sums" else "describe_separate"]["grid"] / 18
        )
        # the categorical column's histogram: a numeric column's budget (issue 33)
        assert split["r: category_counts"] == pytest.approx(column)


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0, 4.5, 5.0, 20.0])
@pytest.mark.parametrize("columns", [1, 3])
def test_describe_measures_the_count_the_more_accurate_way(epsilon, columns) -> None:
    """describe reads its count off the bound sums where that count's mean squared
    error (from the public noise scales) is at most that of a count of its own, as
    in the separate design, and measures a count of its own above (a large epsilon
    per column: integer noise is then mostly exactly 0). The MSE formulas are
    checked against simulation; here the choice against both."""
    from pandas_dp.noise.plans import plan_noise
    from pandas_dp.stats import estimators as est

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.uniform(0, 10, (50, columns)), columns=list("abc")[:columns])
    d = frame.dp.describe(epsilon=epsilon, bounds=(0, 10), random_state=0)
    meta = d.attrs["dp"]
    eps = {k: v for k, v in meta.details["budget_split"].items() if k.startswith("a: ")}
    column = sum(eps.values())  # the same in both designs (weights of total 18)
    assert column == pytest.approx(epsilon / columns)
    w = pandas_dp.stats.numeric.MOMENT_WEIGHTS
    pair_eps = column * w["describe"]["bound_sums"] / 18
    count_eps = column * w["describe_separate"]["count"] / 18
    pair = plan_noise(np.full(2, 5.0), np.zeros(2), np.full(2, np.inf), epsilon=pair_eps)
    count = plan_noise(np.ones(1), np.zeros(1), np.full(1, np.inf), epsilon=count_eps, integer=True)
    better = est.bound_sums_count_mse(pair, 10.0) <= est.integer_count_mse(count)
    assert ("a: bound_sums" in eps) == better
    assert ("a: count" in eps) == (not better)
    # the crossover: about 2.9 per column (bound sums 9/18, a count 6/18)
    assert better == (epsilon / columns < 2.87)


def test_the_pair_count_mse_matches_simulation() -> None:
    """bound_sums_count_mse and integer_count_mse against 400 000 simulated draws
    each (the relative error of a mean of squares this size is below 1 % here; the
    tolerance is 3 %)."""
    from pandas_dp.noise.plans import plan_noise
    from pandas_dp.stats import estimators as est

    rng = np.random.default_rng(1)
    for b in (0.2, 0.5, 1.0, 3.0):
        pair = plan_noise(np.full(2, 0.5), np.zeros(2), np.full(2, np.inf), epsilon=1 / b)
        x = np.round(rng.laplace(0.0, b, (2, 400_000)).sum(axis=0))
        assert est.bound_sums_count_mse(pair, 1.0) == pytest.approx(np.mean(x * x), rel=0.03)
        count = plan_noise(np.ones(1), np.zeros(1), np.full(1, np.inf), epsilon=1 / b, integer=True)
        k = rng.geometric(1 - math.exp(-1 / b), 400_000) - rng.geometric(
            1 - math.exp(-1 / b), 400_000
        )
        assert est.integer_count_mse(count) == pytest.approx(np.mean(k * k), rel=0.03)


def test_intervals_cover_and_declared_rows_are_points() -> None:
    d = DF.dp.describe(epsilon=5.0, bounds=BOUNDS, random_state=1)
    iv = d.attrs["dp"].interval(0.05)
    assert iv.loc[("min (declared)", "x")].tolist() == [0.0, 0.0]
    lo, hi = iv.loc[("50%", "y")].tolist()
    assert lo <= d.loc["50%", "y"] <= hi and lo <= DF["y"].median() <= hi


def test_percentiles_ignore_missing_and_junk() -> None:
    frame = pd.DataFrame({"x": [np.nan, np.inf, -np.inf, 5.0] * 500})
    d = frame.dp.describe(epsilon=10.0, bounds=(0, 10), random_state=0)
    assert 0.0 <= d.loc["50%", "x"] <= 10.0
    assert pandas_dp is not None


def test_grouped_describe_one_plan_per_key() -> None:
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"g": rng.choice(["a", "b"], 20_000), "x": rng.uniform(0, 100, 20_000)})
    budget = PrivacyBudget(epsilon=100.0)
    d = frame.dp.groupby("g", keys=["a", "b", "c"]).describe(
        epsilon=100.0, bounds=(0, 100), budget=budget, random_state=0
    )
    assert list(d.index) == ["a", "b", "c"] and len(budget.ledger) == 1
    assert d.columns[0] == ("x", "count") and ("x", "50%") in d.columns
    exact = frame.groupby("g")["x"].describe()
    for key in ("a", "b"):
        assert abs(d.loc[key, ("x", "50%")] - exact.loc[key, "50%"]) < 1.0
        assert abs(d.loc[key, ("x", "mean")] - exact.loc[key, "mean"]) < 0.5
    iv = d.attrs["dp"].interval(0.05)
    assert len(iv) == d.size


@pytest.mark.parametrize("grouped", [False, True])
def test_the_selection_gives_describe_its_percentiles_like_quantile(grouped: bool) -> None:
    """``method="exponential"``: quantile's selections in describe's one plan."""
    budget = PrivacyBudget(epsilon=100.0)
    if grouped:
        frame = DF.assign(g=np.where(DF["x"] < 50, "lo", "hi"))
        d = frame.dp.groupby("g", keys=["hi", "lo"]).describe(
            ["y"], epsilon=100.0, bounds=BOUNDS, budget=budget, random_state=0, method="exponential"
        )
        exact = frame.groupby("g")["y"].describe()
        got = d[("y", "50%")]
    else:
        d = DF.dp.describe(
            epsilon=100.0, bounds=BOUNDS, budget=budget, random_state=0, method="exponential"
        )
        exact = DF.describe().T
        got = d.loc["50%"]
    assert np.all(np.abs(got.to_numpy() - exact["50%"].to_numpy()) < 0.2)
    details = d.attrs["dp"].details
    assert details["percentile estimator"]["method"] == "exponential"
    assert details["percentile estimator"]["bins"] == 128_000  # two groups fit the cells
    assert any(k.endswith("grid_selection") for k in details["budget_split"])
    assert len(budget.ledger) == 1 and budget.spent[0] == pytest.approx(100.0)
    iv = d.attrs["dp"].interval(0.05)
    assert np.all(iv["lower"] <= iv["upper"])


def test_describe_refuses_an_unknown_method_before_the_charge() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match="method='bogus' is not supported"):
        DF.dp.describe(epsilon=1.0, bounds=BOUNDS, budget=budget, method="bogus")
    assert budget.spent[0] == 0.0
    default = DF.dp.describe(epsilon=1.0, bounds=BOUNDS, random_state=0)
    assert default.attrs["dp"].details["percentile estimator"]["bins"] == 128_000


@pytest.mark.parametrize("grouped", [False, True])
def test_a_text_column_given_bounds_is_refused_before_the_charge(grouped: bool) -> None:
    """describe with bounds naming a text column used to charge, then fail while
    converting it, with the private value in the message (issue 30)."""
    df = pd.DataFrame({"x": ["1", "2", "secret-value-123"] * 10, "g": ["a", "b", "a"] * 10})
    budget = pandas_dp.PrivacyBudget(epsilon=10)
    dp = df.dp.groupby("g", keys=["a", "b"]) if grouped else df.dp
    with pytest.raises(TypeError, match="numeric columns") as info:
        dp.describe(["x"], epsilon=1.0, bounds={"x": (0, 5)}, budget=budget)
    assert "secret" not in str(info.value)
    assert budget.ledger.empty
