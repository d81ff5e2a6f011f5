"""``df.dp.describe(bounds="auto")``: a describe of a frame with nothing declared."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

import pandas_dp
from pandas_dp.noise.mechanisms import representable_scale
from pandas_dp.request.settings import Settings
from pandas_dp.stats import describe_auto
from pandas_dp.stats.describe_auto import AUTO_SHARE


def raw_frame(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Numeric, skewed numeric, text with a rare value, categorical, boolean; some missing."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.normal(45, 12, n).round(),
            "income": rng.lognormal(10, 1, n),
            "city": rng.choice(["A", "B", "C"], n).astype(object),
            "pet": pd.Categorical(rng.choice(["cat", "dog"], n)),
            "smoker": rng.random(n) < 0.3,
        }
    )
    df.loc[:4, "city"] = "RARE"  # five people: far below the selection's threshold
    df.loc[[5, 6], "age"] = np.nan
    df.loc[7, "city"] = None
    return df


def test_a_raw_frame_is_described(charges: list[str]) -> None:
    df = raw_frame()
    budget = pandas_dp.PrivacyBudget(epsilon=1.0, delta=1e-6)
    d = df.dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", random_state=0, budget=budget)
    assert list(d.columns) == ["age", "income", "city", "pet", "smoker"]
    assert "share RARE" not in d.index
    assert [r for r in d.index if r.startswith("share")] == [
        "share A",
        "share B",
        "share C",
        "share cat",
        "share dog",
        "share False",
        "share True",
    ]
    assert d.loc["mean", "age"] == pytest.approx(df["age"].mean(), abs=3)
    assert d.loc["share True", "smoker"] == pytest.approx(df["smoker"].mean(), abs=0.05)
    auto = d.attrs["dp"].details["auto"]
    assert set(auto["declared"]["bounds"]) == {"age", "income"}
    assert auto["declared"]["categories"] == {"city": ["A", "B", "C"], "pet": ["cat", "dog"]}
    lo, hi = auto["declared"]["bounds"]["income"]
    assert lo == 0.0 and hi >= 2**15  # a power of two holding most incomes
    # one bounds release, one selection per text column, then describe
    assert charges == ["bounds", "categories", "categories", "describe"]
    ledger = budget.ledger
    assert list(ledger["statistic"]) == charges
    assert ledger["epsilon"].sum() == pytest.approx(1.0, rel=1e-12)
    assert ledger["delta"].sum() == pytest.approx(1e-6, rel=1e-12)
    # each estimated column spends AUTO_SHARE of its fifth on its bounds or categories
    assert ledger["epsilon"].iloc[0] == pytest.approx(2 * AUTO_SHARE / 5)
    assert ledger["epsilon"].iloc[1] == pytest.approx(AUTO_SHARE / 5)
    assert d.attrs["dp"].interval(0.05) is not None


def test_seeded_releases_repeat() -> None:
    df = raw_frame(800)
    one = df.dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", random_state=3)
    two = df.dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", random_state=3)
    pd.testing.assert_frame_equal(one, two)


def test_gaussian_splits_delta() -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0, delta=1e-5)
    df = raw_frame(1500)
    d = df.dp.describe(
        epsilon=1.0, delta=1e-5, bounds="auto", mechanism="gaussian", random_state=1, budget=budget
    )
    assert "share A" in d.index
    ledger = budget.ledger
    assert ledger["delta"].sum() == pytest.approx(1e-5, rel=1e-12)
    assert ledger.loc[ledger["statistic"] == "describe", "delta"].item() == pytest.approx(5e-6)


def test_declarations_are_kept_and_only_the_rest_estimated() -> None:
    df = raw_frame(2000)
    schema = pa.DataFrameSchema(
        {
            "age": pa.Column(float, pa.Check.in_range(0, 100), nullable=True),
            "city": pa.Column(object, pa.Check.isin(["A", "B", "C", "RARE"]), nullable=True),
        }
    )
    d = df.dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", schema=schema, random_state=2)
    assert d.loc["max (declared)", "age"] == 100.0
    assert "share RARE" in d.index  # declared: shown, whatever its count
    declared = d.attrs["dp"].details["auto"]["declared"]
    assert set(declared["bounds"]) == {"income"}
    assert set(declared["categories"]) == {"pet"}


def test_nothing_to_estimate_spends_no_delta() -> None:
    df = raw_frame(500)[["age", "smoker"]]
    budget = pandas_dp.PrivacyBudget(epsilon=1.0, delta=1e-6)
    d = df.dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", random_state=0, budget=budget)
    assert list(d.columns) == ["age", "smoker"]
    assert budget.ledger["delta"].sum() == 0.0
    assert list(budget.ledger["statistic"]) == ["bounds", "describe"]


def test_with_a_privacy_unit() -> None:
    df = raw_frame(3000)
    df["pid"] = np.arange(len(df)) // 3
    dp = df.dp(privacy_unit="pid", max_rows_per_unit=3)
    d = dp.describe(["age", "city"], epsilon=2.0, delta=1e-6, bounds="auto", random_state=0)
    assert "share A" in d.index and "share RARE" not in d.index


def test_a_text_column_nothing_passes_is_left_out() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=300), "id": [f"u{i}" for i in range(300)]})
    d = df.dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", random_state=0)
    assert list(d.columns) == ["x"]
    assert d.attrs["dp"].details["auto"]["no category passed the selection"] == ["id"]


def test_only_text_and_nothing_passes_returns_an_empty_table() -> None:
    df = pd.DataFrame({"id": [f"u{i}" for i in range(50)]})
    budget = pandas_dp.PrivacyBudget(epsilon=1.0, delta=1e-6)
    d = df.dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", random_state=0, budget=budget)
    assert d.shape == (0, 1)
    assert d.attrs["dp"].interval(0.05).empty
    assert list(budget.ledger["statistic"]) == ["categories"]


REFUSED = {
    "no delta": (
        lambda df, b: df.dp.describe(epsilon=1.0, bounds="auto", budget=b),
        r"partition selection, which needs delta > 0.*delta=1e-6",
    ),
    "substitute": (
        lambda df, b: df.dp.describe(
            epsilon=1.0, delta=1e-6, bounds="auto", neighbouring="substitute", budget=b
        ),
        r"neighbouring='add_remove'",
    ),
    "raise": (
        lambda df, b: df.dp.describe(
            epsilon=1.0, delta=1e-6, bounds="auto", out_of_bounds="raise", budget=b
        ),
        r"out_of_bounds='raise'",
    ),
    "group-by with private keys": (
        lambda df, b: df.dp.groupby("pet", keys="private", delta=1e-6).describe(
            epsilon=1.0, delta=1e-6, bounds="auto", budget=b
        ),
        r"not offered on a group-by with private keys",
    ),
    "bad method": (
        lambda df, b: df.dp.describe(
            epsilon=1.0, delta=1e-6, bounds="auto", method="nope", budget=b
        ),
        r"method",
    ),
    "bad delta": (
        lambda df, b: df.dp.describe(epsilon=1.0, delta=-1.0, bounds="auto", budget=b),
        r"delta must be a number in \[0, 1\)",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refusals_come_before_any_charge(name: str, charges: list[str]) -> None:
    call, message = REFUSED[name]
    budget = pandas_dp.PrivacyBudget(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match=message):
        call(raw_frame(300), budget)
    assert charges == []
    assert budget.ledger.empty


def test_a_budget_that_cannot_pay_the_whole_call_is_refused_first(charges: list[str]) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0, delta=1e-7)
    with pytest.raises(pandas_dp.BudgetExceededError, match="nothing was spent"):
        raw_frame(300).dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", budget=budget)
    assert charges == []


def test_a_zcdp_budget_is_refused_first(charges: list[str]) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=5.0, delta=1e-3, accounting="zcdp")
    with pytest.raises(ValueError, match="outside zCDP"):
        raw_frame(300).dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", budget=budget)
    assert charges == []


def test_named_columns_it_cannot_describe_are_refused(charges: list[str]) -> None:
    df = raw_frame(300).assign(when=pd.Timestamp("2020-01-01"))
    with pytest.raises(pandas_dp.MissingBoundsError, match="when"):
        df.dp.describe(["age", "when"], epsilon=1.0, delta=1e-6, bounds="auto")
    assert charges == []


def test_a_rare_value_passes_at_most_at_its_exact_rate() -> None:
    """A value held by ``m`` people passes with probability ``q**(tau - m + 1) / (1 + q)``
    (``q = exp(-1/T)``, the discrete Laplace noise): 0 passes in 200 selections, where
    the chance of one or more is below 200 times that (the test's false-alarm rate,
    printed in the assertion: about 2e-4)."""
    m, runs = 5, 200
    values = np.array(["common"] * 600 + ["rare"] * m, dtype=object)
    frame = pd.DataFrame({"v": values})
    epsilon, delta = 0.2, 1e-6
    rng = np.random.default_rng(7)
    settings = Settings(epsilon=epsilon, random_state=rng)
    passed, tau = 0, None
    for _ in range(runs):
        kept, record = describe_auto._select(frame, "v", settings, delta)
        tau = record["threshold"]
        passed += "rare" in kept
    scale = float(representable_scale(1.0 / epsilon)[0])
    q = math.exp(-1.0 / scale)
    rate = q ** (tau - m + 1) / (1 + q)
    false_alarm = runs * rate
    assert false_alarm < 1e-3, false_alarm
    assert passed == 0, (passed, false_alarm)


def test_dask_equals_the_in_memory_release() -> None:
    dd = pytest.importorskip("dask.dataframe")
    df = raw_frame(1200)
    want = df.dp.describe(epsilon=1.0, delta=1e-6, bounds="auto", random_state=4)
    got = dd.from_pandas(df, npartitions=5).dp.describe(
        epsilon=1.0, delta=1e-6, bounds="auto", random_state=4
    )
    pd.testing.assert_frame_equal(got, want)


def test_awkward_dtypes_never_raise_after_the_charge() -> None:
    """Mixed objects, integer categories, nullable text and integers, all missing."""
    rng = np.random.default_rng(0)
    n = 1500
    df = pd.DataFrame(
        {
            "mixed": pd.Series([1, "a", 2.5, None] * (n // 4), dtype=object),
            "intcat": pd.Categorical(rng.choice([1, 2, 3], n)),
            "text": pd.Series(rng.choice(["x", "y"], n), dtype="string"),
            "ints": pd.array(rng.integers(0, 5, n), dtype="Int64"),
            "empty": np.full(n, np.nan),
        }
    )
    df.loc[0, "text"] = pd.NA
    d = df.dp.describe(epsilon=2.0, delta=1e-6, bounds="auto", random_state=0)
    declared = d.attrs["dp"].details["auto"]["declared"]
    assert declared["categories"]["intcat"] == [1, 2, 3]
    assert declared["categories"]["text"] == ["x", "y"]
    assert declared["bounds"]["empty"] == (-1.0, 1.0)  # no band passes: the fallback
    assert len(declared["categories"]["mixed"]) == 3
    assert declared["bounds"]["ints"] == (0.0, 8.0)  # the zero band's edge read as 0
    assert set(d.columns) == {"mixed", "intcat", "text", "ints", "empty"}


EDGE_FRAMES = {
    "no rows": lambda: pd.DataFrame({"x": pd.Series(dtype=float), "t": pd.Series(dtype=object)}),
    "infinities": lambda: pd.DataFrame(
        {"x": [np.inf, -np.inf, 1e308, -1e308, np.nan] * 200, "t": ["a"] * 1000}
    ),
    "one row": lambda: pd.DataFrame({"x": [1.0], "t": ["a"]}),
    "text all missing": lambda: pd.DataFrame({"x": np.arange(500.0), "t": [None] * 500}),
    "uint64": lambda: pd.DataFrame({"x": np.full(3000, 2**63 + 5, dtype=np.uint64)}),
    "subnormal": lambda: pd.DataFrame({"x": np.full(3000, 1e-300)}),
}


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("name", sorted(EDGE_FRAMES))
def test_edge_frames_are_described_without_warnings(name: str) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0, delta=1e-6)
    d = EDGE_FRAMES[name]().dp.describe(
        epsilon=1.0, delta=1e-6, bounds="auto", random_state=0, budget=budget
    )
    assert "x" in d.columns
    lo, hi = d.attrs["dp"].details["auto"]["declared"]["bounds"]["x"]
    assert np.isfinite(lo) and np.isfinite(hi) and lo < hi
    assert budget.spent.epsilon == pytest.approx(1.0)
